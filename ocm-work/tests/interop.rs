//! Interoperability contracts with upstream OCM (#14): what our work agent writes is exactly what
//! upstream's hub components read, and our hub controllers understand what upstream's agents
//! write. The expected JSON comes from upstream's documented formats (the API's JSON field names,
//! the names, labels, finalizers, condition types, reasons and messages in
//! `/work/shared/spec/work.md`) and from upstream's own test vectors (the `config-spec-hash` of
//! its server-side-apply tests); the hub hash vector is SHA-256 of the kubeconfig host as written.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::ManualClock;
use ocm_api::work::v1::{AppliedManifestWork, ManifestWork};
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
use ocm_placement::controller::PlacementController;
use ocm_testkit::FakeCluster;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use ocm_work::replicaset::controller::ReplicaSetController;
use serde_json::{Value, json};

const CLUSTER: &str = "cluster1";
const HUB_HOST: &str = "https://hub.example.com:6443";
/// `sha256("https://hub.example.com:6443")` in lowercase hex: the hub hash upstream's agent
/// derives from this kubeconfig host.
const HUB_HASH: &str = "badbd4de19b639898c31f168ba913abc5d9e2bbcf25d70e3ee016190492578ae";

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
        // The fake server may already have it (`default`).
        let _ = api.create(&PostParams::default(), &object).await;
    }
}

/// The Api of `value`'s kind (found by discovery), in its namespace when it has one.
async fn api_for(client: &Client, value: &Value) -> (Api<DynamicObject>, DynamicObject) {
    let object: DynamicObject = serde_json::from_value(value.clone()).expect("an object");
    let types = object.types.clone().expect("apiVersion and kind");
    let gvk = kube::core::GroupVersionKind::try_from(&types).expect("gvk");
    let (ar, caps) = kube::discovery::pinned_kind(client, &gvk)
        .await
        .expect("kind");
    let api = match (caps.scope, object.metadata.namespace.as_deref()) {
        (kube::discovery::Scope::Namespaced, Some(ns)) => {
            Api::namespaced_with(client.clone(), ns, &ar)
        }
        _ => Api::all_with(client.clone(), &ar),
    };
    (api, object)
}

/// Creates `value`; then, when it has a `status`, writes it through the status subresource as
/// an agent or controller would.
async fn create(client: &Client, value: Value) {
    let (api, object) = api_for(client, &value).await;
    api.create(&PostParams::default(), &object)
        .await
        .expect("create");
    if let Some(status) = value.get("status") {
        api.patch_status(
            &object.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": status})),
        )
        .await
        .expect("status");
    }
}

async fn agent_env() -> (FakeCluster, FakeCluster, WorkAgent) {
    let hub = FakeCluster::new();
    let spoke = FakeCluster::new();
    install(&hub.client(), &[CLUSTER]).await;
    install(&spoke.client(), &["default"]).await;
    let config = AgentConfig::new(CLUSTER, hub_hash(HUB_HOST)).resync_interval(Duration::ZERO);
    let agent = WorkAgent::new(hub.client(), spoke.client(), config).with_clock(Arc::new(
        ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap()),
    ));
    (hub, spoke, agent)
}

/// The JSON of a condition without its time, as `[type, status, reason, message, observedGeneration]`.
fn condition(c: &Value) -> Value {
    json!([
        c["type"],
        c["status"],
        c["reason"],
        c["message"],
        c["observedGeneration"]
    ])
}

fn conditions(list: &Value) -> Vec<Value> {
    list.as_array()
        .map(|l| l.iter().map(condition).collect())
        .unwrap_or_default()
}

#[test]
fn the_hub_hash_is_sha256_of_the_kubeconfig_host() {
    assert_eq!(hub_hash(HUB_HOST), HUB_HASH);
    assert_eq!(hub_hash(HUB_HOST).len(), 64);
}

