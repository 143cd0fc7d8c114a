//! The work agent: applies the ManifestWorks of one managed cluster's namespace on the hub to
//! that managed cluster, and reports their status back.
//!
//! # The pipeline
//!
//! One [`WorkAgent::sync`] of a ManifestWork reads, plans, applies, records, builds the status
//! and writes it once. The plan is pure; each step that does I/O lives in the file of the
//! upstream controller it stands for:
//!
//! | step | where | upstream controller | state it keeps between syncs |
//! |---|---|---|---|
//! | decide what the sync does, and when again | [`plan`] (pure) | the work queues | none: it reads the memory below |
//! | remember each work between syncs | `memory.rs`, `memo.rs` | — | `WorkMemory`: last apply, memo, deletion backoff, by uid |
//! | add the finalizer; finalize on deletion | `finalize.rs` | finalizer controllers | none |
//! | AppliedManifestWork, apply the manifests | `apply.rs`, [`crate::apply`] | ManifestWork | none |
//! | record `appliedResources`, collect the rest | `applied.rs`, [`gc`] | AppliedManifestWork | `Unrecorded`: resources whose record failed |
//! | read live objects, build the status | `status.rs`, [`StatusBuilder`] (pure) | available status | `WatchRegistry` (`watch.rs`): feedback watches |
//! | evict records whose work is gone | `evict.rs` | unmanaged AppliedManifestWork | none |
//! | queue, retry and log failed syncs | `run.rs`, `queue.rs` | the work queues | `SyncRetries`: backoff and last error |
//!
//! Each piece of state is a type of its stage's file with one lock inside, reached only through
//! its methods; [`WorkAgent`] holds one of each, so clones of an agent share them.
//!
//! [`StatusBuilder`]: crate::status::StatusBuilder
//!
//! In order:
//!
//! 1. a work being deleted is finalized: `Deleting` is set, its AppliedManifestWork is deleted
//!    and its resources are removed (unless orphaned), then the finalizers are released;
//! 2. the `cluster.open-cluster-management.io/manifest-work-cleanup` finalizer is added;
//! 3. the AppliedManifestWork `<hub hash>-<work name>` is created or its spec updated;
//! 4. every manifest is applied by the engine ([`crate::apply::engine`]) with the applier of its
//!    update strategy ([`crate::apply::applier`]; [`WorkAgent::with_appliers`] plugs in your
//!    own), giving each its `Applied` condition, and the work its `Applied` condition; each
//!    manifest's kind and config are resolved once per sync and shared with step 6;
//! 5. the AppliedManifestWork's `appliedResources` are updated and resources no longer in the
//!    work are deleted ([`gc::delete_applied_resources`]), except (as upstream) for a work
//!    without manifests whose status never had an `Applied` condition; a resource whose deletion was
//!    accepted stays listed until a later pass sees it gone (a garbage collector, a finalizer
//!    or a terminating namespace may take long on a real cluster), and meanwhile the work is
//!    applied again after [`PENDING_DELETION_RETRY_MIN`], doubling up to [`SYNC_RETRY_MAX`];
//! 6. each resource's `Available` condition and status feedback are read, and the work's
//!    aggregated `Available` condition computed;
//! 7. the work status is written only when it changed.
//!
//! Every live object is read through the engine's one reader
//! ([`crate::apply::reader::ObjectReader`]).
//!
//! Applying happens when the work changed, when its status on the hub shows no apply of its
//! generation, and at least every [`AgentConfig::resync_interval`];
//! in between, [`WorkAgent::sync`] only refreshes the status (step 6), every
//! [`AgentConfig::status_sync_interval`]. A work whose `Complete` condition is True is never
//! applied again, but its status keeps being refreshed.
//!
//! [`WorkAgent::evict_unmanaged`] removes AppliedManifestWorks whose ManifestWork is gone, after
//! the eviction grace period.
//!
//! A failed manifest is applied again at the next status sync, one whose executor was not
//! allowed after a minute (upstream's requeue), everything else at the next resync. A sync that
//! fails after its apply pass (the work's status or the AppliedManifestWork could not be
//! written) does not count as applied: its retry applies again, as upstream's failed syncs do.
//! In [`WorkAgent::run`], a failed sync is retried after [`SYNC_RETRY_MIN`], doubling up to
//! [`SYNC_RETRY_MAX`].
//!
//! [`WorkAgent::run`] starts the agent's informers ([`WorkAgent::start_caches`]); then works,
//! AppliedManifestWorks and (with [`AgentConfig::cached_reads`]) applied resources are read
//! from them, and resources with `feedbackScrapeType: Watch` trigger a status refresh as soon
//! as they change (at most [`AgentConfig::max_feedback_watch`] informers, then polling, as
//! upstream). Without started informers every read goes to the API servers, which is what
//! tests that call [`WorkAgent::sync_all`] right after a change want. The informers keep their
//! objects without `metadata.managedFields` ([`ObjectCache::strip_managed_fields`]), which no
//! path of the agent reads from a cached copy (memory: they are often the larger part of an
//! object's metadata); a manifest whose JSONPath feedback rules or CEL condition rules might
//! read them (they name `managedFields`, `metadata` as a whole, the whole object, or a
//! JSONPath recursive descent or wildcard that is not below a top-level field other than
//! `metadata`) has its status read from the API server instead, whole, as upstream reads every
//! object: one GET per status refresh of that manifest.
//!
//! With informers and cached reads, a sync remembers the resource versions it saw (the work,
//! its AppliedManifestWork and every applied resource) when it ended without error and
//! without an executor; a later sync, resync included, that finds all of them unchanged in the
//! informers is skipped, since it would write nothing and compute the same status. Any change
//! (a new generation, an edit or deletion on the managed cluster, a relist after a lost watch)
//! makes the next sync a full one. Upstream re-applies on every resync instead, with the same
//! outcome.
//!
//! What the agent remembers about a work between syncs (when it last applied it, the memo of
//! its last sync) stands for that one work only: it is dropped when the informer drops the
//! work, when another work (another uid, or another creation time) comes under its name, and
//! when the work lacks the agent's finalizer, so a hub that lost its state (restarted empty,
//! or restored from an older backup) has its works applied again at once (see `memory.rs`).
//!
//! # Works the agent cannot decode
//!
//! A ManifestWork (or AppliedManifestWork) the agent's types reject (a field or enum value from
//! a newer OCM, a changed schema, a label that is not a string) is skipped and reported, and
//! everything else keeps converging: the informers decode object by object
//! ([`crate::cache`]), so such a work is left out of the informer and logged once per
//! resourceVersion with the field at fault; [`WorkAgent::run`] also records one Warning Event
//! (reason [`REASON_UNDECODABLE`]) about it on the hub, in the cluster namespace;
//! [`WorkAgent::sync_all`] returns it as an [`Error::Undecodable`] after syncing the others.
//! Its status is not written (the agent cannot read it, and a merge patch of
//! `status.conditions` would replace the list). Its AppliedManifestWork and resources are kept
//! as they are: eviction counts a work that exists but does not decode as present. Once it
//! changes into something the agent decodes, it is synced again. Upstream's agent has the
//! opposite behaviour (its informer fails as a whole and no work is synced while such an object
//! exists); reporting and skipping is our addition.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use kube::api::{Patch, PatchParams};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::work::v1::{AppliedManifestWork, ManifestWork};
use ocm_feedback::FeedbackReader;
use serde_json::json;

