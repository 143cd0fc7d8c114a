//! `Table` responses as kube-apiserver builds them: CRD printer columns evaluated with
//! Kubernetes JSONPath (filters, `[*]`), typed cells, and the built-in kinds' printers.

use std::sync::Arc;

use axum::body::Body;
use http::Request;
use ocm_testkit::{FakeCluster, FakeHub, Gvr, ManualClock, PatchKind, WriteOptions};
use serde_json::{Value, json};
use tower::ServiceExt;

const START: &str = "2026-01-01T00:00:00Z";

async fn table(cluster: &FakeCluster, path: &str) -> Value {
    let req = Request::get(path)
        .header(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .body(Body::empty())
        .unwrap();
    let resp = cluster.router().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200, "{path}");
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn headers(t: &Value) -> Vec<String> {
    t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

fn row(t: &Value, name: &str) -> Vec<Value> {
    t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["cells"][0] == name || r["object"]["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no row {name} in {t}"))["cells"]
        .as_array()
        .unwrap()
        .clone()
}

fn hub() -> (FakeHub, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(START.parse().unwrap()));
    let hub = FakeHub::with_builder(FakeCluster::builder().clock(clock.clone()), 2).unwrap();
    (hub, clock)
}

fn status(hub: &FakeHub, gvr: &Gvr, ns: &str, name: &str, status: Value) {
    hub.hub()
        .store()
        .patch(
            gvr,
            ns,
            name,
            PatchKind::Merge,
            &json!({"status": status}),
            &WriteOptions::default().subresource("status"),
        )
        .unwrap();
}

#[tokio::test]
async fn every_ocm_kind_with_printer_columns_shows_its_values() {
    let (hub, clock) = hub();
    hub.hub()
        .apply_yaml(r#"
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: remote}
spec:
  hubAcceptsClient: false
  managedClusterClientConfigs: [{url: "https://a.example.com:6443"}, {url: "https://b.example.com:6443"}]
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: p, namespace: default}
spec: {}
---
apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata: {name: rs, namespace: default}
spec:
  placementRefs: [{name: p}]
  manifestWorkTemplate:
    workload:
      manifests: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}]
