//! ManifestWorkReplicaSet: one ManifestWork template fanned out to every cluster that some
//! Placements select, rolled out with a strategy.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::cluster::v1alpha1::RolloutStrategy;
use crate::work::v1::{Manifest, ManifestWorkSpec, ResourceIdentifier};

/// The desired state of a [`ManifestWorkReplicaSet`]: the ManifestWork template, the
/// Placements to fan it out to and how to delete the generated works.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "work.open-cluster-management.io",
    version = "v1alpha1",
    kind = "ManifestWorkReplicaSet",
    doc = r#"One ManifestWork template fanned out to the clusters some Placements select.

The ManifestWorkReplicaSet controller on the hub creates one ManifestWork from
`manifestWorkTemplate` in the namespace of every cluster the referenced Placements (in the
same namespace as the ManifestWorkReplicaSet) select, following each Placement's rollout
strategy, and reports how far the rollout got. Upstream runs the controller only when the
hub's `ManifestWorkReplicaSet` feature gate is on.

# Rust API

The desired state is [`ManifestWorkReplicaSetSpec`], the observed state
[`ManifestWorkReplicaSetStatus`]; [`ManifestWorkReplicaSet::validate`] applies upstream's
admission checks and, our addition on by default, checks the template's executor as a
ManifestWork's; a validating webhook runs [`ManifestWorkReplicaSet::admit`], which also asks
for the requesting user's `execute-as` permission (see `ocm_api::work::executor`).

# Our additions

Fields upstream's CRD does not have (yet), each read and written only by this SDK's controller
with the matching opt-in (`ocm_work::replicaset`). They are in the extended CRD only
(`ocm_api::crd::extended_crds`, `ocm-crdgen --extended`); the default CRD is upstream's, and a
hub that serves it prunes them (`ocm_api::crd::REPLICA_SET_EXTENSIONS` lists them):
from upstream's accepted rollback proposal, `spec.revisionHistoryLimit`,
`spec.placementRefs[].rolloutStrategy.failureStrategy` and `status.currentRevision`,
`updateRevision`, `collisionCount` and `abortedTime`; for feedback aggregation (a controller
with `ReplicaSetController::with_feedback_aggregation`), `spec.feedbackAggregation` and
`status.feedbackAggregation`.

# Example

```
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;

let mwrs: ManifestWorkReplicaSet = serde_json::from_value(serde_json::json!({
    "apiVersion": "work.open-cluster-management.io/v1alpha1",
    "kind": "ManifestWorkReplicaSet",
    "metadata": { "name": "web", "namespace": "apps" },
    "spec": {
        "placementRefs": [{ "name": "prod", "rolloutStrategy": { "type": "All" } }],
        "manifestWorkTemplate": { "workload": { "manifests": [{
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": { "name": "web", "namespace": "default" },
        }]}},
    },
}))?;
assert_eq!(mwrs.spec.placement_refs[0].name, "prod");
assert_eq!(mwrs.manifests().len(), 1);
mwrs.validate()?;
# Ok::<(), Box<dyn std::error::Error>>(())
```
"#,
    plural = "manifestworkreplicasets",
    shortname = "mwrs",
    namespaced,
    status = "ManifestWorkReplicaSetStatus",
    printcolumn = r#"{"name":"Placement","type":"string","jsonPath":".status.conditions[?(@.type==\"PlacementVerified\")].reason"}"#,
    printcolumn = r#"{"name":"Found","type":"string","jsonPath":".status.conditions[?(@.type==\"PlacementVerified\")].status"}"#,
    printcolumn = r#"{"name":"ManifestWorks","type":"string","jsonPath":".status.conditions[?(@.type==\"ManifestworkApplied\")].reason"}"#,
    printcolumn = r#"{"name":"Applied","type":"string","jsonPath":".status.conditions[?(@.type==\"ManifestworkApplied\")].status"}"#,
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
// The API server defaults `cascadeDeletionPolicy`, so stored objects always have it, yet the
// field stays optional here so that objects written without it round-trip unchanged.
#[schemars(extend("required" = ["cascadeDeletionPolicy", "placementRefs"]))]
pub struct ManifestWorkReplicaSetSpec {
    /// The ManifestWork spec every generated ManifestWork gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_work_template: Option<ManifestWorkSpec>,

    /// The Placements (in this namespace) whose selected clusters receive a ManifestWork;
    /// at least one.
    #[schemars(length(min = 1))]
    pub placement_refs: Vec<LocalPlacementReference>,

    /// How the generated ManifestWorks are deleted when the ManifestWorkReplicaSet is:
    /// `Background` (the default) or `Foreground`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Background"))]
    pub cascade_deletion_policy: Option<CascadeDeletionPolicy>,

    /// How many template revisions to keep besides the current and update ones (10 when
    /// unset).
    ///
    /// Our addition, from upstream's accepted rollback proposal (not in upstream's API yet):
    /// read only by a controller with rollback on (`ocm_work::replicaset::rollback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0))]
    pub revision_history_limit: Option<i32>,

