//! Values as Go prints them: strings as `strconv.Quote` (`%q`) and `encoding/json` write them,
//! whole JSON values as `encoding/json` writes them, and floats as `encoding/json` and
//! `strconv.FormatFloat(f, 'g', -1, 64)` (`fmt.Print`) write them.
//!
//! Upstream messages embed values the Go way, and users compare those messages: a label
//! selector error quotes the bad key with `%q` and prints the bad values as JSON; a hash is
//! taken over Go's JSON of an object. These encodings are written here once.
//!
//! ```
//! use ocm_api::k8s::gojson;
//!
//! assert_eq!(gojson::quote("a\"b\u{1}é"), r#""a\"b\x01é""#);
//! let mut out = String::new();
//! gojson::push_string(&mut out, "<a & b>\n");
//! assert_eq!(out, r#""\u003ca \u0026 b\u003e\n""#);
//! assert_eq!(gojson::string_array(&["x", "<y>"]), r#"["x","\u003cy\u003e"]"#);
//! ```

use std::fmt::Write as _;

use serde_json::Value;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Go's `strconv.Quote` (`%q` of a string): printable characters as they are, the usual
/// backslash escapes, other characters as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_print(c) => out.push(c),
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// How Go's `time` package quotes a string in its errors (`time: invalid duration "1x"`):
/// in double quotes, `"` and `\\` escaped, control and non-ASCII characters as the `\xNN` of
/// each of their bytes.
///
/// ```
/// assert_eq!(ocm_api::k8s::gojson::time_quote("1µ\"x"), r#""1\xc2\xb5\"x""#);
/// ```
pub fn time_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c < ' ' || !c.is_ascii() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "\\x{b:02x}");
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// A `[]string` as Go's `fmt` prints it with `%v`: `[a b c]`, the strings as they are.
///
/// ```
/// assert_eq!(ocm_api::k8s::gojson::sprint_strings(&["a", "b"]), "[a b]");
/// ```
pub fn sprint_strings<S: AsRef<str>>(items: &[S]) -> String {
    let parts: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("[{}]", parts.join(" "))
}

/// Go's `fmt.Sprint` (`%v`, and `%+v`) of JSON decoded into Go's generic types, with integers
/// that fit kept as `int64` (as kube-apiserver decodes patches and kubectl its documents): maps
/// as `map[k:v k2:v2]` with sorted keys, lists as `[a b]`, strings bare, other numbers as
/// `float64`s print (`-0` is the integer 0, as Go reads it), `null` as `<nil>`. Any depth is
/// rendered, without recursion. Upstream OCM hashes this text to detect configuration changes.
///
/// ```
/// let v = serde_json::json!({"data": {"b": 5, "a": "x y"}, "list": [1.5, true, null]});
/// assert_eq!(
///     ocm_api::k8s::gojson::sprint_value(&v),
///     "map[data:map[a:x y b:5] list:[1.5 true <nil>]]"
/// );
/// ```
pub fn sprint_value(value: &Value) -> String {
    let mut out = String::new();
    push_sprint(&mut out, value);
    out
}

/// [`sprint_value`] appended to `out`.
pub fn push_sprint(out: &mut String, value: &Value) {
    render(out, value, &SPRINT);
}

/// Go's `unicode.IsPrint`: printable ASCII including the space; beyond ASCII, close enough,
/// not a control, format, separator or private-use character.
pub fn is_print(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    !(c.is_control()
        || c.is_whitespace()
        || matches!(c as u32,
            0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e | 0x200b..=0x200f
            | 0x202a..=0x202e | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb
            | 0xe000..=0xf8ff | 0xf0000..=0x10ffff))
}

/// Appends `s` as Go's `encoding/json` encodes a string: in double quotes, with `<`, `>`, `&`,
/// U+2028 and U+2029 escaped as well as the characters JSON requires.
pub fn push_string(out: &mut String, s: &str) {
    out.push('"');
    let mut run_start = 0;
    for (i, c) in s.char_indices() {
        let escape: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            c if (c as u32) < 0x20 || matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}') => {
                None
            }
            _ => continue,
        };
        out.push_str(&s[run_start..i]);
        run_start = i + c.len_utf8();
        match escape {
            Some(e) => out.push_str(e),
            None => {
                let v = c as u32;
                out.push_str("\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(char::from(HEX[((v >> shift) & 0xf) as usize]));
                }
            }
        }
    }
    out.push_str(&s[run_start..]);
    out.push('"');
}

/// A `[]string` as Go's `encoding/json` encodes a non-nil slice.
pub fn string_array<S: AsRef<str>>(values: &[S]) -> String {
    let mut out = String::from("[");
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_string(&mut out, value.as_ref());
    }
    out.push(']');
    out
}

/// Appends `value` as Go's `json.Marshal` encodes the same value decoded into Go's generic
/// types (`map[string]interface{}`, `[]interface{}`, `int64` or `float64`): compact, map keys
/// sorted, strings as [`push_string`] writes them, integers as they are and other numbers as
/// [`float`] writes them (`-0` is the integer 0, as Go decodes it).
///
/// Written without recursion, so documents of any depth render on any stack. This is the one
/// whole-value renderer of the SDK: kubectl's JSONPath output of maps and lists, `jsonRaw`
/// feedback values, hashes taken over Go's JSON, and the manifest size upstream's webhook
/// compares with its limit ([`crate::work::manifests_size`]).
///
/// ```
/// use ocm_api::k8s::gojson;
///
/// let mut out = String::new();
/// gojson::push_value(&mut out, &serde_json::json!({"b": [1, 2.0, 1e21, null], "a": "<x>"}));
/// assert_eq!(out, r#"{"a":"\u003cx\u003e","b":[1,2,1e+21,null]}"#);
/// ```
pub fn push_value(out: &mut String, value: &Value) {
    render(out, value, &JSON);
}

