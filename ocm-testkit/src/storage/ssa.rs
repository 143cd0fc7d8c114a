//! Server-side apply and field management (`metadata.managedFields`).
//!
//! Ownership is tracked per manager, operation (`Apply` or `Update`) and
//! subresource, as sets of field paths (see [`crate::storage::fieldset`]). An apply
//! merges the applied configuration into the live object by the list and map
//! semantics of the object's schema, refuses to overrule other managers unless
//! forced, and deletes fields the applier dropped when nobody else owns them.

use serde_json::{Map, Value, json};

use crate::api_error::{ApiError, ApiResult, Cause};
use crate::storage::fieldset::{
    DisplayPath, FieldSet, Path, PathElement, fieldset_of, from_fields_v1, get_path, is_prefix,
    item_key, position, remove_path, to_fields_v1,
};
use crate::storage::schema::{ListKind, Shape};

/// One `managedFields` entry, with its field set parsed.
#[derive(Debug, Clone)]
pub(crate) struct ManagedEntry {
    pub(crate) manager: String,
    pub(crate) operation: String,
    pub(crate) api_version: String,
    pub(crate) time: Option<String>,
    pub(crate) subresource: String,
    pub(crate) set: FieldSet,
}

impl ManagedEntry {
    fn same_owner(&self, manager: &str, operation: &str, subresource: &str) -> bool {
        self.manager == manager && self.operation == operation && self.subresource == subresource
    }

    fn describe(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s = format!("{s} with subresource {:?}", self.subresource);
        }
        if self.operation == "Update" {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }
}

/// Who is writing, for field management.
#[derive(Debug, Clone)]
pub(crate) struct Writer<'a> {
    pub(crate) manager: &'a str,
    pub(crate) api_version: &'a str,
    pub(crate) time: &'a str,
    pub(crate) subresource: &'a str,
}

/// Read `metadata.managedFields`.
pub(crate) fn read_managed(obj: &Value) -> Vec<ManagedEntry> {
    let Some(list) = obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|e| {
            Some(ManagedEntry {
                manager: e.get("manager")?.as_str()?.to_string(),
                operation: e.get("operation")?.as_str()?.to_string(),
                api_version: e
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                time: e.get("time").and_then(Value::as_str).map(str::to_string),
                subresource: e
                    .get("subresource")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                set: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
            })
        })
        .collect()
}

