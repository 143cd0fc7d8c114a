//! The Placement hub controller: the I/O shell around the scheduler core.
//!
//! [`PlacementController::reconcile_all`] reads the hub (ManagedClusters, ManagedClusterSets,
//! bindings, Placements, PlacementDecisions, AddOnPlacementScores), schedules every Placement
//! with [`Scheduler`], writes the PlacementDecisions ("bind") and patches each Placement's
//! status, with as few writes as possible: nothing is written when nothing changed.
//! [`PlacementController::run`] keeps watch caches of the same objects and reschedules when
//! any of them changes, when a time-limited toleration runs out and when an
//! AddOnPlacementScore's `validUntil` passes.
//!
//! # Events
//!
//! Each write to a PlacementDecision is announced with an `events.k8s.io/v1` Event about the
//! Placement (`regarding`) that names the PlacementDecision as `related`, reported by
//! [`EVENT_REPORTER`] (see [`PlacementController::with_reporter`]):
//!
//! | reason           | action             | type               | when                                  |
//! |------------------|--------------------|--------------------|---------------------------------------|
//! | `DecisionCreate` | `DecisionCreated`  | Normal             | a PlacementDecision was created        |
//! | `DecisionUpdate` | `DecisionUpdated`  | Normal or Warning  | its `status.decisions` were patched    |
//! | `ScoreUpdate`    | `ScoreUpdated`     | Normal             | same, when any cluster was scored      |
//! | `DecisionDelete` | `DecisionDeleted`  | Normal             | a PlacementDecision was deleted        |
//!
//! `DecisionUpdate` is a Warning when the scheduling status is Warning (an expired
//! AddOnPlacementScore, for instance); its note then ends in `: <message> in plugin <plugin>`.
//! The `ScoreUpdate` note lists `cluster:total ` for every feasible cluster in name order, cut
//! short with `......` rather than grow past 1000 bytes. A label-only patch and a round that
//! changes nothing emit no Event. Failing to publish an Event is logged and otherwise ignored.
//!
//! Differences from upstream's controller, all deliberate: every change reschedules every
//! placement (upstream fans events out to the affected placements; the result is the same
//! because unchanged placements cause no write), score expiry triggers a reschedule (upstream
//! waits for its 10-minute resync), and `DecisionDelete` is emitted only for a delete that
//! succeeded.
//!
//! Opt-ins (our additions), each given to the controller through its scheduler
//! ([`PlacementController::with_scheduler`]):
//!
//! * topology spread, `spec.spreadPolicy.spreadConstraints`, which upstream ignores:
//!   `Scheduler::new().with_topology_spread(true)` (see [`crate::spread`]);
//! * scores in decisions, `spec.sortBy`, `spec.scoreRateLimit`, `status.lastScoreUpdateTime`
//!   and `ClusterDecision.score`, fields of upstream's API its controller does not implement:
//!   `Scheduler::new().with_decision_scores(true)` (see [`crate::decisions`]). The controller
//!   then holds back an update that only changes scores or order until `scoreRateLimit` after
//!   `lastScoreUpdateTime` (and asks to run again then), and moves `lastScoreUpdateTime` to the
//!   round's time whenever it writes a changed score.
//!
//! The SIG-Multicluster outputs are controllers of their own, behind upstream's gate names:
//! [`crate::sig`] mirrors the PlacementDecisions this controller writes
//! (`SIGPlacementDecision`), [`crate::profile`] maintains ClusterProfiles (`ClusterProfile`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Client, Resource, ResourceExt};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use serde_json::json;

use crate::decisions::{self, ScoreUpdate};
pub use crate::hub::HubState;
use crate::result::{ScheduleResult, StatusCode};
use crate::watch::{self, Round};
use crate::{Scheduler, Snapshot};

/// Reschedule everything at least this often (upstream's informer resync period).
pub const RESYNC_PERIOD: Duration = Duration::from_secs(10 * 60);

