//! Rollout strategies: how a workload applier (ManifestWorkReplicaSet, ClusterManagementAddOn)
//! moves a change across the clusters a Placement selected.
//!
//! These types have no CRD of their own; they are embedded in the CRDs of the kinds that roll
//! things out.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::{Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The pattern of `maxFailures` and `maxConcurrency` when given as a string: a percentage from
/// `0%` to `100%`, or a plain non-negative number.
pub const ROLLOUT_COUNT_PATTERN: &str = "^((100|[0-9]{1,2})%|[0-9]+)$";

/// The pattern of `progressDeadline`: a number followed by `h`, `m` or `s`, or `None`.
pub const PROGRESS_DEADLINE_PATTERN: &str = "^(([0-9])+[h|m|s])|None$";

/// The `progressDeadline` value meaning "wait forever".
pub const PROGRESS_DEADLINE_NONE: &str = "None";

/// Schema of a count given as an integer or a percentage string (`maxFailures`,
/// `maxConcurrency`).
pub(crate) fn rollout_count(_: &mut SchemaGenerator) -> Schema {
    crate::schema::schema_from(json!({
        "anyOf": [{ "type": "integer" }, { "type": "string" }],
        "pattern": ROLLOUT_COUNT_PATTERN,
        "x-kubernetes-int-or-string": true,
    }))
}

/// How a change is rolled out to the selected clusters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RolloutType {
    /// Every selected cluster at once (the default).
    #[default]
    All,
    /// Cluster by cluster, at most `maxConcurrency` at a time, mandatory decision groups first.
    Progressive,
    /// Decision group by decision group, mandatory groups first.
    ProgressivePerGroup,
    /// A value this version of the SDK does not know (a newer OCM may send one), kept as
    /// it was received so that it round-trips; it is not part of the CRD schema. The rollout
    /// engine refuses it with upstream's "incorrect rollout strategy type" error.
    #[serde(untagged)]
    Unknown(String),
}

// The schema of `RolloutType`: its known values only, with the same name and docs.
/// How a change is rolled out to the selected clusters.
#[derive(schemars::JsonSchema)]
#[schemars(rename = "RolloutType")]
#[allow(dead_code)]
enum RolloutTypeSchema {
    /// Every selected cluster at once (the default).
    All,
    /// Cluster by cluster, at most `maxConcurrency` at a time, mandatory decision groups first.
    Progressive,
    /// Decision group by decision group, mandatory groups first.
    ProgressivePerGroup,
}

crate::string_enum::string_enum!(RolloutType, RolloutTypeSchema {
    All => "All",
    Progressive => "Progressive",
    ProgressivePerGroup => "ProgressivePerGroup",
});

/// The rollout strategy of a workload applier.
///
/// Exactly one of `all`, `progressive` and `progressivePerGroup` is meant to be set, the one
/// matching `type`; a missing one means its defaults.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStrategy {
    /// Which strategy to use; `All` when absent.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "All"))]
    pub type_: Option<RolloutType>,

    /// Settings of the `All` strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<RolloutAll>,

    /// Settings of the `Progressive` strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progressive: Option<RolloutProgressive>,

    /// Settings of the `ProgressivePerGroup` strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progressive_per_group: Option<RolloutProgressivePerGroup>,

    /// What to do when the rollout fails on more clusters than `maxFailures` allows: absent,
    /// stop (upstream's behaviour); `AbortAll`, abort it and put the last revision that
    /// reached every cluster back everywhere.
    ///
    /// From upstream's accepted rollback proposal, not in upstream's API yet (our addition):
    /// only the ManifestWorkReplicaSet controller reads it, with its rollback opt-in on
    /// (`ocm_work::replicaset::rollback`), and only the ManifestWorkReplicaSet CRD has it
    /// (a ClusterManagementAddOn's install strategy does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub failure_strategy: Option<FailureStrategy>,
}

/// What a workload applier does when a rollout breaches `maxFailures` (our addition, from
/// upstream's accepted rollback proposal; see [`RolloutStrategy::failure_strategy`]).
///
/// A value this version does not know is kept as [`FailureStrategy::Unknown`] (so a newer
/// object still decodes) and treated as absent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureStrategy {
    /// Abort the rollout and restore the current revision on every cluster at once.
    AbortAll,
    /// A value this version does not know, as written.
    Unknown(String),
}

impl FailureStrategy {
    /// The value as written in JSON.
    pub fn as_str(&self) -> &str {
        match self {
            Self::AbortAll => "AbortAll",
            Self::Unknown(s) => s,
        }
    }
}

