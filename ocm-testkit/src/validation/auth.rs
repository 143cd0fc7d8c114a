//! Authentication and authorization, opt-in ([`FakeClusterBuilder::authentication`]).
//!
//! Off by default: every request is served as a cluster administrator, as before. On, the
//! server works as kube-apiserver with token authentication and the RBAC authorizer:
//!
//! - a request's `Authorization: Bearer <token>` names one of the cluster's
//!   [`Identity`]s; an unknown token is `401 Unauthorized`; no token is the anonymous user
//!   (`system:anonymous`, group `system:unauthenticated`); authenticated users also get
//!   the group `system:authenticated`;
//! - `Impersonate-User` / `Impersonate-Group` headers need the `impersonate` verb on
//!   `users`, `groups` (or `serviceaccounts`, for `system:serviceaccount:…` users), as
//!   kube-apiserver's impersonation filter checks them;
//! - every request is then authorized from the RBAC objects in the store (the group
//!   `system:masters` is always allowed), and refused with kube-apiserver's `403`
//!   (`configmaps "x" is forbidden: User "u" cannot get resource "configmaps" in API group
//!   "" in the namespace "n"`);
//! - writes of Roles, ClusterRoles and their bindings are checked for escalation (the
//!   `escalate` and `bind` verbs, else every granted rule must be held already), as
//!   kube-apiserver's RBAC storage does;
//! - the bootstrap ClusterRoles a user needs for discovery (`cluster-admin`,
//!   `system:discovery`, `system:basic-user`, `system:public-info-viewer`) and their
//!   bindings are created with the cluster.
//!
//! Client certificates are not emulated: the loopback server speaks plain HTTP.
//!
//! [`FakeClusterBuilder::authentication`]: crate::FakeClusterBuilder::authentication

use std::sync::RwLock;

use http::HeaderMap;
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::storage::registry::Gvr;

/// The group whose members every request is allowed for.
pub const SYSTEM_MASTERS: &str = "system:masters";
/// The group every authenticated user is in.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The user of requests without credentials.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group of requests without credentials.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";

/// A user a fake cluster authenticates by bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// User name, e.g. `alice` or `system:serviceaccount:ns:name`.
    pub user: String,
    /// Groups, besides `system:authenticated` (which every authenticated user gets).
    pub groups: Vec<String>,
    /// The bearer token that authenticates as this user.
    pub token: String,
}

impl Identity {
    /// A user in `groups`, with a new random bearer token (128 bits from the system's
    /// generator), so that nobody can compute another user's token.
    pub fn new<G: Into<String>>(
        user: impl Into<String>,
        groups: impl IntoIterator<Item = G>,
    ) -> Self {
        let token: [u8; 16] = crate::storage::uid::random_bytes();
        Self {
            token: format!("ocm-testkit-{}", ocm_api::k8s::digest::hex(&token)),
            user: user.into(),
            groups: groups.into_iter().map(Into::into).collect(),
        }
    }

    /// The identity of a ServiceAccount, with the groups kube gives it
    /// (`system:serviceaccounts`, `system:serviceaccounts:<namespace>`).
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self::new(
            format!("system:serviceaccount:{namespace}:{name}"),
            [
                "system:serviceaccounts".to_string(),
                format!("system:serviceaccounts:{namespace}"),
            ],
        )
    }

    /// Use this bearer token.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = token.into();
        self
    }

    /// The cluster administrator every fake cluster has: user `admin` in `system:masters`.
    pub fn admin() -> Self {
        Self::new("admin", [SYSTEM_MASTERS])
    }
}

/// Who a request is served as.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct UserInfo {
    /// User name.
    pub name: String,
    /// Groups.
    pub groups: Vec<String>,
}

impl UserInfo {
    /// A user in `groups`.
    pub fn new(name: impl Into<String>, groups: Vec<String>) -> Self {
        Self {
            name: name.into(),
            groups,
        }
    }

