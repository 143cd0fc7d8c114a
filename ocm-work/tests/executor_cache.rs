//! The executor validating cache (`ExecutorValidatingCaches`) against an in-process fake
//! managed cluster that answers SubjectAccessReviews from its RBAC objects.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use ocm_api::work::v1::{ManifestWork, ManifestWorkExecutor};
use ocm_testkit::{FakeCluster, FaultRule};
use ocm_work::executor::cache::{
    CacheController, Dimension, ExecuteAction, ExecutorCache, executor_key,
};
use ocm_work::executor::{ExecutorError, ExecutorValidator, Target};
use serde_json::{Value, json};

const SA_NS: &str = "default";
const SA: &str = "deployer";

fn executor() -> ManifestWorkExecutor {
    ManifestWorkExecutor::service_account(SA_NS, SA)
}

fn key() -> String {
    executor_key(SA_NS, SA)
}

fn secret_target(name: &str, owned: bool) -> Target<'_> {
    Target {
        group: "",
        version: "v1",
        resource: "secrets",
        namespace: "test",
        name,
        owned,
    }
}

fn secret(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "test"}})
}

fn reviews(cluster: &FakeCluster) -> usize {
    cluster
        .journal()
        .count(|e| e.resource.as_deref() == Some("subjectaccessreviews") && e.verb == "create")
}

async fn cluster_with(enforce_impersonation: bool) -> (FakeCluster, Client) {
    let cluster = FakeCluster::builder()
        .enforce_impersonation(enforce_impersonation)
        .build();
    let client = cluster.client();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for ns in ["default", "test"] {
        let object: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        let _ = namespaces.create(&PostParams::default(), &object).await;
    }
    (cluster, client)
}

async fn cluster() -> (FakeCluster, Client) {
    cluster_with(false).await
}

const ALL_VERBS: [&str; 5] = ["create", "update", "patch", "get", "delete"];

async fn create_role(client: &Client, name: &str, resources: &[&str], verbs: &[&str]) {
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "test"},
        "rules": [{"apiGroups": ["", "rbac.authorization.k8s.io"], "resources": resources, "verbs": verbs}]
    }))
    .unwrap();
    Api::<Role>::namespaced(client.clone(), "test")
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
}

/// The ClusterRole `secret-admin`: every verb on Secrets.
async fn create_secret_admin_cluster_role(client: &Client) {
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "secret-admin"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ALL_VERBS}]
    }))
    .unwrap();
    Api::<ClusterRole>::all(client.clone())
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
}

async fn create_role_binding(client: &Client, name: &str, role_kind: &str, role: &str) {
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "test"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": SA_NS}]
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(client.clone(), "test")
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
}

/// Polls until `cond` holds (5 s at most).
async fn eventually(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..500 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for: {what}");
}

fn not_allowed(name: &str) -> ExecutorError {
    ExecutorError::NotAllowed(format!(
        "not allowed to apply the resource  secrets, test {name}"
    ))
}

/// A running controller, stopped on drop.
struct Running {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
    }
}

type Works = Arc<Mutex<Vec<ManifestWork>>>;

fn start(client: &Client, cache: &ExecutorCache, works: &Works, cleanup: Duration) -> Running {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let works = works.clone();
    let controller = CacheController::new(client.clone(), cache.clone(), move || {
        works.lock().unwrap().clone()
    })
    .cleanup_interval(cleanup);
    let task = tokio::spawn(controller.run(async {
        let _ = rx.await;
    }));
    Running {
        stop: Some(tx),
        task,
    }
}

fn work_of(name: &str, manifests: Vec<Value>, delete_option: Option<Value>) -> ManifestWork {
    let mut spec = json!({
        "workload": {"manifests": manifests},
        "executor": {"subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": SA_NS, "name": SA}}}
    });
    if let Some(option) = delete_option {
        spec["deleteOption"] = option;
    }
    serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": "cluster1"},
        "spec": spec
    }))
    .unwrap()
}

