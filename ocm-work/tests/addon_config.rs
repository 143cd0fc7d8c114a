//! Addon configurations: AddOnDeploymentConfigs resolved with upstream's precedence, spec
//! hashes, the proxy scenario, rollouts of configuration changes, and configurations that do
//! not resolve.

use crate::addon_support;

use std::collections::BTreeSet;
use std::sync::Arc;

use addon_support::{Fleet, NS, namespace};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use ocm_api::addon::v1beta1::ManagedClusterAddOn;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::constants::annotations;
use ocm_api::work::v1::Manifest;
use ocm_work::addon::config::spec_hash;
use ocm_work::addon::deployment_config::DeploymentValues;
use ocm_work::addon::{
    AddonConfigs, AgentAddon, AgentAddonOptions, ConfigGvr, HealthProber, RenderError,
};
use serde_json::{Value, json};

/// An addon whose agent takes its settings from an AddOnDeploymentConfig.
struct Usage;

impl AgentAddon for Usage {
    fn options(&self) -> AgentAddonOptions {
        AgentAddonOptions::new("usage")
            .with_supported_config(ConfigGvr::addon_deployment_config())
            .with_health_prober(HealthProber::DeploymentAvailability)
    }

    fn manifests(
        &self,
        _: &ManagedCluster,
        _: &ManagedClusterAddOn,
        configs: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        let values = match configs.deployment_config()? {
            Some(adc) => DeploymentValues::from_config(&adc)?,
            None => DeploymentValues::default(),
        };
        let ns = values
            .install_namespace
            .clone()
            .unwrap_or_else(|| "usage-agent".into());
        let level = values
            .variables
            .get("LOG_LEVEL")
            .cloned()
            .unwrap_or_else(|| "1".into());
        let mut deployment = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "usage-agent", "namespace": ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "usage"}},
                "template": {"metadata": {"labels": {"app": "usage"}},
                    "spec": {"containers": [{"name": "agent", "image": "quay.io/ocm/usage:v1",
                        "args": [format!("--v={level}")]}]}}}
        });
        values.decorate_pod_template(&mut deployment)?;
        Ok(vec![namespace(&ns), Manifest::new(deployment)])
    }
}

/// The CRD defaults `agentInstallNamespace` of every AddOnDeploymentConfig to this.
const DEFAULT_NS: &str = "open-cluster-management-agent-addon";

fn adc(namespace: &str, name: &str, spec: Value) -> String {
    serde_json::to_string(&json!({
        "apiVersion": "addon.open-cluster-management.io/v1beta1", "kind": "AddOnDeploymentConfig",
        "metadata": {"name": name, "namespace": namespace}, "spec": spec
    }))
    .unwrap()
}

fn hub_object_hash(fleet: &Fleet, namespace: &str, name: &str) -> String {
    let obj = fleet
        .hub
        .hub()
        .store()
        .get(
            &ocm_testkit::Gvr::new(
                "addon.open-cluster-management.io",
                "v1beta1",
                "addondeploymentconfigs",
            ),
            namespace,
            name,
        )
        .unwrap();
    spec_hash(&obj)
}

async fn desired(fleet: &Fleet, cluster: &str) -> Option<(String, String)> {
    let st = fleet.mca(cluster, "usage").await?.status?;
    let r = st.config_references?.into_iter().next()?;
    let d = r.desired_config?;
    Some((d.name, d.spec_hash.unwrap_or_default()))
}

