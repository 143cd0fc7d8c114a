//! ManifestWorkReplicaSet rollback (our opt-in, from upstream's accepted proposal), in one
//! process and about a second.
//!
//! ```text
//! cargo run -p ocm-examples --bin mwrs-rollback
//! ```
//!
//! A fake hub and three fake managed clusters with real work agents. A ManifestWorkReplicaSet
//! rolls a ConfigMap out one cluster at a time (Progressive, maxConcurrency 1, maxFailures 0,
//! progressDeadline 1m, `failureStrategy: AbortAll`) with the controller's rollback opt-in on
//! (`ReplicaSetController::with_rollback(true)`, see `ocm_work::replicaset::rollback`).
//! Version v1 reaches every cluster and becomes the current revision. Version v2 adds an
//! object of a kind no cluster knows, so its first cluster fails to apply it; once the progress
//! deadline passes (a manual clock moves two minutes per round), the rollout breaches
//! maxFailures and is aborted: v1 goes back to that cluster, and the status says so
//! (`abortedTime`, `Progressing=False/RolloutAborted`, `PlacementRolledOut=False/
//! RolloutDegraded`). The spec still holds v2; writing v1 back into it (an undo) would start a
//! new rollout.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::ManualClock;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta1::Placement;
use ocm_api::conditions;
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
use ocm_examples::outln;
use ocm_placement::controller::PlacementController;
use ocm_testkit::FakeHub;
use ocm_work::agent::WorkAgent;
use ocm_work::replicaset::SuccessCriteria;
use ocm_work::replicaset::controller::ReplicaSetController;
use serde_json::{Value, json};

const NS: &str = "demo";
const NAME: &str = "app";

use ocm_examples::demo::{self, Failure, create};

/// Show a ManifestWorkReplicaSet rollout that fails and is rolled back (rollback opt-in).
#[derive(Parser, Debug)]
#[command(name = "mwrs-rollback", version)]
struct Args {}

#[tokio::main]
async fn main() -> ExitCode {
    let _args = Args::parse();
    ocm_examples::output::run_demo("mwrs-rollback", run()).await
}

/// The work template: ConfigMap `app-config` with `version`, and with `broken` an object of a
/// kind the managed clusters do not serve.
fn template(version: &str, broken: bool) -> Value {
    let mut manifests = vec![json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "default", "name": "app-config"},
        "data": {"version": version}
    })];
    if broken {
        manifests.push(json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"namespace": "default", "name": "needs-a-crd"}
        }));
    }
    json!({"workload": {"manifests": manifests}})
}

struct Demo {
    hub: Client,
    clock: Arc<ManualClock>,
    agents: Vec<(String, WorkAgent, Client)>,
    placement: PlacementController,
    replicaset: ReplicaSetController,
}

impl Demo {
    /// One round: scheduler, replica set (again at once when it asks), agents.
    async fn tick(&self) -> Result<(), Failure> {
        self.placement.reconcile_all().await?;
        let api: Api<ManifestWorkReplicaSet> = Api::namespaced(self.hub.clone(), NS);
        for _ in 0..5 {
            let rs = api.get(NAME).await?;
            let outcome = self.replicaset.reconcile(&rs).await?;
            if outcome.requeue_after != Some(Duration::ZERO) {
                break;
            }
        }
        for (_, agent, _) in &self.agents {
            agent.sync_all().await?;
        }
        Ok(())
    }

    /// `cluster: version` of `app-config` on every cluster, as the clusters hold it.
    async fn versions(&self) -> Result<String, Failure> {
        let mut out = Vec::new();
        for (name, _, spoke) in &self.agents {
            let cms: Api<ConfigMap> = Api::namespaced(spoke.clone(), "default");
            let v = cms
                .get_opt("app-config")
                .await?
                .and_then(|cm| cm.data)
                .and_then(|d| d.get("version").cloned())
                .unwrap_or_else(|| "-".into());
            out.push(format!("{name}={v}"));
        }
        Ok(out.join(" "))
    }

