//! Malformed and hostile requests, answered as kube-apiserver answers them.
//!
//! One table: each case is a raw HTTP request against the fake hub and the status code and
//! message kube-apiserver gives for it (the source of each message is named in the crate's
//! `decode` module and in `ocm_testkit::http`). With `OCM_MALFORMED_REPORT=1` every case's
//! answer is printed (`case | status | message`) before the assertions run, which is how the
//! before/after figures of the change were taken.

use axum::body::Body;
use http::Request;
use ocm_testkit::FakeHub;
use serde_json::{Value, json};
use tower::ServiceExt;

const CM: &str = "/api/v1/namespaces/default/configmaps";
const MW: &str = "/apis/work.open-cluster-management.io/v1/namespaces/cluster1/manifestworks";
const DEPLOY: &str = "/apis/apps/v1/namespaces/default/deployments";

/// What a case expects: a status code and either the exact message or a part of it.
enum Want {
    Exact(u16, &'static str),
    Contains(u16, &'static str),
}

struct Case {
    name: &'static str,
    method: &'static str,
    path: String,
    content_type: &'static str,
    body: Vec<u8>,
    want: Want,
}

fn case(
    name: &'static str,
    method: &'static str,
    path: impl Into<String>,
    content_type: &'static str,
    body: impl Into<Vec<u8>>,
    want: Want,
) -> Case {
    Case {
        name,
        method,
        path: path.into(),
        content_type,
        body: body.into(),
        want,
    }
}

fn json_body(v: Value) -> Vec<u8> {
    serde_json::to_vec(&v).unwrap()
}

async fn send(hub: &FakeHub, c: &Case) -> (u16, String) {
    let mut req = Request::builder().method(c.method).uri(&c.path);
    if !c.content_type.is_empty() {
        req = req.header("content-type", c.content_type);
    }
    let resp = hub
        .hub()
        .router()
        .oneshot(req.body(Body::from(c.body.clone())).unwrap())
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let message = v["message"].as_str().unwrap_or_default().to_string();
    (status, message)
}

fn cm(extra: Value) -> Vec<u8> {
    let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    if let (Some(m), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            m.insert(k.clone(), x.clone());
        }
    }
    json_body(v)
}

fn mw(meta: Value, drop: &[&str]) -> Vec<u8> {
    let mut v = json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": meta, "spec": {"workload": {"manifests": []}}
    });
    for d in drop {
        v.as_object_mut().unwrap().remove(*d);
    }
    json_body(v)
}