    /// Status-feedback values to aggregate across the generated ManifestWorks into
    /// `status.feedbackAggregation`.
    ///
    /// Our addition (upstream has no such field): read only by a controller with feedback
    /// aggregation on (`ocm_work::replicaset::feedback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_aggregation: Option<FeedbackAggregationSpec>,
}

/// Which status-feedback values a ManifestWorkReplicaSet aggregates, and how often (our
/// addition).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FeedbackAggregationSpec {
    /// The values, each named by the resource it is reported for and its feedback name (as
    /// the template's `manifestConfigs` feedback rules name it).
    #[schemars(length(min = 1))]
    pub values: Vec<FeedbackValueSelector>,

    /// The least time between two updates of `status.feedbackAggregation`, a Go duration
    /// (`30s`, `5m`); `1m` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "1m", "pattern" = FEEDBACK_INTERVAL_PATTERN))]
    pub interval: Option<String>,
}

impl FeedbackAggregationSpec {
    /// Aggregation of `values`, at the default interval.
    pub fn new(values: Vec<FeedbackValueSelector>) -> Self {
        Self {
            values,
            interval: None,
        }
    }
}

/// The schema pattern of `spec.feedbackAggregation.interval`: a Go duration without sign.
pub const FEEDBACK_INTERVAL_PATTERN: &str = r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$";

/// One status-feedback value of one manifest, to aggregate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackValueSelector {
    /// The manifest's resource (group, resource, namespace and name).
    pub resource_identifier: ResourceIdentifier,

    /// The feedback value's name, e.g. `ReadyReplicas`.
    #[schemars(length(min = 1))]
    pub name: String,
}

impl FeedbackValueSelector {
    /// The value `name` reported for `resource_identifier`.
    pub fn new(resource_identifier: ResourceIdentifier, name: impl Into<String>) -> Self {
        Self {
            resource_identifier,
            name: name.into(),
        }
    }
}

/// The aggregated status-feedback values of a ManifestWorkReplicaSet (our addition).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FeedbackAggregationStatus {
    /// When the aggregates last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::time")]
    pub last_update_time: Option<Time>,

    /// One entry per selected value, in the order of `spec.feedbackAggregation.values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<FeedbackAggregate>>,
}

/// One status-feedback value aggregated over the ManifestWorks that report it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FeedbackAggregate {
    /// The manifest's resource.
    pub resource_identifier: ResourceIdentifier,

    /// The feedback value's name.
    pub name: String,

    /// How many ManifestWorks report the value.
    #[schemars(schema_with = "count")]
    pub reported: i64,

    /// The distinct values (in their text form) with how many works report each, most
    /// frequent first (ties by value), at most `MAX_DISTINCT_VALUES` of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<FeedbackValueCount>>,

    /// How many works report a value left out of `counts` (beyond the distinct-value limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "count")]
    pub other: Option<i64>,

    /// The least of the `Integer` values (absent when none is an integer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,

    /// The greatest of the `Integer` values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,

    /// The sum of the `Integer` values (absent when it overflows 64 bits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum: Option<i64>,
}

impl FeedbackAggregate {
    /// No works reporting `name` of `resource_identifier` yet.
    pub fn new(resource_identifier: ResourceIdentifier, name: impl Into<String>) -> Self {
        Self {
            resource_identifier,
            name: name.into(),
            ..Self::default()
        }
    }
}

/// How many ManifestWorks report one value.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackValueCount {
    /// The value in its text form (an integer in decimal, a boolean as `true`/`false`, a
    /// `JsonRaw` value as its JSON text).
    pub value: String,

    /// The number of works reporting it.
    #[schemars(schema_with = "count")]
    pub count: i64,
}

impl ManifestWorkReplicaSet {
    /// The manifests of the template (empty when there are none).
    pub fn manifests(&self) -> &[Manifest] {
        self.spec
            .manifest_work_template
            .as_ref()
            .map(ManifestWorkSpec::manifests)
            .unwrap_or_default()
    }
}

/// How the generated ManifestWorks are deleted with their ManifestWorkReplicaSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CascadeDeletionPolicy {
    /// Delete the ManifestWorkReplicaSet at once and its ManifestWorks afterwards (the
    /// default).
    #[default]
    Background,
    /// Delete the ManifestWorks first; the ManifestWorkReplicaSet goes once they are gone.
    Foreground,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema. Deletion
    /// treats it as `Background`, as upstream treats every value but `Foreground`.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `CascadeDeletionPolicy`: its known values only, with the same name and docs.
/// How the generated ManifestWorks are deleted with their ManifestWorkReplicaSet.
#[derive(JsonSchema)]
#[schemars(rename = "CascadeDeletionPolicy")]
#[allow(dead_code)]
enum CascadeDeletionPolicySchema {
    /// Delete the ManifestWorkReplicaSet at once and its ManifestWorks afterwards (the
    /// default).
    Background,
    /// Delete the ManifestWorks first; the ManifestWorkReplicaSet goes once they are gone.
    Foreground,
}

