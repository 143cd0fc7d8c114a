//! The OCM quickstart, in one process and a few seconds.
//!
//! ```text
//! cargo run -p ocm-examples --bin quickstart
//! ```
//!
//! It starts a fake hub and three fake managed clusters (ocm-testkit, with workload simulators
//! so Deployments report ready replicas), groups the clusters into a ManagedClusterSet bound to
//! the `demo` namespace, and creates a Placement that selects the two `env=prod` clusters — one
//! of them carries a `dedicated=gpu:NoSelect` taint that the Placement tolerates. The placement
//! controller schedules it; a ManifestWorkReplicaSet fans the documentation's nginx work
//! (ServiceAccount + Deployment, with WellKnownStatus and JSONPath feedback) out to the selected
//! clusters one at a time (Progressive, maxConcurrency 1); a work agent per cluster applies it.
//! Then the work is updated, rolls through again, and is deleted, and the garbage collection is
//! shown.
//!
//! Each rollout step prints one table per change: the work's `Applied` and `Available`
//! conditions, then its status feedback values, named as the feedback rules name them
//! (`ReadyReplicas` and `AvailableReplicas` from the `WellKnownStatus` rule, `image` from the
//! `JSONPaths` rule of that name).

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::Parser;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions;
use ocm_api::work::v1::ManifestWork;
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
use ocm_examples::outln;
use ocm_examples::table::Table;
use ocm_placement::controller::PlacementController;
use ocm_testkit::{FakeHub, WorkloadSimulator};
use ocm_work::agent::WorkAgent;
use ocm_work::replicaset::SuccessCriteria;
use ocm_work::replicaset::controller::ReplicaSetController;
use serde_json::{Value, json};

const NS: &str = "demo";

use ocm_examples::demo::{self, Failure, create};

/// Run the OCM quickstart in one process: fake hub and clusters, Placement, progressive rollout.
///
/// A fake hub and three fake managed clusters, a Placement with a taint and a toleration, and
/// the documentation's nginx ManifestWork rolled out progressively by a ManifestWorkReplicaSet,
/// updated and deleted. Takes about a second; no cluster or network access needed.
#[derive(Parser, Debug)]
#[command(name = "quickstart", version)]
struct Args {}

#[tokio::main]
async fn main() -> ExitCode {
    let _args = Args::parse();
    ocm_examples::output::run_demo("quickstart", run()).await
}

fn step(text: &str) {
    outln!("\n==> {text}");
}

struct Fleet {
    hub: Client,
    agents: Vec<(String, WorkAgent, Client)>,
    placement: PlacementController,
    replicaset: ReplicaSetController,
    _simulators: Vec<WorkloadSimulator>,
}

impl Fleet {
    /// One round of every controller: scheduler, replica set, agents.
    async fn tick(&self) -> Result<(), Failure> {
        self.placement.reconcile_all().await?;
        let api: Api<ManifestWorkReplicaSet> = Api::namespaced(self.hub.clone(), NS);
        for rs in api.list(&ListParams::default()).await?.items {
            let outcome = self.replicaset.reconcile(&rs).await?;
            if outcome.requeue_after == Some(Duration::ZERO)
                && let Some(fresh) = api.get_opt(&rs.name_any()).await?
            {
                // The finalizer was just added: go on with the deploy step right away.
                self.replicaset.reconcile(&fresh).await?;
            }
        }
        for (_, agent, _) in &self.agents {
            agent.sync_all().await?;
        }
        // Let the workload simulators report the new replicas.
        tokio::time::sleep(Duration::from_millis(30)).await;
        for (_, agent, _) in &self.agents {
            agent.sync_all().await?;
        }
        Ok(())
    }
}

fn nginx_template(image: &str) -> Value {
    json!({
        "workload": {"manifests": [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"namespace": "default", "name": "my-sa"}},
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"namespace": "default", "name": "nginx-deployment", "labels": {"app": "nginx"}},
             "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}},
                    "spec": {"serviceAccountName": "my-sa",
                        "containers": [{"name": "nginx", "image": image, "ports": [{"containerPort": 80}]}]}}}}
        ]},
        "manifestConfigs": [{
            "resourceIdentifier": {"group": "apps", "resource": "deployments", "namespace": "default", "name": "nginx-deployment"},
            "feedbackRules": [
                {"type": "WellKnownStatus"},
                {"type": "JSONPaths", "jsonPaths": [{"name": "image", "path": ".spec.template.spec.containers[?(@.name==\"nginx\")].image"}]}
            ]
        }]
    })
}

