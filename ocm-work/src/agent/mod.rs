//! The work agent: applies the ManifestWorks of one managed cluster's namespace on the hub to
//! that managed cluster, and reports their status back.
//!
//! One [`WorkAgent::sync`] of a ManifestWork does what upstream's agent controllers do:
//!
//! 1. a work being deleted is finalized: `Deleting` is set, its AppliedManifestWork is deleted
//!    and its resources are removed (unless orphaned), then the finalizers are released;
//! 2. the `cluster.open-cluster-management.io/manifest-work-cleanup` finalizer is added;
//! 3. the AppliedManifestWork `<hub hash>-<work name>` is created or its spec updated;
//! 4. every manifest is applied ([`crate::apply::engine`]), giving each its `Applied`
//!    condition, and the work its `Applied` condition;
//! 5. the AppliedManifestWork's `appliedResources` are updated and resources no longer in the
//!    work are deleted;
//! 6. each resource's `Available` condition and status feedback are read, and the work's
//!    aggregated `Available` condition computed;
//! 7. the work status is written only when it changed.
//!
//! Applying happens when the work changed and at least every [`AgentConfig::resync_interval`];
//! in between, [`WorkAgent::sync`] only refreshes the status (step 6), every
//! [`AgentConfig::status_sync_interval`].
//!
//! [`WorkAgent::evict_unmanaged`] removes AppliedManifestWorks whose ManifestWork is gone, after
//! the eviction grace period. Not yet done here (see the crate docs): the executor validation
//! cache and watch-based feedback.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::{finalizers, limits, work as wc};
use ocm_api::work::v1::{
    AppliedManifestResourceMeta, AppliedManifestWork, AppliedManifestWorkSpec,
    AppliedManifestWorkStatus, ManifestCondition, ManifestResourceStatus, ManifestWork,
    ManifestWorkStatus,
};
use ocm_feedback::{CompiledRules, FeedbackReader};
use serde_json::json;

use crate::apply::engine::{ApplyEngine, ManifestApply};
use crate::config::{ResourceRef, find_manifest_config};
use crate::identity::{agent_id, applied_manifest_work_name};
use crate::owner::applied_manifest_work_ref;
use crate::status::{
    NewManifestCondition, merge_manifest_conditions, work_applied_condition,
    work_available_condition, work_rule_conditions,
};

fn min_duration(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Drops condition-rule conditions (reason prefix `ConditionRule`) computed for another
/// generation, as upstream prunes them.
fn prune_stale_rule_conditions(
    list: &mut Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
    generation: i64,
) {
    list.retain(|c| {
        !c.reason.starts_with(wc::CONDITION_RULE_REASON_PREFIX)
            || c.observed_generation == Some(generation)
    });
}
use crate::{Error, Result};

pub mod gc;

/// The agent's settings, as upstream's flags.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AgentConfig {
    /// The managed cluster's name; the agent handles the works in this hub namespace.
    pub cluster_name: String,
    /// The hub hash ([`crate::identity::hub_hash`] of the hub's API server address).
    pub hub_hash: String,
    /// The agent id (defaults to the hub hash).
    pub agent_id: String,
    /// How often status and feedback are refreshed (upstream's `--status-sync-interval`,
    /// default 10 s; upstream advises against going much lower on large fleets).
    pub status_sync_interval: Duration,
    /// How often every work is applied again even if unchanged (upstream: about 4 to 6 min).
    pub resync_interval: Duration,
    /// Allow `JsonRaw` feedback values (feature gate `RawFeedbackJsonString`).
    pub raw_feedback_json_string: bool,
    /// The longest `jsonRaw` value (upstream's `--max-json-raw-length`).
    pub max_json_raw_length: usize,
    /// How long an AppliedManifestWork whose ManifestWork is gone (or that belongs to another
    /// hub) is kept before it is deleted with its resources (upstream's
    /// `--appliedmanifestwork-eviction-grace-period`, default 60 min; 100 years or more
    /// disables eviction).
    pub eviction_grace_period: Duration,
}

