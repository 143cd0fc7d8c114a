//! Object metadata validation, as apimachinery's `ValidateObjectMetaAccessor` and
//! `ValidateObjectMetaAccessorUpdate` and core's `ValidateObjectMeta` (which adds the
//! rule on unqualified finalizer names) check it, and label selectors as
//! `ValidateLabelSelector` checks them.
//!
//! Go walks label and annotation maps in random order; we walk them sorted, so the
//! causes of a request come in one order every time.

use ocm_api::k8s::names;
use serde_json::{Map, Value};

use super::field::{Bad, Errors, Path, go_struct, json_str};
use super::format;

/// A name rule: the problems of `name` (`prefix`: it is a `generateName`, whose trailing
/// dash is allowed).
pub(crate) type NameFn = fn(&str, bool) -> Vec<String>;

/// The total size annotations may have (`TotalAnnotationSizeLimitB`).
pub(crate) const TOTAL_ANNOTATION_SIZE: usize = 256 * 1024;

/// `maskTrailingDash`, quirk included: it drops the last two characters.
fn mask_trailing_dash(name: &str) -> std::borrow::Cow<'_, str> {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len() - 2;
        if name.is_char_boundary(cut) {
            return std::borrow::Cow::Owned(format!("{}a", &name[..cut]));
        }
    }
    std::borrow::Cow::Borrowed(name)
}

/// `NameIsDNSSubdomain`: most kinds.
pub(crate) fn dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return names::dns1123_subdomain_errors(&mask_trailing_dash(name));
    }
    names::dns1123_subdomain_errors(name)
}

/// `NameIsDNSLabel`: Namespaces, StatefulSets.
pub(crate) fn dns_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return names::dns1123_label_errors(&mask_trailing_dash(name));
    }
    names::dns1123_label_errors(name)
}

/// `NameIsDNS1035Label`: Services.
pub(crate) fn dns1035_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return names::dns1035_label_errors(&mask_trailing_dash(name));
    }
    names::dns1035_label_errors(name)
}

/// `ValidatePathSegmentName`: RBAC kinds (`system:discovery` is a name).
pub(crate) fn path_segment(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return format::path_segment_prefix_errors(name);
    }
    format::path_segment_errors(name)
}

fn meta(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

fn meta_str<'a>(m: Option<&'a Map<String, Value>>, key: &str) -> &'a str {
    m.and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn sorted(map: Option<&Value>) -> Vec<(&String, &str)> {
    let mut out: Vec<(&String, &str)> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k, v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out
}

/// `ValidateLabelName`: a qualified name.
pub(crate) fn validate_label_name(name: &str, path: &Path, errs: &mut Errors) {
    errs.invalid_each(path, name, names::label_key_errors(name));
}

/// `ValidateLabels`: every key a qualified name, every value a label value; the errors
/// are all at the map's path.
pub(crate) fn validate_labels(labels: Option<&Value>, path: &Path, errs: &mut Errors) {
    for (k, v) in sorted(labels) {
        validate_label_name(k, path, errs);
        errs.invalid_each(path, v, names::label_value_errors(v));
    }
}

/// `ValidateAnnotations`: keys are qualified names (case-insensitively), and keys and
/// values together hold at most 256 KiB.
pub(crate) fn validate_annotations(annotations: Option<&Value>, path: &Path, errs: &mut Errors) {
    let entries = sorted(annotations);
    let mut total = 0usize;
    for (k, v) in &entries {
        for m in names::label_key_errors(&k.to_lowercase()) {
            errs.invalid(path, Bad::str(k), &m);
        }
        total += k.len() + v.len();
    }
    if total > TOTAL_ANNOTATION_SIZE {
        errs.too_long(path, TOTAL_ANNOTATION_SIZE);
    }
}

/// An owner reference as Go's `encoding/json` writes a `metav1.OwnerReference`.
fn owner_ref_json(r: &Value) -> String {
    let s = |k: &str| json_str(r.get(k).and_then(Value::as_str).unwrap_or_default());
    let b = |k: &str| {
        r.get(k).and_then(Value::as_bool).map(|b| {
            if b {
                "true".to_string()
            } else {
                "false".to_string()
            }
        })
    };
    go_struct(&[
        ("apiVersion", Some(s("apiVersion"))),
        ("kind", Some(s("kind"))),
        ("name", Some(s("name"))),
        ("uid", Some(s("uid"))),
        ("controller", b("controller")),
        ("blockOwnerDeletion", b("blockOwnerDeletion")),
    ])
}

