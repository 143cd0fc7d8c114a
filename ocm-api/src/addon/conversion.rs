//! Conversion between the `v1alpha1` and `v1beta1` addon APIs, as upstream's conversion
//! webhook performs it.
//!
//! Upstream stores every addon kind as v1alpha1 and converts on the fly when a client asks for
//! v1beta1. These `From` implementations do the same mapping, so that code written against one
//! version can read objects of the other:
//!
//! * **AddOnDeploymentConfig**: identical in both versions; converted field by field.
//! * **ClusterManagementAddOn**: v1alpha1 `supportedConfigs` become v1beta1 `defaultConfigs`.
//!   A supported kind without a default object becomes a default config named
//!   `__reserved_no_default__`, which converts back to "no default". v1alpha1's deprecated
//!   `addOnConfiguration` has no v1beta1 counterpart and is dropped.
//! * **ManagedClusterAddOn**: v1alpha1 `spec.installNamespace` travels in the annotation
//!   `addon.open-cluster-management.io/v1alpha1-install-namespace` of the v1beta1 object and
//!   comes back from it. Status registrations are reshaped: a registration for the signer
//!   `kubernetes.io/kube-apiserver-client` is a v1beta1 `kubeClient` registration (carrying
//!   `kubeClientDriver` as its `driver`), any other signer a `customSigner` one. A v1beta1
//!   config reference has no `name`/`namespace`; converting back fills them from
//!   `desiredConfig`. Dropped on the way to v1beta1: `status.addOnConfiguration` and the
//!   organizational units of hub API client certificates.

use std::collections::BTreeMap;

use super::{v1alpha1, v1beta1};

use crate::constants::addon::{
    KUBE_API_SERVER_CLIENT_SIGNER, RESERVED_NO_DEFAULT_CONFIG_NAME,
    V1ALPHA1_INSTALL_NAMESPACE_ANNOTATION as INSTALL_NAMESPACE_ANNOTATION,
};

// ---------------------------------------------------------------- AddOnDeploymentConfig

impl From<v1alpha1::AddOnDeploymentConfigSpec> for v1beta1::AddOnDeploymentConfigSpec {
    fn from(s: v1alpha1::AddOnDeploymentConfigSpec) -> Self {
        Self {
            customized_variables: s.customized_variables,
            node_placement: s.node_placement,
            registries: s.registries,
            proxy_config: s.proxy_config,
            agent_install_namespace: s.agent_install_namespace,
            resource_requirements: s.resource_requirements,
        }
    }
}

impl From<v1beta1::AddOnDeploymentConfigSpec> for v1alpha1::AddOnDeploymentConfigSpec {
    fn from(s: v1beta1::AddOnDeploymentConfigSpec) -> Self {
        Self {
            customized_variables: s.customized_variables,
            node_placement: s.node_placement,
            registries: s.registries,
            proxy_config: s.proxy_config,
            agent_install_namespace: s.agent_install_namespace,
            resource_requirements: s.resource_requirements,
        }
    }
}

impl From<v1alpha1::AddOnDeploymentConfig> for v1beta1::AddOnDeploymentConfig {
    fn from(o: v1alpha1::AddOnDeploymentConfig) -> Self {
        Self {
            metadata: o.metadata,
            spec: o.spec.into(),
        }
    }
}

impl From<v1beta1::AddOnDeploymentConfig> for v1alpha1::AddOnDeploymentConfig {
    fn from(o: v1beta1::AddOnDeploymentConfig) -> Self {
        Self {
            metadata: o.metadata,
            spec: o.spec.into(),
        }
    }
}

// ---------------------------------------------------------------- ClusterManagementAddOn

