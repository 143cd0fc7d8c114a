//! The ManagedClusterAddOn status the addon manager keeps (pure): `ManifestApplied` from the
//! deploy works, the health check (`status.healthCheck.mode` and `Available`), and
//! `Progressing` with the last applied configurations, with upstream's reasons and messages.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ocm_api::addon::v1beta1::{
    HealthCheck, HealthCheckMode, ManagedClusterAddOn, ManagedClusterAddOnStatus,
};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::{addon as ac, annotations, cluster as cc, work as wc};
use ocm_api::work::v1::{Manifest, ManifestCondition, ManifestWork, ResourceIdentifier};

use super::agent::{AgentAddonOptions, FieldResult, HealthCheckerFn, HealthProber, ProbeField};
use super::names;
use super::works::{configs_to_map, workloads};

/// The reason of `Progressing=False` on a ManagedClusterAddOn the addon manager cannot decode
/// (our addition: upstream's manager cannot read such an addon either, its informer fails as
/// a whole). `Progressing` is the condition upstream sets to `False` when the manager cannot
/// act on an addon's configuration (`ConfigurationUnsupported`), and one `kubectl get` shows.
pub const REASON_DECODE_FAILED: &str = "ManagedClusterAddOnDecodeFailed";

/// `Progressing=False/ManagedClusterAddOnDecodeFailed`: the addon cannot be decoded; `error`
/// names the field at fault.
///
/// ```
/// let c = ocm_work::addon::status::undecodable("spec.configs[0].name: invalid type");
/// assert_eq!((c.type_.as_str(), c.reason.as_str()), ("Progressing", "ManagedClusterAddOnDecodeFailed"));
/// assert_eq!(c.message, "the ManagedClusterAddOn cannot be decoded: spec.configs[0].name: invalid type");
/// ```
pub fn undecodable(error: &str) -> NewCondition {
    NewCondition::new(
        ac::CONDITION_PROGRESSING,
        ConditionStatus::False,
        REASON_DECODE_FAILED,
        format!("the ManagedClusterAddOn cannot be decoded: {error}"),
    )
}

/// `ManifestApplied` after a deploy work was applied (upstream's `applyWork`): the work's
/// `Applied` condition decides; a work the agent has not reported on yet clears a stale
/// `False` and leaves the rest alone.
/// `applied_type` is `ManifestApplied`, or `HostingManifestApplied` for works on the hosting
/// cluster.
pub fn manifest_applied_from_work(
    conds: &mut Vec<Condition>,
    applied_type: &str,
    work: &ManifestWork,
    now: &Time,
) {
    let applied = work
        .status
        .as_ref()
        .and_then(|s| conditions::find(s.conditions(), wc::CONDITION_APPLIED));
    match applied {
        None => {
            if conditions::is_false(conds, applied_type) {
                conditions::remove(conds, applied_type);
            }
        }
        Some(c) if c.status == "True" => {
            conditions::set(
                conds,
                NewCondition::new(
                    applied_type,
                    ConditionStatus::True,
                    ac::REASON_ADDON_MANIFEST_APPLIED,
                    ac::MESSAGE_MANIFESTS_APPLIED,
                ),
                now,
            );
        }
        Some(_) => {
            conditions::set(
                conds,
                NewCondition::new(
                    applied_type,
                    ConditionStatus::False,
                    ac::REASON_ADDON_MANIFEST_APPLIED_FAILED,
                    ac::MESSAGE_MANIFESTS_APPLY_FAILED,
                ),
                now,
            );
        }
    }
}

/// `applied_type` (`ManifestApplied` or `HostingManifestApplied`) `False` with reason
/// `ManifestWorkApplyFailed` and `prefix` + the error.
pub fn manifest_apply_failed(
    conds: &mut Vec<Condition>,
    applied_type: &str,
    prefix: &str,
    error: &str,
    now: &Time,
) {
    conditions::set(
        conds,
        NewCondition::new(
            applied_type,
            ConditionStatus::False,
            ac::REASON_MANIFEST_WORK_APPLY_FAILED,
            format!("{prefix}{error}"),
        ),
        now,
    );
}

