//! The ManifestWorkReplicaSet hub controller: the I/O shell around [`super`]'s decisions.
//!
//! One [`ReplicaSetController::reconcile`] runs upstream's reconcilers in order: finalize (when
//! the replica set is being deleted), add-finalizer, deploy (create, update and delete one
//! ManifestWork per selected cluster, following each placement's rollout strategy) and status
//! (summaries and conditions), then patches the status when it changed.
//! [`ReplicaSetController::run`] drives it from watches with kube's controller runtime.
//!
//! # Objects it cannot decode, objects of any depth
//!
//! Everything the controller reads (replica sets, their works, Placements, PlacementDecisions,
//! ManagedClusters, ControllerRevisions) is read as raw JSON and decoded object by object
//! (`crate::read`), so one object its types reject never stops the others:
//!
//! * a replica set that cannot be decoded gets `ManifestworkApplied=False` with reason
//!   [`status::REASON_DECODE_FAILED`] and the decode error (naming the field) as its message,
//!   written once (a merge patch of `status.conditions`, computed from the conditions it has),
//!   and is not retried until it changes ([`ReplicaSetController::reconcile_raw`]);
//! * a Placement or PlacementDecision of a replica set that cannot be decoded stops that
//!   placement's rollout (no work is created or deleted for it) and is named in
//!   `PlacementVerified=False/NotAsExpected`; a work of the replica set that cannot be decoded
//!   counts as present but not up to date (its spec is brought in line with a merge patch
//!   computed from its JSON); a ManagedCluster that cannot be decoded fails the per-cluster
//!   values of its cluster only. Each is logged at WARN once per resource version.
//!
//! Upstream's controller cannot read such objects either (its informers fail as a whole, and
//! so every replica set stops); reporting them and going on is our addition.
//!
//! Objects nest as deep as the API server takes (10,000 levels; a template's manifests keep
//! unknown fields): reconciles run with stack enough for the deepest object the controller has
//! read ([`ocm_api::k8s::json::WithStack`]), so a deep template is fanned out like any other
//! on tokio's 2 MiB worker threads.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::{
    ClusterGroups, ClusterRolloutStatus, GroupKey, RolloutHandler, RolloutResult, RolloutStatus,
};
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::{finalizers, labels, replicaset as rc};
use ocm_api::k8s::object::{DecodeFailure, RawObject};
use ocm_api::repeats::LastSaid;
use ocm_api::work::v1::{ManifestWork, ManifestWorkSpec};
use ocm_api::work::v1alpha1::{
    CascadeDeletionPolicy, LocalPlacementReference, ManifestWorkReplicaSet,
    ManifestWorkReplicaSetStatus, ManifestWorkReplicaSetSummary, PlacementSummary,
};
use serde_json::json;

use super::feedback;
use super::fields::{self, Installed};
use super::pages;
use super::rollback::{self, RollbackPlan};
use super::status::{self, WorkCounts};
use super::values;
use super::{
    SuccessCriteria, awaits_progressing, build_work_with_spec, cluster_rollout_status,
    manifest_work_equal, metadata_equal, owner_label, spec_equal, validate_owner_label,
};
use crate::applier;
use crate::read::{self, Decoder};
use crate::{Error, Result};

const KIND: &str = "ManifestWorkReplicaSet";
const KIND_WORK: &str = "ManifestWork";
const KIND_REVISION: &str = "ControllerRevision";

/// Requeue at the latest after this long (upstream's cap).
pub const MAX_REQUEUE: Duration = Duration::from_secs(30 * 60);

/// What one reconcile asks for next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReconcileOutcome {
    /// Reconcile again after this long (a rollout deadline or soak time ends, or an
    /// intermediate step such as adding the finalizer was just done).
    pub requeue_after: Option<Duration>,
}

/// The ManifestWorkReplicaSet controller.
#[derive(Clone)]
pub struct ReplicaSetController {
    client: Client,
    clock: Arc<dyn Clock>,
    criteria: SuccessCriteria,
    rollback: bool,
    cluster_values: bool,
    feedback_aggregation: bool,
    synced: Option<Arc<AtomicBool>>,
    /// The replica sets this controller added its finalizer to: uid → the resourceVersion it
    /// patched over. A lagging cache hands the same old version in again; it is known to
    /// carry the finalizer by now, so it is not patched (and conflicted) again.
    finalizer_added: Arc<std::sync::Mutex<BTreeMap<String, String>>>,
    /// What was last logged per replica set and topic: a steady state that finds the same
    /// problem on every pass logs it once, and again only when it changes.
    said: Arc<LastSaid>,
    /// What the installed CRD keeps of the enabled opt-ins' fields ([`fields`]), and when it
    /// was read (`None`: kept current by [`ReplicaSetController::run`]'s watch).
    installed: Arc<std::sync::Mutex<(Installed, Option<std::time::Instant>)>>,
    /// Decodes what the controller reads, one object at a time (`crate::read`).
    decoder: Decoder,
}

impl std::fmt::Debug for ReplicaSetController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplicaSetController")
            .field("criteria", &self.criteria)
            .field("rollback", &self.rollback)
            .field("cluster_values", &self.cluster_values)
            .field("feedback_aggregation", &self.feedback_aggregation)
            .finish_non_exhaustive()
    }
}

/// What the deploy step saw: the rollouts, for the rollback opt-in, and the works it listed,
/// for the status counts.
#[derive(Default)]
struct Observed {
    /// The replica set's works by placement, as the deploy step listed them.
    works: WorksByPlacement,
    /// Write `summary.updated` (the works succeeded at the template being rolled out).
    count_updated: bool,
    /// Some placement's rollout breached `maxFailures`.
    breached: bool,
    /// Some placement's rollout breached `maxFailures` with `failureStrategy: AbortAll`.
    abort: bool,
}

/// The template each cluster's work gets: the replica set's, with the cluster's values
/// resolved when the per-cluster values opt-in is on and the template uses variables.
struct Templates {
    base: ManifestWorkSpec,
    /// The ManagedClusters by name, when variables are resolved.
    clusters: Option<BTreeMap<String, ManagedCluster>>,
    resolved: BTreeMap<String, ManifestWorkSpec>,
    /// The clusters whose values could not be resolved, with why.
    failed: BTreeMap<String, Error>,
}

impl Templates {
    /// The replica set's template for every cluster (no variables resolved).
    fn unresolved(base: ManifestWorkSpec) -> Self {
        Self {
            base,
            clusters: None,
            resolved: BTreeMap::new(),
            failed: BTreeMap::new(),
        }
    }

    /// The template of `cluster`'s work, or `None` when its values cannot be resolved (the
    /// error is kept in `failed`).
    fn get(&mut self, cluster: &str) -> Option<&ManifestWorkSpec> {
        let Some(clusters) = &self.clusters else {
            return Some(&self.base);
        };
        if self.failed.contains_key(cluster) {
            return None;
        }
        if !self.resolved.contains_key(cluster) {
            match values::resolve(&self.base, cluster, clusters.get(cluster)) {
                Ok(t) => {
                    self.resolved.insert(cluster.to_string(), t);
                }
                Err(e) => {
                    self.failed.insert(cluster.to_string(), e);
                    return None;
                }
            }
        }
        self.resolved.get(cluster)
    }

    /// Whether `work` holds its cluster's template.
    fn holds(&mut self, work: &ManifestWork) -> bool {
        let cluster = work.metadata.namespace.as_deref().unwrap_or_default();
        self.get(cluster).is_some_and(|t| spec_equal(&work.spec, t))
    }
}

/// The replica set's works by the placement they were fanned out for (those without a
/// placement label left out), as the deploy pass listed them.
type WorksByPlacement = BTreeMap<String, Vec<Arc<Listed>>>;

/// The replica set's works by cluster namespace, with the placements each was fanned out for.
type WorksByCluster = BTreeMap<String, (Arc<Listed>, BTreeSet<String>)>;

