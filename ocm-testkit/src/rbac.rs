//! Authorization reviews answered from the RBAC objects in the store.
//!
//! `SubjectAccessReview` and `LocalSubjectAccessReview` are evaluated against
//! Roles, ClusterRoles (including aggregated ClusterRoles), RoleBindings and
//! ClusterRoleBindings, as kube-apiserver's RBAC authorizer does.
//! `SelfSubjectAccessReview` is always allowed: the fake has no authentication,
//! every caller acts as a cluster administrator.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::registry::GroupResource;
use crate::selector::LabelSelector;
use crate::store::Inner;

const RBAC: &str = "rbac.authorization.k8s.io";

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
    fn rbac_objects(&self, resource: &str) -> Vec<Arc<Value>> {
        self.objects
            .get(&GroupResource::new(RBAC, resource))
            .map(|m| m.values().map(|e| e.obj.clone()).collect())
            .unwrap_or_default()
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
            for other in &roles {
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
        for b in self.rbac_objects("clusterrolebindings") {
            let Some(subject) = b
                .get("subjects")
                .and_then(Value::as_array)
                .and_then(|ss| ss.iter().find(|x| subject_matches(x, a, "")))
            else {
                continue;
            };
            let role = s(&b, "/roleRef/name");
            if self
                .cluster_role_rules(role)
                .iter()
                .any(|r| rule_allows(r, a))
            {
                return (
                    true,
                    format!(
                        "RBAC: allowed by ClusterRoleBinding {:?} of ClusterRole {role:?} to {}",
                        s(&b, "/metadata/name"),
                        who(subject)
                    ),
                );
            }
        }
        if a.namespace.is_empty() || a.path.is_some() {
            return (false, String::new());
        }
        for b in self.rbac_objects("rolebindings") {
            if s(&b, "/metadata/namespace") != a.namespace {
                continue;
            }
            let Some(subject) = b
                .get("subjects")
                .and_then(Value::as_array)
                .and_then(|ss| ss.iter().find(|x| subject_matches(x, a, &a.namespace)))
            else {
                continue;
            };
            let role = s(&b, "/roleRef/name");
            let (rules, kind) = match s(&b, "/roleRef/kind") {
                "ClusterRole" => (self.cluster_role_rules(role), "ClusterRole"),
                _ => (self.role_rules(&a.namespace, role), "Role"),
            };
            if rules.iter().any(|r| rule_allows(r, a)) {
                return (
                    true,
                    format!(
                        "RBAC: allowed by RoleBinding {:?} of {kind} {role:?} to {}",
                        format!("{}/{}", s(&b, "/metadata/name"), a.namespace),
                        who(subject)
                    ),
                );
            }
        }
        (false, String::new())
    }

    /// Answer a `*SubjectAccessReview` create: the body comes back with `status` filled in.
    pub(crate) fn review(&self, resource: &str, namespace: &str, mut body: Value) -> Value {
        let (allowed, reason) = if resource == "selfsubjectaccessreviews" {
            (
                true,
                "ocm-testkit callers are cluster administrators".to_string(),
            )
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