/// `applied_type` `True`: nothing to deploy.
pub fn no_manifest_to_apply(conds: &mut Vec<Condition>, applied_type: &str, now: &Time) {
    conditions::set(
        conds,
        NewCondition::new(
            applied_type,
            ConditionStatus::True,
            ac::REASON_ADDON_MANIFEST_APPLIED,
            ac::MESSAGE_NO_MANIFEST,
        ),
        now,
    );
}

/// The health check mode a prober implies: `Lease` for the lease prober, `Customized` for
/// the others; `None` without prober.
pub fn health_check_mode(prober: Option<&HealthProber>) -> Option<HealthCheckMode> {
    match prober? {
        HealthProber::Lease => Some(HealthCheckMode::Lease),
        _ => Some(HealthCheckMode::Customized),
    }
}

fn available(status: ConditionStatus, reason: &str, message: impl Into<String>) -> NewCondition {
    NewCondition::new(ac::CONDITION_AVAILABLE, status, reason, message)
}

fn wildcard(value: &str, pattern: &str) -> bool {
    if value == pattern || pattern == "*" {
        return true;
    }
    // `*` matches any run of characters; the rest literally.
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return false;
    }
    let mut rest = value;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

fn results_for(id: &ResourceIdentifier, manifests: &[&ManifestCondition]) -> Vec<FieldResult> {
    manifests
        .iter()
        .filter(|m| {
            let meta = &m.resource_meta;
            meta.group.as_deref().unwrap_or("") == id.group()
                && meta.resource.as_deref().unwrap_or("") == id.resource
                && wildcard(meta.namespace.as_deref().unwrap_or(""), id.namespace())
                && wildcard(meta.name.as_deref().unwrap_or(""), &id.name)
        })
        .filter(|m| {
            m.status_feedbacks
                .as_ref()
                .is_some_and(|f| !f.values().is_empty())
        })
        .map(|m| FieldResult {
            resource_identifier: ResourceIdentifier::new(
                m.resource_meta.group.as_deref().unwrap_or(""),
                m.resource_meta.resource.as_deref().unwrap_or(""),
                m.resource_meta.namespace.as_deref().unwrap_or(""),
                m.resource_meta.name.as_deref().unwrap_or(""),
            ),
            feedback_result: m.status_feedbacks.clone().unwrap_or_default(),
        })
        .collect()
}

/// The probe fields and checker of a work-based prober (upstream's `analyzeWorkProber`);
/// `manifests` are the addon's manifests (Deployment / Workload availability).
fn probe_fields(
    prober: &HealthProber,
    manifests: &[Manifest],
) -> Option<(Vec<ProbeField>, Option<HealthCheckerFn>)> {
    let workload_fields = |daemonsets: bool| -> Vec<ProbeField> {
        workloads(manifests, daemonsets)
            .into_iter()
            .filter(|w| !(w.identifier.resource == "deployments" && w.replicas == Some(0)))
            .map(|w| ProbeField {
                resource_identifier: w.identifier,
                probe_rules: vec![ocm_api::work::v1::FeedbackRule::well_known_status()],
            })
            .collect()
    };
    let checker: HealthCheckerFn =
        std::sync::Arc::new(|r, _, _| super::agent::workload_availability(r));
    match prober {
        HealthProber::Work(Some(p)) => Some((p.probe_fields.clone(), p.health_checker.clone())),
        HealthProber::DeploymentAvailability => Some((workload_fields(false), Some(checker))),
        HealthProber::WorkloadAvailability => Some((workload_fields(true), Some(checker))),
        _ => None,
    }
}

/// Updates `status.healthCheck` and, for work-based probers, `Available` (upstream's
/// `healthCheckSyncer`). `works` are the addon's works in its namespace; `manifests` the
/// addon's rendered manifests (needed by the Deployment / Workload availability probers).
pub fn probe_health(
    options: &AgentAddonOptions,
    cluster: &ManagedCluster,
    addon: &ManagedClusterAddOn,
    status: &mut ManagedClusterAddOnStatus,
    works: &[ManifestWork],
    manifests: &[Manifest],
    now: &Time,
) {
    let Some(prober) = options.health_prober.as_ref() else {
        return;
    };
    if let Some(mode) = health_check_mode(Some(prober)) {
        status.health_check = Some(HealthCheck { mode: Some(mode) });
    }
    let conds = status.conditions.get_or_insert_with(Vec::new);
    if let Some(condition) = availability(prober, cluster, addon, conds, works, manifests) {
        conditions::set(conds, condition, now);
    }
}

