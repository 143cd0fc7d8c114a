//! The ManifestWorkReplicaSet hub controller: the I/O shell around [`super`]'s decisions.
//!
//! One [`ReplicaSetController::reconcile`] runs upstream's reconcilers in order: finalize (when
//! the replica set is being deleted), add-finalizer, deploy (create, update and delete one
//! ManifestWork per selected cluster, following each placement's rollout strategy) and status
//! (summaries and conditions), then patches the status when it changed.
//! [`ReplicaSetController::run`] drives it from watches with kube's controller runtime.
//!
//! This file holds the controller, one reconcile's order and the watches; each reconciler is a
//! file of its own:
//!
//! | file | upstream | what it does |
//! |---|---|---|
//! | `finalize.rs` | `finalizeReconciler`, `addFinalizerReconciler` | the cleanup finalizer, and the works' deletion |
//! | `deploy.rs` | `deployReconciler` | one ManifestWork per selected cluster, by each placement's rollout |
//! | `summary.rs` | `statusReconciler` | the summaries, and feedback aggregation (ours) |
//! | `revisions.rs` | (ours) | the revision history the rollback opt-in rolls back to |
//! | `installed.rs` | (ours) | whether the installed CRD keeps the opt-in fields |
//!
//! A deploy pass that fails somewhere (an apply the hub refuses, a rollout that cannot be
//! computed, a stale work that cannot be deleted) goes on with the rest, lets the status
//! reconciler run and then returns the failures. When it leaves the replica set with no work
//! at all, `PlacementVerified` is `False/NotAsExpected` with the failures as its message
//! rather than `PlacementDecisionEmpty`, which is kept for placements that select nothing
//! (as upstream ocm#1703 reports it; [`status::placement_not_applied`]).
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
use kube::runtime::reflector::{ObjectRef, Store};
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