impl Serialize for FailureStrategy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FailureStrategy {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(match text.as_str() {
            "AbortAll" => Self::AbortAll,
            _ => Self::Unknown(text),
        })
    }
}

/// The schema of `rolloutStrategy` in a ManifestWorkReplicaSet: the shared
/// [`RolloutStrategy`] plus `failureStrategy` (enum `AbortAll`), which the shared schema
/// leaves out.
pub(crate) fn rollout_strategy_with_failure_strategy(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = generator.subschema_for::<RolloutStrategy>();
    if let Some(properties) = schema
        .ensure_object()
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()
    {
        properties.insert(
            "failureStrategy".into(),
            json!({
                "description": "What to do when the rollout fails on more clusters than maxFailures allows: absent, stop; AbortAll, abort it and restore the current revision on every cluster at once (our addition, from upstream's accepted rollback proposal).",
                "type": "string",
                "enum": ["AbortAll"],
            }),
        );
    }
    schema
}

impl RolloutStrategy {
    /// The strategy in effect: `type`, or `All` when it is absent.
    pub fn rollout_type(&self) -> RolloutType {
        self.type_.clone().unwrap_or_default()
    }

    /// The timing and failure settings of the strategy in effect (defaults when its section is
    /// absent, or the type is [unknown](RolloutType::Unknown)).
    pub fn config(&self) -> RolloutConfig {
        match self.rollout_type() {
            RolloutType::All => self.all.as_ref().map(|a| a.config.clone()),
            RolloutType::Progressive => self.progressive.as_ref().map(|p| p.config.clone()),
            RolloutType::ProgressivePerGroup => self
                .progressive_per_group
                .as_ref()
                .map(|p| p.config.clone()),
            RolloutType::Unknown(_) => None,
        }
        .unwrap_or_default()
    }

    /// The mandatory decision groups of the strategy in effect (empty for `All` and an
    /// [unknown](RolloutType::Unknown) type).
    pub fn mandatory_decision_groups(&self) -> &[MandatoryDecisionGroup] {
        let groups = match self.rollout_type() {
            RolloutType::All | RolloutType::Unknown(_) => None,
            RolloutType::Progressive => self
                .progressive
                .as_ref()
                .map(|p| &p.mandatory_decision_groups),
            RolloutType::ProgressivePerGroup => self
                .progressive_per_group
                .as_ref()
                .map(|p| &p.mandatory_decision_groups),
        };
        groups
            .and_then(|g| g.mandatory_decision_groups.as_deref())
            .unwrap_or_default()
    }
}

/// Timing and failure tolerance shared by every rollout strategy.
///
/// In JSON these fields sit directly in the strategy's section (`all`, `progressive`,
/// `progressivePerGroup`).
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RolloutConfig {
    /// How long a cluster must stay successful before the rollout counts it as succeeded and
    /// moves on, as a Go duration (`90s`, `5m`, `1h30m`). Defaults to `"0"`: move on at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "0"))]
    pub min_success_time: Option<String>,

    /// How long to wait for a cluster to succeed before counting it as failed (timed out):
    /// a number with unit `h`, `m` or `s`, or `None` (the default) to wait forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "None", "pattern" = PROGRESS_DEADLINE_PATTERN))]
    pub progress_deadline: Option<String>,

    /// How many failed or timed-out clusters the rollout tolerates before it stops: a number or
    /// a percentage of the selected clusters (`"10%"`). Defaults to 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "rollout_count", extend("default" = 0))]
    pub max_failures: Option<IntOrString>,
}

/// Decision groups that are rolled out first, before any other cluster.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MandatoryDecisionGroups {
    /// The groups, in order. Each must fully succeed before the rollout goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mandatory_decision_groups: Option<Vec<MandatoryDecisionGroup>>,
}

/// One decision group of a Placement, named by group name or by index.
///
/// When both are set the name is looked up first. They are matched against the
/// `cluster.open-cluster-management.io/decision-group-name` and
/// `cluster.open-cluster-management.io/decision-group-index` labels of the PlacementDecisions.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Hash,
)]
#[serde(rename_all = "camelCase")]
pub struct MandatoryDecisionGroup {
    /// Name of the decision group, as in the Placement's `decisionStrategy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_name: Option<String>,

    /// Index of the decision group, counting from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_index: Option<i32>,
}

/// Settings of the `All` strategy: apply everywhere at once.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RolloutAll {
    /// Timing and failure tolerance.
    #[serde(flatten)]
    pub config: RolloutConfig,
}

/// Settings of the `ProgressivePerGroup` strategy: one decision group at a time.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RolloutProgressivePerGroup {
    /// Timing and failure tolerance.
    #[serde(flatten)]
    pub config: RolloutConfig,

    /// Groups rolled out before the others.
    #[serde(flatten)]
    pub mandatory_decision_groups: MandatoryDecisionGroups,
}

