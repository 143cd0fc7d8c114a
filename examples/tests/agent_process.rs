//! `ocm-work-agent` and `ocm-hub-controller` as real processes (two replicas each) against
//! loopback fake API servers: leader election, the endpoints over HTTP, SIGTERM and SIGINT
//! stop a replica gracefully (exit 0, Lease released) and the standby takes over at once, a
//! killed leader is replaced once its Lease expires, nothing is applied twice (counted in the
//! fake servers' request journals), `/readyz` waits for the leader's informers, JSON logs.
//!
//! Time bounds are generous (a loaded 2-core machine): only the order of events and the
//! Lease's own arithmetic are asserted tightly.

use crate::common;

use common::{Running, scratch};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, PostParams};
use ocm_api::work::v1::ManifestWork;
use ocm_testkit::{FakeCluster, FakeHub, JournalEntry, LoopbackServer};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn free_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address")
}

/// Lease timings of one test: (lease duration, renew deadline, retry period).
type Timings = (&'static str, &'static str, &'static str);

/// Short enough for a test, long enough that a loaded machine renews in time.
const FAST: Timings = ("4s", "3s", "300ms");

fn start_agent(dir: &Path, name: &str, addr: SocketAddr, timings: Timings) -> Running {
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).expect("log file");
    Running(
        Command::new(env!("CARGO_BIN_EXE_ocm-work-agent"))
            .args(["--cluster-name", "cluster1", "--status-sync-interval", "1s"])
            .args(["--namespace", "default"])
            .args(["--leader-election-lease-duration", timings.0])
            .args(["--leader-election-renew-deadline", timings.1])
            .args(["--leader-election-retry-period", timings.2])
            .args(["--endpoints-address", &addr.to_string()])
            .args(["--log-format", "json"])
            .arg("--hub-kubeconfig")
            .arg(dir.join("hub.kubeconfig"))
            .arg("--spoke-kubeconfig")
            .arg(dir.join("spoke.kubeconfig"))
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start ocm-work-agent"),
    )
}

fn start_hub_controller(dir: &Path, name: &str, addr: SocketAddr) -> Running {
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).expect("log file");
    Running(
        Command::new(env!("CARGO_BIN_EXE_ocm-hub-controller"))
            .arg("--kubeconfig")
            .arg(dir.join("hub.kubeconfig"))
            .args(["--namespace", "default"])
            .args(["--leader-election-lease-duration", FAST.0])
            .args(["--leader-election-renew-deadline", FAST.1])
            .args(["--leader-election-retry-period", FAST.2])
            .args(["--endpoints-address", &addr.to_string()])
            .args(["--log-format", "json"])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start ocm-hub-controller"),
    )
}

async fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await.ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// The value of one series (`name{labels}` exactly as exposed) in a Prometheus text body.
fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        l.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

async fn leading(addr: SocketAddr, lease: &str) -> bool {
    let series = format!("leader_election_master_status{{name=\"{lease}\"}}");
    http_get(addr, "/metrics")
        .await
        .is_some_and(|(_, body)| sample(&body, &series) == Some(1.0))
}

async fn ready(addr: SocketAddr) -> bool {
    http_get(addr, "/readyz").await == Some((200, "ok".into()))
}

async fn wait_for<F, Fut>(secs: u64, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name}");
}

fn wait_exit(child: &mut Child, secs: u64) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        assert!(Instant::now() < deadline, "the process did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The JSON lines of a log file (every line must be one JSON object).
fn json_log(path: &Path) -> (String, Vec<serde_json::Value>) {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    let lines = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (log, lines)
}

/// A hub and a managed cluster on loopback, with kubeconfigs in `dir` and the cluster
/// namespace on the hub.
struct Clusters {
    hub: FakeCluster,
    spoke: FakeCluster,
    _servers: (LoopbackServer, LoopbackServer),
}

async fn clusters(dir: &Path) -> Clusters {
    let hub = FakeCluster::new();
    ocm_testkit::install_crds(&hub).expect("CRDs");
    let spoke = FakeCluster::new();
    ocm_testkit::install_crds(&spoke).expect("CRDs");
    let hub_server = hub.serve_loopback().await.expect("hub loopback");
    let spoke_server = spoke.serve_loopback().await.expect("spoke loopback");
    hub_server
        .write_kubeconfig(dir.join("hub.kubeconfig"))
        .expect("hub kubeconfig");
    spoke_server
        .write_kubeconfig(dir.join("spoke.kubeconfig"))
        .expect("spoke kubeconfig");
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "cluster1"}})).unwrap();
    Api::<Namespace>::all(hub.client())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    Clusters {
        hub,
        spoke,
        _servers: (hub_server, spoke_server),
    }
}

