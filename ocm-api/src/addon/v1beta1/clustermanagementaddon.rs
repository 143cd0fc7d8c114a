//! ClusterManagementAddOn (v1beta1): an addon known to the hub, and how it is installed and
//! configured.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::addon::v1alpha1::{AddOnConfig, AddOnMeta};
pub use crate::addon::v1alpha1::{
    DefaultConfigReference, InstallConfigReference, InstallProgression, InstallStrategy,
    InstallStrategyType, PlacementStrategy,
};

/// The desired state of a [`ClusterManagementAddOn`].
///
/// A ClusterManagementAddOn is cluster-scoped and lives on the hub; its name is the addon's
/// name. Compared with v1alpha1, v1beta1 drops the deprecated `addOnConfiguration` and
/// replaces `supportedConfigs` (kinds with optional defaults) with `defaultConfigs` (default
/// objects, each naming its kind).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addon.open-cluster-management.io",
    version = "v1beta1",
    kind = "ClusterManagementAddOn",
    doc = "An addon registered on the hub: how and where it is installed on managed clusters, and which configurations it supports.",
    plural = "clustermanagementaddons",
    status = "ClusterManagementAddOnStatus",
    shortname = "cma",
    shortname = "cmas",
    printcolumn = r#"{"name":"DISPLAY NAME","type":"string","jsonPath":".spec.addOnMeta.displayName"}"#,
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterManagementAddOnSpec {
    /// Descriptive information about the addon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_on_meta: Option<AddOnMeta>,

    /// The hub-wide default configuration object of each configuration kind, used for every
    /// cluster that names none of that kind itself. Merged by `group` and `resource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["group", "resource"]
    ))]
    pub default_configs: Option<Vec<AddOnConfig>>,

    /// How the addon is installed on managed clusters; `{type: Manual}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {"type": "Manual"}))]
    pub install_strategy: Option<InstallStrategy>,
}

/// The observed state of a [`ClusterManagementAddOn`] (v1beta1).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterManagementAddOnStatus {
    /// The default configuration resolved for each configuration kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_config_references: Option<Vec<DefaultConfigReference>>,

    /// Rollout progress, one entry per Placement of the install strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_progressions: Option<Vec<InstallProgression>>,
}
