//! Upstream's finalize and add-finalizer reconcilers: the cleanup finalizer a replica set
//! carries while it has works, added before the first work is written and removed once its
//! works are gone.

use super::*;

impl ReplicaSetController {
    /// Adds the cleanup finalizer, guarded by the resourceVersion the caller read (upstream's
    /// patch). Returns the replica set as the patch left it, so that the reconcile goes on
    /// without waiting for the watch to bring it back. A cache that lags behind the server
    /// (a busy watch, one that dropped and relists) hands in an old resourceVersion: the
    /// conflict is not an error, the replica set is read again and the patch retried once.
    /// `None`: the replica set is gone or being deleted.
    pub(super) async fn add_finalizer(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<Option<ManifestWorkReplicaSet>> {
        let name = replica_set.name_any();
        let namespace = replica_set.namespace().unwrap_or_default();
        let failed = |e| {
            Error::kube(
                format!("add finalizer to ManifestWorkReplicaSet {namespace}/{name}"),
                e,
            )
        };
        let mut current = replica_set.clone();
        for attempt in 0..2 {
            let mut list = current.finalizers().to_vec();
            list.push(finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP.to_string());
            let patch = json!({"metadata": {
                "uid": current.metadata.uid,
                "resourceVersion": current.metadata.resource_version,
                "finalizers": list,
            }});
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(patched) => {
                    self.remember_finalizer(&current);
                    return self.decoder.answer(KIND, patched).await.map(Some);
                }
                Err(kube::Error::Api(status)) if status.code == 409 && attempt == 0 => {
                    match self
                        .decoder
                        .get::<ManifestWorkReplicaSet>(api, KIND, &name)
                        .await?
                    {
                        Some(fresh) if fresh.metadata.deletion_timestamp.is_some() => {
                            return Ok(None);
                        }
                        Some(fresh) if has_cleanup_finalizer(&fresh) => return Ok(Some(fresh)),
                        Some(fresh) => current = fresh,
                        None => return Ok(None),
                    }
                }
                Err(kube::Error::Api(status)) if status.code == 404 => return Ok(None),
                Err(e) => return Err(failed(e)),
            }
        }
        Ok(None)
    }

    pub(super) async fn finalize(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<ReconcileOutcome> {
        if !replica_set
            .finalizers()
            .iter()
            .any(|f| f == finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP)
        {
            return Ok(ReconcileOutcome::default());
        }
        let owner = owner_label(replica_set);
        // Only the names are kept of each work (whether it decodes or not).
        let works = self
            .fold_owned_works(&owner, Vec::new, |names, work| {
                names.push((
                    work.meta().namespace.clone().unwrap_or_default(),
                    work.meta().name.clone().unwrap_or_default(),
                ));
            })
            .await?;
        let mut errors = Vec::new();
        for (namespace, name) in &works {
            if let Err(e) = self.delete_named_work(namespace, name).await {
                errors.push(e);
            }
        }
        Error::aggregate(errors)?;
        let foreground =
            replica_set.spec.cascade_deletion_policy == Some(CascadeDeletionPolicy::Foreground);
        if foreground && self.any_owned_work(&owner).await? {
            return Ok(ReconcileOutcome {
                requeue_after: Some(Duration::from_secs(1)),
            });
        }
        self.remove_finalizer(api, replica_set).await?;
        if let Some(uid) = &replica_set.metadata.uid {
            self.finalizer_memory().remove(uid);
        }
        let key = format!(
            "{}/{}#",
            replica_set.namespace().unwrap_or_default(),
            replica_set.name_any()
        );
        self.said.forget_prefixed(&key);
        Ok(ReconcileOutcome::default())
    }

    pub(super) fn finalizer_memory(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.finalizer_added
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Whether this controller added its finalizer on top of exactly this version.
    pub(super) fn added_finalizer_over(&self, replica_set: &ManifestWorkReplicaSet) -> bool {
        let (Some(uid), Some(version)) = (
            replica_set.metadata.uid.as_ref(),
            replica_set.metadata.resource_version.as_ref(),
        ) else {
            return false;
        };
        self.finalizer_memory().get(uid) == Some(version)
    }

    pub(super) fn remember_finalizer(&self, patched_over: &ManifestWorkReplicaSet) {
        if let (Some(uid), Some(version)) = (
            patched_over.metadata.uid.clone(),
            patched_over.metadata.resource_version.clone(),
        ) {
            self.finalizer_memory().insert(uid, version);
        }
    }

    /// Removes the cleanup finalizer, guarded by the resourceVersion read; on a conflict (a
    /// cache behind the server) the replica set is read again and the patch retried once.
    pub(super) async fn remove_finalizer(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<()> {
        let name = replica_set.name_any();
        let failed = |e| {
            Error::kube(
                format!("remove finalizer from ManifestWorkReplicaSet {name}"),
                e,
            )
        };
        let mut current = replica_set.clone();
        for attempt in 0..2 {
            let remaining: Vec<String> = current
                .finalizers()
                .iter()
                .filter(|f| *f != finalizers::MANIFEST_WORK_REPLICA_SET_CLEANUP)
                .cloned()
                .collect();
            let patch = json!({"metadata": {
                "uid": current.metadata.uid,
                "resourceVersion": current.metadata.resource_version,
                "finalizers": remaining,
            }});
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(status)) if status.code == 409 && attempt == 0 => {
                    // Only its identity and finalizers are needed: read whether it decodes
                    // or not.
                    match api.get_opt(&name).await.map_err(&failed)? {
                        Some(fresh) => {
                            let fresh = lifecycle(&fresh);
                            if !has_cleanup_finalizer(&fresh) {
                                return Ok(());
                            }
                            current = fresh;
                        }
                        None => return Ok(()),
                    }
                }
                Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
                Err(e) => return Err(failed(e)),
            }
        }
        Ok(())
    }
}
