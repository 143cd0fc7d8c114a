//! The rollout engine, re-exported from its home in `ocm_api::cluster::v1alpha1`.
//!
//! The engine (All / Progressive / ProgressivePerGroup: [`RolloutHandler`], [`ClusterGroups`],
//! [`GroupKey`], [`RolloutStatus`], [`ClusterRolloutStatus`], [`RolloutResult`],
//! [`RolloutError`], [`calculate_rollout_size`] and Go [`duration`] parsing) now lives next to
//! the [`RolloutStrategy`](ocm_api::cluster::v1alpha1::RolloutStrategy) type it interprets, as
//! upstream keeps it in its API helpers, so that workload appliers (`ocm-work`, your own) use
//! it without depending on the scheduler. These re-exports keep the old paths working; new
//! code should name `ocm_api::cluster::v1alpha1` directly. The overview and an example are in
//! the docs of [`ocm_api::cluster::v1alpha1`].
//!
//! ```
//! // The old path and the new one name the same items.
//! use ocm_placement::rollout::{ClusterGroups, GroupKey};
//!
//! let mut groups: ocm_api::cluster::v1alpha1::ClusterGroups = ClusterGroups::default();
//! groups.insert(GroupKey::new("", 0), "c1");
//! assert_eq!(groups.cluster_count(), 1);
//! ```

pub use ocm_api::cluster::v1alpha1::duration;
pub use ocm_api::cluster::v1alpha1::{
    ClusterGroups, ClusterRolloutStatus, GroupKey, RolloutError, RolloutHandler, RolloutResult,
    RolloutStatus, calculate_rollout_size,
};
