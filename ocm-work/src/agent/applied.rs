//! AppliedManifestWork bookkeeping and garbage collection (upstream's AppliedManifestWork
//! reconciler): after an apply pass the AppliedManifestWork's `appliedResources` list what the
//! work applied, and resources no longer in the work are deleted ([`super::gc`]). A resource
//! whose deletion was accepted stays listed until a later pass sees it gone, and meanwhile the
//! work is applied again after [`PENDING_DELETION_RETRY_MIN`], doubling up to
//! [`SYNC_RETRY_MAX`](super::SYNC_RETRY_MAX).
//!
//! Resources an apply pass created or kept whose record failed to be written are remembered
//! by the running agent (our addition), so a work that drops them before a record succeeds
//! still gets them collected.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use ocm_api::work::v1::{
    AppliedManifestResourceMeta, AppliedManifestWork, AppliedManifestWorkStatus,
};
use serde_json::{Value, json};

use super::{PENDING_DELETION_RETRY_MIN, WorkAgent, gc};
use crate::apply::engine::ManifestApply;
use crate::{Error, Result};

/// What [`WorkAgent::track_applied_resources`] did.
#[derive(Debug, Default)]
pub(super) struct Tracked {
    /// The AppliedManifestWork's resource version after the update.
    pub(super) version: Option<String>,
    /// Whether removed resources are still being deleted.
    pub(super) pending_deletion: bool,
}

/// Resources an apply pass created or kept whose AppliedManifestWork record failed to be
/// written, by AppliedManifestWork name: the next bookkeeping pass counts them as tracked, so
/// a work that drops them meanwhile still gets them collected.
#[derive(Default)]
pub(super) struct Unrecorded {
    by_applied_work: Mutex<HashMap<String, Vec<AppliedManifestResourceMeta>>>,
}

impl Unrecorded {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<AppliedManifestResourceMeta>>> {
        self.by_applied_work
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The resources not yet recorded in the AppliedManifestWork `name`.
    fn of(&self, name: &str) -> Vec<AppliedManifestResourceMeta> {
        self.lock().get(name).cloned().unwrap_or_default()
    }

    /// Remembers `resources` as what the AppliedManifestWork `name` should have recorded.
    fn keep(&self, name: String, resources: Vec<AppliedManifestResourceMeta>) {
        self.lock().insert(name, resources);
    }

    /// Forgets what the AppliedManifestWork `name` has not recorded (it has now, or it is
    /// gone).
    pub(super) fn forget(&self, name: &str) {
        self.lock().remove(name);
    }
}

impl WorkAgent {
    /// When to apply `work_uid` again because resources of it are still being deleted
    /// (`pending`), doubling from [`PENDING_DELETION_RETRY_MIN`] up to [`SYNC_RETRY_MAX`](super::SYNC_RETRY_MAX);
    /// `None` (and the backoff reset) once nothing is pending.
    pub(super) fn pending_deletion_retry(&self, work_uid: &str, pending: bool) -> Option<Duration> {
        self.memory
            .deletion_retry(work_uid, pending, PENDING_DELETION_RETRY_MIN)
    }

