//! ManagedClusterSet: a named group of managed clusters.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cluster::v1::MANAGED_NAMESPACE_NAME_PATTERN;

/// The desired state of a [`ManagedClusterSet`]: how its members are chosen.
///
/// A ManagedClusterSet is cluster-scoped. Its members are either the clusters labelled
/// `cluster.open-cluster-management.io/clusterset=<set name>` (the default) or the clusters
/// a label selector matches. A namespace gets access to a set through a
/// ManagedClusterSetBinding, and Placements in that namespace can then select its clusters.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1beta2",
    kind = "ManagedClusterSet",
    doc = "A named group of managed clusters, chosen by the exclusive cluster-set label or by a label selector.",
    plural = "managedclustersets",
    shortname = "mclset",
    shortname = "mclsets",
    status = "ManagedClusterSetStatus",
    derive = "PartialEq",
    derive = "Default",
    printcolumn = r#"{"name":"Empty","type":"string","jsonPath":".status.conditions[?(@.type==\"ClusterSetEmpty\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase", remote = "Self")]
#[schemars(extend("default" = {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}))]
pub struct ManagedClusterSetSpec {
    /// How the set's members are chosen. Defaults to the exclusive cluster-set label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"selectorType": "ExclusiveClusterSetLabel"}))]
    pub cluster_selector: Option<ManagedClusterSelector>,

    /// Namespaces every member cluster should manage for this set, one per name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["name"]
    ))]
    pub managed_namespaces: Option<Vec<ManagedNamespaceConfig>>,
}

crate::cluster::spec_may_be_absent!(ManagedClusterSetSpec);

/// How a cluster set chooses its members.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterSelector {
    /// `ExclusiveClusterSetLabel` (the default) or `LabelSelector`.
    #[schemars(extend("default" = "ExclusiveClusterSetLabel"))]
    pub selector_type: SelectorType,

    /// The selector for type `LabelSelector`. Absent selects no cluster; `{}` selects every
    /// cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::label_selector")]
    pub label_selector: Option<LabelSelector>,
}

/// How a cluster set chooses its members.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SelectorType {
    /// Clusters whose `cluster.open-cluster-management.io/clusterset` label equals the set's
    /// name. A cluster has at most one such set.
    #[default]
    ExclusiveClusterSetLabel,
    /// Clusters matching the set's `labelSelector`.
    LabelSelector,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `SelectorType`: its known values only, with the same name and docs.
/// How a cluster set chooses its members.
#[derive(JsonSchema)]
#[schemars(rename = "SelectorType")]
#[allow(dead_code)]
enum SelectorTypeSchema {
    /// Clusters whose `cluster.open-cluster-management.io/clusterset` label equals the set's
    /// name. A cluster has at most one such set.
    ExclusiveClusterSetLabel,
    /// Clusters matching the set's `labelSelector`.
    LabelSelector,
}

crate::string_enum::string_enum!(SelectorType, SelectorTypeSchema {
    ExclusiveClusterSetLabel => "ExclusiveClusterSetLabel",
    LabelSelector => "LabelSelector",
});

/// A namespace a cluster set asks its member clusters to manage.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedNamespaceConfig {
    /// Name of the namespace (a DNS label).
    #[schemars(length(max = 63), extend("pattern" = MANAGED_NAMESPACE_NAME_PATTERN))]
    pub name: String,
}

/// The observed state of a [`ManagedClusterSet`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterSetStatus {
    /// Conditions of the set, e.g. `ClusterSetEmpty`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Option<Vec<Condition>>,
}

impl ManagedClusterSet {
    /// The selector type in effect: the spec's, or `ExclusiveClusterSetLabel` when absent.
    pub fn selector_type(&self) -> SelectorType {
        self.spec
            .cluster_selector
            .as_ref()
            .map(|s| s.selector_type.clone())
            .unwrap_or_default()
    }
}
