//! The pure per-work plan: what one sync of a ManifestWork does, and when it runs again.
//!
//! [`Planner::plan`] looks at what the sync read (the work, whether the memo of its last sync
//! still holds, when it was last applied) and the current instant, and decides:
//!
//! * [`SyncAction::Finalize`]: the work is being deleted and still carries the agent's cleanup
//!   finalizer: `Deleting` is set, its AppliedManifestWork and resources are removed, the
//!   finalizer released;
//! * [`SyncAction::Nothing`]: the work is being deleted and the finalizer is already gone;
//! * [`SyncAction::AddFinalizer`]: the finalizer is added first, and the work synced again at
//!   once;
//! * [`SyncAction::Skip`]: the memo holds (every input at the version the last complete,
//!   error-free sync saw), so the sync would write nothing and compute the same status; a
//!   resync that falls due meanwhile counts as done;
//! * [`SyncAction::Apply`]: the work changed (a new generation), its resync is due, or its
//!   status on the hub shows no apply of its generation ([`shows_applied`]: the hub lost what
//!   the agent wrote): apply, record, refresh the status;
//! * [`SyncAction::RefreshStatus`]: only refresh the status. A work whose `Complete` condition
//!   is True is never applied again, but its status keeps being refreshed, as upstream.
//!
//! and the [`Planner`] tells when to sync again: at the next status sync, or earlier when the
//! next apply is due sooner ([`Planner::requeue_after`]); an apply pass asks to be applied
//! again after [`Planner::retry_after`]. Nothing here reads a clock or does I/O: the agent
//! passes `now` in.

use std::time::{Duration, Instant};

use ocm_api::conditions;
use ocm_api::constants::{finalizers, work as wc};
use ocm_api::work::v1::ManifestWork;

use super::SyncOutcome;
use crate::apply::engine::{ApplyError, ManifestApply};
use crate::executor::{ExecutorError, NOT_ALLOWED_REQUEUE};

/// When a work was last applied: the generation, and when it is due again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastApply {
    /// The generation applied.
    pub generation: i64,
    /// When to apply it again even if unchanged.
    pub next: Instant,
}

/// What one sync read, as the planner needs it.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct SyncInput<'a> {
    /// The work.
    pub work: &'a ManifestWork,
    /// Whether the memo of the work's last sync still holds (see the [module docs](self)).
    pub memo_holds: bool,
    /// When the work was last applied, if ever since the agent started.
    pub last_apply: Option<LastApply>,
    /// The current instant.
    pub now: Instant,
}

impl<'a> SyncInput<'a> {
    /// The input of a sync of `work` at `now`, never applied before and without a memo.
    pub fn new(work: &'a ManifestWork, now: Instant) -> Self {
        Self {
            work,
            memo_holds: false,
            last_apply: None,
            now,
        }
    }

    /// Sets whether the memo holds.
    #[must_use]
    pub fn memo_holds(mut self, holds: bool) -> Self {
        self.memo_holds = holds;
        self
    }

    /// Sets when the work was last applied.
    #[must_use]
    pub fn last_apply(mut self, last: Option<LastApply>) -> Self {
        self.last_apply = last;
        self
    }
}

/// What a sync does (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyncAction {
    /// Finalize the work being deleted.
    Finalize,
    /// The work is being deleted without the agent's finalizer: nothing to do.
    Nothing,
    /// Add the agent's cleanup finalizer, and sync again at once.
    AddFinalizer,
    /// Skip the sync: the memo holds.
    Skip,
    /// Apply the manifests, record them, refresh the status.
    Apply,
    /// Refresh the status only.
    RefreshStatus,
}

/// The plan of one sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncPlan {
    /// What the sync does.
    pub action: SyncAction,
    /// For [`SyncAction::Skip`]: the apply that fell due counts as done, until this instant.
    pub record_apply: Option<LastApply>,
    /// The sync's outcome, when the action decides it alone ([`SyncAction::Nothing`],
    /// [`SyncAction::AddFinalizer`], [`SyncAction::Skip`]).
    pub outcome: Option<SyncOutcome>,
}

/// Plans syncs with the agent's intervals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planner {
    /// How often the status is refreshed ([`super::AgentConfig::status_sync_interval`]).
    pub status_sync_interval: Duration,
    /// How often a work is applied again unchanged ([`super::AgentConfig::resync_interval`]).
    pub resync_interval: Duration,
}

