//! The observed state of a ManifestWork, as the work agent reports it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::StatusFeedbackResult;

/// The observed state of a [`ManifestWork`](super::ManifestWork).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkStatus {
    /// Work-level conditions (`Applied`, `Available`, `Progressing`, `Degraded`,
    /// `Complete`, `Deleting`), merged by `type`. Their types and reasons are in
    /// [`constants::work`](crate::constants::work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Option<Vec<Condition>>,

    /// The state of each manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_status: Option<ManifestResourceStatus>,
}

impl ManifestWorkStatus {
    /// The work-level conditions (empty when there are none).
    pub fn conditions(&self) -> &[Condition] {
        self.conditions.as_deref().unwrap_or_default()
    }

    /// The work-level condition of type `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions().iter().find(|c| c.type_ == type_)
    }

    /// The per-manifest states (empty when there are none).
    pub fn manifests(&self) -> &[ManifestCondition] {
        self.resource_status
            .as_ref()
            .and_then(|s| s.manifests.as_deref())
            .unwrap_or_default()
    }
}

/// The state of every manifest of a ManifestWork.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestResourceStatus {
    /// One entry per manifest the agent has processed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifests: Option<Vec<ManifestCondition>>,
}

/// The state of one manifest: which resource it is, its conditions and its feedback values.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestCondition {
    /// Which manifest and resource this entry describes.
    pub resource_meta: ManifestResourceMeta,

    /// The feedback values read from the resource (JSON key `statusFeedback`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "statusFeedback"
    )]
    pub status_feedbacks: Option<StatusFeedbackResult>,

    /// Manifest-level conditions (`Applied`, `Available`, `StatusFeedbackSynced`, and those
    /// set by condition rules), merged by `type`. Their types and reasons are in
    /// [`constants::work`](crate::constants::work).
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Vec<Condition>,
}

impl ManifestCondition {
    /// The manifest-level condition of type `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }
}

/// Identifies the manifest (by position) and the resource it became on the managed cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestResourceMeta {
    /// Index of the manifest in `spec.workload.manifests`.
    pub ordinal: i32,

    /// API group; empty for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,

    /// API version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,

    /// Kind, e.g. `Deployment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,

    /// Plural resource name, e.g. `deployments`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,

    /// Name of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,

    /// Namespace of the resource; empty or absent for cluster-scoped resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}
