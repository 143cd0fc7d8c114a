//! End-to-end: what kubectl does with the OpenAPI documents, and unknown fields at any depth,
//! with the real `kubectl` against the loopback server.
//!
//! Skipped (with a message) when kubectl is not on PATH; fails instead when `CI=true`.

use ocm_testkit::{FakeCluster, Gvr};

use crate::kubectl::{Kubectl, kubectl_available};

const LIST: &str = r#"apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    namespace: default
  spec:
    replicas: 2
    selector:
      matchLabels: {app: web}
    template:
      metadata:
        labels: {app: web}
      spec:
        containers:
        - name: main
          image: nginx:1.27
          ports:
          - containerPort: 80
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
    namespace: default
  data:
    mode: fast
"#;

const WORK_LIST: &str = r#"apiVersion: v1
kind: List
items:
- apiVersion: work.open-cluster-management.io/v1
  kind: ManifestWork
  metadata:
    name: hello
    namespace: default
  spec:
    workload:
      manifests:
      - apiVersion: v1
        kind: ConfigMap
        metadata: {name: hello, namespace: default}
        data: {greeting: hi}
"#;

const TYPO: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: typo
  namespace: default
spec:
  selector:
    matchLabels: {app: typo}
  template:
    metadata:
      labels: {app: typo}
    spec:
      containers:
      - name: main
        image: nginx
        imagee: nginx:1.27
"#;

const TYPO_WORK: &str = r#"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  name: typo
  namespace: default
