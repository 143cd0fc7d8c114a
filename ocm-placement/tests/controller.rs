//! The Placement hub controller against an in-process fake hub, including the documented
//! scenarios: a cluster becoming unreachable migrates the decision once its toleration runs
//! out, a maintenance taint repels, and an AddOnPlacementScore change re-ranks.
#![cfg(feature = "controller")]

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::ManualClock;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::conditions;
use ocm_placement::controller::PlacementController;
use ocm_testkit::FakeCluster;
use serde_json::{Value, json};

const NS: &str = "apps";
const START: &str = "2026-01-01T00:00:00Z";

struct Hub {
    cluster: FakeCluster,
    client: Client,
    clock: Arc<ManualClock>,
    controller: PlacementController,
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

async fn hub(clusters: &[(&str, Value)]) -> Hub {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ocm_api::crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("install CRD");
    }
    let namespaces = std::iter::once(NS).chain(clusters.iter().map(|(n, _)| *n));
    for ns in namespaces {
        create::<Namespace>(&client, json!({"metadata": {"name": ns}})).await;
    }
    create::<ManagedClusterSet>(
        &client,
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
            "metadata": {"name": "default"},
            "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}
        }),
    )
    .await;
    create_in::<ManagedClusterSetBinding>(&client, NS, json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
        "metadata": {"name": "default", "namespace": NS}, "spec": {"clusterSet": "default"}
    }))
    .await;
    for (name, spec) in clusters {
        create::<ManagedCluster>(&client, json!({
            "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": {"cluster.open-cluster-management.io/clusterset": "default"}},
            "spec": spec
        }))
        .await;
    }
    let clock = Arc::new(ManualClock::new(START.parse().expect("time")));
    let controller = PlacementController::new(client.clone()).with_clock(clock.clone());
    Hub {
        cluster,
        client,
        clock,
        controller,
    }
}

async fn placement(hub: &Hub, spec: Value) {
    create_in::<Placement>(
        &hub.client,
        NS,
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "p", "namespace": NS}, "spec": spec
        }),
    )
    .await;
}

async fn decided(hub: &Hub) -> Vec<String> {
    let api: Api<PlacementDecision> = Api::namespaced(hub.client.clone(), NS);
    let mut out = Vec::new();
    for pd in api
        .list(&ListParams::default().labels("cluster.open-cluster-management.io/placement=p"))
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

#[tokio::test]
async fn schedules_binds_and_then_writes_nothing() {
    let hub = hub(&[("c1", json!({})), ("c2", json!({})), ("c3", json!({}))]).await;
    placement(&hub, json!({"numberOfClusters": 2})).await;
    let first = hub.controller.reconcile_all().await.expect("reconcile");
    assert!(first.writes >= 2, "decision and status written: {first:?}");
    assert_eq!(decided(&hub).await, ["c1", "c2"]);

    let pd: PlacementDecision = Api::namespaced(hub.client.clone(), NS)
        .get("p-decision-1")
        .await
        .unwrap();
    assert_eq!(
        pd.labels()["cluster.open-cluster-management.io/decision-group-index"],
        "0"
    );
    assert_eq!(pd.owner_references()[0].kind, "Placement");
    let p: Placement = Api::namespaced(hub.client.clone(), NS)
        .get("p")
        .await
        .unwrap();
    let status = p.status.unwrap();
    assert_eq!(status.number_of_selected_clusters, Some(2));
    let satisfied =
        conditions::find(status.conditions.as_deref().unwrap(), "PlacementSatisfied").unwrap();
    assert_eq!(
        (satisfied.status.as_str(), satisfied.reason.as_str()),
        ("True", "AllDecisionsScheduled")
    );

    let second = hub.controller.reconcile_all().await.expect("reconcile");
    assert_eq!(second.writes, 0, "steady state writes nothing");
}

/// What the fake hid (the issue of that name): the API server admits `numberOfClusters: -1`
/// (the CRD sets no minimum). The placement's conditions say what is wrong, it selects
/// nothing, the reconcile does not fail (so nothing is retried and logged over and over),
/// and the next pass writes nothing. Fixed, it is scheduled again.
#[tokio::test]
async fn a_negative_number_of_clusters_is_reported_in_the_placement_status() {
    let hub = hub(&[("c1", json!({})), ("c2", json!({}))]).await;
    placement(&hub, json!({"numberOfClusters": -1})).await;
    let outcome = hub.controller.reconcile_all().await.expect("no error");
    assert!(outcome.writes >= 2, "{outcome:?}");
    assert!(decided(&hub).await.is_empty());
    let placements: Api<Placement> = Api::namespaced(hub.client.clone(), NS);
    let status = placements.get("p").await.unwrap().status.unwrap();
    assert_eq!(status.number_of_selected_clusters, Some(0));
    let conds = status.conditions.as_deref().unwrap();
    let misconfigured = conditions::find(conds, "PlacementMisconfigured").unwrap();
    assert_eq!(
        (
            misconfigured.status.as_str(),
            misconfigured.reason.as_str(),
            misconfigured.message.as_str()
        ),
        (
            "True",
            "Misconfigured",
            ":spec.numberOfClusters must not be negative, got -1"
        )
    );
    let satisfied = conditions::find(conds, "PlacementSatisfied").unwrap();
    assert_eq!(
        (satisfied.status.as_str(), satisfied.reason.as_str()),
        ("False", "NoManagedClusterMatched")
    );
    let again = hub.controller.reconcile_all().await.expect("no error");
    assert_eq!(again.writes, 0, "{again:?}");

    placements
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"numberOfClusters": 1}})),
        )
        .await
        .unwrap();
    hub.controller.reconcile_all().await.expect("reconcile");
    assert_eq!(decided(&hub).await, ["c1"]);
    let status = placements.get("p").await.unwrap().status.unwrap();
    let misconfigured = conditions::find(
        status.conditions.as_deref().unwrap(),
        "PlacementMisconfigured",
    )
    .unwrap();
    assert_eq!(
        (misconfigured.status.as_str(), misconfigured.reason.as_str()),
        ("False", "Succeedconfigured")
    );
}

