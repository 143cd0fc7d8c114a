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
//! The caches stop when the last handle to them is dropped.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) {
//! use kube::api::Api;
//! use kube::runtime::watcher;
//! use ocm_api::work::v1::ManifestWork;
//! use ocm_work::cache::ObjectCache;
//!
//! let works: Api<ManifestWork> = Api::namespaced(client, "cluster1");
//! let cache = ObjectCache::spawn(works, watcher::Config::default(), |w| Some(w));
//! cache.wait_synced(std::time::Duration::from_secs(10)).await;
//! let names: Vec<String> = cache.list().iter().map(|w| w.metadata.name.clone().unwrap_or_default()).collect();
//! # }
//! ```

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::discovery::ResolvedResource;

/// What a cache needs to know about the objects it holds.
pub trait CacheEntry: Send + Sync + 'static {
    /// The object's namespace (empty when cluster-scoped).
    fn namespace(&self) -> &str;
    /// The object's name.
    fn name(&self) -> &str;
    /// The object's resource version, if it has one.
    fn resource_version(&self) -> Option<&str>;
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
        }
    )*};
}

typed_entry!(
    ocm_api::work::v1::ManifestWork,
    ocm_api::work::v1::AppliedManifestWork,
    DynamicObject
);

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

type Objects<T> = HashMap<String, HashMap<String, Arc<T>>>;

struct Shared<T> {
    objects: RwLock<Objects<T>>,
    synced: tokio::sync::watch::Sender<bool>,
    listener: Mutex<Option<Listener>>,
    task: Mutex<Option<tokio::task::AbortHandle>>,
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

impl<T: CacheEntry> ObjectCache<T> {
    /// Starts watching `api` on a background task (which needs a Tokio runtime); `convert`
    /// turns each watched object into the cached form (`None` skips it). The task retries
    /// with backoff when the watch fails, re-lists when the server answers 410 Gone, and stops
    /// when the last handle is dropped.
    pub fn spawn<K>(
        api: Api<K>,
        config: watcher::Config,
        convert: impl Fn(K) -> Option<T> + Send + 'static,
    ) -> Self
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        let cache = Self::empty();
        let weak = Arc::downgrade(&cache.shared);
        let stream = watcher::watcher(api, config).default_backoff();
        let handle = tokio::spawn(feed(weak, stream, convert));
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
                synced,
                listener: Mutex::new(None),
                task: Mutex::new(None),
            }),
        }
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

    /// Whether the first complete list has arrived (a cache without a watch is always synced).
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
        let mut objects = self.write();
        upsert(&mut objects, Arc::new(object));
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

async fn feed<K, T, S>(
    weak: Weak<Shared<T>>,
    stream: S,
    convert: impl Fn(K) -> Option<T> + Send + 'static,
) where
    T: CacheEntry,
    S: futures::Stream<Item = Result<Event<K>, watcher::Error>> + Send,
{
    let mut stream = std::pin::pin!(stream);
    let mut buffer: Option<Objects<T>> = None;
    while let Some(event) = stream.next().await {
        let Some(shared) = weak.upgrade() else {
            return;
        };
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                tracing::debug!(%error, "cache watch failed; retrying");
                continue;
            }
        };
        let mut touched: Vec<(String, String)> = Vec::new();
        match event {
            Event::Init => buffer = Some(HashMap::new()),
            Event::InitApply(k) => {
                if let Some(object) = convert(k) {
                    let buf = buffer.get_or_insert_with(HashMap::new);
                    upsert(buf, Arc::new(object));
                }
            }
            Event::InitDone => {
                let fresh = buffer.take().unwrap_or_default();
                let mut objects = shared.objects.write().unwrap_or_else(|e| e.into_inner());
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
                shared.synced.send_replace(true);
            }
            Event::Apply(k) => {
                if let Some(object) = convert(k) {
                    let key = (object.namespace().to_string(), object.name().to_string());
                    let mut objects = shared.objects.write().unwrap_or_else(|e| e.into_inner());
                    if upsert(&mut objects, Arc::new(object)) {
                        touched.push(key);
                    }
                }
            }
            Event::Delete(k) => {
                if let Some(object) = convert(k) {
                    let mut objects = shared.objects.write().unwrap_or_else(|e| e.into_inner());
                    if let Some(names) = objects.get_mut(object.namespace())
                        && names.get(object.name()).is_some_and(|current| {
                            not_older(object.resource_version(), current.resource_version())
                        })
                    {
                        names.remove(object.name());
                        touched.push((object.namespace().to_string(), object.name().to_string()));
                    }
                }
            }
        }
        if !touched.is_empty() {
            let listener = shared
                .listener
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if let Some(listener) = listener {
                for (ns, name) in &touched {
                    listener(ns, name);
                }
            }
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
    max_informers: usize,
    informers: Arc<Mutex<HashMap<InformerKey, ObjectCache<Value>>>>,
    listener: Arc<Mutex<Option<SpokeListener>>>,
}

impl Debug for SpokeObjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpokeObjects")
            .field("max_informers", &self.max_informers)
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
    /// Caches over `client`'s cluster, at most `max_informers` of them.
    pub fn new(client: Client, max_informers: usize) -> Self {
        Self {
            client,
            max_informers,
            informers: Arc::new(Mutex::new(HashMap::new())),
            listener: Arc::new(Mutex::new(None)),
        }
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
            *cache
                .shared
                .listener
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = None;
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
        let api: Api<DynamicObject> = if key.namespace.is_empty() {
            Api::all_with(self.client.clone(), &resolved.api_resource)
        } else {
            Api::namespaced_with(self.client.clone(), &key.namespace, &resolved.api_resource)
        };
        let ar = resolved.api_resource.clone();
        let cache = ObjectCache::spawn(
            api,
            watcher::Config::default(),
            move |mut o: DynamicObject| {
                // Watch events of dynamic objects may lack apiVersion/kind; the cached JSON has them.
                o.types = Some(kube::core::TypeMeta {
                    api_version: ar.api_version.clone(),
                    kind: ar.kind.clone(),
                });
                serde_json::to_value(o).ok()
            },
        );
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
}
