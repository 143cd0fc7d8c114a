//! What a controller last said about each object, so that a problem found again on every
//! reconcile is logged once per change, not once per reconcile.
//!
//! A controller in steady state reconciles the same objects over and over (watch events,
//! resyncs, retries, other replicas' writes echoed back). A warning written on every pass
//! buries the log in copies of itself. [`LastSaid`] remembers the last message per key
//! (an object, or an object and a topic): [`LastSaid::changed`] answers whether a message is
//! new, [`LastSaid::forget`] clears a key once the problem is gone, so that its return is
//! logged again. It is shared by the SDK's hub controllers (`ocm_placement`, `ocm_work`); the
//! decision what to log stays with them.
//!
//! ```
//! use ocm_api::repeats::LastSaid;
//!
//! let said = LastSaid::default();
//! assert!(said.changed("apps/web", "rollout cannot advance: 2 works"));
//! assert!(!said.changed("apps/web", "rollout cannot advance: 2 works")); // again: quiet
//! assert!(said.changed("apps/web", "rollout cannot advance: 3 works")); // changed
//! said.forget("apps/web");
//! assert!(said.changed("apps/web", "rollout cannot advance: 3 works")); // back after a fix
//! ```

use std::collections::HashMap;
use std::sync::Mutex;

/// The last message said per key. Cheap to share behind an `Arc`; every method takes `&self`.
#[derive(Debug, Default)]
pub struct LastSaid {
    said: Mutex<HashMap<String, String>>,
}

impl LastSaid {
    /// Records `message` for `key`; `true` when it differs from what was last recorded for
    /// the key (or nothing was), that is, when it should be said.
    pub fn changed(&self, key: &str, message: &str) -> bool {
        let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
        if said.get(key).is_some_and(|m| m == message) {
            return false;
        }
        said.insert(key.to_string(), message.to_string());
        true
    }

    /// Forgets `key`: the problem is gone, and its next message will be said.
    pub fn forget(&self, key: &str) {
        self.said
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }

    /// Forgets every key that starts with `prefix` (an object's topics, when it is deleted).
    pub fn forget_prefixed(&self, prefix: &str) {
        self.said
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k, _| !k.starts_with(prefix));
    }

    /// For problems reported as a set each pass (objects a pass skipped, for example): which
    /// of `messages` were not in the previous pass's set for `topic`. The set is remembered,
    /// so a problem that goes away and comes back is news again.
    ///
    /// ```
    /// use ocm_api::repeats::LastSaid;
    /// let said = LastSaid::default();
    /// assert_eq!(said.news("skipped", ["a".to_string(), "b".into()]), ["a", "b"]);
    /// assert!(said.news("skipped", ["b".to_string(), "a".into()]).is_empty());
    /// assert_eq!(said.news("skipped", ["b".to_string(), "c".into()]), ["c"]);
    /// assert!(said.news("skipped", Vec::<String>::new()).is_empty());
    /// assert_eq!(said.news("skipped", ["b".to_string()]), ["b"]);
    /// ```
    pub fn news(&self, topic: &str, messages: impl IntoIterator<Item = String>) -> Vec<String> {
        let prefix = format!("{topic}\u{0}");
        let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
        let current: Vec<String> = messages.into_iter().collect();
        let keys: std::collections::HashSet<String> =
            current.iter().map(|m| format!("{prefix}{m}")).collect();
        said.retain(|k, _| !k.starts_with(&prefix) || keys.contains(k));
        let mut news = Vec::new();
        for message in current {
            let key = format!("{prefix}{message}");
            if let std::collections::hash_map::Entry::Vacant(slot) = said.entry(key) {
                slot.insert(String::new());
                news.push(message);
            }
        }
        news
    }

    /// How many keys hold a message.
    pub fn len(&self) -> usize {
        self.said.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no key holds a message.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::LastSaid;

    #[test]
    fn keys_are_independent_and_prefixes_forget_topics() {
        let said = LastSaid::default();
        assert!(said.changed("ns/a#revision", "gone"));
        assert!(said.changed("ns/a#stall", "stuck"));
        assert!(said.changed("ns/b#stall", "stuck"));
        assert!(!said.changed("ns/a#stall", "stuck"));
        said.forget_prefixed("ns/a#");
        assert_eq!(said.len(), 1);
        assert!(said.changed("ns/a#stall", "stuck"));
        assert!(!said.changed("ns/b#stall", "stuck"));
    }
}