/// What the fake hid: the API server admits `numberOfClusters: 1000000000000` (the CRD's
/// `int32` format is not range-checked), which no Placement decodes. It used to fail the
/// controller's whole list of placements, so nothing was scheduled at all. Now the other
/// placements are scheduled, and the bad one's conditions say what is wrong, once.
#[tokio::test]
async fn a_placement_that_cannot_be_decoded_is_reported_and_the_others_are_scheduled() {
    let hub = hub(&[("c1", json!({})), ("c2", json!({}))]).await;
    placement(&hub, json!({"numberOfClusters": 1})).await;
    let resource = kube::core::ApiResource::erase::<Placement>(&());
    let raw: Api<kube::core::DynamicObject> =
        Api::namespaced_with(hub.client.clone(), NS, &resource);
    let bad: kube::core::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
        "metadata": {"name": "huge", "namespace": NS},
        "spec": {"numberOfClusters": 1_000_000_000_000_i64}
    }))
    .unwrap();
    raw.create(&PostParams::default(), &bad)
        .await
        .expect("the API server admits it");

    let outcome = hub.controller.reconcile_all().await.expect("no error");
    assert!(outcome.writes >= 2, "{outcome:?}");
    assert_eq!(
        decided(&hub).await.len(),
        1,
        "the good placement is scheduled"
    );
    let status = raw.get("huge").await.unwrap().data["status"].clone();
    let conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> =
        serde_json::from_value(status["conditions"].clone()).unwrap();
    let misconfigured = conditions::find(&conditions, "PlacementMisconfigured").unwrap();
    assert_eq!(
        (misconfigured.status.as_str(), misconfigured.reason.as_str()),
        ("True", "Misconfigured")
    );
    assert!(
        misconfigured
            .message
            .starts_with("the placement cannot be decoded: spec.numberOfClusters: invalid value: integer `1000000000000`"),
        "{}",
        misconfigured.message
    );
    assert_eq!(misconfigured.observed_generation, Some(1));
    hub.cluster.journal().clear();
    let again = hub.controller.reconcile_all().await.expect("no error");
    let writes: Vec<String> = hub
        .cluster
        .journal()
        .entries()
        .into_iter()
        .filter(|e| e.verb != "get" && e.verb != "list")
        .map(|e| format!("{} {}", e.verb, e.path))
        .collect();
    assert_eq!(again.writes, 0, "said once: {again:?} {writes:?}");
}

