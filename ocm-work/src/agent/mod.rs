//! The work agent: applies the ManifestWorks of one managed cluster's namespace on the hub to
//! that managed cluster, and reports their status back.
//!
//! One [`WorkAgent::sync`] of a ManifestWork does what upstream's agent controllers do:
//!
//! 1. a work being deleted is finalized: `Deleting` is set, its AppliedManifestWork is deleted
//!    and its resources are removed (unless orphaned), then the finalizers are released;
//! 2. the `cluster.open-cluster-management.io/manifest-work-cleanup` finalizer is added;
//! 3. the AppliedManifestWork `<hub hash>-<work name>` is created or its spec updated;
//! 4. every manifest is applied ([`crate::apply::engine`]), giving each its `Applied`
//!    condition, and the work its `Applied` condition;
//! 5. the AppliedManifestWork's `appliedResources` are updated and resources no longer in the
//!    work are deleted ([`gc::delete_applied_resources`]); a resource whose deletion was
//!    accepted stays listed until a later pass sees it gone (a garbage collector, a finalizer
//!    or a terminating namespace may take long on a real cluster), and meanwhile the work is
//!    applied again after [`PENDING_DELETION_RETRY_MIN`], doubling up to [`SYNC_RETRY_MAX`];
//! 6. each resource's `Available` condition and status feedback are read, and the work's
//!    aggregated `Available` condition computed;
//! 7. the work status is written only when it changed.
//!
//! Applying happens when the work changed and at least every [`AgentConfig::resync_interval`];
//! in between, [`WorkAgent::sync`] only refreshes the status (step 6), every
//! [`AgentConfig::status_sync_interval`].
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
//! tests that call [`WorkAgent::sync_all`] right after a change want.
//!
//! With informers and cached reads, a sync remembers the resource versions it saw (the work,
//! its AppliedManifestWork and every applied resource) when it ended without error and
//! without an executor; a later sync, resync included, that finds all of them unchanged in the
//! informers is skipped, since it would write nothing and compute the same status. Any change
//! (a new generation, an edit or deletion on the managed cluster, a relist after a lost watch)
//! makes the next sync a full one. Upstream re-applies on every resync instead, with the same
//! outcome.
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

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::{finalizers, limits, work as wc};
use ocm_api::work::v1::FeedbackScrapeType;
use ocm_api::work::v1::{
    AppliedManifestResourceMeta, AppliedManifestWork, AppliedManifestWorkSpec,
    AppliedManifestWorkStatus, ManifestCondition, ManifestResourceMeta, ManifestResourceStatus,
    ManifestWork, ManifestWorkStatus,
};
use ocm_feedback::{CompiledRules, FeedbackReader};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::apply::engine::{ApplyEngine, ManifestApply};
use crate::cache::{
    CacheEntry, DecodeFailure, InformerKey, ObjectCache, RawObject, RetryBackoff, SpokeObjects,
};
use crate::config::{ResourceRef, find_manifest_config};
use crate::discovery::ResolvedResource;
use crate::identity::{agent_id, applied_manifest_work_name};
use crate::owner::applied_manifest_work_ref;
use crate::status::{
    NewManifestCondition, merge_manifest_conditions, work_applied_condition,
    work_available_condition, work_rule_conditions,
};

fn min_duration(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Drops condition-rule conditions (reason prefix `ConditionRule`) computed for another
/// generation, as upstream prunes them.
/// When to apply a work again after an apply pass with these results: at the next resync when
/// everything applied (server-side apply conflicts and ignoreFields errors included, which
/// upstream does not retry either), after a minute when an executor was not allowed, and at the
/// next status sync when a manifest failed otherwise (upstream retries those with backoff).
fn retry_after(results: &[ManifestApply], resync: Duration) -> Duration {
    use crate::apply::engine::ApplyError;
    use crate::executor::{ExecutorError, NOT_ALLOWED_REQUEUE};
    results
        .iter()
        .map(|r| match &r.outcome {
            Ok(_) | Err(ApplyError::Conflict(_) | ApplyError::IgnoreField(_)) => resync,
            Err(ApplyError::Executor(ExecutorError::NotAllowed(_))) => NOT_ALLOWED_REQUEUE,
            Err(_) => Duration::ZERO,
        })
        .min()
        .unwrap_or(resync)
        .min(resync)
}

fn prune_stale_rule_conditions(
    list: &mut Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
    generation: i64,
) {
    list.retain(|c| {
        !c.reason.starts_with(wc::CONDITION_RULE_REASON_PREFIX)
            || c.observed_generation == Some(generation)
    });
}
use crate::{Error, Result};

pub mod gc;
mod reconcile;

pub use reconcile::{error_policy, reconcile};

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

/// What [`WorkAgent::track_applied_resources`] did.
#[derive(Debug, Default)]
struct Tracked {
    /// The AppliedManifestWork's resource version after the update.
    version: Option<String>,
    /// Whether removed resources are still being deleted.
    pending_deletion: bool,
}

/// The Event reason of a ManifestWork the agent cannot decode (our addition: upstream's agent
/// has no such Event, its informer fails as a whole instead).
pub const REASON_UNDECODABLE: &str = "ManifestWorkDecodeFailed";

fn undecodable(kind: &str, failure: &DecodeFailure) -> Error {
    let object = if failure.namespace.is_empty() {
        failure.name.clone()
    } else {
        format!("{}/{}", failure.namespace, failure.name)
    };
    Error::Undecodable {
        kind: kind.to_string(),
        object,
        message: failure.error.clone(),
    }
}

/// GETs `name` as raw JSON and decodes it; a decode failure is an [`Error::Undecodable`] naming
/// the object and the field (a typed GET would log the whole body and say neither).
async fn get_decoded<K: serde::de::DeserializeOwned>(
    api: &Api<RawObject>,
    kind: &str,
    name: &str,
) -> Result<Option<K>> {
    let Some(raw) = api
        .get_opt(name)
        .await
        .map_err(|e| Error::kube(format!("get {kind} {name}"), e))?
    else {
        return Ok(None);
    };
    let namespace = raw.meta().namespace.clone().unwrap_or_default();
    raw.decode::<K>().map(Some).map_err(|error| {
        undecodable(
            kind,
            &DecodeFailure::new(namespace, name.to_string(), error),
        )
    })
}

/// Lists `api` as raw JSON and decodes each object on its own: the decoded objects, and the
/// failures.
async fn list_decoded<K: serde::de::DeserializeOwned>(
    api: &Api<RawObject>,
    kind: &str,
) -> Result<(Vec<K>, Vec<DecodeFailure>)> {
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|e| Error::kube(format!("list {kind}s"), e))?;
    let mut objects = Vec::with_capacity(list.items.len());
    let mut failures = Vec::new();
    for raw in list.items {
        let meta = raw.meta().clone();
        match raw.decode::<K>() {
            Ok(object) => objects.push(object),
            Err(error) => failures.push(
                DecodeFailure::new(
                    meta.namespace.unwrap_or_default(),
                    meta.name.unwrap_or_default(),
                    error,
                )
                .at(meta.uid, meta.resource_version),
            ),
        }
    }
    Ok((objects, failures))
}

/// The agent's settings, as upstream's flags.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AgentConfig {
    /// The managed cluster's name; the agent handles the works in this hub namespace.
    pub cluster_name: String,
    /// The hub hash ([`crate::identity::hub_hash`] of the hub's API server address).
    pub hub_hash: String,
    /// The agent id (defaults to the hub hash).
    pub agent_id: String,
    /// How often status and feedback are refreshed (upstream's `--status-sync-interval`,
    /// default 10 s; upstream advises against going much lower on large fleets).
    pub status_sync_interval: Duration,
    /// How often every work is applied again even if unchanged (upstream: about 4 to 6 min).
    pub resync_interval: Duration,
    /// Allow `JsonRaw` feedback values (feature gate `RawFeedbackJsonString`).
    pub raw_feedback_json_string: bool,
    /// The longest `jsonRaw` value (upstream's `--max-json-raw-length`).
    pub max_json_raw_length: usize,
    /// How long an AppliedManifestWork whose ManifestWork is gone (or that belongs to another
    /// hub) is kept before it is deleted with its resources (upstream's
    /// `--appliedmanifestwork-eviction-grace-period`, default 60 min; 100 years or more
    /// disables eviction).
    pub eviction_grace_period: Duration,
    /// How many resources with `feedbackScrapeType: Watch` may have an informer (upstream's
    /// `--max-feedback-watch`, default 50); beyond it their feedback is polled.
    pub max_feedback_watch: usize,
    /// Whether the apply pass and the status refresh read applied resources from informers on
    /// the managed cluster (one per resource and namespace, started on first use) instead of
    /// a GET per manifest. On by default: it is what makes a steady-state resync cheap. It
    /// changes no outcome, only when a change made by someone else is seen (at most one watch
    /// round trip later, as with upstream's informer reads); writes refused because a cached
    /// copy was stale are retried against the server. Upstream's agent GETs instead; turn this
    /// off to match its request pattern. Only used once the caches are started
    /// ([`WorkAgent::start_caches`], which [`WorkAgent::run`] calls).
    pub cached_reads: bool,
    /// The most informers started for cached reads (beyond it, reads are GETs).
    pub max_object_informers: usize,
    /// Cache executor permission checks and re-check them when RBAC changes (feature gate
    /// `ExecutorValidatingCaches`, off by default as upstream).
    pub executor_validating_caches: bool,
}

