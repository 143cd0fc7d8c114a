//! Watch events, the retained event history and watch subscriptions.
//!
//! # Resource versions a watch or list cannot start from
//!
//! What kube-apiserver 1.33 answers, and what the fake answers:
//!
//! | request | kube-apiserver | the fake |
//! |---|---|---|
//! | watch from a version older than the retained history | `ERROR` event `410 Expired`, `too old resource version: N (M)` | the same |
//! | watch from a version newer than the server's (plain watch) | accepted; waits until that version is reached, then sends what follows it | `ERROR` event `410 Expired`, `Too large resource version: N, current: M` (see below) |
//! | watch with `sendInitialEvents=true` from a version newer than the server's | waits up to 3 s for its watch cache to reach it, then an `ERROR` event `504 Timeout`, `Timeout: Too large resource version: N, current: M`, cause `ResourceVersionTooLarge`, `retryAfterSeconds: 1` | the same `ERROR` event, at once |
//! | list with `resourceVersion=N` (`NotOlderThan`, `Exact` or legacy), N newer than the server's | waits up to 3 s, then `504 Timeout` with that status and a `Retry-After: 1` header | the same error, at once |
//!
//! The waits exist because kube-apiserver's watch cache may lag etcd by a moment; the fake
//! serves from its store of record, so a version it has not issued is one it will never have
//! issued a moment later, and waiting would only slow tests down.
//!
//! The plain watch differs on purpose. A client only holds a version the server has never
//! issued when the server lost its state (restarted empty, or restored from an older backup)
//! and started counting again. kube-apiserver then keeps such a watch open and silent, so a
//! client that resumes its watch (as informers do after a dropped connection) sees none of the
//! new server's objects until it is restarted, and later may see unrelated history as if it
//! followed. The restore procedure Kubernetes documents avoids this by moving the revision past
//! every version issued before and marking the older ones compacted
//! (`etcdutl snapshot restore --bump-revision ... --mark-compacted`), so that every such watch
//! gets `410 Gone` and its client lists again. The fake answers what that restored server
//! answers: `410 Expired`, so clients list again and converge by themselves.
//!
//! [`too_large_resource_version`] builds kube-apiserver's `504`. To test a client against
//! kube-apiserver's silent plain watch instead, build the cluster with
//! [`FakeClusterBuilder::future_watches_wait`](crate::FakeClusterBuilder::future_watches_wait).

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::api_error::{ApiError, Cause};
use crate::storage::registry::GroupResource;
use crate::storage::selector::{FieldSelector, LabelSelector};

/// kube-apiserver's answer to a list (or a watch with `sendInitialEvents=true`) from a
/// resourceVersion `requested` newer than its `current` one: `504 Timeout`,
/// `Timeout: Too large resource version: N, current: M`, with the cause
/// `ResourceVersionTooLarge` and a retry after 1 s (the watch cache's retry delay).
pub fn too_large_resource_version(requested: u64, current: u64) -> ApiError {
    let mut error = ApiError::new(
        504,
        "Timeout",
        format!("Timeout: Too large resource version: {requested}, current: {current}"),
    );
    error.causes = vec![Cause {
        reason: "ResourceVersionTooLarge".into(),
        message: "Too large resource version".into(),
        field: String::new(),
    }];
    error.retry_after_seconds = Some(1);
    error
}

/// The fake's answer to a plain watch from a resourceVersion `requested` it has never issued
/// (newer than its `current` one): `410 Expired`, so that the client lists again (see the
/// module docs for why this differs from kube-apiserver).
pub(crate) fn never_issued_resource_version(requested: u64, current: u64) -> ApiError {
    ApiError::gone(format!(
        "Too large resource version: {requested}, current: {current}"
    ))
}

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// An object appeared (or started matching the selector).
    Added,
    /// An object changed.
    Modified,
    /// An object disappeared (or stopped matching the selector).
    Deleted,
    /// A progress marker carrying only a resourceVersion.
    Bookmark,
    /// The watch failed; the object is a `Status`.
    Error,
}

impl EventType {
    /// The wire name: `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
            EventType::Bookmark => "BOOKMARK",
            EventType::Error => "ERROR",
        }
    }
}

/// One change of a store, as its watchers receive it.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    /// The resourceVersion the change produced.
    pub resource_version: u64,
    /// What happened.
    pub event_type: EventType,
    /// Which resource.
    pub group_resource: GroupResource,
    /// The object's namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// The object after the change (the last state for deletions).
    pub object: Arc<Value>,
    /// The object before the change, for modifications.
    pub previous: Option<Arc<Value>>,
}

