//! The `ocm-work-agent` process at steady state, idle and with 100 ManifestWorks, for
//! comparison with upstream's published agent figures (71 → 79 MB resident and 4 → 13 mCPU
//! from idle to 100 works).
//!
//! The agent runs as its own process (the release binary, as deployed) against loopback fake
//! clusters served by this bench process, with upstream's default 10 s status sync. Each
//! criterion iteration is one status sync period (10 s of wall-clock time at steady state)
//! and yields the CPU time the agent used per second of it (the sum of its threads' on-CPU
//! time from `/proc/<pid>/task/*/schedstat`, divided by 10), so the reported time per
//! iteration reads as CPU per second: 1 ms is 1 mCPU. The resident memory (`VmRSS`) is
//! printed after each run.
//!
//! Build the agent first, then run the bench (Linux only):
//!
//! ```text
//! cargo build --release -p ocm-examples --bin ocm-work-agent
//! cargo bench -p ocm-benches --bench agent_process
//! ```
//!
//! `OCM_WORK_AGENT` names another binary.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, PostParams};
use ocm_api::work::v1::ManifestWork;
use ocm_testkit::{FakeCluster, LoopbackServer};
use serde_json::json;

struct Agent {
    child: Child,
    _servers: (LoopbackServer, LoopbackServer),
    _clusters: (FakeCluster, FakeCluster),
    dir: PathBuf,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn agent_binary() -> PathBuf {
    std::env::var_os("OCM_WORK_AGENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/ocm-work-agent")
        })
}

/// On-CPU time of every thread of `pid`, in nanoseconds.
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Starts the agent against fresh fake clusters holding `works` ManifestWorks (one ConfigMap
/// each) and waits until every ConfigMap is applied and every status written.
async fn start(works: usize) -> Agent {
    let dir = std::env::temp_dir().join(format!("ocm-bench-agent-{}-{works}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let hub = FakeCluster::new();
    let spoke = FakeCluster::new();
    ocm_testkit::install_crds(&hub).expect("crds");
    ocm_testkit::install_crds(&spoke).expect("crds");
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "cluster1"}})).expect("ns");
    Api::<Namespace>::all(hub.client())
        .create(&PostParams::default(), &ns)
        .await
        .expect("ns");
    let api: Api<ManifestWork> = Api::namespaced(hub.client(), "cluster1");
    for w in 0..works {
        let work: ManifestWork = serde_json::from_value(json!({
            "metadata": {"name": format!("work-{w}"), "namespace": "cluster1"},
            "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("cm-{w}"), "namespace": "default"},
                "data": {"index": w.to_string()}}]}}
        }))
        .expect("work");
        api.create(&PostParams::default(), &work)
            .await
            .expect("create work");
    }
    let hub_server = hub.serve_loopback().await.expect("hub");
    let spoke_server = spoke.serve_loopback().await.expect("spoke");
    hub_server
        .write_kubeconfig(dir.join("hub.kubeconfig"))
        .expect("kubeconfig");
    spoke_server
        .write_kubeconfig(dir.join("spoke.kubeconfig"))
        .expect("kubeconfig");
    let binary = agent_binary();
    assert!(
        binary.exists(),
        "{} is missing: cargo build --release -p ocm-examples --bin ocm-work-agent",
        binary.display()
    );
    let child = Command::new(binary)
        .args([
            "--cluster-name",
            "cluster1",
            "--status-sync-interval",
            "10s",
        ])
        .arg("--disable-leader-election")
        .arg("--hub-kubeconfig")
        .arg(dir.join("hub.kubeconfig"))
        .arg("--spoke-kubeconfig")
        .arg(dir.join("spoke.kubeconfig"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start ocm-work-agent");
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let applied = configmaps
            .list(&ListParams::default())
            .await
            .map(|l| l.items.len())
            .unwrap_or(0);
        let reported = api
            .list(&ListParams::default())
            .await
            .map(|l| l.items.iter().filter(|w| w.status.is_some()).count())
            .unwrap_or(0);
        if applied >= works && reported >= works {
            break;
        }
        assert!(Instant::now() < deadline, "the agent applies {works} works");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Agent {
        child,
        _servers: (hub_server, spoke_server),
        _clusters: (hub, spoke),
        dir,
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("agent_process_steady_state");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    for works in [0usize, 100] {
        let agent = runtime.block_on(start(works));
        let pid = agent.child.id();
        // Past the first status syncs.
        std::thread::sleep(Duration::from_secs(10));
        // One iteration is one status sync period (10 s) and yields the CPU time per second
        // averaged over it: the agent's work comes in bursts at each sync. Criterion plans
        // iterations from the measured (CPU) time, not from the wall clock they take, so the
        // targets below are set from an estimate over one period: one warm-up iteration, then
        // 10 samples of one iteration each.
        let period = 10u64;
        let before = cpu_ns(pid);
        std::thread::sleep(Duration::from_secs(period));
        let estimate =
            Duration::from_nanos((cpu_ns(pid).saturating_sub(before) / period).max(1_000));
        group
            .warm_up_time(estimate / 2)
            .measurement_time(estimate * 10);
        group.bench_function(format!("cpu_per_second_{works}_works"), |b| {
            b.iter_custom(|iters| {
                let before = cpu_ns(pid);
                std::thread::sleep(Duration::from_secs(iters * period));
                // Never zero, which criterion refuses (an idle agent can stay off-CPU).
                Duration::from_nanos((cpu_ns(pid).saturating_sub(before) / period).max(1))
            })
        });
        eprintln!(
            "ocm-work-agent with {works} works: VmRSS {:.1} MiB",
            rss_kib(pid) as f64 / 1024.0
        );
        drop(agent);
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