/// Issue #15.6: upstream writes the decision-group labels (`""` and `"0"`) when the placement
/// declares no groups and its label patch removes every label it did not generate.
#[tokio::test]
async fn decision_labels_are_replaced_like_upstream() {
    let hub = hub(&[("c1", json!({})), ("c2", json!({}))]).await;
    placement(&hub, json!({})).await;
    // A decision left over from a grouped strategy, already holding the right clusters.
    create_in::<PlacementDecision>(
        &hub.client,
        NS,
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "PlacementDecision",
            "metadata": {"name": "p-decision-1", "namespace": NS, "labels": {
                "cluster.open-cluster-management.io/placement": "p",
                "cluster.open-cluster-management.io/decision-group-name": "canary",
                "cluster.open-cluster-management.io/decision-group-index": "3",
                "stale": "x"}}
        }),
    )
    .await;
    let api: Api<PlacementDecision> = Api::namespaced(hub.client.clone(), NS);
    api.patch_status(
        "p-decision-1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"decisions": [
            {"clusterName": "c1", "reason": ""}, {"clusterName": "c2", "reason": ""}]}})),
    )
    .await
    .unwrap();
    hub.controller.reconcile_all().await.expect("reconcile");
    let pd = api.get("p-decision-1").await.unwrap();
    let labels: Vec<(&str, &str)> = pd
        .labels()
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        labels,
        [
            (
                "cluster.open-cluster-management.io/decision-group-index",
                "0"
            ),
            ("cluster.open-cluster-management.io/decision-group-name", ""),
            ("cluster.open-cluster-management.io/placement", "p"),
        ]
    );
    let again = hub.controller.reconcile_all().await.expect("reconcile");
    assert_eq!(again.writes, 0);
}

#[tokio::test]
async fn an_unreachable_cluster_is_replaced_once_its_toleration_runs_out() {
    let unreachable = json!({"taints": [{
        "key": "cluster.open-cluster-management.io/unreachable", "effect": "NoSelect", "value": "",
        "timeAdded": START
    }]});
    let hub = hub(&[("c1", unreachable), ("c2", json!({}))]).await;
    // c1 was already decided before it went unreachable.
    placement(
        &hub,
        json!({
            "numberOfClusters": 1,
            "prioritizerPolicy": {"mode": "Exact", "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Steady"}, "weight": 3}]},
            "tolerations": [{"key": "cluster.open-cluster-management.io/unreachable",
                "operator": "Exists", "tolerationSeconds": 300}]
        }),
    )
    .await;
    let first = hub.controller.reconcile_all().await.unwrap();
    assert_eq!(decided(&hub).await, ["c1"]);
    // The decision now lists c1, so the next round knows when the toleration expires.
    let second = hub.controller.reconcile_all().await.unwrap();
    assert_eq!(
        second.requeue_after,
        Some(Duration::from_secs(300)),
        "{first:?} {second:?}"
    );

    hub.clock.advance(Duration::from_secs(299));
    hub.controller.reconcile_all().await.unwrap();
    assert_eq!(decided(&hub).await, ["c1"], "still tolerated");

    hub.clock.advance(Duration::from_secs(2));
    hub.controller.reconcile_all().await.unwrap();
    assert_eq!(
        decided(&hub).await,
        ["c2"],
        "migrated after tolerationSeconds"
    );
}

#[tokio::test]
async fn a_maintenance_taint_repels() {
    let maintenance = json!({"taints": [{"key": "example.com/maintenance", "effect": "NoSelect", "value": "true", "timeAdded": START}]});
    let hub = hub(&[("c1", maintenance), ("c2", json!({}))]).await;
    placement(&hub, json!({})).await;
    hub.controller.reconcile_all().await.unwrap();
    assert_eq!(decided(&hub).await, ["c2"]);
}

