//! The SIG-Multicluster PlacementDecision controller (the `SIGPlacementDecision` gate) against
//! an in-process fake hub, next to the Placement controller: mirrors in sync with the OCM
//! decisions (slices, labels, order), other schedulers' objects left alone, cleanup with the
//! Placement, and the watch loop.
#![cfg(feature = "controller")]

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::multicluster::v1alpha1::PlacementDecision as SigPlacementDecision;
use ocm_placement::Scheduler;
use ocm_placement::controller::PlacementController;
use ocm_placement::sig::SigPlacementDecisionController;
use ocm_testkit::FakeCluster;
use serde_json::{Value, json};

const NS: &str = "apps";

async fn create<K>(client: &Client, value: Value) -> K
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value).expect("valid object");
    Api::<K>::all(client.clone())
        .create(&PostParams::default(), &object)
        .await
        .expect("create")
}

async fn create_in<K>(client: &Client, namespace: &str, value: Value) -> K
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value).expect("valid object");
    Api::<K>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &object)
        .await
        .expect("create")
}

/// A hub serving OCM's and the SIG CRDs, with clusters `c1`..`cN` in set `default`, bound to
/// `apps`.
async fn hub(n: usize) -> (FakeCluster, Client) {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ocm_api::crds()
        .into_iter()
        .chain(ocm_api::crd::multicluster_crds())
    {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("install CRD");
    }
    create::<Namespace>(&client, json!({"metadata": {"name": NS}})).await;
    create::<ManagedClusterSet>(&client, json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
        "metadata": {"name": "default"}, "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}
    }))
    .await;
    create_in::<ManagedClusterSetBinding>(&client, NS, json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
        "metadata": {"name": "default", "namespace": NS}, "spec": {"clusterSet": "default"}
    }))
    .await;
    for i in 1..=n {
        let name = format!("c{i}");
        create::<Namespace>(&client, json!({"metadata": {"name": name}})).await;
        create::<ManagedCluster>(&client, json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": {"cluster.open-cluster-management.io/clusterset": "default", "env": "prod"}},
            "spec": {"hubAcceptsClient": true}
        }))
        .await;
    }
    (cluster, client)
}

async fn placement(client: &Client, spec: Value) -> Placement {
    create_in::<Placement>(
        client,
        NS,
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "web", "namespace": NS}, "spec": spec
        }),
    )
    .await
}

/// `name -> (labels of interest, cluster names)` of every SIG PlacementDecision in `apps`.
async fn mirrors(client: &Client) -> Vec<(String, Value, Vec<String>)> {
    let api: Api<SigPlacementDecision> = Api::namespaced(client.clone(), NS);
    let mut out: Vec<(String, Value, Vec<String>)> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|d| {
            (
                d.name_any(),
                json!(d.labels()),
                d.cluster_names().map(str::to_string).collect(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn labels(index: &str) -> Value {
    json!({
        "x-k8s.io/cluster-manager": "open-cluster-management",
        "multicluster.x-k8s.io/placement-key": "web",
        "multicluster.x-k8s.io/decision-key": "web",
        "multicluster.x-k8s.io/decision-index": index,
    })
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn sig_decisions_follow_the_placement_and_go_with_it() {
    let (_cluster, client) = hub(3).await;
    let placements = PlacementController::new(client.clone());
    let mirror = SigPlacementDecisionController::new(client.clone());
    placement(
        &client,
        json!({"predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}}],
               "decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": 2}}}),
    )
    .await;
    // Someone else's SIG decision is never touched (nor is one that shares a name with an
    // OCM decision: see the `plan` unit tests).
    create_in::<SigPlacementDecision>(&client, NS, json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "PlacementDecision",
        "metadata": {"name": "other", "namespace": NS, "labels": {"x-k8s.io/cluster-manager": "karmada"}},
        "decisions": [{"clusterProfileRef": {"name": "x"}}], "schedulerName": "karmada"
    }))
    .await;
    placements.reconcile_all().await.unwrap();
    let first = mirror.reconcile_all().await.unwrap();
    assert_eq!(first.writes, 2, "{first:?}");
    assert_eq!(
        mirrors(&client).await,
        [
            (
                "other".to_string(),
                json!({"x-k8s.io/cluster-manager": "karmada"}),
                names(&["x"])
            ),
            ("web-decision-1".into(), labels("0"), names(&["c1", "c2"])),
            ("web-decision-2".into(), labels("1"), names(&["c3"])),
        ]
    );
    let sig: SigPlacementDecision = Api::namespaced(client.clone(), NS)
        .get("web-decision-1")
        .await
        .unwrap();
    assert_eq!(
        sig.spec.scheduler_name.as_deref(),
        Some("open-cluster-management")
    );
    assert_eq!(
        sig.spec.decisions[0].cluster_profile_ref.namespace, None,
        "the decision's own namespace"
    );
    assert_eq!(mirror.reconcile_all().await.unwrap().writes, 0, "steady");

    // c1 leaves the selection: both slices change and are updated.
    Api::<ManagedCluster>::all(client.clone())
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"env": "dev"}}})),
        )
        .await
        .unwrap();
    placements.reconcile_all().await.unwrap();
    assert_eq!(mirror.reconcile_all().await.unwrap().writes, 2);
    let now = mirrors(&client).await;
    assert_eq!(
        now[1],
        ("web-decision-1".into(), labels("0"), names(&["c2", "c3"]))
    );
    assert_eq!(
        now.len(),
        2,
        "web-decision-2 went with its OCM decision: {now:?}"
    );

    // Deleting the Placement takes its decisions, and so their mirrors.
    Api::<Placement>::namespaced(client.clone(), NS)
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    let left: Vec<PlacementDecision> = Api::<PlacementDecision>::namespaced(client.clone(), NS)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert!(left.is_empty(), "owned by the Placement: {left:?}");
    mirror.reconcile_all().await.unwrap();
    assert_eq!(
        mirrors(&client)
            .await
            .into_iter()
            .map(|m| m.0)
            .collect::<Vec<_>>(),
        ["other"]
    );
}

