//! The [`AgentAddon`] trait an addon implements, and its options (addon-framework's
//! `agent.AgentAddon` and `AgentAddonOptions`).

use std::fmt;
use std::sync::Arc;

use ocm_api::addon::v1alpha1::InstallStrategy;
use ocm_api::addon::v1beta1::{
    AddOnConfig, AddOnDeploymentConfig, ConfigGroupResource, KubeClientConfig, KubeClientSubject,
    ManagedClusterAddOn, RegistrationConfig, RegistrationType,
};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::constants::{addon as ac, groups};
use ocm_api::work::v1::{
    FeedbackRule, Manifest, ManifestConfigOption, ResourceIdentifier, StatusFeedbackResult,
};
use serde_json::Value;

use super::names;
use super::permission::HubPermission;

/// The error an addon's callbacks return: any error; its text becomes a condition message.
pub type RenderError = Box<dyn std::error::Error + Send + Sync>;

/// An addon: what to install on a managed cluster, and how the manager treats it.
///
/// The [`AddonManager`](super::AddonManager) calls [`manifests`](Self::manifests) for every
/// `ManagedClusterAddOn` of the addon whose registration is applied, puts the objects into
/// ManifestWorks named and labelled as upstream's addon manager does, and keeps the
/// `ManagedClusterAddOn` status. `manifests` is pure: everything it may read is passed in,
/// including the configuration objects resolved for this cluster ([`AddonConfigs`]), so it
/// can be unit-tested without a hub.
///
/// Every manifest must carry `apiVersion` and `kind`. A recommended set: the agent's
/// namespace, its Deployment, what the Deployment mounts, and the agent's RBAC *on the managed
/// cluster* (hub RBAC goes in [`RegistrationOption::permissions`]).
pub trait AgentAddon: Send + Sync {
    /// The addon's options; called often, so keep it cheap.
    fn options(&self) -> AgentAddonOptions;

    /// The objects to install on `cluster` for `addon`, given the configurations resolved for
    /// it. An error becomes `ManifestApplied=False` on the `ManagedClusterAddOn`, with the
    /// message `failed to get manifest from agent interface: <error>`.
    fn manifests(
        &self,
        cluster: &ManagedCluster,
        addon: &ManagedClusterAddOn,
        configs: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError>;

    /// Manifest configs added to the deploy works for this addon, besides
    /// [`AgentAddonOptions::manifest_configs`] (the template addon returns its template's).
    fn extra_manifest_configs(
        &self,
        _cluster: &ManagedCluster,
        _addon: &ManagedClusterAddOn,
        _configs: &AddonConfigs,
    ) -> Vec<ManifestConfigOption> {
        Vec::new()
    }
}

/// A function deciding the agent's install namespace from the addon and its configurations;
/// an empty answer keeps the default.
pub type InstallNamespaceFn =
    Arc<dyn Fn(&ManagedClusterAddOn, &AddonConfigs) -> Result<String, RenderError> + Send + Sync>;

/// A function giving the registrations (hub credentials) of the agent on one cluster.
pub type RegistrationsFn = Arc<
    dyn Fn(
            &ManagedCluster,
            &ManagedClusterAddOn,
            &AddonConfigs,
        ) -> Result<Vec<RegistrationConfig>, RenderError>
        + Send
        + Sync,
>;

/// A function giving hub permissions that depend on the cluster, the addon or its
/// configurations (the template addon's `hubPermissions`).
pub type PermissionsFn = Arc<
    dyn Fn(
            &ManagedCluster,
            &ManagedClusterAddOn,
            &AddonConfigs,
        ) -> Result<Vec<HubPermission>, RenderError>
        + Send
        + Sync,
>;

/// Answers the install mode (`Default` or `Hosted`, see
/// [`ocm_api::constants::addon::INSTALL_MODE_HOSTED`]) and the hosting cluster of an addon.
pub type HostedModeInfoFn =
    Arc<dyn Fn(&ManagedClusterAddOn, &ManagedCluster) -> (String, String) + Send + Sync>;

/// Upstream's `GetHostedModeInfo`: `Hosted` on the cluster named by the
/// `addon.open-cluster-management.io/hosting-cluster-name` annotation, `Default` without it.
pub fn hosted_mode_from_annotation(
    addon: &ManagedClusterAddOn,
    _: &ManagedCluster,
) -> (String, String) {
    match addon
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ac::HOSTING_CLUSTER_NAME_ANNOTATION))
    {
        Some(hosting) => (ac::INSTALL_MODE_HOSTED.to_string(), hosting.clone()),
        None => (ac::INSTALL_MODE_DEFAULT.to_string(), String::new()),
    }
}

