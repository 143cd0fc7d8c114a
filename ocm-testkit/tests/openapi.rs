//! `/openapi/v2` and `/openapi/v3`: the documents kubectl reads, checked for what kubectl
//! needs of them: every `$ref` resolves, every definition is one kube-openapi's reader
//! accepts, every served kind (custom resources installed later included) has a schema tagged
//! with its `x-kubernetes-group-version-kind`, and the protobuf form says what the JSON form
//! says (decoded here by a small reader of gnostic's `openapi.v2.Document`).

use std::collections::BTreeSet;

use axum::body::Body;
use http::{Request, StatusCode};
use ocm_testkit::FakeCluster;
use serde_json::{Map, Value, json};
use tower::ServiceExt;

const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

async fn get(
    cluster: &FakeCluster,
    path: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, http::HeaderMap, Vec<u8>) {
    let mut req = Request::builder().method("GET").uri(path);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = cluster
        .router()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, headers, bytes.to_vec())
}

async fn get_json(cluster: &FakeCluster, path: &str) -> Value {
    let (s, _, b) = get(cluster, path, &[("accept", "application/json")]).await;
    assert_eq!(s, StatusCode::OK, "{path}: {}", String::from_utf8_lossy(&b));
    serde_json::from_slice(&b).unwrap()
}

const WIDGETS: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer}
              port: {x-kubernetes-int-or-string: true}
              note: {type: string, nullable: true}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                out.push(r.to_string());
            }
            m.values().for_each(|c| refs(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| refs(c, out)),
        _ => {}
    }
}

/// What kube-openapi's `proto.NewOpenAPIData` refuses in a Swagger 2 schema.
fn check_v2_schema(path: &str, s: &Value, defs: &Map<String, Value>) {
    let m = s
        .as_object()
        .unwrap_or_else(|| panic!("{path}: not an object"));
    if let Some(r) = m.get("$ref").and_then(Value::as_str) {
        assert!(m.get("type").is_none(), "{path}: a reference with a type");
        assert!(
            m.get("properties").is_none(),
            "{path}: a reference with properties"
        );
        let name = r
            .strip_prefix("#/definitions/")
            .unwrap_or_else(|| panic!("{path}: {r}"));
        assert!(defs.contains_key(name), "{path}: {r} does not resolve");
        return;
    }
    let ty = match m.get("type") {
        None => "",
        Some(Value::String(t)) => t.as_str(),
        Some(other) => panic!("{path}: type {other}"),
    };
    match ty {
        "array" => {
            let items = m
                .get("items")
                .unwrap_or_else(|| panic!("{path}: array without items"));
            check_v2_schema(&format!("{path}[]"), items, defs);
        }
        "object" | "" => {
            for (k, p) in m
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                check_v2_schema(&format!("{path}.{k}"), p, defs);
            }
            if let Some(a) = m.get("additionalProperties").filter(|a| a.is_object()) {
                check_v2_schema(&format!("{path}{{}}"), a, defs);
            }
        }
        "string" | "integer" | "number" | "boolean" => {}
        other => panic!("{path}: unknown type {other}"),
    }
}

