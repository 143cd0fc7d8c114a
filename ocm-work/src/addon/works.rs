//! Building an addon's ManifestWorks from its manifests (pure): the deploy works (split by
//! size), the pre-delete hook work, their names, labels, owner, orphaning rules, manifest
//! configs and the config-spec-hash annotation, as upstream's addon manager builds them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::ResourceExt;
use ocm_api::addon::v1beta1::{ConfigReference, ManagedClusterAddOn};
use ocm_api::conditions;
use ocm_api::constants::{addon as ac, annotations, groups, work as wc};
use ocm_api::work::split::{SplitWorks, WorkSplitter, WorkTemplate};
use ocm_api::work::v1::{
    DeleteOption, FeedbackRule, FeedbackType, Manifest, ManifestConfigOption, ManifestWork,
    ManifestWorkSpec, ManifestsTemplate, OrphaningRule, PropagationPolicy, ResourceIdentifier,
    SelectivelyOrphan,
};
use serde_json::Value;

use super::agent::{AgentAddonOptions, HealthProber};
use super::names;

/// The controller owner reference of a work to its ManagedClusterAddOn (v1beta1), so that the
/// works go when the addon goes.
pub fn addon_owner(addon: &ManagedClusterAddOn) -> OwnerReference {
    OwnerReference {
        api_version: format!("{}/v1beta1", groups::ADDON),
        kind: "ManagedClusterAddOn".into(),
        name: addon.name_any(),
        uid: addon.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The pre-delete hook manifest config of `manifest` when it is a hook (a Job or Pod labelled
/// or annotated `addon.open-cluster-management.io/addon-pre-delete`): WellKnownStatus
/// feedback for it, by which the hook's completion is judged.
pub fn pre_delete_hook(manifest: &Manifest) -> Option<ManifestConfigOption> {
    let resource = match manifest.kind()? {
        "Job" => "jobs",
        "Pod" => "pods",
        _ => return None,
    };
    let meta = manifest.as_value().get("metadata");
    let has = |field: &str| {
        meta.and_then(|m| m.get(field))
            .and_then(Value::as_object)
            .is_some_and(|m| m.contains_key(ac::PRE_DELETE_HOOK_ANNOTATION))
    };
    if !has("labels") && !has("annotations") {
        return None;
    }
    let mut config = ManifestConfigOption::new(ResourceIdentifier::new(
        manifest.group().unwrap_or(""),
        resource,
        manifest.namespace().unwrap_or(""),
        manifest.name().unwrap_or(""),
    ));
    config.feedback_rules = Some(vec![FeedbackRule::well_known_status()]);
    Some(config)
}

/// Kubernetes' `UnsafeGuessKindToResource`: the lower-cased kind, pluralised.
pub fn guess_resource(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.is_empty() {
        return lower;
    }
    if lower.ends_with('s') {
        return format!("{lower}es");
    }
    if let Some(stem) = lower.strip_suffix('y') {
        let vowel_before = stem.ends_with(['a', 'e', 'i', 'o', 'u']);
        if !vowel_before {
            return format!("{stem}ies");
        }
    }
    format!("{lower}s")
}

fn orphaning_rule(manifest: &Manifest) -> Option<OrphaningRule> {
    let annotated = manifest
        .as_value()
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(ac::DELETION_ORPHAN_ANNOTATION));
    annotated.then(|| {
        ResourceIdentifier::new(
            manifest.group().unwrap_or(""),
            guess_resource(manifest.kind().unwrap_or("")),
            manifest.namespace().unwrap_or(""),
            manifest.name().unwrap_or(""),
        )
    })
}

/// `open-cluster-management.io/config-spec-hash`: a JSON map from
/// `<resource>[.<group>]/<namespace>/<name>` to the desired spec hash of every configuration
/// (upstream's `configsToAnnotations`); `None` when there is no configuration.
pub fn config_spec_hash_annotation(refs: &[ConfigReference]) -> Option<(String, String)> {
    if refs.is_empty() {
        return None;
    }
    let map = configs_to_map(refs);
    let value = Value::Object(
        map.into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
    );
    let mut text = String::new();
    ocm_api::k8s::gojson::push_value(&mut text, &value);
    Some((annotations::CONFIG_SPEC_HASH.to_string(), text))
}

/// Upstream's `ConfigsToMap`: `<resource>[.<group>]/<namespace>/<name>` to desired spec hash,
/// for the references with a desired config.
pub fn configs_to_map(refs: &[ConfigReference]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for r in refs {
        let Some(d) = &r.desired_config else { continue };
        let mut key = r.resource.clone();
        if let Some(g) = r.group.as_deref().filter(|g| !g.is_empty()) {
            key.push('.');
            key.push_str(g);
        }
        key.push_str(&format!(
            "/{}/{}",
            d.namespace.as_deref().unwrap_or(""),
            d.name
        ));
        out.insert(key, d.spec_hash.clone().unwrap_or_default());
    }
    out
}

/// Where an addon's works go: the cluster's namespace (the agent runs on the managed cluster),
/// or, in hosted mode, the hosting cluster's namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkTarget {
    /// The managed cluster (the addon's namespace on the hub).
    Managed,
    /// The hosting cluster of a hosted addon.
    Hosting(String),
}

impl WorkTarget {
    fn namespace(&self, addon: &ManagedClusterAddOn) -> String {
        match self {
            Self::Managed => addon.namespace().unwrap_or_default(),
            Self::Hosting(cluster) => cluster.clone(),
        }
    }

    /// The prefix of the deploy works: `addon-<name>-deploy`, or
    /// `addon-<name>-deploy-hosting-<addon namespace>` on the hosting cluster.
    pub fn deploy_prefix(&self, addon: &ManagedClusterAddOn) -> String {
        let name = addon.name_any();
        match self {
            Self::Managed => names::deploy_work_prefix(&name),
            Self::Hosting(_) => {
                names::deploy_hosting_work_prefix(&addon.namespace().unwrap_or_default(), &name)
            }
        }
    }

    /// The name of the pre-delete hook work: `addon-<name>-pre-delete`, or
    /// `addon-<name>-pre-delete-hosting-<addon namespace>` on the hosting cluster.
    pub fn hook_name(&self, addon: &ManagedClusterAddOn) -> String {
        let name = addon.name_any();
        match self {
            Self::Managed => names::pre_delete_work_name(&name),
            Self::Hosting(_) => {
                names::pre_delete_hosting_work_name(&addon.namespace().unwrap_or_default(), &name)
            }
        }
    }

    /// Labels, and for works in the addon's own namespace the owner reference (works in
    /// another namespace cannot be owned and carry the addon's namespace as a label).
    fn meta(&self, addon: &ManagedClusterAddOn, name: String) -> ObjectMeta {
        let namespace = self.namespace(addon);
        let addon_ns = addon.namespace().unwrap_or_default();
        let mut labels = BTreeMap::from([(ac::ADDON_LABEL.to_string(), addon.name_any())]);
        let mut owner = Some(vec![addon_owner(addon)]);
        if namespace != addon_ns {
            labels.insert(ac::ADDON_NAMESPACE_LABEL.to_string(), addon_ns);
            owner = None;
        }
        ObjectMeta {
            name: Some(name),
            namespace: Some(namespace),
            labels: Some(labels),
            owner_references: owner,
            ..ObjectMeta::default()
        }
    }
}

/// Where a manifest wants to be in hosted mode (upstream's `GetHostedManifestLocation`): the
/// `addon.open-cluster-management.io/hosted-manifest-location` annotation, else the label of
/// that name; `managed`, `hosting` or `none`. Another value is an error.
pub fn manifest_location(manifest: &Manifest) -> Result<Option<String>, String> {
    let get = |field: &str| {
        manifest
            .as_value()
            .pointer(&format!("/metadata/{field}"))
            .and_then(|m| m.get(ac::HOSTED_MANIFEST_LOCATION_ANNOTATION))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    match get("annotations").or_else(|| get("labels")) {
        None => Ok(None),
        Some(v)
            if v == ac::HOSTED_MANIFEST_LOCATION_MANAGED
                || v == ac::HOSTED_MANIFEST_LOCATION_HOSTING
                || v == ac::HOSTED_MANIFEST_LOCATION_NONE =>
        {
            Ok(Some(v))
        }
        Some(v) => Err(format!("not supported manifest location: {v}")),
    }
}

/// The manifests that go to `target` (upstream's `deployable`): without hosted mode every
/// manifest goes to the managed cluster; in hosted mode, the managed cluster gets those
/// without a location or located `managed`, the hosting cluster those located `hosting`.
pub fn deployable_manifests(
    target: &WorkTarget,
    hosted_mode_enabled: bool,
    hosted: bool,
    manifests: &[Manifest],
) -> Result<Vec<Manifest>, String> {
    let mut out = Vec::new();
    for m in manifests {
        let keep = match target {
            WorkTarget::Managed => {
                if !hosted_mode_enabled {
                    true
                } else {
                    let location = manifest_location(m)?;
                    !hosted || location.is_none_or(|l| l == ac::HOSTED_MANIFEST_LOCATION_MANAGED)
                }
            }
            WorkTarget::Hosting(_) => {
                if !hosted_mode_enabled {
                    false
                } else {
                    let location = manifest_location(m)?;
                    hosted && location.as_deref() == Some(ac::HOSTED_MANIFEST_LOCATION_HOSTING)
                }
            }
        };
        if keep {
            out.push(m.clone());
        }
    }
    Ok(out)
}

/// Builds the deploy works of `addon` for `target` from the manifests that go there
/// (upstream's `BuildDeployWorks`): hooks left out, works named `<prefix>-<n>` (see
/// [`WorkTarget::deploy_prefix`]), labelled `open-cluster-management.io/addon-name`, owned by
/// the ManagedClusterAddOn when in its namespace, with the manifest configs, a
/// `SelectivelyOrphan` delete option for manifests annotated
/// `addon.open-cluster-management.io/deletion-orphan`, and the config-spec-hash annotation.
/// `existing` are the current deploy works of this target. Nothing to deploy gives no work.
pub fn build_deploy_works(
    addon: &ManagedClusterAddOn,
    target: &WorkTarget,
    manifests: &[Manifest],
    manifest_configs: &[ManifestConfigOption],
    existing: &[ManifestWork],
    splitter: &WorkSplitter,
) -> Result<SplitWorks, ocm_api::Error> {
    let mut deploy = Vec::new();
    let mut orphans = Vec::new();
    for m in manifests {
        if pre_delete_hook(m).is_some() {
            continue;
        }
        if let Some(rule) = orphaning_rule(m) {
            orphans.push(rule);
        }
        deploy.push(m.clone());
    }
    if deploy.is_empty() {
        return Ok(SplitWorks::default());
    }
    let prefix = target.deploy_prefix(addon);
    let meta = |i: usize| target.meta(addon, format!("{prefix}-{i}"));
    let mut template = WorkTemplate::default();
    template.manifest_configs = manifest_configs.to_vec();
    if !orphans.is_empty() {
        template.delete_option = Some(DeleteOption {
            propagation_policy: Some(PropagationPolicy::SelectivelyOrphan),
            selectively_orphan: Some(SelectivelyOrphan {
                orphaning_rules: Some(orphans),
            }),
            ttl_seconds_after_finished: None,
        });
    }
    let refs = addon
        .status
        .as_ref()
        .and_then(|s| s.config_references.clone())
        .unwrap_or_default();
    if let Some((k, v)) = config_spec_hash_annotation(&refs) {
        template.annotations.insert(k, v);
    }
    let mut existing: Vec<ManifestWork> = existing.to_vec();
    existing.sort_by_key(|w| w.name_any());
    splitter.split(&deploy, &meta, &template, &existing)
}

/// The pre-delete hook work of `addon` for `target` (upstream's `BuildHookWork`), or `None`
/// when no manifest is a hook.
pub fn build_hook_work(
    addon: &ManagedClusterAddOn,
    target: &WorkTarget,
    manifests: &[Manifest],
) -> Option<ManifestWork> {
    let mut hooks = Vec::new();
    let mut configs = Vec::new();
    for m in manifests {
        if let Some(config) = pre_delete_hook(m) {
            hooks.push(m.clone());
            configs.push(config);
        }
    }
    if hooks.is_empty() {
        return None;
    }
    Some(ManifestWork {
        metadata: target.meta(addon, target.hook_name(addon)),
        spec: ManifestWorkSpec {
            workload: Some(ManifestsTemplate {
                manifests: Some(hooks),
            }),
            delete_option: None,
            manifest_configs: Some(configs),
            executor: None,
        },
        status: None,
    })
}

/// One feedback value of one resource, with upstream's `FindManifestValue` quirk: the search
/// stops with nothing at the first status entry that has no values, whichever resource it is.
fn find_manifest_value<'a>(
    work: &'a ManifestWork,
    id: &ResourceIdentifier,
    name: &str,
) -> Option<&'a ocm_api::work::v1::FieldValue> {
    for m in work.status.as_ref()?.manifests() {
        let values = m
            .status_feedbacks
            .as_ref()
            .map(|f| f.values())
            .unwrap_or_default();
        if values.is_empty() {
            return None;
        }
        let meta = &m.resource_meta;
        if meta.group.as_deref().unwrap_or("") == id.group()
            && meta.resource.as_deref().unwrap_or("") == id.resource
            && meta.name.as_deref().unwrap_or("") == id.name
            && meta.namespace.as_deref().unwrap_or("") == id.namespace()
        {
            return values
                .iter()
                .find(|v| v.name == name)
                .map(|v| &v.field_value);
        }
    }
    None
}