/// How [`render`] writes the parts of a value: Go's `encoding/json`, or Go's `%v`.
struct Style {
    null: &'static str,
    /// Strings (and map keys) quoted as `encoding/json` quotes them, or bare.
    quoted: bool,
    map_open: &'static str,
    map_close: &'static str,
    separator: &'static str,
    /// Numbers that are not integers.
    float: fn(f64) -> String,
}

const JSON: Style = Style {
    null: "null",
    quoted: true,
    map_open: "{",
    map_close: "}",
    separator: ",",
    float,
};

const SPRINT: Style = Style {
    null: "<nil>",
    quoted: false,
    map_open: "map[",
    map_close: "]",
    separator: " ",
    float: format_float,
};

/// Writes a value decoded into Go's generic types (integers that fit as `int64`, `-0` as the
/// integer 0, map keys sorted) in `style`, without recursion, so values of any depth render
/// on any stack.
fn render(out: &mut String, value: &Value, style: &Style) {
    let text = |out: &mut String, s: &str| {
        if style.quoted {
            push_string(out, s);
        } else {
            out.push_str(s);
        }
    };
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(key) => {
                text(out, key);
                out.push(':');
            }
            Step::Value(value) => match value {
                Value::Null => out.push_str(style.null),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) => match n.as_i64() {
                    Some(i) => {
                        let _ = write!(out, "{i}");
                    }
                    None => match n.as_f64() {
                        // serde_json reads `-0` as a float; Go reads it as the integer 0.
                        Some(0.0) => out.push('0'),
                        Some(f) => out.push_str(&(style.float)(f)),
                        None => out.push_str("NaN"),
                    },
                },
                Value::String(s) => text(out, s),
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Step::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Text(style.separator));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push_str(style.map_open);
                    let mut entries: Vec<_> = map.iter().collect();
                    // Already sorted unless serde_json's `preserve_order` feature is on.
                    if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
                        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                    }
                    stack.push(Step::Text(style.map_close));
                    for (i, (key, item)) in entries.into_iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Key(key));
                        if i > 0 {
                            stack.push(Step::Text(style.separator));
                        }
                    }
                }
            },
        }
    }
}

/// [`push_value`] into a new string.
pub fn value(value: &Value) -> String {
    let mut out = String::new();
    push_value(&mut out, value);
    out
}

/// What is left to render of a value, innermost last.
enum Step<'a> {
    Value(&'a Value),
    Text(&'static str),
    Key(&'a str),
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
pub fn format_float(f: f64) -> String {
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

/// Go's `encoding/json` form of a float64: the shortest digits, plain decimal from 1e-6 up to
/// 1e21, exponent form (with `e-7`, not `e-07`) outside.
pub fn float(f: f64) -> String {
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
    fn quote_escapes_as_strconv() {
        assert_eq!(quote("plain"), "\"plain\"");
        assert_eq!(quote("\u{7}\u{8}\u{c}\n\r\t\u{b}"), r#""\a\b\f\n\r\t\v""#);
        assert_eq!(quote("\u{7f}"), r#""\x7f""#);
        assert_eq!(quote("\u{200b}"), r#""\u200b""#);
        assert_eq!(quote("\u{f0000}"), r#""\U000f0000""#);
        assert_eq!(quote("日本"), "\"日本\"");
    }

    /// The testkit's old copy quoted with JSON escaping; Go's `%q` writes control characters
    /// as `\x01` and leaves `<` alone.
    #[test]
    fn quote_is_not_json() {
        assert_eq!(quote("\u{1}<"), r#""\x01<""#);
        assert_ne!(quote("\u{1}<"), serde_json::to_string("\u{1}<").unwrap());
    }

    /// Moved from examples' `tree::go_list`.
    #[test]
    fn string_slices_like_fmt() {
        assert_eq!(sprint_strings(&["a", "b"]), "[a b]");
        assert_eq!(sprint_strings::<&str>(&[]), "[]");
    }

    /// Moved from ocm-feedback with its renderer.
    #[test]
    fn floats_like_go() {
        assert_eq!(float(2.0), "2");
        assert_eq!(float(1e21), "1e+21");
        assert_eq!(float(1e20), "100000000000000000000");
        assert_eq!(float(0.00001), "0.00001");
        assert_eq!(float(1.5e-7), "1.5e-7");
        assert_eq!(float(1.5e-10), "1.5e-10");
        assert_eq!(float(123456.789), "123456.789");
        assert_eq!(format_float(1e6), "1e+06");
        assert_eq!(format_float(0.0001), "0.0001");
        assert_eq!(format_float(123456.789), "123456.789");
    }

    /// Whole values, pinned: what ocm-feedback's `go_json` printed before it moved here.
    #[test]
    fn values_like_go() {
        let v = serde_json::json!({"z": {"b": [true, null, -0.0, -3, 18446744073709551615u64, 0.5]},
            "a": "\u{2028}&", "m": {}, "l": []});
        assert_eq!(
            value(&v),
            r#"{"a":"\u2028\u0026","l":[],"m":{},"z":{"b":[true,null,0,-3,18446744073709552000,0.5]}}"#
        );
    }

    #[test]
    fn json_strings_escape_html_and_line_separators() {
        let mut out = String::new();
        push_string(&mut out, "\"\\\u{1}\u{2028}\u{2029}x");
        assert_eq!(out, r#""\"\\\u0001\u2028\u2029x""#);
        assert_eq!(string_array::<&str>(&[]), "[]");
    }
}
