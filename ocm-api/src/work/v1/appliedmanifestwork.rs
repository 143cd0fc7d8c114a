//! AppliedManifestWork: the managed cluster's record of what a ManifestWork applied.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of an [`AppliedManifestWork`].
///
/// An AppliedManifestWork is cluster-scoped and lives on the managed cluster. The work agent
/// creates one for every ManifestWork it applies, names it
/// `{hash of the hub API server URL}-{ManifestWork name}`, and makes it the owner of every
/// resource it applied, so that deleting it garbage-collects them.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "work.open-cluster-management.io",
    version = "v1",
    kind = "AppliedManifestWork",
    doc = "The managed cluster's record of one ManifestWork it applied: the hub it came from and every resource applied for it. The applied resources are owned by this record, so deleting it garbage-collects them.",
    plural = "appliedmanifestworks",
    status = "AppliedManifestWorkStatus",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct AppliedManifestWorkSpec {
    /// Hash of the hub the ManifestWork came from, so that works of two hubs never clash.
    pub hub_hash: String,

    /// Identity of the work agent that applied the ManifestWork.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "agentID")]
    pub agent_id: Option<String>,

    /// Name of the ManifestWork on the hub, in the managed cluster's namespace.
    pub manifest_work_name: String,
}

/// The observed state of an [`AppliedManifestWork`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedManifestWorkStatus {
    /// Every resource the agent applied for this work and still tracks. An entry is removed
    /// once the resource is deleted or no longer in the ManifestWork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_resources: Option<Vec<AppliedManifestResourceMeta>>,

    /// When eviction of this AppliedManifestWork started: its ManifestWork is gone from the
    /// hub, or its hub hash no longer matches the agent's hub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::time")]
    pub eviction_start_time: Option<Time>,
}

/// One resource applied on the managed cluster: its group, version, resource, namespace,
/// name and uid.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedManifestResourceMeta {
    /// API group; empty for the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version.
    pub version: String,
    /// Plural resource name, e.g. `deployments`.
    pub resource: String,
    /// Namespace; absent for cluster-scoped resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name of the resource.
    pub name: String,
    /// UID of the resource when it was applied. A resource with the same name but another UID
    /// is a different object and is not deleted on the work's behalf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}