impl From<v1alpha1::ClusterManagementAddOnSpec> for v1beta1::ClusterManagementAddOnSpec {
    /// `supportedConfigs` become `defaultConfigs`; `addOnConfiguration` is dropped.
    fn from(s: v1alpha1::ClusterManagementAddOnSpec) -> Self {
        let default_configs = s.supported_configs.map(|configs| {
            configs
                .into_iter()
                .map(|c| {
                    let (namespace, name) = match c.default_config {
                        Some(d) => (d.namespace, d.name),
                        None => (None, RESERVED_NO_DEFAULT_CONFIG_NAME.to_string()),
                    };
                    v1alpha1::AddOnConfig {
                        group: c.group,
                        resource: c.resource,
                        namespace,
                        name,
                    }
                })
                .collect()
        });
        Self {
            add_on_meta: s.add_on_meta,
            default_configs,
            install_strategy: s.install_strategy,
        }
    }
}

impl From<v1beta1::ClusterManagementAddOnSpec> for v1alpha1::ClusterManagementAddOnSpec {
    /// `defaultConfigs` become `supportedConfigs`; a default config with an empty or reserved
    /// name becomes a supported kind without a default.
    fn from(s: v1beta1::ClusterManagementAddOnSpec) -> Self {
        let supported_configs = s.default_configs.map(|configs| {
            configs
                .into_iter()
                .map(|c| {
                    let has_default =
                        !c.name.is_empty() && c.name != RESERVED_NO_DEFAULT_CONFIG_NAME;
                    v1alpha1::ConfigMeta {
                        group: c.group,
                        resource: c.resource,
                        default_config: has_default.then_some(v1alpha1::ConfigReferent {
                            namespace: c.namespace,
                            name: c.name,
                        }),
                    }
                })
                .collect()
        });
        Self {
            add_on_meta: s.add_on_meta,
            add_on_configuration: None,
            supported_configs,
            install_strategy: s.install_strategy,
        }
    }
}

impl From<v1alpha1::ClusterManagementAddOnStatus> for v1beta1::ClusterManagementAddOnStatus {
    fn from(s: v1alpha1::ClusterManagementAddOnStatus) -> Self {
        Self {
            default_config_references: s.default_config_references,
            install_progressions: s.install_progressions,
        }
    }
}

impl From<v1beta1::ClusterManagementAddOnStatus> for v1alpha1::ClusterManagementAddOnStatus {
    fn from(s: v1beta1::ClusterManagementAddOnStatus) -> Self {
        Self {
            default_config_references: s.default_config_references,
            install_progressions: s.install_progressions,
        }
    }
}

impl From<v1alpha1::ClusterManagementAddOn> for v1beta1::ClusterManagementAddOn {
    fn from(o: v1alpha1::ClusterManagementAddOn) -> Self {
        Self {
            metadata: o.metadata,
            spec: o.spec.into(),
            status: o.status.map(Into::into),
        }
    }
}

impl From<v1beta1::ClusterManagementAddOn> for v1alpha1::ClusterManagementAddOn {
    fn from(o: v1beta1::ClusterManagementAddOn) -> Self {
        Self {
            metadata: o.metadata,
            spec: o.spec.into(),
            status: o.status.map(Into::into),
        }
    }
}

// ---------------------------------------------------------------- ManagedClusterAddOn

impl From<v1alpha1::ManagedClusterAddOnStatus> for v1beta1::ManagedClusterAddOnStatus {
    /// Reshapes registrations (see the [module docs](crate::addon::conversion)); drops `addOnConfiguration` and
    /// the config references' `name`/`namespace`.
    fn from(s: v1alpha1::ManagedClusterAddOnStatus) -> Self {
        let driver = s.kube_client_driver;
        let registrations = s.registrations.map(|regs| {
            regs.into_iter()
                .map(|r| registration_to_v1beta1(r, driver.clone()))
                .collect()
        });
        let config_references = s.config_references.map(|refs| {
            refs.into_iter()
                .map(|r| v1beta1::ConfigReference {
                    group: r.group,
                    resource: r.resource,
                    last_observed_generation: r.last_observed_generation,
                    desired_config: r.desired_config,
                    last_applied_config: r.last_applied_config,
                })
                .collect()
        });
        Self {
            conditions: s.conditions,
            related_objects: s.related_objects,
            add_on_meta: s.add_on_meta,
            supported_configs: s.supported_configs,
            config_references,
            namespace: s.namespace,
            registrations,
            health_check: s.health_check,
        }
    }
}

