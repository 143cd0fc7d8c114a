//! Rendering values the way Go does: kubectl's text output (`fmt.Fprint`), Go's
//! `encoding/json` (used for maps and lists in kubectl output and for OCM's `jsonRaw` values),
//! and Go's `%v` (used in some error messages).

use std::fmt::Write as _;

use ocm_api::k8s::gojson::push_string;
use serde_json::{Map, Value};

use super::matches::{Match, Number, number};

/// Appends one value as kubectl prints it in `-o jsonpath` output.
pub(crate) fn text(out: &mut String, value: &Match<'_>) {
    match *value {
        Match::Json(v @ (Value::Object(_) | Value::Array(_))) => go_json(out, v),
        Match::Json(Value::Null) => out.push_str("null"),
        Match::Json(&Value::Bool(b)) | Match::Bool(b) => {
            out.push_str(if b { "true" } else { "false" })
        }
        Match::Json(Value::Number(n)) => go_number_text(out, number(n)),
        Match::Json(Value::String(s)) => out.push_str(s),
        Match::Text(s) => out.push_str(s),
        Match::Int(i) => push_display(out, i),
        Match::Float(f) => out.push_str(&go_float_text(f)),
        Match::Byte(b) => push_display(out, b),
        Match::Nil => out.push_str("<no value>"),
    }
}

/// Appends a value encoded as Go's `json.Marshal` would encode it: compact, map keys sorted,
/// `<`, `>`, `&`, U+2028 and U+2029 escaped, floats in Go's shortest form.
///
/// Written without recursion, so documents of any depth render on any stack.
pub fn go_json(out: &mut String, value: &Value) {
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(text) => out.push_str(text),
            Step::Key(key) => {
                push_string(out, key);
                out.push(':');
            }
            Step::Value(value) => match value {
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) => match number(n) {
                    Number::Int(i) => push_display(out, i),
                    Number::Float(f) => out.push_str(&go_json_float(f)),
                },
                Value::String(s) => push_string(out, s),
                Value::Array(items) => {
                    out.push('[');
                    push_items(&mut stack, items, ",", "]");
                }
                Value::Object(map) => {
                    out.push('{');
                    push_entries(&mut stack, map, ",", "}");
                }
            },
        }
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
        Match::Json(v) => go_json(out, v),
        Match::Text(s) => push_string(out, s),
        Match::Int(i) => push_display(out, i),
        Match::Float(f) => out.push_str(&go_json_float(f)),
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
    // Without recursion, as `go_json`.
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
        Number::Float(f) => out.push_str(&go_float_text(f)),
    }
}

/// Shortest decimal digits of `f` (no sign) and the decimal exponent of the first digit.
fn shortest_digits(f: f64) -> (String, i32) {
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

fn special(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f == f64::INFINITY {
        Some("+Inf")
    } else if f == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

/// `d.ddde±XX`, Go's `%e` with the shortest digits.
fn exponent_form(neg: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let _ = write!(
        out,
        "e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    );
    out
}

/// Plain decimal form with the shortest digits.
fn plain_form(neg: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let point = exp + 1;
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..-point {
            out.push('0');
        }
        out.push_str(digits);
    } else {
        let point = point as usize;
        if point >= digits.len() {
            out.push_str(digits);
            for _ in digits.len()..point {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
    out
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which is what `fmt.Print` uses for a float64:
/// the shortest digits, in exponent form when the decimal exponent is below -4 or 6 and
/// above (`1e+06`, `1e-05`), plain otherwise (`123456.789`, `0.0001`).
pub(crate) fn go_float_text(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_owned();
    }
    let neg = f.is_sign_negative();
    if f == 0.0 {
        return if neg { "-0".into() } else { "0".into() };
    }
    let (digits, exp) = shortest_digits(f);
    if !(-4..6).contains(&exp) {
        exponent_form(neg, &digits, exp)
    } else {
        plain_form(neg, &digits, exp)
    }
}

/// Go's `encoding/json` form of a float64: plain decimal from 1e-6 up to 1e21, exponent form
/// (with `e-7`, not `e-07`) outside.
pub(crate) fn go_json_float(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_owned();
    }
    let neg = f.is_sign_negative();
    if f == 0.0 {
        return if neg { "-0".into() } else { "0".into() };
    }
    let (digits, exp) = shortest_digits(f);
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        let mut s = exponent_form(neg, &digits, exp);
        let n = s.len();
        if n >= 4
            && s.as_bytes()[n - 4] == b'e'
            && s.as_bytes()[n - 3] == b'-'
            && s.as_bytes()[n - 2] == b'0'
        {
            s.remove(n - 2);
        }
        s
    } else {
        plain_form(neg, &digits, exp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_go() {
        assert_eq!(go_json_float(2.0), "2");
        assert_eq!(go_json_float(1e21), "1e+21");
        assert_eq!(go_json_float(1e20), "100000000000000000000");
        assert_eq!(go_json_float(0.00001), "0.00001");
        assert_eq!(go_json_float(1.5e-7), "1.5e-7");
        assert_eq!(go_json_float(1.5e-10), "1.5e-10");
        assert_eq!(go_json_float(123456.789), "123456.789");
    }

    #[test]
    fn json_strings_like_go() {
        let mut s = String::new();
        push_string(&mut s, "<a&b>\u{2028}\"\\\n\u{1}\u{8}");
        assert_eq!(s, r#""\u003ca\u0026b\u003e\u2028\"\\\n\u0001\b""#);
    }
}
