//! `ocm-work-agent` and `ocm-hub-controller` as real processes (two replicas each) against
//! loopback fake API servers: leader election, the endpoints over HTTP, SIGTERM and SIGINT
//! stop a replica gracefully (exit 0, Lease released) and the standby takes over at once, a
//! killed leader is replaced once its Lease expires, nothing is applied twice (counted in the
//! fake servers' request journals), `/readyz` waits for the leader's informers, JSON logs.
//!
//! Time bounds are generous (a loaded 2-core machine): only the order of events and the
//! Lease's own arithmetic are asserted tightly.

use crate::common;
use ocm_testkit::wait::wait_for;

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
    wait_for(
        &format!("ConfigMap {name} applied"),
        Duration::from_secs(30),
        || async { configmaps.get_opt(name).await.unwrap().is_some() },
    )
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
    wait_for("a leads", Duration::from_secs(30), || {
        leading(addr_a, "work-agent-lock")
    })
    .await;
    wait_for(
        "a is ready (leader, informers synced)",
        Duration::from_secs(30),
        || ready(addr_a),
    )
    .await;
    let mut b = start_agent(&dir, "b", addr_b, FAST);
    wait_for("b is ready (standby)", Duration::from_secs(30), || {
        ready(addr_b)
    })
    .await;
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
    wait_for("b leads", Duration::from_secs(30), || {
        leading(addr_b, "work-agent-lock")
    })
    .await;
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
    wait_for("a leads", Duration::from_secs(30), || {
        leading(addr_a, "work-agent-lock")
    })
    .await;
    let b = start_agent(&dir, "b", addr_b, FAST);
    wait_for("b is ready (standby)", Duration::from_secs(30), || {
        ready(addr_b)
    })
    .await;
    create_work(hub, "hello").await;
    wait_applied(spoke, "hello").await;
    let holder = lease_holder(spoke, "work-agent-lock").await.expect("held");

    // SIGKILL: no release. b must wait until the Lease it last saw renewed has gone
    // unrenewed for the lease duration (4 s), and then take it.
    signal(&a.0, "KILL");
    let killed = Instant::now();
    let status = wait_exit(&mut a.0, 30);
    assert!(!status.success());
    wait_for("b leads", Duration::from_secs(60), || {
        leading(addr_b, "work-agent-lock")
    })
    .await;
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
    wait_for("a leads", Duration::from_secs(30), || {
        leading(addr, "work-agent-lock")
    })
    .await;
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
    wait_for("the successor leads", Duration::from_secs(60), || {
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
    wait_for("a leads", Duration::from_secs(30), || {
        leading(addr_a, LEASE)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (status, body) = http_get(addr_a, "/readyz").await.expect("readyz");
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("[-]leader failed: the controllers' informers have not listed yet"),
        "{body}"
    );
    hub.faults().clear();
    wait_for(
        "a is ready (leader, informers synced)",
        Duration::from_secs(30),
        || ready(addr_a),
    )
    .await;
    let mut b = start_hub_controller(&dir, "b", addr_b);
    wait_for("b is ready (standby)", Duration::from_secs(30), || {
        ready(addr_b)
    })
    .await;
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
    wait_for(
        "a ManifestWork in both cluster namespaces",
        Duration::from_secs(30),
        || async { work_count().await == 2 },
    )
    .await;
    // Placement schedule durations and counts, rollout progress, reconcile counts.
    let rollout =
        "ocm_manifestworkreplicaset_clusters{namespace=\"apps\",name=\"demo\",state=\"total\"}";
    wait_for("the rollout's series", Duration::from_secs(30), || async {
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
    wait_for("b leads", Duration::from_secs(30), || {
        leading(addr_b, LEASE)
    })
    .await;
    wait_for("b schedules", Duration::from_secs(30), || async {
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

/// Creates `objects` (any kind the hub serves) on `hub`.
async fn create_all(hub: &FakeCluster, objects: Vec<serde_json::Value>) {
    let client = hub.client();
    for value in objects {
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
}

/// A Placement selecting every cluster of the `default` set in `apps`, and `count`
/// ManifestWorkReplicaSets (`rs-0`…) rolling one ConfigMap out through it.
fn replica_sets(first: usize, count: usize) -> Vec<serde_json::Value> {
    (first..first + count)
        .map(|i| {
            json!({"apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
                "metadata": {"name": format!("rs-{i}"), "namespace": "apps"},
                "spec": {"placementRefs": [{"name": "all", "rolloutStrategy": {"type": "All"}}],
                    "manifestWorkTemplate": {"workload": {"manifests": [
                        {"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": format!("rs-{i}"), "namespace": "default"}}]}}}})
        })
        .collect()
}

fn apps_with_placement() -> Vec<serde_json::Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
            "metadata": {"name": "default", "namespace": "apps"}, "spec": {"clusterSet": "default"}}),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "all", "namespace": "apps"}, "spec": {}}),
    ]
}

