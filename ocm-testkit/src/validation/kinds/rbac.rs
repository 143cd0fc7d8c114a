//! `rbac.authorization.k8s.io/v1`: Roles, ClusterRoles and their bindings.

use serde_json::{Value, json};

use super::field::{Bad, Errors, Path, go_struct, json_str};
use super::{arr, get_str, meta, obj_mut, set_default};

const GROUP: &str = "rbac.authorization.k8s.io";

/// `SetDefaults_RoleBinding`, `SetDefaults_ClusterRoleBinding` and `SetDefaults_Subject`.
pub(crate) fn default_binding(b: &mut Value) {
    let Some(root) = b.as_object_mut() else {
        return;
    };
    if root.get("roleRef").is_some_and(Value::is_object) {
        set_default(obj_mut(root, "roleRef"), "apiGroup", json!(GROUP));
    }
    if let Some(subjects) = root.get_mut("subjects").and_then(Value::as_array_mut) {
        for s in subjects.iter_mut().filter_map(Value::as_object_mut) {
            let kind = s.get("kind").and_then(Value::as_str).unwrap_or_default();
            if matches!(kind, "User" | "Group") {
                set_default(s, "apiGroup", json!(GROUP));
            }
        }
    }
}

fn string_list_json(v: &[Value]) -> String {
    let items: Vec<String> = v
        .iter()
        .map(|s| json_str(s.as_str().unwrap_or_default()))
        .collect();
    format!("[{}]", items.join(","))
}

/// `ValidatePolicyRule`.
fn validate_rule(rule: &Value, namespaced: bool, path: &Path, errs: &mut Errors) {
    if arr(rule, "verbs").is_empty() {
        errs.required(
            &path.child("verbs"),
            "verbs must contain at least one value",
        );
    }
    let urls = arr(rule, "nonResourceURLs");
    if !urls.is_empty() {
        if namespaced {
            errs.invalid(
                &path.child("nonResourceURLs"),
                Bad::Json(string_list_json(urls)),
                "namespaced rules cannot apply to non-resource URLs",
            );
        }
        if !arr(rule, "apiGroups").is_empty()
            || !arr(rule, "resources").is_empty()
            || !arr(rule, "resourceNames").is_empty()
        {
            errs.invalid(
                &path.child("nonResourceURLs"),
                Bad::Json(string_list_json(urls)),
                "rules cannot apply to both regular resources and non-resource URLs",
            );
        }
        return;
    }
    if arr(rule, "apiGroups").is_empty() {
        errs.required(
            &path.child("apiGroups"),
            "resource rules must supply at least one api group",
        );
    }
    if arr(rule, "resources").is_empty() {
        errs.required(
            &path.child("resources"),
            "resource rules must supply at least one resource",
        );
    }
}

fn validate_rules(obj: &Value, namespaced: bool, errs: &mut Errors) {
    for (i, r) in arr(obj, "rules").iter().enumerate() {
        validate_rule(r, namespaced, &Path::new("rules").index(i), errs);
    }
}

/// `ValidateRole`.
pub(crate) fn validate_role(role: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(role, true, meta::path_segment, errs);
    validate_rules(role, true, errs);
}

/// `ValidateRoleUpdate`.
pub(crate) fn validate_role_update(new: &Value, old: &Value, errs: &mut Errors) {
    validate_role(new, errs);
    meta::validate_core_object_meta_update(new, old, errs);
}

/// `ValidateClusterRole`.
pub(crate) fn validate_cluster_role(role: &Value, errs: &mut Errors) {
    meta::validate_core_object_meta(role, false, meta::path_segment, errs);
    validate_rules(role, false, errs);
    if let Some(agg) = role.get("aggregationRule").filter(|a| !a.is_null()) {
        let sp = Path::new("aggregationRule").child("clusterRoleSelectors");
        let selectors = arr(agg, "clusterRoleSelectors");
        if selectors.is_empty() {
            errs.required(
                &sp,
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            );
        }
        for (i, s) in selectors.iter().enumerate() {
            meta::validate_label_selector(Some(s), &sp.index(i), errs);
        }
    }
}

/// `ValidateClusterRoleUpdate`.
pub(crate) fn validate_cluster_role_update(new: &Value, old: &Value, errs: &mut Errors) {
    validate_cluster_role(new, errs);
    meta::validate_core_object_meta_update(new, old, errs);
}

