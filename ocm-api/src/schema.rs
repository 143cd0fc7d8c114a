//! OpenAPI v3 schema fragments shared by the OCM custom resources.
//!
//! schemars derives most of each CRD schema from the Rust types and their doc comments. A few
//! upstream shapes cannot be expressed with derive attributes alone (embedded Kubernetes
//! objects, `metav1.Condition` lists with their validation, atomic label selectors, nullable
//! timestamps). Those are written here once and attached with
//! `#[schemars(schema_with = "crate::schema::…")]`.
//!
//! The functions are public so that addon authors who embed OCM types in their own CRDs get the
//! same structural schema.

use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

/// The regular expression upstream uses for a condition `reason`.
pub const CONDITION_REASON_PATTERN: &str = "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$";

/// The regular expression upstream uses for a condition `type` (a qualified name).
pub const CONDITION_TYPE_PATTERN: &str = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";

/// An embedded Kubernetes object of any kind, kept verbatim.
///
/// The API server keeps every field of the object (`x-kubernetes-preserve-unknown-fields`) and
/// checks that it has `apiVersion`, `kind` and `metadata` (`x-kubernetes-embedded-resource`).
pub fn embedded_resource(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

/// An RFC 3339 timestamp (`metav1.Time`).
pub fn time(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "format": "date-time" })
}

/// The schema of one `metav1.Condition`, with the validation the API server applies.
pub fn condition_object() -> Value {
    json!({
        "description": "A single observation of the state of an object.",
        "type": "object",
        "required": ["lastTransitionTime", "message", "reason", "status", "type"],
        "properties": {
            "lastTransitionTime": {
                "description": "When the condition last moved from one status to another.",
                "type": "string",
                "format": "date-time",
            },
            "message": {
                "description": "A human-readable explanation of the transition. May be empty.",
                "type": "string",
                "maxLength": 32768,
            },
            "observedGeneration": {
                "description": "The .metadata.generation the condition was computed from.",
                "type": "integer",
                "format": "int64",
                "minimum": 0,
            },
            "reason": {
                "description": "A CamelCase, machine-readable reason for the last transition.",
                "type": "string",
                "maxLength": 1024,
                "minLength": 1,
                "pattern": CONDITION_REASON_PATTERN,
            },
            "status": {
                "description": "True, False or Unknown.",
                "type": "string",
                "enum": ["True", "False", "Unknown"],
            },
            "type": {
                "description": "The condition type, in CamelCase or foo.example.com/CamelCase.",
                "type": "string",
                "maxLength": 316,
                "pattern": CONDITION_TYPE_PATTERN,
            },
        },
    })
}

/// A list of `metav1.Condition` with the validation the API server applies to each condition.
///
/// Matches upstream's plain condition lists (no list-type marker).
pub fn conditions(_: &mut SchemaGenerator) -> Schema {
    schema_from(json!({ "type": "array", "items": condition_object() }))
}

/// A list of `metav1.Condition` merged by `type` (`x-kubernetes-list-type: map`).
pub fn conditions_map(_: &mut SchemaGenerator) -> Schema {
    schema_from(json!({
        "type": "array",
        "items": condition_object(),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
    }))
}

/// The schema of a `metav1.LabelSelector`.
pub fn label_selector_object() -> Value {
    json!({
        "type": "object",
        "properties": {
            "matchExpressions": {
                "description": "Label selector requirements, ANDed together.",
                "type": "array",
                "items": {
                    "description": "One requirement: a key, an operator and, for In and NotIn, values.",
                    "type": "object",
                    "required": ["key", "operator"],
                    "properties": {
                        "key": {
                            "description": "The label key the requirement applies to.",
                            "type": "string",
                        },
                        "operator": {
                            "description": "One of In, NotIn, Exists and DoesNotExist.",
                            "type": "string",
                        },
                        "values": {
                            "description": "Values for In and NotIn; empty for Exists and DoesNotExist.",
                            "type": "array",
                            "items": { "type": "string" },
                            "x-kubernetes-list-type": "atomic",
                        },
                    },
                },
                "x-kubernetes-list-type": "atomic",
            },
            "matchLabels": {
                "description": "Exact key/value pairs, each equivalent to an In requirement with one value.",
                "type": "object",
                "additionalProperties": { "type": "string" },
            },
        },
        "x-kubernetes-map-type": "atomic",
    })
}

/// A `metav1.LabelSelector`, replaced as a whole on merge (`x-kubernetes-map-type: atomic`).
pub fn label_selector(_: &mut SchemaGenerator) -> Schema {
    schema_from(label_selector_object())
}

/// Turns a JSON object into a schemars [`Schema`]; anything else becomes the empty schema.
pub(crate) fn schema_from(value: Value) -> Schema {
    Schema::try_from(value).unwrap_or_default()
}
