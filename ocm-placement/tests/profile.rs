//! The ClusterProfile controller (the `ClusterProfile` gate) against an in-process fake hub,
//! following upstream's integration scenarios: profiles created where a bound binding brings
//! the cluster (in every such namespace, once), status from the cluster, deletion when the
//! binding or the cluster goes, other managers' profiles left alone, claims the CRD refuses
//! reported, and the watch loop.
#![cfg(feature = "controller")]

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::ManualClock;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::multicluster::v1alpha1::ClusterProfile;
use ocm_placement::inventory::ClusterInventoryController;
use ocm_placement::profile::ClusterProfileController;
use ocm_testkit::FakeHub;
use serde_json::{Value, json};

struct Hub {
    _fake: FakeHub,
    client: Client,
    clock: Arc<ManualClock>,
    profiles: ClusterProfileController,
    inventory: ClusterInventoryController,
}

/// A fake hub with `cluster1`..`clusterN` (joined, available, Kubernetes v1.33.0, in the
/// `default` set), the ClusterProfile CRD and the namespaces `ns1` and `ns2`.
async fn hub(n: usize) -> Hub {
    let fake = FakeHub::new(n).expect("fake hub");
    let client = fake.hub().client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ocm_api::crd::multicluster_crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("install CRD");
    }
    for ns in ["ns1", "ns2"] {
        let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .unwrap();
    }
    let clock = Arc::new(ManualClock::new(
        "2026-01-01T00:00:00Z".parse().expect("time"),
    ));
    Hub {
        profiles: ClusterProfileController::new(client.clone()).with_clock(clock.clone()),
        inventory: ClusterInventoryController::new(client.clone()),
        _fake: fake,
        client,
        clock,
    }
}

impl Hub {
    async fn bind(&self, namespace: &str, set: &str) {
        let binding: ManagedClusterSetBinding = serde_json::from_value(json!({
            "metadata": {"name": set, "namespace": namespace}, "spec": {"clusterSet": set}
        }))
        .unwrap();
        Api::<ManagedClusterSetBinding>::namespaced(self.client.clone(), namespace)
            .create(&PostParams::default(), &binding)
            .await
            .unwrap();
        // The inventory controller marks it Bound, as upstream's registration hub does.
        self.inventory.reconcile_all().await.unwrap();
    }

    /// `namespace/name` of every ClusterProfile.
    async fn names(&self) -> Vec<String> {
        let mut out: Vec<String> = Api::<ClusterProfile>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .iter()
            .map(|p| format!("{}/{}", p.namespace().unwrap_or_default(), p.name_any()))
            .collect();
        out.sort();
        out
    }

    async fn get(&self, namespace: &str, name: &str) -> ClusterProfile {
        Api::<ClusterProfile>::namespaced(self.client.clone(), namespace)
            .get(name)
            .await
            .unwrap()
    }

