//! Whether the installed ManifestWorkReplicaSet CRD keeps the fields of the enabled opt-ins,
//! and the `OptInFieldsInstalled` condition that says so (our addition).
//!
//! Rollback and feedback aggregation read and write fields upstream's CRD does not have
//! (`ocm_api::crd::REPLICA_SET_EXTENSIONS`). On a hub that serves upstream's CRD (the default,
//! `ocm-crdgen` without `--extended`) the API server prunes them: a user's
//! `spec.feedbackAggregation` never reaches the controller, and the revisions it records in
//! the status are dropped. Rather than silently doing nothing, a controller with such an
//! opt-in on reads the installed CRD (and watches it while it runs) and, on every replica set
//! it reconciles, writes `OptInFieldsInstalled`:
//!
//! | status | reason | message |
//! |---|---|---|
//! | `True` | `FieldsInstalled` | which opt-ins' fields the CRD keeps |
//! | `False` | `FieldsPruned` | for each enabled opt-in, the fields the CRD prunes, and how to install the extended CRDs |
//!
//! It logs one warning when it finds the fields pruned (and one line when they are back),
//! not one per replica set or reconcile. Without these opt-ins the condition is not written
//! (and removed if an earlier run wrote it); when the CRD cannot be read (no permission to
//! get `customresourcedefinitions`), it is left as it is and the controller says so once.

use ocm_api::conditions::{ConditionStatus, NewCondition};
use ocm_api::crd::{ExtensionField, OptIn};

/// The condition type (our addition).
pub const CONDITION_OPT_IN_FIELDS_INSTALLED: &str = "OptInFieldsInstalled";
/// Reason: the installed CRD keeps the fields of every enabled opt-in.
pub const REASON_FIELDS_INSTALLED: &str = "FieldsInstalled";
/// Reason: the installed CRD prunes fields an enabled opt-in needs.
pub const REASON_FIELDS_PRUNED: &str = "FieldsPruned";
/// How long a controller that does not watch the CRD (its `reconcile` driven by another
/// runtime) trusts what it read of it.
pub const RECHECK_AFTER: std::time::Duration = std::time::Duration::from_secs(60);
/// The name of the ManifestWorkReplicaSet CRD.
pub const REPLICA_SET_CRD: &str = "manifestworkreplicasets.work.open-cluster-management.io";

/// What a controller knows of the installed CRD.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Installed {
    /// Not read yet.
    #[default]
    Unknown,
    /// It could not be read (the reason was logged).
    Unreadable,
    /// Read: the extension fields of the enabled opt-ins it prunes (none: all kept).
    Known(Vec<&'static ExtensionField>),
}

/// The opt-ins of a controller that need extension fields.
pub(crate) fn opt_ins(rollback: bool, feedback_aggregation: bool) -> Vec<OptIn> {
    let mut out = Vec::new();
    if rollback {
        out.push(OptIn::Rollback);
    }
    if feedback_aggregation {
        out.push(OptIn::FeedbackAggregation);
    }
    out
}

/// The `OptInFieldsInstalled` condition for the enabled opt-ins `enabled`, of which the
/// installed CRD prunes `missing`.
///
/// ```
/// use ocm_api::crd::{OptIn, REPLICA_SET_EXTENSIONS};
/// use ocm_work::replicaset::fields::fields_condition;
///
/// let pruned: Vec<_> = REPLICA_SET_EXTENSIONS
///     .iter()
///     .filter(|f| f.opt_in == OptIn::FeedbackAggregation)
///     .collect();
/// let c = fields_condition(&[OptIn::FeedbackAggregation], &pruned);
/// assert_eq!(c.reason, "FieldsPruned");
/// assert!(c.message.contains("feedback aggregation (--feedback-aggregation) needs spec.feedbackAggregation"));
/// assert!(c.message.contains("ocm-crdgen --extended"));
/// assert_eq!(fields_condition(&[OptIn::Rollback], &[]).reason, "FieldsInstalled");
/// ```
pub fn fields_condition(enabled: &[OptIn], missing: &[&ExtensionField]) -> NewCondition {
    if missing.is_empty() {
        let names: Vec<String> = enabled.iter().map(ToString::to_string).collect();
        return NewCondition::new(
            CONDITION_OPT_IN_FIELDS_INSTALLED,
            ConditionStatus::True,
            REASON_FIELDS_INSTALLED,
            format!(
                "the installed ManifestWorkReplicaSet CRD keeps the fields of {}",
                names.join(" and ")
            ),
        );
    }
    NewCondition::new(
        CONDITION_OPT_IN_FIELDS_INSTALLED,
        ConditionStatus::False,
        REASON_FIELDS_PRUNED,
        pruned_message(enabled, missing),
    )
}

/// What the condition and the log say of pruned fields.
pub(crate) fn pruned_message(enabled: &[OptIn], missing: &[&ExtensionField]) -> String {
    let needs: Vec<String> = enabled
        .iter()
        .filter_map(|opt_in| {
            let fields: Vec<&str> = missing
                .iter()
                .filter(|f| f.opt_in == *opt_in)
                .map(|f| f.field)
                .collect();
            (!fields.is_empty())
                .then(|| format!("{opt_in} ({}) needs {}", opt_in.flag(), fields.join(", ")))
        })
        .collect();
    format!(
        "the installed ManifestWorkReplicaSet CRD prunes fields of enabled opt-ins, which \
         therefore do not work: {}; install the extended CRDs (ocm-crdgen --extended | \
         kubectl apply -f -)",
        needs.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::crd::REPLICA_SET_EXTENSIONS;

    #[test]
    fn each_enabled_opt_in_names_its_pruned_fields() {
        let all: Vec<&ExtensionField> = REPLICA_SET_EXTENSIONS.iter().collect();
        let c = fields_condition(&[OptIn::Rollback, OptIn::FeedbackAggregation], &all);
        assert_eq!(c.status, ConditionStatus::False);
        assert_eq!(
            c.message,
            "the installed ManifestWorkReplicaSet CRD prunes fields of enabled opt-ins, which \
             therefore do not work: rollback (--rollback) needs spec.revisionHistoryLimit, \
             spec.placementRefs[].rolloutStrategy.failureStrategy, status.collisionCount, \
             status.currentRevision, status.updateRevision, status.abortedTime; feedback \
             aggregation (--feedback-aggregation) needs spec.feedbackAggregation, \
             status.feedbackAggregation; install the extended CRDs (ocm-crdgen --extended | \
             kubectl apply -f -)"
        );
        let c = fields_condition(&[OptIn::Rollback, OptIn::FeedbackAggregation], &[]);
        assert_eq!(
            c.message,
            "the installed ManifestWorkReplicaSet CRD keeps the fields of rollback and \
             feedback aggregation"
        );
    }
}
