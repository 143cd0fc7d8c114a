//! The `cluster.open-cluster-management.io` API group.
//!
//! | module | kinds |
//! | --- | --- |
//! | [`v1`] | [`ManagedCluster`](v1::ManagedCluster) |
//! | [`v1beta1`] | [`Placement`](v1beta1::Placement), [`PlacementDecision`](v1beta1::PlacementDecision) |
//! | [`v1beta2`] | [`ManagedClusterSet`](v1beta2::ManagedClusterSet), [`ManagedClusterSetBinding`](v1beta2::ManagedClusterSetBinding) |
//! | [`v1alpha1`] | [`ClusterClaim`](v1alpha1::ClusterClaim), [`AddOnPlacementScore`](v1alpha1::AddOnPlacementScore), and the rollout strategy types ([`RolloutStrategy`](v1alpha1::RolloutStrategy)) embedded by workload appliers |
//!
//! Every kind round-trips losslessly through serde (absent optional fields stay absent), its
//! CRD is structurally the same as upstream's, and `validate` methods check what upstream's hub
//! admits, collecting every offending field.
//!
//! # Example
//!
//! ```
//! use ocm_api::cluster::v1beta1::Placement;
//!
//! let placement: Placement = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "cluster.open-cluster-management.io/v1beta1",
//!     "kind": "Placement",
//!     "metadata": { "name": "web", "namespace": "apps" },
//!     "spec": {
//!         "clusterSets": ["prod"],
//!         "numberOfClusters": 2,
//!         "predicates": [{ "requiredClusterSelector": {
//!             "labelSelector": { "matchLabels": { "region": "eu" } }
//!         }}],
//!         "tolerations": [{
//!             "key": "cluster.open-cluster-management.io/unreachable",
//!             "operator": "Exists",
//!             "tolerationSeconds": 300
//!         }]
//!     }
//! }))?;
//! placement.validate()?;
//!
//! // A weight outside -10..=10 is rejected, naming the field.
//! let mut bad = placement.clone();
//! bad.spec.prioritizer_policy = Some(serde_json::from_value(serde_json::json!({
//!     "configurations": [{ "scoreCoordinate": { "type": "BuiltIn", "builtIn": "Steady" }, "weight": 20 }]
//! }))?);
//! let err = bad.validate().unwrap_err();
//! assert!(err.to_string().contains("spec.prioritizerPolicy.configurations[0].weight"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Implements `Serialize` and `Deserialize` for a spec type that derives them with
/// `#[serde(remote = "Self")]`, so that an object without `spec` (or with `spec: null`) reads as
/// the default spec instead of failing. Upstream does not require `spec` for these kinds; like
/// upstream's Go clients, such an object is written back with `spec: {}`.
macro_rules! spec_may_be_absent {
    ($spec:ident) => {
        impl serde::Serialize for $spec {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $spec::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $spec {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Present($spec);
                impl<'de> serde::Deserialize<'de> for Present {
                    fn deserialize<D: serde::Deserializer<'de>>(
                        deserializer: D,
                    ) -> Result<Self, D::Error> {
                        $spec::deserialize(deserializer).map(Present)
                    }
                }
                Ok(Option::<Present>::deserialize(deserializer)?
                    .map(|p| p.0)
                    .unwrap_or_default())
            }
        }
    };
}
pub(crate) use spec_may_be_absent;

pub mod builder;
pub(crate) mod schema;
mod validate;
pub use validate::{
    BINDING_NAME_MISMATCH, TOLERATION_EMPTY_KEY_NEEDS_EXISTS, TOLERATION_EXISTS_WITHOUT_VALUE,
};
pub mod v1;
pub mod v1alpha1;
pub mod v1beta1;
pub mod v1beta2;

/// The API group name.
pub const GROUP: &str = "cluster.open-cluster-management.io";

/// The CRDs of this group.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    let mut crds = v1::crds();
    crds.extend(v1alpha1::crds());
    crds.extend(v1beta1::crds());
    crds.extend(v1beta2::crds());
    crds
}
