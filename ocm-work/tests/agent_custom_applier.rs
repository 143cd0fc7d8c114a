//! Custom appliers plugged into the work agent (`WorkAgent::with_appliers`), end to end between
//! two in-process fake clusters: an applier for one kind that delegates to the built-in
//! `Update`, an applier replacing a strategy, and one that fails.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{Api, DeleteParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::conditions;
use ocm_api::work::v1::{AppliedManifestWork, ManifestWork, UpdateStrategyType};
use ocm_testkit::FakeCluster;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::apply::applier::{Applier, Appliers, ApplyRequest};
use ocm_work::apply::engine::ApplyError;
use ocm_work::apply::update::UpdateApplier;
use ocm_work::identity::{applied_manifest_work_name, hub_hash};
use serde_json::{Value, json};

const CLUSTER: &str = "cluster1";

/// Labels every object it applies with the strategy it was asked for, counts its calls, then
/// applies as `Update` does.
#[derive(Default)]
struct Labelling {
    calls: Arc<AtomicUsize>,
}

impl Applier for Labelling {
    fn apply<'a>(
        &'a self,
        mut request: ApplyRequest<'a>,
    ) -> BoxFuture<'a, Result<Value, ApplyError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let strategy = request.strategy().to_string();
            if let Some(meta) = request
                .required
                .get_mut("metadata")
                .and_then(Value::as_object_mut)
            {
                let labels = meta.entry("labels").or_insert_with(|| json!({}));
                labels["example.com/strategy"] = json!(strategy);
            }
            UpdateApplier.apply(request).await
        })
    }
}

/// Refuses everything with a message of its own.
struct Refusing;

impl Applier for Refusing {
    fn apply<'a>(&'a self, request: ApplyRequest<'a>) -> BoxFuture<'a, Result<Value, ApplyError>> {
        Box::pin(async move {
            Err(ApplyError::Api(format!(
                "refusing to apply {} {}",
                request.resolved.api_resource.kind,
                request.name()
            )))
        })
    }
}

async fn setup(appliers: Appliers) -> (FakeCluster, FakeCluster, WorkAgent) {
    let hub = FakeCluster::new();
    let spoke = FakeCluster::new();
    ocm_testkit::install_crds(&hub).expect("crds");
    ocm_testkit::install_crds(&spoke).expect("crds");
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": CLUSTER}})).unwrap();
    Api::<Namespace>::all(hub.client())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace");
    let config = AgentConfig::new(CLUSTER, hub_hash("https://hub.example.com:6443"))
        .resync_interval(Duration::ZERO);
    let agent = WorkAgent::new(hub.client(), spoke.client(), config).with_appliers(appliers);
    (hub, spoke, agent)
}

async fn create_work(hub: &Client, name: &str, spec: Value) {
    let work: ManifestWork = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": CLUSTER}, "spec": spec
    }))
    .unwrap();
    Api::<ManifestWork>::namespaced(hub.clone(), CLUSTER)
        .create(&PostParams::default(), &work)
        .await
        .expect("create work");
}

async fn work(hub: &Client, name: &str) -> ManifestWork {
    Api::<ManifestWork>::namespaced(hub.clone(), CLUSTER)
        .get(name)
        .await
        .expect("work")
}

fn applied(work: &ManifestWork, ordinal: usize) -> (String, String, String) {
    let manifest = &work
        .status
        .as_ref()
        .and_then(|s| s.resource_status.as_ref())
        .and_then(|r| r.manifests.as_ref())
        .expect("manifests")[ordinal];
    let c = conditions::find(&manifest.conditions, "Applied").expect("Applied");
    (c.status.clone(), c.reason.clone(), c.message.clone())
}

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"}, "data": {"k": value}})
}

fn secret(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": "default"}, "stringData": {"k": "v"}})
}

