//! End-to-end: the real `kubectl` against the loopback server.
//!
//! Skipped (with a message) when kubectl is not on PATH; fails instead when `CI=true`.

use std::path::PathBuf;
use std::process::Command;

use ocm_testkit::{FakeCluster, Gvr};

pub(crate) fn kubectl_available() -> bool {
    let found = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("kubectl is required in CI (CI=true) but was not found on PATH");
        }
        eprintln!("SKIPPED: kubectl not found on PATH; end-to-end kubectl tests did not run");
    }
    found
}

pub(crate) struct Kubectl {
    kubeconfig: PathBuf,
    cache: PathBuf,
    dir: PathBuf,
}

impl Kubectl {
    pub(crate) fn new(server: &ocm_testkit::LoopbackServer, tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "ocm-testkit-{tag}-{}-{}",
            std::process::id(),
            server.addr().port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let kubeconfig = dir.join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).unwrap();
        Self {
            kubeconfig,
            cache: dir.join("cache"),
            dir,
        }
    }

    /// The OCM CRDs as `ocm_api::crds()` generates them (the committed `ocm-api/crds/` files
    /// are the same, as ocm-api's golden test checks), one JSON file each in a folder of
    /// this kubectl's scratch space: the folder, for `kubectl apply -f`. Generated here, so
    /// the test needs nothing outside this package.
    pub(crate) fn crds(&self) -> PathBuf {
        let dir = self.dir.join("crds");
        std::fs::create_dir_all(&dir).unwrap();
        for crd in ocm_api::crds() {
            let name = crd.metadata.name.clone().unwrap();
            let text = serde_json::to_string_pretty(&crd).unwrap();
            std::fs::write(dir.join(format!("{name}.json")), text).unwrap();
        }
        dir
    }

    pub(crate) fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    pub(crate) async fn run(&self, args: &[&str]) -> (bool, String, String) {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args)
            .env_remove("KUBECONFIG");
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .unwrap()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub(crate) async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(ok, "kubectl {args:?} failed:\nstdout: {out}\nstderr: {err}");
        out
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const MANIFESTS: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  labels:
    app: demo
