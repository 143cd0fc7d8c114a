//! `cluster.open-cluster-management.io/v1alpha1`: ClusterClaim, AddOnPlacementScore and the
//! rollout strategy types shared by workload appliers.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crd::{Fixups, generate};

mod addonplacementscore;
mod clusterclaim;
mod rollout;
pub use addonplacementscore::*;
pub use clusterclaim::*;
pub use rollout::*;

/// The CRDs of this version.
pub(crate) fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        generate::<ClusterClaim>(Fixups::default()),
        generate::<AddOnPlacementScore>(Fixups::default()),
    ]
}
