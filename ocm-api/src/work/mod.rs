//! The `work.open-cluster-management.io` API group: ManifestWork, AppliedManifestWork and
//! ManifestWorkReplicaSet.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

pub mod executor;
pub mod split;
pub mod v1;
pub mod v1alpha1;
mod validate;

pub use validate::manifests_size;

/// The API group name.
pub const GROUP: &str = "work.open-cluster-management.io";

/// The CRDs of this group.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    let mut crds = v1::crds();
    crds.extend(v1alpha1::crds());
    crds
}