#[tokio::test]
async fn cached_validation_gives_the_same_answers_as_live_validation() {
    let (_cluster, client) = cluster().await;
    let live = ExecutorValidator::new(client.clone());
    let cache = ExecutorCache::new();
    let cached = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let exec = executor();

    // Denied: same error, the retry suffix included.
    let target = secret_target("s", true);
    let a = live.validate(Some(&exec), target, &secret("s")).await;
    let b = cached.validate(Some(&exec), target, &secret("s")).await;
    assert_eq!(a, Err(not_allowed("s")));
    assert_eq!(a, b);
    assert_eq!(
        b.unwrap_err().to_string(),
        "not allowed to apply the resource  secrets, test s, will try again in 1m0s"
    );
    // From the cache: still the same denial.
    assert_eq!(
        cached.validate(Some(&exec), target, &secret("s")).await,
        Err(not_allowed("s"))
    );
    assert_eq!(
        cache.lookup(&key(), &Dimension::from_target(&target)),
        Some(false)
    );

    // No executor: allowed without any entry; a nil ServiceAccount is an ordinary error that is
    // not cached.
    assert_eq!(cached.validate(None, target, &secret("s")).await, Ok(()));
    let mut broken = executor();
    broken.subject.as_mut().unwrap().service_account = None;
    assert_eq!(
        cached.validate(Some(&broken), target, &secret("s")).await,
        Err(ExecutorError::Invalid(
            "the executor service account is nil".into()
        ))
    );
    assert_eq!(cache.len(), 1);
    // Any subject type but ServiceAccount (one a newer OCM may add), with or without a
    // service account, and a missing subject, get upstream's error.
    let only = Err(ExecutorError::Invalid(
        "only support ServiceAccount type for the executor".into(),
    ));
    broken.subject.as_mut().unwrap().type_ = "User".into();
    assert_eq!(
        cached.validate(Some(&broken), target, &secret("s")).await,
        only
    );
    let mut other_type = executor();
    other_type.subject.as_mut().unwrap().type_ = "Other".into();
    assert_eq!(
        live.validate(Some(&other_type), target, &secret("s")).await,
        only
    );
    assert_eq!(
        cached
            .validate(Some(&other_type), target, &secret("s"))
            .await,
        only
    );
    let mut no_subject = executor();
    no_subject.subject = None;
    assert_eq!(
        live.validate(Some(&no_subject), target, &secret("s")).await,
        only
    );
    assert_eq!(cache.len(), 1);

    // Allowed for another resource the executor may manage.
    create_role(&client, "secrets", &["secrets"], &ALL_VERBS).await;
    create_role_binding(&client, "secrets", "Role", "secrets").await;
    let other = secret_target("t", true);
    assert_eq!(
        live.validate(Some(&exec), other, &secret("t")).await,
        Ok(())
    );
    assert_eq!(
        cached.validate(Some(&exec), other, &secret("t")).await,
        Ok(())
    );
    assert_eq!(
        cache.lookup(&key(), &Dimension::from_target(&other)),
        Some(true)
    );
}

#[tokio::test]
async fn a_second_validation_of_the_same_dimension_sends_no_review() {
    let (cluster, client) = cluster().await;
    create_role(&client, "secrets", &["secrets"], &ALL_VERBS).await;
    create_role_binding(&client, "secrets", "Role", "secrets").await;
    let cache = ExecutorCache::new();
    let validator = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let exec = executor();

    let before = reviews(&cluster);
    validator
        .validate(Some(&exec), secret_target("s", true), &secret("s"))
        .await
        .unwrap();
    assert_eq!(
        reviews(&cluster) - before,
        5,
        "create, update, patch, get, delete"
    );
    validator
        .validate(Some(&exec), secret_target("s", true), &secret("s"))
        .await
        .unwrap();
    // A clone shares the cache.
    validator
        .clone()
        .validate(Some(&exec), secret_target("s", true), &secret("s"))
        .await
        .unwrap();
    assert_eq!(reviews(&cluster) - before, 5, "answered from the cache");

    // Not owned is another dimension (no delete review).
    validator
        .validate(Some(&exec), secret_target("s", false), &secret("s"))
        .await
        .unwrap();
    assert_eq!(reviews(&cluster) - before, 9);
    let entries = cache.entries(&key());
    assert_eq!(entries.len(), 2);
    assert_eq!(
        entries
            .iter()
            .map(|(d, allowed)| (d.execute_action, *allowed))
            .collect::<Vec<_>>(),
        vec![
            (ExecuteAction::ApplyAndDelete, Some(true)),
            (ExecuteAction::ApplyNoDelete, Some(true))
        ]
    );

    // A denial is cached as well: one review (the first verb), then none.
    let before = reviews(&cluster);
    let denied = Target {
        resource: "configmaps",
        ..secret_target("c", true)
    };
    for _ in 0..3 {
        assert!(matches!(
            validator.validate(Some(&exec), denied, &json!({})).await,
            Err(ExecutorError::NotAllowed(_))
        ));
    }
    assert_eq!(reviews(&cluster) - before, 1);
}

