//! The placement opt-ins of `ocm-hub-controller`'s feature gates, in one process and about a
//! second (#16):
//!
//! ```text
//! cargo run -p ocm-examples --bin placement-opt-ins
//! ```
//!
//! A fake hub with six clusters in three regions, each scored by an AddOnPlacementScore, and a
//! Placement asking for three clusters spread over the regions (`spreadPolicy`, `maxSkew: 1`,
//! `DoNotSchedule`), best score first (`sortBy: Score`). It shows, with the library
//! controllers each gate turns on:
//!
//! 1. every gate off: upstream's decisions (the three best clusters, all in one region, in
//!    name order, without scores);
//! 2. `TopologySpread` and `PlacementDecisionScore`: one cluster per region, best first, with
//!    scores; a re-ranking waits for `scoreRateLimit`; asking for more clusters than the
//!    constraint allows says why in `PlacementSatisfied`;
//! 3. `SIGPlacementDecision`: the same decision as a `multicluster.x-k8s.io` PlacementDecision;
//! 4. `ClusterProfile`: a `multicluster.x-k8s.io` ClusterProfile of every cluster bound to the
//!    Placement's namespace, with its health, version and claims.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::ManualClock;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::ManagedClusterSetBinding;
use ocm_api::conditions;
use ocm_api::multicluster::v1alpha1::{ClusterProfile, PlacementDecision as SigPlacementDecision};
use ocm_examples::outln;
use ocm_examples::table::Table;
use ocm_placement::Scheduler;
use ocm_placement::controller::PlacementController;
use ocm_placement::inventory::ClusterInventoryController;
use ocm_placement::profile::ClusterProfileController;
use ocm_placement::sig::SigPlacementDecisionController;
use ocm_testkit::FakeHub;
use serde_json::{Value, json};

const NS: &str = "apps";

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// Show the placement opt-ins (topology spread, scores in decisions, SIG-Multicluster
/// PlacementDecisions and ClusterProfiles) on a fake hub, in one process.
///
/// Six clusters in three regions and one Placement, scheduled with every gate off (upstream)
/// and then with ocm-hub-controller's TopologySpread, PlacementDecisionScore,
/// SIGPlacementDecision and ClusterProfile gates on. No cluster or network access needed.
#[derive(Parser, Debug)]
#[command(name = "placement-opt-ins", version)]
struct Args {}

#[tokio::main]
async fn main() -> ExitCode {
    let _args = Args::parse();
    ocm_examples::output::run_demo("placement-opt-ins", run()).await
}

fn step(text: &str) {
    outln!("\n==> {text}");
}

/// `(cluster, region, score)` of the fleet.
const CLUSTERS: [(&str, &str, i32); 6] = [
    ("cluster1", "east", 90),
    ("cluster2", "east", 80),
    ("cluster3", "east", 70),
    ("cluster4", "west", 40),
    ("cluster5", "west", 30),
    ("cluster6", "north", 20),
];

async fn create<K>(api: &Api<K>, value: Value) -> Result<K, Failure>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value)?;
    Ok(api.create(&PostParams::default(), &object).await?)
}

async fn set_score(hub: &Client, cluster: &str, value: i32) -> Result<(), Failure> {
    Api::<AddOnPlacementScore>::namespaced(hub.clone(), cluster)
        .patch_status(
            "usage",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"scores": [{"name": "cpu", "value": value}]}})),
        )
        .await?;
    Ok(())
}

/// `name -> cluster (score), ...` for every PlacementDecision of the Placement.
async fn show_decisions(hub: &Client) -> Result<(), Failure> {
    let api: Api<PlacementDecision> = Api::namespaced(hub.clone(), NS);
    let mut list = api.list(&ListParams::default()).await?.items;
    list.sort_by_key(|d| d.name_any());
    for pd in list {
        let decided: Vec<String> = pd
            .status
            .unwrap_or_default()
            .decisions
            .into_iter()
            .map(|d| match d.score {
                Some(score) => format!("{} ({score})", d.cluster_name),
                None => d.cluster_name,
            })
            .collect();
        outln!(
            "    {} -> {}",
            pd.metadata.name.unwrap_or_default(),
            decided.join(", ")
        );
    }
    let placement: Placement = Api::namespaced(hub.clone(), NS).get("web").await?;
    if let Some(c) = placement
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .and_then(|c| conditions::find(c, "PlacementSatisfied"))
    {
        outln!(
            "    PlacementSatisfied={} ({}: {})",
            c.status,
            c.reason,
            c.message
        );
    }
    Ok(())
}

