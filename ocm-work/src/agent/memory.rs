//! What the running agent remembers about each work between syncs, and when it forgets it.
//!
//! Between syncs the agent keeps, per work, when it last applied it ([`super::plan::LastApply`]),
//! the memo of its last sync ([`super::memo`]) and the backoff of resources still being
//! deleted, all by the work's uid. That memory stands for what the hub and the managed cluster
//! held when it was written; it must never outlive the work it describes. It is dropped:
//!
//! * when the work is finalized;
//! * when the agent's ManifestWork informer drops the work (deleted, or gone from the hub's
//!   list after the hub lost its state): nothing of it is kept, whatever comes later under the
//!   same name;
//! * when the work the agent syncs under a name is not the one it remembers: another uid, or
//!   the same uid with another creation time (a hub restarted empty that hands out uids again
//!   gives a new work an old work's uid, but not its creation time);
//! * when the work lacks the agent's cleanup finalizer: the agent adds it before anything
//!   else, as to a new work, so a work whose copy on the hub lost the finalizer (a hub restored
//!   from an older backup, say) is applied again like a new one. Upstream's ManifestWork
//!   controller applies a work whenever its finalizer is added, too.
//!
//! With the memory gone, the next sync applies the work, and the AppliedManifestWork
//! `<hub hash>-<work name>` (the same name for a new work under an old name) has its recorded
//! resources collected by uid: those the new work no longer asks for are deleted if they are
//! still owned by that AppliedManifestWork and still the very objects recorded.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use kube::ResourceExt;
use ocm_api::work::v1::ManifestWork;

use super::memo::SyncMemo;
use super::plan::LastApply;
use super::{SYNC_RETRY_MAX, WorkAgent};
use crate::cache::RetryBackoff;

/// Which work the agent remembers under a name: its uid and creation time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct WorkIdentity {
    uid: String,
    created: Option<String>,
}

impl WorkIdentity {
    fn of(work: &ManifestWork) -> Self {
        Self {
            uid: work.metadata.uid.clone().unwrap_or_default(),
            created: work
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.to_string()),
        }
    }
}

/// What the agent remembers between syncs (see the [module docs](self)), under one lock so
/// that forgetting a work drops all of it at once. The planner reads it through
/// [`WorkMemory::last_apply`] and [`WorkMemory::memo_holds`]; the sync writes it back.
#[derive(Default)]
pub(super) struct WorkMemory {
    inner: Mutex<Remembered>,
}

#[derive(Default)]
struct Remembered {
    /// Which work each name stands for.
    identities: HashMap<String, WorkIdentity>,
    /// By work uid: when the work was last applied.
    last_applies: HashMap<String, LastApply>,
    /// By work uid: the memo of the work's last complete sync.
    memos: HashMap<String, SyncMemo>,
    /// By work or AppliedManifestWork uid: the backoff of resources still being deleted.
    deleting: HashMap<String, RetryBackoff>,
}

impl Remembered {
    fn forget_uid(&mut self, uid: &str) {
        self.last_applies.remove(uid);
        self.memos.remove(uid);
        self.deleting.remove(uid);
    }
}

impl WorkMemory {
    fn lock(&self) -> MutexGuard<'_, Remembered> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that the agent syncs `work` under its name; when it remembered another work
    /// under that name, that work's memory is dropped first. Returns the uid of the work
    /// forgotten.
    fn recognize(&self, work: &ManifestWork) -> Option<String> {
        let identity = WorkIdentity::of(work);
        let mut memory = self.lock();
        let previous = memory
            .identities
            .insert(work.name_any(), identity.clone())?;
        if previous == identity {
            return None;
        }
        memory.forget_uid(&previous.uid);
        Some(previous.uid)
    }

    /// Drops what the agent remembers about the work with uid `uid`: when it last applied
    /// it, the memo of its last sync and the backoff of its pending deletions.
    pub(super) fn forget_uid(&self, uid: &str) {
        self.lock().forget_uid(uid);
    }

    /// Drops what the agent remembers about the work it knows as `name`, by uid too.
    fn forget_name(&self, name: &str) {
        let mut memory = self.lock();
        if let Some(identity) = memory.identities.remove(name) {
            memory.forget_uid(&identity.uid);
        }
    }

    /// When the work `uid` was last applied.
    pub(super) fn last_apply(&self, uid: &str) -> Option<LastApply> {
        self.lock().last_applies.get(uid).copied()
    }