/// The `reportingController` of the controller's Events unless
/// [`PlacementController::with_reporter`] says otherwise (upstream's name).
pub const EVENT_REPORTER: &str = "placement-controller";

/// The longest `ScoreUpdate` note, in bytes, before the `......` marker (upstream keeps a
/// margin below the API server's 1024-character limit on notes).
pub const MAX_SCORE_NOTE_LEN: usize = 1000;

use crate::Error;
pub use crate::error::ControllerError;
use crate::error::kube_error;

impl HubState {
    /// Lists everything from the hub.
    pub async fn list(client: &Client) -> Result<Self, Error> {
        fn arcs<K>(items: Vec<K>) -> Vec<Arc<K>> {
            items.into_iter().map(Arc::new).collect()
        }
        // Objects that do not decode are left out (and logged); Placements that do not are
        // kept aside, for their status.
        let (placements, undecodable_placements) = watch::list_all(client).await?;
        Ok(Self {
            clusters: arcs(watch::list_all(client).await?.0),
            sets: arcs(watch::list_all(client).await?.0),
            bindings: arcs(watch::list_all(client).await?.0),
            placements: arcs(placements),
            decisions: arcs(watch::list_all(client).await?.0),
            scores: arcs(watch::list_all(client).await?.0),
            undecodable_placements,
        })
    }
}

/// What one placement's reconcile did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlacementOutcome {
    /// Writes made (PlacementDecision creates, patches and deletes, Placement status patches).
    pub writes: usize,
    /// When to schedule this placement again (a time-limited toleration runs out).
    pub requeue_after: Option<Duration>,
    /// The scheduling status was not Success (upstream retries such placements).
    pub needs_retry: bool,
    /// Kubernetes Events published (failed publications are logged and not counted).
    pub events: usize,
}

/// Hears of every placement the controller schedules, for example to export metrics. See
/// [`PlacementController::with_observer`]. A closure taking the same arguments is one:
///
/// ```
/// # use std::sync::Arc;
/// # use std::time::Duration;
/// # use ocm_placement::controller::ScheduleObserver;
/// let observer: Arc<dyn ScheduleObserver> =
///     Arc::new(|namespace: &str, name: &str, elapsed: Duration, succeeded: bool| {
///         println!("{namespace}/{name} scheduled in {elapsed:?} ({succeeded})");
///     });
/// observer.scheduled("default", "placement1", Duration::from_millis(3), true);
/// ```
///
/// A hub binary connects its metrics this way (`ocm_work::runtime::metrics::HubMetrics` has
/// a `scheduled` method of this shape), so that neither crate depends on the other.
pub trait ScheduleObserver: Send + Sync {
    /// The placement `namespace`/`name` was scheduled by the scheduler core in `elapsed`
    /// (`succeeded`: the scheduler returned a result, whatever its status).
    fn scheduled(&self, namespace: &str, name: &str, elapsed: Duration, succeeded: bool);
}

impl<F> ScheduleObserver for F
where
    F: Fn(&str, &str, Duration, bool) + Send + Sync,
{
    fn scheduled(&self, namespace: &str, name: &str, elapsed: Duration, succeeded: bool) {
        self(namespace, name, elapsed, succeeded);
    }
}

/// The Placement hub controller.
#[derive(Clone)]
pub struct PlacementController {
    client: Client,
    clock: Arc<dyn Clock>,
    scheduler: Arc<Scheduler>,
    reporter: Reporter,
    recorder: Recorder,
    observer: Option<Arc<dyn ScheduleObserver>>,
    synced: Option<Arc<AtomicBool>>,
    /// What was last logged: a problem found again on every pass is logged once per change.
    said: Arc<ocm_api::repeats::LastSaid>,
}

impl std::fmt::Debug for PlacementController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlacementController")
            .field("reporter", &self.reporter)
            .finish_non_exhaustive()
    }
}

