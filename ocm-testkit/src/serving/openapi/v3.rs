//! The OpenAPI 3.0 documents of `/openapi/v3/…`, one per group version.
//!
//! A group version's document holds its resources' paths and, in `components.schemas`, the
//! schema of every kind it serves and of everything those schemas refer to. Schemas are the
//! Swagger 2 definitions turned into OpenAPI 3 as kube-apiserver turns them: references point
//! into `#/components/schemas/` and a reference with a description beside it becomes an
//! `allOf` of the one reference (OpenAPI 3.0 ignores the siblings of a `$ref`); `IntOrString`
//! and `Quantity` are `oneOf` their forms. Operations take their body as a `requestBody`
//! (PATCH in each patch media type the resource accepts) and answer in JSON, YAML and
//! protobuf.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::crd::Form;
use super::definitions::{DELETE_OPTIONS, PATCH, SCALE, STATUS, V2_PREFIX, builtins};
use super::paths::resource_paths;
use super::v2::kind_definitions;
use crate::storage::registry::Registry;

/// Where OpenAPI 3 documents keep their schemas.
pub(crate) const V3_PREFIX: &str = "#/components/schemas/";

/// The key of a group version in `/openapi/v3` (`api/v1`, `apis/apps/v1`).
pub(crate) fn gv_key(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// Every group version the registry serves, as `(key, group, version)`.
pub(crate) fn group_versions(reg: &Registry) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (group, versions) in reg.groups() {
        for v in versions {
            out.push((gv_key(&group, &v), group.clone(), v));
        }
    }
    out
}

/// A schema (and its children) in OpenAPI 3 form.
pub(crate) fn schema(v: &Value) -> Value {
    ocm_api::k8s::json::descend(|| match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                let target = match r.strip_prefix(V2_PREFIX) {
                    Some(name) => format!("{V3_PREFIX}{name}"),
                    None => r.to_string(),
                };
                if m.len() == 1 {
                    return json!({"$ref": target});
                }
                let mut out = Map::new();
                out.insert("allOf".into(), json!([{"$ref": target}]));
                for (k, child) in m.iter().filter(|(k, _)| *k != "$ref") {
                    out.insert(k.clone(), schema(child));
                }
                return Value::Object(out);
            }
            Value::Object(
                m.iter()
                    .map(|(k, c)| (k.clone(), schema_child(k, c)))
                    .collect(),
            )
        }
        other => other.clone(),
    })
}

/// Children of a schema keyword: schemas under schema keywords, values (`default`, `enum`,
/// `example`, extensions) as they are.
fn schema_child(key: &str, v: &Value) -> Value {
    match key {
        "properties" | "patternProperties" | "definitions" => match v {
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, c)| (k.clone(), schema(c))).collect())
            }
            other => other.clone(),
        },
        "items" | "additionalProperties" | "not" => schema(v),
        "allOf" | "anyOf" | "oneOf" => match v {
            Value::Array(a) => Value::Array(a.iter().map(schema).collect()),
            other => other.clone(),
        },
        _ => v.clone(),
    }
}

/// A definition in OpenAPI 3 form, with kube-apiserver's forms of the special types.
fn definition(name: &str, v: &Value) -> Value {
    let mut out = schema(v);
    let special = match name {
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => {
            Some(json!([{"type": "integer"}, {"type": "string"}]))
        }
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => {
            Some(json!([{"type": "string"}, {"type": "number"}]))
        }
        _ => None,
    };
    if let (Some(one_of), Some(m)) = (special, out.as_object_mut()) {
        m.remove("type");
        m.insert("oneOf".into(), one_of);
    }
    out
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(name) = m
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(V2_PREFIX))
            {
                out.push(name.to_string());
            }
            m.values().for_each(|c| collect_refs(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| collect_refs(c, out)),
        _ => {}
    }
}

