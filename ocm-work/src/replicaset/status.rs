//! The status a ManifestWorkReplicaSet reports: per-placement and total summaries, and the
//! `PlacementVerified`, `PlacementRolledOut` and `ManifestworkApplied` conditions.
//!
//! Every condition is written with an empty message, as upstream does, with two exceptions:
//! `InvalidManifestWorkName` (upstream's message, see [`super::validate_owner_label`]) and,
//! our addition, a `PlacementRolledOut=False` rollout that cannot advance because its works
//! report no `Progressing` condition ([`stalled_rollout_message`]).
//!
//! Also ours: a replica set the controller cannot decode gets `ManifestworkApplied=False` with
//! reason [`REASON_DECODE_FAILED`] and the decode error, naming the field at fault, as its
//! message ([`undecodable`]); a Placement or PlacementDecision it cannot decode makes
//! `PlacementVerified=False/NotAsExpected` with a message naming it
//! ([`placement_undecodable`]). Upstream's controller cannot read such objects either: its
//! informer fails as a whole, and with it every replica set.
//!
//! Also our addition: `summary.desiredTotal` (the replica set's and each placement's) is the
//! number of clusters the placements selected (`status.numberOfSelectedClusters`, summed),
//! the total upstream's controller compares its succeeded works with to decide
//! `PlacementRolledOut`. Upstream's controller leaves `desiredTotal` at 0; `updated` stays 0
//! here as there.

use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::{replicaset as rc, work as wc};
use ocm_api::work::v1::{ManifestWork, ManifestWorkSpec};

use super::{spec_equal, values};

/// Counts of a placement's works by condition (upstream's summary fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkCounts {
    /// Works with `Applied=True`.
    pub applied: i64,
    /// Works with `Progressing=True`.
    pub progressing: i64,
    /// Works with `Available=True`.
    pub available: i64,
    /// Works with `Degraded=True`.
    pub degraded: i64,
}

impl WorkCounts {
    /// Counts the works that are not being deleted and match the current `template`.
    pub fn count<'a>(
        works: impl IntoIterator<Item = &'a ManifestWork>,
        template: &ManifestWorkSpec,
    ) -> Self {
        Self::count_matching(works, |w| spec_equal(&w.spec, template))
    }

    /// Counts the works that are not being deleted and for which `current` says they hold
    /// the current template (per cluster, with per-cluster values).
    pub fn count_matching<'a>(
        works: impl IntoIterator<Item = &'a ManifestWork>,
        mut current: impl FnMut(&ManifestWork) -> bool,
    ) -> Self {
        let mut counts = Self::default();
        for work in works {
            if work.metadata.deletion_timestamp.is_some() || !current(work) {
                continue;
            }
            let conds = work
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_deref())
                .unwrap_or_default();
            let yes = |t: &str| i64::from(conditions::is_true(conds, t));
            counts.applied += yes(wc::CONDITION_APPLIED);
            counts.progressing += yes(wc::CONDITION_PROGRESSING);
            counts.available += yes(wc::CONDITION_AVAILABLE);
            counts.degraded += yes(wc::CONDITION_DEGRADED);
        }
        counts
    }

    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &Self) {
        self.applied += other.applied;
        self.progressing += other.progressing;
        self.available += other.available;
        self.degraded += other.degraded;
    }
}

/// The `availableDecisionGroups` text of a placement summary:
/// `"<decision groups> (<works> / <selected clusters> clusters applied)"`.
pub fn available_decision_groups(decision_groups: usize, works: usize, selected: i64) -> String {
    format!("{decision_groups} ({works} / {selected} clusters applied)")
}