#[tokio::test]
async fn review_failures_are_not_cached() {
    let (cluster, client) = cluster().await;
    let cache = ExecutorCache::new();
    let validator = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let exec = executor();
    cluster.inject(
        FaultRule::new(500)
            .resource("subjectaccessreviews")
            .times(1),
    );
    let target = secret_target("s", true);
    let result = validator.validate(Some(&exec), target, &secret("s")).await;
    assert!(matches!(result, Err(ExecutorError::Api(_))), "{result:?}");
    assert!(cache.is_empty());
    let before = reviews(&cluster);
    assert_eq!(
        validator.validate(Some(&exec), target, &secret("s")).await,
        Err(not_allowed("s"))
    );
    assert_eq!(reviews(&cluster) - before, 1, "asked again");
    assert_eq!(
        cache.lookup(&key(), &Dimension::from_target(&target)),
        Some(false)
    );
}

#[tokio::test]
async fn granting_and_revoking_rbac_re_evaluates_the_executor() {
    let (cluster, client) = cluster().await;
    let cache = ExecutorCache::new();
    let validator = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let exec = executor();
    let target = secret_target("s", true);
    let dimension = Dimension::from_target(&target);
    assert_eq!(
        validator.validate(Some(&exec), target, &secret("s")).await,
        Err(not_allowed("s"))
    );
    let works: Works = Arc::default();
    let _controller = start(&client, &cache, &works, Duration::from_secs(3600));

    // Grant: Role, then the RoleBinding naming the ServiceAccount.
    create_role(&client, "secrets", &["secrets"], &ALL_VERBS).await;
    create_role_binding(&client, "secrets", "Role", "secrets").await;
    eventually("the grant is seen", || {
        cache.lookup(&key(), &dimension) == Some(true)
    })
    .await;
    let before = reviews(&cluster);
    assert_eq!(
        validator.validate(Some(&exec), target, &secret("s")).await,
        Ok(())
    );
    assert_eq!(reviews(&cluster), before, "answered from the cache");

    // Narrow the Role: delete is no longer allowed, so the owned dimension is denied.
    let mut role: Role = Api::<Role>::namespaced(client.clone(), "test")
        .get("secrets")
        .await
        .unwrap();
    role.rules.as_mut().unwrap()[0].verbs = vec![
        "create".into(),
        "update".into(),
        "patch".into(),
        "get".into(),
    ];
    Api::<Role>::namespaced(client.clone(), "test")
        .replace("secrets", &PostParams::default(), &role)
        .await
        .unwrap();
    eventually("the narrowed role is seen", || {
        cache.lookup(&key(), &dimension) == Some(false)
    })
    .await;

    // Widen it again, then revoke by deleting the binding.
    role = Api::<Role>::namespaced(client.clone(), "test")
        .get("secrets")
        .await
        .unwrap();
    role.rules.as_mut().unwrap()[0].verbs = ALL_VERBS.iter().map(|v| v.to_string()).collect();
    Api::<Role>::namespaced(client.clone(), "test")
        .replace("secrets", &PostParams::default(), &role)
        .await
        .unwrap();
    eventually("the widened role is seen", || {
        cache.lookup(&key(), &dimension) == Some(true)
    })
    .await;
    Api::<RoleBinding>::namespaced(client.clone(), "test")
        .delete("secrets", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the revocation is seen", || {
        cache.lookup(&key(), &dimension) == Some(false)
    })
    .await;
    assert_eq!(
        validator.validate(Some(&exec), target, &secret("s")).await,
        Err(not_allowed("s"))
    );
}