/// The `Available` condition the health prober gives, or `None` to leave it as it is (a
/// lease prober, works not applied yet, a cluster whose availability is unknown).
fn availability(
    prober: &HealthProber,
    cluster: &ManagedCluster,
    addon: &ManagedClusterAddOn,
    conds: &[Condition],
    works: &[ManifestWork],
    manifests: &[Manifest],
) -> Option<NewCondition> {
    match prober {
        HealthProber::None | HealthProber::Lease => return None,
        HealthProber::Work(None) => {
            return Some(available(
                ConditionStatus::True,
                ac::REASON_AVAILABLE_WORK_APPLIED,
                "Addon manifestWork is applied",
            ));
        }
        _ => {}
    }
    conditions::find(conds, ac::CONDITION_MANIFEST_APPLIED)?;
    let cluster_unknown = cluster
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .and_then(|c| conditions::find(c, cc::CONDITION_AVAILABLE))
        .is_some_and(|c| c.status == "Unknown");
    if cluster_unknown {
        return None;
    }
    let manifest_conditions = match deploy_works_available(addon, works) {
        Ok(found) => found,
        Err(condition) => return Some(condition),
    };
    probe_availability(prober, cluster, addon, manifests, &manifest_conditions)
}

/// The manifest conditions of the addon's deploy works, once every one of them is
/// `Available`; otherwise the `Available` condition that says which is not (or that there
/// are none).
fn deploy_works_available<'w>(
    addon: &ManagedClusterAddOn,
    works: &'w [ManifestWork],
) -> Result<Vec<&'w ManifestCondition>, NewCondition> {
    if works.is_empty() {
        return Err(available(
            ConditionStatus::Unknown,
            ac::REASON_AVAILABLE_WORK_NOT_FOUND,
            "Addon manifestWork is not found",
        ));
    }
    let prefix = names::deploy_work_prefix(&addon.metadata.name.clone().unwrap_or_default());
    let mut manifest_conditions: Vec<&ManifestCondition> = Vec::new();
    for work in works {
        if !work
            .metadata
            .name
            .as_deref()
            .unwrap_or("")
            .starts_with(&prefix)
        {
            continue;
        }
        let cond = work
            .status
            .as_ref()
            .and_then(|s| conditions::find(s.conditions(), wc::CONDITION_AVAILABLE));
        match cond {
            None => {
                return Err(available(
                    ConditionStatus::Unknown,
                    ac::REASON_AVAILABLE_WORK_NOT_APPLIED,
                    "Addon manifestWork is not applied yet",
                ));
            }
            Some(c) if c.status == "False" => {
                return Err(available(
                    ConditionStatus::False,
                    ac::REASON_AVAILABLE_WORK_NOT_APPLIED,
                    c.message.clone(),
                ));
            }
            Some(_) => {}
        }
        if let Some(s) = &work.status {
            manifest_conditions.extend(s.manifests().iter());
        }
    }
    Ok(manifest_conditions)
}

/// What the prober's fields say of the addon: no result yet, unavailable (the checker's
/// error), or available; `None` when the prober probes nothing here.
fn probe_availability(
    prober: &HealthProber,
    cluster: &ManagedCluster,
    addon: &ManagedClusterAddOn,
    manifests: &[Manifest],
    manifest_conditions: &[&ManifestCondition],
) -> Option<NewCondition> {
    let (fields, checker) = probe_fields(prober, manifests)?;
    let results: Vec<FieldResult> = fields
        .iter()
        .flat_map(|f| results_for(&f.resource_identifier, manifest_conditions))
        .collect();
    if !fields.is_empty() && results.is_empty() {
        return Some(available(
            ConditionStatus::Unknown,
            ac::REASON_AVAILABLE_NO_PROBE_RESULT,
            "Probe results are not returned",
        ));
    }
    if let Some(checker) = checker
        && let Err(e) = checker(&results, cluster, addon)
    {
        return Some(available(
            ConditionStatus::False,
            ac::REASON_AVAILABLE_PROBE_UNAVAILABLE,
            format!("Probe addon unavailable with err {e}"),
        ));
    }
    Some(available(
        ConditionStatus::True,
        ac::REASON_AVAILABLE_PROBE_AVAILABLE,
        format!(
            "{} add-on is available.",
            addon.metadata.name.as_deref().unwrap_or("")
        ),
    ))
}

