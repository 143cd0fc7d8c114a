//! Typed Open Cluster Management (OCM) APIs for Rust.
//!
//! `ocm-api` holds the OCM custom resources of the `work`, `cluster` and `addon` API groups as
//! Rust types, the CRDs generated from them, the constants upstream OCM defines (labels,
//! annotations, finalizers, condition types and reasons, …), condition helpers with
//! Kubernetes semantics, validation equal to upstream's admission webhooks, and a
//! [`ManifestWork`](work::v1::ManifestWork) builder. It does no I/O; the other crates of the
//! SDK (`ocm-work`, `ocm-placement`, `ocm-feedback`, `ocm-testkit`) build on it.
//!
//! Next to the types are the helpers that interpret them, where upstream keeps them in its API
//! helpers: the rollout engine ([`cluster::v1alpha1`]) and the placement decision tracker
//! ([`cluster::v1beta1`]). The SIG-Multicluster `ClusterProfile` and `PlacementDecision`
//! types are in [`multicluster`]. [`k8s`] is the one home of the Kubernetes value semantics
//! every crate of the SDK uses: YAML document streams and `List` expansion, label selectors,
//! names, quantities, Go-style rendering and digests.
//!
//! # Example
//!
//! ```
//! use ocm_api::work::v1::ManifestWork;
//!
//! let work: ManifestWork = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "work.open-cluster-management.io/v1",
//!     "kind": "ManifestWork",
//!     "metadata": { "name": "hello", "namespace": "cluster1" },
//!     "spec": { "workload": { "manifests": [{
//!         "apiVersion": "v1", "kind": "ConfigMap",
//!         "metadata": { "name": "hello", "namespace": "default" },
//!         "data": { "greeting": "hi" }
//!     }]}}
//! }))?;
//! assert_eq!(work.spec.manifests().len(), 1);
//! assert_eq!(work.spec.manifests()[0].kind(), Some("ConfigMap"));
//! work.validate()?;
//!
//! // Every OCM CRD, generated from these types, structurally equal to upstream's.
//! assert_eq!(ocm_api::crds().len(), 14);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is upstream-exact
//!
//! Type names, JSON field names, CRD schemas (checked field by field against upstream's CRDs),
//! constants, condition semantics and validation messages follow upstream OCM. Our additions
//! are marked in their docs (for example the [`builder`] and the injectable [`clock`]);
//! [`differences`] lists every deliberate difference from upstream across the SDK.
//!
//! # Features
//!
//! * `cel`: the [`cel`] module, bounded compilation and evaluation of the CEL expressions users
//!   write (placement CEL selectors, work condition rules, CRD validation rules), shared by the
//!   other crates of the SDK.
//! * `rounds`: the [`rounds`] module, the one round-based watch loop the SDK's whole-set
//!   controllers run on (ocm-placement's controllers, ocm-work's addon manager and fan-out).
//!
//! # Versions
//!
//! Like every crate built on `k8s-openapi`, this crate enables no Kubernetes version feature:
//! the final binary picks one (for example `k8s-openapi = { features = ["latest"] }`).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod addon;
pub mod builder;
#[cfg(feature = "cel")]
#[cfg_attr(docsrs, doc(cfg(feature = "cel")))]
pub mod cel;
pub mod clock;
pub mod cluster;
pub mod conditions;
pub mod constants;
pub mod crd;
pub mod differences;
mod error;
pub mod k8s;
pub mod multicluster;
pub mod repeats;
#[cfg(feature = "rounds")]
#[cfg_attr(docsrs, doc(cfg(feature = "rounds")))]
pub mod rounds;
pub mod schema;
pub mod setters;
mod string_enum;
pub mod validation;
pub mod work;

pub use crd::crds;
pub use error::{Error, Result};
