//! `meta.k8s.io/v1` `Table` responses, which `kubectl get` asks for.
//!
//! Custom resources get kube-apiserver's CRD table: `Name`, then the version's
//! `additionalPrinterColumns` (or `Age` alone when there are none), each evaluated with the
//! Kubernetes JSONPath of `ocm-feedback` (filters, `[*]`, unions) and typed as
//! kube-apiserver types it (the first value found; `string` columns print lists and maps as
//! JSON; `date` columns as an age). Built-in kinds get the columns of kube-apiserver's own
//! printers ([`crate::serving::printers`]), for the kinds the work agent typically applies.

use std::sync::Arc;

use jiff::Timestamp;
use ocm_feedback::jsonpath::{Match, Template, go_json};
use serde_json::{Value, json};

use crate::serving::printers;
use crate::storage::registry::{PrinterColumn, ResourceInfo};

/// Whether an Accept header asks for a Table.
pub(crate) fn wants_table(accept: &str) -> bool {
    accept.contains("as=Table")
}

/// Go's `duration.HumanDuration`, as kubectl and kube-apiserver print ages.
pub(crate) fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        return match secs % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{}d", hours / 24),
            h => format!("{}d{h}h", hours / 24),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let years = hours / 24 / 365;
        return match (hours / 24) % 365 {
            0 => format!("{years}y"),
            d => format!("{years}y{d}d"),
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// The age of a timestamp string as kubectl prints it: `<unknown>` when missing,
/// `<invalid>` when it does not parse.
pub(crate) fn age_of(ts: Option<&str>, now: Timestamp) -> String {
    match ts {
        None | Some("") => "<unknown>".into(),
        Some(t) => match t.parse::<Timestamp>() {
            Ok(t) => human_duration(now.as_second() - t.as_second()),
            Err(_) => "<invalid>".into(),
        },
    }
}

/// One cell of a CRD printer column, as kube-apiserver's CRD table convertor computes it.
fn crd_cell(template: Option<&Template>, type_: &str, obj: &Value, now: Timestamp) -> Value {
    let Some(template) = template else {
        return Value::Null;
    };
    let first = match template.find_results(obj) {
        Ok(results) => results
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next()),
        Err(_) => None,
    };
    let Some(first) = first else {
        return Value::Null;
    };
    let value = match first {
        Match::Json(v) => v.clone(),
        other => other.to_json(),
    };
    if value.is_null() {
        return Value::Null;
    }
    match type_ {
        "string" => match &value {
            Value::String(s) => json!(s),
            Value::Object(_) | Value::Array(_) => {
                let mut out = String::new();
                go_json(&mut out, &value);
                json!(out)
            }
            _ => {
                let mut out = String::new();
                ocm_feedback::jsonpath::go_value(&mut out, &value);
                json!(out)
            }
        },
        "integer" => match &value {
            Value::Number(n) => n
                .as_i64()
                .map(|i| json!(i))
                .or_else(|| n.as_f64().map(|f| json!(f as i64)))
                .unwrap_or(Value::Null),
            _ => Value::Null,
        },
        "number" => match &value {
            Value::Number(n) => n.as_f64().map(|f| json!(f)).unwrap_or(Value::Null),
            _ => Value::Null,
        },
        "boolean" => match &value {
            Value::Bool(b) => json!(b),
            _ => Value::Null,
        },
        "date" => match &value {
            Value::String(s) => json!(age_of(Some(s), now)),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

/// The columns and row cells of one resource.
enum Columns {
    /// A custom resource: its printer columns, parsed.
    Crd(Vec<(PrinterColumn, Option<Template>)>),
    /// A built-in kind with one of kube-apiserver's printers.
    Builtin(&'static printers::Printer),
    /// Anything else: Name and Age.
    Default,
}

fn age_column() -> PrinterColumn {
    PrinterColumn {
        name: "Age".into(),
        type_: "date".into(),
        json_path: ".metadata.creationTimestamp".into(),
        description: printers::CREATION_TIMESTAMP_DOC.into(),
        priority: 0,
        format: String::new(),
    }
}

fn columns_of(info: &ResourceInfo, version_columns: Option<&[PrinterColumn]>) -> Columns {
    if info.crd_name.is_some() {
        let cols = version_columns.unwrap_or(&info.printer_columns);
        let cols = if cols.is_empty() {
            vec![age_column()]
        } else {
            cols.to_vec()
        };
        return Columns::Crd(
            cols.into_iter()
                .map(|c| {
                    let t = Template::parse_path(&c.json_path).ok();
                    (c, t)
                })
                .collect(),
        );
    }
    match printers::printer(&info.group, &info.kind) {
        Some(p) => Columns::Builtin(p),
        None => Columns::Default,
    }
}

fn name_column() -> Value {
    json!({
        "name": "Name", "type": "string", "format": "name",
        "description": printers::NAME_DOC, "priority": 0,
    })
}

/// A Table of `objects`; a custom resource's columns are `version_columns` (those of the
/// requested version) when given, else the resource's.
pub(crate) fn table(
    info: &ResourceInfo,
    version_columns: Option<&[PrinterColumn]>,
    objects: &[Arc<Value>],
    resource_version: u64,
    continue_token: Option<&str>,
    include_object: &str,
    now: Timestamp,
) -> Value {
    let columns = columns_of(info, version_columns);
    let definitions: Vec<Value> = match &columns {
        Columns::Crd(cols) => std::iter::once(name_column())
            .chain(cols.iter().map(|(c, _)| {
                json!({"name": c.name, "type": c.type_, "format": c.format,
                       "description": c.description, "priority": c.priority})
            }))
            .collect(),
        Columns::Builtin(p) => p
            .columns
            .iter()
            .map(|c| {
                json!({"name": c.name, "type": c.type_, "format": c.format,
                       "description": c.description, "priority": c.priority})
            })
            .collect(),
        Columns::Default => vec![
            name_column(),
            json!({"name": "Age", "type": "string", "format": "",
                   "description": printers::CREATION_TIMESTAMP_DOC, "priority": 0}),
        ],
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let name = o.pointer("/metadata/name").cloned().unwrap_or(Value::Null);
            let cells: Vec<Value> = match &columns {
                Columns::Crd(cols) => std::iter::once(name)
                    .chain(
                        cols.iter()
                            .map(|(c, t)| crd_cell(t.as_ref(), &c.type_, o, now)),
                    )
                    .collect(),
                Columns::Builtin(p) => (p.cells)(o, now),
                Columns::Default => vec![
                    name,
                    json!(age_of(
                        o.pointer("/metadata/creationTimestamp")
                            .and_then(Value::as_str),
                        now
                    )),
                ],
            };
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
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_duration_is_gos() {
        for (secs, want) in [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (125, "2m5s"),
            (600, "10m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (8 * 3600, "8h"),
            (48 * 3600, "2d"),
            (49 * 3600, "2d1h"),
            (8 * 86400, "8d"),
            (730 * 86400, "2y"),
            (731 * 86400, "2y1d"),
            (9 * 365 * 86400, "9y"),
        ] {
            assert_eq!(human_duration(secs), want, "{secs}");
        }
    }

    #[test]
    fn crd_cells_take_the_first_value_and_type_it() {
        let now: Timestamp = "2026-01-01T01:00:00Z".parse().unwrap();
        let obj = json!({"status": {"conditions": [
            {"type": "A", "status": "True", "n": 3.7},
            {"type": "B", "status": "False"}],
            "list": [1, 2], "map": {"b": 1, "a": "<x>"}, "when": "2026-01-01T00:00:00Z",
            "bad": "yesterday"}});
        let cell = |path: &str, ty: &str| {
            let t = Template::parse_path(path).ok();
            crd_cell(t.as_ref(), ty, &obj, now)
        };
        assert_eq!(
            cell(".status.conditions[?(@.type==\"B\")].status", "string"),
            json!("False")
        );
        assert_eq!(
            cell(".status.conditions[*].status", "string"),
            json!("True")
        );
        assert_eq!(cell(".status.list", "string"), json!("[1,2]"));
        assert_eq!(
            cell(".status.map", "string"),
            json!("{\"a\":\"\\u003cx\\u003e\",\"b\":1}")
        );
        assert_eq!(cell(".status.conditions[0].n", "integer"), json!(3));
        assert_eq!(cell(".status.conditions[0].n", "number"), json!(3.7));
        assert_eq!(cell(".status.conditions[0].n", "string"), json!("3.7"));
        assert_eq!(cell(".status.when", "date"), json!("60m"));
        assert_eq!(cell(".status.bad", "date"), json!("<invalid>"));
        assert_eq!(cell(".status.missing", "string"), Value::Null);
        assert_eq!(cell(".status.list", "integer"), Value::Null);
        assert_eq!(cell("{{{", "string"), Value::Null);
    }
}