#[tokio::test]
async fn an_addon_score_change_reranks() {
    let hub = hub(&[("c1", json!({})), ("c2", json!({}))]).await;
    let valid_until = "2026-01-02T00:00:00Z";
    for (cluster, value) in [("c1", 10), ("c2", 80)] {
        create_in::<AddOnPlacementScore>(&hub.client, cluster, json!({
            "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScore",
            "metadata": {"name": "resource-usage", "namespace": cluster}
        }))
        .await;
        let api: Api<AddOnPlacementScore> = Api::namespaced(hub.client.clone(), cluster);
        api.patch_status(
            "resource-usage",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "scores": [{"name": "cpuAvailable", "value": value}], "validUntil": valid_until
            }})),
        )
        .await
        .unwrap();
    }
    placement(&hub, json!({
        "numberOfClusters": 1,
        "prioritizerPolicy": {"mode": "Exact", "configurations": [{
            "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "resource-usage", "scoreName": "cpuAvailable"}},
            "weight": 1}]}
    }))
    .await;
    let outcome = hub.controller.reconcile_all().await.unwrap();
    assert_eq!(decided(&hub).await, ["c2"]);
    // Score expiry is a reason to look again.
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(24 * 3600)));

    let api: Api<AddOnPlacementScore> = Api::namespaced(hub.client.clone(), "c1");
    api.patch_status(
        "resource-usage",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {
            "scores": [{"name": "cpuAvailable", "value": 95}], "validUntil": valid_until
        }})),
    )
    .await
    .unwrap();
    hub.controller.reconcile_all().await.unwrap();
    assert_eq!(
        decided(&hub).await,
        ["c1"],
        "re-ranked after the score changed"
    );
}

/// Sets the `cpuAvailable` score of the `resource-usage` AddOnPlacementScore of `cluster`
/// (created when missing), valid for a year.
async fn cpu_score(hub: &Hub, cluster: &str, value: i32) {
    let api: Api<AddOnPlacementScore> = Api::namespaced(hub.client.clone(), cluster);
    if api.get_opt("resource-usage").await.unwrap().is_none() {
        create_in::<AddOnPlacementScore>(&hub.client, cluster, json!({
            "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScore",
            "metadata": {"name": "resource-usage", "namespace": cluster}
        }))
        .await;
    }
    api.patch_status(
        "resource-usage",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {
            "scores": [{"name": "cpuAvailable", "value": value}],
            "validUntil": "2027-01-01T00:00:00Z"
        }})),
    )
    .await
    .unwrap();
}

/// `(cluster, score)` of each decision of `p-decision-1`, in order.
async fn scored(hub: &Hub) -> Vec<(String, Option<i64>)> {
    let pd: PlacementDecision = Api::namespaced(hub.client.clone(), NS)
        .get("p-decision-1")
        .await
        .unwrap();
    pd.status
        .unwrap_or_default()
        .decisions
        .into_iter()
        .map(|d| (d.cluster_name, d.score))
        .collect()
}

async fn last_score_update(hub: &Hub) -> Option<String> {
    let p: Placement = Api::namespaced(hub.client.clone(), NS)
        .get("p")
        .await
        .unwrap();
    p.status?.last_score_update_time.map(|t| t.0.to_string())
}

fn pairs(list: &[(&str, i64)]) -> Vec<(String, Option<i64>)> {
    list.iter()
        .map(|(c, s)| (c.to_string(), Some(*s)))
        .collect()
}

const SCORED_PLACEMENT: &str = r#"{
    "sortBy": "Score", "scoreRateLimit": "1m",
    "predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}}],
    "prioritizerPolicy": {"mode": "Exact", "configurations": [{
        "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "resource-usage", "scoreName": "cpuAvailable"}},
        "weight": 1}]}
}"#;