/// Whether the hook work completed (upstream's `hookWorkIsCompleted`): the work is
/// `Available`, every Job reports `JobComplete=True` and every Pod `PodPhase=Succeeded`.
pub fn hook_work_completed(work: &ManifestWork) -> bool {
    let available = work
        .status
        .as_ref()
        .is_some_and(|s| conditions::is_true(s.conditions(), wc::CONDITION_AVAILABLE));
    if !available {
        return false;
    }
    let configs = work.spec.manifest_configs.as_deref().unwrap_or_default();
    if configs.is_empty() {
        return false;
    }
    configs.iter().all(|c| {
        let (field, want) = match c.resource_identifier.resource.as_str() {
            "jobs" => ("JobComplete", "True"),
            "pods" => ("PodPhase", "Succeeded"),
            _ => return false,
        };
        find_manifest_value(work, &c.resource_identifier, field).and_then(|v| v.string.as_deref())
            == Some(want)
    })
}

/// A workload found in the manifests: group, resource, namespace, name and (for
/// Deployments) the replica count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// The resource identifier.
    pub identifier: ResourceIdentifier,
    /// `spec.replicas` of a Deployment (absent means 1).
    pub replicas: Option<i64>,
}

/// The Deployments (and with `daemonsets`, the DaemonSets) of `apps` among the manifests.
pub fn workloads(manifests: &[Manifest], daemonsets: bool) -> Vec<Workload> {
    manifests
        .iter()
        .filter(|m| m.group() == Some("apps"))
        .filter_map(|m| {
            let resource = match m.kind()? {
                "Deployment" => "deployments",
                "DaemonSet" if daemonsets => "daemonsets",
                _ => return None,
            };
            Some(Workload {
                identifier: ResourceIdentifier::new(
                    "apps",
                    resource,
                    m.namespace().unwrap_or(""),
                    m.name().unwrap_or(""),
                ),
                replicas: m
                    .as_value()
                    .pointer("/spec/replicas")
                    .and_then(Value::as_i64),
            })
        })
        .collect()
}

