//! Fields an object's type does not have, found at any depth.
//!
//! Two walks, one per way kube-apiserver meets an object:
//!
//! - [`drop_unknown`]: decoding a body into the kind's Go type (create, update, and the
//!   result of a JSON, merge or strategic merge patch). Unknown fields are dropped and named
//!   as `sigs.k8s.io/json`'s strict decoder names them: struct fields and map keys joined
//!   with `.`, list indices in brackets (`spec.template.spec.containers[0].imagee`,
//!   `metadata.labels.x`). The decoder keeps at most 100 such findings.
//! - [`apply_unknown`]: server-side apply's conversion of the applied object into a typed
//!   value (structured-merge-diff), which refuses the write. Its paths start with `.`, name
//!   the items of associative lists by their keys (`.spec.containers[name="main"].imagee`)
//!   and stop at the first unknown field of each object.
//!
//! Built-in kinds are walked through [`crate::serving::openapi::model`]; custom resources through their
//! CRD's structural schema (with `metadata` as the built-in `ObjectMeta`).

use serde_json::{Map, Value};

use crate::serving::openapi::definitions::{OBJECT_META, builtins};
use crate::serving::openapi::model::{Model, Node, NodeId, builtin_model};
use crate::storage::registry::ResourceInfo;

/// How many unknown fields the Go decoder reports before it stops counting.
const MAX_FINDINGS: usize = 100;

/// The model node of a built-in kind, if it has one.
pub(crate) fn builtin_root(info: &ResourceInfo, version: &str) -> Option<NodeId> {
    if info.crd_name.is_some() {
        return None;
    }
    let name = builtins().kind(&info.group, version, &info.kind)?;
    builtin_model().definition(name)
}

fn object_meta() -> Option<NodeId> {
    builtin_model().definition(OBJECT_META)
}

/// Whether anything below a node can be unknown (scalars, raw values and maps of them
/// cannot), so the walk skips what it need not visit.
fn may_hold_unknown(model: &Model, id: NodeId) -> bool {
    match model.node(id) {
        Node::Struct(_) => true,
        Node::Map(values) => matches!(
            model.node(*values),
            Node::Struct(_) | Node::List { .. } | Node::Map(_)
        ),
        Node::List { items, .. } => may_hold_unknown(model, *items),
        Node::Scalar | Node::Any => false,
    }
}

/// Drop the fields of `obj` that decoding it as `info` would drop, returning their paths:
/// the whole object for built-in kinds with a model, `metadata` for every other kind (custom
/// resources lose the rest of their unknown fields to pruning).
pub(crate) fn drop_unknown(info: &ResourceInfo, version: &str, obj: &mut Value) -> Vec<String> {
    let model = builtin_model();
    let mut out = Vec::new();
    let mut path = String::new();
    match builtin_root(info, version) {
        Some(root) => walk_go(model, root, obj, &mut path, &mut out),
        None => {
            if let (Some(meta_id), Some(meta)) = (object_meta(), obj.get_mut("metadata")) {
                path.push_str("metadata");
                walk_go(model, meta_id, meta, &mut path, &mut out);
            }
        }
    }
    out
}