/// The `PlacementDecisionScore` option: scores written in score order, a re-ranking alone
/// waits for `scoreRateLimit` after `lastScoreUpdateTime`, a new cluster is written at once.
#[tokio::test]
async fn decision_scores_follow_sort_by_and_wait_for_the_rate_limit() {
    let mut hub = hub(&[("c1", json!({})), ("c2", json!({})), ("c3", json!({}))]).await;
    hub.controller = hub
        .controller
        .clone()
        .with_scheduler(ocm_placement::Scheduler::new().with_decision_scores(true));
    let clusters: Api<ManagedCluster> = Api::all(hub.client.clone());
    for c in ["c1", "c2"] {
        clusters
            .patch(
                c,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"env": "prod"}}})),
            )
            .await
            .unwrap();
    }
    for (cluster, value) in [("c1", 10), ("c2", 80), ("c3", 50)] {
        cpu_score(&hub, cluster, value).await;
    }
    placement(&hub, serde_json::from_str(SCORED_PLACEMENT).unwrap()).await;
    hub.controller.reconcile_all().await.unwrap();
    assert_eq!(scored(&hub).await, pairs(&[("c2", 80), ("c1", 10)]));
    assert_eq!(last_score_update(&hub).await.as_deref(), Some(START));
    assert_eq!(hub.controller.reconcile_all().await.unwrap().writes, 0);

    // c1 overtakes c2 ten seconds later: the same clusters, so the update waits for the
    // rest of the minute.
    hub.clock.advance(Duration::from_secs(10));
    cpu_score(&hub, "c1", 95).await;
    let held = hub.controller.reconcile_all().await.unwrap();
    assert_eq!(held.writes, 0, "{held:?}");
    assert_eq!(held.requeue_after, Some(Duration::from_secs(50)));
    assert_eq!(scored(&hub).await, pairs(&[("c2", 80), ("c1", 10)]));

    hub.clock.advance(Duration::from_secs(50));
    hub.controller.reconcile_all().await.unwrap();
    assert_eq!(scored(&hub).await, pairs(&[("c1", 95), ("c2", 80)]));
    assert_eq!(
        last_score_update(&hub).await.as_deref(),
        Some("2026-01-01T00:01:00Z")
    );

    // A cluster joining the selection is written at once, with the latest scores.
    hub.clock.advance(Duration::from_secs(1));
    cpu_score(&hub, "c2", 70).await;
    clusters
        .patch(
            "c3",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"env": "prod"}}})),
        )
        .await
        .unwrap();
    hub.controller.reconcile_all().await.unwrap();
    assert_eq!(
        scored(&hub).await,
        pairs(&[("c1", 95), ("c2", 70), ("c3", 50)])
    );
    assert_eq!(
        last_score_update(&hub).await.as_deref(),
        Some("2026-01-01T00:01:01Z")
    );
}

/// Without the option the same placement gets upstream's decisions: name order, no scores,
/// no `lastScoreUpdateTime`.
#[tokio::test]
async fn without_decision_scores_sort_by_is_ignored() {
    let hub = hub(&[("c1", json!({})), ("c2", json!({}))]).await;
    let clusters: Api<ManagedCluster> = Api::all(hub.client.clone());
    for (c, value) in [("c1", 10), ("c2", 80)] {
        clusters
            .patch(
                c,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"env": "prod"}}})),
            )
            .await
            .unwrap();
        cpu_score(&hub, c, value).await;
    }
    placement(&hub, serde_json::from_str(SCORED_PLACEMENT).unwrap()).await;
    hub.controller.reconcile_all().await.unwrap();
    assert_eq!(
        scored(&hub).await,
        [("c1".to_string(), None), ("c2".to_string(), None)]
    );
    assert_eq!(last_score_update(&hub).await, None);
}

