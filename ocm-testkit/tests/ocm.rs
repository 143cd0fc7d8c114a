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

/// A fake hub serves upstream's CRDs, as a hub a user set up by default: the
/// ManifestWorkReplicaSet fields of our opt-ins are pruned, as a real API server prunes them.
/// `install_extended_crds` switches it to the extended CRDs (for tests of the opt-ins), and
/// then they are kept.
#[tokio::test]
async fn the_fake_hub_serves_upstreams_crds_unless_given_the_extended_ones() {
    use kube::api::{Api, PostParams};
    use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
    let replica_set = |name: &str| -> ManifestWorkReplicaSet {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "placementRefs": [{"name": "p", "rolloutStrategy": {"type": "All",
                    "failureStrategy": "AbortAll"}}],
                "revisionHistoryLimit": 3,
                "feedbackAggregation": {"values": [{"resourceIdentifier":
                    {"resource": "deployments", "name": "web", "namespace": "default"},
                    "name": "replicas"}]},
                "manifestWorkTemplate": {"workload": {"manifests": [{"apiVersion": "v1",
                    "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}]}},
            },
        }))
        .unwrap()
    };
    let hub = ocm_testkit::FakeHub::new(1).unwrap();
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.hub().client(), "default");
    let plain = api
        .create(&PostParams::default(), &replica_set("plain"))
        .await
        .unwrap();
    assert_eq!(plain.spec.revision_history_limit, None);
    assert_eq!(plain.spec.feedback_aggregation, None);
    let strategy = plain.spec.placement_refs[0]
        .rollout_strategy
        .clone()
        .unwrap();
    assert_eq!(strategy.failure_strategy, None);

    ocm_testkit::install_extended_crds(hub.hub()).unwrap();
    let extended = api
        .create(&PostParams::default(), &replica_set("extended"))
        .await
        .unwrap();
    assert_eq!(extended.spec.revision_history_limit, Some(3));
    assert!(extended.spec.feedback_aggregation.is_some());
    let strategy = extended.spec.placement_refs[0]
        .rollout_strategy
        .clone()
        .unwrap();
    assert!(strategy.failure_strategy.is_some());
    // Installing them again changes nothing.
    ocm_testkit::install_extended_crds(hub.hub()).unwrap();
}
