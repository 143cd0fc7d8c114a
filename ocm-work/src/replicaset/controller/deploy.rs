//! Upstream's deploy reconciler: list the replica set's works and index them by cluster,
//! delete those of clusters no placement selects, then per placement its decision groups,
//! the rollout statuses of its works and the rollout (creating and updating works through the
//! hub's one ManifestWork writer, [`crate::applier`]), and the status that pass leaves.

use super::*;

impl ReplicaSetController {
    /// Lists the replica set's works in pages ([`pages`]), folding each into the accumulator
    /// `init` returns as its page arrives: a pass holds one page of works and what `fold`
    /// keeps of each, not every work of the fleet with its managedFields and feedback.
    pub(super) async fn fold_owned_works<T>(
        &self,
        owner: &str,
        init: impl FnMut() -> T,
        fold: impl FnMut(&mut T, RawObject),
    ) -> Result<T> {
        let api = read::api::<ManifestWork>(&self.client, None);
        pages::fold(
            &self.decoder,
            &api,
            &owner_selector(owner),
            pages::PAGE_SIZE,
            || format!("list ManifestWorks of {owner}"),
            init,
            fold,
        )
        .await
    }

    /// Whether the replica set has any work left (a one-item list).
    pub(super) async fn any_owned_work(&self, owner: &str) -> Result<bool> {
        let api = read::api::<ManifestWork>(&self.client, None);
        api.list(&owner_selector(owner).limit(1))
            .await
            .map(|l| !l.items.is_empty())
            .map_err(|e| Error::kube(format!("list ManifestWorks of {owner}"), e))
    }

    pub(super) async fn delete_work(&self, work: &ManifestWork) -> Result<()> {
        let namespace = work.namespace().unwrap_or_default();
        self.delete_named_work(&namespace, &work.name_any()).await
    }