impl AgentConfig {
    /// Settings for `cluster_name` under the hub with hash `hub_hash`, upstream's defaults
    /// otherwise.
    pub fn new(cluster_name: impl Into<String>, hub_hash: impl Into<String>) -> Self {
        let hub_hash = hub_hash.into();
        Self {
            cluster_name: cluster_name.into(),
            agent_id: agent_id(None, &hub_hash),
            hub_hash,
            status_sync_interval: limits::STATUS_SYNC_INTERVAL,
            resync_interval: Duration::from_secs(240),
            raw_feedback_json_string: false,
            max_json_raw_length: limits::MAX_JSON_RAW_LENGTH,
            eviction_grace_period: limits::APPLIED_MANIFEST_WORK_EVICTION_GRACE_PERIOD,
            max_feedback_watch: 50,
            cached_reads: true,
            max_object_informers: 500,
            executor_validating_caches: false,
        }
    }

    /// Turns the `ExecutorValidatingCaches` gate on or off.
    #[must_use]
    pub fn executor_validating_caches(mut self, enabled: bool) -> Self {
        self.executor_validating_caches = enabled;
        self
    }

    /// Sets how many resources may have a feedback watch.
    #[must_use]
    pub fn max_feedback_watch(mut self, max: usize) -> Self {
        self.max_feedback_watch = max;
        self
    }

    /// Turns cached reads of applied resources on or off (see [`AgentConfig::cached_reads`]).
    #[must_use]
    pub fn cached_reads(mut self, enabled: bool) -> Self {
        self.cached_reads = enabled;
        self
    }

    /// Sets the agent id (empty means the hub hash).
    #[must_use]
    pub fn agent_id(mut self, id: &str) -> Self {
        self.agent_id = agent_id(Some(id), &self.hub_hash);
        self
    }

    /// Sets the status sync interval.
    #[must_use]
    pub fn status_sync_interval(mut self, interval: Duration) -> Self {
        self.status_sync_interval = interval;
        self
    }

    /// Sets the full re-apply interval.
    #[must_use]
    pub fn resync_interval(mut self, interval: Duration) -> Self {
        self.resync_interval = interval;
        self
    }

    /// Sets the eviction grace period of unmanaged AppliedManifestWorks.
    #[must_use]
    pub fn eviction_grace_period(mut self, grace: Duration) -> Self {
        self.eviction_grace_period = grace;
        self
    }