    /// Whether the user is in `system:masters`.
    pub fn is_master(&self) -> bool {
        self.groups.iter().any(|g| g == SYSTEM_MASTERS)
    }
}

/// The identities a cluster with authentication knows.
#[derive(Debug)]
pub(crate) struct Authn {
    identities: RwLock<Vec<Identity>>,
}

impl Authn {
    pub(crate) fn new(identities: Vec<Identity>) -> Self {
        let mut all = vec![Identity::admin()];
        all.extend(identities);
        Self {
            identities: RwLock::new(all),
        }
    }

    pub(crate) fn add(&self, identity: Identity) {
        if let Ok(mut ids) = self.identities.write() {
            ids.retain(|i| i.user != identity.user);
            ids.push(identity);
        }
    }

    pub(crate) fn find_user(&self, user: &str) -> Option<Identity> {
        self.identities
            .read()
            .ok()?
            .iter()
            .find(|i| i.user == user)
            .cloned()
    }

    pub(crate) fn all(&self) -> Vec<Identity> {
        self.identities
            .read()
            .map(|i| i.clone())
            .unwrap_or_default()
    }

    /// The user a request's credentials name; `401` for a token nobody has.
    pub(crate) fn authenticate(&self, headers: &HeaderMap) -> Result<UserInfo, ApiError> {
        let Some(value) = headers.get(http::header::AUTHORIZATION) else {
            return Ok(UserInfo::new(ANONYMOUS, vec![UNAUTHENTICATED.into()]));
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .unwrap_or_default();
        let ids = self.identities.read().map_err(|_| unauthorized())?;
        let id = ids
            .iter()
            .find(|i| !token.is_empty() && i.token == token)
            .ok_or_else(unauthorized)?;
        let mut groups = id.groups.clone();
        if !groups.iter().any(|g| g == AUTHENTICATED) {
            groups.push(AUTHENTICATED.into());
        }
        Ok(UserInfo::new(id.user.clone(), groups))
    }
}

/// kube-apiserver's answer to bad credentials.
pub(crate) fn unauthorized() -> ApiError {
    ApiError::new(401, "Unauthorized", "Unauthorized")
}

/// What a request asks to do, for the authorizer.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) verb: String,
    /// `Some` for resource requests: group, resource, subresource, namespace, name.
    pub(crate) resource: Option<ResourceRequest>,
    /// The path, for non-resource requests.
    pub(crate) path: String,
}

#[derive(Debug, Clone)]
pub(crate) struct ResourceRequest {
    pub(crate) gvr: Gvr,
    pub(crate) subresource: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
}

impl Request {
    /// A SubjectAccessReview spec for `user` asking this.
    pub(crate) fn review_spec(&self, user: &UserInfo) -> Value {
        match &self.resource {
            Some(r) => json!({
                "user": user.name, "groups": user.groups,
                "resourceAttributes": {
                    "group": r.gvr.group, "version": r.gvr.version, "resource": r.gvr.resource,
                    "subresource": r.subresource, "namespace": r.namespace, "name": r.name,
                    "verb": self.verb,
                }
            }),
            None => json!({
                "user": user.name, "groups": user.groups,
                "nonResourceAttributes": {"path": self.path, "verb": self.verb}
            }),
        }
    }

    /// kube-apiserver's 403 for `user` (`forbiddenMessage` in `NewForbidden`).
    pub(crate) fn forbidden(&self, user: &UserInfo) -> ApiError {
        let Some(r) = &self.resource else {
            return ApiError::forbidden(format!(
                "forbidden: User \"{}\" cannot {} path \"{}\"",
                user.name, self.verb, self.path
            ));
        };
        let resource = if r.subresource.is_empty() {
            r.gvr.resource.clone()
        } else {
            format!("{}/{}", r.gvr.resource, r.subresource)
        };
        let scope = if r.namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace \"{}\"", r.namespace)
        };
        let gr = r.gvr.group_resource();
        let what = if r.name.is_empty() {
            gr.to_string()
        } else {
            format!("{gr} \"{}\"", r.name)
        };
        let mut e = ApiError::forbidden(format!(
            "{what} is forbidden: User \"{}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
            user.name, self.verb, r.gvr.group
        ));
        e.name = Some(r.name.clone()).filter(|n| !n.is_empty());
        e.group = Some(r.gvr.group.clone()).filter(|g| !g.is_empty());
        e.kind = Some(r.gvr.resource.clone());
        e
    }
}

