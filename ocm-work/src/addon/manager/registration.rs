//! The registration syncer (upstream's `addonRegistrationController`): the configs an addon
//! supports, the hub permissions of its agent, its registrations, the namespace its agent runs
//! in, and `RegistrationApplied`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use ocm_api::addon::v1beta1::{
    ConfigGroupResource, KubeClientConfig, KubeClientDriver, KubeClientSubject,
    ManagedClusterAddOn, ManagedClusterAddOnStatus, RegistrationConfig, RegistrationType,
};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::addon as ac;

use super::{AddonManager, FIELD_MANAGER};
use crate::addon::agent::{AddonConfigs, AgentAddonOptions, ConfigGvr, RegistrationOption};
use crate::addon::{names, permission};
use crate::{Error, Result};

impl AddonManager {
    /// Registration (upstream's `addonRegistrationController`): supported configs,
    /// permissions, registrations, namespace and `RegistrationApplied`.
    pub(super) async fn register(
        &self,
        options: &AgentAddonOptions,
        cluster: &ManagedCluster,
        mca: &ManagedClusterAddOn,
        status: &mut ManagedClusterAddOnStatus,
        configs: &AddonConfigs,
        now: &Time,
    ) -> Result<()> {
        let supported: Vec<ConfigGroupResource> = options
            .supported_configs
            .iter()
            .map(ConfigGvr::group_resource)
            .collect();
        status.supported_configs = (!supported.is_empty()).then_some(supported);
        let Some(registration) = &options.registration else {
            let condition = NewCondition::new(
                ac::CONDITION_REGISTRATION_APPLIED,
                ConditionStatus::True,
                ac::REASON_REGISTRATION_NIL,
                ac::MESSAGE_REGISTRATION_CONFIGURED,
            );
            conditions::set(
                status.conditions.get_or_insert_with(Vec::new),
                condition,
                now,
            );
            return Ok(());
        };
        let cluster_name = cluster.name_any();
        let object = || format!("ManagedClusterAddOn {cluster_name}/{}", mca.name_any());
        let mut current = mca.clone();
        current.status = Some(status.clone());
        let ready = match self
            .grant_permissions(registration, cluster, &current, configs)
            .await
        {
            Ok(ready) => ready,
            Err(message) => {
                let condition = NewCondition::new(
                    ac::CONDITION_REGISTRATION_APPLIED,
                    ConditionStatus::False,
                    ac::REASON_REGISTRATION_SET_PERMISSION_FAILED,
                    format!("{}{message}", ac::MESSAGE_SET_PERMISSION_FAILED_PREFIX),
                );
                conditions::set(
                    status.conditions.get_or_insert_with(Vec::new),
                    condition,
                    now,
                );
                return Err(Error::InvalidObject {
                    object: object(),
                    message,
                });
            }
        };
        let configured =
            (registration.configurations)(cluster, &current, configs).map_err(|e| {
                Error::InvalidObject {
                    object: object(),
                    message: format!("failed to get csr configurations: {e}"),
                }
            })?;
        status.registrations = Some(build_registrations(
            configured,
            status.registrations.as_deref().unwrap_or_default(),
            &cluster_name,
            &mca.name_any(),
        ));
        status.namespace = Some(agent_namespace(options, mca, &current, configs).map_err(
            |message| Error::InvalidObject {
                object: object(),
                message,
            },
        )?);
        let condition = if ready {
            NewCondition::new(
                ac::CONDITION_REGISTRATION_APPLIED,
                ConditionStatus::True,
                ac::REASON_REGISTRATION_SET_PERMISSION_APPLIED,
                ac::MESSAGE_REGISTRATION_CONFIGURED,
            )
        } else {
            NewCondition::new(
                ac::CONDITION_REGISTRATION_APPLIED,
                ConditionStatus::False,
                ac::REASON_REGISTRATION_PERMISSION_CONFIG_PENDING,
                ac::MESSAGE_REGISTRATION_SUBJECT_NOT_READY,
            )
        };
        conditions::set(
            status.conditions.get_or_insert_with(Vec::new),
            condition,
            now,
        );
        Ok(())
    }

    /// The agent's hub permissions, static and computed, bound to the subjects of its
    /// registrations. `Ok(false)` while it has permissions but no subject yet (pending);
    /// `Err` with the message when computing or writing them failed.
    async fn grant_permissions(
        &self,
        registration: &RegistrationOption,
        cluster: &ManagedCluster,
        current: &ManagedClusterAddOn,
        configs: &AddonConfigs,
    ) -> std::result::Result<bool, String> {
        let mut permissions = registration.permissions.clone();
        if let Some(f) = &registration.permissions_fn {
            permissions.extend(f(cluster, current, configs).map_err(|e| e.to_string())?);
        }
        if permissions.is_empty() {
            return Ok(true);
        }
        let subjects = permission::subjects(current);
        if subjects.is_empty() {
            return Ok(false);
        }
        permission::apply(
            &self.client,
            FIELD_MANAGER,
            &cluster.name_any(),
            current,
            &permissions,
            &subjects,
        )
        .await
        .map_err(|e| e.to_string())?;
        Ok(true)
    }
}