#[tokio::test]
async fn a_kind_applier_runs_end_to_end_through_the_agent() {
    let labelling = Labelling::default();
    let calls = labelling.calls.clone();
    let (hub, spoke, agent) =
        setup(Appliers::default().with_kind("", "ConfigMap", labelling)).await;
    create_work(
        &hub.client(),
        "custom",
        json!({"workload": {"manifests": [configmap("cm", "v1"), secret("s")]},
            "manifestConfigs": [{"resourceIdentifier": {"resource": "configmaps",
                "namespace": "default", "name": "cm"}, "updateStrategy": {"type": "CreateOnly"}}]}),
    )
    .await;
    agent.sync_all().await.expect("sync");

    // The ConfigMap went through the custom applier (whatever its strategy), the Secret
    // through the built-in Update.
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    let cm = configmaps.get("cm").await.expect("configmap applied");
    assert_eq!(cm.labels()["example.com/strategy"], "CreateOnly");
    assert_eq!(cm.data.as_ref().unwrap()["k"], "v1");
    let amw_name = applied_manifest_work_name(&hub_hash("https://hub.example.com:6443"), "custom");
    assert_eq!(cm.owner_references()[0].name, amw_name, "owned by the work");
    let secrets: Api<Secret> = Api::namespaced(spoke.client(), "default");
    let s = secrets.get("s").await.expect("secret applied");
    assert!(s.labels().get("example.com/strategy").is_none());

    // Status and bookkeeping are the agent's as for any applier.
    let w = work(&hub.client(), "custom").await;
    for ordinal in [0, 1] {
        assert_eq!(applied(&w, ordinal).1, "AppliedManifestComplete");
    }
    let conds = w
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap();
    assert!(conditions::is_true(conds, "Applied"));
    assert!(conditions::is_true(conds, "Available"));
    let amw = Api::<AppliedManifestWork>::all(spoke.client())
        .get(&amw_name)
        .await
        .expect("AppliedManifestWork");
    let recorded = amw.status.and_then(|s| s.applied_resources).unwrap();
    assert_eq!(recorded.len(), 2);
    let cm_record = recorded.iter().find(|r| r.name == "cm").unwrap();
    assert_eq!(cm_record.uid, cm.metadata.uid);

    // A new generation goes through it again; the Update it delegates to replaces the data.
    let api = Api::<ManifestWork>::namespaced(hub.client(), CLUSTER);
    let mut w = api.get("custom").await.unwrap();
    w.spec = serde_json::from_value(json!({
        "workload": {"manifests": [configmap("cm", "v2"), secret("s")]},
        "manifestConfigs": [{"resourceIdentifier": {"resource": "configmaps",
            "namespace": "default", "name": "cm"}, "updateStrategy": {"type": "Update"}}]
    }))
    .unwrap();
    api.replace("custom", &PostParams::default(), &w)
        .await
        .unwrap();
    agent.sync_all().await.expect("sync");
    assert!(calls.load(Ordering::SeqCst) >= 2);
    assert_eq!(
        configmaps.get("cm").await.unwrap().labels()["example.com/strategy"],
        "Update"
    );
    assert_eq!(configmaps.get("cm").await.unwrap().data.unwrap()["k"], "v2");

    // Deleting the work deletes what the custom applier wrote, as any applied resource.
    api.delete("custom", &DeleteParams::default())
        .await
        .unwrap();
    for _ in 0..20 {
        agent.sync_all().await.expect("sync");
        if configmaps.get_opt("cm").await.unwrap().is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(configmaps.get_opt("cm").await.unwrap().is_none());
    assert!(secrets.get_opt("s").await.unwrap().is_none());
}

#[tokio::test]
async fn a_strategy_applier_and_its_errors_show_in_the_work_status() {
    let (hub, spoke, agent) =
        setup(Appliers::default().with_strategy(UpdateStrategyType::ReadOnly, Refusing)).await;
    create_work(
        &hub.client(),
        "refused",
        json!({"workload": {"manifests": [configmap("ro", "v1"), configmap("rw", "v1")]},
            "manifestConfigs": [{"resourceIdentifier": {"resource": "configmaps",
                "namespace": "default", "name": "ro"}, "updateStrategy": {"type": "ReadOnly"}}]}),
    )
    .await;
    agent.sync_all().await.expect("sync");
    let w = work(&hub.client(), "refused").await;
    assert_eq!(
        applied(&w, 0),
        (
            "False".to_string(),
            "AppliedManifestFailed".to_string(),
            "Failed to apply manifest: refusing to apply ConfigMap ro".to_string()
        )
    );
    assert_eq!(applied(&w, 1).1, "AppliedManifestComplete");
    let conds = w
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap();
    assert_eq!(
        conditions::find(conds, "Applied").unwrap().reason,
        "AppliedManifestWorkFailed"
    );
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    assert!(configmaps.get_opt("ro").await.unwrap().is_none());
    assert!(configmaps.get_opt("rw").await.unwrap().is_some());
}

/// A hub whose ManifestWork CRD accepts one more update strategy, `Replace`, as a newer OCM's
/// would; the agent runs with `appliers`.
async fn newer_hub_setup(appliers: Appliers) -> (FakeCluster, FakeCluster, WorkAgent) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    fn add_replace(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, child) in map.iter_mut() {
                    if k == "enum"
                        && let Value::Array(values) = child
                        && values.contains(&json!("ServerSideApply"))
                    {
                        values.push(json!("Replace"));
                    } else {
                        add_replace(child);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(add_replace),
            _ => {}
        }
    }
    let hub = FakeCluster::new();
    let mut crd = serde_json::to_value(
        ocm_api::crds()
            .into_iter()
            .find(|c| c.spec.names.kind == "ManifestWork")
            .expect("ManifestWork CRD"),
    )
    .unwrap();
    add_replace(&mut crd);
    assert!(crd.to_string().contains("\"Replace\""));
    let crd: CustomResourceDefinition = serde_json::from_value(crd).unwrap();
    Api::<CustomResourceDefinition>::all(hub.client())
        .create(&PostParams::default(), &crd)
        .await
        .expect("newer ManifestWork CRD");
    ocm_testkit::install_crds(&hub).expect("crds");
    let spoke = FakeCluster::new();
    ocm_testkit::install_crds(&spoke).expect("crds");
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": CLUSTER}})).unwrap();
    Api::<Namespace>::all(hub.client())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace");
    let config = AgentConfig::new(CLUSTER, hub_hash("https://hub.example.com:6443"))
        .resync_interval(Duration::ZERO);
    let agent = WorkAgent::new(hub.client(), spoke.client(), config).with_appliers(appliers);
    (hub, spoke, agent)
}

