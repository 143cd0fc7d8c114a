//! Field paths and field sets, the unit of ownership in server-side apply.
//!
//! A field set is serialized as `fieldsV1`: nested objects keyed by `f:<field>`,
//! `k:<json of list-map keys>`, `v:<json value>` or `i:<index>`, with `.` marking
//! that a node is owned itself and not only through its children.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use crate::storage::schema::{ListKind, Shape};

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum PathElement {
    /// A field of an object.
    Field(String),
    /// An item of a list-map, by the canonical JSON of its key fields.
    Key(String),
    /// An item of a set, by its canonical JSON.
    Value(String),
    /// An item of a list by position (only read from foreign fieldsV1).
    Index(usize),
}

/// A path from the object's root to one field.
pub(crate) type Path = Vec<PathElement>;

/// A set of owned paths.
pub(crate) type FieldSet = BTreeSet<Path>;

/// Display a path as kube-apiserver does in conflict messages: `.spec.containers[name="c"].image`.
pub(crate) struct DisplayPath<'a>(pub(crate) &'a [PathElement]);

impl fmt::Display for DisplayPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in self.0 {
            match e {
                PathElement::Field(n) => write!(f, ".{n}")?,
                PathElement::Key(k) => {
                    let parts: Vec<String> = serde_json::from_str::<Map<String, Value>>(k)
                        .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
                        .unwrap_or_default();
                    write!(f, "[{}]", parts.join(","))?
                }
                PathElement::Value(v) => write!(f, "[={v}]")?,
                PathElement::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// The key element of a list-map item, or `None` when the item lacks a key field.
///
/// A missing key field takes its schema default where Kubernetes has one
/// (`protocol: TCP` for ports), so `{containerPort: 80}` and
/// `{containerPort: 80, protocol: TCP}` are the same item.
pub(crate) fn item_key(item: &Value, keys: &[String]) -> Option<PathElement> {
    let mut m = Map::new();
    for k in keys {
        match item.get(k) {
            Some(v) => {
                m.insert(k.clone(), v.clone());
            }
            None if k == "protocol" => {
                m.insert(k.clone(), Value::String("TCP".into()));
            }
            None => {}
        }
    }
    if m.is_empty() {
        return None;
    }
    Some(PathElement::Key(Value::Object(m).to_string()))
}

/// Whether a list item is the one a `k:` element names.
fn item_matches(item: &Value, key_json: &str) -> bool {
    let Ok(keys) = serde_json::from_str::<Map<String, Value>>(key_json) else {
        return false;
    };
    let names: Vec<String> = keys.keys().cloned().collect();
    matches!(item_key(item, &names), Some(PathElement::Key(k)) if k == key_json)
}

/// Whether a root metadata field is tracked by field management.
fn tracked_metadata(name: &str) -> bool {
    matches!(
        name,
        "labels" | "annotations" | "finalizers" | "ownerReferences"
    )
}

/// Every field path an object sets: leaves, plus list-map and set items.
pub(crate) fn fieldset_of(obj: &Value, shape: &Shape<'_>) -> FieldSet {
    let mut out = FieldSet::new();
    let mut path = Vec::new();
    walk(obj, shape, &mut path, 0, &mut out);
    out
}

fn walk(v: &Value, shape: &Shape<'_>, path: &mut Path, depth: usize, out: &mut FieldSet) {
    match v {
        Value::Object(m) if depth == 0 || !shape.atomic_map() => {
            if m.is_empty() && depth > 0 {
                out.insert(path.clone());
                return;
            }
            for (k, child) in m {
                if depth == 0 && (k == "apiVersion" || k == "kind") {
                    continue;
                }
                if depth == 1
                    && path.first() == Some(&PathElement::Field("metadata".into()))
                    && !tracked_metadata(k)
                {
                    continue;
                }
                let cs = shape.field(k, depth == 0);
                path.push(PathElement::Field(k.clone()));
                walk(child, &cs, path, depth + 1, out);
                path.pop();
            }
        }
        Value::Array(items) => match shape.list_kind() {
            ListKind::Map(keys) if !keys.is_empty() => {
                let is = shape.items();
                for item in items {
                    match item_key(item, &keys) {
                        Some(k) => {
                            path.push(k);
                            out.insert(path.clone());
                            walk(item, &is, path, depth + 1, out);
                            path.pop();
                        }
                        None => {
                            out.insert(path.clone());
                        }
                    }
                }
                if items.is_empty() {
                    out.insert(path.clone());
                }
            }
            ListKind::Set => {
                for item in items {
                    path.push(PathElement::Value(item.to_string()));
                    out.insert(path.clone());
                    path.pop();
                }
                if items.is_empty() {
                    out.insert(path.clone());
                }
            }
            _ => {
                out.insert(path.clone());
            }
        },
        _ => {
            if depth > 0 {
                out.insert(path.clone());
            }
        }
    }
}

/// The value at a path, if present.
pub(crate) fn get_path<'v>(obj: &'v Value, path: &[PathElement]) -> Option<&'v Value> {
    let mut cur = obj;
    for e in path {
        cur = match e {
            PathElement::Field(n) => cur.get(n)?,
            PathElement::Key(k) => cur.as_array()?.iter().find(|it| item_matches(it, k))?,
            PathElement::Value(v) => {
                let want: Value = serde_json::from_str(v).ok()?;
                cur.as_array()?.iter().find(|it| **it == want)?
            }
            PathElement::Index(i) => cur.as_array()?.get(*i)?,
        };
    }
    Some(cur)
}

