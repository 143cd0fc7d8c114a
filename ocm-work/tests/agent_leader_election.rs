//! Two replicas of the work agent against one fake hub and one managed cluster, under leader
//! election: exactly one acts; when it dies the other takes over within the lease duration;
//! when it shuts down the other takes over at once; nothing is applied twice (counted in the
//! managed cluster's request journal).

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::api::{Api, Patch, PatchParams};
use ocm_api::work::v1::ManifestWork;
use ocm_testkit::FakeCluster;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use ocm_work::runtime::leader::{LeaderElectionConfig, LeaderElector, Outcome, WORK_AGENT_LEASE};
use ocm_work::runtime::shutdown::Shutdown;
use serde_json::json;
use support::{
    CLUSTER, HUB_URL, all_applied, clusters, configmap, configmap_value, create_work, eventually,
    work_object,
};

const LEASE_DURATION: Duration = Duration::from_millis(2000);

struct Replica {
    elector: Arc<LeaderElector>,
    shutdown: Shutdown,
    task: tokio::task::JoinHandle<ocm_work::Result<Outcome>>,
}

fn replica(hub: &FakeCluster, spoke: &FakeCluster, identity: &str) -> Replica {
    let config = LeaderElectionConfig::new("default", WORK_AGENT_LEASE)
        .identity(identity)
        .durations(
            LEASE_DURATION,
            Duration::from_millis(1500),
            Duration::from_millis(100),
        );
    // The Lease is on the managed cluster, where the agent's Deployment runs.
    let elector = Arc::new(LeaderElector::new(spoke.client(), config));
    let agent = WorkAgent::new(
        hub.client(),
        spoke.client(),
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)).status_sync_interval(Duration::from_secs(1)),
    );
    let shutdown = Shutdown::new();
    let (e, s) = (elector.clone(), shutdown.clone());
    let task =
        tokio::spawn(async move { e.run(&s, |leading| agent.run(leading.cancelled())).await });
    Replica {
        elector,
        shutdown,
        task,
    }
}

fn work(name: &str, value: &str) -> ManifestWork {
    let manifests: Vec<_> = (0..3)
        .map(|i| configmap(&format!("{name}-{i}"), value))
        .collect();
    work_object(name, json!({"workload": {"manifests": manifests}}))
}

fn configmap_writes(spoke: &FakeCluster, verbs: &[&str]) -> usize {
    spoke.journal().count(|e| {
        e.resource.as_deref() == Some("configmaps")
            && e.status < 300
            && verbs.contains(&e.verb.as_str())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_agent_acts_and_the_other_takes_over_without_applying_twice() {
    let (hub, spoke) = clusters().await;
    let a = replica(&hub, &spoke, "agent-a");
    assert!(eventually(Duration::from_secs(5), || async { a.elector.is_leader() }).await);
    let b = replica(&hub, &spoke, "agent-b");
    let mut names: Vec<String> = (0..5).map(|i| format!("w{i}")).collect();
    for name in &names {
        create_work(&hub.client(), &work(name, "v1")).await;
    }
    assert!(
        eventually(Duration::from_secs(20), || async {
            all_applied(&hub, &names)
        })
        .await
    );
    assert!(a.elector.is_leader() && !b.elector.is_leader());
    // Let the leader settle (status syncs), then count.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(configmap_writes(&spoke, &["create"]), 15);

    // The leader dies (no release, its sync possibly cut short).
    a.task.abort();
    let killed = Instant::now();
    assert!(
        eventually(Duration::from_secs(10), || async { b.elector.is_leader() }).await,
        "the standby takes over"
    );
    let took = killed.elapsed();
    assert!(
        took <= LEASE_DURATION + Duration::from_millis(1000),
        "within the lease duration: {took:?}"
    );

    // The new leader carries on: a new work, a changed one.
    create_work(&hub.client(), &work("w5", "v1")).await;
    names.push("w5".into());
    Api::<ManifestWork>::namespaced(hub.client(), CLUSTER)
        .patch(
            "w0",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": work("w0", "v2").spec})),
        )
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(20), || async {
            all_applied(&hub, &names) && configmap_value(&spoke, "w0-0").as_deref() == Some("v2")
        })
        .await
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // Nothing applied twice: each ConfigMap created once, updated only when its work changed.
    assert_eq!(configmap_writes(&spoke, &["create"]), 18, "one create each");
    assert_eq!(
        configmap_writes(&spoke, &["update", "patch"]),
        3,
        "only w0's three ConfigMaps were written again"
    );
    let records = spoke.journal().count(|e| {
        e.resource.as_deref() == Some("appliedmanifestworks")
            && e.verb == "create"
            && e.status < 300
    });
    assert_eq!(records, 6, "one AppliedManifestWork each");

    // A graceful shutdown hands over at once to a new replica.
    let c = replica(&hub, &spoke, "agent-c");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!c.elector.is_leader());
    b.shutdown.cancel();
    let stopped = Instant::now();
    assert_eq!(b.task.await.unwrap().unwrap(), Outcome::Released);
    assert!(eventually(Duration::from_secs(5), || async { c.elector.is_leader() }).await);
    assert!(
        stopped.elapsed() < LEASE_DURATION,
        "released, no lease-duration wait: {:?}",
        stopped.elapsed()
    );
    c.shutdown.cancel();
    assert_eq!(c.task.await.unwrap().unwrap(), Outcome::Released);
    assert_eq!(configmap_writes(&spoke, &["create"]), 18);
    assert_eq!(configmap_writes(&spoke, &["update", "patch"]), 3);
}
