//! `fieldValidation`: what a write does about fields the server does not know
//! and fields its body names twice.
//!
//! kube-apiserver drops unknown fields while decoding a body (or pruning a
//! custom resource) and keeps the last of duplicated keys. With
//! `fieldValidation=Strict` it refuses the write instead (`400 BadRequest`,
//! `strict decoding error: …`), with `Warn` (the default when a client sends
//! nothing) it answers with one `Warning: 299 - "…"` header per field, and
//! with `Ignore` it says nothing.

use std::fmt;
use std::sync::{Arc, Mutex};

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The `fieldValidation` directive of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop unknown fields, keep the last duplicate, say nothing.
    Ignore,
    /// As `Ignore`, but report each field in a `Warning` header (the default).
    #[default]
    Warn,
    /// Refuse the write with `400 BadRequest` naming the fields.
    Strict,
}

impl FieldValidation {
    /// Parse the query parameter (`Ignore`, `Warn`, `Strict`; empty means `Warn`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Ignore" => Some(Self::Ignore),
            "" | "Warn" => Some(Self::Warn),
            "Strict" => Some(Self::Strict),
            _ => None,
        }
    }
}

/// Warnings a write produced, as kube-apiserver returns them in `Warning`
/// response headers. Clones share one list, so the caller keeps a clone and
/// reads it after the write.
#[derive(Debug, Clone, Default)]
pub struct Warnings(Arc<Mutex<Vec<String>>>);

impl Warnings {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a warning.
    pub fn push(&self, text: impl Into<String>) {
        if let Ok(mut w) = self.0.lock() {
            w.push(text.into());
        }
    }

    /// The warnings so far, in order.
    pub fn to_vec(&self) -> Vec<String> {
        self.0.lock().map(|w| w.clone()).unwrap_or_default()
    }

    /// Remove and return the warnings so far.
    pub fn take(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default()
    }
}

/// The value of a `Warning` header for `text` (RFC 7234: code 299, agent `-`,
/// quoted text with `"` and `\` escaped).
pub(crate) fn warning_header(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str("299 - \"");
    for ch in text.chars() {
        if ch == '"' || ch == '\\' {
            out.push('\\');
        }
        // Header values cannot carry control characters.
        if !ch.is_control() {
            out.push(ch);
        }
    }
    out.push('"');
    out
}

/// One step of the path to the value being parsed (a linked list on the stack,
/// so nothing is allocated unless a duplicate is found).
struct Step<'a> {
    parent: Option<&'a Step<'a>>,
    key: StepKey<'a>,
}

enum StepKey<'a> {
    Field(&'a str),
    Index(usize),
}

fn render(step: Option<&Step<'_>>, out: &mut String) {
    // Collected first (the path may be thousands of steps long), then written root first.
    let mut steps = Vec::new();
    let mut at = step;
    while let Some(s) = at {
        steps.push(&s.key);
        at = s.parent;
    }
    for key in steps.into_iter().rev() {
        match key {
            StepKey::Field(f) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(f);
            }
            StepKey::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
}

struct Seed<'a, 'd> {
    at: Option<&'a Step<'a>>,
    dups: &'d mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        ocm_api::k8s::json::descend(|| d.deserialize_any(self))
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let step = Step {
                parent: self.at,
                key: StepKey::Index(out.len()),
            };
            match seq.next_element_seed(Seed {
                at: Some(&step),
                dups: &mut *self.dups,
            })? {
                Some(v) => out.push(v),
                None => break,
            }
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let step = Step {
                parent: self.at,
                key: StepKey::Field(&key),
            };
            let value = map.next_value_seed(Seed {
                at: Some(&step),
                dups: &mut *self.dups,
            })?;
            if out.contains_key(&key) {
                let mut path = String::new();
                render(Some(&step), &mut path);
                self.dups.push(path);
            }
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Parse a JSON body, also returning the paths of keys it names twice
/// (`metadata.name`, `spec.containers[0].image`); the last value wins.
///
/// Any depth is parsed, level by level on a stack that grows as needed: callers bound the
/// depth first, as kube-apiserver does (see `decode::go_scan`).
pub(crate) fn parse_json(bytes: &[u8]) -> serde_json::Result<(Value, Vec<String>)> {
    let mut dups = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let v = Seed {
        at: None,
        dups: &mut dups,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((v, dups))
}

/// The fields of `metadata` that `ObjectMeta` has.
pub(crate) fn known_metadata_field(name: &str) -> bool {
    matches!(
        name,
        "name"
            | "generateName"
            | "namespace"
            | "selfLink"
            | "uid"
            | "resourceVersion"
            | "generation"
            | "creationTimestamp"
            | "deletionTimestamp"
            | "deletionGracePeriodSeconds"
            | "labels"
            | "annotations"
            | "ownerReferences"
            | "finalizers"
            | "managedFields"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_found_with_their_paths() {
        let (v, d) = parse_json(
            br#"{"metadata":{"name":"a","name":"b"},"spec":{"c":[{"x":1,"x":2}]},"n":1.5}"#,
        )
        .unwrap();
        assert_eq!(v["metadata"]["name"], "b");
        assert_eq!(v["spec"]["c"][0]["x"], 2);
        assert_eq!(v["n"], 1.5);
        assert_eq!(d, vec!["metadata.name", "spec.c[0].x"]);
        assert!(parse_json(b"{\"a\":").is_err());
        assert!(parse_json(b"{} x").is_err());
    }

    #[test]
    fn warning_header_escapes_quotes() {
        assert_eq!(
            warning_header("unknown field \"spec.foo\""),
            "299 - \"unknown field \\\"spec.foo\\\"\""
        );
    }
}
