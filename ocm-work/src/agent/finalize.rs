//! Finalizers and finalization (upstream's finalizer controllers): the agent's cleanup
//! finalizer is added to every ManifestWork before anything is applied; a ManifestWork being
//! deleted gets `Deleting`, its AppliedManifestWork is deleted, and the finalizer is released
//! once the AppliedManifestWork's resources are gone (or orphaned); an AppliedManifestWork
//! being deleted has its resources deleted and then its own finalizer released.

use kube::ResourceExt;
use kube::api::{DeleteParams, Patch, PatchParams};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::{finalizers, work as wc};
use ocm_api::work::v1::{AppliedManifestWork, ManifestWork};
use serde_json::json;

use super::{FINALIZE_RETRY_MIN, SyncOutcome, WorkAgent, gc};
use crate::identity::applied_manifest_work_name;
use crate::{Error, Result};

impl WorkAgent {
    /// Adds the agent's cleanup finalizer to `work` (upstream's add-finalizer controller),
    /// with the work's uid and resourceVersion as preconditions.
    pub(super) async fn add_finalizer(&self, work: &ManifestWork) -> Result<()> {
        let name = work.name_any();
        let mut list = work.finalizers().to_vec();
        list.push(finalizers::MANIFEST_WORK_CLEANUP.to_string());
        let patch = json!({"metadata": {
            "uid": work.metadata.uid, "resourceVersion": work.metadata.resource_version,
            "finalizers": list,
        }});
        let patched = self
            .works()
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| Error::kube(format!("add finalizer to ManifestWork {name}"), e))?;
        self.remember_work(&patched);
        Ok(())
    }

    /// Finalizes a work being deleted that carries the agent's cleanup finalizer (upstream
    /// §4.4; the [planner](super::plan) decides when).
    pub(super) async fn finalize(&self, work: &ManifestWork) -> Result<SyncOutcome> {
        let name = work.name_any();
        let amw_name = applied_manifest_work_name(&self.config.hub_hash, &name);
        // The AppliedManifestWork goes, and with it (owner references) what it never recorded.
        self.unrecorded.forget(&amw_name);
        let mut resource_version = work.metadata.resource_version.clone();
        let api = self.applied_works();
        let amw = self.get_applied(&amw_name).await?;
        if let Some(amw) = amw {
            if amw.metadata.deletion_timestamp.is_none() {
                let now = self.clock.now_time();
                let mut status = work.status.clone().unwrap_or_default();
                let deleting = NewCondition::new(
                    wc::CONDITION_DELETING,
                    ConditionStatus::True,
                    wc::REASON_WORK_DELETING,
                    wc::MESSAGE_WORK_DELETING,
                )
                .observed_generation(work.metadata.generation.unwrap_or(0));
                if conditions::set(
                    status.conditions.get_or_insert_with(Vec::new),
                    deleting,
                    &now,
                ) {
                    let patched = self
                        .works()
                        .patch_status(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"status": status})),
                        )
                        .await
                        .map_err(|e| {
                            Error::kube(format!("update status of ManifestWork {name}"), e)
                        })?;
                    resource_version = patched.metadata.resource_version;
                }
                api.delete(&amw_name, &DeleteParams::default())
                    .await
                    .map_err(|e| {
                        Error::kube(format!("delete AppliedManifestWork {amw_name}"), e)
                    })?;
            }
            if let Some(amw) = self.get_applied(&amw_name).await? {
                let done = self.finalize_applied_manifest_work(&amw).await?;
                let amw_uid = amw.metadata.uid.clone().unwrap_or_default();
                if let Some(retry) = self
                    .memory
                    .deletion_retry(&amw_uid, !done, FINALIZE_RETRY_MIN)
                {
                    return Ok(SyncOutcome {
                        requeue_after: Some(retry),
                        applied: false,
                    });
                }
            }
        }
        let rest: Vec<String> = work
            .finalizers()
            .iter()
            .filter(|f| *f != finalizers::MANIFEST_WORK_CLEANUP)
            .cloned()
            .collect();
        let patch = json!({"metadata": {"uid": work.metadata.uid, "resourceVersion": resource_version, "finalizers": rest}});
        match self
            .works()
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => {
                return Err(Error::kube(
                    format!("remove finalizer from ManifestWork {name}"),
                    e,
                ));
            }
        }
        // Forget everything about the work.
        self.forget_work(&name);
        self.memory
            .forget_uid(work.metadata.uid.as_deref().unwrap_or_default());
        Ok(SyncOutcome::default())
    }

    /// Deletes the resources of an AppliedManifestWork being deleted; releases its finalizer
    /// once none is pending. Returns whether it is done.
    pub async fn finalize_applied_manifest_work(&self, amw: &AppliedManifestWork) -> Result<bool> {
        let name = amw.name_any();
        if amw.metadata.deletion_timestamp.is_none()
            || !amw
                .finalizers()
                .iter()
                .any(|f| f == finalizers::APPLIED_MANIFEST_WORK_CLEANUP)
        {
            return Ok(true);
        }
        let resources = amw
            .status
            .as_ref()
            .and_then(|s| s.applied_resources.clone())
            .unwrap_or_default();
        let owner_uid = amw.metadata.uid.clone().unwrap_or_default();
        let (pending, errors) = self.collect(&resources, &owner_uid).await;
        let api = self.applied_works();
        if !pending.is_empty() || !errors.is_empty() {
            if pending != resources {
                let status = json!({"status": {"appliedResources": pending}});
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                    .await
                    .map_err(|e| {
                        Error::kube(format!("update status of AppliedManifestWork {name}"), e)
                    })?;
            }
            gc::into_result(errors)?;
            return Ok(false);
        }
        let rest: Vec<String> = amw
            .finalizers()
            .iter()
            .filter(|f| *f != finalizers::APPLIED_MANIFEST_WORK_CLEANUP)
            .cloned()
            .collect();
        let patch = json!({"metadata": {"uid": amw.metadata.uid, "resourceVersion": amw.metadata.resource_version, "finalizers": rest}});
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(true),
            Err(e) => Err(Error::kube(
                format!("remove finalizer from AppliedManifestWork {name}"),
                e,
            )),
        }
    }
}