fn gvk_of(def: &Value) -> Vec<(String, String, String)> {
    def.get("x-kubernetes-group-version-kind")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|g| {
            (
                g["group"].as_str().unwrap_or_default().to_string(),
                g["version"].as_str().unwrap_or_default().to_string(),
                g["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn swagger_2_covers_every_kind_and_custom_resources_installed_later() {
    let cluster = FakeCluster::new();
    let (s, h, before) = get(&cluster, "/openapi/v2", &[("accept", "application/json")]).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(h["content-type"], "application/json");
    let etag = h["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");

    cluster.apply_yaml(WIDGETS).unwrap();
    let doc = get_json(&cluster, "/openapi/v2").await;
    let (_, h2, after) = get(&cluster, "/openapi/v2", &[("accept", "application/json")]).await;
    assert_ne!(before, after, "the document follows the CRDs");
    assert_ne!(h2["etag"].to_str().unwrap(), etag);

    let defs = doc["definitions"].as_object().unwrap();
    for (name, def) in defs {
        check_v2_schema(name, def, defs);
    }
    let mut all = Vec::new();
    refs(&doc, &mut all);
    for r in all {
        let name = r
            .strip_prefix("#/definitions/")
            .unwrap_or_else(|| panic!("{r}"));
        assert!(defs.contains_key(name), "{r} does not resolve");
    }
    // Every served kind has a definition tagged with its GVK, and its paths carry the GVK and
    // the fieldValidation parameter on PATCH.
    let kinds: BTreeSet<(String, String, String)> = defs.values().flat_map(gvk_of).collect();
    let resources = cluster.store().registry();
    for info in resources.iter() {
        for v in &info.versions {
            let gvk = (info.group.clone(), v.clone(), info.kind.clone());
            assert!(kinds.contains(&gvk), "no definition for {gvk:?}");
        }
    }
    let widget = &defs["com.example.v1.Widget"];
    assert_eq!(
        widget["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    // Swagger 2 drops what kubectl's reader cannot take: nullable and unknown-preserving
    // fields lose their types, int-or-string its alternatives.
    let spec = &widget["properties"]["spec"];
    assert_eq!(spec["required"], json!(["size"]));
    assert_eq!(spec["properties"]["note"], json!({}));
    assert_eq!(
        spec["properties"]["extra"],
        json!({"x-kubernetes-preserve-unknown-fields": true})
    );
    assert!(defs.contains_key("com.example.v1.WidgetList"));
    let patch =
        &doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"],
        json!({"group": "example.com", "kind": "Widget", "version": "v1"})
    );
    assert!(
        patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
    );
    assert!(
        !patch["consumes"]
            .as_array()
            .unwrap()
            .contains(&json!("application/strategic-merge-patch+json")),
        "custom resources take no strategic merge patch"
    );
    let deployment_patch =
        &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert!(
        deployment_patch["consumes"]
            .as_array()
            .unwrap()
            .contains(&json!("application/strategic-merge-patch+json"))
    );
}

#[tokio::test]
async fn negotiation_entity_tags_and_not_acceptable() {
    let cluster = FakeCluster::new();
    let (s, h, body) = get(&cluster, "/openapi/v2", &[("accept", PROTOBUF)]).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        h["content-type"],
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    );
    assert!(!body.is_empty());
    let etag = h["etag"].to_str().unwrap().to_string();
    let (s, h, body) = get(
        &cluster,
        "/openapi/v2",
        &[("accept", PROTOBUF), ("if-none-match", &etag)],
    )
    .await;
    assert_eq!(s, StatusCode::NOT_MODIFIED);
    assert!(body.is_empty());
    assert_eq!(h["etag"].to_str().unwrap(), etag);
    // No Accept header: JSON, as kube-apiserver reads it as */*.
    let (s, h, _) = get(&cluster, "/openapi/v2", &[]).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(h["content-type"], "application/json");
    assert_eq!(h["vary"], "Accept");
    let (s, _, _) = get(&cluster, "/openapi/v2", &[("accept", "text/html")]).await;
    assert_eq!(s, StatusCode::NOT_ACCEPTABLE);
    let (s, _, _) = get(
        &cluster,
        "/openapi/v3/apis/apps/v1",
        &[(
            "accept",
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
        )],
    )
    .await;
    assert_eq!(s, StatusCode::NOT_ACCEPTABLE);
    let (s, _, _) = get(&cluster, "/openapi/v3/apis/nothing.example/v1", &[]).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn openapi_3_documents_hold_real_schemas_and_hashed_urls() {
    let cluster = FakeCluster::new();
    cluster.apply_yaml(WIDGETS).unwrap();
    let root = get_json(&cluster, "/openapi/v3").await;
    let url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_string();
    let hash = url.split_once("?hash=").unwrap().1.to_string();
    let (s, h, body) = get(&cluster, &url, &[("accept", "application/json")]).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(h["cache-control"], "public, immutable");
    assert_eq!(h["etag"].to_str().unwrap(), format!("\"{hash}\""));
    let doc: Value = serde_json::from_slice(&body).unwrap();
    // A stale hash is redirected to the current one.
    let (s, h, _) = get(&cluster, "/openapi/v3/apis/apps/v1?hash=STALE", &[]).await;
    assert_eq!(s, StatusCode::MOVED_PERMANENTLY);
    assert_eq!(h["location"].to_str().unwrap(), url);

    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let mut all = Vec::new();
    refs(&doc, &mut all);
    for r in all {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{r}"));
        assert!(schemas.contains_key(name), "{r} does not resolve");
    }
    let spec = &schemas["io.k8s.api.apps.v1.DeploymentSpec"];
    assert_eq!(
        spec["properties"]["selector"]["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"}])
    );
    assert!(
        spec["properties"]["selector"]["description"]
            .as_str()
            .unwrap()
            .starts_with("Label selector for pods.")
    );
    assert_eq!(
        schemas["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert!(
        patch["requestBody"]["content"]
            .get("application/strategic-merge-patch+json")
            .is_some()
    );
    assert!(
        patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
    );

    // Custom resources keep their schema as written, unfolded.
    let widgets = get_json(&cluster, "/openapi/v3/apis/example.com/v1").await;
    let widget = &widgets["components"]["schemas"]["com.example.v1.Widget"];
    assert_eq!(
        widget["x-kubernetes-group-version-kind"],
        json!([{"group": "example.com", "kind": "Widget", "version": "v1"}])
    );
    assert_eq!(
        widget["properties"]["spec"]["properties"]["note"]["nullable"],
        true
    );
    assert_eq!(
        widget["properties"]["spec"]["properties"]["port"]["anyOf"],
        json!([{"type": "integer"}, {"type": "string"}])
    );
    assert_eq!(
        widget["properties"]["metadata"]["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}])
    );
    assert!(
        widgets["components"]["schemas"]
            .get("io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry")
            .is_some()
    );
    assert!(
        widgets["paths"]
            .get("/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status")
            .is_some()
    );
}

// A reader of gnostic's `openapi.v2.Document`, independent of the writer: the protobuf
// document must read back as the JSON document.

#[derive(Debug)]
enum Wire<'a> {
    Varint(u64),
    Fixed64,
    Bytes(&'a [u8]),
}

fn fields(mut b: &[u8]) -> Vec<(u64, Wire<'_>)> {
    fn varint(b: &mut &[u8]) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let byte = b[0];
            *b = &b[1..];
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return v;
            }
            shift += 7;
        }
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = varint(&mut b);
        let wire = match key & 7 {
            0 => Wire::Varint(varint(&mut b)),
            1 => {
                b = &b[8..];
                Wire::Fixed64
            }
            2 => {
                let n = varint(&mut b) as usize;
                let (v, rest) = b.split_at(n);
                b = rest;
                Wire::Bytes(v)
            }
            w => panic!("wire type {w}"),
        };
        out.push((key >> 3, wire));
    }
    out
}

fn bytes<'a>(w: &Wire<'a>) -> &'a [u8] {
    match w {
        Wire::Bytes(b) => b,
        other => panic!("expected bytes, got {other:?}"),
    }
}