/// `ValidateOwnerReferences`: the errors of every reference are at the list's path.
pub(crate) fn validate_owner_references(refs: Option<&Value>, path: &Path, errs: &mut Errors) {
    let Some(list) = refs.and_then(Value::as_array) else {
        return;
    };
    let mut first_controller: Option<String> = None;
    for r in list {
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        let api_version = s("apiVersion");
        // `schema.FromAPIVersionAndKind`: the version follows the last `/`, if any.
        let version = match api_version.split_once('/') {
            Some((_, v)) => v,
            None => api_version,
        };
        if version.is_empty() {
            errs.invalid(
                &path.child("apiVersion"),
                Bad::str(api_version),
                "version must not be empty",
            );
        }
        if s("kind").is_empty() {
            errs.invalid(
                &path.child("kind"),
                Bad::str(s("kind")),
                "must not be empty",
            );
        }
        if s("name").is_empty() {
            errs.invalid(
                &path.child("name"),
                Bad::str(s("name")),
                "must not be empty",
            );
        }
        if s("uid").is_empty() {
            errs.invalid(&path.child("uid"), Bad::str(s("uid")), "must not be empty");
        }
        let group = match api_version.split_once('/') {
            Some((g, _)) => g,
            None => "",
        };
        if group.is_empty() && version == "v1" && s("kind") == "Event" {
            errs.invalid(
                path,
                Bad::Json(owner_ref_json(r)),
                "/v1, Kind=Event is disallowed from being an owner",
            );
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{}/{}", s("kind"), s("name"));
            match &first_controller {
                Some(first) => {
                    let all: Vec<String> = list.iter().map(owner_ref_json).collect();
                    errs.invalid(
                        path,
                        Bad::Json(format!("[{}]", all.join(","))),
                        &format!(
                            "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                        ),
                    );
                }
                None => first_controller = Some(current),
            }
        }
    }
}

fn strings(list: Option<&Value>) -> Vec<&str> {
    list.and_then(Value::as_array)
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `ValidateFinalizers`: each a qualified name (errors at the list's path), and not both
/// `orphan` and `foregroundDeletion`.
pub(crate) fn validate_finalizers(finalizers: Option<&Value>, path: &Path, errs: &mut Errors) {
    let list = strings(finalizers);
    for f in &list {
        errs.invalid_each(path, f, names::label_key_errors(f));
    }
    if list.contains(&"orphan") && list.contains(&"foregroundDeletion") {
        let all: Vec<String> = list.iter().map(|f| json_str(f)).collect();
        errs.invalid(
            path,
            Bad::Json(format!("[{}]", all.join(","))),
            "finalizer orphan and foregroundDeletion cannot be both set",
        );
    }
}

/// core's `validateKubeFinalizerName`: a name without a `/` must be one of the standard
/// finalizers.
fn validate_kube_finalizer_names(finalizers: Option<&Value>, path: &Path, errs: &mut Errors) {
    for (i, f) in strings(finalizers).into_iter().enumerate() {
        if !f.contains('/') && !matches!(f, "kubernetes" | "orphan" | "foregroundDeletion") {
            errs.invalid(
                &path.index(i),
                Bad::str(f),
                "name is neither a standard finalizer name nor is it fully qualified",
            );
        }
    }
}

fn validate_name(obj: &Value, name_fn: NameFn, meta_path: &Path, errs: &mut Errors) {
    let m = meta(obj);
    let generate = meta_str(m, "generateName");
    if !generate.is_empty() {
        errs.invalid_each(
            &meta_path.child("generateName"),
            generate,
            name_fn(generate, true),
        );
    }
    let name = meta_str(m, "name");
    if name.is_empty() {
        errs.required(&meta_path.child("name"), "name or generateName is required");
    } else {
        errs.invalid_each(&meta_path.child("name"), name, name_fn(name, false));
    }
}

/// apimachinery's `ValidateObjectMetaAccessor` of a new object.
pub(crate) fn validate_object_meta(
    obj: &Value,
    namespaced: bool,
    name_fn: NameFn,
    errs: &mut Errors,
) {
    let path = Path::new("metadata");
    validate_name(obj, name_fn, &path, errs);
    common(obj, namespaced, &path, errs);
}

/// The part of `ValidateObjectMetaAccessor` that does not depend on the name rule.
fn common(obj: &Value, namespaced: bool, path: &Path, errs: &mut Errors) {
    let m = meta(obj);
    let namespace = meta_str(m, "namespace");
    if namespaced {
        if namespace.is_empty() {
            errs.required(&path.child("namespace"), "");
        } else {
            errs.invalid_each(
                &path.child("namespace"),
                namespace,
                names::dns1123_label_errors(namespace),
            );
        }
    } else if !namespace.is_empty() {
        errs.forbidden(&path.child("namespace"), "not allowed on this type");
    }
    if let Some(g) = m.and_then(|m| m.get("generation")).and_then(Value::as_i64)
        && g < 0
    {
        errs.invalid(
            &path.child("generation"),
            Bad::Int(g),
            "must be greater than or equal to 0",
        );
    }
    let get = |k: &str| m.and_then(|m| m.get(k));
    validate_labels(get("labels"), &path.child("labels"), errs);
    validate_annotations(get("annotations"), &path.child("annotations"), errs);
    validate_owner_references(get("ownerReferences"), &path.child("ownerReferences"), errs);
    validate_finalizers(get("finalizers"), &path.child("finalizers"), errs);
}

/// core's `ValidateObjectMeta`: apimachinery's, then the finalizer-name rule.
pub(crate) fn validate_core_object_meta(
    obj: &Value,
    namespaced: bool,
    name_fn: NameFn,
    errs: &mut Errors,
) {
    validate_object_meta(obj, namespaced, name_fn, errs);
    validate_kube_finalizer_names(
        meta(obj).and_then(|m| m.get("finalizers")),
        &Path::new("metadata").child("finalizers"),
        errs,
    );
}

/// apimachinery's `ValidateObjectMetaAccessorUpdate` (the server restores the fields an
/// update may not change, so only the rules that can fail are here).
pub(crate) fn validate_object_meta_update(new: &Value, old: &Value, errs: &mut Errors) {
    let path = Path::new("metadata");
    let (m, o) = (meta(new), meta(old));
    if o.and_then(|o| o.get("deletionTimestamp"))
        .is_some_and(|t| !t.is_null())
    {
        let before = strings(o.and_then(|o| o.get("finalizers")));
        let mut extra: Vec<&str> = strings(m.and_then(|m| m.get("finalizers")))
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        extra.sort_unstable();
        extra.dedup();
        if !extra.is_empty() {
            let quoted: Vec<String> = extra
                .iter()
                .map(|f| ocm_api::k8s::gojson::quote(f))
                .collect();
            errs.forbidden(
                &path.child("finalizers"),
                &format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    quoted.join(", ")
                ),
            );
        }
    }
    let get = |k: &str| m.and_then(|m| m.get(k));
    validate_labels(get("labels"), &path.child("labels"), errs);
    validate_annotations(get("annotations"), &path.child("annotations"), errs);
    validate_owner_references(get("ownerReferences"), &path.child("ownerReferences"), errs);
}

/// core's `ValidateObjectMetaUpdate`: apimachinery's, then the finalizer-name rule.
pub(crate) fn validate_core_object_meta_update(new: &Value, old: &Value, errs: &mut Errors) {
    validate_object_meta_update(new, old, errs);
    validate_kube_finalizer_names(
        meta(new).and_then(|m| m.get("finalizers")),
        &Path::new("metadata").child("finalizers"),
        errs,
    );
}

/// What `rest.BeforeUpdate` checks of every update before the kind's own rules
/// (`validateCommonFields`): the new metadata as if created with path-segment names,
/// then the metadata update rules.
pub(crate) fn validate_common_update(
    new: &Value,
    old: &Value,
    namespaced: bool,
    errs: &mut Errors,
) {
    validate_object_meta(new, namespaced, path_segment, errs);
    validate_object_meta_update(new, old, errs);
}

/// A label selector as `encoding/json` writes a `metav1.LabelSelector`.
pub(crate) fn selector_json(sel: &Value) -> String {
    if sel.is_null() {
        return "null".into();
    }
    let labels = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
        .map(|m| ocm_api::k8s::gojson::value(&Value::Object(m.clone())));
    let exprs = sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let items: Vec<String> = l
                .iter()
                .map(|e| {
                    let s =
                        |k: &str| json_str(e.get(k).and_then(Value::as_str).unwrap_or_default());
                    let values = e
                        .get("values")
                        .and_then(Value::as_array)
                        .filter(|v| !v.is_empty())
                        .map(|v| ocm_api::k8s::gojson::value(&Value::Array(v.clone())));
                    go_struct(&[
                        ("key", Some(s("key"))),
                        ("operator", Some(s("operator"))),
                        ("values", values),
                    ])
                })
                .collect();
            format!("[{}]", items.join(","))
        });
    go_struct(&[("matchLabels", labels), ("matchExpressions", exprs)])
}