    /// Records when the work `uid` was applied and when it is due again.
    pub(super) fn record_apply(&self, uid: &str, last: LastApply) {
        self.lock().last_applies.insert(uid.to_string(), last);
    }

    /// Whether the memo of the work `uid` exists and `holds`.
    pub(super) fn memo_holds(&self, uid: &str, holds: impl FnOnce(&SyncMemo) -> bool) -> bool {
        self.lock().memos.get(uid).is_some_and(holds)
    }

    /// Keeps `memo` as the memo of the work `uid`'s last sync.
    pub(super) fn keep_memo(&self, uid: &str, memo: SyncMemo) {
        self.lock().memos.insert(uid.to_string(), memo);
    }

    /// Drops the memo of the work `uid` (a full sync is under way).
    pub(super) fn drop_memo(&self, uid: &str) {
        self.lock().memos.remove(uid);
    }

    /// When to look at `uid` (a work's or an AppliedManifestWork's) again because resources
    /// of it are still being deleted (`pending`), doubling from `min` up to
    /// [`SYNC_RETRY_MAX`]; `None` (and the backoff reset) once nothing is pending.
    pub(super) fn deletion_retry(
        &self,
        uid: &str,
        pending: bool,
        min: Duration,
    ) -> Option<Duration> {
        let mut memory = self.lock();
        if !pending {
            memory.deleting.remove(uid);
            return None;
        }
        let backoff = memory
            .deleting
            .entry(uid.to_string())
            .or_insert_with(|| RetryBackoff::new(min, SYNC_RETRY_MAX));
        Some(backoff.next().unwrap_or(SYNC_RETRY_MAX))
    }

    #[cfg(test)]
    fn knows_no_name(&self) -> bool {
        self.lock().identities.is_empty()
    }
}

impl WorkAgent {
    /// Records that the agent syncs `work` under its name; when it remembered another work
    /// under that name (see the [module docs](self)), that work's memory is dropped first.
    pub(super) fn recognize(&self, work: &ManifestWork) {
        if let Some(previous_uid) = self.memory.recognize(work) {
            tracing::info!(
                work = %work.name_any(),
                %previous_uid,
                uid = %work.metadata.uid.as_deref().unwrap_or_default(),
                "another ManifestWork under a known name: what the agent remembered of the old one is dropped"
            );
        }
    }

    /// Drops everything the agent remembers about the work `name`, which the informer no
    /// longer holds: its memory by uid, its retry backoff and its feedback watches.
    pub(super) fn forget_work(&self, name: &str) {
        self.memory.forget_name(name);
        self.retries.forget(name);
        self.retain_watches(name, &HashSet::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentConfig;
    use std::time::Instant;

    fn work(uid: &str, created: &str) -> ManifestWork {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "w", "namespace": "cluster1", "uid": uid,
                "creationTimestamp": created},
            "spec": {}
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn remembers(agent: &WorkAgent, uid: &str) -> bool {
        agent.memory.last_apply(uid).is_some()
    }

    fn remember(agent: &WorkAgent, uid: &str) {
        agent.memory.record_apply(
            uid,
            LastApply {
                generation: 1,
                next: Instant::now(),
            },
        );
    }

    #[tokio::test]
    async fn memory_stands_for_one_work_and_is_dropped_for_another() {
        let (hub, spoke) = (
            ocm_testkit::FakeCluster::new(),
            ocm_testkit::FakeCluster::new(),
        );
        let agent = WorkAgent::new(
            hub.client(),
            spoke.client(),
            AgentConfig::new("cluster1", "hash"),
        );
        let first = work("u1", "2030-01-01T00:00:00Z");
        agent.recognize(&first);
        remember(&agent, "u1");
        agent.recognize(&first);
        assert!(remembers(&agent, "u1"), "the same work");

        // The same uid under the same name, created at another time: another work (a hub that
        // restarted empty and hands out uids again).
        agent.recognize(&work("u1", "2030-01-02T00:00:00Z"));
        assert!(!remembers(&agent, "u1"));

        // Another uid under the name: the old uid's memory goes too.
        remember(&agent, "u1");
        agent.recognize(&work("u2", "2030-01-02T00:00:00Z"));
        assert!(!remembers(&agent, "u1"));

        // A work the informer dropped leaves nothing behind.
        remember(&agent, "u2");
        agent.forget_work("w");
        assert!(!remembers(&agent, "u2"));
        assert!(agent.memory.knows_no_name());
    }
}
