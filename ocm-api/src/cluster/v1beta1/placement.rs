//! Placement: which managed clusters a workload goes to.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, LabelSelector, LabelSelectorRequirement, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::cluster::v1::{TAINT_KEY_PATTERN, TaintEffect};

/// The pattern of `clustersPerDecisionGroup` when given as a string: `1%` to `100%`, or a
/// positive number.
pub const CLUSTERS_PER_DECISION_GROUP_PATTERN: &str = "^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$";

/// The pattern of a decision group name: 2 to 63 letters, digits, `-`, `_` and `.`, starting and
/// ending with a letter or digit.
pub const DECISION_GROUP_NAME_PATTERN: &str = "^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$";

/// The pattern of a spread constraint's topology key.
pub const TOPOLOGY_KEY_PATTERN: &str = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";

/// The pattern of `scoreRateLimit`: a number followed by `h`, `m` or `s`.
pub const SCORE_RATE_LIMIT_PATTERN: &str = "^[0-9]+[hms]$";

/// The prioritizer mode that adds the configured prioritizers to the defaults.
pub const PRIORITIZER_MODE_ADDITIVE: &str = "Additive";
/// The prioritizer mode that uses exactly the configured prioritizers.
pub const PRIORITIZER_MODE_EXACT: &str = "Exact";

/// The toleration operator that matches a taint with the same key and value.
pub const TOLERATION_OP_EQUAL: &str = "Equal";
/// The toleration operator that matches any taint with the same key, whatever its value.
pub const TOLERATION_OP_EXISTS: &str = "Exists";

/// Schema of `clustersPerDecisionGroup`.
fn clusters_per_decision_group(_: &mut SchemaGenerator) -> Schema {
    crate::schema::schema_from(json!({
        "anyOf": [{ "type": "integer" }, { "type": "string" }],
        "default": "100%",
        "pattern": CLUSTERS_PER_DECISION_GROUP_PATTERN,
        "x-kubernetes-int-or-string": true,
    }))
}

/// The desired state of a [`Placement`]: which managed clusters a workload should go to, and
/// how to group them.
///
/// A Placement is namespaced. It can only select clusters of the ManagedClusterSets bound to
/// its namespace with a ManagedClusterSetBinding. The scheduler writes the result into
/// PlacementDecision objects labelled `cluster.open-cluster-management.io/placement=<name>`.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1beta1",
    kind = "Placement",
    doc = "Selects managed clusters from the cluster sets bound to its namespace; the scheduler writes the result into PlacementDecisions.",
    plural = "placements",
    namespaced,
    status = "PlacementStatus",
    derive = "PartialEq",
    derive = "Default",
    printcolumn = r#"{"name":"Succeeded","type":"string","jsonPath":".status.conditions[?(@.type==\"PlacementSatisfied\")].status"}"#,
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.conditions[?(@.type==\"PlacementSatisfied\")].reason"}"#,
    printcolumn = r#"{"name":"SelectedClusters","type":"integer","jsonPath":".status.numberOfSelectedClusters"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct PlacementSpec {
    /// Cluster sets to select from. Empty or absent means every set bound to the namespace;
    /// otherwise only the listed sets that are also bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_sets: Option<Vec<String>>,

    /// How many clusters to select. Absent means every cluster that passes the predicates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_of_clusters: Option<i32>,

    /// Cluster predicates, ORed: a cluster is feasible if any one of them matches. Absent or
    /// empty means every cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicates: Option<Vec<ClusterPredicate>>,

    /// How feasible clusters are ranked when only `numberOfClusters` of them are selected.
    /// Go clients always write it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prioritizer_policy: Option<PrioritizerPolicy>,

    /// How selected clusters should be spread over topologies. Not implemented by the upstream
    /// scheduler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_policy: Option<SpreadPolicy>,

    /// Taints this Placement tolerates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<Toleration>>,

    /// How the selected clusters are divided into decision groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_strategy: Option<DecisionStrategy>,

    /// How clusters are ordered in the decisions: `ClusterName` (the default) or `Score`. Not
    /// implemented by the upstream scheduler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "ClusterName"))]
    pub sort_by: Option<SortBy>,

    /// The least time between two re-schedulings caused by score changes, as a number with
    /// unit `h`, `m` or `s`. Defaults to `1m`. Not implemented by the upstream scheduler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "1m", "pattern" = SCORE_RATE_LIMIT_PATTERN))]
    pub score_rate_limit: Option<String>,
}

/// The order of clusters in a Placement's decisions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SortBy {
    /// By cluster name (the default).
    #[default]
    ClusterName,
    /// By score, best first.
    Score,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `SortBy`: its known values only, with the same name and docs.
/// The order of clusters in a Placement's decisions.
#[derive(JsonSchema)]
#[schemars(rename = "SortBy")]
#[allow(dead_code)]
enum SortBySchema {
    /// By cluster name (the default).
    ClusterName,
    /// By score, best first.
    Score,
}

