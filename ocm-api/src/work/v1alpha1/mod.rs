//! `work.open-cluster-management.io/v1alpha1`: ManifestWorkReplicaSet.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod manifestworkreplicaset;

pub use manifestworkreplicaset::*;

/// The CRDs of this version, as upstream ships them: the ManifestWorkReplicaSet CRD without
/// our extension fields ([`crate::crd::REPLICA_SET_EXTENSIONS`]).
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    let mut crd = extended_crd();
    crate::crd::strip_extensions(&mut crd);
    vec![crd]
}

/// The ManifestWorkReplicaSet CRD with our extension fields, generated from the type.
pub(crate) fn extended_crd() -> CustomResourceDefinition {
    generate::<ManifestWorkReplicaSet>(Fixups::default())
}
