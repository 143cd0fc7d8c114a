//! Issue #17: a ManifestWork whose condition rules (or jq ignore fields) are nested deep must
//! not crash the work agent. The agent runs on tokio worker threads (2 MiB stacks); the work
//! with the deep rules gets conditions with cel-go's errors, the one with the deep jq
//! expression an `Applied` condition with upstream's reason, and another work on the same
//! cluster still converges.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, PostParams};
use ocm_api::clock::ManualClock;
use ocm_api::conditions;
use ocm_api::work::v1::ManifestWork;
use ocm_testkit::FakeCluster;
use ocm_testkit::wait::eventually;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use serde_json::{Value, json};

const CLUSTER: &str = "cluster1";

async fn install(client: &Client, namespaces: &[&str]) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ocm_api::crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("install CRD");
    }
    let api: Api<Namespace> = Api::all(client.clone());
    for ns in namespaces {
        let object: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        let _ = api.create(&PostParams::default(), &object).await;
    }
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}})
}

async fn create_work(client: &Client, name: &str, spec: Value) {
    let work: ManifestWork = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": CLUSTER}, "spec": spec
    }))
    .unwrap();
    Api::<ManifestWork>::namespaced(client.clone(), CLUSTER)
        .create(&PostParams::default(), &work)
        .await
        .expect("create work");
}

/// Manifest 0's condition `type_` of work `name`: (status, reason, message).
async fn condition(client: &Client, name: &str, type_: &str) -> Option<(String, String, String)> {
    let w = Api::<ManifestWork>::namespaced(client.clone(), CLUSTER)
        .get_opt(name)
        .await
        .ok()??;
    let manifests = w.status?.resource_status?.manifests?;
    let c = conditions::find(&manifests.first()?.conditions, type_)?;
    Some((c.status.clone(), c.reason.clone(), c.message.clone()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_condition_rules_fail_their_work_only() {
    let hub = FakeCluster::new();
    let spoke = FakeCluster::new();
    let hub_client = hub.client();
    let spoke_client = spoke.client();
    install(&hub_client, &[CLUSTER]).await;
    install(&spoke_client, &["default"]).await;

    let nest = |n: usize, inner: &str| format!("{}{inner}{}", "(".repeat(n), ")".repeat(n));
    create_work(&hub_client, "deep", json!({
        "workload": {"manifests": [configmap("deep")]},
        "manifestConfigs": [{
            "resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "deep"},
            "conditionRules": [
                {"type": "CEL", "condition": "Shallow",
                 "celExpressions": [nest(30, "object.data.k == 'v'")]},
                {"type": "CEL", "condition": "Deep", "celExpressions": [nest(10_000, "true")]},
                {"type": "CEL", "condition": "Chain",
                 "celExpressions": [format!("object{}", ".data".repeat(10_000))]},
                {"type": "CEL", "condition": "Costly", "celExpressions": [
                    "lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, true)))"]},
                {"type": "CEL", "condition": "DeepMessage", "celExpressions": ["true"],
                 "messageExpression": nest(10_000, "'m'")}
            ]
        }]
    }))
    .await;
    let deep_jq = nest(10_000, ".data.k");
    create_work(&hub_client, "deepjq", json!({
        "workload": {"manifests": [configmap("deepjq")]},
        "manifestConfigs": [{
            "resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "deepjq"},
            "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {"force": true, "ignoreFields": [
                {"condition": "OnSpokePresent", "jqPathExpressions": [deep_jq]}]}}
        }]
    }))
    .await;
    create_work(
        &hub_client,
        "healthy",
        json!({"workload": {"manifests": [configmap("healthy")]}}),
    )
    .await;

    let config = AgentConfig::new(CLUSTER, hub_hash("https://hub.example.com:6443"))
        .status_sync_interval(Duration::from_millis(200));
    let agent = WorkAgent::new(hub_client.clone(), spoke_client.clone(), config).with_clock(
        Arc::new(ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap())),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // On a tokio worker thread, as in the agent binary.
    let running = tokio::spawn(agent.run(async move {
        let _ = stopped.await;
    }));

    let too_deep = "ERROR: <input>:-1:0: expression recursion limit exceeded: 250";
    let expected = [
        (
            "Shallow",
            "True",
            "ConditionRuleEvaluated",
            "Manifest is Shallow",
        ),
        ("Deep", "False", "ConditionRuleExpressionError", too_deep),
        ("Chain", "False", "ConditionRuleExpressionError", too_deep),
        (
            "Costly",
            "False",
            "ConditionRuleExpressionError",
            "operation cancelled: actual cost limit exceeded",
        ),
        ("DeepMessage", "True", "ConditionRuleEvaluated", too_deep),
    ];
    for (type_, status, reason, message) in expected {
        let want = Some((status.to_string(), reason.to_string(), message.to_string()));
        assert!(
            eventually(Duration::from_secs(30), || async {
                condition(&hub_client, "deep", type_).await == want
            })
            .await,
            "{type_}: {:?}",
            condition(&hub_client, "deep", type_).await
        );
    }
    // A jq path expression 10,000 levels deep fails its manifest with upstream's reason.
    assert!(
        eventually(Duration::from_secs(30), || async {
            condition(&hub_client, "deepjq", "Applied")
                .await
                .is_some_and(|(status, reason, message)| {
                    status == "False"
                        && reason == "AppliedManifestSSAIgnoreFieldError"
                        && message.ends_with("failed to parse jq expression: expression has more than 1000 brackets, keywords and operators")
                        && message.len() < 2_000
                })
        })
        .await,
        "deepjq: {:?}",
        condition(&hub_client, "deepjq", "Applied").await
    );
    // The deep work's manifest is applied all the same, and so is the other work's.
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke_client.clone(), "default");
    for name in ["deep", "healthy"] {
        assert!(
            eventually(Duration::from_secs(30), || async {
                configmaps.get_opt(name).await.unwrap().is_some()
            })
            .await,
            "{name} applied"
        );
    }
    assert!(
        eventually(Duration::from_secs(30), || async {
            condition(&hub_client, "healthy", "Available")
                .await
                .is_some_and(|c| c.0 == "True")
        })
        .await,
        "the other work converges"
    );
    assert!(!running.is_finished(), "the agent is still running");
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), running).await;
}
