//! The `cluster.open-cluster-management.io` API group.
//!
//! | module | kinds |
//! | --- | --- |
//! | [`v1`] | [`ManagedCluster`](v1::ManagedCluster) |
//! | [`v1beta1`] | [`Placement`](v1beta1::Placement), [`PlacementDecision`](v1beta1::PlacementDecision) |
//! | [`v1beta2`] | [`ManagedClusterSet`](v1beta2::ManagedClusterSet), [`ManagedClusterSetBinding`](v1beta2::ManagedClusterSetBinding) |
//! | [`v1alpha1`] | [`ClusterClaim`](v1alpha1::ClusterClaim), [`AddOnPlacementScore`](v1alpha1::AddOnPlacementScore), and the rollout strategy types ([`RolloutStrategy`](v1alpha1::RolloutStrategy)) embedded by workload appliers |

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

pub(crate) mod schema;
mod validate;
pub use validate::{
    BINDING_NAME_MISMATCH, DNS1123_LABEL_MESSAGE, TOLERATION_EMPTY_KEY_NEEDS_EXISTS,
    TOLERATION_EXISTS_WITHOUT_VALUE,
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
