//! Change tracking: report feedback values only when they differ from the recorded ones.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

use ocm_api::work::v1::FeedbackValue;

/// Whether `current` differs from the `recorded` values, as upstream compares them
/// (element by element, in order; no recorded values equals an empty list).
pub fn values_changed(recorded: Option<&[FeedbackValue]>, current: &[FeedbackValue]) -> bool {
    recorded.unwrap_or_default() != current
}

/// Remembers the last feedback values reported per resource and says when new values differ.
///
/// Upstream only rewrites a manifest's feedback (and refreshes the transition time of its
/// `StatusFeedbackSynced` condition) when the values changed. Run
/// [`record`](Self::record) for every resource on every sync: an unchanged list costs one
/// hash lookup and one comparison, and allocates nothing.
///
/// ```
/// use ocm_api::work::v1::{FeedbackValue, FieldValue};
/// use ocm_feedback::FeedbackTracker;
///
/// let ready = |n| vec![FeedbackValue { name: "ReadyReplicas".into(), field_value: FieldValue::integer(n) }];
/// let mut tracker = FeedbackTracker::<String>::new();
/// assert!(tracker.record("work1/0", ready(1)).is_some()); // first values: changed
/// assert!(tracker.record("work1/0", ready(1)).is_none()); // same again: nothing to report
/// assert!(tracker.record("work1/0", ready(2)).is_some());
/// assert!(tracker.record("work1/1", vec![]).is_none());   // nothing recorded == no values
/// ```
#[derive(Clone, Debug)]
pub struct FeedbackTracker<K> {
    recorded: HashMap<K, Vec<FeedbackValue>>,
}

impl<K> Default for FeedbackTracker<K> {
    fn default() -> Self {
        Self {
            recorded: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash> FeedbackTracker<K> {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `values` for `key`. Returns the new values when they differ from the recorded
    /// ones, and `None` (keeping the old record) when they are the same.
    pub fn record<Q>(&mut self, key: &Q, values: Vec<FeedbackValue>) -> Option<&[FeedbackValue]>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if !values_changed(self.recorded(key), &values) {
            return None;
        }
        if values.is_empty() {
            self.recorded.remove(key);
            return Some(&[]);
        }
        if !self.recorded.contains_key(key) {
            self.recorded.insert(key.to_owned(), Vec::new());
        }
        let slot = self.recorded.get_mut(key)?;
        *slot = values;
        Some(slot.as_slice())
    }

    /// Sets the recorded values without reporting (for example from a work's existing status
    /// after a restart).
    pub fn seed(&mut self, key: K, values: Vec<FeedbackValue>) {
        if values.is_empty() {
            self.recorded.remove(&key);
        } else {
            self.recorded.insert(key, values);
        }
    }

    /// The values last recorded for `key`.
    pub fn recorded<Q>(&self, key: &Q) -> Option<&[FeedbackValue]>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.recorded.get(key).map(Vec::as_slice)
    }

    /// Forgets `key` (the resource left the work), returning its last values.
    pub fn forget<Q>(&mut self, key: &Q) -> Option<Vec<FeedbackValue>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.recorded.remove(key)
    }

    /// Keeps only the keys for which `keep` returns `true`.
    pub fn retain(&mut self, mut keep: impl FnMut(&K) -> bool) {
        self.recorded.retain(|k, _| keep(k));
    }

    /// How many resources have values recorded.
    pub fn len(&self) -> usize {
        self.recorded.len()
    }

    /// Whether no resource has values recorded.
    pub fn is_empty(&self) -> bool {
        self.recorded.is_empty()
    }
}
