//! Two ManifestWorkReplicaSet opt-ins of ours, per-cluster values and feedback aggregation,
//! in one process and about a second.
//!
//! ```text
//! cargo run -p ocm-examples --bin mwrs-opt-ins
//! ```
//!
//! A fake hub and three fake managed clusters with real work agents and workload simulators
//! (so Deployments report ready replicas). cluster1 and cluster2 carry a `region` label,
//! cluster3 none yet. A ManifestWorkReplicaSet rolls out a Deployment whose name, labels and
//! environment use `{{CLUSTER_NAME}}` and `{{CLUSTER_LABEL:region}}`
//! (`ReplicaSetController::with_cluster_values(true)`, see `ocm_work::replicaset::values`):
//! each cluster gets its own values, and cluster3 gets no work until it is labelled, which
//! the `ClusterValuesResolved` condition reports. The replica set also asks for its works'
//! `ReadyReplicas` and `region` feedback to be aggregated into its status
//! (`ReplicaSetController::with_feedback_aggregation(true)`, see
//! `ocm_work::replicaset::feedback`), at most once per 30 s of the controller's clock (a
//! manual clock here, moved 30 s per round).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::ManualClock;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta1::Placement;
use ocm_api::conditions;
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
use ocm_examples::outln;
use ocm_placement::controller::PlacementController;
use ocm_testkit::{FakeHub, WorkloadSimulator};
use ocm_work::agent::WorkAgent;
use ocm_work::replicaset::SuccessCriteria;
use ocm_work::replicaset::controller::ReplicaSetController;
use ocm_work::replicaset::{feedback, values};
use serde_json::{Value, json};

const NS: &str = "demo";
const NAME: &str = "web";

use ocm_examples::demo::{self, Failure, create};

/// Show per-cluster values and feedback aggregation on a ManifestWorkReplicaSet (our opt-ins).
#[derive(Parser, Debug)]
#[command(name = "mwrs-opt-ins", version)]
struct Args {}

#[tokio::main]
async fn main() -> ExitCode {
    let _args = Args::parse();
    ocm_examples::output::run_demo("mwrs-opt-ins", run()).await
}

/// A Deployment named after the cluster, labelled and configured with the cluster's region,
/// reporting `ReadyReplicas` (WellKnownStatus) and `region` (a JSONPaths rule).
fn template() -> Value {
    json!({
        "workload": {"manifests": [{
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"namespace": "default", "name": "web",
                         "labels": {"app": "web", "region": "{{CLUSTER_LABEL:region}}"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                        "env": [{"name": "CLUSTER", "value": "{{CLUSTER_NAME}}"},
                                {"name": "REGION", "value": "{{CLUSTER_LABEL:region}}"}]}]}}}
        }]},
        "manifestConfigs": [{
            "resourceIdentifier": {"group": "apps", "resource": "deployments",
                                   "namespace": "default", "name": "web"},
            "feedbackRules": [
                {"type": "WellKnownStatus"},
                {"type": "JSONPaths", "jsonPaths": [{"name": "region", "path": ".metadata.labels.region"}]}
            ]
        }]
    })
}

struct Demo {
    hub: Client,
    clock: Arc<ManualClock>,
    agents: Vec<(String, WorkAgent, Client)>,
    _simulators: Vec<WorkloadSimulator>,
    placement: PlacementController,
    replicaset: ReplicaSetController,
}

impl Demo {
    /// One round: scheduler, replica set (again at once when it asks), agents, simulators,
    /// agents again (for the feedback), then the clock moves 30 s.
    async fn tick(&self) -> Result<(), Failure> {
        self.placement.reconcile_all().await?;
        self.reconcile_replica_set().await?;
        for (_, agent, _) in &self.agents {
            agent.sync_all().await?;
        }
        // Let the workload simulators report the replicas.
        tokio::time::sleep(Duration::from_millis(30)).await;
        for (_, agent, _) in &self.agents {
            agent.sync_all().await?;
        }
        self.reconcile_replica_set().await?;
        self.clock.advance(Duration::from_secs(30));
        Ok(())
    }

    async fn reconcile_replica_set(&self) -> Result<(), Failure> {
        let api: Api<ManifestWorkReplicaSet> = Api::namespaced(self.hub.clone(), NS);
        for _ in 0..5 {
            let rs = api.get(NAME).await?;
            let outcome = self.replicaset.reconcile(&rs).await?;
            if outcome.requeue_after != Some(Duration::ZERO) {
                break;
            }
        }
        Ok(())
    }

