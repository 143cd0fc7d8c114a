//! The addon manager's install strategies, ownership, registration and deploy works against a
//! fake fleet with work agents.

use crate::addon_support;

use std::sync::Arc;

use addon_support::{Fleet, NS, deployment, namespace};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use ocm_api::addon::v1beta1::{ClusterManagementAddOn, HealthCheckMode, ManagedClusterAddOn};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::constants::addon as ac;
use ocm_api::work::v1::Manifest;
use ocm_work::addon::{AddonConfigs, AgentAddon, AgentAddonOptions, HealthProber, RenderError};
use serde_json::json;

struct Hello;

impl AgentAddon for Hello {
    fn options(&self) -> AgentAddonOptions {
        AgentAddonOptions::new("hello").with_health_prober(HealthProber::WorkloadAvailability)
    }

    fn manifests(
        &self,
        _: &ManagedCluster,
        _: &ManagedClusterAddOn,
        _: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        Ok(vec![
            namespace("hello-agent"),
            deployment("hello-agent", "hello", "hello:v1"),
        ])
    }
}

fn cma(strategy: &str) -> String {
    format!(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: hello}}\nspec: {{installStrategy: {strategy}}}\n"
    )
}

const MCA_CLUSTER1: &str = "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
    metadata: {name: hello, namespace: cluster1}\nspec: {}\n";

#[tokio::test]
async fn manual_install_deploys_the_agent_and_keeps_the_status() {
    let fleet = Fleet::new(2, |m| m.with_addon(Arc::new(Hello))).await;
    fleet.apply(&cma("{type: Manual}"));
    fleet.apply(MCA_CLUSTER1);
    fleet.rounds(3).await;

    let mca = fleet.mca("cluster1", "hello").await.unwrap();
    let owner = &mca.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("ClusterManagementAddOn", "hello", Some(true))
    );
    let st = mca.status.clone().unwrap();
    assert_eq!(
        st.health_check.unwrap().mode,
        Some(HealthCheckMode::Customized)
    );
    assert_eq!(
        fleet.cond("cluster1", "hello", "RegistrationApplied").await,
        ("True".into(), "NilRegistration".into())
    );
    let applied = fleet
        .condition("cluster1", "hello", "ManifestApplied")
        .await
        .unwrap();
    assert_eq!(
        (applied.status.as_str(), applied.reason.as_str()),
        ("True", "AddonManifestApplied")
    );
    assert_eq!(
        applied.message,
        "manifests of addon are applied successfully"
    );
    let available = fleet
        .condition("cluster1", "hello", "Available")
        .await
        .unwrap();
    assert_eq!(
        (available.status.as_str(), available.reason.as_str()),
        ("True", "ProbeAvailable")
    );
    assert_eq!(available.message, "hello add-on is available.");
    let progressing = fleet
        .condition("cluster1", "hello", "Progressing")
        .await
        .unwrap();
    assert_eq!(
        (progressing.status.as_str(), progressing.reason.as_str()),
        ("False", "Completed")
    );

    let work = fleet
        .work("cluster1", "addon-hello-deploy-0")
        .await
        .expect("deploy work");
    assert_eq!(work.labels()[ac::ADDON_LABEL], "hello");
    assert_eq!(work.owner_references()[0].kind, "ManagedClusterAddOn");
    assert_eq!(
        work.owner_references()[0].uid,
        mca.metadata.uid.clone().unwrap()
    );
    let feedback = &work.spec.manifest_configs.as_ref().unwrap()[0];
    assert_eq!(feedback.resource_identifier.resource, "deployments");
    assert!(
        fleet
            .spoke_object(
                "cluster1",
                "apps",
                "v1",
                "deployments",
                "hello-agent",
                "hello"
            )
            .is_some()
    );
    // Manual: nothing on the other cluster.
    assert!(fleet.mca("cluster2", "hello").await.is_none());
    assert!(fleet.works("cluster2").await.is_empty());

    // A steady state writes nothing to the hub.
    let writes = fleet.hub.hub().journal().writes();
    fleet.manager.reconcile_all().await.unwrap();
    assert_eq!(fleet.hub.hub().journal().writes(), writes);
}

