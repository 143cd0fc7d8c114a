//! Custom resources in the OpenAPI documents, as kube-apiserver's CRD OpenAPI builder
//! publishes them.
//!
//! Each served version of a CRD becomes a definition named after the group with its labels
//! reversed (`io.open-cluster-management.work.v1.ManifestWork`), holding the version's
//! `openAPIV3Schema` with the standard `apiVersion`, `kind` and `metadata` (a reference to
//! `ObjectMeta`) and the kind's `x-kubernetes-group-version-kind`, plus a `…List` definition.
//!
//! OpenAPI v3 documents get the schema as written, unfolded as the apiserver unfolds it
//! (`x-kubernetes-int-or-string` gains its `anyOf`, embedded resources their `apiVersion`,
//! `kind` and `metadata`). Swagger 2 documents get the form kubectl's v2 reader copes with:
//! no `allOf`/`anyOf`/`oneOf`/`not`, nullable and unknown-preserving values without a type or
//! nested fields, arrays without items untyped, and a schema that preserves unknown fields at
//! its root reduced to an untyped object.

use serde_json::{Map, Value, json};

use super::definitions::{
    API_VERSION_DESCRIPTION, KIND_DESCRIPTION, LIST_META, LIST_METADATA_DESCRIPTION,
    METADATA_DESCRIPTION, OBJECT_META, V2_PREFIX, gvk,
};
use crate::storage::registry::ResourceInfo;

/// Which document a definition is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Swagger 2 (`/openapi/v2`).
    V2,
    /// OpenAPI 3 (`/openapi/v3/…`).
    V3,
}

/// kube-openapi's REST-friendly name of `group/version.Kind`: the group's labels reversed.
pub(crate) fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    if group.is_empty() {
        format!("{version}.{kind}")
    } else {
        format!("{}.{version}.{kind}", reversed.join("."))
    }
}

const EMBEDDED_API_VERSION: &str = "apiVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const EMBEDDED_KIND: &str = "kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

fn flag(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

fn metadata_property() -> Value {
    json!({"$ref": format!("{V2_PREFIX}{OBJECT_META}"), "description": METADATA_DESCRIPTION})
}

/// Unfold a schema node (and its children) as the apiserver does before publishing it.
fn unfold(v: &mut Value, form: Form) {
    ocm_api::k8s::json::descend(|| {
        let Some(s) = v.as_object_mut() else {
            return;
        };
        let preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
        if form == Form::V2 {
            fold_for_v2(s, preserve);
        } else if flag(s, "x-kubernetes-int-or-string")
            && !s.contains_key("anyOf")
            && !s.contains_key("allOf")
        {
            s.insert(
                "anyOf".into(),
                json!([{"type": "integer"}, {"type": "string"}]),
            );
        }
        if flag(s, "x-kubernetes-embedded-resource") && !(form == Form::V2 && preserve) {
            add_embedded_resource_fields(s);
        }
        unfold_children(s, form);
    })
}

/// Drop from a node what Swagger 2 (and kubectl reading it) cannot take: junctors,
/// nullable required properties, types and children of nullable or preserving nodes.
fn fold_for_v2(s: &mut Map<String, Value>, preserve: bool) {
    for junctor in ["allOf", "anyOf", "oneOf", "not"] {
        s.remove(junctor);
    }
    // Required properties that may be null are not required for kubectl.
    let nullable: Vec<String> = s
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, c)| c.get("nullable").and_then(Value::as_bool) == Some(true))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Array(req)) = s.get_mut("required") {
        req.retain(|r| !r.as_str().is_some_and(|r| nullable.iter().any(|n| n == r)));
    }
    if s.get("additionalProperties")
        .and_then(|a| a.get("nullable"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        s.remove("required");
    }
    if flag(s, "nullable") {
        s.remove("type");
        s.remove("nullable");
        s.remove("items");
        s.remove("properties");
    }
    if preserve {
        s.remove("items");
        s.remove("properties");
    }
    let ty = s.get("type").and_then(Value::as_str).unwrap_or_default();
    if (ty == "array" && !s.contains_key("items")) || (preserve && ty == "object") {
        s.remove("type");
    }
    if s.get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        s.remove("required");
    }
}

/// Give an embedded resource's node the `apiVersion`, `kind` and `metadata` properties,
/// the first two required.
fn add_embedded_resource_fields(s: &mut Map<String, Value>) {
    let props = s
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(p) = props.as_object_mut() {
        p.insert(
            "apiVersion".into(),
            json!({"description": EMBEDDED_API_VERSION, "type": "string"}),
        );
        p.insert(
            "kind".into(),
            json!({"description": EMBEDDED_KIND, "type": "string"}),
        );
        p.insert("metadata".into(), metadata_property());
    }
    let req = s
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Some(r) = req.as_array_mut() {
        for k in ["kind", "apiVersion"] {
            if !r.iter().any(|x| x == k) {
                r.push(json!(k));
            }
        }
    }
}