#[tokio::test]
async fn removing_the_service_account_from_a_binding_revokes() {
    let (cluster, client) = cluster().await;
    create_role(&client, "secrets", &["secrets"], &ALL_VERBS).await;
    create_role_binding(&client, "secrets", "Role", "secrets").await;
    let cache = ExecutorCache::new();
    let validator = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let exec = executor();
    let target = secret_target("s", true);
    validator
        .validate(Some(&exec), target, &secret("s"))
        .await
        .unwrap();
    let works: Works = Arc::default();
    let before = reviews(&cluster);
    let _controller = start(&client, &cache, &works, Duration::from_secs(3600));
    // The initial list of the binding re-evaluates the executor: the controller is watching.
    eventually("the initial re-evaluation", || {
        reviews(&cluster) >= before + 5
    })
    .await;

    let bindings = Api::<RoleBinding>::namespaced(client.clone(), "test");
    let mut binding = bindings.get("secrets").await.unwrap();
    binding.subjects = Some(vec![
        serde_json::from_value(
            json!({"kind": "ServiceAccount", "name": "someone-else", "namespace": SA_NS}),
        )
        .unwrap(),
    ]);
    bindings
        .replace("secrets", &PostParams::default(), &binding)
        .await
        .unwrap();
    let dimension = Dimension::from_target(&target);
    eventually("the subject removal is seen", || {
        cache.lookup(&key(), &dimension) == Some(false)
    })
    .await;
}

#[tokio::test]
async fn a_cluster_role_bound_only_by_a_role_binding_is_followed() {
    let (cluster, client) = cluster().await;
    let cache = ExecutorCache::new();
    let validator = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let exec = executor();
    let target = secret_target("s", true);
    let dimension = Dimension::from_target(&target);
    // The RoleBinding exists first, naming a ClusterRole that does not exist yet.
    create_role_binding(&client, "by-cluster-role", "ClusterRole", "secret-admin").await;
    assert_eq!(
        validator.validate(Some(&exec), target, &secret("s")).await,
        Err(not_allowed("s"))
    );
    let works: Works = Arc::default();
    let before = reviews(&cluster);
    let _controller = start(&client, &cache, &works, Duration::from_secs(3600));
    eventually("the initial re-evaluation", || reviews(&cluster) > before).await;

    // Only the ClusterRole changes: it is found through the RoleBinding.
    create_secret_admin_cluster_role(&client).await;
    let roles = Api::<ClusterRole>::all(client.clone());
    eventually("the cluster role is seen", || {
        cache.lookup(&key(), &dimension) == Some(true)
    })
    .await;
    let before = reviews(&cluster);
    validator
        .validate(Some(&exec), target, &secret("s"))
        .await
        .unwrap();
    assert_eq!(reviews(&cluster), before);

    roles
        .delete("secret-admin", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the cluster role deletion is seen", || {
        cache.lookup(&key(), &dimension) == Some(false)
    })
    .await;
}

#[tokio::test]
async fn a_cluster_role_binding_grant_is_followed() {
    let (_cluster, client) = cluster().await;
    create_secret_admin_cluster_role(&client).await;
    let cache = ExecutorCache::new();
    let validator = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let exec = executor();
    let target = secret_target("s", true);
    let dimension = Dimension::from_target(&target);
    assert!(
        validator
            .validate(Some(&exec), target, &secret("s"))
            .await
            .is_err()
    );
    let works: Works = Arc::default();
    let _controller = start(&client, &cache, &works, Duration::from_secs(3600));
    // Bound through the group every ServiceAccount of the namespace belongs to.
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "all-sa"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "secret-admin"},
        "subjects": [{"kind": "Group", "name": format!("system:serviceaccounts:{SA_NS}"), "apiGroup": "rbac.authorization.k8s.io"}]
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(client.clone())
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    eventually("the group grant is seen", || {
        cache.lookup(&key(), &dimension) == Some(true)
    })
    .await;
}

