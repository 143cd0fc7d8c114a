//! Typed kube clients against the in-process fake: CRUD, errors, metadata, patches, lists.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::ObjectMeta;
use ocm_testkit::{FakeCluster, ManualClock};
use serde_json::json;

use crate::support::api_status as api_err;

fn cm(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..Default::default()
    }
}

#[tokio::test]
async fn configmap_crud_and_real_errors() {
    let clock = std::sync::Arc::new(ManualClock::default());
    let cluster = FakeCluster::builder().clock(clock.clone()).build();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());

    let created = api
        .create(&PostParams::default(), &cm("x", &[("k", "v")]))
        .await
        .unwrap();
    let meta = &created.metadata;
    assert_eq!(meta.namespace.as_deref(), Some("default"));
    assert!(meta.uid.as_deref().is_some_and(|u| u.len() == 36));
    assert_eq!(
        meta.creation_timestamp.as_ref().unwrap().0.to_string(),
        "2025-01-01T00:00:00Z"
    );
    let rv1: u64 = meta.resource_version.as_deref().unwrap().parse().unwrap();

    let err = api_err(
        api.create(&PostParams::default(), &cm("x", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 409);
    assert_eq!(err.reason, "AlreadyExists");
    assert_eq!(err.message, "configmaps \"x\" already exists");

    let err = api_err(api.get("nope").await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (404, "NotFound"));
    assert_eq!(err.message, "configmaps \"nope\" not found");
    let details = err.details.unwrap();
    assert_eq!(details.name, "nope");
    assert_eq!(details.kind, "configmaps");

    // Update with the current resourceVersion works; a stale one conflicts.
    let mut fresh = api.get("x").await.unwrap();
    fresh.data = Some(BTreeMap::from([("k".into(), "v2".into())]));
    let updated = api
        .replace("x", &PostParams::default(), &fresh)
        .await
        .unwrap();
    let rv2: u64 = updated
        .metadata
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv2 > rv1);
    let err = api_err(
        api.replace("x", &PostParams::default(), &fresh)
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on configmaps \"x\": the object has been modified; \
         please apply your changes to the latest version and try again"
    );

    // generateName.
    let generated = ConfigMap {
        metadata: ObjectMeta {
            generate_name: Some("gen-".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let g = api
        .create(&PostParams::default(), &generated)
        .await
        .unwrap();
    let name = g.metadata.name.unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    // Missing name is a 422 with causes.
    let err = api_err(
        api.create(&PostParams::default(), &ConfigMap::default())
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(
        err.message
            .starts_with("ConfigMap \"\" is invalid: metadata.name: Required value")
    );

    // Delete answers a Success status; the object is gone.
    api.delete("x", &DeleteParams::default()).await.unwrap();
    assert!(api.get_opt("x").await.unwrap().is_none());

    // Namespaces exist out of the box.
    let nss: Api<Namespace> = Api::all(cluster.client());
    let names: Vec<String> = nss
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert!(names.contains(&"default".to_string()) && names.contains(&"kube-system".to_string()));
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                {"name": "main", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]},
                {"name": "side", "image": "busybox:1"}
            ]}}
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn generation_status_subresource_and_patches() {
    let cluster = FakeCluster::new();
    let api: Api<Deployment> = Api::default_namespaced(cluster.client());
    let mut d = deployment("web", 1);
    d.status = Some(serde_json::from_value(json!({"replicas": 5})).unwrap());
    let created = api.create(&PostParams::default(), &d).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    // Create ignores the status sent; a new Deployment reads back with an empty one.
    assert_eq!(
        created.status,
        Some(Default::default()),
        "create ignores status"
    );

    // Label change: no generation bump.
    let p = json!({"metadata": {"labels": {"extra": "yes"}}});
    let out = api
        .patch("web", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert_eq!(out.metadata.generation, Some(1));

    // Spec change: bump.
    let p = json!({"spec": {"replicas": 3}});
    let out = api
        .patch("web", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert_eq!(out.metadata.generation, Some(2));

    // Main writes ignore status; /status writes ignore the rest.
    let p = json!({"status": {"replicas": 9}});
    let out = api
        .patch("web", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert_eq!(out.status, Some(Default::default()));
    let p = json!({"spec": {"replicas": 7}, "status": {"replicas": 3, "readyReplicas": 3}});
    let out = api
        .patch_status("web", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert_eq!(out.status.as_ref().unwrap().ready_replicas, Some(3));
    assert_eq!(out.spec.replicas, Some(3));
    assert_eq!(out.metadata.generation, Some(2));

    // Strategic merge patch merges containers by name.
    let p = json!({"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox:2"}]}}}});
    let out = api
        .patch("web", &PatchParams::default(), &Patch::Strategic(&p))
        .await
        .unwrap();
    let containers = out.spec.template.spec.unwrap().containers;
    assert_eq!(containers.len(), 2);
    assert_eq!(containers[1].image.as_deref(), Some("busybox:2"));
    assert_eq!(containers[0].image.as_deref(), Some("nginx:1"));

    // JSON patch, including a failing test op.
    let p: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/replicas", "value": 3},
        {"op": "replace", "path": "/spec/replicas", "value": 4}
    ]))
    .unwrap();
    let out = api
        .patch("web", &PatchParams::default(), &Patch::<()>::Json(p))
        .await
        .unwrap();
    assert_eq!(out.spec.replicas, Some(4));
    let p: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/replicas", "value": 99}
    ]))
    .unwrap();
    let err = api_err(
        api.patch("web", &PatchParams::default(), &Patch::<()>::Json(p))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);

    // A no-op update keeps the resourceVersion.
    let before = api.get("web").await.unwrap();
    let after = api
        .replace("web", &PostParams::default(), &before)
        .await
        .unwrap();
    assert_eq!(
        before.metadata.resource_version,
        after.metadata.resource_version
    );
}