impl Planner {
    /// A planner with these intervals.
    pub fn new(status_sync_interval: Duration, resync_interval: Duration) -> Self {
        Self {
            status_sync_interval,
            resync_interval,
        }
    }

    /// Plans one sync (see the [module docs](self)).
    pub fn plan(&self, input: &SyncInput<'_>) -> SyncPlan {
        let work = input.work;
        let has_finalizer = work
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == finalizers::MANIFEST_WORK_CLEANUP);
        let decided = |action, outcome| SyncPlan {
            action,
            record_apply: None,
            outcome,
        };
        if work.metadata.deletion_timestamp.is_some() {
            return if has_finalizer {
                decided(SyncAction::Finalize, None)
            } else {
                decided(SyncAction::Nothing, Some(SyncOutcome::default()))
            };
        }
        if !has_finalizer {
            return decided(
                SyncAction::AddFinalizer,
                Some(SyncOutcome {
                    requeue_after: Some(Duration::ZERO),
                    applied: false,
                }),
            );
        }
        let complete = is_complete(work);
        let generation = work.metadata.generation.unwrap_or(0);
        let due = input
            .last_apply
            .is_none_or(|last| last.generation != generation || input.now >= last.next)
            || !shows_applied(work);
        if input.memo_holds {
            return SyncPlan {
                action: SyncAction::Skip,
                record_apply: due.then(|| LastApply {
                    generation,
                    next: input.now + self.resync_interval,
                }),
                outcome: Some(SyncOutcome {
                    requeue_after: Some(self.status_sync_interval),
                    applied: due && !complete,
                }),
            };
        }
        let action = if due && !complete {
            SyncAction::Apply
        } else {
            SyncAction::RefreshStatus
        };
        decided(action, None)
    }

    /// When to apply a work again after an apply pass with these results: at the next resync
    /// when everything applied (server-side apply conflicts and ignoreFields errors included,
    /// which upstream does not retry either), after a minute when an executor was not allowed,
    /// and at the next status sync when a manifest failed otherwise (upstream retries those
    /// with backoff); sooner when removed resources are still being deleted
    /// (`pending_deletion`, the backoff of [`super::PENDING_DELETION_RETRY_MIN`]).
    pub fn retry_after(
        &self,
        results: &[ManifestApply],
        pending_deletion: Option<Duration>,
    ) -> Duration {
        let resync = self.resync_interval;
        let retry = results
            .iter()
            .map(|r| match &r.outcome {
                Ok(_) | Err(ApplyError::Conflict(_) | ApplyError::IgnoreField(_)) => resync,
                Err(ApplyError::Executor(ExecutorError::NotAllowed(_))) => NOT_ALLOWED_REQUEUE,
                Err(_) => Duration::ZERO,
            })
            .min()
            .unwrap_or(resync)
            .min(resync);
        match pending_deletion {
            Some(delay) => retry.min(delay),
            None => retry,
        }
    }

    /// When to sync a work again after an apply or status refresh: at the next status sync,
    /// or when its next apply is due (`next_apply`) if that is sooner; an apply due now waits
    /// for the next status sync rather than running in a tight loop.
    pub fn requeue_after(&self, next_apply: Option<Instant>, now: Instant) -> Option<Duration> {
        let next_apply = next_apply
            .map(|next| next.saturating_duration_since(now))
            .filter(|d| !d.is_zero());
        Some(match next_apply {
            Some(next) => next.min(self.status_sync_interval),
            None => self.status_sync_interval,
        })
    }
}

/// Whether the work's status shows an apply of its current generation (an `Applied`
/// condition for it, True or False), or has nothing to show (no manifests). A work the agent
/// applied whose status shows none lost it on the hub (a hub restored from a backup, a status
/// someone replaced): it is applied again rather than trusting the agent's memory.
pub fn shows_applied(work: &ManifestWork) -> bool {
    if work.spec.manifests().is_empty() {
        return true;
    }
    let conds = work
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    conditions::find(conds, wc::CONDITION_APPLIED)
        .is_some_and(|c| c.observed_generation == work.metadata.generation)
}