/// Checks probe results; an `Err` makes the addon `Available=False` with its text.
pub type HealthCheckerFn = Arc<
    dyn Fn(&[FieldResult], &ManagedCluster, &ManagedClusterAddOn) -> Result<(), String>
        + Send
        + Sync,
>;

/// The options of an addon (addon-framework's `AgentAddonOptions`).
#[derive(Clone)]
#[non_exhaustive]
pub struct AgentAddonOptions {
    /// The addon's name: the name of its ClusterManagementAddOn and ManagedClusterAddOns.
    pub addon_name: String,
    /// How the agent is registered to the hub; `None` sets `RegistrationApplied=True` with
    /// reason `NilRegistration`.
    pub registration: Option<RegistrationOption>,
    /// How the addon's health is judged; `None` leaves `status.healthCheck` and `Available`
    /// alone (upstream: then the registration agent's lease check applies).
    pub health_prober: Option<HealthProber>,
    /// Overrides the namespace written to `status.namespace` (where the agent's credentials
    /// and lease live).
    pub agent_install_namespace: Option<InstallNamespaceFn>,
    /// The configuration kinds the addon supports (`status.supportedConfigs`); configurations
    /// of other kinds a ManagedClusterAddOn names make it `Progressing=False` with reason
    /// `ConfigurationUnsupported`.
    pub supported_configs: Vec<ConfigGvr>,
    /// Manifest configs (update strategy, feedback rules) added to the deploy works, merged
    /// with the probe rules of the health prober.
    pub manifest_configs: Vec<ManifestConfigOption>,
    /// Render the manifests only once the `Configured` condition is `True`.
    pub config_check_enabled: bool,
    /// Hosted mode: manifests located `hosting` go to the hosting cluster of addons whose
    /// install mode is `Hosted` (upstream's `HostedModeEnabled`).
    pub hosted_mode_enabled: bool,
    /// The install mode and hosting cluster of an addon (upstream's `HostedModeInfoFunc`);
    /// hosted mode needs one.
    pub hosted_mode_info: Option<HostedModeInfoFn>,
    /// Our addition: when set, [`AddonManager::ensure_cluster_management_addons`](super::AddonManager::ensure_cluster_management_addons)
    /// creates the ClusterManagementAddOn with this install strategy if it does not exist.
    pub install_strategy: Option<InstallStrategy>,
    /// Our addition: default configurations for the ClusterManagementAddOn created by
    /// `ensure_cluster_management_addons`.
    pub default_configs: Vec<AddOnConfig>,
}

impl fmt::Debug for AgentAddonOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentAddonOptions")
            .field("addon_name", &self.addon_name)
            .field("registration", &self.registration)
            .field("health_prober", &self.health_prober)
            .field("supported_configs", &self.supported_configs)
            .field("config_check_enabled", &self.config_check_enabled)
            .finish_non_exhaustive()
    }
}

impl AgentAddonOptions {
    /// Options for the addon `name`, with nothing else set.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            addon_name: name.into(),
            registration: None,
            health_prober: None,
            agent_install_namespace: None,
            supported_configs: Vec::new(),
            manifest_configs: Vec::new(),
            config_check_enabled: false,
            hosted_mode_enabled: false,
            hosted_mode_info: None,
            install_strategy: None,
            default_configs: Vec::new(),
        }
    }

    /// Sets the registration.
    #[must_use]
    pub fn with_registration(mut self, registration: RegistrationOption) -> Self {
        self.registration = Some(registration);
        self
    }

    /// Sets the health prober.
    #[must_use]
    pub fn with_health_prober(mut self, prober: HealthProber) -> Self {
        self.health_prober = Some(prober);
        self
    }

    /// Adds a supported configuration kind.
    #[must_use]
    pub fn with_supported_config(mut self, gvr: ConfigGvr) -> Self {
        self.supported_configs.push(gvr);
        self
    }

    /// Adds a manifest config.
    #[must_use]
    pub fn with_manifest_config(mut self, config: ManifestConfigOption) -> Self {
        self.manifest_configs.push(config);
        self
    }

    /// Sets the install namespace function.
    #[must_use]
    pub fn with_agent_install_namespace(mut self, f: InstallNamespaceFn) -> Self {
        self.agent_install_namespace = Some(f);
        self
    }

    /// Waits for `Configured=True` before rendering.
    #[must_use]
    pub fn with_config_check(mut self, enabled: bool) -> Self {
        self.config_check_enabled = enabled;
        self
    }

    /// Enables hosted mode, with the install mode read from the hosting-cluster annotation
    /// unless a function was set already.
    #[must_use]
    pub fn with_hosted_mode(mut self) -> Self {
        self.hosted_mode_enabled = true;
        if self.hosted_mode_info.is_none() {
            self.hosted_mode_info = Some(Arc::new(hosted_mode_from_annotation));
        }
        self
    }

    /// Sets the install strategy of the ClusterManagementAddOn the manager creates.
    #[must_use]
    pub fn with_install_strategy(mut self, strategy: InstallStrategy) -> Self {
        self.install_strategy = Some(strategy);
        self
    }

    /// Adds a default configuration of the ClusterManagementAddOn the manager creates.
    #[must_use]
    pub fn with_default_config(mut self, config: AddOnConfig) -> Self {
        self.default_configs.push(config);
        self
    }

    /// Whether configurations of `group`/`resource` are supported.
    pub fn supports(&self, group: &str, resource: &str) -> bool {
        self.supported_configs
            .iter()
            .any(|g| g.group == group && g.resource == resource)
    }
}