/// Every write to the hub that is not about a Lease, as `verb resource namespace/name`, and
/// the ones answered 409 Conflict (two writers racing).
fn hub_writes(hub: &FakeCluster) -> (Vec<String>, Vec<String>) {
    let writes: Vec<JournalEntry> = hub
        .journal()
        .entries()
        .into_iter()
        .filter(|e| e.is_write() && e.resource.as_deref() != Some("leases"))
        .collect();
    let line = |e: &JournalEntry| {
        format!(
            "{} {}{} {}/{}",
            e.verb,
            e.resource.as_deref().unwrap_or_default(),
            e.subresource
                .as_deref()
                .map(|s| format!("/{s}"))
                .unwrap_or_default(),
            e.namespace.as_deref().unwrap_or_default(),
            e.name.as_deref().unwrap_or_default()
        )
    };
    let conflicts = writes
        .iter()
        .filter(|e| e.status == 409)
        .map(line)
        .collect();
    (
        writes.iter().filter(|e| e.status < 300).map(line).collect(),
        conflicts,
    )
}

/// How many successful creates each object of `resource` got (`namespace/name` → count).
fn creates_per_object(
    hub: &FakeCluster,
    resource: &str,
) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for e in hub.journal().entries() {
        if e.verb == "create" && e.resource.as_deref() == Some(resource) && e.status < 300 {
            // A create's path names the namespace, not the object: count per namespace.
            *out.entry(e.namespace.unwrap_or_default()).or_insert(0) += 1;
        }
    }
    out
}