#[tokio::test]
async fn the_run_loop_reacts_to_changes() {
    let hub = hub(&[("c1", json!({}))]).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(hub.controller.clone().run(async move {
        let _ = stopped.await;
    }));
    placement(&hub, json!({})).await;
    let mut found = Vec::new();
    for _ in 0..100 {
        found = decided(&hub).await;
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(found, ["c1"]);
    let _ = stop.send(());
    task.await.unwrap();
}

/// A round that fails the same way on every retry (here: the Placement's status cannot be
/// written) is logged once, not once per retry; a different failure is logged again.
#[tokio::test]
async fn a_failure_repeated_on_every_retry_is_logged_once_per_change() {
    let capture = crate::common::logs::capture();
    let logs = capture.logs();
    let hub = hub(&[("c1", json!({}))]).await;
    placement(&hub, json!({})).await;
    hub.cluster.inject(
        ocm_testkit::fault::FaultRule::new(500)
            .verb("patch")
            .resource("placements"),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(hub.controller.clone().run(async move {
        let _ = stopped.await;
    }));
    let failed_patches = || {
        hub.cluster.journal().count(|e| {
            e.verb == "patch" && e.resource.as_deref() == Some("placements") && e.status == 500
        })
    };
    for _ in 0..100 {
        if failed_patches() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(failed_patches() >= 4, "retried: {}", failed_patches());
    let failures = |text: &str| text.matches("placement reconcile failed").count();
    assert_eq!(failures(&logs.text()), 1, "{}", logs.text());
    hub.cluster.faults().clear();
    hub.cluster.inject(
        ocm_testkit::fault::FaultRule::new(503)
            .verb("patch")
            .resource("placements"),
    );
    for _ in 0..100 {
        if failures(&logs.text()) >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(failures(&logs.text()), 2, "{}", logs.text());
    let _ = stop.send(());
    task.await.unwrap();
}

/// One Event as the tests compare it: reason, type, regarding kind/name, related name, note.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Seen {
    reason: String,
    type_: String,
    regarding: String,
    related: String,
    note: String,
}

/// The `events.k8s.io/v1` Events in the placement namespace, oldest first.
async fn events(hub: &Hub) -> Vec<k8s_openapi::api::events::v1::Event> {
    let api: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(hub.client.clone(), NS);
    let mut items = api.list(&ListParams::default()).await.unwrap().items;
    items.sort_by_key(|e| e.event_time.as_ref().map(|t| t.0));
    items
}

fn seen(events: &[k8s_openapi::api::events::v1::Event]) -> Vec<Seen> {
    events
        .iter()
        .map(|e| {
            let regarding = e.regarding.clone().unwrap_or_default();
            Seen {
                reason: e.reason.clone().unwrap_or_default(),
                type_: e.type_.clone().unwrap_or_default(),
                regarding: format!(
                    "{}/{}",
                    regarding.kind.unwrap_or_default(),
                    regarding.name.unwrap_or_default()
                ),
                related: e
                    .related
                    .as_ref()
                    .and_then(|r| r.name.clone())
                    .unwrap_or_default(),
                note: e.note.clone().unwrap_or_default(),
            }
        })
        .collect()
}

fn expect(reason: &str, type_: &str, related: &str, note: &str) -> Seen {
    Seen {
        reason: reason.into(),
        type_: type_.into(),
        regarding: "Placement/p".into(),
        related: related.into(),
        note: note.into(),
    }
}

#[tokio::test]
async fn events_announce_created_and_updated_decisions_but_not_a_resync() {
    let hub = hub(&[("c1", json!({})), ("c2", json!({})), ("c3", json!({}))]).await;
    placement(&hub, json!({"numberOfClusters": 2})).await;
    let first = hub.controller.reconcile_all().await.unwrap();
    assert_eq!(first.events, 3, "{first:?}");
    let after_first = events(&hub).await;
    // Balance gives every cluster 100 (no other placement), Steady 0 (nothing decided yet).
    assert_eq!(
        seen(&after_first),
        [
            expect(
                "DecisionCreate",
                "Normal",
                "p-decision-1",
                "Decision p-decision-1 is created with placement p in namespace apps"
            ),
            expect(
                "DecisionUpdate",
                "Normal",
                "p-decision-1",
                "Decision p-decision-1 is updated with placement p in namespace apps"
            ),
            expect(
                "ScoreUpdate",
                "Normal",
                "p-decision-1",
                "c1:100 c2:100 c3:100 "
            ),
        ]
    );
    let p: Placement = Api::namespaced(hub.client.clone(), NS)
        .get("p")
        .await
        .unwrap();
    for event in &after_first {
        let regarding = event.regarding.as_ref().unwrap();
        assert_eq!(regarding.uid, p.metadata.uid, "{event:?}");
        assert_eq!(regarding.namespace.as_deref(), Some(NS));
        assert_eq!(
            regarding.api_version.as_deref(),
            Some("cluster.open-cluster-management.io/v1beta1")
        );
        assert_eq!(
            event.action.as_deref(),
            Some(&*format!("{}d", event.reason.as_deref().unwrap()))
        );
        assert_eq!(
            event.reporting_controller.as_deref(),
            Some("placement-controller")
        );
        assert_eq!(
            event.related.as_ref().unwrap().kind.as_deref(),
            Some("PlacementDecision")
        );
    }

    // Nothing changed: no write and no Event.
    let resync = hub.controller.reconcile_all().await.unwrap();
    assert_eq!((resync.writes, resync.events), (0, 0), "{resync:?}");
    assert_eq!(events(&hub).await.len(), 3);

    // The decision changes: an update and the new scores (Steady now favours c1 and c2).
    Api::<Placement>::namespaced(hub.client.clone(), NS)
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"numberOfClusters": 3}})),
        )
        .await
        .unwrap();
    let changed = hub.controller.reconcile_all().await.unwrap();
    assert_eq!(changed.events, 2, "{changed:?}");
    assert_eq!(decided(&hub).await, ["c1", "c2", "c3"]);
    let after_change = events(&hub).await;
    let mut all = seen(&after_change);
    all.sort();
    let mut want = seen(&after_first);
    want.push(expect(
        "ScoreUpdate",
        "Normal",
        "p-decision-1",
        "c1:200 c2:200 c3:100 ",
    ));
    want.sort();
    // The repeated DecisionUpdate is folded into the first one as a series.
    assert_eq!(all, want);
    let update = after_change
        .iter()
        .find(|e| e.reason.as_deref() == Some("DecisionUpdate"))
        .unwrap();
    assert_eq!(update.series.as_ref().map(|s| s.count), Some(2));

    let again = hub.controller.reconcile_all().await.unwrap();
    assert_eq!((again.writes, again.events), (0, 0), "{again:?}");
}

