//! The memo of a work's last complete, error-free sync: the resource versions it saw.
//!
//! While the work, its AppliedManifestWork and every applied resource are still at those
//! versions in the agent's informers, syncing the work again would write nothing and compute
//! the same status, so the [planner](super::plan) skips it. Only kept when informers answer
//! every read (cached reads on, informers synced) and the work has no executor; any change (a
//! new generation, an edit or deletion on the managed cluster, a relist after a lost watch)
//! makes the next sync a full one.

use std::collections::HashMap;

use ocm_api::work::v1::{AppliedManifestWork, ManifestWork};
use serde_json::Value;

use crate::apply::engine::ManifestApply;
use crate::cache::{CacheEntry, ObjectCache, SpokeObjects};

/// What an apply pass leaves for a memo: the AppliedManifestWork's resource version, and each
/// manifest's resource with its ordinal.
pub(crate) type PassMemo = (String, Vec<(i32, MemoEntry)>);

/// The resource version each manifest's resource was read at by a status refresh, by ordinal.
pub(crate) type Observed = HashMap<i32, String>;

/// One applied resource of a memo: its informer, namespace, name and resource version.
pub(crate) type MemoEntry = (ObjectCache<Value>, String, String, String);

/// What one complete, error-free sync of a work saw (see the [module docs](self)).
pub(crate) struct SyncMemo {
    pub(crate) generation: i64,
    pub(crate) work_version: String,
    pub(crate) applied_work_version: String,
    /// Each applied resource's informer, namespace, name and resource version.
    pub(crate) resources: Vec<MemoEntry>,
}

impl SyncMemo {
    /// Whether `work` and what the informers hold now are at the memo's versions.
    pub(crate) fn holds(
        &self,
        work: &ManifestWork,
        applied: Option<&ObjectCache<AppliedManifestWork>>,
        amw: &str,
    ) -> bool {
        work.metadata.generation.unwrap_or(0) == self.generation
            && work.metadata.resource_version.as_deref() == Some(self.work_version.as_str())
            && applied.and_then(|c| c.get("", amw)).is_some_and(|a| {
                a.metadata.resource_version.as_deref() == Some(self.applied_work_version.as_str())
            })
            && self.resources.iter().all(|(cache, ns, name, rv)| {
                cache
                    .get(ns, name)
                    .is_some_and(|o| o.resource_version() == Some(rv.as_str()))
            })
    }
}

/// The informer, namespace, name and resource version of every manifest's resource as the
/// apply pass left it, with the manifest's ordinal; `None` when any manifest failed, has no
/// resource version (ReadOnly) or has no synced informer.
pub(crate) fn memo_resources(
    objects: &SpokeObjects,
    results: &[ManifestApply],
) -> Option<Vec<(i32, MemoEntry)>> {
    results
        .iter()
        .map(|r| {
            let object = r.outcome.as_ref().ok()?;
            let version = object
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)?;
            let resolved = r.resolved.as_ref()?;
            let namespace = r.meta.namespace.clone().unwrap_or_default();
            let cache = objects.informer(resolved, &namespace)?;
            if !cache.is_synced() {
                return None;
            }
            let ns = if resolved.namespaced {
                namespace
            } else {
                String::new()
            };
            Some((
                r.meta.ordinal,
                (cache, ns, r.meta.name.clone()?, version.to_string()),
            ))
        })
        .collect()
}

/// Whether the status refresh read every memo entry at the version the apply pass left it
/// (`observed`: the resource version each manifest's resource was read at, by ordinal). An
/// informer that had not caught up yet (its first list older than the apply, say) answered
/// with an older copy or none, and a memo would keep that status until the resource changes
/// again.
pub(crate) fn confirmed(entries: &[(i32, MemoEntry)], observed: &Observed) -> bool {
    entries.iter().all(|(ordinal, (_, _, _, version))| {
        observed.get(ordinal).is_some_and(|seen| seen == version)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(ordinal: i32, version: &str) -> (i32, MemoEntry) {
        (
            ordinal,
            (
                ObjectCache::empty(),
                "default".to_string(),
                format!("cm{ordinal}"),
                version.to_string(),
            ),
        )
    }

    #[test]
    fn a_memo_stands_only_when_the_refresh_saw_every_version() {
        let entries = [entry(0, "5"), entry(1, "7")];
        let seen = |pairs: &[(i32, &str)]| -> HashMap<i32, String> {
            pairs.iter().map(|(o, v)| (*o, v.to_string())).collect()
        };
        assert!(confirmed(&entries, &seen(&[(0, "5"), (1, "7")])));
        // An informer behind the apply answered an older copy, or none.
        assert!(!confirmed(&entries, &seen(&[(0, "5"), (1, "6")])));
        assert!(!confirmed(&entries, &seen(&[(0, "5")])));
        assert!(confirmed(&[], &seen(&[])));
    }

    #[test]
    fn a_memo_holds_while_every_version_is_unchanged() {
        let work: ManifestWork = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "w", "namespace": "c", "generation": 2, "resourceVersion": "10"},
            "spec": {}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let applied = ObjectCache::<AppliedManifestWork>::empty();
        let memo = SyncMemo {
            generation: 2,
            work_version: "10".into(),
            applied_work_version: "3".into(),
            resources: vec![],
        };
        // The AppliedManifestWork is not in the informer: the memo does not hold.
        assert!(!memo.holds(&work, Some(&applied), "h-w"));
        assert!(!memo.holds(&work, None, "h-w"));
        let amw: AppliedManifestWork = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "h-w", "resourceVersion": "3"},
            "spec": {"hubHash": "h", "manifestWorkName": "w"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        applied.insert(amw);
        assert!(memo.holds(&work, Some(&applied), "h-w"));
        let mut newer = work.clone();
        newer.metadata.resource_version = Some("11".into());
        assert!(!memo.holds(&newer, Some(&applied), "h-w"));
        let mut next = work;
        next.metadata.generation = Some(3);
        assert!(!memo.holds(&next, Some(&applied), "h-w"));
    }
}
