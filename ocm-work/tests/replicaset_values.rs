//! The per-cluster values opt-in of the ManifestWorkReplicaSet controller
//! (`ReplicaSetController::with_cluster_values`) against an in-process fake hub.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions;
use ocm_api::constants::labels;
use ocm_api::work::v1::{Manifest, ManifestWork, ManifestWorkSpec, ManifestsTemplate};
use ocm_api::work::v1alpha1::{
    LocalPlacementReference, ManifestWorkReplicaSet, ManifestWorkReplicaSetSpec,
};
use ocm_testkit::FakeCluster;
use ocm_work::replicaset::controller::ReplicaSetController;
use ocm_work::replicaset::values;
use serde_json::{Value, json};

const NS: &str = "ocm-ns";

async fn hub(clusters: &[(&str, Value)]) -> (FakeCluster, Client) {
    let fake = FakeCluster::new();
    let client = fake.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ocm_api::crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("install CRD");
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for name in std::iter::once(NS).chain(clusters.iter().map(|(n, _)| *n)) {
        let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .expect("create namespace");
    }
    let managed: Api<ManagedCluster> = Api::all(client.clone());
    for (name, labels) in clusters {
        let mc: ManagedCluster = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"hubAcceptsClient": true},
        }))
        .unwrap();
        managed
            .create(&PostParams::default(), &mc)
            .await
            .expect("create cluster");
        managed
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"clusterClaims": [
                    {"name": "id.k8s.io", "value": format!("id-{name}")}]}})),
            )
            .await
            .expect("cluster claims");
    }

    let placements: Api<Placement> = Api::namespaced(client.clone(), NS);
    let mut p = Placement::default();
    p.metadata.name = Some("p1".into());
    placements
        .create(&PostParams::default(), &p)
        .await
        .expect("create placement");
    placements
        .patch_status(
            "p1",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"numberOfSelectedClusters": clusters.len(),
                "decisionGroups": [{"decisionGroupIndex": 0, "decisionGroupName": "",
                    "decisions": ["p1-decision-1"], "clusterCount": clusters.len()}]}}),
            ),
        )
        .await
        .expect("placement status");
    let decisions: Api<PlacementDecision> = Api::namespaced(client.clone(), NS);
    let mut pd = PlacementDecision::default();
    pd.metadata.name = Some("p1-decision-1".into());
    pd.metadata.labels = Some(BTreeMap::from([
        (labels::PLACEMENT.to_string(), "p1".to_string()),
        (labels::DECISION_GROUP_INDEX.to_string(), "0".to_string()),
    ]));
    decisions
        .create(&PostParams::default(), &pd)
        .await
        .expect("create decision");
    let list: Vec<_> = clusters
        .iter()
        .map(|(c, _)| json!({"clusterName": c, "reason": ""}))
        .collect();
    decisions
        .patch_status(
            "p1-decision-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"decisions": list}})),
        )
        .await
        .expect("decision status");
    (fake, client)
}

/// A ConfigMap whose data uses the three kinds of variable, and one Go-template string.
fn template() -> ManifestWorkSpec {
    ManifestWorkSpec {
        workload: Some(ManifestsTemplate {
            manifests: Some(vec![Manifest::new(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "{{CLUSTER_NAME}}-info", "namespace": "default"},
                "data": {
                    "region": "{{CLUSTER_LABEL:region}}",
                    "id": "{{ CLUSTER_CLAIM:id.k8s.io }}",
                    "alert": "{{ $labels.instance }}",
                },
            }))]),
        }),
        ..Default::default()
    }
}

async fn create_replica_set(client: &Client) {
    let rs = ManifestWorkReplicaSet {
        metadata: kube::api::ObjectMeta {
            name: Some("mwrs".into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        spec: ManifestWorkReplicaSetSpec {
            manifest_work_template: Some(template()),
            placement_refs: vec![LocalPlacementReference::new("p1")],
            ..Default::default()
        },
        status: None,
    };
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), NS);
    api.create(&PostParams::default(), &rs)
        .await
        .expect("create replica set");
}

/// Reconciles until the controller asks for nothing more (or 10 rounds).
async fn settle(controller: &ReplicaSetController, client: &Client) -> ManifestWorkReplicaSet {
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), NS);
    for _ in 0..10 {
        let rs = api.get("mwrs").await.unwrap();
        let outcome = controller.reconcile(&rs).await.expect("reconcile");
        if outcome.requeue_after != Some(Duration::ZERO) {
            break;
        }
    }
    api.get("mwrs").await.unwrap()
}

/// The works by cluster.
async fn works(client: &Client) -> BTreeMap<String, ManifestWork> {
    let api: Api<ManifestWork> = Api::all(client.clone());
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|w| (w.namespace().unwrap(), w))
        .collect()
}

fn configmap(work: &ManifestWork) -> &Value {
    work.spec.manifests()[0].as_value()
}

fn values_condition(rs: &ManifestWorkReplicaSet) -> Option<(String, String, String)> {
    let conds = rs.status.as_ref()?.conditions.as_deref()?;
    conditions::find(conds, values::CONDITION_CLUSTER_VALUES_RESOLVED)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

async fn set_label(client: &Client, cluster: &str, key: &str, value: Option<&str>) {
    let api: Api<ManagedCluster> = Api::all(client.clone());
    api.patch(
        cluster,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {key: value}}})),
    )
    .await
    .expect("label cluster");
}