/// Remove the value at a path; returns whether something was removed.
pub(crate) fn remove_path(obj: &mut Value, path: &[PathElement]) -> bool {
    let Some((last, parent_path)) = path.split_last() else {
        return false;
    };
    let mut cur = obj;
    for e in parent_path {
        let next = match e {
            PathElement::Field(n) => cur.get_mut(n),
            PathElement::Key(_) | PathElement::Value(_) | PathElement::Index(_) => {
                let idx = match cur.as_array() {
                    Some(a) => position(a, e),
                    None => None,
                };
                match idx {
                    Some(i) => cur.get_mut(i),
                    None => None,
                }
            }
        };
        match next {
            Some(n) => cur = n,
            None => return false,
        }
    }
    match last {
        PathElement::Field(n) => cur.as_object_mut().is_some_and(|m| m.remove(n).is_some()),
        other => {
            let idx = cur.as_array().and_then(|a| position(a, other));
            match (idx, cur.as_array_mut()) {
                (Some(i), Some(a)) => {
                    a.remove(i);
                    true
                }
                _ => false,
            }
        }
    }
}

pub(crate) fn position(items: &[Value], e: &PathElement) -> Option<usize> {
    match e {
        PathElement::Key(k) => items.iter().position(|it| item_matches(it, k)),
        PathElement::Value(v) => {
            let want: Value = serde_json::from_str(v).ok()?;
            items.iter().position(|it| *it == want)
        }
        PathElement::Index(i) => (*i < items.len()).then_some(*i),
        PathElement::Field(_) => None,
    }
}

#[derive(Default)]
struct Node {
    member: bool,
    children: std::collections::BTreeMap<String, Node>,
}

impl Node {
    fn into_json(self) -> Value {
        let mut m = Map::new();
        if self.member && !self.children.is_empty() {
            m.insert(".".into(), Value::Object(Map::new()));
        }
        for (k, c) in self.children {
            m.insert(k, c.into_json());
        }
        Value::Object(m)
    }
}

/// Serialize a field set as `fieldsV1`.
pub(crate) fn to_fields_v1(set: &FieldSet) -> Value {
    let mut root = Node::default();
    for path in set {
        let mut cur = &mut root;
        for e in path {
            let key = match e {
                PathElement::Field(n) => format!("f:{n}"),
                PathElement::Key(k) => format!("k:{k}"),
                PathElement::Value(v) => format!("v:{v}"),
                PathElement::Index(i) => format!("i:{i}"),
            };
            cur = cur.children.entry(key).or_default();
        }
        cur.member = true;
    }
    root.into_json()
}

fn parse_element(k: &str) -> Option<PathElement> {
    let (prefix, rest) = k.split_once(':')?;
    Some(match prefix {
        "f" => PathElement::Field(rest.to_string()),
        "k" => PathElement::Key(
            serde_json::from_str::<Value>(rest)
                .map(|v| v.to_string())
                .unwrap_or_else(|_| rest.to_string()),
        ),
        "v" => PathElement::Value(
            serde_json::from_str::<Value>(rest)
                .map(|v| v.to_string())
                .unwrap_or_else(|_| rest.to_string()),
        ),
        "i" => PathElement::Index(rest.parse().ok()?),
        _ => return None,
    })
}

/// Parse `fieldsV1` into a field set.
pub(crate) fn from_fields_v1(v: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    if let Value::Object(m) = v {
        parse_node(m, &mut Vec::new(), &mut out);
    }
    out
}

fn parse_node(m: &Map<String, Value>, path: &mut Path, out: &mut FieldSet) {
    for (k, child) in m {
        if k == "." {
            out.insert(path.clone());
            continue;
        }
        let Some(e) = parse_element(k) else { continue };
        path.push(e);
        match child {
            Value::Object(cm) if !cm.is_empty() => parse_node(cm, path, out),
            _ => {
                out.insert(path.clone());
            }
        }
        path.pop();
    }
}

/// Whether `prefix` is a prefix of (or equal to) `path`.
pub(crate) fn is_prefix(prefix: &[PathElement], path: &[PathElement]) -> bool {
    path.len() >= prefix.len() && path[..prefix.len()] == *prefix
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fieldset_roundtrip_and_display() {
        let obj = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "labels": {"a": "b"}},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "c", "image": "i", "ports": [{"containerPort": 80, "protocol": "TCP"}]}
            ]}}}
        });
        let set = fieldset_of(&obj, &Shape::root(None));
        let v1 = to_fields_v1(&set);
        assert_eq!(
            v1["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]["."],
            json!({})
        );
        assert_eq!(v1["f:metadata"]["f:labels"]["f:a"], json!({}));
        assert!(v1["f:metadata"].get("f:name").is_none());
        assert_eq!(from_fields_v1(&v1), set);
        let p: Vec<String> = set.iter().map(|p| DisplayPath(p).to_string()).collect();
        assert!(p.contains(&".spec.template.spec.containers[name=\"c\"].image".to_string()));
    }

    #[test]
    fn remove_by_key() {
        let mut obj = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let path = vec![
            PathElement::Field("spec".into()),
            PathElement::Field("containers".into()),
            item_key(&json!({"name": "b"}), &["name".to_string()]).unwrap(),
        ];
        assert!(remove_path(&mut obj, &path));
        assert_eq!(obj, json!({"spec": {"containers": [{"name": "a"}]}}));
    }
}
