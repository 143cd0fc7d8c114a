//! Lossless round-trips of the addon group's kinds: every object below deserializes into the
//! typed struct and serializes back to the same JSON, with absent optional fields left absent.

use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use ocm_api::addon::{v1alpha1, v1beta1};

/// Deserializes `original` as `T`, serializes it back and compares.
fn roundtrip<T: DeserializeOwned + Serialize>(original: Value) -> T {
    let typed: T = serde_json::from_value(original.clone()).expect("deserialize");
    let back = serde_json::to_value(&typed).expect("serialize");
    assert_eq!(back, original);
    typed
}

/// Same as [`roundtrip`], from YAML text.
fn roundtrip_yaml<T: DeserializeOwned + Serialize>(yaml: &str) -> T {
    let original: Value = serde_saphyr::from_str(yaml).expect("parse YAML");
    roundtrip(original)
}

fn addon_deployment_config_spec() -> Value {
    json!({
        "customizedVariables": [
            { "name": "LOG_LEVEL", "value": "debug" },
            { "name": "_EMPTY" }
        ],
        "nodePlacement": {
            "nodeSelector": { "node-role.kubernetes.io/infra": "" },
            "tolerations": [
                { "key": "node-role.kubernetes.io/infra", "operator": "Exists", "effect": "NoSchedule" },
                { "key": "dedicated", "operator": "Equal", "value": "addons", "effect": "NoExecute", "tolerationSeconds": 300 }
            ]
        },
        "registries": [
            { "source": "quay.io/open-cluster-management", "mirror": "registry.example.com/ocm" },
            { "mirror": "registry.example.com/everything" }
        ],
        "proxyConfig": {
            "httpProxy": "http://proxy.example.com:3128",
            "httpsProxy": "https://proxy.example.com:3129",
            "caBundle": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIuLi4KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=",
            "noProxy": "localhost,127.0.0.1,.cluster.local,10.0.0.0/8"
        },
        "agentInstallNamespace": "open-cluster-management-agent-addon",
        "resourceRequirements": [
            {
                "containerID": "deployments:helloworld-agent:helloworld-agent",
                "resources": {
                    "requests": { "cpu": "100m", "memory": "128Mi" },
                    "limits": { "cpu": "1", "memory": "1Gi" }
                }
            },
            {
                "containerID": "*:*:*",
                "resources": {
                    "claims": [{ "name": "gpu" }, { "name": "fpga", "request": "small" }]
                }
            }
        ]
    })
}

#[test]
fn addon_deployment_config_v1alpha1() {
    let adc: v1alpha1::AddOnDeploymentConfig = roundtrip(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "AddOnDeploymentConfig",
        "metadata": { "name": "deploy-config", "namespace": "open-cluster-management" },
        "spec": addon_deployment_config_spec()
    }));
    let ca = adc
        .spec
        .proxy_config
        .and_then(|p| p.ca_bundle)
        .expect("caBundle");
    assert!(ca.0.starts_with(b"-----BEGIN CERTIFICATE-----"));
}

#[test]
fn addon_deployment_config_v1beta1() {
    roundtrip::<v1beta1::AddOnDeploymentConfig>(json!({
        "apiVersion": "addon.open-cluster-management.io/v1beta1",
        "kind": "AddOnDeploymentConfig",
        "metadata": { "name": "deploy-config", "namespace": "open-cluster-management" },
        "spec": addon_deployment_config_spec()
    }));
}

#[test]
fn addon_deployment_config_minimal() {
    roundtrip_yaml::<v1alpha1::AddOnDeploymentConfig>(
        "apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata:
  name: empty
  namespace: default
spec: {}
",
    );
    roundtrip_yaml::<v1beta1::AddOnDeploymentConfig>(
        "apiVersion: addon.open-cluster-management.io/v1beta1
kind: AddOnDeploymentConfig
metadata:
  name: ns-only
  namespace: default
spec:
  agentInstallNamespace: ''
",
    );
}

