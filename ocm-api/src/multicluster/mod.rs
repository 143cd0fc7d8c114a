//! The SIG-Multicluster `multicluster.x-k8s.io` API group (from
//! [cluster-inventory-api](https://github.com/kubernetes-sigs/cluster-inventory-api)): the
//! vendor-neutral kinds other multicluster tools (Argo CD, Kueue, GitOps and workload
//! controllers) read, whatever cluster manager produced them.
//!
//! | module | kinds |
//! | --- | --- |
//! | [`v1alpha1`] | [`ClusterProfile`](v1alpha1::ClusterProfile) (KEP-4322: one cluster of the fleet, its health, version and properties), [`PlacementDecision`](v1alpha1::PlacementDecision) (KEP-5313: the clusters a scheduler chose, in slices of at most 100) |
//!
//! Upstream OCM writes both behind feature gates: `ClusterProfile` (its registration hub
//! builds a ClusterProfile from each ManagedCluster, in every namespace bound to a set the
//! cluster belongs to) and `SIGPlacementDecision` (its placement controller mirrors each OCM
//! PlacementDecision). `ocm-placement` does the same in its `profile` and `sig` modules.
//!
//! Their CRDs are not part of [`crate::crds()`] (OCM's own 14): [`crds()`] returns them, and
//! they are checked field by field against cluster-inventory-api's (version `v0.1.3`, the one
//! upstream OCM vendors).
//!
//! # Example
//!
//! ```
//! use ocm_api::multicluster::v1alpha1::{ClusterProfile, PlacementDecision};
//!
//! let decision: PlacementDecision = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "multicluster.x-k8s.io/v1alpha1",
//!     "kind": "PlacementDecision",
//!     "metadata": {"name": "web-decision-1", "namespace": "apps", "labels": {
//!         "multicluster.x-k8s.io/decision-key": "web"}},
//!     "decisions": [{"clusterProfileRef": {"name": "cluster1"}}],
//!     "schedulerName": "open-cluster-management"
//! }))?;
//! assert_eq!(decision.cluster_names().collect::<Vec<_>>(), ["cluster1"]);
//!
//! let profile: ClusterProfile = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "multicluster.x-k8s.io/v1alpha1",
//!     "kind": "ClusterProfile",
//!     "metadata": {"name": "cluster1", "namespace": "apps"},
//!     "spec": {"displayName": "cluster1", "clusterManager": {"name": "open-cluster-management"}}
//! }))?;
//! assert_eq!(profile.spec.cluster_manager.name, "open-cluster-management");
//! assert_eq!(ocm_api::multicluster::crds().len(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

pub mod v1alpha1;

/// The API group.
pub const GROUP: &str = "multicluster.x-k8s.io";

/// The name OCM writes as a ClusterProfile's `spec.clusterManager.name` and its
/// [`labels::CLUSTER_MANAGER`] label, and as a PlacementDecision's `schedulerName` and
/// cluster-manager label (upstream's `ClusterProfileManagerName` and `SchedulerName`).
pub const OCM_CLUSTER_MANAGER: &str = "open-cluster-management";

/// The ClusterProfile condition that reports the cluster's control plane health (the API's
/// predefined condition; OCM copies the ManagedCluster's `ManagedClusterConditionAvailable`
/// into it).
pub const CONDITION_CONTROL_PLANE_HEALTHY: &str = "ControlPlaneHealthy";

/// The ClusterProfile condition OCM copies from the ManagedCluster's `ManagedClusterJoined`.
pub const CONDITION_JOINED: &str = "Joined";

/// The most decisions one [`PlacementDecision`](v1alpha1::PlacementDecision) slice holds
/// (the CRD's `maxItems`).
pub const MAX_DECISIONS_PER_SLICE: usize = 100;

/// The labels the API defines.
pub mod labels {
    /// The cluster manager that owns a ClusterProfile (or wrote a PlacementDecision); its value
    /// is the manager's name (`open-cluster-management` for OCM).
    pub const CLUSTER_MANAGER: &str = "x-k8s.io/cluster-manager";
    /// The cluster set a ClusterProfile belongs to (on namespaces that stand for a set; OCM
    /// also puts it on its ClusterProfiles, with the cluster's exclusive cluster-set label).
    pub const CLUSTER_SET: &str = "multicluster.x-k8s.io/clusterset";
    /// Links the slices of one scheduling decision: every slice of a decision carries the same
    /// value.
    pub const DECISION_KEY: &str = "multicluster.x-k8s.io/decision-key";
    /// The position of a slice when the order of the selected clusters matters.
    pub const DECISION_INDEX: &str = "multicluster.x-k8s.io/decision-index";
    /// The workload (for OCM: the Placement) a decision was made for.
    pub const PLACEMENT_KEY: &str = "multicluster.x-k8s.io/placement-key";
}

/// The CRDs of this group: ClusterProfile and PlacementDecision (`v1alpha1`), sorted by name.
pub fn crds() -> Vec<CustomResourceDefinition> {
    let mut all = v1alpha1::crds();
    all.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    all
}