impl PlacementController {
    /// A controller with upstream's scheduler and the wall clock, reporting its Events as
    /// [`EVENT_REPORTER`] with this host's name as the instance.
    pub fn new(client: Client) -> Self {
        let reporter = Reporter::from(EVENT_REPORTER);
        Self {
            recorder: Recorder::new(client.clone(), reporter.clone()),
            reporter,
            client,
            clock: Arc::new(SystemClock),
            scheduler: Arc::new(Scheduler::new()),
            observer: None,
            synced: None,
            said: Arc::default(),
        }
    }

    /// Sets `flag` once [`PlacementController::run`]'s informers have listed (for a readiness
    /// probe); it stays as it is otherwise, so reset it before a new `run`.
    #[must_use]
    pub fn with_synced_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.synced = Some(flag);
        self
    }

    /// Tells `observer` about every scheduling (its duration and whether it succeeded).
    #[must_use]
    pub fn with_observer(mut self, observer: Arc<dyn ScheduleObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Reads the hub and reconciles one placement (its PlacementDecisions and status). What
    /// [`reconcile_placement`] runs.
    pub async fn reconcile_one(&self, placement: &Placement) -> Result<PlacementOutcome, Error> {
        let state = HubState::list(&self.client).await?;
        let snapshot = state.snapshot();
        let existing = state.decisions_of(placement);
        let now = self.clock.now();
        let mut outcome = self.reconcile(placement, &snapshot, &existing, now).await?;
        if let Some(expiry) = state.next_score_expiry(now) {
            let after = Duration::try_from(expiry.duration_since(now)).unwrap_or_default();
            outcome.requeue_after = min_some(outcome.requeue_after, Some(after));
        }
        Ok(outcome)
    }

    /// Reports Events as `reporter` (its `controller` becomes the Events'
    /// `reportingController`, its `instance` their `reportingInstance`).
    #[must_use]
    pub fn with_reporter(mut self, reporter: Reporter) -> Self {
        self.recorder = Recorder::new(self.client.clone(), reporter.clone());
        self.reporter = reporter;
        self
    }

    /// Uses `clock` for scheduling decisions and condition times.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Uses `scheduler` (for example one with custom filters or prioritizers, or with
    /// topology spread: [`Scheduler::with_topology_spread`]).
    #[must_use]
    pub fn with_scheduler(mut self, scheduler: Scheduler) -> Self {
        self.scheduler = Arc::new(scheduler);
        self
    }

    /// Reads the hub and reconciles every placement. Returns the total outcome: the writes
    /// made and the earliest requeue.
    pub async fn reconcile_all(&self) -> Result<PlacementOutcome, Error> {
        let state = HubState::list(&self.client).await?;
        self.reconcile_state(&state).await
    }

    /// Reconciles every placement of `state`.
    pub async fn reconcile_state(&self, state: &HubState) -> Result<PlacementOutcome, Error> {
        let snapshot = state.snapshot();
        let now = self.clock.now();
        let mut total = PlacementOutcome::default();
        let mut errors = Vec::new();
        for failure in &state.undecodable_placements {
            match self.report_undecodable(failure, now).await {
                Ok(writes) => total.writes += writes,
                Err(e) => errors.push(e),
            }
        }
        for placement in &state.placements {
            let existing = state.decisions_of(placement);
            let span = tracing::info_span!(
                "schedule",
                placement = %format!("{}/{}", placement.namespace().unwrap_or_default(), placement.name_any())
            );
            let reconciled = tracing::Instrument::instrument(
                self.reconcile(placement, &snapshot, &existing, now),
                span,
            )
            .await;
            match reconciled {
                Ok(outcome) => {
                    total.writes += outcome.writes;
                    total.events += outcome.events;
                    total.needs_retry |= outcome.needs_retry;
                    total.requeue_after = min_some(total.requeue_after, outcome.requeue_after);
                }
                Err(e) => errors.push(e),
            }
        }
        if let Some(expiry) = state.next_score_expiry(now) {
            let after = Duration::try_from(expiry.duration_since(now)).unwrap_or_default();
            total.requeue_after = min_some(total.requeue_after, Some(after));
        }
        match errors.len() {
            0 => Ok(total),
            1 => Err(errors.remove(0)),
            _ => Err(Error::Several(errors)),
        }
    }

    /// Schedules one placement against `snapshot` and writes the result. `existing` are the
    /// placement's current PlacementDecisions.
    pub async fn reconcile(
        &self,
        placement: &Placement,
        snapshot: &Snapshot,
        existing: &[&PlacementDecision],
        now: Timestamp,
    ) -> Result<PlacementOutcome, Error> {
        let mut outcome = PlacementOutcome::default();
        if placement.metadata.deletion_timestamp.is_some()
            || crate::scheduler::is_scheduling_disabled(placement)
        {
            return Ok(outcome);
        }
        let namespace = placement.namespace().unwrap_or_default();
        let name = placement.name_any();
        let started = std::time::Instant::now();
        let scheduled = self.scheduler.schedule(placement, snapshot, now);
        if let Some(observer) = &self.observer {
            observer.scheduled(&namespace, &name, started.elapsed(), scheduled.is_ok());
        }
        let result =
            scheduled.map_err(|source| Error::schedule(format!("{namespace}/{name}"), source))?;

        // Bind: create or update every generated decision, delete the others.
        let bind = Binding {
            api: Api::namespaced(self.client.clone(), &namespace),
            regarding: reference_to(placement),
            placement,
            result: &result,
        };
        let mut desired = result.placement_decisions(placement, snapshot);
        let (scores_changed, held_until) =
            hold_scores(&result, placement, existing, &mut desired, now);
        let mut keep = BTreeSet::new();
        for want in &desired {
            keep.insert(want.name_any());
            let have = existing.iter().find(|d| d.name_any() == want.name_any());
            self.write_decision(&bind, want, have.copied(), &mut outcome)
                .await?;
        }
        for stale in existing.iter().filter(|d| !keep.contains(&d.name_any())) {
            self.delete_stale(&bind, stale, &mut outcome).await?;
        }

        // Status, only when it changed.
        let mut new_status = result.placement_status(placement.status.as_ref(), now);
        if scores_changed {
            new_status.last_score_update_time = Some(Time(now));
        }
        if placement.status.as_ref() != Some(&new_status) {
            let placements: Api<Placement> = Api::namespaced(self.client.clone(), &namespace);
            let patch = json!({ "status": new_status });
            placements
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(kube_error(format!(
                    "update status of Placement {namespace}/{name}"
                )))?;
            outcome.writes += 1;
        }
        outcome.requeue_after = result.requeue_after;
        if let Some(until) = held_until {
            let after = Duration::try_from(until.duration_since(now)).unwrap_or_default();
            outcome.requeue_after = min_some(outcome.requeue_after, Some(after));
        }
        outcome.needs_retry = result.status.code != StatusCode::Success;
        Ok(outcome)
    }

    /// Creates the decision `want` when it is missing (`have`), then brings its status (or,
    /// with the status in line, its labels) to what the scheduler decided.
    async fn write_decision(
        &self,
        bind: &Binding<'_>,
        want: &PlacementDecision,
        have: Option<&PlacementDecision>,
        outcome: &mut PlacementOutcome,
    ) -> Result<(), Error> {
        let (namespace, name) = (bind.namespace(), bind.placement.name_any());
        let pd_name = want.name_any();
        let status_of = |d: &PlacementDecision| {
            d.status
                .as_ref()
                .map(|s| s.decisions.clone())
                .unwrap_or_default()
        };
        // The object as it is on the hub now: found in the cache, or created here.
        let current: PlacementDecision = match have {
            Some(h) => (*h).clone(),
            None => {
                let mut create = want.clone();
                create.status = None;
                let created = bind
                    .api
                    .create(&PostParams::default(), &create)
                    .await
                    .map_err(kube_error(format!(
                        "create PlacementDecision {namespace}/{pd_name}"
                    )))?;
                outcome.writes += 1;
                let note = format!(
                    "Decision {pd_name} is created with placement {name} in namespace {namespace}"
                );
                let event = decision_event(
                    EventType::Normal,
                    "DecisionCreate",
                    "DecisionCreated",
                    note,
                    &created,
                );
                outcome.events += self.publish(&event, &bind.regarding, true).await;
                created
            }
        };
        let have_status = status_of(&current);
        if have_status != status_of(want) {
            let patch = json!({ "status": { "decisions": status_of(want) } });
            bind.api
                .patch_status(&pd_name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(kube_error(format!(
                    "update PlacementDecision {namespace}/{pd_name}"
                )))?;
            outcome.writes += 1;
            outcome.events += self
                .decision_updated(bind.placement, &bind.regarding, &current, bind.result)
                .await;
        } else if let Some(have) = have {
            // Upstream replaces the labels: its patch sets the generated ones and removes
            // every other label (the decision-group labels included, `""` and `"0"` when
            // the placement declares no groups).
            let want_labels = want.metadata.labels.clone().unwrap_or_default();
            if let Some(labels) = label_patch(&want_labels, have.labels()) {
                let patch = json!({ "metadata": { "labels": labels } });
                bind.api
                    .patch(&pd_name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map_err(kube_error(format!(
                        "label PlacementDecision {namespace}/{pd_name}"
                    )))?;
                outcome.writes += 1;
            }
        }
        Ok(())
    }

    /// Deletes a decision the scheduler no longer generates.
    async fn delete_stale(
        &self,
        bind: &Binding<'_>,
        stale: &PlacementDecision,
        outcome: &mut PlacementOutcome,
    ) -> Result<(), Error> {
        let (namespace, name) = (bind.namespace(), bind.placement.name_any());
        let pd_name = stale.name_any();
        match bind.api.delete(&pd_name, &DeleteParams::default()).await {
            Ok(_) => {
                outcome.writes += 1;
                let note = format!(
                    "Decision {pd_name} is deleted with placement {name} in namespace {namespace}"
                );
                let event = decision_event(
                    EventType::Normal,
                    "DecisionDelete",
                    "DecisionDeleted",
                    note,
                    stale,
                );
                outcome.events += self.publish(&event, &bind.regarding, true).await;
                Ok(())
            }
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(e) => Err(kube_error(format!(
                "delete PlacementDecision {namespace}/{pd_name}"
            ))(e)),
        }
    }

    /// Says in the `PlacementMisconfigured` condition of a Placement that cannot be decoded
    /// why (the field at fault and its value), when it does not say so already; returns the
    /// writes made. Upstream's controller cannot read such a Placement either (its informer
    /// fails on it, and with it every other placement); saying so on the object is ours.
    async fn report_undecodable(
        &self,
        failure: &ocm_api::k8s::object::DecodeFailure,
        now: Timestamp,
    ) -> Result<usize, Error> {
        use ocm_api::constants::placement as p;
        use ocm_api::k8s::object::RawObject;
        let resource = kube::core::ApiResource::erase::<Placement>(&());
        let api: Api<RawObject> =
            Api::namespaced_with(self.client.clone(), &failure.namespace, &resource);
        let what = format!("Placement {}", failure.object());
        let Some(raw) = api
            .get_opt(&failure.name)
            .await
            .map_err(kube_error(format!("get {what}")))?
        else {
            return Ok(0);
        };
        // The conditions as they are, read on their own (the rest does not decode).
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct StatusOnly {
            status: Conditions,
        }
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct Conditions {
            conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
        }
        let mut conditions = serde_json::from_str::<StatusOnly>(raw.json())
            .unwrap_or_default()
            .status
            .conditions;
        let mut condition = ocm_api::conditions::NewCondition::new(
            p::CONDITION_MISCONFIGURED,
            ocm_api::conditions::ConditionStatus::True,
            p::REASON_MISCONFIGURED,
            format!("the placement cannot be decoded: {}", failure.error),
        );
        if let Some(generation) = raw.meta().generation {
            condition = condition.observed_generation(generation);
        }
        if !ocm_api::conditions::set(&mut conditions, condition, &Time(now)) {
            return Ok(0);
        }
        api.patch_status(
            &failure.name,
            &PatchParams::default(),
            &Patch::Merge(&json!({ "status": { "conditions": conditions } })),
        )
        .await
        .map_err(kube_error(format!("update status of {what}")))?;
        Ok(1)
    }

    /// Publishes the `DecisionUpdate` Event and, when any cluster was scored, the
    /// `ScoreUpdate` Event for a PlacementDecision whose decisions were just patched. Returns
    /// how many were published.
    async fn decision_updated(
        &self,
        placement: &Placement,
        regarding: &ObjectReference,
        decision: &PlacementDecision,
        result: &ScheduleResult,
    ) -> usize {
        let pd_name = decision.name_any();
        let name = placement.name_any();
        let namespace = placement.namespace().unwrap_or_default();
        let mut note =
            format!("Decision {pd_name} is updated with placement {name} in namespace {namespace}");
        let warning = result.status.code == StatusCode::Warning;
        if warning {
            note.push_str(&format!(
                ": {} in plugin {}",
                result.status.message, result.status.plugin
            ));
        }
        let type_ = if warning {
            EventType::Warning
        } else {
            EventType::Normal
        };
        let update = decision_event(type_, "DecisionUpdate", "DecisionUpdated", note, decision);
        // A Warning's note carries the plugin's message, which may differ from round to round.
        let mut published = self.publish(&update, regarding, !warning).await;
        let scores = result
            .scores
            .iter()
            .map(|s| (result.cluster_name(s.cluster), s.total));
        if let Some(note) = score_note(scores) {
            let event = decision_event(
                EventType::Normal,
                "ScoreUpdate",
                "ScoreUpdated",
                note,
                decision,
            );
            published += self.publish(&event, regarding, false).await;
        }
        published
    }

    /// Publishes `event` about `regarding`; returns 1 on success, 0 (after logging) on failure.
    ///
    /// kube's [`Recorder`] folds a repeat of an Event (same type, reason, action, objects)
    /// into a series on the first one and keeps the first note. That suits Events whose note
    /// follows from those fields (`aggregate`); the others go through a fresh recorder so
    /// that every one is stored with its own note.
    async fn publish(&self, event: &Event, regarding: &ObjectReference, aggregate: bool) -> usize {
        let outcome = if aggregate {
            self.recorder.publish(event, regarding).await
        } else {
            Recorder::new(self.client.clone(), self.reporter.clone())
                .publish(event, regarding)
                .await
        };
        match outcome {
            Ok(()) => 1,
            Err(error) => {
                tracing::warn!(
                    error = %crate::error::describe_kube(&error),
                    reason = %event.reason,
                    namespace = regarding.namespace.as_deref().unwrap_or_default(),
                    name = regarding.name.as_deref().unwrap_or_default(),
                    "could not publish placement event"
                );
                0
            }
        }
    }

    /// Watches the hub and keeps every placement scheduled until `shutdown` completes.
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        let c = &self.client;
        let (clusters, w1) = watch::cache::<ManagedCluster>(c);
        let (sets, w2) = watch::cache::<ManagedClusterSet>(c);
        let (bindings, w3) = watch::cache::<ManagedClusterSetBinding>(c);
        let (placements, w4) = watch::cache::<Placement>(c);
        let (decisions, w5) = watch::cache::<PlacementDecision>(c);
        let (scores, w6) = watch::cache::<AddOnPlacementScore>(c);
        let ready = async {
            let _ = clusters.wait_until_ready().await;
            let _ = sets.wait_until_ready().await;
            let _ = bindings.wait_until_ready().await;
            let _ = placements.wait_until_ready().await;
            let _ = decisions.wait_until_ready().await;
            let _ = scores.wait_until_ready().await;
        };
        let this = &self;
        let stores = (
            &clusters,
            &sets,
            &bindings,
            &placements,
            &decisions,
            &scores,
        );
        watch::run_loop(
            vec![w1, w2, w3, w4, w5, w6],
            ready,
            self.synced.as_deref(),
            shutdown,
            RESYNC_PERIOD,
            move || async move {
                let (placements, undecodable_placements) = stores.3.read();
                let state = HubState {
                    clusters: stores.0.state(),
                    sets: stores.1.state(),
                    bindings: stores.2.state(),
                    placements,
                    decisions: stores.4.state(),
                    scores: stores.5.state(),
                    undecodable_placements,
                };
                let result = this.reconcile_state(&state).await;
                watch::round_of(&this.said, "placement", result, |outcome| {
                    if outcome.writes > 0 {
                        tracing::debug!(writes = outcome.writes, "placements reconciled");
                    }
                    Round::requeue(outcome.requeue_after).retry(outcome.needs_retry)
                })
            },
        )
        .await;
    }
}

/// What one reconcile writes its decisions with: the placement, its schedule, and where.
struct Binding<'a> {
    api: Api<PlacementDecision>,
    regarding: ObjectReference,
    placement: &'a Placement,
    result: &'a ScheduleResult,
}

