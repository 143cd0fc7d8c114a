//! `fieldValidation`: Warn (the default) answers with `Warning` headers, Strict
//! refuses with 400, Ignore drops silently; checked on the wire and with kubectl.

use std::process::Command;

use axum::body::Body;
use http::{Request, StatusCode};
use ocm_testkit::{FakeCluster, FieldValidation, Gvr, Warnings, WriteOptions};
use serde_json::{Value, json};
use tower::ServiceExt;

async fn send(
    cluster: &FakeCluster,
    method: &str,
    path: &str,
    content_type: &str,
    body: &str,
) -> (StatusCode, Vec<String>, Value) {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = cluster.router().oneshot(req).await.unwrap();
    let status = resp.status();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        warnings,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const JSON: &str = "application/json";

/// A ConfigMap with a duplicate name, an unknown metadata field and an unknown top-level field.
const BAD_CM: &str = r#"{"apiVersion":"v1","kind":"ConfigMap",
  "metadata":{"name":"a","name":"cm","clusterName":"x"},"dta":{"k":"v"},"data":{"k":"v"}}"#;

#[tokio::test]
async fn warn_is_the_default_and_answers_with_warning_headers() {
    let cluster = FakeCluster::new();
    for (q, name) in [("", "cm"), ("?fieldValidation=Warn", "cm2")] {
        let body = BAD_CM.replace("\"cm\"", &format!("\"{name}\""));
        let (s, w, v) = send(&cluster, "POST", &format!("{CMS}{q}"), JSON, &body).await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        assert_eq!(
            w,
            vec![
                r#"299 - "duplicate field \"metadata.name\"""#,
                r#"299 - "unknown field \"metadata.clusterName\"""#,
                r#"299 - "unknown field \"dta\"""#,
            ]
        );
        // The unknown fields are dropped, the last duplicate wins.
        assert_eq!(v["metadata"]["name"], name);
        assert!(v.get("dta").is_none());
        assert!(v["metadata"].get("clusterName").is_none());
    }
    // A clean write has no warnings.
    let (s, w, _) = send(
        &cluster,
        "PATCH",
        &format!("{CMS}/cm"),
        "application/merge-patch+json",
        r#"{"data":{"k":"w"}}"#,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(w.is_empty());
    // Duplicates in a merge patch are reported at their path in the object.
    let (s, w, v) = send(
        &cluster,
        "PATCH",
        &format!("{CMS}/cm"),
        "application/merge-patch+json",
        r#"{"data":{"k":"1","k":"2"}}"#,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["data"]["k"], "2");
    assert_eq!(w, vec![r#"299 - "duplicate field \"data.k\"""#]);
}

#[tokio::test]
async fn strict_refuses_and_ignore_is_silent() {
    let cluster = FakeCluster::new();
    let (s, w, v) = send(
        &cluster,
        "POST",
        &format!("{CMS}?fieldValidation=Strict"),
        JSON,
        BAD_CM,
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(w.is_empty());
    assert_eq!(v["reason"], "BadRequest");
    assert_eq!(
        v["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: \
         duplicate field \"metadata.name\", unknown field \"metadata.clusterName\", unknown field \"dta\""
    );

    let (s, w, v) = send(
        &cluster,
        "POST",
        &format!("{CMS}?fieldValidation=Ignore"),
        JSON,
        BAD_CM,
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert!(w.is_empty());
    assert!(v.get("dta").is_none());

    let (s, _, v) = send(
        &cluster,
        "POST",
        &format!("{CMS}?fieldValidation=Loud"),
        JSON,
        BAD_CM,
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        v["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Loud\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    );
}

#[tokio::test]
async fn custom_resources_warn_about_pruned_fields_through_the_store_too() {
    let cluster = FakeCluster::new();
    cluster
        .apply_yaml(
            r#"
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
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
"#,
        )
        .unwrap();
    let gvr = Gvr::new("example.com", "v1", "widgets");
    let warnings = Warnings::new();
    let opts = WriteOptions {
        warnings: warnings.clone(),
        ..WriteOptions::default()
    };
    let obj = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                     "metadata": {"name": "w"}, "spec": {"size": 1, "colour": "red"}});
    let out = cluster
        .store()
        .create(&gvr, "default", obj.clone(), &opts)
        .unwrap();
    assert!(out["spec"].get("colour").is_none());
    assert_eq!(warnings.to_vec(), vec!["unknown field \"spec.colour\""]);

    let strict = WriteOptions {
        field_validation: FieldValidation::Strict,
        ..WriteOptions::default()
    };
    let err = cluster
        .store()
        .update(&gvr, "default", "w", obj, &strict)
        .unwrap_err();
    assert_eq!(err.code, 400);
    assert_eq!(
        err.message,
        "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.colour\""
    );
}

fn kubectl_available() -> bool {
    let found = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("kubectl is required in CI (CI=true) but was not found on PATH");
        }
        eprintln!(
            "SKIPPED: kubectl not found on PATH; the kubectl field-validation test did not run"
        );
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_prints_warnings_and_strict_errors() {
    if !kubectl_available() {
        return;
    }
    let cluster = FakeCluster::new();
    let server = cluster.serve_loopback().await.unwrap();
    let dir = std::env::temp_dir().join(format!(
        "ocm-testkit-fv-{}-{}",
        std::process::id(),
        server.addr().port()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let manifest = dir.join("cm.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\ndta:\n  k: v\n",
    )
    .unwrap();
    let run = |args: Vec<String>| {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--cache-dir")
            .arg(dir.join("cache"))
            .args(args)
            .env_remove("KUBECONFIG");
        async move {
            let out = tokio::task::spawn_blocking(move || cmd.output())
                .await
                .unwrap()
                .unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
    };
    let file = manifest.to_string_lossy().into_owned();
    // kubectl's default is --validate=strict: the server refuses.
    let (ok, err) = run(vec!["create".into(), "-f".into(), file.clone()]).await;
    assert!(!ok);
    assert!(
        err.contains("strict decoding error: unknown field \"dta\""),
        "{err}"
    );
    // --validate=warn: created, and kubectl prints the server's warning.
    let (ok, err) = run(vec![
        "create".into(),
        "--validate=warn".into(),
        "-f".into(),
        file.clone(),
    ])
    .await;
    assert!(ok, "{err}");
    assert!(
        err.contains("Warning: unknown field \"dta\""),
        "kubectl stderr: {err}"
    );
    // --validate=ignore: nothing said.
    let (ok, err) = run(vec![
        "apply".into(),
        "--validate=ignore".into(),
        "-f".into(),
        file,
    ])
    .await;
    assert!(ok, "{err}");
    assert!(!err.contains("unknown field"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