/// A configuration kind: group, version (used to read objects) and plural resource.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfigGvr {
    /// API group (empty for the core group).
    pub group: String,
    /// API version to read the objects with.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl ConfigGvr {
    /// A configuration kind.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
        }
    }

    /// `addon.open-cluster-management.io/v1beta1` `addondeploymentconfigs` (upstream's
    /// `AddOnDeploymentConfigGVR`).
    pub fn addon_deployment_config() -> Self {
        Self::new(
            groups::ADDON,
            "v1beta1",
            ac::ADDON_DEPLOYMENT_CONFIG_RESOURCE,
        )
    }

    /// `addon.open-cluster-management.io/v1alpha1` `addontemplates` (upstream's
    /// `AddOnTemplateGVR`).
    pub fn addon_template() -> Self {
        Self::new(groups::ADDON, "v1alpha1", ac::ADDON_TEMPLATE_RESOURCE)
    }

    /// The group and resource, as the addon API writes them.
    pub fn group_resource(&self) -> ConfigGroupResource {
        ConfigGroupResource {
            group: Some(self.group.clone()),
            resource: self.resource.clone(),
        }
    }
}

/// How the agent is registered to the hub (addon-framework's `RegistrationOption`).
///
/// The certificate parts of upstream's option (CSR approval and signing) need a registration
/// agent on the managed cluster, which this SDK does not have; see the
/// [guide](super::guide#hub-credentials-for-the-agent) for what to do instead.
#[derive(Clone)]
#[non_exhaustive]
pub struct RegistrationOption {
    /// The registrations written to `status.registrations`.
    pub configurations: RegistrationsFn,
    /// The hub RBAC the manager creates for the agent (upstream's `PermissionConfig`).
    pub permissions: Vec<HubPermission>,
    /// More hub RBAC, computed per addon.
    pub permissions_fn: Option<PermissionsFn>,
}

impl fmt::Debug for RegistrationOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistrationOption")
            .field("permissions", &self.permissions)
            .finish_non_exhaustive()
    }
}

impl RegistrationOption {
    /// A hub API client registration with upstream's default identity
    /// (`system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>` and its
    /// two groups), as `KubeClientSignerConfigurations(addon, agent)` gives.
    pub fn kube_client(addon_name: impl Into<String>, agent_name: impl Into<String>) -> Self {
        let addon_name = addon_name.into();
        let agent_name = agent_name.into();
        Self {
            configurations: Arc::new(move |cluster, _, _| {
                let cluster = cluster.metadata.name.clone().unwrap_or_default();
                Ok(vec![kube_client_registration(
                    names::default_user(&cluster, &addon_name, &agent_name),
                    names::default_groups(&cluster, &addon_name),
                )])
            }),
            permissions: Vec::new(),
            permissions_fn: None,
        }
    }

    /// Registrations from a function.
    pub fn from_fn(configurations: RegistrationsFn) -> Self {
        Self {
            configurations,
            permissions: Vec::new(),
            permissions_fn: None,
        }
    }

    /// Adds a hub permission.
    #[must_use]
    pub fn with_permission(mut self, permission: HubPermission) -> Self {
        self.permissions.push(permission);
        self
    }

    /// Computes more hub permissions per addon.
    #[must_use]
    pub fn with_permissions_fn(mut self, f: PermissionsFn) -> Self {
        self.permissions_fn = Some(f);
        self
    }
}