crate::string_enum::string_enum!(CascadeDeletionPolicy, CascadeDeletionPolicySchema {
    Background => "Background",
    Foreground => "Foreground",
});

/// A Placement in the ManifestWorkReplicaSet's namespace, with the rollout strategy for the
/// clusters it selects.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalPlacementReference {
    /// Name of the Placement.
    #[schemars(length(min = 1))]
    pub name: String,

    /// How the ManifestWorks are rolled out to the selected clusters; `All` at once, with no
    /// progress deadline, when absent.
    ///
    /// # Our addition
    ///
    /// In the extended CRD the strategy may also carry `failureStrategy` (see
    /// [`RolloutStrategy::failure_strategy`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        schema_with = "crate::cluster::v1alpha1::rollout_strategy_with_failure_strategy",
        extend("default" = {"type": "All", "all": {"progressDeadline": "None"}})
    )]
    pub rollout_strategy: Option<RolloutStrategy>,
}

impl LocalPlacementReference {
    /// A reference to the Placement `name` with the default rollout strategy.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            rollout_strategy: None,
        }
    }
}

/// The observed state of a [`ManifestWorkReplicaSet`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkReplicaSetStatus {
    /// `PlacementVerified`, `PlacementRolledOut` and `ManifestworkApplied` (sic, lower-case
    /// "w"), merged by `type`. Their types and reasons are in
    /// [`constants::replicaset`](crate::constants::replicaset). A controller with one of our
    /// opt-ins also writes `Progressing` (rollback), `ClusterValuesResolved` (per-cluster
    /// values) or `FeedbackAggregated` (feedback aggregation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Option<Vec<Condition>>,

    /// Counts over all generated ManifestWorks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ManifestWorkReplicaSetSummary>,

    /// Counts per referenced Placement (JSON key `placementSummary`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "placementSummary"
    )]
    pub placements_summary: Option<Vec<PlacementSummary>>,

    /// Hash collisions met naming template revisions. Our addition from upstream's accepted
    /// rollback proposal, written only with rollback on (`ocm_work::replicaset::rollback`),
    /// as are the three fields below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,

    /// The hash of the last template revision that reached every selected cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,

    /// The hash of the template revision being rolled out (`spec.manifestWorkTemplate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,

    /// When the rollout of `updateRevision` was aborted (cleared when a new revision starts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::time")]
    pub aborted_time: Option<Time>,

    /// The aggregated feedback values (our addition, written only with feedback aggregation
    /// on, `ocm_work::replicaset::feedback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_aggregation: Option<FeedbackAggregationStatus>,
}

impl ManifestWorkReplicaSetStatus {
    /// The conditions (empty when there are none).
    pub fn conditions(&self) -> &[Condition] {
        self.conditions.as_deref().unwrap_or_default()
    }

    /// The condition of type `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions().iter().find(|c| c.type_ == type_)
    }
}

/// The rollout progress of one referenced Placement.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementSummary {
    /// Name of the Placement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,

    /// Human-readable rollout progress, as the controller writes it:
    /// `"<groups> (<applied> / <total> clusters applied)"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_decision_groups: Option<String>,

    /// Counts over the ManifestWorks of this Placement's clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ManifestWorkReplicaSetSummary>,
}

/// Counts of generated ManifestWorks by state.
///
/// Upstream's controller always writes every count; `desiredTotal` and `updated` stay 0.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestWorkReplicaSetSummary {
    /// Number of ManifestWorks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "count")]
    pub total: Option<i64>,

    /// Number of ManifestWorks whose `Progressing` condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "count")]
    pub progressing: Option<i64>,

    /// Number of ManifestWorks whose `Available` condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "count")]
    pub available: Option<i64>,

    /// Number of ManifestWorks whose `Degraded` condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "count")]
    pub degraded: Option<i64>,

    /// Number of ManifestWorks whose `Applied` condition is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "count")]
    pub applied: Option<i64>,

    /// Number of clusters that should receive a ManifestWork (never set by upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "count")]
    pub desired_total: Option<i64>,

    /// Number of clusters whose work holds the update revision and succeeded (never set by
    /// upstream; written by a controller with the rollback opt-in, as upstream's accepted
    /// proposal describes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "count")]
    pub updated: Option<i64>,
}

impl ManifestWorkReplicaSetSummary {
    /// Every count set to 0, the way upstream's controller writes an empty summary (it always
    /// writes every field).
    pub fn zero() -> Self {
        Self {
            total: Some(0),
            progressing: Some(0),
            available: Some(0),
            degraded: Some(0),
            applied: Some(0),
            desired_total: Some(0),
            updated: Some(0),
        }
    }
}

/// Upstream's counts are Go `int`s: an integer without a declared format.
fn count(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer" })
}
