//! The feedback aggregation opt-in of the ManifestWorkReplicaSet controller
//! (`ReplicaSetController::with_feedback_aggregation`) against an in-process fake hub, with
//! the controller's clock driving the rate limit.

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::Clock;
use ocm_api::conditions;
use ocm_api::work::v1::{
    Manifest, ManifestWork, ManifestWorkSpec, ManifestsTemplate, ResourceIdentifier,
};
use ocm_api::work::v1alpha1::{
    FeedbackAggregate, FeedbackAggregationSpec, FeedbackValueSelector, LocalPlacementReference,
    ManifestWorkReplicaSet, ManifestWorkReplicaSetSpec,
};
use ocm_work::replicaset::controller::{ReconcileOutcome, ReplicaSetController};
use ocm_work::replicaset::feedback;
use serde_json::json;

use crate::support;

use support::replicaset::{Hub, NS, placement, reconcile_until_settled, works_by_cluster as works};

/// A hub with the extended CRDs (feedback aggregation's fields) whose Placement `p1`
/// selects `clusters`.
async fn hub(clusters: &[&str]) -> Hub {
    let hub = support::replicaset::hub_extended(clusters).await;
    decide(&hub.client, clusters).await;
    hub
}

/// The placement selects `clusters`.
async fn decide(client: &Client, clusters: &[&str]) {
    placement(client, "p1", &[("", clusters.to_vec())]).await;
}

fn id() -> ResourceIdentifier {
    ResourceIdentifier::new("apps", "deployments", "default", "web")
}

async fn create_replica_set(client: &Client, interval: Option<&str>) {
    let mut aggregation = FeedbackAggregationSpec::new(vec![
        FeedbackValueSelector::new(id(), "ReadyReplicas"),
        FeedbackValueSelector::new(id(), "Image"),
    ]);
    aggregation.interval = interval.map(str::to_string);
    let rs = ManifestWorkReplicaSet {
        metadata: kube::api::ObjectMeta {
            name: Some("mwrs".into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        spec: ManifestWorkReplicaSetSpec {
            manifest_work_template: Some(ManifestWorkSpec {
                workload: Some(ManifestsTemplate {
                    manifests: Some(vec![Manifest::new(json!({
                        "apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": "web", "namespace": "default"},
                    }))]),
                }),
                ..Default::default()
            }),
            placement_refs: vec![LocalPlacementReference::new("p1")],
            feedback_aggregation: Some(aggregation),
            ..Default::default()
        },
        status: None,
    };
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), NS);
    api.create(&PostParams::default(), &rs)
        .await
        .expect("create replica set");
}

async fn get(client: &Client) -> ManifestWorkReplicaSet {
    Api::<ManifestWorkReplicaSet>::namespaced(client.clone(), NS)
        .get("mwrs")
        .await
        .unwrap()
}

async fn settle(controller: &ReplicaSetController, client: &Client) -> ReconcileOutcome {
    reconcile_until_settled(controller, client, "mwrs").await
}

/// Plays the work agent: the Deployment reports `ready` replicas and `image`.
async fn report(client: &Client, cluster: &str, ready: i64, image: &str) {
    let work = &works(client).await[cluster];
    let api: Api<ManifestWork> = Api::namespaced(client.clone(), cluster);
    api.patch_status(
        &work.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"resourceStatus": {"manifests": [{
            "resourceMeta": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                             "resource": "deployments", "namespace": "default", "name": "web"},
            "statusFeedback": {"values": [
                {"name": "ReadyReplicas", "fieldValue": {"type": "Integer", "integer": ready}},
                {"name": "Image", "fieldValue": {"type": "String", "string": image}}]},
            "conditions": []}]}}})),
    )
    .await
    .expect("work status");
}

fn aggregates(rs: &ManifestWorkReplicaSet) -> Vec<FeedbackAggregate> {
    rs.status
        .as_ref()
        .and_then(|s| s.feedback_aggregation.as_ref())
        .and_then(|f| f.values.clone())
        .unwrap_or_default()
}

fn counts(a: &FeedbackAggregate) -> Vec<(&str, i64)> {
    a.counts
        .iter()
        .flatten()
        .map(|c| (c.value.as_str(), c.count))
        .collect()
}