/// Whether a work's config-spec-hash annotation matches the addon's desired configs
/// (upstream's `workConfigsMatchesAddon`).
fn work_configs_match(work: &ManifestWork, status: &ManagedClusterAddOnStatus) -> bool {
    let refs = status.config_references.clone().unwrap_or_default();
    let Some(text) = work
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::CONFIG_SPEC_HASH))
    else {
        return refs.is_empty();
    };
    let Ok(work_map) = serde_json::from_str::<std::collections::BTreeMap<String, String>>(text)
    else {
        return false;
    };
    if work_map.values().any(String::is_empty) {
        return false;
    }
    if refs.iter().any(|r| {
        r.desired_config
            .as_ref()
            .is_none_or(|d| d.spec_hash.as_deref().unwrap_or("").is_empty())
    }) {
        return false;
    }
    work_map == configs_to_map(&refs)
}

fn work_ready(work: &ManifestWork) -> bool {
    let generation = work.metadata.generation;
    let ok = |t: &str| {
        work.status
            .as_ref()
            .and_then(|s| conditions::find(s.conditions(), t))
            .is_some_and(|c| c.status == "True" && c.observed_generation == generation)
    };
    ok(wc::CONDITION_AVAILABLE) && ok(wc::CONDITION_APPLIED)
}

fn set_progressing(
    status: &mut ManagedClusterAddOnStatus,
    reason: &str,
    message: &str,
    now: &Time,
) {
    let (st, msg) = match reason {
        ac::REASON_PROGRESSING => (ConditionStatus::True, format!("progressing... {message}")),
        ac::REASON_PROGRESSING_COMPLETED => {
            for r in status.config_references.iter_mut().flatten() {
                r.last_applied_config = r.desired_config.clone();
            }
            (
                ConditionStatus::False,
                "completed with no errors.".to_string(),
            )
        }
        _ => (ConditionStatus::False, message.to_string()),
    };
    conditions::set(
        status.conditions.get_or_insert_with(Vec::new),
        NewCondition::new(ac::CONDITION_PROGRESSING, st, reason, msg),
        now,
    );
}

/// Updates `Progressing` and, when the works match and are ready, the last applied configs
/// (upstream's `addonProgressingController`). `works` are the addon's works: in its namespace,
/// and for a hosted addon also those on the hosting cluster.
pub fn update_progressing(
    addon: &ManagedClusterAddOn,
    status: &mut ManagedClusterAddOnStatus,
    works: &[ManifestWork],
    now: &Time,
) {
    if let Some(condition) = not_progressing(addon, status) {
        conditions::set(
            status.conditions.get_or_insert_with(Vec::new),
            condition,
            now,
        );
        return;
    }
    let (reason, message) = works_progress(addon, status, works);
    set_progressing(status, reason, message, now);
}

/// Whether the addon runs in hosted mode (its hosting-cluster annotation is set).
fn is_hosted(addon: &ManagedClusterAddOn) -> bool {
    addon
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ac::HOSTING_CLUSTER_NAME_ANNOTATION))
        .is_some_and(|h| !h.is_empty())
}

