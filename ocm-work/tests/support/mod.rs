//! Helpers shared by the agent's recovery and fault tests: a hub and a managed cluster, works,
//! polling, and request counts from the journals.
#![allow(dead_code)]

pub mod link;
pub use ocm_testkit::logs;
pub mod replicaset;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, PostParams};
use ocm_api::conditions;
use ocm_api::work::v1::ManifestWork;
pub use ocm_testkit::wait::eventually;
use ocm_testkit::{FakeCluster, JournalEntry};
use serde_json::{Value, json};

pub const CLUSTER: &str = "cluster1";
pub const HUB_URL: &str = "https://hub.example.com:6443";

/// Installs the OCM CRDs (upstream's) and creates `namespaces`.
pub async fn install(client: &Client, namespaces: &[&str]) {
    install_these(client, ocm_api::crds(), namespaces).await;
}

/// Installs the extended OCM CRDs (with the fields of the replica set opt-ins) and creates
/// `namespaces`.
pub async fn install_extended(client: &Client, namespaces: &[&str]) {
    install_these(client, ocm_api::crd::extended_crds(), namespaces).await;
}

async fn install_these(client: &Client, list: Vec<CustomResourceDefinition>, namespaces: &[&str]) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in list {
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

/// A hub with the cluster namespace and a managed cluster, both with the OCM CRDs.
pub async fn clusters() -> (FakeCluster, FakeCluster) {
    let hub = FakeCluster::new();
    let spoke = FakeCluster::new();
    install(&hub.client(), &[CLUSTER]).await;
    install(&spoke.client(), &["default"]).await;
    (hub, spoke)
}

pub fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"}, "data": {"k": value}})
}

pub fn work_object(name: &str, spec: Value) -> ManifestWork {
    serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": CLUSTER}, "spec": spec
    }))
    .unwrap()
}

/// A work with one ConfigMap named after it, holding `value`.
pub fn one_configmap_work(name: &str, value: &str) -> ManifestWork {
    work_object(
        name,
        json!({"workload": {"manifests": [configmap(name, value)]}}),
    )
}

pub async fn create_work(hub: &Client, work: &ManifestWork) {
    Api::<ManifestWork>::namespaced(hub.clone(), CLUSTER)
        .create(&PostParams::default(), work)
        .await
        .expect("create work");
}

/// The `k` value of ConfigMap `default/name`, read from the store (no request is journaled).
pub fn configmap_value(spoke: &FakeCluster, name: &str) -> Option<String> {
    spoke
        .get::<ConfigMap>("default", name)
        .ok()
        .and_then(|c| c.data)
        .and_then(|d| d.get("k").cloned())
}

/// Every ConfigMap name in `default`, read from the store.
pub fn configmap_names(spoke: &FakeCluster) -> Vec<String> {
    spoke
        .list::<ConfigMap>(Some("default"))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .filter(|n| n != "kube-root-ca.crt")
        .collect()
}

/// The work `name` as the hub stores it.
pub fn stored_work(hub: &FakeCluster, name: &str) -> Option<ManifestWork> {
    hub.get::<ManifestWork>(CLUSTER, name).ok()
}

/// Whether the work's condition `type_` is True for its current generation.
pub fn condition_true(work: &ManifestWork, type_: &str) -> bool {
    let generation = work.metadata.generation;
    work.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .and_then(|c| conditions::find(c, type_))
        .is_some_and(|c| c.status == "True" && c.observed_generation == generation)
}

/// Runs `agent` until the returned sender is fired or dropped.
pub fn start(
    agent: ocm_work::agent::WorkAgent,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(agent.run(async move {
        let _ = stopped.await;
    }));
    (stop, task)
}

/// Whether every work in `names` is Applied and Available for its current generation.
pub fn all_applied(hub: &FakeCluster, names: &[String]) -> bool {
    names.iter().all(|n| {
        stored_work(hub, n)
            .is_some_and(|w| condition_true(&w, "Applied") && condition_true(&w, "Available"))
    })
}

/// Requests in the journal answered with `status`.
pub fn answered(cluster: &FakeCluster, status: u16) -> Vec<JournalEntry> {
    cluster
        .journal()
        .entries()
        .into_iter()
        .filter(|e| e.status == status)
        .collect()
}

/// A short description of journal entries, for assertion messages.
pub fn describe(entries: &[JournalEntry]) -> String {
    entries
        .iter()
        .take(20)
        .map(|e| {
            format!(
                "{} {} {}{} {}",
                e.status,
                e.verb,
                e.resource.as_deref().unwrap_or_default(),
                e.subresource
                    .as_deref()
                    .map(|s| format!("/{s}"))
                    .unwrap_or_default(),
                e.name.as_deref().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// An API of raw objects of `K`'s resource, in `namespace` or all namespaces, for tests that
/// write or read objects the typed client would refuse.
pub fn raw_api<K: kube::Resource<DynamicType = ()>>(
    client: &Client,
    namespace: Option<&str>,
) -> Api<ocm_api::k8s::object::RawObject> {
    let resource = kube::core::ApiResource::erase::<K>(&());
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

/// A controller's shutdown signal, as [`warnings_while_running`] hands it over.
pub type Shutdown = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Runs a controller (`start` gets its shutdown signal and returns its `run` future) for
/// `running`, stops it, and returns the WARN lines logged meanwhile on this thread that
/// contain `needle`. Call it from a current-thread test runtime (`#[tokio::test]`'s default).
pub async fn warnings_while_running<F>(
    running: std::time::Duration,
    needle: &str,
    start: impl FnOnce(Shutdown) -> F,
) -> Vec<String>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let capture = logs::capture();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(start(Box::pin(async move {
        let _ = stopped.await;
    })));
    tokio::time::sleep(running).await;
    stop.send(()).expect("the controller is still running");
    tokio::time::timeout(std::time::Duration::from_secs(5), task)
        .await
        .expect("the controller stops at shutdown")
        .expect("the controller does not panic");
    capture
        .logs()
        .warnings()
        .into_iter()
        .filter(|w| w.contains(needle))
        .collect()
}
