//! Deletion: finalizers, deletionTimestamp, ownerReference garbage collection
//! (Background, Foreground, Orphan) and namespace termination.
//!
//! By default collection is synchronous; [`GarbageCollection`] describes the asynchronous
//! mode, which behaves like a real cluster.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::storage::registry::GroupResource;
use crate::storage::store::{
    DeleteOutcome, Inner, ObjectKey, Propagation, Store, meta_mut, meta_str, owner_uids,
    pending_finalizers,
};
use crate::storage::watch::EventType;

const FOREGROUND: &str = "foregroundDeletion";

fn namespaces() -> GroupResource {
    GroupResource::new("", "namespaces")
}

impl Inner {
    /// Delete one object with the given propagation policy.
    pub(crate) fn delete_object(
        &mut self,
        gr: &GroupResource,
        key: &ObjectKey,
        propagation: Propagation,
    ) -> DeleteOutcome {
        let Some(cur) = self.lookup(gr, key) else {
            return DeleteOutcome::Deleted(Value::Null);
        };
        if *gr == namespaces() {
            return self.delete_namespace(key, cur);
        }
        if cur.pointer("/metadata/deletionTimestamp").is_some() {
            return DeleteOutcome::Pending(cur.as_ref().clone());
        }
        let uid = cur
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if propagation == Propagation::Orphan {
            self.orphan_dependents(&uid);
        }
        let mut fins = crate::storage::store::finalizers(&cur);
        let foreground = propagation == Propagation::Foreground
            && self.dependents.get(&uid).is_some_and(|d| !d.is_empty());
        if foreground && !fins.iter().any(|f| f == FOREGROUND) {
            fins.push(FOREGROUND.to_string());
        }
        if fins.is_empty() {
            let last = self.remove_object(gr, key, &cur);
            return DeleteOutcome::Deleted(last.as_ref().clone());
        }
        let mut obj = cur.as_ref().clone();
        let now = crate::clock::format_time(self.config.clock.now());
        let meta = meta_mut(&mut obj);
        meta.insert("deletionTimestamp".into(), json!(now));
        meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        meta.insert("finalizers".into(), json!(fins));
        let stored = self.commit(gr, key, obj, EventType::Modified, Some(cur));
        self.schedule_held_finalizers(gr, key, &stored);
        if foreground {
            self.gc_task(GcTask::ForegroundDependents(uid));
        }
        match self.lookup(gr, key) {
            Some(now) => DeleteOutcome::Pending(now.as_ref().clone()),
            None => DeleteOutcome::Deleted(stored.as_ref().clone()),
        }
    }

    /// Remove an object for good and run the garbage collection it triggers.
    pub(crate) fn remove_object(
        &mut self,
        gr: &GroupResource,
        key: &ObjectKey,
        cur: &Arc<Value>,
    ) -> Arc<Value> {
        let last = self.commit(
            gr,
            key,
            cur.as_ref().clone(),
            EventType::Deleted,
            Some(cur.clone()),
        );
        let uid = last
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.gc_task(GcTask::CollectDependents(uid));
        for owner in owner_uids(&last) {
            self.gc_task(GcTask::FinishForeground(owner));
        }
        if !key.namespace.is_empty() {
            self.gc_task(GcTask::FinishNamespace(key.namespace.clone()));
        }
        if gr.group == "apiextensions.k8s.io" && gr.resource == "customresourcedefinitions" {
            self.unregister_crd(&last);
        }
        last
    }

    fn dependents_of(&self, uid: &str) -> Vec<(GroupResource, ObjectKey)> {
        let mut out: Vec<_> = self
            .dependents
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        out.sort();
        out
    }

    /// Background collection: dependents whose owners are all gone are deleted;
    /// dependents with a surviving owner lose the dangling reference.
    fn collect_dependents(&mut self, uid: &str) {
        for (dgr, dkey) in self.dependents_of(uid) {
            let Some(dep) = self.lookup(&dgr, &dkey) else {
                continue;
            };
            let owners = owner_uids(&dep);
            if owners.iter().all(|o| !self.uids.contains_key(o)) {
                self.delete_object(&dgr, &dkey, Propagation::Background);
            } else {
                self.drop_owner_ref(&dgr, &dkey, &dep, uid);
            }
        }
    }