/// The first finding: two `ocm-hub-controller` replicas started outside a pod as the
/// README used to start them (no `--namespace`) both reconciled, racing (409s) and writing
/// twice. Now, as upstream's, they refuse to start without a Lease namespace (naming the
/// flags), and write nothing; the same goes for `ocm-work-agent`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_without_a_lease_namespace_refuse_to_start_instead_of_both_acting() {
    let dir = scratch("no-namespace");
    let fake = FakeHub::new(2).expect("fake hub");
    let hub = fake.hub();
    let server = hub.serve_loopback().await.expect("loopback");
    server
        .write_kubeconfig(dir.join("hub.kubeconfig"))
        .expect("kubeconfig");
    let mut objects = apps_with_placement();
    objects.extend(replica_sets(0, 2));
    create_all(hub, objects).await;
    hub.journal().clear();

    let start = || {
        Command::new(env!("CARGO_BIN_EXE_ocm-hub-controller"))
            .arg("--kubeconfig")
            .arg(dir.join("hub.kubeconfig"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start ocm-hub-controller")
    };
    let (a, b) = (start(), start());
    for child in [a, b] {
        let mut child = Running(child);
        let status = wait_exit(&mut child.0, 30);
        let mut stderr = String::new();
        use std::io::Read;
        if let Some(mut pipe) = child.0.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        assert!(!status.success(), "{stderr}");
        assert!(
            stderr.contains("namespace may not be empty")
                && stderr.contains("--namespace <namespace>")
                && stderr.contains("--disable-leader-election"),
            "{stderr}"
        );
    }
    let (writes, conflicts) = hub_writes(hub);
    assert!(
        writes.is_empty() && conflicts.is_empty(),
        "{writes:?} {conflicts:?}"
    );

    // The agent: the same rule, on the managed cluster where its Lease would live.
    let clusters = clusters(&dir).await;
    let out = Command::new(env!("CARGO_BIN_EXE_ocm-work-agent"))
        .args(["--cluster-name", "cluster1"])
        .arg("--hub-kubeconfig")
        .arg(dir.join("hub.kubeconfig"))
        .arg("--spoke-kubeconfig")
        .arg(dir.join("spoke.kubeconfig"))
        .output()
        .expect("run ocm-work-agent");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("namespace may not be empty"), "{stderr}");
    assert_eq!(clusters.spoke.journal().count(|e| e.is_write()), 0);
    if std::env::var_os("KEEP_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Two `ocm-hub-controller` replicas started the way the README starts one (`--kubeconfig
/// hub.kubeconfig --namespace default`, here with short Lease timings and an endpoint to ask
/// who leads), on a hub whose Lease renewals answer late and whose watches drop: exactly one
/// acts; killed (no release), the other takes over once the lease duration has passed, and
/// no object is written twice, nor does any write conflict with another replica's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hub_controllers_started_alike_never_both_act_and_a_killed_leader_is_replaced() {
    const LEASE: &str = "ocm-hub-controller-lock";
    let dir = scratch("hub-kill");
    let fake = FakeHub::new(3).expect("fake hub");
    let hub = fake.hub();
    let server = hub.serve_loopback().await.expect("loopback");
    server
        .write_kubeconfig(dir.join("hub.kubeconfig"))
        .expect("kubeconfig");
    let mut objects = apps_with_placement();
    objects.extend(replica_sets(0, 5));
    create_all(hub, objects).await;
    // A real hub's slow paths: Lease renewals answered late, watches that drop.
    hub.inject(
        ocm_testkit::fault::FaultRule::delay_only(Duration::from_millis(400))
            .verb("update")
            .resource("leases"),
    );
    for resource in ["manifestworks", "manifestworkreplicasets", "placements"] {
        hub.inject(ocm_testkit::fault::FaultRule::drop_watch_after(7).resource(resource));
    }
    hub.journal().clear();

    let (addr_a, addr_b) = (free_port(), free_port());
    let mut a = start_hub_controller(&dir, "a", addr_a);
    let mut b = start_hub_controller(&dir, "b", addr_b);
    let leader_of = || async {
        let (la, lb) = (leading(addr_a, LEASE).await, leading(addr_b, LEASE).await);
        assert!(!(la && lb), "both replicas lead");
        match (la, lb) {
            (true, _) => Some('a'),
            (_, true) => Some('b'),
            _ => None,
        }
    };
    wait_for("a leader", Duration::from_secs(30), || async {
        leader_of().await.is_some()
    })
    .await;
    let works: Api<ManifestWork> = Api::all(hub.client());
    let work_count = || async {
        works
            .list(&ListParams::default())
            .await
            .map(|l| l.items.len())
            .unwrap_or(0)
    };
    wait_for(
        "15 ManifestWorks (5 replica sets × 3 clusters)",
        Duration::from_secs(60),
        || async { work_count().await == 15 },
    )
    .await;
    // Let the leader settle (every replica set's status counts its 3 works), watching that
    // the standby never leads.
    let statuses: Api<ocm_api::work::v1alpha1::ManifestWorkReplicaSet> =
        Api::namespaced(hub.client(), "apps");
    wait_for(
        "every replica set's status counts 3 works",
        Duration::from_secs(60),
        || async {
            leader_of().await;
            statuses.list(&ListParams::default()).await.is_ok_and(|l| {
                l.items.len() == 5
                    && l.items.iter().all(|rs| {
                        rs.status
                            .as_ref()
                            .and_then(|s| s.summary.as_ref())
                            .and_then(|s| s.total)
                            == Some(3)
                    })
            })
        },
    )
    .await;
    for _ in 0..5 {
        leader_of().await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let first = leader_of().await.expect("a leader");
    let (leader, standby_addr) = match first {
        'a' => (&mut a, addr_b),
        _ => (&mut b, addr_a),
    };
    let (_, standby_metrics) = http_get(standby_addr, "/metrics").await.expect("metrics");
    assert_eq!(
        sample(
            &standby_metrics,
            "ocm_placement_schedules_total{result=\"success\"}"
        ),
        None,
        "the standby schedules nothing: {standby_metrics}"
    );
    let before_kill = hub_writes(hub);

    // SIGKILL: no release. The standby waits out the lease duration (4 s) from the last
    // renewal it saw, then takes over.
    signal(&leader.0, "KILL");
    let killed = Instant::now();
    assert!(!wait_exit(&mut leader.0, 30).success());
    wait_for("the standby leads", Duration::from_secs(60), || {
        leading(standby_addr, LEASE)
    })
    .await;
    let took = killed.elapsed();
    // The last renewal before the kill was at most a retry period (0.3 s) plus the injected
    // 0.4 s earlier.
    assert!(
        took >= Duration::from_millis(3_300),
        "taken over after {took:?}, before the lease expired"
    );
    assert!(
        took < Duration::from_secs(4 + 10),
        "taken over only after {took:?}"
    );
    // The new leader lists everything and finds it in place; then a new replica set is
    // rolled out by it alone.
    wait_for(
        "the new leader schedules",
        Duration::from_secs(30),
        || async {
            http_get(standby_addr, "/metrics")
                .await
                .is_some_and(|(_, m)| {
                    sample(&m, "ocm_placement_schedules_total{result=\"success\"}")
                        .is_some_and(|v| v >= 1.0)
                })
        },
    )
    .await;
    create_all(hub, replica_sets(5, 1)).await;
    wait_for("18 ManifestWorks", Duration::from_secs(60), || async {
        work_count().await == 18
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let (writes, conflicts) = hub_writes(hub);
    assert!(conflicts.is_empty(), "writes that raced: {conflicts:?}");
    // Each work created once: 6 per cluster namespace (5 before the kill, 1 after).
    let creates = creates_per_object(hub, "manifestworks");
    assert_eq!(
        creates.values().copied().collect::<Vec<_>>(),
        [6, 6, 6],
        "{creates:?}"
    );
    // The placement's one PlacementDecision was created once.
    assert_eq!(
        creates_per_object(hub, "placementdecisions").get("apps"),
        Some(&1),
        "{writes:?}"
    );
    // The new leader rewrote nothing that was in place before the kill: every write since
    // is the new replica set's (the test's create, then its finalizer, works and status).
    let after: Vec<&String> = writes[before_kill.0.len()..]
        .iter()
        .filter(|w| !w.contains("rs-5"))
        .filter(|w| {
            !w.starts_with("create manifestworks ") && *w != "create manifestworkreplicasets apps/"
        })
        .collect();
    assert!(after.is_empty(), "writes after the take-over: {after:?}");
    if std::env::var_os("KEEP_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
