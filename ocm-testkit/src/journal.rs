//! The request journal: every request a fake cluster served, for assertions.

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

/// A thread-safe, append-only log of requests.
#[derive(Debug, Default)]
pub struct Journal {
    entries: Mutex<Vec<JournalEntry>>,
}

impl Journal {
    pub(crate) fn record(&self, e: JournalEntry) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(e);
    }

    /// A copy of every entry so far.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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
