//! Field errors as apimachinery's `field` package words them.
//!
//! A validation rule reports a [`FieldError`]: a kind (`Required`, `Invalid`,
//! `Unsupported`, ...), the path of the field, the offending value and a detail. The
//! cause kube-apiserver puts in a `422 Invalid` is the error's *body*: the kind's
//! words, then (for the kinds that show one) the value, then the detail, each after
//! `": "`. Values are printed as apimachinery v0.36 prints them: integers and booleans
//! plainly, strings in Go's `%q`, everything else as Go's `encoding/json` writes the
//! Go value (so a label map reads `{"app":"web"}` and a nil pointer `null`).

use std::fmt::Write as _;

use ocm_api::k8s::gojson;
use serde_json::Value;

use crate::api_error::Cause;

/// The path of a field, printed as apimachinery prints a `field.Path`: children joined
/// with `.`, list indices and map keys in brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Path(String);

impl Path {
    /// A root path (`metadata`, `spec`, ...).
    pub(crate) fn new(root: &str) -> Self {
        Self(root.to_string())
    }

    /// The whole object, which apimachinery prints as `[]` (the root of an empty path).
    pub(crate) fn whole_object() -> Self {
        Self("[]".to_string())
    }

    /// A named field below this one.
    pub(crate) fn child(&self, name: &str) -> Self {
        let mut s = String::with_capacity(self.0.len() + name.len() + 1);
        s.push_str(&self.0);
        if !s.is_empty() {
            s.push('.');
        }
        s.push_str(name);
        Self(s)
    }

    /// An element of a list.
    pub(crate) fn index(&self, i: usize) -> Self {
        let mut s = self.0.clone();
        let _ = write!(s, "[{i}]");
        Self(s)
    }

    /// An entry of a map.
    pub(crate) fn key(&self, k: &str) -> Self {
        Self(format!("{}[{k}]", self.0))
    }

    /// The path as printed.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// A value as an error shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Bad {
    /// A Go `string`: `%q`.
    Str(String),
    /// A Go integer: plain digits.
    Int(i64),
    /// A Go `bool`.
    Bool(bool),
    /// Any other Go value, already written as `encoding/json` writes it.
    Json(String),
}

impl Bad {
    /// A string value.
    pub(crate) fn str(s: &str) -> Self {
        Bad::Str(s.to_string())
    }

    /// A JSON value whose Go type is a map, a slice or a plain scalar: Go writes map keys
    /// sorted, which is how [`gojson::value`] writes every object.
    pub(crate) fn json(v: &Value) -> Self {
        Bad::Json(gojson::value(v))
    }

    /// A nil pointer, slice or map.
    pub(crate) fn null() -> Self {
        Bad::Json("null".into())
    }

    fn render(&self, out: &mut String) {
        match self {
            Bad::Str(s) => out.push_str(&gojson::quote(s)),
            Bad::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Bad::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Bad::Json(j) => out.push_str(j),
        }
    }
}

/// A Go struct value as `encoding/json` writes it: its fields in declaration order,
/// `None` for a field `omitempty` leaves out. Internal API types have no JSON tags, so
/// their field names are the Go names (`{"APIGroup":...}`).
pub(crate) fn go_struct(fields: &[(&str, Option<String>)]) -> String {
    let mut out = String::from("{");
    let mut first = true;
    for (name, value) in fields {
        let Some(value) = value else { continue };
        if !first {
            out.push(',');
        }
        first = false;
        gojson::push_string(&mut out, name);
        out.push(':');
        out.push_str(value);
    }
    out.push('}');
    out
}

/// A JSON string as `encoding/json` writes it.
pub(crate) fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    gojson::push_string(&mut out, s);
    out
}

/// apimachinery's `field.ErrorType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorType {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    Internal,
}

impl ErrorType {
    /// The `reason` of the cause.
    fn reason(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::Internal => "InternalError",
        }
    }

    /// The words the body starts with.
    fn words(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::Internal => "Internal error",
        }
    }
}

/// One field error.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldError {
    kind: ErrorType,
    field: String,
    value: Option<Bad>,
    detail: String,
}

impl FieldError {
    /// The error's body, as the cause's `message` and the part of the aggregate message
    /// after `field: `.
    pub(crate) fn body(&self) -> String {
        let mut out = String::from(self.kind.words());
        if let Some(v) = &self.value {
            out.push_str(": ");
            v.render(&mut out);
        }
        if !self.detail.is_empty() {
            out.push_str(": ");
            out.push_str(&self.detail);
        }
        out
    }

    /// The `details.causes` entry.
    pub(crate) fn into_cause(self) -> Cause {
        Cause {
            reason: self.kind.reason().to_string(),
            message: self.body(),
            field: self.field,
        }
    }
}

