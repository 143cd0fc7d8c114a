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
        "metadata": meta, "spec": {"workload": {"manifests": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}}]}}
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
            // The PATCH route takes patch types only; its router answers anything else.
            Exact(415, "415: Unsupported Media Type"),
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
                "failed to create typed patch object (/applied; /v1, Kind=ConfigMap): .data.a: expected string, got &value.valueUnstructured{Value:1}",
            ),
        ),
    ]
}

/// How many doubling `copy` operations the growth case sends (the issue's 30 by default).
fn copy_ops() -> usize {
    std::env::var("OCM_COPY_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
}

/// A JSON patch of `n` operations each copying `/data` into itself: the object doubles
/// with every one.
fn doubling_patch(n: usize) -> Vec<u8> {
    let ops: Vec<Value> = (0..n)
        .map(|i| json!({"op": "copy", "from": "/data", "path": format!("/data/c{i}")}))
        .collect();
    json_body(Value::Array(ops))
}

fn limit_cases() -> Vec<Case> {
    use Want::*;
    let big = "x".repeat(1024 * 1024 * 3 / 2 + 10);
    let test_ops: Vec<Value> = (0..10_001)
        .map(|_| json!({"op": "test", "path": "/kind", "value": "ConfigMap"}))
        .collect();
    vec![
        case(
            "body over 3 MiB",
            "POST",
            CM,
            "application/json",
            cm(json!({"data": {"big": "y".repeat(3 * 1024 * 1024)}})),
            Exact(413, "Request entity too large: limit is 3145728"),
        ),
        case(
            // The corpus case `PATCH making object > 1.5 MiB`: a ConfigMap's 1 MiB data limit
            // answers first.
            "object over 1.5 MiB by patch",
            "PATCH",
            format!("{CM}/existing"),
            "application/merge-patch+json",
            json_body(json!({"data": {"big": big}})),
            Exact(
                422,
                "ConfigMap \"existing\" is invalid: []: Too long: may not be more than 1048576 bytes",
            ),
        ),
        case(
            // No validation rule limits an environment variable: etcd refuses the object.
            "Deployment over 1.5 MiB",
            "POST",
            DEPLOY,
            "application/json",
            json_body(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "huge"},
                "spec": {"selector": {"matchLabels": {"app": "huge"}},
                         "template": {"metadata": {"labels": {"app": "huge"}},
                                      "spec": {"containers": [{"name": "c", "image": "busybox",
                                          "env": [{"name": "BIG", "value": big}]}]}}}})),
            Exact(500, "etcdserver: request is too large"),
        ),
        case(
            "JSON patch of 10001 operations",
            "PATCH",
            format!("{CM}/existing"),
            "application/json-patch+json",
            json_body(Value::Array(test_ops)),
            Exact(
                413,
                "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
            ),
        ),
        case(
            "JSON patch of doubling copy operations",
            "PATCH",
            format!("{CM}/big"),
            "application/json-patch+json",
            doubling_patch(copy_ops()),
            Exact(
                422,
                "the server rejected our request due to an error in our request",
            ),
        ),
    ]
}

