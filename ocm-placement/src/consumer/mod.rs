//! Helpers for code that consumes a Placement's decisions (sdk-go parity).
//!
//! A "placement consumer" (an addon's hub controller, a custom fan-out controller) needs the
//! clusters a Placement decided, by decision group, and what changed since it last looked:
//!
//! * `ClustersTracker`, `DecisionClusters`, `GroupRef` and `ClusterChanges`: the pure tracker,
//!   in [`ocm_api::cluster::v1beta1`] (upstream keeps it in its API helpers too), so that a
//!   consumer need not depend on this crate;
//! * `PlacementDecisionGetter` (feature `controller`): lists the slices of a placement from
//!   the hub through `kube` and refreshes a tracker with them.

#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
mod getter;

#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
pub use getter::PlacementDecisionGetter;
