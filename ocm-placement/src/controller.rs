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
//! Differences from upstream's controller, all deliberate: every change reschedules every
//! placement (upstream fans events out to the affected placements; the result is the same
//! because unchanged placements cause no write), Kubernetes events are not emitted, and score
//! expiry triggers a reschedule (upstream waits for its 10-minute resync).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::constants::labels;
use serde_json::json;

pub use crate::hub::HubState;
use crate::result::StatusCode;
use crate::watch::{self, Round};
use crate::{Scheduler, Snapshot};

/// Reschedule everything at least this often (upstream's informer resync period).
pub const RESYNC_PERIOD: Duration = Duration::from_secs(10 * 60);

/// What can go wrong in the controller.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ControllerError {
    /// A Kubernetes API call failed.
    #[error("{action}: {source}")]
    Kube {
        /// What was being done.
        action: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
    /// Scheduling a placement failed.
    #[error("schedule placement {placement}: {source}")]
    Schedule {
        /// `namespace/name` of the placement.
        placement: String,
        /// The scheduler's error.
        #[source]
        source: crate::Error,
    },
    /// Several placements failed; each error is kept.
    #[error("{} placements failed; first: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
    Several(Vec<ControllerError>),
}

fn kube_error(action: impl Into<String>) -> impl FnOnce(kube::Error) -> ControllerError {
    let action = action.into();
    move |source| ControllerError::Kube { action, source }
}