/// `PlacementVerified`: `True/AsExpected` when some work exists, else
/// `False/PlacementDecisionEmpty` (when no work exists because something failed, the deploy
/// pass writes [`placement_not_applied`] instead).
pub fn placement_verified(total_works: usize) -> NewCondition {
    if total_works == 0 {
        NewCondition::new(
            rc::CONDITION_PLACEMENT_VERIFIED,
            ConditionStatus::False,
            rc::REASON_PLACEMENT_DECISION_EMPTY,
            "",
        )
    } else {
        NewCondition::new(
            rc::CONDITION_PLACEMENT_VERIFIED,
            ConditionStatus::True,
            rc::REASON_AS_EXPECTED,
            "",
        )
    }
}

/// `PlacementVerified=False/NotAsExpected` with the failures as `message`: the replica set
/// has no work because every apply failed, or its rollout could not be computed, not because
/// its placements selected nothing (upstream ocm#1703; before it, upstream said
/// `PlacementDecisionEmpty` here). The deploy pass writes it only when no work exists and
/// some step failed; the message is the failures joined as Go's error aggregate joins them.
///
/// ```
/// use ocm_work::replicaset::status::placement_not_applied;
///
/// let c = placement_not_applied("admission webhook denied the request");
/// assert_eq!((c.type_.as_str(), c.reason.as_str()), ("PlacementVerified", "NotAsExpected"));
/// assert_eq!(c.message, "admission webhook denied the request");
/// ```
pub fn placement_not_applied(message: impl Into<String>) -> NewCondition {
    NewCondition::new(
        rc::CONDITION_PLACEMENT_VERIFIED,
        ConditionStatus::False,
        rc::REASON_NOT_AS_EXPECTED,
        message,
    )
}

/// `PlacementVerified=False/PlacementDecisionNotFound`: a referenced placement is missing.
pub fn placement_not_found() -> NewCondition {
    NewCondition::new(
        rc::CONDITION_PLACEMENT_VERIFIED,
        ConditionStatus::False,
        rc::REASON_PLACEMENT_DECISION_NOT_FOUND,
        "",
    )
}

/// `PlacementVerified=False/NotAsExpected`: the rollout could not be computed.
pub fn placement_not_as_expected() -> NewCondition {
    placement_not_applied("")
}

/// `PlacementRolledOut`: `True/Complete` when every selected cluster succeeded (so also when
/// nothing is selected), else `False/Progressing`.
pub fn placement_rolled_out(selected_total: i64, succeeded_total: i64) -> NewCondition {
    if selected_total == succeeded_total {
        NewCondition::new(
            rc::CONDITION_PLACEMENT_ROLLED_OUT,
            ConditionStatus::True,
            rc::REASON_COMPLETE,
            "",
        )
    } else {
        NewCondition::new(
            rc::CONDITION_PLACEMENT_ROLLED_OUT,
            ConditionStatus::False,
            rc::REASON_PROGRESSING,
            "",
        )
    }
}

/// The `PlacementRolledOut` message of a rollout that cannot advance (our addition: upstream
/// writes no message): `stalled` of the `works` at the current template are applied but have
/// no `Progressing` condition, and upstream's rule counts a work as rolled out only at
/// `Progressing=False`. The message names both ways out.
///
/// ```
/// let m = ocm_work::replicaset::status::stalled_rollout_message(2, 3);
/// assert!(m.starts_with("2 of 3 ManifestWorks are applied but report no Progressing condition"));
/// assert!(m.contains("SuccessCriteria::AppliedAndAvailable"));
/// ```
pub fn stalled_rollout_message(stalled: usize, works: usize) -> String {
    format!(
        "{stalled} of {works} ManifestWorks are applied but report no Progressing condition, so \
         the rollout cannot advance: a work counts as rolled out only when Progressing is False, \
         and the work agent sets Progressing only from condition rules. Add a condition rule \
         setting Progressing to the manifestWorkTemplate, or opt in to counting applied and \
         available works as rolled out with SuccessCriteria::AppliedAndAvailable \
         (ocm-hub-controller --success-criteria applied-and-available)"
    )
}