impl AgentConfig {
    /// Settings for `cluster_name` under the hub with hash `hub_hash`, upstream's defaults
    /// otherwise.
    pub fn new(cluster_name: impl Into<String>, hub_hash: impl Into<String>) -> Self {
        let hub_hash = hub_hash.into();
        Self {
            cluster_name: cluster_name.into(),
            agent_id: agent_id(None, &hub_hash),
            hub_hash,
            status_sync_interval: limits::STATUS_SYNC_INTERVAL,
            resync_interval: Duration::from_secs(240),
            raw_feedback_json_string: false,
            max_json_raw_length: limits::MAX_JSON_RAW_LENGTH,
            eviction_grace_period: limits::APPLIED_MANIFEST_WORK_EVICTION_GRACE_PERIOD,
        }
    }

    /// Sets the agent id (empty means the hub hash).
    #[must_use]
    pub fn agent_id(mut self, id: &str) -> Self {
        self.agent_id = agent_id(Some(id), &self.hub_hash);
        self
    }

    /// Sets the status sync interval.
    #[must_use]
    pub fn status_sync_interval(mut self, interval: Duration) -> Self {
        self.status_sync_interval = interval;
        self
    }

    /// Sets the full re-apply interval.
    #[must_use]
    pub fn resync_interval(mut self, interval: Duration) -> Self {
        self.resync_interval = interval;
        self
    }

    /// Sets the eviction grace period of unmanaged AppliedManifestWorks.
    #[must_use]
    pub fn eviction_grace_period(mut self, grace: Duration) -> Self {
        self.eviction_grace_period = grace;
        self
    }

    /// Enables `JsonRaw` feedback values.
    #[must_use]
    pub fn raw_feedback_json_string(mut self, enabled: bool) -> Self {
        self.raw_feedback_json_string = enabled;
        self
    }
}

/// What one sync asks for next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncOutcome {
    /// Sync this work again after this long.
    pub requeue_after: Option<Duration>,
    /// Whether the manifests were applied in this sync (not just the status refreshed).
    pub applied: bool,
}

/// The work agent of one managed cluster.
#[derive(Clone)]
pub struct WorkAgent {
    hub: Client,
    spoke: Client,
    engine: ApplyEngine,
    config: Arc<AgentConfig>,
    clock: Arc<dyn Clock>,
    /// uid → (generation last applied, when).
    applied: Arc<Mutex<HashMap<String, (i64, Instant)>>>,
}

