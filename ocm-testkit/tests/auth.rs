//! Authentication (bearer tokens, impersonation) and RBAC authorization, opt-in with
//! `FakeClusterBuilder::authentication`, answered as kube-apiserver answers.

use std::process::Command;

use axum::body::Body;
use http::Request;
use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{ClusterRole, Role, RoleBinding};
use kube::api::{Api, ListParams, PostParams};
use ocm_testkit::{FakeCluster, FakeHub, Identity};
use serde_json::{Value, json};
use tower::ServiceExt;

async fn raw(cluster: &FakeCluster, req: Request<Body>) -> (u16, Value) {
    let resp = cluster.router().oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn status_of(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(s) => (s.code, s.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}})).unwrap()
}

async fn create_ns<K>(client: &kube::Client, ns: &str, v: Value)
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + serde::de::DeserializeOwned
        + serde::Serialize
        + Clone
        + std::fmt::Debug,
{
    let obj: K = serde_json::from_value(v).unwrap();
    Api::<K>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &obj)
        .await
        .unwrap();
}

async fn create_cluster<K>(client: &kube::Client, v: Value)
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::ClusterResourceScope>
        + serde::de::DeserializeOwned
        + serde::Serialize
        + Clone
        + std::fmt::Debug,
{
    let obj: K = serde_json::from_value(v).unwrap();
    Api::<K>::all(client.clone())
        .create(&PostParams::default(), &obj)
        .await
        .unwrap();
}

#[tokio::test]
async fn tokens_authenticate_and_unknown_ones_are_401() {
    let cluster = FakeCluster::builder()
        .identity(Identity::new("alice", ["devs"]).with_token("alice-token"))
        .build();
    let get = |token: Option<&str>, path: &str| {
        let mut r = Request::get(path);
        if let Some(t) = token {
            r = r.header("authorization", format!("Bearer {t}"));
        }
        r.body(Body::empty()).unwrap()
    };
    let (code, body) = raw(&cluster, get(Some("nobody's"), "/api/v1/namespaces")).await;
    assert_eq!(code, 401);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
    );

    // Without a token: the anonymous user, allowed only public information.
    let (code, _) = raw(&cluster, get(None, "/version")).await;
    assert_eq!(code, 200);
    let (code, body) = raw(&cluster, get(None, "/api")).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/api\""
    );
    let (code, body) = raw(&cluster, get(None, "/api/v1/namespaces/default/configmaps")).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );

    // alice is authenticated (discovery works) but holds no resource permissions.
    let (code, _) = raw(&cluster, get(Some("alice-token"), "/apis")).await;
    assert_eq!(code, 200);
    let (code, body) = raw(
        &cluster,
        get(
            Some("alice-token"),
            "/apis/apps/v1/namespaces/team/deployments/web",
        ),
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "deployments.apps \"web\" is forbidden: User \"alice\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"team\""
    );
    assert_eq!(
        body["details"],
        json!({"name": "web", "group": "apps", "kind": "deployments"})
    );
    let (code, body) = raw(&cluster, get(Some("alice-token"), "/api/v1/nodes")).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "nodes is forbidden: User \"alice\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
    );
}

