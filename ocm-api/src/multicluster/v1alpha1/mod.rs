//! `multicluster.x-k8s.io/v1alpha1`: ClusterProfile and PlacementDecision.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod clusterprofile;
mod placementdecision;
pub use clusterprofile::*;
pub use placementdecision::*;

/// The CRDs of this version. Unlike OCM's, cluster-inventory-api's CRDs leave
/// `preserveUnknownFields` unset.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    let mut crds = vec![
        generate::<ClusterProfile>(Fixups {
            root_spec_required: true,
            ..Fixups::default()
        }),
        generate::<PlacementDecision>(Fixups::default()),
    ];
    for crd in &mut crds {
        crd.spec.preserve_unknown_fields = None;
    }
    crds
}
