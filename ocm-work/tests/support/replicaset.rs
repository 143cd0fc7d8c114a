//! Helpers shared by the ManifestWorkReplicaSet controller's tests: a fake hub with the OCM
//! CRDs and the cluster namespaces, Placements with decisions written as the scheduler writes
//! them, reconciling until the controller settles, and reading works back.

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::ManualClock;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions;
use ocm_api::constants::labels;
use ocm_api::work::v1::ManifestWork;
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
use ocm_testkit::FakeCluster;
use ocm_work::replicaset::controller::{ReconcileOutcome, ReplicaSetController};
use serde_json::{Value, json};

/// The namespace of the replica sets and their Placements.
pub const NS: &str = "ocm-ns";

/// A fake hub and a client of it; `clock` starts at 2026-01-01T00:00:00Z.
pub struct Hub {
    pub fake: FakeCluster,
    pub client: Client,
    pub clock: Arc<ManualClock>,
}

/// A hub with the OCM CRDs (upstream's), namespace [`NS`] and a namespace per cluster.
pub async fn hub<S: AsRef<str>>(clusters: &[S]) -> Hub {
    hub_with(clusters, false).await
}

/// [`hub`] with the extended CRDs, for the opt-ins that need their fields (rollback and
/// feedback aggregation).
pub async fn hub_extended<S: AsRef<str>>(clusters: &[S]) -> Hub {
    hub_with(clusters, true).await
}

async fn hub_with<S: AsRef<str>>(clusters: &[S], extended: bool) -> Hub {
    let fake = FakeCluster::new();
    let client = fake.client();
    let namespaces: Vec<&str> = std::iter::once(NS)
        .chain(clusters.iter().map(AsRef::as_ref))
        .collect();
    if extended {
        super::install_extended(&client, &namespaces).await;
    } else {
        super::install(&client, &namespaces).await;
    }
    Hub {
        fake,
        client,
        clock: Arc::new(ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap())),
    }
}

/// Creates a ManagedCluster `name` with `labels` and a `id.k8s.io` claim of `id-<name>`.
pub async fn managed_cluster(client: &Client, name: &str, labels: Value) {
    let api: Api<ManagedCluster> = Api::all(client.clone());
    let mc: ManagedCluster = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels},
        "spec": {"hubAcceptsClient": true},
    }))
    .unwrap();
    api.create(&PostParams::default(), &mc)
        .await
        .expect("create cluster");
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"clusterClaims": [
            {"name": "id.k8s.io", "value": format!("id-{name}")}]}})),
    )
    .await
    .expect("cluster claims");
}

/// Placement `name` in [`NS`] (created when missing) whose decisions are `groups` (group
/// name, clusters), one PlacementDecision per group, written as the scheduler would; the
/// previous decisions are replaced.
pub async fn placement<S: AsRef<str>>(client: &Client, name: &str, groups: &[(&str, Vec<S>)]) {
    let placements: Api<Placement> = Api::namespaced(client.clone(), NS);
    if placements.get_opt(name).await.unwrap().is_none() {
        let mut p = Placement::default();
        p.metadata.name = Some(name.into());
        placements
            .create(&PostParams::default(), &p)
            .await
            .expect("create placement");
    }
    let total: usize = groups.iter().map(|(_, c)| c.len()).sum();
    let decision_groups: Vec<_> = groups
        .iter()
        .enumerate()
        .map(|(i, (group, clusters))| {
            json!({
                "decisionGroupIndex": i, "decisionGroupName": group,
                "decisions": [format!("{name}-decision-{}", i + 1)], "clusterCount": clusters.len()
            })
        })
        .collect();
    placements
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"numberOfSelectedClusters": total, "decisionGroups": decision_groups}})),
        )
        .await
        .expect("placement status");
    let decisions: Api<PlacementDecision> = Api::namespaced(client.clone(), NS);
    let existing = decisions
        .list(&ListParams::default().labels(&format!("{}={name}", labels::PLACEMENT)))
        .await
        .unwrap();
    for pd in existing.items {
        decisions
            .delete(&pd.name_any(), &DeleteParams::default())
            .await
            .unwrap();
    }
    for (i, (group, clusters)) in groups.iter().enumerate() {
        let pd_name = format!("{name}-decision-{}", i + 1);
        let mut pd = PlacementDecision::default();
        pd.metadata.name = Some(pd_name.clone());
        pd.metadata.labels = Some(BTreeMap::from([
            (labels::PLACEMENT.to_string(), name.to_string()),
            (labels::DECISION_GROUP_INDEX.to_string(), i.to_string()),
            (labels::DECISION_GROUP_NAME.to_string(), group.to_string()),
        ]));
        decisions
            .create(&PostParams::default(), &pd)
            .await
            .expect("create decision");
        let list: Vec<_> = clusters
            .iter()
            .map(|c| json!({"clusterName": c.as_ref(), "reason": ""}))
            .collect();
        decisions
            .patch_status(
                &pd_name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"decisions": list}})),
            )
            .await
            .expect("decision status");
    }
}

/// Creates `replica_set` in its namespace.
pub async fn create_replica_set(client: &Client, replica_set: &ManifestWorkReplicaSet) {
    let ns = replica_set.namespace().unwrap_or_else(|| NS.to_string());
    Api::<ManifestWorkReplicaSet>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), replica_set)
        .await
        .expect("create replica set");
}

/// Replica set `name` in [`NS`], or `None` once it is gone.
pub async fn get_replica_set(client: &Client, name: &str) -> Option<ManifestWorkReplicaSet> {
    Api::<ManifestWorkReplicaSet>::namespaced(client.clone(), NS)
        .get_opt(name)
        .await
        .unwrap()
}

/// Reconciles replica set `name` until the controller asks for nothing more at once (or 10
/// rounds); the last outcome (the default one when the replica set is gone).
pub async fn reconcile_until_settled(
    controller: &ReplicaSetController,
    client: &Client,
    name: &str,
) -> ReconcileOutcome {
    let mut outcome = ReconcileOutcome::default();
    for _ in 0..10 {
        let Some(rs) = get_replica_set(client, name).await else {
            return ReconcileOutcome::default();
        };
        outcome = controller.reconcile(&rs).await.expect("reconcile");
        if outcome.requeue_after != Some(std::time::Duration::ZERO) {
            break;
        }
    }
    outcome
}

/// [`reconcile_until_settled`], then the replica set as stored (an empty one named `name` once
/// it is gone).
pub async fn settle(
    controller: &ReplicaSetController,
    client: &Client,
    name: &str,
) -> ManifestWorkReplicaSet {
    reconcile_until_settled(controller, client, name).await;
    get_replica_set(client, name)
        .await
        .unwrap_or_else(|| ManifestWorkReplicaSet::new(name, Default::default()))
}

/// Every ManifestWork on the hub, by cluster namespace.
pub async fn works_by_cluster(client: &Client) -> BTreeMap<String, ManifestWork> {
    Api::<ManifestWork>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|w| (w.namespace().unwrap(), w))
        .collect()
}

/// Condition `type_` of the replica set as (status, reason, message), if it has one.
pub fn condition_of(rs: &ManifestWorkReplicaSet, type_: &str) -> Option<(String, String, String)> {
    let conds = rs.status.as_ref()?.conditions.as_deref()?;
    conditions::find(conds, type_).map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}
