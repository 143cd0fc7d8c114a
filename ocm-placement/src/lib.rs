//! The Open Cluster Management (OCM) Placement scheduler as a library.
//!
//! `ocm-placement` decides which managed clusters a `Placement` selects, exactly as the
//! upstream OCM placement controller does (quirks included), in a pure, synchronous core: build
//! a [`Snapshot`] of the hub once, then call [`Scheduler::schedule`] with a placement and the
//! current time. The [`ScheduleResult`] holds the selected clusters, every filter's survivors,
//! every prioritizer's scores, the requeue time, the decision groups and PlacementDecision
//! slices to write, and the `PlacementSatisfied` / `PlacementMisconfigured` conditions. No I/O
//! happens here; controllers feed snapshots from their caches.
//!
//! # Example
//!
//! ```
//! use ocm_api::cluster::v1::ManagedCluster;
//! use ocm_api::cluster::v1beta1::Placement;
//! use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
//! use ocm_placement::{Scheduler, Snapshot};
//! use serde_json::json;
//!
//! let cluster = |name: &str, cloud: &str| -> ManagedCluster {
//!     serde_json::from_value(json!({
//!         "metadata": {"name": name, "labels": {
//!             "cluster.open-cluster-management.io/clusterset": "default", "cloud": cloud}},
//!         "spec": {}
//!     }))
//!     .unwrap()
//! };
//! let set: ManagedClusterSet = serde_json::from_value(json!({
//!     "metadata": {"name": "default"}, "spec": {}
//! }))?;
//! let binding: ManagedClusterSetBinding = serde_json::from_value(json!({
//!     "metadata": {"name": "default", "namespace": "apps"},
//!     "spec": {"clusterSet": "default"}
//! }))?;
//! let snapshot = Snapshot::builder()
//!     .cluster(cluster("east", "Amazon"))
//!     .cluster(cluster("west", "Azure"))
//!     .cluster_set(&set)
//!     .binding(&binding)
//!     .build();
//!
//! let placement: Placement = serde_json::from_value(json!({
//!     "metadata": {"name": "web", "namespace": "apps"},
//!     "spec": {"predicates": [{"requiredClusterSelector": {
//!         "labelSelector": {"matchLabels": {"cloud": "Amazon"}}}}]}
//! }))?;
//! let now = jiff::Timestamp::from_second(1_700_000_000)?;
//! let result = Scheduler::new().schedule(&placement, &snapshot, now)?;
//! assert_eq!(result.selected_names(), ["east"]);
//! assert_eq!(result.slices[0].name, "web-decision-1");
//! assert_eq!(result.satisfied.reason, "AllDecisionsScheduled");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Fidelity
//!
//! Upstream-exact: cluster-set eligibility (binding *names*, not `spec.clusterSet`; `Bound` is
//! ignored), predicates, taints and tolerations (including the `tolerationSeconds` boundary
//! and `PreferNoSelect` having no effect), prioritizer weights and integer arithmetic, sort
//! order, decision groups, PlacementDecision naming/labels/slicing, condition reasons and
//! messages. Our additions: custom [`plugins::Filter`] and [`plugins::Prioritizer`] traits,
//! [`ScheduleResult::explain`], deterministic orders where upstream iterates Go maps, and,
//! as opt-ins, topology spread ([`Scheduler::with_topology_spread`]:
//! `spec.spreadPolicy.spreadConstraints`, a field upstream's scheduler ignores; see
//! [`spread`]) and scores in decisions ([`Scheduler::with_decision_scores`]: `spec.sortBy`,
//! `spec.scoreRateLimit`, `ClusterDecision.score`, API fields upstream's scheduler does not
//! implement; see [`decisions`]). The SIG-Multicluster outputs upstream writes behind its
//! `SIGPlacementDecision` and `ClusterProfile` gates are in [`sig`] and [`profile`].
//! Approximations: CEL runs on the `cel` crate, whose cost is a static estimate (see
//! [`plugins::CelLimits`]). The Kubernetes CEL libraries upstream enables (Lists, Regex, URLs,
//! Quantity, IP, CIDR, Format and Semver) come from `ocm_api::cel`, with Kubernetes'
//! semantics. A compile error from an undeclared identifier is detected, an unknown function only
//! fails at evaluation (no match).
//!
//! # Performance
//!
//! Building a [`Snapshot`] interns every label, claim and taint string and precomputes set
//! membership, resource values, AddOn score tables and decision counts (about 0.5 KiB per
//! cluster besides the shared `ManagedCluster` objects). Scheduling then matches integers and
//! allocates per placement, not per cluster. CEL selectors build, for each candidate cluster,
//! only the parts of its CEL form their expressions read (for example `metadata.labels`), the
//! first time any placement reads them on that snapshot, and keep them (shared by clones of
//! the snapshot); the first CEL schedule on a fresh snapshot of 10 000 clusters costs about
//! twice the following ones.
//!
//! # The I/O shell (feature `controller`)
//!
//! The hub controllers are thin shells around the pure core above, and share one runtime:
//!
//! * **Errors.** The crate has one error enum, [`Error`] (`error.rs`), shared by the
//!   scheduler, the inventory functions, the simulator, the decision consumer and every hub
//!   controller; a failed API call is [`Error::Kube`], which keeps its `kube::Error` as the
//!   [`source`](std::error::Error::source). The older names [`ControllerError`],
//!   [`ConsumerError`], [`inventory::InventoryError`] and [`sim::SimError`] are aliases of it.
//! * **Watches.** Every controller watches through kube-runtime: one `watcher` plus
//!   `reflector` store per kind, restarted with kube-runtime's default backoff. None of them
//!   uses kube-runtime's `Controller`, because each reconciles the whole hub from one snapshot
//!   of its stores (the scheduler schedules every placement against the same snapshot, as
//!   upstream's scheduler reads one informer cache) rather than one object per queue key.
//!   The one loop that drives them is private to the crate and documented here: once every
//!   store has listed, it runs a round; it runs the next one when any watch reports a change
//!   (a burst of changes coalesces into one round), when the round asked to run again at a
//!   given time (for example when a toleration expires), after a failed round with an
//!   exponential backoff from 100 ms to 60 s, and at least once per resync period; it stops
//!   when the shutdown future completes. The controllers that run on it:
//!   [`controller::PlacementController::run`],
//!   [`inventory::ClusterInventoryController::run`],
//!   [`sig::SigPlacementDecisionController::run`] and
//!   [`profile::ClusterProfileController::run`] and
//!   [`inventory::lease::ClusterLeaseController::run`]. [`consumer::PlacementDecisionGetter`]
//!   only lists, and does not watch.
//!   For a per-object queue, mount [`controller::reconcile_placement`] in a kube-runtime
//!   `Controller` of your own.
//! * **kube features.** `client` and `runtime` only (no TLS stack: the binaries that build
//!   the `kube::Client` choose one).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod consumer;
#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
pub mod controller;
pub mod decisions;
mod error;
pub mod explain;
pub mod hub;
pub mod inventory;
pub mod plugins;
mod policy;
pub mod profile;
mod result;
mod scheduler;
mod selector;
pub mod sig;
pub mod sim;
pub mod snapshot;
pub mod spread;
mod status;
mod symbols;
#[cfg(feature = "controller")]
mod watch;

#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
pub use error::ControllerError;
pub use error::{ConsumerError, Error, Result};
pub use explain::{ClusterExplanation, Outcome};
pub use result::{
    Eligibility, FilterRecord, PrioritizerScores, ScheduleResult, ScheduleStatus, ScoredCluster,
    StatusCode,
};
pub use scheduler::{Scheduler, is_scheduling_disabled};
pub use snapshot::{ClusterId, Snapshot, SnapshotBuilder};