impl Binding<'_> {
    fn namespace(&self) -> String {
        self.placement.namespace().unwrap_or_default()
    }
}

/// Scores in decisions (our addition): a change of scores or order alone waits for
/// `scoreRateLimit` after the last score update; meanwhile `desired` keeps the statuses the
/// decisions have. Returns whether the scores change now, and until when they are held.
fn hold_scores(
    result: &ScheduleResult,
    placement: &Placement,
    existing: &[&PlacementDecision],
    desired: &mut [PlacementDecision],
    now: Timestamp,
) -> (bool, Option<Timestamp>) {
    let Some(limit) = result.score_rate_limit else {
        return (false, None);
    };
    let last = placement
        .status
        .as_ref()
        .and_then(|s| s.last_score_update_time.as_ref())
        .map(|t| t.0);
    match decisions::score_update(desired, existing, last, limit, now) {
        ScoreUpdate::Hold { until } => {
            for want in desired.iter_mut() {
                if let Some(have) = existing.iter().find(|e| e.name_any() == want.name_any()) {
                    want.status = have.status.clone();
                }
            }
            (false, Some(until))
        }
        ScoreUpdate::Write { scores_changed } => (scores_changed, None),
    }
}

/// The controller's reconciler in kube-runtime's shape, to mount in a `Controller` of your
/// own: reads the hub and schedules `placement` ([`PlacementController::reconcile_one`]).
/// [`PlacementController::run`] reschedules every placement on any change instead, from
/// watch caches, which costs fewer requests.
pub async fn reconcile_placement(
    placement: Arc<Placement>,
    ctx: Arc<PlacementController>,
) -> Result<kube::runtime::controller::Action, Error> {
    use kube::runtime::controller::Action;
    let outcome = ctx.reconcile_one(&placement).await?;
    Ok(if outcome.needs_retry {
        Action::requeue(
            outcome
                .requeue_after
                .unwrap_or(RETRY_AFTER)
                .min(RETRY_AFTER),
        )
    } else {
        match outcome.requeue_after {
            Some(after) => Action::requeue(after),
            None => Action::requeue(RESYNC_PERIOD),
        }
    })
}

