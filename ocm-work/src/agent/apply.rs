//! Applying a ManifestWork (upstream's ManifestWork controller): the AppliedManifestWork
//! `<hub hash>-<work name>` is created or its spec updated, every manifest is applied by the
//! engine's appliers ([`crate::apply`]), and the AppliedManifestWork records what was applied
//! ([`super::applied`]).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams, PostParams};
use ocm_api::constants::finalizers;
use ocm_api::work::v1::{AppliedManifestWork, AppliedManifestWorkSpec, ManifestWork};
use serde_json::json;

use super::memo::{PassMemo, memo_resources};
use super::read::undecodable;
use super::{KIND_APPLIED_MANIFEST_WORK, WorkAgent};
use crate::apply::engine::{ApplyError, ManifestApply};
use crate::identity::applied_manifest_work_name;
use crate::owner::applied_manifest_work_ref;
use crate::{Error, Result};

/// What an apply pass did.
pub(super) struct ApplyPass {
    /// Every manifest's result, in manifest order.
    pub(super) results: Vec<ManifestApply>,
    /// When to apply the work again.
    pub(super) retry: Duration,
    /// When to look again at resources of the work still being deleted, if any are.
    pub(super) pending_retry: Option<Duration>,
    /// The inputs of a memo (the AppliedManifestWork's resource version and every resource's
    /// informer entry), when the whole pass read from synced informers and nothing is pending
    /// deletion.
    pub(super) memo: Option<PassMemo>,
    /// Why recording the applied resources failed, if it did.
    pub(super) record_error: Option<Error>,
}

impl WorkAgent {
    /// Applies `work`: the AppliedManifestWork, every manifest, and the record of what was
    /// applied (with the garbage collection of what left the work). A failed record does not
    /// stop the pass: its error is returned in [`ApplyPass::record_error`] once the results
    /// are known, so that they still reach the work's status.
    pub(super) async fn apply_pass(&self, work: &ManifestWork) -> Result<ApplyPass> {
        let amw = self.ensure_applied_manifest_work(work).await?;
        let owner = applied_manifest_work_ref(
            &amw.name_any(),
            &amw.metadata.uid.clone().unwrap_or_default(),
        );
        let results = self.engine.apply_work(work, &owner).await;
        let uid = work.metadata.uid.as_deref().unwrap_or_default();
        let mut pass = ApplyPass {
            retry: self.planner().retry_after(&results, None),
            pending_retry: None,
            results,
            memo: None,
            record_error: None,
        };
        // Upstream's AppliedManifestWork bookkeeping waits until the work shows an `Applied`
        // condition: a work without manifests that never had one (a work recreated empty
        // on a new hub of the same hash, say) leaves the resources recorded there alone.
        let never_applied = pass.results.is_empty()
            && !work
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_deref())
                .is_some_and(|c| {
                    ocm_api::conditions::find(c, ocm_api::constants::work::CONDITION_APPLIED)
                        .is_some()
                });
        if never_applied {
            return Ok(pass);
        }
        match self.track_applied_resources(&amw, &pass.results).await {
            Ok(tracked) => match self.pending_deletion_retry(uid, tracked.pending_deletion) {
                // Resources still being deleted: look again soon, never from a memo.
                Some(delay) => {
                    pass.retry = self.planner().retry_after(&pass.results, Some(delay));
                    pass.pending_retry = Some(delay);
                }
                None => {
                    pass.memo = tracked.version.and_then(|v| {
                        let objects = self.engine.object_cache()?;
                        memo_resources(objects, &pass.results).map(|r| (v, r))
                    });
                }
            },
            Err(e) => pass.record_error = Some(e),
        }
        for r in &pass.results {
            if let Err(ApplyError::Api(m)) = &r.outcome {
                tracing::debug!(work = %work.name_any(), ordinal = r.meta.ordinal, error = %m, "manifest not applied");
            }
        }
        Ok(pass)
    }

    pub(super) async fn ensure_applied_manifest_work(
        &self,
        work: &ManifestWork,
    ) -> Result<Arc<AppliedManifestWork>> {
        let name = applied_manifest_work_name(&self.config.hub_hash, &work.name_any());
        let spec = AppliedManifestWorkSpec {
            hub_hash: self.config.hub_hash.clone(),
            agent_id: Some(self.config.agent_id.clone()),
            manifest_work_name: work.name_any(),
        };
        let api = self.applied_works();
        let mut fresh = false;
        loop {
            let cached = !fresh && self.applied_cache().is_some();
            let existing = match self.applied_cache().filter(|_| !fresh) {
                Some(cache) => {
                    if let Some(failure) = cache.undecodable_object("", &name) {
                        return Err(undecodable(KIND_APPLIED_MANIFEST_WORK, &failure));
                    }
                    cache.get("", &name)
                }
                None => self.get_applied(&name).await?.map(Arc::new),
            };
            let written = match existing {
                Some(existing) if existing.spec == spec => return Ok(existing),
                Some(_) => match api
                    .patch(
                        &name,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"spec": spec})),
                    )
                    .await
                {
                    Ok(patched) => patched,
                    // The informer's copy is gone from the cluster: create it afresh.
                    Err(kube::Error::Api(s)) if cached && s.code == 404 => {
                        self.forget_applied(&name);
                        fresh = true;
                        continue;
                    }
                    Err(e) => {
                        return Err(Error::kube(format!("update AppliedManifestWork {name}"), e));
                    }
                },
                None => {
                    let amw = AppliedManifestWork {
                        metadata: ObjectMeta {
                            name: Some(name.clone()),
                            labels: work.metadata.labels.clone(),
                            finalizers: Some(vec![
                                finalizers::APPLIED_MANIFEST_WORK_CLEANUP.to_string(),
                            ]),
                            ..ObjectMeta::default()
                        },
                        spec: spec.clone(),
                        status: None,
                    };
                    match api.create(&PostParams::default(), &amw).await {
                        Ok(created) => created,
                        // The informer had not seen it yet.
                        Err(kube::Error::Api(s)) if cached && s.code == 409 => {
                            fresh = true;
                            continue;
                        }
                        Err(e) => {
                            return Err(Error::kube(
                                format!("create AppliedManifestWork {name}"),
                                e,
                            ));
                        }
                    }
                }
            };
            self.remember_applied(&written);
            return Ok(Arc::new(written));
        }
    }
}