    /// Enables `JsonRaw` feedback values.
    #[must_use]
    pub fn raw_feedback_json_string(mut self, enabled: bool) -> Self {
        self.raw_feedback_json_string = enabled;
        self
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
    /// uid → (generation last applied, when to apply again).
    applied: Arc<Mutex<HashMap<String, (i64, Instant)>>>,
    caches: Arc<OnceLock<Caches>>,
    watches: Arc<Mutex<WatchRegistry>>,
    executor_cache: Option<crate::executor::cache::ExecutorCache>,
    memos: Arc<Mutex<HashMap<String, SyncMemo>>>,
    /// Works whose last sync in [`WorkAgent::run`] failed: their retry backoff and last error.
    retries: Arc<Mutex<HashMap<String, (RetryBackoff, String)>>>,
    /// Resources an apply pass created or kept whose AppliedManifestWork record failed to be
    /// written, by AppliedManifestWork name: the next bookkeeping pass counts them as tracked,
    /// so a work that drops them meanwhile still gets them collected.
    unrecorded: Arc<Mutex<HashMap<String, Vec<AppliedManifestResourceMeta>>>>,
    /// Works (by uid) with resources pending deletion: when to look at them again.
    deleting: Arc<Mutex<HashMap<String, RetryBackoff>>>,
    metrics: Option<crate::runtime::metrics::AgentMetrics>,
}

/// The agent's informers, once started.
struct Caches {
    works: ObjectCache<ManifestWork>,
    applied: ObjectCache<AppliedManifestWork>,
    objects: SpokeObjects,
}

/// An applied resource's informer, namespace, name and resource version.
type MemoEntry = (ObjectCache<Value>, String, String, String);

/// What one complete, error-free sync of a work saw: while every input is still at these
/// resource versions, syncing it again would reach the same result (no write, the same status),
/// so the sync is skipped. Only kept when informers answer every read.
struct SyncMemo {
    generation: i64,
    work_version: String,
    applied_work_version: String,
    /// Each applied resource's informer, namespace, name and resource version.
    resources: Vec<MemoEntry>,
}

impl SyncMemo {
    fn holds(
        &self,
        work: &ManifestWork,
        applied: Option<&ObjectCache<AppliedManifestWork>>,
        amw: &str,
    ) -> bool {
        work.metadata.generation.unwrap_or(0) == self.generation
            && work.metadata.resource_version.as_deref() == Some(self.work_version.as_str())
            && applied.and_then(|c| c.get("", amw)).is_some_and(|a| {
                a.metadata.resource_version.as_deref() == Some(self.applied_work_version.as_str())
            })
            && self.resources.iter().all(|(cache, ns, name, rv)| {
                cache
                    .get(ns, name)
                    .is_some_and(|o| o.resource_version() == Some(rv.as_str()))
            })
    }
}

/// Resources whose feedback is watched: `group/resource/version/namespace/name` → works.
#[derive(Default)]
struct WatchRegistry {
    works: HashMap<String, (InformerKey, BTreeSet<String>)>,
    informers: HashMap<InformerKey, usize>,
}

/// `meta` with every field present, empty strings included, as upstream's agent writes a
/// manifest's `resourceMeta` (its fields have no `omitempty`): hub tools read `group: ""` for
/// the core group and `namespace: ""` for cluster-scoped resources.
fn with_every_field(meta: &ManifestResourceMeta) -> ManifestResourceMeta {
    let field = |v: &Option<String>| Some(v.clone().unwrap_or_default());
    ManifestResourceMeta {
        ordinal: meta.ordinal,
        group: field(&meta.group),
        version: field(&meta.version),
        kind: field(&meta.kind),
        resource: field(&meta.resource),
        name: field(&meta.name),
        namespace: field(&meta.namespace),
    }
}

fn watch_key(group: &str, resource: &str, version: &str, namespace: &str, name: &str) -> String {
    format!("{group}/{resource}/{version}/{namespace}/{name}")
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
            applied: Arc::new(Mutex::new(HashMap::new())),
            caches: Arc::new(OnceLock::new()),
            watches: Arc::new(Mutex::new(WatchRegistry::default())),
            memos: Arc::new(Mutex::new(HashMap::new())),
            retries: Arc::new(Mutex::new(HashMap::new())),
            unrecorded: Arc::new(Mutex::new(HashMap::new())),
            deleting: Arc::new(Mutex::new(HashMap::new())),
            metrics: None,
        }
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
            let objects = SpokeObjects::new(
                self.spoke.clone(),
                self.config
                    .max_object_informers
                    .max(self.config.max_feedback_watch),
            );
            if self.config.cached_reads {
                self.engine.use_object_cache(objects.clone());
            }
            Caches {
                works: ObjectCache::typed(
                    self.hub.clone(),
                    Some(&self.config.cluster_name),
                    watcher::Config::default(),
                ),
                applied: ObjectCache::typed(self.spoke.clone(), None, watcher::Config::default()),
                objects,
            }
        });
        let (works, applied) = tokio::join!(
            caches.works.wait_synced(timeout),
            caches.applied.wait_synced(timeout)
        );
        works && applied
    }

    fn work_cache(&self) -> Option<&ObjectCache<ManifestWork>> {
        self.caches
            .get()
            .map(|c| &c.works)
            .filter(|c| c.is_synced())
    }

    fn applied_cache(&self) -> Option<&ObjectCache<AppliedManifestWork>> {
        self.caches
            .get()
            .map(|c| &c.applied)
            .filter(|c| c.is_synced())
    }

    fn remember_work(&self, work: &ManifestWork) {
        if let Some(c) = self.caches.get() {
            c.works.insert(work.clone());
        }
    }

    fn remember_applied(&self, amw: &AppliedManifestWork) {
        if let Some(c) = self.caches.get() {
            c.applied.insert(amw.clone());
        }
    }

    /// The ManifestWork `name`: from the informer when synced, else from the hub. A work that
    /// exists but does not decode is an [`Error::Undecodable`].
    async fn get_work(&self, name: &str) -> Result<Option<Arc<ManifestWork>>> {
        if let Some(cache) = self.work_cache() {
            if let Some(failure) = cache.undecodable_object(&self.config.cluster_name, name) {
                return Err(undecodable(KIND_MANIFEST_WORK, &failure));
            }
            return Ok(cache.get(&self.config.cluster_name, name));
        }
        get_decoded(&self.raw_works(), KIND_MANIFEST_WORK, name)
            .await
            .map(|w| w.map(Arc::new))
    }

    /// Whether the ManifestWork `name` exists on the hub, decodable or not.
    async fn work_exists(&self, name: &str) -> Result<bool> {
        if let Some(cache) = self.work_cache() {
            return Ok(cache.get(&self.config.cluster_name, name).is_some()
                || cache
                    .undecodable_object(&self.config.cluster_name, name)
                    .is_some());
        }
        self.raw_works()
            .get_opt(name)
            .await
            .map(|w| w.is_some())
            .map_err(|e| Error::kube(format!("get ManifestWork {name}"), e))
    }

    /// The AppliedManifestWork `name`, read from the managed cluster (never from the
    /// informer).
    async fn get_applied(&self, name: &str) -> Result<Option<AppliedManifestWork>> {
        get_decoded(&self.raw_applied_works(), KIND_APPLIED_MANIFEST_WORK, name).await
    }

    /// `work`, or the agent's informer copy of it when that is newer (it holds the agent's
    /// own last writes).
    pub(crate) fn freshest(&self, work: Arc<ManifestWork>) -> Arc<ManifestWork> {
        let Some(cache) = self.work_cache() else {
            return work;
        };
        match cache.get(
            work.metadata.namespace.as_deref().unwrap_or_default(),
            &work.name_any(),
        ) {
            Some(cached)
                if cached.metadata.uid == work.metadata.uid
                    && reconcile::newer(
                        cached.metadata.resource_version.as_deref(),
                        work.metadata.resource_version.as_deref(),
                    ) =>
            {
                cached
            }
            _ => work,
        }
    }

    /// Whether the agent's informers (ManifestWorks on the hub, AppliedManifestWorks on the
    /// managed cluster) are started and have listed: what its readiness probe reports.
    pub fn caches_synced(&self) -> bool {
        self.work_cache().is_some() && self.applied_cache().is_some()
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

    /// Counts a request the garbage collection sends.
    fn gc_request(&self) -> impl Fn(&'static str) + Send + Sync + use<> {
        let metrics = self.metrics.clone();
        move |verb| {
            if let Some(m) = &metrics {
                m.apply_request(verb);
            }
        }
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

    fn works(&self) -> Api<ManifestWork> {
        Api::namespaced(self.hub.clone(), &self.config.cluster_name)
    }

    fn applied_works(&self) -> Api<AppliedManifestWork> {
        Api::all(self.spoke.clone())
    }

    /// ManifestWorks as raw JSON, for reads that decode each object on its own.
    fn raw_works(&self) -> Api<RawObject> {
        Api::namespaced_with(
            self.hub.clone(),
            &self.config.cluster_name,
            &ApiResource::erase::<ManifestWork>(&()),
        )
    }

    /// AppliedManifestWorks as raw JSON, for reads that decode each object on its own.
    fn raw_applied_works(&self) -> Api<RawObject> {
        Api::all_with(
            self.spoke.clone(),
            &ApiResource::erase::<AppliedManifestWork>(&()),
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

    /// Syncs one ManifestWork (see the module docs).
    pub async fn sync(&self, work: &ManifestWork) -> Result<SyncOutcome> {
        let name = work.name_any();
        if work.metadata.deletion_timestamp.is_some() {
            return self.finalize(work).await;
        }
        if !work
            .finalizers()
            .iter()
            .any(|f| f == finalizers::MANIFEST_WORK_CLEANUP)
        {
            let mut list = work.finalizers().to_vec();
            list.push(finalizers::MANIFEST_WORK_CLEANUP.to_string());
            let patch = json!({"metadata": {
                "uid": work.metadata.uid, "resourceVersion": work.metadata.resource_version,
                "finalizers": list,
            }});
            let patched = self
                .works()
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|e| Error::kube(format!("add finalizer to ManifestWork {name}"), e))?;
            self.remember_work(&patched);
            return Ok(SyncOutcome {
                requeue_after: Some(Duration::ZERO),
                applied: false,
            });
        }
        let conds = work
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .unwrap_or_default();
        // A completed work is never applied again (nor is its AppliedManifestWork touched),
        // but, as upstream's status controller keeps doing, its availability, feedback and
        // condition rules are still refreshed, and conditions of deleted rules pruned.
        let complete = conditions::is_true(conds, wc::CONDITION_COMPLETE);

        let uid = work.metadata.uid.clone().unwrap_or_default();
        let generation = work.metadata.generation.unwrap_or(0);
        let amw_name = applied_manifest_work_name(&self.config.hub_hash, &name);
        if self.memo_holds(&uid, work, &amw_name) {
            let mut applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
            let due = applied
                .get(&uid)
                .is_none_or(|(g, next)| *g != generation || Instant::now() >= *next);
            if due {
                applied.insert(
                    uid,
                    (generation, Instant::now() + self.config.resync_interval),
                );
            }
            return Ok(SyncOutcome {
                requeue_after: Some(self.config.status_sync_interval),
                applied: due && !complete,
            });
        }
        self.lock_memos().remove(&uid);
        let due = !complete && {
            let applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
            applied
                .get(&uid)
                .is_none_or(|(g, next)| *g != generation || Instant::now() >= *next)
        };
        let now = self.clock.now_time();
        let mut status = work.status.clone().unwrap_or_default();
        let mut errors = Vec::new();
        let mut applied = false;
        // When this apply pass asks to be applied again; recorded only once the whole sync
        // succeeded (its results reached the work's status and the AppliedManifestWork), so
        // that a sync that failed half way applies again rather than trusting a status the
        // hub never got.
        let mut applied_until: Option<Instant> = None;
        // Inputs of a memo, collected when the whole sync reads from informers; each entry
        // with its manifest's ordinal, so that the status refresh can confirm it read them.
        let mut memo_inputs: Option<(String, Vec<(i32, MemoEntry)>)> = None;
        if due {
            let amw = self.ensure_applied_manifest_work(work).await?;
            let owner = applied_manifest_work_ref(
                &amw.name_any(),
                &amw.metadata.uid.clone().unwrap_or_default(),
            );
            let results = self.engine.apply_work(work, &owner).await;
            let new_entries: Vec<NewManifestCondition> = results
                .iter()
                .map(|r| NewManifestCondition {
                    resource_meta: with_every_field(&r.meta),
                    conditions: vec![r.applied_condition(generation)],
                })
                .collect();
            let existing = status
                .resource_status
                .as_ref()
                .and_then(|r| r.manifests.clone())
                .unwrap_or_default();
            let manifests = merge_manifest_conditions(&existing, &new_entries, &now);
            let work_conditions = status.conditions.get_or_insert_with(Vec::new);
            if let Some(applied_condition) = work_applied_condition(&manifests, generation) {
                conditions::set(work_conditions, applied_condition, &now);
            }
            status.resource_status = Some(ManifestResourceStatus {
                manifests: Some(manifests),
            });
            let mut retry = retry_after(&results, self.config.resync_interval);
            match self.track_applied_resources(&amw, &results).await {
                Ok(tracked) => {
                    match self.pending_deletion_retry(&uid, tracked.pending_deletion) {
                        // Resources still being deleted: look again soon, never from a memo.
                        Some(delay) => retry = retry.min(delay),
                        None => {
                            memo_inputs = tracked
                                .version
                                .and_then(|v| self.memo_resources(&results).map(|r| (v, r)));
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
            for r in &results {
                if let Err(crate::apply::engine::ApplyError::Api(m)) = &r.outcome {
                    tracing::debug!(work = %name, ordinal = r.meta.ordinal, error = %m, "manifest not applied");
                }
            }
            applied_until = Some(Instant::now() + retry);
            applied = true;
        }
        let next_apply = applied_until
            .or_else(|| {
                self.applied
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&uid)
                    .map(|(_, next)| *next)
            })
            .map(|next| next.saturating_duration_since(Instant::now()))
            // Due now: applied again at the next status sync, not in a tight loop.
            .filter(|d| !d.is_zero());
        match self.refresh_status(work, &mut status, &now).await {
            // The memo stands for the status only when the refresh read every resource at
            // the version the apply pass left it: an informer that had not caught up yet (its
            // first list older than the apply, say) answered with an older copy or none, and
            // a memo would keep that status until the resource changes again.
            Ok(observed) => {
                memo_inputs = memo_inputs.filter(|(_, entries)| {
                    entries.iter().all(|(ordinal, (_, _, _, version))| {
                        observed.get(ordinal).is_some_and(|seen| seen == version)
                    })
                });
            }
            Err(e) => {
                errors.push(e);
                memo_inputs = None;
            }
        }
        let mut work_version = work.metadata.resource_version.clone();
        if Some(&status) != work.status.as_ref() {
            let patch = json!({"metadata": {"uid": work.metadata.uid, "resourceVersion": work.metadata.resource_version}, "status": status});
            let patched = self
                .works()
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|e| Error::kube(format!("update status of ManifestWork {name}"), e))?;
            work_version = patched.metadata.resource_version.clone();
            self.remember_work(&patched);
        }
        Error::aggregate(errors)?;
        if let Some(until) = applied_until {
            self.applied
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(uid.clone(), (generation, until));
        }
        if let (Some((applied_work_version, resources)), Some(work_version)) =
            (memo_inputs, work_version)
            && work.spec.executor.is_none()
        {
            self.lock_memos().insert(
                uid,
                SyncMemo {
                    generation,
                    work_version,
                    applied_work_version,
                    resources: resources.into_iter().map(|(_, entry)| entry).collect(),
                },
            );
        }
        Ok(SyncOutcome {
            requeue_after: min_duration(Some(self.config.status_sync_interval), next_apply),
            applied,
        })
    }

    fn lock_unrecorded(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, Vec<AppliedManifestResourceMeta>>> {
        self.unrecorded.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_memos(&self) -> std::sync::MutexGuard<'_, HashMap<String, SyncMemo>> {
        self.memos.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the memo of the last sync of `work` still holds (see [`SyncMemo`]).
    fn memo_holds(&self, uid: &str, work: &ManifestWork, amw: &str) -> bool {
        if !self.config.cached_reads || work.spec.executor.is_some() {
            return false;
        }
        let memos = self.lock_memos();
        memos
            .get(uid)
            .is_some_and(|m| m.holds(work, self.applied_cache(), amw))
    }

    /// The informer, namespace, name and resource version of every manifest's resource as the
    /// apply pass left it; `None` when any manifest failed, has no resource version (ReadOnly)
    /// or has no synced informer.
    fn memo_resources(&self, results: &[ManifestApply]) -> Option<Vec<(i32, MemoEntry)>> {
        let objects = self.engine.object_cache()?;
        results
            .iter()
            .map(|r| {
                let object = r.outcome.as_ref().ok()?;
                let version = object
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)?;
                let resolved = r.resolved.as_ref()?;
                let namespace = r.meta.namespace.clone().unwrap_or_default();
                let cache = objects.informer(resolved, &namespace)?;
                if !cache.is_synced() {
                    return None;
                }
                let ns = if resolved.namespaced {
                    namespace
                } else {
                    String::new()
                };
                Some((
                    r.meta.ordinal,
                    (cache, ns, r.meta.name.clone()?, version.to_string()),
                ))
            })
            .collect()
    }

    async fn ensure_applied_manifest_work(
        &self,
        work: &ManifestWork,
    ) -> Result<Arc<AppliedManifestWork>> {
        let name = applied_manifest_work_name(&self.config.hub_hash, &work.name_any());
        let spec = AppliedManifestWorkSpec {
            hub_hash: self.config.hub_hash.clone(),
            agent_id: Some(self.config.agent_id.clone()),
            manifest_work_name: work.name_any(),
        };
        let api = self.applied_works();
        let mut fresh = false;
        loop {
            let cached = !fresh && self.applied_cache().is_some();
            let existing = match self.applied_cache().filter(|_| !fresh) {
                Some(cache) => {
                    if let Some(failure) = cache.undecodable_object("", &name) {
                        return Err(undecodable(KIND_APPLIED_MANIFEST_WORK, &failure));
                    }
                    cache.get("", &name)
                }
                None => self.get_applied(&name).await?.map(Arc::new),
            };
            let written = match existing {
                Some(existing) if existing.spec == spec => return Ok(existing),
                Some(_) => api
                    .patch(
                        &name,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"spec": spec})),
                    )
                    .await
                    .map_err(|e| Error::kube(format!("update AppliedManifestWork {name}"), e))?,
                None => {
                    let amw = AppliedManifestWork {
                        metadata: ObjectMeta {
                            name: Some(name.clone()),
                            labels: work.metadata.labels.clone(),
                            finalizers: Some(vec![
                                finalizers::APPLIED_MANIFEST_WORK_CLEANUP.to_string(),
                            ]),
                            ..ObjectMeta::default()
                        },
                        spec: spec.clone(),
                        status: None,
                    };
                    match api.create(&PostParams::default(), &amw).await {
                        Ok(created) => created,
                        // The informer had not seen it yet.
                        Err(kube::Error::Api(s)) if cached && s.code == 409 => {
                            fresh = true;
                            continue;
                        }
                        Err(e) => {
                            return Err(Error::kube(
                                format!("create AppliedManifestWork {name}"),
                                e,
                            ));
                        }
                    }
                }
            };
            self.remember_applied(&written);
            return Ok(Arc::new(written));
        }
    }

    /// When to apply `work_uid` again because resources of it are still being deleted
    /// (`pending`), doubling from [`PENDING_DELETION_RETRY_MIN`] up to [`SYNC_RETRY_MAX`];
    /// `None` (and the backoff reset) once nothing is pending.
    fn pending_deletion_retry(&self, work_uid: &str, pending: bool) -> Option<Duration> {
        self.deletion_retry(work_uid, pending, PENDING_DELETION_RETRY_MIN)
    }

    /// The backoff behind [`WorkAgent::pending_deletion_retry`] and the finalization of
    /// AppliedManifestWorks, for `uid` (a work's or an AppliedManifestWork's).
    fn deletion_retry(&self, uid: &str, pending: bool, min: Duration) -> Option<Duration> {
        let mut deleting = self.deleting.lock().unwrap_or_else(|e| e.into_inner());
        if !pending {
            deleting.remove(uid);
            return None;
        }
        let backoff = deleting
            .entry(uid.to_string())
            .or_insert_with(|| RetryBackoff::new(min, SYNC_RETRY_MAX));
        Some(backoff.next().unwrap_or(SYNC_RETRY_MAX))
    }

    /// Updates `appliedResources` and deletes resources that left the work (upstream §4.3).
    /// Resources whose deletion was accepted but that still exist (or that the server
    /// answered as deleted, until a later pass sees them gone) stay in `appliedResources`.
    async fn track_applied_resources(
        &self,
        amw: &AppliedManifestWork,
        results: &[ManifestApply],
    ) -> Result<Tracked> {
        if amw.metadata.deletion_timestamp.is_some() {
            return Ok(Tracked::default());
        }
        let mut current = Vec::new();
        for r in results {
            let (Some(resource), Some(version), Some(name)) =
                (&r.meta.resource, &r.meta.version, &r.meta.name)
            else {
                continue;
            };
            let uid = match &r.outcome {
                Ok(obj) => obj
                    .pointer("/metadata/uid")
                    .and_then(|u| u.as_str())
                    .map(str::to_string),
                Err(_) => None,
            };
            let uid = match uid {
                Some(uid) => Some(uid),
                None => {
                    // ReadOnly or failed: record the live object's uid if it exists.
                    let Some(resolved) = &r.resolved else {
                        continue;
                    };
                    match self
                        .engine
                        .get_live(
                            resolved,
                            r.meta.namespace.as_deref().unwrap_or_default(),
                            name,
                        )
                        .await
                    {
                        Ok(Some(live)) => live
                            .pointer("/metadata/uid")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        Ok(None) => continue,
                        Err(e) => return Err(Error::kube(format!("get {resource} {name}"), e)),
                    }
                }
            };
            // Upstream writes `group` and `namespace` even when empty (core group,
            // cluster-scoped), as its hub and tools read them.
            current.push(AppliedManifestResourceMeta {
                group: Some(r.meta.group.clone().unwrap_or_default()),
                version: version.clone(),
                resource: resource.clone(),
                namespace: Some(r.meta.namespace.clone().unwrap_or_default()),
                name: name.clone(),
                uid,
            });
        }
        let amw_name = amw.name_any();
        let mut previous = amw
            .status
            .as_ref()
            .and_then(|s| s.applied_resources.clone())
            .unwrap_or_default();
        // What an earlier pass applied but failed to record (our addition: upstream's agent
        // leaves such resources behind when the work drops them before a record succeeds).
        if let Some(unrecorded) = self.lock_unrecorded().get(&amw_name) {
            previous.extend(unrecorded.iter().cloned());
        }
        let gone = gc::untracked(&previous, &current);
        let owner_uid = amw.metadata.uid.clone().unwrap_or_default();
        let (pending, errors) =
            gc::delete_applied_resources_with(&self.spoke, &gone, &owner_uid, &self.gc_request())
                .await;
        let pending_deletion = !pending.is_empty();
        if pending_deletion {
            tracing::debug!(applied_manifest_work = %amw.name_any(), pending = pending.len(), "resources still being deleted");
        }
        current.extend(pending);
        gc::sort_applied(&mut current);
        current.dedup();
        let new_status = AppliedManifestWorkStatus {
            applied_resources: Some(current),
            eviction_start_time: amw
                .status
                .as_ref()
                .and_then(|s| s.eviction_start_time.clone()),
        };
        let mut version = amw.metadata.resource_version.clone();
        if amw.status.as_ref() != Some(&new_status) {
            let name = amw_name.clone();
            let patched = match self
                .applied_works()
                .patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": new_status})),
                )
                .await
            {
                Ok(patched) => patched,
                Err(e) => {
                    self.lock_unrecorded()
                        .insert(amw_name, new_status.applied_resources.unwrap_or_default());
                    return Err(Error::kube(
                        format!("update status of AppliedManifestWork {name}"),
                        e,
                    ));
                }
            };
            version = patched.metadata.resource_version.clone();
            self.remember_applied(&patched);
        }
        self.lock_unrecorded().remove(&amw_name);
        gc::into_result(errors)?;
        Ok(Tracked {
            version,
            pending_deletion,
        })
    }

    /// Reads every applied resource: `Available` and status feedback per manifest, and the
    /// work's aggregated `Available` (upstream's available-status controller). Returns the
    /// resource version each manifest's resource was read at, by ordinal (absent when it was
    /// not found or not read).
    async fn refresh_status(
        &self,
        work: &ManifestWork,
        status: &mut ManifestWorkStatus,
        now: &Time,
    ) -> Result<HashMap<i32, String>> {
        let mut observed = HashMap::new();
        let Some(manifests) = status
            .resource_status
            .as_mut()
            .and_then(|r| r.manifests.as_mut())
        else {
            return Ok(observed);
        };
        let conds = status.conditions.get_or_insert_with(Vec::new);
        if conditions::find(conds, wc::CONDITION_APPLIED).is_none() {
            return Ok(observed);
        }
        let configs = work.spec.manifest_configs.as_deref().unwrap_or_default();
        let generation = work.metadata.generation.unwrap_or(0);
        let work_name = work.name_any();
        let mut watched = HashSet::new();
        for entry in manifests.iter_mut() {
            let ordinal = entry.resource_meta.ordinal;
            let (key, version) = self
                .refresh_manifest(&work_name, entry, configs, generation, now)
                .await;
            if let Some(key) = key {
                watched.insert(key);
            }
            if let Some(version) = version {
                observed.insert(ordinal, version);
            }
        }
        self.retain_watches(&work_name, &watched);
        conditions::set(conds, work_available_condition(manifests, generation), now);
        for rule_condition in work_rule_conditions(manifests, generation) {
            conditions::set(conds, rule_condition, now);
        }
        prune_stale_rule_conditions(conds, generation);
        Ok(observed)
    }

    /// Refreshes one manifest's `Available`, feedback and rule conditions; returns the watch
    /// key when its feedback is watched, and the resource version the resource was read at.
    async fn refresh_manifest(
        &self,
        work_name: &str,
        entry: &mut ManifestCondition,
        configs: &[ocm_api::work::v1::ManifestConfigOption],
        generation: i64,
        now: &Time,
    ) -> (Option<String>, Option<String>) {
        let meta = &entry.resource_meta;
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        let (group, version, kind, resource, namespace, name) = (
            s(&meta.group),
            s(&meta.version),
            s(&meta.kind),
            s(&meta.resource),
            s(&meta.namespace),
            s(&meta.name),
        );
        if resource.is_empty() || version.is_empty() || name.is_empty() {
            conditions::set(
                &mut entry.conditions,
                NewCondition::new(
                    wc::CONDITION_AVAILABLE,
                    ConditionStatus::Unknown,
                    wc::REASON_INCOMPLETE_RESOURCE_META,
                    wc::MESSAGE_INCOMPLETE_RESOURCE_META,
                ),
                now,
            );
            return (None, None);
        }
        let key = watch_key(&group, &resource, &version, &namespace, &name);
        let resolved = self
            .engine
            .resolver()
            .resolve(&GroupVersionKind::gvk(&group, &version, &kind))
            .await;
        let live = match &resolved {
            Ok(resolved) => self
                .read_for_status(resolved, &namespace, &name, &key)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        let live = match live {
            Ok(Some(obj)) => obj,
            Ok(None) => {
                conditions::set(
                    &mut entry.conditions,
                    NewCondition::new(
                        wc::CONDITION_AVAILABLE,
                        ConditionStatus::False,
                        wc::REASON_RESOURCE_NOT_AVAILABLE,
                        wc::MESSAGE_RESOURCE_NOT_AVAILABLE,
                    ),
                    now,
                );
                return (self.is_watched(&key).then_some(key), None);
            }
            Err(e) => {
                conditions::set(
                    &mut entry.conditions,
                    NewCondition::new(
                        wc::CONDITION_AVAILABLE,
                        ConditionStatus::Unknown,
                        wc::REASON_FETCHING_RESOURCE_FAILED,
                        format!("{}{e}", wc::MESSAGE_FETCHING_RESOURCE_FAILED_PREFIX),
                    ),
                    now,
                );
                return (self.is_watched(&key).then_some(key), None);
            }
        };
        conditions::set(
            &mut entry.conditions,
            NewCondition::new(
                wc::CONDITION_AVAILABLE,
                ConditionStatus::True,
                wc::REASON_RESOURCE_AVAILABLE,
                wc::MESSAGE_RESOURCE_AVAILABLE,
            ),
            now,
        );
        let config = find_manifest_config(
            &ResourceRef {
                group: &group,
                resource: &resource,
                namespace: &namespace,
                name: &name,
            },
            configs,
        );
        let condition_rules = config
            .as_ref()
            .and_then(|c| c.condition_rules.clone())
            .unwrap_or_default();
        let watch = config
            .as_ref()
            .and_then(|c| c.feedback_scrape_type)
            .is_some_and(|t| t == FeedbackScrapeType::Watch);
        let watched = match (&resolved, watch) {
            (Ok(resolved), true) => self.register_watch(work_name, &key, resolved, &namespace),
            _ => false,
        };
        let rules = config.and_then(|c| c.feedback_rules).unwrap_or_default();
        let object: &Value = &live;
        let feedback = if rules.is_empty() {
            ocm_feedback::Feedback::no_rules()
        } else {
            if let Some(metrics) = &self.metrics {
                metrics.feedback_scrape(if watched { "Watch" } else { "Poll" });
            }
            FeedbackReader::new()
                .raw_json_string(self.config.raw_feedback_json_string)
                .max_json_raw_length(self.config.max_json_raw_length)
                .read_compiled(object, &CompiledRules::new(&rules))
        };
        let result = feedback.to_result();
        let values = result.values.clone().unwrap_or_default();
        let stored = entry
            .status_feedbacks
            .as_ref()
            .and_then(|f| f.values.clone())
            .unwrap_or_default();
        if values != stored {
            // New values restart the condition's transition time, as upstream does.
            conditions::remove(&mut entry.conditions, wc::CONDITION_STATUS_FEEDBACK_SYNCED);
        }
        conditions::set(&mut entry.conditions, feedback.condition(), now);
        entry.status_feedbacks = Some(result);
        for condition in crate::rules::evaluate_all(&condition_rules, object, generation) {
            conditions::set(&mut entry.conditions, condition, now);
        }
        prune_stale_rule_conditions(&mut entry.conditions, generation);
        let version = live
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string);
        (watched.then_some(key), version)
    }

    /// Reads a resource for the status refresh: from its feedback informer when one is synced
    /// (upstream's rule), else as the apply pass reads.
    async fn read_for_status(
        &self,
        resolved: &ResolvedResource,
        namespace: &str,
        name: &str,
        key: &str,
    ) -> std::result::Result<Option<Arc<Value>>, kube::Error> {
        if self.is_watched(key)
            && let Some(caches) = self.caches.get()
            && let Some(known) = caches.objects.lookup(resolved, namespace, name).known()
        {
            return Ok(known);
        }
        self.engine.get_live(resolved, namespace, name).await
    }

    fn watch_registry(&self) -> std::sync::MutexGuard<'_, WatchRegistry> {
        self.watches.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_watched(&self, key: &str) -> bool {
        self.watch_registry().works.contains_key(key)
    }

    /// Registers `work`'s interest in the resource `key`; false when the informer limit is
    /// reached (the resource is then polled, as upstream does silently) or caches are off.
    fn register_watch(
        &self,
        work: &str,
        key: &str,
        resolved: &ResolvedResource,
        namespace: &str,
    ) -> bool {
        let Some(caches) = self.caches.get() else {
            return false;
        };
        let informer = InformerKey::of(resolved, namespace);
        let mut registry = self.watch_registry();
        if let Some(entry) = registry.works.get_mut(key) {
            entry.1.insert(work.to_string());
            return true;
        }
        let known = registry.informers.contains_key(&informer);
        if !known && registry.informers.len() >= self.config.max_feedback_watch {
            return false;
        }
        if caches.objects.informer(resolved, namespace).is_none() {
            return false;
        }
        *registry.informers.entry(informer.clone()).or_default() += 1;
        registry.works.insert(
            key.to_string(),
            (informer, BTreeSet::from([work.to_string()])),
        );
        true
    }

    /// Drops `work`'s watch registrations other than `keep`; informers nobody needs any more
    /// stop unless cached reads use them.
    fn retain_watches(&self, work: &str, keep: &HashSet<String>) {
        let mut registry = self.watch_registry();
        let mut emptied = Vec::new();
        registry.works.retain(|key, (informer, works)| {
            if !keep.contains(key) {
                works.remove(work);
            }
            if works.is_empty() {
                emptied.push(informer.clone());
                false
            } else {
                true
            }
        });
        for informer in emptied {
            let left = registry.informers.get_mut(&informer).map(|n| {
                *n = n.saturating_sub(1);
                *n
            });
            if left == Some(0) {
                registry.informers.remove(&informer);
                if !self.config.cached_reads
                    && let Some(caches) = self.caches.get()
                {
                    caches.objects.stop(&informer);
                }
            }
        }
    }

    /// The works watching the resource `key`.
    fn watching_works(&self, key: &str) -> Vec<String> {
        self.watch_registry()
            .works
            .get(key)
            .map(|(_, works)| works.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Finalizes a work being deleted (upstream §4.4).
    async fn finalize(&self, work: &ManifestWork) -> Result<SyncOutcome> {
        let name = work.name_any();
        if !work
            .finalizers()
            .iter()
            .any(|f| f == finalizers::MANIFEST_WORK_CLEANUP)
        {
            return Ok(SyncOutcome::default());
        }
        let amw_name = applied_manifest_work_name(&self.config.hub_hash, &name);
        // The AppliedManifestWork goes, and with it (owner references) what it never recorded.
        self.lock_unrecorded().remove(&amw_name);
        let mut resource_version = work.metadata.resource_version.clone();
        let api = self.applied_works();
        let amw = self.get_applied(&amw_name).await?;
        if let Some(amw) = amw {
            if amw.metadata.deletion_timestamp.is_none() {
                let now = self.clock.now_time();
                let mut status = work.status.clone().unwrap_or_default();
                let deleting = NewCondition::new(
                    wc::CONDITION_DELETING,
                    ConditionStatus::True,
                    wc::REASON_WORK_DELETING,
                    wc::MESSAGE_WORK_DELETING,
                )
                .observed_generation(work.metadata.generation.unwrap_or(0));
                if conditions::set(
                    status.conditions.get_or_insert_with(Vec::new),
                    deleting,
                    &now,
                ) {
                    let patched = self
                        .works()
                        .patch_status(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"status": status})),
                        )
                        .await
                        .map_err(|e| {
                            Error::kube(format!("update status of ManifestWork {name}"), e)
                        })?;
                    resource_version = patched.metadata.resource_version;
                }
                api.delete(&amw_name, &DeleteParams::default())
                    .await
                    .map_err(|e| {
                        Error::kube(format!("delete AppliedManifestWork {amw_name}"), e)
                    })?;
            }
            if let Some(amw) = self.get_applied(&amw_name).await? {
                let done = self.finalize_applied_manifest_work(&amw).await?;
                let amw_uid = amw.metadata.uid.clone().unwrap_or_default();
                if let Some(retry) = self.deletion_retry(&amw_uid, !done, FINALIZE_RETRY_MIN) {
                    return Ok(SyncOutcome {
                        requeue_after: Some(retry),
                        applied: false,
                    });
                }
            }
        }
        let rest: Vec<String> = work
            .finalizers()
            .iter()
            .filter(|f| *f != finalizers::MANIFEST_WORK_CLEANUP)
            .cloned()
            .collect();
        let patch = json!({"metadata": {"uid": work.metadata.uid, "resourceVersion": resource_version, "finalizers": rest}});
        match self
            .works()
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => {
                return Err(Error::kube(
                    format!("remove finalizer from ManifestWork {name}"),
                    e,
                ));
            }
        }
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(work.metadata.uid.as_deref().unwrap_or_default());
        self.retain_watches(&name, &HashSet::new());
        self.lock_memos()
            .remove(work.metadata.uid.as_deref().unwrap_or_default());
        self.pending_deletion_retry(work.metadata.uid.as_deref().unwrap_or_default(), false);
        Ok(SyncOutcome::default())
    }

    /// Evicts this agent's AppliedManifestWorks that no ManifestWork on the hub manages any
    /// more (the work is gone, or the record comes from another hub), after the eviction
    /// grace period; finalizes those being deleted. Returns when to look again.
    pub async fn evict_unmanaged(&self) -> Result<Option<Duration>> {
        const DISABLED: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
        let api = self.applied_works();
        let list: Vec<Arc<AppliedManifestWork>> = match self.applied_cache() {
            // Records that do not decode are left out (the informer reported them).
            Some(cache) => cache.list(),
            None => {
                let (list, failures) = list_decoded::<AppliedManifestWork>(
                    &self.raw_applied_works(),
                    KIND_APPLIED_MANIFEST_WORK,
                )
                .await?;
                for failure in &failures {
                    tracing::warn!(applied_manifest_work = %failure.name, error = %failure.error, "skipped: it does not decode");
                }
                list.into_iter().map(Arc::new).collect()
            }
        };
        let now = self.clock.now_time();
        let mut next: Option<Duration> = None;
        for amw in list {
            if amw.spec.agent_id.as_deref() != Some(self.config.agent_id.as_str()) {
                continue;
            }
            let name = amw.name_any();
            if amw.metadata.deletion_timestamp.is_some() {
                let done = self.finalize_applied_manifest_work(&amw).await?;
                let uid = amw.metadata.uid.clone().unwrap_or_default();
                next = min_duration(next, self.deletion_retry(&uid, !done, FINALIZE_RETRY_MIN));
                continue;
            }
            let started = amw
                .status
                .as_ref()
                .and_then(|s| s.eviction_start_time.clone());
            // A work that exists but does not decode still manages its record: nothing of it
            // is evicted while it cannot be read.
            let managed = name.starts_with(&format!("{}-", self.config.hub_hash))
                && self.work_exists(&amw.spec.manifest_work_name).await?;
            if self.config.eviction_grace_period >= DISABLED || managed {
                if started.is_some() {
                    self.set_eviction_start(&name, None).await?;
                }
                continue;
            }
            let Some(start) = started else {
                self.set_eviction_start(&name, Some(now.clone())).await?;
                next = min_duration(next, Some(self.config.eviction_grace_period));
                continue;
            };
            let grace =
                k8s_openapi::jiff::SignedDuration::try_from(self.config.eviction_grace_period)
                    .unwrap_or(k8s_openapi::jiff::SignedDuration::MAX);
            let deadline = start.0.checked_add(grace).unwrap_or(start.0);
            if now.0 < deadline {
                let left = Duration::try_from(deadline.duration_since(now.0)).unwrap_or_default();
                next = min_duration(next, Some(left));
                continue;
            }
            tracing::info!(applied_manifest_work = %name, "evicting: its ManifestWork is gone");
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => continue,
                Err(e) => return Err(Error::kube(format!("delete AppliedManifestWork {name}"), e)),
            }
            if let Some(deleting) = self.get_applied(&name).await? {
                let done = self.finalize_applied_manifest_work(&deleting).await?;
                let uid = deleting.metadata.uid.clone().unwrap_or_default();
                next = min_duration(next, self.deletion_retry(&uid, !done, FINALIZE_RETRY_MIN));
            }
        }
        Ok(next)
    }

    async fn set_eviction_start(&self, name: &str, time: Option<Time>) -> Result<()> {
        let patched = self
            .applied_works()
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"evictionStartTime": time}})),
            )
            .await
            .map_err(|e| Error::kube(format!("update status of AppliedManifestWork {name}"), e))?;
        self.remember_applied(&patched);
        Ok(())
    }

    /// Deletes the resources of an AppliedManifestWork being deleted; releases its finalizer
    /// once none is pending. Returns whether it is done.
    pub async fn finalize_applied_manifest_work(&self, amw: &AppliedManifestWork) -> Result<bool> {
        let name = amw.name_any();
        if amw.metadata.deletion_timestamp.is_none()
            || !amw
                .finalizers()
                .iter()
                .any(|f| f == finalizers::APPLIED_MANIFEST_WORK_CLEANUP)
        {
            return Ok(true);
        }
        let resources = amw
            .status
            .as_ref()
            .and_then(|s| s.applied_resources.clone())
            .unwrap_or_default();
        let owner_uid = amw.metadata.uid.clone().unwrap_or_default();
        let (pending, errors) = gc::delete_applied_resources_with(
            &self.spoke,
            &resources,
            &owner_uid,
            &self.gc_request(),
        )
        .await;
        let api = self.applied_works();
        if !pending.is_empty() || !errors.is_empty() {
            if pending != resources {
                let status = json!({"status": {"appliedResources": pending}});
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                    .await
                    .map_err(|e| {
                        Error::kube(format!("update status of AppliedManifestWork {name}"), e)
                    })?;
            }
            gc::into_result(errors)?;
            return Ok(false);
        }
        let rest: Vec<String> = amw
            .finalizers()
            .iter()
            .filter(|f| *f != finalizers::APPLIED_MANIFEST_WORK_CLEANUP)
            .cloned()
            .collect();
        let patch = json!({"metadata": {"uid": amw.metadata.uid, "resourceVersion": amw.metadata.resource_version, "finalizers": rest}});
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(true),
            Err(e) => Err(Error::kube(
                format!("remove finalizer from AppliedManifestWork {name}"),
                e,
            )),
        }
    }

    /// Runs the agent until `shutdown` completes: starts the informers
    /// ([`WorkAgent::start_caches`]), watches the cluster namespace on the hub, syncs works as
    /// they change, refreshes status every status sync interval and at once when a resource
    /// with `feedbackScrapeType: Watch` changes, and evicts unmanaged AppliedManifestWorks.
    /// After a lost connection the watches resume (re-listing when the server has compacted
    /// past them or answers `410 Gone`), and every work that changed meanwhile is synced again.
    /// Works are synced from the agent's one ManifestWork informer (see
    /// [`WorkAgent::start_caches`]), which also holds the agent's own writes, so a sync never
    /// starts from a copy older than the agent's last write.
    ///
    /// Shutdown is graceful: once `shutdown` completes no new sync starts, the syncs under way
    /// finish (a work is never left with resources applied but its AppliedManifestWork or its
    /// status not written by that sync), the eviction pass under way finishes, and `run`
    /// returns. Any `Send` future will do (see [`crate::runtime::shutdown`]).
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        let (shutdown, stop) = crate::runtime::shutdown::sync_future(shutdown);
        let synced = tokio::select! {
            synced = self.start_caches(Duration::from_secs(30)) => synced,
            () = stop.cancelled() => return,
        };
        if !synced {
            tracing::warn!(cluster = %self.config.cluster_name, "informers not synced after 30s; reading from the API servers until they are");
        }
        let (trigger, triggered) = futures::channel::mpsc::unbounded();
        if let Some(caches) = self.caches.get() {
            let agent = self.clone();
            let namespace = self.config.cluster_name.clone();
            caches.objects.set_listener(Arc::new(
                move |informer: &InformerKey, ns: &str, name: &str| {
                    let key = watch_key(
                        &informer.group,
                        &informer.resource,
                        &informer.version,
                        ns,
                        name,
                    );
                    for work in agent.watching_works(&key) {
                        if let Some(metrics) = &agent.metrics {
                            metrics.queue.add(&work);
                        }
                        let _ = trigger
                            .unbounded_send(ObjectRef::<WorkKey>::new(&work).within(&namespace));
                    }
                },
            ));
        }
        let executor_cache = self.executor_cache.clone().map(|cache| {
            let agent = self.clone();
            let controller = crate::executor::cache::CacheController::new(
                self.spoke.clone(),
                cache,
                move || {
                    agent
                        .caches
                        .get()
                        .map(|c| c.works.list().iter().map(|w| (**w).clone()).collect())
                        .unwrap_or_default()
                },
            )
            .resolver(self.engine.resolver().clone());
            tokio::spawn(controller.run(stop.clone().cancelled_owned()))
        });
        let evictor = self.clone();
        let eviction_stop = stop.clone();
        let eviction = tokio::spawn(async move {
            let tick = evictor
                .config
                .status_sync_interval
                .max(Duration::from_secs(1));
            let span = tracing::info_span!("evict", cluster = %evictor.config.cluster_name);
            while !eviction_stop.is_cancelled() {
                // A pass under way finishes before the agent stops.
                let wait = match evictor.evict_unmanaged().instrument(span.clone()).await {
                    Ok(next) => next.unwrap_or(tick).min(tick),
                    Err(error) => {
                        tracing::warn!(%error, "AppliedManifestWork eviction failed");
                        tick
                    }
                };
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = eviction_stop.cancelled() => break,
                }
            }
        });
        let (queue, keys) = self.feed_controller();
        let agent = Arc::new(self);
        Controller::for_stream(queue, keys)
            .reconcile_on(triggered)
            .graceful_shutdown_on(shutdown)
            .run(
                |key: Arc<WorkKey>, agent: Arc<WorkAgent>| async move {
                    let name = key.name_any();
                    let started = agent.metrics.as_ref().map(|m| m.queue.start(&name));
                    let span = tracing::info_span!("reconcile", cluster = %agent.config.cluster_name, work = %name);
                    let result = agent.reconcile_by_name(&name).instrument(span).await;
                    if let (Some(metrics), Some(started)) = (&agent.metrics, started) {
                        metrics.queue.done(started);
                        metrics.reconcile.observe(
                            crate::runtime::metrics::AGENT_CONTROLLER,
                            started.elapsed(),
                            result.is_ok(),
                        );
                        if let Ok(Some(after)) = &result {
                            metrics.queue.add_after(&name, *after);
                        }
                    }
                    result.map(|after| after.map_or_else(Action::await_change, Action::requeue))
                },
                |key: Arc<WorkKey>, error: &Error, agent: Arc<WorkAgent>| {
                    let after = agent.sync_failed(&key.name_any(), error);
                    if let Some(metrics) = &agent.metrics {
                        metrics.queue.retry(&key.name_any(), after);
                    }
                    Action::requeue(after)
                },
                agent.clone(),
            )
            .for_each(|_| futures::future::ready(()))
            .await;
        // The controller returns after the shutdown signal or when its input ends.
        stop.cancel();
        let _ = eviction.await;
        if let Some(task) = executor_cache {
            let _ = task.await;
        }
        if let Some(caches) = agent.caches.get() {
            caches.objects.clear_listener();
            caches.works.clear_listener();
            caches.works.on_undecodable(None);
        }
    }

    /// The reconcile of [`WorkAgent::run`]: syncs the work `name` read from the informer
    /// (the freshest copy: it holds the agent's own writes); returns when to sync it again.
    async fn reconcile_by_name(&self, name: &str) -> Result<Option<Duration>> {
        let work = match self.get_work(name).await {
            Ok(Some(work)) => work,
            // Gone, or reported as undecodable: nothing to do until it changes.
            Ok(None) | Err(Error::Undecodable { .. }) => {
                self.lock_retries().remove(name);
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let outcome = self.sync(&work).await?;
        self.sync_succeeded(name);
        Ok(outcome.requeue_after)
    }

    /// Records a failed sync of `work`; returns when to try again ([`SYNC_RETRY_MIN`] doubling
    /// up to [`SYNC_RETRY_MAX`]). The error is logged as a warning when it differs from the
    /// work's previous one, at debug level when it repeats.
    fn sync_failed(&self, work: &str, error: &Error) -> Duration {
        let mut retries = self.lock_retries();
        let (backoff, last) = retries.entry(work.to_string()).or_insert_with(|| {
            (
                RetryBackoff::new(SYNC_RETRY_MIN, SYNC_RETRY_MAX),
                String::new(),
            )
        });
        let text = error.to_string();
        let delay = backoff.next().unwrap_or(SYNC_RETRY_MAX);
        if *last == text {
            tracing::debug!(%error, work, cluster = %self.config.cluster_name, retry_in = ?delay, "ManifestWork sync failed again");
        } else {
            tracing::warn!(%error, work, cluster = %self.config.cluster_name, retry_in = ?delay, "ManifestWork sync failed");
            *last = text;
        }
        delay
    }

    fn lock_retries(&self) -> std::sync::MutexGuard<'_, HashMap<String, (RetryBackoff, String)>> {
        self.retries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets the failures of `work` after a successful sync.
    fn sync_succeeded(&self, work: &str) {
        if self.lock_retries().remove(work).is_some() {
            tracing::info!(work, cluster = %self.config.cluster_name, "ManifestWork synced again");
        }
    }

    /// Connects the ManifestWork informer to the controller of [`WorkAgent::run`]: every work
    /// the informer adds or changes is queued (by name; the reconciler reads the work from the
    /// informer), every work it drops is forgotten, and every work that does not decode gets a
    /// Warning Event on the hub. Returns the queue and the controller's store of names.
    ///
    /// The controller has no watch of its own: one informer means one decode of each work
    /// (item by item, so one undecodable work stops nothing) and no second, lagging copy that
    /// would have the agent write from a version older than its own last write.
    fn feed_controller(
        &self,
    ) -> (
        impl futures::Stream<Item = std::result::Result<WorkKey, watcher::Error>> + Send + 'static,
        kube::runtime::reflector::Store<WorkKey>,
    ) {
        let (keys, writer) = kube::runtime::reflector::store::<WorkKey>();
        let (queue_tx, queue) = futures::channel::mpsc::unbounded::<WorkKey>();
        let Some(caches) = self.caches.get() else {
            return (queue.map(Ok), keys);
        };
        let works = caches.works.clone();
        let writer = Arc::new(Mutex::new(writer));
        let writer_for_init = writer.clone();
        let notify = {
            let works = works.clone();
            let metrics = self.metrics.clone();
            move |namespace: &str, name: &str| {
                let key = work_key(namespace, name);
                let mut writer = writer.lock().unwrap_or_else(|e| e.into_inner());
                if works.get(namespace, name).is_some() {
                    writer.apply_watcher_event(&watcher::Event::Apply(key.clone()));
                    drop(writer);
                    if let Some(metrics) = &metrics {
                        metrics.queue.add(name);
                    }
                    let _ = queue_tx.unbounded_send(key);
                } else {
                    writer.apply_watcher_event(&watcher::Event::Delete(key));
                    if let Some(metrics) = &metrics {
                        metrics.queue.forget(name);
                    }
                }
            }
        };
        let notify = Arc::new(notify);
        let listener = notify.clone();
        works.set_listener(Arc::new(move |ns: &str, name: &str| listener(ns, name)));
        // The controller starts once its store has had a first (here: empty) list; the works
        // already cached are then queued like any change.
        {
            let mut writer = writer_for_init.lock().unwrap_or_else(|e| e.into_inner());
            writer.apply_watcher_event(&watcher::Event::Init);
            writer.apply_watcher_event(&watcher::Event::InitDone);
        }
        for work in works.list() {
            notify(CacheEntry::namespace(&*work), CacheEntry::name(&*work));
        }
        let reporter = self.clone();
        works.on_undecodable(Some(Arc::new(move |failure: &DecodeFailure| {
            let agent = reporter.clone();
            let failure = failure.clone();
            tokio::spawn(async move { agent.report_undecodable(&failure).await });
        })));
        for failure in works.undecodable() {
            let agent = self.clone();
            tokio::spawn(async move { agent.report_undecodable(&failure).await });
        }
        (queue.map(Ok), keys)
    }

    /// Publishes a Warning Event on the hub about a ManifestWork the agent cannot decode (our
    /// addition). Its status is not written: the agent cannot read it, and a merge patch of
    /// `status.conditions` would replace the whole list with one built without it. The hub
    /// role upstream gives work agents (`open-cluster-management:managedcluster:work`) already
    /// allows creating Events; a refused Event is only logged at debug level.
    async fn report_undecodable(&self, failure: &DecodeFailure) {
        use kube::runtime::events::{Event, EventType, Recorder, Reporter};
        let reference = k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some(ManifestWork::api_version(&()).into_owned()),
            kind: Some(KIND_MANIFEST_WORK.to_string()),
            namespace: Some(failure.namespace.clone()),
            name: Some(failure.name.clone()),
            uid: failure.uid.clone(),
            resource_version: failure.resource_version.clone(),
            ..Default::default()
        };
        let event = Event {
            type_: EventType::Warning,
            reason: REASON_UNDECODABLE.to_string(),
            note: Some(truncate_note(format!(
                "the work agent of cluster {} cannot decode this ManifestWork and skips it until it changes: {}",
                self.config.cluster_name, failure.error
            ))),
            action: "Decode".to_string(),
            secondary: None,
        };
        let reporter = Reporter {
            controller: "work-agent".to_string(),
            instance: Some(self.config.agent_id.clone()),
        };
        if let Err(error) = Recorder::new(self.hub.clone(), reporter)
            .publish(&event, &reference)
            .await
        {
            tracing::debug!(%error, work = %failure.name, "cannot record the Event of an undecodable ManifestWork");
        }
    }
}

/// The controller of [`WorkAgent::run`] keys works by name only; their content is read from the
/// agent's informer when reconciled.
type WorkKey = kube::core::PartialObjectMeta<ManifestWork>;

fn work_key(namespace: &str, name: &str) -> WorkKey {
    kube::core::PartialObjectMeta {
        types: None,
        metadata: ObjectMeta {
            namespace: Some(namespace.to_string()),
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        _phantom: std::marker::PhantomData,
    }
}

/// Event notes are limited to 1 KiB by the API server.
fn truncate_note(mut note: String) -> String {
    const MAX: usize = 1024;
    if note.len() > MAX {
        let mut end = MAX - 3;
        while !note.is_char_boundary(end) {
            end -= 1;
        }
        note.truncate(end);
        note.push_str("...");
    }
    note
}
