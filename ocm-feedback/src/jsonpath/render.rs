//! Rendering values the way Go does: kubectl's text output (`fmt.Fprint`), Go's
//! `encoding/json` (used for maps and lists in kubectl output and for OCM's `jsonRaw` values),
//! and Go's `%v` (used in some error messages).

use std::fmt::Write as _;

use ocm_api::k8s::gojson::{self, push_string};
use serde_json::{Map, Value};

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

/// What is left to render of a value, innermost last.
enum Step<'a> {
    Value(&'a Value),
    Text(&'static str),
    Key(&'a str),
}

/// Pushes `items` with `separator` between them, then `close`, to render in order.
fn push_items<'a>(
    stack: &mut Vec<Step<'a>>,
    items: &'a [Value],
    separator: &'static str,
    close: &'static str,
) {
    stack.push(Step::Text(close));
    for (i, item) in items.iter().enumerate().rev() {
        stack.push(Step::Value(item));
        if i > 0 {
            stack.push(Step::Text(separator));
        }
    }
}

/// Pushes the entries of `map`, keys sorted, with `separator` between them, then `close`.
fn push_entries<'a>(
    stack: &mut Vec<Step<'a>>,
    map: &'a Map<String, Value>,
    separator: &'static str,
    close: &'static str,
) {
    stack.push(Step::Text(close));
    for (i, (key, item)) in sorted(map).into_iter().enumerate().rev() {
        stack.push(Step::Value(item));
        stack.push(Step::Key(key));
        if i > 0 {
            stack.push(Step::Text(separator));
        }
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
    // Without recursion, as `gojson::push_value`.
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(text) => out.push_str(text),
            Step::Key(key) => {
                out.push_str(key);
                out.push(':');
            }
            Step::Value(value) => match value {
                Value::Null => out.push_str("<nil>"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) => go_number_text(out, number(n)),
                Value::String(s) => out.push_str(s),
                Value::Array(items) => {
                    out.push('[');
                    push_items(&mut stack, items, " ", "]");
                }
                Value::Object(map) => {
                    out.push_str("map[");
                    push_entries(&mut stack, map, " ", "]");
                }
            },
        }
    }
}

fn sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    // Already sorted unless serde_json's `preserve_order` feature is on somewhere.
    if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    }
    entries
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
