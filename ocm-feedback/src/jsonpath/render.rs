//! Rendering values the way Go does: kubectl's text output (`fmt.Fprint`), Go's
//! `encoding/json` (used for maps and lists in kubectl output and for OCM's `jsonRaw` values),
//! and Go's `%v` (used in some error messages).

use std::fmt::Write as _;

use ocm_api::k8s::gojson::{self, push_string};
use serde_json::Value;

use super::matches::{Match, Number, number};

/// Appends one value as kubectl prints it in `-o jsonpath` output.
pub(crate) fn text(out: &mut String, value: &Match<'_>) {
    match *value {
        Match::Json(v @ (Value::Object(_) | Value::Array(_))) => gojson::push_value(out, v),
        Match::Json(Value::Null) => out.push_str("null"),
        Match::Json(&Value::Bool(b)) | Match::Bool(b) => {
            out.push_str(if b { "true" } else { "false" })
        }
        Match::Json(Value::Number(n)) => go_number_text(out, number(n)),
        Match::Json(Value::String(s)) => out.push_str(s),
        Match::Text(s) => out.push_str(s),
        Match::Int(i) => push_display(out, i),
        Match::Float(f) => out.push_str(&gojson::format_float(f)),
        Match::Byte(b) => push_display(out, b),
        Match::Nil => out.push_str("<no value>"),
    }
}

/// Appends a found value encoded as Go's `json.Marshal` encodes what kubectl holds for it.
pub(crate) fn go_json_match(out: &mut String, value: &Match<'_>) {
    match *value {
        Match::Json(v) => gojson::push_value(out, v),
        Match::Text(s) => push_string(out, s),
        Match::Int(i) => push_display(out, i),
        Match::Float(f) => out.push_str(&gojson::float(f)),
        Match::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Match::Byte(b) => push_display(out, b),
        Match::Nil => out.push_str("null"),
    }
}

/// Appends a value as Go's `%v` verb prints it.
pub(crate) fn go_debug(out: &mut String, value: &Match<'_>) {
    match *value {
        Match::Json(v) => go_debug_json(out, v),
        Match::Nil => out.push_str("<invalid reflect.Value>"),
        other => text(out, &other),
    }
}

/// Appends a JSON value as Go's `%v` verb prints the same value decoded into Go's generic
/// types (maps with sorted keys as `map[k:v ...]`, lists as `[a b]`, `<nil>`, numbers in Go's
/// shortest form). Upstream OCM hashes this text to detect configuration changes.
///
/// ```
/// let mut out = String::new();
/// ocm_feedback::jsonpath::go_value(&mut out, &serde_json::json!({"b": [1, 1.5, null], "a": "x"}));
/// assert_eq!(out, "map[a:x b:[1 1.5 <nil>]]");
/// ```
pub fn go_value(out: &mut String, value: &Value) {
    go_debug_json(out, value);
}

fn go_debug_json(out: &mut String, value: &Value) {
    gojson::push_sprint(out, value);
}

fn push_display(out: &mut String, value: impl std::fmt::Display) {
    let _ = write!(out, "{value}");
}

fn go_number_text(out: &mut String, n: Number) {
    match n {
        Number::Int(i) => push_display(out, i),
        Number::Float(f) => out.push_str(&gojson::format_float(f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_like_go() {
        let mut s = String::new();
        push_string(&mut s, "<a&b>\u{2028}\"\\\n\u{1}\u{8}");
        assert_eq!(s, r#""\u003ca\u0026b\u003e\u2028\"\\\n\u0001\b""#);
    }
}
