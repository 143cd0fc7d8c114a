//! AddOnDeploymentConfig: how an addon's agent is deployed on a managed cluster.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ResourceRequirements, Toleration};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of an [`AddOnDeploymentConfig`].
///
/// An AddOnDeploymentConfig is a namespaced configuration object that a ClusterManagementAddOn
/// or a ManagedClusterAddOn refers to (group `addon.open-cluster-management.io`, resource
/// `addondeploymentconfigs`). The addon manager reads it when it renders the addon's agent
/// manifests: node placement, image mirrors, proxy settings, resource requirements, the agent's
/// namespace and free-form template variables all come from here.
///
/// Upstream's v1alpha1 and v1beta1 schemas of this kind are identical; the nested types are
/// shared by both modules.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1alpha1",
    kind = "AddOnDeploymentConfig",
    doc = "Deployment settings for an addon agent on managed clusters: node placement, image registries, proxy, resource requirements, install namespace and template variables.",
    plural = "addondeploymentconfigs",
    namespaced,
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct AddOnDeploymentConfigSpec {
    /// Name/value pairs the addon's manifest templates may refer to. Merged by `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["name"]
    ))]
    pub customized_variables: Option<Vec<CustomizedVariable>>,

    /// Which nodes of the managed cluster the agent's pods may run on. Absent leaves the
    /// agent's own scheduling settings alone; an empty object means any node and no
    /// tolerations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_placement: Option<NodePlacement>,

    /// Image registry rewrites: images from `source` are pulled from `mirror` instead, in
    /// the agent's manifests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registries: Option<Vec<ImageMirror>>,

    /// HTTP(S) proxy the agent uses to reach the hub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_config: Option<ProxyConfig>,

    /// Namespace on the managed cluster the agent is installed in. Upstream's default is
    /// `open-cluster-management-agent-addon`. For addons defined by an AddOnTemplate, the empty
    /// string keeps the namespaces the template's manifests give.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 63),
        regex(pattern = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$"),
        extend("default" = "open-cluster-management-agent-addon")
    )]
    pub agent_install_namespace: Option<String>,

    /// Compute resources of the agent's containers, one entry per container selector. Merged
    /// by `containerID`. A container that several entries match gets the last of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["containerID"]
    ))]
    pub resource_requirements: Option<Vec<ContainerResourceRequirements>>,
}

/// One named value for the addon's manifest templates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomizedVariable {
    /// Variable name: a letter or underscore, then letters, digits and underscores; at most
    /// 255 characters.
    #[schemars(length(max = 255), regex(pattern = r"^[a-zA-Z_][_a-zA-Z0-9]*$"))]
    pub name: String,

    /// Variable value, at most 1024 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub value: Option<String>,
}

/// Where the agent's pods are scheduled on the managed cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePlacement {
    /// Labels a node must carry to run the agent's pods (the pods' `nodeSelector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<BTreeMap<String, String>>,

    /// Taints the agent's pods tolerate (the pods' `tolerations`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<Toleration>>,
}

/// A registry rewrite for the agent's images.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageMirror {
    /// Registry (or image prefix) to pull from instead of `source`. An entry with an empty
    /// mirror is ignored.
    pub mirror: String,

    /// Registry (or image prefix) being replaced: images whose name starts with it are pulled
    /// from `mirror`. Absent means every image's registry is replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Proxy settings for the agent's connection to the hub.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxyConfig {
    /// URL of the proxy for plain HTTP connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_proxy: Option<String>,

    /// URL of the proxy for HTTPS connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https_proxy: Option<String>,

    /// PEM CA certificates to verify the HTTPS proxy server with (base64 on the wire); only
    /// used together with `httpsProxy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::addon::schema::byte_string")]
    pub ca_bundle: Option<ByteString>,

    /// Comma-separated host names, domains, IP addresses and CIDRs reached without the proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_proxy: Option<String>,
}

/// Compute resources for the agent's containers that match one selector.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResourceRequirements {
    /// Which containers: `{resource}:{name}:{container}`, where `resource` is one of
    /// `deployments`, `daemonsets`, `statefulsets`, `replicasets`, `jobs`, `cronjobs`, `pods`
    /// or `*`, and `name` and `container` may be `*` to match any.
    #[serde(rename = "containerID")]
    #[schemars(regex(
        pattern = r"^(deployments|daemonsets|statefulsets|replicasets|jobs|cronjobs|pods|\*):.+:.+$"
    ))]
    pub container_id: String,

    /// Requests, limits and resource claims for the matching containers.
    #[schemars(schema_with = "crate::addon::schema::resource_requirements")]
    pub resources: ResourceRequirements,
}
