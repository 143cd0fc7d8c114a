//! The values a JSONPath evaluation yields.

use std::fmt;

use serde_json::Value;

use super::render;

/// One value found by a JSONPath, borrowed from the document or the template.
///
/// Besides values of the document, a Kubernetes JSONPath can yield literals written in the
/// template (`{"text"}`, numbers, booleans), single bytes of a string (`*` and `..` walk into
/// strings, as in kubectl), and the "no value" that `range` produces for a JSON null. The
/// variants keep the distinctions kubectl makes between them: a literal `1` is a Go `int`
/// and is typed differently from a document's `1` (an `int64`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Match<'a> {
    /// A value of the document (JSON `null` included).
    Json(&'a Value),
    /// A string literal or text of the template.
    Text(&'a str),
    /// An integer literal of the template.
    Int(i64),
    /// A floating-point literal of the template.
    Float(f64),
    /// A boolean literal of the template.
    Bool(bool),
    /// One byte of a string, reached by `*` or `..`.
    Byte(u8),
    /// No value at all: what a `range` body sees for a JSON null (kubectl prints
    /// `<no value>`).
    Nil,
}

/// The comparison class of a value, as Go's template comparisons see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind<'a> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'a str),
}

/// A JSON number as Go decodes it: `int64` when it fits, `float64` otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    Int(i64),
    Float(f64),
}

///
/// `serde_json` reads `-0` as the float -0.0, while Go reads it as the integer 0. Go's encoder
/// writes a float -0 as `-0`, so a -0 that came from an API server is `-0` on the wire, and
/// this treats -0.0 as the integer 0 like Go does.
pub(crate) fn number(n: &serde_json::Number) -> Number {
    match n.as_i64() {
        Some(i) => Number::Int(i),
        None => match n.as_f64() {
            Some(0.0) => Number::Int(0),
            Some(f) => Number::Float(f),
            None => Number::Float(f64::NAN),
        },
    }
}

impl<'a> Match<'a> {
    /// The document value, when this is one.
    pub fn as_json(&self) -> Option<&'a Value> {
        match self {
            Self::Json(v) => Some(v),
            _ => None,
        }
    }

    /// The value as owned JSON: literals become JSON scalars, a byte a number, and
    /// [`Match::Nil`] `null`.
    pub fn to_json(&self) -> Value {
        match *self {
            Self::Json(v) => v.clone(),
            Self::Text(s) => Value::String(s.to_owned()),
            Self::Int(i) => Value::from(i),
            Self::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
            Self::Bool(b) => Value::Bool(b),
            Self::Byte(b) => Value::from(b),
            Self::Nil => Value::Null,
        }
    }

    /// The name of the Go type kubectl holds for this value (`string`, `int64`, `float64`,
    /// `bool`, `map[string]interface {}`, `[]interface {}`, `int`, `uint8`), or `<nil>`.
    pub fn go_type_name(&self) -> &'static str {
        match self {
            Self::Json(Value::Null) | Self::Nil => "<nil>",
            Self::Json(Value::Bool(_)) | Self::Bool(_) => "bool",
            Self::Json(Value::Number(n)) => match number(n) {
                Number::Int(_) => "int64",
                Number::Float(_) => "float64",
            },
            Self::Json(Value::String(_)) | Self::Text(_) => "string",
            Self::Json(Value::Array(_)) => "[]interface {}",
            Self::Json(Value::Object(_)) => "map[string]interface {}",
            Self::Int(_) => "int",
            Self::Float(_) => "float64",
            Self::Byte(_) => "uint8",
        }
    }

    /// The value a `range` body starts from: the same value, except that a JSON null becomes
    /// no value at all.
    pub(crate) fn range_cursor(self) -> Self {
        match self {
            Self::Json(Value::Null) => Self::Nil,
            other => other,
        }
    }

    /// How Go's template comparisons classify the value; `None` when it cannot be compared.
    #[inline]
    pub(crate) fn kind(&self) -> Option<Kind<'a>> {
        Some(match *self {
            Self::Json(&Value::Bool(b)) | Self::Bool(b) => Kind::Bool(b),
            Self::Json(Value::Number(n)) => match number(n) {
                Number::Int(i) => Kind::Int(i),
                Number::Float(f) => Kind::Float(f),
            },
            Self::Json(Value::String(s)) => Kind::Str(s),
            Self::Text(s) => Kind::Str(s),
            Self::Int(i) => Kind::Int(i),
            Self::Float(f) => Kind::Float(f),
            Self::Byte(b) => Kind::Uint(u64::from(b)),
            Self::Json(Value::Null | Value::Array(_) | Value::Object(_)) | Self::Nil => {
                return None;
            }
        })
    }

    /// The value as Go's `%v` prints it (used in error messages).
    pub(crate) fn go_debug_string(&self) -> String {
        let mut out = String::new();
        render::go_debug(&mut out, self);
        out
    }
}

/// kubectl's rendering of a single value: strings raw, maps and lists as compact JSON,
/// numbers as Go prints them.
impl fmt::Display for Match<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        render::text(&mut out, self);
        f.write_str(&out)
    }
}