fn text(w: &Wire<'_>) -> Value {
    json!(std::str::from_utf8(bytes(w)).unwrap())
}

fn any(w: &Wire<'_>) -> Value {
    let yaml = fields(bytes(w))
        .into_iter()
        .find(|(f, _)| *f == 2)
        .map(|(_, w)| text(&w))
        .unwrap();
    serde_json::from_str(yaml.as_str().unwrap()).unwrap()
}

fn named_any(w: &Wire<'_>) -> (String, Value) {
    let mut name = String::new();
    let mut value = Value::Null;
    for (f, w) in fields(bytes(w)) {
        match f {
            1 => name = text(&w).as_str().unwrap().to_string(),
            2 => value = any(&w),
            _ => {}
        }
    }
    (name, value)
}

/// Decode `{name = 1, value = 2}` pairs of a map message.
fn pairs(w: &Wire<'_>, value: fn(&Wire<'_>) -> Value) -> Value {
    let mut out = Map::new();
    for (_, pair) in fields(bytes(w)) {
        let mut name = String::new();
        let mut v = Value::Null;
        for (f, w) in fields(bytes(&pair)) {
            match f {
                1 => name = text(&w).as_str().unwrap().to_string(),
                2 => v = value(&w),
                _ => {}
            }
        }
        out.insert(name, v);
    }
    Value::Object(out)
}

fn push(out: &mut Map<String, Value>, key: &str, v: Value) {
    match out.get_mut(key) {
        Some(Value::Array(a)) => a.push(v),
        _ => {
            out.insert(key.into(), json!([v]));
        }
    }
}

