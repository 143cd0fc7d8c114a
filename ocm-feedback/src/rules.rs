//! Feedback rules: evaluating a manifest's `feedbackRules` on its live object, and the
//! resulting `StatusFeedbackSynced` condition.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::work as consts;
use ocm_api::work::v1::{
    FeedbackRule, FeedbackType, FeedbackValue, ManifestCondition, StatusFeedbackResult,
};
use serde_json::Value;

use crate::error::Error;
use crate::tracker::values_changed;
use crate::value::ValueOptions;
use crate::wellknown::{
    FeedbackPath, GroupVersionKind, WellKnownStatusResolver, WellKnownStatusTable,
};

/// Feedback rules parsed once, to evaluate on every sync.
#[derive(Clone, Debug, Default)]
pub struct CompiledRules {
    rules: Vec<CompiledRule>,
}

#[derive(Clone, Debug)]
enum CompiledRule {
    WellKnown,
    JsonPaths(Vec<FeedbackPath>),
    /// A rule type this SDK does not know, as written.
    Unknown(String),
}

impl CompiledRules {
    /// Parses the JSONPaths of `rules`. Paths that do not parse are kept and reported as
    /// errors when evaluated.
    pub fn new(rules: &[FeedbackRule]) -> Self {
        let rules = rules
            .iter()
            .map(|rule| match &rule.type_ {
                FeedbackType::WellKnownStatus => CompiledRule::WellKnown,
                FeedbackType::JsonPaths => CompiledRule::JsonPaths(
                    rule.json_paths
                        .iter()
                        .flatten()
                        .map(FeedbackPath::from_api)
                        .collect(),
                ),
                other => CompiledRule::Unknown(other.to_string()),
            })
            .collect();
        Self { rules }
    }

    /// Whether there are no rules (the manifest then reports `NoStatusFeedbackSynced`).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

impl From<&[FeedbackRule]> for CompiledRules {
    fn from(rules: &[FeedbackRule]) -> Self {
        Self::new(rules)
    }
}

/// Evaluates feedback rules on live objects, as the OCM work agent's status reader.
///
/// ```
/// use ocm_api::work::v1::{FeedbackRule, FieldValue, JsonPath};
/// use ocm_feedback::FeedbackReader;
///
/// let job = serde_json::json!({
///     "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
///     "status": {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
/// });
/// let rules = [
///     FeedbackRule::well_known_status(),
///     FeedbackRule::json_paths([JsonPath::new("name", ".metadata.name")]),
/// ];
/// let feedback = FeedbackReader::new().read(&job, &rules);
/// assert!(feedback.is_synced());
/// assert_eq!(feedback.values()[0].name, "JobComplete");
/// assert_eq!(feedback.values()[0].field_value, FieldValue::string("True"));
/// assert_eq!(feedback.values()[2].field_value, FieldValue::string("pi"));
/// ```
#[derive(Clone, Copy)]
pub struct FeedbackReader<'r> {
    well_known: &'r dyn WellKnownStatusResolver,
    options: ValueOptions,
}

impl std::fmt::Debug for FeedbackReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedbackReader")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Default for FeedbackReader<'static> {
    fn default() -> Self {
        Self::new()
    }
}

impl FeedbackReader<'static> {
    /// A reader with upstream's defaults: upstream's well-known table, the
    /// `RawFeedbackJsonString` gate off, and a 1024-byte `JsonRaw` limit.
    pub fn new() -> Self {
        Self {
            well_known: WellKnownStatusTable::shared_upstream(),
            options: ValueOptions::default(),
        }
    }
}

