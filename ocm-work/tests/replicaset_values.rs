//! The per-cluster values opt-in of the ManifestWorkReplicaSet controller
//! (`ReplicaSetController::with_cluster_values`) against an in-process fake hub.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::{RolloutConfig, RolloutProgressive, RolloutStrategy, RolloutType};
use ocm_api::conditions;
use ocm_api::work::v1::{Manifest, ManifestWork, ManifestWorkSpec, ManifestsTemplate};
use ocm_api::work::v1alpha1::{
    LocalPlacementReference, ManifestWorkReplicaSet, ManifestWorkReplicaSetSpec,
};
use ocm_work::replicaset::controller::ReplicaSetController;
use ocm_work::replicaset::values;
use serde_json::{Value, json};

use crate::support;

use support::replicaset::{
    Hub, NS, condition_of, managed_cluster, placement, settle, works_by_cluster,
    works_by_cluster as works,
};

/// A hub with a ManagedCluster per `(name, labels)` (each with claim `id.k8s.io` =
/// `id-<name>`) and Placement `p1` selecting them all.
async fn hub(clusters: &[(&str, Value)]) -> Hub {
    let names: Vec<&str> = clusters.iter().map(|(n, _)| *n).collect();
    let hub = support::replicaset::hub(&names).await;
    for (name, labels) in clusters {
        managed_cluster(&hub.client, name, labels.clone()).await;
    }
    placement(&hub.client, "p1", &[("", names)]).await;
    hub
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
    create_replica_set_with(client, LocalPlacementReference::new("p1")).await;
}

async fn create_replica_set_with(client: &Client, placement_ref: LocalPlacementReference) {
    let rs = ManifestWorkReplicaSet {
        metadata: kube::api::ObjectMeta {
            name: Some("mwrs".into()),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        spec: ManifestWorkReplicaSetSpec {
            manifest_work_template: Some(template()),
            placement_refs: vec![placement_ref],
            ..Default::default()
        },
        status: None,
    };
    support::replicaset::create_replica_set(client, &rs).await;
}

fn configmap(work: &ManifestWork) -> &Value {
    work.spec.manifests()[0].as_value()
}

fn values_condition(rs: &ManifestWorkReplicaSet) -> Option<(String, String, String)> {
    condition_of(rs, values::CONDITION_CLUSTER_VALUES_RESOLVED)
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
    let Hub {
        fake: _fake,
        client,
        ..
    } = hub(&[
        ("east1", json!({"region": "us-east"})),
        ("west1", json!({"region": "us-west"})),
    ])
    .await;
    create_replica_set(&client).await;
    let controller = ReplicaSetController::new(client.clone()).with_cluster_values(true);
    let rs = settle(&controller, &client, "mwrs").await;

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
    settle(&controller, &client, "mwrs").await;
    let again: Vec<_> = works_by_cluster(&client)
        .await
        .values()
        .map(|w| w.resource_version())
        .collect();
    assert_eq!(versions, again);
}

#[tokio::test]
async fn a_missing_label_is_reported_and_the_other_clusters_proceed() {
    let Hub {
        fake: _fake,
        client,
        ..
    } = hub(&[
        ("east1", json!({"region": "us-east"})),
        ("west1", json!({"zone": "a"})),
    ])
    .await;
    create_replica_set(&client).await;
    let controller = ReplicaSetController::new(client.clone()).with_cluster_values(true);
    let rs = settle(&controller, &client, "mwrs").await;

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
    let rs = settle(&controller, &client, "mwrs").await;
    let now = works(&client).await;
    assert_eq!(configmap(&now["west1"])["data"]["region"], "us-west");
    assert_eq!(values_condition(&rs).unwrap().0, "True");

    // The label goes again: the existing work is left as it is, and the failure reported.
    set_label(&client, "west1", "region", None).await;
    let rs = settle(&controller, &client, "mwrs").await;
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
    let Hub {
        fake: _fake,
        client,
        ..
    } = hub(&[
        ("east1", json!({"region": "us-east"})),
        ("west1", json!({})),
    ])
    .await;
    create_replica_set(&client).await;
    let controller = ReplicaSetController::new(client.clone());
    let rs = settle(&controller, &client, "mwrs").await;

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
    let Hub {
        fake: _fake,
        client,
        ..
    } = hub(&[
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

#[tokio::test]
async fn every_selected_cluster_is_checked_even_those_a_progressive_rollout_has_not_reached() {
    let Hub {
        fake: _fake,
        client,
        ..
    } = hub(&[
        ("a1", json!({"region": "us-east"})),
        ("b1", json!({"zone": "a"})),
        ("c1", json!({})),
    ])
    .await;
    // One cluster at a time, and up to two failures tolerated.
    let strategy = RolloutStrategy {
        type_: Some(RolloutType::Progressive),
        progressive: Some(RolloutProgressive {
            max_concurrency: Some(IntOrString::Int(1)),
            config: RolloutConfig {
                max_failures: Some(IntOrString::Int(2)),
                ..Default::default()
            },
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut placement_ref = LocalPlacementReference::new("p1");
    placement_ref.rollout_strategy = Some(strategy);
    create_replica_set_with(&client, placement_ref).await;
    let controller = ReplicaSetController::new(client.clone()).with_cluster_values(true);
    let rs = settle(&controller, &client, "mwrs").await;

    // The first pass rolls out to a1 only, yet b1 and c1 are reported already.
    assert_eq!(works(&client).await.keys().collect::<Vec<_>>(), ["a1"]);
    let (status, reason, message) = values_condition(&rs).expect("condition");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "ClusterValuesInvalid")
    );
    assert!(
        message.starts_with("2 clusters got no ManifestWork: cluster b1: ")
            && message.contains("; cluster c1: "),
        "{message}"
    );
}
