//! The addon kinds are served in v1alpha1 and v1beta1 with conversion, as kube-apiserver does
//! with upstream's conversion webhook: stored in v1alpha1, converted on every read and write.

use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use ocm_testkit::{FakeHub, Gvr};
use serde_json::{Value, json};

fn api(
    hub: &FakeHub,
    version: &str,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("addon.open-cluster-management.io", version, kind);
    let ar = ApiResource::from_gvk_with_plural(&gvk, plural);
    match ns {
        Some(ns) => Api::namespaced_with(hub.hub().client(), ns, &ar),
        None => Api::all_with(hub.hub().client(), &ar),
    }
}

fn object(v: Value) -> DynamicObject {
    serde_json::from_value(v).unwrap()
}

#[tokio::test]
async fn managed_cluster_addon_written_as_v1alpha1_reads_as_v1beta1_and_back() {
    let hub = FakeHub::new(1).unwrap();
    let alpha = api(
        &hub,
        "v1alpha1",
        "ManagedClusterAddOn",
        "managedclusteraddons",
        Some("cluster1"),
    );
    let beta = api(
        &hub,
        "v1beta1",
        "ManagedClusterAddOn",
        "managedclusteraddons",
        Some("cluster1"),
    );
    let created = alpha
        .create(&PostParams::default(), &object(json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ManagedClusterAddOn",
            "metadata": {"name": "hello", "namespace": "cluster1"},
            "spec": {"installNamespace": "hello-agent"}})))
        .await
        .unwrap();
    assert_eq!(created.data["spec"]["installNamespace"], "hello-agent");

    let seen = beta.get("hello").await.unwrap();
    assert_eq!(
        seen.types.as_ref().unwrap().api_version,
        "addon.open-cluster-management.io/v1beta1"
    );
    assert_eq!(
        seen.metadata.annotations.as_ref().unwrap()["addon.open-cluster-management.io/v1alpha1-install-namespace"],
        "hello-agent"
    );
    assert!(seen.data["spec"].get("installNamespace").is_none());
    assert_eq!(seen.metadata.uid, created.metadata.uid);

    // A v1beta1 write (a label) keeps the v1alpha1 field, which lives in the annotation.
    let patched = beta
        .patch(
            "hello",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "a"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        patched.types.unwrap().api_version,
        "addon.open-cluster-management.io/v1beta1"
    );
    let again = alpha.get("hello").await.unwrap();
    assert_eq!(again.data["spec"]["installNamespace"], "hello-agent");
    assert_eq!(again.metadata.labels.unwrap()["team"], "a");

    // Stored in the storage version.
    let stored = hub
        .hub()
        .store()
        .get(
            &Gvr::new(
                "addon.open-cluster-management.io",
                "v1alpha1",
                "managedclusteraddons",
            ),
            "cluster1",
            "hello",
        )
        .unwrap();
    assert_eq!(
        stored["apiVersion"],
        "addon.open-cluster-management.io/v1alpha1"
    );
    assert_eq!(stored["spec"]["installNamespace"], "hello-agent");
}

#[tokio::test]
async fn cluster_management_addon_supported_configs_are_v1beta1_default_configs() {
    let hub = FakeHub::new(0).unwrap();
    let alpha = api(
        &hub,
        "v1alpha1",
        "ClusterManagementAddOn",
        "clustermanagementaddons",
        None,
    );
    let beta = api(
        &hub,
        "v1beta1",
        "ClusterManagementAddOn",
        "clustermanagementaddons",
        None,
    );
    beta.create(
        &PostParams::default(),
        &object(json!({
        "apiVersion": "addon.open-cluster-management.io/v1beta1", "kind": "ClusterManagementAddOn",
        "metadata": {"name": "hello"},
        "spec": {"defaultConfigs": [
            {"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs",
             "name": "cfg", "namespace": "open-cluster-management"}]}})),
    )
    .await
    .unwrap();
    let seen = alpha.get("hello").await.unwrap();
    let supported = &seen.data["spec"]["supportedConfigs"][0];
    assert_eq!(supported["resource"], "addondeploymentconfigs");
    assert_eq!(supported["defaultConfig"]["name"], "cfg");
    let back = beta.get("hello").await.unwrap();
    assert_eq!(back.data["spec"]["defaultConfigs"][0]["name"], "cfg");
    // Lists convert every item.
    let list = alpha.list(&Default::default()).await.unwrap();
    assert_eq!(
        list.items[0].data["spec"]["supportedConfigs"][0]["defaultConfig"]["name"],
        "cfg"
    );
}
