//! Running the agent: the queue that syncs works as they change ([`super::queue`]), the eviction loop, the
//! feedback watches that refresh a work's status at once, retries after failed syncs, and the
//! Events about works the agent cannot decode.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use kube::Resource;
use ocm_api::work::v1::ManifestWork;
use tracing::Instrument;

use super::queue::WorkQueue;
use super::watch::watch_key;
use super::{KIND_MANIFEST_WORK, REASON_UNDECODABLE, SYNC_RETRY_MAX, SYNC_RETRY_MIN, WorkAgent};
use crate::cache::{CacheEntry, DecodeFailure, InformerKey, RetryBackoff};
use crate::{Error, Result};

impl WorkAgent {
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
        let queue = WorkQueue::default();
        if let Some(caches) = self.caches.get() {
            let agent = self.clone();
            let queue = queue.clone();
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
                        queue.add(&work);
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
        self.feed_queue(&queue);
        let agent = Arc::new(self);
        queue
            .run(&stop, |name: Arc<str>| {
                let agent = agent.clone();
                // A work may nest as deep as the hub takes (10,000 levels): each sync runs
                // with stack for the deepest work the informer has seen.
                let deepest = agent.clone();
                ocm_api::k8s::json::WithStack::new(
                    move || deepest.caches.get().map_or(0, |c| c.works.deepest()),
                    async move { agent.sync_queued(&name).await },
                )
            })
            .await;
        // The queue returns once the shutdown signal came and its syncs under way ended.
        stop.cancel();
        shutdown.await;
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
    pub(super) async fn reconcile_by_name(&self, name: &str) -> Result<Option<Duration>> {
        let work = match self.get_work(name).await {
            Ok(Some(work)) => work,
            // Gone, or reported as undecodable: nothing to do until it changes.
            Ok(None) | Err(Error::Undecodable { .. }) => {
                self.retries.forget(name);
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
    pub(super) fn sync_failed(&self, work: &str, error: &Error) -> Duration {
        let (delay, repeated) = self.retries.failed(work, error.to_string());
        if repeated {
            tracing::debug!(%error, work, cluster = %self.config.cluster_name, retry_in = ?delay, "ManifestWork sync failed again");
        } else {
            tracing::warn!(%error, work, cluster = %self.config.cluster_name, retry_in = ?delay, "ManifestWork sync failed");
        }
        delay
    }

    /// Forgets the failures of `work` after a successful sync.
    pub(super) fn sync_succeeded(&self, work: &str) {
        if self.retries.forget(work) {
            tracing::info!(work, cluster = %self.config.cluster_name, "ManifestWork synced again");
        }
    }

    /// One sync of the queue of [`WorkAgent::run`]: syncs the work `name` if the informer still
    /// holds it (see [`WorkAgent::reconcile_by_name`]), with the queue metrics; returns when to
    /// sync it again: the sync's requeue, or after a failure the backoff of
    /// [`WorkAgent::sync_failed`].
    async fn sync_queued(&self, name: &str) -> Option<std::time::Duration> {
        // A work the informer no longer holds is not synced (it was dropped from the queue
        // when the informer dropped it; this catches a requeue that raced with the deletion).
        let namespace = &self.config.cluster_name;
        if self
            .caches
            .get()
            .is_none_or(|caches| caches.works.get(namespace, name).is_none())
        {
            return None;
        }
        let started = self.metrics.as_ref().map(|m| m.queue.start(name));
        let span =
            tracing::info_span!("reconcile", cluster = %self.config.cluster_name, work = %name);
        let result = self.reconcile_by_name(name).instrument(span).await;
        if let (Some(metrics), Some(started)) = (&self.metrics, started) {
            metrics.queue.done(started);
            metrics.reconcile.observe(
                crate::runtime::metrics::AGENT_CONTROLLER,
                started.elapsed(),
                result.is_ok(),
            );
            if let Ok(Some(after)) = &result {
                metrics.queue.add_after(name, *after);
            }
        }
        match result {
            Ok(after) => after,
            Err(error) => {
                let after = self.sync_failed(name, &error);
                if let Some(metrics) = &self.metrics {
                    metrics.queue.retry(name, after);
                }
                Some(after)
            }
        }
    }

    /// Connects the ManifestWork informer to the queue of [`WorkAgent::run`]: every work the
    /// informer adds or changes is queued (by name; the sync reads the work from the informer),
    /// every work it drops is forgotten, and every work that does not decode gets a Warning
    /// Event on the hub.
    ///
    /// The queue has no watch of its own: one informer means one decode of each work (item by
    /// item, so one undecodable work stops nothing) and no second, lagging copy that would have
    /// the agent write from a version older than its own last write.
    fn feed_queue(&self, queue: &WorkQueue) {
        let Some(caches) = self.caches.get() else {
            return;
        };
        let works = caches.works.clone();
        let notify = {
            let works = works.clone();
            let metrics = self.metrics.clone();
            let queue = queue.clone();
            let agent = self.clone();
            move |namespace: &str, name: &str| {
                if works.get(namespace, name).is_some() {
                    if let Some(metrics) = &metrics {
                        metrics.queue.add(name);
                    }
                    queue.add(name);
                } else {
                    queue.forget(name);
                    if let Some(metrics) = &metrics {
                        metrics.queue.forget(name);
                    }
                    // Nothing the agent remembers of it may stand for a later work of the
                    // same name (see `memory`).
                    agent.forget_work(name);
                }
            }
        };
        let notify = Arc::new(notify);
        let listener = notify.clone();
        works.set_listener(Arc::new(move |ns: &str, name: &str| listener(ns, name)));
        // The works already cached are queued like any change.
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
            tracing::debug!(error = %crate::api_errors::describe(&error), work = %failure.name, "cannot record the Event of an undecodable ManifestWork");
        }
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

/// The works whose last sync in [`WorkAgent::run`] failed: each one's retry backoff and last
/// error (so that an error repeated is logged once).
#[derive(Default)]
pub(super) struct SyncRetries {
    by_work: Mutex<HashMap<String, (RetryBackoff, String)>>,
}

impl SyncRetries {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, (RetryBackoff, String)>> {
        self.by_work.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that the sync of `work` failed with `error`: when to try again, and whether
    /// the error is the same as the last one.
    fn failed(&self, work: &str, error: String) -> (Duration, bool) {
        let mut retries = self.lock();
        let (backoff, last) = retries.entry(work.to_string()).or_insert_with(|| {
            (
                RetryBackoff::new(SYNC_RETRY_MIN, SYNC_RETRY_MAX),
                String::new(),
            )
        });
        let delay = backoff.next().unwrap_or(SYNC_RETRY_MAX);
        let repeated = *last == error;
        *last = error;
        (delay, repeated)
    }

    /// Forgets the failures of `work`; whether it had any.
    pub(super) fn forget(&self, work: &str) -> bool {
        self.lock().remove(work).is_some()
    }
}