#[tokio::test]
async fn the_agent_writes_upstreams_applied_manifest_work_owner_reference_and_work_status() {
    let (hub, spoke, agent) = agent_env().await;
    let work: ManifestWork = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "interop", "namespace": CLUSTER, "labels": {"app": "demo"}},
        "spec": {
            "workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cm1", "namespace": "default"}, "data": {"k": "v"}},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "interop-reader"}, "rules": []}]},
            "manifestConfigs": [{
                "resourceIdentifier": {"group": "", "resource": "configmaps", "namespace": "default", "name": "cm1"},
                "feedbackRules": [{"type": "JSONPaths", "jsonPaths": [{"name": "k", "path": ".data.k"}]}]
            }]
        }
    }))
    .unwrap();
    Api::<ManifestWork>::namespaced(hub.client(), CLUSTER)
        .create(&PostParams::default(), &work)
        .await
        .unwrap();
    agent.sync_all().await.expect("sync");
    agent.sync_all().await.expect("second sync");
    // The empty `group`/`namespace` fields read back equal to what is written: a resync
    // writes nothing.
    hub.journal().clear();
    spoke.journal().clear();
    agent.sync_all().await.expect("resync");
    assert_eq!(hub.journal().writes(), 0, "{:?}", hub.journal().entries());
    assert_eq!(
        spoke.journal().writes(),
        0,
        "{:?}",
        spoke.journal().entries()
    );

    // The AppliedManifestWork: `<hubHash>-<work>`, the work's labels, its finalizer, the spec.
    let amw_name = format!("{HUB_HASH}-interop");
    let amw: AppliedManifestWork = Api::all(spoke.client()).get(&amw_name).await.unwrap();
    let amw_json = serde_json::to_value(&amw).unwrap();
    assert_eq!(amw_json["apiVersion"], "work.open-cluster-management.io/v1");
    assert_eq!(amw_json["kind"], "AppliedManifestWork");
    assert_eq!(amw_json["metadata"]["labels"], json!({"app": "demo"}));
    assert_eq!(
        amw_json["metadata"]["finalizers"],
        json!(["cluster.open-cluster-management.io/applied-manifest-work-cleanup"])
    );
    assert_eq!(
        amw_json["spec"],
        json!({"hubHash": HUB_HASH, "agentID": HUB_HASH, "manifestWorkName": "interop"})
    );

    // The applied ConfigMap: exactly one owner reference, the AMW's, without `controller` or
    // `blockOwnerDeletion` (so the AMW's deletion is what garbage-collects it).
    let cm = Api::<ConfigMap>::namespaced(spoke.client(), "default")
        .get("cm1")
        .await
        .unwrap();
    let cm_json = serde_json::to_value(&cm).unwrap();
    assert_eq!(
        cm_json["metadata"]["ownerReferences"],
        json!([{"apiVersion": "work.open-cluster-management.io/v1", "kind": "AppliedManifestWork",
            "name": amw_name, "uid": amw.uid().unwrap()}])
    );
    let role = Api::<k8s_openapi::api::rbac::v1::ClusterRole>::all(spoke.client())
        .get("interop-reader")
        .await
        .unwrap();
    // Sorted by group, version, resource, namespace, name; `group` and `namespace` written even
    // when empty.
    assert_eq!(
        amw_json["status"]["appliedResources"],
        json!([
            {"group": "", "version": "v1", "resource": "configmaps",
                "namespace": "default", "name": "cm1", "uid": cm.uid().unwrap()},
            {"group": "rbac.authorization.k8s.io", "version": "v1", "resource": "clusterroles",
                "namespace": "", "name": "interop-reader", "uid": role.uid().unwrap()}
        ])
    );

    // The ManifestWork: its finalizer and the status keys and shapes the hub reads.
    let w: ManifestWork = Api::namespaced(hub.client(), CLUSTER)
        .get("interop")
        .await
        .unwrap();
    assert_eq!(w.metadata.generation, Some(1));
    let w_json = serde_json::to_value(&w).unwrap();
    assert_eq!(
        w_json["metadata"]["finalizers"],
        json!(["cluster.open-cluster-management.io/manifest-work-cleanup"])
    );
    let status = &w_json["status"];
    let mut work_conditions = conditions(&status["conditions"]);
    work_conditions.sort_by_key(|c| c[0].as_str().unwrap_or_default().to_string());
    assert_eq!(
        work_conditions,
        vec![
            json!([
                "Applied",
                "True",
                "AppliedManifestWorkComplete",
                "Apply manifest work complete",
                1
            ]),
            json!([
                "Available",
                "True",
                "ResourcesAvailable",
                "All resources are available",
                1
            ]),
        ]
    );
    for c in status["conditions"].as_array().unwrap() {
        assert!(c["lastTransitionTime"].is_string(), "{c}");
    }
    let manifests = status["resourceStatus"]["manifests"].as_array().unwrap();
    assert_eq!(manifests.len(), 2);
    assert_eq!(
        manifests[1]["resourceMeta"],
        json!({"ordinal": 1, "group": "rbac.authorization.k8s.io", "version": "v1",
            "kind": "ClusterRole", "resource": "clusterroles", "name": "interop-reader",
            "namespace": ""})
    );
    let manifest = &manifests[0];
    assert_eq!(
        manifest["resourceMeta"],
        json!({"ordinal": 0, "group": "", "version": "v1", "kind": "ConfigMap",
            "resource": "configmaps", "name": "cm1", "namespace": "default"})
    );
    assert_eq!(
        manifest["statusFeedback"],
        json!({"values": [{"name": "k", "fieldValue": {"type": "String", "string": "v"}}]})
    );
    let mut manifest_conditions = conditions(&manifest["conditions"]);
    manifest_conditions.sort_by_key(|c| c[0].as_str().unwrap_or_default().to_string());
    assert_eq!(
        manifest_conditions,
        vec![
            json!([
                "Applied",
                "True",
                "AppliedManifestComplete",
                "Apply manifest complete",
                1
            ]),
            // Upstream leaves observedGeneration unset (0) on these two.
            json!([
                "Available",
                "True",
                "ResourceAvailable",
                "Resource is available",
                Value::Null
            ]),
            json!([
                "StatusFeedbackSynced",
                "True",
                "StatusFeedbackSynced",
                "",
                Value::Null
            ]),
        ]
    );
}