/// `ValidateLabelSelector` (label values must be valid).
pub(crate) fn validate_label_selector(sel: Option<&Value>, path: &Path, errs: &mut Errors) {
    let Some(sel) = sel.filter(|s| !s.is_null()) else {
        return;
    };
    validate_labels(sel.get("matchLabels"), &path.child("matchLabels"), errs);
    let exprs = sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, e) in exprs.iter().enumerate() {
        let p = path.child("matchExpressions").index(i);
        let values = strings(e.get("values"));
        let op = e
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match op {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.required(
                        &p.child("values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    );
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.forbidden(
                        &p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    );
                }
            }
            _ => errs.invalid(
                &p.child("operator"),
                Bad::str(op),
                "not a valid selector operator",
            ),
        }
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        validate_label_name(key, &p.child("key"), errs);
        for (j, v) in values.iter().enumerate() {
            errs.invalid_each(&p.child("values").index(j), v, names::label_value_errors(v));
        }
    }
}

/// Whether a label selector is well formed enough to be turned into a selector
/// (`LabelSelectorAsSelector` succeeds).
pub(crate) fn selector_parses(sel: &Value) -> bool {
    let mut e = Errors::new();
    validate_label_selector(Some(sel), &Path::new("s"), &mut e);
    e.is_empty()
}

