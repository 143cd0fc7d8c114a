//! Core `v1` Events and `events.k8s.io/v1` Events are one store, as in kube-apiserver.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Event as CoreEvent;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use ocm_testkit::FakeCluster;
use serde_json::json;

fn new_event(name: &str) -> Event {
    serde_json::from_value(json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "demo"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "placementController", "reportingInstance": "placementController-1",
        "action": "DecisionCreate", "reason": "DecisionCreate", "type": "Normal",
        "note": "Decision nginx-decision-1 is created with placement nginx in namespace demo",
        "regarding": {"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
                      "name": "nginx", "namespace": "demo", "uid": "u-1"}
    }))
    .unwrap()
}

#[tokio::test]
async fn events_written_through_one_api_are_read_through_the_other() {
    let cluster = FakeCluster::new();
    let new_api: Api<Event> = Api::namespaced(cluster.client(), "demo");
    let core_api: Api<CoreEvent> = Api::namespaced(cluster.client(), "demo");
    let created = new_api
        .create(&PostParams::default(), &new_event("nginx.1"))
        .await
        .unwrap();
    assert_eq!(
        created.regarding.as_ref().unwrap().name.as_deref(),
        Some("nginx")
    );

    // kubectl describe's query: core Events by involvedObject.
    let found = core_api
        .list(&ListParams::default().fields(
            "involvedObject.name=nginx,involvedObject.kind=Placement,involvedObject.uid=u-1",
        ))
        .await
        .unwrap()
        .items;
    assert_eq!(found.len(), 1);
    let e = &found[0];
    assert_eq!(e.reason.as_deref(), Some("DecisionCreate"));
    assert_eq!(
        e.message.as_deref(),
        Some("Decision nginx-decision-1 is created with placement nginx in namespace demo")
    );
    assert_eq!(
        e.reporting_component.as_deref(),
        Some("placementController")
    );
    assert_eq!(e.involved_object.kind.as_deref(), Some("Placement"));
    assert_eq!(e.metadata.uid, created.metadata.uid);

    // The reverse: a core Event is an events.k8s.io Event too.
    let core: CoreEvent = serde_json::from_value(json!({
        "metadata": {"name": "cm.1", "namespace": "demo"},
        "involvedObject": {"kind": "ConfigMap", "name": "cm", "namespace": "demo"},
        "reason": "Changed", "message": "it changed", "type": "Warning", "count": 3,
        "source": {"component": "me"}, "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:01:00Z"}))
    .unwrap();
    core_api
        .create(&PostParams::default(), &core)
        .await
        .unwrap();
    let seen = new_api.get("cm.1").await.unwrap();
    assert_eq!(seen.note.as_deref(), Some("it changed"));
    assert_eq!(seen.deprecated_count, Some(3));
    assert_eq!(seen.regarding.unwrap().kind.as_deref(), Some("ConfigMap"));
    assert_eq!(
        seen.deprecated_source.unwrap().component.as_deref(),
        Some("me")
    );
    assert_eq!(
        new_api
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );
    assert_eq!(
        core_api
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );

    // FakeCluster::get and ::list (straight from the store) read each API's form too.
    let direct: Vec<Event> = cluster.list(Some("demo")).unwrap();
    assert_eq!(direct.len(), 2);
    assert!(
        direct
            .iter()
            .all(|e| e.regarding.is_some() && e.note.is_some())
    );
    let direct: CoreEvent = cluster.get("demo", "nginx.1").unwrap();
    assert_eq!(direct.involved_object.name.as_deref(), Some("nginx"));
    assert_eq!(direct.message.as_deref(), created.note.as_deref());

    // Deleting through one API deletes it from both.
    core_api
        .delete("nginx.1", &Default::default())
        .await
        .unwrap();
    assert!(new_api.get_opt("nginx.1").await.unwrap().is_none());
}

#[tokio::test]
async fn a_watch_on_one_api_sees_writes_through_the_other() {
    let cluster = FakeCluster::new();
    let new_api: Api<Event> = Api::namespaced(cluster.client(), "demo");
    let core_api: Api<CoreEvent> = Api::namespaced(cluster.client(), "demo");
    let mut stream = core_api
        .watch(&WatchParams::default().timeout(5), "0")
        .await
        .unwrap()
        .boxed();
    new_api
        .create(&PostParams::default(), &new_event("w.1"))
        .await
        .unwrap();
    let first = stream.try_next().await.unwrap().unwrap();
    match first {
        WatchEvent::Added(e) => {
            assert_eq!(e.metadata.name.as_deref(), Some("w.1"));
            assert_eq!(e.involved_object.name.as_deref(), Some("nginx"));
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
}