data:
  k: v
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
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
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_apply_delete() {
    if !kubectl_available() {
        return;
    }
    let cluster = FakeCluster::new();
    let server = cluster.serve_loopback().await.unwrap();
    let k = Kubectl::new(&server, "basic");

    let out = k.ok(&["get", "namespaces"]).await;
    assert!(
        out.contains("default") && out.contains("kube-system"),
        "{out}"
    );

    let f = k.file("m.yaml", MANIFESTS);
    let f = f.to_str().unwrap();
    let out = k.ok(&["apply", "--server-side", "-f", f]).await;
    assert!(out.contains("configmap/demo serverside-applied"), "{out}");
    assert!(
        out.contains("deployment.apps/web serverside-applied"),
        "{out}"
    );
    let stored = cluster
        .store()
        .get(&Gvr::new("", "v1", "configmaps"), "default", "demo")
        .unwrap();
    assert_eq!(stored["data"]["k"], "v");
    assert_eq!(stored["metadata"]["managedFields"][0]["manager"], "kubectl");

    let out = k
        .ok(&["get", "configmap", "demo", "-o", "jsonpath={.data.k}"])
        .await;
    assert_eq!(out, "v");
    let out = k.ok(&["get", "cm"]).await;
    assert!(out.contains("NAME") && out.contains("demo"), "{out}");
    let out = k
        .ok(&[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(out, "nginx:1.27");
    let out = k.ok(&["get", "cm", "-l", "app=demo", "-o", "name"]).await;
    assert_eq!(out.trim(), "configmap/demo");

    // Client-side apply (default validation needs /openapi/v3) sends a strategic merge patch.
    let f2 = k.file("m2.yaml", &MANIFESTS.replace("nginx:1.27", "nginx:1.28"));
    let out = k.ok(&["apply", "-f", f2.to_str().unwrap()]).await;
    assert!(out.contains("deployment.apps/web"), "{out}");
    let out = k
        .ok(&[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(out, "nginx:1.28");

    // kubectl wait, with the workload simulator making the Deployment available.
    let _sim = cluster.simulate_workloads();
    let out = k
        .ok(&[
            "wait",
            "--for=condition=Available",
            "deployment/web",
            "--timeout=20s",
        ])
        .await;
    assert!(out.contains("deployment.apps/web condition met"), "{out}");

    // kubectl get -w prints the current rows (Table watch events), then follows.
    let mut child = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&k.kubeconfig)
        .arg("--cache-dir")
        .arg(&k.cache)
        .args(["get", "configmaps", "--watch"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let p = serde_json::json!({"data": {"k": "changed"}});
    let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::default_namespaced(cluster.client());
    cms.patch("demo", &Default::default(), &kube::api::Patch::Merge(&p))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    let _ = child.kill();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.matches("demo").count() >= 2,
        "stdout: {text}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = k.ok(&["delete", "configmap", "demo"]).await;
    assert!(out.contains("configmap \"demo\" deleted"), "{out}");
    assert!(
        cluster
            .store()
            .get(&Gvr::new("", "v1", "configmaps"), "default", "demo")
            .is_err()
    );
    let (ok, _, err) = k.run(&["get", "configmap", "demo"]).await;
    assert!(!ok);
    assert!(err.contains("configmaps \"demo\" not found"), "{err}");
}

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_crd_and_printer_columns() {
    if !kubectl_available() {
        return;
    }
    let cluster = FakeCluster::new();
    let server = cluster.serve_loopback().await.unwrap();
    let k = Kubectl::new(&server, "crd");
    let f = k.file("crd.yaml", CRD);
    k.ok(&["apply", "--server-side", "-f", f.to_str().unwrap()])
        .await;
    let w = k.file(
        "w.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 7\n",
    );
    k.ok(&["apply", "--server-side", "-f", w.to_str().unwrap()])
        .await;
    let out = k.ok(&["get", "wd"]).await;
    assert!(
        out.contains("SIZE") && out.contains("w1") && out.contains('7'),
        "{out}"
    );
    // kubectl's default validation asks the server to be strict about unknown fields.
    let bad = k.file(
        "bad.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  size: 1\n  colour: red\n",
    );
    let (ok, _, err) = k.run(&["apply", "-f", bad.to_str().unwrap()]).await;
    assert!(!ok);
    assert!(err.contains("unknown field \"spec.colour\""), "{err}");
    // A server-side apply fails in the field manager's typed conversion, whatever the
    // validation directive.
    let (ok, _, err) = k
        .run(&["apply", "--server-side", "-f", bad.to_str().unwrap()])
        .await;
    assert!(!ok);
    assert!(
        err.contains("Error from server: failed to create typed patch object (default/w2; example.com/v1, Kind=Widget): .spec.colour: field not declared in schema"),
        "{err}"
    );
    k.ok(&["delete", "widget", "w1"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_conflicts_patches_finalizers_api_resources_and_ocm_objects() {
    if !kubectl_available() {
        return;
    }
    let cluster = FakeCluster::new();
    let server = cluster.serve_loopback().await.unwrap();
    let k = Kubectl::new(&server, "more");

    // The OCM CRDs, as generated, applied with kubectl; then served at once.
    let crds = k.crds();
    k.ok(&["apply", "--server-side", "-f", crds.to_str().unwrap()])
        .await;
    let resources = k.ok(&["api-resources"]).await;
    for expected in [
        "configmaps",
        "manifestworks",
        "placements",
        "managedclusters",
    ] {
        assert!(
            resources.contains(expected),
            "api-resources lacks {expected}:\n{resources}"
        );
    }

    // The documentation's ManifestWork, applied with kubectl (client-side, default validation).
    // (`kubectl create namespace` would send protobuf, which the fake does not speak.)
    let ns = k.file(
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: cluster1}\n",
    );
    k.ok(&["apply", "-f", ns.to_str().unwrap()]).await;
    let work = k.file(
        "work.yaml",
        r#"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: hello-work-demo
spec:
  workload:
    manifests:
      - apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: hello
          namespace: default
        spec:
          selector:
            matchLabels:
              app: hello
          template:
            metadata:
              labels:
                app: hello
            spec:
              containers:
                - name: hello
                  image: quay.io/asmacdo/busybox
                  command: ["sh", "-c", 'echo "Hello, Kubernetes!" && sleep 3600']
"#,
    );
    k.ok(&["apply", "-f", work.to_str().unwrap()]).await;
    let kind = k
        .ok(&[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            "hello-work-demo",
            "-o",
            "jsonpath={.spec.workload.manifests[0].kind}",
        ])
        .await;
    assert_eq!(kind, "Deployment");

    // Server-side apply: a second manager conflicts until it forces.
    let mine = k.file("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: default}\ndata: {k: from-a}\n");
    let theirs = k.file("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: default}\ndata: {k: from-b}\n");
    k.ok(&[
        "apply",
        "--server-side",
        "--field-manager",
        "a",
        "-f",
        mine.to_str().unwrap(),
    ])
    .await;
    let (ok, _, err) = k
        .run(&[
            "apply",
            "--server-side",
            "--field-manager",
            "b",
            "-f",
            theirs.to_str().unwrap(),
        ])
        .await;
    assert!(!ok, "expected a conflict");
    assert!(err.contains("conflict") && err.contains("\"a\""), "{err}");
    k.ok(&[
        "apply",
        "--server-side",
        "--field-manager",
        "b",
        "--force-conflicts",
        "-f",
        theirs.to_str().unwrap(),
    ])
    .await;
    assert_eq!(
        k.ok(&["get", "cm", "shared", "-o", "jsonpath={.data.k}"])
            .await,
        "from-b"
    );

    // Every patch type.
    k.ok(&[
        "patch",
        "cm",
        "shared",
        "--type=merge",
        "-p",
        r#"{"data":{"merge":"1"}}"#,
    ])
    .await;
    k.ok(&[
        "patch",
        "cm",
        "shared",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/data/json","value":"2"}]"#,
    ])
    .await;
    k.ok(&[
        "patch",
        "cm",
        "shared",
        "--type=strategic",
        "-p",
        r#"{"data":{"strategic":"3"}}"#,
    ])
    .await;
    let json_out: serde_json::Value =
        serde_json::from_str(&k.ok(&["get", "cm", "shared", "-o", "json"]).await).unwrap();
    assert_eq!(
        json_out["data"],
        serde_json::json!({"k": "from-b", "merge": "1", "json": "2", "strategic": "3"})
    );
    let yaml_out = k.ok(&["get", "cm", "shared", "-o", "yaml"]).await;
    assert!(
        yaml_out.contains("kind: ConfigMap") && yaml_out.contains("strategic: \"3\""),
        "{yaml_out}"
    );

    // Deletion waits for finalizers.
    let held = k.file("held.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: default, finalizers: [example.com/hold]}\n");
    k.ok(&["apply", "-f", held.to_str().unwrap()]).await;
    k.ok(&["delete", "cm", "held", "--wait=false"]).await;
    let deleting = k
        .ok(&[
            "get",
            "cm",
            "held",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ])
        .await;
    assert!(!deleting.is_empty(), "still there, being deleted");
    k.ok(&[
        "patch",
        "cm",
        "held",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ])
    .await;
    let (ok, _, err) = k.run(&["get", "cm", "held"]).await;
    assert!(!ok && err.contains("not found"), "{err}");
}

/// `kubectl ARGS -o jsonpath=PATH`.
async fn jp(k: &Kubectl, args: &[&str], path: &str) -> String {
    let output = format!("jsonpath={path}");
    let mut all = args.to_vec();
    all.extend(["-o", output.as_str()]);
    k.ok(&all).await
}

/// `kubectl create <kind>`, `run` and `expose` write built-in kinds as protobuf.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_generators_send_protobuf_and_it_is_understood() {
    if !kubectl_available() {
        return;
    }
    let cluster = FakeCluster::new();
    let server = cluster.serve_loopback().await.unwrap();
    let k = Kubectl::new(&server, "protobuf");
    k.ok(&["create", "namespace", "team-a"]).await;
    assert_eq!(
        jp(&k, &["get", "namespace", "team-a"], "{.metadata.name}").await,
        "team-a"
    );

    k.ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "team-a",
        "--from-literal=mode=fast",
        "--from-literal=level=3",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "configmap", "settings", "-n", "team-a"],
            "{.data.mode}/{.data.level}"
        )
        .await,
        "fast/3"
    );

    k.ok(&[
        "create",
        "secret",
        "generic",
        "creds",
        "-n",
        "team-a",
        "--from-literal=password=s3cr3t",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "secret", "creds", "-n", "team-a"],
            "{.data.password}"
        )
        .await,
        "czNjcjN0"
    );

    k.ok(&[
        "create",
        "deployment",
        "web",
        "-n",
        "team-a",
        "--image=nginx:1.27",
        "--replicas=3",
        "--port=8080",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "deployment", "web", "-n", "team-a"],
            "{.spec.replicas} {.spec.selector.matchLabels.app} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].ports[0].containerPort}"
        )
        .await,
        "3 web nginx:1.27 8080"
    );

    k.ok(&["create", "serviceaccount", "robot", "-n", "team-a"])
        .await;
    k.ok(&[
        "create",
        "role",
        "reader",
        "-n",
        "team-a",
        "--verb=get,list",
        "--resource=configmaps",
    ])
    .await;
    k.ok(&[
        "create",
        "rolebinding",
        "robot-reads",
        "-n",
        "team-a",
        "--role=reader",
        "--serviceaccount=team-a:robot",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "rolebinding", "robot-reads", "-n", "team-a"],
            "{.roleRef.name} {.subjects[0].kind} {.subjects[0].name}"
        )
        .await,
        "reader ServiceAccount robot"
    );
    k.ok(&[
        "create",
        "clusterrole",
        "node-reader",
        "--verb=get",
        "--resource=nodes",
    ])
    .await;
    k.ok(&[
        "create",
        "clusterrolebinding",
        "robot-nodes",
        "--clusterrole=node-reader",
        "--serviceaccount=team-a:robot",
    ])
    .await;

    k.ok(&[
        "create",
        "job",
        "once",
        "-n",
        "team-a",
        "--image=busybox",
        "--",
        "echo",
        "hi",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "job", "once", "-n", "team-a"],
            "{.spec.template.spec.containers[0].command}"
        )
        .await,
        "[\"echo\",\"hi\"]"
    );
    k.ok(&[
        "create",
        "cronjob",
        "nightly",
        "-n",
        "team-a",
        "--image=busybox",
        "--schedule=0 3 * * *",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "cronjob", "nightly", "-n", "team-a"],
            "{.spec.schedule}"
        )
        .await,
        "0 3 * * *"
    );

    k.ok(&[
        "create",
        "service",
        "clusterip",
        "web",
        "-n",
        "team-a",
        "--tcp=80:8080",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "service", "web", "-n", "team-a"],
            "{.spec.ports[0].port} {.spec.ports[0].targetPort}"
        )
        .await,
        "80 8080"
    );

    k.ok(&[
        "run",
        "probe",
        "-n",
        "team-a",
        "--image=busybox",
        "--labels=app=probe",
        "--",
        "sleep",
        "60",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "pod", "probe", "-n", "team-a"],
            "{.metadata.labels.app} {.spec.containers[0].args}"
        )
        .await,
        "probe [\"sleep\",\"60\"]"
    );

    k.ok(&[
        "expose",
        "deployment",
        "web",
        "-n",
        "team-a",
        "--name=web-exposed",
        "--port=80",
        "--target-port=8080",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "service", "web-exposed", "-n", "team-a"],
            "{.spec.selector.app} {.spec.ports[0].port}"
        )
        .await,
        "web 80"
    );
    k.ok(&[
        "create",
        "quota",
        "small",
        "-n",
        "team-a",
        "--hard=cpu=2,pods=10",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "resourcequota", "small", "-n", "team-a"],
            "{.spec.hard.cpu} {.spec.hard.pods}"
        )
        .await,
        "2 10"
    );
    k.ok(&[
        "create",
        "poddisruptionbudget",
        "web",
        "-n",
        "team-a",
        "--selector=app=web",
        "--min-available=50%",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "pdb", "web", "-n", "team-a"],
            "{.spec.minAvailable} {.spec.selector.matchLabels.app}"
        )
        .await,
        "50% web"
    );
    k.ok(&[
        "create",
        "priorityclass",
        "high",
        "--value=1000",
        "--description=urgent",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "priorityclass", "high"],
            "{.value} {.description}"
        )
        .await,
        "1000 urgent"
    );
    k.ok(&[
        "create",
        "ingress",
        "web",
        "-n",
        "team-a",
        "--rule=example.com/*=web:80",
    ])
    .await;
    assert_eq!(
        jp(
            &k,
            &["get", "ingress", "web", "-n", "team-a"],
            "{.spec.rules[0].host} {.spec.rules[0].http.paths[0].backend.service.port.number}"
        )
        .await,
        "example.com 80"
    );

    // A client-side dry run sends nothing; a server-side one is decoded and not stored.
    k.ok(&[
        "create",
        "configmap",
        "dry",
        "-n",
        "team-a",
        "--from-literal=a=b",
        "--dry-run=server",
    ])
    .await;
    let (found, _, _) = k.run(&["get", "configmap", "dry", "-n", "team-a"]).await;
    assert!(!found, "a server-side dry run stores nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_scale_uses_the_scale_subresource() {
    if !kubectl_available() {
        return;
    }
    let cluster = FakeCluster::new();
    let server = cluster.serve_loopback().await.unwrap();
    let k = Kubectl::new(&server, "scale");
    let f = k.file("m.yaml", MANIFESTS);
    k.ok(&["apply", "--server-side", "-f", f.to_str().unwrap()])
        .await;

    let out = k.ok(&["scale", "deployment", "web", "--replicas=3"]).await;
    assert!(out.contains("deployment.apps/web scaled"), "{out}");
    let stored = cluster
        .store()
        .get(&Gvr::new("apps", "v1", "deployments"), "default", "web")
        .unwrap();
    assert_eq!(stored["spec"]["replicas"], 3);
    assert!(
        cluster
            .journal()
            .count(|e| e.subresource.as_deref() == Some("scale") && e.verb == "patch")
            >= 1
    );

    // With a precondition kubectl reads the Scale and checks it first.
    let (ok, _, err) = k
        .run(&[
            "scale",
            "deployment",
            "web",
            "--current-replicas=2",
            "--replicas=4",
        ])
        .await;
    assert!(!ok);
    assert!(err.contains("Expected replicas to be 2, was 3"), "{err}");
    let out = k
        .ok(&[
            "scale",
            "deployment/web",
            "--current-replicas=3",
            "--replicas=0",
        ])
        .await;
    assert!(out.contains("scaled"), "{out}");
    let (ok, _, err) = k.run(&["scale", "configmap", "demo", "--replicas=2"]).await;
    assert!(!ok, "configmaps have no scale subresource: {err}");
}