    fn delete_dependents(&mut self, uid: &str) {
        for (dgr, dkey) in self.dependents_of(uid) {
            self.delete_object(&dgr, &dkey, Propagation::Background);
        }
    }

    fn orphan_dependents(&mut self, uid: &str) {
        for (dgr, dkey) in self.dependents_of(uid) {
            if let Some(dep) = self.lookup(&dgr, &dkey) {
                self.drop_owner_ref(&dgr, &dkey, &dep, uid);
            }
        }
    }

    fn drop_owner_ref(&mut self, gr: &GroupResource, key: &ObjectKey, dep: &Arc<Value>, uid: &str) {
        let mut obj = dep.as_ref().clone();
        let meta = meta_mut(&mut obj);
        let mut now_empty = false;
        if let Some(Value::Array(refs)) = meta.get_mut("ownerReferences") {
            refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid));
            now_empty = refs.is_empty();
        }
        if now_empty {
            meta.remove("ownerReferences");
        }
        self.commit(gr, key, obj, EventType::Modified, Some(dep.clone()));
    }

    /// Whether a dependent still exists whose reference to `uid` sets `blockOwnerDeletion`.
    fn has_blocking_dependents(&self, uid: &str) -> bool {
        self.dependents_of(uid).iter().any(|(gr, key)| {
            self.lookup(gr, key).is_some_and(|dep| {
                dep.pointer("/metadata/ownerReferences")
                    .and_then(Value::as_array)
                    .is_some_and(|refs| {
                        refs.iter().any(|r| {
                            r.get("uid").and_then(Value::as_str) == Some(uid)
                                && r.get("blockOwnerDeletion").and_then(Value::as_bool)
                                    == Some(true)
                        })
                    })
            })
        })
    }

    /// An owner deleted in the foreground goes once its blocking dependents are gone.
    fn try_finish_foreground(&mut self, uid: &str) {
        let Some((gr, key)) = self.uids.get(uid).cloned() else {
            return;
        };
        let Some(owner) = self.lookup(&gr, &key) else {
            return;
        };
        let fins = crate::storage::store::finalizers(&owner);
        if owner.pointer("/metadata/deletionTimestamp").is_none()
            || !fins.iter().any(|f| f == FOREGROUND)
            || self.has_blocking_dependents(uid)
        {
            return;
        }
        let rest: Vec<&String> = fins.iter().filter(|f| *f != FOREGROUND).collect();
        let mut obj = owner.as_ref().clone();
        let meta = meta_mut(&mut obj);
        if rest.is_empty() {
            meta.remove("finalizers");
        } else {
            meta.insert("finalizers".into(), json!(rest));
        }
        let stored = self.commit(&gr, &key, obj, EventType::Modified, Some(owner));
        if pending_finalizers(&gr, &stored).is_empty() {
            self.remove_object(&gr, &key, &stored);
        }
    }

    fn delete_namespace(&mut self, key: &ObjectKey, cur: Arc<Value>) -> DeleteOutcome {
        let ns = key.name.clone();
        if cur.pointer("/metadata/deletionTimestamp").is_none() {
            let mut obj = cur.as_ref().clone();
            let now = crate::clock::format_time(self.config.clock.now());
            let meta = meta_mut(&mut obj);
            meta.insert("deletionTimestamp".into(), json!(now));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            if let Some(m) = obj.as_object_mut() {
                m.insert("status".into(), json!({"phase": "Terminating"}));
            }
            let stored = self.commit(&namespaces(), key, obj, EventType::Modified, Some(cur));
            self.schedule_held_finalizers(&namespaces(), key, &stored);
        }
        self.gc_task(GcTask::NamespaceContents(ns.clone()));
        match self.lookup(&namespaces(), key) {
            Some(now) => DeleteOutcome::Pending(now.as_ref().clone()),
            None => DeleteOutcome::Deleted(json!({
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}
            })),
        }
    }

    /// The namespace controller's pass: delete everything in `ns`, then let the namespace go
    /// if it is empty.
    fn delete_namespace_contents(&mut self, ns: &str) {
        let mut contents = Vec::new();
        for (gr, objects) in &self.objects {
            let lower = ObjectKey::new(ns, "");
            for (k, _) in objects.range(lower..) {
                if k.namespace != ns {
                    break;
                }
                contents.push((gr.clone(), k.clone()));
            }
        }
        contents.sort();
        for (gr, k) in contents {
            self.delete_object(&gr, &k, Propagation::Background);
        }
        self.try_finish_namespace(ns);
    }

    /// A terminating namespace goes once it is empty.
    fn try_finish_namespace(&mut self, ns: &str) {
        let key = ObjectKey::new("", ns);
        let Some(cur) = self.lookup(&namespaces(), &key) else {
            return;
        };
        if cur.pointer("/metadata/deletionTimestamp").is_none() {
            return;
        }
        let lower = ObjectKey::new(ns, "");
        let has_content = self.objects.iter().any(|(gr, objects)| {
            *gr != namespaces()
                && objects
                    .range(lower.clone()..)
                    .next()
                    .is_some_and(|(k, _)| k.namespace == ns)
        });
        if has_content {
            return;
        }
        let mut obj = cur.as_ref().clone();
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("finalizers");
        }
        if pending_finalizers(&namespaces(), &obj).is_empty() {
            let stored = Arc::new(obj);
            self.remove_object(&namespaces(), &key, &stored);
        } else if obj != *cur {
            self.commit(&namespaces(), &key, obj, EventType::Modified, Some(cur));
        }
    }
}

