//! `ClusterClaimReporter` (the registration agent's claim controller) against in-process fake
//! hub and managed clusters: the reported list, no write when nothing changed, and the run
//! loop following claim changes.

use std::time::Duration;

use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::ClusterClaim;
use ocm_testkit::FakeCluster;
use ocm_work::registration::ClusterClaimReporter;
use serde_json::{Value, json};

const START: &str = "2026-01-01T00:00:00Z";

struct Hub {
    _cluster: FakeCluster,
    client: Client,
}

fn hub() -> Hub {
    let cluster = FakeCluster::new();
    ocm_testkit::install_crds(&cluster).expect("CRDs");
    let client = cluster.client();
    Hub {
        _cluster: cluster,
        client,
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

async fn managed_cluster(client: &Client, name: &str, labels: Value, available: Option<&str>) {
    create::<ManagedCluster>(
        client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": labels}, "spec": {"hubAcceptsClient": true}}),
    )
    .await;
    if let Some(status) = available {
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
}

#[tokio::test]
async fn cluster_claims_are_reported_to_the_hub() {
    let hub = hub();
    let spoke = FakeCluster::new();
    ocm_testkit::install_crds(&spoke).unwrap();
    let spoke_client = spoke.client();
    managed_cluster(&hub.client, "c1", json!({}), Some("True")).await;
    for (name, value, labels) in [
        ("region", "eu-west", json!({})),
        ("platform.open-cluster-management.io", "AWS", json!({})),
        (
            "internal",
            "secret",
            json!({"open-cluster-management.io/spoke-only": ""}),
        ),
        ("az", "1", json!({})),
    ] {
        create::<ClusterClaim>(
            &spoke_client,
            json!({
            "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
            "metadata": {"name": name, "labels": labels}, "spec": {"value": value}}),
        )
        .await;
    }
    let reporter = ClusterClaimReporter::new(hub.client.clone(), spoke_client.clone(), "c1");
    assert_eq!(reporter.sync().await.unwrap(), 1);
    let cluster = Api::<ManagedCluster>::all(hub.client.clone())
        .get("c1")
        .await
        .unwrap();
    let status = serde_json::to_value(cluster.status.unwrap()).unwrap();
    assert_eq!(
        status["clusterClaims"],
        json!([
            {"name": "platform.open-cluster-management.io", "value": "AWS"},
            {"name": "az", "value": "1"},
            {"name": "region", "value": "eu-west"}
        ])
    );
    assert_eq!(
        status["conditions"][0]["type"], "ManagedClusterConditionAvailable",
        "other status kept"
    );
    assert_eq!(
        reporter.sync().await.unwrap(),
        0,
        "nothing changed, nothing written"
    );

    Api::<ClusterClaim>::all(spoke_client.clone())
        .delete("region", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(reporter.sync().await.unwrap(), 1);
    let cluster = Api::<ManagedCluster>::all(hub.client.clone())
        .get("c1")
        .await
        .unwrap();
    assert_eq!(cluster.status.unwrap().cluster_claims.unwrap().len(), 2);
}

#[tokio::test]
async fn the_claim_reporter_run_loop_follows_claim_changes() {
    let hub = hub();
    let spoke = FakeCluster::new();
    ocm_testkit::install_crds(&spoke).unwrap();
    managed_cluster(&hub.client, "c1", json!({}), Some("True")).await;
    let reporter = ClusterClaimReporter::new(hub.client.clone(), spoke.client(), "c1");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(reporter.run(Duration::from_secs(600), async move {
        let _ = stopped.await;
    }));
    create::<ClusterClaim>(
        &spoke.client(),
        json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
        "metadata": {"name": "region"}, "spec": {"value": "eu"}}),
    )
    .await;
    let clusters: Api<ManagedCluster> = Api::all(hub.client.clone());
    let mut claims = Vec::new();
    for _ in 0..100 {
        claims = clusters
            .get("c1")
            .await
            .unwrap()
            .status
            .and_then(|s| s.cluster_claims)
            .unwrap_or_default();
        if !claims.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0].value.as_deref(), Some("eu"));
    let _ = stop.send(());
    task.await.unwrap();
}

/// What a newer OCM release could do: ClusterClaim values that are numbers (this SDK's types
/// want strings).
async fn allow_numbered_claim_values(client: &Client) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = "clusterclaims.cluster.open-cluster-management.io";
    let mut crd = serde_json::to_value(api.get(name).await.unwrap()).unwrap();
    *crd.pointer_mut("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/value")
        .expect("the CRD describes claim values") = json!({"type": "integer"});
    let crd: CustomResourceDefinition = serde_json::from_value(crd).unwrap();
    api.replace(name, &PostParams::default(), &crd)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_claim_that_does_not_decode_is_left_out_and_the_others_are_reported() {
    let hub = hub();
    let spoke = FakeCluster::new();
    ocm_testkit::install_crds(&spoke).unwrap();
    let spoke_client = spoke.client();
    managed_cluster(&hub.client, "c1", json!({}), Some("True")).await;
    create::<ClusterClaim>(
        &spoke_client,
        json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
        "metadata": {"name": "region"}, "spec": {"value": "eu"}}),
    )
    .await;
    allow_numbered_claim_values(&spoke_client).await;
    let resource = kube::core::ApiResource::erase::<ClusterClaim>(&());
    let object: kube::core::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
        "metadata": {"name": "cores"}, "spec": {"value": 64}}))
    .unwrap();
    Api::<kube::core::DynamicObject>::all_with(spoke_client.clone(), &resource)
        .create(&PostParams::default(), &object)
        .await
        .expect("the spoke takes the newer claim");

    let capture = crate::support::logs::capture();
    let reporter = ClusterClaimReporter::new(hub.client.clone(), spoke_client.clone(), "c1");
    assert_eq!(reporter.sync().await.unwrap(), 1);
    let cluster = Api::<ManagedCluster>::all(hub.client.clone())
        .get("c1")
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(cluster.status.unwrap().cluster_claims).unwrap(),
        json!([{"name": "region", "value": "eu"}])
    );
    assert_eq!(
        reporter.sync().await.unwrap(),
        0,
        "nothing changed, nothing written"
    );
    // The claim left out is named at WARN, once (the second sync saw the same version).
    let warned: Vec<String> = capture
        .logs()
        .warnings()
        .into_iter()
        .filter(|l| l.contains("ClusterClaim") && l.contains("cores"))
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains("spec.value"), "{}", warned[0]);
}
