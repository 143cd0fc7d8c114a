//! Graceful shutdown of the work agent: a sync under way when the shutdown starts finishes
//! (resources, AppliedManifestWork and work status all written), nothing new starts, and no
//! request is made once `run` has returned.

use crate::support;

use std::time::Duration;

use kube::api::Api;
use ocm_api::work::v1::AppliedManifestWork;
use ocm_testkit::FaultRule;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use ocm_work::runtime::shutdown::Shutdown;
use serde_json::json;
use support::{
    CLUSTER, HUB_URL, clusters, condition_true, configmap, configmap_names, create_work,
    eventually, stored_work, work_object,
};

#[tokio::test]
async fn a_sync_under_way_finishes_and_nothing_runs_after_shutdown() {
    let (hub, spoke) = clusters().await;
    // Every ConfigMap create takes 100 ms: a work of 10 is being applied for about a second.
    spoke.inject(
        FaultRule::delay_only(Duration::from_millis(100))
            .verb("create")
            .resource("configmaps"),
    );
    let config = AgentConfig::new(CLUSTER, hub_hash(HUB_URL))
        .status_sync_interval(Duration::from_secs(3600))
        .resync_interval(Duration::from_secs(3600));
    let agent = WorkAgent::new(hub.client(), spoke.client(), config);
    let shutdown = Shutdown::new();
    let task = tokio::spawn(agent.run(shutdown.cancelled()));
    let manifests: Vec<_> = (0..10)
        .map(|i| configmap(&format!("cm-{i}"), "v"))
        .collect();
    create_work(
        &hub.client(),
        &work_object("slow", json!({"workload": {"manifests": manifests}})),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(10), || async {
            !configmap_names(&spoke).is_empty()
        })
        .await,
        "the apply pass started"
    );
    assert!(
        configmap_names(&spoke).len() < 10,
        "the shutdown comes while it is under way"
    );

    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("run returns after the sync under way")
        .unwrap();

    // The sync under way was not cut short.
    assert_eq!(configmap_names(&spoke).len(), 10);
    let amw_name = format!("{}-slow", hub_hash(HUB_URL));
    let amw: AppliedManifestWork = Api::all(spoke.client()).get(&amw_name).await.unwrap();
    assert_eq!(
        amw.status
            .and_then(|s| s.applied_resources)
            .unwrap_or_default()
            .len(),
        10,
        "every applied resource is recorded"
    );
    let work = stored_work(&hub, "slow").unwrap();
    assert!(condition_true(&work, "Applied"), "{:?}", work.status);
    let manifests = work
        .status
        .and_then(|s| s.resource_status)
        .and_then(|r| r.manifests)
        .unwrap_or_default();
    assert_eq!(manifests.len(), 10, "the status reports every manifest");

    // And nothing runs any more.
    let (hub_requests, spoke_requests) = (
        hub.journal().count(|_| true),
        spoke.journal().count(|_| true),
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        hub.journal().count(|_| true),
        hub_requests,
        "no hub request after run returned"
    );
    assert_eq!(
        spoke.journal().count(|_| true),
        spoke_requests,
        "no managed cluster request after run returned"
    );
}

#[tokio::test]
async fn a_shutdown_while_the_informers_start_returns_at_once() {
    let (hub, spoke) = clusters().await;
    // The hub never answers lists: the informers cannot sync.
    hub.inject(FaultRule::new(503).verb("list"));
    let agent = WorkAgent::new(
        hub.client(),
        spoke.client(),
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)),
    );
    let shutdown = Shutdown::new();
    let task = tokio::spawn(agent.run(shutdown.cancelled()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("no 30 s wait for the informers")
        .unwrap();
}
