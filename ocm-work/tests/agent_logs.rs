//! An agent whose informers cannot list a resource says so at WARN, naming the resource and
//! the cluster, once per run of failures.

use std::time::Duration;

use crate::support;

use ocm_testkit::{FakeCluster, FaultRule};
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use support::*;

// One thread: every task the agent spawns logs to this test's subscriber.
#[tokio::test(flavor = "current_thread")]
async fn an_informer_that_cannot_list_warns_naming_the_resource_and_the_cluster() {
    let capture = support::logs::capture();
    let logs = capture.logs();

    // The managed cluster lacks the AppliedManifestWork CRD at first, and refuses to list
    // ConfigMaps.
    let hub = FakeCluster::new();
    install(&hub.client(), &[CLUSTER]).await;
    let spoke = FakeCluster::new();
    spoke.inject(FaultRule::new(403).verb("list").resource("configmaps"));
    let agent = WorkAgent::new(
        hub.client(),
        spoke.client(),
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)),
    );
    let (stop, task) = start(agent);
    create_work(&hub.client(), &one_configmap_work("w", "v")).await;
    let about = |resource: &str| -> Vec<String> {
        logs.warnings()
            .into_iter()
            .filter(|l| l.contains("cannot list or watch") && l.contains(resource))
            .collect()
    };
    let seen = eventually(Duration::from_secs(10), || async {
        !about("/appliedmanifestworks").is_empty()
    })
    .await;
    assert!(seen, "{:#?}", logs.warnings());
    // The CRDs arrive: the work is applied (the agent reads ConfigMaps one by one when their
    // informer cannot list them).
    install(&spoke.client(), &["default"]).await;
    let seen = eventually(Duration::from_secs(20), || async {
        !about("/configmaps").is_empty() && configmap_value(&spoke, "w").is_some()
    })
    .await;
    assert!(seen, "{:#?}", logs.warnings());
    // Let the informers retry a few times: still one warning each.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    for resource in ["/appliedmanifestworks", "/configmaps"] {
        let lines = about(resource);
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(lines[0].contains("cluster=cluster1"), "{}", lines[0]);
    }
    let _ = stop.send(());
    let _ = task.await;
}

/// The capture sees an event whose call site another thread, capturing nothing, reached
/// first. (With a scoped subscriber per test, tracing cached such a call site as
/// uninteresting and the capturing test saw nothing.)
#[test]
fn a_capture_sees_call_sites_first_reached_on_other_threads() {
    fn say(n: u32) {
        tracing::warn!(n, "capture probe");
    }
    let capture = support::logs::capture();
    std::thread::spawn(|| say(1)).join().unwrap();
    say(2);
    let warnings = capture.logs().warnings();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(warnings[0].contains("capture probe n=2"), "{}", warnings[0]);
}
