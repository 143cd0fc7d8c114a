//! Validation of custom resources against their CRD's `openAPIV3Schema`, as
//! kube-apiserver's apiextensions validation does it.
//!
//! Covered: `type` (with `nullable` and `x-kubernetes-int-or-string`),
//! `required`, `enum`, `pattern`, `format` (the string formats kube-openapi
//! checks; others, `int32`/`int64` included, are not checked, as upstream),
//! `minimum`/`maximum` with `exclusiveMinimum`/`exclusiveMaximum`,
//! `multipleOf`, `minLength`/`maxLength` (in characters), `minItems`/`maxItems`,
//! `minProperties`/`maxProperties` and `x-kubernetes-validations` CEL rules
//! (`rule`, `message`, `messageExpression`, `fieldPath`, `reason`; transition
//! rules with `oldSelf` run on updates where the old value correlates).
//!
//! On update, values equal to the old object's at the same (correlated) place
//! are not validated again ("ratcheting", on by default since Kubernetes 1.30),
//! so an object stored before a schema tightened can still be updated elsewhere.
//!
//! Messages are kube-apiserver's: `spec.replicas: Invalid value: 11:
//! spec.replicas in body should be less than or equal to 10`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::api_error::Cause;
use crate::validation::format;
use crate::validation::rules;

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn cause(reason: &str, field: &str, message: String) -> Cause {
    Cause {
        reason: reason.into(),
        message,
        field: field.into(),
    }
}

/// A number as Go's `%v` prints a float64 (integral values without a fraction).
pub(crate) fn go_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e21 {
        format!("{}", x as i128)
    } else {
        format!("{x}")
    }
}

/// A Go `%q` string.
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// How a bad value is printed after `Invalid value: `.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => quote(s),
        Value::Null => "\"null\"".into(),
        other => other.to_string(),
    }
}

/// A compiled `pattern`, cached by its source (`None` when it does not compile).
fn regex(pattern: &str) -> Option<Arc<regex::Regex>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Arc<regex::Regex>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Ok(c) = cache.lock()
        && let Some(hit) = c.get(pattern)
    {
        return hit.clone();
    }
    let compiled = regex::Regex::new(pattern).ok().map(Arc::new);
    if let Ok(mut c) = cache.lock() {
        if c.len() > 4096 {
            c.clear();
        }
        c.insert(pattern.to_string(), compiled.clone());
    }
    compiled
}

fn items_word(n: f64) -> &'static str {
    if n == 1.0 { "item" } else { "items" }
}

/// The old value correlated with a child of an object, if any.
fn old_field<'o>(old: Option<&'o Value>, key: &str) -> Option<&'o Value> {
    old.and_then(|o| o.get(key))
}

/// The old item correlated with `item` of a list: by the keys of a
/// `x-kubernetes-list-type: map`; other lists do not correlate.
fn old_item<'o>(old: Option<&'o Value>, schema: &Value, item: &Value) -> Option<&'o Value> {
    if schema.get("x-kubernetes-list-type").and_then(Value::as_str) != Some("map") {
        return None;
    }
    let keys: Vec<&str> = schema
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    old?.as_array()?
        .iter()
        .find(|o| keys.iter().all(|k| o.get(*k) == item.get(*k)))
}

/// Validate a custom resource against its version's schema, as kube-apiserver does: first
/// every structural rule; then, unless one of those found a value of the wrong type or an
/// unsupported enum value, the CEL rules (which would see a broken object). When CEL rules
/// exist but are skipped, kube-apiserver says so in one more cause.
pub(crate) fn validate_object(obj: &Value, schema: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    walk(obj, schema, "", old, &mut out, None);
    if !has_rules(schema) {
        return out;
    }
    let blocking = out
        .iter()
        .any(|c| c.reason == "FieldValueTypeInvalid" || c.reason == "FieldValueNotSupported");
    if blocking {
        out.push(cause(
            "FieldValueInvalid",
            "<nil>",
            "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
        ));
    } else {
        // The structural findings of this second walk are the first one's again.
        walk(obj, schema, "", old, &mut Vec::new(), Some(&mut out));
    }
    out
}