#[tokio::test]
async fn the_controller_pre_populates_from_works_and_evaluates_them() {
    let (cluster, client) = cluster().await;
    create_role(&client, "secrets", &["secrets"], &ALL_VERBS).await;
    create_role_binding(&client, "secrets", "Role", "secrets").await;
    let works: Works = Arc::new(Mutex::new(vec![work_of(
        "w",
        vec![
            secret("s"),
            // Cluster-scoped: the namespace is dropped.
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "cr", "namespace": "ignored"}}),
            // Not decodable / unknown kind: skipped.
            json!({"kind": "Secret"}),
            json!({"apiVersion": "example.com/v1", "kind": "Nope", "metadata": {"name": "x"}}),
        ],
        Some(json!({"propagationPolicy": "Orphan"})),
    )]));
    // A subject of another type is never validated (upstream's loader skips it too).
    let mut other_type = work_of("other-type", vec![secret("o")], None);
    if let Some(subject) = other_type
        .spec
        .executor
        .as_mut()
        .and_then(|e| e.subject.as_mut())
    {
        subject.type_ = "Other".into();
        if let Some(sa) = subject.service_account.as_mut() {
            sa.name = "other".into();
        }
    }
    works.lock().unwrap().push(other_type);
    let cache = ExecutorCache::new();
    let _controller = start(&client, &cache, &works, Duration::from_secs(3600));
    let orphaned = Dimension::from_target(&secret_target("s", false));
    let cluster_role = Dimension {
        group: "rbac.authorization.k8s.io".into(),
        version: "v1".into(),
        resource: "clusterroles".into(),
        namespace: String::new(),
        name: "cr".into(),
        execute_action: ExecuteAction::ApplyNoDelete,
    };
    eventually("pre-populated", || {
        cache.contains(&key(), &orphaned) && cache.contains(&key(), &cluster_role)
    })
    .await;
    assert_eq!(cache.len(), 2);
    assert!(!cache.contains(
        &executor_key(SA_NS, "other"),
        &Dimension::from_target(&secret_target("o", true))
    ));
    // The initial list of the binding re-evaluates the pre-populated executor.
    eventually("evaluated", || {
        cache.lookup(&key(), &orphaned) == Some(true)
            && cache.lookup(&key(), &cluster_role) == Some(false)
    })
    .await;
    let validator = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let before = reviews(&cluster);
    validator
        .validate(Some(&executor()), secret_target("s", false), &secret("s"))
        .await
        .unwrap();
    assert_eq!(reviews(&cluster), before);
}

#[tokio::test]
async fn cleanup_drops_entries_no_work_needs() {
    let (_cluster, client) = cluster().await;
    let cache = ExecutorCache::new();
    let validator = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let exec = executor();
    // Entries for two secrets of this executor and one of another executor.
    for name in ["keep", "drop"] {
        let _ = validator
            .validate(Some(&exec), secret_target(name, true), &secret(name))
            .await;
    }
    let other = ManifestWorkExecutor::service_account("default", "other");
    let _ = validator
        .validate(Some(&other), secret_target("keep", true), &secret("keep"))
        .await;
    assert_eq!(cache.len(), 3);

    let works: Works = Arc::new(Mutex::new(vec![work_of("w", vec![secret("keep")], None)]));
    let _controller = start(&client, &cache, &works, Duration::from_millis(100));
    let keep = Dimension::from_target(&secret_target("keep", true));
    eventually("unneeded entries dropped", || cache.len() == 1).await;
    assert_eq!(cache.executors(), vec![key()]);
    assert!(cache.contains(&key(), &keep));

    // The work goes away: everything is dropped at the next cleanup.
    works.lock().unwrap().clear();
    eventually("all entries dropped", || cache.is_empty()).await;
}

#[tokio::test]
async fn the_escalation_check_stays_live_on_a_cache_hit() {
    let (cluster, client) = cluster_with(true).await;
    create_role(&client, "rbac", &["roles"], &ALL_VERBS).await;
    create_role_binding(&client, "rbac", "Role", "rbac").await;
    let cache = ExecutorCache::new();
    let validator = ExecutorValidator::new(client.clone()).with_cache(cache.clone());
    let exec = executor();
    let target = Target {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "roles",
        namespace: "test",
        name: "made-by-work",
        owned: true,
    };
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "made-by-work", "namespace": "test"}, "rules": []});
    let dry_runs = || {
        cluster
            .journal()
            .count(|e| e.resource.as_deref() == Some("roles") && e.query.contains("dryRun"))
    };
    validator
        .validate(Some(&exec), target, &role)
        .await
        .unwrap();
    assert_eq!(dry_runs(), 1);
    assert_eq!(
        cache.lookup(&key(), &Dimension::from_target(&target)),
        Some(true)
    );

    // Revoke without a controller: the reviews come from the cache (still allowed), but the
    // dry run impersonating the ServiceAccount is forbidden.
    Api::<RoleBinding>::namespaced(client.clone(), "test")
        .delete("rbac", &DeleteParams::default())
        .await
        .unwrap();
    let before = reviews(&cluster);
    let error = validator
        .validate(Some(&exec), target, &role)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "not allowed to apply the resource rbac.authorization.k8s.io roles, test made-by-work, \
         error: permission escalation, will try again in 1m0s"
    );
    assert_eq!(reviews(&cluster), before, "no review: cached");
    assert_eq!(dry_runs(), 2, "the dry run ran again");
}
