//! Issue #17: a Placement whose CEL selector is nested deep must not crash the controller.
//! The controller runs on tokio worker threads (2 MiB stacks); a placement with a 30-level
//! expression schedules, one with a 10,000-level expression is misconfigured with cel-go's
//! error, and the other placements keep scheduling.
#![cfg(feature = "controller")]

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, ListParams, PostParams};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::conditions;
use ocm_placement::controller::PlacementController;
use ocm_testkit::FakeCluster;
use ocm_testkit::wait::eventually;
use serde_json::{Value, json};

const NS: &str = "apps";

async fn create<K>(api: Api<K>, value: Value)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value).expect("valid object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("create");
}

async fn hub(clusters: &[&str]) -> (FakeCluster, Client) {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ocm_api::crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("install CRD");
    }
    create::<Namespace>(Api::all(client.clone()), json!({"metadata": {"name": NS}})).await;
    create::<ManagedClusterSet>(
        Api::all(client.clone()),
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
            "metadata": {"name": "default"},
            "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}
        }),
    )
    .await;
    create::<ManagedClusterSetBinding>(Api::namespaced(client.clone(), NS), json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
        "metadata": {"name": "default", "namespace": NS}, "spec": {"clusterSet": "default"}
    }))
    .await;
    for name in clusters {
        create::<ManagedCluster>(Api::all(client.clone()), json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": {"cluster.open-cluster-management.io/clusterset": "default"}},
            "spec": {}
        }))
        .await;
    }
    (cluster, client)
}

async fn placement(client: &Client, name: &str, spec: Value) {
    create::<Placement>(
        Api::namespaced(client.clone(), NS),
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": name, "namespace": NS}, "spec": spec
        }),
    )
    .await;
}

fn cel(expressions: &[String]) -> Value {
    json!({"predicates": [{"requiredClusterSelector": {"celSelector": {"celExpressions": expressions}}}]})
}

async fn decided(client: &Client, name: &str) -> Vec<String> {
    let api: Api<PlacementDecision> = Api::namespaced(client.clone(), NS);
    let selector = format!("cluster.open-cluster-management.io/placement={name}");
    let mut out: Vec<String> = api
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items
        .into_iter()
        .flat_map(|pd| pd.status.unwrap_or_default().decisions)
        .map(|d| d.cluster_name)
        .collect();
    out.sort();
    out
}

/// The `PlacementMisconfigured` condition of `name`: (status, reason, message).
async fn misconfigured(client: &Client, name: &str) -> Option<(String, String, String)> {
    let p: Placement = Api::namespaced(client.clone(), NS).get(name).await.ok()?;
    let status = p.status?;
    let c = conditions::find(status.conditions.as_deref()?, "PlacementMisconfigured")?;
    Some((c.status.clone(), c.reason.clone(), c.message.clone()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_cel_selector_misconfigures_its_placement_only() {
    let (_hub, client) = hub(&["c1", "c2"]).await;
    let nest = |n: usize, inner: &str| format!("{}{inner}{}", "(".repeat(n), ")".repeat(n));
    placement(
        &client,
        "shallow",
        cel(&[nest(30, "managedCluster.metadata.name == 'c1'")]),
    )
    .await;
    placement(&client, "deep", cel(&[nest(10_000, "true")])).await;
    placement(
        &client,
        "chain",
        cel(&[format!("managedCluster{}", ".metadata".repeat(10_000))]),
    )
    .await;
    placement(&client, "plain", json!({})).await;

    let controller = PlacementController::new(client.clone());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // On a tokio worker thread, as in the hub controller binary.
    let running = tokio::spawn(controller.run(async move {
        let _ = stopped.await;
    }));

    let expected = (
        "True".to_string(),
        "Misconfigured".to_string(),
        "Predicate:compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
            .to_string(),
    );
    for name in ["deep", "chain"] {
        assert!(
            eventually(Duration::from_secs(20), || async {
                misconfigured(&client, name).await.as_ref() == Some(&expected)
            })
            .await,
            "{name}: {:?}",
            misconfigured(&client, name).await
        );
    }
    assert!(
        eventually(Duration::from_secs(20), || async {
            decided(&client, "shallow").await == ["c1"]
        })
        .await,
        "the 30-level expression selects c1: {:?}",
        decided(&client, "shallow").await
    );
    assert!(
        eventually(Duration::from_secs(20), || async {
            decided(&client, "plain").await == ["c1", "c2"]
        })
        .await,
        "other placements keep scheduling"
    );
    // The decisions and the status are separate writes: wait for the condition too.
    assert!(
        eventually(Duration::from_secs(20), || async {
            misconfigured(&client, "shallow").await.map(|m| m.0) == Some("False".to_string())
        })
        .await,
        "the shallow placement is not misconfigured: {:?}",
        misconfigured(&client, "shallow").await
    );

    // A placement created afterwards is still served: the controller is alive.
    placement(&client, "later", json!({"numberOfClusters": 1})).await;
    assert!(
        eventually(Duration::from_secs(20), || async {
            decided(&client, "later").await.len() == 1
        })
        .await,
        "a later placement is scheduled"
    );
    assert!(!running.is_finished(), "the controller is still running");
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), running).await;
}