/// `Progressing=False` when the addon cannot progress yet: a config of a kind it does not
/// support, or its manifests (or, hosted, its hosting manifests) not applied yet.
fn not_progressing(
    addon: &ManagedClusterAddOn,
    status: &ManagedClusterAddOnStatus,
) -> Option<NewCondition> {
    let supported = status.supported_configs.as_deref().unwrap_or_default();
    for c in addon.spec.configs.iter().flatten() {
        let known = supported.iter().any(|s| {
            s.group.as_deref().unwrap_or("") == c.group.as_deref().unwrap_or("")
                && s.resource == c.resource
        });
        if !known {
            return Some(NewCondition::new(
                ac::CONDITION_PROGRESSING,
                ConditionStatus::False,
                ac::REASON_PROGRESSING_CONFIGURATION_UNSUPPORTED,
                format!(
                    "Configuration with gvr {}/{} is not supported for this addon",
                    c.group.as_deref().unwrap_or(""),
                    c.resource
                ),
            ));
        }
    }
    let conds = status.conditions.as_deref().unwrap_or_default();
    if conditions::find(conds, ac::CONDITION_MANIFEST_APPLIED).is_none() {
        return Some(NewCondition::new(
            ac::CONDITION_PROGRESSING,
            ConditionStatus::False,
            ac::REASON_WAITING_FOR_MANIFEST_APPLIED,
            ac::MESSAGE_WAITING_FOR_MANIFEST_APPLIED,
        ));
    }
    if is_hosted(addon) && conditions::find(conds, ac::CONDITION_HOSTING_MANIFEST_APPLIED).is_none()
    {
        return Some(NewCondition::new(
            ac::CONDITION_PROGRESSING,
            ConditionStatus::False,
            ac::REASON_WAITING_FOR_HOSTING_MANIFEST_APPLIED,
            ac::MESSAGE_WAITING_FOR_HOSTING_MANIFEST_APPLIED,
        ));
    }
    None
}

/// The addon's works among `works`: those in its namespace, and (hosted) those on the
/// hosting cluster that name its namespace.
fn works_of<'a>(addon: &ManagedClusterAddOn, works: &'a [ManifestWork]) -> Vec<&'a ManifestWork> {
    let hosting = is_hosted(addon);
    works
        .iter()
        .filter(|w| {
            let labels = w.metadata.labels.as_ref();
            let label = |key: &str| labels.and_then(|l| l.get(key));
            label(ac::ADDON_LABEL) == addon.metadata.name.as_ref()
                && match label(ac::ADDON_NAMESPACE_LABEL) {
                    None => true,
                    Some(ns) => hosting && Some(ns) == addon.metadata.namespace.as_ref(),
                }
        })
        .collect()
}

/// The manifests of the addon's works (`works`, as for [`update_progressing`]) that the
/// managed cluster did not apply, one line each: the work, the manifest and the agent's
/// message, e.g. `ManifestWork cluster1/addon-helloworld-deploy-0: manifest 1 (Deployment
/// default/helloworld-agent) not applied: <why>`.
///
/// A manifest counts when its `Applied` condition is `False` in a work whose own `Applied`
/// condition is `False` at the work's current generation, so a report the agent has not yet
/// redone for a changed work is not repeated. Upstream reports these only in the works'
/// status (the addon's `Progressing` condition says `work is not ready`); the addon manager
/// puts them in [`AddonOutcome::failed`](super::AddonOutcome::failed) as well (our addition).
pub fn rejected_manifests(addon: &ManagedClusterAddOn, works: &[ManifestWork]) -> Vec<String> {
    let mut lines = Vec::new();
    for work in works_of(addon, works) {
        let Some(status) = work.status.as_ref() else {
            continue;
        };
        let failed_now = status.condition(wc::CONDITION_APPLIED).is_some_and(|c| {
            c.status == "False" && c.observed_generation == work.metadata.generation
        });
        if !failed_now {
            continue;
        }
        let manifests = status
            .resource_status
            .as_ref()
            .and_then(|r| r.manifests.as_deref())
            .unwrap_or_default();
        for manifest in manifests {
            let Some(applied) = conditions::find(&manifest.conditions, wc::CONDITION_APPLIED)
            else {
                continue;
            };
            if applied.status != "False" {
                continue;
            }
            let meta = &manifest.resource_meta;
            let object = match (meta.namespace.as_deref(), meta.name.as_deref()) {
                (Some(ns), Some(name)) if !ns.is_empty() => format!("{ns}/{name}"),
                (_, Some(name)) => name.to_string(),
                _ => String::new(),
            };
            let why = if applied.message.is_empty() {
                applied.reason.as_str()
            } else {
                applied.message.as_str()
            };
            lines.push(format!(
                "ManifestWork {}/{}: manifest {} ({} {object}) not applied: {why}",
                work.metadata.namespace.as_deref().unwrap_or_default(),
                work.metadata.name.as_deref().unwrap_or_default(),
                meta.ordinal,
                meta.kind.as_deref().unwrap_or("object"),
            ));
        }
    }
    lines
}

