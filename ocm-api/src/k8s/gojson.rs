//! Strings as Go prints them: `strconv.Quote` (`%q`) and `encoding/json`.
//!
//! Upstream messages embed values the Go way, and users compare those messages: a label
//! selector error quotes the bad key with `%q` and prints the bad values as JSON; a hash is
//! taken over Go's JSON of an object. These are the two string encodings, written once.
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

/// Go's `unicode.IsPrint` for non-ASCII characters, close enough: not a control, format,
/// separator or private-use character.
fn is_print(c: char) -> bool {
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

    #[test]
    fn json_strings_escape_html_and_line_separators() {
        let mut out = String::new();
        push_string(&mut out, "\"\\\u{1}\u{2028}\u{2029}x");
        assert_eq!(out, r#""\"\\\u0001\u2028\u2029x""#);
        assert_eq!(string_array::<&str>(&[]), "[]");
    }
}
