//! Watch events, the retained event history and watch subscriptions.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::registry::GroupResource;
use crate::selector::{FieldSelector, LabelSelector};

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

/// One change recorded in the store's history.
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

/// A registered watcher: what it wants and where to send it.
#[derive(Debug)]
pub(crate) struct WatcherSlot {
    pub(crate) group_resource: GroupResource,
    pub(crate) namespace: Option<String>,
    pub(crate) tx: mpsc::UnboundedSender<Arc<StoredEvent>>,
}

impl WatcherSlot {
    pub(crate) fn wants(&self, ev: &StoredEvent) -> bool {
        self.group_resource == ev.group_resource
            && self.namespace.as_ref().is_none_or(|ns| *ns == ev.namespace)
    }
}

/// What a watch asks for.
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    /// `labelSelector`.
    pub label_selector: LabelSelector,
    /// `fieldSelector`.
    pub field_selector: FieldSelector,
    /// `resourceVersion`: `None`/`""`/`"0"` start with the current state; `N` replays after N.
    pub resource_version: Option<String>,
    /// `sendInitialEvents`: start with the current state and end it with an
    /// `k8s.io/initial-events-end` bookmark.
    pub send_initial_events: bool,
}

/// A live watch on a store.
///
/// Events already selected and ordered; drop it to stop watching.
#[derive(Debug)]
pub struct Subscription {
    /// Events to deliver first (the current state, or the replayed history).
    pub initial: Vec<(EventType, Arc<Value>)>,
    /// When set, the resourceVersion of the `initial-events-end` bookmark to send after `initial`.
    pub initial_events_end: Option<u64>,
    /// When set, the watch cannot start: the requested resourceVersion is too old.
    pub expired: Option<crate::api_error::ApiError>,
    /// The resourceVersion the watch starts from.
    pub start_resource_version: u64,
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
