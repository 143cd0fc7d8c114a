//! ManagedClusterSetBinding: gives a namespace access to a ManagedClusterSet.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a [`ManagedClusterSetBinding`]: the set it binds to the binding's
/// namespace, so that Placements there can select the set's clusters.
///
/// The binding must be named after the set it binds, and creating it needs the RBAC verb
/// `create` on the virtual subresource `managedclustersets/bind`.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1beta2",
    kind = "ManagedClusterSetBinding",
    doc = "Makes a ManagedClusterSet available to the Placements of the binding's namespace.",
    plural = "managedclustersetbindings",
    namespaced,
    shortname = "mclsetbinding",
    shortname = "mclsetbindings",
    status = "ManagedClusterSetBindingStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct ManagedClusterSetBindingSpec {
    /// Name of the bound ManagedClusterSet; must equal the binding's own name and cannot
    /// change. Go clients always write it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub cluster_set: Option<String>,
}

crate::cluster::spec_may_be_absent!(ManagedClusterSetBindingSpec);

/// The observed state of a [`ManagedClusterSetBinding`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterSetBindingStatus {
    /// Conditions of the binding, e.g. `Bound`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Option<Vec<Condition>>,
}