/// The feedback values shown, in column order: the names the feedback rules give them.
const FEEDBACK_COLUMNS: [&str; 3] = ["ReadyReplicas", "AvailableReplicas", "image"];

/// The works of every cluster as a table: conditions, then status feedback under a
/// `STATUS FEEDBACK` heading.
async fn table(fleet: &Fleet) -> Result<String, Failure> {
    let works: Api<ManifestWork> = Api::all(fleet.hub.clone());
    let mut rows: BTreeMap<String, ManifestWork> = BTreeMap::new();
    for w in works.list(&ListParams::default()).await?.items {
        rows.insert(w.namespace().unwrap_or_default(), w);
    }
    let mut t = Table::verbatim(
        ["CLUSTER", "WORK", "APPLIED", "AVAILABLE"]
            .into_iter()
            .chain(FEEDBACK_COLUMNS),
    );
    for (cluster, _, _) in &fleet.agents {
        let Some(w) = rows.get(cluster) else {
            t.row([cluster.as_str(), "-", "-", "-", "-", "-", "-"]);
            continue;
        };
        let conds = w
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        let status =
            |t: &str| conditions::find(&conds, t).map_or("-".to_string(), |c| c.status.clone());
        let feedback: BTreeMap<String, String> = w
            .status
            .as_ref()
            .and_then(|s| s.resource_status.as_ref())
            .and_then(|r| r.manifests.as_ref())
            .into_iter()
            .flatten()
            .flat_map(|m| {
                m.status_feedbacks
                    .iter()
                    .flat_map(|f| f.values.iter().flatten())
            })
            .map(|v| {
                let f = &v.field_value;
                let text = f
                    .integer
                    .map(|i| i.to_string())
                    .or_else(|| f.string.clone())
                    .or_else(|| f.boolean.map(|b| b.to_string()))
                    .or_else(|| f.json_raw.clone())
                    .unwrap_or_default();
                (v.name.clone(), text)
            })
            .collect();
        let get = |k: &str| feedback.get(k).cloned().unwrap_or_else(|| "-".into());
        let mut cells = vec![
            cluster.clone(),
            w.name_any(),
            status("Applied"),
            status("Available"),
        ];
        cells.extend(FEEDBACK_COLUMNS.iter().map(|c| get(c)));
        t.row(cells);
    }
    let heading = format!("{}STATUS FEEDBACK", " ".repeat(t.column_offset(4)));
    let mut out = String::new();
    for line in std::iter::once(heading.as_str())
        .chain(t.to_string().lines().collect::<Vec<_>>().iter().copied())
    {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

async fn rolled_out(hub: &Client) -> Result<bool, Failure> {
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.clone(), NS);
    let rs = api.get("nginx").await?;
    Ok(rs
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .is_some_and(|c| conditions::is_true(c, "PlacementRolledOut")))
}

/// Ticks the controllers until the rollout completes, printing the table each time it
/// changes (a round that would repeat the previous one is not printed).
async fn roll_out(fleet: &Fleet) -> Result<(), Failure> {
    let mut last = String::new();
    let mut shown = 0;
    for _ in 0..10 {
        fleet.tick().await?;
        let now = table(fleet).await?;
        if now != last {
            shown += 1;
            outln!("  round {shown}:");
            ocm_examples::output::write_out(&now);
            last = now;
        }
        if rolled_out(&fleet.hub).await? {
            outln!("  rollout complete (PlacementRolledOut=True)");
            return Ok(());
        }
    }
    Err("the rollout did not complete in 10 rounds".into())
}

async fn run() -> Result<(), Failure> {
    step("starting a fake hub and three fake managed clusters (in this process)");
    let fake = FakeHub::new(3)?;
    let hub = fake.hub().client();
    let demo::Agents {
        agents, simulators, ..
    } = demo::agents(&fake, "https://hub.quickstart.local:6443", true)?;
    for (name, _, _) in &agents {
        outln!("    managed cluster {name}: joined and available");
    }

    step("grouping the clusters into ManagedClusterSet `quickstart`, bound to namespace `demo`");
    demo::bind_cluster_set(&hub, NS, "quickstart").await?;
    let clusters: Api<ManagedCluster> = Api::all(hub.clone());
    let setup = [
        ("cluster1", "prod", json!(null)),
        (
            "cluster2",
            "prod",
            json!([{"key": "dedicated", "value": "gpu", "effect": "NoSelect"}]),
        ),
        ("cluster3", "dev", json!(null)),
    ];
    for (name, env, taints) in &setup {
        let mut patch = json!({"metadata": {"labels": {"cluster.open-cluster-management.io/clusterset": "quickstart", "env": env}}});
        if !taints.is_null() {
            patch["spec"] = json!({"taints": taints});
        }
        clusters
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        let taint = if taints.is_null() {
            String::new()
        } else {
            "  taint dedicated=gpu:NoSelect".into()
        };
        outln!("    {name}: env={env}{taint}");
    }

    step("creating Placement `nginx`: env=prod, tolerating dedicated=gpu");
    create(&Api::<Placement>::namespaced(hub.clone(), NS), json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
        "metadata": {"name": "nginx", "namespace": NS},
        "spec": {"clusterSets": ["quickstart"],
            "predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}}],
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu"}]}
    }))
    .await?;
    let placement = PlacementController::new(hub.clone());
    placement.reconcile_all().await?;
    let decisions: Api<PlacementDecision> = Api::namespaced(hub.clone(), NS);
    for pd in decisions.list(&ListParams::default()).await?.items {
        let names = pd
            .status
            .map(|s| {
                s.decisions
                    .into_iter()
                    .map(|d| d.cluster_name)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        outln!(
            "    {} -> {}",
            pd.metadata.name.unwrap_or_default(),
            names.join(", ")
        );
    }
    let p: Placement = Api::namespaced(hub.clone(), NS).get("nginx").await?;
    if let Some(c) = p
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

    let fleet = Fleet {
        hub: hub.clone(),
        agents,
        placement,
        replicaset: ReplicaSetController::new(hub.clone())
            .with_success_criteria(SuccessCriteria::AppliedAndAvailable),
        _simulators: simulators,
    };

    step(
        "creating ManifestWorkReplicaSet `nginx` (Progressive, maxConcurrency 1) with the nginx work",
    );
    outln!(
        "    (success criterion: Applied and Available; see ocm_work::replicaset::SuccessCriteria)"
    );
    outln!(
        "    (status feedback: ReadyReplicas and AvailableReplicas from the WellKnownStatus rule, \
         image from the JSONPaths rule `image`)"
    );
    create(&Api::<ManifestWorkReplicaSet>::namespaced(hub.clone(), NS), json!({
        "apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
        "metadata": {"name": "nginx", "namespace": NS},
        "spec": {"placementRefs": [{"name": "nginx", "rolloutStrategy": {"type": "Progressive", "progressive": {"maxConcurrency": 1}}}],
            "manifestWorkTemplate": nginx_template("nginx:1.14.2")}
    }))
    .await?;
    roll_out(&fleet).await?;

    step("updating the work to nginx:1.27 and watching it roll through");
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.clone(), NS);
    api.patch(
        "nginx",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"manifestWorkTemplate": nginx_template("nginx:1.27")}})),
    )
    .await?;
    roll_out(&fleet).await?;

    step("deleting the ManifestWorkReplicaSet: works and their resources are garbage-collected");
    // The clusters that run nginx now: only they can report its removal.
    let mut running = Vec::new();
    for (name, _, spoke) in &fleet.agents {
        let deployments: Api<Deployment> = Api::namespaced(spoke.clone(), "default");
        if deployments.get_opt("nginx-deployment").await?.is_some() {
            running.push(name.clone());
        }
    }
    api.delete("nginx", &DeleteParams::default()).await?;
    for _ in 0..5 {
        fleet.tick().await?;
        let left = Api::<ManifestWork>::all(hub.clone())
            .list(&ListParams::default())
            .await?
            .items
            .len();
        if left == 0 && api.get_opt("nginx").await?.is_none() {
            break;
        }
    }
    for (name, _, spoke) in fleet.agents.iter().filter(|(n, _, _)| running.contains(n)) {
        let deployments: Api<Deployment> = Api::namespaced(spoke.clone(), "default");
        let state = match deployments.get_opt("nginx-deployment").await? {
            Some(_) => "still present",
            None => "deleted",
        };
        outln!("    {name}: nginx-deployment {state}");
    }
    let works = Api::<ManifestWork>::all(hub.clone())
        .list(&ListParams::default())
        .await?
        .items
        .len();
    if works != 0 {
        return Err(format!("{works} ManifestWorks left after deletion").into());
    }
    outln!("    no ManifestWork left on the hub");
    Ok(())
}
