//! Cluster inventory: the hub controllers that keep ManagedClusterSets, bindings and cluster
//! taints up to date, and the managed-cluster side that reports ClusterClaims and
//! AddOnPlacementScores.
//!
//! Everything the controllers decide is computed by pure functions first, so the rules can be
//! tested without a cluster:
//!
//! * [`members`] / [`cluster_set_empty_condition`]: which clusters a set selects and its
//!   `ClusterSetEmpty` condition;
//! * [`bound_condition`]: a binding's `Bound` condition;
//! * [`default_cluster_set`], [`global_cluster_set`], [`selector_to_restore`],
//!   [`ensure_default_cluster_set_label`]: the well-known sets and the default set label;
//! * [`desired_health_taints`]: the `unavailable` / `unreachable` taints;
//! * [`plan`]: all of the above over a whole hub, as a list of [`InventoryChange`]s;
//! * [`score::normalize`]: the managed-cluster side (the ClusterClaims a cluster reports are
//!   `ocm_api::cluster::v1alpha1::cluster_claims_status`).
//!
//! The I/O shells (feature `controller`) are [`ClusterInventoryController`] on the hub and
//! [`score::ScoreWriter`] for the managed cluster; the ClusterClaim reporter of the managed
//! cluster is `ocm_work::registration::ClusterClaimReporter`.
//!
//! # Fidelity
//!
//! Upstream-exact: membership rules, condition types, reasons and messages, the taint rules
//! (identity by key, value and effect; clusters being deleted skipped), the selector revert
//! of the well-known sets and its opt-out annotation; the controller writes the taints it adds
//! without `timeAdded`, which the hub's mutating webhook stamps (the pure [`plan`] fills it in
//! with its `now`, for simulations without a hub). Differences: the default cluster-set label is applied by
//! the controller when asked ([`InventoryOptions::label_default_cluster_set`], off by default)
//! instead of by a webhook, and one controller does what upstream splits into five.
//!
//! # Example
//!
//! ```
//! use ocm_api::cluster::v1::ManagedCluster;
//! use ocm_placement::inventory::{plan, InventoryChange, InventoryOptions};
//! use serde_json::json;
//!
//! let cluster: ManagedCluster = serde_json::from_value(json!({
//!     "metadata": {"name": "c1", "labels": {"cluster.open-cluster-management.io/clusterset": "default"}},
//!     "spec": {},
//!     "status": {"conditions": [{"type": "ManagedClusterConditionAvailable", "status": "True",
//!         "reason": "Ok", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
//! }))?;
//! let now = "2026-01-01T00:00:00Z".parse()?;
//! let plan = plan(&[cluster], &[], &[], &InventoryOptions::default(), now);
//! // An empty hub gets its `default` and `global` sets.
//! assert!(plan.changes.iter().any(|c| matches!(c, InventoryChange::CreateSet(s)
//!     if s.metadata.name.as_deref() == Some("default"))));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};

#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
mod controller;
mod defaults;
pub mod lease;
mod membership;
mod plan;
pub mod score;
mod taints;

#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
pub use controller::{ClusterInventoryController, INVENTORY_RESYNC_PERIOD, InventoryOutcome};
pub use defaults::{
    auto_update_disabled, default_cluster_set, ensure_default_cluster_set_label,
    global_cluster_set, selector_to_restore, well_known_selector,
};
pub use membership::{
    bound_condition, cluster_set_empty_condition, is_member, members, selector_matches,
};
pub use plan::{InventoryChange, InventoryOptions, InventoryPlan, plan};
pub use taints::{Health, desired_health_taints, health, health_taint, same_taint};

pub use crate::error::InventoryError;

/// The object's name, or `""` when it has none.
pub(crate) fn name_of(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

/// Conditions as a slice, treating an absent list as empty.
pub(crate) fn conditions_of(list: Option<&Vec<Condition>>) -> &[Condition] {
    list.map_or(&[], Vec::as_slice)
}
