//! References from addons to their configuration objects, shared by ClusterManagementAddOn and
//! ManagedClusterAddOn.
//!
//! A configuration is any object (most often an
//! [`AddOnDeploymentConfig`](super::AddOnDeploymentConfig)) identified by its API group,
//! plural resource name, namespace (for namespaced kinds) and name. The addon manager resolves
//! the configuration that applies to each cluster, hashes its `spec`, and records the hash, so
//! that agents are redeployed when a configuration changes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Descriptive information about an addon, for people and user interfaces.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnMeta {
    /// Name of the addon as shown to users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,

    /// What the addon does, in a sentence or two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The older, single-configuration reference: one custom resource of a CRD chosen by the addon.
///
/// Deprecated upstream in favour of the configuration lists (`supportedConfigs`,
/// `configs`, `configReferences`); still served and round-tripped.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigCoordinates {
    /// Name of the CRD that defines the configuration kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crd_name: Option<String>,

    /// Name of the cluster-scoped configuration object of that CRD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cr_name: Option<String>,

    /// The configuration object's `metadata.generation` last seen by the addon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_observed_generation: Option<i64>,
}

/// A kind of configuration: its API group and plural resource name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigGroupResource {
    /// API group of the configuration; empty (the default) for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = ""))]
    pub group: Option<String>,

    /// Plural resource name of the configuration, e.g. `addondeploymentconfigs`.
    #[schemars(length(min = 1))]
    pub resource: String,
}

/// One configuration object, by namespace and name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReferent {
    /// Namespace of the object; absent for cluster-scoped configurations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,

    /// Name of the object.
    #[schemars(length(min = 1))]
    pub name: String,
}

/// A configuration object, fully identified: group, resource, namespace and name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnConfig {
    /// API group of the configuration; empty (the default) for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = ""))]
    pub group: Option<String>,

    /// Plural resource name of the configuration, e.g. `addondeploymentconfigs`.
    #[schemars(length(min = 1))]
    pub resource: String,

    /// Namespace of the object; absent for cluster-scoped configurations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,

    /// Name of the object.
    #[schemars(length(min = 1))]
    pub name: String,
}

impl AddOnConfig {
    /// The group and resource of this configuration.
    pub fn group_resource(&self) -> ConfigGroupResource {
        ConfigGroupResource {
            group: self.group.clone(),
            resource: self.resource.clone(),
        }
    }

    /// The namespace and name of this configuration.
    pub fn referent(&self) -> ConfigReferent {
        ConfigReferent {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }
}

/// A configuration object together with the hash of its `spec` when it was resolved.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSpecHash {
    /// Namespace of the object; absent for cluster-scoped configurations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,

    /// Name of the object.
    #[schemars(length(min = 1))]
    pub name: String,

    /// SHA-256 of the object's `spec`, hex-encoded. A change means the configuration changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_hash: Option<String>,
}

/// The default configuration the hub resolved for one configuration kind of a
/// ClusterManagementAddOn.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DefaultConfigReference {
    /// API group of the configuration; empty (the default) for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = ""))]
    pub group: Option<String>,

    /// Plural resource name of the configuration.
    #[schemars(length(min = 1))]
    pub resource: String,

    /// The default configuration object and its spec hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_config: Option<ConfigSpecHash>,
}