/// Upstream's server-side-apply test vector: the ConfigMap `default/test` with
/// `data: {foo1: bar1}` hashes to `4c07ba481d04e9c38e5ed3bf24139537`.
const VECTOR_HASH: &str = "4c07ba481d04e9c38e5ed3bf24139537";

fn vector_work(name: &str) -> ManifestWork {
    serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": CLUSTER},
        "spec": {
            "workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "test", "namespace": "default"}, "data": {"foo1": "bar1"}}]},
            "manifestConfigs": [{
                "resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "test"},
                "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {
                    "ignoreFields": [{"condition": "OnSpokeChange", "jsonPaths": [".data"]}]}}
            }]
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn the_config_spec_hash_annotation_matches_upstreams_vector() {
    let (hub, spoke, agent) = agent_env().await;
    Api::<ManifestWork>::namespaced(hub.client(), CLUSTER)
        .create(&PostParams::default(), &vector_work("vector"))
        .await
        .unwrap();
    agent.sync_all().await.expect("sync");
    let cm = Api::<ConfigMap>::namespaced(spoke.client(), "default")
        .get("test")
        .await
        .unwrap();
    assert_eq!(
        cm.annotations()
            .get("open-cluster-management.io/config-spec-hash")
            .map(String::as_str),
        Some(VECTOR_HASH)
    );
}

#[tokio::test]
async fn an_object_upstreams_agent_annotated_with_the_same_hash_is_not_applied_again() {
    // As in upstream's test: the spoke's object carries the hash of the required manifest (here
    // written by upstream's agent) but different data; OnSpokeChange keeps the spoke's data.
    let (hub, spoke, agent) = agent_env().await;
    create(
        &spoke.client(),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "test", "namespace": "default",
                "annotations": {"open-cluster-management.io/config-spec-hash": VECTOR_HASH}},
            "data": {"foo": "bar"}}),
    )
    .await;
    Api::<ManifestWork>::namespaced(hub.client(), CLUSTER)
        .create(&PostParams::default(), &vector_work("vector"))
        .await
        .unwrap();
    agent.sync_all().await.expect("sync");
    let cm = Api::<ConfigMap>::namespaced(spoke.client(), "default")
        .get("test")
        .await
        .unwrap();
    let data = cm.data.clone().unwrap_or_default();
    assert_eq!(data.get("foo").map(String::as_str), Some("bar"));
    assert_eq!(data.get("foo1"), None, "the manifest was not applied again");
    // It is adopted: the AMW's owner reference is added.
    assert_eq!(
        cm.owner_references()
            .iter()
            .map(|r| (r.kind.as_str(), r.name.clone()))
            .collect::<Vec<_>>(),
        vec![("AppliedManifestWork", format!("{HUB_HASH}-vector"))]
    );
    let w: ManifestWork = Api::namespaced(hub.client(), CLUSTER)
        .get("vector")
        .await
        .unwrap();
    let applied = w
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Applied"))
        .map(|c| (c.status.clone(), c.reason.clone()));
    assert_eq!(
        applied,
        Some(("True".into(), "AppliedManifestWorkComplete".into()))
    );
}

