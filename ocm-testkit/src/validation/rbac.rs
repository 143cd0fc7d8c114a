//! Authorization reviews answered from the RBAC objects in the store.
//!
//! `SubjectAccessReview` and `LocalSubjectAccessReview` are evaluated against
//! Roles, ClusterRoles (including aggregated ClusterRoles), RoleBindings and
//! ClusterRoleBindings, as kube-apiserver's RBAC authorizer does.
//! A `SelfSubjectAccessReview` is decided for the requester when authentication is on
//! (see [`crate::validation::auth`]); without it every caller acts as a cluster administrator and it
//! is always allowed. Writes of RBAC objects by an authenticated user are checked for
//! escalation here too ([`Inner::check_escalation`]).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::api_error::{ApiError, ApiResult};
use crate::storage::registry::{GroupResource, ResourceInfo};
use crate::storage::selector::LabelSelector;
use crate::storage::store::Inner;
use crate::validation::auth::{Request, UserInfo};

pub(crate) const RBAC: &str = "rbac.authorization.k8s.io";

fn strs(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

/// What is being asked.
struct Attributes {
    user: String,
    groups: Vec<String>,
    namespace: String,
    verb: String,
    group: String,
    resource: String,
    subresource: String,
    name: String,
    path: Option<String>,
}

impl Attributes {
    fn from_spec(spec: &Value, local_ns: Option<&str>) -> Self {
        let ra = spec
            .get("resourceAttributes")
            .cloned()
            .unwrap_or(Value::Null);
        let nra = spec.get("nonResourceAttributes");
        Self {
            user: s(spec, "/user").to_string(),
            groups: strs(spec, "groups"),
            namespace: local_ns
                .map(str::to_string)
                .unwrap_or_else(|| s(&ra, "/namespace").to_string()),
            verb: nra
                .map(|n| s(n, "/verb"))
                .unwrap_or_else(|| s(&ra, "/verb"))
                .to_string(),
            group: s(&ra, "/group").to_string(),
            resource: s(&ra, "/resource").to_string(),
            subresource: s(&ra, "/subresource").to_string(),
            name: s(&ra, "/name").to_string(),
            path: nra.map(|n| s(n, "/path").to_string()),
        }
    }
}

fn has(list: &[String], want: &str) -> bool {
    list.iter().any(|x| x == "*" || x == want)
}

fn rule_allows(rule: &Value, a: &Attributes) -> bool {
    if !has(&strs(rule, "verbs"), &a.verb) {
        return false;
    }
    if let Some(path) = &a.path {
        return strs(rule, "nonResourceURLs").iter().any(|u| {
            u == "*" || u == path || u.strip_suffix('*').is_some_and(|p| path.starts_with(p))
        });
    }
    if !has(&strs(rule, "apiGroups"), &a.group) {
        return false;
    }
    let combined = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    let resources = strs(rule, "resources");
    let resource_ok = resources.iter().any(|r| {
        r == "*"
            || *r == combined
            || (!a.subresource.is_empty() && *r == format!("*/{}", a.subresource))
    });
    if !resource_ok {
        return false;
    }
    let names = strs(rule, "resourceNames");
    names.is_empty() || names.contains(&a.name)
}

fn subject_matches(subject: &Value, a: &Attributes, binding_ns: &str) -> bool {
    let name = s(subject, "/name");
    match s(subject, "/kind") {
        "User" => name == a.user,
        "Group" => a.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = match s(subject, "/namespace") {
                "" => binding_ns,
                ns => ns,
            };
            a.user == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

impl Inner {
    /// The objects of an RBAC resource (read through a view kept until one of them changes).
    fn rbac_objects(&self, resource: &str) -> Arc<Vec<Arc<Value>>> {
        let mut views = self.rbac_views.lock().unwrap_or_else(|e| e.into_inner());
        views
            .entry(resource.to_string())
            .or_insert_with(|| {
                Arc::new(
                    self.objects
                        .get(&GroupResource::new(RBAC, resource))
                        .map(|m| {
                            m.values()
                                .map(crate::storage::store::Entry::value)
                                .collect()
                        })
                        .unwrap_or_default(),
                )
            })
            .clone()
    }

    /// Forgets the views of the RBAC objects (one of them changed).
    pub(crate) fn forget_rbac_views(&mut self) {
        self.rbac_views
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// The rules of a ClusterRole, following `aggregationRule`.
    fn cluster_role_rules(&self, name: &str) -> Vec<Value> {
        let roles = self.rbac_objects("clusterroles");
        let Some(role) = roles.iter().find(|r| s(r, "/metadata/name") == name) else {
            return Vec::new();
        };
        let mut rules: Vec<Value> = role
            .get("rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(sels) = role
            .pointer("/aggregationRule/clusterRoleSelectors")
            .and_then(Value::as_array)
        {
            let sels: Vec<LabelSelector> = sels
                .iter()
                .filter_map(|s| LabelSelector::from_json(s).ok())
                .collect();
            for other in roles.iter() {
                if s(other, "/metadata/name") == name {
                    continue;
                }
                if sels.iter().any(|sel| sel.matches_object(other))
                    && let Some(r) = other.get("rules").and_then(Value::as_array)
                {
                    rules.extend(r.iter().cloned());
                }
            }
        }
        rules
    }

    fn role_rules(&self, namespace: &str, name: &str) -> Vec<Value> {
        self.rbac_objects("roles")
            .iter()
            .find(|r| s(r, "/metadata/name") == name && s(r, "/metadata/namespace") == namespace)
            .and_then(|r| r.get("rules").and_then(Value::as_array).cloned())
            .unwrap_or_default()
    }

    /// Decide a review; returns `(allowed, reason)`.
    fn authorize(&self, a: &Attributes) -> (bool, String) {
        if a.groups.iter().any(|g| g == "system:masters") {
            return (true, String::new());
        }
        let who = |subject: &Value| format!("{} {:?}", s(subject, "/kind"), s(subject, "/name"));
        for b in self.rbac_objects("clusterrolebindings").iter() {
            let Some(subject) = b
                .get("subjects")
                .and_then(Value::as_array)
                .and_then(|ss| ss.iter().find(|x| subject_matches(x, a, "")))
            else {
                continue;
            };
            let role = s(b, "/roleRef/name");
            if self
                .cluster_role_rules(role)
                .iter()
                .any(|r| rule_allows(r, a))
            {
                return (
                    true,
                    format!(
                        "RBAC: allowed by ClusterRoleBinding {:?} of ClusterRole {role:?} to {}",
                        s(b, "/metadata/name"),
                        who(subject)
                    ),
                );
            }
        }
        if a.namespace.is_empty() || a.path.is_some() {
            return (false, String::new());
        }
        for b in self.rbac_objects("rolebindings").iter() {
            if s(b, "/metadata/namespace") != a.namespace {
                continue;
            }
            let Some(subject) = b
                .get("subjects")
                .and_then(Value::as_array)
                .and_then(|ss| ss.iter().find(|x| subject_matches(x, a, &a.namespace)))
            else {
                continue;
            };
            let role = s(b, "/roleRef/name");
            let (rules, kind) = match s(b, "/roleRef/kind") {
                "ClusterRole" => (self.cluster_role_rules(role), "ClusterRole"),
                _ => (self.role_rules(&a.namespace, role), "Role"),
            };
            if rules.iter().any(|r| rule_allows(r, a)) {
                return (
                    true,
                    format!(
                        "RBAC: allowed by RoleBinding {:?} of {kind} {role:?} to {}",
                        format!("{}/{}", s(b, "/metadata/name"), a.namespace),
                        who(subject)
                    ),
                );
            }
        }
        (false, String::new())
    }

    /// Answer a `*SubjectAccessReview` create: the body comes back with `status` filled in.
    /// A `SelfSubjectAccessReview` is decided for `requester` (with authentication on);
    /// without one every caller is a cluster administrator.
    pub(crate) fn review(
        &self,
        resource: &str,
        namespace: &str,
        mut body: Value,
        requester: Option<&UserInfo>,
    ) -> Value {
        let (allowed, reason) = if resource == "selfsubjectaccessreviews" {
            match requester {
                None => (
                    true,
                    "ocm-testkit callers are cluster administrators".to_string(),
                ),
                Some(user) => {
                    let mut spec = body.get("spec").cloned().unwrap_or(json!({}));
                    spec["user"] = json!(user.name);
                    spec["groups"] = json!(user.groups);
                    self.authorize(&Attributes::from_spec(&spec, None))
                }
            }
        } else {
            let spec = body.get("spec").cloned().unwrap_or(Value::Null);
            let local = (resource == "localsubjectaccessreviews").then_some(namespace);
            self.authorize(&Attributes::from_spec(&spec, local))
        };
        if let Some(m) = body.as_object_mut() {
            let mut status = json!({"allowed": allowed});
            if !reason.is_empty() {
                status["reason"] = json!(reason);
            }
            m.insert("status".into(), status);
            m.entry("metadata")
                .or_insert(json!({"creationTimestamp": null}));
        }
        body
    }
}

/// One RBAC rule, as the escalation check reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PolicyRule {
    verbs: Vec<String>,
    api_groups: Vec<String>,
    resources: Vec<String>,
    resource_names: Vec<String>,
    non_resource_urls: Vec<String>,
}

impl PolicyRule {
    fn from_json(v: &Value) -> Self {
        Self {
            verbs: strs(v, "verbs"),
            api_groups: strs(v, "apiGroups"),
            resources: strs(v, "resources"),
            resource_names: strs(v, "resourceNames"),
            non_resource_urls: strs(v, "nonResourceURLs"),
        }
    }

    /// kube's `BreakdownRule`: one rule per group, resource, verb and name (or URL and verb).
    fn breakdown(&self) -> Vec<PolicyRule> {
        let one = |s: &String| vec![s.clone()];
        let mut out = Vec::new();
        for g in &self.api_groups {
            for r in &self.resources {
                for v in &self.verbs {
                    if self.resource_names.is_empty() {
                        out.push(PolicyRule {
                            verbs: one(v),
                            api_groups: one(g),
                            resources: one(r),
                            ..Default::default()
                        });
                    }
                    for n in &self.resource_names {
                        out.push(PolicyRule {
                            verbs: one(v),
                            api_groups: one(g),
                            resources: one(r),
                            resource_names: one(n),
                            ..Default::default()
                        });
                    }
                }
            }
        }
        for u in &self.non_resource_urls {
            for v in &self.verbs {
                out.push(PolicyRule {
                    verbs: one(v),
                    non_resource_urls: one(u),
                    ..Default::default()
                });
            }
        }
        out
    }

    /// kube's `ruleCovers`.
    fn covers(&self, sub: &PolicyRule) -> bool {
        let has_all = |owner: &[String], want: &[String]| want.iter().all(|w| owner.contains(w));
        let star = |owner: &[String]| owner.iter().any(|x| x == "*");
        let verbs = star(&self.verbs) || has_all(&self.verbs, &sub.verbs);
        let groups = star(&self.api_groups) || has_all(&self.api_groups, &sub.api_groups);
        let resources = star(&self.resources)
            || has_all(&self.resources, &sub.resources)
            || sub.resources.iter().all(|r| {
                r.split_once('/')
                    .is_some_and(|(_, subres)| self.resources.contains(&format!("*/{subres}")))
            });
        let urls = sub.non_resource_urls.iter().all(|u| {
            self.non_resource_urls.iter().any(|o| {
                o == "*" || o == u || o.strip_suffix('*').is_some_and(|p| u.starts_with(p))
            })
        });
        let names = if sub.resource_names.is_empty() {
            self.resource_names.is_empty()
        } else {
            self.resource_names.is_empty() || has_all(&self.resource_names, &sub.resource_names)
        };
        verbs && groups && resources && names && urls
    }

    /// kube's `CompactString`: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`.
    fn compact_string(&self) -> String {
        let q = |v: &[String]| {
            format!(
                "[{}]",
                v.iter()
                    .map(|x| ocm_api::k8s::gojson::quote(x))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        let mut parts = Vec::new();
        for (name, v) in [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ] {
            if !v.is_empty() {
                parts.push(format!("{name}:{}", q(v)));
            }
        }
        format!("{{{}}}", parts.join(", "))
    }

    /// kube's `isSimpleResourceRule`: one group, one resource, at most one name, no URLs.
    fn simple_key(&self) -> Option<SimpleKey> {
        (self.api_groups.len() == 1
            && self.resources.len() == 1
            && self.resource_names.len() <= 1
            && self.non_resource_urls.is_empty())
        .then(|| {
            (
                self.api_groups[0].clone(),
                self.resources[0].clone(),
                self.resource_names.clone(),
            )
        })
    }
}

/// What simple rules are merged by: group, resource and resource name.
type SimpleKey = (String, String, Vec<String>);

/// kube's `CompactRules`: simple rules on the same resource merge their verbs.
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<(SimpleKey, PolicyRule)> = Vec::new();
    for r in rules {
        match r.simple_key() {
            Some(k) => match simple.iter_mut().find(|(key, _)| *key == k) {
                Some((_, existing)) => {
                    for v in r.verbs {
                        if !existing.verbs.contains(&v) {
                            existing.verbs.push(v);
                        }
                    }
                }
                None => simple.push((k, r)),
            },
            None => out.push(r),
        }
    }
    out.extend(simple.into_iter().map(|(_, r)| r));
    out
}

/// Everything of an object but what the garbage collector may change.
fn without_gc_fields(obj: &Value) -> Value {
    let mut o = obj.clone();
    if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in [
            "ownerReferences",
            "finalizers",
            "managedFields",
            "resourceVersion",
            "generation",
        ] {
            m.remove(k);
        }
    }
    o
}

impl Inner {
    /// Whether `user` may do what `req` asks, by the RBAC objects.
    pub(crate) fn allows(&self, user: &UserInfo, req: &Request) -> bool {
        self.authorize(&Attributes::from_spec(&req.review_spec(user), None))
            .0
    }

    /// Every rule `user` holds in `namespace` (cluster-wide ones included), kube's `RulesFor`.
    fn rules_for(&self, user: &UserInfo, namespace: &str) -> Vec<PolicyRule> {
        let a = Attributes {
            user: user.name.clone(),
            groups: user.groups.clone(),
            namespace: namespace.to_string(),
            verb: String::new(),
            group: String::new(),
            resource: String::new(),
            subresource: String::new(),
            name: String::new(),
            path: None,
        };
        let mut rules = Vec::new();
        let bound = |b: &Value, ns: &str| {
            b.get("subjects")
                .and_then(Value::as_array)
                .is_some_and(|ss| ss.iter().any(|x| subject_matches(x, &a, ns)))
        };
        for b in self.rbac_objects("clusterrolebindings").iter() {
            if bound(b, "") {
                rules.extend(self.cluster_role_rules(s(b, "/roleRef/name")));
            }
        }
        if !namespace.is_empty() {
            for b in self.rbac_objects("rolebindings").iter() {
                if s(b, "/metadata/namespace") != namespace || !bound(b, namespace) {
                    continue;
                }
                let role = s(b, "/roleRef/name");
                rules.extend(match s(b, "/roleRef/kind") {
                    "ClusterRole" => self.cluster_role_rules(role),
                    _ => self.role_rules(namespace, role),
                });
            }
        }
        rules.iter().map(PolicyRule::from_json).collect()
    }

    /// The rules a binding's `roleRef` grants (`404` when the role does not exist).
    fn role_ref_rules(&self, role_ref: &Value, namespace: &str) -> ApiResult<Vec<PolicyRule>> {
        let name = s(role_ref, "/name");
        let (resource, found) = match s(role_ref, "/kind") {
            "ClusterRole" => (
                "clusterroles",
                self.rbac_objects("clusterroles")
                    .iter()
                    .any(|r| s(r, "/metadata/name") == name),
            ),
            _ => (
                "roles",
                self.rbac_objects("roles").iter().any(|r| {
                    s(r, "/metadata/name") == name && s(r, "/metadata/namespace") == namespace
                }),
            ),
        };
        if !found {
            return Err(ApiError::not_found(
                &GroupResource::new(RBAC, resource),
                name,
            ));
        }
        let rules = if resource == "clusterroles" {
            self.cluster_role_rules(name)
        } else {
            self.role_rules(namespace, name)
        };
        Ok(rules.iter().map(PolicyRule::from_json).collect())
    }

    /// kube's `ConfirmNoEscalation`: every rule granted must be held by `user` already.
    fn confirm_no_escalation(
        &self,
        user: &UserInfo,
        namespace: &str,
        granted: &[PolicyRule],
    ) -> Result<(), String> {
        let owner = self.rules_for(user, namespace);
        let missing: Vec<PolicyRule> = granted
            .iter()
            .flat_map(PolicyRule::breakdown)
            .filter(|sub| !owner.iter().any(|o| o.covers(sub)))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let mut lines: Vec<String> = compact(missing)
            .iter()
            .map(PolicyRule::compact_string)
            .collect();
        lines.sort();
        lines.dedup();
        let groups: Vec<String> = user
            .groups
            .iter()
            .map(|g| ocm_api::k8s::gojson::quote(g))
            .collect();
        Err(format!(
            "user {} (groups=[{}]) is attempting to grant RBAC permissions not currently held:\n{}",
            ocm_api::k8s::gojson::quote(&user.name),
            groups.join(" "),
            lines.join("\n")
        ))
    }

    /// RBAC escalation prevention for writes by `user` of Roles, ClusterRoles and their
    /// bindings, as kube-apiserver's RBAC storage does it: allowed with the `escalate`
    /// (roles) or `bind` (bindings) verb, for `system:masters`, for changes of only the
    /// fields garbage collection uses, or when `user` holds every rule granted already;
    /// otherwise `403` listing the missing rules.
    pub(crate) fn check_escalation(
        &self,
        info: &ResourceInfo,
        obj: &Value,
        old: Option<&Value>,
        user: &UserInfo,
    ) -> ApiResult<()> {
        if info.group != RBAC || user.is_master() {
            return Ok(());
        }
        let is_role = matches!(info.plural.as_str(), "roles" | "clusterroles");
        let is_binding = matches!(info.plural.as_str(), "rolebindings" | "clusterrolebindings");
        if !is_role && !is_binding {
            return Ok(());
        }
        if let Some(old) = old
            && without_gc_fields(obj) == without_gc_fields(old)
        {
            return Ok(());
        }
        let name = s(obj, "/metadata/name").to_string();
        let namespace = if info.namespaced {
            s(obj, "/metadata/namespace").to_string()
        } else {
            String::new()
        };
        let gr = info.group_resource();
        let forbidden = |msg: String| {
            let mut e = ApiError::forbidden(format!("{gr} \"{name}\" is forbidden: {msg}"));
            e.name = Some(name.clone());
            e.group = Some(RBAC.into());
            e.kind = Some(info.plural.clone());
            e
        };
        let ask = |verb: &str, resource: &str, ns: &str, n: &str| Request {
            verb: verb.into(),
            resource: Some(crate::validation::auth::ResourceRequest {
                gvr: crate::storage::registry::Gvr::new(RBAC, "v1", resource),
                subresource: String::new(),
                namespace: ns.into(),
                name: n.into(),
            }),
            path: String::new(),
        };
        if is_role {
            if self.allows(user, &ask("escalate", &info.plural, &namespace, &name)) {
                return Ok(());
            }
            let rules: Vec<PolicyRule> = obj
                .get("rules")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(PolicyRule::from_json).collect())
                .unwrap_or_default();
            self.confirm_no_escalation(user, &namespace, &rules)
                .map_err(forbidden)?;
            if obj.get("aggregationRule").is_some_and(|a| !a.is_null()) {
                let full = [
                    PolicyRule {
                        verbs: vec!["*".into()],
                        api_groups: vec!["*".into()],
                        resources: vec!["*".into()],
                        ..Default::default()
                    },
                    PolicyRule {
                        verbs: vec!["*".into()],
                        non_resource_urls: vec!["*".into()],
                        ..Default::default()
                    },
                ];
                self.confirm_no_escalation(user, &namespace, &full)
                    .map_err(|_| {
                        forbidden(
                            "must have cluster-admin privileges to use the aggregationRule".into(),
                        )
                    })?;
            }
            return Ok(());
        }
        let role_ref = obj.get("roleRef").cloned().unwrap_or(Value::Null);
        let role_resource = match s(&role_ref, "/kind") {
            "ClusterRole" => "clusterroles",
            _ => "roles",
        };
        if self.allows(
            user,
            &ask("bind", role_resource, &namespace, s(&role_ref, "/name")),
        ) {
            return Ok(());
        }
        let rules = self.role_ref_rules(&role_ref, &namespace)?;
        self.confirm_no_escalation(user, &namespace, &rules)
            .map_err(forbidden)
    }
}

#[cfg(test)]
mod escalation_tests {
    use super::*;

    #[test]
    fn missing_rules_are_compacted_and_sorted_like_kube() {
        let granted = PolicyRule::from_json(&json!({
            "apiGroups": ["", "apps"], "resources": ["secrets"], "verbs": ["get", "list"]}));
        let owner = [PolicyRule::from_json(&json!({
            "apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}))];
        let missing: Vec<PolicyRule> = granted
            .breakdown()
            .into_iter()
            .filter(|sub| !owner.iter().any(|o| o.covers(sub)))
            .collect();
        let mut lines: Vec<String> = compact(missing)
            .iter()
            .map(PolicyRule::compact_string)
            .collect();
        lines.sort();
        assert_eq!(
            lines,
            vec![
                "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"list\"]}",
                "{APIGroups:[\"apps\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\"]}",
            ]
        );
        let star =
            PolicyRule::from_json(&json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}));
        assert!(star.covers(&PolicyRule::from_json(
            &json!({"apiGroups": ["x"], "resources": ["y/status"], "verbs": ["patch"]})
        )));
        let sub = PolicyRule::from_json(
            &json!({"apiGroups": [""], "resources": ["*/scale"], "verbs": ["get"]}),
        );
        assert!(sub.covers(&PolicyRule::from_json(
            &json!({"apiGroups": [""], "resources": ["deployments/scale"], "verbs": ["get"]})
        )));
    }
}