/// What to do after a failed [`reconcile_placement`]: log it and retry after 5 seconds.
pub fn placement_error_policy(
    placement: Arc<Placement>,
    error: &Error,
    _ctx: Arc<PlacementController>,
) -> kube::runtime::controller::Action {
    tracing::warn!(%error, placement = %placement.name_any(), "placement reconcile failed");
    kube::runtime::controller::Action::requeue(RETRY_AFTER)
}

/// How soon [`reconcile_placement`] retries a placement whose scheduling was not a success.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// A reference to `object` for an Event. The resource version is left out: the Event is
/// about the object, not one version of it, and repeats of an Event should match.
fn reference_to<K: Resource<DynamicType = ()>>(object: &K) -> ObjectReference {
    ObjectReference {
        resource_version: None,
        ..object.object_ref(&())
    }
}

/// An Event about a placement whose `related` object is `decision`.
fn decision_event(
    type_: EventType,
    reason: &str,
    action: &str,
    note: String,
    decision: &PlacementDecision,
) -> Event {
    Event {
        type_,
        reason: reason.to_owned(),
        note: Some(note),
        action: action.to_owned(),
        secondary: Some(reference_to(decision)),
    }
}

/// The `ScoreUpdate` note: `name:score ` for every cluster in name order, with `......`
/// instead of the first pair that would take the note past [`MAX_SCORE_NOTE_LEN`] bytes.
/// `None` when there are no scores.
pub fn score_note<'a>(scores: impl IntoIterator<Item = (&'a str, i64)>) -> Option<String> {
    let mut scores: Vec<(&str, i64)> = scores.into_iter().collect();
    if scores.is_empty() {
        return None;
    }
    scores.sort_unstable();
    let mut note = String::new();
    for (name, score) in scores {
        let pair = format!("{name}:{score} ");
        if note.len() + pair.len() > MAX_SCORE_NOTE_LEN {
            note.push_str("......");
            break;
        }
        note.push_str(&pair);
    }
    Some(note)
}