/// The `Progressing` reason and message the addon's works give: still progressing while one
/// (hook works aside) is missing, carries other configs than the addon's, or is not ready.
fn works_progress(
    addon: &ManagedClusterAddOn,
    status: &ManagedClusterAddOnStatus,
    works: &[ManifestWork],
) -> (&'static str, &'static str) {
    let addon_works = works_of(addon, works);
    if addon_works.is_empty() {
        return (ac::REASON_PROGRESSING, "no addon works");
    }
    let hook = names::pre_delete_work_name(addon.metadata.name.as_deref().unwrap_or(""));
    for work in addon_works {
        if work
            .metadata
            .name
            .as_deref()
            .unwrap_or("")
            .starts_with(&hook)
        {
            continue;
        }
        if !work_configs_match(work, status) {
            return (ac::REASON_PROGRESSING, "mca and work configs mismatch");
        }
        if !work_ready(work) {
            return (ac::REASON_PROGRESSING, "work is not ready");
        }
    }
    (ac::REASON_PROGRESSING_COMPLETED, "")
}

/// Upstream's `meta.SetStatusCondition` on `HookManifestCompleted`.
pub fn hook_completed(conds: &mut Vec<Condition>, work_name: &str, completed: bool, now: &Time) {
    let (status, reason, message) = if completed {
        (
            ConditionStatus::True,
            ac::REASON_HOOK_MANIFEST_IS_COMPLETED,
            format!("hook manifestWork {work_name} is completed."),
        )
    } else {
        (
            ConditionStatus::False,
            ac::REASON_HOOK_MANIFEST_IS_NOT_COMPLETED,
            format!("hook manifestWork {work_name} is not completed."),
        )
    };
    conditions::set(
        conds,
        NewCondition::new(
            ac::CONDITION_HOOK_MANIFEST_COMPLETED,
            status,
            reason,
            message,
        ),
        now,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn t() -> Time {
        Time("2026-01-01T00:00:00Z".parse().unwrap())
    }

    fn work(name: &str, status: Value, annotations: Value) -> ManifestWork {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "c1", "generation": 1,
                         "labels": {ac::ADDON_LABEL: "a"}, "annotations": annotations},
            "spec": {}, "status": status
        }))
        .unwrap()
    }

    fn cond(t: &str, s: &str) -> Value {
        json!({"type": t, "status": s, "reason": "r", "message": "m", "observedGeneration": 1,
               "lastTransitionTime": "2026-01-01T00:00:00Z"})
    }

    fn addon(spec: Value) -> ManagedClusterAddOn {
        serde_json::from_value(json!({"metadata": {"name": "a", "namespace": "c1"}, "spec": spec}))
            .unwrap()
    }

    fn cluster() -> ManagedCluster {
        serde_json::from_value(json!({"metadata": {"name": "c1"}, "spec": {}})).unwrap()
    }

    #[test]
    fn rejected_manifests_name_work_manifest_and_message_of_the_current_generation() {
        let manifests = json!([
            {"resourceMeta": {"ordinal": 0, "kind": "Namespace", "name": "a"},
             "conditions": [cond("Applied", "True")]},
            {"resourceMeta": {"ordinal": 1, "kind": "Deployment", "namespace": "a", "name": "agent"},
             "conditions": [cond("Applied", "False")]},
            {"resourceMeta": {"ordinal": 2, "kind": "ConfigMap", "namespace": "", "name": "x"},
             "conditions": [{"type": "Applied", "status": "False", "reason": "Refused",
                             "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
        ]);
        let failed = work(
            "addon-a-deploy-0",
            json!({"conditions": [cond("Applied", "False")],
                   "resourceStatus": {"manifests": manifests}}),
            json!({}),
        );
        assert_eq!(
            rejected_manifests(&addon(json!({})), std::slice::from_ref(&failed)),
            [
                "ManifestWork c1/addon-a-deploy-0: manifest 1 (Deployment a/agent) not applied: m",
                "ManifestWork c1/addon-a-deploy-0: manifest 2 (ConfigMap x) not applied: Refused",
            ]
        );
        // A report of an older generation is not repeated; nor are another addon's works.
        let mut changed = failed.clone();
        changed.metadata.generation = Some(2);
        let mut other = failed.clone();
        other
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert(ac::ADDON_LABEL.into(), "b".into());
        assert!(rejected_manifests(&addon(json!({})), &[changed, other]).is_empty());
    }

    #[test]
    fn manifest_applied_follows_the_work() {
        let mut conds = Vec::new();
        manifest_apply_failed(
            &mut conds,
            "ManifestApplied",
            ac::MESSAGE_APPLY_WORK_FAILED_PREFIX,
            "boom",
            &t(),
        );
        manifest_applied_from_work(
            &mut conds,
            "ManifestApplied",
            &work("w", json!({}), json!({})),
            &t(),
        );
        assert!(
            conds.is_empty(),
            "a stale False is cleared while the agent has not reported"
        );
        manifest_applied_from_work(
            &mut conds,
            "ManifestApplied",
            &work(
                "w",
                json!({"conditions": [cond("Applied", "True")]}),
                json!({}),
            ),
            &t(),
        );
        assert_eq!(conds[0].reason, "AddonManifestApplied");
        assert_eq!(
            conds[0].message,
            "manifests of addon are applied successfully"
        );
        manifest_applied_from_work(
            &mut conds,
            "ManifestApplied",
            &work(
                "w",
                json!({"conditions": [cond("Applied", "False")]}),
                json!({}),
            ),
            &t(),
        );
        assert_eq!(conds[0].reason, "AddonManifestAppliedFailed");
    }

    #[test]
    fn work_prober_maps_feedback_to_available() {
        let options = AgentAddonOptions::new("a").with_health_prober(HealthProber::Work(Some(
            super::super::agent::WorkHealthProber::deployments([("ns", "agent")]),
        )));
        let mut status = ManagedClusterAddOnStatus::default();
        let applied = |s: &mut ManagedClusterAddOnStatus| {
            conditions::set(
                s.conditions.get_or_insert_with(Vec::new),
                NewCondition::new("ManifestApplied", ConditionStatus::True, "r", ""),
                &t(),
            );
        };
        // Without ManifestApplied nothing is probed, but the mode is set.
        probe_health(
            &options,
            &cluster(),
            &addon(json!({})),
            &mut status,
            &[],
            &[],
            &t(),
        );
        assert_eq!(
            status.health_check.as_ref().unwrap().mode,
            Some(HealthCheckMode::Customized)
        );
        assert!(status.conditions.as_ref().unwrap().is_empty());
        applied(&mut status);
        probe_health(
            &options,
            &cluster(),
            &addon(json!({})),
            &mut status,
            &[],
            &[],
            &t(),
        );
        let find = |s: &ManagedClusterAddOnStatus| {
            conditions::find(s.conditions.as_ref().unwrap(), "Available")
                .cloned()
                .unwrap()
        };
        assert_eq!(find(&status).reason, "WorkNotFound");
        let feedback = |ready: i64| {
            work(
                "addon-a-deploy-0",
                json!({
            "conditions": [cond("Available", "True")],
            "resourceStatus": {"manifests": [{"resourceMeta": {"ordinal": 0, "group": "apps", "resource": "deployments", "namespace": "ns", "name": "agent"},
                "statusFeedback": {"values": [
                    {"name": "ReadyReplicas", "fieldValue": {"type": "Integer", "integer": ready}},
                    {"name": "Replicas", "fieldValue": {"type": "Integer", "integer": 1}}]},
                "conditions": []}]}}),
                json!({}),
            )
        };
        probe_health(
            &options,
            &cluster(),
            &addon(json!({})),
            &mut status,
            &[feedback(0)],
            &[],
            &t(),
        );
        assert_eq!(find(&status).reason, "ProbeUnavailable");
        assert_eq!(
            find(&status).message,
            "Probe addon unavailable with err desiredNumberReplicas is 1 but readyReplica is 0 for deployments ns/agent"
        );
        probe_health(
            &options,
            &cluster(),
            &addon(json!({})),
            &mut status,
            &[feedback(1)],
            &[],
            &t(),
        );
        assert_eq!(find(&status).reason, "ProbeAvailable");
        assert_eq!(find(&status).message, "a add-on is available.");
        let no_values = work(
            "addon-a-deploy-0",
            json!({"conditions": [cond("Available", "True")]}),
            json!({}),
        );
        probe_health(
            &options,
            &cluster(),
            &addon(json!({})),
            &mut status,
            &[no_values],
            &[],
            &t(),
        );
        assert_eq!(find(&status).reason, "NoProbeResult");
        let unavailable = work(
            "addon-a-deploy-0",
            json!({"conditions": [cond("Available", "False")]}),
            json!({}),
        );
        probe_health(
            &options,
            &cluster(),
            &addon(json!({})),
            &mut status,
            &[unavailable],
            &[],
            &t(),
        );
        assert_eq!(
            (find(&status).status.as_str(), find(&status).reason.as_str()),
            ("False", "WorkNotApplied")
        );

        let lease = AgentAddonOptions::new("a").with_health_prober(HealthProber::Lease);
        let mut s = ManagedClusterAddOnStatus::default();
        probe_health(
            &lease,
            &cluster(),
            &addon(json!({})),
            &mut s,
            &[],
            &[],
            &t(),
        );
        assert_eq!(s.health_check.unwrap().mode, Some(HealthCheckMode::Lease));
        let work_only = AgentAddonOptions::new("a").with_health_prober(HealthProber::Work(None));
        let mut s = ManagedClusterAddOnStatus::default();
        probe_health(
            &work_only,
            &cluster(),
            &addon(json!({})),
            &mut s,
            &[],
            &[],
            &t(),
        );
        assert_eq!(find(&s).reason, "WorkApplied");
    }

    #[test]
    fn progressing_and_last_applied() {
        let a = addon(json!({}));
        let mut status: ManagedClusterAddOnStatus = serde_json::from_value(json!({
            "configReferences": [{"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs",
                "desiredConfig": {"namespace": "c1", "name": "x", "specHash": "h"}}]
        }))
        .unwrap();
        update_progressing(&a, &mut status, &[], &t());
        let find = |s: &ManagedClusterAddOnStatus| {
            conditions::find(s.conditions.as_ref().unwrap(), "Progressing")
                .cloned()
                .unwrap()
        };
        assert_eq!(find(&status).reason, "WaitingForManifestApplied");
        conditions::set(
            status.conditions.as_mut().unwrap(),
            NewCondition::new("ManifestApplied", ConditionStatus::True, "r", ""),
            &t(),
        );
        update_progressing(&a, &mut status, &[], &t());
        assert_eq!(find(&status).message, "progressing... no addon works");
        let annotation = json!({annotations::CONFIG_SPEC_HASH:
            r#"{"addondeploymentconfigs.addon.open-cluster-management.io/c1/x":"old"}"#});
        let ready = json!({"conditions": [cond("Applied", "True"), cond("Available", "True")]});
        update_progressing(
            &a,
            &mut status,
            &[work("addon-a-deploy-0", ready.clone(), annotation)],
            &t(),
        );
        assert_eq!(
            find(&status).message,
            "progressing... mca and work configs mismatch"
        );
        let annotation = json!({annotations::CONFIG_SPEC_HASH:
            r#"{"addondeploymentconfigs.addon.open-cluster-management.io/c1/x":"h"}"#});
        update_progressing(
            &a,
            &mut status,
            &[work("addon-a-deploy-0", json!({}), annotation.clone())],
            &t(),
        );
        assert_eq!(find(&status).message, "progressing... work is not ready");
        update_progressing(
            &a,
            &mut status,
            &[work("addon-a-deploy-0", ready, annotation)],
            &t(),
        );
        assert_eq!(
            (find(&status).status.as_str(), find(&status).reason.as_str()),
            ("False", "Completed")
        );
        assert_eq!(find(&status).message, "completed with no errors.");
        let r = &status.config_references.as_ref().unwrap()[0];
        assert_eq!(r.last_applied_config, r.desired_config);

        let unsupported = addon(json!({"configs": [{"group": "g", "resource": "r", "name": "n"}]}));
        update_progressing(&unsupported, &mut status, &[], &t());
        assert_eq!(find(&status).reason, "ConfigurationUnsupported");
        assert_eq!(
            find(&status).message,
            "Configuration with gvr g/r is not supported for this addon"
        );
    }

    #[test]
    fn wildcards() {
        assert!(wildcard("agent-1", "agent-*"));
        assert!(wildcard("x", "*"));
        assert!(wildcard("a-b-c", "a-*-c"));
        assert!(!wildcard("a-b-d", "a-*-c"));
        assert!(!wildcard("b", "a"));
    }
}