fn decoding_cases() -> Vec<Case> {
    use Want::*;
    let no_kind_mw = br#"{"apiVersion":"work.open-cluster-management.io/v1","metadata":{"name":"nokind"},"spec":{}}"#;
    vec![
        // Built-in kinds: kube-apiserver's JSON serializer defaults a missing kind and
        // apiVersion from the endpoint (gvkWithDefaults), so these are created.
        case(
            "builtin without kind",
            "POST",
            CM,
            "application/json",
            json_body(json!({"apiVersion": "v1", "metadata": {"name": "nokind"}})),
            Exact(201, ""),
        ),
        case(
            "builtin without apiVersion",
            "POST",
            CM,
            "application/json",
            json_body(json!({"kind": "ConfigMap", "metadata": {"name": "noversion"}})),
            Exact(201, ""),
        ),
        case(
            "builtin with another version",
            "POST",
            CM,
            "application/json",
            json_body(json!({"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "a"}})),
            Exact(
                400,
                "ConfigMap in version \"v2\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"v2\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
            ),
        ),
        case(
            "builtin with another group",
            "POST",
            CM,
            "application/json",
            json_body(
                json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
            ),
            Exact(
                400,
                "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"apps/v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
            ),
        ),
        case(
            "builtin with another kind",
            "POST",
            CM,
            "application/json",
            json_body(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"}}),
            ),
            Exact(
                400,
                "Deployment in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion",
            ),
        ),
        case(
            "kind of the wrong type",
            "POST",
            CM,
            "application/json",
            br#"{"kind":1,"metadata":{"name":"a"}}"#.to_vec(),
            Exact(
                400,
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({\"kind\":1,\"metadata\":{\"name\":\" ...)",
            ),
        ),
        case(
            "data {\"a\": 1}",
            "POST",
            CM,
            "application/json",
            cm(json!({"data": {"a": 1}})),
            Exact(
                400,
                "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
            ),
        ),
        case(
            "data [1]",
            "POST",
            CM,
            "application/json",
            cm(json!({"data": [1]})),
            Exact(
                400,
                "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string",
            ),
        ),
        case(
            "integer label value on a built-in kind",
            "POST",
            CM,
            "application/json",
            json_body(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "l", "labels": {"a": 1}}}),
            ),
            Exact(
                400,
                "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
            ),
        ),
        case(
            "replicas as a string",
            "POST",
            DEPLOY,
            "application/json",
            json_body(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": "3"}}),
            ),
            Exact(
                400,
                "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
        ),
        case(
            "secret data not base64",
            "POST",
            "/api/v1/namespaces/default/secrets",
            "application/json",
            json_body(
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "not base64!"}}),
            ),
            Exact(
                400,
                "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3",
            ),
        ),
        case(
            "PUT with data {\"a\": 1}",
            "PUT",
            format!("{CM}/existing"),
            "application/json",
            json_body(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "existing"}, "data": {"a": 1}}),
            ),
            Exact(
                400,
                "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
            ),
        ),
        // Custom resources are decoded as unstructured objects: kind is required, apiVersion
        // must be the endpoint's, metadata must decode as ObjectMeta.
        case(
            "custom resource with an integer label value",
            "POST",
            MW,
            "application/json",
            mw(json!({"name": "w", "labels": {"a": 1}}), &[]),
            Exact(
                400,
                "ManifestWork in version \"v1\" cannot be handled as a ManifestWork: json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string",
            ),
        ),
        case(
            "custom resource without kind",
            "POST",
            MW,
            "application/json",
            no_kind_mw.to_vec(),
            Exact(
                400,
                "the object provided is unrecognized (must be of type ManifestWork): Object 'Kind' is missing in '{\"apiVersion\":\"work.open-cluster-management.io/v1\",\"metadata\":{\"name\":\"nokind\"},\"spec\":{}}' ({\"apiVersion\":\"work.open-clust ...)",
            ),
        ),
        case(
            "custom resource without apiVersion",
            "POST",
            MW,
            "application/json",
            mw(json!({"name": "w"}), &["apiVersion"]),
            Exact(
                400,
                "the API version in the data () does not match the expected API version (work.open-cluster-management.io/v1)",
            ),
        ),
        case(
            "custom resource with another apiVersion",
            "POST",
            MW,
            "application/json",
            json_body(
                json!({"apiVersion": "work.open-cluster-management.io/v9", "kind": "ManifestWork", "metadata": {"name": "w"}}),
            ),
            Exact(
                400,
                "the API version in the data (work.open-cluster-management.io/v9) does not match the expected API version (work.open-cluster-management.io/v1)",
            ),
        ),
        case(
            "custom resource with another kind",
            "POST",
            MW,
            "application/json",
            json_body(
                json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "Other", "metadata": {"name": "w"}}),
            ),
            Exact(
                422,
                "ManifestWork.work.open-cluster-management.io \"w\" is invalid: kind: Invalid value: \"Other\": must be ManifestWork",
            ),
        ),
        // Media types.
        case(
            "text/plain body",
            "POST",
            CM,
            "text/plain",
            cm(json!({})),
            Exact(
                415,
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            ),
        ),
        case(
            "XML body",
            "POST",
            CM,
            "application/xml",
            b"<ConfigMap><name>x</name></ConfigMap>".to_vec(),
            Exact(
                415,
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            ),
        ),
        case(
            "unknown content type",
            "POST",
            CM,
            "application/x-made-up",
            cm(json!({})),
            Exact(
                415,
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            ),
        ),
        case(
            "YAML body",
            "POST",
            CM,
            "application/yaml",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\ndata:\n  a: b\n".to_vec(),
            Exact(201, ""),
        ),
        case(
            "XML sent as JSON",
            "POST",
            CM,
            "application/json",
            b"<ConfigMap/>".to_vec(),
            Exact(
                400,
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character '<' looking for beginning of value (3c436f6e6669674d61702f3e)",
            ),
        ),
        case(
            "truncated JSON",
            "POST",
            CM,
            "application/json",
            b"{\"metadata\":".to_vec(),
            Exact(
                400,
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"metadata\":)",
            ),
        ),
        case(
            "empty body",
            "POST",
            CM,
            "application/json",
            Vec::new(),
            Exact(
                400,
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)",
            ),
        ),
        case(
            "patch as text/plain",
            "PATCH",
            format!("{CM}/existing"),
            "text/plain",
            b"{}".to_vec(),
            Exact(
                415,
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml",
            ),
        ),
        case(
            "strategic merge patch on a custom resource",
            "PATCH",
            format!("{MW}/existing"),
            "application/strategic-merge-patch+json",
            b"{}".to_vec(),
            Exact(
                415,
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            ),
        ),
        case(
            "merge patch making a label an integer",
            "PATCH",
            format!("{CM}/existing"),
            "application/merge-patch+json",
            json_body(json!({"metadata": {"labels": {"a": 1}}})),
            Contains(
                422,
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
            ),
        ),
        case(
            "JSON patch making a custom resource label an integer",
            "PATCH",
            format!("{MW}/existing"),
            "application/json-patch+json",
            json_body(json!([{"op": "add", "path": "/metadata/labels", "value": {"a": 1}}])),
            Contains(422, " \"\" is invalid: patch: Invalid value: "),
        ),
        case(
            "server-side apply with data {\"a\": 1}",
            "PATCH",
            format!("{CM}/applied?fieldManager=t"),
            "application/apply-patch+yaml",
            cm(json!({"metadata": {"name": "applied"}, "data": {"a": 1}})),
            Exact(
                500,
                "failed to create typed patch object (/v1, Kind=ConfigMap): .data.a: expected string, got &value.valueUnstructured{Value:1}",
            ),
        ),
    ]
}

async fn hub() -> FakeHub {
    let hub = FakeHub::new(1).unwrap();
    let router = hub.hub().router();
    for (path, body) in [
        (CM, cm(json!({"metadata": {"name": "existing"}}))),
        (MW, mw(json!({"name": "existing"}), &[])),
    ] {
        let req = Request::post(path)
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        let resp = router.clone().oneshot(req).await.unwrap();
        assert_eq!(resp.status().as_u16(), 201, "fixture {path}");
    }
    hub
}

async fn run_table(cases: Vec<Case>) {
    let hub = hub().await;
    let report = std::env::var("OCM_MALFORMED_REPORT").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for c in &cases {
        let (status, message) = send(&hub, c).await;
        if report {
            println!("{} | {status} | {message}", c.name);
        }
        let ok = match &c.want {
            Want::Exact(code, m) => status == *code && (m.is_empty() || message == *m),
            Want::Contains(code, m) => status == *code && message.contains(m),
        };
        if !ok {
            failures.push(format!("{}: got {status} {message:?}", c.name));
        }
    }
    assert!(
        failures.is_empty(),
        "cases answered differently:\n{}",
        failures.join("\n")
    );
}

#[tokio::test]
async fn malformed_bodies_are_answered_as_kube_apiserver_answers_them() {
    run_table(decoding_cases()).await;
}