use crate::apply::applier::Appliers;
use crate::apply::engine::ApplyEngine;
use crate::cache::{DecodeFailure, ObjectCache, RawObject, STALE_WATCH_CHECK, SpokeObjects};
use crate::identity::applied_manifest_work_name;
use crate::status::StatusBuilder;
use crate::{Error, Result};

mod applied;
mod apply;
mod config;
mod evict;
mod finalize;
pub mod gc;
mod memo;
mod memory;
pub mod plan;
mod queue;
mod read;
mod reconcile;
mod run;
mod status;
mod watch;

pub use config::AgentConfig;
pub use reconcile::{error_policy, reconcile};

use applied::Unrecorded;
use memo::SyncMemo;
use memory::WorkMemory;
use plan::{LastApply, Planner, SyncAction, SyncInput};
use read::{list_decoded, undecodable};
use run::SyncRetries;
use watch::WatchRegistry;

const KIND_MANIFEST_WORK: &str = "ManifestWork";
const KIND_APPLIED_MANIFEST_WORK: &str = "AppliedManifestWork";

/// The first wait before [`WorkAgent::run`] syncs a work again after a failed sync; it doubles
/// at each further failure up to [`SYNC_RETRY_MAX`] (jittered by up to +50%), and the first
/// success resets it.
pub const SYNC_RETRY_MIN: Duration = Duration::from_millis(250);

