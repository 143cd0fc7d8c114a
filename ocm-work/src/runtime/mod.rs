//! What the example binaries need to run on real clusters, for your own binaries too:
//! [`shutdown`] (SIGTERM/SIGINT and one shutdown signal for every `run`) and [`reconcile`]
//! (every reconciler in kube-runtime's shape).
//!
//! # Why here
//!
//! `ocm-work` is the crate with I/O that both the work agent and the hub controllers
//! (ManifestWorkReplicaSet here, Placement and the cluster inventory in `ocm-placement`)
//! reach: `ocm-placement` cannot depend on `ocm-work`, so the runtime pieces live here, and
//! `ocm-placement` only exposes hooks (for example its controller's schedule observer) that
//! a binary connects to them.
pub mod health;
pub mod leader;
pub mod metrics;
pub mod reconcile;
pub mod server;
pub mod shutdown;
pub mod workqueue;
