//! Schema fragments used only by the `cluster` group.

use schemars::{Schema, SchemaGenerator};
use serde_json::json;

use crate::schema::{label_selector_object, schema_from};

/// The pattern of a Kubernetes quantity (`1`, `500m`, `4Gi`, `1e3`), as the API server checks it.
pub const QUANTITY_PATTERN: &str = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

/// A map from resource name (`cpu`, `memory`, …) to quantity.
pub(crate) fn quantity_map(_: &mut SchemaGenerator) -> Schema {
    schema_from(json!({
        "type": "object",
        "additionalProperties": {
            "anyOf": [{ "type": "integer" }, { "type": "string" }],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": true,
        },
    }))
}

/// Base64-encoded bytes.
pub(crate) fn bytes(_: &mut SchemaGenerator) -> Schema {
    schema_from(json!({ "type": "string", "format": "byte" }))
}

/// A list of label selector requirements that is not atomic as a whole (the `matchExpressions`
/// of a claim selector).
pub(crate) fn selector_requirements(g: &mut SchemaGenerator) -> Schema {
    let _ = g;
    let mut list = label_selector_object()["properties"]["matchExpressions"].clone();
    if let Some(obj) = list.as_object_mut() {
        obj.remove("x-kubernetes-list-type");
        obj.remove("description");
    }
    schema_from(list)
}