/// The errors a validation collects, in the order kube-apiserver reports them.
#[derive(Debug, Default)]
pub(crate) struct Errors(Vec<FieldError>);

impl Errors {
    /// No errors yet.
    pub(crate) fn new() -> Self {
        Self(Vec::new())
    }

    fn push(&mut self, kind: ErrorType, path: &Path, value: Option<Bad>, detail: &str) {
        self.0.push(FieldError {
            kind,
            field: path.as_str().to_string(),
            value,
            detail: detail.to_string(),
        });
    }

    /// `field.Required`.
    pub(crate) fn required(&mut self, path: &Path, detail: &str) {
        self.push(ErrorType::Required, path, None, detail);
    }

    /// `field.Invalid`.
    pub(crate) fn invalid(&mut self, path: &Path, value: Bad, detail: &str) {
        self.push(ErrorType::Invalid, path, Some(value), detail);
    }

    /// `field.NotSupported`: the supported values quoted and joined.
    pub(crate) fn not_supported(&mut self, path: &Path, value: Bad, supported: &[&str]) {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| gojson::quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        self.push(ErrorType::NotSupported, path, Some(value), &detail);
    }

    /// `field.Forbidden`.
    pub(crate) fn forbidden(&mut self, path: &Path, detail: &str) {
        self.push(ErrorType::Forbidden, path, None, detail);
    }

    /// `field.TooLong`, in bytes.
    pub(crate) fn too_long(&mut self, path: &Path, max: usize) {
        let unit = if max == 1 { "byte" } else { "bytes" };
        self.push(
            ErrorType::TooLong,
            path,
            None,
            &format!("may not be more than {max} {unit}"),
        );
    }

    /// `field.Duplicate`.
    pub(crate) fn duplicate(&mut self, path: &Path, value: Bad) {
        self.push(ErrorType::Duplicate, path, Some(value), "");
    }

    /// `field.NotFound`, with an optional detail (some rules set one).
    pub(crate) fn not_found(&mut self, path: &Path, value: Bad, detail: &str) {
        self.push(ErrorType::NotFound, path, Some(value), detail);
    }

    /// `field.InternalError`.
    pub(crate) fn internal(&mut self, path: &Path, detail: &str) {
        self.push(ErrorType::Internal, path, None, detail);
    }

    /// `field.Invalid` for every message of a format check.
    pub(crate) fn invalid_each(&mut self, path: &Path, value: &str, messages: Vec<String>) {
        for m in messages {
            self.invalid(path, Bad::str(value), &m);
        }
    }

    /// Add all of `other`'s errors after these.
    pub(crate) fn extend(&mut self, other: Errors) {
        self.0.extend(other.0);
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The `details.causes` of the `422`.
    pub(crate) fn into_causes(self) -> Vec<Cause> {
        self.0.into_iter().map(FieldError::into_cause).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(f: impl FnOnce(&mut Errors)) -> String {
        let mut e = Errors::new();
        f(&mut e);
        let c = e.into_causes().remove(0);
        format!("{}: {}", c.field, c.message)
    }

    #[test]
    fn bodies_read_as_apimachinery_writes_them() {
        let p = Path::new("spec").child("replicas");
        assert_eq!(
            one(|e| e.invalid(&p, Bad::Int(-1), "must be greater than or equal to 0")),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(
            one(|e| e.required(&Path::new("spec").child("selector"), "")),
            "spec.selector: Required value"
        );
        assert_eq!(
            one(|e| e.not_supported(&p, Bad::str("X"), &["A", "B"])),
            "spec.replicas: Unsupported value: \"X\": supported values: \"A\", \"B\""
        );
        assert_eq!(
            one(|e| e.too_long(&Path::whole_object(), 1048576)),
            "[]: Too long: may not be more than 1048576 bytes"
        );
        assert_eq!(
            one(|e| e.duplicate(&Path::new("a").index(1).child("name"), Bad::str("x"))),
            "a[1].name: Duplicate value: \"x\""
        );
        assert_eq!(
            one(|e| e.invalid(&Path::new("data").key("k"), Bad::null(), "bad")),
            "data[k]: Invalid value: null: bad"
        );
    }

    #[test]
    fn structs_keep_their_field_order_and_drop_omitted_fields() {
        assert_eq!(
            go_struct(&[
                ("matchLabels", Some("{\"a\":\"b\"}".into())),
                ("matchExpressions", None),
            ]),
            r#"{"matchLabels":{"a":"b"}}"#
        );
        assert_eq!(go_struct(&[("a", None)]), "{}");
    }
}