fn push_field(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

fn record(out: &mut Vec<String>, path: &str, key: &str) {
    if out.len() < MAX_FINDINGS {
        let mut p = path.to_string();
        push_field(&mut p, key);
        out.push(p);
    }
}

fn walk_go(model: &Model, id: NodeId, v: &mut Value, path: &mut String, out: &mut Vec<String>) {
    ocm_api::k8s::json::descend(|| match (model.node(id), v) {
        (Node::Struct(fields), Value::Object(m)) => {
            let mut unknown: Vec<String> = Vec::new();
            for (k, child) in m.iter_mut() {
                match fields.get(k) {
                    Some(&cid) => {
                        if may_hold_unknown(model, cid) {
                            let len = path.len();
                            push_field(path, k);
                            walk_go(model, cid, child, path, out);
                            path.truncate(len);
                        }
                    }
                    None => {
                        record(out, path, k);
                        unknown.push(k.clone());
                    }
                }
            }
            for k in unknown {
                m.remove(&k);
            }
        }
        (Node::Map(values), Value::Object(m)) => {
            let values = *values;
            if may_hold_unknown(model, values) {
                for (k, child) in m.iter_mut() {
                    let len = path.len();
                    push_field(path, k);
                    walk_go(model, values, child, path, out);
                    path.truncate(len);
                }
            }
        }
        (Node::List { items, .. }, Value::Array(a)) => {
            let items = *items;
            if may_hold_unknown(model, items) {
                for (i, child) in a.iter_mut().enumerate() {
                    let len = path.len();
                    path.push('[');
                    path.push_str(&i.to_string());
                    path.push(']');
                    walk_go(model, items, child, path, out);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    })
}

/// Where server-side apply's walk stands: a node of the built-in model, a node of a CRD's
/// structural schema, or a value that may hold anything.
#[derive(Clone, Copy)]
enum Cursor<'s> {
    Model(NodeId),
    Crd(&'s Value),
    Any,
}

/// What a list's items are named by in structured-merge-diff paths.
enum Items {
    Index,
    Keys(Vec<String>),
    Set,
}

impl<'s> Cursor<'s> {
    /// The cursor of field `key` of an object at this cursor; `None` if the type has no such
    /// field.
    fn field(self, key: &str) -> Option<Cursor<'s>> {
        match self {
            Cursor::Model(id) => match builtin_model().node(id) {
                Node::Struct(fields) => fields.get(key).map(|&c| Cursor::Model(c)),
                Node::Map(values) => Some(Cursor::Model(*values)),
                _ => Some(Cursor::Any),
            },
            Cursor::Crd(s) => {
                if preserves_unknown(s) {
                    return Some(match s.get("properties").and_then(|p| p.get(key)) {
                        Some(c) => Cursor::Crd(c),
                        None => Cursor::Any,
                    });
                }
                if let Some(c) = s.get("properties").and_then(|p| p.get(key)) {
                    return Some(Cursor::Crd(c));
                }
                match s.get("additionalProperties") {
                    Some(a @ Value::Object(_)) => Some(Cursor::Crd(a)),
                    Some(Value::Bool(true)) => Some(Cursor::Any),
                    _ if s.get("properties").is_none()
                        && s.get("type").and_then(Value::as_str) != Some("object") =>
                    {
                        Some(Cursor::Any)
                    }
                    _ => None,
                }
            }
            Cursor::Any => Some(Cursor::Any),
        }
    }

    /// The cursor of a list's items and how they are named.
    fn items(self) -> (Cursor<'s>, Items) {
        match self {
            Cursor::Model(id) => match builtin_model().node(id) {
                Node::List { items, keys } => (
                    Cursor::Model(*items),
                    match keys {
                        Some(k) => Items::Keys(k.clone()),
                        None => Items::Index,
                    },
                ),
                _ => (Cursor::Any, Items::Index),
            },
            Cursor::Crd(s) => {
                let naming = match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                    Some("map") => Items::Keys(
                        s.get("x-kubernetes-list-map-keys")
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .filter_map(|k| k.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default(),
                    ),
                    Some("set") => Items::Set,
                    _ => Items::Index,
                };
                (s.get("items").map_or(Cursor::Any, Cursor::Crd), naming)
            }
            Cursor::Any => (Cursor::Any, Items::Index),
        }
    }

    /// Whether anything below can be unknown.
    fn may_hold_unknown(self) -> bool {
        match self {
            Cursor::Model(id) => may_hold_unknown(builtin_model(), id),
            Cursor::Crd(_) => true,
            Cursor::Any => false,
        }
    }
}

fn preserves_unknown(s: &Value) -> bool {
    s.get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
}

/// The unknown fields of an applied object, in structured-merge-diff's words
/// (`.spec.foo: field not declared in schema`), for built-in kinds with a model and for custom
/// resources with a schema (`schema`, the version's `openAPIV3Schema`).
pub(crate) fn apply_unknown(
    info: &ResourceInfo,
    version: &str,
    schema: Option<&Value>,
    obj: &Value,
) -> Vec<String> {
    let mut out = Vec::new();
    let Some(m) = obj.as_object() else {
        return out;
    };
    if let Some(root) = builtin_root(info, version) {
        walk_smd_object(Cursor::Model(root), m, &mut String::new(), &mut out);
        return out;
    }
    let Some(schema) = schema.filter(|_| info.crd_name.is_some()) else {
        return out;
    };
    // The root of a custom resource: `apiVersion` and `kind` strings, `metadata` an
    // `ObjectMeta`, the rest from the schema.
    let mut path = String::new();
    for (k, child) in m {
        let cursor = match k.as_str() {
            "apiVersion" | "kind" => Some(Cursor::Any),
            "metadata" => Some(object_meta().map_or(Cursor::Any, Cursor::Model)),
            _ => Cursor::Crd(schema).field(k),
        };
        let len = path.len();
        path.push('.');
        path.push_str(k);
        match cursor {
            Some(c) => walk_smd(c, child, &mut path, &mut out),
            None => {
                out.push(format!("{path}: field not declared in schema"));
                path.truncate(len);
                break;
            }
        }
        path.truncate(len);
    }
    out
}

/// Drop the fields of an object to be applied that its type does not declare (as
/// [`apply_unknown`] finds them, but all of them), returning their paths in the decoder's
/// form (`spec.template.spec.containers[0].imagee`). For loaders that apply fixtures
/// leniently.
pub(crate) fn drop_undeclared(
    info: &ResourceInfo,
    version: &str,
    schema: Option<&Value>,
    obj: &mut Value,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut path = String::new();
    if let Some(root) = builtin_root(info, version) {
        walk_drop(Cursor::Model(root), obj, &mut path, &mut out);
        return out;
    }
    let Some(m) = obj.as_object_mut() else {
        return out;
    };
    let schema = schema.filter(|_| info.crd_name.is_some());
    let mut unknown = Vec::new();
    for (k, child) in m.iter_mut() {
        let cursor = match (k.as_str(), schema) {
            ("apiVersion" | "kind", _) => Some(Cursor::Any),
            ("metadata", _) => Some(object_meta().map_or(Cursor::Any, Cursor::Model)),
            (_, Some(s)) => Cursor::Crd(s).field(k),
            (_, None) => Some(Cursor::Any),
        };
        match cursor {
            Some(c) => {
                let len = path.len();
                push_field(&mut path, k);
                walk_drop(c, child, &mut path, &mut out);
                path.truncate(len);
            }
            None => {
                record(&mut out, &path, k);
                unknown.push(k.clone());
            }
        }
    }
    for k in unknown {
        m.remove(&k);
    }
    out
}

fn walk_drop(cursor: Cursor<'_>, v: &mut Value, path: &mut String, out: &mut Vec<String>) {
    ocm_api::k8s::json::descend(|| {
        if !cursor.may_hold_unknown() {
            return;
        }
        match v {
            Value::Object(m) => {
                let mut unknown = Vec::new();
                for (k, child) in m.iter_mut() {
                    match cursor.field(k) {
                        Some(c) => {
                            let len = path.len();
                            push_field(path, k);
                            walk_drop(c, child, path, out);
                            path.truncate(len);
                        }
                        None => {
                            record(out, path, k);
                            unknown.push(k.clone());
                        }
                    }
                }
                for k in unknown {
                    m.remove(&k);
                }
            }
            Value::Array(items) => {
                let (item_cursor, _) = cursor.items();
                for (i, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push('[');
                    path.push_str(&i.to_string());
                    path.push(']');
                    walk_drop(item_cursor, item, path, out);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    })
}

fn walk_smd(cursor: Cursor<'_>, v: &Value, path: &mut String, out: &mut Vec<String>) {
    ocm_api::k8s::json::descend(|| {
        if !cursor.may_hold_unknown() {
            return;
        }
        match v {
            Value::Object(m) => walk_smd_object(cursor, m, path, out),
            Value::Array(items) => {
                let (item_cursor, naming) = cursor.items();
                if !item_cursor.may_hold_unknown() {
                    return;
                }
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    match &naming {
                        Items::Keys(keys) => match key_element(item, keys) {
                            Some(e) => path.push_str(&e),
                            // An item without its keys cannot be named: structured-merge-diff
                            // reports that instead and skips the item.
                            None => continue,
                        },
                        Items::Set => continue,
                        Items::Index => {
                            path.push('[');
                            path.push_str(&i.to_string());
                            path.push(']');
                        }
                    }
                    walk_smd(item_cursor, item, path, out);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    })
}

fn walk_smd_object(
    cursor: Cursor<'_>,
    m: &Map<String, Value>,
    path: &mut String,
    out: &mut Vec<String>,
) {
    for (k, child) in m {
        let len = path.len();
        path.push('.');
        path.push_str(k);
        match cursor.field(k) {
            Some(c) => walk_smd(c, child, path, out),
            None => {
                // structured-merge-diff stops at the first unknown field of an object.
                out.push(format!("{path}: field not declared in schema"));
                path.truncate(len);
                return;
            }
        }
        path.truncate(len);
    }
}

/// The path element of an associative list's item: `[name="main"]`,
/// `[containerPort=80,protocol="TCP"]` (a missing `protocol` key takes its default, `TCP`).
fn key_element(item: &Value, keys: &[String]) -> Option<String> {
    let m = item.as_object()?;
    let mut parts = Vec::with_capacity(keys.len());
    for k in keys {
        let value = match m.get(k) {
            Some(v) => v.clone(),
            None if k == "protocol" => Value::from("TCP"),
            None => return None,
        };
        parts.push(format!("{k}={}", smd_value(&value)));
    }
    Some(format!("[{}]", parts.join(",")))
}

/// A key value as structured-merge-diff prints it (`value.ToString`).
fn smd_value(v: &Value) -> String {
    match v {
        Value::String(s) => ocm_api::k8s::gojson::quote(s),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => ocm_api::k8s::gojson::format_float(n.as_f64().unwrap_or_default()),
        },
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(smd_value).collect::<Vec<_>>().join(",")
        ),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}:{}", ocm_api::k8s::gojson::quote(k), smd_value(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(group: &str, kind: &str) -> ResourceInfo {
        crate::storage::builtin::builtin_resources()
            .into_iter()
            .find(|i| i.group == group && i.kind == kind)
            .unwrap()
    }

    #[test]
    fn unknown_fields_are_dropped_at_any_depth_with_go_paths() {
        let mut d = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"x": "y"}, "clusterName": "c"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [
                        {"name": "a", "image": "nginx"},
                        {"name": "b", "imagee": "nginx", "ports": [{"containerPort": 80, "hostPortt": 1}]}
                    ]}
                },
                "replicaz": 3
            },
            "extra": true
        });
        let found = drop_unknown(&info("apps", "Deployment"), "v1", &mut d);
        assert_eq!(
            found,
            vec![
                "extra",
                "metadata.clusterName",
                "spec.replicaz",
                "spec.template.spec.containers[1].imagee",
                "spec.template.spec.containers[1].ports[0].hostPortt",
            ]
        );
        assert!(d.get("extra").is_none());
        assert!(
            d["spec"]["template"]["spec"]["containers"][1]
                .get("imagee")
                .is_none()
        );
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][1]["ports"][0],
            json!({"containerPort": 80})
        );
        // Raw values hold anything.
        let mut cr = json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"},
                            "revision": 1, "data": {"anything": {"goes": 1}}});
        assert!(drop_unknown(&info("apps", "ControllerRevision"), "v1", &mut cr).is_empty());
        // Map values of a struct type are walked with their key in the path.
        let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s",
            "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {}}, "bogus": 1}]}});
        assert_eq!(
            drop_unknown(&info("", "Secret"), "v1", &mut secret),
            vec!["metadata.managedFields[0].bogus"]
        );
    }

    #[test]
    fn apply_names_list_items_by_their_keys_and_stops_at_the_first_unknown_field() {
        let d = json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"template": {"spec": {"containers": [
                {"name": "main", "imagee": "x", "zzz": 1,
                 "ports": [{"containerPort": 80, "bogus": 1}]},
            ]}}}
        });
        assert_eq!(
            apply_unknown(&info("apps", "Deployment"), "v1", None, &d),
            vec![
                ".spec.template.spec.containers[name=\"main\"].imagee: field not declared in schema",
            ]
        );
        let d = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                       "spec": {"ports": [{"port": 80, "nodePortt": 1}]}});
        assert_eq!(
            apply_unknown(&info("", "Service"), "v1", None, &d),
            vec![".spec.ports[port=80,protocol=\"TCP\"].nodePortt: field not declared in schema"]
        );
    }
}
