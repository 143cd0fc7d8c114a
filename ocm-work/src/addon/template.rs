//! Template addons: an [`AddOnTemplate`] turned into a running addon with no Rust code
//! (upstream's `CRDTemplateAgentAddon`).
//!
//! A ClusterManagementAddOn whose `defaultConfigs` (or install-strategy configs) name an
//! `addontemplates` object is a template addon; [`AddonManager::with_templates`](super::AddonManager::with_templates)
//! serves every such addon with a [`TemplateAddon`]. For each cluster the template in
//! `status.configReferences` is rendered:
//!
//! * variables `{{NAME}}` in the manifests are replaced by the values, in this precedence:
//!   the defaults (`HUB_KUBECONFIG` when the template has registrations), the
//!   AddOnDeploymentConfig's `customizedVariables`, then the built-ins `CLUSTER_NAME` and
//!   `INSTALL_NAMESPACE` (the latter only when the config sets `agentInstallNamespace`);
//! * Deployments and DaemonSets get the defaults and built-ins as environment variables, the
//!   hub kubeconfig volume when the template registers a hub client, the config's node
//!   placement, image mirrors (the config's, else the cluster's
//!   `open-cluster-management.io/image-registries` annotation), proxy variables and CA bundle,
//!   and resource requirements;
//! * with `agentInstallNamespace`, every namespaced object, Namespace and (Cluster)RoleBinding
//!   subject moves to that namespace.
//!
//! Upstream replaces an unknown variable with the empty string, silently. That default is
//! kept; [`TemplateAddon::strict_variables`] (our addition) makes it an error, which the
//! manager reports as `ManifestApplied=False`.

use std::collections::BTreeMap;
use std::sync::Arc;

use ocm_api::addon::v1alpha1::{AddOnTemplate, HubPermissionsBindingType, RegistrationType};
use ocm_api::addon::v1beta1::{
    CustomSignerConfig, ImageMirror, ManagedClusterAddOn, RegistrationConfig, Subject,
};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::constants::{addon as ac, annotations, groups};
use ocm_api::work::v1::{Manifest, ManifestConfigOption};
use serde_json::{Value, json};

use super::agent::{
    AddonConfigs, AgentAddon, AgentAddonOptions, ConfigGvr, HealthProber, RegistrationOption,
    RenderError, kube_client_registration,
};
use super::deployment_config::{DeploymentValues, append_env};
use super::names;
use super::permission::HubPermission;

/// An addon defined by an AddOnTemplate.
#[derive(Clone, Debug)]
pub struct TemplateAddon {
    name: String,
    strict: bool,
}

impl TemplateAddon {
    /// The template addon `name` (its ClusterManagementAddOn's name).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            strict: false,
        }
    }

    /// Our opt-in: a `{{VARIABLE}}` with no value is an error instead of the empty string.
    #[must_use]
    pub fn strict_variables(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    fn agent_name(&self) -> String {
        format!("{}-agent", self.name)
    }
}

/// The AddOnTemplate resolved for an addon (the first `addontemplates` config).
pub fn desired_template(
    addon: &ManagedClusterAddOn,
    configs: &AddonConfigs,
) -> Result<AddOnTemplate, RenderError> {
    let name = addon.metadata.name.as_deref().unwrap_or("");
    let Some(c) = configs.get(groups::ADDON, ac::ADDON_TEMPLATE_RESOURCE) else {
        return Err(format!(
            "addon {}/{name} template not found in status",
            addon.metadata.namespace.as_deref().unwrap_or("")
        )
        .into());
    };
    if c.spec_hash.is_empty() {
        return Err(format!("addon {name} template desired spec hash is empty").into());
    }
    c.check()?;
    serde_json::from_value(c.object.clone())
        .map_err(|e| format!("addon template {} is invalid: {e}", c.name).into())
}

fn registries_from_annotation(
    cluster: &ManagedCluster,
) -> Result<Option<Vec<ImageMirror>>, RenderError> {
    let Some(text) = cluster
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::IMAGE_REGISTRIES))
        .filter(|t| !t.is_empty())
    else {
        return Ok(None);
    };
    #[derive(serde::Deserialize)]
    struct Registries {
        #[serde(default)]
        registries: Vec<ImageMirror>,
    }
    let parsed: Registries = serde_json::from_str(text).map_err(|e| {
        format!(
            "annotation {} of cluster {} is invalid: {e}",
            annotations::IMAGE_REGISTRIES,
            cluster.metadata.name.as_deref().unwrap_or("")
        )
    })?;
    Ok((!parsed.registries.is_empty()).then_some(parsed.registries))
}