async fn create_work(hub: &FakeCluster, name: &str) {
    let work: ManifestWork = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "cluster1"},
        "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}]},
            "manifestConfigs": [{
                "resourceIdentifier": {"group": "", "resource": "configmaps",
                    "namespace": "default", "name": name},
                "feedbackRules": [{"type": "JSONPaths",
                    "jsonPaths": [{"name": "k", "path": ".data.k"}]}]}]}
    }))
    .unwrap();
    Api::<ManifestWork>::namespaced(hub.client(), "cluster1")
        .create(&PostParams::default(), &work)
        .await
        .unwrap();
}

async fn wait_applied(spoke: &FakeCluster, name: &str) {
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    wait_for(30, &format!("ConfigMap {name} applied"), || async {
        configmaps.get_opt(name).await.unwrap().is_some()
    })
    .await;
}

/// Successful writes to ConfigMaps on the managed cluster, by verb.
fn configmap_writes(spoke: &FakeCluster) -> Vec<JournalEntry> {
    spoke
        .journal()
        .entries()
        .into_iter()
        .filter(|e| e.is_write() && e.resource.as_deref() == Some("configmaps") && e.status < 300)
        .collect()
}

async fn lease_holder(cluster: &FakeCluster, name: &str) -> Option<String> {
    Api::<Lease>::namespaced(cluster.client(), "default")
        .get_opt(name)
        .await
        .ok()
        .flatten()
        .and_then(|l| l.spec?.holder_identity)
        .filter(|h| !h.is_empty())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agent_processes_elect_a_leader_and_hand_over_on_sigterm() {
    let dir = scratch("two");
    let clusters = clusters(&dir).await;
    let (hub, spoke) = (&clusters.hub, &clusters.spoke);

    let (addr_a, addr_b) = (free_port(), free_port());
    let mut a = start_agent(&dir, "a", addr_a, FAST);
    wait_for(30, "a leads", || leading(addr_a, "work-agent-lock")).await;
    wait_for(30, "a is ready (leader, informers synced)", || {
        ready(addr_a)
    })
    .await;
    let mut b = start_agent(&dir, "b", addr_b, FAST);
    wait_for(30, "b is ready (standby)", || ready(addr_b)).await;
    assert!(!leading(addr_b, "work-agent-lock").await, "one leader");
    assert_eq!(http_get(addr_a, "/healthz").await, Some((200, "ok".into())));
    assert_eq!(http_get(addr_b, "/healthz").await, Some((200, "ok".into())));
    assert_eq!(http_get(addr_a, "/nothing").await.map(|r| r.0), Some(404));

    create_work(hub, "hello").await;
    wait_applied(spoke, "hello").await;
    // The standby applied nothing.
    let (_, metrics_b) = http_get(addr_b, "/metrics").await.expect("metrics");
    assert_eq!(
        sample(&metrics_b, "ocm_work_apply_requests_total{verb=\"create\"}"),
        None,
        "{metrics_b}"
    );
    // The leader's series, named as the issue asks: workqueue depth and latency, reconcile
    // counts and errors, apply requests by verb, feedback scrapes, leadership.
    let (_, metrics) = http_get(addr_a, "/metrics").await.expect("metrics");
    assert_eq!(
        sample(&metrics, "ocm_work_apply_requests_total{verb=\"create\"}"),
        Some(1.0),
        "{metrics}"
    );
    assert!(
        sample(
            &metrics,
            "ocm_reconcile_total{controller=\"manifestwork\",result=\"success\"}"
        )
        .is_some_and(|v| v >= 1.0),
        "{metrics}"
    );
    assert!(
        sample(
            &metrics,
            "workqueue_work_duration_seconds_count{name=\"manifestwork\"}"
        )
        .is_some_and(|v| v >= 1.0),
        "{metrics}"
    );
    assert!(
        sample(&metrics, "workqueue_depth{name=\"manifestwork\"}").is_some(),
        "{metrics}"
    );
    assert!(
        sample(
            &metrics,
            "ocm_work_feedback_scrapes_total{scrape_type=\"Poll\"}"
        )
        .is_some_and(|v| v >= 1.0),
        "{metrics}"
    );
    // Families without samples (here: no reconcile failed) are left out, as client_golang's
    // vectors are.
    assert_eq!(
        sample(
            &metrics,
            "ocm_reconcile_errors_total{controller=\"manifestwork\"}"
        ),
        None
    );
    for family in [
        "# TYPE workqueue_queue_duration_seconds histogram",
        "# TYPE workqueue_adds_total counter",
        "# TYPE ocm_reconcile_duration_seconds histogram",
        "# TYPE leader_election_master_status gauge",
    ] {
        assert!(metrics.contains(family), "{family} in {metrics}");
    }

    // SIGTERM: a finishes, releases the Lease and exits 0; b takes over at once (long before
    // the 4 s lease duration would let it).
    signal(&a.0, "TERM");
    let stopped = Instant::now();
    let status = wait_exit(&mut a.0, 30);
    assert!(status.success(), "graceful exit: {status:?}");
    wait_for(30, "b leads", || leading(addr_b, "work-agent-lock")).await;
    assert!(
        stopped.elapsed() < Duration::from_secs(4),
        "no wait for the lease duration: {:?}",
        stopped.elapsed()
    );
    create_work(hub, "second").await;
    wait_applied(spoke, "second").await;
    // b looks at "hello" again but does not write it: one create per ConfigMap, nothing else.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let writes = configmap_writes(spoke);
    assert_eq!(
        writes.iter().map(|e| e.verb.as_str()).collect::<Vec<_>>(),
        ["create", "create"],
        "{writes:?}"
    );

    signal(&b.0, "TERM");
    assert!(wait_exit(&mut b.0, 30).success());
    assert_eq!(lease_holder(spoke, "work-agent-lock").await, None);

    // JSON logs, one object per line, with the agent's fields.
    let (log, lines) = json_log(&dir.join("a.log"));
    assert!(
        lines
            .iter()
            .any(|l| l["message"] == "work agent started" && l["cluster"] == "cluster1"),
        "{log}"
    );
    assert!(
        lines.iter().any(|l| l["message"] == "released the Lease"),
        "{log}"
    );
    assert!(!log.contains('\u{1b}'), "no colour codes off a terminal");
    if std::env::var_os("KEEP_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_leader_is_replaced_after_its_lease_expires_and_nothing_is_applied_twice() {
    let dir = scratch("kill");
    let clusters = clusters(&dir).await;
    let (hub, spoke) = (&clusters.hub, &clusters.spoke);

    let (addr_a, addr_b) = (free_port(), free_port());
    let mut a = start_agent(&dir, "a", addr_a, FAST);
    wait_for(30, "a leads", || leading(addr_a, "work-agent-lock")).await;
    let b = start_agent(&dir, "b", addr_b, FAST);
    wait_for(30, "b is ready (standby)", || ready(addr_b)).await;
    create_work(hub, "hello").await;
    wait_applied(spoke, "hello").await;
    let holder = lease_holder(spoke, "work-agent-lock").await.expect("held");

    // SIGKILL: no release. b must wait until the Lease it last saw renewed has gone
    // unrenewed for the lease duration (4 s), and then take it.
    signal(&a.0, "KILL");
    let killed = Instant::now();
    let status = wait_exit(&mut a.0, 30);
    assert!(!status.success());
    wait_for(60, "b leads", || leading(addr_b, "work-agent-lock")).await;
    let took = killed.elapsed();
    // a renewed at most one retry period (0.3 s) before it died, so b cannot have taken the
    // Lease earlier than 4 - 0.3 s after the kill.
    assert!(
        took >= Duration::from_millis(3_700),
        "b took over after {took:?}, before the lease expired"
    );
    let new_holder = lease_holder(spoke, "work-agent-lock").await.expect("held");
    assert_ne!(new_holder, holder);
    let lease = Api::<Lease>::namespaced(spoke.client(), "default")
        .get("work-agent-lock")
        .await
        .unwrap();
    assert_eq!(
        lease.spec.as_ref().and_then(|s| s.lease_duration_seconds),
        Some(4)
    );

    create_work(hub, "second").await;
    wait_applied(spoke, "second").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let writes = configmap_writes(spoke);
    assert_eq!(
        writes.iter().map(|e| e.verb.as_str()).collect::<Vec<_>>(),
        ["create", "create"],
        "{writes:?}"
    );
    // One AppliedManifestWork per work, created once.
    let amw_creates = spoke.journal().count(|e| {
        e.verb == "create"
            && e.resource.as_deref() == Some("appliedmanifestworks")
            && e.status < 300
    });
    assert_eq!(amw_creates, 2);
    drop(b);
    if std::env::var_os("KEEP_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_the_agent_gracefully_and_releases_the_lease() {
    let dir = scratch("sigint");
    let clusters = clusters(&dir).await;
    let (hub, spoke) = (&clusters.hub, &clusters.spoke);
    let addr = free_port();
    // Default (upstream) timings: were the Lease not released, a successor would wait 137 s.
    let mut a = start_agent(&dir, "a", addr, ("137s", "107s", "26s"));
    wait_for(30, "a leads", || leading(addr, "work-agent-lock")).await;
    create_work(hub, "hello").await;
    wait_applied(spoke, "hello").await;
    assert!(lease_holder(spoke, "work-agent-lock").await.is_some());

    signal(&a.0, "INT");
    let status = wait_exit(&mut a.0, 30);
    assert!(status.success(), "graceful exit: {status:?}");
    assert_eq!(lease_holder(spoke, "work-agent-lock").await, None);
    // The work's status was written before the agent stopped: nothing half done.
    let work = Api::<ManifestWork>::namespaced(hub.client(), "cluster1")
        .get("hello")
        .await
        .unwrap();
    let applied = work
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .any(|c| c.type_ == "Applied" && c.status == "True");
    assert!(applied);

    // A new replica with the same timings leads at once.
    let started = Instant::now();
    let _b = start_agent(&dir, "b", addr, ("137s", "107s", "26s"));
    wait_for(60, "the successor leads", || {
        leading(addr, "work-agent-lock")
    })
    .await;
    assert!(started.elapsed() < Duration::from_secs(60));
    let (log, lines) = json_log(&dir.join("a.log"));
    assert!(
        lines.iter().any(|l| l["message"] == "released the Lease"),
        "{log}"
    );
    if std::env::var_os("KEEP_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hub_controller_processes_elect_a_leader_and_expose_their_series() {
    let dir = scratch("hub");
    let fake = FakeHub::new(2).expect("fake hub");
    let hub = fake.hub();
    let server = hub.serve_loopback().await.expect("loopback");
    server
        .write_kubeconfig(dir.join("hub.kubeconfig"))
        .expect("kubeconfig");
    let client = hub.client();
    for value in [
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
            "metadata": {"name": "default", "namespace": "apps"}, "spec": {"clusterSet": "default"}}),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "all", "namespace": "apps"}, "spec": {}}),
        json!({"apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
            "metadata": {"name": "demo", "namespace": "apps"},
            "spec": {"placementRefs": [{"name": "all", "rolloutStrategy": {"type": "All"}}],
                "manifestWorkTemplate": {"workload": {"manifests": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo", "namespace": "default"}}]}}}}),
    ] {
        let object: kube::api::DynamicObject = serde_json::from_value(value).unwrap();
        let gvk = kube::core::GroupVersionKind::try_from(object.types.as_ref().unwrap()).unwrap();
        let (ar, caps) = kube::discovery::pinned_kind(&client, &gvk).await.unwrap();
        let api: Api<kube::api::DynamicObject> =
            match (caps.scope, object.metadata.namespace.as_deref()) {
                (kube::discovery::Scope::Namespaced, Some(ns)) => {
                    Api::namespaced_with(client.clone(), ns, &ar)
                }
                _ => Api::all_with(client.clone(), &ar),
            };
        api.create(&PostParams::default(), &object).await.unwrap();
    }

    const LEASE: &str = "ocm-hub-controller-lock";
    let (addr_a, addr_b) = (free_port(), free_port());
    // The leader is not ready until every controller's informers have listed: listing the
    // replica sets fails until the fault is cleared.
    hub.inject(
        ocm_testkit::fault::FaultRule::new(500)
            .verb("list")
            .resource("manifestworkreplicasets"),
    );
    let mut a = start_hub_controller(&dir, "a", addr_a);
    wait_for(30, "a leads", || leading(addr_a, LEASE)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (status, body) = http_get(addr_a, "/readyz").await.expect("readyz");
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("[-]leader failed: the controllers' informers have not listed yet"),
        "{body}"
    );
    hub.faults().clear();
    wait_for(30, "a is ready (leader, informers synced)", || {
        ready(addr_a)
    })
    .await;
    let mut b = start_hub_controller(&dir, "b", addr_b);
    wait_for(30, "b is ready (standby)", || ready(addr_b)).await;
    assert!(ready(addr_a).await);
    assert!(!leading(addr_b, LEASE).await, "one leader");
    let works: Api<ManifestWork> = Api::all(client.clone());
    let work_count = || async {
        works
            .list(&ListParams::default())
            .await
            .map(|l| l.items.len())
            .unwrap_or(0)
    };
    wait_for(30, "a ManifestWork in both cluster namespaces", || async {
        work_count().await == 2
    })
    .await;
    // Placement schedule durations and counts, rollout progress, reconcile counts.
    let rollout =
        "ocm_manifestworkreplicaset_clusters{namespace=\"apps\",name=\"demo\",state=\"total\"}";
    wait_for(30, "the rollout's series", || async {
        http_get(addr_a, "/metrics")
            .await
            .is_some_and(|(_, m)| sample(&m, rollout) == Some(2.0))
    })
    .await;
    let (_, metrics) = http_get(addr_a, "/metrics").await.expect("metrics");
    assert!(
        sample(
            &metrics,
            "ocm_placement_schedules_total{result=\"success\"}"
        )
        .is_some_and(|v| v >= 1.0),
        "{metrics}"
    );
    assert!(
        sample(&metrics, "ocm_placement_schedule_duration_seconds_count").is_some_and(|v| v >= 1.0),
        "{metrics}"
    );
    for family in [
        "# TYPE ocm_reconcile_total counter",
        "# TYPE ocm_reconcile_duration_seconds histogram",
        "# TYPE ocm_placement_schedule_duration_seconds histogram",
    ] {
        assert!(metrics.contains(family), "{family} in {metrics}");
    }
    let (_, standby) = http_get(addr_b, "/metrics").await.expect("metrics");
    assert_eq!(
        sample(
            &standby,
            "ocm_placement_schedules_total{result=\"success\"}"
        ),
        None,
        "the standby schedules nothing: {standby}"
    );

    signal(&a.0, "TERM");
    assert!(wait_exit(&mut a.0, 30).success());
    wait_for(30, "b leads", || leading(addr_b, LEASE)).await;
    wait_for(30, "b schedules", || async {
        http_get(addr_b, "/metrics").await.is_some_and(|(_, m)| {
            sample(&m, "ocm_placement_schedules_total{result=\"success\"}")
                .is_some_and(|v| v >= 1.0)
        })
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    // The new leader found the works in place: each created once.
    let creates = hub.journal().count(|e| {
        e.verb == "create" && e.resource.as_deref() == Some("manifestworks") && e.status < 300
    });
    assert_eq!(creates, 2);
    signal(&b.0, "TERM");
    assert!(wait_exit(&mut b.0, 30).success());
    assert_eq!(lease_holder(hub, LEASE).await, None);
    let (log, lines) = json_log(&dir.join("a.log"));
    assert!(
        lines.iter().any(|l| l["message"] == "released the Lease"),
        "{log}"
    );
    if std::env::var_os("KEEP_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