fn container_args(fleet: &Fleet, cluster: &str, ns: &str) -> Value {
    fleet
        .spoke_object(cluster, "apps", "v1", "deployments", ns, "usage-agent")
        .map(|d| d["spec"]["template"]["spec"]["containers"][0].clone())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn defaults_and_own_configs_with_spec_hashes_and_the_proxy_scenario() {
    let fleet = Fleet::new(2, |m| m.with_addon(Arc::new(Usage))).await;
    fleet.apply(&adc(
        NS,
        "default",
        json!({"customizedVariables": [{"name": "LOG_LEVEL", "value": "2"}]}),
    ));
    // The seeds' proxy scenario: a config in the cluster's namespace, named by the addon.
    fleet.apply(&adc(
        "cluster2",
        "addon-proxy-settings",
        json!({"proxyConfig": {
        "httpProxy": "http://10.0.109.153:3128", "httpsProxy": "https://10.0.109.153:3129",
        "noProxy": ".cluster.local,.svc,10.96.0.1", "caBundle": "LS0tLS1CRUdJTi0tLS0tCg=="}}),
    ));
    fleet.apply(&format!(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: usage}}\nspec:\n  defaultConfigs:\n  - {{group: addon.open-cluster-management.io, \
         resource: addondeploymentconfigs, namespace: {NS}, name: default}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {{name: usage, namespace: cluster1}}\nspec: {{}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {{name: usage, namespace: cluster2}}\nspec:\n  configs:\n  - {{group: addon.open-cluster-management.io, \
         resource: addondeploymentconfigs, namespace: cluster2, name: addon-proxy-settings}}\n"
    ));
    let out = fleet.rounds(4).await;
    assert!(out["usage"].failed.is_empty(), "{:?}", out["usage"].failed);

    let default_hash = hub_object_hash(&fleet, NS, "default");
    let proxy_hash = hub_object_hash(&fleet, "cluster2", "addon-proxy-settings");
    assert_eq!(
        desired(&fleet, "cluster1").await,
        Some(("default".into(), default_hash.clone()))
    );
    assert_eq!(
        desired(&fleet, "cluster2").await,
        Some(("addon-proxy-settings".into(), proxy_hash.clone()))
    );
    let cma = fleet.cma("usage").await;
    let default_ref = &cma.status.unwrap().default_config_references.unwrap()[0];
    assert_eq!(
        default_ref
            .desired_config
            .as_ref()
            .unwrap()
            .spec_hash
            .as_deref(),
        Some(default_hash.as_str())
    );

    let mca1 = fleet
        .mca("cluster1", "usage")
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(
        mca1.supported_configs.unwrap()[0].resource,
        "addondeploymentconfigs"
    );
    let r = &mca1.config_references.unwrap()[0];
    assert_eq!(r.last_applied_config, r.desired_config, "rolled out");
    assert_eq!(r.last_observed_generation, Some(1));
    assert_eq!(
        fleet.cond("cluster1", "usage", "Configured").await,
        ("True".into(), "ConfigurationsConfigured".into())
    );
    assert_eq!(
        fleet.cond("cluster1", "usage", "Progressing").await,
        ("False".into(), "Completed".into())
    );
    assert_eq!(
        fleet.cond("cluster2", "usage", "Available").await,
        ("True".into(), "ProbeAvailable".into())
    );

    let work = fleet
        .work("cluster1", "addon-usage-deploy-0")
        .await
        .unwrap();
    assert_eq!(
        work.metadata.annotations.unwrap()[annotations::CONFIG_SPEC_HASH],
        format!(
            "{{\"addondeploymentconfigs.addon.open-cluster-management.io/{NS}/default\":\"{default_hash}\"}}"
        )
    );
    assert_eq!(
        container_args(&fleet, "cluster1", DEFAULT_NS)["args"],
        json!(["--v=2"])
    );
    let c2 = container_args(&fleet, "cluster2", DEFAULT_NS);
    let env: Vec<(String, String)> = c2["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        env.contains(&("HTTPS_PROXY".into(), "https://10.0.109.153:3129".into())),
        "{env:?}"
    );
    assert!(
        env.contains(&("no_proxy".into(), ".cluster.local,.svc,10.96.0.1".into())),
        "{env:?}"
    );

    // Changing the default config rolls through to cluster1 only (cluster2 names its own).
    let api: Api<DynamicObject> = Api::namespaced_with(
        fleet.client.clone(),
        NS,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(
                "addon.open-cluster-management.io",
                "v1beta1",
                "AddOnDeploymentConfig",
            ),
            "addondeploymentconfigs",
        ),
    );
    api.patch("default", &PatchParams::default(), &Patch::Merge(json!({"spec": {
        "customizedVariables": [{"name": "LOG_LEVEL", "value": "4"}], "agentInstallNamespace": "usage-v2"}})))
        .await
        .unwrap();
    fleet.rounds(4).await;
    let new_hash = hub_object_hash(&fleet, NS, "default");
    assert_ne!(new_hash, default_hash);
    assert_eq!(
        desired(&fleet, "cluster1").await,
        Some(("default".into(), new_hash))
    );
    assert_eq!(
        container_args(&fleet, "cluster1", "usage-v2")["args"],
        json!(["--v=4"])
    );
    assert_eq!(
        fleet
            .mca("cluster1", "usage")
            .await
            .unwrap()
            .status
            .unwrap()
            .namespace,
        None,
        "no registration: status.namespace stays unset"
    );
    assert_eq!(
        desired(&fleet, "cluster2").await,
        Some(("addon-proxy-settings".into(), proxy_hash))
    );
    assert_eq!(
        fleet.cond("cluster1", "usage", "Progressing").await,
        ("False".into(), "Completed".into())
    );
}

