//! AddOnPlacementScore: scores an addon computes for one managed cluster, for Placements to
//! rank clusters by.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The (empty) body of an [`AddOnPlacementScore`]: the kind has no `spec`, only `status`.
///
/// An AddOnPlacementScore lives in the namespace of the managed cluster it scores. A
/// Placement's `AddOn` score coordinate names it by `metadata.name` (`resourceName`) and one
/// of its scores by name (`scoreName`).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1alpha1",
    kind = "AddOnPlacementScore",
    doc = "Scores an addon computed for the managed cluster whose namespace holds this object; Placements can rank clusters by them.",
    plural = "addonplacementscores",
    namespaced,
    no_spec,
    status = "AddOnPlacementScoreStatus",
    derive = "PartialEq",
    derive = "Default"
)]
pub struct AddOnPlacementScoreFields {}

/// The scores of an [`AddOnPlacementScore`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnPlacementScoreStatus {
    /// Conditions reported by the addon, one per type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Option<Vec<Condition>>,

    /// The scores, one per name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["name"]
    ))]
    pub scores: Option<Vec<AddOnPlacementScoreItem>>,

    /// When the scores stop being valid; the scheduler then treats them as absent. `None`
    /// means they never expire. (Go clients send `null` when unset, which reads as `None`.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::time")]
    pub valid_until: Option<Time>,
}

/// One named score of a cluster, from -100 to 100.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnPlacementScoreItem {
    /// Name of the score, e.g. `cpuAvailable`.
    pub name: String,

    /// The score, from -100 (worst) to 100 (best).
    #[schemars(range(min = -100, max = 100))]
    pub value: i32,
}

impl AddOnPlacementScore {
    /// The value of the score `name`, if present.
    pub fn score(&self, name: &str) -> Option<i32> {
        self.status
            .as_ref()?
            .scores
            .as_ref()?
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.value)
    }
}