fn condition(type_: &str, status: &str, reason: &str) -> Value {
    json!({
        "type": type_,
        "status": status,
        "reason": reason,
        "message": format!("{type_} is {status}"),
        "lastTransitionTime": "2026-11-20T08:15:00Z",
        "observedGeneration": 3
    })
}

fn addon_configs() -> Value {
    json!([
        {
            "group": "addon.open-cluster-management.io",
            "resource": "addondeploymentconfigs",
            "namespace": "cluster1",
            "name": "cluster1-override"
        },
        { "resource": "configmaps", "name": "cluster-scoped" }
    ])
}

#[test]
fn managed_cluster_addon_v1alpha1() {
    let mca: v1alpha1::ManagedClusterAddOn = roundtrip(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ManagedClusterAddOn",
        "metadata": { "name": "helloworld", "namespace": "cluster1" },
        "spec": {
            "installNamespace": "helloworld-agent",
            "configs": addon_configs()
        },
        "status": {
            "conditions": [
                condition("Available", "True", "ManagedClusterAddOnLeaseUpdated"),
                {
                    "type": "RegistrationApplied",
                    "status": "True",
                    "reason": "SetPermissionApplied",
                    "message": "Registration of the addon agent is configured",
                    "lastTransitionTime": "2026-11-20T08:14:00Z"
                }
            ],
            "relatedObjects": [
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "clustermanagementaddons",
                    "name": "helloworld"
                },
                { "group": "", "resource": "configmaps", "namespace": "cluster1", "name": "x" }
            ],
            "addOnMeta": { "displayName": "Hello World", "description": "An example addon" },
            "addOnConfiguration": {
                "crdName": "helloworldconfigs.example.com",
                "crName": "default",
                "lastObservedGeneration": 2
            },
            "supportedConfigs": [
                { "group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs" },
                { "resource": "configmaps" }
            ],
            "configReferences": [{
                "group": "addon.open-cluster-management.io",
                "resource": "addondeploymentconfigs",
                "namespace": "cluster1",
                "name": "cluster1-override",
                "lastObservedGeneration": 1,
                "desiredConfig": {
                    "namespace": "cluster1",
                    "name": "cluster1-override",
                    "specHash": "dcf8e6a5b0b0bb5d0e8e3e0a1c2b3d4e5f60718293a4b5c6d7e8f90123456789"
                },
                "lastAppliedConfig": { "name": "cluster1-override", "namespace": "cluster1" }
            }],
            "namespace": "helloworld-agent",
            "registrations": [
                {
                    "signerName": "kubernetes.io/kube-apiserver-client",
                    "subject": {
                        "user": "system:open-cluster-management:cluster:cluster1:addon:helloworld:agent:agent1",
                        "groups": ["system:open-cluster-management:cluster:cluster1:addon:helloworld"],
                        "organizationUnit": ["ocm"]
                    }
                },
                { "signerName": "example.com/signer-name" }
            ],
            "kubeClientDriver": "token",
            "healthCheck": { "mode": "Customized" }
        }
    }));
    let status = mca.status.expect("status");
    assert_eq!(
        status.kube_client_driver,
        Some(v1alpha1::KubeClientDriver::Token)
    );
    assert_eq!(
        status.health_check.and_then(|h| h.mode),
        Some(v1alpha1::HealthCheckMode::Customized)
    );
}