impl From<v1beta1::ManagedClusterAddOnStatus> for v1alpha1::ManagedClusterAddOnStatus {
    /// Reshapes registrations (see the [module docs](crate::addon::conversion)) and takes `kubeClientDriver` from
    /// the first `kubeClient` registration that has settings; fills each config reference's
    /// `name`/`namespace` from its `desiredConfig`.
    fn from(s: v1beta1::ManagedClusterAddOnStatus) -> Self {
        let kube_client_driver = s.registrations.as_deref().and_then(|regs| {
            regs.iter()
                .find(|r| {
                    r.type_ == v1beta1::RegistrationType::KubeClient && r.kube_client.is_some()
                })
                .and_then(|r| r.kube_client.as_ref())
                .and_then(|k| k.driver.clone())
        });
        let registrations = s
            .registrations
            .map(|regs| regs.into_iter().map(registration_to_v1alpha1).collect());
        let config_references = s.config_references.map(|refs| {
            refs.into_iter()
                .map(|r| {
                    let (namespace, name) = r
                        .desired_config
                        .as_ref()
                        .map(|d| (d.namespace.clone(), d.name.clone()))
                        .unwrap_or_default();
                    v1alpha1::ConfigReference {
                        group: r.group,
                        resource: r.resource,
                        namespace,
                        name,
                        last_observed_generation: r.last_observed_generation,
                        desired_config: r.desired_config,
                        last_applied_config: r.last_applied_config,
                    }
                })
                .collect()
        });
        Self {
            conditions: s.conditions,
            related_objects: s.related_objects,
            add_on_meta: s.add_on_meta,
            add_on_configuration: None,
            supported_configs: s.supported_configs,
            config_references,
            namespace: s.namespace,
            registrations,
            kube_client_driver,
            health_check: s.health_check,
        }
    }
}

/// A v1alpha1 registration as v1beta1 sees it: by signer, a hub API client or a custom signer.
fn registration_to_v1beta1(
    r: v1alpha1::RegistrationConfig,
    driver: Option<v1alpha1::KubeClientDriver>,
) -> v1beta1::RegistrationConfig {
    let subject = r.subject.unwrap_or_default();
    if r.signer_name == KUBE_API_SERVER_CLIENT_SIGNER {
        v1beta1::RegistrationConfig {
            type_: v1beta1::RegistrationType::KubeClient,
            kube_client: Some(v1beta1::KubeClientConfig {
                subject: Some(v1beta1::KubeClientSubject {
                    user: subject.user,
                    groups: subject.groups,
                }),
                driver,
            }),
            custom_signer: None,
        }
    } else {
        v1beta1::RegistrationConfig {
            type_: v1beta1::RegistrationType::CustomSigner,
            kube_client: None,
            custom_signer: Some(v1beta1::CustomSignerConfig {
                signer_name: r.signer_name,
                subject: Some(v1beta1::Subject {
                    user: subject.user,
                    groups: subject.groups,
                    organization_units: subject.organization_unit,
                }),
            }),
        }
    }
}

/// A v1beta1 registration as v1alpha1 sees it: a signer name and a subject.
fn registration_to_v1alpha1(r: v1beta1::RegistrationConfig) -> v1alpha1::RegistrationConfig {
    match r.type_ {
        v1beta1::RegistrationType::KubeClient => v1alpha1::RegistrationConfig {
            signer_name: KUBE_API_SERVER_CLIENT_SIGNER.to_string(),
            subject: r.kube_client.map(|k| {
                let s = k.subject.unwrap_or_default();
                v1alpha1::Subject {
                    user: s.user,
                    groups: s.groups,
                    organization_unit: None,
                }
            }),
        },
        // A custom signer, or a type this SDK does not know (v1alpha1 has no type): the
        // signer and subject it carries, if any, are kept.
        v1beta1::RegistrationType::CustomSigner | v1beta1::RegistrationType::Unknown(_) => {
            let signer = r.custom_signer.unwrap_or_default();
            v1alpha1::RegistrationConfig {
                signer_name: signer.signer_name,
                subject: signer.subject.map(|s| v1alpha1::Subject {
                    user: s.user,
                    groups: s.groups,
                    organization_unit: s.organization_units,
                }),
            }
        }
    }
}

