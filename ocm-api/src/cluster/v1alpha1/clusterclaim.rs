//! ClusterClaim: a fact a managed cluster states about itself.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a [`ClusterClaim`]: the claimed value.
///
/// ClusterClaims are cluster-scoped and live on the managed cluster. The registration agent
/// copies them (name and value) into the ManagedCluster's `status.clusterClaims` on the hub,
/// where Placements can select clusters by them with a `claimSelector`. The names
/// `id.k8s.io`, `kubeversion.open-cluster-management.io`,
/// `platform.open-cluster-management.io` and `product.open-cluster-management.io` are reserved
/// and reported first.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1alpha1",
    kind = "ClusterClaim",
    doc = "A fact a managed cluster states about itself (a name and a value), reported to the hub in the ManagedCluster status.",
    plural = "clusterclaims",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct ClusterClaimSpec {
    /// The value of the claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub value: Option<String>,
}

crate::cluster::spec_may_be_absent!(ClusterClaimSpec);
