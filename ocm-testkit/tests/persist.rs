//! Saving a fake cluster and loading it into a new one (what `ocm-fake-apiserver
//! --state-dir` does across restarts).

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_testkit::{FakeCluster, FakeHub};
use serde_json::json;

#[tokio::test]
async fn a_restored_hub_has_every_object_crd_and_uid_and_keeps_counting() {
    let first = FakeHub::new(2).unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(first.hub().client(), "cluster1");
    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "kept", "finalizers": ["x/y"]}, "data": {"a": "b"}}),
    )
    .unwrap();
    let created = cms.create(&PostParams::default(), &cm).await.unwrap();
    let snapshot = first.hub().store().snapshot();
    let rv = first.hub().store().resource_version();

    let second = FakeHub::new(0).unwrap();
    let loaded = second.hub().store().restore(&snapshot).unwrap();
    assert!(loaded > 10, "{loaded}");
    let again: Api<ConfigMap> = Api::namespaced(second.hub().client(), "cluster1");
    let kept = again.get("kept").await.unwrap();
    assert_eq!(kept.metadata.uid, created.metadata.uid);
    assert_eq!(
        kept.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(kept.metadata.finalizers, Some(vec!["x/y".to_string()]));
    // The CRDs came back, so their objects are served.
    let clusters: Vec<String> = Api::<ManagedCluster>::all(second.hub().client())
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert_eq!(clusters, ["cluster1", "cluster2"]);
    // New writes continue after the saved resourceVersion, with new uids.
    let cm2: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "new"}})).unwrap();
    let made = again.create(&PostParams::default(), &cm2).await.unwrap();
    let new_rv: u64 = made.metadata.resource_version.unwrap().parse().unwrap();
    assert!(new_rv > rv);
    let uids: std::collections::HashSet<String> = second.hub().store().snapshot()["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["object"]["metadata"]["uid"].as_str().map(str::to_string))
        .collect();
    let count = second.hub().store().snapshot()["objects"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(uids.len(), count, "uids are unique after a restore");
}

#[tokio::test]
async fn files_round_trip_and_bad_snapshots_change_nothing() {
    let dir = std::env::temp_dir().join(format!("ocm-testkit-persist-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("state.json");
    let first = FakeCluster::new();
    first
        .apply_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1, namespace: default}\n")
        .unwrap();
    first.store().save(&path).unwrap();
    let second = FakeCluster::new();
    second.store().load(&path).unwrap();
    let _: ConfigMap = second.get("default", "c1").unwrap();

    // Malformed snapshots are clear errors, and the store is untouched.
    for bad in [
        json!({}),
        json!({"format": 1, "resourceVersion": 3}),
        json!({"format": 1, "resourceVersion": 3, "objects": [{"group": "", "resource": "configmaps", "object": 7}]}),
        json!({"format": 1, "resourceVersion": 3, "objects": [{"group": "", "resource": "configmaps", "object": {"metadata": {}}}]}),
    ] {
        let err = second.store().restore(&bad).unwrap_err();
        assert!(err.to_string().contains("snapshot"), "{err}");
        let _: ConfigMap = second.get("default", "c1").unwrap();
    }
    std::fs::write(&path, "not json").unwrap();
    let err = second.store().load(&path).unwrap_err();
    assert!(err.to_string().contains("not a JSON snapshot"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