#[tokio::test]
async fn selectors_and_paging() {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    for i in 0..25 {
        let mut c = cm(&format!("cm-{i:02}"), &[]);
        let tier = if i % 2 == 0 { "even" } else { "odd" };
        c.metadata.labels = Some(BTreeMap::from([
            ("tier".to_string(), tier.to_string()),
            ("n".to_string(), i.to_string()),
        ]));
        api.create(&PostParams::default(), &c).await.unwrap();
    }
    let other: Api<ConfigMap> = Api::namespaced(cluster.client(), "other");
    other
        .create(&PostParams::default(), &cm("elsewhere", &[]))
        .await
        .unwrap();

    let count = |lp: ListParams| {
        let api = api.clone();
        async move { api.list(&lp).await.unwrap().items.len() }
    };
    assert_eq!(count(ListParams::default()).await, 25);
    assert_eq!(count(ListParams::default().labels("tier=even")).await, 13);
    assert_eq!(count(ListParams::default().labels("tier!=even")).await, 12);
    assert_eq!(
        count(ListParams::default().labels("n in (1,2,3),tier=odd")).await,
        2
    );
    assert_eq!(count(ListParams::default().labels("!tier")).await, 0);
    assert_eq!(
        count(ListParams::default().fields("metadata.name=cm-03")).await,
        1
    );
    assert_eq!(
        count(ListParams::default().fields("metadata.name!=cm-03")).await,
        24
    );

    let all: Api<ConfigMap> = Api::all(cluster.client());
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        26
    );
    assert_eq!(
        all.list(&ListParams::default().fields("metadata.namespace=other"))
            .await
            .unwrap()
            .items
            .len(),
        1
    );

    // Paging with limit/continue.
    let mut seen = Vec::new();
    let mut lp = ListParams::default().limit(10);
    loop {
        let page = api.list(&lp).await.unwrap();
        seen.extend(page.items.into_iter().filter_map(|c| c.metadata.name));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp = lp.continue_token(&c),
            None => break,
        }
    }
    assert_eq!(seen.len(), 25);
    assert_eq!(seen[0], "cm-00");
    assert_eq!(seen[24], "cm-24");
}

#[tokio::test]
async fn journal_and_faults() {
    let cluster = FakeCluster::new();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    cluster.inject(
        ocm_testkit::FaultRule::new(500)
            .verb("create")
            .resource("configmaps")
            .times(1),
    );
    let err = api_err(
        api.create(&PostParams::default(), &cm("a", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 500);
    api.create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    api.get("a").await.unwrap();
    let j = cluster.journal();
    assert_eq!(j.count(|e| e.verb == "create" && e.status == 500), 1);
    assert_eq!(j.count(|e| e.verb == "create" && e.status == 201), 1);
    assert_eq!(j.writes(), 2);
    let last = j.entries().pop().unwrap();
    assert_eq!(last.verb, "get");
    assert_eq!(last.name.as_deref(), Some("a"));
    assert_eq!(last.namespace.as_deref(), Some("default"));
    assert_eq!(last.path, "/api/v1/namespaces/default/configmaps/a");
}

#[tokio::test]
async fn yaml_fixtures_load_crds_and_objects() {
    let cluster = FakeCluster::new();
    let loaded = cluster
        .apply_yaml(
            r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1}
spec: {any: thing}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: from-list}
  data: {k: v}
"#,
        )
        .unwrap();
    assert_eq!(loaded.len(), 3);
    let cm: ConfigMap = cluster.get("default", "from-list").unwrap();
    assert_eq!(cm.data.unwrap()["k"], "v");
    let g = cluster
        .store()
        .get(
            &ocm_testkit::Gvr::new("example.com", "v1", "gadgets"),
            "",
            "g1",
        )
        .unwrap();
    assert_eq!(g["spec"]["any"], "thing");
    assert!(
        cluster
            .apply_yaml("apiVersion: nope/v1\nkind: Nope\nmetadata: {name: x}\n")
            .is_err()
    );
}
