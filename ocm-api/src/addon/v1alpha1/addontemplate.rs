//! AddOnTemplate: an addon defined entirely by data.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Subject;
use crate::work::v1::ManifestWorkSpec;

/// The desired state of an [`AddOnTemplate`].
///
/// An AddOnTemplate is cluster-scoped and lives on the hub. It describes an addon without any
/// addon-specific hub controller: the agent is given as ManifestWork content (`agentSpec`,
/// whose manifests may use template variables such as `{{CLUSTER_NAME}}` and the
/// AddOnDeploymentConfig's customized variables), and `registration` says which hub
/// credentials the agent needs. A ClusterManagementAddOn selects a template through its
/// supported configurations (resource `addontemplates`, group
/// `addon.open-cluster-management.io`).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1alpha1",
    kind = "AddOnTemplate",
    doc = "An addon agent described as a ManifestWork template plus the hub registrations it needs; the addon manager renders it for every managed cluster the addon is installed on.",
    plural = "addontemplates",
    printcolumn = r#"{"name":"ADDON NAME","type":"string","jsonPath":".spec.addonName"}"#,
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct AddOnTemplateSpec {
    /// Name of the addon (and of its ClusterManagementAddOn) this template belongs to.
    pub addon_name: String,

    /// What the agent consists of, as the spec of the ManifestWork the addon manager creates in
    /// each cluster's namespace.
    pub agent_spec: ManifestWorkSpec,

    /// Hub credentials the agent needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Vec<RegistrationSpec>>,
}

/// One credential an addon's agent needs on the hub: `type` says which of `kubeClient` and
/// `customSigner` is set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationSpec {
    /// Which kind of credential this entry describes.
    #[serde(rename = "type")]
    pub type_: RegistrationType,

    /// Settings for a hub API client credential (when `type` is `KubeClient`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_client: Option<KubeClientRegistrationConfig>,

    /// Settings for a certificate from a custom signer (when `type` is `CustomSigner`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_signer: Option<CustomSignerRegistrationConfig>,
}

/// The kinds of credential an AddOnTemplate's agent can register for.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RegistrationType {
    /// A client certificate for the hub's API server, signed by
    /// `kubernetes.io/kube-apiserver-client`, with the permissions in `hubPermissions`.
    KubeClient,
    /// A client certificate signed with a CA the template names (`signingCA`).
    CustomSigner,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `RegistrationType`: its known values only, with the same name and docs.
/// The kinds of credential an AddOnTemplate's agent can register for.
#[derive(JsonSchema)]
#[schemars(rename = "RegistrationType")]
#[allow(dead_code)]
enum RegistrationTypeSchema {
    /// A client certificate for the hub's API server, signed by
    /// `kubernetes.io/kube-apiserver-client`, with the permissions in `hubPermissions`.
    KubeClient,
    /// A client certificate signed with a CA the template names (`signingCA`).
    CustomSigner,
}

crate::string_enum::string_enum!(RegistrationType, RegistrationTypeSchema {
    KubeClient => "KubeClient",
    CustomSigner => "CustomSigner",
});

/// A hub API client credential and the permissions it is granted.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeClientRegistrationConfig {
    /// Role bindings created on the hub for the agent's identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub_permissions: Option<Vec<HubPermissionConfig>>,
}

/// One permission granted to the agent on the hub: `type` says which of `currentCluster` and
/// `singleNamespace` is set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HubPermissionConfig {
    /// Where the permission applies.
    #[serde(rename = "type")]
    pub type_: HubPermissionsBindingType,

    /// With `CurrentCluster`: a ClusterRole bound in the namespace of the cluster the agent
    /// runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_cluster: Option<CurrentClusterBindingConfig>,

    /// With `SingleNamespace`: a Role or ClusterRole bound in one fixed hub namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub single_namespace: Option<SingleNamespaceBindingConfig>,
}

/// Where a hub permission applies.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HubPermissionsBindingType {
    /// In the hub namespace of the managed cluster the agent runs on.
    CurrentCluster,
    /// In one fixed hub namespace.
    SingleNamespace,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `HubPermissionsBindingType`: its known values only, with the same name and docs.
/// Where a hub permission applies.
#[derive(JsonSchema)]
#[schemars(rename = "HubPermissionsBindingType")]
#[allow(dead_code)]
enum HubPermissionsBindingTypeSchema {
    /// In the hub namespace of the managed cluster the agent runs on.
    CurrentCluster,
    /// In one fixed hub namespace.
    SingleNamespace,
}

crate::string_enum::string_enum!(HubPermissionsBindingType, HubPermissionsBindingTypeSchema {
    CurrentCluster => "CurrentCluster",
    SingleNamespace => "SingleNamespace",
});

/// A ClusterRole bound in the namespace of the agent's own managed cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentClusterBindingConfig {
    /// Name of the ClusterRole.
    pub cluster_role_name: String,
}

/// A role bound in one fixed hub namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SingleNamespaceBindingConfig {
    /// The hub namespace.
    pub namespace: String,

    /// The Role or ClusterRole bound there.
    pub role_ref: RoleRef,
}

/// A reference to a Role or ClusterRole, as in an RBAC RoleBinding.
///
/// Our own type rather than k8s-openapi's `rbac::v1::RoleRef`, whose `apiGroup` is required in
/// some Kubernetes versions and optional in others; upstream requires all three fields. The
/// reference is replaced as a whole on merge.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-map-type" = "atomic"))]
pub struct RoleRef {
    /// API group of the role: `rbac.authorization.k8s.io`.
    pub api_group: String,

    /// `Role` or `ClusterRole`.
    pub kind: String,

    /// Name of the role.
    pub name: String,
}

/// A client certificate signed with a CA that the template names.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomSignerRegistrationConfig {
    /// Signer name the agent puts on its CertificateSigningRequests, `{domain}/{path}`.
    #[schemars(
        length(min = 5, max = 571),
        regex(pattern = r"^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$")
    )]
    pub signer_name: String,

    /// The identity written into the certificate. Upstream's default is a user and groups
    /// derived from the cluster and addon names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,

    /// The hub Secret (of type `kubernetes.io/tls`) holding the CA certificate and key that
    /// sign the requests. The addon manager's service account must be granted read access to
    /// it; upstream does not grant it by default.
    #[serde(rename = "signingCA")]
    pub signing_ca: SigningCaRef,
}

/// A Secret on the hub holding a signing CA.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningCaRef {
    /// Namespace of the Secret; upstream falls back to the addon manager's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,

    /// Name of the Secret.
    pub name: String,
}

impl AddOnTemplate {
    /// The agent's manifests, as templates (empty when there are none).
    pub fn manifests(&self) -> &[crate::work::v1::Manifest] {
        self.spec.agent_spec.manifests()
    }
}
