//! ClusterManagementAddOn: an addon known to the hub, and how it is installed and configured.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    AddOnConfig, AddOnMeta, ConfigCoordinates, ConfigReferent, ConfigSpecHash,
    DefaultConfigReference,
};
use crate::cluster::v1alpha1::RolloutStrategy;

/// The desired state of a [`ClusterManagementAddOn`].
///
/// A ClusterManagementAddOn is cluster-scoped and lives on the hub; its name is the addon's
/// name. It declares the configuration kinds the addon accepts (with hub-wide defaults) and
/// the install strategy: `Manual` (users create ManagedClusterAddOns themselves) or
/// `Placements` (the addon manager creates one per cluster that the listed Placements
/// select, and rolls configuration changes out with each placement's rollout strategy).
///
/// Whether the general addon manager or the addon's own controller carries out the install
/// strategy is chosen with the annotation `addon.open-cluster-management.io/lifecycle`:
/// `addon-manager` or `self` (upstream's default when the annotation is absent).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1alpha1",
    kind = "ClusterManagementAddOn",
    doc = "An addon registered on the hub: how and where it is installed on managed clusters, and which configurations it supports.",
    plural = "clustermanagementaddons",
    status = "ClusterManagementAddOnStatus",
    shortname = "cma",
    shortname = "cmas",
    printcolumn = r#"{"name":"DISPLAY NAME","type":"string","jsonPath":".spec.addOnMeta.displayName"}"#,
    printcolumn = r#"{"name":"CRD NAME","type":"string","jsonPath":".spec.addOnConfiguration.crdName"}"#,
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterManagementAddOnSpec {
    /// Descriptive information about the addon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_on_meta: Option<AddOnMeta>,

    /// The older single-configuration reference (a CRD and one of its objects). Deprecated
    /// upstream in favour of `supportedConfigs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_on_configuration: Option<ConfigCoordinates>,

    /// The configuration kinds the addon accepts, each with an optional hub-wide default
    /// object. Merged by `group` and `resource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["group", "resource"]
    ))]
    pub supported_configs: Option<Vec<ConfigMeta>>,

    /// How the addon is installed on managed clusters; `{type: Manual}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"type": "Manual"}))]
    pub install_strategy: Option<InstallStrategy>,
}

/// A configuration kind an addon accepts, with its hub-wide default object.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMeta {
    /// API group of the configuration; empty (the default) for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = ""))]
    pub group: Option<String>,

    /// Plural resource name of the configuration, e.g. `addondeploymentconfigs`.
    #[schemars(length(min = 1))]
    pub resource: String,

    /// The object used for every cluster that names none of this kind itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_config: Option<ConfigReferent>,
}

/// How an addon is installed on managed clusters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallStrategy {
    /// `Manual` (the default) or `Placements`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Manual"))]
    pub type_: Option<InstallStrategyType>,

    /// With `Placements`: the Placements whose clusters get the addon, each with its own
    /// configurations and rollout strategy. Merged by `namespace` and `name`. A cluster that
    /// several Placements select follows the last of them in this list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["namespace", "name"]
    ))]
    pub placements: Option<Vec<PlacementStrategy>>,
}

impl InstallStrategy {
    /// The install strategy in effect: `type`, or `Manual` when it is absent.
    pub fn strategy_type(&self) -> InstallStrategyType {
        self.type_.clone().unwrap_or_default()
    }
}

/// The ways an addon can be installed on managed clusters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InstallStrategyType {
    /// Users enable the addon per cluster by creating ManagedClusterAddOns (upstream default).
    #[default]
    Manual,
    /// The addon manager installs the addon on every cluster that the listed Placements
    /// select.
    Placements,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `InstallStrategyType`: its known values only, with the same name and docs.
/// The ways an addon can be installed on managed clusters.
#[derive(JsonSchema)]
#[schemars(rename = "InstallStrategyType")]
#[allow(dead_code)]
enum InstallStrategyTypeSchema {
    /// Users enable the addon per cluster by creating ManagedClusterAddOns (upstream default).
    Manual,
    /// The addon manager installs the addon on every cluster that the listed Placements
    /// select.
    Placements,
}

crate::string_enum::string_enum!(InstallStrategyType, InstallStrategyTypeSchema {
    Manual => "Manual",
    Placements => "Placements",
});

/// One Placement whose clusters get the addon.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementStrategy {
    /// Namespace of the Placement.
    #[schemars(length(min = 1))]
    pub namespace: String,

    /// Name of the Placement.
    #[schemars(length(min = 1))]
    pub name: String,

    /// Configurations for the clusters of this Placement. They override the defaults in
    /// `supportedConfigs`, and a ManagedClusterAddOn's own `configs` override them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configs: Option<Vec<AddOnConfig>>,

    /// How configuration changes reach the clusters of this Placement; `{type: All}` when
    /// absent. Only changes of configurations named in the ClusterManagementAddOn are rolled
    /// out this way, not those a ManagedClusterAddOn names itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"type": "All"}))]
    pub rollout_strategy: Option<RolloutStrategy>,
}

/// The observed state of a [`ClusterManagementAddOn`] (v1alpha1).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterManagementAddOnStatus {
    /// The default configuration resolved for each supported configuration kind. Upstream's
    /// v1alpha1 JSON name is `defaultconfigReferences`, with a lower-case `c`.
    #[serde(
        default,
        rename = "defaultconfigReferences",
        skip_serializing_if = "Option::is_none"
    )]
    pub default_config_references: Option<Vec<DefaultConfigReference>>,

    /// Rollout progress, one entry per Placement of the install strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_progressions: Option<Vec<InstallProgression>>,
}

/// The rollout progress of an addon on the clusters of one Placement.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallProgression {
    /// Namespace of the Placement.
    #[schemars(length(min = 1))]
    pub namespace: String,

    /// Name of the Placement.
    #[schemars(length(min = 1))]
    pub name: String,

    /// The configurations being rolled out to this Placement's clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_references: Option<Vec<InstallConfigReference>>,

    /// The rollout's state, merged by `type`; upstream reports `Progressing`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Option<Vec<Condition>>,
}

/// One configuration being rolled out to the clusters of a Placement.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallConfigReference {
    /// API group of the configuration; empty (the default) for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = ""))]
    pub group: Option<String>,

    /// Plural resource name of the configuration.
    #[schemars(length(min = 1))]
    pub resource: String,

    /// The configuration being rolled out, and its spec hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_config: Option<ConfigSpecHash>,

    /// The configuration every cluster of the Placement last applied, and its spec hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_config: Option<ConfigSpecHash>,

    /// The last configuration that rolled out successfully, and its spec hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_known_good_config: Option<ConfigSpecHash>,
}