    pub(super) async fn delete_named_work(&self, namespace: &str, name: &str) -> Result<()> {
        let api = read::api::<ManifestWork>(&self.client, Some(namespace));
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(e) => Err(Error::kube(
                format!("delete ManifestWork {namespace}/{name}"),
                e,
            )),
        }
    }

    /// Creates `required` or brings the live work in line with it, through the hub's one
    /// ManifestWork writer ([`crate::applier`]), from what the list already says of it.
    pub(super) async fn apply_work(
        &self,
        required: &ManifestWork,
        live: Option<&Listed>,
    ) -> Result<()> {
        let namespace = required.namespace().unwrap_or_default();
        // Raw: the answer holds the work's manifests, as deep as the template.
        let api = read::api::<ManifestWork>(&self.client, Some(&namespace));
        let Some(listed) = live else {
            // A work created meanwhile (409) is reconciled on the next pass.
            return applier::create(&api, required, None).await.map(|_| ());
        };
        let name = listed.work.name_any();
        if listed.undecodable {
            // Compared as JSON: the merge patch is computed from the work as it is stored.
            let Some(raw) = self.decoder.get_raw(&api, KIND_WORK, &name).await? else {
                return Ok(());
            };
            let view = applier::stored_view(&raw, &namespace, &name)?;
            return applier::patch_toward(&api, raw.meta(), view, required, None)
                .await
                .map(|_| ());
        }
        let fetched;
        let live = if listed.current {
            // Its spec was dropped as equal to the template: equal metadata makes it equal.
            if metadata_equal(required, &listed.work) {
                return Ok(());
            }
            // The metadata differ: read the work again to patch against its full spec.
            match self
                .decoder
                .get::<ManifestWork>(&api, KIND_WORK, &name)
                .await?
            {
                Some(w) => fetched = w,
                // Gone meanwhile: its deletion reconciles the replica set again.
                None => return Ok(()),
            }
            &fetched
        } else {
            &listed.work
        };
        if manifest_work_equal(required, live) {
            return Ok(());
        }
        let view = applier::work_view(live);
        applier::patch_toward(&api, &live.metadata, view, required, None)
            .await
            .map(|_| ())
    }

    /// The deploy reconciler (upstream §8.3). Returns whether to go on, and the requeue time.
    pub(super) async fn deploy(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        templates: &mut Templates,
        new_status: &mut ManifestWorkReplicaSetStatus,
        now: Timestamp,
        errors: &mut Vec<Error>,
        observed: &mut Observed,
    ) -> Result<(Step, Option<Duration>)> {
        let now_time = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now);
        let conditions = new_status.conditions.get_or_insert_with(Vec::new);
        let owner = owner_label(replica_set);
        if let Err(message) = validate_owner_label(&owner) {
            conditions::set(
                conditions,
                status::invalid_manifest_work_name(message),
                &now_time,
            );
            return Ok((Step::Stop, None));
        }
        let namespace = replica_set.namespace().unwrap_or_default();
        let refs = &replica_set.spec.placement_refs;
        let works = self.list_owned_works(&owner, refs, templates).await?;
        let by_cluster = index_works(works, &mut observed.works);
        self.delete_stale_works(&by_cluster, refs, errors).await;

        let mut pass = DeployPass::default();
        let placements = read::api::<Placement>(&self.client, Some(&namespace));
        for placement_ref in refs {
            let placement = match self
                .decoder
                .get::<Placement>(&placements, "Placement", &placement_ref.name)
                .await
            {
                Ok(Some(p)) => p,
                Ok(None) => {
                    let conditions = new_status.conditions.get_or_insert_with(Vec::new);
                    conditions::set(conditions, status::placement_not_found(), &now_time);
                    return Ok((Step::Stop, None));
                }
                // As upstream stops at a missing placement, ours stops at one it cannot read,
                // and says why; its next change reconciles the replica set again.
                Err(e @ Error::Undecodable { .. }) => {
                    let conditions = new_status.conditions.get_or_insert_with(Vec::new);
                    conditions::set(
                        conditions,
                        status::placement_undecodable(&[e.to_string()]),
                        &now_time,
                    );
                    return Ok((Step::Stop, None));
                }
                Err(e) => return Err(e),
            };
            let rolled = self
                .deploy_placement(
                    replica_set,
                    placement_ref,
                    &placement,
                    &by_cluster,
                    templates,
                    observed,
                    now,
                    errors,
                    &mut pass,
                )
                .await;
            if !rolled {
                let conditions = new_status.conditions.get_or_insert_with(Vec::new);
                conditions::set(conditions, status::placement_not_as_expected(), &now_time);
            }
        }
        self.write_deploy_status(
            replica_set,
            new_status,
            &pass,
            observed.count_updated,
            errors,
            &now_time,
        );
        // The failures stay in `errors` for the caller to return after the status reconciler
        // has run, as upstream's deploy reconciler returns them with `reconcileContinue`.
        let requeue = (pass.min_requeue < MAX_REQUEUE).then_some(pass.min_requeue);
        Ok((Step::Continue, requeue))
    }

    /// The works the replica set owns, each kept without its managedFields and its manifests'
    /// status (feedback included): the deploy pass compares and patches metadata and spec, and
    /// reads the work-level conditions only.
    pub(super) async fn list_owned_works(
        &self,
        owner: &str,
        refs: &[LocalPlacementReference],
        templates: &mut Templates,
    ) -> Result<Vec<Listed>> {
        let decoder = &self.decoder;
        self.fold_owned_works(owner, Vec::new, |works, raw| {
            // A work that does not decode is present, not up to date: its cluster gets no
            // second work, and its spec is patched from its JSON (see `apply_work`).
            let mut work = match decoder.decode::<ManifestWork>(KIND_WORK, &raw) {
                Ok(work) => work,
                Err(_) => {
                    let mut stub = ManifestWork::new(
                        raw.meta().name.as_deref().unwrap_or_default(),
                        ManifestWorkSpec::default(),
                    );
                    stub.metadata = kube::api::ObjectMeta {
                        labels: Some(read::labels(&raw)),
                        ..raw.meta().clone()
                    };
                    works.push(Listed {
                        work: stub,
                        current: false,
                        undecodable: true,
                    });
                    return;
                }
            };
            work.metadata.managed_fields = None;
            if let Some(status) = work.status.as_mut() {
                status.resource_status = None;
            }
            // Whether it holds its template is asked of the works of the replica set's
            // placements only (with per-cluster values, asking resolves the cluster's).
            let current = work
                .labels()
                .get(labels::PLACEMENT_NAME)
                .is_some_and(|p| refs.iter().any(|r| &r.name == p))
                && templates.holds(&work);
            if current {
                work.spec = ManifestWorkSpec::default();
            }
            works.push(Listed {
                work,
                current,
                undecodable: false,
            });
        })
        .await
    }

    /// Deletes the works of clusters no placement of the replica set wants any more (a work
    /// fanned out for no placement, or for one the replica set no longer names).
    pub(super) async fn delete_stale_works(
        &self,
        by_cluster: &WorksByCluster,
        refs: &[LocalPlacementReference],
        errors: &mut Vec<Error>,
    ) {
        for (work, placements) in by_cluster.values() {
            let stale = placements.is_empty()
                || placements
                    .iter()
                    .any(|p| !refs.iter().any(|r| &r.name == p));
            if stale && let Err(e) = self.delete_work(&work.work).await {
                errors.push(Error::Context {
                    context: format!(
                        "failed to delete manifestwork {}/{} for removed placement",
                        work.work.namespace().unwrap_or_default(),
                        work.work.name_any()
                    ),
                    source: Box::new(e),
                });
            }
        }
    }

    /// One placement's part of the deploy pass: its rollout computed from its decisions and
    /// its works, the works it calls for applied and the ones it removed deleted, and its
    /// summary added to `pass`. Errors go to `errors`; `false` when the rollout could not be
    /// computed (the caller says so in the `PlacementVerified` condition).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn deploy_placement(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        placement_ref: &LocalPlacementReference,
        placement: &Placement,
        by_cluster: &WorksByCluster,
        templates: &mut Templates,
        observed: &mut Observed,
        now: Timestamp,
        errors: &mut Vec<Error>,
        pass: &mut DeployPass,
    ) -> bool {
        let namespace = replica_set.namespace().unwrap_or_default();
        let placement_works = observed
            .works
            .get(&placement_ref.name)
            .cloned()
            .unwrap_or_default();
        let Statuses {
            mut existing,
            succeeded,
            mut statuses,
            stalled,
        } = self.rollout_statuses(&placement_works);
        pass.stalled += stalled;
        let Some(groups) = self
            .placement_groups(&namespace, placement_ref, errors, pass)
            .await
        else {
            return true;
        };
        // With per-cluster values, every selected cluster is resolved now, so each one that
        // cannot be is reported (not only those this pass rolls out to). For the rollout it is
        // a failure that holds no slot (the engine's TimeOut status): it counts against
        // `maxFailures`, and within that the rollout goes on without it.
        if templates.clusters.is_some() {
            statuses.extend(unresolved_clusters(templates, &groups));
        }
        let strategy = placement_ref.rollout_strategy.clone().unwrap_or_default();
        let result = match RolloutHandler::new(&groups).rollout(&strategy, &statuses, now) {
            Ok(r) => r,
            Err(source) => {
                errors.push(Error::Rollout {
                    placement: format!("{namespace}/{}", placement_ref.name),
                    source,
                });
                return false;
            }
        };
        if let Some(after) = result.recheck_after {
            pass.min_requeue = pass.min_requeue.min(after);
        }
        observed.breached |= result.max_failure_breach;
        observed.abort |= rollback::abort_wanted(&strategy, &result);
        self.carry_out_rollout(
            replica_set,
            placement_ref,
            &result,
            by_cluster,
            &placement_works,
            templates,
            &mut existing,
            errors,
        )
        .await;
        let updated = if observed.count_updated {
            succeeded.len()
        } else {
            0
        };
        record_summary(pass, placement_ref, placement, existing.len(), updated);
        pass.succeeded += succeeded.len();
        true
    }

    /// The clusters a placement decided, by decision group. `None` when they cannot be known
    /// (a decision that does not decode, noted in `pass`; or an error, pushed to `errors`):
    /// nothing is then rolled out or removed for the placement until its decisions change.
    pub(super) async fn placement_groups(
        &self,
        namespace: &str,
        placement_ref: &LocalPlacementReference,
        errors: &mut Vec<Error>,
        pass: &mut DeployPass,
    ) -> Option<ClusterGroups> {
        let listed = self
            .decoder
            .list_placement_decisions(&self.client, namespace, &placement_ref.name)
            .await;
        match listed {
            // Without all of its decisions the placement's clusters are unknown: nothing is
            // rolled out or removed for it until the decision changes.
            Ok((_, failures)) if !failures.is_empty() => {
                pass.undecodable.extend(
                    failures
                        .iter()
                        .map(|f| read::undecodable("PlacementDecision", f).to_string()),
                );
                None
            }
            Ok((items, _)) => match ClusterGroups::from_decisions(&items) {
                Ok(groups) => Some(groups),
                Err(source) => {
                    errors.push(Error::Rollout {
                        placement: format!("{namespace}/{}", placement_ref.name),
                        source,
                    });
                    None
                }
            },
            Err(e) => {
                errors.push(e);
                None
            }
        }
    }

    /// The rollout status of each cluster whose work holds its current template, among a
    /// placement's works.
    pub(super) fn rollout_statuses(&self, placement_works: &[Arc<Listed>]) -> Statuses {
        let mut out = Statuses::default();
        for Listed { work, current, .. } in placement_works.iter().map(|w| &**w) {
            if !current {
                continue;
            }
            let cluster = work.namespace().unwrap_or_default();
            out.existing.insert(cluster.clone());
            let st = cluster_rollout_status(&cluster, GroupKey::default(), work, self.criteria);
            if st.status == RolloutStatus::Succeeded {
                out.succeeded.insert(cluster);
            } else if self.criteria == SuccessCriteria::ProgressingCondition
                && awaits_progressing(work)
            {
                out.stalled += 1;
            }
            out.statuses.push(st);
        }
        out
    }

    /// Applies the works a placement's rollout calls for and deletes those of the clusters it
    /// removed, keeping `existing` (the clusters with a work) up to date.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn carry_out_rollout(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        placement_ref: &LocalPlacementReference,
        result: &RolloutResult,
        by_cluster: &WorksByCluster,
        placement_works: &[Arc<Listed>],
        templates: &mut Templates,
        existing: &mut BTreeSet<String>,
        errors: &mut Vec<Error>,
    ) {
        for cluster in result
            .clusters_to_rollout
            .iter()
            .filter(|c| c.status == RolloutStatus::ToApply)
        {
            let record = by_cluster
                .get(&cluster.cluster_name)
                .filter(|(_, placements)| placements.contains(&placement_ref.name));
            let name = record.and_then(|(w, _)| w.work.metadata.name.as_deref());
            // A cluster whose values cannot be resolved gets no work (the error is reported in
            // the ClusterValuesResolved condition).
            let Some(spec) = templates.get(&cluster.cluster_name) else {
                continue;
            };
            let required = build_work_with_spec(
                replica_set,
                spec.clone(),
                name,
                &cluster.cluster_name,
                &placement_ref.name,
            );
            match self.apply_work(&required, record.map(|(w, _)| &**w)).await {
                Ok(()) => {
                    existing.insert(cluster.cluster_name.clone());
                }
                Err(e) => errors.push(e),
            }
        }
        for removed in &result.clusters_removed {
            for work in placement_works
                .iter()
                .map(|w| &w.work)
                .filter(|w| w.namespace().as_deref() == Some(removed.cluster_name.as_str()))
            {
                match self.delete_work(work).await {
                    Ok(()) => {
                        existing.remove(&removed.cluster_name);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
    }

    /// The deploy pass's status: the placements' summaries, the totals, and the
    /// `PlacementVerified` and `PlacementRolledOut` conditions (a stalled rollout said once per
    /// change, at WARN).
    pub(super) fn write_deploy_status(
        &self,
        replica_set: &ManifestWorkReplicaSet,
        new_status: &mut ManifestWorkReplicaSetStatus,
        pass: &DeployPass,
        count_updated: bool,
        errors: &[Error],
        now_time: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
    ) {
        let namespace = replica_set.namespace().unwrap_or_default();
        let count = pass.count;
        new_status.placements_summary = Some(pass.summaries.clone());
        let summary = new_status
            .summary
            .get_or_insert_with(|| summary_with_total(0));
        summary.total = Some(count as i64);
        summary.desired_total = Some(pass.selected);
        if count_updated {
            summary.updated = Some(pass.succeeded as i64);
        }
        if count == 0 {
            summary.applied = Some(0);
            summary.available = Some(0);
            summary.degraded = Some(0);
            summary.progressing = Some(0);
        }
        let conditions = new_status.conditions.get_or_insert_with(Vec::new);
        let verified = if !pass.undecodable.is_empty() {
            status::placement_undecodable(&pass.undecodable)
        } else if count == 0 && !errors.is_empty() {
            status::placement_not_applied(Error::go_aggregate_text(errors))
        } else {
            status::placement_verified(count)
        };
        conditions::set(conditions, verified, now_time);
        let mut rolled_out = status::placement_rolled_out(pass.selected, pass.succeeded as i64);
        // Said once per change of the message, however often the stalled rollout is
        // reconciled (and whatever an older cached status says).
        let stall_key = format!("{namespace}/{}#stall", replica_set.name_any());
        if rolled_out.status == ConditionStatus::False && pass.stalled > 0 {
            rolled_out.message = status::stalled_rollout_message(pass.stalled, count);
            if self.said.changed(&stall_key, &rolled_out.message) {
                tracing::warn!(
                    replica_set = %format!("{namespace}/{}", replica_set.name_any()),
                    stalled = pass.stalled,
                    works = count,
                    "rollout cannot advance: ManifestWorks are applied but report no Progressing \
                     condition; add a condition rule setting Progressing, or opt in with \
                     SuccessCriteria::AppliedAndAvailable (ocm-hub-controller \
                     --success-criteria applied-and-available)"
                );
            }
        } else {
            self.said.forget(&stall_key);
        }
        conditions::set(conditions, rolled_out, now_time);
    }
}

/// The selected clusters whose per-cluster values cannot be resolved, as rollout statuses
/// that hold no slot (the engine's `TimeOut`): they count against `maxFailures`, and within
/// that the rollout goes on without them.
fn unresolved_clusters(
    templates: &mut Templates,
    groups: &ClusterGroups,
) -> Vec<ClusterRolloutStatus> {
    let mut out = Vec::new();
    for cluster in groups.clusters() {
        if templates.get(cluster).is_none() {
            out.push(ClusterRolloutStatus::new(
                cluster,
                GroupKey::default(),
                RolloutStatus::TimeOut,
            ));
        }
    }
    out
}

/// Adds a placement's summary to the pass: its selected clusters, its works (`existing`) and
/// those up to date (`updated`).
fn record_summary(
    pass: &mut DeployPass,
    placement_ref: &LocalPlacementReference,
    placement: &Placement,
    existing: usize,
    updated: usize,
) {
    let selected = i64::from(
        placement
            .status
            .as_ref()
            .and_then(|s| s.number_of_selected_clusters)
            .unwrap_or(0),
    );
    let decision_groups = placement
        .status
        .as_ref()
        .and_then(|s| s.decision_groups.as_ref())
        .map_or(0, Vec::len);
    pass.selected += selected;
    pass.summaries.push(PlacementSummary {
        name: Some(placement_ref.name.clone()),
        available_decision_groups: Some(status::available_decision_groups(
            decision_groups,
            existing,
            selected,
        )),
        summary: Some(ManifestWorkReplicaSetSummary {
            desired_total: Some(selected),
            updated: Some(updated as i64),
            ..summary_with_total(existing as i64)
        }),
    });
    pass.count += existing;
}
