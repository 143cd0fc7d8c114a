//! The cluster inventory controllers against in-process fake clusters: cluster-set membership
//! and conditions, binding `Bound`, the well-known sets, health taints (including the
//! documented scenario where an unreachable cluster loses its decision once its toleration
//! runs out) and AddOnPlacementScore writing. (ClusterClaim reporting is tested with its
//! reporter, in ocm-work's `tests/claims.rs`.)
#![cfg(feature = "controller")]

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::ManualClock;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::{AddOnPlacementScore, AddOnPlacementScoreItem};
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::conditions;
use ocm_placement::controller::PlacementController;
use ocm_placement::inventory::score::ScoreWriter;
use ocm_placement::inventory::{ClusterInventoryController, InventoryOptions};
use ocm_testkit::FakeCluster;
use serde_json::{Value, json};

const START: &str = "2026-01-01T00:00:00Z";
const UNREACHABLE: &str = "cluster.open-cluster-management.io/unreachable";
const UNAVAILABLE: &str = "cluster.open-cluster-management.io/unavailable";

struct Hub {
    _cluster: FakeCluster,
    client: Client,
    clock: Arc<ManualClock>,
    inventory: ClusterInventoryController,
}

fn hub() -> Hub {
    let clock = Arc::new(ManualClock::new(START.parse().unwrap()));
    // The hub's webhooks stamp taint times with the hub's clock (the default cluster-set
    // label is left to the controller here).
    let cluster = FakeCluster::builder()
        .clock(clock.clone())
        .hub_admission(Some(
            ocm_testkit::HubAdmission::new().default_cluster_set(false),
        ))
        .build();
    ocm_testkit::install_crds(&cluster).expect("CRDs");
    let client = cluster.client();
    let inventory = ClusterInventoryController::new(client.clone()).with_clock(clock.clone());
    Hub {
        _cluster: cluster,
        client,
        clock,
        inventory,
    }
}

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

async fn create_in<K>(client: &Client, value: Value) -> K
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value).expect("valid object");
    let ns = object.meta().namespace.clone().expect("namespace");
    Api::<K>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &object)
        .await
        .expect("create")
}

async fn managed_cluster(client: &Client, name: &str, labels: Value, available: Option<&str>) {
    create::<ManagedCluster>(
        client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": labels}, "spec": {"hubAcceptsClient": true}}),
    )
    .await;
    if let Some(status) = available {
        set_available(client, name, status).await;
    }
}

async fn set_available(client: &Client, name: &str, status: &str) {
    let api: Api<ManagedCluster> = Api::all(client.clone());
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"conditions": [{
            "type": "ManagedClusterConditionAvailable", "status": status,
            "reason": "Test", "message": "set by the test", "lastTransitionTime": START}]}})),
    )
    .await
    .expect("patch cluster status");
}

async fn cluster_set(client: &Client, name: &str, spec: Value) {
    create::<ManagedClusterSet>(
        client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
            "metadata": {"name": name}, "spec": spec}),
    )
    .await;
}

async fn binding(client: &Client, namespace: &str, name: &str) {
    create_in::<ManagedClusterSetBinding>(
        client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"clusterSet": name}}),
    )
    .await;
}

async fn namespace(client: &Client, name: &str) {
    create::<Namespace>(client, json!({"metadata": {"name": name}})).await;
}

/// `(status, reason, message)` of a condition.
fn condition(
    list: Option<&Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>>,
    type_: &str,
) -> (String, String, String) {
    let c = conditions::find(list.expect("conditions"), type_).expect("condition present");
    (c.status.clone(), c.reason.clone(), c.message.clone())
}

async fn set_empty(client: &Client, name: &str) -> (String, String, String) {
    let set = Api::<ManagedClusterSet>::all(client.clone())
        .get(name)
        .await
        .unwrap();
    condition(
        set.status.as_ref().and_then(|s| s.conditions.as_ref()),
        "ClusterSetEmpty",
    )
}

