//! `work.open-cluster-management.io/v1`: ManifestWork and AppliedManifestWork.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod appliedmanifestwork;
pub use appliedmanifestwork::*;

/// The CRDs of this version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![generate::<AppliedManifestWork>(Fixups::default())]
}
