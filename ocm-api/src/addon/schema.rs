//! Schema fragments used only by the addon group.
//!
//! Attached with `#[schemars(schema_with = "…")]` where the schema k8s-openapi derives for a
//! Kubernetes type differs from what upstream's CRDs carry.

use schemars::{Schema, SchemaGenerator};
use serde_json::{Value, json};

use crate::schema::schema_from;

/// The regular expression upstream puts on every resource quantity.
const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// One resource quantity (`resource.Quantity`): a number or a string such as `500m` or `1Gi`.
fn quantity() -> Value {
    json!({
        "anyOf": [{ "type": "integer" }, { "type": "string" }],
        "pattern": QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": true,
    })
}

/// A `core/v1` `ResourceRequirements` as upstream's CRDs embed it: dynamic resource claims
/// merged by name, and limits and requests as maps of quantities.
pub(crate) fn resource_requirements(_: &mut SchemaGenerator) -> Schema {
    schema_from(json!({
        "description": "Compute resources (CPU, memory, …) the container asks for and is limited to.",
        "type": "object",
        "properties": {
            "claims": {
                "description": "Dynamic resource claims of the pod that this container uses.",
                "type": "array",
                "items": {
                    "description": "One claim, by the name it has in the pod's resourceClaims.",
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {
                            "description": "Name of an entry in the pod's resourceClaims.",
                            "type": "string",
                        },
                        "request": {
                            "description": "One request of the claim; empty makes the whole claim available.",
                            "type": "string",
                        },
                    },
                },
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            },
            "limits": {
                "description": "The most of each resource the container may use.",
                "type": "object",
                "additionalProperties": quantity(),
            },
            "requests": {
                "description": "The least of each resource the container needs; defaults to the limits.",
                "type": "object",
                "additionalProperties": quantity(),
            },
        },
    }))
}

/// A byte string, base64-encoded on the wire (Go `[]byte`).
pub(crate) fn byte_string(_: &mut SchemaGenerator) -> Schema {
    schema_from(json!({ "type": "string", "format": "byte" }))
}
