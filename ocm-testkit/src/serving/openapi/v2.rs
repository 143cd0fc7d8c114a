//! The Swagger 2.0 document of `/openapi/v2`: every built-in kind and every served version of
//! every custom resource, with their paths.

use serde_json::{Map, Value, json};

use super::crd::{self, Form};
use super::definitions::builtins;
use super::paths::resource_paths;
use crate::storage::registry::{Registry, ResourceInfo};

/// The definition names of a resource version's kind and list kind, adding custom resources'
/// definitions (in `form`) to `definitions` on the way. A built-in kind without a schema of
/// its own gets an untyped object.
pub(crate) fn kind_definitions(
    info: &ResourceInfo,
    version: &str,
    form: Form,
    definitions: &mut Map<String, Value>,
) -> (String, Option<String>) {
    if info.crd_name.is_some() {
        let name = crd::definition_name(&info.group, version, &info.kind);
        definitions.insert(name.clone(), crd::kind_definition(info, version, form));
        let list = format!("{name}List");
        definitions.insert(list.clone(), crd::list_definition(info, version));
        return (name, Some(list));
    }
    let b = builtins();
    if let Some(name) = b.kind(&info.group, version, &info.kind) {
        let list = b
            .kind(&info.group, version, &format!("{}List", info.kind))
            .map(str::to_string);
        return (name.to_string(), list);
    }
    let name = crd::definition_name(&info.group, version, &info.kind);
    definitions.insert(
        name.clone(),
        json!({"type": "object", "x-kubernetes-group-version-kind": super::definitions::gvk(&info.group, version, &info.kind)}),
    );
    (name, None)
}

/// The whole document.
pub(crate) fn document(reg: &Registry) -> Value {
    let mut definitions = builtins().definitions.clone();
    let mut paths = Map::new();
    for info in reg.iter() {
        for version in &info.versions {
            let (kind, list) = kind_definitions(info, version, Form::V2, &mut definitions);
            resource_paths(info, version, &kind, list.as_deref(), &mut paths);
        }
    }
    json!({
        "definitions": definitions,
        "info": {"title": "Kubernetes", "version": crate::serving::discovery::version()["gitVersion"]},
        "paths": paths,
        "security": [{"BearerToken": []}],
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "in": "header",
                "name": "authorization",
                "type": "apiKey",
            }
        },
        "swagger": "2.0",
    })
}
