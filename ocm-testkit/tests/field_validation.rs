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
    let opts = WriteOptions::default().warnings(warnings.clone());
    let obj = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                     "metadata": {"name": "w"}, "spec": {"size": 1, "colour": "red"}});
    let out = cluster
        .store()
        .create(&gvr, "default", obj.clone(), &opts)
        .unwrap();
    assert!(out["spec"].get("colour").is_none());
    assert_eq!(warnings.to_vec(), vec!["unknown field \"spec.colour\""]);

    let strict = WriteOptions::default().field_validation(FieldValidation::Strict);
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

const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn deployment(name: &str, extra: Value) -> Value {
    let mut d = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "nginx", "imagee": "typo"}]}
            }
        }
    });
    if let (Some(d), Some(e)) = (d.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            d.insert(k.clone(), v.clone());
        }
    }
    d
}

#[tokio::test]
async fn unknown_fields_are_found_at_any_depth_of_built_in_kinds() {
    let cluster = FakeCluster::new();
    let body = deployment("web", json!({"replicaz": 1})).to_string();
    // Warn (the default): dropped, one warning each, in the decoder's path form.
    let (s, w, v) = send(&cluster, "POST", DEPLOYS, JSON, &body).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(
        w,
        vec![
            r#"299 - "unknown field \"replicaz\"""#,
            r#"299 - "unknown field \"spec.template.spec.containers[0].imagee\"""#,
        ]
    );
    assert!(v.get("replicaz").is_none());
    assert!(
        v["spec"]["template"]["spec"]["containers"][0]
            .get("imagee")
            .is_none()
    );
    assert_eq!(
        v["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx"
    );

    // Strict: refused, naming every field.
    let body = deployment("web2", json!({})).to_string();
    let (s, w, v) = send(
        &cluster,
        "POST",
        &format!("{DEPLOYS}?fieldValidation=Strict"),
        JSON,
        &body,
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(w.is_empty());
    assert_eq!(
        v["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.template.spec.containers[0].imagee\""
    );
    // Ignore: silent, still dropped.
    let (s, w, v) = send(
        &cluster,
        "POST",
        &format!("{DEPLOYS}?fieldValidation=Ignore"),
        JSON,
        &body,
    )
    .await;
    assert_eq!(s, StatusCode::CREATED);
    assert!(w.is_empty());
    assert!(
        v["spec"]["template"]["spec"]["containers"][0]
            .get("imagee")
            .is_none()
    );

    // Update: the same words.
    let mut current = v.clone();
    current["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({"limitz": {}});
    let (s, _, v) = send(
        &cluster,
        "PUT",
        &format!("{DEPLOYS}/web2?fieldValidation=Strict"),
        JSON,
        &current.to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(
        v["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.template.spec.containers[0].resources.limitz\""
    );

    // Map values of struct types are walked with their key in the path.
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                     "spec": {"ports": [{"port": 80, "nodePortt": 1}]}});
    let (s, w, _) = send(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/services",
        JSON,
        &svc.to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(
        w,
        vec![r#"299 - "unknown field \"spec.ports[0].nodePortt\"""#]
    );
}

#[tokio::test]
async fn patches_report_unknown_fields_in_the_patch_handlers_words() {
    let cluster = FakeCluster::new();
    let body = deployment("web", json!({})).to_string();
    let (s, _, _) = send(&cluster, "POST", DEPLOYS, JSON, &body).await;
    assert_eq!(s, StatusCode::CREATED);
    let patch = r#"{"spec":{"paused":true,"pausd":true}}"#;

    // A merge patch: Warn answers with a header, Strict with 422 on the patched object.
    let (s, w, v) = send(
        &cluster,
        "PATCH",
        &format!("{DEPLOYS}/web"),
        "application/merge-patch+json",
        patch,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(w, vec![r#"299 - "unknown field \"spec.pausd\"""#]);
    assert_eq!(v["spec"]["paused"], true);
    assert!(v["spec"].get("pausd").is_none());
    let (s, _, v) = send(
        &cluster,
        "PATCH",
        &format!("{DEPLOYS}/web?fieldValidation=Strict"),
        "application/merge-patch+json",
        patch,
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["reason"], "Invalid");
    let message = v["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            " \"\" is invalid: patch: Invalid value: \"{\\\"apiVersion\\\":\\\"apps/v1\\\""
        ),
        "{message}"
    );
    assert!(message.contains("\\\"pausd\\\":true"), "{message}");
    assert!(
        message.ends_with("\": strict decoding error: unknown field \"spec.pausd\""),
        "{message}"
    );

    // A strategic merge patch: the patch itself, as Go prints a map.
    let (s, _, v) = send(
        &cluster,
        "PATCH",
        &format!("{DEPLOYS}/web?fieldValidation=Strict"),
        "application/strategic-merge-patch+json",
        patch,
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(
        v["message"],
        " \"\" is invalid: patch: Invalid value: \"map[spec:map[pausd:true paused:true]]\": strict decoding error: unknown field \"spec.pausd\""
    );

    // Server-side apply: the typed conversion fails whatever fieldValidation says.
    let applied = deployment("web", json!({})).to_string();
    for q in ["", "&fieldValidation=Ignore"] {
        let (s, _, v) = send(
            &cluster,
            "PATCH",
            &format!("{DEPLOYS}/web?fieldManager=me&force=true{q}"),
            "application/apply-patch+yaml",
            &applied,
        )
        .await;
        assert_eq!(s, StatusCode::INTERNAL_SERVER_ERROR, "{v}");
        // No reason: a plain error of the field manager.
        assert!(v.get("reason").is_none(), "{v}");
        assert_eq!(
            v["message"],
            "failed to create typed patch object (/web; apps/v1, Kind=Deployment): .spec.template.spec.containers[name=\"main\"].imagee: field not declared in schema"
        );
    }
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
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              parts:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [id]
                items:
                  type: object
                  properties:
                    id: {type: string}
"#;

#[tokio::test]
async fn custom_resources_behave_as_built_in_kinds_do() {
    let cluster = FakeCluster::new();
    cluster.apply_yaml(WIDGETS).unwrap();
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    let body = r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","name":"w"},
                   "spec":{"parts":[{"id":"a","qty":1}]}}"#;
    let (s, w, v) = send(&cluster, "POST", path, JSON, body).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(
        w,
        vec![
            r#"299 - "duplicate field \"metadata.name\"""#,
            r#"299 - "unknown field \"spec.parts[0].qty\"""#,
        ]
    );
    let strict_body = body.replace("\"w\"", "\"w3\"");
    let (s, _, v) = send(
        &cluster,
        "POST",
        &format!("{path}?fieldValidation=Strict"),
        JSON,
        &strict_body,
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(
        v["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: duplicate field \"metadata.name\", unknown field \"spec.parts[0].qty\""
    );
    let (s, w, _) = send(
        &cluster,
        "POST",
        &format!("{path}?fieldValidation=Ignore"),
        JSON,
        &body.replace("\"w\"", "\"w2\""),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED);
    assert!(w.is_empty());

    // A merge patch: 422 on the patched object under Strict.
    let (s, _, v) = send(
        &cluster,
        "PATCH",
        &format!("{path}/w?fieldValidation=Strict"),
        "application/merge-patch+json",
        r#"{"spec":{"colour":"red"}}"#,
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .ends_with("strict decoding error: unknown field \"spec.colour\""),
        "{v}"
    );
    // Server-side apply: refused by the typed conversion, list items named by their keys.
    let applied = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                         "metadata": {"name": "w", "namespace": "default"},
                         "spec": {"parts": [{"id": "a", "qty": 2}]}});
    let (s, _, v) = send(
        &cluster,
        "PATCH",
        &format!("{path}/w?fieldManager=me"),
        "application/apply-patch+yaml",
        &applied.to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::INTERNAL_SERVER_ERROR, "{v}");
    assert_eq!(
        v["message"],
        "failed to create typed patch object (default/w; example.com/v1, Kind=Widget): .spec.parts[id=\"a\"].qty: field not declared in schema"
    );
}

#[test]
fn apply_yaml_reports_what_it_drops_and_fails_in_strict_mode() {
    let cluster = FakeCluster::new();
    let yaml = format!(
        "{WIDGETS}---\n{}---\n{}",
        r#"apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  parts: [{id: a, qty: 1}]
"#,
        r#"apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: apps}
  spec:
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec:
        containers: [{name: main, image: nginx, imagee: typo}]
"#
    );
    // The default: dropped and reported (logged at WARN by apply_yaml, returned here).
    let loaded = cluster
        .apply_yaml_with(&yaml, FieldValidation::Warn)
        .unwrap();
    assert_eq!(loaded.objects.len(), 3);
    let found: Vec<String> = loaded
        .unknown_fields
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found,
        vec![
            "document 2 (Widget default/w): unknown field \"spec.parts[0].qty\"",
            "document 3 (Deployment apps/web): unknown field \"spec.template.spec.containers[0].imagee\"",
        ]
    );
    assert!(
        loaded.objects[2]["spec"]["template"]["spec"]["containers"][0]
            .get("imagee")
            .is_none()
    );
    assert_eq!(cluster.apply_yaml(&yaml).unwrap().len(), 3);

    // Strict: the call fails naming the document and the field, before applying it.
    let strict = yaml.replace("name: web,", "name: web2,");
    let err = cluster
        .apply_yaml_with(&strict, FieldValidation::Strict)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "document 2 (Widget default/w): unknown field \"spec.parts[0].qty\""
    );
    let ocm_testkit::Error::UnknownFields(fields) = err else {
        panic!("expected UnknownFields");
    };
    assert_eq!(fields[0].document, 2);
    assert_eq!(fields[0].path, "spec.parts[0].qty");
    assert!(
        cluster
            .store()
            .get(&Gvr::new("apps", "v1", "deployments"), "apps", "web2")
            .is_err()
    );
    // Ignore: dropped silently, still returned.
    let ignored = cluster
        .apply_yaml_with(&yaml, FieldValidation::Ignore)
        .unwrap();
    assert_eq!(ignored.unknown_fields.len(), 2);
}
