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