#[test]
fn managed_cluster_addon_v1beta1() {
    let mca: v1beta1::ManagedClusterAddOn = roundtrip(json!({
        "apiVersion": "addon.open-cluster-management.io/v1beta1",
        "kind": "ManagedClusterAddOn",
        "metadata": { "name": "helloworld", "namespace": "cluster1" },
        "spec": { "configs": addon_configs() },
        "status": {
            "conditions": [
                condition("Available", "True", "ManagedClusterAddOnLeaseUpdated"),
                condition("Progressing", "False", "Completed")
            ],
            "relatedObjects": [{
                "group": "addon.open-cluster-management.io",
                "resource": "clustermanagementaddons",
                "name": "helloworld"
            }],
            "addOnMeta": { "displayName": "Hello World" },
            "supportedConfigs": [{ "group": "", "resource": "configmaps" }],
            "configReferences": [{
                "group": "addon.open-cluster-management.io",
                "resource": "addondeploymentconfigs",
                "lastObservedGeneration": 4,
                "desiredConfig": { "namespace": "cluster1", "name": "c", "specHash": "abc" },
                "lastAppliedConfig": { "namespace": "cluster1", "name": "c", "specHash": "abc" }
            }],
            "namespace": "open-cluster-management-agent-addon",
            "registrations": [
                {
                    "type": "kubeClient",
                    "kubeClient": {
                        "driver": "csr",
                        "subject": {
                            "user": "system:open-cluster-management:cluster:cluster1:addon:helloworld:agent:agent1",
                            "groups": ["system:open-cluster-management:addon:helloworld"]
                        }
                    }
                },
                {
                    "type": "customSigner",
                    "customSigner": {
                        "signerName": "example.com/signer-name",
                        "subject": { "user": "u", "groups": ["g"], "organizationUnits": ["ou"] }
                    }
                }
            ],
            "healthCheck": { "mode": "Lease" }
        }
    }));
    let regs = mca
        .status
        .and_then(|s| s.registrations)
        .expect("registrations");
    assert_eq!(regs[0].type_, v1beta1::RegistrationType::KubeClient);
    assert_eq!(regs[1].type_, v1beta1::RegistrationType::CustomSigner);
}

#[test]
fn managed_cluster_addon_minimal() {
    roundtrip_yaml::<v1alpha1::ManagedClusterAddOn>(
        "apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata:
  name: helloworld
  namespace: cluster1
spec: {}
",
    );
    roundtrip_yaml::<v1beta1::ManagedClusterAddOn>(
        "apiVersion: addon.open-cluster-management.io/v1beta1
kind: ManagedClusterAddOn
metadata:
  name: helloworld
  namespace: cluster1
spec: {}
status: {}
",
    );
}

fn install_strategy() -> Value {
    json!({
        "type": "Placements",
        "placements": [
            {
                "namespace": "default",
                "name": "placement-all",
                "configs": [{
                    "group": "addon.open-cluster-management.io",
                    "resource": "addondeploymentconfigs",
                    "namespace": "default",
                    "name": "all-clusters"
                }],
                "rolloutStrategy": { "type": "All", "all": { "minSuccessTime": "5m", "progressDeadline": "10m", "maxFailures": 2 } }
            },
            {
                "namespace": "default",
                "name": "placement-canary",
                "rolloutStrategy": {
                    "type": "Progressive",
                    "progressive": {
                        "mandatoryDecisionGroups": [{ "groupName": "canary" }, { "groupIndex": 1 }],
                        "maxConcurrency": "25%",
                        "maxFailures": "10%",
                        "minSuccessTime": "0",
                        "progressDeadline": "None"
                    }
                }
            },
            {
                "namespace": "prod",
                "name": "placement-groups",
                "rolloutStrategy": {
                    "type": "ProgressivePerGroup",
                    "progressivePerGroup": {
                        "mandatoryDecisionGroups": [{ "groupName": "prod-canary", "groupIndex": 0 }],
                        "maxFailures": 1
                    }
                }
            },
            { "namespace": "dev", "name": "no-rollout" }
        ]
    })
}

fn install_progressions() -> Value {
    json!([
        {
            "namespace": "default",
            "name": "placement-all",
            "configReferences": [{
                "group": "addon.open-cluster-management.io",
                "resource": "addondeploymentconfigs",
                "desiredConfig": { "namespace": "default", "name": "all-clusters", "specHash": "h2" },
                "lastAppliedConfig": { "namespace": "default", "name": "all-clusters", "specHash": "h1" },
                "lastKnownGoodConfig": { "namespace": "default", "name": "all-clusters", "specHash": "h1" }
            }],
            "conditions": [condition("Progressing", "True", "Upgrading")]
        },
        { "namespace": "dev", "name": "no-rollout" }
    ])
}

