//! The `scale` subresource (autoscaling/v1 `Scale`) and watch lifetimes.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use ocm_testkit::FakeCluster;
use serde_json::json;

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"replicas": replicas,
                 "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap()
}

#[tokio::test]
async fn deployment_scale_reads_and_writes_replicas() {
    let cluster = FakeCluster::new();
    let api: Api<Deployment> = Api::default_namespaced(cluster.client());
    api.create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();

    let scale = api.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.as_ref().unwrap().replicas, Some(2));
    assert_eq!(
        scale.status.as_ref().unwrap().selector.as_deref(),
        Some("app=web")
    );
    assert_eq!(scale.metadata.name.as_deref(), Some("web"));

    // kubectl scale's merge patch.
    let patched = api
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.unwrap().replicas, Some(3));
    let d = api.get("web").await.unwrap();
    assert_eq!(d.spec.replicas, Some(3));
    assert_eq!(d.metadata.generation, Some(2));

    // Update with a stale resourceVersion conflicts; a fresh one goes through.
    let mut s: Scale = api.get_scale("web").await.unwrap();
    s.spec.as_mut().unwrap().replicas = Some(5);
    let stale = {
        let mut x = s.clone();
        x.metadata.resource_version = Some("1".into());
        x
    };
    let err = api
        .replace_scale("web", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 409),
        "{err:?}"
    );
    let out = api
        .replace_scale("web", &PostParams::default(), &s)
        .await
        .unwrap();
    assert_eq!(out.spec.unwrap().replicas, Some(5));

    // dryRun=All answers but changes nothing.
    let dry = api
        .patch_scale(
            "web",
            &PatchParams::default().dry_run(),
            &Patch::Merge(json!({"spec": {"replicas": 9}})),
        )
        .await
        .unwrap();
    assert_eq!(dry.spec.unwrap().replicas, Some(9));
    assert_eq!(api.get("web").await.unwrap().spec.replicas, Some(5));
}

#[tokio::test]
async fn custom_resources_scale_by_their_crd_paths() {
    let cluster = FakeCluster::new();
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.io"},
        "spec": {"group": "example.io", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.size",
                    "statusReplicasPath": ".status.count",
                    "labelSelectorPath": ".status.selector"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                    "status": {"type": "object", "properties": {
                        "count": {"type": "integer"}, "selector": {"type": "string"}}}}}}}]}
    }))
    .unwrap();
    Api::<CustomResourceDefinition>::all(cluster.client())
        .create(&PostParams::default(), &crd)
        .await
        .unwrap();
    let ar = ApiResource {
        group: "example.io".into(),
        version: "v1".into(),
        api_version: "example.io/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let api: Api<DynamicObject> = Api::namespaced_with(cluster.client(), "default", &ar);
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.io/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"size": 1}
    }))
    .unwrap();
    api.create(&PostParams::default(), &w).await.unwrap();
    api.patch_status(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"count": 1, "selector": "app=w"}})),
    )
    .await
    .unwrap();

    let scale = api.get_scale("w").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(1));
    let status = scale.status.unwrap();
    assert_eq!(
        (status.replicas, status.selector.as_deref()),
        (1, Some("app=w"))
    );

    api.patch_scale(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .unwrap();
    assert_eq!(api.get("w").await.unwrap().data["spec"]["size"], 4);

    // Discovery names the subresource, so `kubectl scale` finds it.
    let list: serde_json::Value = cluster
        .client()
        .request(
            http::Request::get("/apis/example.io/v1")
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap();
    let scale_entry = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "widgets/scale")
        .expect("widgets/scale in discovery");
    assert_eq!(
        (
            &scale_entry["group"],
            &scale_entry["version"],
            &scale_entry["kind"]
        ),
        (&json!("autoscaling"), &json!("v1"), &json!("Scale"))
    );
}

#[tokio::test]
async fn watches_with_a_negative_timeout_end_at_once() {
    let cluster = FakeCluster::new();
    // kube's client only sends positive timeouts; send -1 by hand.
    let req = http::Request::get(
        "/apis/apps/v1/namespaces/default/deployments?watch=1&timeoutSeconds=-1",
    )
    .body(Vec::new())
    .unwrap();
    let stream = cluster
        .client()
        .request_events::<Deployment>(req)
        .await
        .unwrap();
    let events: Vec<_> = tokio::time::timeout(Duration::from_secs(10), stream.collect::<Vec<_>>())
        .await
        .expect("the watch ended");
    assert!(events.is_empty());
}