/// Write `metadata.managedFields` (dropping entries that own nothing).
pub(crate) fn write_managed(obj: &mut Value, entries: Vec<ManagedEntry>) {
    let list: Vec<Value> = entries
        .into_iter()
        .filter(|e| !e.set.is_empty())
        .map(|e| {
            let mut m = Map::new();
            m.insert("manager".into(), json!(e.manager));
            m.insert("operation".into(), json!(e.operation));
            m.insert("apiVersion".into(), json!(e.api_version));
            if let Some(t) = e.time {
                m.insert("time".into(), json!(t));
            }
            m.insert("fieldsType".into(), json!("FieldsV1"));
            m.insert("fieldsV1".into(), to_fields_v1(&e.set));
            if !e.subresource.is_empty() {
                m.insert("subresource".into(), json!(e.subresource));
            }
            Value::Object(m)
        })
        .collect();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// Keep only the part of a field set a subresource write may touch.
fn restrict(set: FieldSet, subresource: &str) -> FieldSet {
    if subresource == "status" {
        set.into_iter()
            .filter(|p| p.first() == Some(&PathElement::Field("status".into())))
            .collect()
    } else {
        set
    }
}

/// Merge an applied configuration into a live value.
pub(crate) fn merge_applied(
    cur: Option<&Value>,
    app: &Value,
    shape: &Shape<'_>,
    depth: usize,
) -> Value {
    match (cur, app) {
        (Some(Value::Object(c)), Value::Object(a)) if depth == 0 || !shape.atomic_map() => {
            let mut out = c.clone();
            for (k, av) in a {
                let cs = shape.field(k, depth == 0);
                let nv = merge_applied(c.get(k), av, &cs, depth + 1);
                out.insert(k.clone(), nv);
            }
            Value::Object(out)
        }
        (Some(Value::Array(c)), Value::Array(a)) => match shape.list_kind() {
            ListKind::Map(keys) if !keys.is_empty() => {
                let is = shape.items();
                let mut out = c.clone();
                for item in a {
                    let at = item_key(item, &keys).and_then(|k| position(&out, &k));
                    match at {
                        Some(i) => {
                            let merged = merge_applied(Some(&out[i]), item, &is, depth + 1);
                            out[i] = merged;
                        }
                        None => out.push(item.clone()),
                    }
                }
                Value::Array(out)
            }
            ListKind::Set => {
                let mut out = c.clone();
                for item in a {
                    if !out.contains(item) {
                        out.push(item.clone());
                    }
                }
                Value::Array(out)
            }
            _ => app.clone(),
        },
        _ => app.clone(),
    }
}

/// Apply `applied` over `current` (absent for create-by-apply) on behalf of `writer`.
///
/// Returns the new object with its managedFields updated.
pub(crate) fn apply(
    current: Option<&Value>,
    applied: &Value,
    shape: &Shape<'_>,
    writer: &Writer<'_>,
    force: bool,
) -> ApiResult<Value> {
    let mut entries = current.map(read_managed).unwrap_or_default();
    let applied_set = restrict(fieldset_of(applied, shape), writer.subresource);
    let empty = Value::Object(Map::new());
    let base = current.unwrap_or(&empty);
    let mut merged = merge_applied(Some(base), applied, shape, 0);

    // Conflicts with every other owner whose value would change.
    let mut conflicts: Vec<(usize, Path)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.same_owner(writer.manager, "Apply", writer.subresource) {
            continue;
        }
        for p in applied_set.intersection(&e.set) {
            if matches!(
                p.last(),
                Some(PathElement::Key(_)) | Some(PathElement::Value(_))
            ) {
                continue;
            }
            if get_path(base, p) != get_path(&merged, p) {
                conflicts.push((i, p.clone()));
            }
        }
    }
    if !conflicts.is_empty() {
        if !force {
            return Err(conflict_error(&entries, &conflicts));
        }
        for (i, p) in &conflicts {
            entries[*i].set.remove(p);
        }
    }

    // Fields the applier stopped applying are removed when nobody else owns them.
    let previous = entries
        .iter()
        .find(|e| e.same_owner(writer.manager, "Apply", writer.subresource))
        .map(|e| e.set.clone())
        .unwrap_or_default();
    let mut dropped: Vec<&Path> = previous.difference(&applied_set).collect();
    // Parents first: removing a list item takes its fields with it.
    dropped.sort_by_key(|p| p.len());
    for p in dropped {
        // A key field of a list-map item goes only with its item (removed above when nobody
        // keeps it): an item another manager keeps a field of keeps its key, as
        // kube-apiserver's structured merge does.
        if is_key_field(p) {
            continue;
        }
        let kept_by_others = entries.iter().any(|e| {
            !e.same_owner(writer.manager, "Apply", writer.subresource)
                && e.set.iter().any(|q| is_prefix(p, q))
        }) || applied_set.iter().any(|q| is_prefix(p, q));
        if !kept_by_others {
            remove_path(&mut merged, p);
        }
    }

    // A no-op apply leaves the entry (and its time) alone, so the object does
    // not change and keeps its resourceVersion.
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        v
    };
    let object_changed = strip(&merged) != strip(base);
    match entries
        .iter_mut()
        .find(|e| e.same_owner(writer.manager, "Apply", writer.subresource))
    {
        Some(e) => {
            if object_changed || e.set != applied_set || e.api_version != writer.api_version {
                e.time = Some(writer.time.to_string());
            }
            e.set = applied_set;
            e.api_version = writer.api_version.to_string();
        }
        None => entries.push(ManagedEntry {
            manager: writer.manager.to_string(),
            operation: "Apply".into(),
            api_version: writer.api_version.to_string(),
            time: Some(writer.time.to_string()),
            subresource: writer.subresource.to_string(),
            set: applied_set,
        }),
    }
    write_managed(&mut merged, entries);
    Ok(merged)
}

/// Whether `path` names one of the key fields of a list-map item (`...[name="A"].name`).
fn is_key_field(path: &Path) -> bool {
    match path.as_slice() {
        [.., PathElement::Key(key), PathElement::Field(field)] => {
            serde_json::from_str::<Value>(key).is_ok_and(|k| k.get(field).is_some())
        }
        _ => false,
    }
}