#[test]
fn cluster_management_addon_v1alpha1() {
    let cma: v1alpha1::ClusterManagementAddOn = roundtrip(json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ClusterManagementAddOn",
        "metadata": {
            "name": "helloworld",
            "annotations": { "addon.open-cluster-management.io/lifecycle": "addon-manager" }
        },
        "spec": {
            "addOnMeta": { "displayName": "Hello World", "description": "Says hello from every cluster" },
            "addOnConfiguration": {
                "crdName": "helloworldconfigs.example.com",
                "crName": "default",
                "lastObservedGeneration": 7
            },
            "supportedConfigs": [
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addondeploymentconfigs",
                    "defaultConfig": { "namespace": "open-cluster-management", "name": "default" }
                },
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addontemplates",
                    "defaultConfig": { "name": "helloworld-0.1.0" }
                },
                { "resource": "configmaps" }
            ],
            "installStrategy": install_strategy()
        },
        "status": {
            "defaultconfigReferences": [
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addondeploymentconfigs",
                    "desiredConfig": { "namespace": "open-cluster-management", "name": "default", "specHash": "abc" }
                },
                { "resource": "configmaps" }
            ],
            "installProgressions": install_progressions()
        }
    }));
    let strategy = cma.spec.install_strategy.expect("installStrategy");
    assert_eq!(
        strategy.strategy_type(),
        v1alpha1::InstallStrategyType::Placements
    );
    let placements = strategy.placements.expect("placements");
    assert_eq!(placements.len(), 4);
    assert!(placements[3].rollout_strategy.is_none());
}

#[test]
fn cluster_management_addon_v1beta1() {
    roundtrip::<v1beta1::ClusterManagementAddOn>(json!({
        "apiVersion": "addon.open-cluster-management.io/v1beta1",
        "kind": "ClusterManagementAddOn",
        "metadata": { "name": "helloworld" },
        "spec": {
            "addOnMeta": { "displayName": "Hello World", "description": "Says hello from every cluster" },
            "defaultConfigs": [
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addondeploymentconfigs",
                    "namespace": "open-cluster-management",
                    "name": "default"
                },
                { "resource": "configmaps", "name": "cluster-wide" }
            ],
            "installStrategy": install_strategy()
        },
        "status": {
            "defaultConfigReferences": [{
                "group": "addon.open-cluster-management.io",
                "resource": "addondeploymentconfigs",
                "desiredConfig": { "namespace": "open-cluster-management", "name": "default", "specHash": "abc" }
            }],
            "installProgressions": install_progressions()
        }
    }));
}

#[test]
fn cluster_management_addon_minimal() {
    let cma = roundtrip_yaml::<v1alpha1::ClusterManagementAddOn>(
        "apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata:
  name: helloworld
spec:
  installStrategy:
    type: Manual
",
    );
    assert_eq!(
        cma.spec.install_strategy.map(|s| s.strategy_type()),
        Some(v1alpha1::InstallStrategyType::Manual)
    );
    let cma = roundtrip_yaml::<v1beta1::ClusterManagementAddOn>(
        "apiVersion: addon.open-cluster-management.io/v1beta1
kind: ClusterManagementAddOn
metadata:
  name: helloworld
spec:
  installStrategy: {}
",
    );
    assert_eq!(
        cma.spec.install_strategy.map(|s| s.strategy_type()),
        Some(v1beta1::InstallStrategyType::Manual)
    );
}

/// A hello-world addon as a template, with every field of the kind set.
const ADDON_TEMPLATE_YAML: &str = r#"apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata:
  name: hello-template
