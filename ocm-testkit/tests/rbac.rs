//! SubjectAccessReviews answered from RBAC objects, including aggregation.

use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, PostParams};
use ocm_testkit::FakeCluster;
use serde_json::json;

async fn can(
    cluster: &FakeCluster,
    user: &str,
    ns: &str,
    verb: &str,
    group: &str,
    resource: &str,
) -> bool {
    let api: Api<SubjectAccessReview> = Api::all(cluster.client());
    let review: SubjectAccessReview = serde_json::from_value(json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": ["system:authenticated"],
                 "resourceAttributes": {"namespace": ns, "verb": verb, "group": group, "resource": resource}}
    }))
    .unwrap();
    let out = api.create(&PostParams::default(), &review).await.unwrap();
    out.status.unwrap().allowed
}

#[tokio::test]
async fn reviews_follow_rbac_objects() {
    let cluster = FakeCluster::new();
    let client = cluster.client();
    let create = |v: serde_json::Value| v;
    let roles: Api<Role> = Api::namespaced(client.clone(), "team");
    let rbs: Api<RoleBinding> = Api::namespaced(client.clone(), "team");
    let crs: Api<ClusterRole> = Api::all(client.clone());
    let crbs: Api<ClusterRoleBinding> = Api::all(client.clone());

    roles.create(&PostParams::default(), &serde_json::from_value(create(json!({
        "metadata": {"name": "cm-reader", "namespace": "team"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]
    }))).unwrap()).await.unwrap();
    rbs.create(&PostParams::default(), &serde_json::from_value(json!({
        "metadata": {"name": "alice-reads", "namespace": "team"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
        "subjects": [{"kind": "User", "name": "alice"}]
    })).unwrap()).await.unwrap();

    assert!(can(&cluster, "alice", "team", "get", "", "configmaps").await);
    assert!(!can(&cluster, "alice", "team", "delete", "", "configmaps").await);
    assert!(!can(&cluster, "alice", "other", "get", "", "configmaps").await);
    assert!(!can(&cluster, "bob", "team", "get", "", "configmaps").await);

    // Aggregated ClusterRole picks up rules from labelled roles.
    crs.create(
        &PostParams::default(),
        &serde_json::from_value(json!({
            "metadata": {"name": "aggregate"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "yes"}}]},
            "rules": []
        }))
        .unwrap(),
    )
    .await
    .unwrap();
    crs.create(
        &PostParams::default(),
        &serde_json::from_value(json!({
            "metadata": {"name": "deploy-admin", "labels": {"agg": "yes"}},
            "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]}]
        }))
        .unwrap(),
    )
    .await
    .unwrap();
    crbs.create(&PostParams::default(), &serde_json::from_value(json!({
        "metadata": {"name": "bob-agg"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "aggregate"},
        "subjects": [{"kind": "User", "name": "bob"}]
    })).unwrap()).await.unwrap();
    assert!(can(&cluster, "bob", "anywhere", "delete", "apps", "deployments").await);
    assert!(!can(&cluster, "bob", "anywhere", "delete", "", "pods").await);
}

#[tokio::test]
async fn local_and_self_reviews() {
    use k8s_openapi::api::authorization::v1::{LocalSubjectAccessReview, SelfSubjectAccessReview};
    let cluster = FakeCluster::new();
    let local: Api<LocalSubjectAccessReview> = Api::namespaced(cluster.client(), "team");
    let review: LocalSubjectAccessReview = serde_json::from_value(json!({
        "metadata": {"namespace": "team"},
        "spec": {"user": "nobody", "resourceAttributes": {"namespace": "team", "verb": "get", "resource": "pods"}}
    }))
    .unwrap();
    let out = local.create(&PostParams::default(), &review).await.unwrap();
    assert!(!out.status.unwrap().allowed);
    let me: Api<SelfSubjectAccessReview> = Api::all(cluster.client());
    let review: SelfSubjectAccessReview = serde_json::from_value(json!({
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}
    }))
    .unwrap();
    assert!(
        me.create(&PostParams::default(), &review)
            .await
            .unwrap()
            .status
            .unwrap()
            .allowed
    );
}

