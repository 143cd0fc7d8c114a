//! ManagedCluster: a Kubernetes cluster registered with the hub.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The pattern of a taint or toleration key: an optional DNS-subdomain prefix and `/`, then a
/// name of letters, digits, `-`, `_` and `.` that starts and ends with a letter or digit.
pub const TAINT_KEY_PATTERN: &str = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";

/// The pattern of a managed namespace name (a DNS label).
pub const MANAGED_NAMESPACE_NAME_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

/// The desired state of a [`ManagedCluster`].
///
/// A ManagedCluster is cluster-scoped on the hub and named after the cluster. The registration
/// agent on the managed cluster creates it; a hub administrator (or an auto-approver) accepts
/// it by setting `hubAcceptsClient`.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1",
    kind = "ManagedCluster",
    doc = "A Kubernetes cluster registered with the hub: its endpoints, whether the hub accepts it, its taints, and what the hub observed about it (conditions, resources, version, claims).",
    plural = "managedclusters",
    shortname = "mcl",
    shortname = "mcls",
    status = "ManagedClusterStatus",
    derive = "PartialEq",
    derive = "Default",
    printcolumn = r#"{"name":"Hub Accepted","type":"boolean","jsonPath":".spec.hubAcceptsClient"}"#,
    printcolumn = r#"{"name":"Managed Cluster URLs","type":"string","jsonPath":".spec.managedClusterClientConfigs[*].url"}"#,
    printcolumn = r#"{"name":"Joined","type":"string","jsonPath":".status.conditions[?(@.type==\"ManagedClusterJoined\")].status"}"#,
    printcolumn = r#"{"name":"Available","type":"string","jsonPath":".status.conditions[?(@.type==\"ManagedClusterConditionAvailable\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct ManagedClusterSpec {
    /// API server endpoints of the managed cluster, with the CA bundle to trust for each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_cluster_client_configs: Option<Vec<ClientConfig>>,

    /// Whether the hub accepts this cluster. Until it is `true` the cluster's agent gets no
    /// access to the hub. Go clients always write it; absent means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub_accepts_client: Option<bool>,

    /// How often, in seconds, the agent renews its lease on the hub; the cluster is considered
    /// unavailable after several missed renewals. Defaults to 60 (0 also means 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 60))]
    pub lease_duration_seconds: Option<i32>,

    /// Taints of the cluster: a Placement does not select a cluster with a `NoSelect` or
    /// `NoSelectIfNew` taint unless it tolerates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<Taint>>,
}

crate::cluster::spec_may_be_absent!(ManagedClusterSpec);

/// One API server endpoint of a managed cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientConfig {
    /// URL of the API server.
    pub url: String,

    /// PEM-encoded CA bundle used to verify the API server's certificate (base64 in JSON).
    /// Absent means the system trust roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::cluster::schema::bytes")]
    pub ca_bundle: Option<ByteString>,
}

/// A mark on a managed cluster that keeps Placements away unless they tolerate it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// The taint key, e.g. `cluster.open-cluster-management.io/unreachable`.
    #[schemars(length(max = 316), extend("pattern" = TAINT_KEY_PATTERN))]
    pub key: String,

    /// The taint value; may be empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub value: Option<String>,

    /// What the taint does to Placements that do not tolerate it.
    pub effect: TaintEffect,

    /// When the taint was added. The hub's admission webhook sets it; clients should leave it
    /// empty. Go clients send `null` when it is unset, which reads as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::time")]
    pub time_added: Option<Time>,
}

/// The effect of a [`Taint`] on scheduling.
///
/// The scheduler treats an effect it does not know (`Unknown`) as upstream's does, comparing
/// effects as strings: the cluster is not selected unless a toleration with no effect or
/// with that same effect tolerates the taint.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaintEffect {
    /// Not selected unless tolerated; already selected clusters are dropped when the taint is
    /// not tolerated.
    NoSelect,
    /// Meant as "avoid if possible"; the upstream scheduler currently ignores it.
    PreferNoSelect,
    /// Not newly selected unless tolerated, but clusters already selected by the Placement
    /// stay selected.
    NoSelectIfNew,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `TaintEffect`: its known values only, with the same name and docs.