#[tokio::test]
async fn rbac_grants_exactly_what_it_says_and_the_default_client_stays_admin() {
    let cluster = FakeCluster::builder()
        .identity(Identity::new("alice", Vec::<String>::new()))
        .identity(Identity::new("root", ["system:masters"]))
        .build();
    let admin = cluster.client();
    // The default client is the administrator: existing callers keep working.
    Api::<ConfigMap>::namespaced(admin.clone(), "team")
        .create(&PostParams::default(), &cm("settings"))
        .await
        .unwrap();

    let alice = cluster.client_as("alice").unwrap();
    let alice_cms: Api<ConfigMap> = Api::namespaced(alice.clone(), "team");
    let (code, message) = status_of(alice_cms.get("settings").await.unwrap_err());
    assert_eq!(code, 403);
    assert_eq!(
        message,
        "configmaps \"settings\" is forbidden: User \"alice\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"team\""
    );

    create_ns::<Role>(
        &admin,
        "team",
        json!({"metadata": {"name": "read", "namespace": "team"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}),
    )
    .await;
    create_ns::<RoleBinding>(
        &admin,
        "team",
        json!({"metadata": {"name": "alice-read", "namespace": "team"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read"},
        "subjects": [{"kind": "User", "name": "alice"}]}),
    )
    .await;
    assert_eq!(
        alice_cms
            .get("settings")
            .await
            .unwrap()
            .metadata
            .name
            .as_deref(),
        Some("settings")
    );
    assert_eq!(
        alice_cms
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    let (code, message) = status_of(
        alice_cms
            .create(&PostParams::default(), &cm("mine"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert_eq!(
        message,
        "configmaps is forbidden: User \"alice\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"team\""
    );
    let other: Api<ConfigMap> = Api::namespaced(alice.clone(), "default");
    assert_eq!(
        status_of(other.list(&ListParams::default()).await.unwrap_err()).0,
        403
    );

    // system:masters needs no binding.
    let root: Api<ConfigMap> = Api::namespaced(cluster.client_as("root").unwrap(), "anywhere");
    root.create(&PostParams::default(), &cm("x")).await.unwrap();

    // A SelfSubjectAccessReview answers for the requester.
    let review: SelfSubjectAccessReview = serde_json::from_value(json!({
        "spec": {"resourceAttributes": {"namespace": "team", "verb": "delete", "resource": "configmaps"}}
    }))
    .unwrap();
    let ssar: Api<SelfSubjectAccessReview> = Api::all(alice.clone());
    let out = ssar.create(&PostParams::default(), &review).await.unwrap();
    assert!(!out.status.unwrap().allowed);
    let review: SelfSubjectAccessReview = serde_json::from_value(json!({
        "spec": {"resourceAttributes": {"namespace": "team", "verb": "get", "resource": "configmaps"}}
    }))
    .unwrap();
    assert!(
        ssar.create(&PostParams::default(), &review)
            .await
            .unwrap()
            .status
            .unwrap()
            .allowed
    );
}

#[tokio::test]
async fn impersonation_needs_the_impersonate_verb() {
    let cluster = FakeCluster::builder()
        .identity(Identity::new("alice", Vec::<String>::new()).with_token("alice"))
        .identity(Identity::new("bob", Vec::<String>::new()))
        .build();
    let as_alice_impersonating = |user: &str, group: Option<&str>| {
        let mut r = Request::get("/api/v1/namespaces/team/configmaps")
            .header("authorization", "Bearer alice")
            .header("impersonate-user", user);
        if let Some(g) = group {
            r = r.header("impersonate-group", g);
        }
        r.body(Body::empty()).unwrap()
    };
    let (code, body) = raw(&cluster, as_alice_impersonating("bob", None)).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );

    let admin = cluster.client();
    create_cluster::<ClusterRole>(&admin, json!({"metadata": {"name": "impersonate-bob"},
        "rules": [{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["bob"]}]}))
    .await;
    create_cluster::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>(&admin, json!({"metadata": {"name": "alice-impersonates"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "impersonate-bob"},
        "subjects": [{"kind": "User", "name": "alice"}]}))
    .await;
    // Now alice acts as bob, who may not list configmaps.
    let (code, body) = raw(&cluster, as_alice_impersonating("bob", None)).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"team\""
    );
    // Impersonating a group needs its own grant.
    let (code, body) = raw(
        &cluster,
        as_alice_impersonating("bob", Some("system:masters")),
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "groups \"system:masters\" is forbidden: User \"alice\" cannot impersonate resource \"groups\" in API group \"\" at the cluster scope"
    );
    // Someone else than bob is not covered by the grant.
    let (code, _) = raw(&cluster, as_alice_impersonating("carol", None)).await;
    assert_eq!(code, 403);
}

/// #18.6: a managed cluster's agent reaches only its own namespace on the hub.
#[tokio::test]
async fn a_cluster_agent_cannot_write_another_clusters_namespace() {
    let hub = FakeHub::with_builder(FakeCluster::builder().authentication(true), 2).unwrap();
    let agent = hub
        .hub()
        .client_as(&FakeHub::agent_user("cluster1"))
        .unwrap();
    let work = json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "w"}, "spec": {"workload": {"manifests": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}}]}}
    });
    let works = |ns: &str| {
        let ar = kube::discovery::ApiResource {
            group: "work.open-cluster-management.io".into(),
            version: "v1".into(),
            api_version: "work.open-cluster-management.io/v1".into(),
            kind: "ManifestWork".into(),
            plural: "manifestworks".into(),
        };
        (
            Api::<kube::api::DynamicObject>::namespaced_with(hub.hub().client(), ns, &ar),
            Api::<kube::api::DynamicObject>::namespaced_with(agent.clone(), ns, &ar),
        )
    };
    let obj: kube::api::DynamicObject = serde_json::from_value(work).unwrap();
    for ns in ["cluster1", "cluster2"] {
        works(ns)
            .0
            .create(&PostParams::default(), &obj)
            .await
            .unwrap();
    }
    // Its own namespace: read and update, as upstream's work ClusterRole allows.
    let (_, own) = works("cluster1");
    assert_eq!(
        own.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    own.patch(
        "w",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"labels": {"seen": "yes"}}})),
    )
    .await
    .unwrap();
    // Not create, not other namespaces.
    let (code, message) = status_of(own.create(&PostParams::default(), &obj).await.unwrap_err());
    assert_eq!(code, 403);
    assert_eq!(
        message,
        "manifestworks.work.open-cluster-management.io is forbidden: User \"system:open-cluster-management:cluster1:agent\" cannot create resource \"manifestworks\" in API group \"work.open-cluster-management.io\" in the namespace \"cluster1\""
    );
    let (_, other) = works("cluster2");
    let (code, message) = status_of(other.get("w").await.unwrap_err());
    assert_eq!(code, 403);
    assert_eq!(
        message,
        "manifestworks.work.open-cluster-management.io \"w\" is forbidden: User \"system:open-cluster-management:cluster1:agent\" cannot get resource \"manifestworks\" in API group \"work.open-cluster-management.io\" in the namespace \"cluster2\""
    );
    let cms: Api<ConfigMap> = Api::namespaced(agent.clone(), "cluster2");
    let (code, message) = status_of(
        cms.create(&PostParams::default(), &cm("x"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert_eq!(
        message,
        "configmaps is forbidden: User \"system:open-cluster-management:cluster1:agent\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"cluster2\""
    );
}

/// #18.6: RBAC escalation prevention, as kube-apiserver's RBAC storage does it.
#[tokio::test]
async fn an_executor_allowed_only_to_create_rolebindings_cannot_bind_cluster_admin() {
    let executor = Identity::service_account("team", "executor");
    let user = executor.user.clone();
    let cluster = FakeCluster::builder().identity(executor).build();
    let admin = cluster.client();
    create_ns::<Role>(&admin, "team", json!({"metadata": {"name": "binder", "namespace": "team"},
        "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings", "roles"], "verbs": ["create"]}]}))
    .await;
    create_ns::<RoleBinding>(
        &admin,
        "team",
        json!({"metadata": {"name": "executor-binds", "namespace": "team"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "binder"},
        "subjects": [{"kind": "ServiceAccount", "name": "executor", "namespace": "team"}]}),
    )
    .await;

    let client = cluster.client_as(&user).unwrap();
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), "team");
    let binding = |name: &str, kind: &str, role: &str| -> RoleBinding {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "team"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
            "subjects": [{"kind": "User", "name": "mallory"}]}))
        .unwrap()
    };
    let (code, message) = status_of(
        bindings
            .create(
                &PostParams::default(),
                &binding("pwn", "ClusterRole", "cluster-admin"),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert_eq!(
        message,
        format!(
            "rolebindings.rbac.authorization.k8s.io \"pwn\" is forbidden: user \"{user}\" (groups=[\"system:serviceaccounts\" \"system:serviceaccounts:team\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}}\n{{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}}"
        )
    );
    // Binding what it holds itself is fine; a role that does not exist is 404.
    bindings
        .create(&PostParams::default(), &binding("same", "Role", "binder"))
        .await
        .unwrap();
    let (code, message) = status_of(
        bindings
            .create(&PostParams::default(), &binding("ghost", "Role", "nothing"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code, message.as_str()),
        (404, "roles.rbac.authorization.k8s.io \"nothing\" not found")
    );

    // Roles are checked the same way.
    let roles: Api<Role> = Api::namespaced(client.clone(), "team");
    let role: Role =
        serde_json::from_value(json!({"metadata": {"name": "secrets", "namespace": "team"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]}))
        .unwrap();
    let (code, message) = status_of(
        roles
            .create(&PostParams::default(), &role)
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert!(
        message.ends_with("is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\"]}"),
        "{message}"
    );

    // With the bind verb on cluster-admin the same binding goes through.
    create_ns::<Role>(&admin, "team", json!({"metadata": {"name": "bind-admin", "namespace": "team"},
        "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["bind"], "resourceNames": ["cluster-admin"]}]}))
    .await;
    create_ns::<RoleBinding>(
        &admin,
        "team",
        json!({"metadata": {"name": "executor-bind-admin", "namespace": "team"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "bind-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "executor", "namespace": "team"}]}),
    )
    .await;
    bindings
        .create(
            &PostParams::default(),
            &binding("granted", "ClusterRole", "cluster-admin"),
        )
        .await
        .unwrap();
}

fn kubectl_available() -> bool {
    let found = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("kubectl is required in CI (CI=true) but was not found on PATH");
        }
        eprintln!("SKIPPED: kubectl not found on PATH; end-to-end kubectl tests did not run");
    }
    found
}

/// #18.6 end to end: kubectl with cluster1's agent kubeconfig cannot write cluster2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_as_a_cluster_agent_is_forbidden_in_another_clusters_namespace() {
    if !kubectl_available() {
        return;
    }
    let hub = FakeHub::with_builder(FakeCluster::builder().authentication(true), 2).unwrap();
    let server = hub.hub().serve_loopback().await.unwrap();
    let dir = std::env::temp_dir().join(format!(
        "ocm-testkit-auth-{}-{}",
        std::process::id(),
        server.addr().port()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let agent_cfg = dir.join("cluster1-agent.kubeconfig");
    server
        .write_kubeconfig_as(&FakeHub::agent_user("cluster1"), &agent_cfg)
        .unwrap();
    let admin_cfg = dir.join("admin.kubeconfig");
    server.write_kubeconfig(&admin_cfg).unwrap();
    let bad_cfg = dir.join("bad.kubeconfig");
    std::fs::write(
        &bad_cfg,
        server
            .kubeconfig_yaml_as(&FakeHub::agent_user("cluster1"))
            .unwrap()
            .replace("token: \"ocm-testkit-", "token: \"wrong-"),
    )
    .unwrap();
    let kubectl = |cfg: &std::path::Path, args: &[&str]| {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(cfg)
            .arg("--cache-dir")
            .arg(dir.join(format!(
                "cache-{}",
                cfg.file_name().unwrap().to_string_lossy()
            )))
            .args(args)
            .env_remove("KUBECONFIG");
        async move {
            let out = tokio::task::spawn_blocking(move || cmd.output())
                .await
                .unwrap()
                .unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
    };
    let (ok, _, err) = kubectl(
        &agent_cfg,
        &[
            "create",
            "configmap",
            "x",
            "-n",
            "cluster2",
            "--from-literal=a=b",
        ],
    )
    .await;
    assert!(!ok);
    assert!(
        err.contains("configmaps is forbidden: User \"system:open-cluster-management:cluster1:agent\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"cluster2\""),
        "{err}"
    );
    let (ok, _, err) = kubectl(&agent_cfg, &["get", "manifestworks", "-n", "cluster2"]).await;
    assert!(!ok);
    assert!(err.contains("(Forbidden)"), "{err}");
    let (ok, out, err) = kubectl(&agent_cfg, &["get", "manifestworks", "-n", "cluster1"]).await;
    assert!(ok, "{err}");
    assert!(out.is_empty() || out.contains("No resources"), "{out}");
    let (ok, _, err) = kubectl(
        &agent_cfg,
        &["auth", "can-i", "create", "configmaps", "-n", "cluster2"],
    )
    .await;
    assert!(!ok, "{err}");
    let (ok, _, err) = kubectl(&bad_cfg, &["get", "manifestworks", "-n", "cluster1"]).await;
    assert!(!ok);
    assert!(
        err.contains("Unauthorized") || err.contains("must be logged in"),
        "{err}"
    );
    // The admin kubeconfig can.
    let (ok, _, err) = kubectl(
        &admin_cfg,
        &[
            "create",
            "configmap",
            "x",
            "-n",
            "cluster2",
            "--from-literal=a=b",
        ],
    )
    .await;
    assert!(ok, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The loopback server with authentication speaks HTTPS; its clients trust its test CA.
#[tokio::test]
async fn loopback_clients_authenticate_over_https() {
    let hub = FakeHub::with_builder(FakeCluster::builder().authentication(true), 2).unwrap();
    let server = hub.hub().serve_loopback().await.unwrap();
    assert!(server.url().starts_with("https://127.0.0.1:"));
    let admin = server.client().unwrap();
    Api::<ConfigMap>::namespaced(admin, "cluster2")
        .create(&PostParams::default(), &cm("by-admin"))
        .await
        .unwrap();
    let agent = server.client_as(&FakeHub::agent_user("cluster1")).unwrap();
    let (code, message) = status_of(
        Api::<ConfigMap>::namespaced(agent, "cluster2")
            .get("by-admin")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert_eq!(
        message,
        "configmaps \"by-admin\" is forbidden: User \"system:open-cluster-management:cluster1:agent\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"cluster2\""
    );
    assert!(server.client_as("nobody").is_err());
    // Without authentication nothing changes: plain HTTP, everyone is an administrator.
    let plain = FakeCluster::new().serve_loopback().await.unwrap();
    assert!(plain.url().starts_with("http://"));
    assert!(!plain.kubeconfig_yaml().contains("token"));
}