#[tokio::test]
async fn placements_strategy_creates_and_deletes_addons() {
    let fleet = Fleet::new(3, |m| m.with_addon(Arc::new(Hello))).await;
    let clusters: Api<ManagedCluster> = Api::all(fleet.client.clone());
    for (c, env) in [
        ("cluster1", "prod"),
        ("cluster2", "prod"),
        ("cluster3", "dev"),
    ] {
        clusters
            .patch(
                c,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"env": env}}})),
            )
            .await
            .unwrap();
    }
    clusters
        .patch(
            "cluster2",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {
            "addon.open-cluster-management.io/values": "{\"a\":1}", "other.io/x": "y"}}})),
        )
        .await
        .unwrap();
    fleet.apply(&format!(
        "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n\
         metadata: {{name: prod, namespace: {NS}}}\n\
         spec: {{predicates: [{{requiredClusterSelector: {{labelSelector: {{matchLabels: {{env: prod}}}}}}}}]}}\n"
    ));
    fleet.apply(&cma(&format!(
        "{{type: Placements, placements: [{{namespace: {NS}, name: prod}}]}}"
    )));
    let out = fleet.rounds(3).await;
    assert!(out["hello"].failed.is_empty(), "{:?}", out["hello"].failed);
    assert_eq!(fleet.mca_clusters("hello").await, ["cluster1", "cluster2"]);
    let mca2 = fleet.mca("cluster2", "hello").await.unwrap();
    assert_eq!(
        mca2.annotations()
            .get("addon.open-cluster-management.io/values")
            .map(String::as_str),
        Some("{\"a\":1}")
    );
    assert!(!mca2.annotations().contains_key("other.io/x"));
    assert_eq!(fleet.cond("cluster2", "hello", "Available").await.0, "True");

    let progression = fleet
        .cma("hello")
        .await
        .status
        .unwrap()
        .install_progressions
        .unwrap();
    let cond = &progression[0].conditions.as_ref().unwrap()[0];
    assert_eq!(
        (
            progression[0].namespace.as_str(),
            progression[0].name.as_str()
        ),
        (NS, "prod")
    );
    assert_eq!(cond.reason, "Completed");
    assert_eq!(
        cond.message,
        "selected clusters 2. configured addons 2/2 completed with no errors, 0 failed 0 timeout."
    );

    // cluster1 leaves the placement, cluster3 joins.
    clusters
        .patch(
            "cluster1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"env": "dev"}}})),
        )
        .await
        .unwrap();
    clusters
        .patch(
            "cluster3",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"env": "prod"}}})),
        )
        .await
        .unwrap();
    let out = fleet.rounds(3).await;
    assert!(out["hello"].failed.is_empty(), "{:?}", out["hello"].failed);
    assert_eq!(fleet.mca_clusters("hello").await, ["cluster2", "cluster3"]);
    // The removed addon's works went with it (owner reference), and the agent cleaned up.
    assert!(fleet.works("cluster1").await.is_empty());
    assert!(
        fleet
            .spoke_object(
                "cluster1",
                "apps",
                "v1",
                "deployments",
                "hello-agent",
                "hello"
            )
            .is_none()
    );
    assert!(
        fleet
            .spoke_object(
                "cluster3",
                "apps",
                "v1",
                "deployments",
                "hello-agent",
                "hello"
            )
            .is_some()
    );
}

#[tokio::test]
async fn deleting_the_cluster_management_addon_removes_everything() {
    let fleet = Fleet::new(1, |m| m.with_addon(Arc::new(Hello))).await;
    fleet.apply(&cma("{type: Manual}"));
    fleet.apply(MCA_CLUSTER1);
    fleet.rounds(2).await;
    assert!(
        fleet
            .work("cluster1", "addon-hello-deploy-0")
            .await
            .is_some()
    );
    Api::<ClusterManagementAddOn>::all(fleet.client.clone())
        .delete("hello", &DeleteParams::default())
        .await
        .unwrap();
    fleet.rounds(2).await;
    assert!(fleet.mca("cluster1", "hello").await.is_none());
    assert!(fleet.works("cluster1").await.is_empty());
    assert!(
        fleet
            .spoke_object(
                "cluster1",
                "apps",
                "v1",
                "deployments",
                "hello-agent",
                "hello"
            )
            .is_none()
    );
}

#[tokio::test]
async fn an_addon_without_its_cluster_management_addon_is_left_alone() {
    let fleet = Fleet::new(1, |m| m.with_addon(Arc::new(Hello))).await;
    fleet.apply(MCA_CLUSTER1);
    let out = fleet.rounds(2).await;
    assert!(out["hello"].reconciled.is_empty());
    assert!(
        fleet
            .mca("cluster1", "hello")
            .await
            .unwrap()
            .status
            .is_none()
    );
    assert!(fleet.works("cluster1").await.is_empty());
}