fn option_cases() -> Vec<Case> {
    use Want::*;
    vec![
        case(
            "create with dryRun=foo",
            "POST",
            format!("{CM}?dryRun=foo"),
            "application/json",
            cm(json!({"metadata": {"name": "dry"}})),
            Exact(
                422,
                "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"foo\"]: supported values: \"All\"",
            ),
        ),
        case(
            "patch with dryRun=All&dryRun=x",
            "PATCH",
            format!("{CM}/existing?dryRun=All&dryRun=x"),
            "application/merge-patch+json",
            json_body(json!({"data": {"dry": "run"}})),
            Exact(
                422,
                "PatchOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"All\",\"x\"]: supported values: \"All\"",
            ),
        ),
        case(
            "delete with dryRun=foo",
            "DELETE",
            format!("{CM}/existing?dryRun=foo"),
            "",
            Vec::new(),
            Exact(
                422,
                "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"foo\"]: supported values: \"All\"",
            ),
        ),
        case(
            "create with dryRun=All",
            "POST",
            format!("{CM}?dryRun=All"),
            "application/json",
            cm(json!({"metadata": {"name": "dry"}})),
            Exact(201, ""),
        ),
        case(
            "watch with timeoutSeconds=abc",
            "GET",
            format!("{CM}?watch=1&timeoutSeconds=abc"),
            "",
            Vec::new(),
            Exact(400, "strconv.ParseInt: parsing \"abc\": invalid syntax"),
        ),
        case(
            "list with limit=abc",
            "GET",
            format!("{CM}?limit=abc"),
            "",
            Vec::new(),
            Exact(400, "strconv.ParseInt: parsing \"abc\": invalid syntax"),
        ),
        case(
            "watch with timeoutSeconds out of range",
            "GET",
            format!("{CM}?watch=1&timeoutSeconds=99999999999999999999"),
            "",
            Vec::new(),
            Exact(
                400,
                "strconv.ParseInt: parsing \"99999999999999999999\": value out of range",
            ),
        ),
        case(
            "scale of a deployment",
            "GET",
            format!("{DEPLOY}/web/scale"),
            "",
            Vec::new(),
            Exact(200, ""),
        ),
        case(
            "scale to -1",
            "PUT",
            format!("{DEPLOY}/web/scale"),
            "application/json",
            json_body(
                json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": -1}}),
            ),
            Exact(
                422,
                "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            ),
        ),
        case(
            "scale with replicas as a string",
            "PUT",
            format!("{DEPLOY}/web/scale"),
            "application/json",
            json_body(
                json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": "3"}}),
            ),
            Exact(
                400,
                "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32",
            ),
        ),
        case(
            "scale of a configmap",
            "GET",
            format!("{CM}/existing/scale"),
            "",
            Vec::new(),
            Exact(404, "the server could not find the requested resource"),
        ),
    ]
}

async fn hub() -> FakeHub {
    let hub = FakeHub::new(1).unwrap();
    let router = hub.hub().router();
    for (path, body) in [
        (CM, cm(json!({"metadata": {"name": "existing"}}))),
        (MW, mw(json!({"name": "existing"}), &[])),
        (
            CM,
            cm(json!({"metadata": {"name": "big"}, "data": {"a": "z".repeat(2048)}})),
        ),
        (
            DEPLOY,
            json_body(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})),
        ),
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

async fn run_table(cases: Vec<Case>) -> FakeHub {
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
    hub
}

#[tokio::test]
async fn size_limits_are_kube_apiservers() {
    let hub = run_table(limit_cases()).await;
    let cms = ocm_testkit::Gvr::new("", "v1", "configmaps");
    // The refused writes changed nothing.
    let existing = hub.hub().store().get(&cms, "default", "existing").unwrap();
    assert!(existing.get("data").is_none_or(|d| d.get("big").is_none()));
    let big = hub.hub().store().get(&cms, "default", "big").unwrap();
    assert_eq!(big["data"].as_object().unwrap().len(), 1);
}

#[tokio::test]
async fn bad_options_are_refused_and_apply_nothing() {
    let hub = run_table(option_cases()).await;
    let cms = ocm_testkit::Gvr::new("", "v1", "configmaps");
    let store = hub.hub().store();
    // Neither the refused requests nor dryRun=All wrote anything.
    assert_eq!(store.get(&cms, "default", "dry").unwrap_err().code, 404);
    let existing = store.get(&cms, "default", "existing").unwrap();
    assert!(existing.get("data").is_none_or(|d| d.get("dry").is_none()));
}

#[tokio::test]
async fn malformed_bodies_are_answered_as_kube_apiserver_answers_them() {
    run_table(decoding_cases()).await;
}

#[tokio::test]
async fn doubling_copy_patch_is_stopped_before_it_grows_and_the_server_keeps_serving() {
    let hub = hub().await;
    let c = case(
        "growth",
        "PATCH",
        format!("{CM}/big"),
        "application/json-patch+json",
        doubling_patch(30),
        Want::Exact(422, ""),
    );
    let mut req = Request::builder()
        .method(c.method)
        .uri(&c.path)
        .header("content-type", c.content_type);
    req = req.header("accept", "application/json");
    let resp = hub
        .hub()
        .router()
        .oneshot(req.body(Body::from(c.body.clone())).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 422);
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    let status: Value = serde_json::from_slice(&bytes).unwrap();
    let cause = status["details"]["causes"][0]["message"].as_str().unwrap();
    assert!(
        cause.starts_with("Unable to complete the copy, the accumulated size increase of copy is ")
            && cause.ends_with(", exceeding the limit 3145728"),
        "{cause}"
    );
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "UnexpectedServerResponse"
    );
    // Nothing changed, and the same server goes on answering.
    let cms = ocm_testkit::Gvr::new("", "v1", "configmaps");
    let big = hub.hub().store().get(&cms, "default", "big").unwrap();
    assert_eq!(big["data"].as_object().unwrap().len(), 1);
    let other = hub.hub().store().get(&cms, "default", "existing").unwrap();
    assert_eq!(other["metadata"]["name"], "existing");
    let ok = send(
        &hub,
        &case(
            "after",
            "POST",
            CM,
            "application/json",
            cm(json!({"metadata": {"name": "after"}})),
            Want::Exact(201, ""),
        ),
    )
    .await;
    assert_eq!(ok.0, 201);
}