#[tokio::test]
async fn the_replica_set_controller_reads_upstream_placement_decisions_and_agent_status() {
    let hub = FakeCluster::new();
    let client = hub.client();
    install(&client, &["apps", CLUSTER]).await;
    // A Placement and its PlacementDecision as upstream's placement controller writes them.
    create(
        &client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "all", "namespace": "apps"}, "spec": {},
            "status": {"numberOfSelectedClusters": 1,
                "decisionGroups": [{"decisionGroupIndex": 0, "decisionGroupName": "",
                    "decisions": ["all-decision-1"], "clusterCount": 1}],
                "conditions": [{"type": "PlacementSatisfied", "status": "True",
                    "reason": "AllDecisionsScheduled", "message": "All cluster decisions scheduled",
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
    )
    .await;
    create(
        &client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "PlacementDecision",
            "metadata": {"name": "all-decision-1", "namespace": "apps", "labels": {
                "cluster.open-cluster-management.io/placement": "all",
                "cluster.open-cluster-management.io/decision-group-index": "0",
                "cluster.open-cluster-management.io/decision-group-name": ""}},
            "status": {"decisions": [{"clusterName": CLUSTER, "reason": ""}]}}),
    )
    .await;
    create(
        &client,
        json!({"apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
            "metadata": {"name": "demo", "namespace": "apps"},
            "spec": {"placementRefs": [{"name": "all", "rolloutStrategy": {"type": "All"}}],
                "manifestWorkTemplate": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "demo", "namespace": "default"}, "data": {"k": "v"}}]}}}}),
    )
    .await;
    let controller = ReplicaSetController::new(client.clone()).with_clock(Arc::new(
        ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap()),
    ));
    let replica_sets: Api<ManifestWorkReplicaSet> = Api::namespaced(client.clone(), "apps");
    let reconcile = || async {
        for _ in 0..5 {
            let rs = replica_sets.get("demo").await.unwrap();
            let outcome = controller.reconcile(&rs).await.expect("reconcile");
            if outcome.requeue_after != Some(Duration::ZERO) {
                break;
            }
        }
        serde_json::to_value(replica_sets.get("demo").await.unwrap()).unwrap()
    };
    reconcile().await;
    let works: Api<ManifestWork> = Api::namespaced(client.clone(), CLUSTER);
    let list = works.list(&Default::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    let work = &list.items[0];
    assert_eq!(
        work.labels()
            .get("work.open-cluster-management.io/manifestworkreplicaset")
            .map(String::as_str),
        Some("apps.demo")
    );
    assert_eq!(
        work.labels()
            .get("work.open-cluster-management.io/placementname")
            .map(String::as_str),
        Some("all")
    );
    let generation = work.metadata.generation.unwrap_or_default();
    // The status exactly as upstream's agent writes it (Progressing=False from a condition
    // rule marks the cluster's rollout as succeeded).
    let at = "2026-01-01T00:00:00Z";
    works
        .patch_status(
            &work.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "conditions": [
                    {"type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete",
                        "message": "Apply manifest work complete", "observedGeneration": generation, "lastTransitionTime": at},
                    {"type": "Available", "status": "True", "reason": "ResourcesAvailable",
                        "message": "All resources are available", "observedGeneration": generation, "lastTransitionTime": at},
                    {"type": "Progressing", "status": "False", "reason": "ConditionRulesAggregated",
                        "message": "", "observedGeneration": generation, "lastTransitionTime": at}
                ],
                "resourceStatus": {"manifests": [{
                    "resourceMeta": {"ordinal": 0, "group": "", "version": "v1", "kind": "ConfigMap",
                        "resource": "configmaps", "name": "demo", "namespace": "default"},
                    "conditions": [
                        {"type": "Applied", "status": "True", "reason": "AppliedManifestComplete",
                            "message": "Apply manifest complete", "observedGeneration": generation, "lastTransitionTime": at},
                        {"type": "Available", "status": "True", "reason": "ResourceAvailable",
                            "message": "Resource is available", "lastTransitionTime": at},
                        {"type": "StatusFeedbackSynced", "status": "True", "reason": "NoStatusFeedbackSynced",
                            "message": "", "lastTransitionTime": at}
                    ]
                }]}
            }})),
        )
        .await
        .unwrap();
    let rs = reconcile().await;
    let status = &rs["status"];
    assert_eq!(
        status["summary"],
        // `desiredTotal` (the selected clusters) is our documented addition; upstream's
        // controller leaves it, and `updated`, at 0.
        json!({"total": 1, "applied": 1, "available": 1, "degraded": 0, "progressing": 0,
            "desiredTotal": 1, "updated": 0}),
        "{status}"
    );
    let mut rs_conditions: Vec<Value> = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!([c["type"], c["status"], c["reason"]]))
        .collect();
    rs_conditions.sort_by_key(|c| c[0].as_str().unwrap_or_default().to_string());
    assert_eq!(
        rs_conditions,
        vec![
            json!(["ManifestworkApplied", "True", "AsExpected"]),
            json!(["PlacementRolledOut", "True", "Complete"]),
            json!(["PlacementVerified", "True", "AsExpected"]),
        ]
    );
}