async fn taint_keys(client: &Client, name: &str) -> Vec<String> {
    let cluster = Api::<ManagedCluster>::all(client.clone())
        .get(name)
        .await
        .unwrap();
    cluster
        .spec
        .taints
        .unwrap_or_default()
        .into_iter()
        .map(|t| t.key)
        .collect()
}

fn triple(s: &str, r: &str, m: &str) -> (String, String, String) {
    (s.into(), r.into(), m.into())
}

#[tokio::test]
async fn cluster_sets_report_their_members_and_steady_state_writes_nothing() {
    let hub = hub();
    let c = &hub.client;
    managed_cluster(
        c,
        "a",
        json!({"cluster.open-cluster-management.io/clusterset": "prod", "env": "x"}),
        Some("True"),
    )
    .await;
    managed_cluster(c, "b", json!({"env": "x"}), Some("True")).await;
    managed_cluster(c, "c", json!({"env": "y"}), Some("True")).await;
    cluster_set(
        c,
        "prod",
        json!({"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}),
    )
    .await;
    cluster_set(c, "env-x", json!({"clusterSelector": {"selectorType": "LabelSelector",
        "labelSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": ["x"]}]}}})).await;
    cluster_set(
        c,
        "no-selector",
        json!({"clusterSelector": {"selectorType": "LabelSelector"}}),
    )
    .await;
    cluster_set(
        c,
        "empty-selector",
        json!({"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": {}}}),
    )
    .await;

    let first = hub.inventory.reconcile_all().await.unwrap();
    assert!(first.writes >= 6, "{first:?}");
    assert_eq!(
        set_empty(c, "prod").await,
        triple("False", "ClustersSelected", "1 ManagedClusters selected")
    );
    assert_eq!(
        set_empty(c, "env-x").await,
        triple("False", "ClustersSelected", "2 ManagedClusters selected")
    );
    assert_eq!(
        set_empty(c, "no-selector").await,
        triple("True", "NoClusterMatched", "No ManagedCluster selected")
    );
    assert_eq!(
        set_empty(c, "empty-selector").await,
        triple("False", "ClustersSelected", "3 ManagedClusters selected")
    );
    assert_eq!(
        set_empty(c, "default").await,
        triple("True", "NoClusterMatched", "No ManagedCluster selected")
    );
    assert_eq!(
        set_empty(c, "global").await,
        triple("False", "ClustersSelected", "3 ManagedClusters selected")
    );

    let second = hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(second.writes, 0, "nothing changed, nothing written");

    // Relabelling a cluster moves the counts.
    Api::<ManagedCluster>::all(c.clone())
        .patch(
            "c",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"env": "x"}}})),
        )
        .await
        .unwrap();
    let third = hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(third.writes, 1, "only env-x changed: {third:?}");
    assert_eq!(set_empty(c, "env-x").await.2, "3 ManagedClusters selected");
}

#[tokio::test]
async fn bindings_are_bound_when_their_set_exists() {
    let hub = hub();
    let c = &hub.client;
    namespace(c, "apps").await;
    binding(c, "apps", "global").await;
    binding(c, "apps", "prod").await;
    hub.inventory.reconcile_all().await.unwrap();
    let get = |name: &'static str| {
        let api: Api<ManagedClusterSetBinding> = Api::namespaced(c.clone(), "apps");
        async move {
            let b = api.get(name).await.unwrap();
            let (s, r, _) = condition(
                b.status.as_ref().and_then(|s| s.conditions.as_ref()),
                "Bound",
            );
            (s, r)
        }
    };
    assert_eq!(
        get("global").await,
        ("True".into(), "ClusterSetBound".into())
    );
    assert_eq!(
        get("prod").await,
        ("False".into(), "ClusterSetNotFound".into())
    );

    cluster_set(c, "prod", json!({})).await;
    hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(get("prod").await, ("True".into(), "ClusterSetBound".into()));
    assert_eq!(hub.inventory.reconcile_all().await.unwrap().writes, 0);
}

