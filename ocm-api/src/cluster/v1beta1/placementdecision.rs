//! PlacementDecision: a slice of the clusters a Placement selected.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The (empty) body of a [`PlacementDecision`]: the kind has no `spec`, only `status`.
///
/// The scheduler writes a Placement's selected clusters into one or more PlacementDecisions in
/// the Placement's namespace, at most 100 clusters each, labelled with the Placement's name
/// (`cluster.open-cluster-management.io/placement`) and the decision group's index and name.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1beta1",
    kind = "PlacementDecision",
    doc = "One slice (at most 100 clusters) of the clusters a Placement selected.",
    plural = "placementdecisions",
    namespaced,
    no_spec,
    status = "PlacementDecisionStatus",
    derive = "PartialEq",
    derive = "Default"
)]
pub struct PlacementDecisionFields {}

/// The clusters of a [`PlacementDecision`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementDecisionStatus {
    /// The selected clusters in this slice (at most 100).
    pub decisions: Vec<ClusterDecision>,
}

/// One selected cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterDecision {
    /// Name of the ManagedCluster.
    pub cluster_name: String,

    /// Why it was selected; the upstream scheduler writes an empty string.
    pub reason: String,

    /// The cluster's score; not written by the upstream scheduler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
}

impl PlacementDecision {
    /// The label selector that lists the decisions of the placement named `placement` (in the
    /// placement's namespace): `cluster.open-cluster-management.io/placement=<placement>`.
    ///
    /// ```
    /// use ocm_api::cluster::v1beta1::PlacementDecision;
    ///
    /// assert_eq!(
    ///     PlacementDecision::selector_for("placement1"),
    ///     "cluster.open-cluster-management.io/placement=placement1"
    /// );
    /// ```
    pub fn selector_for(placement: &str) -> String {
        format!("{}={placement}", crate::constants::labels::PLACEMENT)
    }

    /// The names of the clusters in this decision.
    pub fn cluster_names(&self) -> impl Iterator<Item = &str> {
        self.status
            .iter()
            .flat_map(|s| s.decisions.iter())
            .map(|d| d.cluster_name.as_str())
    }
}