fn schema(w: &Wire<'_>) -> Value {
    let mut out = Map::new();
    for (f, w) in fields(bytes(w)) {
        match f {
            1 => {
                out.insert("$ref".into(), text(&w));
            }
            2 => {
                out.insert("format".into(), text(&w));
            }
            4 => {
                out.insert("description".into(), text(&w));
            }
            5 => {
                out.insert("default".into(), any(&w));
            }
            19 => push(&mut out, "required", text(&w)),
            20 => push(&mut out, "enum", any(&w)),
            21 => {
                let (f, inner) = fields(bytes(&w)).into_iter().next().unwrap();
                let v = match (f, inner) {
                    (1, s) => schema(&s),
                    (2, Wire::Varint(b)) => json!(b != 0),
                    other => panic!("{other:?}"),
                };
                out.insert("additionalProperties".into(), v);
            }
            22 => {
                let types: Vec<Value> = fields(bytes(&w)).iter().map(|(_, t)| text(t)).collect();
                out.insert(
                    "type".into(),
                    if types.len() == 1 {
                        types[0].clone()
                    } else {
                        json!(types)
                    },
                );
            }
            23 => {
                let items: Vec<Value> = fields(bytes(&w)).iter().map(|(_, s)| schema(s)).collect();
                out.insert("items".into(), items[0].clone());
            }
            24 => push(&mut out, "allOf", schema(&w)),
            25 => {
                out.insert("properties".into(), pairs(&w, schema));
            }
            31 => {
                let (k, v) = named_any(&w);
                out.insert(k, v);
            }
            other => panic!("schema field {other} not expected"),
        }
    }
    Value::Object(out)
}

fn parameter(w: &Wire<'_>) -> Value {
    let (f, inner) = fields(bytes(w)).into_iter().next().unwrap();
    match f {
        2 => {
            let r = fields(bytes(&inner))
                .into_iter()
                .find(|(f, _)| *f == 1)
                .unwrap();
            json!({"$ref": text(&r.1)})
        }
        1 => {
            let (kind, p) = fields(bytes(&inner)).into_iter().next().unwrap();
            let mut out = Map::new();
            if kind == 1 {
                for (f, w) in fields(bytes(&p)) {
                    let (k, v) = match f {
                        1 => ("description", text(&w)),
                        2 => ("name", text(&w)),
                        3 => ("in", text(&w)),
                        4 => ("required", json!(true)),
                        5 => ("schema", schema(&w)),
                        other => panic!("body parameter field {other}"),
                    };
                    out.insert(k.into(), v);
                }
            } else {
                let (which, sub) = fields(bytes(&p)).into_iter().next().unwrap();
                let shift = u64::from(which == 2 || which == 3);
                for (f, w) in fields(bytes(&sub)) {
                    let (k, v) = match f {
                        1 => ("required", json!(true)),
                        2 => ("in", text(&w)),
                        3 => ("description", text(&w)),
                        4 => ("name", text(&w)),
                        f if f == 5 + shift => ("type", text(&w)),
                        f if f == 19 + shift => ("uniqueItems", json!(true)),
                        other => panic!("parameter field {other}"),
                    };
                    out.insert(k.into(), v);
                }
            }
            Value::Object(out)
        }
        other => panic!("parameters item {other}"),
    }
}