/// The manifest configs of the deploy works (upstream's `getManifestConfigOption`): the probe
/// rules of the health prober (Work probe fields, or WellKnownStatus of every Deployment /
/// workload), then the addon's own manifest configs merged in by resource identifier.
pub fn manifest_configs(
    options: &AgentAddonOptions,
    manifests: &[Manifest],
) -> Vec<ManifestConfigOption> {
    let mut out: Vec<ManifestConfigOption> = Vec::new();
    let well_known = |id: ResourceIdentifier| {
        let mut c = ManifestConfigOption::new(id);
        c.feedback_rules = Some(vec![FeedbackRule::well_known_status()]);
        c
    };
    match &options.health_prober {
        Some(HealthProber::Work(Some(prober))) => {
            for f in &prober.probe_fields {
                let mut c = ManifestConfigOption::new(f.resource_identifier.clone());
                c.feedback_rules = Some(f.probe_rules.clone());
                out.push(c);
            }
        }
        Some(HealthProber::DeploymentAvailability) => {
            out.extend(
                workloads(manifests, false)
                    .into_iter()
                    .map(|w| well_known(w.identifier)),
            );
        }
        Some(HealthProber::WorkloadAvailability) => {
            out.extend(
                workloads(manifests, true)
                    .into_iter()
                    .map(|w| well_known(w.identifier)),
            );
        }
        _ => {}
    }
    for mc in &options.manifest_configs {
        match out
            .iter_mut()
            .find(|c| c.resource_identifier == mc.resource_identifier)
        {
            None => out.push(mc.clone()),
            Some(existing) => {
                let mut rules = existing.feedback_rules.take().unwrap_or_default();
                for rule in mc.feedback_rules.iter().flatten() {
                    rules = merge_feedback_rule(rules, rule.clone());
                }
                existing.feedback_rules = Some(rules);
                if mc.update_strategy.is_some() {
                    existing.update_strategy = mc.update_strategy.clone();
                }
            }
        }
    }
    out
}