/// How a store collects garbage.
///
/// By default garbage collection runs synchronously inside the write that triggers it, so a
/// test sees its outcome as soon as the delete call returns.
///
/// A real cluster is not like that: kube-apiserver only marks or removes the object it is
/// asked to delete, and kube-controller-manager's garbage collector and namespace controller
/// finish the job later, while the controllers that own a finalizer release it when they are
/// done. Code that only works because deletion is synchronous breaks there.
/// [`Store::set_garbage_collection`] with [`GarbageCollection::asynchronous`] makes the store
/// behave the real way:
///
/// - deleting an owner (`Background`) removes it at once; its dependents are deleted `delay`
///   later;
/// - `Foreground` marks the owner (`deletionTimestamp`, the `foregroundDeletion` finalizer);
///   its dependents are deleted `delay` later, and the owner goes `delay` after its last
///   blocking dependent;
/// - deleting a namespace marks it `Terminating`; its contents are deleted `delay` later, and
///   the namespace goes `delay` after it is empty;
/// - [`GarbageCollection::hold_finalizer`] names finalizers the store releases itself, a while
///   after their object was marked for deletion, as the controller owning the finalizer would
///   (this works in both modes).
///
/// Delays are wall-clock time (not the store's [`Clock`](crate::Clock)). A background thread
/// runs what is due every few milliseconds while the store exists and something is pending;
/// [`Store::run_garbage_collection`] runs what is due at once and
/// [`Store::finish_garbage_collection`] everything pending, for tests that want to decide
/// when the collector acts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GarbageCollection {
    /// `None`: synchronous. `Some(delay)`: dependents, foreground owners and namespace
    /// contents are collected `delay` after the change that allows it.
    pub delay: Option<Duration>,
    /// Finalizers the store releases itself, this long after their object was marked for
    /// deletion.
    pub held_finalizers: BTreeMap<String, Duration>,
}

impl GarbageCollection {
    /// Collection inside the triggering write (the default).
    pub fn synchronous() -> Self {
        Self::default()
    }

    /// Collection `delay` after the change that allows it, as on a real cluster.
    pub fn asynchronous(delay: Duration) -> Self {
        Self {
            delay: Some(delay),
            ..Self::default()
        }
    }

