//! The Open Cluster Management work agent and apply engine, in Rust.
//!
//! This crate will hold the ManifestWork apply engine, the work agent (hub ManifestWork →
//! managed cluster), AppliedManifestWork bookkeeping and garbage collection, status and
//! feedback sync, executor authorization and the ManifestWorkReplicaSet controller.
//!
//! Today it has the pure building blocks the agent is assembled from, each upstream-exact:
//!
//! * [`identity`]: the hub hash, agent id and AppliedManifestWork names;
//! * [`order`]: the kind-ranked order manifests are applied in;
//! * [`config`]: which manifest config (strategy, feedback and condition rules) applies to a
//!   resource, with `*` wildcards;
//! * [`owner`]: owner references to the AppliedManifestWork and the delete options that decide
//!   them;
//! * [`apply`]: the pure half of the update strategies (label and annotation merging, the
//!   `Update` strategy's create / leave / replace decision, upstream's configuration hash);
//! * [`status`]: merging manifest conditions across syncs and aggregating them into the work's
//!   `Applied`, `Available` and condition-rule conditions.
//!
//! ```
//! use ocm_work::identity::{applied_manifest_work_name, hub_hash};
//!
//! let hash = hub_hash("https://hub.example.com:6443");
//! let name = applied_manifest_work_name(&hash, "hello-work-demo");
//! assert!(name.ends_with("-hello-work-demo"));
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod apply;
pub mod config;
pub mod discovery;
mod error;
pub mod executor;
pub mod identity;
pub mod order;
pub mod owner;
pub mod patch;
pub mod replicaset;
pub mod rules;
pub mod status;

pub use error::{Error, Result};
