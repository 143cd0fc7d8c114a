//! Helpers for code that consumes a Placement's decisions (sdk-go parity).
//!
//! A "placement consumer" (an addon's hub controller, a custom fan-out controller) needs the
//! clusters a Placement decided, by decision group, and what changed since it last looked:
//!
//! * [`ClustersTracker`]: the pure tracker (sdk-go's `PlacementDecisionClustersTracker`):
//!   decided clusters over all PlacementDecision slices, added / removed sets between two
//!   refreshes, groups by index and by name, and the groups in the rollout engine's form
//!   ([`DecisionClusters::to_cluster_groups`]).
//! * `PlacementDecisionGetter` (feature `controller`): lists the slices of a placement from
//!   the hub and refreshes a tracker with them.
//!
//! Behaviour is upstream's, including its quirk in
//! [`ClustersTracker::existing_cluster_groups_besides`]. Our addition: the tracker is a value
//! fed with decisions, so it is usable without any API client.

#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
mod getter;
mod tracker;

#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
pub use getter::PlacementDecisionGetter;
pub use tracker::{ClusterChanges, ClustersTracker, DecisionClusters, GroupRef};
