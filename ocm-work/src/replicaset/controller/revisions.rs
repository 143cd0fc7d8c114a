//! The revision history (the rollback opt-in): the ControllerRevisions recording each
//! template a replica set rolled out, and the templates a pass deploys from them.

use super::*;

/// The revision of the spec's template, as found or created.
struct Recorded {
    hash: String,
    /// Created by this pass (not found).
    created: bool,
    /// `status.collisionCount` after the hash collisions met.
    collisions: Option<i32>,
}

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
        let api = read::api::<ControllerRevision>(&self.client, Some(&namespace));
        let history = self.revision_history(&api, replica_set).await?;
        let recorded = self
            .record_revision(&api, replica_set, &history, new_status.collision_count)
            .await?;
        new_status.collision_count = recorded.collisions;
        let update = recorded.hash;
        let changed = new_status.update_revision.as_deref() != Some(update.as_str());
        if changed {
            new_status.aborted_time = None;
        }
        new_status.update_revision = Some(update.clone());
        let current = match new_status.current_revision.clone() {
            Some(hash) if hash != update => self.current_revision(&api, replica_set, hash).await?,
            _ => None,
        };
        self.prune_revisions(&api, replica_set, &history, &update, new_status)
            .await?;

        let previous_reason = new_status
            .conditions
            .as_deref()
            .and_then(|c| conditions::find(c, rollback::CONDITION_PROGRESSING))
            .map(|c| c.reason.as_str());
        let found_again = if changed {
            !recorded.created
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

    /// The replica set's ControllerRevisions. A revision that does not decode is left out
    /// (and logged): it is neither counted nor pruned.
    async fn revision_history(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
    ) -> Result<Vec<ControllerRevision>> {
        let owner = owner_label(replica_set);
        let (history, _) = self
            .decoder
            .list::<ControllerRevision>(
                api,
                &ListParams::default()
                    .labels(&format!("{}={owner}", labels::MANIFEST_WORK_REPLICA_SET)),
                KIND_REVISION,
                || format!("list ControllerRevisions of {owner}"),
            )
            .await?;
        Ok(history)
    }

    /// Finds or creates the revision of the spec's template, numbered after the newest of
    /// `history` (an older one found again is renumbered). A hash taken by another template
    /// moves on to the next collision count; a lost create race reads again; a few rounds at
    /// most.
    async fn record_revision(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
        history: &[ControllerRevision],
        mut collisions: Option<i32>,
    ) -> Result<Recorded> {
        let namespace = replica_set.namespace().unwrap_or_default();
        let name = replica_set.name_any();
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
        for _ in 0..8 {
            let hash = rollback::template_hash(&template, collisions);
            let rev_name = rollback::revision_name(&name, &hash);
            let existing = self
                .decoder
                .get::<ControllerRevision>(api, KIND_REVISION, &rev_name)
                .await?;
            if let Some(rev) = existing {
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
                return Ok(Recorded {
                    hash,
                    created: false,
                    collisions,
                });
            }
            let rev = rollback::build_revision(replica_set, &template, &hash, newest + 1).map_err(
                |message| Error::InvalidObject {
                    object: format!("ManifestWorkReplicaSet {namespace}/{name}"),
                    message,
                },
            )?;
            let rev = read::to_raw(&rev, || {
                format!("ControllerRevision {namespace}/{rev_name}")
            })?;
            match api.create(&PostParams::default(), &rev).await {
                Ok(_) => {
                    return Ok(Recorded {
                        hash,
                        created: true,
                        collisions,
                    });
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
        Err(Error::InvalidObject {
            object: format!("ManifestWorkReplicaSet {namespace}/{name}"),
            message: format!(
                "no free ControllerRevision name for spec.manifestWorkTemplate after {} \
                 hash collisions",
                collisions.unwrap_or(0)
            ),
        })
    }

    /// The current revision `hash` with its template; `None` (said at WARN once) when its
    /// ControllerRevision is gone or unusable: then there is nothing to roll back to.
    async fn current_revision(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
        hash: String,
    ) -> Result<Option<(String, ManifestWorkSpec)>> {
        let namespace = replica_set.namespace().unwrap_or_default();
        let name = replica_set.name_any();
        let rev_name = rollback::revision_name(&name, &hash);
        let rev = match self
            .decoder
            .get::<ControllerRevision>(api, KIND_REVISION, &rev_name)
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
                Ok(Some((hash, t)))
            }
            Some(Err(message)) => {
                if self.said.changed(&key, &message) {
                    tracing::warn!(%message, revision = %rev_name, "current revision unusable");
                }
                Ok(None)
            }
            None => {
                if self.said.changed(&key, "gone") {
                    tracing::warn!(
                        revision = %rev_name,
                        "the current revision's ControllerRevision is gone: nothing to roll back to"
                    );
                }
                Ok(None)
            }
        }
    }

    /// Deletes the revisions past `spec.revisionHistoryLimit`, keeping the update and the
    /// current revision.
    async fn prune_revisions(
        &self,
        api: &Api<RawObject>,
        replica_set: &ManifestWorkReplicaSet,
        history: &[ControllerRevision],
        update: &str,
        new_status: &ManifestWorkReplicaSetStatus,
    ) -> Result<()> {
        let namespace = replica_set.namespace().unwrap_or_default();
        let name = replica_set.name_any();
        let keep_update = rollback::revision_name(&name, update);
        let keep_current = new_status
            .current_revision
            .as_deref()
            .map(|h| rollback::revision_name(&name, h))
            .unwrap_or_default();
        let limit = replica_set
            .spec
            .revision_history_limit
            .unwrap_or(rollback::DEFAULT_REVISION_HISTORY_LIMIT);
        for old in rollback::revisions_to_prune(history, &[&keep_update, &keep_current], limit) {
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
        Ok(())
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
