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

use kube::ResourceExt;
use ocm_api::work::v1::ManifestWork;

use super::WorkAgent;

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

impl WorkAgent {
    fn lock_identities(&self) -> std::sync::MutexGuard<'_, HashMap<String, WorkIdentity>> {
        self.identities.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that the agent syncs `work` under its name; when it remembered another work
    /// under that name (see the [module docs](self)), that work's memory is dropped first.
    pub(super) fn recognize(&self, work: &ManifestWork) {
        let identity = WorkIdentity::of(work);
        let previous = self
            .lock_identities()
            .insert(work.name_any(), identity.clone());
        if let Some(previous) = previous
            && previous != identity
        {
            tracing::info!(
                work = %work.name_any(),
                previous_uid = %previous.uid,
                uid = %identity.uid,
                "another ManifestWork under a known name: what the agent remembered of the old one is dropped"
            );
            self.forget_uid(&previous.uid);
        }
    }

    /// Drops what the agent remembers about the work with uid `uid`: when it last applied
    /// it, the memo of its last sync and the backoff of its pending deletions.
    pub(super) fn forget_uid(&self, uid: &str) {
        self.lock_applied().remove(uid);
        self.lock_memos().remove(uid);
        self.pending_deletion_retry(uid, false);
    }

    /// Drops everything the agent remembers about the work `name`, which the informer no
    /// longer holds: its memory by uid, its retry backoff and its feedback watches.
    pub(super) fn forget_work(&self, name: &str) {
        if let Some(identity) = self.lock_identities().remove(name) {
            self.forget_uid(&identity.uid);
        }
        self.lock_retries().remove(name);
        self.retain_watches(name, &HashSet::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentConfig;
    use crate::agent::plan::LastApply;
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
        agent.last_apply(uid).is_some()
    }

    fn remember(agent: &WorkAgent, uid: &str) {
        agent.lock_applied().insert(
            uid.to_string(),
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
        assert!(agent.lock_identities().is_empty());
    }
}