const MEDIA_TYPES: [&str; 3] = [
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// An operation in OpenAPI 3 form.
fn operation(op: &Value) -> Value {
    let Some(m) = op.as_object() else {
        return op.clone();
    };
    let mut out = Map::new();
    let consumes: Vec<&str> = m
        .get("consumes")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (k, v) in m {
        match k.as_str() {
            "consumes" | "produces" | "schemes" => {}
            "parameters" => {
                let mut parameters = Vec::new();
                for p in v.as_array().into_iter().flatten() {
                    if p.get("in").and_then(Value::as_str) == Some("body") {
                        let body_schema = schema(&p["schema"]);
                        let mut content = Map::new();
                        for media in &consumes {
                            content.insert((*media).to_string(), json!({"schema": body_schema}));
                        }
                        let mut body = json!({"content": content});
                        if p.get("required").and_then(Value::as_bool) == Some(true) {
                            body["required"] = json!(true);
                        }
                        out.insert("requestBody".into(), body);
                    } else {
                        parameters.push(parameter(p));
                    }
                }
                if !parameters.is_empty() {
                    out.insert("parameters".into(), Value::Array(parameters));
                }
            }
            "responses" => {
                let mut responses = Map::new();
                for (code, r) in v.as_object().into_iter().flatten() {
                    let mut resp =
                        json!({"description": r.get("description").cloned().unwrap_or_default()});
                    if let Some(s) = r.get("schema") {
                        let s = schema(s);
                        let content: Map<String, Value> = MEDIA_TYPES
                            .iter()
                            .map(|t| ((*t).to_string(), json!({"schema": s})))
                            .collect();
                        resp["content"] = Value::Object(content);
                    }
                    responses.insert(code.clone(), resp);
                }
                out.insert("responses".into(), Value::Object(responses));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// A non-body parameter in OpenAPI 3 form: its type moves into `schema`.
fn parameter(p: &Value) -> Value {
    let Some(m) = p.as_object() else {
        return p.clone();
    };
    let mut out = Map::new();
    let mut s = Map::new();
    for (k, v) in m {
        match k.as_str() {
            "type" | "uniqueItems" | "format" => {
                s.insert(k.clone(), v.clone());
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out.insert("schema".into(), Value::Object(s));
    Value::Object(out)
}

fn path_item(item: &Value) -> Value {
    let Some(m) = item.as_object() else {
        return item.clone();
    };
    Value::Object(
        m.iter()
            .map(|(k, v)| {
                let converted = match k.as_str() {
                    "parameters" => {
                        Value::Array(v.as_array().into_iter().flatten().map(parameter).collect())
                    }
                    _ => operation(v),
                };
                (k.clone(), converted)
            })
            .collect(),
    )
}

/// The document of one group version, or `None` if the registry serves nothing there.
pub(crate) fn document(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    // Custom resources' definitions; the built-in ones are shared.
    let mut custom = Map::new();
    let mut v2_paths = Map::new();
    let mut roots: BTreeSet<String> = BTreeSet::new();
    for info in reg
        .iter()
        .filter(|i| i.group == group && i.versions.iter().any(|v| v == version))
    {
        let (kind, list) = kind_definitions(info, version, Form::V3, &mut custom);
        resource_paths(info, version, &kind, list.as_deref(), &mut v2_paths);
        roots.insert(kind);
        roots.extend(list);
        if info.scale.is_some() {
            roots.insert(SCALE.to_string());
        }
    }
    if roots.is_empty() {
        return None;
    }
    for r in [STATUS, DELETE_OPTIONS, PATCH] {
        roots.insert(r.to_string());
    }
    // Everything the roots refer to, transitively.
    let mut wanted: Vec<String> = roots.into_iter().collect();
    let mut schemas = Map::new();
    while let Some(name) = wanted.pop() {
        if schemas.contains_key(&name) {
            continue;
        }
        let Some(def) = custom
            .get(&name)
            .or_else(|| builtins().definitions.get(&name))
        else {
            continue;
        };
        let mut refs = Vec::new();
        collect_refs(def, &mut refs);
        schemas.insert(name.clone(), definition(&name, def));
        wanted.extend(refs.into_iter().filter(|r| !schemas.contains_key(r)));
    }
    let paths: Map<String, Value> = v2_paths
        .iter()
        .map(|(p, item)| (p.clone(), path_item(item)))
        .collect();
    Some(json!({
        "components": {"schemas": schemas},
        "info": {"title": "Kubernetes", "version": crate::serving::discovery::version()["gitVersion"]},
        "openapi": "3.0.0",
        "paths": paths,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_with_siblings_become_all_of() {
        assert_eq!(
            schema(&json!({"$ref": "#/definitions/A", "description": "d"})),
            json!({"allOf": [{"$ref": "#/components/schemas/A"}], "description": "d"})
        );
        assert_eq!(
            schema(
                &json!({"type": "array", "items": {"$ref": "#/definitions/A"}, "default": {"$ref": "x"}})
            ),
            json!({"type": "array", "items": {"$ref": "#/components/schemas/A"}, "default": {"$ref": "x"}})
        );
    }

    #[test]
    fn operations_take_request_bodies_in_each_media_type() {
        let op = json!({
            "consumes": ["application/json-patch+json", "application/strategic-merge-patch+json"],
            "parameters": [
                {"in": "body", "name": "body", "required": true, "schema": {"$ref": "#/definitions/P"}},
                {"in": "query", "name": "fieldValidation", "type": "string", "uniqueItems": true},
            ],
            "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/D"}}},
            "x-kubernetes-action": "patch",
        });
        let v3 = operation(&op);
        assert_eq!(
            v3["requestBody"]["content"]["application/strategic-merge-patch+json"]["schema"]["$ref"],
            "#/components/schemas/P"
        );
        assert_eq!(v3["parameters"][0]["schema"]["type"], "string");
        assert_eq!(v3["parameters"][0]["in"], "query");
        assert_eq!(
            v3["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/D"
        );
        assert!(v3.get("consumes").is_none());
    }
}
