//! `meta.k8s.io/v1` `Table` responses, which `kubectl get` asks for.

use std::sync::Arc;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::registry::ResourceInfo;

/// Whether an Accept header asks for a Table.
pub(crate) fn wants_table(accept: &str) -> bool {
    accept.contains("as=Table")
}

fn age(created: Option<&str>, now: Timestamp) -> String {
    let Some(ts) = created.and_then(|c| c.parse::<Timestamp>().ok()) else {
        return "<unknown>".into();
    };
    let secs = now.as_second().saturating_sub(ts.as_second()).max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 600 => format!("{}m{}s", s / 60, s % 60),
        s if s < 3 * 3600 => format!("{}m", s / 60),
        s if s < 8 * 3600 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        s if s < 2 * 86400 => format!("{}h", s / 3600),
        s if s < 8 * 86400 => format!("{}d{}h", s / 86400, (s % 86400) / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// Resolve a simple printer-column path like `.spec.replicas` or `.status.conditions[0].type`.
fn column_value(obj: &Value, path: &str) -> Value {
    let mut cur = obj;
    for seg in path
        .trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
    {
        let (field, index) = match seg.split_once('[') {
            Some((f, rest)) => (f, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (seg, None),
        };
        cur = match cur.get(field) {
            Some(v) => v,
            None => return Value::Null,
        };
        if let Some(i) = index {
            cur = match cur.get(i) {
                Some(v) => v,
                None => return Value::Null,
            };
        }
    }
    cur.clone()
}

/// A Table of `objects`, with Name and Age plus the resource's printer columns.
pub(crate) fn table(
    info: &ResourceInfo,
    objects: &[Arc<Value>],
    resource_version: u64,
    continue_token: Option<&str>,
    include_object: &str,
    now: Timestamp,
) -> Value {
    let mut columns = vec![json!({
        "name": "Name", "type": "string", "format": "name",
        "description": "Name must be unique within a namespace.", "priority": 0,
    })];
    for c in &info.printer_columns {
        columns.push(json!({
            "name": c.name, "type": c.type_, "format": "",
            "description": c.description, "priority": c.priority,
        }));
    }
    let has_age = info.printer_columns.iter().any(|c| c.name == "Age");
    if !has_age {
        columns.push(json!({
            "name": "Age", "type": "string", "format": "",
            "description": "CreationTimestamp is a timestamp representing the server time when this object was created.",
            "priority": 0,
        }));
    }
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let created = o
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str);
            let mut cells = vec![o.pointer("/metadata/name").cloned().unwrap_or(Value::Null)];
            for c in &info.printer_columns {
                let v = column_value(o, &c.json_path);
                cells.push(if c.type_ == "date" {
                    json!(age(v.as_str(), now))
                } else {
                    v
                });
            }
            if !has_age {
                cells.push(json!(age(created, now)));
            }
            let object = match include_object {
                "None" => Value::Null,
                "Object" => o.as_ref().clone(),
                _ => json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": o.get("metadata").cloned().unwrap_or(json!({})),
                }),
            };
            json!({"cells": cells, "object": object})
        })
        .collect();
    let mut meta = json!({"resourceVersion": resource_version.to_string()});
    if let Some(c) = continue_token {
        meta["continue"] = json!(c);
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": columns,
        "rows": rows,
    })
}
