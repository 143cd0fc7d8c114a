//! `cluster.open-cluster-management.io/v1beta1`: Placement and PlacementDecision, and the
//! decision tracker placement consumers use.
//!
//! # Tracking a placement's decisions
//!
//! A placement consumer (an addon's hub controller, a ManifestWorkReplicaSet-like fan-out)
//! needs the clusters a Placement decided, by decision group, and what changed since it last
//! looked. Upstream keeps this in the helpers of its cluster `v1beta1` API; so does this
//! crate, as pure values with no API client:
//!
//! * [`ClustersTracker`] (upstream's `PlacementDecisionClustersTracker`): the decided clusters
//!   over all PlacementDecision slices, the clusters added and removed between two refreshes,
//!   and the groups selected by name or index ([`GroupRef`]);
//! * [`DecisionClusters`] (upstream's `ClusterGroupsMap`): clusters by decision group, also in
//!   the rollout engine's form
//!   ([`to_cluster_groups`](DecisionClusters::to_cluster_groups), see
//!   [`RolloutHandler`](crate::cluster::v1alpha1::RolloutHandler)).
//!
//! Behaviour is upstream's, including its quirk in
//! [`ClustersTracker::existing_cluster_groups_besides`]. Reading the slices from a hub is
//! `ocm_placement::consumer::PlacementDecisionGetter`, which refreshes a tracker through
//! `kube`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod placement;
mod placementdecision;
mod tracker;
pub use placement::*;
pub use placementdecision::*;
pub use tracker::{ClusterChanges, ClustersTracker, DecisionClusters, GroupRef};

/// The CRDs of this version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        generate::<Placement>(Fixups {
            root_spec_required: true,
            ..Fixups::default()
        }),
        generate::<PlacementDecision>(Fixups::default()),
    ]
}
