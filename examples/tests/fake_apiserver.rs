//! `ocm-fake-apiserver` as a process: `--help`, `--context-prefix` and `--state-dir` (the
//! objects and ports survive a restart), driven with kubectl.
//!
//! Without kubectl on PATH the kubectl test reports SKIPPED; with `CI=true` it fails instead.

use crate::common;

use common::{Running, kubectl_available, scratch};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Starts the server and returns it with the lines it printed up to `ready`.
fn start(args: &[&std::ffi::OsStr]) -> (Running, Vec<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ocm-fake-apiserver"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start ocm-fake-apiserver");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    let mut seen = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("stdout line");
        let ready = line.starts_with("ready");
        seen.push(line);
        if ready {
            return (running, seen);
        }
    }
    panic!("ocm-fake-apiserver exited before it was ready: {seen:?}");
}

fn kubectl(kubeconfig: &str, args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .env("KUBECONFIG", kubeconfig)
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

#[test]
fn help_says_what_the_server_is_and_what_it_keeps() {
    let out = Command::new(env!("CARGO_BIN_EXE_ocm-fake-apiserver"))
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "What it is:",
        "What it keeps:",
        "--state-dir",
        "--context-prefix",
        "admission webhooks",
        "What it does not run",
        "--no-cluster-claims",
    ] {
        assert!(help.contains(needle), "no {needle:?} in --help:\n{help}");
    }
}

fn os(p: &Path) -> &std::ffi::OsStr {
    p.as_os_str()
}