crate::string_enum::string_enum!(SortBy, SortBySchema {
    ClusterName => "ClusterName",
    Score => "Score",
});

/// One way for a cluster to be feasible.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPredicate {
    /// The selector a cluster must match. Absent matches every cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_cluster_selector: Option<ClusterSelector>,
}

/// Selects clusters by labels, claims and CEL expressions; all parts present must match.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSelector {
    /// Selects by the ManagedCluster's labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::label_selector")]
    pub label_selector: Option<LabelSelector>,

    /// Selects by the cluster claims in the ManagedCluster's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_selector: Option<ClusterClaimSelector>,

    /// Selects by CEL expressions over the ManagedCluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cel_selector: Option<ClusterCelSelector>,
}

/// Selects clusters by their cluster claims (name → value), like a label selector without
/// `matchLabels`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClaimSelector {
    /// Requirements on claims, ANDed; each has a claim name as `key`, an operator (`In`,
    /// `NotIn`, `Exists`, `DoesNotExist`) and values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::cluster::schema::selector_requirements")]
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
}

/// Selects clusters with CEL expressions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterCelSelector {
    /// CEL expressions, ANDed. Each sees the ManagedCluster as `managedCluster` and must
    /// evaluate to a boolean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cel_expressions: Option<Vec<String>>,
}

/// How feasible clusters are ranked.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrioritizerPolicy {
    /// `Additive` (the default): the configurations adjust the default prioritizers
    /// (`Balance` and `Steady`, weight 1). `Exact`: only the configured prioritizers count.
    /// See [`PRIORITIZER_MODE_ADDITIVE`] and [`PRIORITIZER_MODE_EXACT`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Additive"))]
    pub mode: Option<String>,

    /// The prioritizers and their weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configurations: Option<Vec<PrioritizerConfig>>,
}

/// One prioritizer and its weight.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrioritizerConfig {
    /// Where the score comes from.
    pub score_coordinate: ScoreCoordinate,

    /// Weight of the score, from -10 to 10; 0 disables the prioritizer, a negative weight
    /// prefers low scores. Defaults to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = -10, max = 10), extend("default" = 1))]
    pub weight: Option<i32>,
}

impl PrioritizerConfig {
    /// The weight in effect: `weight`, or the API server's default of 1 when it is absent.
    pub fn effective_weight(&self) -> i32 {
        self.weight.unwrap_or(1)
    }
}

/// Where a prioritizer's score comes from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScoreCoordinate {
    /// `BuiltIn` (the default) or `AddOn`.
    #[serde(rename = "type")]
    #[schemars(extend("default" = "BuiltIn"))]
    pub type_: ScoreCoordinateType,

    /// Name of a built-in prioritizer, for type `BuiltIn`: `Balance`, `Steady`,
    /// `ResourceAllocatableCPU` or `ResourceAllocatableMemory` (see the `PRIORITIZER_*`
    /// constants in [`crate::constants::placement`]). The API also names `Spread`, which the
    /// upstream scheduler rejects as misconfigured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built_in: Option<String>,

    /// The AddOnPlacementScore to read, for type `AddOn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_on: Option<AddOnScore>,
}

/// The kind of a [`ScoreCoordinate`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScoreCoordinateType {
    /// A prioritizer built into the scheduler.
    #[default]
    BuiltIn,
    /// A score published by an addon in an AddOnPlacementScore.
    AddOn,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `ScoreCoordinateType`: its known values only, with the same name and docs.
/// The kind of a [`ScoreCoordinate`].
#[derive(JsonSchema)]
#[schemars(rename = "ScoreCoordinateType")]
#[allow(dead_code)]
enum ScoreCoordinateTypeSchema {
    /// A prioritizer built into the scheduler.
    BuiltIn,
    /// A score published by an addon in an AddOnPlacementScore.
    AddOn,
}

crate::string_enum::string_enum!(ScoreCoordinateType, ScoreCoordinateTypeSchema {
    BuiltIn => "BuiltIn",
    AddOn => "AddOn",
});

/// A score published in an AddOnPlacementScore.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOnScore {
    /// Name of the AddOnPlacementScore (the same in every cluster namespace).
    pub resource_name: String,

    /// Name of the score inside it.
    pub score_name: String,
}

/// How selected clusters should be spread.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpreadPolicy {
    /// The spread constraints, at most 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 8))]
    pub spread_constraints: Option<Vec<SpreadConstraintsTerm>>,
}

/// One spread constraint: spread clusters evenly over the values of a label or claim.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpreadConstraintsTerm {
    /// The label or claim whose values form the topology.
    #[schemars(length(max = 316), extend("pattern" = TOPOLOGY_KEY_PATTERN))]
    pub topology_key: String,

    /// Whether `topologyKey` is a label or a claim.
    pub topology_key_type: TopologyKeyType,

    /// The largest allowed difference in the number of selected clusters between two
    /// topology values. Defaults to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1), extend("default" = 1))]
    pub max_skew: Option<i32>,

    /// What to do when `maxSkew` cannot be met. Defaults to `ScheduleAnyway`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "ScheduleAnyway"))]
    pub when_unsatisfiable: Option<UnsatisfiableMaxSkewAction>,
}

