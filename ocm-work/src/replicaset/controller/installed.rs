//! The opt-in fields and the installed CRD: which of our extension fields the installed
//! ManifestWorkReplicaSet CRD keeps (learned from the CRD and its watch), and the condition
//! that says when an enabled opt-in's field would be pruned.

use super::*;

impl ReplicaSetController {
    /// The opt-ins' fields (see [`fields`]): writes `OptInFieldsInstalled` into `new_status`
    /// (or removes it when no such opt-in is on), and leaves out of it the status fields the
    /// installed CRD prunes, which would only be written again and again in vain.
    pub(super) async fn report_fields(
        &self,
        new_status: &mut ManifestWorkReplicaSetStatus,
        now: Timestamp,
    ) {
        let enabled = fields::opt_ins(self.rollback, self.feedback_aggregation);
        if enabled.is_empty() {
            if let Some(conds) = new_status.conditions.as_mut() {
                conditions::remove(conds, fields::CONDITION_OPT_IN_FIELDS_INSTALLED);
            }
            return;
        }
        let Installed::Known(missing) = self.installed_fields().await else {
            return;
        };
        for field in &missing {
            match field.path {
                ["status", "collisionCount"] => new_status.collision_count = None,
                ["status", "currentRevision"] => new_status.current_revision = None,
                ["status", "updateRevision"] => new_status.update_revision = None,
                ["status", "abortedTime"] => new_status.aborted_time = None,
                ["status", "feedbackAggregation"] => new_status.feedback_aggregation = None,
                _ => {}
            }
        }
        let conds = new_status.conditions.get_or_insert_with(Vec::new);
        conditions::set(
            conds,
            fields::fields_condition(&enabled, &missing),
            &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now),
        );
    }

    /// What the installed CRD keeps: read once when not known yet (a controller that runs
    /// keeps it current from a watch, [`ReplicaSetController::run`]).
    pub(super) async fn installed_fields(&self) -> Installed {
        let (known, read_at) = self.installed_state().clone();
        // Without the watch (reconcile called by another runtime), read again now and then.
        let stale = read_at.is_some_and(|at| at.elapsed() >= fields::RECHECK_AFTER);
        if known != Installed::Unknown && !stale {
            return known;
        }
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        match api.get_opt(fields::REPLICA_SET_CRD).await {
            Ok(Some(crd)) => {
                self.learn_crd(&crd, false);
            }
            Ok(None) => {
                tracing::warn!(
                    crd = fields::REPLICA_SET_CRD,
                    "the ManifestWorkReplicaSet CRD is not installed: cannot tell whether it \
                     keeps the fields of the enabled opt-ins"
                );
                *self.installed_state() = (Installed::Unreadable, read_at_now());
            }
            Err(error) => {
                tracing::warn!(
                    %error,
                    crd = fields::REPLICA_SET_CRD,
                    "cannot read the ManifestWorkReplicaSet CRD to tell whether it keeps the \
                     fields of the enabled opt-ins (grant get, list and watch on \
                     customresourcedefinitions)"
                );
                *self.installed_state() = (Installed::Unreadable, read_at_now());
            }
        }
        self.installed_state().0.clone()
    }

    pub(super) fn installed_state(
        &self,
    ) -> std::sync::MutexGuard<'_, (Installed, Option<std::time::Instant>)> {
        self.installed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes note of the installed CRD (read, or seen by the watch that keeps it current);
    /// `true` when what it keeps of the enabled opt-ins' fields changed (logged once here,
    /// not per replica set).
    pub(super) fn learn_crd(&self, crd: &CustomResourceDefinition, from_watch: bool) -> bool {
        let enabled = fields::opt_ins(self.rollback, self.feedback_aggregation);
        let missing: Vec<_> = ocm_api::crd::missing_extensions(crd)
            .into_iter()
            .filter(|f| enabled.contains(&f.opt_in))
            .collect();
        let mut state = self.installed_state();
        state.1 = if from_watch { None } else { read_at_now() };
        let next = Installed::Known(missing.clone());
        if state.0 == next {
            return false;
        }
        if !missing.is_empty() {
            tracing::warn!(
                crd = fields::REPLICA_SET_CRD,
                "{}",
                fields::pruned_message(&enabled, &missing)
            );
        } else if matches!(&state.0, Installed::Known(before) if !before.is_empty()) {
            tracing::info!(
                crd = fields::REPLICA_SET_CRD,
                "the installed ManifestWorkReplicaSet CRD now keeps the fields of the enabled \
                 opt-ins"
            );
        }
        state.0 = next;
        true
    }
}
