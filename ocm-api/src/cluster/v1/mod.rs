//! `cluster.open-cluster-management.io/v1`: ManagedCluster.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod managedcluster;
pub use managedcluster::*;

/// The CRDs of this version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![generate::<ManagedCluster>(Fixups {
        nullable: &[&["spec", "taints", "timeAdded"]],
        ..Fixups::default()
    })]
}