async fn rolled(fleet: &Fleet, clusters: &[&str], hash: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for c in clusters {
        if desired(fleet, c).await.is_some_and(|(_, h)| h == hash) {
            out.insert(c.to_string());
        }
    }
    out
}

/// Changes the config to `level` and follows the rollout round by round; returns the number
/// of clusters on the new config after each round.
async fn follow_rollout(fleet: &Fleet, clusters: &[&str], level: &str) -> Vec<usize> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        fleet.client.clone(),
        NS,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(
                "addon.open-cluster-management.io",
                "v1beta1",
                "AddOnDeploymentConfig",
            ),
            "addondeploymentconfigs",
        ),
    );
    api.patch(
        "v",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {
        "customizedVariables": [{"name": "LOG_LEVEL", "value": level}]}})),
    )
    .await
    .unwrap();
    let hash = hub_object_hash(fleet, NS, "v");
    let mut counts = Vec::new();
    for _ in 0..12 {
        fleet.round().await;
        counts.push(rolled(fleet, clusters, &hash).await.len());
    }
    counts
}

#[tokio::test]
async fn progressive_rollout_of_a_config_change() {
    let fleet = Fleet::new(3, |m| m.with_addon(Arc::new(Usage))).await;
    fleet.apply(&adc(
        NS,
        "v",
        json!({"customizedVariables": [{"name": "LOG_LEVEL", "value": "1"}]}),
    ));
    fleet.apply(&format!(
        "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n\
         metadata: {{name: all, namespace: {NS}}}\nspec: {{}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: usage}}\nspec:\n  installStrategy:\n    type: Placements\n    placements:\n\
         \x20   - namespace: {NS}\n      name: all\n      configs:\n      - {{group: addon.open-cluster-management.io, \
         resource: addondeploymentconfigs, namespace: {NS}, name: v}}\n      rolloutStrategy: {{type: Progressive, progressive: {{maxConcurrency: 1}}}}\n"
    ));
    fleet.rounds(12).await;
    let clusters = ["cluster1", "cluster2", "cluster3"];
    for c in clusters {
        assert_eq!(
            fleet.cond(c, "usage", "Progressing").await,
            ("False".into(), "Completed".into()),
            "{c}"
        );
    }
    let counts = follow_rollout(&fleet, &clusters, "5").await;
    // One cluster at a time: the count never jumps by more than one and passes through 1 and 2.
    assert!(
        counts.windows(2).all(|w| w[1] >= w[0] && w[1] - w[0] <= 1),
        "{counts:?}"
    );
    assert!(counts.contains(&1) && counts.contains(&2), "{counts:?}");
    assert_eq!(*counts.last().unwrap(), 3, "{counts:?}");
    // While waiting, an addon says so.
    let progression = &fleet
        .cma("usage")
        .await
        .status
        .unwrap()
        .install_progressions
        .unwrap()[0];
    let c = &progression.conditions.as_ref().unwrap()[0];
    assert_eq!(c.reason, "Completed");
    assert_eq!(
        c.message,
        "selected clusters 3. configured addons 3/3 completed with no errors, 0 failed 0 timeout."
    );
    let r = &progression.config_references.as_ref().unwrap()[0];
    assert_eq!(r.last_known_good_config, r.desired_config);
    for c in clusters {
        assert_eq!(
            container_args(&fleet, c, DEFAULT_NS)["args"],
            json!(["--v=5"])
        );
    }
}

