//! Wire-level checks of the HTTP front door: discovery shapes, Table output,
//! OpenAPI, query quirks and error bodies.

use axum::body::Body;
use http::{Request, StatusCode};
use ocm_testkit::FakeCluster;
use serde_json::{Value, json};
use tower::ServiceExt;

async fn call(cluster: &FakeCluster, req: Request<Body>) -> (StatusCode, String, Value) {
    let resp = cluster.router().oneshot(req).await.unwrap();
    let status = resp.status();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, ct, body)
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

#[tokio::test]
async fn discovery_documents() {
    let c = FakeCluster::new();
    let (s, _, v) = call(&c, get("/version")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["gitVersion"], "v1.33.0");

    let (_, _, v) = call(&c, get("/api")).await;
    assert_eq!(v["versions"], json!(["v1"]));

    let (_, _, v) = call(&c, get("/apis")).await;
    let groups: Vec<&str> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert!(groups.contains(&"apps") && groups.contains(&"rbac.authorization.k8s.io"));

    let (_, _, v) = call(&c, get("/apis/apps/v1")).await;
    let names: Vec<&str> = v["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"deployments") && names.contains(&"deployments/status"));

    let aggregated = Request::get("/apis")
        .header(
            "accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        )
        .body(Body::empty())
        .unwrap();
    let (_, ct, v) = call(&c, aggregated).await;
    assert!(ct.contains("as=APIGroupDiscoveryList"), "{ct}");
    assert_eq!(v["kind"], "APIGroupDiscoveryList");
    let apps = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["metadata"]["name"] == "apps")
        .unwrap();
    let deploy = apps["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "deployments")
        .unwrap();
    assert_eq!(deploy["scope"], "Namespaced");
    assert_eq!(deploy["subresources"][0]["subresource"], "status");

    let (_, _, v) = call(&c, get("/openapi/v3")).await;
    assert!(v["paths"]["apis/apps/v1"]["serverRelativeURL"].is_string());
    let (s, _, v) = call(&c, get("/openapi/v3/apis/apps/v1")).await;
    assert_eq!(s, StatusCode::OK);
    assert!(
        v["components"]["schemas"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.ends_with("Deployment"))
    );
}

#[tokio::test]
async fn tables_queries_and_errors() {
    let c = FakeCluster::new();
    let create = Request::post("/api/v1/namespaces/default/configmaps?&fieldManager=test&")
        .header("content-type", "application/json")
        .body(Body::from(
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}"#,
        ))
        .unwrap();
    let (s, _, v) = call(&c, create).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(v["metadata"]["managedFields"][0]["manager"], "test");

    let table = Request::get("/api/v1/namespaces/default/configmaps")
        .header(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .body(Body::empty())
        .unwrap();
    let (_, _, v) = call(&c, table).await;
    assert_eq!(v["kind"], "Table");
    assert_eq!(v["columnDefinitions"][0]["name"], "Name");
    assert_eq!(v["rows"][0]["cells"][0], "a");
    assert_eq!(v["rows"][0]["object"]["kind"], "PartialObjectMetadata");

    let (s, _, v) = call(&c, get("/api/v1/namespaces/default/nothings")).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert_eq!(v["kind"], "Status");
    assert_eq!(v["reason"], "NotFound");

    let bad_selector = get("/api/v1/namespaces/default/configmaps?labelSelector=a%20in%20b");
    let (s, _, v) = call(&c, bad_selector).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(v["reason"], "BadRequest");

    let unknown_patch = Request::patch("/api/v1/namespaces/default/configmaps/a")
        .header("content-type", "text/plain")
        .body(Body::from("x"))
        .unwrap();
    let (s, _, v) = call(&c, unknown_patch).await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(v["reason"], "UnsupportedMediaType");

    let apply_without_manager = Request::patch("/api/v1/namespaces/default/configmaps/b")
        .header("content-type", "application/apply-patch+yaml")
        .body(Body::from(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
        ))
        .unwrap();
    let (s, _, _) = call(&c, apply_without_manager).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);

    let apply_yaml = Request::patch("/api/v1/namespaces/default/configmaps/b?fieldManager=y")
        .header("content-type", "application/apply-patch+yaml")
        .body(Body::from(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: v\n",
        ))
        .unwrap();
    let (s, _, v) = call(&c, apply_yaml).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(v["data"]["k"], "v");
}

#[tokio::test]
async fn loopback_serves_kube_clients_and_kubeconfig() {
    use k8s_openapi::api::core::v1::Namespace;
    let c = FakeCluster::new();
    let server = c.serve_loopback().await.unwrap();
    assert!(server.url().starts_with("http://127.0.0.1:"));
    let kubeconfig = server.kubeconfig().unwrap();
    assert_eq!(kubeconfig.current_context.as_deref(), Some("ocm-testkit"));
    let api: kube::Api<Namespace> = kube::Api::all(server.client().unwrap());
    let ns = api.get("default").await.unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Active"));
    // The in-process client sees the same store.
    let inproc: kube::Api<Namespace> = kube::Api::all(c.client());
    assert_eq!(
        inproc.get("default").await.unwrap().metadata.uid,
        ns.metadata.uid
    );
}

/// Every kubeconfig names its cluster, context and user after the cluster, so kubeconfigs of
/// a hub and its managed clusters merge and `--context` picks one.
#[tokio::test]
async fn kubeconfigs_are_named_after_their_cluster() {
    let hub =
        ocm_testkit::FakeHub::with_builder(FakeCluster::builder().authentication(true), 1).unwrap();
    assert_eq!(hub.hub().name(), "hub");
    assert_eq!(hub.cluster("cluster1").unwrap().name(), "cluster1");
    let hub_server = hub.hub().serve_loopback().await.unwrap();
    let spoke_server = hub
        .cluster("cluster1")
        .unwrap()
        .serve_loopback()
        .await
        .unwrap();
    let k = hub_server.kubeconfig().unwrap();
    assert_eq!(k.current_context.as_deref(), Some("hub"));
    assert_eq!(k.clusters[0].name, "hub");
    assert_eq!(k.auth_infos[0].name, "hub");
    let spoke = spoke_server.kubeconfig().unwrap();
    assert_eq!(spoke.current_context.as_deref(), Some("cluster1"));
    let agent = hub_server
        .kubeconfig_yaml_as(&ocm_testkit::FakeHub::agent_user("cluster1"))
        .unwrap();
    assert!(
        agent.contains("current-context: \"system:open-cluster-management:cluster1:agent@hub\""),
        "{agent}"
    );
    // A chosen name, as upstream's walkthroughs name theirs.
    let mut renamed = hub
        .cluster("cluster1")
        .unwrap()
        .serve_loopback()
        .await
        .unwrap();
    renamed.set_context_name("kind-cluster1");
    assert_eq!(
        renamed.kubeconfig().unwrap().current_context.as_deref(),
        Some("kind-cluster1")
    );
    // Merged, both contexts are there.
    let merged = k.merge(spoke).unwrap();
    let names: Vec<&str> = merged.contexts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["hub", "cluster1"]);
}
