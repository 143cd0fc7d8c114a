//! Finalizers, ownerReference garbage collection and namespace deletion.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use ocm_testkit::FakeCluster;
use serde_json::json;

async fn make_cm(api: &Api<ConfigMap>, name: &str, extra: serde_json::Value) -> ConfigMap {
    let mut v = json!({"metadata": {"name": name}});
    if let (Some(m), Some(e)) = (v["metadata"].as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            m.insert(k.clone(), x.clone());
        }
    }
    api.create(&PostParams::default(), &serde_json::from_value(v).unwrap())
        .await
        .unwrap()
}

fn owner_ref(o: &ConfigMap) -> serde_json::Value {
    json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": o.metadata.name,
            "uid": o.metadata.uid, "blockOwnerDeletion": true}])
}

#[tokio::test]
async fn finalizers_hold_objects_until_cleared() {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    make_cm(&api, "held", json!({"finalizers": ["example.com/hold"]})).await;
    let pending = api.delete("held", &DeleteParams::default()).await.unwrap();
    let obj = pending
        .left()
        .expect("object returned while finalizers are pending");
    assert!(obj.metadata.deletion_timestamp.is_some());
    assert!(
        api.get("held")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    );
    let p = json!({"metadata": {"finalizers": null}});
    api.patch("held", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert!(api.get_opt("held").await.unwrap().is_none());
}

#[tokio::test]
async fn owner_reference_gc_background_orphan_foreground() {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());

    let owner = make_cm(&api, "owner", json!({})).await;
    make_cm(&api, "child", json!({"ownerReferences": owner_ref(&owner)})).await;
    api.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert!(
        api.get_opt("child").await.unwrap().is_none(),
        "background GC"
    );

    let owner = make_cm(&api, "owner2", json!({})).await;
    make_cm(
        &api,
        "child2",
        json!({"ownerReferences": owner_ref(&owner)}),
    )
    .await;
    api.delete("owner2", &DeleteParams::orphan()).await.unwrap();
    let child = api.get("child2").await.unwrap();
    assert!(child.metadata.owner_references.is_none(), "orphaned");

    let owner = make_cm(&api, "owner3", json!({})).await;
    make_cm(
        &api,
        "child3",
        json!({"ownerReferences": owner_ref(&owner), "finalizers": ["example.com/slow"]}),
    )
    .await;
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    api.delete("owner3", &dp).await.unwrap();
    let o = api.get("owner3").await.unwrap();
    assert!(
        o.metadata
            .finalizers
            .unwrap()
            .contains(&"foregroundDeletion".to_string())
    );
    assert!(
        api.get("child3")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    );
    // The child's finalizer clears: child goes, then the owner.
    let p = json!({"metadata": {"finalizers": null}});
    api.patch("child3", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert!(api.get_opt("child3").await.unwrap().is_none());
    assert!(api.get_opt("owner3").await.unwrap().is_none());

    // A dependent without blockOwnerDeletion does not hold a foreground owner.
    let owner = make_cm(&api, "owner4", json!({})).await;
    let mut r = owner_ref(&owner);
    r[0]["blockOwnerDeletion"] = json!(false);
    make_cm(
        &api,
        "child4",
        json!({"ownerReferences": r, "finalizers": ["example.com/slow"]}),
    )
    .await;
    api.delete("owner4", &dp).await.unwrap();
    assert!(api.get_opt("owner4").await.unwrap().is_none());
    assert!(
        api.get("child4")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    );
}

#[tokio::test]
async fn namespace_deletion_removes_contents() {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "team"}})).unwrap(),
    )
    .await
    .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "team");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "team");
    make_cm(&cms, "a", json!({})).await;
    make_cm(&cms, "b", json!({"finalizers": ["example.com/hold"]})).await;
    secrets
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "s"}})).unwrap(),
        )
        .await
        .unwrap();
    nss.delete("team", &DeleteParams::default()).await.unwrap();
    let ns = nss.get("team").await.unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Terminating"));
    assert!(cms.get_opt("a").await.unwrap().is_none());
    assert!(secrets.get_opt("s").await.unwrap().is_none());
    // No new content in a terminating namespace.
    let err = cms
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "late"}})).unwrap(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 403));
    let p = json!({"metadata": {"finalizers": null}});
    cms.patch("b", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert!(nss.get_opt("team").await.unwrap().is_none());
}

#[tokio::test]
async fn delete_collection_by_label_and_dry_run_create() {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    make_cm(&api, "a", json!({"labels": {"gone": "yes"}})).await;
    make_cm(&api, "b", json!({"labels": {"gone": "yes"}})).await;
    make_cm(&api, "c", json!({})).await;
    let lp = kube::api::ListParams::default().labels("gone=yes");
    let out = api
        .delete_collection(&DeleteParams::default(), &lp)
        .await
        .unwrap();
    let deleted = out.left().expect("a list of deleted objects");
    assert_eq!(deleted.items.len(), 2);
    let left: Vec<String> = api
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert_eq!(left, vec!["c".to_string()]);

    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "dry"}})).unwrap();
    let out = api.create(&dry, &cm).await.unwrap();
    assert!(out.metadata.uid.is_some());
    assert!(api.get_opt("dry").await.unwrap().is_none());
    assert_eq!(cluster.store().resource_version(), {
        let rv: u64 = api
            .list(&Default::default())
            .await
            .unwrap()
            .metadata
            .resource_version
            .unwrap()
            .parse()
            .unwrap();
        rv
    });
}
