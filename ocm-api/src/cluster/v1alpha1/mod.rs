//! `cluster.open-cluster-management.io/v1alpha1`: ClusterClaim, AddOnPlacementScore, the
//! rollout strategy types shared by workload appliers, and the rollout engine that interprets
//! them.
//!
//! # The rollout engine
//!
//! Upstream keeps the engine that interprets a [`RolloutStrategy`] next to the type, in the
//! helpers of its cluster `v1alpha1` API; so does this crate. It is pure (no I/O, the time is
//! passed in) and used by every workload applier: the ManifestWorkReplicaSet controller and
//! the addon manager's install strategies in `ocm-work`, or your own.
//!
//! The applier hands the engine the placement's decision groups ([`ClusterGroups`]), the
//! rollout status of every cluster it has already touched ([`ClusterRolloutStatus`]), the
//! strategy and the current time. [`RolloutHandler::rollout`] answers with a
//! [`RolloutResult`]: the clusters to roll out to now, those that timed out, those no longer
//! selected, whether `maxFailures` was breached, and when to look again.
//!
//! The arithmetic is upstream's, quirks included (see [`calculate_rollout_size`] and
//! [`duration::parse_timeout`]):
//!
//! * **All**: every cluster at once; a `progressDeadline` turns slow clusters into time-outs.
//! * **Progressive**: mandatory decision groups first with no failure tolerated, then at most
//!   `maxConcurrency` clusters at a time (unset: all remaining clusters), stopping once more
//!   than `maxFailures` clusters failed or timed out.
//! * **ProgressivePerGroup**: mandatory groups first, then one decision group at a time, in
//!   group-index order.
//!
//! Durations (`minSuccessTime`, `progressDeadline`) are parsed as Go's `time.ParseDuration`
//! parses them ([`duration`]). The PlacementDecision side, which clusters a placement decided
//! and how that changes, is [`ClustersTracker`](crate::cluster::v1beta1::ClustersTracker) in
//! `v1beta1`, as upstream has it.
//!
//! ```
//! use ocm_api::cluster::v1alpha1::{
//!     ClusterGroups, GroupKey, RolloutError, RolloutHandler, RolloutProgressive, RolloutStatus,
//!     RolloutStrategy, RolloutType,
//! };
//! use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
//!
//! let mut groups = ClusterGroups::default();
//! for c in ["c1", "c2", "c3", "c4"] {
//!     groups.insert(GroupKey::new("", 0), c);
//! }
//! let strategy = RolloutStrategy {
//!     type_: Some(RolloutType::Progressive),
//!     progressive: Some(RolloutProgressive {
//!         max_concurrency: Some(IntOrString::Int(2)),
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let now = "2026-01-01T00:00:00Z".parse().unwrap();
//! let result = RolloutHandler::new(&groups).rollout(&strategy, &[], now)?;
//! let names: Vec<_> = result.clusters_to_rollout.iter().map(|c| c.cluster_name.as_str()).collect();
//! assert_eq!(names, ["c1", "c2"]);
//! assert!(result.clusters_to_rollout.iter().all(|c| c.status == RolloutStatus::ToApply));
//! # Ok::<(), RolloutError>(())
//! ```

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod addonplacementscore;
mod clusterclaim;
pub mod duration;
mod rollout;
mod rollout_handler;
pub use addonplacementscore::*;
pub use clusterclaim::*;
pub use rollout::*;
pub use rollout_handler::*;

/// The CRDs of this version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        generate::<ClusterClaim>(Fixups::default()),
        generate::<AddOnPlacementScore>(Fixups::default()),
    ]
}