/// A `kubeClient` registration for `user` and `groups` (upstream's
/// `KubeClientRegistration.RegistrationAPI`).
pub fn kube_client_registration(user: String, groups: Vec<String>) -> RegistrationConfig {
    let subject = (!user.is_empty() || !groups.is_empty()).then(|| KubeClientSubject {
        user: (!user.is_empty()).then_some(user),
        groups: (!groups.is_empty()).then_some(groups),
    });
    RegistrationConfig {
        type_: RegistrationType::KubeClient,
        kube_client: subject.map(|s| KubeClientConfig {
            subject: Some(s),
            driver: None,
        }),
        custom_signer: None,
    }
}

/// How an addon's health is judged (addon-framework's `HealthProber`).
#[derive(Clone)]
#[non_exhaustive]
pub enum HealthProber {
    /// No health check: `status.healthCheck.mode` is `Customized` and `Available` is left to
    /// the addon.
    None,
    /// The agent renews a Lease named after the addon in its install namespace; mode `Lease`.
    /// Upstream's registration agent turns the lease into `Available`; here
    /// [`LeaseHealthChecker`](super::lease::LeaseHealthChecker) does.
    Lease,
    /// `Available` follows the deploy works: `Available` work condition, then the probe
    /// fields' feedback values checked by the health checker (mode `Customized`).
    Work(Option<WorkHealthProber>),
    /// Every Deployment in the manifests (with replicas other than 0) must have a ready
    /// replica (mode `Customized`).
    DeploymentAvailability,
    /// Every Deployment (replicas other than 0) and DaemonSet in the manifests must be ready
    /// (mode `Customized`).
    WorkloadAvailability,
}

impl HealthProber {
    /// [`Work`](Self::Work) health in one call: read `fields` from the deploy works'
    /// feedback and judge them with `checker` (an `Err` makes the addon `Available=False`
    /// with its text). The same as
    /// `HealthProber::Work(Some(WorkHealthProber::new(fields, Some(Arc::new(checker)))))`,
    /// and the closure's argument types need no annotations.
    ///
    /// ```
    /// use ocm_api::work::v1::{FeedbackRule, JsonPath, ResourceIdentifier};
    /// use ocm_work::addon::{HealthProber, ProbeField};
    ///
    /// let prober = HealthProber::work(
    ///     vec![ProbeField::new(
    ///         ResourceIdentifier::new("apps", "deployments", "hello", "hello-agent"),
    ///         vec![FeedbackRule::json_paths([JsonPath::new("ready", ".status.readyReplicas")])],
    ///     )],
    ///     |results, _cluster, _addon| {
    ///         let ready = results
    ///             .iter()
    ///             .flat_map(|r| r.feedback_result.values())
    ///             .find(|v| v.name == "ready")
    ///             .and_then(|v| v.field_value.integer);
    ///         match ready {
    ///             Some(n) if n > 0 => Ok(()),
    ///             _ => Err("no ready replica".into()),
    ///         }
    ///     },
    /// );
    /// assert!(matches!(prober, HealthProber::Work(Some(_))));
    /// ```
    pub fn work(
        fields: Vec<ProbeField>,
        checker: impl Fn(&[FieldResult], &ManagedCluster, &ManagedClusterAddOn) -> Result<(), String>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        Self::Work(Some(WorkHealthProber::new(fields, Some(Arc::new(checker)))))
    }
}

impl fmt::Debug for HealthProber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Lease => f.write_str("Lease"),
            Self::Work(p) => f.debug_tuple("Work").field(p).finish(),
            Self::DeploymentAvailability => f.write_str("DeploymentAvailability"),
            Self::WorkloadAvailability => f.write_str("WorkloadAvailability"),
        }
    }
}

/// The fields to probe and how to judge them.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct WorkHealthProber {
    /// What to read from which resources (added to the deploy works' manifest configs).
    pub probe_fields: Vec<ProbeField>,
    /// Judges the values read; without one, any value means healthy.
    pub health_checker: Option<HealthCheckerFn>,
}

impl fmt::Debug for WorkHealthProber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkHealthProber")
            .field("probe_fields", &self.probe_fields)
            .field("health_checker", &self.health_checker.is_some())
            .finish()
    }
}

impl WorkHealthProber {
    /// A prober of `fields` judged by `checker`.
    pub fn new(fields: Vec<ProbeField>, checker: Option<HealthCheckerFn>) -> Self {
        Self {
            probe_fields: fields,
            health_checker: checker,
        }
    }