impl HubState {
    /// Lists everything from the hub.
    pub async fn list(client: &Client) -> Result<Self, ControllerError> {
        fn arcs<K>(items: Vec<K>) -> Vec<Arc<K>> {
            items.into_iter().map(Arc::new).collect()
        }
        Ok(Self {
            clusters: arcs(watch::list_all(client).await?),
            sets: arcs(watch::list_all(client).await?),
            bindings: arcs(watch::list_all(client).await?),
            placements: arcs(watch::list_all(client).await?),
            decisions: arcs(watch::list_all(client).await?),
            scores: arcs(watch::list_all(client).await?),
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
}

/// The Placement hub controller.
#[derive(Clone)]
pub struct PlacementController {
    client: Client,
    clock: Arc<dyn Clock>,
    scheduler: Arc<Scheduler>,
}

impl std::fmt::Debug for PlacementController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlacementController")
            .finish_non_exhaustive()
    }
}

impl PlacementController {
    /// A controller with upstream's scheduler and the wall clock.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            clock: Arc::new(SystemClock),
            scheduler: Arc::new(Scheduler::new()),
        }
    }

    /// Uses `clock` for scheduling decisions and condition times.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Uses `scheduler` (for example one with custom filters or prioritizers).
    #[must_use]
    pub fn with_scheduler(mut self, scheduler: Scheduler) -> Self {
        self.scheduler = Arc::new(scheduler);
        self
    }

    /// Reads the hub and reconciles every placement. Returns the total outcome: the writes
    /// made and the earliest requeue.
    pub async fn reconcile_all(&self) -> Result<PlacementOutcome, ControllerError> {
        let state = HubState::list(&self.client).await?;
        self.reconcile_state(&state).await
    }

    /// Reconciles every placement of `state`.
    pub async fn reconcile_state(
        &self,
        state: &HubState,
    ) -> Result<PlacementOutcome, ControllerError> {
        let snapshot = state.snapshot();
        let now = self.clock.now();
        let mut total = PlacementOutcome::default();
        let mut errors = Vec::new();
        for placement in &state.placements {
            let existing: Vec<&PlacementDecision> = state
                .decisions
                .iter()
                .filter(|d| {
                    d.namespace() == placement.namespace()
                        && d.labels().get(labels::PLACEMENT) == Some(&placement.name_any())
                })
                .map(AsRef::as_ref)
                .collect();
            match self.reconcile(placement, &snapshot, &existing, now).await {
                Ok(outcome) => {
                    total.writes += outcome.writes;
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
            _ => Err(ControllerError::Several(errors)),
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
    ) -> Result<PlacementOutcome, ControllerError> {
        let mut outcome = PlacementOutcome::default();
        if placement.metadata.deletion_timestamp.is_some()
            || crate::scheduler::is_scheduling_disabled(placement)
        {
            return Ok(outcome);
        }
        let namespace = placement.namespace().unwrap_or_default();
        let name = placement.name_any();
        let result = self
            .scheduler
            .schedule(placement, snapshot, now)
            .map_err(|source| ControllerError::Schedule {
                placement: format!("{namespace}/{name}"),
                source,
            })?;

        // Bind: create or update every generated decision, delete the others.
        let api: Api<PlacementDecision> = Api::namespaced(self.client.clone(), &namespace);
        let desired = result.placement_decisions(placement, snapshot);
        let mut keep = BTreeSet::new();
        for want in &desired {
            let pd_name = want.name_any();
            keep.insert(pd_name.clone());
            let have = existing.iter().find(|d| d.name_any() == pd_name);
            let status_of = |d: &PlacementDecision| {
                d.status
                    .as_ref()
                    .map(|s| s.decisions.clone())
                    .unwrap_or_default()
            };
            let have_status =
                match have {
                    Some(h) => status_of(h),
                    None => {
                        let mut create = want.clone();
                        create.status = None;
                        let created = api.create(&PostParams::default(), &create).await.map_err(
                            kube_error(format!("create PlacementDecision {namespace}/{pd_name}")),
                        )?;
                        outcome.writes += 1;
                        status_of(&created)
                    }
                };
            if have_status != status_of(want) {
                let patch = json!({ "status": { "decisions": status_of(want) } });
                api.patch_status(&pd_name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map_err(kube_error(format!(
                        "update PlacementDecision {namespace}/{pd_name}"
                    )))?;
                outcome.writes += 1;
            } else if let Some(have) = have {
                let want_labels = want.metadata.labels.clone().unwrap_or_default();
                let have_labels: BTreeMap<String, String> = have.labels().clone();
                let missing = want_labels
                    .iter()
                    .any(|(k, v)| have_labels.get(k) != Some(v));
                if missing {
                    let patch = json!({ "metadata": { "labels": want_labels } });
                    api.patch(&pd_name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await
                        .map_err(kube_error(format!(
                            "label PlacementDecision {namespace}/{pd_name}"
                        )))?;
                    outcome.writes += 1;
                }
            }
        }
        for stale in existing.iter().filter(|d| !keep.contains(&d.name_any())) {
            let pd_name = stale.name_any();
            match api.delete(&pd_name, &DeleteParams::default()).await {
                Ok(_) => outcome.writes += 1,
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => {
                    return Err(kube_error(format!(
                        "delete PlacementDecision {namespace}/{pd_name}"
                    ))(e));
                }
            }
        }

        // Status, only when it changed.
        let new_status = result.placement_status(placement.status.as_ref(), now);
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
        outcome.needs_retry = result.status.code != StatusCode::Success;
        Ok(outcome)
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
            shutdown,
            RESYNC_PERIOD,
            move || async move {
                let state = HubState {
                    clusters: stores.0.state(),
                    sets: stores.1.state(),
                    bindings: stores.2.state(),
                    placements: stores.3.state(),
                    decisions: stores.4.state(),
                    scores: stores.5.state(),
                };
                match this.reconcile_state(&state).await {
                    Ok(outcome) => {
                        if outcome.writes > 0 {
                            tracing::debug!(writes = outcome.writes, "placements reconciled");
                        }
                        Round {
                            requeue_after: outcome.requeue_after,
                            retry: outcome.needs_retry,
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "placement reconcile failed");
                        Round {
                            requeue_after: None,
                            retry: true,
                        }
                    }
                }
            },
        )
        .await;
    }
}

fn min_some(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
