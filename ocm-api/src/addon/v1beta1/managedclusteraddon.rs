//! ManagedClusterAddOn (v1beta1): one addon enabled on one managed cluster.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::addon::v1alpha1::{
    AddOnConfig, AddOnMeta, ConfigGroupResource, ConfigSpecHash, HealthCheck, HealthCheckMode,
    KubeClientDriver, ObjectReference,
};

/// The desired state of a [`ManagedClusterAddOn`].
///
/// A ManagedClusterAddOn lives on the hub in the namespace of a managed cluster and has the
/// name of a [`ClusterManagementAddOn`](super::ClusterManagementAddOn): its presence enables
/// that addon on that cluster. Compared with v1alpha1, v1beta1 drops `installNamespace` (the
/// namespace comes from an AddOnDeploymentConfig) and restructures the status registrations.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1beta1",
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

    /// Credentials the agent needs: a hub API client, certificates from custom signers, or
    /// both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registrations: Option<Vec<RegistrationConfig>>,

    /// How the hub decides whether the addon is healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<HealthCheck>,
}

/// A configuration in effect for one cluster (v1beta1 shape: the object is named only in
/// `desiredConfig` and `lastAppliedConfig`).
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

/// One credential the agent needs (v1beta1 shape): `type` says which of `kubeClient` and
/// `customSigner` is set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationConfig {
    /// Which kind of credential this entry describes.
    #[serde(rename = "type")]
    pub type_: RegistrationType,

    /// Settings for a hub API client credential (when `type` is `kubeClient`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_client: Option<KubeClientConfig>,

    /// Settings for a certificate from a custom signer (when `type` is `customSigner`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_signer: Option<CustomSignerConfig>,
}

/// The kinds of credential an addon agent can register for.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub enum RegistrationType {
    /// A client of the hub's API server.
    KubeClient,
    /// A client certificate issued by a signer other than the hub API server's.
    CustomSigner,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `RegistrationType`: its known values only, with the same name and docs.
/// The kinds of credential an addon agent can register for.
#[derive(JsonSchema)]
#[schemars(rename = "RegistrationType")]
#[allow(dead_code)]
#[serde(rename_all = "camelCase")]
enum RegistrationTypeSchema {
    /// A client of the hub's API server.
    KubeClient,
    /// A client certificate issued by a signer other than the hub API server's.
    CustomSigner,
}

crate::string_enum::string_enum!(RegistrationType, RegistrationTypeSchema {
    KubeClient => "kubeClient",
    CustomSigner => "customSigner",
});

/// A hub API client credential.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeClientConfig {
    /// The identity the agent has on the hub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<KubeClientSubject>,

    /// How the credential is obtained: `csr` (a client certificate) or `token` (a service
    /// account token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<KubeClientDriver>,
}

/// The identity of a hub API client.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeClientSubject {
    /// User name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,

    /// Groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
}

/// A client certificate from a custom signer.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomSignerConfig {
    /// Signer that issues the certificate, `{domain}/{path}`.
    #[schemars(
        length(min = 5, max = 571),
        regex(pattern = r"^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$")
    )]
    pub signer_name: String,

    /// The identity written into the certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
}

/// The identity in a custom signer's certificate (v1beta1 shape, with `organizationUnits`).
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
    pub organization_units: Option<Vec<String>>,
}