/// Upstream's `mergeFeedbackRule`: a WellKnownStatus rule is added once; JSONPaths whose
/// name is already present are dropped.
fn merge_feedback_rule(mut rules: Vec<FeedbackRule>, rule: FeedbackRule) -> Vec<FeedbackRule> {
    let has_well_known = rules
        .iter()
        .any(|r| r.type_ == FeedbackType::WellKnownStatus);
    let existing: Vec<String> = rules
        .iter()
        .filter(|r| r.type_ == FeedbackType::JsonPaths)
        .flat_map(|r| r.json_paths.iter().flatten().map(|p| p.name.clone()))
        .collect();
    match &rule.type_ {
        FeedbackType::WellKnownStatus => {
            if !has_well_known {
                rules.push(rule);
            }
        }
        FeedbackType::JsonPaths => {
            let fresh: Vec<_> = rule
                .json_paths
                .unwrap_or_default()
                .into_iter()
                .filter(|p| !existing.contains(&p.name))
                .collect();
            if !fresh.is_empty() {
                rules.push(FeedbackRule::json_paths(fresh));
            }
        }
        // A type this SDK does not know is kept: the work agent reports it.
        _ => rules.push(rule),
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::v1::JsonPath;
    use serde_json::json;

    fn addon(refs: Value) -> ManagedClusterAddOn {
        serde_json::from_value(json!({
            "metadata": {"name": "hello", "namespace": "cluster1", "uid": "u1"},
            "spec": {},
            "status": {"configReferences": refs}
        }))
        .unwrap()
    }

    fn m(v: Value) -> Manifest {
        Manifest::new(v)
    }

    #[test]
    fn kinds_to_resources() {
        assert_eq!(guess_resource("Deployment"), "deployments");
        assert_eq!(guess_resource("Ingress"), "ingresses");
        assert_eq!(guess_resource("NetworkPolicy"), "networkpolicies");
        assert_eq!(guess_resource("Gateway"), "gateways");
    }

    #[test]
    fn deploy_works_leave_hooks_out_and_carry_upstream_metadata() {
        let refs = json!([{"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs",
            "desiredConfig": {"namespace": "cluster1", "name": "proxy", "specHash": "abc"}}]);
        let a = addon(refs);
        let manifests = vec![
            m(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "agent-ns"}})),
            m(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "keep", "namespace": "agent-ns",
                             "annotations": {ac::DELETION_ORPHAN_ANNOTATION: ""}}})),
            m(json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "cleanup", "namespace": "agent-ns",
                             "annotations": {ac::PRE_DELETE_HOOK_ANNOTATION: ""}}})),
        ];
        let works = build_deploy_works(
            &a,
            &WorkTarget::Managed,
            &manifests,
            &[],
            &[],
            &WorkSplitter::new(),
        )
        .unwrap();
        assert_eq!(works.apply.len(), 1);
        let w = serde_json::to_value(&works.apply[0]).unwrap();
        assert_eq!(w["metadata"]["name"], "addon-hello-deploy-0");
        assert_eq!(w["metadata"]["namespace"], "cluster1");
        assert_eq!(w["metadata"]["labels"][ac::ADDON_LABEL], "hello");
        assert_eq!(
            w["metadata"]["ownerReferences"][0]["kind"],
            "ManagedClusterAddOn"
        );
        assert_eq!(w["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(
            w["metadata"]["annotations"][annotations::CONFIG_SPEC_HASH],
            r#"{"addondeploymentconfigs.addon.open-cluster-management.io/cluster1/proxy":"abc"}"#
        );
        assert_eq!(
            w["spec"]["workload"]["manifests"].as_array().unwrap().len(),
            2
        );
        assert_eq!(
            w["spec"]["deleteOption"]["propagationPolicy"],
            "SelectivelyOrphan"
        );
        assert_eq!(
            w["spec"]["deleteOption"]["selectivelyOrphans"]["orphaningRules"][0],
            json!({"group": "", "resource": "configmaps", "namespace": "agent-ns", "name": "keep"})
        );

        let hook = build_hook_work(&a, &WorkTarget::Managed, &manifests).unwrap();
        let h = serde_json::to_value(&hook).unwrap();
        assert_eq!(h["metadata"]["name"], "addon-hello-pre-delete");
        assert_eq!(
            h["spec"]["manifestConfigs"][0]["resourceIdentifier"],
            json!({"group": "batch", "resource": "jobs", "namespace": "agent-ns", "name": "cleanup"})
        );
        assert!(build_hook_work(&a, &WorkTarget::Managed, &manifests[..2]).is_none());
        let none = build_deploy_works(
            &a,
            &WorkTarget::Managed,
            &manifests[2..],
            &[],
            &[],
            &WorkSplitter::new(),
        )
        .unwrap();
        assert!(none.apply.is_empty());
    }

    #[test]
    fn hosted_mode_splits_manifests_between_clusters() {
        let located = |name: &str, location: Option<&str>| {
            let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "n"}});
            if let Some(l) = location {
                v["metadata"]["annotations"] = json!({ac::HOSTED_MANIFEST_LOCATION_ANNOTATION: l});
            }
            m(v)
        };
        let all = vec![
            located("plain", None),
            located("m", Some("managed")),
            located("h", Some("hosting")),
            located("none", Some("none")),
        ];
        let names = |ms: Vec<Manifest>| {
            ms.iter()
                .map(|m| m.name().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        let hosting = WorkTarget::Hosting("hoster".into());
        assert_eq!(
            names(deployable_manifests(&WorkTarget::Managed, false, true, &all).unwrap()).len(),
            4
        );
        assert_eq!(
            names(deployable_manifests(&WorkTarget::Managed, true, false, &all).unwrap()).len(),
            4
        );
        assert_eq!(
            names(deployable_manifests(&WorkTarget::Managed, true, true, &all).unwrap()),
            ["plain", "m"]
        );
        assert_eq!(
            names(deployable_manifests(&hosting, true, true, &all).unwrap()),
            ["h"]
        );
        assert!(
            deployable_manifests(&hosting, true, false, &all)
                .unwrap()
                .is_empty()
        );
        assert!(
            deployable_manifests(&hosting, false, true, &all)
                .unwrap()
                .is_empty()
        );
        let err = deployable_manifests(
            &WorkTarget::Managed,
            true,
            true,
            &[located("x", Some("moon"))],
        )
        .unwrap_err();
        assert_eq!(err, "not supported manifest location: moon");

        let a = addon(json!([]));
        let works =
            build_deploy_works(&a, &hosting, &all[2..3], &[], &[], &WorkSplitter::new()).unwrap();
        let w = serde_json::to_value(&works.apply[0]).unwrap();
        assert_eq!(
            w["metadata"]["name"],
            "addon-hello-deploy-hosting-cluster1-0"
        );
        assert_eq!(w["metadata"]["namespace"], "hoster");
        assert_eq!(
            w["metadata"]["labels"][ac::ADDON_NAMESPACE_LABEL],
            "cluster1"
        );
        assert!(w["metadata"].get("ownerReferences").is_none());
        let hook = build_hook_work(&a, &hosting, &[m(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "n", "annotations": {ac::PRE_DELETE_HOOK_ANNOTATION: ""}}}))]).unwrap();
        assert_eq!(
            hook.metadata.name.as_deref(),
            Some("addon-hello-pre-delete-hosting-cluster1")
        );
    }

    #[test]
    fn hook_completion() {
        let mut hook = build_hook_work(
            &addon(json!([])),
            &WorkTarget::Managed,
            &[m(json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "j", "namespace": "n", "labels": {ac::PRE_DELETE_HOOK_ANNOTATION: ""}}}))],
        )
        .unwrap();
        assert!(!hook_work_completed(&hook));
        let status = |complete: &str| {
            serde_json::from_value(json!({
                "conditions": [{"type": "Available", "status": "True", "reason": "r", "message": "",
                                "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                "resourceStatus": {"manifests": [{
                    "resourceMeta": {"ordinal": 0, "group": "batch", "resource": "jobs", "namespace": "n", "name": "j"},
                    "statusFeedback": {"values": [{"name": "JobComplete", "fieldValue": {"type": "String", "string": complete}}]},
                    "conditions": []}]}
            }))
            .unwrap()
        };
        hook.status = Some(status("False"));
        assert!(!hook_work_completed(&hook));
        hook.status = Some(status("True"));
        assert!(hook_work_completed(&hook));
    }

    #[test]
    fn prober_rules_merge_with_the_addons_own() {
        let manifests = vec![
            m(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "namespace": "n"}}),
            ),
            m(
                json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "b", "namespace": "n"}}),
            ),
        ];
        let mut own =
            ManifestConfigOption::new(ResourceIdentifier::new("apps", "deployments", "n", "a"));
        own.feedback_rules = Some(vec![
            FeedbackRule::well_known_status(),
            FeedbackRule::json_paths([
                JsonPath::new("ReadyReplicas", ".x"),
                JsonPath::new("image", ".y"),
            ]),
        ]);
        let options = AgentAddonOptions::new("x")
            .with_health_prober(HealthProber::WorkloadAvailability)
            .with_manifest_config(own);
        let configs = manifest_configs(&options, &manifests);
        assert_eq!(configs.len(), 2);
        let rules = configs[0].feedback_rules.as_ref().unwrap();
        assert_eq!(
            rules.len(),
            2,
            "WellKnownStatus once, then the new JSONPaths"
        );
        assert_eq!(rules[1].json_paths.as_ref().unwrap().len(), 2);
        let deployments_only = manifest_configs(
            &AgentAddonOptions::new("x").with_health_prober(HealthProber::DeploymentAvailability),
            &manifests,
        );
        assert_eq!(deployments_only.len(), 1);
    }
}