impl From<v1alpha1::ManagedClusterAddOn> for v1beta1::ManagedClusterAddOn {
    /// A non-empty `spec.installNamespace` is kept in the
    /// `addon.open-cluster-management.io/v1alpha1-install-namespace` annotation.
    fn from(o: v1alpha1::ManagedClusterAddOn) -> Self {
        let mut metadata = o.metadata;
        if let Some(ns) = o.spec.install_namespace.filter(|ns| !ns.is_empty()) {
            metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(INSTALL_NAMESPACE_ANNOTATION.to_string(), ns);
        }
        Self {
            metadata,
            spec: v1beta1::ManagedClusterAddOnSpec {
                configs: o.spec.configs,
            },
            status: o.status.map(Into::into),
        }
    }
}

impl From<v1beta1::ManagedClusterAddOn> for v1alpha1::ManagedClusterAddOn {
    /// `spec.installNamespace` comes from the
    /// `addon.open-cluster-management.io/v1alpha1-install-namespace` annotation, which is
    /// removed.
    fn from(o: v1beta1::ManagedClusterAddOn) -> Self {
        let mut metadata = o.metadata;
        let install_namespace = metadata
            .annotations
            .as_mut()
            .and_then(|a| a.remove(INSTALL_NAMESPACE_ANNOTATION));
        if metadata
            .annotations
            .as_ref()
            .is_some_and(BTreeMap::is_empty)
        {
            metadata.annotations = None;
        }
        Self {
            metadata,
            spec: v1alpha1::ManagedClusterAddOnSpec {
                install_namespace,
                configs: o.spec.configs,
            },
            status: o.status.map(Into::into),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn cma_supported_configs_round_trip_through_v1beta1() {
        let alpha: v1alpha1::ClusterManagementAddOn = serde_json::from_value(json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1",
            "kind": "ClusterManagementAddOn",
            "metadata": { "name": "hello" },
            "spec": {
                "addOnMeta": { "displayName": "Hello" },
                "addOnConfiguration": { "crdName": "x.example.com" },
                "supportedConfigs": [
                    { "group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs",
                      "defaultConfig": { "namespace": "ocm", "name": "default" } },
                    { "resource": "configmaps" }
                ],
                "installStrategy": { "type": "Manual" }
            },
            "status": { "defaultconfigReferences": [{ "resource": "configmaps" }] }
        }))
        .unwrap();
        let beta = v1beta1::ClusterManagementAddOn::from(alpha.clone());
        assert_eq!(
            serde_json::to_value(&beta.spec).unwrap(),
            json!({
                "addOnMeta": { "displayName": "Hello" },
                "defaultConfigs": [
                    { "group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs",
                      "namespace": "ocm", "name": "default" },
                    { "resource": "configmaps", "name": "__reserved_no_default__" }
                ],
                "installStrategy": { "type": "Manual" }
            })
        );
        assert_eq!(
            serde_json::to_value(&beta.status).unwrap(),
            json!({ "defaultConfigReferences": [{ "resource": "configmaps" }] })
        );
        let back = v1alpha1::ClusterManagementAddOn::from(beta);
        let mut expected = alpha;
        expected.spec.add_on_configuration = None;
        assert_eq!(back, expected);
    }

    #[test]
    fn cma_empty_default_name_means_no_default() {
        let beta = v1beta1::ClusterManagementAddOnSpec {
            default_configs: Some(vec![v1alpha1::AddOnConfig {
                resource: "configmaps".into(),
                ..Default::default()
            }]),
            ..Default::default()
        };
        let alpha = v1alpha1::ClusterManagementAddOnSpec::from(beta);
        let supported = alpha.supported_configs.unwrap();
        assert_eq!(supported[0].default_config, None);
    }

