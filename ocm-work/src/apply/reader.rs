//! The one reader of live objects on the managed cluster.
//!
//! Every path of the agent that needs an applied resource as it is on the managed cluster
//! reads it here: the appliers (the object a manifest is applied over), the AppliedManifestWork
//! bookkeeping (the uid of a resource the apply pass did not write), the status refresh (the
//! object whose availability, feedback and condition rules are evaluated) and the garbage
//! collection (the object about to be deleted). The reader owns the choice between an informer
//! and a GET, the write-through of objects the agent wrote into the informers, and the count of
//! the requests it sends (for metrics), so those rules live in one place:
//!
//! * with [`ObjectReader::use_informers`] and `every_read`, a synced informer answers any read
//!   except a fresh one (the agent's [`cached_reads`](crate::agent::AgentConfig::cached_reads));
//! * an informer that exists for a resource whose feedback is watched answers the status
//!   refresh ([`ObjectReader::get_for_status`]) even without cached reads, as upstream reads
//!   watched resources from their informer;
//! * everything else is a GET, and so is a fresh read (a write refused because the cached copy
//!   was stale is retried from one; garbage collection always reads fresh).

use std::sync::{Arc, OnceLock};

use kube::Client;
use kube::api::{Api, DynamicObject};
use serde_json::Value;

use crate::cache::SpokeObjects;
use crate::discovery::ResolvedResource;

/// Told the verb of every request the engine sends (`get`, `create`, `update`, `patch`,
/// `apply`, `delete`), for metrics.
pub type RequestObserver = Arc<dyn Fn(&'static str) + Send + Sync>;

/// Reads live objects of one managed cluster (see the [module docs](self)). Clones share the
/// informers and the request observer.
#[derive(Clone)]
pub struct ObjectReader {
    client: Client,
    /// The informers, and whether every read may use them (cached reads) or only the reads of
    /// watched resources.
    informers: Arc<OnceLock<(SpokeObjects, bool)>>,
    requests: Arc<OnceLock<RequestObserver>>,
}

impl std::fmt::Debug for ObjectReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectReader")
            .field("informers", &self.informers.get().map(|(_, every)| every))
            .finish_non_exhaustive()
    }
}

impl ObjectReader {
    /// A reader of the cluster behind `client`, sending a GET for every read until
    /// [`ObjectReader::use_informers`] is called.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            informers: Arc::new(OnceLock::new()),
            requests: Arc::new(OnceLock::new()),
        }
    }

    /// The client the reader sends its requests with.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Reads through `objects` from now on: every read when `every_read` (a synced informer
    /// answers instead of a GET, and objects the agent writes go into it), else only the
    /// status reads of watched resources. Returns false (and changes nothing) when informers
    /// were already set.
    pub fn use_informers(&self, objects: SpokeObjects, every_read: bool) -> bool {
        self.informers.set((objects, every_read)).is_ok()
    }

    /// The informers every read may use, once set with `every_read`.
    pub fn object_cache(&self) -> Option<&SpokeObjects> {
        self.informers
            .get()
            .filter(|(_, every)| *every)
            .map(|(objects, _)| objects)
    }

    /// Tells `observer` the verb of every request sent from now on. Returns false (and changes
    /// nothing) when an observer was already set.
    pub fn observe_requests(&self, observer: RequestObserver) -> bool {
        self.requests.set(observer).is_ok()
    }

    /// Counts one request with `verb`.
    pub fn count(&self, verb: &'static str) {
        if let Some(observer) = self.requests.get() {
            observer(verb);
        }
    }

    /// The dynamic API for `resolved` in `namespace` (cluster-wide when empty or when the
    /// resource is cluster-scoped).
    pub fn api(&self, resolved: &ResolvedResource, namespace: &str) -> Api<DynamicObject> {
        if resolved.namespaced && !namespace.is_empty() {
            Api::namespaced_with(self.client.clone(), namespace, &resolved.api_resource)
        } else {
            Api::all_with(self.client.clone(), &resolved.api_resource)
        }
    }

    /// The live object `name` of `resolved` in `namespace`: from the informer when cached reads
    /// are on and it knows, else from the API server.
    pub async fn get(
        &self,
        resolved: &ResolvedResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Value>>, kube::Error> {
        Ok(self.read(resolved, namespace, name, false).await?.0)
    }

    /// The live object for the status refresh: from its informer when the resource's feedback
    /// is `watched` and the informer knows (with or without cached reads), else as
    /// [`ObjectReader::get`].
    pub async fn get_for_status(
        &self,
        resolved: &ResolvedResource,
        namespace: &str,
        name: &str,
        watched: bool,
    ) -> Result<Option<Arc<Value>>, kube::Error> {
        if watched
            && let Some((objects, _)) = self.informers.get()
            && let Some(known) = objects.lookup(resolved, namespace, name).known()
        {
            return Ok(known);
        }
        self.get(resolved, namespace, name).await
    }

    /// Reads a live object; `fresh` skips the informer. The flag says whether the informer
    /// answered (a write planned from its copy may be refused as stale and is then retried
    /// from a fresh read).
    pub async fn read(
        &self,
        resolved: &ResolvedResource,
        namespace: &str,
        name: &str,
        fresh: bool,
    ) -> Result<(Option<Arc<Value>>, bool), kube::Error> {
        if !fresh
            && let Some(objects) = self.object_cache()
            && let Some(known) = objects.lookup(resolved, namespace, name).known()
        {
            return Ok((known, true));
        }
        self.count("get");
        let live = self.api(resolved, namespace).get_opt(name).await?;
        let live = match live {
            Some(object) => {
                let value = serde_json::to_value(object).map_err(kube::Error::SerdeError)?;
                self.record(resolved, namespace, &value);
                Some(Arc::new(value))
            }
            None => None,
        };
        Ok((live, false))
    }

    /// Reads `name` through `api` from the API server, never from an informer (garbage
    /// collection checks the live uid and owners before it deletes). The caller counts the
    /// request.
    pub async fn get_fresh(
        &self,
        api: &Api<DynamicObject>,
        name: &str,
    ) -> Result<Option<DynamicObject>, kube::Error> {
        api.get_opt(name).await
    }

    /// Records an object the agent just wrote (or read) in its informer, when cached reads are
    /// on and an informer for it exists.
    pub fn record(&self, resolved: &ResolvedResource, namespace: &str, object: &Value) {
        if let Some(objects) = self.object_cache() {
            objects.record(resolved, namespace, object);
        }
    }
}
