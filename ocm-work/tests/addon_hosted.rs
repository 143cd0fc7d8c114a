//! Hosted mode: manifests located `hosting` go to the hosting cluster's namespace, with the
//! hosting finalizer, conditions and clean-up.

use crate::addon_support;

use std::sync::Arc;

use addon_support::Fleet;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams};
use ocm_api::addon::v1beta1::ManagedClusterAddOn;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::constants::addon as ac;
use ocm_api::work::v1::Manifest;
use ocm_work::addon::{AddonConfigs, AgentAddon, AgentAddonOptions, HealthProber, RenderError};
use serde_json::json;

struct Hosted;

impl AgentAddon for Hosted {
    fn options(&self) -> AgentAddonOptions {
        AgentAddonOptions::new("hosted")
            .with_hosted_mode()
            .with_health_prober(HealthProber::DeploymentAvailability)
    }

    fn manifests(
        &self,
        cluster: &ManagedCluster,
        _: &ManagedClusterAddOn,
        _: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        let name = cluster.metadata.name.clone().unwrap_or_default();
        Ok(vec![
            // On the managed cluster: what the agent manages there.
            Manifest::new(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "target-config", "namespace": "default",
                             "annotations": {ac::HOSTED_MANIFEST_LOCATION_ANNOTATION: "managed"}}})),
            // On the hosting cluster: the agent itself.
            Manifest::new(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": format!("agent-{name}"), "namespace": "hosted-agents",
                             "annotations": {ac::HOSTED_MANIFEST_LOCATION_ANNOTATION: "hosting"}},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                    "template": {"metadata": {"labels": {"app": "a"}},
                        "spec": {"containers": [{"name": "a", "image": "agent:v1"}]}}}})),
            Manifest::new(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "nowhere", "namespace": "default",
                             "annotations": {ac::HOSTED_MANIFEST_LOCATION_ANNOTATION: "none"}}})),
        ])
    }
}

fn install(fleet: &Fleet, hosting: &str) {
    fleet.apply(&format!(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: hosted}}\nspec: {{}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {{name: hosted, namespace: cluster1, annotations: {{{}: {hosting}}}}}\nspec: {{}}\n",
        ac::HOSTING_CLUSTER_NAME_ANNOTATION
    ));
}

#[tokio::test]
async fn hosted_addons_deploy_to_the_hosting_cluster_and_clean_up() {
    let fleet = Fleet::new(2, |m| m.with_addon(Arc::new(Hosted))).await;
    install(&fleet, "cluster2");
    let out = fleet.rounds(4).await;
    assert!(
        out["hosted"].failed.is_empty(),
        "{:?}",
        out["hosted"].failed
    );

    let managed = fleet
        .work("cluster1", "addon-hosted-deploy-0")
        .await
        .unwrap();
    let kinds: Vec<&str> = managed
        .spec
        .manifests()
        .iter()
        .filter_map(|m| m.name())
        .collect();
    assert_eq!(kinds, ["target-config"]);
    let hosting = fleet
        .work("cluster2", "addon-hosted-deploy-hosting-cluster1-0")
        .await
        .expect("hosting work");
    assert_eq!(hosting.labels()[ac::ADDON_LABEL], "hosted");
    assert_eq!(hosting.labels()[ac::ADDON_NAMESPACE_LABEL], "cluster1");
    assert!(hosting.owner_references().is_empty());
    assert_eq!(hosting.spec.manifests()[0].name(), Some("agent-cluster1"));
    assert!(
        fleet
            .spoke_object(
                "cluster2",
                "apps",
                "v1",
                "deployments",
                "hosted-agents",
                "agent-cluster1"
            )
            .is_some()
    );
    assert!(
        fleet
            .spoke_object(
                "cluster1",
                "apps",
                "v1",
                "deployments",
                "hosted-agents",
                "agent-cluster1"
            )
            .is_none()
    );
    assert!(
        fleet
            .spoke_object(
                "cluster1",
                "",
                "v1",
                "configmaps",
                "default",
                "target-config"
            )
            .is_some()
    );

    let mca = fleet.mca("cluster1", "hosted").await.unwrap();
    assert!(
        mca.finalizers()
            .contains(&ac::HOSTING_MANIFEST_FINALIZER.to_string())
    );
    let v = fleet
        .condition("cluster1", "hosted", "HostingClusterValidity")
        .await
        .unwrap();
    assert_eq!(
        (v.status.as_str(), v.reason.as_str(), v.message.as_str()),
        (
            "True",
            "HostingClusterValid",
            "hosting cluster cluster2 is a managed cluster of the hub"
        )
    );
    assert_eq!(
        fleet
            .cond("cluster1", "hosted", "HostingManifestApplied")
            .await,
        ("True".into(), "AddonManifestApplied".into())
    );
    assert_eq!(
        fleet.cond("cluster1", "hosted", "ManifestApplied").await,
        ("True".into(), "AddonManifestApplied".into())
    );
    // Health comes from the hosting work, where the agent runs.
    assert_eq!(
        fleet.cond("cluster1", "hosted", "Available").await,
        ("True".into(), "ProbeAvailable".into())
    );
    assert_eq!(
        fleet.cond("cluster1", "hosted", "Progressing").await,
        ("False".into(), "Completed".into())
    );

    // Removal: the hosting finalizer holds the addon until its hosting works are gone.
    Api::<ManagedClusterAddOn>::namespaced(fleet.client.clone(), "cluster1")
        .delete("hosted", &DeleteParams::default())
        .await
        .unwrap();
    fleet.rounds(3).await;
    assert!(fleet.mca("cluster1", "hosted").await.is_none());
    assert!(fleet.works("cluster1").await.is_empty());
    assert!(fleet.works("cluster2").await.is_empty());
    assert!(
        fleet
            .spoke_object(
                "cluster2",
                "apps",
                "v1",
                "deployments",
                "hosted-agents",
                "agent-cluster1"
            )
            .is_none()
    );
}

