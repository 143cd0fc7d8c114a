//! What a write says about its duplicate and unknown fields, in the words of the
//! kube-apiserver handler that met them.
//!
//! - A create or update body: `400 BadRequest`, `Deployment in version "v1" cannot be handled
//!   as a Deployment: strict decoding error: unknown field "spec.foo", …`.
//! - A JSON or merge patch: `422 Invalid` on the field `patch`, whose value is the patched
//!   object's JSON: `"" is invalid: patch: Invalid value: "{…}": strict decoding error: …`.
//! - A strategic merge patch: the same, with the patch itself as the value, printed as Go's
//!   `%+v` prints a map (`map[spec:map[foo:1]]`).
//! - A server-side apply: unknown fields fail the typed conversion whatever `fieldValidation`
//!   says: `500`, `failed to create typed patch object (default/web; apps/v1, Kind=Deployment):
//!   .spec.foo: field not declared in schema`.
//!
//! With `Warn` every finding becomes a `Warning` header instead (apply's unknown fields
//! excepted), and with `Ignore` nothing is said.

use serde_json::Value;

use super::FieldValidation;
use crate::api_error::{ApiError, ApiResult, Cause};
use crate::storage::registry::{Gvr, ResourceInfo};
use crate::storage::store::WriteOptions;

/// How the server met the object whose fields are reported.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Decoding<'a> {
    /// A create or update body (and any write through the store's own API).
    Body,
    /// The result of a JSON or merge patch, before its unknown fields were dropped.
    Patched(&'a Value),
    /// A strategic merge patch body.
    StrategicPatch(&'a Value),
}

/// The findings of a write as strict decoding errors: duplicates first, then unknown fields.
fn texts(duplicates: &[String], unknown: &[String]) -> Vec<String> {
    duplicates
        .iter()
        .map(|p| format!("duplicate field {}", ocm_api::k8s::gojson::quote(p)))
        .chain(
            unknown
                .iter()
                .map(|p| format!("unknown field {}", ocm_api::k8s::gojson::quote(p))),
        )
        .collect()
}

/// Act on a write's duplicate (`opts.duplicate_fields`) and unknown fields as its
/// `fieldValidation` says.
pub(crate) fn report(
    info: &ResourceInfo,
    gvr: &Gvr,
    opts: &WriteOptions,
    unknown: &[String],
    decoding: Decoding<'_>,
) -> ApiResult<()> {
    if opts.field_validation == FieldValidation::Ignore
        || (unknown.is_empty() && opts.duplicate_fields.is_empty())
    {
        return Ok(());
    }
    let list = texts(&opts.duplicate_fields, unknown);
    if opts.field_validation == FieldValidation::Warn {
        for t in list {
            opts.warnings.push(t);
        }
        return Ok(());
    }
    let strict = format!("strict decoding error: {}", list.join(", "));
    let bad_value = match decoding {
        Decoding::Body => {
            return Err(ApiError::bad_request(format!(
                "{kind} in version {v} cannot be handled as a {kind}: {strict}",
                kind = info.kind,
                v = ocm_api::k8s::gojson::quote(&gvr.version),
            )));
        }
        Decoding::Patched(patched) => ocm_api::k8s::gojson::value(patched),
        Decoding::StrategicPatch(patch) => go_print(patch),
    };
    Err(ApiError::invalid(
        "",
        "",
        "",
        vec![Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: {strict}",
                ocm_api::k8s::gojson::quote(&bad_value)
            ),
            field: "patch".into(),
        }],
    ))
}

/// A server-side apply whose object has fields its type lacks: the field manager's typed
/// conversion fails (`500`, no reason), whatever `fieldValidation` says.
pub(crate) fn apply_refused(applied: &Value, findings: &[String]) -> ApiError {
    let meta = |k: &str| {
        applied
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let api_version = applied
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = applied
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let detail = if findings.len() == 1 {
        findings[0].clone()
    } else {
        let mut s = String::from("errors:");
        for f in findings {
            s.push_str("\n  ");
            s.push_str(f);
        }
        s
    };
    ApiError::new(
        500,
        "",
        format!(
            "failed to create typed patch object ({}/{}; {group}/{version}, Kind={kind}): {detail}",
            meta("namespace"),
            meta("name"),
        ),
    )
}

/// A decoded JSON value as Go's `fmt` prints it with `%+v` (maps with sorted keys as
/// `map[k:v …]`, slices as `[a b]`, strings bare, `<nil>` for null).
pub(crate) fn go_print(v: &Value) -> String {
    let mut out = String::new();
    push_go(&mut out, v);
    out
}

fn push_go(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(u)) => out.push_str(&u.to_string()),
            _ => out.push_str(&ocm_api::k8s::gojson::format_float(
                n.as_f64().unwrap_or_default(),
            )),
        },
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                push_go(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push_str("map[");
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                push_go(out, item);
            }
            out.push(']');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_prints_maps_with_sorted_keys() {
        assert_eq!(
            go_print(&json!({"spec": {"b": [1, "x", null], "a": 1.5, "c": true}, "k": 2})),
            "map[k:2 spec:map[a:1.5 b:[1 x <nil>] c:true]]"
        );
    }

    #[test]
    fn apply_refusals_name_the_object_and_every_finding() {
        let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                         "metadata": {"name": "web", "namespace": "default"}});
        let e = apply_refused(&obj, &[".spec.x: field not declared in schema".into()]);
        assert_eq!(e.code, 500);
        assert_eq!(
            e.message,
            "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.x: field not declared in schema"
        );
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let e = apply_refused(&cm, &[".a: x".into(), ".b: y".into()]);
        assert_eq!(
            e.message,
            "failed to create typed patch object (/c; /v1, Kind=ConfigMap): errors:\n  .a: x\n  .b: y"
        );
    }
}