#[tokio::test]
async fn impersonated_requests_are_authorized_when_enforcement_is_on() {
    use k8s_openapi::api::core::v1::ConfigMap;
    let cluster = FakeCluster::builder().enforce_impersonation(true).build();
    let client = cluster.client();
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "cfg", "namespace": "default"}}))
            .unwrap();
    // Without impersonation every caller is an administrator.
    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();

    let get_as = |user: &str| {
        http::Request::get("/api/v1/namespaces/default/configmaps/cfg")
            .header("Impersonate-User", user)
            .header("Impersonate-Group", "system:authenticated")
            .body(Vec::new())
            .unwrap()
    };
    let err = client
        .request::<serde_json::Value>(get_as("system:serviceaccount:default:reader"))
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 403);
            assert_eq!(
                status.message,
                "configmaps \"cfg\" is forbidden: User \"system:serviceaccount:default:reader\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"default\""
            );
        }
        other => panic!("expected 403, got {other:?}"),
    }

    let role: Role =
        serde_json::from_value(json!({"metadata": {"name": "read", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}))
        .unwrap();
    Api::<Role>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding: RoleBinding =
        serde_json::from_value(json!({"metadata": {"name": "read", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "default"}]}))
        .unwrap();
    Api::<RoleBinding>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    let got = client
        .request::<serde_json::Value>(get_as("system:serviceaccount:default:reader"))
        .await
        .expect("allowed after the grant");
    assert_eq!(got["metadata"]["name"], "cfg");
}

/// RBAC kinds validate names as path segments (kube-apiserver's `ValidatePathSegmentName`),
/// not as DNS subdomains: upstream's `open-cluster-management:<addon>:clusterrole:agent` is a
/// name; `/`, `%`, `.` and `..` are not.
#[tokio::test]
async fn rbac_names_are_path_segments() {
    let cluster = FakeCluster::new();
    let rbs: Api<RoleBinding> = Api::namespaced(cluster.client(), "cluster1");
    let binding = |name: &str| -> RoleBinding {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "cluster1"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "Group", "name": "system:open-cluster-management:cluster1"}]
        }))
        .unwrap()
    };
    let name = "open-cluster-management:hello:clusterrole:agent";
    rbs.create(&PostParams::default(), &binding(name))
        .await
        .unwrap();
    assert_eq!(
        rbs.get(name).await.unwrap().metadata.name.as_deref(),
        Some(name)
    );
    let crs: Api<ClusterRole> = Api::all(cluster.client());
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "Open-Cluster-Management:Hub_Reader"}, "rules": []
    }))
    .unwrap();
    crs.create(&PostParams::default(), &role).await.unwrap();
    for (bad, why) in [
        ("a/b", "may not contain '/'"),
        ("a%b", "may not contain '%'"),
        ("..", "may not be '..'"),
        (".", "may not be '.'"),
    ] {
        let err = match rbs.create(&PostParams::default(), &binding(bad)).await {
            Err(kube::Error::Api(e)) => e,
            other => panic!("{bad}: expected an API error, got {other:?}"),
        };
        assert_eq!(err.code, 422, "{bad}");
        assert!(
            err.message
                .contains(&format!("metadata.name: Invalid value: \"{bad}\": {why}")),
            "{bad}: {}",
            err.message
        );
    }
    // Other kinds keep DNS-subdomain names.
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(cluster.client(), "cluster1");
    let cm: k8s_openapi::api::core::v1::ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "a:b"}})).unwrap();
    let err = cms.create(&PostParams::default(), &cm).await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(e) if e.code == 422 && e.message.contains("RFC 1123 subdomain"))
    );
}