fn operation(w: &Wire<'_>) -> Value {
    let mut out = Map::new();
    for (f, w) in fields(bytes(w)) {
        match f {
            1 => push(&mut out, "tags", text(&w)),
            3 => {
                out.insert("description".into(), text(&w));
            }
            5 => {
                out.insert("operationId".into(), text(&w));
            }
            6 => push(&mut out, "produces", text(&w)),
            7 => push(&mut out, "consumes", text(&w)),
            8 => push(&mut out, "parameters", parameter(&w)),
            9 => {
                let mut responses = Map::new();
                for (f, r) in fields(bytes(&w)) {
                    assert_eq!(f, 1);
                    let mut code = String::new();
                    let mut value = Map::new();
                    for (f, w) in fields(bytes(&r)) {
                        match f {
                            1 => code = text(&w).as_str().unwrap().to_string(),
                            2 => {
                                let (kind, resp) = fields(bytes(&w)).into_iter().next().unwrap();
                                assert_eq!(kind, 1);
                                for (f, w) in fields(bytes(&resp)) {
                                    match f {
                                        1 => {
                                            value.insert("description".into(), text(&w));
                                        }
                                        2 => {
                                            let (_, s) =
                                                fields(bytes(&w)).into_iter().next().unwrap();
                                            value.insert("schema".into(), schema(&s));
                                        }
                                        other => panic!("response field {other}"),
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                    responses.insert(code, Value::Object(value));
                }
                out.insert("responses".into(), Value::Object(responses));
            }
            10 => push(&mut out, "schemes", text(&w)),
            13 => {
                let (k, v) = named_any(&w);
                out.insert(k, v);
            }
            other => panic!("operation field {other}"),
        }
    }
    Value::Object(out)
}

fn path_item(w: &Wire<'_>) -> Value {
    let mut out = Map::new();
    for (f, w) in fields(bytes(w)) {
        let key = match f {
            2 => "get",
            3 => "put",
            4 => "post",
            5 => "delete",
            8 => "patch",
            9 => {
                push(&mut out, "parameters", parameter(&w));
                continue;
            }
            other => panic!("path item field {other}"),
        };
        out.insert(key.into(), operation(&w));
    }
    Value::Object(out)
}

fn document(b: &[u8]) -> Value {
    let mut out = Map::new();
    for (f, w) in fields(b) {
        match f {
            1 => {
                out.insert("swagger".into(), text(&w));
            }
            2 => {
                let mut info = Map::new();
                for (f, w) in fields(bytes(&w)) {
                    match f {
                        1 => info.insert("title".into(), text(&w)),
                        2 => info.insert("version".into(), text(&w)),
                        other => panic!("info field {other}"),
                    };
                }
                out.insert("info".into(), Value::Object(info));
            }
            8 => {
                let mut paths = Map::new();
                for (f, w) in fields(bytes(&w)) {
                    assert_eq!(f, 2);
                    let mut name = String::new();
                    let mut item = Value::Null;
                    for (f, w) in fields(bytes(&w)) {
                        match f {
                            1 => name = text(&w).as_str().unwrap().to_string(),
                            2 => item = path_item(&w),
                            _ => {}
                        }
                    }
                    paths.insert(name, item);
                }
                out.insert("paths".into(), Value::Object(paths));
            }
            9 => {
                out.insert("definitions".into(), pairs(&w, schema));
            }
            12 => {
                let mut req = Map::new();
                for (_, pair) in fields(bytes(&w)) {
                    let mut name = String::new();
                    let mut scopes = Vec::new();
                    for (f, w) in fields(bytes(&pair)) {
                        match f {
                            1 => name = text(&w).as_str().unwrap().to_string(),
                            2 => scopes = fields(bytes(&w)).iter().map(|(_, s)| text(s)).collect(),
                            _ => {}
                        }
                    }
                    req.insert(name, json!(scopes));
                }
                push(&mut out, "security", Value::Object(req));
            }
            13 => {
                let sec = pairs(&w, |w| {
                    let (kind, s) = fields(bytes(w)).into_iter().next().unwrap();
                    assert_eq!(kind, 2, "apiKey");
                    let mut out = Map::new();
                    for (f, w) in fields(bytes(&s)) {
                        let key = ["", "type", "name", "in", "description"][f as usize];
                        out.insert(key.into(), text(&w));
                    }
                    Value::Object(out)
                });
                out.insert("securityDefinitions".into(), sec);
            }
            other => panic!("document field {other}"),
        }
    }
    Value::Object(out)
}

/// Leave out what proto3 does not carry: `false` and `0` scalars.
fn without_zero_values(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, v)| {
                    !(matches!(k.as_str(), "required" | "uniqueItems") && **v == json!(false))
                })
                .map(|(k, v)| (k.clone(), without_zero_values(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_zero_values).collect()),
        other => other.clone(),
    }
}

#[tokio::test]
async fn the_protobuf_document_reads_back_as_the_json_document() {
    let cluster = FakeCluster::new();
    cluster.apply_yaml(WIDGETS).unwrap();
    let json_doc = get_json(&cluster, "/openapi/v2").await;
    let (s, _, proto) = get(&cluster, "/openapi/v2", &[("accept", PROTOBUF)]).await;
    assert_eq!(s, StatusCode::OK);
    let decoded = document(&proto);
    let expected = without_zero_values(&json_doc);
    for key in ["swagger", "info", "security", "securityDefinitions"] {
        assert_eq!(decoded[key], expected[key], "{key}");
    }
    let (d, e) = (&decoded["definitions"], &expected["definitions"]);
    for (name, def) in e.as_object().unwrap() {
        assert_eq!(&d[name], def, "definition {name}");
    }
    assert_eq!(d, e);
    assert_eq!(decoded["paths"], expected["paths"]);
}