/// Settings of the `Progressive` strategy: a bounded number of clusters at a time.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RolloutProgressive {
    /// Timing and failure tolerance.
    #[serde(flatten)]
    pub config: RolloutConfig,

    /// Groups rolled out before the others.
    #[serde(flatten)]
    pub mandatory_decision_groups: MandatoryDecisionGroups,

    /// How many clusters may be rolling out at the same time: a number or a percentage of the
    /// selected clusters. When absent it follows the Placement's `clustersPerDecisionGroup`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "rollout_count")]
    pub max_concurrency: Option<IntOrString>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(kube::CustomResource, Serialize, Deserialize, schemars::JsonSchema, Clone, Debug)]
    #[kube(group = "example.com", version = "v1", kind = "Probe")]
    #[serde(rename_all = "camelCase")]
    struct ProbeSpec {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rollout_strategy: Option<RolloutStrategy>,
    }

    fn strip_descriptions(v: &mut serde_json::Value) {
        if let Some(map) = v.as_object_mut() {
            map.remove("description");
            map.values_mut().for_each(strip_descriptions);
        }
    }

    #[test]
    fn config_fields_are_inlined_with_upstream_constraints() {
        let crd = crate::crd::generate::<Probe>(crate::crd::Fixups::default());
        let mut schema = serde_json::to_value(&crd.spec.versions[0].schema).unwrap();
        strip_descriptions(&mut schema);
        let progressive = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["rolloutStrategy"]
            ["properties"]["progressive"];
        assert_eq!(
            progressive["properties"]["maxFailures"],
            json!({
                "anyOf": [{ "type": "integer" }, { "type": "string" }],
                "default": 0,
                "pattern": ROLLOUT_COUNT_PATTERN,
                "x-kubernetes-int-or-string": true,
            })
        );
        assert_eq!(
            progressive["properties"]["progressDeadline"],
            json!({ "type": "string", "default": "None", "pattern": PROGRESS_DEADLINE_PATTERN })
        );
        assert_eq!(
            progressive["properties"]["mandatoryDecisionGroups"]["items"]["properties"]["groupIndex"],
            json!({ "type": "integer", "format": "int32" })
        );
        assert!(progressive.get("allOf").is_none());
    }

    #[test]
    fn effective_settings() {
        let s: RolloutStrategy = serde_json::from_value(json!({
            "type": "Progressive",
            "progressive": {
                "maxConcurrency": "25%",
                "minSuccessTime": "5m",
                "mandatoryDecisionGroups": [{ "groupName": "canary" }]
            }
        }))
        .unwrap();
        assert_eq!(s.rollout_type(), RolloutType::Progressive);
        assert_eq!(s.config().min_success_time.as_deref(), Some("5m"));
        assert_eq!(s.mandatory_decision_groups().len(), 1);
        assert_eq!(RolloutStrategy::default().rollout_type(), RolloutType::All);
        assert!(
            RolloutStrategy::default()
                .mandatory_decision_groups()
                .is_empty()
        );
    }

    #[test]
    fn failure_strategy_round_trips_and_keeps_unknown_values() {
        let json = serde_json::json!({"type": "All", "failureStrategy": "AbortAll"});
        let s: RolloutStrategy = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(s.failure_strategy, Some(FailureStrategy::AbortAll));
        assert_eq!(serde_json::to_value(&s).unwrap(), json);
        let later = serde_json::json!({"type": "All", "failureStrategy": "RollbackSome"});
        let s: RolloutStrategy = serde_json::from_value(later.clone()).unwrap();
        assert_eq!(
            s.failure_strategy,
            Some(FailureStrategy::Unknown("RollbackSome".into()))
        );
        assert_eq!(serde_json::to_value(&s).unwrap(), later);
        let none: RolloutStrategy = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(none.failure_strategy, None);
        assert!(
            serde_json::to_value(&none)
                .unwrap()
                .get("failureStrategy")
                .is_none()
        );
    }

    #[test]
    fn only_the_replica_set_schema_has_failure_strategy() {
        let shared = serde_json::to_value(schemars::schema_for!(RolloutStrategy)).unwrap();
        assert!(shared["properties"].get("failureStrategy").is_none());
        let mut generator = SchemaGenerator::default();
        let mwrs =
            serde_json::to_value(rollout_strategy_with_failure_strategy(&mut generator)).unwrap();
        assert_eq!(
            mwrs["properties"]["failureStrategy"]["enum"],
            serde_json::json!(["AbortAll"])
        );
    }
}
