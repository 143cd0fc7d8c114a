//! The feedback-watch registry: which works watch which resources (`feedbackScrapeType:
//! Watch`), so that a change to such a resource refreshes those works' status at once.
//!
//! At most [`AgentConfig::max_feedback_watch`](super::AgentConfig::max_feedback_watch)
//! informers serve watches; beyond that, resources are polled at every status sync, as
//! upstream does silently. An informer nobody watches any more stops, unless cached reads use
//! it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

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

/// Resources whose feedback is watched, and by which works; shared by the status stage
/// (which registers) and the informer listener (which asks who watches a resource).
#[derive(Default)]
pub(crate) struct WatchRegistry {
    inner: Mutex<Registrations>,
}

/// `group/resource/version/namespace/name` → its informer and the works watching it; and how
/// many watched resources each informer serves.
#[derive(Default)]
struct Registrations {
    works: HashMap<String, (InformerKey, BTreeSet<String>)>,
    informers: HashMap<InformerKey, usize>,
}

impl WatchRegistry {
    fn lock(&self) -> MutexGuard<'_, Registrations> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether any work watches the resource `key`.
    pub(crate) fn is_watched(&self, key: &str) -> bool {
        self.lock().works.contains_key(key)
    }

    /// Registers `work`'s interest in the resource `key`; false when the informer limit
    /// `max_informers` is reached or no informer can be started (the resource is then
    /// polled).
    pub(crate) fn register(
        &self,
        objects: &SpokeObjects,
        max_informers: usize,
        work: &str,
        key: &str,
        resolved: &ResolvedResource,
        namespace: &str,
    ) -> bool {
        let informer = InformerKey::of(resolved, namespace);
        let mut registrations = self.lock();
        if let Some(entry) = registrations.works.get_mut(key) {
            entry.1.insert(work.to_string());
            return true;
        }
        let known = registrations.informers.contains_key(&informer);
        if !known && registrations.informers.len() >= max_informers {
            return false;
        }
        if objects.informer(resolved, namespace).is_none() {
            return false;
        }
        *registrations.informers.entry(informer.clone()).or_default() += 1;
        registrations.works.insert(
            key.to_string(),
            (informer, BTreeSet::from([work.to_string()])),
        );
        true
    }

    /// Drops `work`'s registrations other than `keep`; returns the informers nobody needs any
    /// more.
    pub(crate) fn retain(&self, work: &str, keep: &HashSet<String>) -> Vec<InformerKey> {
        let mut registrations = self.lock();
        let mut emptied = Vec::new();
        registrations.works.retain(|key, (informer, works)| {
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
            let left = registrations.informers.get_mut(&informer).map(|n| {
                *n = n.saturating_sub(1);
                *n
            });
            if left == Some(0) {
                registrations.informers.remove(&informer);
                unused.push(informer);
            }
        }
        unused
    }

    /// The works watching the resource `key`.
    pub(crate) fn watching(&self, key: &str) -> Vec<String> {
        self.lock()
            .works
            .get(key)
            .map(|(_, works)| works.iter().cloned().collect())
            .unwrap_or_default()
    }
}