#[test]
fn state_dir_keeps_objects_and_ports_across_a_restart() {
    if !kubectl_available() {
        return;
    }
    let dir = scratch("state");
    let hub_kc = dir.join("hub.kubeconfig");
    let spokes = dir.join("spokes");
    let state = dir.join("state");
    let args: Vec<&std::ffi::OsStr> = vec![
        "--kubeconfig".as_ref(),
        os(&hub_kc),
        "--clusters".as_ref(),
        "2".as_ref(),
        "--cluster-kubeconfigs".as_ref(),
        os(&spokes),
        "--context-prefix".as_ref(),
        "kind-".as_ref(),
        "--state-dir".as_ref(),
        os(&state),
    ];
    let (server, _) = start(&args);
    let hub = hub_kc.display().to_string();
    let merged = format!("{hub}:{}", spokes.join("cluster1.kubeconfig").display());
    // `--context kind-cluster1`, as upstream's walkthroughs write it.
    kubectl(
        &merged,
        &[
            "--context",
            "kind-cluster1",
            "create",
            "configmap",
            "on-spoke",
            "--from-literal=a=b",
        ],
    );
    kubectl(
        &merged,
        &[
            "--context",
            "kind-hub",
            "label",
            "managedcluster",
            "cluster2",
            "env=prod",
        ],
    );
    let uid = kubectl(
        &hub,
        &[
            "get",
            "managedcluster",
            "cluster2",
            "-o",
            "jsonpath={.metadata.uid}",
        ],
    );
    // The state is saved within a second of a change.
    std::thread::sleep(Duration::from_millis(1500));
    drop(server);
    assert!(state.join("state.json").exists());

    let (_server, lines) = start(&args);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("loaded the saved state of the hub and 2 clusters")),
        "{lines:?}"
    );
    // Same ports: the kubeconfigs written before still work.
    let labels = kubectl(
        &merged,
        &[
            "--context",
            "kind-hub",
            "get",
            "managedcluster",
            "cluster2",
            "-o",
            "jsonpath={.metadata.labels.env}",
        ],
    );
    assert_eq!(labels, "prod");
    assert_eq!(
        kubectl(
            &hub,
            &[
                "get",
                "managedcluster",
                "cluster2",
                "-o",
                "jsonpath={.metadata.uid}"
            ]
        ),
        uid
    );
    let data = kubectl(
        &merged,
        &[
            "--context",
            "kind-cluster1",
            "get",
            "configmap",
            "on-spoke",
            "-o",
            "jsonpath={.data.a}",
        ],
    );
    assert_eq!(data, "b");
    // The CRDs came back with the objects: OCM kinds are still served on the hub.
    let clusters = kubectl(&hub, &["get", "managedclusters", "-o", "name"]);
    assert_eq!(
        clusters.split_whitespace().collect::<Vec<_>>(),
        [
            "managedcluster.cluster.open-cluster-management.io/cluster1",
            "managedcluster.cluster.open-cluster-management.io/cluster2"
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupt_state_file_is_a_clear_error() {
    let dir = scratch("corrupt");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("state.json"), "{not json").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ocm-fake-apiserver"))
        .arg("--kubeconfig")
        .arg(dir.join("hub.kubeconfig"))
        .arg("--state-dir")
        .arg(&state)
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a saved state"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The served clusters' ClusterClaims reach the hub (the default, checked by
/// `seeds_cluster_attributes::cluster_claims_are_reported_to_the_hub`) unless
/// `--no-cluster-claims` leaves that to `ocm-work-agent --cluster-claims`.
#[test]
fn no_cluster_claims_leaves_the_claims_unreported() {
    if !kubectl_available() {
        return;
    }
    let dir = scratch("no-claims");
    let hub_kc = dir.join("hub.kubeconfig");
    let spokes = dir.join("spokes");
    let args: Vec<&std::ffi::OsStr> = vec![
        "--kubeconfig".as_ref(),
        os(&hub_kc),
        "--clusters".as_ref(),
        "1".as_ref(),
        "--cluster-kubeconfigs".as_ref(),
        os(&spokes),
        "--no-cluster-claims".as_ref(),
    ];
    let (_server, _) = start(&args);
    let claim = dir.join("claim.yaml");
    std::fs::write(
        &claim,
        "apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata: {name: id.open-cluster-management.io}
spec: {value: an-id}
",
    )
    .expect("write claim");
    let spoke = spokes.join("cluster1.kubeconfig").display().to_string();
    kubectl(&spoke, &["create", "-f", &claim.display().to_string()]);
    // The reporter, when it runs, reports within a fraction of a second of the change.
    std::thread::sleep(Duration::from_secs(2));
    let hub = hub_kc.display().to_string();
    let reported = kubectl(
        &hub,
        &[
            "get",
            "managedcluster",
            "cluster1",
            "-o",
            "jsonpath={.status.clusterClaims}",
        ],
    );
    assert_eq!(reported, "");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What users do first against a served cluster: `kubectl apply -f` of a `v1` List (kubectl
/// validates a List client-side, from `/openapi/v2`), and `kubectl apply -f` of what
/// `kubectl get -o yaml` printed, on a managed cluster and on the hub.
#[test]
fn kubectl_applies_lists_and_what_get_printed() {
    if !kubectl_available() {
        return;
    }
    let dir = scratch("lists");
    let hub_kc = dir.join("hub.kubeconfig");
    let spokes = dir.join("spokes");
    let args: Vec<&std::ffi::OsStr> = vec![
        "--kubeconfig".as_ref(),
        os(&hub_kc),
        "--clusters".as_ref(),
        "1".as_ref(),
        "--cluster-kubeconfigs".as_ref(),
        os(&spokes),
    ];
    let (_server, _) = start(&args);
    let hub = hub_kc.display().to_string();
    let spoke = spokes.join("cluster1.kubeconfig").display().to_string();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write manifest");
        p.display().to_string()
    };
    let list = write(
        "list.yaml",
        "apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: default}
  spec:
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec:
        containers: [{name: main, image: nginx}]
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: settings, namespace: default}
  data: {mode: fast}
",
    );
    let out = kubectl(&spoke, &["apply", "-f", &list]);
    assert!(out.contains("deployment.apps/web created"), "{out}");
    assert!(out.contains("configmap/settings created"), "{out}");
    let printed = kubectl(
        &spoke,
        &["get", "deployment/web", "configmap/settings", "-o", "yaml"],
    );
    let printed = write("printed.yaml", &printed);
    kubectl(&spoke, &["apply", "-f", &printed]);

    let works = write(
        "works.yaml",
        "apiVersion: v1
kind: List
items:
- apiVersion: work.open-cluster-management.io/v1
  kind: ManifestWork
  metadata: {name: hello, namespace: cluster1}
  spec:
    workload:
      manifests:
      - apiVersion: v1
        kind: ConfigMap
        metadata: {name: hello, namespace: default}
        data: {greeting: hi}
",
    );
    let out = kubectl(&hub, &["apply", "-f", &works]);
    assert!(
        out.contains("manifestwork.work.open-cluster-management.io/hello created"),
        "{out}"
    );
    let printed = kubectl(&hub, &["get", "managedcluster", "cluster1", "-o", "yaml"]);
    let printed = write("cluster.yaml", &printed);
    kubectl(&hub, &["apply", "-f", &printed]);
    let _ = std::fs::remove_dir_all(&dir);
}