spec:
  workload:
    colour: red
    manifests:
    - apiVersion: v1
      kind: ConfigMap
      metadata: {name: typo, namespace: default}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_lists_and_its_own_output() {
    if !kubectl_available() {
        return;
    }
    let cluster = FakeCluster::new();
    let server = cluster.serve_loopback().await.unwrap();
    let k = Kubectl::new(&server, "oa-list");

    // A v1 List: kubectl validates it client-side against /openapi/v2 (the fieldValidation
    // parameter cannot be verified for a List).
    let list = k.file("list.yaml", LIST);
    let out = k.ok(&["apply", "-f", list.to_str().unwrap()]).await;
    assert!(out.contains("deployment.apps/web created"), "{out}");
    assert!(out.contains("configmap/settings created"), "{out}");
    let stored = cluster
        .store()
        .get(&Gvr::new("apps", "v1", "deployments"), "default", "web")
        .unwrap();
    assert_eq!(stored["spec"]["replicas"], 2);

    // What `kubectl get -o yaml` prints applies again, as an object and as a List.
    let yaml = k.ok(&["get", "deployment", "web", "-o", "yaml"]).await;
    let one = k.file("one.yaml", &yaml);
    let out = k.ok(&["apply", "-f", one.to_str().unwrap()]).await;
    assert!(out.contains("deployment.apps/web"), "{out}");
    let yaml = k
        .ok(&["get", "deployment/web", "configmap/settings", "-o", "yaml"])
        .await;
    assert!(yaml.starts_with("apiVersion: v1\nitems:"), "{yaml}");
    assert!(yaml.contains("kind: List"), "{yaml}");
    let both = k.file("both.yaml", &yaml);
    let (ok, out, err) = k.run(&["apply", "-f", both.to_str().unwrap()]).await;
    assert!(ok, "stdout: {out}\nstderr: {err}");
    assert!(!err.contains("error"), "{err}");
    assert!(out.contains("deployment.apps/web"), "{out}");
    assert!(out.contains("configmap/settings"), "{out}");

    // Client-side validation of a List finds an unknown field deep inside an item.
    let bad = k.file(
        "bad-list.yaml",
        &LIST.replace("image: nginx:1.27", "imagee: nginx:1.27"),
    );
    let (ok, _, err) = k.run(&["apply", "-f", bad.to_str().unwrap()]).await;
    assert!(!ok);
    assert!(
        err.contains(r#"unknown field "imagee" in io.k8s.api.core.v1.Container"#),
        "{err}"
    );

    // A List holding a ManifestWork (a custom resource).
    k.ok(&["apply", "--server-side", "-f", k.crds().to_str().unwrap()])
        .await;
    let works = k.file("works.yaml", WORK_LIST);
    let out = k.ok(&["apply", "-f", works.to_str().unwrap()]).await;
    assert!(
        out.contains("manifestwork.work.open-cluster-management.io/hello created"),
        "{out}"
    );
    let yaml = k.ok(&["get", "manifestwork", "hello", "-o", "yaml"]).await;
    let again = k.file("work-again.yaml", &yaml);
    let out = k.ok(&["apply", "-f", again.to_str().unwrap()]).await;
    assert!(
        out.contains("manifestwork.work.open-cluster-management.io/hello"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explain_reads_the_real_schemas() {
    if !kubectl_available() {
        return;
    }
    let cluster = FakeCluster::new();
    ocm_testkit::install_crds(&cluster).unwrap();
    let server = cluster.serve_loopback().await.unwrap();
    let k = Kubectl::new(&server, "oa-explain");

    let out = k.ok(&["explain", "deployment.spec.selector"]).await;
    for expected in [
        "GROUP:      apps\n",
        "KIND:       Deployment\n",
        "VERSION:    v1\n",
        "FIELD: selector <LabelSelector>",
        "DESCRIPTION:\n    Label selector for pods.",
        "FIELDS:\n",
        "  matchExpressions\t<[]LabelSelectorRequirement>",
        "  matchLabels\t<map[string]string>",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    let out = k.ok(&["explain", "configmap"]).await;
    assert!(
        out.starts_with("KIND:       ConfigMap\nVERSION:    v1\n"),
        "{out}"
    );
    assert!(out.contains("  data\t<map[string]string>"), "{out}");
    let out = k.ok(&["explain", "pod.spec.containers.ports"]).await;
    assert!(
        out.contains("  containerPort\t<integer> -required-"),
        "{out}"
    );

    let out = k
        .ok(&["explain", "manifestwork.spec.workload", "--recursive"])
        .await;
    assert!(
        out.contains("GROUP:      work.open-cluster-management.io"),
        "{out}"
    );
    assert!(out.contains("KIND:       ManifestWork"), "{out}");
    assert!(out.contains("FIELD: workload <Object>"), "{out}");
    assert!(out.contains("  manifests\t<[]Object>"), "{out}");

    // The Swagger 2 document (its protobuf form, as kubectl reads it) explains too.
    let out = k
        .ok(&[
            "explain",
            "--output=plaintext-openapiv2",
            "deployment.spec.template.spec.containers.image",
        ])
        .await;
    assert!(out.contains("FIELD:    image <string>"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_validate_strict_and_warn_on_unknown_fields() {
    if !kubectl_available() {
        return;
    }
    let cluster = FakeCluster::new();
    let server = cluster.serve_loopback().await.unwrap();
    let k = Kubectl::new(&server, "oa-validate");
    let typo = k.file("typo.yaml", TYPO);
    let typo = typo.to_str().unwrap();

    // --validate=strict (kubectl's default): the server refuses, in kube-apiserver's words.
    let (ok, _, err) = k.run(&["apply", "--validate=strict", "-f", typo]).await;
    assert!(!ok);
    assert!(
        err.contains(
            r#"Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].imagee""#
        ),
        "{err}"
    );
    // --validate=warn: created without the field, kubectl prints the server's warning.
    let (ok, out, err) = k.run(&["apply", "--validate=warn", "-f", typo]).await;
    assert!(ok, "{out}\n{err}");
    assert!(
        err.contains(r#"Warning: unknown field "spec.template.spec.containers[0].imagee""#),
        "{err}"
    );
    let stored = cluster
        .store()
        .get(&Gvr::new("apps", "v1", "deployments"), "default", "typo")
        .unwrap();
    assert!(
        stored["spec"]["template"]["spec"]["containers"][0]
            .get("imagee")
            .is_none()
    );
    // The object exists now: apply patches it (a strategic merge patch), refused under Strict.
    let (ok, _, err) = k.run(&["apply", "-f", typo]).await;
    assert!(!ok);
    assert!(
        err.contains(
            r#"strict decoding error: unknown field "spec.template.spec.containers[0].imagee""#
        ),
        "{err}"
    );
    // Server-side apply: refused by the typed conversion.
    let (ok, _, err) = k.run(&["apply", "--server-side", "-f", typo]).await;
    assert!(!ok);
    assert!(
        err.contains(
            r#".spec.template.spec.containers[name="main"].imagee: field not declared in schema"#
        ),
        "{err}"
    );

    // A custom resource: the same directives, the same words.
    k.ok(&["apply", "--server-side", "-f", k.crds().to_str().unwrap()])
        .await;
    let work = k.file("work.yaml", TYPO_WORK);
    let work = work.to_str().unwrap();
    let (ok, _, err) = k.run(&["apply", "--validate=strict", "-f", work]).await;
    assert!(!ok);
    assert!(
        err.contains(
            r#"ManifestWork in version "v1" cannot be handled as a ManifestWork: strict decoding error: unknown field "spec.workload.colour""#
        ),
        "{err}"
    );
    let (ok, out, err) = k.run(&["apply", "--validate=warn", "-f", work]).await;
    assert!(ok, "{out}\n{err}");
    assert!(
        err.contains(r#"Warning: unknown field "spec.workload.colour""#),
        "{err}"
    );
}
