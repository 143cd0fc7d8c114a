//! Lossless JSON round-trips of the SIG-Multicluster `multicluster.x-k8s.io` kinds, with every
//! field of each kind, in the shapes upstream OCM's controllers write.

use ocm_api::multicluster::v1alpha1::{ClusterProfile, PlacementDecision};
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn roundtrip<T: DeserializeOwned + Serialize>(original: Value) -> T {
    let typed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("deserialize {original}: {e}"));
    let back = serde_json::to_value(&typed).expect("serialize");
    assert_eq!(back, original);
    typed
}

#[test]
fn cluster_profile_with_every_field() {
    let profile: ClusterProfile = roundtrip(json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": "cluster1", "namespace": "kueue-system", "labels": {
            "x-k8s.io/cluster-manager": "open-cluster-management",
            "multicluster.x-k8s.io/clusterset": "set1",
            "open-cluster-management.io/cluster-name": "cluster1"}},
        "spec": {"displayName": "cluster1", "clusterManager": {"name": "open-cluster-management"}},
        "status": {
            "conditions": [{"type": "ControlPlaneHealthy", "status": "True",
                "reason": "ManagedClusterAvailable", "message": "Managed cluster is available",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "version": {"kubernetes": "v1.32.1"},
            "properties": [
                {"name": "platform.open-cluster-management.io", "value": "AWS"},
                {"name": "region", "value": "eu", "lastObservedTime": "2026-01-01T00:00:00Z"}
            ],
            "credentialProviders": [{"name": "old", "cluster": {"server": "https://old:6443"}}],
            "accessProviders": [{"name": "kubeconfig", "cluster": {
                "server": "https://cluster1:6443",
                "tls-server-name": "api.cluster1",
                "insecure-skip-tls-verify": false,
                "certificate-authority": "/etc/ca.crt",
                "certificate-authority-data": "Y2E=",
                "proxy-url": "socks5://proxy:1080",
                "disable-compression": true,
                "extensions": [{"name": "client.authentication.k8s.io/exec",
                    "extension": {"audience": "hub"}}]
            }}]
        }
    }));
    assert_eq!(profile.property("region"), Some("eu"));
    assert_eq!(profile.property("zone"), None);
    assert_eq!(
        profile
            .condition("ControlPlaneHealthy")
            .map(|c| c.status.as_str()),
        Some("True")
    );
    let cluster = profile
        .status
        .as_ref()
        .unwrap()
        .access_providers
        .as_ref()
        .unwrap()[0]
        .cluster
        .as_ref()
        .unwrap();
    assert_eq!(
        cluster.certificate_authority_data.as_ref().unwrap().0,
        b"ca"
    );
}

#[test]
fn minimal_cluster_profile_as_upstream_creates_it() {
    let profile: ClusterProfile = roundtrip(json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": "cluster1", "namespace": "ns1"},
        "spec": {"clusterManager": {"name": "open-cluster-management"}}
    }));
    assert!(profile.status.is_none());
    assert_eq!(profile.condition("Joined"), None);
}

#[test]
fn sig_placement_decision_with_every_field() {
    let decision: PlacementDecision = roundtrip(json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "PlacementDecision",
        "metadata": {"name": "web-decision-1", "namespace": "apps", "labels": {
            "x-k8s.io/cluster-manager": "open-cluster-management",
            "multicluster.x-k8s.io/placement-key": "web",
            "multicluster.x-k8s.io/decision-key": "web",
            "multicluster.x-k8s.io/decision-index": "0"}},
        "decisions": [
            {"clusterProfileRef": {"name": "cluster1"}},
            {"clusterProfileRef": {"name": "cluster2", "namespace": "fleet"}, "reason": "best score"}
        ],
        "schedulerName": "open-cluster-management"
    }));
    assert_eq!(
        decision.cluster_names().collect::<Vec<_>>(),
        ["cluster1", "cluster2"]
    );
    // An empty slice keeps its (required) empty list.
    let empty: PlacementDecision = roundtrip(json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "PlacementDecision",
        "metadata": {"name": "web-decision-2", "namespace": "apps"},
        "decisions": []
    }));
    assert_eq!(empty.cluster_names().count(), 0);
}

#[test]
fn a_decision_without_its_required_list_is_refused_naming_it() {
    let err = serde_json::from_value::<PlacementDecision>(json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "PlacementDecision",
        "metadata": {"name": "x", "namespace": "apps"}
    }))
    .unwrap_err();
    assert!(err.to_string().contains("decisions"), "{err}");
}