mod deploy;
mod finalize;
mod installed;
mod revisions;
mod summary;

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
        let api = read::api::<ManifestWorkReplicaSet>(&self.client, Some(&namespace));
        let mut outcome = ReconcileOutcome::default();

        if replica_set.metadata.deletion_timestamp.is_some() {
            return self.finalize(&api, replica_set).await;
        }
        let Some(replica_set) = self.ensure_finalizer(&api, replica_set).await? else {
            // Deleted meanwhile: its next event finalizes it.
            return Ok(outcome);
        };
        let replica_set = replica_set.as_ref();

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
        write_status(&api, replica_set, &before, &new_status).await?;
        Error::aggregate(errors)?;
        Ok(outcome)
    }

    /// The replica set with the cleanup finalizer, added (a patch) when it is missing;
    /// `None` when it was deleted meanwhile.
    async fn ensure_finalizer<'a>(
        &self,
        api: &Api<RawObject>,
        replica_set: &'a ManifestWorkReplicaSet,
    ) -> Result<Option<std::borrow::Cow<'a, ManifestWorkReplicaSet>>> {
        use std::borrow::Cow;
        if has_cleanup_finalizer(replica_set) {
            // The cache has caught up with the finalizer (if this controller added it).
            if let Some(uid) = &replica_set.metadata.uid {
                self.finalizer_memory().remove(uid);
            }
            return Ok(Some(Cow::Borrowed(replica_set)));
        }
        if self.added_finalizer_over(replica_set) {
            // A lagging cache's copy of a version this controller already patched.
            let mut copy = replica_set.clone();
            copy.finalizers_mut()
                .push(finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP.to_string());
            return Ok(Some(Cow::Owned(copy)));
        }
        Ok(self.add_finalizer(api, replica_set).await?.map(Cow::Owned))
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
        let listed = mark_synced(store.clone(), self.synced.clone());
        let controller = watch_works(controller, &client, &resource);
        let controller = watch_placements(controller, &client, &resource, &store, &index);
        // With an opt-in that needs fields of the extended CRD, the installed CRD is watched:
        // a change in what it keeps of them reconciles every replica set (their condition).
        let controller = if fields::opt_ins(self.rollback, self.feedback_aggregation).is_empty() {
            controller
        } else {
            self.watch_installed_crd(controller, &client, &resource, &store)
        };
        let controller = if self.cluster_values {
            self.watch_cluster_inputs(controller, &client, &resource, &store, index)
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

    /// The installed ManifestWorkReplicaSet CRD: a change in which opt-in fields it keeps
    /// reconciles every replica set.
    fn watch_installed_crd(
        &self,
        controller: Controller<RawObject>,
        client: &Client,
        resource: &ApiResource,
        store: &Store<RawObject>,
    ) -> Controller<RawObject> {
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
    }

    /// With per-cluster values, a cluster's labels and claims feed its work: a change of them
    /// (not a heartbeat or a condition) reconciles every replica set whose template uses
    /// variables.
    fn watch_cluster_inputs(
        &self,
        controller: Controller<RawObject>,
        client: &Client,
        resource: &ApiResource,
        store: &Store<RawObject>,
        index: Arc<ReplicaSetIndex>,
    ) -> Controller<RawObject> {
        let inputs = values::ClusterInputs::default();
        let decoder = self.decoder.clone();
        let clusters_store = store.clone();
        let clusters_resource = resource.clone();
        let clusters = ApiResource::erase::<ManagedCluster>(&());
        controller.watches_with(
            Api::<RawObject>::all_with(client.clone(), &clusters),
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
    }
}

/// Sets `synced` once the controller's store has listed the replica sets (never, if the
/// controller stops first).
async fn mark_synced(store: Store<RawObject>, synced: Option<Arc<AtomicBool>>) {
    // Fails only once the controller (its store's writer) is gone.
    if store.wait_until_ready().await.is_ok()
        && let Some(flag) = synced
    {
        flag.store(true, Ordering::SeqCst);
    }
}

/// The replica sets' works: a work's owner label names its replica set.
fn watch_works(
    controller: Controller<RawObject>,
    client: &Client,
    resource: &ApiResource,
) -> Controller<RawObject> {
    let owner_resource = resource.clone();
    let works = ApiResource::erase::<ManifestWork>(&());
    controller.watches_with(
        Api::<RawObject>::all_with(client.clone(), &works),
        works,
        watcher::Config::default().labels(labels::MANIFEST_WORK_REPLICA_SET),
        move |work: RawObject| {
            let owner = read::labels(&work)
                .remove(labels::MANIFEST_WORK_REPLICA_SET)
                .unwrap_or_default();
            let parts: Vec<&str> = owner.split('.').collect();
            match parts.as_slice() {
                [namespace, name] => {
                    Some(ObjectRef::new_with(name, owner_resource.clone()).within(namespace))
                }
                _ => None,
            }
        },
    )
}

/// PlacementDecisions and Placements: each reconciles the replica sets that name its
/// placement.
fn watch_placements(
    controller: Controller<RawObject>,
    client: &Client,
    resource: &ApiResource,
    store: &Store<RawObject>,
    index: &Arc<ReplicaSetIndex>,
) -> Controller<RawObject> {
    let decisions = ApiResource::erase::<PlacementDecision>(&());
    let placements = ApiResource::erase::<Placement>(&());
    let (decisions_store, decisions_index, decisions_resource) =
        (store.clone(), index.clone(), resource.clone());
    let (placements_store, placements_index, placements_resource) =
        (store.clone(), index.clone(), resource.clone());
    controller
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
        )
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

/// Writes the status a pass computed when it differs from the one read, as a merge patch of
/// the whole status (fields a pass clears are written as null, or the patch would keep them).
async fn write_status(
    api: &Api<RawObject>,
    replica_set: &ManifestWorkReplicaSet,
    before: &ManifestWorkReplicaSetStatus,
    new_status: &ManifestWorkReplicaSetStatus,
) -> Result<()> {
    if new_status == before {
        return Ok(());
    }
    let namespace = replica_set.namespace().unwrap_or_default();
    let name = replica_set.name_any();
    let mut patch = json!({ "status": new_status });
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
    Ok(())
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
