//! The work agent against in-process fake clusters:
//!
//! * first apply of 1,000 ManifestWorks × 10 manifests (target ≥ 2,000 manifests/s);
//! * steady-state resync of those works: zero writes on either cluster, < 50 ms per 1,000 works.
//!
//! The agent runs with its informers started (`WorkAgent::start_caches`), as `WorkAgent::run`
//! does.
//!
//! Run with `cargo bench -p ocm-benches --bench agent`.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use ocm_api::work::v1::ManifestWork;
use ocm_testkit::FakeCluster;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use serde_json::json;

const WORKS: usize = 1_000;
const MANIFESTS: usize = 10;

struct Env {
    hub: FakeCluster,
    spoke: FakeCluster,
    agent: WorkAgent,
}

async fn env() -> Env {
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
    let works: Api<ManifestWork> = Api::namespaced(hub.client(), "cluster1");
    for w in 0..WORKS {
        let manifests: Vec<_> = (0..MANIFESTS)
            .map(|m| {
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("w{w}-cm{m}"), "namespace": "default"},
                "data": {"index": m.to_string()}})
            })
            .collect();
        let work: ManifestWork = serde_json::from_value(json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": format!("work-{w}"), "namespace": "cluster1"},
            "spec": {"workload": {"manifests": manifests}}
        }))
        .expect("work");
        works
            .create(&PostParams::default(), &work)
            .await
            .expect("create work");
    }
    let config =
        AgentConfig::new("cluster1", hub_hash("https://hub:6443")).resync_interval(Duration::ZERO);
    let agent = WorkAgent::new(hub.client(), spoke.client(), config);
    // Informers, as the running agent has them (`WorkAgent::run` starts them too).
    assert!(
        agent.start_caches(Duration::from_secs(30)).await,
        "informers synced"
    );
    Env { hub, spoke, agent }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("agent");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(criterion::Throughput::Elements((WORKS * MANIFESTS) as u64));
    group.bench_function("first_apply_1000_works_x_10_manifests", |b| {
        b.iter_custom(|iterations| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let env = env().await;
                    let start = Instant::now();
                    env.agent.sync_all().await.expect("sync");
                    total += start.elapsed();
                }
                total
            })
        })
    });
    group.throughput(criterion::Throughput::Elements(WORKS as u64));
    group.bench_function("steady_state_resync_1000_works", |b| {
        let env = runtime.block_on(async {
            let env = env().await;
            env.agent.sync_all().await.expect("first sync");
            // Until the informers have seen the agent's own writes (a few milliseconds).
            for _ in 0..100 {
                env.hub.journal().clear();
                env.spoke.journal().clear();
                env.agent.sync_all().await.expect("settle");
                if env.hub.journal().writes() == 0 && env.spoke.journal().writes() == 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            env
        });
        b.iter_custom(|iterations| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    env.hub.journal().clear();
                    env.spoke.journal().clear();
                    let start = Instant::now();
                    env.agent.sync_all().await.expect("resync");
                    total += start.elapsed();
                    assert_eq!(env.hub.journal().writes(), 0, "hub writes during resync");
                    assert_eq!(
                        env.spoke.journal().writes(),
                        0,
                        "spoke writes during resync"
                    );
                }
                total
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
