//! ManagedClusterAddOn: one addon enabled on one managed cluster.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AddOnConfig, AddOnMeta, ConfigCoordinates, ConfigGroupResource, ConfigSpecHash};

/// The desired state of a [`ManagedClusterAddOn`].
///
/// A ManagedClusterAddOn lives on the hub in the namespace of a managed cluster and has the
/// name of a [`ClusterManagementAddOn`](super::ClusterManagementAddOn): its presence enables
/// that addon on that cluster. The addon manager deploys the addon's agent there (through
/// ManifestWorks) and reports the agent's state in the status; the registration agent
/// provides the agent's hub credentials.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1alpha1",
    kind = "ManagedClusterAddOn",
    doc = "An addon installed on one managed cluster. It lives in the cluster's namespace on the hub and reports the agent's state.",
    plural = "managedclusteraddons",
    namespaced,
    status = "ManagedClusterAddOnStatus",
    shortname = "mca",
    shortname = "mcas",
    printcolumn = r#"{"name":"Available","type":"string","jsonPath":".status.conditions[?(@.type==\"Available\")].status"}"#,
    printcolumn = r#"{"name":"Degraded","type":"string","jsonPath":".status.conditions[?(@.type==\"Degraded\")].status"}"#,
    printcolumn = r#"{"name":"Progressing","type":"string","jsonPath":".status.conditions[?(@.type==\"Progressing\")].status"}"#,
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterAddOnSpec {
    /// Namespace on the managed cluster to install the agent in. Upstream's default is
    /// `open-cluster-management-agent-addon`. Deprecated upstream: the namespace now comes
    /// from the addon's AddOnDeploymentConfig (`agentInstallNamespace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        extend("default" = "open-cluster-management-agent-addon")
    )]
    pub install_namespace: Option<String>,

    /// Configurations for this cluster only. Each overrides, for its group and resource, the
    /// configuration the ClusterManagementAddOn would otherwise apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configs: Option<Vec<AddOnConfig>>,
}

/// The observed state of a [`ManagedClusterAddOn`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterAddOnStatus {
    /// The addon's state on this cluster, merged by `type`. Types upstream sets include
    /// `Available`, `Degraded`, `Progressing`, `Configured`, `ManifestApplied`,
    /// `HookManifestCompleted`, `RegistrationApplied`, `ClusterCertificateRotated` and, in
    /// hosted mode, `HostingManifestApplied` and `HostingClusterValidity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Option<Vec<Condition>>,

    /// Objects on the hub that belong to this addon (for example its ClusterManagementAddOn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related_objects: Option<Vec<ObjectReference>>,

    /// Descriptive information copied from the ClusterManagementAddOn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_on_meta: Option<AddOnMeta>,

    /// The older single-configuration reference copied from the ClusterManagementAddOn.
    /// Deprecated upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_on_configuration: Option<ConfigCoordinates>,

    /// The configuration kinds the addon accepts, merged by `group` and `resource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["group", "resource"]
    ))]
    pub supported_configs: Option<Vec<ConfigGroupResource>>,

    /// The configurations in effect for this cluster, with what is desired and what the agent
    /// last applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_references: Option<Vec<ConfigReference>>,

    /// Namespace on the managed cluster that receives the agent's hub credentials and health
    /// lease; needed when there are registrations or the health check mode is `Lease`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,

    /// Client certificates the agent needs, set by the addon's hub controller. The cluster's
    /// registration agent creates one CertificateSigningRequest per entry (signer names must
    /// be unique) and writes the result to a Secret in `namespace`: `{addon}-hub-kubeconfig`
    /// (key, certificate and kubeconfig) for `kubernetes.io/kube-apiserver-client`,
    /// `{addon}-{signer}-client-cert` (key and certificate) for any other signer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registrations: Option<Vec<RegistrationConfig>>,

    /// How the agent authenticates to the hub's API server for its
    /// `kubernetes.io/kube-apiserver-client` registration: `csr` (a client certificate) or
    /// `token` (a service account token). Set by the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_client_driver: Option<KubeClientDriver>,

    /// How the hub decides whether the addon is healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<HealthCheck>,
}