#[tokio::test]
async fn placement_reads_upstreams_cluster_status_claims_and_addon_scores() {
    let hub = FakeCluster::new();
    let client = hub.client();
    install(&client, &["apps", "c1", "c2", "c3"]).await;
    create(
        &client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
            "metadata": {"name": "default"},
            "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}}),
    )
    .await;
    create(
        &client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
            "metadata": {"name": "default", "namespace": "apps"}, "spec": {"clusterSet": "default"}}),
    )
    .await;
    let at = "2026-01-01T00:00:00Z";
    for (name, platform, score) in [("c1", "AWS", 30), ("c2", "AWS", 80), ("c3", "GCP", 100)] {
        // The status as upstream's registration agent writes it: conditions, capacity and
        // allocatable quantities, version, and the reported cluster claims.
        create(
            &client,
            json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                "metadata": {"name": name, "labels": {"cluster.open-cluster-management.io/clusterset": "default"}},
                "spec": {"hubAcceptsClient": true, "leaseDurationSeconds": 60},
                "status": {
                    "conditions": [
                        {"type": "HubAcceptedManagedCluster", "status": "True", "reason": "HubClusterAdminAccepted",
                            "message": "Accepted by hub cluster admin", "lastTransitionTime": at},
                        {"type": "ManagedClusterJoined", "status": "True", "reason": "ManagedClusterJoined",
                            "message": "Managed cluster joined", "lastTransitionTime": at},
                        {"type": "ManagedClusterConditionAvailable", "status": "True", "reason": "ManagedClusterAvailable",
                            "message": "Managed cluster is available", "lastTransitionTime": at}
                    ],
                    "capacity": {"cpu": "4", "memory": "16Gi"},
                    "allocatable": {"cpu": "3500m", "memory": "15Gi"},
                    "version": {"kubernetes": "v1.30.0"},
                    "clusterClaims": [
                        {"name": "id.k8s.io", "value": name},
                        {"name": "platform.open-cluster-management.io", "value": platform}
                    ]
                }}),
        )
        .await;
        // An AddOnPlacementScore as an addon agent writes it.
        create(
            &client,
            json!({"apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScore",
                "metadata": {"name": "default", "namespace": name},
                "status": {
                    "conditions": [{"type": "AddOnPlacementScoreUpdated", "status": "True",
                        "reason": "AddOnPlacementScoreUpdated", "message": "AddOnPlacementScore updated successfully",
                        "lastTransitionTime": at}],
                    "scores": [{"name": "cpuratio", "value": score}],
                    "validUntil": "2099-01-01T00:00:00Z"
                }}),
        )
        .await;
    }
    create(
        &client,
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "aws", "namespace": "apps"},
            "spec": {
                "numberOfClusters": 1,
                "predicates": [{"requiredClusterSelector": {"claimSelector": {"matchExpressions": [
                    {"key": "platform.open-cluster-management.io", "operator": "In", "values": ["AWS"]}]}}}],
                "prioritizerPolicy": {"mode": "Exact", "configurations": [{
                    "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "default", "scoreName": "cpuratio"}},
                    "weight": 1}]}
            }}),
    )
    .await;
    PlacementController::new(client.clone())
        .reconcile_all()
        .await
        .expect("schedule");
    let decisions: Api<DynamicObject> = api_for(
        &client,
        &json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "PlacementDecision",
            "metadata": {"name": "x", "namespace": "apps"}}),
    )
    .await
    .0;
    let list = decisions
        .list(
            &kube::api::ListParams::default()
                .labels("cluster.open-cluster-management.io/placement=aws"),
        )
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(
        list.items[0].data["status"]["decisions"],
        json!([{"clusterName": "c2", "reason": ""}])
    );
}