#[tokio::test]
async fn two_clusters_with_different_labels_get_different_manifests() {
    let (_fake, client) = hub(&[
        ("east1", json!({"region": "us-east"})),
        ("west1", json!({"region": "us-west"})),
    ])
    .await;
    create_replica_set(&client).await;
    let controller = ReplicaSetController::new(client.clone()).with_cluster_values(true);
    let rs = settle(&controller, &client).await;

    let works = works(&client).await;
    assert_eq!(works.len(), 2);
    for (cluster, region) in [("east1", "us-east"), ("west1", "us-west")] {
        let cm = configmap(&works[cluster]);
        assert_eq!(cm["metadata"]["name"], format!("{cluster}-info"));
        assert_eq!(
            cm["data"],
            json!({"region": region, "id": format!("id-{cluster}"),
                   "alert": "{{ $labels.instance }}"})
        );
    }
    assert_eq!(
        values_condition(&rs),
        Some(("True".into(), "AsExpected".into(), String::new()))
    );
    let summary = rs.status.as_ref().unwrap().summary.as_ref().unwrap();
    assert_eq!(summary.total, Some(2));

    // The next pass sees both works at their cluster's template: nothing is rewritten.
    let versions: Vec<_> = works.values().map(|w| w.resource_version()).collect();
    settle(&controller, &client).await;
    let again: Vec<_> = self::works(&client)
        .await
        .values()
        .map(|w| w.resource_version())
        .collect();
    assert_eq!(versions, again);
}

#[tokio::test]
async fn a_missing_label_is_reported_and_the_other_clusters_proceed() {
    let (_fake, client) = hub(&[
        ("east1", json!({"region": "us-east"})),
        ("west1", json!({"zone": "a"})),
    ])
    .await;
    create_replica_set(&client).await;
    let controller = ReplicaSetController::new(client.clone()).with_cluster_values(true);
    let rs = settle(&controller, &client).await;

    let created = works(&client).await;
    assert_eq!(created.keys().collect::<Vec<_>>(), ["east1"]);
    let (status, reason, message) = values_condition(&rs).expect("condition");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "ClusterValuesInvalid")
    );
    assert_eq!(
        message,
        "1 cluster got no ManifestWork: cluster west1: {{CLUSTER_LABEL:region}} in manifest 0 \
         (ConfigMap default/{{CLUSTER_NAME}}-info) at data.region: the ManagedCluster has no \
         label \"region\""
    );
    let st = rs.status.as_ref().unwrap();
    let summary = st.summary.as_ref().unwrap();
    assert_eq!((summary.total, summary.desired_total), (Some(1), Some(2)));
    assert_eq!(
        st.placements_summary.as_ref().unwrap()[0]
            .available_decision_groups
            .as_deref(),
        Some("1 (1 / 2 clusters applied)")
    );
    assert_eq!(
        conditions::find(st.conditions.as_deref().unwrap(), "PlacementRolledOut")
            .map(|c| c.reason.as_str()),
        Some("Progressing")
    );

    // The label arrives: the cluster gets its work and the condition clears.
    set_label(&client, "west1", "region", Some("us-west")).await;
    let rs = settle(&controller, &client).await;
    let now = works(&client).await;
    assert_eq!(configmap(&now["west1"])["data"]["region"], "us-west");
    assert_eq!(values_condition(&rs).unwrap().0, "True");

    // The label goes again: the existing work is left as it is, and the failure reported.
    set_label(&client, "west1", "region", None).await;
    let rs = settle(&controller, &client).await;
    let after = works(&client).await;
    assert_eq!(after["west1"].spec, now["west1"].spec);
    assert_eq!(values_condition(&rs).unwrap().1, "ClusterValuesInvalid");
    assert_eq!(
        rs.status.as_ref().unwrap().summary.as_ref().unwrap().total,
        Some(1)
    );
}

#[tokio::test]
async fn without_the_opt_in_the_manifests_pass_through_untouched() {
    let (_fake, client) = hub(&[
        ("east1", json!({"region": "us-east"})),
        ("west1", json!({})),
    ])
    .await;
    create_replica_set(&client).await;
    let controller = ReplicaSetController::new(client.clone());
    let rs = settle(&controller, &client).await;

    let works = works(&client).await;
    assert_eq!(works.len(), 2);
    for work in works.values() {
        assert_eq!(work.spec, template());
        assert_eq!(
            serde_json::to_string(configmap(work)).unwrap(),
            serde_json::to_string(template().manifests()[0].as_value()).unwrap()
        );
    }
    assert_eq!(values_condition(&rs), None);
}

#[tokio::test]
async fn a_label_change_on_the_cluster_updates_its_work_through_the_watch() {
    let (_fake, client) = hub(&[
        ("east1", json!({"region": "us-east"})),
        ("west1", json!({"region": "us-west"})),
    ])
    .await;
    let controller = ReplicaSetController::new(client.clone()).with_cluster_values(true);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(controller.run(async move {
        let _ = stopped.await;
    }));
    create_replica_set(&client).await;
    let region_of = |cluster: &'static str| {
        let client = client.clone();
        async move {
            works(&client)
                .await
                .get(cluster)
                .map(|w| configmap(w)["data"]["region"].clone())
        }
    };
    let wait_for = |cluster: &'static str, region: &'static str| {
        let region_of = &region_of;
        async move {
            for _ in 0..200 {
                if region_of(cluster).await == Some(json!(region)) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("{cluster}'s work never got region {region}");
        }
    };
    wait_for("east1", "us-east").await;
    wait_for("west1", "us-west").await;
    set_label(&client, "east1", "region", Some("eu-central")).await;
    wait_for("east1", "eu-central").await;
    assert_eq!(region_of("west1").await, Some(json!("us-west")));
    let _ = stop.send(());
    task.await.unwrap();
}
