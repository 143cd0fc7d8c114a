//! `ocm-work-agent` as real processes (two replicas) against loopback fake API servers:
//! leader election, the endpoints over HTTP, SIGTERM stops the leader gracefully (exit 0,
//! Lease released) and the standby takes over at once, JSON logs.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, PostParams};
use ocm_api::work::v1::ManifestWork;
use ocm_testkit::FakeCluster;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Kills the child process when dropped, so a failing test leaves nothing running.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ocm-agent-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn free_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address")
}

fn start_agent(dir: &Path, name: &str, addr: SocketAddr) -> Running {
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).expect("log file");
    Running(
        Command::new(env!("CARGO_BIN_EXE_ocm-work-agent"))
            .args(["--cluster-name", "cluster1", "--status-sync-interval", "1s"])
            .args(["--namespace", "default"])
            .args(["--leader-election-lease-duration", "3s"])
            .args(["--leader-election-renew-deadline", "2s"])
            .args(["--leader-election-retry-period", "200ms"])
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

async fn leading(addr: SocketAddr) -> bool {
    http_get(addr, "/metrics").await.is_some_and(|(_, body)| {
        body.contains("leader_election_master_status{name=\"work-agent-lock\"} 1")
    })
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

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -TERM");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agent_processes_elect_a_leader_and_hand_over_on_sigterm() {
    let dir = scratch("two");
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

    let (addr_a, addr_b) = (free_port(), free_port());
    let mut a = start_agent(&dir, "a", addr_a);
    wait_for(20, "a leads", || leading(addr_a)).await;
    let mut b = start_agent(&dir, "b", addr_b);
    wait_for(20, "b is ready (standby)", || async {
        http_get(addr_b, "/readyz").await == Some((200, "ok".into()))
    })
    .await;
    assert!(!leading(addr_b).await, "one leader");
    assert_eq!(http_get(addr_a, "/healthz").await, Some((200, "ok".into())));

    let work: ManifestWork = serde_json::from_value(json!({
        "metadata": {"name": "hello", "namespace": "cluster1"},
        "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "hello", "namespace": "default"}, "data": {"k": "v"}}]}}
    }))
    .unwrap();
    Api::<ManifestWork>::namespaced(hub.client(), "cluster1")
        .create(&PostParams::default(), &work)
        .await
        .unwrap();
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    wait_for(20, "the leader applies the work", || async {
        configmaps.get_opt("hello").await.unwrap().is_some()
    })
    .await;
    let (_, metrics) = http_get(addr_a, "/metrics").await.expect("metrics");
    assert!(
        metrics.contains("ocm_work_apply_requests_total{verb=\"create\"} 1"),
        "{metrics}"
    );

    // SIGTERM: a finishes, releases the Lease and exits 0; b takes over at once.
    sigterm(&a.0);
    let stopped = Instant::now();
    let status = wait_exit(&mut a.0, 20);
    assert!(status.success(), "graceful exit: {status:?}");
    wait_for(10, "b leads", || leading(addr_b)).await;
    assert!(
        stopped.elapsed() < Duration::from_secs(3),
        "no wait for the 3 s lease duration: {:?}",
        stopped.elapsed()
    );
    sigterm(&b.0);
    assert!(wait_exit(&mut b.0, 20).success());

    // JSON logs, one object per line, with the agent's fields.
    let log = std::fs::read_to_string(dir.join("a.log")).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
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
