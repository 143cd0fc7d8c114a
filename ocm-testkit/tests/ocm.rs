//! OCM fixtures: a fake hub with every OCM CRD and N managed clusters.

use kube::api::{Api, ListParams, Patch, PatchParams};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::work::v1::ManifestWork;
use ocm_testkit::FakeHub;
use serde_json::json;

#[tokio::test]
async fn hub_serves_ocm_crds_and_registered_clusters() {
    let hub = FakeHub::new(3).unwrap();
    let client = hub.hub().client();
    let mcs: Api<ManagedCluster> = Api::all(client.clone());
    let list = mcs.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 3);
    assert!(list.items.iter().all(|mc| mc.is_available()));

    // A ManifestWork applied server-side into a cluster namespace, with schema checks.
    let works: Api<ManifestWork> = Api::namespaced(client.clone(), "cluster2");
    let mw = json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "hello", "namespace": "cluster2"},
        "spec": {"workload": {"manifests": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}, "data": {"k": "v"}}
        ]}}
    });
    let out = works
        .patch(
            "hello",
            &PatchParams::apply("hub-controller"),
            &Patch::Apply(&mw),
        )
        .await
        .unwrap();
    assert_eq!(out.metadata.generation, Some(1));

    // Each managed cluster is its own independent fake.
    let c1 = hub.cluster("cluster1").unwrap();
    let c2 = hub.cluster("cluster2").unwrap();
    assert!(!std::sync::Arc::ptr_eq(c1.store(), c2.store()));
}

#[test]
fn many_clusters_are_each_registered_and_independent() {
    // How fast this is belongs to the testkit bench (`FakeHub::new(1000)`), not to a test.
    let hub = FakeHub::new(200).unwrap();
    let names = hub.cluster_names();
    assert_eq!(names.len(), 200);
    for name in &names {
        let cluster = hub.cluster(name).unwrap();
        assert_eq!(cluster.name(), name.as_str());
    }
    let first = hub.cluster(&names[0]).unwrap();
    let last = hub.cluster(&names[199]).unwrap();
    assert!(!std::sync::Arc::ptr_eq(first.store(), last.store()));
}