/// A hub object related to an addon.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// API group of the object; empty for the core group.
    pub group: String,

    /// Plural resource name of the object.
    pub resource: String,

    /// Namespace of the object; absent for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,

    /// Name of the object.
    pub name: String,
}

/// A configuration in effect for one cluster, by object (v1alpha1 shape).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReference {
    /// API group of the configuration; empty (the default) for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = ""))]
    pub group: Option<String>,

    /// Plural resource name of the configuration.
    #[schemars(length(min = 1))]
    pub resource: String,

    /// Namespace of the configuration object; absent when cluster-scoped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,

    /// Name of the configuration object.
    #[schemars(length(min = 1))]
    pub name: String,

    /// The configuration's `metadata.generation` last seen. Deprecated upstream in favour of
    /// the spec hashes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_observed_generation: Option<i64>,

    /// The configuration the addon should run with, and its spec hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_config: Option<ConfigSpecHash>,

    /// The configuration the agent last applied, and its spec hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_config: Option<ConfigSpecHash>,
}

/// A client certificate the agent requests from one signer (v1alpha1 shape).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationConfig {
    /// Signer that issues the certificate, `{domain}/{path}`; e.g.
    /// `kubernetes.io/kube-apiserver-client` for a hub API client certificate.
    #[schemars(
        length(min = 5, max = 571),
        regex(pattern = r"^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$")
    )]
    pub signer_name: String,

    /// The identity written into the certificate. Defaults (upstream) to a user and groups
    /// derived from the cluster and addon names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
}

/// The identity in an addon's client certificate (v1alpha1 and AddOnTemplate shape).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// User name (the certificate's common name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,

    /// Groups (the certificate's organizations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,

    /// Organizational units of the certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_unit: Option<Vec<String>>,
}

/// How an addon agent authenticates to the hub's API server.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KubeClientDriver {
    /// A client certificate obtained through a CertificateSigningRequest.
    #[serde(rename = "csr")]
    Csr,
    /// A service account token.
    #[serde(rename = "token")]
    Token,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `KubeClientDriver`: its known values only, with the same name and docs.
/// How an addon agent authenticates to the hub's API server.
#[derive(JsonSchema)]
#[schemars(rename = "KubeClientDriver")]
#[allow(dead_code)]
enum KubeClientDriverSchema {
    /// A client certificate obtained through a CertificateSigningRequest.
    #[serde(rename = "csr")]
    Csr,
    /// A service account token.
    #[serde(rename = "token")]
    Token,
}

crate::string_enum::string_enum!(KubeClientDriver, KubeClientDriverSchema {
    Csr => "csr",
    Token => "token",
});

/// How the hub judges an addon's health on a cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthCheck {
    /// The health check mode; upstream's default is `Lease`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Lease"))]
    pub mode: Option<HealthCheckMode>,
}

/// The ways the hub can judge an addon's health.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HealthCheckMode {
    /// The agent renews a Lease on the managed cluster; the cluster's registration agent
    /// reports the addon unavailable when the lease expires (upstream default).
    #[default]
    Lease,
    /// The addon's own hub controller sets the `Available` condition.
    Customized,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `HealthCheckMode`: its known values only, with the same name and docs.
/// The ways the hub can judge an addon's health.
#[derive(JsonSchema)]
#[schemars(rename = "HealthCheckMode")]
#[allow(dead_code)]
enum HealthCheckModeSchema {
    /// The agent renews a Lease on the managed cluster; the cluster's registration agent
    /// reports the addon unavailable when the lease expires (upstream default).
    Lease,
    /// The addon's own hub controller sets the `Available` condition.
    Customized,
}

crate::string_enum::string_enum!(HealthCheckMode, HealthCheckModeSchema {
    Lease => "Lease",
    Customized => "Customized",
});