    /// Upstream's `NewDeploymentProber`: WellKnownStatus of each Deployment `(namespace,
    /// name)`, judged by [`workload_availability`].
    pub fn deployments<'a>(deployments: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self {
            probe_fields: deployments
                .into_iter()
                .map(|(ns, name)| ProbeField {
                    resource_identifier: ResourceIdentifier::new("apps", "deployments", ns, name),
                    probe_rules: vec![FeedbackRule::well_known_status()],
                })
                .collect(),
            health_checker: Some(Arc::new(|results, _, _| workload_availability(results))),
        }
    }
}

/// One resource to probe, and the feedback rules to read it with.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ProbeField {
    /// The resource (`name` and `namespace` may use `*` wildcards).
    pub resource_identifier: ResourceIdentifier,
    /// The feedback rules.
    pub probe_rules: Vec<FeedbackRule>,
}

impl ProbeField {
    /// Probe `resource_identifier` with `probe_rules`.
    pub fn new(resource_identifier: ResourceIdentifier, probe_rules: Vec<FeedbackRule>) -> Self {
        Self {
            resource_identifier,
            probe_rules,
        }
    }
}

/// The feedback values read for one resource.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FieldResult {
    /// The resource the values belong to.
    pub resource_identifier: ResourceIdentifier,
    /// Its feedback values.
    pub feedback_result: StatusFeedbackResult,
}

impl FieldResult {
    /// The values `feedback_result` read for `resource_identifier` (for testing a health
    /// checker).
    pub fn new(
        resource_identifier: ResourceIdentifier,
        feedback_result: StatusFeedbackResult,
    ) -> Self {
        Self {
            resource_identifier,
            feedback_result,
        }
    }
}

/// Upstream's `WorkloadAvailabilityHealthChecker`: a Deployment is healthy with at least one
/// ready replica (or zero desired), a DaemonSet when every desired pod is ready.
pub fn workload_availability(results: &[FieldResult]) -> Result<(), String> {
    for r in results {
        check_workload(&r.resource_identifier, &r.feedback_result)?;
    }
    Ok(())
}

fn check_workload(id: &ResourceIdentifier, result: &StatusFeedbackResult) -> Result<(), String> {
    if id.resource != "deployments" && id.resource != "daemonsets" {
        return Err(format!("unsupported resource type {}", id.resource));
    }
    if id.group() != "apps" {
        return Err(format!("unsupported resource group {}", id.group()));
    }
    if result.values().is_empty() {
        return Err(format!(
            "no values are probed for {} {}/{}",
            id.resource,
            id.namespace(),
            id.name
        ));
    }
    let (mut ready, mut desired) = (-1i64, -1i64);
    for v in result.values() {
        let i = v.field_value.integer.unwrap_or(0);
        match v.name.as_str() {
            "ReadyReplicas" | "NumberReady" => ready = i,
            "Replicas" | "DesiredNumberScheduled" => desired = i,
            _ => {}
        }
    }
    if ready == -1 {
        return Err("readyReplica is not probed".into());
    }
    if desired == -1 {
        return Err("desiredNumberReplicas is not probed".into());
    }
    let healthy = match id.resource.as_str() {
        "deployments" => desired == 0 || ready >= 1,
        _ => ready == desired,
    };
    if healthy {
        Ok(())
    } else {
        Err(format!(
            "desiredNumberReplicas is {desired} but readyReplica is {ready} for {} {}/{}",
            id.resource,
            id.namespace(),
            id.name
        ))
    }
}

/// A configuration object resolved for one ManagedClusterAddOn.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ResolvedConfig {
    /// API group.
    pub group: String,
    /// Plural resource.
    pub resource: String,
    /// Namespace (absent for cluster-scoped kinds).
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// The spec hash recorded in `status.configReferences[].desiredConfig.specHash`.
    pub spec_hash: String,
    /// The object as read from the hub (`null` when it could not be read).
    pub object: Value,
    /// Why the object could not be read (for example it does not exist); `None` when it was.
    pub error: Option<String>,
}

impl ResolvedConfig {
    /// `Ok` when the object was read; otherwise an error naming it (upstream's messages: an
    /// empty desired spec hash, or the API error).
    pub fn check(&self) -> Result<(), RenderError> {
        match &self.error {
            None => Ok(()),
            Some(e) => Err(format!(
                "{}.{} {}/{}: {e}",
                self.resource,
                self.group,
                self.namespace.as_deref().unwrap_or(""),
                self.name
            )
            .into()),
        }
    }
}