#[tokio::test]
async fn an_unknown_hosting_cluster_is_reported() {
    let fleet = Fleet::new(1, |m| m.with_addon(Arc::new(Hosted))).await;
    install(&fleet, "nowhere");
    fleet.rounds(2).await;
    let v = fleet
        .condition("cluster1", "hosted", "HostingClusterValidity")
        .await
        .unwrap();
    assert_eq!(
        (v.status.as_str(), v.reason.as_str(), v.message.as_str()),
        (
            "False",
            "HostingClusterInvalid",
            "hosting cluster nowhere is not a managed cluster of the hub"
        )
    );
    assert!(
        fleet
            .mca("cluster1", "hosted")
            .await
            .unwrap()
            .finalizers()
            .is_empty()
    );
    let p = fleet
        .condition("cluster1", "hosted", "Progressing")
        .await
        .unwrap();
    assert_eq!(p.reason, "WaitingForHostingManifestApplied");
    // The managed part is deployed all the same.
    assert!(
        fleet
            .work("cluster1", "addon-hosted-deploy-0")
            .await
            .is_some()
    );
}

struct HostedWithHook;

impl AgentAddon for HostedWithHook {
    fn options(&self) -> AgentAddonOptions {
        AgentAddonOptions::new("hooked").with_hosted_mode()
    }

    fn manifests(
        &self,
        _: &ManagedCluster,
        _: &ManagedClusterAddOn,
        _: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        let hosting = |v: serde_json::Value| {
            let mut v = v;
            v["metadata"]["annotations"][ac::HOSTED_MANIFEST_LOCATION_ANNOTATION] =
                json!("hosting");
            Manifest::new(v)
        };
        Ok(vec![
            hosting(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "agent-config", "namespace": "default"}}),
            ),
            hosting(json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "cleanup", "namespace": "default", "annotations": {ac::PRE_DELETE_HOOK_ANNOTATION: ""}},
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})),
        ])
    }
}

#[tokio::test]
async fn the_hosting_pre_delete_hook_runs_on_the_hosting_cluster() {
    let fleet = Fleet::new(2, |m| m.with_addon(Arc::new(HostedWithHook))).await;
    fleet.apply(&format!(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: hooked}}\nspec: {{}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {{name: hooked, namespace: cluster1, annotations: {{{}: cluster2}}}}\nspec: {{}}\n",
        ac::HOSTING_CLUSTER_NAME_ANNOTATION
    ));
    fleet.rounds(3).await;
    let mut fins = fleet
        .mca("cluster1", "hooked")
        .await
        .unwrap()
        .finalizers()
        .to_vec();
    fins.sort();
    assert_eq!(
        fins,
        [
            ac::HOSTING_PRE_DELETE_HOOK_FINALIZER,
            ac::HOSTING_MANIFEST_FINALIZER
        ]
    );
    assert!(
        fleet
            .work("cluster2", "addon-hooked-pre-delete-hosting-cluster1")
            .await
            .is_none()
    );

    Api::<ManagedClusterAddOn>::namespaced(fleet.client.clone(), "cluster1")
        .delete("hooked", &DeleteParams::default())
        .await
        .unwrap();
    fleet.round().await;
    let hook = fleet
        .work("cluster2", "addon-hooked-pre-delete-hosting-cluster1")
        .await
        .expect("hosting hook work");
    assert_eq!(hook.labels()[ac::ADDON_NAMESPACE_LABEL], "cluster1");
    assert!(
        fleet
            .spoke_object("cluster2", "batch", "v1", "jobs", "default", "cleanup")
            .is_some()
    );
    assert!(
        fleet
            .work("cluster2", "addon-hooked-deploy-hosting-cluster1-0")
            .await
            .is_some(),
        "kept while the hook runs"
    );
    fleet.rounds(5).await;
    assert!(fleet.mca("cluster1", "hooked").await.is_none());
    assert!(fleet.works("cluster2").await.is_empty());
    assert!(
        fleet
            .spoke_object(
                "cluster2",
                "",
                "v1",
                "configmaps",
                "default",
                "agent-config"
            )
            .is_none()
    );
}
