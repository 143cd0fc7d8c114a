//! Eviction of unmanaged AppliedManifestWorks (upstream's unmanaged-AppliedManifestWork
//! controller): a record of this agent whose ManifestWork is gone from the hub (or that another
//! hub wrote) is deleted with its resources after the eviction grace period.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::{DeleteParams, Patch, PatchParams};
use ocm_api::work::v1::AppliedManifestWork;
use serde_json::json;

use super::read::list_decoded;
use super::{FINALIZE_RETRY_MIN, KIND_APPLIED_MANIFEST_WORK, WorkAgent, min_duration};
use crate::{Error, Result};

impl WorkAgent {
    /// Evicts this agent's AppliedManifestWorks that no ManifestWork on the hub manages any
    /// more (the work is gone, or the record comes from another hub), after the eviction
    /// grace period; finalizes those being deleted. Returns when to look again.
    pub async fn evict_unmanaged(&self) -> Result<Option<Duration>> {
        const DISABLED: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
        let api = self.applied_works();
        let list: Vec<Arc<AppliedManifestWork>> = match self.applied_cache() {
            // Records that do not decode are left out (the informer reported them).
            Some(cache) => cache.list(),
            None => {
                let (list, failures) = list_decoded::<AppliedManifestWork>(
                    &self.raw_applied_works(),
                    KIND_APPLIED_MANIFEST_WORK,
                )
                .await?;
                for failure in &failures {
                    tracing::warn!(applied_manifest_work = %failure.name, error = %failure.error, "skipped: it does not decode");
                }
                list.into_iter().map(Arc::new).collect()
            }
        };
        let now = self.clock.now_time();
        let mut next: Option<Duration> = None;
        for amw in list {
            if amw.spec.agent_id.as_deref() != Some(self.config.agent_id.as_str()) {
                continue;
            }
            let name = amw.name_any();
            if amw.metadata.deletion_timestamp.is_some() {
                let done = self.finalize_applied_manifest_work(&amw).await?;
                let uid = amw.metadata.uid.clone().unwrap_or_default();
                next = min_duration(
                    next,
                    self.memory.deletion_retry(&uid, !done, FINALIZE_RETRY_MIN),
                );
                continue;
            }
            let started = amw
                .status
                .as_ref()
                .and_then(|s| s.eviction_start_time.clone());
            // A work that exists but does not decode still manages its record: nothing of it
            // is evicted while it cannot be read.
            let managed = name.starts_with(&format!("{}-", self.config.hub_hash))
                && self.work_exists(&amw.spec.manifest_work_name).await?;
            if self.config.eviction_grace_period >= DISABLED || managed {
                if started.is_some() {
                    self.set_eviction_start(&name, None).await?;
                }
                continue;
            }
            let Some(start) = started else {
                self.set_eviction_start(&name, Some(now.clone())).await?;
                next = min_duration(next, Some(self.config.eviction_grace_period));
                continue;
            };
            let grace =
                k8s_openapi::jiff::SignedDuration::try_from(self.config.eviction_grace_period)
                    .unwrap_or(k8s_openapi::jiff::SignedDuration::MAX);
            let deadline = start.0.checked_add(grace).unwrap_or(start.0);
            if now.0 < deadline {
                let left = Duration::try_from(deadline.duration_since(now.0)).unwrap_or_default();
                next = min_duration(next, Some(left));
                continue;
            }
            tracing::info!(applied_manifest_work = %name, "evicting: its ManifestWork is gone");
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => continue,
                Err(e) => return Err(Error::kube(format!("delete AppliedManifestWork {name}"), e)),
            }
            if let Some(deleting) = self.get_applied(&name).await? {
                let done = self.finalize_applied_manifest_work(&deleting).await?;
                let uid = deleting.metadata.uid.clone().unwrap_or_default();
                next = min_duration(
                    next,
                    self.memory.deletion_retry(&uid, !done, FINALIZE_RETRY_MIN),
                );
            }
        }
        Ok(next)
    }

    async fn set_eviction_start(&self, name: &str, time: Option<Time>) -> Result<()> {
        let patched = self
            .applied_works()
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"evictionStartTime": time}})),
            )
            .await
            .map_err(|e| Error::kube(format!("update status of AppliedManifestWork {name}"), e))?;
        self.remember_applied(&patched);
        Ok(())
    }
}
