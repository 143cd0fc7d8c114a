//! `work.open-cluster-management.io/v1alpha1`: ManifestWorkReplicaSet.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod manifestworkreplicaset;

pub use manifestworkreplicaset::*;

/// The CRDs of this version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![generate::<ManifestWorkReplicaSet>(Fixups::default())]
}