    #[test]
    fn mca_install_namespace_travels_in_an_annotation() {
        let alpha: v1alpha1::ManagedClusterAddOn = serde_json::from_value(json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1",
            "kind": "ManagedClusterAddOn",
            "metadata": { "name": "hello", "namespace": "cluster1" },
            "spec": { "installNamespace": "hello-agent", "configs": [{ "resource": "configmaps", "name": "c" }] }
        }))
        .unwrap();
        let beta = v1beta1::ManagedClusterAddOn::from(alpha.clone());
        assert_eq!(
            beta.metadata.annotations.as_ref().unwrap()[INSTALL_NAMESPACE_ANNOTATION],
            "hello-agent"
        );
        assert_eq!(beta.spec.configs, alpha.spec.configs);
        let back = v1alpha1::ManagedClusterAddOn::from(beta);
        assert_eq!(back, alpha);

        let mut empty = alpha;
        empty.spec.install_namespace = Some(String::new());
        let beta = v1beta1::ManagedClusterAddOn::from(empty);
        assert_eq!(beta.metadata.annotations, None);
    }

    #[test]
    fn mca_registrations_are_reshaped_by_signer() {
        let alpha: v1alpha1::ManagedClusterAddOnStatus = serde_json::from_value(json!({
            "registrations": [
                { "signerName": "kubernetes.io/kube-apiserver-client",
                  "subject": { "user": "agent", "groups": ["g"], "organizationUnit": ["dropped"] } },
                { "signerName": "example.com/signer",
                  "subject": { "user": "u", "organizationUnit": ["ou"] } }
            ],
            "kubeClientDriver": "token",
            "configReferences": [{
                "resource": "addondeploymentconfigs", "namespace": "ns", "name": "c",
                "desiredConfig": { "namespace": "ns", "name": "c", "specHash": "h" }
            }]
        }))
        .unwrap();
        let beta = v1beta1::ManagedClusterAddOnStatus::from(alpha.clone());
        assert_eq!(
            serde_json::to_value(&beta).unwrap(),
            json!({
                "registrations": [
                    { "type": "kubeClient",
                      "kubeClient": { "subject": { "user": "agent", "groups": ["g"] }, "driver": "token" } },
                    { "type": "customSigner",
                      "customSigner": { "signerName": "example.com/signer",
                                        "subject": { "user": "u", "organizationUnits": ["ou"] } } }
                ],
                "configReferences": [{
                    "resource": "addondeploymentconfigs",
                    "desiredConfig": { "namespace": "ns", "name": "c", "specHash": "h" }
                }]
            })
        );
        let back = v1alpha1::ManagedClusterAddOnStatus::from(beta);
        assert_eq!(
            back.kube_client_driver,
            Some(v1alpha1::KubeClientDriver::Token)
        );
        let regs = back.registrations.as_deref().unwrap();
        assert_eq!(regs[0].signer_name, KUBE_API_SERVER_CLIENT_SIGNER);
        assert_eq!(regs[0].subject.as_ref().unwrap().organization_unit, None);
        assert_eq!(regs[1], alpha.registrations.as_deref().unwrap()[1]);
        assert_eq!(back.config_references, alpha.config_references);
    }

    #[test]
    fn adc_converts_field_by_field() {
        let alpha = v1alpha1::AddOnDeploymentConfig::new(
            "c",
            v1alpha1::AddOnDeploymentConfigSpec {
                agent_install_namespace: Some("agents".into()),
                ..Default::default()
            },
        );
        let beta = v1beta1::AddOnDeploymentConfig::from(alpha.clone());
        assert_eq!(beta.spec.agent_install_namespace.as_deref(), Some("agents"));
        assert_eq!(v1alpha1::AddOnDeploymentConfig::from(beta), alpha);
    }
}
