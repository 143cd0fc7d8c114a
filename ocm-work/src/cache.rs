//! Watch-fed object caches: the agent's informers.
//!
//! Upstream's agent reads ManifestWorks and AppliedManifestWorks from informers, and the
//! resources of `feedbackScrapeType: Watch` manifests from dynamic informers. This module gives
//! the agent the same thing: an [`ObjectCache`] is a map of objects kept current by a
//! [`kube::runtime::watcher()`] stream running on a background task, and [`SpokeObjects`] keeps
//! one such cache per (resource, namespace) of the managed cluster, started on first use.
//!
//! Reads from a cache may lag the cluster by one watch round trip, as informer reads do
//! upstream. Writers correct for that: an object the agent writes is put into the cache at once
//! ([`ObjectCache::insert`]), an older watch event never replaces a newer entry (resource
//! versions are compared as numbers when both are numbers, which they are on every API server
//! built on etcd), and a write refused because the cached copy was stale is retried against a
//! fresh read by the caller.
//!
//! # One object at a time
//!
//! A cache lists and watches [`RawObject`]s (the JSON as the server sent it) and decodes each
//! object on its own. An object that does not decode (a field or enum value a newer release
//! added, a schema change, a label that is not a string) is left out of the cache and reported:
//! [`ObjectCache::undecodable`] lists it with the decode error (which names the field), a
//! warning is logged once per resource version of it (never the list body), and the listener
//! set with [`ObjectCache::on_undecodable`] is called once per resource version. Every other
//! object is cached as usual. A typed list or watch (`Api<ManifestWork>`) would instead fail as
//! a whole on one such object, and keep failing for as long as it exists.
//!
//! After an error the watch is retried with a backoff bounded by [`RETRY_BACKOFF_MAX`]
//! (jittered), so a cache catches up within seconds of its API server coming back; a
//! `410 Gone` makes it list again. A list replaces what the cache held, except the caller's
//! own writes made while the list was under way when they are newer than the listed version.
//!
//! The caches stop when the last handle to them is dropped.
//!
//! # A server that lost its state
//!
//! When an API server loses its state (restarted empty, or restored from an older backup
//! without the documented `--bump-revision`) it counts resource versions again from lower
//! numbers. A watch resumed from a version it has not issued is kept open and silent by
//! kube-apiserver until it reaches that version: an informer that resumes this way would see
//! nothing for as long as that takes, possibly forever. As a safeguard (our addition; upstream's
//! informers have none), every [`STALE_WATCH_CHECK`] a cache asks the server for its current
//! resource version (a list with `limit=1`); when that is lower than the highest version the
//! watch delivered, the watch is dropped and the cache lists again. So the cache catches up
//! within [`STALE_WATCH_CHECK`] plus one list of such a server; until that list completes, the
//! cache counts as not synced ([`ObjectCache::is_synced`]). The check needs numeric
//! resource versions (every etcd-backed server has them); with others it never fires.
//! [`ObjectCache::spawn_with_check`] sets another period or turns the check off.
//!
//! A watch that fails (a dropped connection, a refused request) also has the check run as soon
//! as the server answers again, rather than at the next period: a server that restarts empty
//! drops its watches, so the cache notices the lost state within one retry of the server
//! coming back.
//!
//! # Contact with the server
//!
//! [`ObjectCache::last_heard`] tells when the server last answered the cache: an event of its
//! watch (a list included) or a successful check. An idle but healthy server sends no events;
//! its answers to the periodic check keep the contact fresh, so a caller that needs to know
//! whether the server still answers (a readiness probe) sets the check period below the
//! silence it tolerates.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) {
//! use kube::runtime::watcher;
//! use ocm_api::work::v1::ManifestWork;
//! use ocm_work::cache::ObjectCache;
//!
//! let cache = ObjectCache::<ManifestWork>::typed(client, Some("cluster1"), watcher::Config::default());
//! cache.wait_synced(std::time::Duration::from_secs(10)).await;
//! let names: Vec<String> = cache.list().iter().map(|w| w.metadata.name.clone().unwrap_or_default()).collect();
//! for failure in cache.undecodable() {
//!     eprintln!("{}/{} cannot be read: {}", failure.namespace, failure.name, failure.error);
//! }
//! # }
//! ```

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use futures::StreamExt;
use kube::api::Api;
use kube::core::ApiResource;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::discovery::ResolvedResource;

pub use ocm_api::k8s::object::{DecodeFailure, RawObject};

/// The longest wait between two attempts of a failed list or watch (before jitter, which adds
/// up to half of it). Upstream's informers (client-go) and kube's default backoff wait up to 30 s
/// (60 s with kube's jitter), so a watch could stay down for a minute after its API server came
/// back; the agent's caches retry at least every few seconds instead.
pub const RETRY_BACKOFF_MAX: Duration = Duration::from_secs(2);

/// The agent's retry backoff: exponential (doubling) between a minimum and a maximum, each
/// wait jittered by up to +50% (so agents reconnecting to a hub that came back do not all
/// arrive at once), reset by the first success. The default, used by the caches' watches,
/// goes from 100 ms to [`RETRY_BACKOFF_MAX`].
#[derive(Debug, Clone)]
pub struct RetryBackoff {
    min: Duration,
    max: Duration,
    next: Duration,
    seed: u64,
}

impl Default for RetryBackoff {
    fn default() -> Self {
        Self::new(Duration::from_millis(100), RETRY_BACKOFF_MAX)
    }
}

impl RetryBackoff {
    /// A backoff from `min` doubling up to `max` (before jitter).
    pub fn new(min: Duration, max: Duration) -> Self {
        use std::hash::{BuildHasher, Hasher};
        // A random seed from std's per-process random hasher keys; no extra dependency.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(0x9e37_79b9_7f4a_7c15);
        Self {
            min,
            max: max.max(min),
            next: min,
            seed: hasher.finish() | 1,
        }
    }
}

impl Iterator for RetryBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        // xorshift64 for the jitter.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let base = self.next;
        self.next = self.next.saturating_mul(2).min(self.max);
        let jitter = base.mul_f64((self.seed % 1000) as f64 / 2000.0);
        Some(base + jitter)
    }
}

impl kube::runtime::utils::Backoff for RetryBackoff {
    fn reset(&mut self) {
        self.next = self.min;
    }
}

/// What a cache needs to know about the objects it holds.
pub trait CacheEntry: Send + Sync + 'static {
    /// The object's namespace (empty when cluster-scoped).
    fn namespace(&self) -> &str;
    /// The object's name.
    fn name(&self) -> &str;
    /// The object's resource version, if it has one.
    fn resource_version(&self) -> Option<&str>;
    /// The object's uid, if known.
    fn uid(&self) -> Option<&str> {
        None
    }
    /// Removes `metadata.managedFields` (used by [`ObjectCache::strip_managed_fields`]). The
    /// default keeps the object as it is.
    fn clear_managed_fields(&mut self) {}
}

