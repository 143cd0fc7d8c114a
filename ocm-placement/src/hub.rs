//! The hub objects the scheduler reads, as one value.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};

use crate::Snapshot;

/// Everything the scheduler reads from a hub: clusters, cluster sets, bindings, placements,
/// placement decisions and AddOnPlacementScores (all namespaces).
///
/// The controller fills it from its watch caches (or from lists, with the `controller`
/// feature's `HubState::list`), the simulator from files.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct HubState {
    /// ManagedClusters.
    pub clusters: Vec<Arc<ManagedCluster>>,
    /// ManagedClusterSets.
    pub sets: Vec<Arc<ManagedClusterSet>>,
    /// ManagedClusterSetBindings.
    pub bindings: Vec<Arc<ManagedClusterSetBinding>>,
    /// Placements.
    pub placements: Vec<Arc<Placement>>,
    /// PlacementDecisions.
    pub decisions: Vec<Arc<PlacementDecision>>,
    /// AddOnPlacementScores.
    pub scores: Vec<Arc<AddOnPlacementScore>>,
    /// Placements the hub holds that could not be decoded (a value the API server admits but
    /// the Placement type cannot hold, such as a `numberOfClusters` beyond 32 bits): the
    /// controller says so in their `PlacementMisconfigured` condition.
    pub undecodable_placements: Vec<ocm_api::k8s::object::DecodeFailure>,
}

impl HubState {
    /// The scheduler's snapshot of this state.
    pub fn snapshot(&self) -> Snapshot {
        self.builder().build()
    }

    /// A snapshot builder holding this state.
    pub(crate) fn builder(&self) -> crate::SnapshotBuilder {
        let mut builder = Snapshot::builder();
        for c in &self.clusters {
            builder.add_cluster(c.clone());
        }
        for s in &self.sets {
            builder.add_cluster_set(s);
        }
        for b in &self.bindings {
            builder.add_binding(b);
        }
        for s in &self.scores {
            builder.add_addon_score(s);
        }
        for d in &self.decisions {
            builder.add_placement_decision(d);
        }
        builder
    }

    /// The PlacementDecisions of `placement` (in its namespace, labelled with its name).
    pub fn decisions_of(&self, placement: &Placement) -> Vec<&PlacementDecision> {
        let namespace = placement.metadata.namespace.as_deref();
        let name = Some(placement.metadata.name.as_deref().unwrap_or_default());
        self.decisions
            .iter()
            .filter(|d| {
                d.metadata.namespace.as_deref() == namespace
                    && d.metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(ocm_api::constants::labels::PLACEMENT))
                        .map(String::as_str)
                        == name
            })
            .map(AsRef::as_ref)
            .collect()
    }

    /// The earliest AddOnPlacementScore `validUntil` after `now`, if any.
    pub fn next_score_expiry(&self, now: Timestamp) -> Option<Timestamp> {
        self.scores
            .iter()
            .filter_map(|s| s.status.as_ref()?.valid_until.as_ref().map(|t| t.0))
            .filter(|t| *t > now)
            .min()
    }
}