#[tokio::test]
async fn well_known_sets_are_recreated_and_their_selectors_restored() {
    let hub = hub();
    let c = &hub.client;
    let sets: Api<ManagedClusterSet> = Api::all(c.clone());
    hub.inventory.reconcile_all().await.unwrap();
    let global = sets.get("global").await.unwrap();
    assert_eq!(
        serde_json::to_value(&global.spec).unwrap()["clusterSelector"],
        json!({"selectorType": "LabelSelector", "labelSelector": {}})
    );
    assert_eq!(
        serde_json::to_value(&sets.get("default").await.unwrap().spec).unwrap()["clusterSelector"],
        json!({"selectorType": "ExclusiveClusterSetLabel"})
    );

    // Deleted: re-created.
    sets.delete("global", &DeleteParams::default())
        .await
        .unwrap();
    hub.inventory.reconcile_all().await.unwrap();
    assert!(sets.get_opt("global").await.unwrap().is_some());

    // Selector changed: reverted.
    sets.patch(
        "default",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"clusterSelector": {
        "selectorType": "LabelSelector", "labelSelector": {"matchLabels": {"env": "x"}}}}})),
    )
    .await
    .unwrap();
    hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(
        serde_json::to_value(&sets.get("default").await.unwrap().spec).unwrap()["clusterSelector"],
        json!({"selectorType": "ExclusiveClusterSetLabel"})
    );

    // ...unless auto-update is switched off.
    let changed =
        json!({"selectorType": "LabelSelector", "labelSelector": {"matchLabels": {"env": "x"}}});
    sets.patch(
        "global",
        &PatchParams::default(),
        &Patch::Merge(json!({
        "metadata": {"annotations": {"cluster.open-cluster-management.io/autoupdate": "false"}},
        "spec": {"clusterSelector": changed.clone()}})),
    )
    .await
    .unwrap();
    hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(
        serde_json::to_value(&sets.get("global").await.unwrap().spec).unwrap()["clusterSelector"],
        changed
    );
}

#[tokio::test]
async fn clusters_without_a_set_label_join_default_when_asked() {
    let hub = hub();
    let c = &hub.client;
    managed_cluster(c, "a", json!({}), Some("True")).await;
    managed_cluster(
        c,
        "b",
        json!({"cluster.open-cluster-management.io/clusterset": "prod"}),
        Some("True"),
    )
    .await;
    // Off by default.
    hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(set_empty(c, "default").await.0, "True");

    let labelling = hub
        .inventory
        .clone()
        .with_options(InventoryOptions::default().label_default_cluster_set(true));
    labelling.reconcile_all().await.unwrap();
    let clusters: Api<ManagedCluster> = Api::all(c.clone());
    assert_eq!(
        clusters.get("a").await.unwrap().labels()["cluster.open-cluster-management.io/clusterset"],
        "default"
    );
    assert_eq!(
        clusters.get("b").await.unwrap().labels()["cluster.open-cluster-management.io/clusterset"],
        "prod"
    );
    assert_eq!(
        set_empty(c, "default").await.2,
        "1 ManagedClusters selected"
    );
    assert_eq!(labelling.reconcile_all().await.unwrap().writes, 0);
}