    async fn patch_cluster_status(&self, cluster: &str, status: Value) {
        Api::<ManagedCluster>::all(self.client.clone())
            .patch_status(
                cluster,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": status})),
            )
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn profiles_follow_bindings_and_clusters() {
    let hub = hub(2).await;
    hub.bind("ns1", "default").await;
    hub.bind("ns2", "default").await;
    let first = hub.profiles.reconcile_all().await.unwrap();
    // Two profiles in two namespaces, each created and given its status.
    assert_eq!(first.writes, 8, "{first:?}");
    assert_eq!(
        hub.names().await,
        [
            "ns1/cluster1",
            "ns1/cluster2",
            "ns2/cluster1",
            "ns2/cluster2"
        ]
    );
    let profile = hub.get("ns1", "cluster1").await;
    assert_eq!(
        json!(profile.labels()),
        json!({
            "x-k8s.io/cluster-manager": "open-cluster-management",
            "multicluster.x-k8s.io/clusterset": "default",
            "open-cluster-management.io/cluster-name": "cluster1"
        })
    );
    assert_eq!(
        json!(profile.spec),
        json!({"displayName": "cluster1", "clusterManager": {"name": "open-cluster-management"}})
    );
    let status = profile.status.as_ref().unwrap();
    assert_eq!(
        status.version.as_ref().unwrap().kubernetes.as_deref(),
        Some("v1.33.0")
    );
    let healthy = profile.condition("ControlPlaneHealthy").unwrap();
    assert_eq!(
        (
            healthy.status.as_str(),
            healthy.reason.as_str(),
            healthy.message.as_str()
        ),
        (
            "True",
            "ManagedClusterAvailable",
            "Managed cluster is available"
        )
    );
    assert_eq!(profile.condition("Joined").unwrap().status, "True");
    assert_eq!(
        hub.profiles.reconcile_all().await.unwrap().writes,
        0,
        "steady"
    );

    // The cluster's health and claims change: every profile of it follows, and fields
    // someone else wrote stay.
    Api::<ClusterProfile>::namespaced(hub.client.clone(), "ns1")
        .patch_status(
            "cluster1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"accessProviders": [
                {"name": "kubeconfig", "cluster": {"server": "https://cluster1:6443"}}]}})),
        )
        .await
        .unwrap();
    hub.clock.advance(Duration::from_secs(60));
    hub.patch_cluster_status(
        "cluster1",
        json!({
            "conditions": [
                {"type": "HubAcceptedManagedCluster", "status": "True", "reason": "HubClusterAdminAccepted",
                 "message": "Accepted by hub cluster admin", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "ManagedClusterJoined", "status": "True", "reason": "ManagedClusterJoined",
                 "message": "Managed cluster joined", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "ManagedClusterConditionAvailable", "status": "Unknown",
                 "reason": "ManagedClusterLeaseUpdateStopped",
                 "message": "Registration agent stopped updating its lease.",
                 "lastTransitionTime": "2026-01-01T00:01:00Z"}
            ],
            "clusterClaims": [{"name": "platform.open-cluster-management.io", "value": "AWS"}]
        }),
    )
    .await;
    assert_eq!(hub.profiles.reconcile_all().await.unwrap().writes, 2);
    for ns in ["ns1", "ns2"] {
        let profile = hub.get(ns, "cluster1").await;
        let healthy = profile.condition("ControlPlaneHealthy").unwrap();
        assert_eq!(
            (healthy.status.as_str(), healthy.reason.as_str()),
            ("Unknown", "ManagedClusterLeaseUpdateStopped")
        );
        assert_eq!(
            healthy.last_transition_time.0.to_string(),
            "2026-01-01T00:01:00Z"
        );
        assert_eq!(
            profile.property("platform.open-cluster-management.io"),
            Some("AWS")
        );
        assert_eq!(
            profile
                .condition("Joined")
                .unwrap()
                .last_transition_time
                .0
                .to_string(),
            "2026-01-01T00:00:00Z",
            "unchanged"
        );
    }
    let kept = hub.get("ns1", "cluster1").await;
    assert_eq!(
        kept.status.unwrap().access_providers.unwrap()[0].name,
        "kubeconfig"
    );

    // Another manager's profile is never touched.
    let foreign: ClusterProfile = serde_json::from_value(json!({
        "metadata": {"name": "elsewhere", "namespace": "ns1", "labels": {"x-k8s.io/cluster-manager": "karmada"}},
        "spec": {"clusterManager": {"name": "karmada"}}
    }))
    .unwrap();
    Api::<ClusterProfile>::namespaced(hub.client.clone(), "ns1")
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();

    // The binding goes: its namespace's profiles go with it.
    Api::<ManagedClusterSetBinding>::namespaced(hub.client.clone(), "ns2")
        .delete("default", &DeleteParams::default())
        .await
        .unwrap();
    hub.profiles.reconcile_all().await.unwrap();
    assert_eq!(
        hub.names().await,
        ["ns1/cluster1", "ns1/cluster2", "ns1/elsewhere"]
    );

    // The cluster goes: so do its profiles.
    Api::<ManagedCluster>::all(hub.client.clone())
        .delete("cluster2", &DeleteParams::default())
        .await
        .unwrap();
    hub.profiles.reconcile_all().await.unwrap();
    assert_eq!(hub.names().await, ["ns1/cluster1", "ns1/elsewhere"]);
}