fn conflict_error(entries: &[ManagedEntry], conflicts: &[(usize, Path)]) -> ApiError {
    let causes: Vec<Cause> = conflicts
        .iter()
        .map(|(i, p)| Cause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {}", entries[*i].describe()),
            field: DisplayPath(p).to_string(),
        })
        .collect();
    let message = if conflicts.len() == 1 {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            entries[conflicts[0].0].describe(),
            DisplayPath(&conflicts[0].1)
        )
    } else {
        let mut by_manager: Vec<(String, Vec<String>)> = Vec::new();
        for (i, p) in conflicts {
            let who = entries[*i].describe();
            let path = DisplayPath(p).to_string();
            match by_manager.iter_mut().find(|(m, _)| *m == who) {
                Some((_, ps)) => ps.push(path),
                None => by_manager.push((who, vec![path])),
            }
        }
        by_manager.sort();
        let mut lines = Vec::new();
        for (who, paths) in by_manager {
            lines.push(format!("conflicts with {who}:"));
            lines.extend(paths.into_iter().map(|p| format!("- {p}")));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError::apply_conflict(message, causes)
}

/// Record a non-apply write (create, update, patch) in `new`'s managedFields.
///
/// The writer takes ownership of every field whose value it changed; fields
/// that disappeared stop being owned by anybody.
pub(crate) fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    shape: &Shape<'_>,
    writer: &Writer<'_>,
) {
    let mut entries = old.map(read_managed).unwrap_or_default();
    let new_set = restrict(fieldset_of(new, shape), writer.subresource);
    let changed: FieldSet = match old {
        None => new_set.clone(),
        Some(old) => new_set
            .iter()
            .filter(|p| {
                let before = get_path(old, p);
                match p.last() {
                    Some(PathElement::Key(_)) | Some(PathElement::Value(_)) => before.is_none(),
                    _ => before != get_path(new, p),
                }
            })
            .cloned()
            .collect(),
    };
    for e in &mut entries {
        e.set
            .retain(|p| new_set.contains(p) || !p_is_restricted_to(p, writer.subresource));
        if !e.same_owner(writer.manager, "Update", writer.subresource) {
            for p in &changed {
                e.set.remove(p);
            }
        }
    }
    if !changed.is_empty() {
        match entries
            .iter_mut()
            .find(|e| e.same_owner(writer.manager, "Update", writer.subresource))
        {
            Some(e) => {
                e.set.extend(changed);
                e.time = Some(writer.time.to_string());
                e.api_version = writer.api_version.to_string();
            }
            None => entries.push(ManagedEntry {
                manager: writer.manager.to_string(),
                operation: "Update".into(),
                api_version: writer.api_version.to_string(),
                time: Some(writer.time.to_string()),
                subresource: writer.subresource.to_string(),
                set: changed,
            }),
        }
    }
    write_managed(new, entries);
}

/// Whether a path falls inside what a write to `subresource` can change.
fn p_is_restricted_to(p: &Path, subresource: &str) -> bool {
    if subresource == "status" {
        p.first() == Some(&PathElement::Field("status".into()))
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w<'a>(m: &'a str) -> Writer<'a> {
        Writer {
            manager: m,
            api_version: "v1",
            time: "2025-01-01T00:00:00Z",
            subresource: "",
        }
    }

    #[test]
    fn apply_conflict_force_and_removal() {
        let shape = Shape::root(None);
        let a1 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1", "b": "2"}});
        let o1 = apply(None, &a1, &shape, &w("m1"), false).unwrap();
        assert_eq!(o1["data"], json!({"a": "1", "b": "2"}));
        // m2 sets a different value for `a`: conflict.
        let a2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "9"}});
        let err = apply(Some(&o1), &a2, &shape, &w("m2"), false).unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message,
            "Apply failed with 1 conflict: conflict with \"m1\": .data.a"
        );
        assert_eq!(err.causes[0].field, ".data.a");
        // The same value is shared ownership, not a conflict.
        let a2same = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1"}});
        let o2 = apply(Some(&o1), &a2same, &shape, &w("m2"), false).unwrap();
        // Forcing takes ownership.
        let o3 = apply(Some(&o2), &a2, &shape, &w("m2"), true).unwrap();
        assert_eq!(o3["data"]["a"], "9");
        // m1 drops `b`: removed, since only m1 owned it.
        let a1b =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}});
        let o4 = apply(Some(&o3), &a1b, &shape, &w("m1"), false).unwrap();
        assert_eq!(o4["data"], json!({"a": "9"}));
    }

    /// An applier that stops applying a list-map item another manager keeps a field of leaves
    /// the item with its key (it used to drop the key field, leaving `name: ""` behind).
    #[test]
    fn a_dropped_item_kept_by_another_manager_keeps_its_key() {
        let shape = Shape::root(None);
        let pod = |env: Value| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "i", "env": env}]}})
        };
        let o1 = apply(
            None,
            &pod(json!([{"name": "A", "value": "1"}])),
            &shape,
            &w("m1"),
            false,
        )
        .unwrap();
        // m2 updates the value of A (an update owns only the fields it changed).
        let mut o2 = o1.clone();
        o2["spec"]["containers"][0]["env"][0]["value"] = json!("2");
        record_update(Some(&o1), &mut o2, &shape, &w("m2"));
        // m1 stops applying A: the item stays, key and value, as m2 keeps its value.
        let o3 = apply(Some(&o2), &pod(json!([])), &shape, &w("m1"), false).unwrap();
        assert_eq!(
            o3["spec"]["containers"][0]["env"],
            json!([{"name": "A", "value": "2"}])
        );
    }
}