impl<'r> FeedbackReader<'r> {
    /// Uses another table (or resolver) for `WellKnownStatus` rules.
    pub fn with_well_known<'s>(
        self,
        resolver: &'s dyn WellKnownStatusResolver,
    ) -> FeedbackReader<'s> {
        FeedbackReader {
            well_known: resolver,
            options: self.options,
        }
    }

    /// Turns the `RawFeedbackJsonString` feature gate on or off.
    #[must_use]
    pub fn raw_json_string(mut self, enabled: bool) -> Self {
        self.options.raw_json_string = enabled;
        self
    }

    /// Sets the longest `JsonRaw` value, in bytes (`--max-json-raw-length`).
    #[must_use]
    pub fn max_json_raw_length(mut self, bytes: usize) -> Self {
        self.options.max_json_raw_length = bytes;
        self
    }

    /// The value typing options in use.
    pub fn options(&self) -> ValueOptions {
        self.options
    }

    /// Evaluates `rules` (parsing them on the way) on `object`.
    pub fn read(&self, object: &Value, rules: &[FeedbackRule]) -> Feedback {
        self.read_compiled(object, &CompiledRules::new(rules))
    }

    /// Evaluates already parsed rules on `object`: the values of every rule in order
    /// (duplicates kept, as upstream), and the errors, grouped by rule.
    pub fn read_compiled(&self, object: &Value, rules: &CompiledRules) -> Feedback {
        let mut feedback = Feedback {
            values: Vec::new(),
            errors: Vec::new(),
            has_rules: !rules.is_empty(),
        };
        for rule in &rules.rules {
            let errors = self.apply(object, rule, &mut feedback.values);
            if !errors.is_empty() {
                feedback.errors.push(errors);
            }
        }
        feedback
    }

    /// Evaluates one rule, as upstream's `GetValuesByRule`: the values found and the errors.
    pub fn values_by_rule(
        &self,
        object: &Value,
        rule: &FeedbackRule,
    ) -> (Vec<FeedbackValue>, Vec<Error>) {
        let compiled = CompiledRules::new(std::slice::from_ref(rule));
        let mut values = Vec::new();
        let mut errors = Vec::new();
        for rule in &compiled.rules {
            errors.extend(self.apply(object, rule, &mut values));
        }
        (values, errors)
    }

    fn apply(
        &self,
        object: &Value,
        rule: &CompiledRule,
        values: &mut Vec<FeedbackValue>,
    ) -> Vec<Error> {
        let mut errors = Vec::new();
        let gvk = GroupVersionKind::of(object);
        let (paths, check_version) = match rule {
            CompiledRule::WellKnown => match self.well_known.paths(&gvk) {
                Some(paths) if !paths.is_empty() => (paths, false),
                _ => {
                    errors.push(Error::UnknownWellKnownKind {
                        gvk: gvk.to_string(),
                    });
                    return errors;
                }
            },
            CompiledRule::JsonPaths(paths) => (paths.as_slice(), true),
            CompiledRule::Unknown(type_) => {
                errors.push(Error::UnknownRuleType {
                    type_: type_.clone(),
                });
                return errors;
            }
        };
        for path in paths {
            if check_version && path.version().is_some_and(|v| v != gvk.version) {
                errors.push(Error::VersionMismatch {
                    name: path.name().to_owned(),
                });
                continue;
            }
            match path.evaluate(object, self.options) {
                Ok(Some(field_value)) => values.push(FeedbackValue {
                    name: path.name().to_owned(),
                    field_value,
                }),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
        errors
    }
}

/// The outcome of evaluating a manifest's feedback rules: the values (kept even when some
/// rules failed, as upstream) and the errors.
#[derive(Clone, Debug, PartialEq)]
pub struct Feedback {
    values: Vec<FeedbackValue>,
    errors: Vec<Vec<Error>>,
    has_rules: bool,
}

impl Feedback {
    /// The outcome for a manifest without feedback rules: no values, and
    /// `StatusFeedbackSynced=True` with reason `NoStatusFeedbackSynced`.
    pub fn no_rules() -> Self {
        Self {
            values: Vec::new(),
            errors: Vec::new(),
            has_rules: false,
        }
    }

    /// The values found, in rule order.
    pub fn values(&self) -> &[FeedbackValue] {
        &self.values
    }

    /// Every error, in rule order.
    pub fn errors(&self) -> impl Iterator<Item = &Error> {
        self.errors.iter().flatten()
    }

    /// Whether every rule evaluated without error.
    pub fn is_synced(&self) -> bool {
        self.errors.is_empty()
    }

    /// The errors as upstream aggregates them (Kubernetes `utilerrors.Aggregate`: one error
    /// as is, several as `[e1, e2]` with repeated texts dropped); `None` without errors.
    pub fn error_message(&self) -> Option<String> {
        match self.errors.as_slice() {
            [] => None,
            [only] => Some(aggregate(only.iter())),
            all => Some(aggregate(all.iter().flatten())),
        }
    }

    /// The manifest's `StatusFeedbackSynced` condition (no transition time or generation:
    /// upstream sets neither an observed generation nor anything but the transition time).
    pub fn condition(&self) -> NewCondition {
        let (status, reason, message) = if !self.has_rules {
            (
                ConditionStatus::True,
                consts::REASON_NO_STATUS_FEEDBACK_SYNCED,
                String::new(),
            )
        } else if let Some(errors) = self.error_message() {
            (
                ConditionStatus::False,
                consts::REASON_STATUS_FEEDBACK_SYNC_FAILED,
                format!(
                    "{}{errors}",
                    consts::MESSAGE_STATUS_FEEDBACK_SYNC_FAILED_PREFIX
                ),
            )
        } else {
            (
                ConditionStatus::True,
                consts::REASON_STATUS_FEEDBACK_SYNCED,
                String::new(),
            )
        };
        NewCondition::new(
            consts::CONDITION_STATUS_FEEDBACK_SYNCED,
            status,
            reason,
            message,
        )
    }

    /// The values as the manifest's `statusFeedback` (no `values` field when empty).
    pub fn to_result(&self) -> StatusFeedbackResult {
        StatusFeedbackResult {
            values: (!self.values.is_empty()).then(|| self.values.clone()),
        }
    }

    /// Records the outcome in a manifest's status entry the way upstream's status controller
    /// does: when the values differ from the stored ones, the `StatusFeedbackSynced` condition
    /// is removed first (so its transition time is refreshed even if its status stays) and the
    /// values are replaced; then the condition is set with `meta.SetStatusCondition` semantics.
    /// Returns whether the entry changed (if not, there is nothing to write back).
    pub fn apply_to(&self, manifest: &mut ManifestCondition, now: &Time) -> bool {
        let stored = manifest
            .status_feedbacks
            .as_ref()
            .map(StatusFeedbackResult::values);
        let values_differ = values_changed(stored, &self.values);
        if values_differ {
            conditions::remove(
                &mut manifest.conditions,
                consts::CONDITION_STATUS_FEEDBACK_SYNCED,
            );
            manifest.status_feedbacks = Some(self.to_result());
        }
        let condition_changed = conditions::set(&mut manifest.conditions, self.condition(), now);
        values_differ || condition_changed
    }

    /// Splits the outcome into the values and the condition.
    pub fn into_parts(self) -> (Vec<FeedbackValue>, NewCondition) {
        let condition = self.condition();
        (self.values, condition)
    }
}

/// Kubernetes' aggregate error text over `errors`.
fn aggregate<'e>(errors: impl Iterator<Item = &'e Error>) -> String {
    let texts: Vec<String> = errors.map(ToString::to_string).collect();
    if let [only] = texts.as_slice() {
        return only.clone();
    }
    let mut seen: Vec<&str> = Vec::new();
    for text in &texts {
        if !seen.contains(&text.as_str()) {
            seen.push(text);
        }
    }
    let joined = seen.join(", ");
    if seen.len() == 1 {
        joined
    } else {
        format!("[{joined}]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::v1::{FeedbackType, JsonPath};
    use serde_json::json;

    #[test]
    fn a_rule_type_this_sdk_does_not_know_is_reported_and_the_others_still_read() {
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
            "status": {"succeeded": 1}});
        let mut unknown = FeedbackRule::json_paths([JsonPath::new("name", ".metadata.name")]);
        unknown.type_ = FeedbackType::from("CELExpressions");
        let rules = [
            unknown,
            FeedbackRule::json_paths([JsonPath::new("name", ".metadata.name")]),
        ];
        let feedback = FeedbackReader::new().read(&job, &rules);
        assert!(!feedback.is_synced());
        assert_eq!(
            feedback.error_message().as_deref(),
            Some("unrecognized feedback rule type CELExpressions")
        );
        assert_eq!(feedback.values().len(), 1);
        assert_eq!(feedback.values()[0].name, "name");
    }
}