#[tokio::test]
async fn only_bound_bindings_in_live_namespaces_bring_profiles() {
    let hub = hub(1).await;
    // A binding to a set that does not exist is not Bound.
    let set: ManagedClusterSet = serde_json::from_value(json!({
        "metadata": {"name": "later"}, "spec": {"clusterSelector": {"selectorType": "LabelSelector",
            "labelSelector": {}}}}))
    .unwrap();
    hub.bind("ns1", "later").await;
    hub.profiles.reconcile_all().await.unwrap();
    assert!(hub.names().await.is_empty(), "not bound");
    Api::<ManagedClusterSet>::all(hub.client.clone())
        .create(&PostParams::default(), &set)
        .await
        .unwrap();
    hub.inventory.reconcile_all().await.unwrap();
    hub.profiles.reconcile_all().await.unwrap();
    assert_eq!(hub.names().await, ["ns1/cluster1"]);

    // A binding in a namespace that does not exist brings nothing.
    hub.bind("gone", "default").await;
    hub.profiles.reconcile_all().await.unwrap();
    assert_eq!(hub.names().await, ["ns1/cluster1"]);
}

#[tokio::test]
async fn claims_the_crd_refuses_are_reported_and_the_rest_written() {
    let hub = hub(1).await;
    hub.bind("ns1", "default").await;
    hub.patch_cluster_status(
        "cluster1",
        json!({"clusterClaims": [
            {"name": "region", "value": "eu"},
            {"name": "region", "value": "us"},
            {"name": "zone", "value": "b"}
        ]}),
    )
    .await;
    let outcome = hub.profiles.reconcile_all().await.unwrap();
    assert_eq!(
        outcome.skipped,
        [
            "ManagedCluster cluster1: status.clusterClaims[1] (\"region\") is listed more than \
             once (property names are unique); it is left out of its ClusterProfiles' properties"
        ]
    );
    let profile = hub.get("ns1", "cluster1").await;
    assert_eq!(profile.property("region"), Some("eu"));
    assert_eq!(profile.property("zone"), Some("b"));
    assert_eq!(
        profile.condition("ControlPlaneHealthy").unwrap().status,
        "True"
    );
}

#[tokio::test]
async fn the_run_loop_creates_profiles_for_new_bindings() {
    let hub = hub(1).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let synced = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let task = tokio::spawn(hub.profiles.clone().with_synced_flag(synced.clone()).run(
        async move {
            let _ = stopped.await;
        },
    ));
    hub.bind("ns1", "default").await;
    let mut found = Vec::new();
    for _ in 0..100 {
        found = hub.names().await;
        if !found.is_empty() && hub.get("ns1", "cluster1").await.status.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(found, ["ns1/cluster1"]);
    assert!(synced.load(std::sync::atomic::Ordering::SeqCst));
    let _ = stop.send(());
    task.await.unwrap();
}

/// The fake hub serves the ClusterProfile CRD with its validation: the cluster manager cannot
/// change (the CRD's `self == oldSelf` rule).
#[tokio::test]
async fn the_fake_hub_keeps_the_cluster_manager_immutable() {
    let hub = hub(1).await;
    hub.bind("ns1", "default").await;
    hub.profiles.reconcile_all().await.unwrap();
    let err = Api::<ClusterProfile>::namespaced(hub.client.clone(), "ns1")
        .patch(
            "cluster1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"clusterManager": {"name": "karmada"}}})),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}")
    };
    assert_eq!(status.code, 422, "{status:?}");
    assert!(
        status.message.contains("ClusterManager is immutable"),
        "{}",
        status.message
    );
}

/// An input left out on every pass (a claim the CRD refuses) is logged when it starts being
/// left out, not on every pass; the pass still reports it each time.
#[tokio::test]
async fn an_input_left_out_on_every_pass_is_logged_once() {
    let capture = crate::common::logs::capture();
    let logs = capture.logs();
    let hub = hub(1).await;
    hub.bind("ns1", "default").await;
    hub.patch_cluster_status(
        "cluster1",
        json!({"clusterClaims": [
            {"name": "region", "value": "eu"},
            {"name": "region", "value": "us"}
        ]}),
    )
    .await;
    for _ in 0..3 {
        let outcome = hub.profiles.reconcile_all().await.unwrap();
        assert_eq!(outcome.skipped.len(), 1);
    }
    let text = logs.text();
    assert_eq!(
        text.matches("ClusterProfile input left out").count(),
        1,
        "{text}"
    );
}
