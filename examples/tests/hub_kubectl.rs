//! The fake hub through the real kubectl, as a new user drives upstream's walkthroughs: the
//! printer columns of `kubectl get`, `kubectl describe placement` with its Events, a manual
//! taint tolerated for `tolerationSeconds` and then repelled (by the hub's clock), a
//! ClusterClaim reported to the ManagedCluster, `kubectl --context` over merged kubeconfigs,
//! and an impersonated user refused `execute-as` and `managedclustersets/bind`.
//!
//! Without kubectl on PATH the test reports SKIPPED; with `CI=true` it fails instead.

use crate::common;

use common::{kubectl_available, scratch};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use ocm_api::clock::ManualClock;
use ocm_placement::controller::PlacementController;
use ocm_testkit::{FakeCluster, FakeHub};
use ocm_work::registration::RegistrationAgent;

const START: &str = "2026-01-01T00:00:00Z";

fn run(kubeconfig: &str, args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new("kubectl")
        .env("KUBECONFIG", kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kubectl");
    if let Some(text) = stdin
        && let Some(mut input) = child.stdin.take()
    {
        input.write_all(text.as_bytes()).expect("write stdin");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("kubectl output")
}

fn ok(kubeconfig: &str, args: &[&str]) -> String {
    let out = run(kubeconfig, args, None);
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn apply(kubeconfig: &str, yaml: &str) {
    let out = run(kubeconfig, &["apply", "-f", "-"], Some(yaml));
    assert!(
        out.status.success(),
        "kubectl apply failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// The words of the line of `table` that starts with `name`.
fn row<'a>(table: &'a str, name: &str) -> Vec<&'a str> {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{table}"))
        .split_whitespace()
        .collect()
}

async fn decisions(kubeconfig: &str) -> String {
    ok(
        kubeconfig,
        &[
            "get",
            "placementdecisions",
            "-n",
            "demo",
            "-o",
            "jsonpath={.items[*].status.decisions[*].clusterName}",
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_against_the_fake_hub_reproduces_the_walkthroughs() {
    if !kubectl_available() {
        return;
    }
    let dir = scratch("walkthrough");
    let clock = Arc::new(ManualClock::new(START.parse().unwrap()));
    let fake = FakeHub::with_builder(FakeCluster::builder().clock(clock.clone()), 2).unwrap();
    let cluster1 = fake.cluster("cluster1").unwrap();
    ocm_testkit::install_crds(cluster1).unwrap();
    let hub_server = fake.hub().serve_loopback().await.unwrap();
    let spoke_server = cluster1.serve_loopback().await.unwrap();
    let hub_kc = dir.join("hub.kubeconfig");
    let spoke_kc = dir.join("cluster1.kubeconfig");
    hub_server.write_kubeconfig(&hub_kc).unwrap();
    spoke_server.write_kubeconfig(&spoke_kc).unwrap();
    let hub = path(&hub_kc);
    let spoke = path(&spoke_kc);

    // `kubectl get managedclusters`: every column filled in, as on a real hub.
    clock.advance(Duration::from_secs(42));
    let out = ok(&hub, &["get", "managedclusters"]);
    assert!(
        out.starts_with(
            "NAME       HUB ACCEPTED   MANAGED CLUSTER URLS   JOINED   AVAILABLE   AGE"
        ),
        "{out}"
    );
    assert_eq!(
        row(&out, "cluster1"),
        ["cluster1", "true", "True", "True", "42s"]
    );
    let sets = ok(&hub, &["get", "managedclustersets"]);
    assert!(sets.starts_with("NAME      EMPTY   AGE"), "{sets}");

    // Merged kubeconfigs: one context per cluster, named after it.
    let merged = format!("{hub}:{spoke}");
    let contexts = ok(&merged, &["config", "get-contexts", "-o", "name"]);
    assert_eq!(
        contexts.split_whitespace().collect::<Vec<_>>(),
        ["cluster1", "hub"]
    );
    let crds = ok(
        &merged,
        &["--context", "cluster1", "get", "crd", "-o", "name"],
    );
    assert!(
        crds.contains("clusterclaims.cluster.open-cluster-management.io"),
        "{crds}"
    );

    // A placement tolerating a maintenance taint for 300 s.
    apply(
        &hub,
        r#"
apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata: {name: default, namespace: demo}
spec: {clusterSet: default}
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: placement1, namespace: demo}
spec:
  tolerations:
  - {key: maintenance, operator: Exists, tolerationSeconds: 300}
"#,
    );
    let placement = PlacementController::new(fake.hub().client()).with_clock(clock.clone());
    placement.reconcile_all().await.unwrap();
    assert_eq!(decisions(&hub).await, "cluster1 cluster2");
    let described = ok(&hub, &["describe", "placement", "placement1", "-n", "demo"]);
    assert!(described.contains("Events:"), "{described}");
    assert!(!described.contains("Events:  <none>"), "{described}");
    for reason in ["DecisionCreate", "ScoreUpdate"] {
        assert!(described.contains(reason), "no {reason} in\n{described}");
    }
    let events = ok(&hub, &["get", "events", "-n", "demo"]);
    assert!(
        events.starts_with("LAST SEEN   TYPE     REASON"),
        "{events}"
    );
    assert!(events.contains("placement/placement1"), "{events}");

    // A manual taint: the hub stamps timeAdded with its clock; the placement tolerates it
    // for 300 s, then repels cluster1.
    ok(
        &hub,
        &[
            "patch",
            "managedcluster",
            "cluster1",
            "--type=merge",
            "-p",
            r#"{"spec":{"taints":[{"key":"maintenance","effect":"NoSelect"}]}}"#,
        ],
    );
    let added = ok(
        &hub,
        &[
            "get",
            "managedcluster",
            "cluster1",
            "-o",
            "jsonpath={.spec.taints[0].timeAdded}",
        ],
    );
    assert_eq!(added, "2026-01-01T00:00:42Z");
    clock.advance(Duration::from_secs(299));
    placement.reconcile_all().await.unwrap();
    assert_eq!(
        decisions(&hub).await,
        "cluster1 cluster2",
        "still tolerated"
    );
    clock.advance(Duration::from_secs(2));
    placement.reconcile_all().await.unwrap();
    assert_eq!(decisions(&hub).await, "cluster2", "repelled after 300 s");
    // A client may not set timeAdded itself.
    let refused = run(
        &hub,
        &[
            "patch",
            "managedcluster",
            "cluster2",
            "--type=merge",
            "-p",
            r#"{"spec":{"taints":[{"key":"x","effect":"NoSelect","timeAdded":"2020-01-01T00:00:00Z"}]}}"#,
        ],
        None,
    );
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(
            "admission webhook \"managedclustermutators.admission.cluster.open-cluster-management.io\" denied the request: It is not allowed to set TimeAdded of Taint \"x\"."
        ),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    // A ClusterClaim created on the managed cluster appears on its ManagedCluster.
    apply(
        &spoke,
        r#"
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata: {name: region.open-cluster-management.io}
spec: {value: eu-west-1}
"#,
    );
    let agent = RegistrationAgent::new(fake.hub().client(), cluster1.client(), "cluster1")
        .with_clock(clock.clone());
    agent.sync_once().await.unwrap();
    let claims = ok(
        &hub,
        &[
            "get",
            "managedcluster",
            "cluster1",
            "-o",
            "jsonpath={.status.clusterClaims}",
        ],
    );
    assert_eq!(
        claims,
        r#"[{"name":"region.open-cluster-management.io","value":"eu-west-1"}]"#
    );

    // An impersonated user: may create works and bindings, but not execute as a service
    // account nor bind a set.
    apply(
        &hub,
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: work-writer}
rules:
- apiGroups: [work.open-cluster-management.io, cluster.open-cluster-management.io]
  resources: [manifestworks, managedclustersetbindings]
  verbs: [get, list, create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bob-writes-works}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: work-writer}
subjects: [{kind: User, name: bob}]
"#,
    );
    let can = |args: &[&str]| {
        let mut all = vec!["auth", "can-i", "--as=bob"];
        all.extend_from_slice(args);
        String::from_utf8_lossy(&run(&hub, &all, None).stdout)
            .trim()
            .to_string()
    };
    assert_eq!(
        can(&[
            "create",
            "manifestworks.work.open-cluster-management.io",
            "-n",
            "cluster1"
        ]),
        "yes"
    );
    assert_eq!(
        can(&[
            "delete",
            "manifestworks.work.open-cluster-management.io",
            "-n",
            "cluster1"
        ]),
        "no"
    );
    let work = r#"
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: as-admin, namespace: cluster1}
spec:
  executor: {subject: {type: ServiceAccount, serviceAccount: {namespace: kube-system, name: admin}}}
  workload:
    manifests: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}]
"#;
    let out = run(&hub, &["--as=bob", "create", "-f", "-"], Some(work));
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (BadRequest): error when creating \"STDIN\": admission webhook \"manifestworkvalidators.admission.work.open-cluster-management.io\" denied the request: user bob cannot manipulate the Manifestwork with executor kube-system/admin in namespace cluster1"
    );
    let binding = r#"
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata: {name: global, namespace: demo}
spec: {clusterSet: global}
"#;
    let out = run(&hub, &["--as=bob", "create", "-f", "-"], Some(binding));
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (Forbidden): error when creating \"STDIN\": admission webhook \"managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io\" denied the request: managedclustersets/bind.apps \"global\" is forbidden: user \"bob\" is not allowed to bind cluster set \"global\""
    );
    // The administrator does both.
    assert!(
        run(&hub, &["create", "-f", "-"], Some(work))
            .status
            .success()
    );
    assert!(
        run(&hub, &["create", "-f", "-"], Some(binding))
            .status
            .success()
    );

    // Built-in kinds print kubectl's columns: a Deployment on the managed cluster.
    let _sim = cluster1.simulate_workloads();
    ok(
        &spoke,
        &[
            "create",
            "deployment",
            "nginx",
            "--image=nginx:1.25",
            "--replicas=2",
        ],
    );
    let mut out = String::new();
    for _ in 0..50 {
        out = ok(&spoke, &["get", "deployment", "nginx"]);
        if row(&out, "nginx").get(1) == Some(&"2/2") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        out.starts_with("NAME    READY   UP-TO-DATE   AVAILABLE   AGE"),
        "{out}"
    );
    assert_eq!(&row(&out, "nginx")[..4], ["nginx", "2/2", "2", "2"]);
    let wide = ok(&spoke, &["get", "deployment", "nginx", "-o", "wide"]);
    assert!(
        wide.contains("CONTAINERS   IMAGES       SELECTOR"),
        "{wide}"
    );
    assert!(wide.contains("nginx:1.25"), "{wide}");
    let _ = std::fs::remove_dir_all(&dir);
}