    /// Releases `finalizer` `hold` after its object was marked for deletion, as the
    /// controller owning it would.
    #[must_use]
    pub fn hold_finalizer(mut self, finalizer: impl Into<String>, hold: Duration) -> Self {
        self.held_finalizers.insert(finalizer.into(), hold);
        self
    }

    fn needs_driver(&self) -> bool {
        self.delay.is_some() || !self.held_finalizers.is_empty()
    }
}

/// One piece of deferred collection work.
#[derive(Debug, Clone)]
pub(crate) enum GcTask {
    /// The owner with this uid is gone: delete (or release) its dependents.
    CollectDependents(String),
    /// The owner with this uid is deleted in the foreground: delete its dependents.
    ForegroundDependents(String),
    /// A dependent of this owner went: the owner may finish its foreground deletion.
    FinishForeground(String),
    /// Delete the contents of this terminating namespace.
    NamespaceContents(String),
    /// Something left this namespace: it may go if it is terminating and empty.
    FinishNamespace(String),
    /// Release a held finalizer of the object with this uid.
    ReleaseFinalizer {
        gr: GroupResource,
        key: ObjectKey,
        uid: String,
        finalizer: String,
    },
}

/// The collector's settings and its queue of deferred work.
#[derive(Debug, Default)]
pub(crate) struct GcState {
    config: GarbageCollection,
    /// (due, sequence) → task.
    queue: BTreeMap<(Instant, u64), GcTask>,
    sequence: u64,
    driver: bool,
}

/// How often the background thread looks for due work.
const DRIVER_TICK: Duration = Duration::from_millis(10);

/// Bound on the tasks one [`Store::finish_garbage_collection`] runs (a guard against loops).
const FINISH_LIMIT: usize = 100_000;

impl Inner {
    /// Runs `task` now (synchronous collection) or queues it for later.
    fn gc_task(&mut self, task: GcTask) {
        match self.gc.config.delay {
            None => self.run_gc_task(task),
            Some(delay) => self.queue_gc_task(delay, task),
        }
    }

    fn queue_gc_task(&mut self, delay: Duration, task: GcTask) {
        self.gc.sequence += 1;
        let due = Instant::now() + delay;
        self.gc.queue.insert((due, self.gc.sequence), task);
    }

    /// Queues the release of every held finalizer `obj` (just marked for deletion) carries.
    fn schedule_held_finalizers(&mut self, gr: &GroupResource, key: &ObjectKey, obj: &Value) {
        if self.gc.config.held_finalizers.is_empty() {
            return;
        }
        let uid = meta_str(obj, "uid").unwrap_or_default().to_string();
        for finalizer in crate::storage::store::finalizers(obj) {
            if let Some(hold) = self.gc.config.held_finalizers.get(&finalizer).copied() {
                self.queue_gc_task(
                    hold,
                    GcTask::ReleaseFinalizer {
                        gr: gr.clone(),
                        key: key.clone(),
                        uid: uid.clone(),
                        finalizer,
                    },
                );
            }
        }
    }

    fn run_gc_task(&mut self, task: GcTask) {
        match task {
            GcTask::CollectDependents(uid) => self.collect_dependents(&uid),
            GcTask::ForegroundDependents(uid) => {
                self.delete_dependents(&uid);
                self.try_finish_foreground(&uid);
            }
            GcTask::FinishForeground(uid) => self.try_finish_foreground(&uid),
            GcTask::NamespaceContents(ns) => self.delete_namespace_contents(&ns),
            GcTask::FinishNamespace(ns) => self.try_finish_namespace(&ns),
            GcTask::ReleaseFinalizer {
                gr,
                key,
                uid,
                finalizer,
            } => self.release_finalizer(&gr, &key, &uid, &finalizer),
        }
    }