async fn run() -> Result<(), Failure> {
    step("a fake hub with six clusters in three regions, scored by AddOnPlacementScore `usage`");
    let fake = FakeHub::new(CLUSTERS.len())?;
    let hub = fake.hub().client();
    let crds: Api<CustomResourceDefinition> = Api::all(hub.clone());
    for crd in ocm_api::crd::multicluster_crds() {
        crds.create(&PostParams::default(), &crd).await?;
    }
    let mut table = Table::new(["CLUSTER", "REGION", "SCORE"]);
    for (cluster, region, score) in CLUSTERS {
        Api::<ManagedCluster>::all(hub.clone())
            .patch(
                cluster,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"region": region}}})),
            )
            .await?;
        Api::<ManagedCluster>::all(hub.clone())
            .patch_status(
                cluster,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"clusterClaims": [
                    {"name": "region.open-cluster-management.io", "value": region}]}})),
            )
            .await?;
        create(
            &Api::<AddOnPlacementScore>::namespaced(hub.clone(), cluster),
            json!({"apiVersion": "cluster.open-cluster-management.io/v1alpha1",
                   "kind": "AddOnPlacementScore", "metadata": {"name": "usage", "namespace": cluster}}),
        )
        .await?;
        set_score(&hub, cluster, score).await?;
        table.row([cluster.to_string(), region.to_string(), score.to_string()]);
    }
    for line in table.to_string().lines() {
        outln!("    {line}");
    }
    create(
        &Api::<Namespace>::all(hub.clone()),
        json!({"metadata": {"name": NS}}),
    )
    .await?;
    create(
        &Api::<ManagedClusterSetBinding>::namespaced(hub.clone(), NS),
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
               "metadata": {"name": "default", "namespace": NS}, "spec": {"clusterSet": "default"}}),
    )
    .await?;
    // Marks the binding Bound (upstream's registration hub does it).
    ClusterInventoryController::new(hub.clone())
        .reconcile_all()
        .await?;

    step(
        "Placement `web`: 3 clusters, spread over `region` (maxSkew 1, DoNotSchedule), sortBy Score",
    );
    create(
        &Api::<Placement>::namespaced(hub.clone(), NS),
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {
                "numberOfClusters": 3,
                "sortBy": "Score",
                "scoreRateLimit": "30s",
                "prioritizerPolicy": {"mode": "Exact", "configurations": [{
                    "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "usage", "scoreName": "cpu"}},
                    "weight": 1}]},
                "spreadPolicy": {"spreadConstraints": [{"topologyKey": "region",
                    "topologyKeyType": "Label", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]}
            }
        }),
    )
    .await?;

    step("every gate off (upstream): spreadPolicy and sortBy are ignored");
    PlacementController::new(hub.clone())
        .reconcile_all()
        .await?;
    show_decisions(&hub).await?;

    step(
        "--feature-gates TopologySpread=true,PlacementDecisionScore=true: one per region, best first",
    );
    let clock = Arc::new(ManualClock::new("2026-01-01T00:00:00Z".parse()?));
    let scheduler = Scheduler::new()
        .with_topology_spread(true)
        .with_decision_scores(true);
    let placement = PlacementController::new(hub.clone())
        .with_clock(clock.clone())
        .with_scheduler(scheduler);
    placement.reconcile_all().await?;
    show_decisions(&hub).await?;

    step(
        "cluster4's score rises to 95: the same clusters, so the new order waits for scoreRateLimit (30s)",
    );
    set_score(&hub, "cluster4", 95).await?;
    clock.advance(Duration::from_secs(10));
    let held = placement.reconcile_all().await?;
    show_decisions(&hub).await?;
    if let Some(after) = held.requeue_after {
        outln!(
            "    (held; the controller looks again in {}s)",
            after.as_secs()
        );
    }
    clock.advance(Duration::from_secs(20));
    placement.reconcile_all().await?;
    outln!("  30s after the last score update:");
    show_decisions(&hub).await?;

    step("asking for 6: the constraint allows 5 (east 2, west 2, north 1), and says so");
    Api::<Placement>::namespaced(hub.clone(), NS)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"numberOfClusters": 6}})),
        )
        .await?;
    placement.reconcile_all().await?;
    show_decisions(&hub).await?;
    Api::<Placement>::namespaced(hub.clone(), NS)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"numberOfClusters": 3}})),
        )
        .await?;
    placement.reconcile_all().await?;

    step(
        "--feature-gates SIGPlacementDecision=true: the decision as multicluster.x-k8s.io/v1alpha1",
    );
    SigPlacementDecisionController::new(hub.clone())
        .reconcile_all()
        .await?;
    let sig: Api<SigPlacementDecision> = Api::namespaced(hub.clone(), NS);
    for pd in sig.list(&ListParams::default()).await?.items {
        let labels = pd.labels();
        outln!(
            "    {} (schedulerName {}, decision-key {}, decision-index {}) -> {}",
            pd.name_any(),
            pd.spec.scheduler_name.as_deref().unwrap_or_default(),
            labels
                .get(ocm_api::multicluster::labels::DECISION_KEY)
                .map_or("", String::as_str),
            labels
                .get(ocm_api::multicluster::labels::DECISION_INDEX)
                .map_or("", String::as_str),
            pd.cluster_names().collect::<Vec<_>>().join(", ")
        );
    }

    step("--feature-gates ClusterProfile=true: a ClusterProfile per cluster bound to `apps`");
    ClusterProfileController::new(hub.clone())
        .reconcile_all()
        .await?;
    let profiles: Api<ClusterProfile> = Api::namespaced(hub.clone(), NS);
    let mut table = Table::new(["NAME", "MANAGER", "HEALTHY", "KUBERNETES", "PROPERTIES"]);
    let mut list = profiles.list(&ListParams::default()).await?.items;
    list.sort_by_key(|p| p.name_any());
    for profile in list {
        let healthy = profile
            .condition(ocm_api::multicluster::CONDITION_CONTROL_PLANE_HEALTHY)
            .map_or("-".to_string(), |c| c.status.clone());
        let status = profile.status.clone().unwrap_or_default();
        let version = status
            .version
            .and_then(|v| v.kubernetes)
            .unwrap_or_else(|| "-".into());
        let properties: Vec<String> = status
            .properties
            .unwrap_or_default()
            .into_iter()
            .map(|p| format!("{}={}", p.name, p.value))
            .collect();
        table.row([
            profile.name_any(),
            profile.spec.cluster_manager.name.clone(),
            healthy,
            version,
            properties.join(","),
        ]);
    }
    for line in table.to_string().lines() {
        outln!("    {line}");
    }
    Ok(())
}