/// Indexes the listed works by cluster namespace (the last one wins) and by placement
/// (`by_placement`, cleared first). Both indexes share each work (a fleet's works, status
/// and feedback included, are several MiB: a copy per index made the controller's pass the
/// process's peak).
fn index_works(works: Vec<Listed>, by_placement: &mut WorksByPlacement) -> WorksByCluster {
    let mut by_cluster = WorksByCluster::new();
    by_placement.clear();
    for work in works.into_iter().map(Arc::new) {
        let placement = work.work.labels().get(labels::PLACEMENT_NAME).cloned();
        let mut placements = BTreeSet::new();
        if let Some(p) = &placement {
            placements.insert(p.clone());
            by_placement
                .entry(p.clone())
                .or_default()
                .push(work.clone());
        }
        by_cluster.insert(
            work.work.namespace().unwrap_or_default(),
            (work, placements),
        );
    }
    by_cluster
}

/// A placement's works as its rollout sees them.
#[derive(Default)]
struct Statuses {
    /// Clusters whose work holds its current template.
    existing: BTreeSet<String>,
    /// Those of them that succeeded.
    succeeded: BTreeSet<String>,
    /// Their rollout statuses.
    statuses: Vec<ClusterRolloutStatus>,
    /// Those that report no Progressing condition where one is needed.
    stalled: usize,
}

/// What the deploy pass adds up over the replica set's placements.
struct DeployPass {
    /// Works of the placements (existing or applied by this pass).
    count: usize,
    /// Clusters the placements selected.
    selected: i64,
    /// Works that succeeded at the template being rolled out.
    succeeded: usize,
    /// Works applied at the current template that report no Progressing condition.
    stalled: usize,
    summaries: Vec<PlacementSummary>,
    /// The soonest recheck a rollout asked for.
    min_requeue: Duration,
    /// Placements and decisions that do not decode (each stops its placement's rollout).
    undecodable: Vec<String>,
}

impl Default for DeployPass {
    fn default() -> Self {
        Self {
            count: 0,
            selected: 0,
            succeeded: 0,
            stalled: 0,
            summaries: Vec::new(),
            min_requeue: MAX_REQUEUE,
            undecodable: Vec::new(),
        }
    }
}

/// A work as the deploy pass keeps it: without managedFields and its manifests' status, and
/// without its spec when that holds its cluster's current template (a fleet's converged works
/// would otherwise keep a decoded copy of the template each).
struct Listed {
    work: ManifestWork,
    /// The work holds its cluster's current template (its spec was dropped). Known only for
    /// the works of the replica set's placements; `false` for the others.
    current: bool,
    /// The work does not decode: `work` holds only its name, namespace and labels.
    undecodable: bool,
}

/// The reconcile steps' verdict: go on with the next one, or stop here.
enum Step {
    Continue,
    Stop,
}

