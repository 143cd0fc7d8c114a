//! `fieldValidation`: what a write does about fields the server does not know
//! and fields its body names twice.
//!
//! kube-apiserver drops unknown fields while decoding a body (or pruning a
//! custom resource) and keeps the last of duplicated keys. With
//! `fieldValidation=Strict` it refuses the write instead (`400 BadRequest`,
//! `strict decoding error: …`), with `Warn` (the default when a client sends
//! nothing) it answers with one `Warning: 299 - "…"` header per field, and
//! with `Ignore` it says nothing.
//!
//! Unknown fields are found at any depth (module `unknown`): built-in kinds are checked against
//! their published schemas (the same ones `/openapi/v2` and `/openapi/v3` serve), custom
//! resources against their CRD's schema. What the server then says depends on how the object
//! arrived (module `report`): a create or update body, a JSON or merge patch, a strategic merge
//! patch, or a server-side apply each have kube-apiserver's own wording.

pub(crate) mod report;
pub(crate) mod unknown;

use std::fmt;
use std::sync::{Arc, Mutex};

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::api_error::ApiResult;
use crate::serving::openapi::model::{Node, NodeId, builtin_model};
use crate::storage::patch::PatchKind;
use crate::storage::registry::{Gvr, ResourceInfo};
use crate::storage::store::WriteOptions;

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

/// What parsing found, in the order the body names it.
#[derive(Default)]
struct Findings {
    duplicates: Vec<String>,
    unknown: Vec<String>,
}

struct Seed<'a, 'd> {
    at: Option<&'a Step<'a>>,
    found: &'d mut Findings,
    /// Where the value stands in a built-in kind's model, when the body is checked for
    /// unknown fields.
    node: Option<NodeId>,
}

impl Seed<'_, '_> {
    /// The model node of a field of this (object) value: `Some(None)` when nothing is known
    /// of it, `None` when the value's type has no such field.
    fn field(&self, key: &str) -> Option<Option<NodeId>> {
        match self.node.map(|id| builtin_model().node(id)) {
            Some(Node::Struct(fields)) => fields.get(key).map(|&c| Some(c)),
            Some(Node::Map(values)) => Some(Some(*values)),
            _ => Some(None),
        }
    }

    /// The model node of this (list) value's items.
    fn items(&self) -> Option<NodeId> {
        match self.node.map(|id| builtin_model().node(id)) {
            Some(Node::List { items, .. }) => Some(*items),
            _ => None,
        }
    }
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
        let items = self.items();
        loop {
            let step = Step {
                parent: self.at,
                key: StepKey::Index(out.len()),
            };
            match seq.next_element_seed(Seed {
                at: Some(&step),
                found: &mut *self.found,
                node: items,
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
            let Some(node) = self.field(&key) else {
                // A field the type lacks: reported once, dropped, its value skipped unread.
                let mut path = String::new();
                render(Some(&step), &mut path);
                if self.found.unknown.len() < 100 && !self.found.unknown.contains(&path) {
                    self.found.unknown.push(path);
                }
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            };
            // The decoder notices a repeated key before it reads the value.
            if out.contains_key(&key) {
                let mut path = String::new();
                render(Some(&step), &mut path);
                self.found.duplicates.push(path);
            }
            let value = map.next_value_seed(Seed {
                at: Some(&step),
                found: &mut *self.found,
                node,
            })?;
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
    parse_json_as(bytes, None).map(|(v, dups, _)| (v, dups))
}

/// [`parse_json`] of the body of a built-in kind whose model node is `root`: fields the kind
/// lacks are dropped as the decoder meets them, and their paths returned in that order.
pub(crate) fn parse_json_as(
    bytes: &[u8],
    root: Option<NodeId>,
) -> serde_json::Result<(Value, Vec<String>, Vec<String>)> {
    let mut found = Findings::default();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let v = Seed {
        at: None,
        found: &mut found,
        node: root,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((v, found.duplicates, found.unknown))
}

/// A JSON, merge or strategic merge patch has produced `patched` from `patch`: drop the
/// fields decoding it would drop (for custom resources, prune it with `schema`, the version's
/// `openAPIV3Schema`), and report them with the patch's duplicate fields
/// (`opts.duplicate_fields`) in the patch handler's words. Returns the options for the rest
/// of the write when they must change (the duplicates are reported once, here).
pub(crate) fn check_patch(
    info: &ResourceInfo,
    gvr: &Gvr,
    kind: PatchKind,
    patch: &Value,
    patched: &mut Value,
    schema: Option<&Value>,
    opts: &WriteOptions,
) -> ApiResult<Option<WriteOptions>> {
    // The patched object as the handler saw it, for the message of a strict failure.
    let before = (opts.field_validation == FieldValidation::Strict && kind != PatchKind::Strategic)
        .then(|| patched.clone());
    let mut unknown = unknown::drop_unknown(info, &gvr.version, patched);
    if let Some(schema) = schema.filter(|_| info.crd_name.is_some()) {
        crate::validation::admission::default_and_prune(patched, schema, true, "", &mut unknown);
    }
    let decoding = match (&before, kind) {
        (_, PatchKind::Strategic) => report::Decoding::StrategicPatch(patch),
        (Some(b), _) => report::Decoding::Patched(b),
        (None, _) => report::Decoding::Body,
    };
    report::report(info, gvr, opts, &unknown, decoding)?;
    Ok(
        (!opts.duplicate_fields.is_empty() || !opts.unknown_fields.is_empty()).then(|| {
            WriteOptions {
                duplicate_fields: Vec::new(),
                unknown_fields: Vec::new(),
                ..opts.clone()
            }
        }),
    )
}

/// A server-side apply of `applied`: refuse it if it has fields its type does not declare,
/// whatever `fieldValidation` says, as the field manager's typed conversion does.
pub(crate) fn check_apply(
    info: &ResourceInfo,
    gvr: &Gvr,
    applied: &Value,
    schema: Option<&Value>,
) -> ApiResult<()> {
    let unknown = unknown::apply_unknown(info, &gvr.version, schema, applied);
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(report::apply_refused(applied, &unknown))
    }
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