impl Drop for StoredEvent {
    /// The last holder of an event takes its objects apart without recursion: events of
    /// objects nested thousands of levels deep end on whatever thread drops them.
    fn drop(&mut self) {
        if let Some(object) = Arc::get_mut(&mut self.object) {
            ocm_api::k8s::json::dismantle(object);
        }
        if let Some(previous) = self.previous.as_mut().and_then(Arc::get_mut) {
            ocm_api::k8s::json::dismantle(previous);
        }
    }
}

/// A registered watcher: what it wants and where to send it.
#[derive(Debug)]
pub(crate) struct WatcherSlot {
    pub(crate) group_resource: GroupResource,
    pub(crate) namespace: Option<String>,
    pub(crate) tx: mpsc::UnboundedSender<Arc<StoredEvent>>,
}

impl WatcherSlot {
    pub(crate) fn wants(&self, ev: &StoredEvent) -> bool {
        self.wants_change(&ev.group_resource, &ev.namespace)
    }

    /// Whether a change of `group_resource` in `namespace` concerns this watcher.
    pub(crate) fn wants_change(&self, group_resource: &GroupResource, namespace: &str) -> bool {
        self.group_resource == *group_resource
            && self.namespace.as_ref().is_none_or(|ns| *ns == namespace)
    }
}

/// What a watch asks for.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct WatchOptions {
    /// `labelSelector`.
    pub label_selector: LabelSelector,
    /// `fieldSelector`.
    pub field_selector: FieldSelector,
    /// `resourceVersion`: `None`/`""`/`"0"` start with the current state; `N` replays after N
    /// (`410 Gone` when N is older than the retained history or newer than the store's
    /// version; see the module docs).
    pub resource_version: Option<String>,
    /// `sendInitialEvents`: start with the current state and end it with an
    /// `k8s.io/initial-events-end` bookmark.
    pub send_initial_events: bool,
}

ocm_api::setters!(WatchOptions {
    /// Selecting by labels.
    label_selector: LabelSelector,
    /// Selecting by fields.
    field_selector: FieldSelector,
    /// Starting after this resourceVersion.
    resource_version: impl Into<String> => Some(resource_version.into()),
    /// With `sendInitialEvents` (`true`) or not.
    send_initial_events: bool,
});

/// A live watch on a store.
///
/// Events already selected and ordered; drop it to stop watching.
#[derive(Debug)]
pub struct Subscription {
    /// Events to deliver first (the current state, or the replayed history).
    pub initial: Vec<(EventType, Arc<Value>)>,
    /// When set, the resourceVersion of the `initial-events-end` bookmark to send after `initial`.
    pub initial_events_end: Option<u64>,
    /// When set, the watch cannot start: the requested resourceVersion is too old, was never
    /// issued (410), or is too large for a watch with initial events (504); see the module
    /// docs.
    pub expired: Option<crate::api_error::ApiError>,
    /// The resourceVersion the watch starts from.
    pub start_resource_version: u64,
    /// With [`StoreConfig::future_watches_wait`](crate::storage::store::StoreConfig::future_watches_wait):
    /// the future resourceVersion a plain watch asked for; nothing up to it is sent, bookmarks
    /// included.
    pub(crate) wait_until: Option<u64>,
    pub(crate) rx: mpsc::UnboundedReceiver<Arc<StoredEvent>>,
    pub(crate) label_selector: LabelSelector,
    pub(crate) field_selector: FieldSelector,
}

impl Subscription {
    fn matches(&self, obj: &Value) -> bool {
        self.label_selector.matches_object(obj) && self.field_selector.matches_object(obj)
    }

    /// Translate a store event into what this watcher sees, honouring selectors:
    /// an object that starts matching is `ADDED`, one that stops is `DELETED`.
    pub(crate) fn translate(&self, ev: &StoredEvent) -> Option<(EventType, Arc<Value>)> {
        let now = self.matches(&ev.object);
        match ev.event_type {
            EventType::Modified => {
                let before = ev.previous.as_ref().is_some_and(|p| self.matches(p));
                match (before, now) {
                    (true, true) => Some((EventType::Modified, ev.object.clone())),
                    (false, true) => Some((EventType::Added, ev.object.clone())),
                    (true, false) => Some((EventType::Deleted, ev.object.clone())),
                    (false, false) => None,
                }
            }
            t => now.then(|| (t, ev.object.clone())),
        }
    }

    /// Wait for the next event after the initial ones, with its resourceVersion.
    ///
    /// Returns `None` when the store is gone.
    pub async fn next_event(&mut self) -> Option<(EventType, Arc<Value>, u64)> {
        loop {
            let ev = self.rx.recv().await?;
            if let Some((t, o)) = self.translate(&ev) {
                return Some((t, o, ev.resource_version));
            }
        }
    }
}