impl ReplicaSetController {
    /// A controller talking to the hub through `client`, with the wall clock and upstream's
    /// success criterion.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            clock: Arc::new(SystemClock),
            criteria: SuccessCriteria::default(),
            rollback: false,
            cluster_values: false,
            feedback_aggregation: false,
            synced: None,
            finalizer_added: Arc::default(),
            said: Arc::default(),
            installed: Arc::default(),
            decoder: Decoder::default(),
        }
    }

    /// Uses `clock` for condition times and rollout deadlines.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Chooses how a cluster's work counts as rolled out (see [`SuccessCriteria`]).
    #[must_use]
    pub fn with_success_criteria(mut self, criteria: SuccessCriteria) -> Self {
        self.criteria = criteria;
        self
    }

    /// Turns on revision history and rollback (our addition, from upstream's accepted
    /// proposal; off by default): see [`super::rollback`].
    #[must_use]
    pub fn with_rollback(mut self, on: bool) -> Self {
        self.rollback = on;
        self
    }

    /// Turns on per-cluster values (our addition; off by default): `{{CLUSTER_NAME}}`,
    /// `{{CLUSTER_LABEL:<key>}}` and `{{CLUSTER_CLAIM:<name>}}` in the template's manifests are
    /// resolved from each cluster's ManagedCluster, and the controller watches ManagedClusters
    /// so a label or claim change reaches the work. See [`super::values`].
    #[must_use]
    pub fn with_cluster_values(mut self, on: bool) -> Self {
        self.cluster_values = on;
        self
    }

    /// Turns on feedback aggregation (our addition; off by default): the status-feedback values
    /// a replica set names in `spec.feedbackAggregation` are aggregated across its works into
    /// `status.feedbackAggregation`, rate-limited. See [`super::feedback`].
    #[must_use]
    pub fn with_feedback_aggregation(mut self, on: bool) -> Self {
        self.feedback_aggregation = on;
        self
    }

    /// Sets `flag` once [`ReplicaSetController::run`] has listed the ManifestWorkReplicaSets
    /// (for a readiness probe); it stays as it is otherwise, so reset it before a new `run`.
    #[must_use]
    pub fn with_synced_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.synced = Some(flag);
        self
    }

    /// Reconciles one replica set (with stack enough for the deepest object read, see the
    /// [module docs](self)).
    pub async fn reconcile(
        &self,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<ReconcileOutcome> {
        self.decoder
            .stacked(self.reconcile_decoded(replica_set))
            .await
    }

    /// Reconciles one replica set as the API server sent it: decoded, then
    /// [`ReplicaSetController::reconcile`]d. One that does not decode gets
    /// `ManifestworkApplied=False` with reason [`status::REASON_DECODE_FAILED`] and the decode
    /// error (written only when that changes its conditions), and nothing else is done with it
    /// until it changes: the outcome asks for no requeue.
    pub async fn reconcile_raw(&self, raw: &RawObject) -> Result<ReconcileOutcome> {
        self.decoder.fit(raw.depth()).await;
        let decoded = self
            .decoder
            .decode_quietly::<ManifestWorkReplicaSet>(KIND, raw);
        match decoded {
            Ok(replica_set) => {
                self.said
                    .forget(&format!("{}#decode", DecodeFailure::of(raw, "").object()));
                self.reconcile(&replica_set).await
            }
            Err(failure) => {
                let api = read::api::<ManifestWorkReplicaSet>(
                    &self.client,
                    Some(failure.namespace.as_str()),
                );
                // Being deleted: its works go and the finalizer is removed all the same (what
                // that needs is read field by field).
                let replica_set = lifecycle(raw);
                if replica_set.metadata.deletion_timestamp.is_some() {
                    return self
                        .decoder
                        .stacked(self.finalize(&api, &replica_set))
                        .await;
                }
                let key = format!("{}#decode", failure.object());
                if self.said.changed(&key, &failure.error) {
                    tracing::warn!(
                        replica_set = %failure.object(),
                        error = %failure.error,
                        "ManifestWorkReplicaSet cannot be decoded; it is reported in its ManifestworkApplied condition and every other replica set is still reconciled"
                    );
                }
                let mut condition = status::undecodable(&failure.error);
                if let Some(generation) = raw.meta().generation {
                    condition = condition.observed_generation(generation);
                }
                let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(self.clock.now());
                read::set_raw_condition(&api, KIND, raw, condition, &now, &PatchParams::default())
                    .await?;
                Ok(ReconcileOutcome::default())
            }
        }
    }

    async fn reconcile_decoded(
        &self,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<ReconcileOutcome> {
        let namespace = replica_set.namespace().unwrap_or_default();
        let name = replica_set.name_any();
        let api = read::api::<ManifestWorkReplicaSet>(&self.client, Some(&namespace));
        let mut outcome = ReconcileOutcome::default();

        if replica_set.metadata.deletion_timestamp.is_some() {
            return self.finalize(&api, replica_set).await;
        }
        let with_finalizer;
        let replica_set = if has_cleanup_finalizer(replica_set) {
            // The cache has caught up with the finalizer (if this controller added it).
            if let Some(uid) = &replica_set.metadata.uid {
                self.finalizer_memory().remove(uid);
            }
            replica_set
        } else if self.added_finalizer_over(replica_set) {
            // A lagging cache's copy of a version this controller already patched.
            let mut copy = replica_set.clone();
            copy.finalizers_mut()
                .push(finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP.to_string());
            with_finalizer = copy;
            &with_finalizer
        } else {
            match self.add_finalizer(&api, replica_set).await? {
                Some(patched) => {
                    with_finalizer = patched;
                    &with_finalizer
                }
                // Deleted meanwhile: its next event finalizes it.
                None => return Ok(outcome),
            }
        };

        let before = replica_set.status.clone().unwrap_or_default();
        let mut new_status = before.clone();
        // It decodes now: a condition saying it did not is gone, whatever this pass sets.
        if let Some(conds) = new_status.conditions.as_mut()
            && conditions::find(conds, rc::CONDITION_MANIFESTWORK_APPLIED)
                .is_some_and(|c| c.reason == status::REASON_DECODE_FAILED)
        {
            conditions::remove(conds, rc::CONDITION_MANIFESTWORK_APPLIED);
        }
        let now = self.clock.now();
        let mut errors = Vec::new();
        let plan = if self.rollback && validate_owner_label(&owner_label(replica_set)).is_ok() {
            Some(self.revisions(replica_set, &mut new_status).await?)
        } else {
            None
        };
        let effective = plan.as_ref().map(|p| p.effective(replica_set));
        let target = effective.as_ref().unwrap_or(replica_set);
        let mut observed = Observed {
            count_updated: plan.as_ref().is_some_and(|p| !p.aborted),
            ..Observed::default()
        };
        let mut templates = self.templates(target).await?;
        let deploy = self
            .deploy(
                target,
                &mut templates,
                &mut new_status,
                now,
                &mut errors,
                &mut observed,
            )
            .await;
        if let Ok((Step::Continue, requeue)) = &deploy {
            outcome.requeue_after = *requeue;
            Self::update_status_counts(&observed.works, &mut new_status, now);
            if self.cluster_values {
                let failed: Vec<&Error> = templates.failed.values().collect();
                let conditions = new_status.conditions.get_or_insert_with(Vec::new);
                conditions::set(
                    conditions,
                    status::cluster_values_resolved(&failed),
                    &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now),
                );
            }
            if self.feedback_aggregation {
                match self.aggregate_feedback(target, &mut new_status, now).await {
                    Ok(Some(after)) => {
                        outcome.requeue_after =
                            Some(outcome.requeue_after.map_or(after, |r| r.min(after)));
                    }
                    Ok(None) => {}
                    Err(e) => errors.push(e),
                }
            }
            if let Some(plan) = &plan
                && plan.finish(observed.breached, observed.abort, &mut new_status, now)
            {
                outcome.requeue_after = Some(Duration::ZERO);
            }
        }
        if let Err(e) = deploy {
            errors.push(e);
        }
        self.report_fields(&mut new_status, now).await;
        if new_status != before {
            let mut patch = json!({ "status": new_status });
            // A merge patch keeps what it does not mention: a cleared abort is written as null.
            if before.aborted_time.is_some() && new_status.aborted_time.is_none() {
                patch["status"]["abortedTime"] = serde_json::Value::Null;
            }
            if before.feedback_aggregation.is_some() && new_status.feedback_aggregation.is_none() {
                patch["status"]["feedbackAggregation"] = serde_json::Value::Null;
            }
            api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|e| {
                    Error::kube(
                        format!("update status of ManifestWorkReplicaSet {namespace}/{name}"),
                        e,
                    )
                })?;
        }
        Error::aggregate(errors)?;
        Ok(outcome)
    }

    /// Adds the cleanup finalizer, guarded by the resourceVersion the caller read (upstream's
    /// patch). Returns the replica set as the patch left it, so that the reconcile goes on
    /// without waiting for the watch to bring it back. A cache that lags behind the server
    /// (a busy watch, one that dropped and relists) hands in an old resourceVersion: the
    /// conflict is not an error, the replica set is read again and the patch retried once.
    /// `None`: the replica set is gone or being deleted.
    async fn add_finalizer(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<Option<ManifestWorkReplicaSet>> {
        let name = replica_set.name_any();
        let namespace = replica_set.namespace().unwrap_or_default();
        let failed = |e| {
            Error::kube(
                format!("add finalizer to ManifestWorkReplicaSet {namespace}/{name}"),
                e,
            )
        };
        let mut current = replica_set.clone();
        for attempt in 0..2 {
            let mut list = current.finalizers().to_vec();
            list.push(finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP.to_string());
            let patch = json!({"metadata": {
                "uid": current.metadata.uid,
                "resourceVersion": current.metadata.resource_version,
                "finalizers": list,
            }});
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(patched) => {
                    self.remember_finalizer(&current);
                    return self.decoder.answer(KIND, patched).await.map(Some);
                }
                Err(kube::Error::Api(status)) if status.code == 409 && attempt == 0 => {
                    match self
                        .decoder
                        .get::<ManifestWorkReplicaSet>(api, KIND, &name)
                        .await?
                    {
                        Some(fresh) if fresh.metadata.deletion_timestamp.is_some() => {
                            return Ok(None);
                        }
                        Some(fresh) if has_cleanup_finalizer(&fresh) => return Ok(Some(fresh)),
                        Some(fresh) => current = fresh,
                        None => return Ok(None),
                    }
                }
                Err(kube::Error::Api(status)) if status.code == 404 => return Ok(None),
                Err(e) => return Err(failed(e)),
            }
        }
        Ok(None)
    }

    async fn finalize(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<ReconcileOutcome> {
        if !replica_set
            .finalizers()
            .iter()
            .any(|f| f == finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP)
        {
            return Ok(ReconcileOutcome::default());
        }
        let owner = owner_label(replica_set);
        // Only the names are kept of each work (whether it decodes or not).
        let works = self
            .fold_owned_works(&owner, Vec::new, |names, work| {
                names.push((
                    work.meta().namespace.clone().unwrap_or_default(),
                    work.meta().name.clone().unwrap_or_default(),
                ));
            })
            .await?;
        let mut errors = Vec::new();
        for (namespace, name) in &works {
            if let Err(e) = self.delete_named_work(namespace, name).await {
                errors.push(e);
            }
        }
        Error::aggregate(errors)?;
        let foreground =
            replica_set.spec.cascade_deletion_policy == Some(CascadeDeletionPolicy::Foreground);
        if foreground && self.any_owned_work(&owner).await? {
            return Ok(ReconcileOutcome {
                requeue_after: Some(Duration::from_secs(1)),
            });
        }
        self.remove_finalizer(api, replica_set).await?;
        if let Some(uid) = &replica_set.metadata.uid {
            self.finalizer_memory().remove(uid);
        }
        let key = format!(
            "{}/{}#",
            replica_set.namespace().unwrap_or_default(),
            replica_set.name_any()
        );
        self.said.forget_prefixed(&key);
        Ok(ReconcileOutcome::default())
    }

    /// The opt-ins' fields (see [`fields`]): writes `OptInFieldsInstalled` into `new_status`
    /// (or removes it when no such opt-in is on), and leaves out of it the status fields the
    /// installed CRD prunes, which would only be written again and again in vain.
    async fn report_fields(&self, new_status: &mut ManifestWorkReplicaSetStatus, now: Timestamp) {
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
    async fn installed_fields(&self) -> Installed {
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

    fn installed_state(
        &self,
    ) -> std::sync::MutexGuard<'_, (Installed, Option<std::time::Instant>)> {
        self.installed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes note of the installed CRD (read, or seen by the watch that keeps it current);
    /// `true` when what it keeps of the enabled opt-ins' fields changed (logged once here,
    /// not per replica set).
    fn learn_crd(&self, crd: &CustomResourceDefinition, from_watch: bool) -> bool {
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

    fn finalizer_memory(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.finalizer_added
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Whether this controller added its finalizer on top of exactly this version.
    fn added_finalizer_over(&self, replica_set: &ManifestWorkReplicaSet) -> bool {
        let (Some(uid), Some(version)) = (
            replica_set.metadata.uid.as_ref(),
            replica_set.metadata.resource_version.as_ref(),
        ) else {
            return false;
        };
        self.finalizer_memory().get(uid) == Some(version)
    }

    fn remember_finalizer(&self, patched_over: &ManifestWorkReplicaSet) {
        if let (Some(uid), Some(version)) = (
            patched_over.metadata.uid.clone(),
            patched_over.metadata.resource_version.clone(),
        ) {
            self.finalizer_memory().insert(uid, version);
        }
    }

    /// Removes the cleanup finalizer, guarded by the resourceVersion read; on a conflict (a
    /// cache behind the server) the replica set is read again and the patch retried once.
    async fn remove_finalizer(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<()> {
        let name = replica_set.name_any();
        let failed = |e| {
            Error::kube(
                format!("remove finalizer from ManifestWorkReplicaSet {name}"),
                e,
            )
        };
        let mut current = replica_set.clone();
        for attempt in 0..2 {
            let remaining: Vec<String> = current
                .finalizers()
                .iter()
                .filter(|f| *f != finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP)
                .cloned()
                .collect();
            let patch = json!({"metadata": {
                "uid": current.metadata.uid,
                "resourceVersion": current.metadata.resource_version,
                "finalizers": remaining,
            }});
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(status)) if status.code == 409 && attempt == 0 => {
                    // Only its identity and finalizers are needed: read whether it decodes
                    // or not.
                    match api.get_opt(&name).await.map_err(&failed)? {
                        Some(fresh) => {
                            let fresh = lifecycle(&fresh);
                            if !has_cleanup_finalizer(&fresh) {
                                return Ok(());
                            }
                            current = fresh;
                        }
                        None => return Ok(()),
                    }
                }
                Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
                Err(e) => return Err(failed(e)),
            }
        }
        Ok(())
    }

    /// The rollback opt-in's first step: records the spec's template as a revision (bumping
    /// `status.collisionCount` on a hash collision), writes `status.updateRevision` (clearing
    /// `abortedTime` when it changes), loads the current revision's template and prunes the
    /// history to `spec.revisionHistoryLimit`.
    async fn revisions(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        new_status: &mut ManifestWorkReplicaSetStatus,
    ) -> Result<RollbackPlan> {
        let namespace = replica_set.namespace().unwrap_or_default();
        let name = replica_set.name_any();
        let api = read::api::<ControllerRevision>(&self.client, Some(&namespace));
        let owner = owner_label(replica_set);
        // A revision that does not decode is left out (and logged): it is neither counted
        // nor pruned.
        let (history, _) = self
            .decoder
            .list::<ControllerRevision>(
                &api,
                &ListParams::default()
                    .labels(&format!("{}={owner}", labels::MANIFEST_WORK_REPLICA_SET)),
                KIND_REVISION,
                || format!("list ControllerRevisions of {owner}"),
            )
            .await?;
        let newest = history
            .iter()
            .map(rollback::revision_number)
            .max()
            .unwrap_or(0);
        let template = replica_set
            .spec
            .manifest_work_template
            .clone()
            .unwrap_or_default();
        let mut collisions = new_status.collision_count;
        let mut created = false;
        let mut found = None;
        // A few rounds: a collision moves to the next hash, a lost create race re-reads.
        for _ in 0..8 {
            let hash = rollback::template_hash(&template, collisions);
            let rev_name = rollback::revision_name(&name, &hash);
            let get = self
                .decoder
                .get::<ControllerRevision>(&api, KIND_REVISION, &rev_name)
                .await?;
            match get {
                Some(rev) => {
                    let same =
                        rollback::revision_template(&rev).is_ok_and(|t| spec_equal(&t, &template));
                    if !same {
                        collisions = Some(collisions.unwrap_or(0).saturating_add(1));
                        continue;
                    }
                    if rollback::revision_number(&rev) < newest {
                        let patch = json!({"revision": newest + 1});
                        api.patch(&rev_name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .map_err(|e| {
                                Error::kube(
                                    format!("renumber ControllerRevision {namespace}/{rev_name}"),
                                    e,
                                )
                            })?;
                    }
                    found = Some(hash);
                    break;
                }
                None => {
                    let rev = rollback::build_revision(replica_set, &template, &hash, newest + 1)
                        .map_err(|message| Error::InvalidObject {
                        object: format!("ManifestWorkReplicaSet {namespace}/{name}"),
                        message,
                    })?;
                    let rev = read::to_raw(&rev, || {
                        format!("ControllerRevision {namespace}/{rev_name}")
                    })?;
                    match api.create(&PostParams::default(), &rev).await {
                        Ok(_) => {
                            created = true;
                            found = Some(hash);
                            break;
                        }
                        Err(kube::Error::Api(status)) if status.code == 409 => continue,
                        Err(e) => {
                            return Err(Error::kube(
                                format!("create ControllerRevision {namespace}/{rev_name}"),
                                e,
                            ));
                        }
                    }
                }
            }
        }
        let Some(update) = found else {
            return Err(Error::InvalidObject {
                object: format!("ManifestWorkReplicaSet {namespace}/{name}"),
                message: format!(
                    "no free ControllerRevision name for spec.manifestWorkTemplate after {} \
                     hash collisions",
                    collisions.unwrap_or(0)
                ),
            });
        };
        new_status.collision_count = collisions;
        let changed = new_status.update_revision.as_deref() != Some(update.as_str());
        if changed {
            new_status.aborted_time = None;
        }
        new_status.update_revision = Some(update.clone());

        let mut current = None;
        if let Some(hash) = new_status.current_revision.clone()
            && hash != update
        {
            let rev_name = rollback::revision_name(&name, &hash);
            let rev = match self
                .decoder
                .get::<ControllerRevision>(&api, KIND_REVISION, &rev_name)
                .await
            {
                Ok(rev) => rev.map(Ok),
                // Unusable, as a revision that holds no template.
                Err(Error::Undecodable { message, .. }) => Some(Err(format!(
                    "ControllerRevision {namespace}/{rev_name} cannot be decoded: {message}"
                ))),
                Err(e) => return Err(e),
            };
            let key = format!("{namespace}/{name}#revision");
            match rev.map(|r| r.and_then(|r| rollback::revision_template(&r))) {
                Some(Ok(t)) => {
                    self.said.forget(&key);
                    current = Some((hash, t));
                }
                Some(Err(message)) => {
                    if self.said.changed(&key, &message) {
                        tracing::warn!(%message, revision = %rev_name, "current revision unusable");
                    }
                }
                None => {
                    if self.said.changed(&key, "gone") {
                        tracing::warn!(
                            revision = %rev_name,
                            "the current revision's ControllerRevision is gone: nothing to roll back to"
                        );
                    }
                }
            }
        }

        let keep_update = rollback::revision_name(&name, &update);
        let keep_current = new_status
            .current_revision
            .as_deref()
            .map(|h| rollback::revision_name(&name, h))
            .unwrap_or_default();
        let limit = replica_set
            .spec
            .revision_history_limit
            .unwrap_or(rollback::DEFAULT_REVISION_HISTORY_LIMIT);
        for old in rollback::revisions_to_prune(&history, &[&keep_update, &keep_current], limit) {
            match api.delete(&old, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => {
                    return Err(Error::kube(
                        format!("delete ControllerRevision {namespace}/{old}"),
                        e,
                    ));
                }
            }
        }

        let previous_reason = new_status
            .conditions
            .as_deref()
            .and_then(|c| conditions::find(c, rollback::CONDITION_PROGRESSING))
            .map(|c| c.reason.as_str());
        let found_again = if changed {
            !created
        } else {
            previous_reason == Some(rollback::REASON_FOUND_NEW_REVISION)
        };
        let progress_reason = if found_again {
            rollback::REASON_FOUND_NEW_REVISION
        } else {
            rollback::REASON_NEW_REVISION_CREATED
        };
        let aborted = new_status.aborted_time.is_some() && current.is_some();
        Ok(RollbackPlan {
            update,
            current,
            aborted,
            progress_reason,
        })
    }

    /// The templates of the clusters' works: with per-cluster values on and a template that
    /// uses variables, the ManagedClusters are listed to resolve them.
    async fn templates(&self, replica_set: &ManifestWorkReplicaSet) -> Result<Templates> {
        let base = replica_set
            .spec
            .manifest_work_template
            .clone()
            .unwrap_or_default();
        if !self.cluster_values || !values::uses_variables(&base) {
            return Ok(Templates::unresolved(base));
        }
        let api = read::api::<ManagedCluster>(&self.client, None);
        let (clusters, failures) = self
            .decoder
            .list::<ManagedCluster>(&api, &ListParams::default(), "ManagedCluster", || {
                "list ManagedClusters".to_string()
            })
            .await?;
        let mut templates = Templates::unresolved(base);
        templates.clusters = Some(clusters.into_iter().map(|c| (c.name_any(), c)).collect());
        // A cluster whose ManagedCluster does not decode gets no work: its values are unknown.
        for failure in failures {
            let error = read::undecodable("ManagedCluster", &failure);
            templates.failed.insert(failure.name, error);
        }
        Ok(templates)
    }

    /// The feedback aggregation opt-in: recomputes the aggregates the spec asks for and writes
    /// them when they changed and the interval allows; returns when to come back for a change
    /// held back by the interval. A replica set that no longer asks loses its aggregates.
    async fn aggregate_feedback(
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

    /// Lists the replica set's works in pages ([`pages`]), folding each into the accumulator
    /// `init` returns as its page arrives: a pass holds one page of works and what `fold`
    /// keeps of each, not every work of the fleet with its managedFields and feedback.
    async fn fold_owned_works<T>(
        &self,
        owner: &str,
        init: impl FnMut() -> T,
        fold: impl FnMut(&mut T, RawObject),
    ) -> Result<T> {
        let api = read::api::<ManifestWork>(&self.client, None);
        pages::fold(
            &self.decoder,
            &api,
            &owner_selector(owner),
            pages::PAGE_SIZE,
            || format!("list ManifestWorks of {owner}"),
            init,
            fold,
        )
        .await
    }

    /// Whether the replica set has any work left (a one-item list).
    async fn any_owned_work(&self, owner: &str) -> Result<bool> {
        let api = read::api::<ManifestWork>(&self.client, None);
        api.list(&owner_selector(owner).limit(1))
            .await
            .map(|l| !l.items.is_empty())
            .map_err(|e| Error::kube(format!("list ManifestWorks of {owner}"), e))
    }

    async fn delete_work(&self, work: &ManifestWork) -> Result<()> {
        let namespace = work.namespace().unwrap_or_default();
        self.delete_named_work(&namespace, &work.name_any()).await
    }

    async fn delete_named_work(&self, namespace: &str, name: &str) -> Result<()> {
        let api = read::api::<ManifestWork>(&self.client, Some(namespace));
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(e) => Err(Error::kube(
                format!("delete ManifestWork {namespace}/{name}"),
                e,
            )),
        }
    }

    /// Creates `required` or brings the live work in line with it, through the hub's one
    /// ManifestWork writer ([`crate::applier`]), from what the list already says of it.
    async fn apply_work(&self, required: &ManifestWork, live: Option<&Listed>) -> Result<()> {
        let namespace = required.namespace().unwrap_or_default();
        // Raw: the answer holds the work's manifests, as deep as the template.
        let api = read::api::<ManifestWork>(&self.client, Some(&namespace));
        let Some(listed) = live else {
            // A work created meanwhile (409) is reconciled on the next pass.
            return applier::create(&api, required, None).await.map(|_| ());
        };
        let name = listed.work.name_any();
        if listed.undecodable {
            // Compared as JSON: the merge patch is computed from the work as it is stored.
            let Some(raw) = self.decoder.get_raw(&api, KIND_WORK, &name).await? else {
                return Ok(());
            };
            let view = applier::stored_view(&raw, &namespace, &name)?;
            return applier::patch_toward(&api, raw.meta(), view, required, None)
                .await
                .map(|_| ());
        }
        let fetched;
        let live = if listed.current {
            // Its spec was dropped as equal to the template: equal metadata makes it equal.
            if metadata_equal(required, &listed.work) {
                return Ok(());
            }
            // The metadata differ: read the work again to patch against its full spec.
            match self
                .decoder
                .get::<ManifestWork>(&api, KIND_WORK, &name)
                .await?
            {
                Some(w) => fetched = w,
                // Gone meanwhile: its deletion reconciles the replica set again.
                None => return Ok(()),
            }
            &fetched
        } else {
            &listed.work
        };
        if manifest_work_equal(required, live) {
            return Ok(());
        }
        let view = applier::work_view(live);
        applier::patch_toward(&api, &live.metadata, view, required, None)
            .await
            .map(|_| ())
    }

    /// The deploy reconciler (upstream §8.3). Returns whether to go on, and the requeue time.
    async fn deploy(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        templates: &mut Templates,
        new_status: &mut ManifestWorkReplicaSetStatus,
        now: Timestamp,
        errors: &mut Vec<Error>,
        observed: &mut Observed,
    ) -> Result<(Step, Option<Duration>)> {
        let now_time = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now);
        let conditions = new_status.conditions.get_or_insert_with(Vec::new);
        let owner = owner_label(replica_set);
        if let Err(message) = validate_owner_label(&owner) {
            conditions::set(
                conditions,
                status::invalid_manifest_work_name(message),
                &now_time,
            );
            return Ok((Step::Stop, None));
        }
        let namespace = replica_set.namespace().unwrap_or_default();
        let refs = &replica_set.spec.placement_refs;
        let works = self.list_owned_works(&owner, refs, templates).await?;
        let by_cluster = index_works(works, &mut observed.works);
        self.delete_stale_works(&by_cluster, refs, errors).await;

        let mut pass = DeployPass::default();
        let placements = read::api::<Placement>(&self.client, Some(&namespace));
        for placement_ref in refs {
            let placement = match self
                .decoder
                .get::<Placement>(&placements, "Placement", &placement_ref.name)
                .await
            {
                Ok(Some(p)) => p,
                Ok(None) => {
                    let conditions = new_status.conditions.get_or_insert_with(Vec::new);
                    conditions::set(conditions, status::placement_not_found(), &now_time);
                    return Ok((Step::Stop, None));
                }
                // As upstream stops at a missing placement, ours stops at one it cannot read,
                // and says why; its next change reconciles the replica set again.
                Err(e @ Error::Undecodable { .. }) => {
                    let conditions = new_status.conditions.get_or_insert_with(Vec::new);
                    conditions::set(
                        conditions,
                        status::placement_undecodable(&[e.to_string()]),
                        &now_time,
                    );
                    return Ok((Step::Stop, None));
                }
                Err(e) => return Err(e),
            };
            let rolled = self
                .deploy_placement(
                    replica_set,
                    placement_ref,
                    &placement,
                    &by_cluster,
                    templates,
                    observed,
                    now,
                    errors,
                    &mut pass,
                )
                .await;
            if !rolled {
                let conditions = new_status.conditions.get_or_insert_with(Vec::new);
                conditions::set(conditions, status::placement_not_as_expected(), &now_time);
            }
        }
        self.write_deploy_status(
            replica_set,
            new_status,
            &pass,
            observed.count_updated,
            &now_time,
        );
        Error::aggregate(std::mem::take(errors))?;
        let requeue = (pass.min_requeue < MAX_REQUEUE).then_some(pass.min_requeue);
        Ok((Step::Continue, requeue))
    }

    /// The works the replica set owns, each kept without its managedFields and its manifests'
    /// status (feedback included): the deploy pass compares and patches metadata and spec, and
    /// reads the work-level conditions only.
    async fn list_owned_works(
        &self,
        owner: &str,
        refs: &[LocalPlacementReference],
        templates: &mut Templates,
    ) -> Result<Vec<Listed>> {
        let decoder = &self.decoder;
        self.fold_owned_works(owner, Vec::new, |works, raw| {
            // A work that does not decode is present, not up to date: its cluster gets no
            // second work, and its spec is patched from its JSON (see `apply_work`).
            let mut work = match decoder.decode::<ManifestWork>(KIND_WORK, &raw) {
                Ok(work) => work,
                Err(_) => {
                    let mut stub = ManifestWork::new(
                        raw.meta().name.as_deref().unwrap_or_default(),
                        ManifestWorkSpec::default(),
                    );
                    stub.metadata = kube::api::ObjectMeta {
                        labels: Some(read::labels(&raw)),
                        ..raw.meta().clone()
                    };
                    works.push(Listed {
                        work: stub,
                        current: false,
                        undecodable: true,
                    });
                    return;
                }
            };
            work.metadata.managed_fields = None;
            if let Some(status) = work.status.as_mut() {
                status.resource_status = None;
            }
            // Whether it holds its template is asked of the works of the replica set's
            // placements only (with per-cluster values, asking resolves the cluster's).
            let current = work
                .labels()
                .get(labels::PLACEMENT_NAME)
                .is_some_and(|p| refs.iter().any(|r| &r.name == p))
                && templates.holds(&work);
            if current {
                work.spec = ManifestWorkSpec::default();
            }
            works.push(Listed {
                work,
                current,
                undecodable: false,
            });
        })
        .await
    }

    /// Deletes the works of clusters no placement of the replica set wants any more (a work
    /// fanned out for no placement, or for one the replica set no longer names).
    async fn delete_stale_works(
        &self,
        by_cluster: &WorksByCluster,
        refs: &[LocalPlacementReference],
        errors: &mut Vec<Error>,
    ) {
        for (work, placements) in by_cluster.values() {
            let stale = placements.is_empty()
                || placements
                    .iter()
                    .any(|p| !refs.iter().any(|r| &r.name == p));
            if stale && let Err(e) = self.delete_work(&work.work).await {
                errors.push(e);
            }
        }
    }

    /// One placement's part of the deploy pass: its rollout computed from its decisions and
    /// its works, the works it calls for applied and the ones it removed deleted, and its
    /// summary added to `pass`. Errors go to `errors`; `false` when the rollout could not be
    /// computed (the caller says so in the `PlacementVerified` condition).
    #[allow(clippy::too_many_arguments)]
    async fn deploy_placement(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        placement_ref: &LocalPlacementReference,
        placement: &Placement,
        by_cluster: &WorksByCluster,
        templates: &mut Templates,
        observed: &mut Observed,
        now: Timestamp,
        errors: &mut Vec<Error>,
        pass: &mut DeployPass,
    ) -> bool {
        let namespace = replica_set.namespace().unwrap_or_default();
        let placement_works = observed
            .works
            .get(&placement_ref.name)
            .cloned()
            .unwrap_or_default();
        let Statuses {
            mut existing,
            succeeded,
            mut statuses,
            stalled,
        } = self.rollout_statuses(&placement_works);
        pass.stalled += stalled;
        let Some(groups) = self
            .placement_groups(&namespace, placement_ref, errors, pass)
            .await
        else {
            return true;
        };
        // With per-cluster values, every selected cluster is resolved now, so each one that
        // cannot be is reported (not only those this pass rolls out to). For the rollout it is
        // a failure that holds no slot (the engine's TimeOut status): it counts against
        // `maxFailures`, and within that the rollout goes on without it.
        if templates.clusters.is_some() {
            for cluster in groups.clusters() {
                if templates.get(cluster).is_none() {
                    statuses.push(ClusterRolloutStatus::new(
                        cluster,
                        GroupKey::default(),
                        RolloutStatus::TimeOut,
                    ));
                }
            }
        }
        let strategy = placement_ref.rollout_strategy.clone().unwrap_or_default();
        let result = match RolloutHandler::new(&groups).rollout(&strategy, &statuses, now) {
            Ok(r) => r,
            Err(source) => {
                errors.push(Error::Rollout {
                    placement: format!("{namespace}/{}", placement_ref.name),
                    source,
                });
                return false;
            }
        };
        if let Some(after) = result.recheck_after {
            pass.min_requeue = pass.min_requeue.min(after);
        }
        observed.breached |= result.max_failure_breach;
        observed.abort |= rollback::abort_wanted(&strategy, &result);
        self.carry_out_rollout(
            replica_set,
            placement_ref,
            &result,
            by_cluster,
            &placement_works,
            templates,
            &mut existing,
            errors,
        )
        .await;
        let selected = i64::from(
            placement
                .status
                .as_ref()
                .and_then(|s| s.number_of_selected_clusters)
                .unwrap_or(0),
        );
        let decision_groups = placement
            .status
            .as_ref()
            .and_then(|s| s.decision_groups.as_ref())
            .map_or(0, Vec::len);
        pass.selected += selected;
        pass.summaries.push(PlacementSummary {
            name: Some(placement_ref.name.clone()),
            available_decision_groups: Some(status::available_decision_groups(
                decision_groups,
                existing.len(),
                selected,
            )),
            summary: Some(ManifestWorkReplicaSetSummary {
                desired_total: Some(selected),
                updated: Some(if observed.count_updated {
                    succeeded.len() as i64
                } else {
                    0
                }),
                ..summary_with_total(existing.len() as i64)
            }),
        });
        pass.count += existing.len();
        pass.succeeded += succeeded.len();
        true
    }

    /// The clusters a placement decided, by decision group. `None` when they cannot be known
    /// (a decision that does not decode, noted in `pass`; or an error, pushed to `errors`):
    /// nothing is then rolled out or removed for the placement until its decisions change.
    async fn placement_groups(
        &self,
        namespace: &str,
        placement_ref: &LocalPlacementReference,
        errors: &mut Vec<Error>,
        pass: &mut DeployPass,
    ) -> Option<ClusterGroups> {
        let listed = self
            .decoder
            .list_placement_decisions(&self.client, namespace, &placement_ref.name)
            .await;
        match listed {
            // Without all of its decisions the placement's clusters are unknown: nothing is
            // rolled out or removed for it until the decision changes.
            Ok((_, failures)) if !failures.is_empty() => {
                pass.undecodable.extend(
                    failures
                        .iter()
                        .map(|f| read::undecodable("PlacementDecision", f).to_string()),
                );
                None
            }
            Ok((items, _)) => match ClusterGroups::from_decisions(&items) {
                Ok(groups) => Some(groups),
                Err(source) => {
                    errors.push(Error::Rollout {
                        placement: format!("{namespace}/{}", placement_ref.name),
                        source,
                    });
                    None
                }
            },
            Err(e) => {
                errors.push(e);
                None
            }
        }
    }

    /// The rollout status of each cluster whose work holds its current template, among a
    /// placement's works.
    fn rollout_statuses(&self, placement_works: &[Arc<Listed>]) -> Statuses {
        let mut out = Statuses::default();
        for Listed { work, current, .. } in placement_works.iter().map(|w| &**w) {
            if !current {
                continue;
            }
            let cluster = work.namespace().unwrap_or_default();
            out.existing.insert(cluster.clone());
            let st = cluster_rollout_status(&cluster, GroupKey::default(), work, self.criteria);
            if st.status == RolloutStatus::Succeeded {
                out.succeeded.insert(cluster);
            } else if self.criteria == SuccessCriteria::ProgressingCondition
                && awaits_progressing(work)
            {
                out.stalled += 1;
            }
            out.statuses.push(st);
        }
        out
    }

    /// Applies the works a placement's rollout calls for and deletes those of the clusters it
    /// removed, keeping `existing` (the clusters with a work) up to date.
    #[allow(clippy::too_many_arguments)]
    async fn carry_out_rollout(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        placement_ref: &LocalPlacementReference,
        result: &RolloutResult,
        by_cluster: &WorksByCluster,
        placement_works: &[Arc<Listed>],
        templates: &mut Templates,
        existing: &mut BTreeSet<String>,
        errors: &mut Vec<Error>,
    ) {
        for cluster in result
            .clusters_to_rollout
            .iter()
            .filter(|c| c.status == RolloutStatus::ToApply)
        {
            let record = by_cluster
                .get(&cluster.cluster_name)
                .filter(|(_, placements)| placements.contains(&placement_ref.name));
            let name = record.and_then(|(w, _)| w.work.metadata.name.as_deref());
            // A cluster whose values cannot be resolved gets no work (the error is reported in
            // the ClusterValuesResolved condition).
            let Some(spec) = templates.get(&cluster.cluster_name) else {
                continue;
            };
            let required = build_work_with_spec(
                replica_set,
                spec.clone(),
                name,
                &cluster.cluster_name,
                &placement_ref.name,
            );
            match self.apply_work(&required, record.map(|(w, _)| &**w)).await {
                Ok(()) => {
                    existing.insert(cluster.cluster_name.clone());
                }
                Err(e) => errors.push(e),
            }
        }
        for removed in &result.clusters_removed {
            for work in placement_works
                .iter()
                .map(|w| &w.work)
                .filter(|w| w.namespace().as_deref() == Some(removed.cluster_name.as_str()))
            {
                match self.delete_work(work).await {
                    Ok(()) => {
                        existing.remove(&removed.cluster_name);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
    }

    /// The deploy pass's status: the placements' summaries, the totals, and the
    /// `PlacementVerified` and `PlacementRolledOut` conditions (a stalled rollout said once per
    /// change, at WARN).
    fn write_deploy_status(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        new_status: &mut ManifestWorkReplicaSetStatus,
        pass: &DeployPass,
        count_updated: bool,
        now_time: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
    ) {
        let namespace = replica_set.namespace().unwrap_or_default();
        let count = pass.count;
        new_status.placements_summary = Some(pass.summaries.clone());
        let summary = new_status
            .summary
            .get_or_insert_with(|| summary_with_total(0));
        summary.total = Some(count as i64);
        summary.desired_total = Some(pass.selected);
        if count_updated {
            summary.updated = Some(pass.succeeded as i64);
        }
        if count == 0 {
            summary.applied = Some(0);
            summary.available = Some(0);
            summary.degraded = Some(0);
            summary.progressing = Some(0);
        }
        let conditions = new_status.conditions.get_or_insert_with(Vec::new);
        let verified = if pass.undecodable.is_empty() {
            status::placement_verified(count)
        } else {
            status::placement_undecodable(&pass.undecodable)
        };
        conditions::set(conditions, verified, now_time);
        let mut rolled_out = status::placement_rolled_out(pass.selected, pass.succeeded as i64);
        // Said once per change of the message, however often the stalled rollout is
        // reconciled (and whatever an older cached status says).
        let stall_key = format!("{namespace}/{}#stall", replica_set.name_any());
        if rolled_out.status == ConditionStatus::False && pass.stalled > 0 {
            rolled_out.message = status::stalled_rollout_message(pass.stalled, count);
            if self.said.changed(&stall_key, &rolled_out.message) {
                tracing::warn!(
                    replica_set = %format!("{namespace}/{}", replica_set.name_any()),
                    stalled = pass.stalled,
                    works = count,
                    "rollout cannot advance: ManifestWorks are applied but report no Progressing \
                     condition; add a condition rule setting Progressing, or opt in with \
                     SuccessCriteria::AppliedAndAvailable (ocm-hub-controller \
                     --success-criteria applied-and-available)"
                );
            }
        } else {
            self.said.forget(&stall_key);
        }
        conditions::set(conditions, rolled_out, now_time);
    }

    /// The status reconciler (upstream §8.4): counts by condition and `ManifestworkApplied`.
    ///
    /// It counts the works the deploy pass listed (`works`, by placement), as upstream's
    /// status reconciler reads the same informer cache as its deploy reconciler: the writes of
    /// this pass show in the next reconcile, which their watch events trigger.
    fn update_status_counts(
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

    /// Runs the controller until `shutdown` completes: watches replica sets, their works,
    /// placements and placement decisions on the hub. Every watch reads raw objects, so one
    /// object that does not decode stops nothing (see the [module docs](self)).
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        // kube's graceful shutdown wants a Sync future; callers need not provide one.
        let (shutdown, _) = crate::runtime::shutdown::sync_future(shutdown);
        let client = self.client.clone();
        let resource = ApiResource::erase::<ManifestWorkReplicaSet>(&());
        let replica_sets = Api::<RawObject>::all_with(client.clone(), &resource);
        let controller =
            Controller::new_with(replica_sets, watcher::Config::default(), resource.clone());
        let store = controller.store();
        let index = Arc::new(ReplicaSetIndex::default());
        let synced_store = store.clone();
        let synced = self.synced.clone();
        let listed = async move {
            // Fails only once the controller (its store's writer) is gone.
            if synced_store.wait_until_ready().await.is_ok()
                && let Some(flag) = synced
            {
                flag.store(true, Ordering::SeqCst);
            }
        };
        let works = ApiResource::erase::<ManifestWork>(&());
        let decisions = ApiResource::erase::<PlacementDecision>(&());
        let placements = ApiResource::erase::<Placement>(&());
        let owner_resource = resource.clone();
        let (decisions_store, decisions_index, decisions_resource) =
            (store.clone(), index.clone(), resource.clone());
        let (placements_store, placements_index, placements_resource) =
            (store.clone(), index.clone(), resource.clone());
        let controller = controller
            .watches_with(
                Api::<RawObject>::all_with(client.clone(), &works),
                works,
                watcher::Config::default().labels(labels::MANIFEST_WORK_REPLICA_SET),
                move |work: RawObject| {
                    let owner = read::labels(&work)
                        .remove(labels::MANIFEST_WORK_REPLICA_SET)
                        .unwrap_or_default();
                    let parts: Vec<&str> = owner.split('.').collect();
                    match parts.as_slice() {
                        [namespace, name] => Some(
                            ObjectRef::new_with(name, owner_resource.clone()).within(namespace),
                        ),
                        _ => None,
                    }
                },
            )
            .watches_with(
                Api::<RawObject>::all_with(client.clone(), &decisions),
                decisions,
                watcher::Config::default().labels(labels::PLACEMENT),
                move |decision: RawObject| {
                    let placement = read::labels(&decision)
                        .remove(labels::PLACEMENT)
                        .unwrap_or_default();
                    decisions_index.referencing(
                        &decisions_store.state(),
                        &decisions_resource,
                        decision.meta().namespace.as_deref(),
                        &placement,
                    )
                },
            )
            .watches_with(
                Api::<RawObject>::all_with(client.clone(), &placements),
                placements,
                watcher::Config::default(),
                move |placement: RawObject| {
                    placements_index.referencing(
                        &placements_store.state(),
                        &placements_resource,
                        placement.meta().namespace.as_deref(),
                        placement.meta().name.as_deref().unwrap_or_default(),
                    )
                },
            );
        // With an opt-in that needs fields of the extended CRD, the installed CRD is watched:
        // a change in what it keeps of them reconciles every replica set (their condition).
        let controller = if fields::opt_ins(self.rollback, self.feedback_aggregation).is_empty() {
            controller
        } else {
            let this = self.clone();
            let crd_store = store.clone();
            let crd_resource = resource.clone();
            let crds = ApiResource::erase::<CustomResourceDefinition>(&());
            controller.watches_with(
                Api::<RawObject>::all_with(client.clone(), &crds),
                crds,
                watcher::Config::default()
                    .fields(&format!("metadata.name={}", fields::REPLICA_SET_CRD)),
                move |crd: RawObject| {
                    let learnt = ocm_api::k8s::json::with_stack(crd.depth(), || {
                        this.decoder
                            .decode::<CustomResourceDefinition>("CustomResourceDefinition", &crd)
                            .is_ok_and(|crd| this.learn_crd(&crd, true))
                    });
                    if !learnt {
                        return Vec::new();
                    }
                    crd_store
                        .state()
                        .iter()
                        .map(|rs| ObjectRef::from_obj_with(rs.as_ref(), crd_resource.clone()))
                        .collect::<Vec<_>>()
                },
            )
        };
        // With per-cluster values, a cluster's labels and claims feed its work: a change of
        // them (not a heartbeat or a condition) reconciles every replica set whose template
        // uses variables.
        let controller = if self.cluster_values {
            let inputs = values::ClusterInputs::default();
            let decoder = self.decoder.clone();
            let clusters_store = store.clone();
            let clusters_resource = resource.clone();
            let clusters = ApiResource::erase::<ManagedCluster>(&());
            controller.watches_with(
                Api::<RawObject>::all_with(client, &clusters),
                clusters,
                watcher::Config::default(),
                move |cluster: RawObject| {
                    let changed = ocm_api::k8s::json::with_stack(cluster.depth(), || {
                        decoder
                            .decode::<ManagedCluster>("ManagedCluster", &cluster)
                            .is_ok_and(|cluster| inputs.changed(&cluster))
                    });
                    if !changed {
                        return Vec::new();
                    }
                    index.using_variables(&clusters_store.state(), &clusters_resource)
                },
            )
        } else {
            controller
        };
        let controller = controller
            .graceful_shutdown_on(shutdown)
            .run(
                |raw: Arc<RawObject>, ctx: Arc<ReplicaSetController>| async move {
                    let outcome = ctx.reconcile_raw(&raw).await?;
                    ctx.said.forget(&failure_key(&raw));
                    Ok::<_, Error>(match outcome.requeue_after {
                        Some(after) => Action::requeue(after),
                        None => Action::await_change(),
                    })
                },
                |raw, error: &Error, ctx| {
                    // A failure that repeats unchanged (retried every 5 s) is logged once.
                    let key = failure_key(&raw);
                    if ctx.said.changed(&key, &error.to_string()) {
                        tracing::warn!(%error, replica_set = %key.trim_end_matches("#reconcile"), "ManifestWorkReplicaSet reconcile failed");
                    } else {
                        tracing::debug!(%error, "ManifestWorkReplicaSet reconcile failed again");
                    }
                    Action::requeue(Duration::from_secs(5))
                },
                Arc::new(self),
            )
            .for_each(|_| futures::future::ready(()));
        futures::future::join(controller, listed).await;
    }
}

/// What the watches' mappers read of each replica set: the placements it names and whether
/// its template uses per-cluster variables, read once per resource version from its JSON
/// (field by field, so also from a replica set that does not decode as a whole).
#[derive(Default)]
struct ReplicaSetIndex {
    entries: std::sync::Mutex<std::collections::HashMap<(String, String), IndexEntry>>,
}

struct IndexEntry {
    version: Option<String>,
    placements: Vec<String>,
    uses_variables: bool,
}

impl ReplicaSetIndex {
    /// Runs `f` over the entries of `replica_sets` (brought up to date; the entries of replica
    /// sets no longer there are dropped).
    fn with_entries<T>(
        &self,
        replica_sets: &[Arc<RawObject>],
        mut f: impl FnMut(&RawObject, &IndexEntry) -> Option<T>,
    ) -> Vec<T> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = std::collections::HashSet::with_capacity(replica_sets.len());
        let mut out = Vec::new();
        for raw in replica_sets {
            let meta = raw.meta();
            let key = (
                meta.namespace.clone().unwrap_or_default(),
                meta.name.clone().unwrap_or_default(),
            );
            let stale = entries
                .get(&key)
                .is_none_or(|e| e.version.is_none() || e.version != meta.resource_version);
            if stale {
                entries.insert(key.clone(), IndexEntry::of(raw));
            }
            if let Some(entry) = entries.get(&key)
                && let Some(item) = f(raw, entry)
            {
                out.push(item);
            }
            seen.insert(key);
        }
        entries.retain(|k, _| seen.contains(k));
        out
    }

    /// The replica sets of `namespace` that name `placement`.
    fn referencing(
        &self,
        replica_sets: &[Arc<RawObject>],
        resource: &ApiResource,
        namespace: Option<&str>,
        placement: &str,
    ) -> Vec<ObjectRef<RawObject>> {
        self.with_entries(replica_sets, |raw, entry| {
            (raw.meta().namespace.as_deref() == namespace
                && entry.placements.iter().any(|p| p == placement))
            .then(|| ObjectRef::from_obj_with(raw, resource.clone()))
        })
    }

    /// The replica sets whose template uses per-cluster variables.
    fn using_variables(
        &self,
        replica_sets: &[Arc<RawObject>],
        resource: &ApiResource,
    ) -> Vec<ObjectRef<RawObject>> {
        self.with_entries(replica_sets, |raw, entry| {
            entry
                .uses_variables
                .then(|| ObjectRef::from_obj_with(raw, resource.clone()))
        })
    }
}

impl IndexEntry {
    fn of(raw: &RawObject) -> Self {
        #[derive(serde::Deserialize)]
        struct PlacementName {
            name: String,
        }
        let placements = read::field::<Vec<serde_json::Value>>(raw, &["spec", "placementRefs"])
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| serde_json::from_value::<PlacementName>(r).ok())
            .map(|r| r.name)
            .collect();
        // The template may nest as deep as the API server takes: decoded on a stack for it,
        // as a spec whose manifests are safe to walk and drop anywhere.
        let uses_variables = ocm_api::k8s::json::with_stack(raw.depth(), || {
            read::field::<ManifestWorkSpec>(raw, &["spec", "manifestWorkTemplate"])
                .is_some_and(|t| values::uses_variables(&t))
        });
        Self {
            version: raw.meta().resource_version.clone(),
            placements,
            uses_variables,
        }
    }
}

/// `Some(now)`: a read of the CRD that no watch keeps current.
fn read_at_now() -> Option<std::time::Instant> {
    Some(std::time::Instant::now())
}

/// The [`LastSaid`] key of a replica set's reconcile failures.
fn failure_key(replica_set: &RawObject) -> String {
    format!(
        "{}/{}#reconcile",
        replica_set.meta().namespace.as_deref().unwrap_or_default(),
        replica_set.meta().name.as_deref().unwrap_or_default()
    )
}

/// What the finalizer's handling reads of a replica set, read field by field from its JSON
/// (so also from one that does not decode as a whole): name, namespace, uid, resource
/// version, finalizers, deletion timestamp and `spec.cascadeDeletionPolicy`.
fn lifecycle(raw: &RawObject) -> ManifestWorkReplicaSet {
    let mut replica_set = ManifestWorkReplicaSet::new(
        raw.meta().name.as_deref().unwrap_or_default(),
        Default::default(),
    );
    replica_set.metadata = kube::api::ObjectMeta {
        finalizers: read::field(raw, &["metadata", "finalizers"]),
        deletion_timestamp: read::field(raw, &["metadata", "deletionTimestamp"]),
        ..raw.meta().clone()
    };
    replica_set.spec.cascade_deletion_policy = read::field(raw, &["spec", "cascadeDeletionPolicy"]);
    replica_set
}

fn has_cleanup_finalizer(replica_set: &ManifestWorkReplicaSet) -> bool {
    replica_set
        .finalizers()
        .iter()
        .any(|f| f == finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP)
}

/// The label selector of a replica set's works.
fn owner_selector(owner: &str) -> ListParams {
    ListParams::default().labels(&format!("{}={owner}", labels::MANIFEST_WORK_REPLICA_SET))
}

fn summary_with_total(total: i64) -> ManifestWorkReplicaSetSummary {
    ManifestWorkReplicaSetSummary {
        total: Some(total),
        progressing: Some(0),
        available: Some(0),
        degraded: Some(0),
        applied: Some(0),
        desired_total: Some(0),
        updated: Some(0),
    }
}

fn write_counts(summary: &mut ManifestWorkReplicaSetSummary, counts: &WorkCounts) {
    summary.applied = Some(counts.applied);
    summary.progressing = Some(counts.progressing);
    summary.available = Some(counts.available);
    summary.degraded = Some(counts.degraded);
}