spec:
  addonName: hello-template
  agentSpec:
    workload:
      manifests:
        - kind: Deployment
          apiVersion: apps/v1
          metadata:
            name: hello-template-agent
            namespace: open-cluster-management-agent-addon
            annotations:
              "addon.open-cluster-management.io/deletion-orphan": ""
            labels:
              app: hello-template-agent
          spec:
            replicas: 1
            selector:
              matchLabels:
                app: hello-template-agent
            template:
              metadata:
                labels:
                  app: hello-template-agent
              spec:
                serviceAccountName: hello-template-agent-sa
                containers:
                  - name: helloworld-agent
                    image: quay.io/open-cluster-management/addon-examples:latest
                    imagePullPolicy: IfNotPresent
                    args:
                      - "/helloworld_helm"
                      - "agent"
                      - "--cluster-name={{CLUSTER_NAME}}"
                      - "--addon-namespace=open-cluster-management-agent-addon"
                      - "--addon-name=hello-template"
                      - "--hub-kubeconfig={{HUB_KUBECONFIG}}"
                    env:
                      - name: LOG_LEVEL
                        value: "{{LOG_LEVEL}}"
        - kind: ServiceAccount
          apiVersion: v1
          metadata:
            name: hello-template-agent-sa
            namespace: open-cluster-management-agent-addon
        - kind: ClusterRoleBinding
          apiVersion: rbac.authorization.k8s.io/v1
          metadata:
            name: hello-template-agent
          roleRef:
            apiGroup: rbac.authorization.k8s.io
            kind: ClusterRole
            name: cluster-admin
          subjects:
            - kind: ServiceAccount
              name: hello-template-agent-sa
              namespace: open-cluster-management-agent-addon
    deleteOption:
      propagationPolicy: SelectivelyOrphan
      selectivelyOrphans:
        orphaningRules:
          - group: ""
            resource: serviceaccounts
            namespace: open-cluster-management-agent-addon
            name: hello-template-agent-sa
    manifestConfigs:
      - resourceIdentifier:
          group: apps
          resource: deployments
          namespace: open-cluster-management-agent-addon
          name: hello-template-agent
        feedbackRules:
          - type: WellKnownStatus
          - type: JSONPaths
            jsonPaths:
              - name: replicas
                path: .spec.replicas
              - name: available
                path: .status.availableReplicas
                version: v1
        feedbackScrapeType: Watch
        updateStrategy:
          type: ServerSideApply
          serverSideApply:
            fieldManager: work-agent-hello
            force: true
            ignoreFields:
              - condition: OnSpokeChange
                jsonPaths:
                  - .spec.replicas
      - resourceIdentifier:
          resource: serviceaccounts
          namespace: open-cluster-management-agent-addon
          name: hello-template-agent-sa
        updateStrategy:
          type: CreateOnly
        conditionRules:
          - condition: Available
            type: CEL
            celExpressions:
              - object.metadata.name != ''
            message: service account exists
          - condition: Complete
            type: WellKnownConditions
            messageExpression: "'done'"
    executor:
      subject:
        type: ServiceAccount
        serviceAccount:
          namespace: open-cluster-management-agent-addon
          name: hello-template-executor
  registration:
    - type: KubeClient
      kubeClient:
        hubPermissions:
          - type: CurrentCluster
            currentCluster:
              clusterRoleName: cm-admin
          - type: SingleNamespace
            singleNamespace:
              namespace: open-cluster-management
              roleRef:
                apiGroup: rbac.authorization.k8s.io
                kind: Role
                name: cm-reader
    - type: CustomSigner
      customSigner:
        signerName: example.com/hello-template
        signingCA:
          name: hello-template-ca
          namespace: open-cluster-management-hub
        subject:
          user: hello-template-agent
          groups:
            - hello-template
          organizationUnit:
            - ocm
"#;

#[test]
fn addon_template() {
    let template = roundtrip_yaml::<v1alpha1::AddOnTemplate>(ADDON_TEMPLATE_YAML);
    assert_eq!(template.spec.addon_name, "hello-template");
    assert_eq!(template.manifests().len(), 3);
    assert_eq!(template.manifests()[0].kind(), Some("Deployment"));
    let registration = template.spec.registration.expect("registration");
    assert_eq!(
        registration[0].type_,
        v1alpha1::RegistrationType::KubeClient
    );
    let signer = registration[1]
        .custom_signer
        .as_ref()
        .expect("customSigner");
    assert_eq!(signer.signing_ca.name, "hello-template-ca");
}

#[test]
fn addon_template_minimal() {
    let template = roundtrip_yaml::<v1alpha1::AddOnTemplate>(
        "apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata:
  name: empty
spec:
  addonName: empty
  agentSpec: {}
",
    );
    assert!(template.manifests().is_empty());
}