/// Whether a schema has CEL rules anywhere.
fn has_rules(schema: &Value) -> bool {
    let mut pending = vec![schema];
    while let Some(s) = pending.pop() {
        match s {
            Value::Object(m) => {
                if m.contains_key("x-kubernetes-validations") {
                    return true;
                }
                pending.extend(m.values());
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    false
}

/// Check `v` (at dotted `path`) against `schema`; `old` is the correlated old value on update.
/// Structural causes are appended to `out`; with `rules`, the CEL rules run too and their
/// causes go there.
fn walk(
    v: &Value,
    schema: &Value,
    path: &str,
    old: Option<&Value>,
    out: &mut Vec<Cause>,
    rules: Option<&mut Vec<Cause>>,
) {
    ocm_api::k8s::json::descend(|| walk_level(v, schema, path, old, out, rules))
}

/// One level of [`walk`]: skip an unchanged value, check its type, enum and the limits of
/// its JSON kind, walk its items or properties, then run its CEL rules.
fn walk_level(
    v: &Value,
    schema: &Value,
    path: &str,
    old: Option<&Value>,
    out: &mut Vec<Cause>,
    mut rules: Option<&mut Vec<Cause>>,
) {
    // Ratcheting: an unchanged value is not validated again.
    if old == Some(v) && !path.is_empty() {
        return;
    }
    if null_or_mistyped(v, schema, path, out) {
        return;
    }
    check_enum(v, schema, path, out);
    match v {
        Value::String(s) => check_string(s, schema, path, out),
        Value::Number(n) => check_number(n, schema, path, out),
        Value::Array(items) => walk_array(items, schema, path, old, out, rules.as_deref_mut()),
        Value::Object(m) => walk_object(m, schema, path, old, out, rules.as_deref_mut()),
        _ => {}
    }
    if let Some(rule_causes) = rules
        && schema.get("x-kubernetes-validations").is_some()
    {
        rules::check(v, schema, path, old, rule_causes);
    }
}

/// Whether `v` is null or not of the schema's type, which ends its checks; the cause (none
/// for an allowed null or the root) goes to `out`.
fn null_or_mistyped(v: &Value, schema: &Value, path: &str, out: &mut Vec<Cause>) -> bool {
    let int_or_string = schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if v.is_null() {
        if !schema
            .get("nullable")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            && !path.is_empty()
        {
            out.push(cause(
                "FieldValueTypeInvalid",
                path,
                format!(
                    "Invalid value: \"null\": {path} in body must be of type {}: \"null\"",
                    schema
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("object")
                ),
            ));
        }
        return true;
    }
    let actual = json_type(v);
    if let Some(want) = schema.get("type").and_then(Value::as_str) {
        let ok = want == actual || (want == "number" && actual == "integer");
        if !ok && !int_or_string {
            out.push(cause(
                    "FieldValueTypeInvalid",
                    path,
                    format!(
                        "Invalid value: \"{actual}\": {path} in body must be of type {want}: \"{actual}\""
                    ),
                ),
            );
            return true;
        }
    }
    false
}

/// A value not among the schema's `enum` values.
fn check_enum(v: &Value, schema: &Value, path: &str, out: &mut Vec<Cause>) {
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(v)
    {
        let list: Vec<String> = allowed
            .iter()
            .map(|a| match a {
                Value::String(s) => quote(s),
                other => quote(&other.to_string()),
            })
            .collect();
        out.push(cause(
            "FieldValueNotSupported",
            path,
            format!(
                "Unsupported value: {}: supported values: {}",
                shown(v),
                list.join(", ")
            ),
        ));
    }
}

/// A string's length, pattern and format.
fn check_string(s: &str, schema: &Value, path: &str, out: &mut Vec<Cause>) {
    let num = |k: &str| schema_num(schema, k);
    let len = s.chars().count() as f64;
    if let Some(m) = num("maxLength").filter(|m| len > *m) {
        let unit = if m == 1.0 { "byte" } else { "bytes" };
        out.push(cause(
            "FieldValueTooLong",
            path,
            format!("Too long: may not be more than {} {unit}", go_number(m)),
        ));
    }
    if let Some(m) = num("minLength").filter(|m| len < *m) {
        out.push(cause(
            "FieldValueInvalid",
            path,
            format!(
                "Invalid value: {}: {path} in body should be at least {} chars long",
                quote(s),
                go_number(m)
            ),
        ));
    }
    if let Some(p) = schema.get("pattern").and_then(Value::as_str)
        && let Some(re) = regex(p)
        && !re.is_match(s)
    {
        out.push(cause(
            "FieldValueInvalid",
            path,
            format!(
                "Invalid value: {}: {path} in body should match '{p}'",
                quote(s)
            ),
        ));
    }
    if let Some(f) = schema.get("format").and_then(Value::as_str)
        && !format::valid(f, s)
    {
        out.push(cause(
            "FieldValueTypeInvalid",
            path,
            format!(
                "Invalid value: {q}: {path} in body must be of type {f}: {q}",
                q = quote(s)
            ),
        ));
    }
}

/// A number's bounds and divisor.
fn check_number(n: &serde_json::Number, schema: &Value, path: &str, out: &mut Vec<Cause>) {
    let num = |k: &str| schema_num(schema, k);
    let flag = |k: &str| schema_flag(schema, k);
    let x = n.as_f64().unwrap_or_default();
    if let Some(m) = num("maximum") {
        let (bad, how) = if flag("exclusiveMaximum") {
            (x >= m, "less than")
        } else {
            (x > m, "less than or equal to")
        };
        if bad {
            out.push(cause(
                "FieldValueInvalid",
                path,
                format!(
                    "Invalid value: {n}: {path} in body should be {how} {}",
                    go_number(m)
                ),
            ));
        }
    }
    if let Some(m) = num("minimum") {
        let (bad, how) = if flag("exclusiveMinimum") {
            (x <= m, "greater than")
        } else {
            (x < m, "greater than or equal to")
        };
        if bad {
            out.push(cause(
                "FieldValueInvalid",
                path,
                format!(
                    "Invalid value: {n}: {path} in body should be {how} {}",
                    go_number(m)
                ),
            ));
        }
    }
    if let Some(m) = num("multipleOf").filter(|m| *m > 0.0)
        && (x / m).fract().abs() > 1e-9
    {
        out.push(cause(
            "FieldValueInvalid",
            path,
            format!(
                "Invalid value: {n}: {path} in body should be a multiple of {}",
                go_number(m)
            ),
        ));
    }
}

/// An array's length, then each item against the schema's `items`.
fn walk_array(
    items: &[Value],
    schema: &Value,
    path: &str,
    old: Option<&Value>,
    out: &mut Vec<Cause>,
    mut rules: Option<&mut Vec<Cause>>,
) {
    let num = |k: &str| schema_num(schema, k);
    let n = items.len() as f64;
    if let Some(m) = num("maxItems").filter(|m| n > *m) {
        out.push(cause(
            "FieldValueTooMany",
            path,
            format!(
                "Too many: {}: must have at most {} {}",
                items.len(),
                go_number(m),
                items_word(m)
            ),
        ));
    }
    if let Some(m) = num("minItems").filter(|m| n < *m) {
        out.push(cause(
            "FieldValueInvalid",
            path,
            format!(
                "Invalid value: {}: {path} in body should have at least {} items",
                items.len(),
                go_number(m)
            ),
        ));
    }
    if let Some(is) = schema.get("items") {
        for (i, it) in items.iter().enumerate() {
            let o = old_item(old, schema, it);
            walk(
                it,
                is,
                &format!("{path}[{i}]"),
                o,
                out,
                rules.as_deref_mut(),
            );
        }
    }
}

/// An object's property count and required properties, then each property (but the
/// root's type meta and metadata) against its schema or `additionalProperties`.
fn walk_object(
    m: &serde_json::Map<String, Value>,
    schema: &Value,
    path: &str,
    old: Option<&Value>,
    out: &mut Vec<Cause>,
    mut rules: Option<&mut Vec<Cause>>,
) {
    let num = |k: &str| schema_num(schema, k);
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    let count = m.len() as f64;
    if let Some(max) = num("maxProperties").filter(|x| count > *x) {
        out.push(cause(
            "FieldValueTooMany",
            path,
            format!(
                "Too many: {}: must have at most {} {}",
                m.len(),
                go_number(max),
                items_word(max)
            ),
        ));
    }
    if let Some(min) = num("minProperties").filter(|x| count < *x) {
        out.push(cause(
            "FieldValueInvalid",
            path,
            format!(
                "Invalid value: {}: {path} in body should have at least {} properties",
                m.len(),
                go_number(min)
            ),
        ));
    }
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if !m.contains_key(r) {
                out.push(cause(
                    "FieldValueRequired",
                    &join(r),
                    "Required value".into(),
                ));
            }
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    for (k, child) in m {
        if path.is_empty() && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if let Some(cs) = props.and_then(|p| p.get(k)).or(additional) {
            walk(
                child,
                cs,
                &join(k),
                old_field(old, k),
                out,
                rules.as_deref_mut(),
            );
        }
    }
}

/// A number the schema sets under `k`.
fn schema_num(schema: &Value, k: &str) -> Option<f64> {
    schema.get(k).and_then(Value::as_f64)
}

/// Whether the schema sets the flag `k`.
fn schema_flag(schema: &Value, k: &str) -> bool {
    schema.get(k).and_then(Value::as_bool).unwrap_or(false)
}