    /// The replica set's rollback status in one line.
    async fn status(&self) -> Result<String, Failure> {
        let rs: ManifestWorkReplicaSet = Api::namespaced(self.hub.clone(), NS).get(NAME).await?;
        let st = rs.status.unwrap_or_default();
        let conds = st.conditions.clone().unwrap_or_default();
        let cond = |t: &str| {
            conditions::find(&conds, t).map_or("-".to_string(), |c| {
                format!("{t}={}/{}", c.status, c.reason)
            })
        };
        Ok(format!(
            "current={} update={} aborted={} {} {}",
            st.current_revision.as_deref().unwrap_or("-"),
            st.update_revision.as_deref().unwrap_or("-"),
            st.aborted_time.map_or("-".to_string(), |t| t.0.to_string()),
            cond("Progressing"),
            cond("PlacementRolledOut"),
        ))
    }

    /// Rounds until `done` holds for the status line (at most 8), each round printed.
    async fn rounds(&self, done: impl Fn(&str) -> bool) -> Result<(), Failure> {
        for round in 1..=8 {
            self.tick().await?;
            let status = self.status().await?;
            outln!("  round {round}: {}", self.versions().await?);
            outln!("           {status}");
            if done(&status) {
                return Ok(());
            }
            self.clock.advance(Duration::from_secs(120));
        }
        Err("the rollout did not reach the expected state in 8 rounds".into())
    }
}

async fn run() -> Result<(), Failure> {
    outln!("==> a fake hub and three fake managed clusters with work agents (in this process)");
    let fake = FakeHub::new(3)?;
    // The opt-in's fields are in the extended CRDs (`ocm-crdgen --extended`).
    ocm_testkit::install_extended_crds(fake.hub())?;
    let hub = fake.hub().client();
    let agents = demo::agents(&fake, "https://hub.rollback.local:6443", false)?.agents;
    demo::bind_cluster_set(&hub, NS, "demo").await?;
    let clusters: Api<ManagedCluster> = Api::all(hub.clone());
    for (name, _, _) in &agents {
        let patch = json!({"metadata": {"labels": {"cluster.open-cluster-management.io/clusterset": "demo"}}});
        clusters
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
    }
    create(
        &Api::<Placement>::namespaced(hub.clone(), NS),
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "all", "namespace": NS}, "spec": {"clusterSets": ["demo"]}
        }),
    )
    .await?;

    // The agents stamp conditions with the wall clock: start the manual clock there.
    let clock = Arc::new(ManualClock::new(k8s_openapi::jiff::Timestamp::now()));
    let demo = Demo {
        hub: hub.clone(),
        clock: clock.clone(),
        agents,
        placement: PlacementController::new(hub.clone()),
        replicaset: ReplicaSetController::new(hub.clone())
            .with_clock(clock)
            .with_success_criteria(SuccessCriteria::AppliedAndAvailable)
            .with_rollback(true),
    };

    outln!(
        "\n==> ManifestWorkReplicaSet `{NAME}`: Progressive, maxConcurrency 1, maxFailures 0, \
         progressDeadline 1m, failureStrategy AbortAll; version v1"
    );
    create(&Api::<ManifestWorkReplicaSet>::namespaced(hub.clone(), NS), json!({
        "apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "revisionHistoryLimit": 3,
            "placementRefs": [{"name": "all", "rolloutStrategy": {
                "type": "Progressive",
                "progressive": {"maxConcurrency": 1, "maxFailures": 0, "progressDeadline": "1m"},
                "failureStrategy": "AbortAll"}}],
            "manifestWorkTemplate": template("v1", false)}
    }))
    .await?;
    demo.rounds(|s| s.contains("PlacementRolledOut=True/Complete"))
        .await?;
    outln!("  v1 reached every cluster: it is the current revision");

    outln!("\n==> version v2, with an object of a kind the clusters do not serve");
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.clone(), NS);
    api.patch(
        NAME,
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"manifestWorkTemplate": template("v2", true)}})),
    )
    .await?;
    demo.rounds(|s| s.contains("Progressing=False/RolloutAborted"))
        .await?;
    outln!("  the rollout of v2 was aborted and v1 restored; the spec still holds v2");

    let revisions: Api<ControllerRevision> = Api::namespaced(hub, NS);
    let mut names: Vec<String> = revisions
        .list(&ListParams::default())
        .await?
        .items
        .iter()
        .map(|r| r.name_any())
        .collect();
    names.sort();
    outln!(
        "\n==> revision history (ControllerRevisions): {}",
        names.join(", ")
    );
    Ok(())
}