#[tokio::test]
async fn works_with_different_feedback_are_aggregated_and_rate_limited() {
    let hub = hub(&["c1", "c2", "c3"]).await;
    create_replica_set(&hub.client, None).await;
    let controller = ReplicaSetController::new(hub.client.clone())
        .with_clock(hub.clock.clone())
        .with_feedback_aggregation(true);
    settle(&controller, &hub.client).await;
    // No feedback yet: every value has no reports.
    let rs = get(&hub.client).await;
    let empty = aggregates(&rs);
    assert_eq!(empty.len(), 2);
    assert!(empty.iter().all(|a| a.reported == 0), "{empty:?}");
    let first_write = rs
        .status
        .as_ref()
        .unwrap()
        .feedback_aggregation
        .as_ref()
        .unwrap()
        .last_update_time
        .clone();
    assert_eq!(first_write.map(|t| t.0), Some(hub.clock.now()));
    let c = conditions::find(
        rs.status.as_ref().unwrap().conditions.as_deref().unwrap(),
        feedback::CONDITION_FEEDBACK_AGGREGATED,
    )
    .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("True", "AsExpected")
    );

    report(&hub.client, "c1", 1, "web:v2").await;
    report(&hub.client, "c2", 3, "web:v1").await;
    report(&hub.client, "c3", 3, "web:v2").await;

    // 10 s later: the change is held back, the status not written, and the controller
    // asks to come back when the interval (1m) ends.
    hub.clock.advance(Duration::from_secs(10));
    let version = get(&hub.client).await.resource_version();
    let outcome = settle(&controller, &hub.client).await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(50)));
    assert_eq!(get(&hub.client).await.resource_version(), version);

    // At the end of the interval: written.
    hub.clock.advance(Duration::from_secs(50));
    let outcome = settle(&controller, &hub.client).await;
    assert_eq!(outcome.requeue_after, None);
    let rs = get(&hub.client).await;
    let agg = aggregates(&rs);
    assert_eq!(agg[0].name, "ReadyReplicas");
    assert_eq!(agg[0].reported, 3);
    assert_eq!(counts(&agg[0]), [("3", 2), ("1", 1)]);
    assert_eq!(
        (agg[0].min, agg[0].max, agg[0].sum),
        (Some(1), Some(3), Some(7))
    );
    assert_eq!(counts(&agg[1]), [("web:v2", 2), ("web:v1", 1)]);
    assert_eq!(agg[1].min, None);

    // Nothing changed: no write at all, however much time passes.
    let version = rs.resource_version();
    hub.clock.advance(Duration::from_secs(600));
    let outcome = settle(&controller, &hub.client).await;
    assert_eq!(outcome.requeue_after, None);
    assert_eq!(get(&hub.client).await.resource_version(), version);
}

#[tokio::test]
async fn a_cluster_that_leaves_takes_its_values_with_it() {
    let hub = hub(&["c1", "c2"]).await;
    create_replica_set(&hub.client, Some("30s")).await;
    let controller = ReplicaSetController::new(hub.client.clone())
        .with_clock(hub.clock.clone())
        .with_feedback_aggregation(true);
    settle(&controller, &hub.client).await;
    report(&hub.client, "c1", 2, "web:v1").await;
    report(&hub.client, "c2", 5, "web:v2").await;
    hub.clock.advance(Duration::from_secs(30));
    settle(&controller, &hub.client).await;
    let agg = aggregates(&get(&hub.client).await);
    assert_eq!((agg[0].reported, agg[0].max), (2, Some(5)));

    decide(&hub.client, &["c1"]).await;
    hub.clock.advance(Duration::from_secs(30));
    settle(&controller, &hub.client).await;
    assert_eq!(works(&hub.client).await.keys().collect::<Vec<_>>(), ["c1"]);
    // The work went within the same pass; a real hub may still be deleting it, which does
    // not count either. The next pass after the interval writes the aggregate without it.
    hub.clock.advance(Duration::from_secs(30));
    settle(&controller, &hub.client).await;
    let agg = aggregates(&get(&hub.client).await);
    assert_eq!(agg[0].reported, 1);
    assert_eq!(counts(&agg[0]), [("2", 1)]);
    assert_eq!(
        (agg[0].min, agg[0].max, agg[0].sum),
        (Some(2), Some(2), Some(2))
    );
    assert_eq!(counts(&agg[1]), [("web:v1", 1)]);
}

#[tokio::test]
async fn without_the_opt_in_nothing_is_aggregated() {
    let hub = hub(&["c1"]).await;
    create_replica_set(&hub.client, None).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    settle(&controller, &hub.client).await;
    report(&hub.client, "c1", 2, "web:v1").await;
    hub.clock.advance(Duration::from_secs(120));
    settle(&controller, &hub.client).await;
    let rs = get(&hub.client).await;
    let status = rs.status.as_ref().unwrap();
    assert_eq!(status.feedback_aggregation, None);
    assert!(
        conditions::find(
            status.conditions.as_deref().unwrap(),
            feedback::CONDITION_FEEDBACK_AGGREGATED
        )
        .is_none()
    );
}

#[tokio::test]
async fn dropping_the_spec_field_clears_the_aggregates() {
    let hub = hub(&["c1"]).await;
    create_replica_set(&hub.client, None).await;
    let controller = ReplicaSetController::new(hub.client.clone())
        .with_clock(hub.clock.clone())
        .with_feedback_aggregation(true);
    settle(&controller, &hub.client).await;
    assert_eq!(aggregates(&get(&hub.client).await).len(), 2);
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(hub.client.clone(), NS);
    api.patch(
        "mwrs",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"feedbackAggregation": null}})),
    )
    .await
    .unwrap();
    settle(&controller, &hub.client).await;
    let rs = get(&hub.client).await;
    assert_eq!(rs.status.as_ref().unwrap().feedback_aggregation, None);
}