/// `ManifestworkApplied` from the total work count and the summed condition counts.
/// `verified_reason` is the reason of the current `PlacementVerified` condition.
pub fn manifestwork_applied(
    total: i64,
    counts: &WorkCounts,
    verified_reason: Option<&str>,
) -> NewCondition {
    let (status, reason) = if total == 0 {
        let reason = if verified_reason == Some(rc::REASON_PLACEMENT_DECISION_EMPTY) {
            rc::REASON_PLACEMENT_DECISION_EMPTY
        } else {
            rc::REASON_NOT_AS_EXPECTED
        };
        (ConditionStatus::False, reason)
    } else if counts.available == total && counts.progressing == 0 && counts.degraded == 0 {
        (ConditionStatus::True, rc::REASON_AS_EXPECTED)
    } else if counts.progressing > 0 && counts.degraded == 0 {
        (ConditionStatus::False, rc::REASON_PROCESSING)
    } else {
        (ConditionStatus::False, rc::REASON_NOT_AS_EXPECTED)
    };
    NewCondition::new(rc::CONDITION_MANIFESTWORK_APPLIED, status, reason, "")
}

/// `ManifestworkApplied=False/InvalidManifestWorkName` with the validation message.
pub fn invalid_manifest_work_name(message: impl Into<String>) -> NewCondition {
    NewCondition::new(
        rc::CONDITION_MANIFESTWORK_APPLIED,
        ConditionStatus::False,
        rc::REASON_INVALID_MANIFEST_WORK_NAME,
        message,
    )
}

/// The reason of `ManifestworkApplied=False` on a replica set that cannot be decoded (our
/// addition). `ManifestworkApplied` is the condition upstream sets when a replica set itself
/// is unusable (`InvalidManifestWorkName`), and the one `kubectl get` shows.
pub const REASON_DECODE_FAILED: &str = "ManifestWorkReplicaSetDecodeFailed";

/// `ManifestworkApplied=False/ManifestWorkReplicaSetDecodeFailed`: the replica set cannot be
/// decoded; `error` names the field at fault.
///
/// ```
/// let c = ocm_work::replicaset::status::undecodable("spec.placementRefs[0]: invalid type");
/// assert_eq!(c.reason, "ManifestWorkReplicaSetDecodeFailed");
/// assert_eq!(c.message, "the ManifestWorkReplicaSet cannot be decoded: spec.placementRefs[0]: invalid type");
/// ```
pub fn undecodable(error: &str) -> NewCondition {
    NewCondition::new(
        rc::CONDITION_MANIFESTWORK_APPLIED,
        ConditionStatus::False,
        REASON_DECODE_FAILED,
        format!("the ManifestWorkReplicaSet cannot be decoded: {error}"),
    )
}

/// `PlacementVerified=False/NotAsExpected` naming the Placements or PlacementDecisions that
/// cannot be decoded (`problems`, one sentence each; our addition: upstream's message is empty).
pub fn placement_undecodable(problems: &[String]) -> NewCondition {
    NewCondition::new(
        rc::CONDITION_PLACEMENT_VERIFIED,
        ConditionStatus::False,
        rc::REASON_NOT_AS_EXPECTED,
        problems.join("; "),
    )
}

/// `ClusterValuesResolved` (our addition, written only with the per-cluster values opt-in):
/// `True/AsExpected` when no cluster failed, else `False/ClusterValuesInvalid` naming the
/// clusters that got no work and why ([`values::invalid_message`]).
pub fn cluster_values_resolved(failed: &[&crate::Error]) -> NewCondition {
    if failed.is_empty() {
        NewCondition::new(
            values::CONDITION_CLUSTER_VALUES_RESOLVED,
            ConditionStatus::True,
            values::REASON_CLUSTER_VALUES_RESOLVED,
            "",
        )
    } else {
        NewCondition::new(
            values::CONDITION_CLUSTER_VALUES_RESOLVED,
            ConditionStatus::False,
            values::REASON_CLUSTER_VALUES_INVALID,
            values::invalid_message(failed),
        )
    }
}
