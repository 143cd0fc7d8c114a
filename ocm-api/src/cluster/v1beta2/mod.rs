//! `cluster.open-cluster-management.io/v1beta2`: ManagedClusterSet and
//! ManagedClusterSetBinding.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod managedclusterset;
mod managedclustersetbinding;
pub use managedclusterset::*;
pub use managedclustersetbinding::*;

/// The CRDs of this version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        generate::<ManagedClusterSet>(Fixups::default()),
        generate::<ManagedClusterSetBinding>(Fixups::default()),
    ]
}