impl std::fmt::Debug for WorkAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkAgent")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl WorkAgent {
    /// An agent reading works from `hub` and applying them to `spoke`.
    pub fn new(hub: Client, spoke: Client, config: AgentConfig) -> Self {
        Self {
            engine: ApplyEngine::new(spoke.clone()),
            hub,
            spoke,
            config: Arc::new(config),
            clock: Arc::new(SystemClock),
            applied: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Uses `clock` for condition times.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The agent's settings.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    fn works(&self) -> Api<ManifestWork> {
        Api::namespaced(self.hub.clone(), &self.config.cluster_name)
    }

    fn applied_works(&self) -> Api<AppliedManifestWork> {
        Api::all(self.spoke.clone())
    }

    /// Syncs every ManifestWork of the cluster namespace once.
    pub async fn sync_all(&self) -> Result<()> {
        let list = self
            .works()
            .list(&ListParams::default())
            .await
            .map_err(|e| {
                Error::kube(
                    format!("list ManifestWorks in {}", self.config.cluster_name),
                    e,
                )
            })?;
        let mut errors = Vec::new();
        for work in list.items {
            let mut current = work;
            // A sync that only added the finalizer asks to go again at once.
            for _ in 0..3 {
                match self.sync(&current).await {
                    Ok(o) if o.requeue_after == Some(Duration::ZERO) => {
                        let name = current.name_any();
                        match self.works().get_opt(&name).await {
                            Ok(Some(fresh)) => current = fresh,
                            Ok(None) => break,
                            Err(e) => {
                                errors.push(Error::kube(format!("get ManifestWork {name}"), e));
                                break;
                            }
                        }
                    }
                    Ok(_) => break,
                    Err(e) => {
                        errors.push(e);
                        break;
                    }
                }
            }
        }
        if let Err(e) = self.evict_unmanaged().await {
            errors.push(e);
        }
        Error::aggregate(errors)
    }

    /// Syncs one ManifestWork (see the module docs).
    pub async fn sync(&self, work: &ManifestWork) -> Result<SyncOutcome> {
        let name = work.name_any();
        if work.metadata.deletion_timestamp.is_some() {
            return self.finalize(work).await;
        }
        if !work
            .finalizers()
            .iter()
            .any(|f| f == finalizers::MANIFEST_WORK_CLEANUP)
        {
            let mut list = work.finalizers().to_vec();
            list.push(finalizers::MANIFEST_WORK_CLEANUP.to_string());
            let patch = json!({"metadata": {
                "uid": work.metadata.uid, "resourceVersion": work.metadata.resource_version,
                "finalizers": list,
            }});
            self.works()
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|e| Error::kube(format!("add finalizer to ManifestWork {name}"), e))?;
            return Ok(SyncOutcome {
                requeue_after: Some(Duration::ZERO),
                applied: false,
            });
        }
        let conds = work
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .unwrap_or_default();
        if conditions::is_true(conds, wc::CONDITION_COMPLETE) {
            return Ok(SyncOutcome::default());
        }

        let uid = work.metadata.uid.clone().unwrap_or_default();
        let generation = work.metadata.generation.unwrap_or(0);
        let due = {
            let applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
            applied.get(&uid).is_none_or(|(g, at)| {
                *g != generation || at.elapsed() >= self.config.resync_interval
            })
        };
        let now = self.clock.now_time();
        let mut status = work.status.clone().unwrap_or_default();
        let mut errors = Vec::new();
        let mut applied = false;
        if due {
            let amw = self.ensure_applied_manifest_work(work).await?;
            let owner = applied_manifest_work_ref(
                &amw.name_any(),
                &amw.metadata.uid.clone().unwrap_or_default(),
            );
            let results = self.engine.apply_work(work, &owner).await;
            let new_entries: Vec<NewManifestCondition> = results
                .iter()
                .map(|r| NewManifestCondition {
                    resource_meta: r.meta.clone(),
                    conditions: vec![r.applied_condition(generation)],
                })
                .collect();
            let existing = status
                .resource_status
                .as_ref()
                .and_then(|r| r.manifests.clone())
                .unwrap_or_default();
            let manifests = merge_manifest_conditions(&existing, &new_entries, &now);
            let work_conditions = status.conditions.get_or_insert_with(Vec::new);
            if let Some(applied_condition) = work_applied_condition(&manifests, generation) {
                conditions::set(work_conditions, applied_condition, &now);
            }
            status.resource_status = Some(ManifestResourceStatus {
                manifests: Some(manifests),
            });
            if let Err(e) = self.track_applied_resources(&amw, &results).await {
                errors.push(e);
            }
            for r in &results {
                if let Err(crate::apply::engine::ApplyError::Api(m)) = &r.outcome {
                    tracing::debug!(work = %name, ordinal = r.meta.ordinal, error = %m, "manifest not applied");
                }
            }
            self.applied
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(uid, (generation, Instant::now()));
            applied = true;
        }
        if let Err(e) = self.refresh_status(work, &mut status, &now).await {
            errors.push(e);
        }
        if Some(&status) != work.status.as_ref() {
            let patch = json!({"metadata": {"uid": work.metadata.uid, "resourceVersion": work.metadata.resource_version}, "status": status});
            self.works()
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|e| Error::kube(format!("update status of ManifestWork {name}"), e))?;
        }
        Error::aggregate(errors)?;
        Ok(SyncOutcome {
            requeue_after: Some(self.config.status_sync_interval),
            applied,
        })
    }

    async fn ensure_applied_manifest_work(
        &self,
        work: &ManifestWork,
    ) -> Result<AppliedManifestWork> {
        let name = applied_manifest_work_name(&self.config.hub_hash, &work.name_any());
        let spec = AppliedManifestWorkSpec {
            hub_hash: self.config.hub_hash.clone(),
            agent_id: Some(self.config.agent_id.clone()),
            manifest_work_name: work.name_any(),
        };
        let api = self.applied_works();
        match api
            .get_opt(&name)
            .await
            .map_err(|e| Error::kube(format!("get AppliedManifestWork {name}"), e))?
        {
            Some(existing) if existing.spec == spec => Ok(existing),
            Some(_) => api
                .patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": spec})),
                )
                .await
                .map_err(|e| Error::kube(format!("update AppliedManifestWork {name}"), e)),
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
                    spec,
                    status: None,
                };
                api.create(&PostParams::default(), &amw)
                    .await
                    .map_err(|e| Error::kube(format!("create AppliedManifestWork {name}"), e))
            }
        }
    }

    /// Updates `appliedResources` and deletes resources that left the work (upstream §4.3).
    async fn track_applied_resources(
        &self,
        amw: &AppliedManifestWork,
        results: &[ManifestApply],
    ) -> Result<()> {
        if amw.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
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
                    let api = self
                        .engine
                        .api(resolved, r.meta.namespace.as_deref().unwrap_or_default());
                    match api.get_opt(name).await {
                        Ok(Some(live)) => live.metadata.uid,
                        Ok(None) => continue,
                        Err(e) => return Err(Error::kube(format!("get {resource} {name}"), e)),
                    }
                }
            };
            current.push(AppliedManifestResourceMeta {
                group: r.meta.group.clone(),
                version: version.clone(),
                resource: resource.clone(),
                namespace: r.meta.namespace.clone(),
                name: name.clone(),
                uid,
            });
        }
        let previous = amw
            .status
            .as_ref()
            .and_then(|s| s.applied_resources.clone())
            .unwrap_or_default();
        let gone = gc::untracked(&previous, &current);
        let owner_uid = amw.metadata.uid.clone().unwrap_or_default();
        let (pending, errors) = gc::delete_applied_resources(&self.spoke, &gone, &owner_uid).await;
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
        if amw.status.as_ref() != Some(&new_status) {
            let name = amw.name_any();
            self.applied_works()
                .patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": new_status})),
                )
                .await
                .map_err(|e| {
                    Error::kube(format!("update status of AppliedManifestWork {name}"), e)
                })?;
        }
        gc::into_result(errors)
    }

    /// Reads every applied resource: `Available` and status feedback per manifest, and the
    /// work's aggregated `Available` (upstream's available-status controller).
    async fn refresh_status(
        &self,
        work: &ManifestWork,
        status: &mut ManifestWorkStatus,
        now: &Time,
    ) -> Result<()> {
        let Some(manifests) = status
            .resource_status
            .as_mut()
            .and_then(|r| r.manifests.as_mut())
        else {
            return Ok(());
        };
        let conds = status.conditions.get_or_insert_with(Vec::new);
        if conditions::find(conds, wc::CONDITION_APPLIED).is_none() {
            return Ok(());
        }
        let configs = work.spec.manifest_configs.as_deref().unwrap_or_default();
        let generation = work.metadata.generation.unwrap_or(0);
        for entry in manifests.iter_mut() {
            self.refresh_manifest(entry, configs, generation, now).await;
        }
        conditions::set(conds, work_available_condition(manifests, generation), now);
        for rule_condition in work_rule_conditions(manifests, generation) {
            conditions::set(conds, rule_condition, now);
        }
        prune_stale_rule_conditions(conds, generation);
        Ok(())
    }

    async fn refresh_manifest(
        &self,
        entry: &mut ManifestCondition,
        configs: &[ocm_api::work::v1::ManifestConfigOption],
        generation: i64,
        now: &Time,
    ) {
        let meta = &entry.resource_meta;
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        let (group, version, kind, resource, namespace, name) = (
            s(&meta.group),
            s(&meta.version),
            s(&meta.kind),
            s(&meta.resource),
            s(&meta.namespace),
            s(&meta.name),
        );
        if resource.is_empty() || version.is_empty() || name.is_empty() {
            conditions::set(
                &mut entry.conditions,
                NewCondition::new(
                    wc::CONDITION_AVAILABLE,
                    ConditionStatus::Unknown,
                    wc::REASON_INCOMPLETE_RESOURCE_META,
                    wc::MESSAGE_INCOMPLETE_RESOURCE_META,
                ),
                now,
            );
            return;
        }
        let live = match self
            .engine
            .resolver()
            .resolve(&GroupVersionKind::gvk(&group, &version, &kind))
            .await
        {
            Ok(resolved) => self
                .engine
                .api(&resolved, &namespace)
                .get_opt(&name)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        let live = match live {
            Ok(Some(obj)) => obj,
            Ok(None) => {
                conditions::set(
                    &mut entry.conditions,
                    NewCondition::new(
                        wc::CONDITION_AVAILABLE,
                        ConditionStatus::False,
                        wc::REASON_RESOURCE_NOT_AVAILABLE,
                        wc::MESSAGE_RESOURCE_NOT_AVAILABLE,
                    ),
                    now,
                );
                return;
            }
            Err(e) => {
                conditions::set(
                    &mut entry.conditions,
                    NewCondition::new(
                        wc::CONDITION_AVAILABLE,
                        ConditionStatus::Unknown,
                        wc::REASON_FETCHING_RESOURCE_FAILED,
                        format!("{}{e}", wc::MESSAGE_FETCHING_RESOURCE_FAILED_PREFIX),
                    ),
                    now,
                );
                return;
            }
        };
        conditions::set(
            &mut entry.conditions,
            NewCondition::new(
                wc::CONDITION_AVAILABLE,
                ConditionStatus::True,
                wc::REASON_RESOURCE_AVAILABLE,
                wc::MESSAGE_RESOURCE_AVAILABLE,
            ),
            now,
        );
        let config = find_manifest_config(
            &ResourceRef {
                group: &group,
                resource: &resource,
                namespace: &namespace,
                name: &name,
            },
            configs,
        );
        let condition_rules = config
            .as_ref()
            .and_then(|c| c.condition_rules.clone())
            .unwrap_or_default();
        let rules = config.and_then(|c| c.feedback_rules).unwrap_or_default();
        let object = serde_json::to_value(&live).unwrap_or_default();
        let feedback = if rules.is_empty() {
            ocm_feedback::Feedback::no_rules()
        } else {
            FeedbackReader::new()
                .raw_json_string(self.config.raw_feedback_json_string)
                .max_json_raw_length(self.config.max_json_raw_length)
                .read_compiled(&object, &CompiledRules::new(&rules))
        };
        let result = feedback.to_result();
        let values = result.values.clone().unwrap_or_default();
        let stored = entry
            .status_feedbacks
            .as_ref()
            .and_then(|f| f.values.clone())
            .unwrap_or_default();
        if values != stored {
            // New values restart the condition's transition time, as upstream does.
            conditions::remove(&mut entry.conditions, wc::CONDITION_STATUS_FEEDBACK_SYNCED);
        }
        conditions::set(&mut entry.conditions, feedback.condition(), now);
        entry.status_feedbacks = Some(result);
        for rule in &condition_rules {
            if let Some(condition) = crate::rules::evaluate(rule, &object, generation) {
                conditions::set(&mut entry.conditions, condition, now);
            }
        }
        prune_stale_rule_conditions(&mut entry.conditions, generation);
    }

    /// Finalizes a work being deleted (upstream §4.4).
    async fn finalize(&self, work: &ManifestWork) -> Result<SyncOutcome> {
        let name = work.name_any();
        if !work
            .finalizers()
            .iter()
            .any(|f| f == finalizers::MANIFEST_WORK_CLEANUP)
        {
            return Ok(SyncOutcome::default());
        }
        let amw_name = applied_manifest_work_name(&self.config.hub_hash, &name);
        let mut resource_version = work.metadata.resource_version.clone();
        let api = self.applied_works();
        let amw = api
            .get_opt(&amw_name)
            .await
            .map_err(|e| Error::kube(format!("get AppliedManifestWork {amw_name}"), e))?;
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
            if let Some(amw) = api
                .get_opt(&amw_name)
                .await
                .map_err(|e| Error::kube(format!("get AppliedManifestWork {amw_name}"), e))?
            {
                let done = self.finalize_applied_manifest_work(&amw).await?;
                if !done {
                    return Ok(SyncOutcome {
                        requeue_after: Some(Duration::from_millis(500)),
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
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(work.metadata.uid.as_deref().unwrap_or_default());
        Ok(SyncOutcome::default())
    }

    /// Evicts this agent's AppliedManifestWorks that no ManifestWork on the hub manages any
    /// more (the work is gone, or the record comes from another hub), after the eviction
    /// grace period; finalizes those being deleted. Returns when to look again.
    pub async fn evict_unmanaged(&self) -> Result<Option<Duration>> {
        const DISABLED: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
        let api = self.applied_works();
        let list = api
            .list(&ListParams::default())
            .await
            .map_err(|e| Error::kube("list AppliedManifestWorks", e))?;
        let now = self.clock.now_time();
        let mut next: Option<Duration> = None;
        for amw in list.items {
            if amw.spec.agent_id.as_deref() != Some(self.config.agent_id.as_str()) {
                continue;
            }
            let name = amw.name_any();
            if amw.metadata.deletion_timestamp.is_some() {
                self.finalize_applied_manifest_work(&amw).await?;
                continue;
            }
            let started = amw
                .status
                .as_ref()
                .and_then(|s| s.eviction_start_time.clone());
            let managed = name.starts_with(&format!("{}-", self.config.hub_hash))
                && self
                    .works()
                    .get_opt(&amw.spec.manifest_work_name)
                    .await
                    .map_err(|e| {
                        Error::kube(
                            format!("get ManifestWork {}", amw.spec.manifest_work_name),
                            e,
                        )
                    })?
                    .is_some();
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
            if let Some(deleting) = api
                .get_opt(&name)
                .await
                .map_err(|e| Error::kube(format!("get AppliedManifestWork {name}"), e))?
            {
                self.finalize_applied_manifest_work(&deleting).await?;
            }
        }
        Ok(next)
    }

    async fn set_eviction_start(&self, name: &str, time: Option<Time>) -> Result<()> {
        self.applied_works()
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"evictionStartTime": time}})),
            )
            .await
            .map(|_| ())
            .map_err(|e| Error::kube(format!("update status of AppliedManifestWork {name}"), e))
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
        let (pending, errors) =
            gc::delete_applied_resources(&self.spoke, &resources, &owner_uid).await;
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

    /// Runs the agent until `shutdown` completes: watches the cluster namespace on the hub,
    /// syncs works as they change and refreshes status every status sync interval.
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
    ) {
        let evictor = self.clone();
        let eviction = tokio::spawn(async move {
            let tick = evictor
                .config
                .status_sync_interval
                .max(Duration::from_secs(1));
            loop {
                let wait = match evictor.evict_unmanaged().await {
                    Ok(next) => next.unwrap_or(tick).min(tick),
                    Err(error) => {
                        tracing::warn!(%error, "AppliedManifestWork eviction failed");
                        tick
                    }
                };
                tokio::time::sleep(wait).await;
            }
        });
        let works = self.works();
        Controller::new(works, watcher::Config::default())
            .graceful_shutdown_on(shutdown)
            .run(
                |work: Arc<ManifestWork>, agent: Arc<WorkAgent>| async move {
                    let outcome = agent.sync(&work).await?;
                    Ok::<_, Error>(match outcome.requeue_after {
                        Some(after) => Action::requeue(after),
                        None => Action::await_change(),
                    })
                },
                |_work, error: &Error, agent: Arc<WorkAgent>| {
                    tracing::warn!(%error, cluster = %agent.config.cluster_name, "ManifestWork sync failed");
                    Action::requeue(Duration::from_secs(2))
                },
                Arc::new(self),
            )
            .for_each(|_| futures::future::ready(()))
            .await;
        eviction.abort();
    }
}
