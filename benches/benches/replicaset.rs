//! The ManifestWorkReplicaSet controller: one replica set over a 1,000-cluster placement,
//! reconciled until every ManifestWork exists, against the in-process fake hub
//! (target < 1 s).
//!
//! Run with `cargo bench -p ocm-benches --bench replicaset`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::constants::labels;
use ocm_api::work::v1::{Manifest, ManifestWork, ManifestWorkSpec, ManifestsTemplate};
use ocm_api::work::v1alpha1::{
    LocalPlacementReference, ManifestWorkReplicaSet, ManifestWorkReplicaSetSpec,
};
use ocm_testkit::FakeCluster;
use ocm_work::replicaset::controller::ReplicaSetController;
use serde_json::json;

const CLUSTERS: usize = 1_000;
const NS: &str = "ocm-ns";

async fn hub() -> (FakeCluster, Client) {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ocm_api::crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("crd");
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let names =
        std::iter::once(NS.to_string()).chain((0..CLUSTERS).map(|i| format!("cluster-{i:04}")));
    for name in names {
        let ns: Namespace =
            serde_json::from_value(json!({"metadata": {"name": name}})).expect("ns");
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .expect("namespace");
    }
    let placements: Api<Placement> = Api::namespaced(client.clone(), NS);
    let mut p = Placement::default();
    p.metadata.name = Some("p".into());
    placements
        .create(&PostParams::default(), &p)
        .await
        .expect("placement");
    let slices = CLUSTERS.div_ceil(100);
    let groups: Vec<_> = (0..slices)
        .map(|i| format!("p-decision-{}", i + 1))
        .collect();
    placements
        .patch_status(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"numberOfSelectedClusters": CLUSTERS, "decisionGroups": [
                {"decisionGroupIndex": 0, "decisionGroupName": "", "decisions": groups, "clusterCount": CLUSTERS}
            ]}})),
        )
        .await
        .expect("placement status");
    let decisions: Api<PlacementDecision> = Api::namespaced(client.clone(), NS);
    for slice in 0..slices {
        let name = format!("p-decision-{}", slice + 1);
        let mut pd = PlacementDecision::default();
        pd.metadata.name = Some(name.clone());
        pd.metadata.labels = Some(BTreeMap::from([
            (labels::PLACEMENT.to_string(), "p".to_string()),
            (labels::DECISION_GROUP_INDEX.to_string(), "0".to_string()),
        ]));
        decisions
            .create(&PostParams::default(), &pd)
            .await
            .expect("decision");
        let list: Vec<_> = (slice * 100..((slice + 1) * 100).min(CLUSTERS))
            .map(|i| json!({"clusterName": format!("cluster-{i:04}"), "reason": ""}))
            .collect();
        decisions
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"decisions": list}})),
            )
            .await
            .expect("decision status");
    }
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
                        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
                    }))]),
                }),
                ..Default::default()
            }),
            placement_refs: vec![LocalPlacementReference {
                name: "p".into(),
                rollout_strategy: None,
            }],
            ..Default::default()
        },
        status: None,
    };
    Api::<ManifestWorkReplicaSet>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &rs)
        .await
        .expect("replica set");
    (cluster, client)
}

async fn reconcile_until_done(client: &Client) {
    let controller = ReplicaSetController::new(client.clone());
    let api: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), NS);
    for _ in 0..5 {
        let rs = api.get("mwrs").await.expect("get");
        let outcome = controller.reconcile(&rs).await.expect("reconcile");
        if outcome.requeue_after != Some(Duration::ZERO) {
            break;
        }
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("replicaset");
    group.sample_size(10);
    group.bench_function("fan_out_1000_clusters", |b| {
        b.iter_custom(|iterations| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let (_hub, client) = hub().await;
                    let start = Instant::now();
                    reconcile_until_done(&client).await;
                    total += start.elapsed();
                    let works = Api::<ManifestWork>::all(client.clone())
                        .list(&ListParams::default())
                        .await
                        .expect("list");
                    assert_eq!(works.items.len(), CLUSTERS);
                }
                total
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