/// The namespace the agent runs in: the addon's own function's answer when not empty, else
/// the v1alpha1 install-namespace annotation when set, else upstream's default.
fn agent_namespace(
    options: &AgentAddonOptions,
    mca: &ManagedClusterAddOn,
    current: &ManagedClusterAddOn,
    configs: &AddonConfigs,
) -> std::result::Result<String, String> {
    let mut namespace = ac::DEFAULT_AGENT_INSTALL_NAMESPACE.to_string();
    if let Some(ns) = mca
        .annotations()
        .get(ac::V1ALPHA1_INSTALL_NAMESPACE_ANNOTATION)
        .filter(|n| !n.is_empty())
    {
        namespace = ns.clone();
    }
    if let Some(f) = &options.agent_install_namespace {
        let ns = f(current, configs).map_err(|e| e.to_string())?;
        if !ns.is_empty() {
            namespace = ns;
        }
    }
    Ok(namespace)
}

/// Upstream's `buildRegistrationConfigs`: the registrations to write, keeping the driver an
/// agent set and, for the token driver, the subject it set.
pub fn build_registrations(
    configs: Vec<RegistrationConfig>,
    existing: &[RegistrationConfig],
    cluster: &str,
    addon: &str,
) -> Vec<RegistrationConfig> {
    let mut out = Vec::new();
    let mut kube_index = 0usize;
    for mut config in configs {
        if config.type_ != RegistrationType::KubeClient {
            out.push(config);
            continue;
        }
        let kc = config
            .kube_client
            .get_or_insert_with(KubeClientConfig::default);
        let existing_kc = existing
            .iter()
            .filter(|r| r.type_ == RegistrationType::KubeClient)
            .nth(kube_index)
            .and_then(|r| r.kube_client.as_ref());
        kube_index += 1;
        if let Some(d) = existing_kc.and_then(|e| e.driver.clone()) {
            kc.driver = Some(d);
        }
        match &kc.driver {
            Some(KubeClientDriver::Token) => {
                kc.subject = existing_kc
                    .and_then(|e| e.subject.clone())
                    .or_else(|| Some(KubeClientSubject::default()));
            }
            Some(KubeClientDriver::Csr) => {
                let empty = kc.subject.as_ref().is_none_or(|s| {
                    s.user.as_deref().unwrap_or("").is_empty()
                        && s.groups.as_deref().unwrap_or_default().is_empty()
                });
                if empty {
                    kc.subject = Some(KubeClientSubject {
                        user: Some(names::default_user(cluster, addon, addon)),
                        groups: Some(names::default_groups(cluster, addon)),
                    });
                }
            }
            // A driver this SDK does not know: the subject is left as configured.
            Some(_) | None => {}
        }
        out.push(config);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn registrations_keep_the_agents_driver() {
        let desired = vec![crate::addon::agent::kube_client_registration(
            "u".into(),
            vec!["g".into()],
        )];
        let existing: Vec<RegistrationConfig> = serde_json::from_value(json!([
            {"type": "kubeClient", "kubeClient": {"driver": "token", "subject": {"user": "sa-user"}}}
        ]))
        .unwrap();
        let out = build_registrations(desired.clone(), &existing, "c1", "a");
        let kc = out[0].kube_client.as_ref().unwrap();
        assert_eq!(kc.driver, Some(KubeClientDriver::Token));
        assert_eq!(
            kc.subject.as_ref().unwrap().user.as_deref(),
            Some("sa-user")
        );
        let csr: Vec<RegistrationConfig> = serde_json::from_value(
            json!([{"type": "kubeClient", "kubeClient": {"driver": "csr"}}]),
        )
        .unwrap();
        let out = build_registrations(
            vec![crate::addon::agent::kube_client_registration(
                String::new(),
                vec![],
            )],
            &csr,
            "c1",
            "a",
        );
        assert_eq!(
            out[0]
                .kube_client
                .as_ref()
                .unwrap()
                .subject
                .as_ref()
                .unwrap()
                .user
                .as_deref(),
            Some("system:open-cluster-management:cluster:c1:addon:a:agent:a")
        );
        assert_eq!(
            build_registrations(desired.clone(), &[], "c1", "a"),
            desired
        );
    }
}