fn replace_work() -> Value {
    json!({"workload": {"manifests": [configmap("new", "v1"), configmap("old", "v1")]},
        "manifestConfigs": [{"resourceIdentifier": {"resource": "configmaps",
            "namespace": "default", "name": "new"}, "updateStrategy": {"type": "Replace"}}]})
}

#[tokio::test]
async fn an_update_strategy_this_agent_does_not_know_leaves_the_manifest_not_applied() {
    let (hub, spoke, agent) = newer_hub_setup(Appliers::default()).await;
    create_work(&hub.client(), "newer", replace_work()).await;
    agent.sync_all().await.expect("sync");
    let w = work(&hub.client(), "newer").await;
    // The work still decodes, and keeps the value it was given.
    let strategy = &w.spec.manifest_configs.as_ref().unwrap()[0]
        .update_strategy
        .as_ref()
        .unwrap()
        .type_;
    assert_eq!(strategy.as_str(), "Replace");
    assert_eq!(
        applied(&w, 0),
        (
            "False".to_string(),
            "AppliedManifestFailed".to_string(),
            "Failed to apply manifest: no applier for the update strategy Replace".to_string()
        )
    );
    assert_eq!(applied(&w, 1).1, "AppliedManifestComplete");
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    assert!(configmaps.get_opt("new").await.unwrap().is_none());
    assert!(configmaps.get_opt("old").await.unwrap().is_some());
}

#[tokio::test]
async fn an_applier_registered_for_a_new_update_strategy_applies_it() {
    let labelling = Labelling::default();
    let calls = labelling.calls.clone();
    let (hub, spoke, agent) = newer_hub_setup(
        Appliers::default().with_strategy(UpdateStrategyType::from("Replace"), labelling),
    )
    .await;
    create_work(&hub.client(), "newer", replace_work()).await;
    agent.sync_all().await.expect("sync");
    let w = work(&hub.client(), "newer").await;
    assert_eq!(applied(&w, 0).1, "AppliedManifestComplete");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    let new = configmaps.get("new").await.unwrap();
    assert_eq!(
        new.labels().get("example.com/strategy").map(String::as_str),
        Some("Replace")
    );
}
