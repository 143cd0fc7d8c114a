//! The managed-cluster side of ClusterClaims: project the spoke's cluster-scoped
//! `ClusterClaim` objects into the hub's `ManagedCluster.status.clusterClaims`.
//!
//! Rules (upstream's registration agent): claims labelled
//! `open-cluster-management.io/spoke-only` stay on the spoke; reserved claims
//! (`id.k8s.io`, `kubeversion.open-cluster-management.io`,
//! `platform.open-cluster-management.io`, `product.open-cluster-management.io`) come first,
//! sorted by name, then the other claims sorted by name and cut to at most
//! [`DEFAULT_MAX_CUSTOM_CLAIMS`]. [`cluster_claims_status`] computes the list; it lives in
//! `ocm_api::cluster::v1alpha1` next to the `ClusterClaim` type and is re-exported here.
//!
//! The reporter that writes the list to the hub runs on the managed cluster beside the work
//! agent, so it moved to `ocm_work::registration::ClusterClaimReporter` (a spoke agent built
//! on `ocm-work` no longer compiles this crate's scheduler for it).
//!
//! ```
//! use ocm_api::cluster::v1alpha1::ClusterClaim;
//! use ocm_placement::inventory::claims::cluster_claims_status;
//!
//! let claim = |name: &str, value: &str| -> ClusterClaim {
//!     serde_json::from_value(serde_json::json!({
//!         "metadata": {"name": name}, "spec": {"value": value}})).unwrap()
//! };
//! let status = cluster_claims_status(
//!     &[claim("region", "eu"), claim("id.k8s.io", "abc"), claim("az", "1")], 20);
//! let names: Vec<_> = status.iter().map(|c| c.name.as_deref().unwrap()).collect();
//! assert_eq!(names, ["id.k8s.io", "az", "region"]);
//! ```

pub use ocm_api::cluster::v1alpha1::cluster_claims_status;
pub use ocm_api::constants::cluster::{
    CLAIM_SPOKE_ONLY_LABEL as SPOKE_ONLY_LABEL, DEFAULT_MAX_CUSTOM_CLAIMS, RESERVED_CLAIM_NAMES,
};