/// `ValidateRoleBindingSubject`.
fn validate_subject(s: &Value, namespaced: bool, path: &Path, errs: &mut Errors) {
    let name = get_str(s, "name");
    if name.is_empty() {
        errs.required(&path.child("name"), "");
    }
    let group = get_str(s, "apiGroup");
    match get_str(s, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                errs.invalid_each(&path.child("name"), name, meta::dns_subdomain(name, false));
            }
            if !group.is_empty() {
                errs.not_supported(&path.child("apiGroup"), Bad::str(group), &[""]);
            }
            if !namespaced && get_str(s, "namespace").is_empty() {
                errs.required(&path.child("namespace"), "");
            }
        }
        "User" | "Group" => {
            if group != GROUP {
                errs.not_supported(&path.child("apiGroup"), Bad::str(group), &[GROUP]);
            }
        }
        other => errs.not_supported(
            &path.child("kind"),
            Bad::str(other),
            &["ServiceAccount", "User", "Group"],
        ),
    }
}

fn validate_binding(b: &Value, namespaced: bool, kinds: &[&str], errs: &mut Errors) {
    meta::validate_core_object_meta(b, namespaced, meta::path_segment, errs);
    let role_ref = b.get("roleRef").unwrap_or(&Value::Null);
    let rp = Path::new("roleRef");
    let group = get_str(role_ref, "apiGroup");
    if group != GROUP {
        errs.not_supported(&rp.child("apiGroup"), Bad::str(group), &[GROUP]);
    }
    let kind = get_str(role_ref, "kind");
    if !kinds.contains(&kind) {
        errs.not_supported(&rp.child("kind"), Bad::str(kind), kinds);
    }
    let name = get_str(role_ref, "name");
    if name.is_empty() {
        errs.required(&rp.child("name"), "");
    } else {
        errs.invalid_each(&rp.child("name"), name, meta::path_segment(name, false));
    }
    for (i, s) in arr(b, "subjects").iter().enumerate() {
        validate_subject(s, namespaced, &Path::new("subjects").index(i), errs);
    }
}

/// The internal `rbac.RoleRef` as Go writes it.
fn role_ref_json(r: &Value) -> String {
    go_struct(&[
        ("APIGroup", Some(json_str(get_str(r, "apiGroup")))),
        ("Kind", Some(json_str(get_str(r, "kind")))),
        ("Name", Some(json_str(get_str(r, "name")))),
    ])
}

fn role_ref_unchanged(new: &Value, old: &Value, errs: &mut Errors) {
    let (n, o) = (
        new.get("roleRef").unwrap_or(&Value::Null),
        old.get("roleRef").unwrap_or(&Value::Null),
    );
    let key = |r: &Value| {
        (
            get_str(r, "apiGroup").to_string(),
            get_str(r, "kind").to_string(),
            get_str(r, "name").to_string(),
        )
    };
    if key(n) != key(o) {
        errs.invalid(
            &Path::new("roleRef"),
            Bad::Json(role_ref_json(n)),
            "cannot change roleRef",
        );
    }
}

/// `ValidateRoleBinding`.
pub(crate) fn validate_role_binding(b: &Value, errs: &mut Errors) {
    validate_binding(b, true, &["Role", "ClusterRole"], errs);
}

/// `ValidateRoleBindingUpdate`.
pub(crate) fn validate_role_binding_update(new: &Value, old: &Value, errs: &mut Errors) {
    validate_role_binding(new, errs);
    meta::validate_core_object_meta_update(new, old, errs);
    role_ref_unchanged(new, old, errs);
}

/// `ValidateClusterRoleBinding`.
pub(crate) fn validate_cluster_role_binding(b: &Value, errs: &mut Errors) {
    validate_binding(b, false, &["ClusterRole"], errs);
}

/// `ValidateClusterRoleBindingUpdate`.
pub(crate) fn validate_cluster_role_binding_update(new: &Value, old: &Value, errs: &mut Errors) {
    validate_cluster_role_binding(new, errs);
    meta::validate_core_object_meta_update(new, old, errs);
    role_ref_unchanged(new, old, errs);
}
