//! AddOnDeploymentConfig (v1beta1): how an addon's agent is deployed on a managed cluster.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::addon::v1alpha1::{
    ContainerResourceRequirements, CustomizedVariable, ImageMirror, NodePlacement, ProxyConfig,
};

/// The desired state of an [`AddOnDeploymentConfig`].
///
/// The same schema as [`v1alpha1::AddOnDeploymentConfigSpec`](crate::addon::v1alpha1::AddOnDeploymentConfigSpec),
/// served under `v1beta1`: node placement, image mirrors, proxy settings, resource
/// requirements, the agent's namespace and template variables for an addon's agent.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1beta1",
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