#[tokio::test]
async fn the_agent_takes_over_an_applied_manifest_work_upstreams_agent_wrote() {
    let (hub, spoke, agent) = agent_env().await;
    let amw_name = format!("{HUB_HASH}-takeover");
    // The AppliedManifestWork and the ConfigMap it owns, as upstream's agent left them.
    create(
        &spoke.client(),
        json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "AppliedManifestWork",
            "metadata": {"name": amw_name,
                "finalizers": ["cluster.open-cluster-management.io/applied-manifest-work-cleanup"]},
            "spec": {"hubHash": HUB_HASH, "agentID": HUB_HASH, "manifestWorkName": "takeover"}}),
    )
    .await;
    let amws: Api<AppliedManifestWork> = Api::all(spoke.client());
    let amw_uid = amws.get(&amw_name).await.unwrap().uid().unwrap();
    create(
        &spoke.client(),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm1", "namespace": "default", "ownerReferences": [
                {"apiVersion": "work.open-cluster-management.io/v1", "kind": "AppliedManifestWork",
                    "name": amw_name, "uid": amw_uid}]},
            "data": {"k": "v"}}),
    )
    .await;
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    let cm_uid = configmaps.get("cm1").await.unwrap().uid().unwrap();
    let applied = json!([{"group": "", "version": "v1", "resource": "configmaps",
        "namespace": "default", "name": "cm1", "uid": cm_uid}]);
    amws.patch_status(
        &amw_name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"appliedResources": applied}})),
    )
    .await
    .unwrap();
    let manifest = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cm1", "namespace": "default"}, "data": {"k": "v"}});
    let works: Api<ManifestWork> = Api::namespaced(hub.client(), CLUSTER);
    let work: ManifestWork = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "takeover", "namespace": CLUSTER,
            "finalizers": ["cluster.open-cluster-management.io/manifest-work-cleanup"]},
        "spec": {"workload": {"manifests": [manifest]}}
    }))
    .unwrap();
    works.create(&PostParams::default(), &work).await.unwrap();
    agent.sync_all().await.expect("sync");

    // Same AppliedManifestWork, same ConfigMap, one owner reference, same applied resources.
    let amw = amws.get(&amw_name).await.unwrap();
    assert_eq!(amw.uid().as_deref(), Some(amw_uid.as_str()));
    assert_eq!(
        serde_json::to_value(&amw).unwrap()["status"]["appliedResources"],
        applied
    );
    let cm = configmaps.get("cm1").await.unwrap();
    assert_eq!(cm.uid().as_deref(), Some(cm_uid.as_str()));
    assert_eq!(cm.owner_references().len(), 1);
    assert_eq!(
        spoke
            .journal()
            .count(|e| e.verb == "delete" && e.status < 300),
        0
    );

    // Removing the manifest deletes the ConfigMap upstream's agent recorded.
    let mut work = works.get("takeover").await.unwrap();
    work.spec = serde_json::from_value(json!({"workload": {"manifests": []}})).unwrap();
    works
        .replace("takeover", &PostParams::default(), &work)
        .await
        .unwrap();
    agent.sync_all().await.expect("sync");
    assert!(configmaps.get_opt("cm1").await.unwrap().is_none());
}
