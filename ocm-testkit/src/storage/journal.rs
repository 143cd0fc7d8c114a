//! The request journal: every request a fake cluster served, for assertions.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One served request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    /// Kubernetes verb: `get`, `list`, `watch`, `create`, `update`, `patch`,
    /// `delete`, `deletecollection`, or the HTTP method for non-resource paths.
    pub verb: String,
    /// HTTP method.
    pub method: String,
    /// Path, without the query.
    pub path: String,
    /// Raw query string (may be empty).
    pub query: String,
    /// API group of the resource (empty for core or non-resource requests).
    pub group: String,
    /// Plural resource, when the request was for one.
    pub resource: Option<String>,
    /// Subresource, e.g. `status`.
    pub subresource: Option<String>,
    /// Namespace, when the path names one.
    pub namespace: Option<String>,
    /// Object name, when the path names one.
    pub name: Option<String>,
    /// HTTP status code of the response.
    pub status: u16,
}

impl JournalEntry {
    /// Whether this request could change state.
    pub fn is_write(&self) -> bool {
        is_write_verb(&self.verb)
    }
}

/// How many entries a journal keeps by default.
pub const DEFAULT_JOURNAL_CAPACITY: usize = 100_000;

/// A thread-safe log of the most recent requests (bounded, oldest dropped first).
///
/// Entries are kept compactly: their strings are shared (a fleet's journals repeat the same
/// verbs, resources, namespaces and paths over and over) and turned back into
/// [`JournalEntry`]s when read.
#[derive(Debug)]
pub struct Journal {
    entries: Mutex<VecDeque<Recorded>>,
    capacity: usize,
}

/// A [`JournalEntry`] as the journal keeps it.
#[derive(Debug)]
struct Recorded {
    verb: Arc<str>,
    method: Arc<str>,
    path: Arc<str>,
    query: Arc<str>,
    group: Arc<str>,
    resource: Option<Arc<str>>,
    subresource: Option<Arc<str>>,
    namespace: Option<Arc<str>>,
    name: Option<Arc<str>>,
    status: u16,
}

impl Recorded {
    fn new(e: &JournalEntry) -> Self {
        let shared = |s: &str| crate::storage::frozen::shared_str(s);
        Self {
            verb: shared(&e.verb),
            method: shared(&e.method),
            path: shared(&e.path),
            query: shared(&e.query),
            group: shared(&e.group),
            resource: e.resource.as_deref().map(shared),
            subresource: e.subresource.as_deref().map(shared),
            namespace: e.namespace.as_deref().map(shared),
            name: e.name.as_deref().map(shared),
            status: e.status,
        }
    }

    fn entry(&self) -> JournalEntry {
        let owned = |s: &Option<Arc<str>>| s.as_deref().map(str::to_string);
        JournalEntry {
            verb: self.verb.to_string(),
            method: self.method.to_string(),
            path: self.path.to_string(),
            query: self.query.to_string(),
            group: self.group.to_string(),
            resource: owned(&self.resource),
            subresource: owned(&self.subresource),
            namespace: owned(&self.namespace),
            name: owned(&self.name),
            status: self.status,
        }
    }

    fn is_write(&self) -> bool {
        is_write_verb(&self.verb)
    }
}

fn is_write_verb(verb: &str) -> bool {
    matches!(
        verb,
        "create" | "update" | "patch" | "delete" | "deletecollection"
    )
}

impl Default for Journal {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_JOURNAL_CAPACITY)
    }
}

impl Journal {
    /// A journal keeping at most `capacity` entries (0 records nothing).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: Mutex::new(VecDeque::new()),
            capacity,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Recorded>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn record(&self, e: JournalEntry) {
        if self.capacity == 0 {
            return;
        }
        let recorded = Recorded::new(&e);
        let mut entries = self.lock();
        if entries.len() >= self.capacity {
            entries.pop_front();
        }
        entries.push_back(recorded);
    }

    /// Whether requests are being recorded at all.
    pub fn is_enabled(&self) -> bool {
        self.capacity > 0
    }

    /// A copy of every entry so far.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.lock().iter().map(Recorded::entry).collect()
    }

    /// How many entries satisfy `pred`.
    pub fn count(&self, pred: impl Fn(&JournalEntry) -> bool) -> usize {
        self.lock().iter().filter(|e| pred(&e.entry())).count()
    }

    /// How many write requests (create, update, patch, delete) were served.
    pub fn writes(&self) -> usize {
        self.lock().iter().filter(|e| e.is_write()).count()
    }

    /// Forget everything recorded so far.
    pub fn clear(&self) {
        // The memory goes too: a journal that filled once should not hold its peak forever.
        *self.lock() = VecDeque::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(verb: &str, name: Option<&str>) -> JournalEntry {
        JournalEntry {
            verb: verb.into(),
            method: "GET".into(),
            path: "/api/v1/namespaces/default/configmaps".into(),
            query: "watch=true".into(),
            group: String::new(),
            resource: Some("configmaps".into()),
            subresource: None,
            namespace: Some("default".into()),
            name: name.map(str::to_string),
            status: 200,
        }
    }

    #[test]
    fn entries_come_back_as_recorded_oldest_dropped_first() {
        let j = Journal::with_capacity(2);
        j.record(entry("list", None));
        j.record(entry("patch", Some("a")));
        j.record(entry("delete", Some("b")));
        assert_eq!(
            j.entries(),
            vec![entry("patch", Some("a")), entry("delete", Some("b"))]
        );
        assert_eq!(j.writes(), 2);
        assert_eq!(j.count(|e| e.name.as_deref() == Some("b")), 1);
        j.clear();
        assert!(j.entries().is_empty());
        let off = Journal::with_capacity(0);
        off.record(entry("list", None));
        assert!(!off.is_enabled() && off.entries().is_empty());
    }
}
