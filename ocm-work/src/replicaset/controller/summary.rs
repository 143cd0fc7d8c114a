//! Upstream's status reconciler: the summaries (counts of works applied, available,
//! progressing, degraded) and the feedback aggregation opt-in.

use super::*;

impl ReplicaSetController {
    /// The feedback aggregation opt-in: recomputes the aggregates the spec asks for and writes
    /// them when they changed and the interval allows; returns when to come back for a change
    /// held back by the interval. A replica set that no longer asks loses its aggregates.
    pub(super) async fn aggregate_feedback(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        new_status: &mut ManifestWorkReplicaSetStatus,
        now: Timestamp,
    ) -> Result<Option<Duration>> {
        let Some(spec) = &replica_set.spec.feedback_aggregation else {
            new_status.feedback_aggregation = None;
            if let Some(conds) = new_status.conditions.as_mut() {
                conditions::remove(conds, feedback::CONDITION_FEEDBACK_AGGREGATED);
            }
            return Ok(None);
        };
        let interval = feedback::interval(spec);
        let conds = new_status.conditions.get_or_insert_with(Vec::new);
        conditions::set(
            conds,
            feedback::aggregated_condition(&interval),
            &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now),
        );
        // The aggregates read each work's deletion timestamp and status feedback only.
        let decoder = &self.decoder;
        let works = self
            .fold_owned_works(&owner_label(replica_set), Vec::new, |works, raw| {
                // A work that does not decode adds nothing (it is logged).
                let Ok(mut work) = decoder.decode::<ManifestWork>(KIND_WORK, &raw) else {
                    return;
                };
                work.metadata = kube::api::ObjectMeta {
                    deletion_timestamp: work.metadata.deletion_timestamp.take(),
                    ..Default::default()
                };
                work.spec = ManifestWorkSpec::default();
                if let Some(status) = work.status.as_mut() {
                    status.conditions = None;
                }
                works.push(work);
            })
            .await?;
        let current = feedback::aggregate(&spec.values, &works);
        let plan = feedback::plan(
            new_status.feedback_aggregation.as_ref(),
            current,
            interval.unwrap_or(feedback::DEFAULT_INTERVAL),
            now,
        );
        if let Some(write) = plan.write {
            new_status.feedback_aggregation = Some(write);
        }
        Ok(plan.requeue_after)
    }

    /// The status reconciler (upstream §8.4): counts by condition and `ManifestworkApplied`.
    ///
    /// It counts the works the deploy pass listed (`works`, by placement), as upstream's
    /// status reconciler reads the same informer cache as its deploy reconciler: the writes of
    /// this pass show in the next reconcile, which their watch events trigger.
    pub(super) fn update_status_counts(
        works: &WorksByPlacement,
        new_status: &mut ManifestWorkReplicaSetStatus,
        now: Timestamp,
    ) {
        let now_time = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now);
        let total = new_status
            .summary
            .as_ref()
            .and_then(|s| s.total)
            .unwrap_or(0);
        let verified_reason = new_status
            .conditions
            .as_deref()
            .and_then(|c| conditions::find(c, rc::CONDITION_PLACEMENT_VERIFIED))
            .map(|c| c.reason.clone());
        if total == 0 {
            let conditions = new_status.conditions.get_or_insert_with(Vec::new);
            let applied =
                status::manifestwork_applied(0, &WorkCounts::default(), verified_reason.as_deref());
            conditions::set(conditions, applied, &now_time);
            return;
        }
        let mut sum = WorkCounts::default();
        for entry in new_status.placements_summary.iter_mut().flatten() {
            let name = entry.name.clone().unwrap_or_default();
            let of_placement = works
                .get(&name)
                .into_iter()
                .flatten()
                .filter(|w| w.current)
                .map(|w| &w.work);
            let counts = WorkCounts::count_matching(of_placement, |_| true);
            let summary = entry.summary.get_or_insert_with(|| summary_with_total(0));
            write_counts(summary, &counts);
            sum.add(&counts);
        }
        let summary = new_status
            .summary
            .get_or_insert_with(|| summary_with_total(total));
        write_counts(summary, &sum);
        let conditions = new_status.conditions.get_or_insert_with(Vec::new);
        let applied: NewCondition =
            status::manifestwork_applied(total, &sum, verified_reason.as_deref());
        conditions::set(conditions, applied, &now_time);
    }
}
