//! The pure status builder of the work agent: a ManifestWork's status from the apply results
//! and the live objects, with no I/O.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::work as wc;
use ocm_api::work::v1::{
    ManifestCondition, ManifestConfigOption, ManifestResourceMeta, ManifestResourceStatus,
    ManifestWorkStatus,
};
use ocm_feedback::{CompiledRules, Feedback, FeedbackReader};
use serde_json::Value;

use super::{
    NewManifestCondition, merge_manifest_conditions, work_applied_condition,
    work_available_condition, work_rule_conditions,
};
use crate::apply::engine::ManifestApply;

/// What the status refresh found for one manifest's resource.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Observed<'a> {
    /// The manifest's resource meta lacks its resource, version or name: nothing was read.
    IncompleteMeta,
    /// The resource does not exist.
    Missing,
    /// It could not be read (its kind did not resolve, or the server refused); the error.
    Failed(&'a str),
    /// The live object.
    Found(&'a Value),
}

/// Builds a ManifestWork's status the way upstream's agent controllers do (the apply
/// controller's `Applied` conditions, the available-status controller's `Available`,
/// `StatusFeedbackSynced` and condition-rule conditions and the aggregated work conditions),
/// for one generation of the work at one instant.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
/// use ocm_api::work::v1::{ManifestCondition, ManifestResourceMeta};
/// use ocm_work::status::{Observed, StatusBuilder};
/// use serde_json::json;
///
/// let builder = StatusBuilder::new(1, Time("2030-01-01T00:00:00Z".parse().unwrap()));
/// let mut entry = ManifestCondition {
///     resource_meta: ManifestResourceMeta::default(),
///     status_feedbacks: None,
///     conditions: vec![],
/// };
/// builder.refresh_manifest(&mut entry, Observed::Missing, None);
/// assert_eq!(entry.conditions[0].reason, "ResourceNotAvailable");
///
/// let deployment = json!({"kind": "Deployment", "status": {"readyReplicas": 2}});
/// builder.refresh_manifest(&mut entry, Observed::Found(&deployment), None);
/// assert_eq!(entry.conditions[0].reason, "ResourceAvailable");
/// assert_eq!(entry.conditions[1].reason, "NoStatusFeedbackSynced");
/// ```
#[derive(Clone, Debug)]
pub struct StatusBuilder {
    generation: i64,
    now: Time,
    feedback: FeedbackReader<'static>,
}

impl StatusBuilder {
    /// A builder for generation `generation` of a work, with condition times `now`, reading
    /// feedback with upstream's defaults.
    pub fn new(generation: i64, now: Time) -> Self {
        Self {
            generation,
            now,
            feedback: FeedbackReader::new(),
        }
    }

    /// Reads status feedback with `reader` (the `RawFeedbackJsonString` gate, the longest raw
    /// value).
    #[must_use]
    pub fn feedback_reader(mut self, reader: FeedbackReader<'static>) -> Self {
        self.feedback = reader;
        self
    }

    /// The generation conditions are computed for.
    pub fn generation(&self) -> i64 {
        self.generation
    }

    /// Records an apply pass: each manifest's `Applied` condition merged into its stored entry
    /// (matched by resource meta, see [`merge_manifest_conditions`]; entries of manifests no
    /// longer in the work are dropped), and the work's `Applied` condition.
    pub fn apply_results(&self, status: &mut ManifestWorkStatus, results: &[ManifestApply]) {
        let new_entries: Vec<NewManifestCondition> = results
            .iter()
            .map(|r| NewManifestCondition {
                resource_meta: with_every_field(&r.meta),
                conditions: vec![r.applied_condition(self.generation)],
            })
            .collect();
        let existing = status
            .resource_status
            .as_ref()
            .and_then(|r| r.manifests.clone())
            .unwrap_or_default();
        let manifests = merge_manifest_conditions(&existing, &new_entries, &self.now);
        let work_conditions = status.conditions.get_or_insert_with(Vec::new);
        if let Some(applied) = work_applied_condition(&manifests, self.generation) {
            conditions::set(work_conditions, applied, &self.now);
        }
        status.resource_status = Some(ManifestResourceStatus {
            manifests: Some(manifests),
        });
    }

    /// Whether the status is refreshed at all: only once manifests have been applied (the
    /// status has manifest entries and the work an `Applied` condition), as upstream's
    /// available-status controller. Makes sure the status has a condition list when it has
    /// manifest entries.
    pub fn begin_refresh(&self, status: &mut ManifestWorkStatus) -> bool {
        if status
            .resource_status
            .as_ref()
            .and_then(|r| r.manifests.as_ref())
            .is_none()
        {
            return false;
        }
        let conds = status.conditions.get_or_insert_with(Vec::new);
        conditions::find(conds, wc::CONDITION_APPLIED).is_some()
    }

    /// Refreshes one manifest's entry from what was `observed` and its manifest `config`:
    /// `Available`; then, when the object was found, its status feedback
    /// (`StatusFeedbackSynced`, with [`Feedback::apply_to`]'s transition-time rule) and its
    /// condition rules (conditions of rules computed for another generation are pruned).
    /// Returns the feedback read, when feedback rules were evaluated.
    pub fn refresh_manifest(
        &self,
        entry: &mut ManifestCondition,
        observed: Observed<'_>,
        config: Option<&ManifestConfigOption>,
    ) -> Option<Feedback> {
        let (status, reason, message) = match observed {
            Observed::IncompleteMeta => (
                ConditionStatus::Unknown,
                wc::REASON_INCOMPLETE_RESOURCE_META,
                wc::MESSAGE_INCOMPLETE_RESOURCE_META.to_string(),
            ),
            Observed::Missing => (
                ConditionStatus::False,
                wc::REASON_RESOURCE_NOT_AVAILABLE,
                wc::MESSAGE_RESOURCE_NOT_AVAILABLE.to_string(),
            ),
            Observed::Failed(error) => (
                ConditionStatus::Unknown,
                wc::REASON_FETCHING_RESOURCE_FAILED,
                format!("{}{error}", wc::MESSAGE_FETCHING_RESOURCE_FAILED_PREFIX),
            ),
            Observed::Found(_) => (
                ConditionStatus::True,
                wc::REASON_RESOURCE_AVAILABLE,
                wc::MESSAGE_RESOURCE_AVAILABLE.to_string(),
            ),
        };
        conditions::set(
            &mut entry.conditions,
            NewCondition::new(wc::CONDITION_AVAILABLE, status, reason, message),
            &self.now,
        );
        let Observed::Found(object) = observed else {
            return None;
        };
        let feedback_rules = config
            .and_then(|c| c.feedback_rules.as_deref())
            .unwrap_or_default();
        let feedback = if feedback_rules.is_empty() {
            Feedback::no_rules()
        } else {
            self.feedback
                .read_compiled(object, &CompiledRules::new(feedback_rules))
        };
        feedback.apply_to(entry, &self.now);
        // The values are written back on every refresh, an empty result included.
        entry.status_feedbacks = Some(feedback.to_result());
        let condition_rules = config
            .and_then(|c| c.condition_rules.as_deref())
            .unwrap_or_default();
        for condition in crate::rules::evaluate_all(condition_rules, object, self.generation) {
            conditions::set(&mut entry.conditions, condition, &self.now);
        }
        prune_stale_rule_conditions(&mut entry.conditions, self.generation);
        (!feedback_rules.is_empty()).then_some(feedback)
    }

    /// The work's aggregated conditions from its manifests' (after a refresh): `Available`
    /// and one condition per condition-rule type; work conditions of rules computed for
    /// another generation are pruned.
    pub fn aggregate(&self, status: &mut ManifestWorkStatus) {
        let manifests = status
            .resource_status
            .as_ref()
            .and_then(|r| r.manifests.as_deref())
            .unwrap_or_default();
        let available = work_available_condition(manifests, self.generation);
        let rules = work_rule_conditions(manifests, self.generation);
        let conds = status.conditions.get_or_insert_with(Vec::new);
        conditions::set(conds, available, &self.now);
        for rule_condition in rules {
            conditions::set(conds, rule_condition, &self.now);
        }
        prune_stale_rule_conditions(conds, self.generation);
    }
}

/// Drops condition-rule conditions (reason prefix `ConditionRule`) computed for another
/// generation, as upstream prunes them.
pub fn prune_stale_rule_conditions(list: &mut Vec<Condition>, generation: i64) {
    list.retain(|c| {
        !c.reason.starts_with(wc::CONDITION_RULE_REASON_PREFIX)
            || c.observed_generation == Some(generation)
    });
}

/// `meta` with every field present, empty strings included, as upstream's agent writes a
/// manifest's `resourceMeta` (its fields have no `omitempty`): hub tools read `group: ""` for
/// the core group and `namespace: ""` for cluster-scoped resources.
pub fn with_every_field(meta: &ManifestResourceMeta) -> ManifestResourceMeta {
    let field = |v: &Option<String>| Some(v.clone().unwrap_or_default());
    ManifestResourceMeta {
        ordinal: meta.ordinal,
        group: field(&meta.group),
        version: field(&meta.version),
        kind: field(&meta.kind),
        resource: field(&meta.resource),
        name: field(&meta.name),
        namespace: field(&meta.namespace),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::engine::ApplyError;
    use ocm_api::work::v1::{
        ConditionRule, FeedbackRule, FieldValue, JsonPath, ResourceIdentifier,
    };
    use serde_json::json;

    fn t(s: &str) -> Time {
        Time(s.parse().unwrap())
    }

    fn meta(ordinal: i32, name: &str) -> ManifestResourceMeta {
        ManifestResourceMeta {
            ordinal,
            group: None,
            version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            resource: Some("configmaps".into()),
            name: Some(name.into()),
            namespace: Some("default".into()),
        }
    }

    fn result(ordinal: i32, name: &str, outcome: Result<Value, ApplyError>) -> ManifestApply {
        ManifestApply {
            meta: meta(ordinal, name),
            resolved: None,
            config: None,
            outcome,
        }
    }

    fn config(feedback: Option<&str>, rule: Option<ConditionRule>) -> ManifestConfigOption {
        let mut config =
            ManifestConfigOption::new(ResourceIdentifier::new("", "configmaps", "default", "a"));
        config.feedback_rules =
            feedback.map(|p| vec![FeedbackRule::json_paths([JsonPath::new("value", p)])]);
        config.condition_rules = rule.map(|r| vec![r]);
        config
    }

    fn cel_rule(condition: &str, expression: &str) -> ConditionRule {
        serde_json::from_value(json!({"condition": condition, "type": "CEL",
            "celExpressions": [expression]}))
        .unwrap()
    }

    fn reason<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a str> {
        conditions::find(conditions, type_).map(|c| c.reason.as_str())
    }

    #[test]
    fn apply_results_set_manifest_and_work_applied_conditions() {
        let builder = StatusBuilder::new(2, t("2030-01-01T00:00:00Z"));
        let mut status = ManifestWorkStatus::default();
        assert!(!builder.begin_refresh(&mut status), "nothing applied yet");
        builder.apply_results(
            &mut status,
            &[
                result(0, "a", Ok(json!({}))),
                result(1, "b", Err(ApplyError::Api("refused".into()))),
            ],
        );
        let manifests = status.manifests();
        assert_eq!(manifests.len(), 2);
        // Every field written, empty group included.
        assert_eq!(manifests[0].resource_meta.group.as_deref(), Some(""));
        assert_eq!(
            reason(&manifests[0].conditions, "Applied"),
            Some("AppliedManifestComplete")
        );
        assert_eq!(
            manifests[1].conditions[0].message,
            "Failed to apply manifest: refused"
        );
        let conds = status.conditions.as_deref().unwrap();
        assert_eq!(reason(conds, "Applied"), Some("AppliedManifestWorkFailed"));
        assert_eq!(conds[0].observed_generation, Some(2));
        assert!(builder.begin_refresh(&mut status));

        // A manifest dropped from the work loses its entry.
        builder.apply_results(&mut status, &[result(0, "a", Ok(json!({})))]);
        assert_eq!(status.manifests().len(), 1);
        assert_eq!(
            reason(status.conditions.as_deref().unwrap(), "Applied"),
            Some("AppliedManifestWorkComplete")
        );
    }

    #[test]
    fn begin_refresh_adds_a_condition_list_to_an_applied_status() {
        let builder = StatusBuilder::new(1, t("2030-01-01T00:00:00Z"));
        let mut status = ManifestWorkStatus {
            resource_status: Some(ManifestResourceStatus {
                manifests: Some(vec![]),
            }),
            ..ManifestWorkStatus::default()
        };
        assert!(!builder.begin_refresh(&mut status));
        assert_eq!(status.conditions, Some(vec![]));
    }

    #[test]
    fn availability_follows_what_was_observed() {
        let builder = StatusBuilder::new(1, t("2030-01-01T00:00:00Z"));
        let object = json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
        for (observed, status, reason_, message) in [
            (
                Observed::IncompleteMeta,
                "Unknown",
                "IncompleteResourceMeta",
                "Resource meta is incomplete",
            ),
            (
                Observed::Missing,
                "False",
                "ResourceNotAvailable",
                "Resource is not available",
            ),
            (
                Observed::Failed("boom"),
                "Unknown",
                "FetchingResourceFailed",
                "Failed to fetch resource: boom",
            ),
            (
                Observed::Found(&object),
                "True",
                "ResourceAvailable",
                "Resource is available",
            ),
        ] {
            let mut entry = ManifestCondition {
                resource_meta: meta(0, "a"),
                status_feedbacks: None,
                conditions: vec![],
            };
            let feedback = builder.refresh_manifest(&mut entry, observed, None);
            assert!(feedback.is_none(), "no feedback rules");
            let available = conditions::find(&entry.conditions, "Available").unwrap();
            assert_eq!(
                (
                    available.status.as_str(),
                    available.reason.as_str(),
                    available.message.as_str()
                ),
                (status, reason_, message),
                "{observed:?}"
            );
            // Feedback is only written for an object that was found.
            assert_eq!(
                entry.status_feedbacks.is_some(),
                matches!(observed, Observed::Found(_))
            );
            assert_eq!(
                reason(&entry.conditions, "StatusFeedbackSynced"),
                matches!(observed, Observed::Found(_)).then_some("NoStatusFeedbackSynced")
            );
        }
    }

    #[test]
    fn feedback_values_restart_the_synced_transition_only_when_they_change() {
        let t0 = t("2030-01-01T00:00:00Z");
        let t1 = t("2030-01-01T00:01:00Z");
        let t2 = t("2030-01-01T00:02:00Z");
        let config = config(Some(".data.k"), None);
        let mut entry = ManifestCondition {
            resource_meta: meta(0, "a"),
            status_feedbacks: None,
            conditions: vec![],
        };
        let v1 = json!({"data": {"k": "one"}});
        let v2 = json!({"data": {"k": "two"}});
        let feedback = StatusBuilder::new(1, t0.clone())
            .refresh_manifest(&mut entry, Observed::Found(&v1), Some(&config))
            .unwrap();
        assert!(feedback.is_synced());
        let value = |e: &ManifestCondition| {
            e.status_feedbacks
                .as_ref()
                .and_then(|f| f.get("value").cloned())
        };
        let synced_at = |e: &ManifestCondition| {
            conditions::find(&e.conditions, "StatusFeedbackSynced")
                .map(|c| c.last_transition_time.clone())
        };
        assert_eq!(value(&entry), Some(FieldValue::string("one")));
        assert_eq!(synced_at(&entry), Some(t0.clone()));
        StatusBuilder::new(1, t1).refresh_manifest(&mut entry, Observed::Found(&v1), Some(&config));
        assert_eq!(synced_at(&entry), Some(t0), "same values: same transition");
        StatusBuilder::new(1, t2.clone()).refresh_manifest(
            &mut entry,
            Observed::Found(&v2),
            Some(&config),
        );
        assert_eq!(value(&entry), Some(FieldValue::string("two")));
        assert_eq!(synced_at(&entry), Some(t2), "new values: new transition");
    }

    #[test]
    fn rule_conditions_are_evaluated_pruned_and_aggregated() {
        let now = t("2030-01-01T00:00:00Z");
        let object = json!({"data": {"ready": "yes"}});
        let rule = config(None, Some(cel_rule("Ready", "object.data.ready == 'yes'")));
        let mut status = ManifestWorkStatus::default();
        let builder = StatusBuilder::new(1, now.clone());
        builder.apply_results(&mut status, &[result(0, "a", Ok(json!({})))]);
        assert!(builder.begin_refresh(&mut status));
        let manifests = status
            .resource_status
            .as_mut()
            .and_then(|r| r.manifests.as_mut())
            .unwrap();
        builder.refresh_manifest(&mut manifests[0], Observed::Found(&object), Some(&rule));
        builder.aggregate(&mut status);
        let conds = status.conditions.as_deref().unwrap();
        assert_eq!(reason(conds, "Available"), Some("ResourcesAvailable"));
        assert_eq!(reason(conds, "Ready"), Some("ConditionRulesAggregated"));

        // Generation 2 without the rule: the rule's conditions go, on the manifest and the work.
        let builder = StatusBuilder::new(2, now);
        builder.apply_results(&mut status, &[result(0, "a", Ok(json!({})))]);
        let manifests = status
            .resource_status
            .as_mut()
            .and_then(|r| r.manifests.as_mut())
            .unwrap();
        builder.refresh_manifest(&mut manifests[0], Observed::Found(&object), None);
        assert!(conditions::find(&manifests[0].conditions, "Ready").is_none());
        builder.aggregate(&mut status);
        let conds = status.conditions.as_deref().unwrap();
        assert!(conditions::find(conds, "Ready").is_none());
        assert_eq!(
            conditions::find(conds, "Available")
                .unwrap()
                .observed_generation,
            Some(2)
        );
    }
}