/// Where a spread constraint's topology key is looked up.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TopologyKeyType {
    /// A ManagedCluster label.
    #[default]
    Label,
    /// A cluster claim.
    Claim,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `TopologyKeyType`: its known values only, with the same name and docs.
/// Where a spread constraint's topology key is looked up.
#[derive(JsonSchema)]
#[schemars(rename = "TopologyKeyType")]
#[allow(dead_code)]
enum TopologyKeyTypeSchema {
    /// A ManagedCluster label.
    Label,
    /// A cluster claim.
    Claim,
}

crate::string_enum::string_enum!(TopologyKeyType, TopologyKeyTypeSchema {
    Label => "Label",
    Claim => "Claim",
});

/// What to do when a spread constraint cannot be met.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnsatisfiableMaxSkewAction {
    /// Select fewer clusters rather than break the constraint.
    DoNotSchedule,
    /// Select anyway, keeping the skew as small as possible (the default).
    #[default]
    ScheduleAnyway,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `UnsatisfiableMaxSkewAction`: its known values only, with the same name and docs.
/// What to do when a spread constraint cannot be met.
#[derive(JsonSchema)]
#[schemars(rename = "UnsatisfiableMaxSkewAction")]
#[allow(dead_code)]
enum UnsatisfiableMaxSkewActionSchema {
    /// Select fewer clusters rather than break the constraint.
    DoNotSchedule,
    /// Select anyway, keeping the skew as small as possible (the default).
    ScheduleAnyway,
}

crate::string_enum::string_enum!(UnsatisfiableMaxSkewAction, UnsatisfiableMaxSkewActionSchema {
    DoNotSchedule => "DoNotSchedule",
    ScheduleAnyway => "ScheduleAnyway",
});

/// A taint a Placement tolerates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    /// The taint key to match. Empty or absent matches every key (then `operator` must be
    /// `Exists`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 316), extend("pattern" = TAINT_KEY_PATTERN))]
    pub key: Option<String>,

    /// `Equal` (the default): key and value must match. `Exists`: any value matches. See
    /// [`TOLERATION_OP_EQUAL`] and [`TOLERATION_OP_EXISTS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Equal"))]
    pub operator: Option<String>,

    /// The taint value to match, for operator `Equal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub value: Option<String>,

    /// The taint effect to match. Absent matches every effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,

    /// How long, in seconds from the taint's `timeAdded`, the toleration lasts. Absent means
    /// forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// How the selected clusters are divided into decision groups.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionStrategy {
    /// The grouping rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_strategy: Option<GroupStrategy>,
}

/// Rules for dividing selected clusters into decision groups.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupStrategy {
    /// Named groups, filled first, in order. A cluster matching several goes to the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_groups: Option<Vec<DecisionGroup>>,

    /// The most clusters in one group: a positive number or a percentage (1% to 100%) of the
    /// selected clusters. Larger groups are split. Defaults to `100%`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "clusters_per_decision_group")]
    pub clusters_per_decision_group: Option<IntOrString>,
}

/// One named decision group.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionGroup {
    /// Name of the group; written to the `cluster.open-cluster-management.io/decision-group-name`
    /// label of its PlacementDecisions.
    #[schemars(extend("pattern" = DECISION_GROUP_NAME_PATTERN))]
    pub group_name: String,

    /// The clusters of the group, among the selected ones.
    pub group_cluster_selector: GroupClusterSelector,
}

/// Selects the clusters of a decision group by labels and claims (both must match).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupClusterSelector {
    /// Selects by the ManagedCluster's labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::label_selector")]
    pub label_selector: Option<LabelSelector>,

    /// Selects by the cluster claims in the ManagedCluster's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_selector: Option<ClusterClaimSelector>,
}

/// What the scheduler last decided for a Placement.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlacementStatus {
    /// How many clusters are selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_of_selected_clusters: Option<i32>,

    /// The decision groups and the PlacementDecisions of each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_groups: Option<Vec<DecisionGroupStatus>>,

    /// `PlacementSatisfied` and `PlacementMisconfigured`, one per type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions_map")]
    pub conditions: Option<Vec<Condition>>,

    /// When scores were last used to re-schedule. Not written by the upstream scheduler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::time")]
    pub last_score_update_time: Option<Time>,
}

/// One decision group in a Placement's status.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionGroupStatus {
    /// Index of the group, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_group_index: Option<i32>,

    /// Name of the group; empty for groups made by splitting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_group_name: Option<String>,

    /// Names of the PlacementDecisions holding the group's clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Vec<String>>,

    /// Number of clusters in the group. Defaults to 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 0))]
    pub cluster_count: Option<i32>,
}

impl Placement {
    /// The condition of type `type_` in the status, if any.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .find(|c| c.type_ == type_)
    }
}
