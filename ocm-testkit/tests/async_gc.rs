//! Asynchronous garbage collection (`GarbageCollection::asynchronous`): deletion that
//! completes later, as kube-controller-manager completes it, and finalizers held for a while.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, PostParams};
use ocm_testkit::wait::eventually;
use ocm_testkit::{FakeCluster, GarbageCollection};
use serde_json::json;

/// Long enough that nothing runs by itself during a test step.
const LATER: Duration = Duration::from_secs(3600);

async fn make_cm(api: &Api<ConfigMap>, name: &str, meta: serde_json::Value) -> ConfigMap {
    let mut v = json!({"metadata": {"name": name}});
    if let (Some(m), Some(e)) = (v["metadata"].as_object_mut(), meta.as_object()) {
        for (k, x) in e {
            m.insert(k.clone(), x.clone());
        }
    }
    api.create(&PostParams::default(), &serde_json::from_value(v).unwrap())
        .await
        .unwrap()
}

fn owned_by(o: &ConfigMap) -> serde_json::Value {
    json!({"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": o.metadata.name,
        "uid": o.metadata.uid, "blockOwnerDeletion": true}]})
}

#[tokio::test]
async fn background_deletion_removes_the_owner_now_and_its_dependents_later() {
    let cluster = FakeCluster::new();
    cluster
        .store()
        .set_garbage_collection(GarbageCollection::asynchronous(LATER));
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let owner = make_cm(&api, "owner", json!({})).await;
    make_cm(&api, "child", owned_by(&owner)).await;

    let answer = api
        .delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert!(
        answer.is_right(),
        "an owner without finalizers goes at once"
    );
    assert!(api.get_opt("owner").await.unwrap().is_none());
    assert!(
        api.get_opt("child").await.unwrap().is_some(),
        "the collector has not run yet"
    );
    assert!(cluster.store().pending_garbage_collection() > 0);
    assert_eq!(
        cluster.store().run_garbage_collection(),
        0,
        "nothing is due"
    );

    assert!(cluster.store().finish_garbage_collection() >= 1);
    assert!(api.get_opt("child").await.unwrap().is_none());
    assert_eq!(cluster.store().pending_garbage_collection(), 0);
}

#[tokio::test]
async fn foreground_deletion_keeps_the_owner_terminating_until_its_dependents_are_gone() {
    let cluster = FakeCluster::new();
    cluster
        .store()
        .set_garbage_collection(GarbageCollection::asynchronous(LATER));
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let owner = make_cm(&api, "owner", json!({})).await;
    make_cm(&api, "child", owned_by(&owner)).await;

    let answer = api
        .delete("owner", &DeleteParams::foreground())
        .await
        .unwrap();
    let terminating = answer.left().expect("the owner is returned, terminating");
    assert!(terminating.metadata.deletion_timestamp.is_some());
    assert_eq!(
        terminating.metadata.finalizers.as_deref(),
        Some(&["foregroundDeletion".to_string()][..])
    );
    assert!(api.get_opt("child").await.unwrap().is_some());

    cluster.store().finish_garbage_collection();
    assert!(api.get_opt("child").await.unwrap().is_none());
    assert!(api.get_opt("owner").await.unwrap().is_none());
}

#[tokio::test]
async fn a_namespace_terminates_first_and_is_emptied_and_removed_later() {
    let cluster = FakeCluster::new();
    cluster
        .store()
        .set_garbage_collection(GarbageCollection::asynchronous(LATER));
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "team"}})).unwrap(),
        )
        .await
        .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), "team");
    make_cm(&api, "inside", json!({})).await;

    let answer = namespaces
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();
    let ns = answer
        .left()
        .expect("the namespace is returned, terminating");
    assert_eq!(
        ns.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    assert!(api.get_opt("inside").await.unwrap().is_some());

    cluster.store().finish_garbage_collection();
    assert!(api.get_opt("inside").await.unwrap().is_none());
    assert!(namespaces.get_opt("team").await.unwrap().is_none());
}

#[tokio::test]
async fn a_held_finalizer_is_released_after_its_hold_and_the_object_goes() {
    let cluster = FakeCluster::new();
    // Synchronous collection, one finalizer held for 300 ms by its (emulated) controller.
    cluster.store().set_garbage_collection(
        GarbageCollection::synchronous()
            .hold_finalizer("example.com/hold", Duration::from_millis(300)),
    );
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    make_cm(
        &api,
        "held",
        json!({"finalizers": ["example.com/hold", "example.com/other"]}),
    )
    .await;
    make_cm(&api, "solo", json!({"finalizers": ["example.com/hold"]})).await;
    let started = Instant::now();
    assert!(
        api.delete("held", &DeleteParams::default())
            .await
            .unwrap()
            .is_left()
    );
    assert!(
        api.delete("solo", &DeleteParams::default())
            .await
            .unwrap()
            .is_left()
    );

    assert!(
        eventually(Duration::from_secs(5), async || api
            .get_opt("solo")
            .await
            .unwrap()
            .is_none())
        .await,
        "the held finalizer is released by the store"
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    // The other finalizer is nobody's: the object stays, terminating, with only that one.
    let held = api.get("held").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());
    assert_eq!(
        held.metadata.finalizers.as_deref(),
        Some(&["example.com/other".to_string()][..])
    );
}

#[tokio::test]
async fn the_background_collector_runs_by_itself_after_the_delay() {
    let cluster = FakeCluster::new();
    cluster
        .store()
        .set_garbage_collection(GarbageCollection::asynchronous(Duration::from_millis(200)));
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let owner = make_cm(&api, "owner", json!({})).await;
    make_cm(&api, "child", owned_by(&owner)).await;
    let started = Instant::now();
    api.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), async || api
            .get_opt("child")
            .await
            .unwrap()
            .is_none())
        .await
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn a_released_finalizer_never_touches_an_object_recreated_under_the_same_name() {
    let cluster = FakeCluster::new();
    cluster.store().set_garbage_collection(
        GarbageCollection::asynchronous(LATER).hold_finalizer("example.com/hold", LATER),
    );
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    make_cm(&api, "cm", json!({"finalizers": ["example.com/hold"]})).await;
    api.delete("cm", &DeleteParams::default()).await.unwrap();
    // Someone removes the finalizer by hand, and the name is reused.
    api.patch(
        "cm",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert!(api.get_opt("cm").await.unwrap().is_none());
    let again = make_cm(&api, "cm", json!({"finalizers": ["example.com/hold"]})).await;
    cluster.store().finish_garbage_collection();
    let now = api.get("cm").await.unwrap();
    assert_eq!(now.metadata.uid, again.metadata.uid);
    assert_eq!(
        now.metadata.finalizers.as_deref(),
        Some(&["example.com/hold".to_string()][..])
    );
    assert!(now.metadata.deletion_timestamp.is_none());
}

#[tokio::test]
async fn switching_back_to_synchronous_collection_runs_what_is_queued() {
    let cluster = FakeCluster::new();
    cluster
        .store()
        .set_garbage_collection(GarbageCollection::asynchronous(LATER));
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let owner = make_cm(&api, "owner", json!({})).await;
    make_cm(&api, "child", owned_by(&owner)).await;
    api.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert!(api.get_opt("child").await.unwrap().is_some());
    cluster
        .store()
        .set_garbage_collection(GarbageCollection::synchronous());
    assert_eq!(
        cluster.store().garbage_collection(),
        GarbageCollection::default()
    );
    assert!(api.get_opt("child").await.unwrap().is_none());
}