    /// What the controller owning `finalizer` does once it is done: removes it from the
    /// object (if it is still the same object), which then goes if nothing else holds it.
    fn release_finalizer(
        &mut self,
        gr: &GroupResource,
        key: &ObjectKey,
        uid: &str,
        finalizer: &str,
    ) {
        let Some(cur) = self.lookup(gr, key) else {
            return;
        };
        if meta_str(&cur, "uid") != Some(uid) {
            return;
        }
        let fins = crate::storage::store::finalizers(&cur);
        if !fins.iter().any(|f| f == finalizer) {
            return;
        }
        let rest: Vec<&String> = fins.iter().filter(|f| *f != finalizer).collect();
        let mut obj = cur.as_ref().clone();
        let meta = meta_mut(&mut obj);
        if rest.is_empty() {
            meta.remove("finalizers");
        } else {
            meta.insert("finalizers".into(), json!(rest));
        }
        let stored = self.commit(gr, key, obj, EventType::Modified, Some(cur));
        if stored.pointer("/metadata/deletionTimestamp").is_some()
            && pending_finalizers(gr, &stored).is_empty()
        {
            self.remove_object(gr, key, &stored);
        }
    }

    /// Runs the queued tasks due by now (all of them with `all`); returns how many ran.
    fn run_due_gc_tasks(&mut self, all: bool) -> usize {
        let mut ran = 0;
        while ran < FINISH_LIMIT {
            let now = Instant::now();
            let Some((&(due, sequence), _)) = self.gc.queue.first_key_value() else {
                break;
            };
            if !all && due > now {
                break;
            }
            let Some(task) = self.gc.queue.remove(&(due, sequence)) else {
                break;
            };
            self.run_gc_task(task);
            ran += 1;
        }
        ran
    }
}

impl Store {
    /// Sets how this store collects garbage (see [`GarbageCollection`]). Switching back to
    /// [`GarbageCollection::synchronous`] runs what is still queued at once.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ocm_testkit::{FakeCluster, GarbageCollection};
    ///
    /// let cluster = FakeCluster::new();
    /// cluster.store().set_garbage_collection(
    ///     GarbageCollection::asynchronous(Duration::from_millis(200))
    ///         .hold_finalizer("example.com/cleanup", Duration::from_secs(1)),
    /// );
    /// ```
    pub fn set_garbage_collection(self: &Arc<Self>, gc: GarbageCollection) {
        let mut inner = self.write();
        let start_driver = gc.needs_driver() && !inner.gc.driver;
        inner.gc.config = gc;
        if !inner.gc.config.needs_driver() {
            inner.run_due_gc_tasks(true);
        }
        if start_driver {
            inner.gc.driver = true;
            drop(inner);
            let weak = Arc::downgrade(self);
            let spawned = std::thread::Builder::new()
                .name("testkit-gc".into())
                .spawn(move || drive(weak));
            if spawned.is_err() {
                // Without a thread, queued work runs when run_garbage_collection is called.
                self.write().gc.driver = false;
            }
        }
    }

    /// How this store collects garbage.
    pub fn garbage_collection(&self) -> GarbageCollection {
        self.read().gc.config.clone()
    }

    /// Runs the deferred collection work that is due; returns how many steps ran.
    pub fn run_garbage_collection(&self) -> usize {
        self.write().run_due_gc_tasks(false)
    }

    /// Runs every piece of deferred collection work now, due or not, including what it
    /// triggers; returns how many steps ran.
    pub fn finish_garbage_collection(&self) -> usize {
        self.write().run_due_gc_tasks(true)
    }

    /// How many deferred collection steps are queued.
    pub fn pending_garbage_collection(&self) -> usize {
        self.read().gc.queue.len()
    }
}

/// The background collector: runs due work every [`DRIVER_TICK`] until the store is dropped
/// or collection is synchronous again with nothing queued.
fn drive(store: Weak<Store>) {
    loop {
        std::thread::sleep(DRIVER_TICK);
        let Some(store) = store.upgrade() else {
            return;
        };
        let mut inner = store.write();
        inner.run_due_gc_tasks(false);
        if !inner.gc.config.needs_driver() && inner.gc.queue.is_empty() {
            inner.gc.driver = false;
            return;
        }
    }
}