#[tokio::test]
async fn health_taints_follow_the_available_condition() {
    let hub = hub();
    let c = &hub.client;
    managed_cluster(c, "a", json!({}), Some("True")).await;
    managed_cluster(c, "fresh", json!({}), None).await;
    hub.inventory.reconcile_all().await.unwrap();
    assert!(taint_keys(c, "a").await.is_empty());
    assert_eq!(
        taint_keys(c, "fresh").await,
        [UNREACHABLE],
        "no condition yet = unreachable"
    );

    set_available(c, "a", "False").await;
    hub.clock.advance(Duration::from_secs(5));
    hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(taint_keys(c, "a").await, [UNAVAILABLE]);
    let taint = Api::<ManagedCluster>::all(c.clone())
        .get("a")
        .await
        .unwrap()
        .spec
        .taints
        .unwrap()
        .remove(0);
    assert_eq!(
        serde_json::to_value(&taint).unwrap(),
        json!({
        "key": UNAVAILABLE, "value": "", "effect": "NoSelect", "timeAdded": "2026-01-01T00:00:05Z"})
    );

    set_available(c, "a", "Unknown").await;
    hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(taint_keys(c, "a").await, [UNREACHABLE]);
    assert_eq!(hub.inventory.reconcile_all().await.unwrap().writes, 0);

    set_available(c, "a", "True").await;
    hub.inventory.reconcile_all().await.unwrap();
    assert!(taint_keys(c, "a").await.is_empty());

    // A cluster being deleted is left alone.
    let clusters: Api<ManagedCluster> = Api::all(c.clone());
    clusters
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["test/hold"]}})),
        )
        .await
        .unwrap();
    clusters
        .delete("a", &DeleteParams::default())
        .await
        .unwrap();
    set_available(c, "a", "False").await;
    hub.inventory.reconcile_all().await.unwrap();
    assert!(taint_keys(c, "a").await.is_empty());
}

async fn decided(client: &Client, namespace: &str, placement: &str) -> Vec<String> {
    let api: Api<PlacementDecision> = Api::namespaced(client.clone(), namespace);
    let selector = format!("cluster.open-cluster-management.io/placement={placement}");
    let mut out = Vec::new();
    for pd in api
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items
    {
        out.extend(
            pd.status
                .unwrap_or_default()
                .decisions
                .into_iter()
                .map(|d| d.cluster_name),
        );
    }
    out
}

/// The seed scenario end to end: the cluster stops reporting, the inventory controller taints
/// it `unreachable`, and the placement controller moves the decision once the placement's
/// `tolerationSeconds` have passed.
#[tokio::test]
async fn a_cluster_becoming_unreachable_migrates_the_decision_after_toleration_seconds() {
    let hub = hub();
    let c = &hub.client;
    namespace(c, "apps").await;
    let set_label = json!({"cluster.open-cluster-management.io/clusterset": "default"});
    managed_cluster(c, "c1", set_label.clone(), Some("True")).await;
    managed_cluster(c, "c2", set_label, Some("True")).await;
    binding(c, "apps", "default").await;
    create_in::<Placement>(c, json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
        "metadata": {"name": "web", "namespace": "apps"},
        "spec": {
            "numberOfClusters": 1,
            "prioritizerPolicy": {"mode": "Exact", "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Steady"}, "weight": 3}]},
            "tolerations": [{"key": UNREACHABLE, "operator": "Exists", "tolerationSeconds": 300}]
        }
    }))
    .await;
    let placement = PlacementController::new(c.clone()).with_clock(hub.clock.clone());
    hub.inventory.reconcile_all().await.unwrap();
    placement.reconcile_all().await.unwrap();
    assert_eq!(decided(c, "apps", "web").await, ["c1"]);

    // c1 stops reporting; the hub marks it Unknown and the inventory controller taints it.
    hub.clock.advance(Duration::from_secs(60));
    set_available(c, "c1", "Unknown").await;
    hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(taint_keys(c, "c1").await, [UNREACHABLE]);
    let outcome = placement.reconcile_all().await.unwrap();
    assert_eq!(decided(c, "apps", "web").await, ["c1"], "tolerated for now");
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(300)));

    hub.clock.advance(Duration::from_secs(299));
    hub.inventory.reconcile_all().await.unwrap();
    placement.reconcile_all().await.unwrap();
    assert_eq!(decided(c, "apps", "web").await, ["c1"], "one second left");

    hub.clock.advance(Duration::from_secs(2));
    placement.reconcile_all().await.unwrap();
    assert_eq!(
        decided(c, "apps", "web").await,
        ["c2"],
        "migrated after tolerationSeconds"
    );

    // c1 comes back: its taint goes, and Steady keeps the decision on c2.
    set_available(c, "c1", "True").await;
    hub.inventory.reconcile_all().await.unwrap();
    assert!(taint_keys(c, "c1").await.is_empty());
    placement.reconcile_all().await.unwrap();
    assert_eq!(decided(c, "apps", "web").await, ["c2"]);
}