---
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: hello, namespace: cluster1}
spec: {}
---
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: hello}
spec: {addOnMeta: {displayName: Hello World}}
---
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata: {name: hello-t}
spec: {addonName: hello, agentSpec: {workload: {manifests: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}]}}}
"#)
        .unwrap();
    clock.advance(std::time::Duration::from_secs(125));
    let cond = |t: &str, s: &str, r: &str| json!({"type": t, "status": s, "reason": r, "message": "", "lastTransitionTime": START});

    // ManagedCluster: the filter columns and the `[*]` one (first URL only, as kube-apiserver).
    let t = table(
        hub.hub(),
        "/apis/cluster.open-cluster-management.io/v1/managedclusters",
    )
    .await;
    assert_eq!(
        headers(&t),
        [
            "Name",
            "Hub Accepted",
            "Managed Cluster URLs",
            "Joined",
            "Available",
            "Age"
        ]
    );
    assert_eq!(
        row(&t, "cluster1"),
        [
            json!("cluster1"),
            json!(true),
            Value::Null,
            json!("True"),
            json!("True"),
            json!("2m5s")
        ]
    );
    assert_eq!(
        row(&t, "remote"),
        [
            json!("remote"),
            json!(false),
            json!("https://a.example.com:6443"),
            Value::Null,
            Value::Null,
            json!("2m5s")
        ]
    );
    assert_eq!(t["columnDefinitions"][1]["type"], "boolean");

    // ManagedClusterSet.
    let t = table(
        hub.hub(),
        "/apis/cluster.open-cluster-management.io/v1beta2/managedclustersets",
    )
    .await;
    assert_eq!(headers(&t), ["Name", "Empty", "Age"]);
    status(
        &hub,
        &Gvr::new(
            "cluster.open-cluster-management.io",
            "v1beta2",
            "managedclustersets",
        ),
        "",
        "default",
        json!({"conditions": [cond("ClusterSetEmpty", "False", "ClustersSelected")]}),
    );
    let t = table(
        hub.hub(),
        "/apis/cluster.open-cluster-management.io/v1beta2/managedclustersets",
    )
    .await;
    assert_eq!(row(&t, "default")[1], json!("False"));

    // Placement.
    status(
        &hub,
        &Gvr::new(
            "cluster.open-cluster-management.io",
            "v1beta1",
            "placements",
        ),
        "default",
        "p",
        json!({"numberOfSelectedClusters": 2, "conditions": [cond("PlacementSatisfied", "True", "AllDecisionGroupsScheduled")]}),
    );
    let t = table(
        hub.hub(),
        "/apis/cluster.open-cluster-management.io/v1beta1/namespaces/default/placements",
    )
    .await;
    assert_eq!(
        headers(&t),
        ["Name", "Succeeded", "Reason", "SelectedClusters"]
    );
    assert_eq!(
        row(&t, "p"),
        [
            json!("p"),
            json!("True"),
            json!("AllDecisionGroupsScheduled"),
            json!(2)
        ]
    );

    // ManifestWorkReplicaSet.
    status(
        &hub,
        &Gvr::new(
            "work.open-cluster-management.io",
            "v1alpha1",
            "manifestworkreplicasets",
        ),
        "default",
        "rs",
        json!({"conditions": [cond("PlacementVerified", "True", "AsExpected"), cond("ManifestworkApplied", "True", "AsExpected")]}),
    );
    let t = table(
        hub.hub(),
        "/apis/work.open-cluster-management.io/v1alpha1/namespaces/default/manifestworkreplicasets",
    )
    .await;
    assert_eq!(
        headers(&t),
        ["Name", "Placement", "Found", "ManifestWorks", "Applied"]
    );
    assert_eq!(
        row(&t, "rs"),
        [
            json!("rs"),
            json!("AsExpected"),
            json!("True"),
            json!("AsExpected"),
            json!("True")
        ]
    );

    // ManagedClusterAddOn and ClusterManagementAddOn (stored v1alpha1).
    status(
        &hub,
        &Gvr::new(
            "addon.open-cluster-management.io",
            "v1alpha1",
            "managedclusteraddons",
        ),
        "cluster1",
        "hello",
        json!({"conditions": [cond("Available", "True", "Probed"), cond("Degraded", "False", "Ok")]}),
    );
    let t = table(
        hub.hub(),
        "/apis/addon.open-cluster-management.io/v1alpha1/namespaces/cluster1/managedclusteraddons",
    )
    .await;
    assert_eq!(
        headers(&t),
        ["Name", "Available", "Degraded", "Progressing"]
    );
    assert_eq!(
        row(&t, "hello"),
        [json!("hello"), json!("True"), json!("False"), Value::Null]
    );
    let t = table(
        hub.hub(),
        "/apis/addon.open-cluster-management.io/v1alpha1/clustermanagementaddons",
    )
    .await;
    assert_eq!(headers(&t), ["Name", "DISPLAY NAME", "CRD NAME"]);
    assert_eq!(row(&t, "hello")[1], json!("Hello World"));
    // Each version prints its own columns (v1beta1 has no CRD NAME).
    let t = table(
        hub.hub(),
        "/apis/addon.open-cluster-management.io/v1beta1/clustermanagementaddons",
    )
    .await;
    assert_eq!(headers(&t), ["Name", "DISPLAY NAME"]);
    assert_eq!(row(&t, "hello")[1], json!("Hello World"));
    let t = table(
        hub.hub(),
        "/apis/addon.open-cluster-management.io/v1alpha1/addontemplates",
    )
    .await;
    assert_eq!(headers(&t), ["Name", "ADDON NAME"]);
    assert_eq!(row(&t, "hello-t")[1], json!("hello"));

    // Kinds without printer columns get Age only.
    let t = table(
        hub.hub(),
        "/apis/work.open-cluster-management.io/v1/manifestworks",
    )
    .await;
    assert_eq!(headers(&t), ["Name", "Age"]);
    assert_eq!(t["columnDefinitions"][1]["type"], "date");
    let t = table(hub.hub(), "/apis/cluster.open-cluster-management.io/v1beta2/namespaces/default/managedclustersetbindings").await;
    assert_eq!(headers(&t), ["Name", "Age"]);
}

#[tokio::test]
async fn built_in_kinds_print_like_kube_apiserver() {
    let clock = Arc::new(ManualClock::new(START.parse().unwrap()));
    let cluster = FakeCluster::builder().clock(clock.clone()).build();
    cluster
        .apply_yaml(
            r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec: {containers: [{name: nginx, image: "nginx:1.25"}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default}
data: {a: "1", b: "2"}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {selector: {app: nginx}, ports: [{port: 80}], clusterIP: 10.96.0.10}
"#,
        )
        .unwrap();
    ocm_testkit::settle_workloads(cluster.store());
    clock.advance(std::time::Duration::from_secs(3 * 3600 + 60));
    let t = table(&cluster, "/apis/apps/v1/namespaces/default/deployments").await;
    assert_eq!(
        headers(&t),
        [
            "Name",
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    assert_eq!(
        row(&t, "nginx"),
        [
            json!("nginx"),
            json!("3/3"),
            json!(3),
            json!(3),
            json!("3h1m"),
            json!("nginx"),
            json!("nginx:1.25"),
            json!("app=nginx")
        ]
    );
    assert_eq!(t["columnDefinitions"][5]["priority"], 1);
    let t = table(&cluster, "/api/v1/namespaces/default/configmaps").await;
    assert_eq!(row(&t, "cfg"), [json!("cfg"), json!(2), json!("3h1m")]);
    let t = table(&cluster, "/api/v1/namespaces/default/services").await;
    assert_eq!(
        headers(&t),
        [
            "Name",
            "Type",
            "Cluster-IP",
            "External-IP",
            "Port(s)",
            "Age",
            "Selector"
        ]
    );
    assert_eq!(
        row(&t, "web"),
        [
            json!("web"),
            json!("ClusterIP"),
            json!("10.96.0.10"),
            json!("<none>"),
            json!("80/TCP"),
            json!("3h1m"),
            json!("app=nginx")
        ]
    );
    let t = table(&cluster, "/api/v1/namespaces").await;
    assert_eq!(row(&t, "default")[1], json!("Active"));
}