/// The merge patch of `labels` that turns `have` into `want` (sdk-go's `mapPatch`): changed
/// and new labels with their value, removed ones as `null`. `None` when they are equal.
fn label_patch(
    want: &BTreeMap<String, String>,
    have: &BTreeMap<String, String>,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    let mut patch = serde_json::Map::new();
    for (k, v) in want {
        if have.get(k) != Some(v) {
            patch.insert(k.clone(), json!(v));
        }
    }
    for k in have.keys().filter(|k| !want.contains_key(*k)) {
        patch.insert(k.clone(), serde_json::Value::Null);
    }
    (!patch.is_empty()).then_some(patch)
}

fn min_some(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_SCORE_NOTE_LEN, score_note};

    #[test]
    fn score_notes_list_clusters_by_name() {
        assert_eq!(score_note([]), None);
        assert_eq!(
            score_note([("b", -20), ("a", 100), ("cluster10", 0)]).as_deref(),
            Some("a:100 b:-20 cluster10:0 ")
        );
    }

    #[test]
    fn long_score_notes_are_cut_before_the_limit() {
        // "cNNN:100 " is 9 bytes; 111 of them fill 999 bytes, the 112th would pass 1000.
        let names: Vec<String> = (100..400).map(|i| format!("c{i}")).collect();
        let note = score_note(names.iter().map(|n| (n.as_str(), 100))).unwrap();
        assert!(note.ends_with("c210:100 ......"), "{note}");
        assert_eq!(note.len(), 111 * 9 + "......".len());
        assert!(note.len() - "......".len() <= MAX_SCORE_NOTE_LEN);

        // Exactly at the limit still fits.
        let exact: Vec<String> = (0..100).map(|i| format!("{i:0>5}")).collect();
        let note = score_note(exact.iter().map(|n| (n.as_str(), -10))).unwrap();
        assert_eq!(note.len(), 1000, "{note}");
        assert!(!note.contains("......"));
    }
}