/// The configuration objects of one ManagedClusterAddOn, in `status.configReferences`
/// order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AddonConfigs {
    configs: Vec<ResolvedConfig>,
}

impl AddonConfigs {
    /// Configurations from a list.
    pub fn new(configs: Vec<ResolvedConfig>) -> Self {
        Self { configs }
    }

    /// Every configuration.
    pub fn iter(&self) -> impl Iterator<Item = &ResolvedConfig> {
        self.configs.iter()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.configs.is_empty()
    }

    /// The first configuration of `group`/`resource` (upstream's `GetAddOnConfigRef`: one
    /// per kind is expected).
    pub fn get(&self, group: &str, resource: &str) -> Option<&ResolvedConfig> {
        self.configs
            .iter()
            .find(|c| c.group == group && c.resource == resource)
    }

    /// The AddOnDeploymentConfig in effect, if any. A configuration that is not a valid
    /// AddOnDeploymentConfig is an error naming it.
    pub fn deployment_config(&self) -> Result<Option<AddOnDeploymentConfig>, RenderError> {
        let Some(c) = self.get(groups::ADDON, ac::ADDON_DEPLOYMENT_CONFIG_RESOURCE) else {
            return Ok(None);
        };
        c.check()?;
        serde_json::from_value(c.object.clone())
            .map(Some)
            .map_err(|e| {
                format!(
                    "addondeploymentconfig {}/{} is invalid: {e}",
                    c.namespace.as_deref().unwrap_or(""),
                    c.name
                )
                .into()
            })
    }
}

impl FromIterator<ResolvedConfig> for AddonConfigs {
    fn from_iter<I: IntoIterator<Item = ResolvedConfig>>(iter: I) -> Self {
        Self {
            configs: iter.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::v1::{FeedbackValue, FieldValue};

    fn result(resource: &str, values: &[(&str, i64)]) -> FieldResult {
        FieldResult {
            resource_identifier: ResourceIdentifier::new("apps", resource, "ns", "a"),
            feedback_result: StatusFeedbackResult {
                values: Some(
                    values
                        .iter()
                        .map(|(n, v)| FeedbackValue {
                            name: n.to_string(),
                            field_value: FieldValue::integer(*v),
                        })
                        .collect(),
                ),
            },
        }
    }

    #[test]
    fn workload_availability_follows_upstream() {
        assert!(
            workload_availability(&[result(
                "deployments",
                &[("ReadyReplicas", 1), ("Replicas", 3)]
            )])
            .is_ok()
        );
        assert!(
            workload_availability(&[result(
                "deployments",
                &[("ReadyReplicas", 0), ("Replicas", 0)]
            )])
            .is_ok()
        );
        assert_eq!(
            workload_availability(&[result(
                "deployments",
                &[("ReadyReplicas", 0), ("Replicas", 2)]
            )]),
            Err("desiredNumberReplicas is 2 but readyReplica is 0 for deployments ns/a".into())
        );
        assert!(
            workload_availability(&[result(
                "daemonsets",
                &[("NumberReady", 2), ("DesiredNumberScheduled", 2)]
            )])
            .is_ok()
        );
        assert!(
            workload_availability(&[result(
                "daemonsets",
                &[("NumberReady", 1), ("DesiredNumberScheduled", 2)]
            )])
            .is_err()
        );
        assert_eq!(
            workload_availability(&[result("deployments", &[("Replicas", 2)])]),
            Err("readyReplica is not probed".into())
        );
        assert_eq!(
            workload_availability(&[result("statefulsets", &[])]),
            Err("unsupported resource type statefulsets".into())
        );
    }

    #[test]
    fn default_kube_client_registration() {
        let option = RegistrationOption::kube_client("helloworld", "agent");
        let cluster: ManagedCluster =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "c1"}, "spec": {}}))
                .unwrap();
        let regs = (option.configurations)(
            &cluster,
            &ManagedClusterAddOn::default(),
            &AddonConfigs::default(),
        )
        .unwrap();
        let v = serde_json::to_value(&regs).unwrap();
        assert_eq!(
            v,
            serde_json::json!([{"type": "kubeClient", "kubeClient": {"subject": {
                "user": "system:open-cluster-management:cluster:c1:addon:helloworld:agent:agent",
                "groups": ["system:open-cluster-management:cluster:c1:addon:helloworld",
                           "system:open-cluster-management:addon:helloworld"]}}}])
        );
    }
}
