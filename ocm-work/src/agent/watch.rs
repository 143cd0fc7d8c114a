//! The feedback-watch registry: which works watch which resources (`feedbackScrapeType:
//! Watch`), so that a change to such a resource refreshes those works' status at once.
//!
//! At most [`AgentConfig::max_feedback_watch`](super::AgentConfig::max_feedback_watch)
//! informers serve watches; beyond that, resources are polled at every status sync, as
//! upstream does silently. An informer nobody watches any more stops, unless cached reads use
//! it.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::cache::{InformerKey, SpokeObjects};
use crate::discovery::ResolvedResource;

/// The key of one watched resource: `group/resource/version/namespace/name`.
pub(crate) fn watch_key(
    group: &str,
    resource: &str,
    version: &str,
    namespace: &str,
    name: &str,
) -> String {
    format!("{group}/{resource}/{version}/{namespace}/{name}")
}

/// Resources whose feedback is watched: `group/resource/version/namespace/name` → works.
#[derive(Default)]
pub(crate) struct WatchRegistry {
    works: HashMap<String, (InformerKey, BTreeSet<String>)>,
    informers: HashMap<InformerKey, usize>,
}

impl WatchRegistry {
    /// Whether any work watches the resource `key`.
    pub(crate) fn is_watched(&self, key: &str) -> bool {
        self.works.contains_key(key)
    }

    /// Registers `work`'s interest in the resource `key`; false when the informer limit
    /// `max_informers` is reached or no informer can be started (the resource is then
    /// polled).
    pub(crate) fn register(
        &mut self,
        objects: &SpokeObjects,
        max_informers: usize,
        work: &str,
        key: &str,
        resolved: &ResolvedResource,
        namespace: &str,
    ) -> bool {
        let informer = InformerKey::of(resolved, namespace);
        if let Some(entry) = self.works.get_mut(key) {
            entry.1.insert(work.to_string());
            return true;
        }
        let known = self.informers.contains_key(&informer);
        if !known && self.informers.len() >= max_informers {
            return false;
        }
        if objects.informer(resolved, namespace).is_none() {
            return false;
        }
        *self.informers.entry(informer.clone()).or_default() += 1;
        self.works.insert(
            key.to_string(),
            (informer, BTreeSet::from([work.to_string()])),
        );
        true
    }

    /// Drops `work`'s registrations other than `keep`; returns the informers nobody needs any
    /// more.
    pub(crate) fn retain(&mut self, work: &str, keep: &HashSet<String>) -> Vec<InformerKey> {
        let mut emptied = Vec::new();
        self.works.retain(|key, (informer, works)| {
            if !keep.contains(key) {
                works.remove(work);
            }
            if works.is_empty() {
                emptied.push(informer.clone());
                false
            } else {
                true
            }
        });
        let mut unused = Vec::new();
        for informer in emptied {
            let left = self.informers.get_mut(&informer).map(|n| {
                *n = n.saturating_sub(1);
                *n
            });
            if left == Some(0) {
                self.informers.remove(&informer);
                unused.push(informer);
            }
        }
        unused
    }

    /// The works watching the resource `key`.
    pub(crate) fn watching(&self, key: &str) -> Vec<String> {
        self.works
            .get(key)
            .map(|(_, works)| works.iter().cloned().collect())
            .unwrap_or_default()
    }
}