    /// Updates `appliedResources` and deletes resources that left the work (upstream §4.3).
    /// Resources whose deletion was accepted but that still exist (or that the server
    /// answered as deleted, until a later pass sees them gone) stay in `appliedResources`.
    pub(super) async fn track_applied_resources(
        &self,
        amw: &AppliedManifestWork,
        results: &[ManifestApply],
    ) -> Result<Tracked> {
        if amw.metadata.deletion_timestamp.is_some() {
            return Ok(Tracked::default());
        }
        let mut current = self.applied_now(results).await?;
        let amw_name = amw.name_any();
        let mut previous = amw
            .status
            .as_ref()
            .and_then(|s| s.applied_resources.clone())
            .unwrap_or_default();
        // What an earlier pass applied but failed to record (our addition: upstream's agent
        // leaves such resources behind when the work drops them before a record succeeds).
        previous.extend(self.unrecorded.of(&amw_name));
        let gone = gc::untracked(&previous, &current);
        let owner_uid = amw.metadata.uid.clone().unwrap_or_default();
        let (pending, errors) = self.collect(&gone, &owner_uid).await;
        let pending_deletion = !pending.is_empty();
        if pending_deletion {
            tracing::debug!(applied_manifest_work = %amw.name_any(), pending = pending.len(), "resources still being deleted");
        }
        current.extend(pending);
        gc::sort_applied(&mut current);
        current.dedup();
        let new_status = AppliedManifestWorkStatus {
            applied_resources: Some(current),
            eviction_start_time: amw
                .status
                .as_ref()
                .and_then(|s| s.eviction_start_time.clone()),
        };
        let mut version = amw.metadata.resource_version.clone();
        if amw.status.as_ref() != Some(&new_status) {
            let name = amw_name.clone();
            let patched = match self
                .applied_works()
                .patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": new_status})),
                )
                .await
            {
                Ok(patched) => patched,
                Err(e) => {
                    if matches!(&e, kube::Error::Api(s) if s.code == 404) {
                        // Gone from the cluster (the informer's copy was stale): the next
                        // apply pass creates it again.
                        self.forget_applied(&name);
                    }
                    self.unrecorded
                        .keep(amw_name, new_status.applied_resources.unwrap_or_default());
                    return Err(Error::kube(
                        format!("update status of AppliedManifestWork {name}"),
                        e,
                    ));
                }
            };
            version = patched.metadata.resource_version.clone();
            self.remember_applied(&patched);
        }
        self.unrecorded.forget(&amw_name);
        gc::into_result(errors)?;
        Ok(Tracked {
            version,
            pending_deletion,
        })
    }

    /// What `results` applied, as `appliedResources` entries: each manifest's resource with
    /// the uid the apply returned, or (ReadOnly, failed) the live object's uid; a manifest
    /// whose resource does not exist is left out.
    async fn applied_now(
        &self,
        results: &[ManifestApply],
    ) -> Result<Vec<AppliedManifestResourceMeta>> {
        let mut current = Vec::new();
        for r in results {
            let (Some(resource), Some(version), Some(name)) =
                (&r.meta.resource, &r.meta.version, &r.meta.name)
            else {
                continue;
            };
            let uid = match &r.outcome {
                Ok(obj) => obj
                    .pointer("/metadata/uid")
                    .and_then(|u| u.as_str())
                    .map(str::to_string),
                Err(_) => None,
            };
            let uid = match uid {
                Some(uid) => Some(uid),
                None => {
                    // ReadOnly or failed: record the live object's uid if it exists.
                    let Some(resolved) = &r.resolved else {
                        continue;
                    };
                    match self
                        .engine
                        .get_live(
                            resolved,
                            r.meta.namespace.as_deref().unwrap_or_default(),
                            name,
                        )
                        .await
                    {
                        Ok(Some(live)) => live
                            .pointer("/metadata/uid")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        Ok(None) => continue,
                        Err(e) => return Err(Error::kube(format!("get {resource} {name}"), e)),
                    }
                }
            };
            // Upstream writes `group` and `namespace` even when empty (core group,
            // cluster-scoped), as its hub and tools read them.
            current.push(AppliedManifestResourceMeta {
                group: Some(r.meta.group.clone().unwrap_or_default()),
                version: version.clone(),
                resource: resource.clone(),
                namespace: Some(r.meta.namespace.clone().unwrap_or_default()),
                name: name.clone(),
                uid,
            });
        }
        Ok(current)
    }

    /// Deletes `resources` owned by the AppliedManifestWork with uid `owner_uid` through the
    /// engine's reader ([`gc::delete_applied_resources`]): the resources still pending and the
    /// errors.
    pub(super) async fn collect(
        &self,
        resources: &[AppliedManifestResourceMeta],
        owner_uid: &str,
    ) -> (Vec<AppliedManifestResourceMeta>, Vec<Error>) {
        let reader = self.engine.reader();
        gc::delete_through(reader, resources, owner_uid, &|verb| reader.count(verb)).await
    }
}
