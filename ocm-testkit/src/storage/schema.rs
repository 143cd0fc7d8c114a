//! Structural knowledge about objects: list and map semantics per field.
//!
//! For custom resources this comes from the CRD's `openAPIV3Schema`
//! (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`, `x-kubernetes-map-type`);
//! for built-in kinds from a table of well-known list fields.

use serde_json::Value;

use crate::storage::builtin::{builtin_is_set, builtin_list_keys};

/// How the elements of a list are identified when merging and tracking ownership.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// The list is one value, replaced as a whole.
    Atomic,
    /// A set of scalars, merged by value.
    Set,
    /// A list of objects identified by these key fields.
    Map(Vec<String>),
}

/// A cursor into the shape of an object, moved along as a value is walked.
#[derive(Debug, Clone)]
pub(crate) enum Shape<'s> {
    /// A node of a CRD schema (`None` when the schema says nothing here).
    Crd(Option<&'s Value>),
    /// A node of a built-in kind, known by its field name and its parent's.
    Builtin {
        parent: Option<String>,
        name: Option<String>,
    },
}

impl<'s> Shape<'s> {
    /// The root shape for an object: its CRD schema if it has one.
    pub(crate) fn root(schema: Option<&'s Value>) -> Self {
        match schema {
            Some(s) => Shape::Crd(Some(s)),
            None => Shape::Builtin {
                parent: None,
                name: None,
            },
        }
    }

    /// The shape of a field of this (object) node.
    pub(crate) fn field(&self, name: &str, at_root: bool) -> Shape<'s> {
        if at_root && name == "metadata" {
            return Shape::Builtin {
                parent: None,
                name: Some("metadata".into()),
            };
        }
        match self {
            Shape::Crd(Some(s)) => {
                let child = s
                    .get("properties")
                    .and_then(|p| p.get(name))
                    .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()));
                Shape::Crd(child)
            }
            Shape::Crd(None) => Shape::Crd(None),
            Shape::Builtin { name: me, .. } => Shape::Builtin {
                parent: me.clone(),
                name: Some(name.to_string()),
            },
        }
    }

    /// The shape of this (list) node's items.
    pub(crate) fn items(&self) -> Shape<'s> {
        match self {
            Shape::Crd(Some(s)) => Shape::Crd(s.get("items")),
            other => other.clone(),
        }
    }

    /// How this (list) node merges.
    pub(crate) fn list_kind(&self) -> ListKind {
        match self {
            Shape::Crd(Some(s)) => match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(
                    s.get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|ks| {
                            ks.iter()
                                .filter_map(|k| k.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                ),
                _ => ListKind::Atomic,
            },
            Shape::Crd(None) => ListKind::Atomic,
            Shape::Builtin { parent, name } => {
                let Some(name) = name.as_deref() else {
                    return ListKind::Atomic;
                };
                if builtin_is_set(parent.as_deref(), name) {
                    ListKind::Set
                } else if let Some(keys) = builtin_list_keys(parent.as_deref(), name) {
                    ListKind::Map(keys.iter().map(|k| k.to_string()).collect())
                } else {
                    ListKind::Atomic
                }
            }
        }
    }

    /// Whether this (object) node is replaced as a whole.
    pub(crate) fn atomic_map(&self) -> bool {
        match self {
            Shape::Crd(Some(s)) => {
                s.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic")
            }
            _ => false,
        }
    }
}
