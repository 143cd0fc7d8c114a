//! PlacementDecision (KEP-5313): the clusters a multicluster scheduler chose, as data.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The body of a [`PlacementDecision`]: its fields sit at the top level of the object (the
/// kind has neither `spec` nor `status`).
///
/// A scheduling decision fans out to one or more PlacementDecision slices of at most
/// [`MAX_DECISIONS_PER_SLICE`](crate::multicluster::MAX_DECISIONS_PER_SLICE) clusters. When
/// there are several, every slice carries the same
/// [`DECISION_KEY`](crate::multicluster::labels::DECISION_KEY) label. Consumers only read it;
/// the scheduler that wrote it names itself in `schedulerName`.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "multicluster.x-k8s.io",
    version = "v1alpha1",
    kind = "PlacementDecision",
    doc = "The clusters a multicluster scheduler chose at one point in time, as data for consumers (one slice of at most 100).",
    plural = "placementdecisions",
    namespaced,
    no_spec,
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct PlacementDecisionFields {
    /// The chosen clusters, at most 100 in one slice.
    #[schemars(length(min = 0, max = 100))]
    pub decisions: Vec<ClusterDecision>,

    /// The scheduler that wrote this decision, for debugging and auditing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
}

/// One chosen cluster: a reference to its ClusterProfile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterDecision {
    /// The ClusterProfile of the chosen cluster.
    pub cluster_profile_ref: ClusterProfileReference,

    /// Why the cluster was chosen, for debugging and auditing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Names a ClusterProfile.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfileReference {
    /// The ClusterProfile's name.
    pub name: String,

    /// The ClusterProfile's namespace; absent means the PlacementDecision's own namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl PlacementDecision {
    /// The names of the chosen clusters' ClusterProfiles, in order.
    pub fn cluster_names(&self) -> impl Iterator<Item = &str> {
        self.spec
            .decisions
            .iter()
            .map(|d| d.cluster_profile_ref.name.as_str())
    }
}
