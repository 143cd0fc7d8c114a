//! `work.open-cluster-management.io/v1`: ManifestWork and AppliedManifestWork.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod appliedmanifestwork;
mod config;
mod feedback;
mod manifest;
mod manifestwork;
mod status;

pub use appliedmanifestwork::*;
pub use config::*;
pub use feedback::*;
pub use manifest::*;
pub use manifestwork::*;
pub use status::*;

/// The CRDs of this version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        generate::<ManifestWork>(Fixups::default()),
        generate::<AppliedManifestWork>(Fixups::default()),
    ]
}