/// The user a request acts as after its impersonation headers, each of which `requester`
/// must be allowed to `impersonate` (`allowed` answers that).
pub(crate) fn impersonate(
    requester: UserInfo,
    headers: &HeaderMap,
    allowed: impl Fn(&UserInfo, &Request) -> bool,
) -> Result<UserInfo, ApiError> {
    let user = headers
        .get("impersonate-user")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let groups: Vec<String> = headers
        .get_all("impersonate-group")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    let Some(user) = user else {
        if !groups.is_empty() {
            return Err(ApiError::internal(
                "requested [Impersonate-Group] without impersonating a user",
            ));
        }
        return Ok(requester);
    };
    let check = |resource: &str, namespace: &str, name: &str| -> Result<(), ApiError> {
        let req = Request {
            verb: "impersonate".into(),
            resource: Some(ResourceRequest {
                gvr: Gvr::new("", "", resource),
                subresource: String::new(),
                namespace: namespace.into(),
                name: name.into(),
            }),
            path: String::new(),
        };
        if allowed(&requester, &req) {
            Ok(())
        } else {
            Err(req.forbidden(&requester))
        }
    };
    let mut out_groups = groups.clone();
    match user
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((ns, name)) => {
            check("serviceaccounts", ns, name)?;
            if groups.is_empty() {
                out_groups = vec![
                    "system:serviceaccounts".into(),
                    format!("system:serviceaccounts:{ns}"),
                ];
            }
        }
        None => check("users", "", &user)?,
    }
    for g in &groups {
        check("groups", "", g)?;
    }
    if user == ANONYMOUS {
        if !out_groups.iter().any(|g| g == UNAUTHENTICATED) {
            out_groups.push(UNAUTHENTICATED.into());
        }
    } else if !out_groups.iter().any(|g| g == AUTHENTICATED) {
        out_groups.push(AUTHENTICATED.into());
    }
    Ok(UserInfo::new(user, out_groups))
}

/// The bootstrap ClusterRoles and ClusterRoleBindings kube-apiserver creates that a user
/// needs to reach the API at all (discovery, health, self-reviews), and `cluster-admin`.
pub(crate) fn bootstrap_rbac() -> Vec<(Gvr, Value)> {
    let roles = Gvr::new("rbac.authorization.k8s.io", "v1", "clusterroles");
    let bindings = Gvr::new("rbac.authorization.k8s.io", "v1", "clusterrolebindings");
    let meta = |name: &str| {
        json!({"name": name,
               "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
               "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}})
    };
    let role = |name: &str, rules: Value| {
        (
            roles.clone(),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "metadata": meta(name), "rules": rules}),
        )
    };
    let binding = |name: &str, groups: &[&str]| {
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}))
            .collect();
        (
            bindings.clone(),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": meta(name),
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                   "subjects": subjects}),
        )
    };
    vec![
        role(
            "cluster-admin",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                   {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        ),
        binding("cluster-admin", &[SYSTEM_MASTERS]),
        role(
            "system:discovery",
            json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                        "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
                    "verbs": ["get"]}]),
        ),
        binding("system:discovery", &[AUTHENTICATED]),
        role(
            "system:basic-user",
            json!([{"apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"]},
                   {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
                    "verbs": ["create"]}]),
        ),
        binding("system:basic-user", &[AUTHENTICATED]),
        role(
            "system:public-info-viewer",
            json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                    "verbs": ["get"]}]),
        ),
        binding(
            "system:public-info-viewer",
            &[AUTHENTICATED, UNAUTHENTICATED],
        ),
    ]
}