#[tokio::test]
async fn score_order_reaches_the_sig_decisions() {
    let (_cluster, client) = hub(3).await;
    for (c, value) in [("c1", 10), ("c2", 90), ("c3", 50)] {
        create_in::<AddOnPlacementScore>(&client, c, json!({
            "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScore",
            "metadata": {"name": "usage", "namespace": c}
        }))
        .await;
        Api::<AddOnPlacementScore>::namespaced(client.clone(), c)
            .patch_status(
                "usage",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"scores": [{"name": "cpu", "value": value}]}})),
            )
            .await
            .unwrap();
    }
    placement(
        &client,
        json!({"sortBy": "Score", "prioritizerPolicy": {"mode": "Exact", "configurations": [{
            "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "usage", "scoreName": "cpu"}},
            "weight": 1}]}}),
    )
    .await;
    PlacementController::new(client.clone())
        .with_scheduler(Scheduler::new().with_decision_scores(true))
        .reconcile_all()
        .await
        .unwrap();
    SigPlacementDecisionController::new(client.clone())
        .reconcile_all()
        .await
        .unwrap();
    assert_eq!(
        mirrors(&client).await[0].2,
        names(&["c2", "c3", "c1"]),
        "best first"
    );
}

#[tokio::test]
async fn the_run_loop_mirrors_new_decisions() {
    let (_cluster, client) = hub(1).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let synced = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let task = tokio::spawn(
        SigPlacementDecisionController::new(client.clone())
            .with_synced_flag(synced.clone())
            .run(async move {
                let _ = stopped.await;
            }),
    );
    placement(&client, json!({})).await;
    PlacementController::new(client.clone())
        .reconcile_all()
        .await
        .unwrap();
    // The mirror may first appear without decisions: the PlacementDecision is created before
    // its status is written, and the loop mirrors each step.
    let want: Vec<(String, Value, Vec<String>)> =
        vec![("web-decision-1".into(), labels("0"), names(&["c1"]))];
    let mut found = Vec::new();
    for _ in 0..200 {
        found = mirrors(&client).await;
        if found == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(found, want);
    assert!(synced.load(std::sync::atomic::Ordering::SeqCst));
    let _ = stop.send(());
    task.await.unwrap();
}

/// The fake hub serves the SIG CRD with its validation: a slice of more than 100 decisions is
/// refused, as kube-apiserver refuses it.
#[tokio::test]
async fn the_fake_hub_enforces_the_sig_crds_limit() {
    let (_cluster, client) = hub(0).await;
    let decisions: Vec<Value> = (0..101)
        .map(|i| json!({"clusterProfileRef": {"name": format!("c{i}")}}))
        .collect();
    let object: SigPlacementDecision = serde_json::from_value(json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "PlacementDecision",
        "metadata": {"name": "big", "namespace": NS}, "decisions": decisions
    }))
    .unwrap();
    let err = Api::<SigPlacementDecision>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &object)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}")
    };
    assert_eq!(status.code, 422, "{status:?}");
    assert!(status.message.contains("decisions"), "{}", status.message);
}