/// Replaces `{{KEY}}` in `text`; unknown keys become empty (or are collected in `unknown`).
fn substitute(text: &str, values: &BTreeMap<String, String>, unknown: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let key = &after[..end];
        match values.get(key) {
            Some(v) => out.push_str(v),
            None => unknown.push(key.to_string()),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

fn set_namespaces(obj: &mut Value, namespace: &str) {
    let has_ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    if has_ns {
        obj["metadata"]["namespace"] = json!(namespace);
    }
    match obj.get("kind").and_then(Value::as_str) {
        Some("ClusterRoleBinding" | "RoleBinding") => {
            if let Some(Value::Array(subjects)) = obj.get_mut("subjects") {
                for s in subjects {
                    if let Some(s) = s.as_object_mut() {
                        s.insert("namespace".into(), json!(namespace));
                    }
                }
            }
        }
        Some("Namespace") => {
            obj["metadata"]["name"] = json!(namespace);
        }
        _ => {}
    }
}

impl TemplateAddon {
    fn render(
        &self,
        cluster: &ManagedCluster,
        addon: &ManagedClusterAddOn,
        configs: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        let template = desired_template(addon, configs)?;
        let values = match configs.deployment_config()? {
            Some(adc) => DeploymentValues::from_config(&adc)?,
            None => DeploymentValues::default(),
        };
        let mut registries = registries_from_annotation(cluster)?;
        if values.registries.is_some() {
            registries = values.registries.clone();
        }
        let cluster_name = cluster.metadata.name.clone().unwrap_or_default();

        // The defaults, the config's variables, then the built-ins.
        let mut defaults = BTreeMap::new();
        if template.spec.registration.is_some() {
            defaults.insert(
                "HUB_KUBECONFIG".to_string(),
                ac::TEMPLATE_HUB_KUBECONFIG_PATH.to_string(),
            );
        }
        let mut builtins = BTreeMap::from([("CLUSTER_NAME".to_string(), cluster_name)]);
        if let Some(ns) = &values.install_namespace {
            builtins.insert("INSTALL_NAMESPACE".to_string(), ns.clone());
        }
        let mut all = defaults.clone();
        all.extend(values.variables.clone());
        all.extend(builtins.clone());
        let env: Vec<(String, String)> = defaults
            .keys()
            .chain(builtins.keys())
            .map(|k| (k.clone(), all.get(k).cloned().unwrap_or_default()))
            .collect();

        let mut out = Vec::new();
        for (i, manifest) in template.manifests().iter().enumerate() {
            // Manifests nest as deep as the API server takes: written and read back level by
            // level, up to its limit.
            let text = serde_json::to_string(&ocm_api::k8s::json::Deep(manifest.as_value()))?;
            let mut unknown = Vec::new();
            let rendered = substitute(&text, &all, &mut unknown);
            if self.strict && !unknown.is_empty() {
                return Err(format!(
                    "manifest {i} ({} {}) of addon template {} uses undefined variables: {}",
                    manifest.kind().unwrap_or("?"),
                    manifest.name().unwrap_or("?"),
                    template.metadata.name.as_deref().unwrap_or(""),
                    unknown
                        .iter()
                        .map(|k| format!("{{{{{k}}}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
                .into());
            }
            let mut obj: Value = ocm_api::k8s::json::from_slice(rendered.as_bytes()).map_err(|e| {
                format!(
                    "manifest {i} of addon template {} is not valid JSON after substitution: {e}",
                    template.metadata.name.as_deref().unwrap_or("")
                )
            })?;
            self.decorate_workload(&template, &mut obj, &env, &values, registries.as_deref())?;
            if let Some(ns) = &values.install_namespace {
                set_namespaces(&mut obj, ns);
            }
            out.push(Manifest::new(obj));
        }
        if let Some(ca) = values
            .proxy
            .as_ref()
            .and_then(|p| p.ca_bundle.as_ref())
            .filter(|c| !c.0.is_empty())
        {
            let mut cm = json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("{}-proxy-ca", self.name),
                             "namespace": ac::DEFAULT_AGENT_INSTALL_NAMESPACE},
                "data": {ac::TEMPLATE_PROXY_CA_KEY: String::from_utf8_lossy(&ca.0)},
            });
            if let Some(ns) = &values.install_namespace {
                set_namespaces(&mut cm, ns);
            }
            out.push(Manifest::new(cm));
        }
        Ok(out)
    }

    fn decorate_workload(
        &self,
        template: &AddOnTemplate,
        obj: &mut Value,
        env: &[(String, String)],
        values: &DeploymentValues,
        registries: Option<&[ImageMirror]>,
    ) -> Result<(), RenderError> {
        if !matches!(
            obj.get("kind").and_then(Value::as_str),
            Some("Deployment" | "DaemonSet")
        ) || obj.get("apiVersion").and_then(Value::as_str) != Some("apps/v1")
        {
            return Ok(());
        }
        // Volumes for the registrations.
        let mut mounts = Vec::new();
        let mut volumes = Vec::new();
        for r in template.spec.registration.iter().flatten() {
            match r.type_ {
                RegistrationType::KubeClient => {
                    mounts.push(json!({"name": "hub-kubeconfig", "mountPath": ac::TEMPLATE_HUB_KUBECONFIG_MOUNT_PATH}));
                    volumes.push(json!({"name": "hub-kubeconfig",
                        "secret": {"secretName": names::hub_kubeconfig_secret(&self.name)}}));
                }
                RegistrationType::CustomSigner => {
                    let Some(cs) = &r.custom_signer else {
                        return Err("custom signer is nil".into());
                    };
                    let name = format!("cert-{}", cs.signer_name.replace(['/', '.'], "-"));
                    mounts.push(json!({"name": name,
                        "mountPath": format!("/managed/{}", cs.signer_name.replace('/', "-"))}));
                    volumes.push(json!({"name": name,
                        "secret": {"secretName": names::custom_signed_secret(&self.name, &cs.signer_name)}}));
                }
                // A type this SDK does not know has no credential to mount.
                _ => {}
            }
        }
        let proxy_ca = values
            .proxy
            .as_ref()
            .and_then(|p| p.ca_bundle.as_ref())
            .is_some_and(|c| !c.0.is_empty());
        if let Some(Value::Object(pod)) = obj.pointer_mut("/spec/template/spec") {
            if let Some(Value::Array(containers)) = pod.get_mut("containers") {
                for c in containers.iter_mut() {
                    if let Some(c) = c.as_object_mut() {
                        append_env(c, env);
                        if !mounts.is_empty() {
                            let list = c.entry("volumeMounts").or_insert_with(|| json!([]));
                            if let Value::Array(list) = list {
                                list.extend(mounts.iter().cloned());
                            }
                        }
                    }
                }
            }
            if !volumes.is_empty() {
                let list = pod.entry("volumes").or_insert_with(|| json!([]));
                if let Value::Array(list) = list {
                    list.extend(volumes);
                }
            }
        }
        let mut decorate = values.clone();
        decorate.registries = registries.map(<[ImageMirror]>::to_vec);
        decorate.decorate_pod_template(obj)?;
        if proxy_ca && let Some(Value::Object(pod)) = obj.pointer_mut("/spec/template/spec") {
            if let Some(Value::Array(containers)) = pod.get_mut("containers") {
                for c in containers.iter_mut() {
                    if let Some(c) = c.as_object_mut() {
                        append_env(
                            c,
                            &[(
                                "CA_BUNDLE_FILE_PATH".to_string(),
                                format!(
                                    "{}/{}",
                                    ac::TEMPLATE_PROXY_CA_MOUNT_PATH,
                                    ac::TEMPLATE_PROXY_CA_KEY
                                ),
                            )],
                        );
                        let list = c.entry("volumeMounts").or_insert_with(|| json!([]));
                        if let Value::Array(list) = list {
                            list.push(json!({"name": "proxy-ca-bundle", "mountPath": ac::TEMPLATE_PROXY_CA_MOUNT_PATH}));
                        }
                    }
                }
            }
            let list = pod.entry("volumes").or_insert_with(|| json!([]));
            if let Value::Array(list) = list {
                list.push(json!({"name": "proxy-ca-bundle",
                    "configMap": {"name": format!("{}-proxy-ca", self.name)}}));
            }
        }
        Ok(())
    }
}

/// The registrations of a template addon's agent: upstream's default identity for each
/// `kubeClient` registration, the template's subject (or the default one) for each
/// `customSigner`.
fn template_registrations(
    cluster: &ManagedCluster,
    addon: &ManagedClusterAddOn,
    configs: &AddonConfigs,
    addon_name: &str,
    agent_name: &str,
) -> Result<Vec<RegistrationConfig>, RenderError> {
    let template = desired_template(addon, configs).map_err(|e| {
        format!(
            "CSRConfigurations failed to get addon template for addon {}/{addon_name}: {e}",
            cluster.metadata.name.as_deref().unwrap_or("")
        )
    })?;
    let cluster_name = cluster.metadata.name.clone().unwrap_or_default();
    let mut out: Vec<RegistrationConfig> = Vec::new();
    for r in template.spec.registration.iter().flatten() {
        match &r.type_ {
            RegistrationType::KubeClient => out.push(kube_client_registration(
                names::default_user(&cluster_name, addon_name, agent_name),
                names::default_groups(&cluster_name, addon_name),
            )),
            RegistrationType::CustomSigner => {
                let Some(cs) = &r.custom_signer else { continue };
                let (user, groups, units) = match &cs.subject {
                    Some(s) => (
                        s.user.clone(),
                        s.groups.clone(),
                        s.organization_unit.clone(),
                    ),
                    None => (
                        Some(names::default_user(&cluster_name, addon_name, agent_name)),
                        Some(names::default_groups(&cluster_name, addon_name)),
                        None,
                    ),
                };
                out.push(RegistrationConfig {
                    type_: ocm_api::addon::v1beta1::RegistrationType::CustomSigner,
                    kube_client: None,
                    custom_signer: Some(CustomSignerConfig {
                        signer_name: cs.signer_name.clone(),
                        subject: Some(Subject {
                            user,
                            groups,
                            organization_units: units,
                        }),
                    }),
                });
            }
            // As upstream: a type this SDK does not know is logged and skipped.
            other => tracing::info!(
                addon = %addon_name,
                type_ = %other,
                "unsupported registration type"
            ),
        }
    }
    Ok(out)
}

/// The hub permissions the template's `kubeClient` registrations ask for.
fn template_permissions(
    addon: &ManagedClusterAddOn,
    configs: &AddonConfigs,
) -> Result<Vec<HubPermission>, RenderError> {
    let template = desired_template(addon, configs)?;
    let mut out = Vec::new();
    for r in template.spec.registration.iter().flatten() {
        if r.type_ != RegistrationType::KubeClient {
            continue;
        }
        for p in r
            .kube_client
            .iter()
            .flat_map(|k| k.hub_permissions.iter().flatten())
        {
            match p.type_ {
                HubPermissionsBindingType::CurrentCluster => {
                    let Some(c) = &p.current_cluster else {
                        return Err("current cluster is required when the HubPermission type is CurrentCluster".into());
                    };
                    out.push(HubPermission::CurrentCluster {
                        cluster_role: c.cluster_role_name.clone(),
                    });
                }
                HubPermissionsBindingType::SingleNamespace => {
                    let Some(s) = &p.single_namespace else {
                        return Err("single namespace is required when the HubPermission type is SingleNamespace".into());
                    };
                    out.push(HubPermission::SingleNamespace {
                        namespace: s.namespace.clone(),
                        role_ref: serde_json::to_value(&s.role_ref)
                            .and_then(serde_json::from_value)
                            .map_err(|e| format!("invalid roleRef in hubPermissions: {e}"))?,
                    });
                }
                // As upstream: a binding type this SDK does not know grants nothing.
                _ => {}
            }
        }
    }
    Ok(out)
}

/// The agent's namespace: the template's first Deployment's (else DaemonSet's) namespace,
/// overridden by the AddOnDeploymentConfig's `agentInstallNamespace`.
fn template_install_namespace(
    addon: &ManagedClusterAddOn,
    configs: &AddonConfigs,
) -> Result<String, RenderError> {
    let template = desired_template(addon, configs)?;
    let mut deployment = None;
    let mut daemonset = None;
    for m in template.manifests() {
        match (m.group(), m.kind()) {
            (Some("apps"), Some("Deployment")) if deployment.is_none() => {
                deployment = m.namespace().map(str::to_string);
            }
            (Some("apps"), Some("DaemonSet")) if daemonset.is_none() => {
                daemonset = m.namespace().map(str::to_string);
            }
            _ => {}
        }
    }
    let mut ns = deployment
        .or(daemonset)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| ac::DEFAULT_AGENT_INSTALL_NAMESPACE.to_string());
    if let Some(adc) = configs.deployment_config()?
        && let Some(n) = adc.spec.agent_install_namespace.filter(|n| !n.is_empty())
    {
        ns = n;
    }
    Ok(ns)
}

impl AgentAddon for TemplateAddon {
    fn options(&self) -> AgentAddonOptions {
        let addon_name = self.name.clone();
        let agent_name = self.agent_name();
        let registration = RegistrationOption::from_fn(Arc::new(move |cluster, addon, configs| {
            template_registrations(cluster, addon, configs, &addon_name, &agent_name)
        }))
        .with_permissions_fn(Arc::new(|_, addon, configs| {
            template_permissions(addon, configs)
        }));
        let mut options = AgentAddonOptions::new(self.name.clone())
            .with_health_prober(HealthProber::WorkloadAvailability)
            .with_supported_config(ConfigGvr::addon_deployment_config())
            .with_supported_config(ConfigGvr::addon_template())
            .with_registration(registration)
            .with_config_check(true);
        options.agent_install_namespace = Some(Arc::new(template_install_namespace));
        options
    }

    fn manifests(
        &self,
        cluster: &ManagedCluster,
        addon: &ManagedClusterAddOn,
        configs: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        self.render(cluster, addon, configs)
    }

    fn extra_manifest_configs(
        &self,
        _cluster: &ManagedCluster,
        addon: &ManagedClusterAddOn,
        configs: &AddonConfigs,
    ) -> Vec<ManifestConfigOption> {
        desired_template(addon, configs)
            .ok()
            .and_then(|t| t.spec.agent_spec.manifest_configs)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addon::agent::ResolvedConfig;

    fn template_config(manifests: Value, registration: Value) -> ResolvedConfig {
        let mut spec =
            json!({"addonName": "hello", "agentSpec": {"workload": {"manifests": manifests}}});
        if !registration.is_null() {
            spec["registration"] = registration;
        }
        ResolvedConfig {
            group: groups::ADDON.into(),
            resource: "addontemplates".into(),
            namespace: None,
            name: "hello-v1".into(),
            spec_hash: "h".into(),
            error: None,
            object: json!({"apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "AddOnTemplate",
                           "metadata": {"name": "hello-v1"}, "spec": spec}),
        }
    }

    fn adc(spec: Value) -> ResolvedConfig {
        ResolvedConfig {
            group: groups::ADDON.into(),
            resource: "addondeploymentconfigs".into(),
            namespace: Some("c1".into()),
            name: "cfg".into(),
            spec_hash: "h2".into(),
            error: None,
            object: json!({"apiVersion": "addon.open-cluster-management.io/v1beta1", "kind": "AddOnDeploymentConfig",
                           "metadata": {"name": "cfg", "namespace": "c1"}, "spec": spec}),
        }
    }

    fn cluster() -> ManagedCluster {
        serde_json::from_value(json!({"metadata": {"name": "c1"}, "spec": {}})).unwrap()
    }

    fn addon() -> ManagedClusterAddOn {
        serde_json::from_value(
            json!({"metadata": {"name": "hello", "namespace": "c1"}, "spec": {}}),
        )
        .unwrap()
    }

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "agent", "namespace": "default"},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "quay.io/x/agent:v1",
                "args": ["--cluster={{CLUSTER_NAME}}", "--level={{LOG_LEVEL}}"]}]}}}})
    }

    #[test]
    fn variables_and_decorations() {
        let configs = AddonConfigs::new(vec![
            template_config(
                json!([deployment(),
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": "b"}, "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]}]),
                json!([{"type": "KubeClient", "kubeClient": {"hubPermissions": [
                    {"type": "CurrentCluster", "currentCluster": {"clusterRoleName": "viewer"}}]}}]),
            ),
            adc(
                json!({"customizedVariables": [{"name": "LOG_LEVEL", "value": "2"}, {"name": "CLUSTER_NAME", "value": "ignored"}],
                       "agentInstallNamespace": "agents",
                       "registries": [{"source": "quay.io/x", "mirror": "local/x"}],
                       "proxyConfig": {"httpProxy": "http://p:3128", "caBundle": "Q0E="}}),
            ),
        ]);
        let t = TemplateAddon::new("hello");
        let out = t.manifests(&cluster(), &addon(), &configs).unwrap();
        assert_eq!(out.len(), 3, "deployment, binding, proxy CA ConfigMap");
        let d = out[0].as_value();
        let c = &d["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["args"], json!(["--cluster=c1", "--level=2"]));
        assert_eq!(c["image"], "local/x/agent:v1");
        assert_eq!(d["metadata"]["namespace"], "agents");
        let env: Vec<&str> = c["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            env,
            [
                "HUB_KUBECONFIG",
                "CLUSTER_NAME",
                "INSTALL_NAMESPACE",
                "HTTP_PROXY",
                "http_proxy",
                "CA_BUNDLE_FILE_PATH"
            ]
        );
        assert_eq!(c["volumeMounts"][0]["mountPath"], "/managed/hub-kubeconfig");
        assert_eq!(
            d["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"],
            "hello-hub-kubeconfig"
        );
        assert_eq!(out[1].as_value()["subjects"][0]["namespace"], "agents");
        assert_eq!(out[2].as_value()["metadata"]["namespace"], "agents");
        assert_eq!(out[2].as_value()["data"]["ca-bundle.crt"], "CA");

        let options = t.options();
        let ns = (options.agent_install_namespace.unwrap())(&addon(), &configs).unwrap();
        assert_eq!(ns, "agents");
        let reg = options.registration.unwrap();
        let regs = (reg.configurations)(&cluster(), &addon(), &configs).unwrap();
        assert_eq!(regs.len(), 1);
        let perms = (reg.permissions_fn.unwrap())(&cluster(), &addon(), &configs).unwrap();
        assert_eq!(
            perms,
            [HubPermission::CurrentCluster {
                cluster_role: "viewer".into()
            }]
        );
    }

    #[test]
    fn unknown_variables_are_empty_unless_strict() {
        let configs = AddonConfigs::new(vec![template_config(json!([deployment()]), Value::Null)]);
        let out = TemplateAddon::new("hello")
            .manifests(&cluster(), &addon(), &configs)
            .unwrap();
        assert_eq!(
            out[0].as_value()["spec"]["template"]["spec"]["containers"][0]["args"][1],
            "--level="
        );
        let err = TemplateAddon::new("hello")
            .strict_variables(true)
            .manifests(&cluster(), &addon(), &configs)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "manifest 0 (Deployment agent) of addon template hello-v1 uses undefined variables: {{LOG_LEVEL}}"
        );
        // The namespace of the first Deployment is the registration namespace.
        let ns = (TemplateAddon::new("hello")
            .options()
            .agent_install_namespace
            .unwrap())(&addon(), &configs)
        .unwrap();
        assert_eq!(ns, "default");
    }

    #[test]
    fn bad_input_is_an_error() {
        let err = TemplateAddon::new("hello")
            .manifests(&cluster(), &addon(), &AddonConfigs::default())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "addon c1/hello template not found in status"
        );
        let broken = AddonConfigs::new(vec![
            template_config(
                json!([{"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x"}, "data": {"q": "{{QUOTE}}"}}]),
                Value::Null,
            ),
            adc(json!({"customizedVariables": [{"name": "QUOTE", "value": "a\"b"}]})),
        ]);
        let err = TemplateAddon::new("hello")
            .manifests(&cluster(), &addon(), &broken)
            .unwrap_err();
        assert!(
            err.to_string().starts_with(
                "manifest 0 of addon template hello-v1 is not valid JSON after substitution"
            ),
            "{err}"
        );
    }
}