    /// `cluster: REGION` of the Deployment on every cluster, as the clusters hold it.
    async fn deployments(&self) -> Result<String, Failure> {
        let mut out = Vec::new();
        for (name, _, spoke) in &self.agents {
            let deployments: Api<Deployment> = Api::namespaced(spoke.clone(), "default");
            let env = match deployments.get_opt("web").await? {
                Some(d) => serde_json::to_value(&d)?
                    .pointer("/spec/template/spec/containers/0/env")
                    .and_then(Value::as_array)
                    .map(|env| {
                        env.iter()
                            .map(|e| {
                                format!(
                                    "{}={}",
                                    e["name"].as_str().unwrap_or(""),
                                    e["value"].as_str().unwrap_or("")
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_default(),
                None => "-".into(),
            };
            out.push(format!("{name}: {env}"));
        }
        Ok(out.join("  "))
    }

    /// The replica set's values condition and aggregates.
    async fn status(&self) -> Result<Vec<String>, Failure> {
        let rs: ManifestWorkReplicaSet = Api::namespaced(self.hub.clone(), NS).get(NAME).await?;
        let st = rs.status.unwrap_or_default();
        let conds = st.conditions.clone().unwrap_or_default();
        let mut lines = Vec::new();
        if let Some(c) = conditions::find(&conds, values::CONDITION_CLUSTER_VALUES_RESOLVED) {
            let line = format!("{}={}/{} {}", c.type_, c.status, c.reason, c.message);
            lines.push(line.trim_end().to_string());
        }
        if let Some(c) = conditions::find(&conds, feedback::CONDITION_FEEDBACK_AGGREGATED) {
            lines.push(format!("{}={}/{}", c.type_, c.status, c.reason));
        }
        let agg = st.feedback_aggregation.unwrap_or_default();
        for a in agg.values.unwrap_or_default() {
            let counts: Vec<String> = a
                .counts
                .iter()
                .flatten()
                .map(|c| format!("{}×{}", c.count, c.value))
                .collect();
            let ints = match (a.min, a.max, a.sum) {
                (Some(min), Some(max), sum) => format!(
                    " min={min} max={max} sum={}",
                    sum.map_or("-".into(), |s| s.to_string())
                ),
                _ => String::new(),
            };
            lines.push(format!(
                "{}: reported by {} [{}]{ints}",
                a.name,
                a.reported,
                counts.join(", ")
            ));
        }
        if let Some(t) = agg.last_update_time {
            lines.push(format!("aggregated at {}", t.0));
        }
        Ok(lines)
    }

    async fn rounds(&self, n: usize) -> Result<(), Failure> {
        for round in 1..=n {
            self.tick().await?;
            outln!("  round {round}: {}", self.deployments().await?);
            for line in self.status().await? {
                outln!("           {line}");
            }
        }
        Ok(())
    }
}

async fn run() -> Result<(), Failure> {
    outln!(
        "==> a fake hub and three fake managed clusters with work agents and workload \
         simulators (in this process)"
    );
    let fake = FakeHub::new(3)?;
    // The opt-in's fields are in the extended CRDs (`ocm-crdgen --extended`).
    ocm_testkit::install_extended_crds(fake.hub())?;
    let hub = fake.hub().client();
    let demo::Agents {
        agents, simulators, ..
    } = demo::agents(&fake, "https://hub.mwrs-opt-ins.local:6443", true)?;
    demo::bind_cluster_set(&hub, NS, "demo").await?;
    let clusters: Api<ManagedCluster> = Api::all(hub.clone());
    let regions = [Some("us-east"), Some("us-west"), None];
    for ((name, _, _), region) in agents.iter().zip(regions) {
        let patch = json!({"metadata": {"labels": {
            "cluster.open-cluster-management.io/clusterset": "demo", "region": region}}});
        clusters
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        outln!("    {name}: region={}", region.unwrap_or("(no label)"));
    }
    create(
        &Api::<Placement>::namespaced(hub.clone(), NS),
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "all", "namespace": NS}, "spec": {"clusterSets": ["demo"]}
        }),
    )
    .await?;

    let clock = Arc::new(ManualClock::new(k8s_openapi::jiff::Timestamp::now()));
    let demo = Demo {
        hub: hub.clone(),
        clock: clock.clone(),
        agents,
        _simulators: simulators,
        placement: PlacementController::new(hub.clone()),
        replicaset: ReplicaSetController::new(hub.clone())
            .with_clock(clock)
            .with_success_criteria(SuccessCriteria::AppliedAndAvailable)
            .with_cluster_values(true)
            .with_feedback_aggregation(true),
    };

    outln!(
        "\n==> ManifestWorkReplicaSet `{NAME}`: a Deployment using {{{{CLUSTER_NAME}}}} and \
         {{{{CLUSTER_LABEL:region}}}}; aggregate ReadyReplicas and region every 30s at most"
    );
    create(&Api::<ManifestWorkReplicaSet>::namespaced(hub.clone(), NS), json!({
        "apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "placementRefs": [{"name": "all", "rolloutStrategy": {"type": "All"}}],
            "manifestWorkTemplate": template(),
            "feedbackAggregation": {"interval": "30s", "values": [
                {"resourceIdentifier": {"group": "apps", "resource": "deployments",
                                        "namespace": "default", "name": "web"},
                 "name": "ReadyReplicas"},
                {"resourceIdentifier": {"group": "apps", "resource": "deployments",
                                        "namespace": "default", "name": "web"},
                 "name": "region"}]}}
    }))
    .await?;
    demo.rounds(2).await?;
    outln!("  cluster3 has no region label: it gets no work, and the condition says why");

    outln!("\n==> label cluster3 region=eu-central");
    clusters
        .patch(
            "cluster3",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"region": "eu-central"}}})),
        )
        .await?;
    demo.rounds(2).await?;
    let works: Vec<String> = Api::<ocm_api::work::v1::ManifestWork>::all(hub)
        .list(&Default::default())
        .await?
        .items
        .iter()
        .map(|w| w.namespace().unwrap_or_default())
        .collect();
    outln!("\n==> ManifestWorks in: {}", works.join(", "));
    Ok(())
}