#[tokio::test]
async fn a_deleted_decision_is_announced_and_an_unchanged_one_is_not() {
    let hub = hub(&[("c1", json!({})), ("c2", json!({})), ("c3", json!({}))]).await;
    placement(
        &hub,
        json!({"numberOfClusters": 2,
            "decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": 1}}}),
    )
    .await;
    let first = hub.controller.reconcile_all().await.unwrap();
    // Two decisions, each created, updated and scored.
    assert_eq!(first.events, 6, "{first:?}");
    let before = events(&hub).await.len();

    Api::<Placement>::namespaced(hub.client.clone(), NS)
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"numberOfClusters": 1}})),
        )
        .await
        .unwrap();
    let shrunk = hub.controller.reconcile_all().await.unwrap();
    assert_eq!(decided(&hub).await, ["c1"]);
    assert_eq!(shrunk.events, 1, "{shrunk:?}");
    let after = events(&hub).await;
    assert_eq!(after.len(), before + 1);
    assert_eq!(
        seen(&after[before..]),
        [expect(
            "DecisionDelete",
            "Normal",
            "p-decision-2",
            "Decision p-decision-2 is deleted with placement p in namespace apps"
        )]
    );
}

#[tokio::test]
async fn an_expired_score_makes_the_decision_update_a_warning() {
    let hub = hub(&[("c1", json!({})), ("c2", json!({}))]).await;
    create_in::<AddOnPlacementScore>(&hub.client, "c1", json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScore",
        "metadata": {"name": "usage", "namespace": "c1"}
    }))
    .await;
    Api::<AddOnPlacementScore>::namespaced(hub.client.clone(), "c1")
        .patch_status(
            "usage",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "scores": [{"name": "cpu", "value": 50}], "validUntil": "2025-12-31T00:00:00Z"
            }})),
        )
        .await
        .unwrap();
    placement(&hub, json!({
        "prioritizerPolicy": {"mode": "Exact", "configurations": [{
            "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "usage", "scoreName": "cpu"}},
            "weight": 1}]}
    }))
    .await;
    let outcome = hub.controller.reconcile_all().await.unwrap();
    assert!(outcome.needs_retry, "a Warning is retried: {outcome:?}");
    let all = seen(&events(&hub).await);
    let update = all
        .iter()
        .find(|e| e.reason == "DecisionUpdate")
        .expect("DecisionUpdate event");
    assert_eq!(update.type_, "Warning");
    assert_eq!(
        update.note,
        "Decision p-decision-1 is updated with placement p in namespace apps: \
         AddOnPlacementScores c1/usage expired in plugin AddOn/usage/cpu"
    );
    let scores = all.iter().find(|e| e.reason == "ScoreUpdate").unwrap();
    assert_eq!(
        (scores.type_.as_str(), scores.note.as_str()),
        ("Normal", "c1:0 c2:0 ")
    );
}

#[tokio::test]
async fn failing_to_publish_events_does_not_fail_the_reconcile() {
    let hub = hub(&[("c1", json!({}))]).await;
    hub.cluster.inject(
        ocm_testkit::FaultRule::new(500)
            .verb("create")
            .resource("events"),
    );
    placement(&hub, json!({})).await;
    let outcome = hub.controller.reconcile_all().await.expect("reconcile");
    assert_eq!(decided(&hub).await, ["c1"]);
    assert!(outcome.writes >= 2, "{outcome:?}");
    assert_eq!(outcome.events, 0, "{outcome:?}");
    assert!(events(&hub).await.is_empty());
}