/// The longest wait between two failed syncs of a work (before jitter). Upstream's
/// controllers back off per work up to 1000 s, so after a long outage a work could wait
/// minutes; the agent retries within seconds of the hub or managed cluster coming back.
pub const SYNC_RETRY_MAX: Duration = Duration::from_secs(5);

/// The first wait before a work whose removed resources are still being deleted is applied
/// again (the pass that drops those that are gone from `appliedResources`); it doubles up to
/// [`SYNC_RETRY_MAX`] while some remain, as upstream requeues such a work (from 5 ms, up to
/// 1000 s there).
pub const PENDING_DELETION_RETRY_MIN: Duration = Duration::from_millis(5);

/// The first wait before an AppliedManifestWork being deleted whose resources are still being
/// deleted is looked at again; it doubles up to [`SYNC_RETRY_MAX`] (upstream: from 50 ms up to
/// 60 s).
pub const FINALIZE_RETRY_MIN: Duration = Duration::from_millis(50);

/// Why the agent is not ready before its informers have listed.
const NOT_LISTED: &str = "the ManifestWork and AppliedManifestWork informers have not listed yet";

/// The Event reason of a ManifestWork the agent cannot decode (our addition: upstream's agent
/// has no such Event, its informer fails as a whole instead).
pub const REASON_UNDECODABLE: &str = "ManifestWorkDecodeFailed";

