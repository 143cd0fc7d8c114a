//! The revision history (the rollback opt-in): the ControllerRevisions recording each
//! template a replica set rolled out, and the templates a pass deploys from them.

use super::*;

impl ReplicaSetController {
    /// The rollback opt-in's first step: records the spec's template as a revision (bumping
    /// `status.collisionCount` on a hash collision), writes `status.updateRevision` (clearing
    /// `abortedTime` when it changes), loads the current revision's template and prunes the
    /// history to `spec.revisionHistoryLimit`.
    pub(super) async fn revisions(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        new_status: &mut ManifestWorkReplicaSetStatus,
    ) -> Result<RollbackPlan> {
        let namespace = replica_set.namespace().unwrap_or_default();
        let name = replica_set.name_any();
        let api = read::api::<ControllerRevision>(&self.client, Some(&namespace));
        let owner = owner_label(replica_set);
        // A revision that does not decode is left out (and logged): it is neither counted
        // nor pruned.
        let (history, _) = self
            .decoder
            .list::<ControllerRevision>(
                &api,
                &ListParams::default()
                    .labels(&format!("{}={owner}", labels::MANIFEST_WORK_REPLICA_SET)),
                KIND_REVISION,
                || format!("list ControllerRevisions of {owner}"),
            )
            .await?;
        let newest = history
            .iter()
            .map(rollback::revision_number)
            .max()
            .unwrap_or(0);
        let template = replica_set
            .spec
            .manifest_work_template
            .clone()
            .unwrap_or_default();
        let mut collisions = new_status.collision_count;
        let mut created = false;
        let mut found = None;
        // A few rounds: a collision moves to the next hash, a lost create race re-reads.
        for _ in 0..8 {
            let hash = rollback::template_hash(&template, collisions);
            let rev_name = rollback::revision_name(&name, &hash);
            let get = self
                .decoder
                .get::<ControllerRevision>(&api, KIND_REVISION, &rev_name)
                .await?;
            match get {
                Some(rev) => {
                    let same =
                        rollback::revision_template(&rev).is_ok_and(|t| spec_equal(&t, &template));
                    if !same {
                        collisions = Some(collisions.unwrap_or(0).saturating_add(1));
                        continue;
                    }
                    if rollback::revision_number(&rev) < newest {
                        let patch = json!({"revision": newest + 1});
                        api.patch(&rev_name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .map_err(|e| {
                                Error::kube(
                                    format!("renumber ControllerRevision {namespace}/{rev_name}"),
                                    e,
                                )
                            })?;
                    }
                    found = Some(hash);
                    break;
                }
                None => {
                    let rev = rollback::build_revision(replica_set, &template, &hash, newest + 1)
                        .map_err(|message| Error::InvalidObject {
                        object: format!("ManifestWorkReplicaSet {namespace}/{name}"),
                        message,
                    })?;
                    let rev = read::to_raw(&rev, || {
                        format!("ControllerRevision {namespace}/{rev_name}")
                    })?;
                    match api.create(&PostParams::default(), &rev).await {
                        Ok(_) => {
                            created = true;
                            found = Some(hash);
                            break;
                        }
                        Err(kube::Error::Api(status)) if status.code == 409 => continue,
                        Err(e) => {
                            return Err(Error::kube(
                                format!("create ControllerRevision {namespace}/{rev_name}"),
                                e,
                            ));
                        }
                    }
                }
            }
        }
        let Some(update) = found else {
            return Err(Error::InvalidObject {
                object: format!("ManifestWorkReplicaSet {namespace}/{name}"),
                message: format!(
                    "no free ControllerRevision name for spec.manifestWorkTemplate after {} \
                     hash collisions",
                    collisions.unwrap_or(0)
                ),
            });
        };
        new_status.collision_count = collisions;
        let changed = new_status.update_revision.as_deref() != Some(update.as_str());
        if changed {
            new_status.aborted_time = None;
        }
        new_status.update_revision = Some(update.clone());

        let mut current = None;
        if let Some(hash) = new_status.current_revision.clone()
            && hash != update
        {
            let rev_name = rollback::revision_name(&name, &hash);
            let rev = match self
                .decoder
                .get::<ControllerRevision>(&api, KIND_REVISION, &rev_name)
                .await
            {
                Ok(rev) => rev.map(Ok),
                // Unusable, as a revision that holds no template.
                Err(Error::Undecodable { message, .. }) => Some(Err(format!(
                    "ControllerRevision {namespace}/{rev_name} cannot be decoded: {message}"
                ))),
                Err(e) => return Err(e),
            };
            let key = format!("{namespace}/{name}#revision");
            match rev.map(|r| r.and_then(|r| rollback::revision_template(&r))) {
                Some(Ok(t)) => {
                    self.said.forget(&key);
                    current = Some((hash, t));
                }
                Some(Err(message)) => {
                    if self.said.changed(&key, &message) {
                        tracing::warn!(%message, revision = %rev_name, "current revision unusable");
                    }
                }
                None => {
                    if self.said.changed(&key, "gone") {
                        tracing::warn!(
                            revision = %rev_name,
                            "the current revision's ControllerRevision is gone: nothing to roll back to"
                        );
                    }
                }
            }
        }

        let keep_update = rollback::revision_name(&name, &update);
        let keep_current = new_status
            .current_revision
            .as_deref()
            .map(|h| rollback::revision_name(&name, h))
            .unwrap_or_default();
        let limit = replica_set
            .spec
            .revision_history_limit
            .unwrap_or(rollback::DEFAULT_REVISION_HISTORY_LIMIT);
        for old in rollback::revisions_to_prune(&history, &[&keep_update, &keep_current], limit) {
            match api.delete(&old, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => {
                    return Err(Error::kube(
                        format!("delete ControllerRevision {namespace}/{old}"),
                        e,
                    ));
                }
            }
        }

        let previous_reason = new_status
            .conditions
            .as_deref()
            .and_then(|c| conditions::find(c, rollback::CONDITION_PROGRESSING))
            .map(|c| c.reason.as_str());
        let found_again = if changed {
            !created
        } else {
            previous_reason == Some(rollback::REASON_FOUND_NEW_REVISION)
        };
        let progress_reason = if found_again {
            rollback::REASON_FOUND_NEW_REVISION
        } else {
            rollback::REASON_NEW_REVISION_CREATED
        };
        let aborted = new_status.aborted_time.is_some() && current.is_some();
        Ok(RollbackPlan {
            update,
            current,
            aborted,
            progress_reason,
        })
    }

    /// The templates of the clusters' works: with per-cluster values on and a template that
    /// uses variables, the ManagedClusters are listed to resolve them.
    pub(super) async fn templates(
        &self,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<Templates> {
        let base = replica_set
            .spec
            .manifest_work_template
            .clone()
            .unwrap_or_default();
        if !self.cluster_values || !values::uses_variables(&base) {
            return Ok(Templates::unresolved(base));
        }
        let api = read::api::<ManagedCluster>(&self.client, None);
        let (clusters, failures) = self
            .decoder
            .list::<ManagedCluster>(&api, &ListParams::default(), "ManagedCluster", || {
                "list ManagedClusters".to_string()
            })
            .await?;
        let mut templates = Templates::unresolved(base);
        templates.clusters = Some(clusters.into_iter().map(|c| (c.name_any(), c)).collect());
        // A cluster whose ManagedCluster does not decode gets no work: its values are unknown.
        for failure in failures {
            let error = read::undecodable("ManagedCluster", &failure);
            templates.failed.insert(failure.name, error);
        }
        Ok(templates)
    }
}