/// Whether `labels` match `sel` (`nil` matches nothing, `{}` everything).
pub(crate) fn selector_matches(sel: &Value, labels: Option<&Value>) -> bool {
    let set: std::collections::BTreeMap<String, String> = sorted(labels)
        .into_iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    crate::storage::selector::LabelSelector::from_json(sel).is_ok_and(|s| s.matches(&set))
}

/// Whether a selector selects nothing in particular (no labels, no expressions).
pub(crate) fn selector_is_empty(sel: &Value) -> bool {
    let n = |k: &str| {
        sel.get(k)
            .map(|v| match v {
                Value::Object(m) => m.len(),
                Value::Array(a) => a.len(),
                _ => 0,
            })
            .unwrap_or(0)
    };
    n("matchLabels") + n("matchExpressions") == 0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(e: Errors) -> Vec<String> {
        e.into_causes()
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn a_bad_finalizer_fails_both_rules() {
        let obj =
            json!({"metadata": {"name": "x", "namespace": "d", "finalizers": ["bad finalizer"]}});
        let mut e = Errors::new();
        validate_core_object_meta(&obj, true, dns_subdomain, &mut e);
        let m = messages(e);
        assert_eq!(m.len(), 2);
        assert!(m[0].starts_with(
            "metadata.finalizers: Invalid value: \"bad finalizer\": name part must consist"
        ));
        assert_eq!(
            m[1],
            "metadata.finalizers[0]: Invalid value: \"bad finalizer\": name is neither a standard finalizer name nor is it fully qualified"
        );
    }

    #[test]
    fn owner_references_report_each_empty_field_at_the_list() {
        let obj = json!({"metadata": {"name": "x", "namespace": "d",
            "ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": ""}]}});
        let mut e = Errors::new();
        validate_object_meta(&obj, true, dns_subdomain, &mut e);
        assert_eq!(
            messages(e),
            [
                "metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty",
                "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty",
                "metadata.ownerReferences.name: Invalid value: \"\": must not be empty",
                "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty",
            ]
        );
    }

    #[test]
    fn two_controllers_are_one_too_many() {
        let r = |n: &str| json!({"apiVersion": "v1", "kind": "K", "name": n, "uid": n, "controller": true});
        let obj = json!({"metadata": {"name": "x", "namespace": "d", "ownerReferences": [r("a"), r("b")]}});
        let mut e = Errors::new();
        validate_object_meta(&obj, true, dns_subdomain, &mut e);
        assert_eq!(
            messages(e),
            [
                r#"metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","kind":"K","name":"a","uid":"a","controller":true},{"apiVersion":"v1","kind":"K","name":"b","uid":"b","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for K/a and K/b"#
            ]
        );
    }

    #[test]
    fn generate_name_is_checked_as_a_prefix() {
        let obj =
            json!({"metadata": {"name": "web-abcde", "generateName": "web-", "namespace": "d"}});
        let mut e = Errors::new();
        validate_object_meta(&obj, true, dns_subdomain, &mut e);
        assert!(e.is_empty());
        let obj =
            json!({"metadata": {"name": "Web-abcde", "generateName": "Web-", "namespace": "d"}});
        let mut e = Errors::new();
        validate_object_meta(&obj, true, dns_subdomain, &mut e);
        let m = messages(e);
        assert!(m[0].starts_with("metadata.generateName: Invalid value: \"Web-\""));
        assert!(m[1].starts_with("metadata.name: Invalid value: \"Web-abcde\""));
    }

    #[test]
    fn selectors_print_as_go_writes_them() {
        let sel = json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}], "matchLabels": {"x": "y"}});
        assert_eq!(
            selector_json(&sel),
            r#"{"matchLabels":{"x":"y"},"matchExpressions":[{"key":"a","operator":"In","values":["b"]}]}"#
        );
        let mut e = Errors::new();
        validate_label_selector(
            Some(&json!({"matchExpressions": [{"key": "a", "operator": "Bogus"}]})),
            &Path::new("spec").child("selector"),
            &mut e,
        );
        assert_eq!(
            messages(e),
            [
                "spec.selector.matchExpressions[0].operator: Invalid value: \"Bogus\": not a valid selector operator"
            ]
        );
    }
}