macro_rules! typed_entry {
    ($($t:ty),*) => {$(
        impl CacheEntry for $t {
            fn namespace(&self) -> &str {
                self.metadata.namespace.as_deref().unwrap_or_default()
            }
            fn name(&self) -> &str {
                self.metadata.name.as_deref().unwrap_or_default()
            }
            fn resource_version(&self) -> Option<&str> {
                self.metadata.resource_version.as_deref()
            }
            fn uid(&self) -> Option<&str> {
                self.metadata.uid.as_deref()
            }
            fn clear_managed_fields(&mut self) {
                self.metadata.managed_fields = None;
            }
        }
    )*};
}

typed_entry!(
    ocm_api::work::v1::ManifestWork,
    ocm_api::work::v1::AppliedManifestWork,
    kube::api::DynamicObject
);

impl CacheEntry for RawObject {
    fn namespace(&self) -> &str {
        self.meta().namespace.as_deref().unwrap_or_default()
    }
    fn name(&self) -> &str {
        self.meta().name.as_deref().unwrap_or_default()
    }
    fn resource_version(&self) -> Option<&str> {
        self.meta().resource_version.as_deref()
    }
    fn uid(&self) -> Option<&str> {
        self.meta().uid.as_deref()
    }
    fn clear_managed_fields(&mut self) {
        if let Ok(mut value) = self.to_value() {
            value.clear_managed_fields();
            *self = RawObject::new(value);
        }
    }
}

impl CacheEntry for Value {
    fn namespace(&self) -> &str {
        self.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
    fn name(&self) -> &str {
        self.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
    fn resource_version(&self) -> Option<&str> {
        self.pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
    }
    fn uid(&self) -> Option<&str> {
        self.pointer("/metadata/uid").and_then(Value::as_str)
    }
    fn clear_managed_fields(&mut self) {
        if let Some(metadata) = self.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("managedFields");
        }
    }
}

/// Whether an object at resource version `incoming` may replace one at `current`: yes unless
/// both are numbers and `incoming` is the smaller.
fn not_older(incoming: Option<&str>, current: Option<&str>) -> bool {
    match (
        incoming.and_then(|v| v.parse::<u64>().ok()),
        current.and_then(|v| v.parse::<u64>().ok()),
    ) {
        (Some(i), Some(c)) => i >= c,
        _ => true,
    }
}

/// Called with the namespace and name of every object a watch event added, changed or removed.
pub type Listener = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// Called once per resource version of an object that does not decode.
pub type FailureListener = Arc<dyn Fn(&DecodeFailure) + Send + Sync>;

type Objects<T> = HashMap<String, HashMap<String, Arc<T>>>;

/// Objects that did not decode, by namespace and name.
type Failures = HashMap<(String, String), DecodeFailure>;

struct Shared<T> {
    objects: RwLock<Objects<T>>,
    /// Whether stored objects lose their `metadata.managedFields`
    /// ([`ObjectCache::strip_managed_fields`]). Read and set only while `objects` is locked for
    /// writing, so no object is stored whole once it is set.
    strip_managed_fields: std::sync::atomic::AtomicBool,
    /// While a list is under way (from `Init` to `InitDone`): the objects written through
    /// [`ObjectCache::insert`] meanwhile.
    written_during_list: Mutex<Option<std::collections::HashSet<(String, String)>>>,
    failures: Mutex<Failures>,
    /// How deeply the deepest object this cache decoded nests (see [`ObjectCache::deepest`]).
    deepest: std::sync::atomic::AtomicUsize,
    synced: tokio::sync::watch::Sender<bool>,
    listener: Mutex<Option<Listener>>,
    failure_listener: Mutex<Option<FailureListener>>,
    task: Mutex<Option<tokio::task::AbortHandle>>,
    /// When the server last answered the cache (see [`ObjectCache::last_heard`]).
    heard: Mutex<Option<tokio::time::Instant>>,
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        if let Some(task) = self.task.get_mut().ok().and_then(Option::take) {
            task.abort();
        }
    }
}

/// Objects of one watch, by namespace and name. Cheap to clone (handles share one cache).
pub struct ObjectCache<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for ObjectCache<T> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T: CacheEntry> Debug for ObjectCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectCache")
            .field("synced", &self.is_synced())
            .field("len", &self.len())
            .finish()
    }
}

/// Turns a listed or watched object into the cached form: `Ok(None)` skips it, `Err` reports it
/// as undecodable.
pub trait Decode<T>: Fn(RawObject) -> Result<Option<T>, String> + Send + 'static {}
impl<T, F: Fn(RawObject) -> Result<Option<T>, String> + Send + 'static> Decode<T> for F {}

impl<K> ObjectCache<K>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + CacheEntry,
{
    /// Watches the objects of type `K` (in `namespace`, or everywhere with `None`) on a
    /// background task (which needs a Tokio runtime), decoding each object on its own (see the
    /// module docs).
    pub fn typed(client: Client, namespace: Option<&str>, config: watcher::Config) -> Self {
        let ar = ApiResource::erase::<K>(&());
        let api = match namespace {
            Some(ns) => Api::namespaced_with(client, ns, &ar),
            None => Api::all_with(client, &ar),
        };
        Self::spawn(api, config, |raw: RawObject| raw.decode::<K>().map(Some))
    }
}

impl<T: CacheEntry> ObjectCache<T> {
    /// Starts watching `api` on a background task (which needs a Tokio runtime); `decode`
    /// turns each watched object into the cached form (`Ok(None)` skips it; an error leaves it
    /// out and reports it, see [`ObjectCache::undecodable`]). The task retries with a bounded
    /// backoff ([`RetryBackoff`]) when the watch fails, lists again when the server answers
    /// 410 Gone, and stops when the last handle is dropped. The task logs in the caller's
    /// current span; the first list or watch the server refuses in a run of failures is a
    /// WARN naming the resource (the retries, and watches that merely end, are DEBUG until a
    /// list succeeds again).
    pub fn spawn(api: Api<RawObject>, config: watcher::Config, decode: impl Decode<T>) -> Self {
        Self::spawn_with_check(api, config, decode, Some(STALE_WATCH_CHECK))
    }

