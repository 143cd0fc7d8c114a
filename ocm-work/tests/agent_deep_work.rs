//! Issue #28: a ManifestWork whose manifest nests deeper than `serde_json`'s 128 levels (the
//! API server takes 10,000) is a work like any other. It used to make the agent's list of its
//! cluster namespace fail as a whole, so a starting or re-listing agent applied nothing in
//! that cluster. Now the deep work is decoded and applied, and every other work converges,
//! on tokio worker threads' ordinary stacks.

use crate::support;

use std::time::Duration;

use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use support::*;

/// A work with one ConfigMap whose unknown field `extra` nests `depth` levels, as JSON text
/// (a `Value` that deep is built, copied and dropped only on a large stack).
fn deep_work(name: &str, depth: usize) -> Vec<u8> {
    format!(
        r#"{{"apiVersion":"work.open-cluster-management.io/v1","kind":"ManifestWork","metadata":{{"name":"{name}","namespace":"{CLUSTER}"}},"spec":{{"workload":{{"manifests":[{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"default"}},"data":{{"k":"deep"}},"extra":{}"x"{}}}]}}}}}}"#,
        r#"{"a":"#.repeat(depth),
        "}".repeat(depth)
    )
    .into_bytes()
}

/// Creates a work from its JSON text; the answer is not decoded (kube's client would refuse an
/// answer this deep, as it refuses lists with such an object).
async fn create_raw_work(hub: &ocm_testkit::FakeCluster, body: Vec<u8>) {
    let request = http::Request::post(format!(
        "/apis/work.open-cluster-management.io/v1/namespaces/{CLUSTER}/manifestworks"
    ))
    .header("content-type", "application/json")
    .body(body)
    .unwrap();
    hub.client()
        .request_text(request)
        .await
        .expect("the hub takes a deep work");
}

fn applied(hub: &ocm_testkit::FakeCluster, name: &str) -> bool {
    stored_work(hub, name).is_some_and(|w| {
        condition_true(&w, "Applied")
            && w.metadata
                .finalizers
                .as_deref()
                .is_some_and(|f| !f.is_empty())
    })
}

async fn starting_and_restarting_agents_apply_every_work(depth: usize) {
    let (hub, spoke) = clusters().await;
    create_raw_work(&hub, deep_work("deep", depth)).await;
    create_work(&hub.client(), &one_configmap_work("my-first-work", "v1")).await;
    // The agent starts with the deep work already there: its first list holds it.
    let agent = WorkAgent::new(
        hub.client(),
        spoke.client(),
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)),
    );
    let (stop, task) = start(agent);
    assert!(
        eventually(Duration::from_secs(60), || async {
            applied(&hub, "my-first-work") && applied(&hub, "deep")
        })
        .await,
        "both works applied (my-first-work: {}, deep: {})",
        applied(&hub, "my-first-work"),
        applied(&hub, "deep")
    );
    // The spoke's ConfigMap carries no unknown field, as a real API server would store it.
    assert_eq!(configmap_value(&spoke, "deep").as_deref(), Some("deep"));
    assert_eq!(
        configmap_value(&spoke, "my-first-work").as_deref(),
        Some("v1")
    );
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;

    // A restarted agent lists again, and a new work is applied.
    let agent = WorkAgent::new(
        hub.client(),
        spoke.client(),
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)),
    );
    let (stop, task) = start(agent);
    create_work(&hub.client(), &one_configmap_work("after-restart", "v1")).await;
    assert!(
        eventually(Duration::from_secs(60), || async {
            applied(&hub, "after-restart")
        })
        .await,
        "a new work is applied after the restart"
    );
    assert!(applied(&hub, "deep"));
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_nested_past_serde_jsons_limit_does_not_stop_its_cluster() {
    starting_and_restarting_agents_apply_every_work(1_000).await;
}

/// The deepest work the API server takes: 10,000 levels in all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_as_deep_as_the_api_server_takes_is_applied() {
    starting_and_restarting_agents_apply_every_work(10_000 - 7).await;
}