/// The effect of a [`Taint`] on scheduling.
#[derive(JsonSchema)]
#[schemars(rename = "TaintEffect")]
#[allow(dead_code)]
enum TaintEffectSchema {
    /// Not selected unless tolerated; already selected clusters are dropped when the taint is
    /// not tolerated.
    NoSelect,
    /// Meant as "avoid if possible"; the upstream scheduler currently ignores it.
    PreferNoSelect,
    /// Not newly selected unless tolerated, but clusters already selected by the Placement
    /// stay selected.
    NoSelectIfNew,
}

crate::string_enum::string_enum!(TaintEffect, TaintEffectSchema {
    NoSelect => "NoSelect",
    PreferNoSelect => "PreferNoSelect",
    NoSelectIfNew => "NoSelectIfNew",
});

/// What the hub observed about a managed cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterStatus {
    /// Conditions of the cluster, one per type: `ManagedClusterJoined`,
    /// `HubAcceptedManagedCluster`, `HubDeniedManagedCluster`,
    /// `ManagedClusterConditionAvailable`, `ManagedClusterConditionClockSynced`, `Deleting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Option<Vec<Condition>>,

    /// Total resources of the cluster (`cpu`, `memory`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::cluster::schema::quantity_map")]
    pub capacity: Option<BTreeMap<String, Quantity>>,

    /// Resources of the cluster available for scheduling workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::cluster::schema::quantity_map")]
    pub allocatable: Option<BTreeMap<String, Quantity>>,

    /// Versions of the software the cluster runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<ManagedClusterVersion>,

    /// Claims the cluster makes about itself, copied from its ClusterClaim objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_claims: Option<Vec<ManagedClusterClaim>>,

    /// Namespaces the cluster manages on behalf of the cluster sets it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["clusterSet", "name"]
    ))]
    pub managed_namespaces: Option<Vec<ClusterSetManagedNamespaceConfig>>,
}

/// Software versions of a managed cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterVersion {
    /// Kubernetes version, e.g. `v1.30.2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<String>,
}

/// One claim of a managed cluster: a name and a value, as reported by a ClusterClaim.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterClaim {
    /// Name of the claim, e.g. `platform.open-cluster-management.io`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub name: Option<String>,

    /// Value of the claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub value: Option<String>,
}

/// A namespace a cluster set asks its member clusters to manage, with its state on this
/// cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSetManagedNamespaceConfig {
    /// Name of the namespace (a DNS label).
    #[schemars(length(max = 63), extend("pattern" = MANAGED_NAMESPACE_NAME_PATTERN))]
    pub name: String,

    /// The cluster set that asks for the namespace.
    pub cluster_set: String,

    /// State of the namespace on the cluster, one condition per type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Option<Vec<Condition>>,
}

impl ManagedCluster {
    /// The condition of type `type_` in the status, if any.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .find(|c| c.type_ == type_)
    }

    /// Whether the `ManagedClusterConditionAvailable` condition is `True`: the cluster's agent
    /// is renewing its lease with the hub.
    pub fn is_available(&self) -> bool {
        self.condition(crate::constants::cluster::CONDITION_AVAILABLE)
            .is_some_and(|c| c.status == "True")
    }

    /// The taints of the cluster (empty when there are none).
    pub fn taints(&self) -> &[Taint] {
        self.spec.taints.as_deref().unwrap_or_default()
    }

    /// The value of the claim `name` in the status, if the cluster reports it.
    pub fn claim(&self, name: &str) -> Option<&str> {
        self.status
            .as_ref()?
            .cluster_claims
            .as_ref()?
            .iter()
            .find(|c| c.name.as_deref() == Some(name))?
            .value
            .as_deref()
    }
}