#[tokio::test]
async fn progressive_per_group_rollout_of_a_config_change() {
    let fleet = Fleet::new(3, |m| m.with_addon(Arc::new(Usage))).await;
    fleet.apply(&adc(
        NS,
        "v",
        json!({"customizedVariables": [{"name": "LOG_LEVEL", "value": "1"}]}),
    ));
    fleet.apply(&format!(
        "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n\
         metadata: {{name: all, namespace: {NS}}}\nspec: {{decisionStrategy: {{groupStrategy: {{clustersPerDecisionGroup: 1}}}}}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: usage}}\nspec:\n  installStrategy:\n    type: Placements\n    placements:\n\
         \x20   - namespace: {NS}\n      name: all\n      configs:\n      - {{group: addon.open-cluster-management.io, \
         resource: addondeploymentconfigs, namespace: {NS}, name: v}}\n      rolloutStrategy: {{type: ProgressivePerGroup}}\n"
    ));
    fleet.rounds(12).await;
    let clusters = ["cluster1", "cluster2", "cluster3"];
    let counts = follow_rollout(&fleet, &clusters, "7").await;
    assert!(
        counts.windows(2).all(|w| w[1] >= w[0] && w[1] - w[0] <= 1),
        "{counts:?}"
    );
    assert!(counts.contains(&1) && counts.contains(&2), "{counts:?}");
    assert_eq!(*counts.last().unwrap(), 3, "{counts:?}");
}

#[tokio::test]
async fn all_rollout_applies_everywhere_at_once() {
    let fleet = Fleet::new(3, |m| m.with_addon(Arc::new(Usage))).await;
    fleet.apply(&adc(
        NS,
        "v",
        json!({"customizedVariables": [{"name": "LOG_LEVEL", "value": "1"}]}),
    ));
    fleet.apply(&format!(
        "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n\
         metadata: {{name: all, namespace: {NS}}}\nspec: {{}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: usage}}\nspec:\n  installStrategy:\n    type: Placements\n    placements:\n\
         \x20   - namespace: {NS}\n      name: all\n      configs:\n      - {{group: addon.open-cluster-management.io, \
         resource: addondeploymentconfigs, namespace: {NS}, name: v}}\n"
    ));
    fleet.rounds(4).await;
    let counts = follow_rollout(&fleet, &["cluster1", "cluster2", "cluster3"], "3").await;
    assert_eq!(counts[0], 3, "{counts:?}");
}

#[tokio::test]
async fn a_config_that_does_not_resolve_is_a_condition_on_that_addon_only() {
    let fleet = Fleet::new(2, |m| m.with_addon(Arc::new(Usage))).await;
    fleet.apply(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {name: usage}\nspec: {}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {name: usage, namespace: cluster1}\nspec:\n  configs:\n  - {group: addon.open-cluster-management.io, \
         resource: addondeploymentconfigs, namespace: cluster1, name: missing}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {name: usage, namespace: cluster2}\nspec: {}\n",
    );
    let out = fleet.rounds(3).await;
    let failed: Vec<&str> = out["usage"]
        .failed
        .iter()
        .map(|(c, _)| c.as_str())
        .collect();
    assert_eq!(failed, ["cluster1"]);
    let c = fleet
        .condition("cluster1", "usage", "ManifestApplied")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "ManifestWorkApplyFailed")
    );
    assert!(
        c.message.starts_with("failed to get manifest from agent interface: addondeploymentconfigs.addon.open-cluster-management.io cluster1/missing: "),
        "{}",
        c.message
    );
    assert!(c.message.contains("not found"), "{}", c.message);
    assert!(fleet.works("cluster1").await.is_empty());
    assert_eq!(fleet.cond("cluster2", "usage", "Available").await.0, "True");

    // Once the config exists, cluster1 converges too.
    fleet.apply(&adc(
        "cluster1",
        "missing",
        json!({"customizedVariables": [{"name": "LOG_LEVEL", "value": "9"}]}),
    ));
    let out = fleet.rounds(3).await;
    assert!(out["usage"].failed.is_empty(), "{:?}", out["usage"].failed);
    assert_eq!(
        fleet.cond("cluster1", "usage", "ManifestApplied").await,
        ("True".into(), "AddonManifestApplied".into())
    );
    assert_eq!(
        container_args(&fleet, "cluster1", DEFAULT_NS)["args"],
        json!(["--v=9"])
    );
}

#[tokio::test]
async fn an_unsupported_config_kind_is_reported() {
    let fleet = Fleet::new(1, |m| m.with_addon(Arc::new(Usage))).await;
    fleet.apply(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {name: usage}\nspec: {}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {name: usage, namespace: cluster1}\nspec:\n  configs:\n  - {group: example.io, resource: widgets, name: w}\n",
    );
    fleet.rounds(2).await;
    let c = fleet
        .condition("cluster1", "usage", "Progressing")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "ConfigurationUnsupported")
    );
    assert_eq!(
        c.message,
        "Configuration with gvr example.io/widgets is not supported for this addon"
    );
}
