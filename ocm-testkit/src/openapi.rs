//! `/openapi/v3` documents: enough for kubectl's client-side checks.
//!
//! Every served kind gets a schema tagged with `x-kubernetes-group-version-kind`
//! (the CRD's own schema for custom resources, an open object for built-ins),
//! and every resource path advertises the `fieldValidation` parameter so kubectl
//! leaves validation to the server.

use serde_json::{Map, Value, json};

use crate::registry::Registry;

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// The `/openapi/v3` index.
pub(crate) fn root(reg: &Registry) -> Value {
    let mut paths = Map::new();
    for (g, vs) in reg.groups() {
        for v in vs {
            let p = gv_path(&g, &v);
            paths.insert(
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash=0")}),
            );
        }
    }
    json!({"paths": paths})
}

/// The document of one group-version, addressed as `api/v1` or `apis/{g}/{v}`.
pub(crate) fn group_version(reg: &Registry, gv: &str) -> Option<Value> {
    let (group, version) = match gv.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => (String::new(), v.to_string()),
        ["apis", g, v] => (g.to_string(), v.to_string()),
        _ => return None,
    };
    let mut schemas = Map::new();
    let mut paths = Map::new();
    let mut any = false;
    for info in reg
        .iter()
        .filter(|i| i.group == group && i.versions.contains(&version))
    {
        any = true;
        let schema_name = format!(
            "{}.{}.{}",
            if group.is_empty() {
                "io.k8s.api.core"
            } else {
                group.as_str()
            },
            version,
            info.kind
        );
        let mut schema = match info.schema(&version) {
            Some(s) => s.as_ref().clone(),
            None => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        };
        if let Some(m) = schema.as_object_mut() {
            m.insert(
                "x-kubernetes-group-version-kind".into(),
                json!([{"group": group, "version": version, "kind": info.kind}]),
            );
        }
        schemas.insert(schema_name.clone(), schema);
        let params = json!([
            {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
        ]);
        let op = |verb: &str| {
            json!({
                "operationId": format!("{verb}{}", info.kind),
                "parameters": params,
                "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema_name}")}}}}},
                "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": info.kind},
            })
        };
        let base = if info.namespaced {
            format!(
                "/{}/namespaces/{{namespace}}/{}",
                gv_path(&group, &version),
                info.plural
            )
        } else {
            format!("/{}/{}", gv_path(&group, &version), info.plural)
        };
        paths.insert(base.clone(), json!({"post": op("create")}));
        paths.insert(
            format!("{base}/{{name}}"),
            json!({"get": op("read"), "put": op("replace"), "patch": op("patch"), "delete": op("delete")}),
        );
    }
    any.then(|| {
        json!({
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "v1.33.0"},
            "paths": paths,
            "components": {"schemas": schemas},
        })
    })
}
