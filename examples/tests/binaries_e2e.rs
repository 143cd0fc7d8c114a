//! End to end over loopback HTTP: the example binaries as real processes against fake API
//! servers, driven and read back with `kubectl`.
//!
//! Without kubectl on PATH the kubectl test reports SKIPPED; with `CI=true` it fails instead.

use crate::common;
use ocm_testkit::wait::wait_for;

use common::{Running, kubectl_available, scratch};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, PostParams};
use ocm_api::work::v1::ManifestWork;
use ocm_testkit::{FakeCluster, FakeHub};
use serde_json::json;

fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `kubectl get manifestwork -n cluster1 my-first-work -o <output>` until it prints
/// `expected` (30 s at most) and returns the last output.
async fn wait_for_work_output(kubeconfig: &Path, output: &str, expected: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    let args = [
        "get",
        "manifestwork",
        "-n",
        "cluster1",
        "my-first-work",
        "-o",
        output,
    ];
    let mut last = kubectl(kubeconfig, &args);
    while last != expected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        last = kubectl(kubeconfig, &args);
    }
    last
}

/// Starts `ocm-work-agent` for cluster1 between the two kubeconfigs.
fn start_work_agent(hub: &Path, spoke: &Path, extra: &[&str]) -> Running {
    Running(
        Command::new(env!("CARGO_BIN_EXE_ocm-work-agent"))
            .args(["--cluster-name", "cluster1", "--status-sync-interval", "1s"])
            .args(["--namespace", "default"])
            .args(extra)
            .arg("--hub-kubeconfig")
            .arg(hub)
            .arg("--spoke-kubeconfig")
            .arg(spoke)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ocm-work-agent"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_agent_between_two_fake_api_servers_driven_by_kubectl() {
    if !kubectl_available() {
        return;
    }
    let dir = scratch("agent");
    let hub = FakeCluster::new();
    ocm_testkit::install_crds(&hub).expect("CRDs");
    let spoke = FakeCluster::new();
    let hub_server = hub.serve_loopback().await.expect("hub loopback");
    let spoke_server = spoke.serve_loopback().await.expect("spoke loopback");
    let hub_kubeconfig = dir.join("hub.kubeconfig");
    let spoke_kubeconfig = dir.join("spoke.kubeconfig");
    hub_server
        .write_kubeconfig(&hub_kubeconfig)
        .expect("write hub kubeconfig");
    spoke_server
        .write_kubeconfig(&spoke_kubeconfig)
        .expect("write spoke kubeconfig");
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "cluster1"}})).unwrap();
    Api::<Namespace>::all(hub.client())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();

    let _agent = start_work_agent(&hub_kubeconfig, &spoke_kubeconfig, &["--install-crds"]);

    // The documentation's first ManifestWork, applied with kubectl.
    let work = dir.join("work.yaml");
    std::fs::write(
        &work,
        r#"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: my-first-work
spec:
  workload:
    manifests:
      - apiVersion: v1
        kind: ServiceAccount
        metadata:
          namespace: default
          name: my-sa
      - apiVersion: v1
        kind: ConfigMap
        metadata:
          namespace: default
          name: greeting
        data:
          hello: world
"#,
    )
    .unwrap();
    kubectl(&hub_kubeconfig, &["apply", "-f", work.to_str().unwrap()]);

    let spoke_client = spoke.client();
    wait_for(
        "the ConfigMap on the managed cluster",
        Duration::from_secs(30),
        || {
            let api: Api<ConfigMap> = Api::namespaced(spoke_client.clone(), "default");
            async move { api.get_opt("greeting").await.ok().flatten().is_some() }
        },
    )
    .await;
    let applied_path = r#"jsonpath={.status.conditions[?(@.type=="Applied")].status}"#;
    let applied = wait_for_work_output(&hub_kubeconfig, applied_path, "True").await;
    assert_eq!(applied, "True");
    let kinds = kubectl(
        &hub_kubeconfig,
        &[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            "my-first-work",
            "-o",
            "jsonpath={.status.resourceStatus.manifests[*].resourceMeta.kind}",
        ],
    );
    assert_eq!(kinds, "ServiceAccount ConfigMap");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_controller_schedules_and_fans_out_over_loopback() {
    let dir = scratch("hub");
    let fake = FakeHub::new(2).expect("fake hub");
    let hub = fake.hub();
    let server = hub.serve_loopback().await.expect("loopback");
    let kubeconfig = dir.join("hub.kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let client = hub.client();
    let create = |value: serde_json::Value| {
        let client = client.clone();
        async move {
            let object: kube::api::DynamicObject = serde_json::from_value(value.clone()).unwrap();
            let gvk =
                kube::core::GroupVersionKind::try_from(object.types.as_ref().unwrap()).unwrap();
            let (ar, caps) = kube::discovery::pinned_kind(&client, &gvk).await.unwrap();
            let api: Api<kube::api::DynamicObject> =
                match (caps.scope, object.metadata.namespace.as_deref()) {
                    (kube::discovery::Scope::Namespaced, Some(ns)) => {
                        Api::namespaced_with(client, ns, &ar)
                    }
                    _ => Api::all_with(client, &ar),
                };
            api.create(&PostParams::default(), &object).await.unwrap();
        }
    };
    create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}})).await;
    create(json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
        "metadata": {"name": "default", "namespace": "apps"}, "spec": {"clusterSet": "default"}}))
    .await;
    create(
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
        "metadata": {"name": "all", "namespace": "apps"}, "spec": {}}),
    )
    .await;
    create(json!({"apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
        "metadata": {"name": "demo", "namespace": "apps"},
        "spec": {"placementRefs": [{"name": "all", "rolloutStrategy": {"type": "All"}}],
            "manifestWorkTemplate": {"workload": {"manifests": [
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo", "namespace": "default"}}]}}}}))
    .await;

    let _controller = Running(
        Command::new(env!("CARGO_BIN_EXE_ocm-hub-controller"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["--namespace", "default"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ocm-hub-controller"),
    );
    wait_for(
        "a ManifestWork in every selected cluster namespace",
        Duration::from_secs(30),
        || {
            let api: Api<ManifestWork> = Api::all(client.clone());
            async move {
                let mut namespaces: Vec<String> = api
                    .list(&ListParams::default())
                    .await
                    .map(|l| {
                        l.items
                            .into_iter()
                            .filter_map(|w| w.metadata.namespace)
                            .collect()
                    })
                    .unwrap_or_default();
                namespaces.sort();
                namespaces == ["cluster1", "cluster2"]
            }
        },
    )
    .await;
    let _ = std::fs::remove_dir_all(dir);
}

/// Starts `ocm-fake-apiserver` and waits until it says it is ready.
fn fake_apiserver(args: &[&std::ffi::OsStr]) -> Running {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ocm-fake-apiserver"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start ocm-fake-apiserver");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    let mut lines = BufReader::new(stdout).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.starts_with("ready") => break,
            Some(Ok(_)) => {}
            _ => panic!("ocm-fake-apiserver exited before it was ready"),
        }
    }
    running
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_apiservers_as_hub_and_spoke_with_the_agent_between_them() {
    if !kubectl_available() {
        return;
    }
    let dir = scratch("fake-apiserver");
    let hub_kubeconfig = dir.join("hub.kubeconfig");
    let spokes = dir.join("spokes");
    let _servers = fake_apiserver(&[
        "--kubeconfig".as_ref(),
        hub_kubeconfig.as_os_str(),
        "--clusters".as_ref(),
        "1".as_ref(),
        "--cluster-kubeconfigs".as_ref(),
        spokes.as_os_str(),
    ]);
    let spoke_kubeconfig = spokes.join("cluster1.kubeconfig");
    assert_eq!(
        kubectl(
            &hub_kubeconfig,
            &[
                "get",
                "managedclusters",
                "-o",
                "jsonpath={.items[*].metadata.name}"
            ]
        ),
        "cluster1"
    );
    let _agent = start_work_agent(&hub_kubeconfig, &spoke_kubeconfig, &[]);
    // The documentation's nginx ManifestWork, with feedback.
    let work = dir.join("work.yaml");
    std::fs::write(
        &work,
        r#"apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: cluster1
  name: my-first-work
spec:
  workload:
    manifests:
      - apiVersion: v1
        kind: ServiceAccount
        metadata:
          namespace: default
          name: my-sa
      - apiVersion: apps/v1
        kind: Deployment
        metadata:
          namespace: default
          name: nginx-deployment
          labels:
            app: nginx
        spec:
          replicas: 3
          selector:
            matchLabels:
              app: nginx
          template:
            metadata:
              labels:
                app: nginx
            spec:
              serviceAccountName: my-sa
              containers:
                - name: nginx
                  image: nginx:1.14.2
                  ports:
                    - containerPort: 80
  manifestConfigs:
    - resourceIdentifier:
        group: apps
        resource: deployments
        namespace: default
        name: nginx-deployment
      feedbackRules:
        - type: WellKnownStatus
"#,
    )
    .unwrap();
    kubectl(&hub_kubeconfig, &["apply", "-f", work.to_str().unwrap()]);
    let ready = r#"jsonpath={.status.resourceStatus.manifests[1].statusFeedback.values[?(@.name=="ReadyReplicas")].fieldValue.integer}"#;
    let replicas = wait_for_work_output(&hub_kubeconfig, ready, "3").await;
    assert_eq!(
        replicas, "3",
        "ReadyReplicas feedback read back with kubectl"
    );
    let available = kubectl(
        &hub_kubeconfig,
        &[
            "get",
            "manifestwork",
            "-n",
            "cluster1",
            "my-first-work",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="Available")].reason}"#,
        ],
    );
    assert_eq!(available, "ResourcesAvailable");
    assert_eq!(
        kubectl(
            &spoke_kubeconfig,
            &[
                "get",
                "deployment",
                "-n",
                "default",
                "nginx-deployment",
                "-o",
                "jsonpath={.status.readyReplicas}"
            ]
        ),
        "3"
    );
    let _ = std::fs::remove_dir_all(dir);
}