/// Whether the work's `Complete` condition is True.
pub fn is_complete(work: &ManifestWork) -> bool {
    let conds = work
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    conditions::is_true(conds, wc::CONDITION_COMPLETE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::ExecutorError;
    use serde_json::json;

    const STATUS_SYNC: Duration = Duration::from_secs(10);
    const RESYNC: Duration = Duration::from_secs(240);

    fn planner() -> Planner {
        Planner::new(STATUS_SYNC, RESYNC)
    }

    fn work(generation: i64, finalizer: bool, deleting: bool, complete: bool) -> ManifestWork {
        let finalizers: Vec<&str> = if finalizer {
            vec!["example.com/other", finalizers::MANIFEST_WORK_CLEANUP]
        } else {
            vec!["example.com/other"]
        };
        let mut value = json!({
            "metadata": {"name": "w", "namespace": "cluster1", "uid": "u",
                "generation": generation, "finalizers": finalizers},
            "spec": {},
        });
        if deleting {
            value["metadata"]["deletionTimestamp"] = json!("2030-01-01T00:00:00Z");
        }
        if complete {
            value["status"] = json!({"conditions": [{"type": "Complete", "status": "True",
                "reason": "x", "message": "", "lastTransitionTime": "2030-01-01T00:00:00Z"}]});
        }
        serde_json::from_value(value).unwrap()
    }

    fn last(generation: i64, next: Instant) -> Option<LastApply> {
        Some(LastApply { generation, next })
    }

    #[test]
    fn a_work_being_deleted_is_finalized_while_it_has_the_finalizer() {
        let now = Instant::now();
        let deleting = work(1, true, true, false);
        let plan = planner().plan(&SyncInput::new(&deleting, now).memo_holds(true));
        assert_eq!(plan.action, SyncAction::Finalize);
        assert_eq!(plan.outcome, None);
        let released = work(1, false, true, false);
        let plan = planner().plan(&SyncInput::new(&released, now));
        assert_eq!(plan.action, SyncAction::Nothing);
        assert_eq!(plan.outcome, Some(SyncOutcome::default()));
    }

    #[test]
    fn the_finalizer_comes_first_and_asks_for_an_immediate_sync() {
        let w = work(1, false, false, false);
        let plan = planner().plan(&SyncInput::new(&w, Instant::now()).memo_holds(true));
        assert_eq!(plan.action, SyncAction::AddFinalizer);
        assert_eq!(
            plan.outcome,
            Some(SyncOutcome {
                requeue_after: Some(Duration::ZERO),
                applied: false
            })
        );
    }

    #[test]
    fn a_holding_memo_skips_and_counts_a_due_resync_as_done() {
        let now = Instant::now();
        let w = work(3, true, false, false);
        // Not due: skipped, nothing recorded.
        let plan = planner().plan(
            &SyncInput::new(&w, now)
                .memo_holds(true)
                .last_apply(last(3, now + RESYNC)),
        );
        assert_eq!(plan.action, SyncAction::Skip);
        assert_eq!(plan.record_apply, None);
        assert_eq!(
            plan.outcome,
            Some(SyncOutcome {
                requeue_after: Some(STATUS_SYNC),
                applied: false
            })
        );
        // Due (the resync passed): skipped, reported as applied, and recorded.
        let plan = planner().plan(
            &SyncInput::new(&w, now)
                .memo_holds(true)
                .last_apply(last(3, now)),
        );
        assert_eq!(plan.action, SyncAction::Skip);
        assert_eq!(
            plan.record_apply,
            Some(LastApply {
                generation: 3,
                next: now + RESYNC
            })
        );
        assert!(plan.outcome.is_some_and(|o| o.applied));
        // A completed work is recorded but never reported as applied.
        let done = work(3, true, false, true);
        let plan = planner().plan(&SyncInput::new(&done, now).memo_holds(true));
        assert_eq!(plan.action, SyncAction::Skip);
        assert!(plan.record_apply.is_some());
        assert!(plan.outcome.is_some_and(|o| !o.applied));
    }

    #[test]
    fn apply_when_new_or_due_refresh_otherwise() {
        let now = Instant::now();
        let w = work(2, true, false, false);
        let plan = |last_apply| {
            planner()
                .plan(&SyncInput::new(&w, now).last_apply(last_apply))
                .action
        };
        assert_eq!(plan(None), SyncAction::Apply, "never applied");
        assert_eq!(
            plan(last(1, now + RESYNC)),
            SyncAction::Apply,
            "new generation"
        );
        assert_eq!(plan(last(2, now)), SyncAction::Apply, "resync due");
        assert_eq!(
            plan(last(2, now + Duration::from_secs(1))),
            SyncAction::RefreshStatus
        );
        let p = planner().plan(&SyncInput::new(&w, now));
        assert_eq!((p.record_apply, p.outcome), (None, None));
    }

    /// A work with manifests whose status shows no apply of its generation (the hub lost
    /// it) is applied even when the agent remembers applying it.
    #[test]
    fn a_status_that_lost_the_apply_is_applied_again() {
        let now = Instant::now();
        let with_status = |conditions: serde_json::Value| -> ManifestWork {
            serde_json::from_value(json!({
                "metadata": {"name": "w", "namespace": "cluster1", "uid": "u", "generation": 2,
                    "finalizers": [finalizers::MANIFEST_WORK_CLEANUP]},
                "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "a", "namespace": "default"}}]}},
                "status": {"conditions": conditions},
            }))
            .unwrap()
        };
        let applied = |generation: i64| {
            json!([{"type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete",
                "message": "", "lastTransitionTime": "2030-01-01T00:00:00Z",
                "observedGeneration": generation}])
        };
        let remembered = last(2, now + RESYNC);
        for (conditions, action) in [
            (applied(2), SyncAction::RefreshStatus),
            (applied(1), SyncAction::Apply),
            (json!([]), SyncAction::Apply),
        ] {
            let w = with_status(conditions.clone());
            assert_eq!(shows_applied(&w), action == SyncAction::RefreshStatus);
            let plan = planner().plan(&SyncInput::new(&w, now).last_apply(remembered));
            assert_eq!(plan.action, action, "{conditions}");
        }
        // Nothing to show for a work without manifests.
        assert!(shows_applied(&work(2, true, false, false)));
    }

    #[test]
    fn a_complete_work_is_only_refreshed() {
        let now = Instant::now();
        let done = work(2, true, false, true);
        for last_apply in [None, last(1, now), last(2, now)] {
            let plan = planner().plan(&SyncInput::new(&done, now).last_apply(last_apply));
            assert_eq!(plan.action, SyncAction::RefreshStatus);
        }
        assert!(is_complete(&done));
        assert!(!is_complete(&work(2, true, false, false)));
    }

    fn outcome(outcome: Result<serde_json::Value, ApplyError>) -> ManifestApply {
        ManifestApply {
            meta: Default::default(),
            resolved: None,
            config: None,
            outcome,
        }
    }

    #[test]
    fn retries_follow_the_worst_manifest() {
        let p = planner();
        let ok = || outcome(Ok(json!({})));
        assert_eq!(p.retry_after(&[], None), RESYNC);
        assert_eq!(p.retry_after(&[ok()], None), RESYNC);
        for not_retried in [
            ApplyError::Conflict("c".into()),
            ApplyError::IgnoreField("i".into()),
        ] {
            assert_eq!(
                p.retry_after(&[ok(), outcome(Err(not_retried))], None),
                RESYNC
            );
        }
        let denied = outcome(Err(ApplyError::Executor(ExecutorError::NotAllowed(
            "no".into(),
        ))));
        assert_eq!(p.retry_after(&[ok(), denied], None), NOT_ALLOWED_REQUEUE);
        let failed = outcome(Err(ApplyError::Api("refused".into())));
        assert_eq!(p.retry_after(&[failed], None), Duration::ZERO);
        // Resources still being deleted bring the next apply forward.
        let soon = Duration::from_millis(5);
        assert_eq!(p.retry_after(&[ok()], Some(soon)), soon);
        // A resync shorter than a minute bounds the executor's retry.
        let short = Planner::new(STATUS_SYNC, Duration::from_secs(30));
        let denied = outcome(Err(ApplyError::Executor(ExecutorError::NotAllowed(
            "no".into(),
        ))));
        assert_eq!(short.retry_after(&[denied], None), Duration::from_secs(30));
    }

    #[test]
    fn requeue_at_the_status_sync_or_the_next_apply_if_sooner() {
        let p = planner();
        let now = Instant::now();
        assert_eq!(p.requeue_after(None, now), Some(STATUS_SYNC));
        assert_eq!(
            p.requeue_after(Some(now + Duration::from_secs(3)), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(p.requeue_after(Some(now + RESYNC), now), Some(STATUS_SYNC));
        // Due now (or overdue): at the next status sync, not in a tight loop.
        assert_eq!(p.requeue_after(Some(now), now), Some(STATUS_SYNC));
        assert_eq!(
            p.requeue_after(Some(now), now + Duration::from_secs(1)),
            Some(STATUS_SYNC)
        );
    }
}