fn min_duration(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What one sync asks for next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncOutcome {
    /// Sync this work again after this long.
    pub requeue_after: Option<Duration>,
    /// Whether the manifests were applied in this sync (not just the status refreshed).
    pub applied: bool,
}

/// The work agent of one managed cluster.
#[derive(Clone)]
pub struct WorkAgent {
    hub: Client,
    spoke: Client,
    engine: ApplyEngine,
    config: Arc<AgentConfig>,
    clock: Arc<dyn Clock>,
    caches: Arc<OnceLock<Caches>>,
    executor_cache: Option<crate::executor::cache::ExecutorCache>,
    // Each stage owns its state; the stage's file is the only one that reads it.
    /// What the agent remembers about each work between syncs (`memory.rs`).
    memory: Arc<WorkMemory>,
    /// Which works watch which resources' feedback (`watch.rs`).
    watches: Arc<WatchRegistry>,
    /// Works whose last sync in [`WorkAgent::run`] failed (`run.rs`).
    retries: Arc<SyncRetries>,
    /// Resources applied but not yet recorded in their AppliedManifestWork (`applied.rs`).
    unrecorded: Arc<Unrecorded>,
    metrics: Option<crate::runtime::metrics::AgentMetrics>,
}

/// The agent's informers, once started.
struct Caches {
    works: ObjectCache<ManifestWork>,
    applied: ObjectCache<AppliedManifestWork>,
    objects: SpokeObjects,
}

impl std::fmt::Debug for WorkAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkAgent")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl WorkAgent {
    /// An agent reading works from `hub` and applying them to `spoke`.
    pub fn new(hub: Client, spoke: Client, config: AgentConfig) -> Self {
        let mut engine = ApplyEngine::new(spoke.clone());
        let executor_cache = config
            .executor_validating_caches
            .then(crate::executor::cache::ExecutorCache::new);
        if let Some(cache) = &executor_cache {
            engine = engine.with_executor_cache(cache.clone());
        }
        Self {
            engine,
            executor_cache,
            hub,
            spoke,
            config: Arc::new(config),
            clock: Arc::new(SystemClock),
            caches: Arc::new(OnceLock::new()),
            memory: Arc::default(),
            watches: Arc::default(),
            retries: Arc::default(),
            unrecorded: Arc::default(),
            metrics: None,
        }
    }

    /// Applies manifests with `appliers` instead of upstream's four (see
    /// [`crate::apply::applier`]): your own applier for an update strategy, or for one group
    /// and kind.
    ///
    /// ```
    /// # use futures::future::BoxFuture;
    /// # use serde_json::Value;
    /// use ocm_api::work::v1::UpdateStrategyType;
    /// use ocm_work::agent::{AgentConfig, WorkAgent};
    /// use ocm_work::apply::applier::{Applier, ApplyRequest, Appliers};
    /// use ocm_work::apply::engine::ApplyError;
    /// use ocm_work::apply::update::UpdateApplier;
    ///
    /// /// `CreateOnly` as `Update`: keeps the objects in line with the work.
    /// struct AlwaysUpdate;
    ///
    /// impl Applier for AlwaysUpdate {
    ///     fn apply<'a>(&'a self, request: ApplyRequest<'a>) -> BoxFuture<'a, Result<Value, ApplyError>> {
    ///         UpdateApplier.apply(request)
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (hub, spoke) = (ocm_testkit::FakeCluster::new(), ocm_testkit::FakeCluster::new());
    /// let appliers = Appliers::default().with_strategy(UpdateStrategyType::CreateOnly, AlwaysUpdate);
    /// let agent = WorkAgent::new(hub.client(), spoke.client(), AgentConfig::new("cluster1", "hash"))
    ///     .with_appliers(appliers);
    /// # let _ = agent;
    /// # }
    /// ```
    #[must_use]
    pub fn with_appliers(mut self, appliers: Appliers) -> Self {
        self.engine = self.engine.with_appliers(appliers);
        self
    }

    /// Starts the agent's informers: ManifestWorks of the cluster namespace on the hub,
    /// AppliedManifestWorks on the managed cluster, and (with [`AgentConfig::cached_reads`])
    /// the applied resources, and waits up to `timeout` for the first two to list. From then on
    /// [`WorkAgent::sync_all`] and [`WorkAgent::evict_unmanaged`] read from them, as upstream's
    /// controllers read from informers. Returns whether they are synced (reads fall back to
    /// the API servers until they are). [`WorkAgent::run`] calls it; calling it again does
    /// nothing. Needs a Tokio runtime.
    pub async fn start_caches(&self, timeout: Duration) -> bool {
        let caches = self.caches.get_or_init(|| {
            // The informers log in a span naming the cluster.
            let span = tracing::info_span!("work_agent", cluster = %self.config.cluster_name);
            let _in_span = span.enter();
            // No path of the agent reads managedFields from a cached copy (the appliers build
            // what they send from the manifest; garbage collection reads fresh; status rules
            // that may see them read from the API server): the caches drop them.
            let objects = SpokeObjects::new(
                self.spoke.clone(),
                self.config
                    .max_object_informers
                    .max(self.config.max_feedback_watch),
            )
            .strip_managed_fields();
            // Every read goes through them with cached reads; otherwise only the status reads
            // of resources whose feedback is watched.
            self.engine
                .reader()
                .use_informers(objects.clone(), self.config.cached_reads);
            // Both informers ask their server for its resource version at least every half
            // resync period: that notices a server that lost its state, and keeps the contact
            // readiness looks at fresh while the server has nothing to send.
            let check = Some(self.contact_check_period());
            Caches {
                works: ObjectCache::spawn_with_check(
                    self.raw_works(),
                    watcher::Config::default(),
                    |raw: RawObject| raw.decode::<ManifestWork>().map(Some),
                    check,
                )
                .strip_managed_fields(),
                applied: ObjectCache::spawn_with_check(
                    self.raw_applied_works(),
                    watcher::Config::default(),
                    |raw: RawObject| raw.decode::<AppliedManifestWork>().map(Some),
                    check,
                )
                .strip_managed_fields(),
                objects,
            }
        });
        let (works, applied) = tokio::join!(
            caches.works.wait_synced(timeout),
            caches.applied.wait_synced(timeout)
        );
        works && applied
    }

    /// Whether the agent's informers (ManifestWorks on the hub, AppliedManifestWorks on the
    /// managed cluster) are started, have listed, and have heard from their servers within the
    /// resync period (see [`WorkAgent::readiness`]).
    pub fn caches_synced(&self) -> bool {
        self.readiness().is_ok()
    }

    /// The agent's readiness, as its `/readyz` check reports it: ready once its informers
    /// (ManifestWorks on the hub, AppliedManifestWorks on the managed cluster) have listed,
    /// and for as long as each has heard from its server (a watch event or an answer to the
    /// informer's periodic resource version check, made every half resync period) within the
    /// resync period ([`AgentConfig::resync_interval`], at least two check periods); otherwise
    /// why not. A hub that stops answering makes the agent unready one resync period after
    /// its last answer, and ready again as soon as it answers.
    ///
    /// Upstream's agent serves library-go's default checks only (its `/readyz` passes while
    /// the process runs); this check is our addition.
    pub fn readiness(&self) -> std::result::Result<(), String> {
        let Some(caches) = self.caches.get() else {
            return Err(NOT_LISTED.to_string());
        };
        if !caches.works.is_synced() || !caches.applied.is_synced() {
            return Err(NOT_LISTED.to_string());
        }
        let tolerated = self
            .config
            .resync_interval
            .max(2 * self.contact_check_period());
        let now = tokio::time::Instant::now();
        for (cache_heard, what) in [
            (caches.works.last_heard(), "the hub"),
            (caches.applied.last_heard(), "the managed cluster"),
        ] {
            let silent = cache_heard.map_or(tolerated, |at| now.saturating_duration_since(at));
            if silent > tolerated {
                return Err(format!(
                    "{what} has not answered the agent's informers for {}s, longer than the resync period ({}s)",
                    silent.as_secs(),
                    tolerated.as_secs()
                ));
            }
        }
        Ok(())
    }

    /// How often the informers check their server's resource version: half the resync
    /// period, between 1 s and [`crate::cache::STALE_WATCH_CHECK`].
    fn contact_check_period(&self) -> Duration {
        (self.config.resync_interval / 2).clamp(Duration::from_secs(1), STALE_WATCH_CHECK)
    }

    /// Records the agent's metrics in `metrics` (see [`crate::runtime::metrics`]): its work
    /// queue and reconciles (in [`WorkAgent::run`]; reconciles also through [`reconcile`]),
    /// the requests its apply engine and garbage collection send, and feedback scrapes.
    #[must_use]
    pub fn with_metrics(mut self, metrics: crate::runtime::metrics::AgentMetrics) -> Self {
        let requests = metrics.clone();
        self.engine
            .observe_requests(Arc::new(move |verb| requests.apply_request(verb)));
        self.metrics = Some(metrics);
        self
    }

    /// Uses `clock` for condition times.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The agent's settings.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The planner of the agent's syncs, with its intervals.
    pub fn planner(&self) -> Planner {
        Planner::new(
            self.config.status_sync_interval,
            self.config.resync_interval,
        )
    }

    /// Syncs every ManifestWork of the cluster namespace once. A work that does not decode is
    /// skipped (and returned as an [`Error::Undecodable`] once the others are synced).
    pub async fn sync_all(&self) -> Result<()> {
        let (works, failures): (Vec<Arc<ManifestWork>>, Vec<DecodeFailure>) =
            match self.work_cache() {
                Some(cache) => (cache.list(), cache.undecodable()),
                None => {
                    let (works, failures) =
                        list_decoded::<ManifestWork>(&self.raw_works(), KIND_MANIFEST_WORK)
                            .await
                            .map_err(|e| match e {
                                Error::Kube { source, .. } => Error::kube(
                                    format!("list ManifestWorks in {}", self.config.cluster_name),
                                    source,
                                ),
                                other => other,
                            })?;
                    (works.into_iter().map(Arc::new).collect(), failures)
                }
            };
        let mut errors: Vec<Error> = failures
            .iter()
            .map(|f| undecodable(KIND_MANIFEST_WORK, f))
            .collect();
        for work in works {
            let mut current = work;
            // A sync that only added the finalizer asks to go again at once.
            for _ in 0..3 {
                match self.sync(&current).await {
                    Ok(o) if o.requeue_after == Some(Duration::ZERO) => {
                        match self.get_work(&current.name_any()).await {
                            Ok(Some(fresh)) => current = fresh,
                            Ok(None) => break,
                            Err(e) => {
                                errors.push(e);
                                break;
                            }
                        }
                    }
                    Ok(_) => break,
                    Err(e) => {
                        errors.push(e);
                        break;
                    }
                }
            }
        }
        if let Err(e) = self.evict_unmanaged().await {
            errors.push(e);
        }
        Error::aggregate(errors)
    }

    /// Syncs one ManifestWork (see the module docs): reads, plans ([`plan`]), applies and
    /// records, builds the status and writes it once.
    pub async fn sync(&self, work: &ManifestWork) -> Result<SyncOutcome> {
        let uid = work.metadata.uid.clone().unwrap_or_default();
        let generation = work.metadata.generation.unwrap_or(0);
        let amw_name = applied_manifest_work_name(&self.config.hub_hash, &work.name_any());
        self.recognize(work);

        // Read and plan.
        let input = SyncInput::new(work, Instant::now())
            .memo_holds(self.memo_holds(&uid, work, &amw_name))
            .last_apply(self.memory.last_apply(&uid));
        let planner = self.planner();
        let plan = planner.plan(&input);
        match plan.action {
            SyncAction::Finalize => return self.finalize(work).await,
            SyncAction::AddFinalizer => {
                // A work without the finalizer starts afresh (see [`memory`]).
                self.memory.forget_uid(&uid);
                self.add_finalizer(work).await?;
            }
            SyncAction::Skip => {
                if let Some(record) = plan.record_apply {
                    self.memory.record_apply(&uid, record);
                }
            }
            SyncAction::Apply | SyncAction::RefreshStatus | SyncAction::Nothing => {}
        }
        if let Some(outcome) = plan.outcome {
            return Ok(outcome);
        }
        self.memory.drop_memo(&uid);

        // Apply and record.
        let builder = StatusBuilder::new(generation, self.clock.now_time()).feedback_reader(
            FeedbackReader::new()
                .raw_json_string(self.config.raw_feedback_json_string)
                .max_json_raw_length(self.config.max_json_raw_length),
        );
        let mut status = work.status.clone().unwrap_or_default();
        let mut errors = Vec::new();
        // When this apply pass asks to be applied again; recorded only once the whole sync
        // succeeded (its results reached the work's status and the AppliedManifestWork), so
        // that a sync that failed half way applies again rather than trusting a status the
        // hub never got.
        let mut applied_until = None;
        let pass = match plan.action {
            SyncAction::Apply => {
                let mut pass = self.apply_pass(work).await?;
                builder.apply_results(&mut status, &pass.results);
                if let Some(e) = pass.record_error.take() {
                    errors.push(e);
                }
                applied_until = Some(LastApply {
                    generation,
                    next: Instant::now() + pass.retry,
                });
                Some(pass)
            }
            _ => None,
        };
        let next_apply = applied_until
            .or_else(|| self.memory.last_apply(&uid))
            .map(|last| last.next);
        // Resources still being deleted bring the next sync forward even when a failed
        // manifest makes the next apply due at once (which alone waits for the status sync).
        let requeue_after = min_duration(
            planner.requeue_after(next_apply, Instant::now()),
            pass.as_ref().and_then(|p| p.pending_retry),
        );

        // Build the status from the live objects.
        let observed = self
            .refresh_status(
                work,
                &builder,
                &mut status,
                pass.as_ref().map(|p| p.results.as_slice()),
            )
            .await;

        // Write it once.
        let work_version = self.write_status(work, &status).await?;
        Error::aggregate(errors)?;
        if let Some(until) = applied_until {
            self.memory.record_apply(&uid, until);
        }
        if let (Some(memo), Some(work_version)) = (pass.and_then(|p| p.memo), work_version) {
            self.keep_memo(work, work_version, memo, &observed);
        }
        Ok(SyncOutcome {
            requeue_after,
            applied: applied_until.is_some(),
        })
    }

    /// Writes `status` to `work` when it differs from the work's own (a merge patch guarded by
    /// uid and resourceVersion); the work's resource version afterwards.
    async fn write_status(
        &self,
        work: &ManifestWork,
        status: &ocm_api::work::v1::ManifestWorkStatus,
    ) -> Result<Option<String>> {
        if Some(status) == work.status.as_ref() {
            return Ok(work.metadata.resource_version.clone());
        }
        let name = work.name_any();
        let patch = json!({"metadata": {"uid": work.metadata.uid, "resourceVersion": work.metadata.resource_version}, "status": status});
        let patched = self
            .works()
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| Error::kube(format!("update status of ManifestWork {name}"), e))?;
        self.remember_work(&patched);
        Ok(patched.metadata.resource_version.clone())
    }

    /// Keeps the memo of this sync of `work` (see [`memo`]): only when the status refresh
    /// (`observed`) read every resource at the version the apply pass left it, and the work
    /// has no executor.
    fn keep_memo(
        &self,
        work: &ManifestWork,
        work_version: String,
        (applied_work_version, resources): memo::PassMemo,
        observed: &memo::Observed,
    ) {
        if !memo::confirmed(&resources, observed) || work.spec.executor.is_some() {
            return;
        }
        self.memory.keep_memo(
            work.metadata.uid.as_deref().unwrap_or_default(),
            SyncMemo {
                generation: work.metadata.generation.unwrap_or(0),
                work_version,
                applied_work_version,
                resources: resources.into_iter().map(|(_, entry)| entry).collect(),
            },
        );
    }

    /// Whether the memo of the last sync of `work` still holds (see [`memo`]).
    fn memo_holds(&self, uid: &str, work: &ManifestWork, amw: &str) -> bool {
        if !self.config.cached_reads || work.spec.executor.is_some() {
            return false;
        }
        self.memory
            .memo_holds(uid, |m| m.holds(work, self.applied_cache(), amw))
    }
}