#[tokio::test]
async fn the_run_loop_reacts_to_changes() {
    let hub = hub();
    let c = hub.client.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(hub.inventory.clone().run(async move {
        let _ = stopped.await;
    }));
    managed_cluster(&c, "a", json!({}), Some("False")).await;
    let mut keys = Vec::new();
    for _ in 0..100 {
        keys = taint_keys(&c, "a").await;
        if !keys.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(keys, [UNAVAILABLE]);
    assert!(
        Api::<ManagedClusterSet>::all(c.clone())
            .get_opt("default")
            .await
            .unwrap()
            .is_some()
    );
    let _ = stop.send(());
    task.await.unwrap();
}

#[tokio::test]
async fn scores_are_written_and_refreshed_before_they_expire() {
    let hub = hub();
    namespace(&hub.client, "c1").await;
    let writer = ScoreWriter::new(hub.client.clone(), "c1", "resource-usage-score")
        .with_clock(hub.clock.clone());
    let item = |v| AddOnPlacementScoreItem {
        name: "cpuAvailable".into(),
        value: v,
    };
    let valid_for = Some(Duration::from_secs(600));
    assert_eq!(
        writer.write(&[item(40)], valid_for).await.unwrap(),
        2,
        "create and status"
    );
    let api: Api<AddOnPlacementScore> = Api::namespaced(hub.client.clone(), "c1");
    let status =
        serde_json::to_value(api.get("resource-usage-score").await.unwrap().status).unwrap();
    assert_eq!(
        status,
        json!({"scores": [{"name": "cpuAvailable", "value": 40}], "validUntil": "2026-01-01T00:10:00Z"})
    );

    hub.clock.advance(Duration::from_secs(60));
    assert_eq!(
        writer.write(&[item(40)], valid_for).await.unwrap(),
        0,
        "same score, still fresh"
    );
    assert_eq!(
        writer.write(&[item(41)], valid_for).await.unwrap(),
        1,
        "score changed"
    );
    hub.clock.advance(Duration::from_secs(301));
    assert_eq!(
        writer.write(&[item(41)], valid_for).await.unwrap(),
        1,
        "refresh past half-life"
    );
    let status = api
        .get("resource-usage-score")
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(
        status.valid_until.unwrap().0.to_string(),
        "2026-01-01T00:16:01Z"
    );
}

#[tokio::test]
async fn a_stale_taint_write_fails_instead_of_dropping_a_concurrent_taint() {
    let hub = hub();
    let c = &hub.client;
    managed_cluster(c, "a", json!({}), Some("False")).await;
    let clusters: Api<ManagedCluster> = Api::all(c.clone());
    let stale = clusters.list(&ListParams::default()).await.unwrap().items;
    // Someone adds a taint after the controller read the cluster (the hub stamps its time).
    clusters
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"taints": [
            {"key": "example.com/maintenance", "value": "", "effect": "NoSelect"}]}})),
        )
        .await
        .unwrap();
    let result = hub.inventory.reconcile_objects(&stale, &[], &[]).await;
    assert!(result.is_err(), "conflict expected: {result:?}");
    assert_eq!(taint_keys(c, "a").await, ["example.com/maintenance"]);
    hub.inventory.reconcile_all().await.unwrap();
    assert_eq!(
        taint_keys(c, "a").await,
        ["example.com/maintenance", UNAVAILABLE]
    );
}
