//! The request journal: every request a fake cluster served, for assertions.

use std::collections::VecDeque;
use std::sync::Mutex;

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
        matches!(
            self.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection"
        )
    }
}

/// How many entries a journal keeps by default.
pub const DEFAULT_JOURNAL_CAPACITY: usize = 100_000;

/// A thread-safe log of the most recent requests (bounded, oldest dropped first).
#[derive(Debug)]
pub struct Journal {
    entries: Mutex<VecDeque<JournalEntry>>,
    capacity: usize,
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

    pub(crate) fn record(&self, e: JournalEntry) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= self.capacity {
            entries.pop_front();
        }
        entries.push_back(e);
    }

    /// Whether requests are being recorded at all.
    pub fn is_enabled(&self) -> bool {
        self.capacity > 0
    }

    /// A copy of every entry so far.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// How many entries satisfy `pred`.
    pub fn count(&self, pred: impl Fn(&JournalEntry) -> bool) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|e| pred(e))
            .count()
    }

    /// How many write requests (create, update, patch, delete) were served.
    pub fn writes(&self) -> usize {
        self.count(JournalEntry::is_write)
    }

    /// Forget everything recorded so far.
    pub fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}
