//! `cluster.open-cluster-management.io/v1beta1`: Placement and PlacementDecision.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod placement;
mod placementdecision;
pub use placement::*;
pub use placementdecision::*;

/// The CRDs of this version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        generate::<Placement>(Fixups {
            root_spec_required: true,
            ..Fixups::default()
        }),
        generate::<PlacementDecision>(Fixups::default()),
    ]
}