/// Unfold the children of a node: its properties (but an embedded resource's metadata),
/// items, additional properties and junctors.
fn unfold_children(s: &mut Map<String, Value>, form: Form) {
    let embedded_metadata = flag(s, "x-kubernetes-embedded-resource");
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for (k, child) in props.iter_mut() {
            if embedded_metadata && k == "metadata" {
                continue;
            }
            unfold(child, form);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = s.get_mut(key).filter(|c| c.is_object()) {
            unfold(child, form);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(children)) = s.get_mut(key) {
            children.iter_mut().for_each(|c| unfold(c, form));
        }
    }
}

/// The definition of a custom resource kind in one of its versions.
pub(crate) fn kind_definition(info: &ResourceInfo, version: &str, form: Form) -> Value {
    let ext = gvk(&info.group, version, &info.kind);
    let schema = info.schema(version).map(|s| s.as_ref().clone());
    let root_preserves = schema
        .as_ref()
        .and_then(|s| s.get("x-kubernetes-preserve-unknown-fields"))
        .and_then(Value::as_bool)
        == Some(true);
    let Some(mut schema) = schema.filter(|_| !(form == Form::V2 && root_preserves)) else {
        // No schema (or one kubectl's v2 reader would misread): an untyped object.
        return json!({"type": "object", "x-kubernetes-group-version-kind": ext});
    };
    unfold(&mut schema, form);
    if let Some(s) = schema.as_object_mut() {
        let props = s
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(p) = props.as_object_mut() {
            p.insert("metadata".into(), metadata_property());
            p.insert(
                "apiVersion".into(),
                json!({"description": API_VERSION_DESCRIPTION, "type": "string"}),
            );
            p.insert(
                "kind".into(),
                json!({"description": KIND_DESCRIPTION, "type": "string"}),
            );
        }
        s.insert("x-kubernetes-group-version-kind".into(), ext);
    }
    schema
}

/// The `…List` definition of a custom resource kind.
pub(crate) fn list_definition(info: &ResourceInfo, version: &str) -> Value {
    let list_kind = format!("{}List", info.kind);
    let item = definition_name(&info.group, version, &info.kind);
    json!({
        "description": format!("{list_kind} is a list of {}", info.kind),
        "properties": {
            "apiVersion": {"description": API_VERSION_DESCRIPTION, "type": "string"},
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", info.plural),
                "items": {"$ref": format!("{V2_PREFIX}{item}")},
                "type": "array",
            },
            "kind": {"description": KIND_DESCRIPTION, "type": "string"},
            "metadata": {
                "$ref": format!("{V2_PREFIX}{LIST_META}"),
                "description": LIST_METADATA_DESCRIPTION,
            },
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": gvk(&info.group, version, &list_kind),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_reverse_the_group() {
        assert_eq!(
            definition_name("work.open-cluster-management.io", "v1", "ManifestWork"),
            "io.open-cluster-management.work.v1.ManifestWork"
        );
    }

    #[test]
    fn swagger_2_forms_drop_what_kubectl_cannot_read() {
        let mut s = json!({
            "type": "object",
            "required": ["a", "b"],
            "properties": {
                "a": {"type": "string", "nullable": true},
                "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                      "properties": {"c": {"type": "string"}}},
                "d": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
                "e": {"type": "array"},
            }
        });
        unfold(&mut s, Form::V2);
        assert_eq!(
            s,
            json!({
                "type": "object",
                "required": ["b"],
                "properties": {
                    "a": {},
                    "b": {"x-kubernetes-preserve-unknown-fields": true},
                    "d": {"x-kubernetes-int-or-string": true},
                    "e": {},
                }
            })
        );
        let mut s = json!({"type": "object", "properties": {
            "m": {"type": "object", "x-kubernetes-embedded-resource": true},
            "n": {"x-kubernetes-int-or-string": true}}});
        unfold(&mut s, Form::V3);
        assert_eq!(
            s["properties"]["m"]["required"],
            json!(["kind", "apiVersion"])
        );
        assert_eq!(
            s["properties"]["m"]["properties"]["metadata"]["$ref"],
            format!("{V2_PREFIX}{OBJECT_META}")
        );
        assert_eq!(
            s["properties"]["n"]["anyOf"],
            json!([{"type": "integer"}, {"type": "string"}])
        );
    }
}
