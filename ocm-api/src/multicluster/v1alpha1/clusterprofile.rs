//! ClusterProfile (KEP-4322): one cluster of a fleet, as its cluster manager describes it.

use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a [`ClusterProfile`]: its display name and the cluster manager that
/// owns it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "multicluster.x-k8s.io",
    version = "v1alpha1",
    kind = "ClusterProfile",
    doc = "One cluster of a multicluster fleet: its owner, health, version, properties and how to reach it.",
    plural = "clusterprofiles",
    namespaced,
    status = "ClusterProfileStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfileSpec {
    /// A human-readable name of the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,

    /// The cluster manager that owns this ClusterProfile. Cannot change once set.
    pub cluster_manager: ClusterManager,
}

/// The cluster manager (Open Cluster Management, Fleet, Karmada, …) that owns a
/// [`ClusterProfile`]. The API server refuses to change it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "self == oldSelf",
    "message": "ClusterManager is immutable",
}]))]
pub struct ClusterManager {
    /// The cluster manager's name; also the value of its
    /// [`CLUSTER_MANAGER`](crate::multicluster::labels::CLUSTER_MANAGER) label.
    pub name: String,
}

/// The observed state of a [`ClusterProfile`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfileStatus {
    /// Conditions of the cluster, one per type (for example
    /// [`ControlPlaneHealthy`](crate::multicluster::CONDITION_CONTROL_PLANE_HEALTHY)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Option<Vec<Condition>>,

    /// The cluster's versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<ClusterVersion>,

    /// Properties of the cluster, one per name: well-known ClusterProperty names (KEP-2149)
    /// or the cluster manager's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["name"]
    ))]
    pub properties: Option<Vec<Property>>,

    /// Deprecated spelling of `accessProviders`; when both name the same provider, the entry
    /// in `accessProviders` wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["name"]
    ))]
    pub credential_providers: Option<Vec<AccessProvider>>,

    /// How to reach the cluster, one entry per access provider (for example `kubeconfig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["name"]
    ))]
    pub access_providers: Option<Vec<AccessProvider>>,
}

/// The versions of a cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVersion {
    /// The Kubernetes version, for example `v1.32.1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<String>,
}

/// One named property of a cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Property {
    /// The property's name, 1 to 253 characters.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,

    /// The property's value, 1 to 1024 characters.
    #[schemars(length(min = 1, max = 1024))]
    pub value: String,

    /// When the property was last observed on the cluster (not when this object changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::time")]
    pub last_observed_time: Option<Time>,
}

/// One way to reach a cluster: a provider name (for example `kubeconfig` or `oidc`) and the
/// connection details.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessProvider {
    /// The provider's name.
    pub name: String,

    /// How to connect to the cluster's API server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<KubeconfigCluster>,
}

/// The connection details of a cluster, as a kubeconfig's `clusters[].cluster` entry
/// (client-go's `clientcmd/api/v1.Cluster`, with its kebab-case field names).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct KubeconfigCluster {
    /// The API server's address, `https://hostname:port`.
    pub server: String,

    /// The server name to check the server's certificate against (default: the host of
    /// `server`).
    #[serde(
        default,
        rename = "tls-server-name",
        skip_serializing_if = "Option::is_none"
    )]
    pub tls_server_name: Option<String>,

    /// Skip checking the server's certificate (insecure).
    #[serde(
        default,
        rename = "insecure-skip-tls-verify",
        skip_serializing_if = "Option::is_none"
    )]
    pub insecure_skip_tls_verify: Option<bool>,

    /// Path to a file with the certificate authority's certificates.
    #[serde(
        default,
        rename = "certificate-authority",
        skip_serializing_if = "Option::is_none"
    )]
    pub certificate_authority: Option<String>,

    /// PEM-encoded certificate authority certificates (base64 in JSON); overrides
    /// `certificate-authority`.
    #[serde(
        default,
        rename = "certificate-authority-data",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "crate::cluster::schema::bytes")]
    pub certificate_authority_data: Option<ByteString>,

    /// The proxy for every request (`http`, `https` or `socks5` URL).
    #[serde(default, rename = "proxy-url", skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<String>,

    /// Ask the server not to compress responses.
    #[serde(
        default,
        rename = "disable-compression",
        skip_serializing_if = "Option::is_none"
    )]
    pub disable_compression: Option<bool>,

    /// Extra information for extenders, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<NamedExtension>>,
}

/// A named piece of extension data in a [`KubeconfigCluster`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct NamedExtension {
    /// The extension's nickname.
    pub name: String,

    /// The extension data, kept as it is.
    #[schemars(schema_with = "crate::multicluster::v1alpha1::clusterprofile::extension")]
    pub extension: serde_json::Value,
}

/// Schema of a `runtime.RawExtension` embedded without its type: any object.
fn extension(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    crate::schema::schema_from(serde_json::json!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
    }))
}

impl ClusterProfile {
    /// The condition of type `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()?
            .conditions
            .as_deref()
            .and_then(|c| crate::conditions::find(c, type_))
    }

    /// The value of the property `name`, if present.
    pub fn property(&self, name: &str) -> Option<&str> {
        self.status
            .as_ref()?
            .properties
            .as_ref()?
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.value.as_str())
    }
}