    /// [`ObjectCache::spawn`] with the check for a server that lost its state (see the module
    /// docs) every `check`, or never with `None`.
    pub fn spawn_with_check(
        api: Api<RawObject>,
        config: watcher::Config,
        decode: impl Decode<T>,
        check: Option<Duration>,
    ) -> Self {
        let cache = Self::empty();
        let weak = Arc::downgrade(&cache.shared);
        let handle = tokio::spawn(tracing::Instrument::in_current_span(watch_until_dropped(
            weak, api, config, decode, check,
        )));
        *cache.shared.task.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle.abort_handle());
        cache
    }

    /// A cache no watch feeds: filled only by [`ObjectCache::insert`] (fixtures and tests).
    /// It counts as synced.
    pub fn empty() -> Self {
        let (synced, _) = tokio::sync::watch::channel(false);
        Self {
            shared: Arc::new(Shared {
                objects: RwLock::new(HashMap::new()),
                strip_managed_fields: std::sync::atomic::AtomicBool::new(false),
                written_during_list: Mutex::new(None),
                failures: Mutex::new(HashMap::new()),
                deepest: std::sync::atomic::AtomicUsize::new(0),
                synced,
                listener: Mutex::new(None),
                failure_listener: Mutex::new(None),
                task: Mutex::new(None),
                heard: Mutex::new(None),
            }),
        }
    }

    /// When the server last answered the cache: the last event of its watch (a list
    /// included), or the last successful check of the server's resource version (see the
    /// module docs); `None` before the first answer, and always for a cache no watch feeds.
    pub fn last_heard(&self) -> Option<tokio::time::Instant> {
        *self.shared.heard.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Calls `listener` for every object a watch event touches from now on (one listener; a
    /// second call replaces the first).
    pub fn set_listener(&self, listener: Listener) {
        *self
            .shared
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(listener);
    }

    /// Stops calling the listener set with [`ObjectCache::set_listener`].
    pub fn clear_listener(&self) {
        *self
            .shared
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Calls `listener` once per resource version of every object that does not decode, from
    /// now on (one listener; a second call replaces the first; `None` removes it). Objects
    /// already known to be undecodable are in [`ObjectCache::undecodable`].
    pub fn on_undecodable(&self, listener: Option<FailureListener>) {
        *self
            .shared
            .failure_listener
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = listener;
    }

    /// The objects that exist on the server but do not decode (in their latest version), by
    /// namespace and name.
    pub fn undecodable(&self) -> Vec<DecodeFailure> {
        let mut list: Vec<DecodeFailure> = self.failures().values().cloned().collect();
        list.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        list
    }

    /// Why `namespace`/`name` is not in the cache although it exists, if it does not decode.
    pub fn undecodable_object(&self, namespace: &str, name: &str) -> Option<DecodeFailure> {
        self.failures()
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
    }

    fn failures(&self) -> std::sync::MutexGuard<'_, Failures> {
        self.shared
            .failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a complete list has arrived, and the server has not been seen to lose its
    /// state since (see the module docs; a cache without a watch is always synced).
    pub fn is_synced(&self) -> bool {
        *self.shared.synced.borrow() || self.is_unfed()
    }

    fn is_unfed(&self) -> bool {
        self.shared
            .task
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// Waits until the cache is synced or `timeout` passes; returns whether it is synced.
    pub async fn wait_synced(&self, timeout: Duration) -> bool {
        if self.is_synced() {
            return true;
        }
        let mut rx = self.shared.synced.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|s| *s))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// The cached object `namespace`/`name` (namespace empty for cluster-scoped objects).
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<T>> {
        self.read()
            .get(namespace)
            .and_then(|m| m.get(name))
            .cloned()
    }

    /// Every cached object, sorted by namespace and name.
    pub fn list(&self) -> Vec<Arc<T>> {
        let objects = self.read();
        let mut namespaces: Vec<&String> = objects.keys().collect();
        namespaces.sort();
        let mut out = Vec::new();
        for ns in namespaces {
            let mut names: Vec<(&String, &Arc<T>)> = objects[ns].iter().collect();
            names.sort_by(|a, b| a.0.cmp(b.0));
            out.extend(names.into_iter().map(|(_, o)| o.clone()));
        }
        out
    }

    /// How deeply the deepest object this cache ever decoded nests (its JSON's levels of
    /// arrays and objects). Code that walks the cached objects should run with that much stack
    /// (`ocm_api::k8s::json::with_stack`, or [`WithStack`](ocm_api::k8s::json::WithStack) for
    /// a task); the objects themselves are safe to clone and drop anywhere when their deep
    /// parts are [`Manifest`](ocm_api::work::v1::Manifest)s.
    pub fn deepest(&self) -> usize {
        self.shared
            .deepest
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many objects the cache holds.
    pub fn len(&self) -> usize {
        self.read().values().map(HashMap::len).sum()
    }

    /// Whether the cache holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Puts an object the caller just wrote (or read) into the cache, unless the cache
    /// already holds a newer version of it.
    pub fn insert(&self, object: T) {
        let key = (object.namespace().to_string(), object.name().to_string());
        let mut objects = self.write();
        if upsert(&mut objects, self.shared.prepare(object))
            && let Some(written) = self
                .shared
                .written_during_list
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut()
        {
            written.insert(key);
        }
    }

    /// Whether the cache drops `metadata.managedFields` ([`ObjectCache::strip_managed_fields`]).
    pub fn strips_managed_fields(&self) -> bool {
        self.shared
            .strip_managed_fields
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Forgets `namespace`/`name` (after the caller deleted it).
    pub fn remove(&self, namespace: &str, name: &str) {
        let mut objects = self.write();
        if let Some(m) = objects.get_mut(namespace) {
            m.remove(name);
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Objects<T>> {
        self.shared
            .objects
            .read()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Objects<T>> {
        self.shared
            .objects
            .write()
            .unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: CacheEntry + Clone> ObjectCache<T> {
    /// Makes the cache drop `metadata.managedFields` from every object it holds and stores
    /// from now on (listed, watched or [inserted](ObjectCache::insert)); off by default.
    ///
    /// Server-side apply's field ownership records are often the larger part of an object's
    /// metadata, and a cache keeps every object of its watch for as long as it runs: a caller
    /// that never reads them from the cached copies saves that memory, as kube-runtime users do
    /// with `reflector(..., watcher(...).modify(|o| o.managed_fields_mut().clear()))`. Objects
    /// read from the API server directly keep them, and so do the objects on the server: only
    /// the cached copies change. Call it on a new cache (it strips what the cache already holds
    /// too, by copying those objects).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use ocm_work::cache::ObjectCache;
    /// use serde_json::json;
    ///
    /// let cache = ObjectCache::<serde_json::Value>::empty().strip_managed_fields();
    /// cache.insert(json!({"metadata": {"namespace": "a", "name": "x", "resourceVersion": "1",
    ///     "managedFields": [{"manager": "kubectl", "operation": "Apply"}]}}));
    /// assert!(cache.get("a", "x").unwrap()["metadata"].get("managedFields").is_none());
    /// # }
    /// ```
    #[must_use]
    pub fn strip_managed_fields(self) -> Self {
        {
            let mut objects = self.write();
            self.shared
                .strip_managed_fields
                .store(true, std::sync::atomic::Ordering::Relaxed);
            for object in objects.values_mut().flat_map(HashMap::values_mut) {
                match Arc::get_mut(object) {
                    Some(only) => only.clear_managed_fields(),
                    None => {
                        let mut copy = T::clone(&**object);
                        copy.clear_managed_fields();
                        *object = Arc::new(copy);
                    }
                }
            }
        }
        self
    }
}

impl<T> Shared<T> {
    /// Records that the server answered just now.
    fn heard(&self) {
        *self.heard.lock().unwrap_or_else(|e| e.into_inner()) = Some(tokio::time::Instant::now());
    }
}

impl<T: CacheEntry> Shared<T> {
    /// `object` as the cache stores it (without managedFields when the cache strips them).
    /// Called with `objects` locked for writing.
    fn prepare(&self, mut object: T) -> Arc<T> {
        if self
            .strip_managed_fields
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            object.clear_managed_fields();
        }
        Arc::new(object)
    }
}

/// Inserts `object` unless an entry with a newer resource version exists; returns whether it
/// was stored.
fn upsert<T: CacheEntry>(objects: &mut Objects<T>, object: Arc<T>) -> bool {
    let names = objects.entry(object.namespace().to_string()).or_default();
    match names.get(object.name()) {
        Some(current) if !not_older(object.resource_version(), current.resource_version()) => false,
        _ => {
            names.insert(object.name().to_string(), object);
            true
        }
    }
}

/// The outcome of decoding one listed or watched object.
enum Decoded<T> {
    Object(T),
    Skipped,
    Failed(DecodeFailure),
}

fn decode_one<T>(raw: RawObject, decode: &impl Decode<T>, shared: &Shared<T>) -> Decoded<T> {
    let meta = raw.meta().clone();
    shared
        .deepest
        .fetch_max(raw.depth(), std::sync::atomic::Ordering::Relaxed);
    match decode(raw) {
        Ok(Some(object)) => Decoded::Object(object),
        Ok(None) => Decoded::Skipped,
        Err(error) => Decoded::Failed(
            DecodeFailure::new(
                meta.namespace.unwrap_or_default(),
                meta.name.unwrap_or_default(),
                error,
            )
            .at(meta.uid, meta.resource_version),
        ),
    }
}

/// Records `failures` (replacing every known one when `replace`), reporting each that is new
/// or at a new resource version; returns the reported ones.
fn record_failures<T>(shared: &Shared<T>, failures: Vec<DecodeFailure>, replace: bool, what: &str) {
    let mut reported = Vec::new();
    {
        let mut known = shared.failures.lock().unwrap_or_else(|e| e.into_inner());
        let mut previous = if replace {
            std::mem::take(&mut *known)
        } else {
            HashMap::new()
        };
        for failure in failures {
            let key = (failure.namespace.clone(), failure.name.clone());
            let seen = previous
                .remove(&key)
                .or_else(|| known.get(&key).cloned())
                .is_some_and(|f| f.resource_version == failure.resource_version);
            if !seen {
                reported.push(failure.clone());
            }
            known.insert(key, failure);
        }
    }
    if reported.is_empty() {
        return;
    }
    let listener = shared
        .failure_listener
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    for failure in &reported {
        tracing::warn!(
            resource = %what,
            namespace = %failure.namespace,
            name = %failure.name,
            resource_version = failure.resource_version.as_deref().unwrap_or_default(),
            error = %failure.error,
            "object skipped: it does not decode; every other object is still handled"
        );
        if let Some(listener) = &listener {
            listener(failure);
        }
    }
}

fn forget_failure<T>(shared: &Shared<T>, namespace: &str, name: &str) {
    let removed = shared
        .failures
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(namespace.to_string(), name.to_string()));
    if let Some(failure) = removed {
        tracing::info!(namespace = %failure.namespace, name = %failure.name, "object decodes again (or is gone)");
    }
}

/// How often a cache checks that its server did not lose its state (see the module docs).
pub const STALE_WATCH_CHECK: Duration = Duration::from_secs(300);

/// Runs the cache's watch until the cache is dropped, starting over (with a list) whenever
/// the server's resource version falls below the highest one the watch delivered.
async fn watch_until_dropped<T: CacheEntry>(
    weak: Weak<Shared<T>>,
    api: Api<RawObject>,
    config: watcher::Config,
    mut decode: impl Decode<T>,
    check: Option<Duration>,
) {
    let what = api.resource_url().to_string();
    loop {
        let highest = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let seen = highest.clone();
        // A failed watch asks for a check as soon as the server answers again.
        let failed = Arc::new(tokio::sync::Notify::new());
        let failure = failed.clone();
        let stream = watcher::watcher(api.clone(), config.clone())
            .backoff(RetryBackoff::default())
            .inspect(move |event| match event {
                Ok(Event::Apply(o) | Event::Delete(o) | Event::InitApply(o)) => {
                    if let Some(version) = numeric_version(o.meta().resource_version.as_deref()) {
                        seen.fetch_max(version, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                Ok(_) => {}
                Err(_) => failure.notify_one(),
            });
        let went_back = server_went_back(
            weak.clone(),
            api.clone(),
            highest,
            check.map(|every| (every, failed)),
            what.clone(),
        );
        // Boxed once here, so that the task holds the stream's state once (a stream passed by
        // value would take its size twice over in `feed`'s state): about 3 KiB a cache instead
        // of 10.
        let stream: futures::stream::BoxStream<'_, _> = Box::pin(stream.take_until(went_back));
        match feed(weak.clone(), stream, decode, &what).await {
            Some(back) => decode = back,
            None => return,
        }
        // The server lost its state: what the cache holds is from a state that no longer
        // exists. Until the next list completes the cache counts as not synced, so readers
        // that fall back to the server when a cache is not synced do.
        match weak.upgrade() {
            Some(shared) => {
                shared.synced.send_replace(false);
            }
            None => return,
        }
    }
}

fn numeric_version(version: Option<&str>) -> Option<u64> {
    version?.parse().ok()
}

/// Resolves once the server answers a list with a resource version lower than `highest`
/// (checked every `every`, and after each watch failure `failed` reports, retried until the
/// server answers; never with `None`). Every answer counts as contact with the server.
async fn server_went_back<T>(
    weak: Weak<Shared<T>>,
    api: Api<RawObject>,
    highest: Arc<std::sync::atomic::AtomicU64>,
    check: Option<(Duration, Arc<tokio::sync::Notify>)>,
    what: String,
) {
    let Some((every, failed)) = check else {
        return futures::future::pending().await;
    };
    loop {
        let after_failure = tokio::select! {
            () = tokio::time::sleep(every) => false,
            () = failed.notified() => true,
        };
        // After a failure, the check is retried until the server answers.
        let mut retry = RetryBackoff::default();
        loop {
            // Boxed: the request's state (over a KiB) is only held while it runs, not while
            // the check sleeps.
            let params = kube::api::ListParams::default().limit(1);
            let list = Box::pin(api.list(&params));
            let answer = match list.await {
                Ok(list) => Some(numeric_version(list.metadata.resource_version.as_deref())),
                Err(error) => {
                    tracing::debug!(resource = %what, %error, "resource version check failed");
                    None
                }
            };
            let Some(current) = answer else {
                if !after_failure {
                    break;
                }
                tokio::time::sleep(retry.next().unwrap_or(RETRY_BACKOFF_MAX)).await;
                continue;
            };
            match weak.upgrade() {
                Some(shared) => shared.heard(),
                None => return futures::future::pending().await,
            }
            let seen = highest.load(std::sync::atomic::Ordering::Relaxed);
            if let Some(current) = current
                && seen > 0
                && current < seen
            {
                tracing::warn!(
                    resource = %what,
                    seen,
                    current,
                    "the API server's resource version went back (it lost its state): listing again"
                );
                return;
            }
            break;
        }
    }
}

/// Feeds `stream` into the cache; `None` once the cache is dropped, `decode` back when the
/// stream ends first.
async fn feed<T, S, D>(weak: Weak<Shared<T>>, stream: S, decode: D, what: &str) -> Option<D>
where
    T: CacheEntry,
    S: futures::Stream<Item = Result<Event<RawObject>, watcher::Error>> + Send,
    D: Decode<T>,
{
    let mut stream = std::pin::pin!(stream);
    let mut buffer: Option<(Objects<T>, Vec<DecodeFailure>)> = None;
    // Whether the current run of failures was reported at WARN already.
    let mut warned = false;
    while let Some(event) = stream.next().await {
        let shared = weak.upgrade()?;
        let event = match event {
            Ok(event) => {
                shared.heard();
                event
            }
            // A list or a watch the server refuses (an expired watch or a dropped
            // connection is routine: DEBUG).
            Err(
                error
                @ (watcher::Error::InitialListFailed(_) | watcher::Error::WatchStartFailed(_)),
            ) if !warned => {
                warned = true;
                tracing::warn!(resource = %what, %error, "cannot list or watch {what}; retrying");
                continue;
            }
            Err(error) => {
                tracing::debug!(resource = %what, %error, "cache watch failed; retrying");
                continue;
            }
        };
        if matches!(event, Event::InitDone) {
            warned = false;
        }
        let mut touched: Vec<(String, String)> = Vec::new();
        match event {
            Event::Init => {
                buffer = Some((HashMap::new(), Vec::new()));
                *shared
                    .written_during_list
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some(Default::default());
            }
            Event::InitApply(raw) => buffer_listed(&mut buffer, raw, &decode, &shared),
            Event::InitDone => store_list(&shared, buffer.take(), what, &mut touched),
            Event::Apply(raw) => apply_event(&shared, raw, &decode, what, &mut touched),
            Event::Delete(raw) => delete_event(&shared, &raw, &mut touched),
        }
        notify(&shared, &touched);
    }
    Some(decode)
}

/// Keeps one object of a list under way in `buffer`, decoded, or its failure.
fn buffer_listed<T: CacheEntry>(
    buffer: &mut Option<(Objects<T>, Vec<DecodeFailure>)>,
    raw: RawObject,
    decode: &impl Decode<T>,
    shared: &Shared<T>,
) {
    let (objects, failures) = buffer.get_or_insert_with(|| (HashMap::new(), Vec::new()));
    match decode_one(raw, decode, shared) {
        Decoded::Object(mut object) => {
            // Stripped at once when the option is on (the list may be long);
            // checked again under the lock when the list is stored.
            if shared
                .strip_managed_fields
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                object.clear_managed_fields();
            }
            upsert(objects, Arc::new(object));
        }
        Decoded::Skipped => {}
        Decoded::Failed(failure) => failures.push(failure),
    }
}

/// Replaces the cached objects with a finished list (`listed`), keeping the caller's writes
/// made while the list was under way; pushes the keys that changed to `touched`, and marks
/// the cache synced.
fn store_list<T: CacheEntry>(
    shared: &Shared<T>,
    listed: Option<(Objects<T>, Vec<DecodeFailure>)>,
    what: &str,
    touched: &mut Vec<(String, String)>,
) {
    let (mut fresh, failures) = listed.unwrap_or_default();
    let written = shared
        .written_during_list
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default();
    let mut objects = shared.objects.write().unwrap_or_else(|e| e.into_inner());
    if shared
        .strip_managed_fields
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        // Listed before the option was set: the list's objects are its own.
        for object in fresh.values_mut().flat_map(HashMap::values_mut) {
            if let Some(object) = Arc::get_mut(object) {
                object.clear_managed_fields();
            }
        }
    }
    // An object the caller wrote while the list was under way, in a newer version
    // than the listed one of the same object (same uid), was written after the list
    // was taken: keep the write. Anything else cached before the list is replaced,
    // even by an older version: after a server lost its state, versions restart.
    for key in &written {
        if let Some(listed) = fresh.get_mut(&key.0).and_then(|m| m.get_mut(&key.1))
            && let Some(current) = objects.get(&key.0).and_then(|m| m.get(&key.1))
            && current.uid() == listed.uid()
            && !not_older(listed.resource_version(), current.resource_version())
        {
            *listed = current.clone();
        }
    }
    for (ns, names) in &fresh {
        for (name, object) in names {
            let old = objects.get(ns).and_then(|m| m.get(name));
            if old.is_none_or(|o| o.resource_version() != object.resource_version()) {
                touched.push((ns.clone(), name.clone()));
            }
        }
    }
    for (ns, names) in objects.iter() {
        for name in names.keys() {
            if !fresh.get(ns).is_some_and(|m| m.contains_key(name)) {
                touched.push((ns.clone(), name.clone()));
            }
        }
    }
    *objects = fresh;
    drop(objects);
    record_failures(shared, failures, true, what);
    shared.synced.send_replace(true);
}

/// Caches an added or modified object (or, when it does not decode, drops the older version
/// that did and records the failure); pushes its key to `touched` when the cache changed.
fn apply_event<T: CacheEntry>(
    shared: &Shared<T>,
    raw: RawObject,
    decode: &impl Decode<T>,
    what: &str,
    touched: &mut Vec<(String, String)>,
) {
    match decode_one(raw, decode, shared) {
        Decoded::Object(object) => {
            let key = (object.namespace().to_string(), object.name().to_string());
            let mut objects = shared.objects.write().unwrap_or_else(|e| e.into_inner());
            if upsert(&mut objects, shared.prepare(object)) {
                drop(objects);
                forget_failure(shared, &key.0, &key.1);
                touched.push(key);
            }
        }
        Decoded::Skipped => {}
        Decoded::Failed(failure) => {
            // The cache holds only what decodes: an older version that did is dropped,
            // so nobody acts on a copy the server no longer has.
            let mut objects = shared.objects.write().unwrap_or_else(|e| e.into_inner());
            if let Some(names) = objects.get_mut(&failure.namespace)
                && names.get(&failure.name).is_some_and(|current| {
                    not_older(
                        failure.resource_version.as_deref(),
                        current.resource_version(),
                    )
                })
            {
                names.remove(&failure.name);
                touched.push((failure.namespace.clone(), failure.name.clone()));
            }
            drop(objects);
            record_failures(shared, vec![failure], false, what);
        }
    }
}

/// Drops a deleted object, unless the cache holds a newer version of it; pushes its key to
/// `touched` when it did.
fn delete_event<T: CacheEntry>(
    shared: &Shared<T>,
    raw: &RawObject,
    touched: &mut Vec<(String, String)>,
) {
    let namespace = raw.meta().namespace.clone().unwrap_or_default();
    let name = raw.meta().name.clone().unwrap_or_default();
    let version = raw.meta().resource_version.clone();
    forget_failure(shared, &namespace, &name);
    let mut objects = shared.objects.write().unwrap_or_else(|e| e.into_inner());
    if let Some(names) = objects.get_mut(&namespace)
        && names
            .get(&name)
            .is_some_and(|current| not_older(version.as_deref(), current.resource_version()))
    {
        names.remove(&name);
        touched.push((namespace, name));
    }
}

/// Tells the cache's listener about the keys in `touched`.
fn notify<T>(shared: &Shared<T>, touched: &[(String, String)]) {
    if touched.is_empty() {
        return;
    }
    let listener = shared
        .listener
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if let Some(listener) = listener {
        for (ns, name) in touched {
            listener(ns, name);
        }
    }
}

/// The key of one spoke informer: resource (group/version/plural) and namespace.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InformerKey {
    /// API group ("" for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
    /// Namespace ("" for cluster-scoped resources or a cluster-wide watch).
    pub namespace: String,
}

impl InformerKey {
    /// The key of `resolved` in `namespace` (namespace dropped for cluster-scoped resources).
    pub fn of(resolved: &ResolvedResource, namespace: &str) -> Self {
        let ar = &resolved.api_resource;
        InformerKey {
            group: ar.group.clone(),
            version: ar.version.clone(),
            resource: ar.plural.clone(),
            namespace: if resolved.namespaced {
                namespace.to_string()
            } else {
                String::new()
            },
        }
    }
}

/// Called with the informer key, namespace and name of every spoke object a watch touched.
pub type SpokeListener = Arc<dyn Fn(&InformerKey, &str, &str) + Send + Sync>;

/// One cache of JSON objects per (resource, namespace) of the managed cluster, each started
/// the first time it is asked for, up to a maximum number of informers (beyond it, lookups
/// return `None` and the caller reads from the API server).
#[derive(Clone)]
pub struct SpokeObjects {
    client: Client,
    /// The span the informers log in (the creator's: the agent's, naming the cluster).
    span: tracing::Span,
    max_informers: usize,
    strip_managed_fields: bool,
    informers: Arc<Mutex<HashMap<InformerKey, ObjectCache<Value>>>>,
    listener: Arc<Mutex<Option<SpokeListener>>>,
}

impl Debug for SpokeObjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpokeObjects")
            .field("max_informers", &self.max_informers)
            .field("strip_managed_fields", &self.strip_managed_fields)
            .field("informers", &self.lock().len())
            .finish()
    }
}

/// What a spoke cache knows about one object.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// The cache is synced and holds the object.
    Found(Arc<Value>),
    /// The cache is synced and the object does not exist.
    Absent,
    /// No synced cache for it: read from the API server.
    Unknown,
}

impl Lookup {
    /// What the cache knows: `Some(object or None when absent)`, or `None` when the caller
    /// must ask the API server.
    pub fn known(self) -> Option<Option<Arc<Value>>> {
        match self {
            Lookup::Found(object) => Some(Some(object)),
            Lookup::Absent => Some(None),
            Lookup::Unknown => None,
        }
    }
}

impl SpokeObjects {
    /// Caches over `client`'s cluster, at most `max_informers` of them. Their logs carry the
    /// current span.
    pub fn new(client: Client, max_informers: usize) -> Self {
        Self {
            client,
            span: tracing::Span::current(),
            max_informers,
            strip_managed_fields: false,
            informers: Arc::new(Mutex::new(HashMap::new())),
            listener: Arc::new(Mutex::new(None)),
        }
    }

    /// Makes every cache started from now on drop `metadata.managedFields` (see
    /// [`ObjectCache::strip_managed_fields`]); off by default.
    #[must_use]
    pub fn strip_managed_fields(mut self) -> Self {
        self.strip_managed_fields = true;
        self
    }

    /// Calls `listener` for every object any of the caches sees change (set it before the
    /// first lookup to hear from every informer).
    pub fn set_listener(&self, listener: SpokeListener) {
        *self.listener.lock().unwrap_or_else(|e| e.into_inner()) = Some(listener.clone());
        for (key, cache) in self.lock().iter() {
            cache.set_listener(key_listener(key.clone(), listener.clone()));
        }
    }

    /// Stops calling the listener (it may hold the last handles to other things).
    pub fn clear_listener(&self) {
        *self.listener.lock().unwrap_or_else(|e| e.into_inner()) = None;
        for cache in self.lock().values() {
            cache.clear_listener();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<InformerKey, ObjectCache<Value>>> {
        self.informers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cache for `resolved` in `namespace`, started if needed (None beyond the maximum).
    pub fn informer(
        &self,
        resolved: &ResolvedResource,
        namespace: &str,
    ) -> Option<ObjectCache<Value>> {
        let key = InformerKey::of(resolved, namespace);
        let mut informers = self.lock();
        if let Some(cache) = informers.get(&key) {
            return Some(cache.clone());
        }
        if informers.len() >= self.max_informers {
            return None;
        }
        let api: Api<RawObject> = if key.namespace.is_empty() {
            Api::all_with(self.client.clone(), &resolved.api_resource)
        } else {
            Api::namespaced_with(self.client.clone(), &key.namespace, &resolved.api_resource)
        };
        let ar = resolved.api_resource.clone();
        let _in_span = self.span.enter();
        let cache = ObjectCache::spawn(api, watcher::Config::default(), move |raw: RawObject| {
            // These objects are kept as `Value`s, which recurse: only as deep as any thread's
            // stack takes them.
            let depth = raw.depth();
            if depth > ocm_api::k8s::json::SHALLOW_DEPTH {
                return Err(format!(
                    "the object nests {depth} levels deep; the agent watches objects of at most {} levels",
                    ocm_api::k8s::json::SHALLOW_DEPTH
                ));
            }
            let mut value = raw.to_value()?;
            // Watch events may lack apiVersion/kind; the cached JSON has them.
            if let Some(map) = value.as_object_mut() {
                for (key, v) in [("apiVersion", &ar.api_version), ("kind", &ar.kind)] {
                    if map
                        .get(key)
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        map.insert(key.to_string(), Value::String(v.clone()));
                    }
                }
                Ok(Some(value))
            } else {
                Err("not a JSON object".to_string())
            }
        });
        let cache = if self.strip_managed_fields {
            cache.strip_managed_fields()
        } else {
            cache
        };
        if let Some(listener) = self
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            cache.set_listener(key_listener(key.clone(), listener));
        }
        informers.insert(key, cache.clone());
        Some(cache)
    }

    /// What the cache knows about `resolved` `namespace`/`name`; starts the informer when
    /// there is none yet (that lookup answers [`Lookup::Unknown`]).
    pub fn lookup(&self, resolved: &ResolvedResource, namespace: &str, name: &str) -> Lookup {
        let Some(cache) = self.informer(resolved, namespace) else {
            return Lookup::Unknown;
        };
        if !cache.is_synced() {
            return Lookup::Unknown;
        }
        let ns = if resolved.namespaced { namespace } else { "" };
        match cache.get(ns, name) {
            Some(object) => Lookup::Found(object),
            None => Lookup::Absent,
        }
    }

    /// Records an object the caller just wrote, if an informer for it exists.
    pub fn record(&self, resolved: &ResolvedResource, namespace: &str, object: &Value) {
        let key = InformerKey::of(resolved, namespace);
        let cache = self.lock().get(&key).cloned();
        if let Some(cache) = cache {
            cache.insert(object.clone());
        }
    }

    /// Stops the informer `key` (a later lookup starts a new one).
    pub fn stop(&self, key: &InformerKey) {
        self.lock().remove(key);
    }
}

fn key_listener(key: InformerKey, listener: SpokeListener) -> Listener {
    Arc::new(move |ns: &str, name: &str| listener(&key, ns, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(ns: &str, name: &str, rv: &str) -> Value {
        json!({"metadata": {"namespace": ns, "name": name, "resourceVersion": rv}})
    }

    #[tokio::test]
    async fn newer_versions_win_and_older_ones_are_ignored() {
        let cache = ObjectCache::<Value>::empty();
        assert!(cache.is_synced());
        cache.insert(cm("a", "x", "5"));
        cache.insert(cm("a", "x", "3"));
        assert_eq!(
            cache
                .get("a", "x")
                .and_then(|o| o.resource_version().map(String::from)),
            Some("5".to_string())
        );
        cache.insert(cm("a", "x", "7"));
        assert_eq!(
            cache
                .get("a", "x")
                .and_then(|o| o.resource_version().map(String::from)),
            Some("7".to_string())
        );
        // Non-numeric versions always replace.
        cache.insert(cm("a", "x", "abc"));
        assert_eq!(
            cache
                .get("a", "x")
                .and_then(|o| o.resource_version().map(String::from)),
            Some("abc".to_string())
        );
        cache.insert(cm("", "c", "1"));
        cache.insert(cm("b", "y", "1"));
        let names: Vec<String> = cache.list().iter().map(|o| o.name().to_string()).collect();
        assert_eq!(names, ["c", "x", "y"]);
        assert_eq!(cache.len(), 3);
        cache.remove("a", "x");
        assert!(cache.get("a", "x").is_none());
        assert_eq!(cache.len(), 2);
    }

    /// A work whose update strategy is `strategy`; `NUMBER` stands for a strategy of the
    /// wrong JSON type (what a newer release changing the field's type would send), which
    /// does not decode (an unknown string value does, as `Unknown`).
    fn work(name: &str, rv: &str, strategy: &str) -> RawObject {
        let strategy = match strategy {
            "NUMBER" => json!(7),
            other => json!(other),
        };
        RawObject::new(json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"namespace": "c1", "name": name, "resourceVersion": rv, "uid": format!("uid-{name}")},
            "spec": {"manifestConfigs": [{
                "resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "x"},
                "updateStrategy": {"type": strategy}
            }]}
        }))
    }

    #[test]
    fn raw_objects_keep_their_identity_when_the_metadata_does_not_decode() {
        let raw: RawObject = serde_json::from_value(json!({
            "metadata": {"namespace": "c1", "name": "w", "resourceVersion": "7", "uid": "u",
                "generation": 3, "labels": {"a": 1}},
            "spec": {}
        }))
        .unwrap();
        assert_eq!(raw.meta().name.as_deref(), Some("w"));
        assert_eq!(raw.meta().namespace.as_deref(), Some("c1"));
        assert_eq!(raw.meta().resource_version.as_deref(), Some("7"));
        assert_eq!(raw.meta().uid.as_deref(), Some("u"));
        assert_eq!(raw.meta().generation, Some(3));
        let error = raw.decode::<ocm_api::work::v1::ManifestWork>().unwrap_err();
        assert!(
            error.starts_with("metadata.labels.a: invalid type: integer `1`"),
            "{error}"
        );
        // A list body with one such item still decodes as a whole.
        let list: Vec<RawObject> = serde_json::from_value(
            json!([{"metadata": {"labels": {"a": 1}}}, {"metadata": {"name": "ok"}}]),
        )
        .unwrap();
        assert_eq!(list[1].meta().name.as_deref(), Some("ok"));
    }

    #[tokio::test]
    async fn an_undecodable_object_is_left_out_and_reported_once_per_resource_version() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let cache = ObjectCache::<ocm_api::work::v1::ManifestWork>::empty();
        let reports = Arc::new(AtomicUsize::new(0));
        let counter = reports.clone();
        cache.on_undecodable(Some(Arc::new(move |_: &DecodeFailure| {
            counter.fetch_add(1, Ordering::SeqCst);
        })));
        let touched = Arc::new(Mutex::new(Vec::<String>::new()));
        let seen = touched.clone();
        cache.set_listener(Arc::new(move |_: &str, name: &str| {
            seen.lock().unwrap().push(name.to_string());
        }));
        let relist = |bad_rv: &str| {
            vec![
                Ok(Event::Init),
                Ok(Event::InitApply(work("good", "1", "Update"))),
                Ok(Event::InitApply(work("bad", bad_rv, "NUMBER"))),
                Ok(Event::InitDone),
            ]
        };
        let mut events = relist("2");
        // A relist (after a lost watch) finds the same version: not reported again.
        events.extend(relist("2"));
        // A new version that still does not decode is reported again.
        events.push(Ok(Event::Apply(work("bad", "3", "NUMBER"))));
        events.push(Ok(Event::Apply(work("bad", "3", "NUMBER"))));
        // The good one stops decoding: dropped from the cache, reported.
        events.push(Ok(Event::Apply(work("good", "4", "NUMBER"))));
        // And the bad one is fixed: cached, no longer reported.
        events.push(Ok(Event::Apply(work("bad", "5", "Update"))));
        let decode = |raw: RawObject| raw.decode::<ocm_api::work::v1::ManifestWork>().map(Some);
        feed(
            Arc::downgrade(&cache.shared),
            futures::stream::iter(events),
            decode,
            "manifestworks",
        )
        .await;
        assert_eq!(reports.load(Ordering::SeqCst), 3);
        let names: Vec<String> = cache
            .list()
            .iter()
            .map(|w| w.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["bad"]);
        let failures = cache.undecodable();
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].name, "good");
        assert_eq!(failures[0].resource_version.as_deref(), Some("4"));
        assert_eq!(failures[0].uid.as_deref(), Some("uid-good"));
        assert!(
            failures[0]
                .error
                .starts_with("spec.manifestConfigs[0].updateStrategy.type: "),
            "{}",
            failures[0].error
        );
        assert!(cache.undecodable_object("c1", "bad").is_none());
        // The listener heard of the good one (listed, then dropped) and the bad one (fixed).
        let touched = touched.lock().unwrap().clone();
        assert_eq!(touched, ["good", "good", "bad"]);
    }

    fn with_managed_fields(name: &str, rv: &str) -> Value {
        json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"namespace": "c1", "name": name, "resourceVersion": rv,
                "uid": format!("uid-{name}"), "labels": {"app": "x"},
                "managedFields": [{"manager": "work-agent", "operation": "Update",
                    "apiVersion": "work.open-cluster-management.io/v1",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}]},
            "spec": {}
        })
    }

    /// Lists `a`, watches `b`, then the caller writes `c`, into `cache`.
    async fn list_watch_and_write(cache: &ObjectCache<ocm_api::work::v1::ManifestWork>) {
        let events = vec![
            Ok(Event::Init),
            Ok(Event::InitApply(RawObject::new(with_managed_fields(
                "a", "1",
            )))),
            Ok(Event::InitDone),
            Ok(Event::Apply(RawObject::new(with_managed_fields("b", "2")))),
        ];
        feed(
            Arc::downgrade(&cache.shared),
            futures::stream::iter(events),
            |raw: RawObject| raw.decode::<ocm_api::work::v1::ManifestWork>().map(Some),
            "manifestworks",
        )
        .await;
        cache.insert(serde_json::from_value(with_managed_fields("c", "3")).unwrap());
    }

    #[tokio::test]
    async fn managed_fields_are_dropped_from_the_cached_copies_only_when_asked() {
        let kept = ObjectCache::<ocm_api::work::v1::ManifestWork>::empty();
        list_watch_and_write(&kept).await;
        assert!(!kept.strips_managed_fields());
        for name in ["a", "b", "c"] {
            let fields = kept
                .get("c1", name)
                .unwrap()
                .metadata
                .managed_fields
                .clone();
            assert_eq!(
                fields.unwrap()[0].manager.as_deref(),
                Some("work-agent"),
                "{name}"
            );
        }

        let stripped =
            ObjectCache::<ocm_api::work::v1::ManifestWork>::empty().strip_managed_fields();
        list_watch_and_write(&stripped).await;
        assert!(stripped.strips_managed_fields());
        for name in ["a", "b", "c"] {
            let work = stripped.get("c1", name).unwrap();
            assert_eq!(work.metadata.managed_fields, None, "{name}");
            // Everything else is kept.
            assert_eq!(work.metadata.labels.as_ref().unwrap()["app"], "x");
            assert_eq!(
                work.metadata.uid.as_deref(),
                Some(format!("uid-{name}").as_str())
            );
        }

        // Switched on over a cache that already holds objects: those lose them too, also one a
        // reader still holds (its copy is left alone).
        let late = ObjectCache::<Value>::empty();
        late.insert(with_managed_fields("d", "4"));
        let held = late.get("c1", "d").unwrap();
        let late = late.strip_managed_fields();
        assert!(
            late.get("c1", "d").unwrap()["metadata"]
                .get("managedFields")
                .is_none()
        );
        assert!(held["metadata"].get("managedFields").is_some());
        assert_eq!(
            late.get("c1", "d").unwrap()["metadata"]["labels"]["app"],
            "x"
        );
    }

    #[tokio::test]
    async fn a_spoke_cache_started_with_the_option_strips_what_it_lists() {
        let cluster = ocm_testkit::FakeCluster::new();
        let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
            Api::namespaced(cluster.client(), "default");
        let cm: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "x"}, "data": {"k": "v"}
        }))
        .unwrap();
        let created = api
            .patch(
                "x",
                &kube::api::PatchParams::apply("someone"),
                &kube::api::Patch::Apply(&cm),
            )
            .await
            .unwrap();
        assert!(
            created.metadata.managed_fields.is_some(),
            "the server records them"
        );
        let resolved = ResolvedResource {
            api_resource: ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
            namespaced: true,
        };
        for strip in [false, true] {
            let objects = SpokeObjects::new(cluster.client(), 4);
            let objects = if strip {
                objects.strip_managed_fields()
            } else {
                objects
            };
            let cache = objects.informer(&resolved, "default").unwrap();
            assert!(cache.wait_synced(Duration::from_secs(10)).await);
            let Lookup::Found(object) = objects.lookup(&resolved, "default", "x") else {
                panic!("not cached")
            };
            assert_eq!(object["data"]["k"], "v");
            assert_eq!(
                object["metadata"].get("managedFields").is_some(),
                !strip,
                "strip: {strip}"
            );
        }
    }

    #[test]
    fn the_retry_backoff_is_bounded_jittered_and_reset() {
        use kube::runtime::utils::Backoff;
        let mut backoff = RetryBackoff::new(Duration::from_millis(100), Duration::from_secs(2));
        let waits: Vec<Duration> = backoff.by_ref().take(12).collect();
        assert!(waits[0] >= Duration::from_millis(100) && waits[0] <= Duration::from_millis(150));
        assert!(
            waits.iter().all(|w| *w <= Duration::from_secs(3)),
            "{waits:?}"
        );
        assert!(
            waits[8..].iter().all(|w| *w >= Duration::from_secs(2)),
            "{waits:?}"
        );
        backoff.reset();
        assert!(backoff.next().unwrap() <= Duration::from_millis(150));
    }

    #[tokio::test]
    async fn a_list_keeps_only_the_newer_writes_made_while_it_was_under_way() {
        let cache = ObjectCache::<Value>::empty();
        let with_uid = |name: &str, rv: &str, uid: &str| {
            let mut o = cm("a", name, rv);
            o["metadata"]["uid"] = json!(uid);
            o
        };
        // Cached before the list: replaced by the listed version, even an older one (a server
        // that lost its state counts again).
        cache.insert(with_uid("old", "90", "u-old"));
        enum Step {
            Event(Box<Event<RawObject>>),
            Write(Value),
        }
        let steps = vec![
            Step::Event(Box::new(Event::Init)),
            // Written during the list: kept when newer than the listed version of the same
            // object, not when the listed one is another object (another uid).
            Step::Write(with_uid("x", "9", "u-x")),
            Step::Write(with_uid("y", "9", "u-y-before")),
            Step::Event(Box::new(Event::InitApply(RawObject::new(with_uid(
                "x", "5", "u-x",
            ))))),
            Step::Event(Box::new(Event::InitApply(RawObject::new(with_uid(
                "y", "6", "u-y",
            ))))),
            Step::Event(Box::new(Event::InitApply(RawObject::new(with_uid(
                "old", "3", "u-new",
            ))))),
            Step::Event(Box::new(Event::InitDone)),
        ];
        let writer = cache.clone();
        let events = futures::stream::iter(steps).filter_map(move |step| {
            let event = match step {
                Step::Event(event) => Some(Ok(*event)),
                Step::Write(object) => {
                    writer.insert(object);
                    None
                }
            };
            std::future::ready(event)
        });
        feed(
            Arc::downgrade(&cache.shared),
            events,
            |raw: RawObject| raw.to_value().map(Some),
            "configmaps",
        )
        .await;
        let version = |name: &str| {
            cache
                .get("a", name)
                .and_then(|o| o.resource_version().map(String::from))
        };
        assert_eq!(version("x").as_deref(), Some("9"));
        assert_eq!(version("y").as_deref(), Some("6"));
        assert_eq!(version("old").as_deref(), Some("3"));
    }
}
