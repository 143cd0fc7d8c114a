//! The work agent between two in-process fake clusters: a hub and a managed cluster.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::clock::ManualClock;
use ocm_api::conditions;
use ocm_api::work::v1::{AppliedManifestWork, ManifestWork};
use ocm_testkit::FakeCluster;
use ocm_testkit::wait::eventually;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use serde_json::{Value, json};

const CLUSTER: &str = "cluster1";

struct Env {
    hub: FakeCluster,
    spoke: FakeCluster,
    hub_client: Client,
    spoke_client: Client,
    agent: WorkAgent,
}

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

async fn env() -> Env {
    let hub = FakeCluster::new();
    let spoke = FakeCluster::new();
    let hub_client = hub.client();
    let spoke_client = spoke.client();
    install(&hub_client, &[CLUSTER]).await;
    install(&spoke_client, &["default"]).await;
    let config = AgentConfig::new(CLUSTER, hub_hash("https://hub.example.com:6443"))
        .resync_interval(Duration::ZERO);
    let agent = WorkAgent::new(hub_client.clone(), spoke_client.clone(), config).with_clock(
        Arc::new(ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap())),
    );
    Env {
        hub,
        spoke,
        hub_client,
        spoke_client,
        agent,
    }
}

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"k": value}})
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "hello", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "hello"}},
            "template": {"metadata": {"labels": {"app": "hello"}},
                "spec": {"containers": [{"name": "hello", "image": "quay.io/asmacdo/busybox", "command": ["sh", "-c", "echo hi && sleep 3600"]}]}}}})
}

async fn create_work(env: &Env, name: &str, spec: Value) {
    let work: ManifestWork = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": CLUSTER}, "spec": spec
    }))
    .unwrap();
    Api::<ManifestWork>::namespaced(env.hub_client.clone(), CLUSTER)
        .create(&PostParams::default(), &work)
        .await
        .expect("create work");
}

async fn update_work(env: &Env, name: &str, spec: Value) {
    let api = Api::<ManifestWork>::namespaced(env.hub_client.clone(), CLUSTER);
    let mut work = api.get(name).await.unwrap();
    work.spec = serde_json::from_value(spec).unwrap();
    api.replace(name, &PostParams::default(), &work)
        .await
        .expect("update work");
}

async fn work(env: &Env, name: &str) -> Option<ManifestWork> {
    Api::<ManifestWork>::namespaced(env.hub_client.clone(), CLUSTER)
        .get_opt(name)
        .await
        .unwrap()
}

/// Manifest `i`'s condition `type_`, as the work's status reports it.
fn manifest_condition(
    w: &ManifestWork,
    i: usize,
    type_: &str,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
    conditions::find(&manifest_status(w, i).conditions, type_)
        .expect(type_)
        .clone()
}

/// The status of the work's manifest `i`.
fn manifest_status(w: &ManifestWork, i: usize) -> &ocm_api::work::v1::ManifestCondition {
    &w.status
        .as_ref()
        .and_then(|s| s.resource_status.as_ref())
        .and_then(|r| r.manifests.as_ref())
        .expect("manifest statuses")[i]
}

fn work_condition(w: &ManifestWork, type_: &str) -> (String, String) {
    let c = conditions::find(
        w.status.as_ref().unwrap().conditions.as_deref().unwrap(),
        type_,
    )
    .expect(type_);
    (c.status.clone(), c.reason.clone())
}

#[tokio::test]
async fn applies_tracks_reports_and_garbage_collects() {
    let env = env().await;
    create_work(&env, "hello-work", json!({
        "workload": {"manifests": [configmap("cm", "v1"), deployment()]},
        "manifestConfigs": [{
            "resourceIdentifier": {"group": "apps", "resource": "deployments", "namespace": "default", "name": "hello"},
            "feedbackRules": [{"type": "JSONPaths", "jsonPaths": [{"name": "replicas", "path": ".spec.replicas"}]}]
        }]
    }))
    .await;
    env.agent.sync_all().await.expect("sync");

    let w = work(&env, "hello-work").await.unwrap();
    assert!(
        w.finalizers()
            .contains(&"cluster.open-cluster-management.io/manifest-work-cleanup".to_string())
    );
    assert_eq!(
        work_condition(&w, "Applied"),
        ("True".into(), "AppliedManifestWorkComplete".into())
    );
    assert_eq!(
        work_condition(&w, "Available"),
        ("True".into(), "ResourcesAvailable".into())
    );
    let manifests = w
        .status
        .as_ref()
        .unwrap()
        .resource_status
        .as_ref()
        .unwrap()
        .manifests
        .clone()
        .unwrap();
    assert_eq!(manifests.len(), 2);
    assert_eq!(
        manifests[1].resource_meta.resource.as_deref(),
        Some("deployments")
    );
    let feedback = manifests[1]
        .status_feedbacks
        .as_ref()
        .unwrap()
        .values
        .as_ref()
        .unwrap();
    assert_eq!(feedback[0].name, "replicas");
    assert_eq!(feedback[0].field_value.integer, Some(2));

    // The resources exist, owned by the AppliedManifestWork.
    let amw_name = format!("{}-hello-work", env.agent.config().hub_hash);
    let amw: AppliedManifestWork = Api::all(env.spoke_client.clone())
        .get(&amw_name)
        .await
        .unwrap();
    assert_eq!(amw.spec.manifest_work_name, "hello-work");
    assert_eq!(
        amw.status
            .as_ref()
            .unwrap()
            .applied_resources
            .as_ref()
            .unwrap()
            .len(),
        2
    );
    let cm: ConfigMap = Api::namespaced(env.spoke_client.clone(), "default")
        .get("cm")
        .await
        .unwrap();
    assert_eq!(
        cm.owner_references()[0].uid,
        amw.metadata.uid.clone().unwrap()
    );

    // Steady state: a full resync writes nothing on the hub, and on the spoke only upstream's
    // no-op replace of the Deployment: its `isSame` sees the fields the API server defaulted
    // (absent from the manifest), and its apply cache never holds for an object it last
    // replaced (the hash it records is of the merged copy). The replace changes nothing.
    let deployments: Api<Deployment> = Api::namespaced(env.spoke_client.clone(), "default");
    let before = deployments.get("hello").await.unwrap();
    env.hub.journal().clear();
    env.spoke.journal().clear();
    env.agent.sync_all().await.expect("resync");
    assert_eq!(
        env.hub.journal().writes(),
        0,
        "hub writes: {:?}",
        env.hub.journal().entries()
    );
    let spoke_writes: Vec<_> = env
        .spoke
        .journal()
        .entries()
        .into_iter()
        .filter(|e| !matches!(e.verb.as_str(), "get" | "list" | "watch"))
        .map(|e| (e.verb, e.path, e.status))
        .collect();
    assert_eq!(
        spoke_writes,
        [(
            "update".to_string(),
            "/apis/apps/v1/namespaces/default/deployments/hello".to_string(),
            200
        )]
    );
    let after = deployments.get("hello").await.unwrap();
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
    assert_eq!(
        after.metadata.managed_fields,
        before.metadata.managed_fields
    );

    // An update rolls through.
    update_work(
        &env,
        "hello-work",
        json!({"workload": {"manifests": [configmap("cm", "v2"), deployment()]}}),
    )
    .await;
    env.agent.sync_all().await.unwrap();
    let cm: ConfigMap = Api::namespaced(env.spoke_client.clone(), "default")
        .get("cm")
        .await
        .unwrap();
    assert_eq!(cm.data.unwrap()["k"], "v2");

    // A manifest removed from the work is deleted from the cluster.
    update_work(
        &env,
        "hello-work",
        json!({"workload": {"manifests": [configmap("cm", "v2")]}}),
    )
    .await;
    env.agent.sync_all().await.unwrap();
    assert!(
        deployments.get_opt("hello").await.unwrap().is_none(),
        "removed manifest garbage-collected"
    );
    // Its deletion was accepted: it stays listed until a later pass sees it gone (upstream's
    // rule, for collectors and finalizers that take their time on a real cluster).
    let amws: Api<AppliedManifestWork> = Api::all(env.spoke_client.clone());
    let amw = amws.get(&amw_name).await.unwrap();
    assert_eq!(amw.status.unwrap().applied_resources.unwrap().len(), 2);
    env.agent.sync_all().await.unwrap();
    let amw = amws.get(&amw_name).await.unwrap();
    assert_eq!(amw.status.unwrap().applied_resources.unwrap().len(), 1);

    // Deleting the work removes its resources, then the work itself.
    Api::<ManifestWork>::namespaced(env.hub_client.clone(), CLUSTER)
        .delete("hello-work", &DeleteParams::default())
        .await
        .unwrap();
    for _ in 0..5 {
        if work(&env, "hello-work").await.is_none() {
            break;
        }
        env.agent.sync_all().await.unwrap();
    }
    assert!(work(&env, "hello-work").await.is_none(), "work finalized");
    let configmaps: Api<ConfigMap> = Api::namespaced(env.spoke_client.clone(), "default");
    assert!(
        configmaps.get_opt("cm").await.unwrap().is_none(),
        "resource deleted with the work"
    );
    assert!(
        Api::<AppliedManifestWork>::all(env.spoke_client.clone())
            .get_opt(&amw_name)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn an_unknown_kind_fails_only_its_manifest() {
    let env = env().await;
    create_work(&env, "w", json!({"workload": {"manifests": [
        configmap("cm", "v1"),
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x", "namespace": "default"}}
    ]}}))
    .await;
    env.agent.sync_all().await.ok();
    let w = work(&env, "w").await.unwrap();
    let applied = |i: usize| manifest_condition(&w, i, "Applied");
    assert_eq!(applied(0).status, "True");
    assert_eq!(applied(1).status, "False");
    assert_eq!(applied(1).reason, "AppliedManifestFailed");
    assert_eq!(
        applied(1).message,
        "Failed to apply manifest: the server doesn't have a resource type \"Widget\""
    );
    assert_eq!(
        work_condition(&w, "Applied"),
        ("False".into(), "AppliedManifestWorkFailed".into())
    );
    let cm: Api<ConfigMap> = Api::namespaced(env.spoke_client.clone(), "default");
    assert!(cm.get_opt("cm").await.unwrap().is_some());
}

#[tokio::test]
async fn orphaned_resources_survive_deletion() {
    let env = env().await;
    create_work(&env, "w", json!({
        "workload": {"manifests": [configmap("keep", "v1"), configmap("drop", "v1")]},
        "deleteOption": {"propagationPolicy": "SelectivelyOrphan", "selectivelyOrphans": {"orphaningRules": [
            {"group": "", "resource": "configmaps", "namespace": "default", "name": "keep"}]}}
    }))
    .await;
    env.agent.sync_all().await.unwrap();
    let configmaps: Api<ConfigMap> = Api::namespaced(env.spoke_client.clone(), "default");
    assert!(
        configmaps
            .get("keep")
            .await
            .unwrap()
            .owner_references()
            .is_empty(),
        "orphaned: no owner"
    );
    assert_eq!(
        configmaps
            .get("drop")
            .await
            .unwrap()
            .owner_references()
            .len(),
        1
    );

    Api::<ManifestWork>::namespaced(env.hub_client.clone(), CLUSTER)
        .delete("w", &DeleteParams::default())
        .await
        .unwrap();
    for _ in 0..5 {
        if work(&env, "w").await.is_none() {
            break;
        }
        env.agent.sync_all().await.unwrap();
    }
    assert!(work(&env, "w").await.is_none());
    assert!(
        configmaps.get_opt("keep").await.unwrap().is_some(),
        "orphaned resource kept"
    );
    assert!(
        configmaps.get_opt("drop").await.unwrap().is_none(),
        "owned resource deleted"
    );
}

#[tokio::test]
async fn server_side_apply_reports_conflicts_and_create_only_adopts() {
    let env = env().await;
    // Another manager owns data.k on the cluster.
    let other = kube::api::PatchParams::apply("someone-else");
    let configmaps: Api<ConfigMap> = Api::namespaced(env.spoke_client.clone(), "default");
    configmaps
        .patch(
            "shared",
            &other,
            &kube::api::Patch::Apply(configmap("shared", "theirs")),
        )
        .await
        .unwrap();
    configmaps
        .patch(
            "existing",
            &other,
            &kube::api::Patch::Apply(configmap("existing", "theirs")),
        )
        .await
        .unwrap();
    create_work(&env, "w", json!({
        "workload": {"manifests": [configmap("shared", "ours"), configmap("existing", "ours")]},
        "manifestConfigs": [
            {"resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "shared"},
             "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {"fieldManager": "work-agent"}}},
            {"resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "existing"},
             "updateStrategy": {"type": "CreateOnly"}}
        ]
    }))
    .await;
    env.agent.sync_all().await.ok();
    let w = work(&env, "w").await.unwrap();
    let shared = manifest_condition(&w, 0, "Applied");
    assert_eq!(shared.status, "False");
    assert!(
        shared
            .message
            .starts_with("Failed to apply manifest: Apply failed with 1 conflict"),
        "{}",
        shared.message
    );
    // CreateOnly leaves content alone but adopts the object.
    let existing = configmaps.get("existing").await.unwrap();
    assert_eq!(existing.data.as_ref().unwrap()["k"], "theirs");
    assert_eq!(existing.owner_references().len(), 1);

    // With force the work takes the field over.
    update_work(&env, "w", json!({
        "workload": {"manifests": [configmap("shared", "ours")]},
        "manifestConfigs": [{"resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "shared"},
             "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {"fieldManager": "work-agent", "force": true}}}]
    }))
    .await;
    env.agent.sync_all().await.unwrap();
    assert_eq!(
        configmaps.get("shared").await.unwrap().data.unwrap()["k"],
        "ours"
    );
}

#[tokio::test]
async fn an_executor_is_denied_until_granted_and_only_its_unpermitted_manifest_fails() {
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    let env = env().await;
    create_work(&env, "exec", json!({
        "workload": {"manifests": [
            configmap("cm", "v1"),
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}, "stringData": {"k": "v"}}
        ]},
        "executor": {"subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": "default", "name": "deployer"}}}
    }))
    .await;
    env.agent.sync_all().await.ok();
    let applied = |w: &ManifestWork, i: usize| manifest_condition(w, i, "Applied");
    let w = work(&env, "exec").await.unwrap();
    assert_eq!(applied(&w, 0).status, "False");
    assert_eq!(
        applied(&w, 0).message,
        "Failed to apply manifest: not allowed to apply the resource  configmaps, default cm, will try again in 1m0s"
    );
    let configmaps: Api<ConfigMap> = Api::namespaced(env.spoke_client.clone(), "default");
    assert!(
        configmaps.get_opt("cm").await.unwrap().is_none(),
        "nothing applied while denied"
    );

    // Grant ConfigMaps (not Secrets) to the executor.
    let role: Role = serde_json::from_value(json!({"metadata": {"name": "cm-writer", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "update", "patch", "get", "delete"]}]}))
    .unwrap();
    Api::<Role>::namespaced(env.spoke_client.clone(), "default")
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(
        json!({"metadata": {"name": "cm-writer", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": "default"}]}),
    )
    .unwrap();
    Api::<RoleBinding>::namespaced(env.spoke_client.clone(), "default")
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();

    env.agent.sync_all().await.ok();
    let w = work(&env, "exec").await.unwrap();
    assert_eq!(applied(&w, 0).status, "True", "granted");
    assert_eq!(
        applied(&w, 1).status,
        "False",
        "the Secret is outside the grant"
    );
    assert!(
        applied(&w, 1)
            .message
            .contains("not allowed to apply the resource  secrets, default s")
    );
    assert!(configmaps.get_opt("cm").await.unwrap().is_some());
}

#[tokio::test]
async fn a_well_known_complete_rule_completes_the_work() {
    let env = env().await;
    let _simulator = env.spoke.simulate_workloads();
    create_work(&env, "job", json!({
        "workload": {"manifests": [{"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi", "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "pi", "image": "perl:5.34", "command": ["perl", "-e", "print 1"]}]}}}}]},
        "manifestConfigs": [{"resourceIdentifier": {"group": "batch", "resource": "jobs", "namespace": "default", "name": "pi"},
            "conditionRules": [{"type": "WellKnownConditions", "condition": "Complete"}]}]
    }))
    .await;
    let mut complete = None;
    for _ in 0..20 {
        env.agent.sync_all().await.unwrap();
        let w = work(&env, "job").await.unwrap();
        let conds = w
            .status
            .as_ref()
            .unwrap()
            .conditions
            .clone()
            .unwrap_or_default();
        if let Some(c) = conditions::find(&conds, "Complete")
            && c.status == "True"
        {
            complete = Some((c.reason.clone(), c.message.clone()));
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        complete,
        Some((
            "ConditionRulesAggregated".to_string(),
            "Job is finished".to_string()
        ))
    );
    // A completed work is not applied any more: nothing is written.
    env.hub.journal().clear();
    env.spoke.journal().clear();
    env.agent.sync_all().await.unwrap();
    assert_eq!(env.hub.journal().writes() + env.spoke.journal().writes(), 0);

    // Its status is still refreshed, as upstream's status controller does: a feedback rule
    // added to the completed work is read (and the changed spec is not applied: the Job and
    // the AppliedManifestWork are not written).
    let job_rules = |rules: Value| {
        json!({
            "workload": {"manifests": [{"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "pi", "namespace": "default", "labels": {"changed": "yes"}},
                "spec": {"template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "pi", "image": "perl:5.34", "command": ["perl", "-e", "print 1"]}]}}}}]},
            "manifestConfigs": [{"resourceIdentifier": {"group": "batch", "resource": "jobs", "namespace": "default", "name": "pi"},
                "feedbackRules": [{"type": "JSONPaths", "jsonPaths": [{"name": "succeeded", "path": ".status.succeeded"}]}],
                "conditionRules": rules}]
        })
    };
    update_work(
        &env,
        "job",
        job_rules(json!([{"type": "WellKnownConditions", "condition": "Complete"}])),
    )
    .await;
    env.spoke.journal().clear();
    env.agent.sync_all().await.unwrap();
    assert_eq!(
        env.spoke.journal().writes(),
        0,
        "a completed work is not applied"
    );
    let w = work(&env, "job").await.unwrap();
    let manifest = manifest_status(&w, 0);
    let values = manifest
        .status_feedbacks
        .as_ref()
        .and_then(|f| f.values.clone())
        .unwrap_or_default();
    assert_eq!(values.len(), 1, "the new feedback rule is read: {values:?}");
    assert_eq!(values[0].name, "succeeded");
    assert_eq!(work_condition(&w, "Complete").0, "True");

    // A deleted rule's conditions are pruned, on the manifest and on the work.
    update_work(&env, "job", job_rules(json!([]))).await;
    let w = work(&env, "job").await.unwrap();
    let generation = w.metadata.generation;
    env.agent.sync_all().await.unwrap();
    let w = work(&env, "job").await.unwrap();
    let conds = w
        .status
        .as_ref()
        .unwrap()
        .conditions
        .clone()
        .unwrap_or_default();
    assert!(
        conditions::find(&conds, "Complete").is_none(),
        "the Complete condition of the deleted rule is pruned: {conds:?}"
    );
    let manifest = manifest_status(&w, 0);
    assert!(conditions::find(&manifest.conditions, "Complete").is_none());
    assert_eq!(
        conditions::find(&conds, "Available").map(|c| c.observed_generation),
        Some(generation)
    );
}

#[tokio::test]
async fn two_works_share_a_resource_and_deleting_one_keeps_it() {
    let env = env().await;
    create_work(
        &env,
        "a",
        json!({"workload": {"manifests": [configmap("shared", "from-a")]}}),
    )
    .await;
    create_work(
        &env,
        "b",
        json!({"workload": {"manifests": [configmap("shared", "from-b")]}}),
    )
    .await;
    env.agent.sync_all().await.unwrap();
    let configmaps: Api<ConfigMap> = Api::namespaced(env.spoke_client.clone(), "default");
    let cm = configmaps.get("shared").await.unwrap();
    assert_eq!(
        cm.owner_references().len(),
        2,
        "both AppliedManifestWorks own it"
    );
    // The works fight: the last one applied wins until the other syncs again.
    assert_eq!(cm.data.unwrap()["k"], "from-b");

    Api::<ManifestWork>::namespaced(env.hub_client.clone(), CLUSTER)
        .delete("a", &DeleteParams::default())
        .await
        .unwrap();
    for _ in 0..5 {
        env.agent.sync_all().await.unwrap();
        if work(&env, "a").await.is_none() {
            break;
        }
    }
    assert!(work(&env, "a").await.is_none());
    let cm = configmaps
        .get("shared")
        .await
        .expect("kept for the remaining work");
    assert_eq!(cm.owner_references().len(), 1);
}

#[tokio::test]
async fn server_side_apply_yields_replicas_to_an_autoscaler_with_ignore_fields() {
    let env = env().await;
    let deployment_config = |ignore: Value| {
        json!([{
            "resourceIdentifier": {"group": "apps", "resource": "deployments", "namespace": "default", "name": "hello"},
            "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {"fieldManager": "work-agent", "ignoreFields": ignore}}
        }])
    };
    create_work(&env, "ssa", json!({"workload": {"manifests": [deployment()]}, "manifestConfigs": deployment_config(json!([]))})).await;
    env.agent.sync_all().await.unwrap();
    // An HPA-like manager takes spec.replicas.
    let deployments: Api<Deployment> = Api::namespaced(env.spoke_client.clone(), "default");
    deployments
        .patch(
            "hello",
            &kube::api::PatchParams::apply("hpa-controller").force(),
            &kube::api::Patch::Apply(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "hello", "namespace": "default"}, "spec": {"replicas": 5}})),
        )
        .await
        .unwrap();
    // The work still declares replicas: 2, so its next apply conflicts.
    update_work(&env, "ssa", json!({"workload": {"manifests": [deployment()]},
        "manifestConfigs": deployment_config(json!([{"condition": "OnSpokeChange", "jsonPaths": [".spec.replicas"]}]))})).await;
    env.agent.sync_all().await.ok();
    let applied = manifest_condition(&work(&env, "ssa").await.unwrap(), 0, "Applied");
    assert_eq!(applied.status, "False", "{}", applied.message);
    assert!(applied.message.contains("conflict"), "{}", applied.message);

    // Ignoring replicas once the object exists lets both managers coexist.
    update_work(&env, "ssa", json!({"workload": {"manifests": [deployment()]},
        "manifestConfigs": deployment_config(json!([{"condition": "OnSpokePresent", "jsonPaths": [".spec.replicas"]}]))})).await;
    env.agent.sync_all().await.unwrap();
    assert_eq!(
        manifest_condition(&work(&env, "ssa").await.unwrap(), 0, "Applied").status,
        "True"
    );
    let live = deployments.get("hello").await.unwrap();
    assert_eq!(
        live.spec.replicas,
        Some(5),
        "the autoscaler's replicas stay"
    );
    assert!(
        live.metadata
            .annotations
            .unwrap()
            .contains_key("open-cluster-management.io/config-spec-hash")
    );
}

/// `ignoreFields` JSONPaths with a filter (#15 defect 2): the env of the filtered container is
/// left to the spoke, as upstream evaluates the parent path with full JSONPath.
#[tokio::test]
async fn ignore_fields_json_paths_with_filters_leave_the_spokes_value() {
    let env = env().await;
    let with_env = |value: &str| {
        let mut d = deployment();
        d["spec"]["template"]["spec"]["containers"][0]["env"] =
            json!([{"name": "MODE", "value": value}]);
        d
    };
    let config = json!([{
        "resourceIdentifier": {"group": "apps", "resource": "deployments", "namespace": "default", "name": "hello"},
        "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {"fieldManager": "work-agent",
            "ignoreFields": [{"condition": "OnSpokePresent",
                "jsonPaths": [".spec.template.spec.containers[?(@.name==\"hello\")].env"]}]}}
    }]);
    create_work(
        &env,
        "ssa",
        json!({"workload": {"manifests": [deployment()]}, "manifestConfigs": config}),
    )
    .await;
    env.agent.sync_all().await.unwrap();
    let deployments: Api<Deployment> = Api::namespaced(env.spoke_client.clone(), "default");
    let env_of = |d: &Deployment| {
        serde_json::to_value(d).unwrap()["spec"]["template"]["spec"]["containers"][0]["env"].clone()
    };
    // Someone on the managed cluster sets the container's env.
    let mut live = serde_json::to_value(deployments.get("hello").await.unwrap()).unwrap();
    live["spec"]["template"]["spec"]["containers"][0]["env"] =
        json!([{"name": "MODE", "value": "spoke"}]);
    live["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    let live: Deployment = serde_json::from_value(live).unwrap();
    deployments
        .replace("hello", &PostParams::default(), &live)
        .await
        .unwrap();
    // The hub changes the env and the replicas: the replicas are applied, the env is not.
    let mut changed = with_env("hub-2");
    changed["spec"]["replicas"] = json!(3);
    update_work(
        &env,
        "ssa",
        json!({"workload": {"manifests": [changed]}, "manifestConfigs": config}),
    )
    .await;
    env.agent.sync_all().await.unwrap();
    let applied = manifest_condition(&work(&env, "ssa").await.unwrap(), 0, "Applied");
    assert_eq!(applied.status, "True", "{}", applied.message);
    let live = deployments.get("hello").await.unwrap();
    assert_eq!(serde_json::to_value(&live).unwrap()["spec"]["replicas"], 3);
    assert_eq!(env_of(&live), json!([{"name": "MODE", "value": "spoke"}]));
}

#[tokio::test]
async fn an_applied_manifest_work_whose_work_is_gone_is_evicted_after_the_grace_period() {
    let env = env().await;
    let clock = Arc::new(ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap()));
    let config = AgentConfig::new(CLUSTER, env.agent.config().hub_hash.clone())
        .resync_interval(Duration::ZERO)
        .eviction_grace_period(Duration::from_secs(60));
    let agent = WorkAgent::new(env.hub_client.clone(), env.spoke_client.clone(), config)
        .with_clock(clock.clone());
    create_work(
        &env,
        "gone",
        json!({"workload": {"manifests": [configmap("orphaned", "v1")]}}),
    )
    .await;
    agent.sync_all().await.unwrap();

    // Another agent's record on the same cluster is never touched.
    let foreign: AppliedManifestWork = serde_json::from_value(json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "AppliedManifestWork",
        "metadata": {"name": "otherhub-x"},
        "spec": {"hubHash": "otherhub", "agentID": "someone-else", "manifestWorkName": "x"}
    }))
    .unwrap();
    let amws: Api<AppliedManifestWork> = Api::all(env.spoke_client.clone());
    amws.create(&PostParams::default(), &foreign).await.unwrap();

    // The work disappears from the hub without its finalizer running (e.g. while disconnected).
    let works = Api::<ManifestWork>::namespaced(env.hub_client.clone(), CLUSTER);
    works
        .patch(
            "gone",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    works
        .delete("gone", &DeleteParams::default())
        .await
        .unwrap();
    assert!(work(&env, "gone").await.is_none());

    let amw_name = format!("{}-gone", agent.config().hub_hash);
    agent.sync_all().await.unwrap();
    let amw = amws.get(&amw_name).await.unwrap();
    assert!(
        amw.status.unwrap().eviction_start_time.is_some(),
        "eviction started"
    );
    let configmaps: Api<ConfigMap> = Api::namespaced(env.spoke_client.clone(), "default");
    assert!(
        configmaps.get_opt("orphaned").await.unwrap().is_some(),
        "kept during the grace period"
    );

    clock.advance(Duration::from_secs(61));
    // The first pass deletes the record and its resource; the next one sees the resource gone
    // and releases the record.
    agent.sync_all().await.unwrap();
    agent.sync_all().await.unwrap();
    assert!(amws.get_opt(&amw_name).await.unwrap().is_none(), "evicted");
    assert!(
        configmaps.get_opt("orphaned").await.unwrap().is_none(),
        "its resources are gone too"
    );
    assert!(
        amws.get_opt("otherhub-x").await.unwrap().is_some(),
        "another agent's record is kept"
    );
}

async fn configmap_value(client: &Client, name: &str) -> Option<String> {
    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .get_opt(name)
        .await
        .unwrap()
        .and_then(|c| c.data)
        .and_then(|d| d.get("k").cloned())
}

#[tokio::test]
async fn with_informers_a_resync_writes_nothing_and_drift_is_still_repaired() {
    let env = env().await;
    assert!(env.agent.start_caches(Duration::from_secs(5)).await);
    create_work(
        &env,
        "cached",
        json!({"workload": {"manifests": [
        configmap("c0", "v1"), configmap("c1", "v1"), configmap("c2", "v1")]}}),
    )
    .await;
    // Informer reads lag by a watch round trip: the new work shows up shortly.
    assert!(
        eventually(Duration::from_secs(5), || async {
            env.agent.sync_all().await.unwrap();
            configmap_value(&env.spoke_client, "c2").await.as_deref() == Some("v1")
        })
        .await,
        "applied"
    );
    // Let the informers see the agent's own writes, then resync twice: nothing is written
    // and nothing is read from either API server but through the watches.
    assert!(
        eventually(Duration::from_secs(5), || async {
            env.hub.journal().clear();
            env.spoke.journal().clear();
            env.agent.sync_all().await.unwrap();
            env.hub.journal().writes() == 0 && env.spoke.journal().writes() == 0
        })
        .await,
        "a steady-state resync writes nothing"
    );
    env.hub.journal().clear();
    env.spoke.journal().clear();
    env.agent.sync_all().await.unwrap();
    assert_eq!(env.hub.journal().writes(), 0);
    assert_eq!(env.spoke.journal().writes(), 0);
    assert_eq!(
        env.spoke.journal().entries().len(),
        0,
        "every spoke read came from an informer: {:?}",
        env.spoke.journal().entries()
    );

    // Someone edits an applied resource on the managed cluster: the next resyncs put it back.
    let api = Api::<ConfigMap>::namespaced(env.spoke_client.clone(), "default");
    api.patch(
        "c1",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"data": {"k": "drifted"}})),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            env.agent.sync_all().await.unwrap();
            configmap_value(&env.spoke_client, "c1").await.as_deref() == Some("v1")
        })
        .await,
        "drift repaired"
    );
    // And a deleted one is recreated.
    api.delete("c0", &DeleteParams::default()).await.unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            env.agent.sync_all().await.unwrap();
            configmap_value(&env.spoke_client, "c0").await.as_deref() == Some("v1")
        })
        .await,
        "deleted resource recreated"
    );
    // A new generation of the work is applied, whatever the last sync remembered.
    update_work(
        &env,
        "cached",
        json!({"workload": {"manifests": [
        configmap("c0", "v2"), configmap("c1", "v2")]}}),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(5), || async {
            env.agent.sync_all().await.unwrap();
            configmap_value(&env.spoke_client, "c0").await.as_deref() == Some("v2")
                && configmap_value(&env.spoke_client, "c2").await.is_none()
        })
        .await,
        "the new generation applied and the dropped manifest deleted"
    );
}

#[tokio::test]
async fn a_stale_cached_copy_is_retried_against_the_server() {
    use ocm_work::apply::engine::ApplyEngine;
    use ocm_work::cache::SpokeObjects;
    use ocm_work::owner::applied_manifest_work_ref;

    let env = env().await;
    let engine = ApplyEngine::new(env.spoke_client.clone());
    let objects = SpokeObjects::new(env.spoke_client.clone(), 10);
    assert!(engine.use_object_cache(objects.clone()));
    let owner = applied_manifest_work_ref("amw", "amw-uid");
    let work_with = |value: &str| -> ManifestWork {
        serde_json::from_value(json!({
            "metadata": {"name": "w", "namespace": CLUSTER, "generation": 1},
            "spec": {"workload": {"manifests": [configmap("stale", value)]}}
        }))
        .unwrap()
    };
    let results = engine.apply_work(&work_with("v1"), &owner).await;
    assert!(results[0].outcome.is_ok(), "{:?}", results[0].outcome);
    let resolved = results[0].resolved.clone().unwrap();
    let informer = objects.informer(&resolved, "default").unwrap();
    assert!(informer.wait_synced(Duration::from_secs(5)).await);
    assert!(
        eventually(Duration::from_secs(5), || async {
            informer.get("default", "stale").is_some()
        })
        .await,
        "informer holds the object"
    );
    let old = (*informer.get("default", "stale").unwrap()).clone();

    // Someone else updates it; once the informer has seen that, put the old copy back.
    let api = Api::<ConfigMap>::namespaced(env.spoke_client.clone(), "default");
    api.patch(
        "stale",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"data": {"k": "other"}})),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            informer
                .get("default", "stale")
                .is_some_and(|o| o["data"]["k"] == "other")
        })
        .await
    );
    informer.remove("default", "stale");
    informer.insert(old);

    // The replace planned from the stale copy is refused (409) and redone from a fresh read.
    let results = engine.apply_work(&work_with("v2"), &owner).await;
    assert!(results[0].outcome.is_ok(), "{:?}", results[0].outcome);
    assert_eq!(
        configmap_value(&env.spoke_client, "stale").await.as_deref(),
        Some("v2")
    );

    // A cache that has not seen an existing object: the create fails with AlreadyExists and
    // the object is read and updated instead.
    informer.remove("default", "stale");
    let results = engine.apply_work(&work_with("v3"), &owner).await;
    assert!(results[0].outcome.is_ok(), "{:?}", results[0].outcome);
    assert_eq!(
        configmap_value(&env.spoke_client, "stale").await.as_deref(),
        Some("v3")
    );
}

fn feedback_value(w: &ManifestWork) -> Option<String> {
    let manifests = w
        .status
        .as_ref()?
        .resource_status
        .as_ref()?
        .manifests
        .as_ref()?;
    let values = manifests
        .first()?
        .status_feedbacks
        .as_ref()?
        .values
        .as_ref()?;
    values.first()?.field_value.string.clone()
}

#[tokio::test]
async fn watched_feedback_follows_the_resource_without_polling() {
    let env = env().await;
    // Status refresh and resync once an hour: only the watch can bring a change in quickly.
    let config = AgentConfig::new(CLUSTER, hub_hash("https://hub.example.com:6443"))
        .status_sync_interval(Duration::from_secs(3600))
        .resync_interval(Duration::from_secs(3600));
    let agent = WorkAgent::new(env.hub_client.clone(), env.spoke_client.clone(), config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(agent.run(async move {
        let _ = stopped.await;
    }));
    create_work(&env, "watched", json!({
        "workload": {"manifests": [configmap("watched", "v1")]},
        "manifestConfigs": [{
            "resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "watched"},
            "feedbackScrapeType": "Watch",
            "feedbackRules": [{"type": "JSONPaths", "jsonPaths": [{"name": "tier", "path": ".metadata.labels.tier"}]}]
        }]
    }))
    .await;
    let api = Api::<ConfigMap>::namespaced(env.spoke_client.clone(), "default");
    assert!(
        eventually(Duration::from_secs(10), || async {
            api.get_opt("watched").await.unwrap().is_some()
        })
        .await,
        "applied"
    );
    for tier in ["gold", "silver"] {
        api.patch(
            "watched",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"labels": {"tier": tier}}})),
        )
        .await
        .unwrap();
        assert!(
            eventually(Duration::from_secs(10), || async {
                work(&env, "watched")
                    .await
                    .is_some_and(|w| feedback_value(&w).as_deref() == Some(tier))
            })
            .await,
            "feedback shows {tier}: {:?}",
            work(&env, "watched").await.and_then(|w| w.status)
        );
    }
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), running).await;
}

#[tokio::test]
async fn the_agent_catches_up_after_losing_the_hub() {
    use ocm_testkit::fault::FaultRule;
    let env = env().await;
    // Every watch of works on the hub breaks after a few messages, like a flaky network.
    env.hub
        .inject(FaultRule::drop_watch_after(2).resource("manifestworks"));
    let config = AgentConfig::new(CLUSTER, hub_hash("https://hub.example.com:6443"))
        .status_sync_interval(Duration::from_secs(1));
    let agent = WorkAgent::new(env.hub_client.clone(), env.spoke_client.clone(), config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(agent.run(async move {
        let _ = stopped.await;
    }));
    create_work(
        &env,
        "flaky",
        json!({"workload": {"manifests": [configmap("flaky", "v1")]}}),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(15), || async {
            configmap_value(&env.spoke_client, "flaky").await.as_deref() == Some("v1")
        })
        .await,
        "applied"
    );
    // The hub then refuses the agent's reconnections for a while; the work changes meanwhile.
    env.hub.inject(
        FaultRule::new(503)
            .verb("watch")
            .resource("manifestworks")
            .times(2),
    );
    env.hub.inject(
        FaultRule::new(503)
            .verb("list")
            .resource("manifestworks")
            .times(2),
    );
    update_work(
        &env,
        "flaky",
        json!({"workload": {"manifests": [configmap("flaky", "v2"), configmap("added", "v2")]}}),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(30), || async {
            configmap_value(&env.spoke_client, "flaky").await.as_deref() == Some("v2")
                && configmap_value(&env.spoke_client, "added").await.as_deref() == Some("v2")
        })
        .await,
        "the change made while disconnected is applied"
    );
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), running).await;
}

#[tokio::test]
async fn a_new_agent_process_still_removes_what_an_earlier_one_applied() {
    let env = env().await;
    create_work(
        &env,
        "kept",
        json!({"workload": {"manifests": [
        configmap("first", "v1"), configmap("second", "v1")]}}),
    )
    .await;
    env.agent.sync_all().await.unwrap();
    assert!(configmap_value(&env.spoke_client, "second").await.is_some());
    drop(env.agent.clone());

    // A restarted agent knows nothing in memory; the AppliedManifestWork remembers.
    let config = AgentConfig::new(CLUSTER, hub_hash("https://hub.example.com:6443"));
    let restarted = WorkAgent::new(env.hub_client.clone(), env.spoke_client.clone(), config);
    assert!(restarted.start_caches(Duration::from_secs(5)).await);
    update_work(
        &env,
        "kept",
        json!({"workload": {"manifests": [configmap("first", "v1")]}}),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(5), || async {
            restarted.sync_all().await.unwrap();
            configmap_value(&env.spoke_client, "second").await.is_none()
        })
        .await,
        "the resource dropped from the work is deleted by the new process"
    );
    assert_eq!(
        configmap_value(&env.spoke_client, "first").await.as_deref(),
        Some("v1")
    );
}

#[tokio::test]
async fn with_executor_validating_caches_a_known_answer_sends_no_review() {
    let env = env().await;
    let config = AgentConfig::new(CLUSTER, hub_hash("https://hub.example.com:6443"))
        .resync_interval(Duration::ZERO)
        .executor_validating_caches(true);
    let agent = WorkAgent::new(env.hub_client.clone(), env.spoke_client.clone(), config);
    create_work(&env, "cached-exec", json!({
        "workload": {"manifests": [configmap("cm", "v1")]},
        "executor": {"subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": "default", "name": "deployer"}}}
    }))
    .await;
    let reviews = |env: &Env| {
        env.spoke
            .journal()
            .entries()
            .iter()
            .filter(|e| e.resource.as_deref() == Some("subjectaccessreviews"))
            .count()
    };
    agent.sync_all().await.ok();
    assert!(reviews(&env) > 0, "the first check asks the cluster");
    let w = work(&env, "cached-exec").await.unwrap();
    assert_eq!(manifest_condition(&w, 0, "Applied").status, "False");

    env.spoke.journal().clear();
    agent.sync_all().await.ok();
    assert_eq!(reviews(&env), 0, "the cached denial is reused");
    let w = work(&env, "cached-exec").await.unwrap();
    assert!(
        manifest_condition(&w, 0, "Applied")
            .message
            .contains("not allowed to apply the resource  configmaps, default cm")
    );
}

#[tokio::test]
async fn server_side_apply_ignores_fields_selected_by_jq() {
    let env = env().await;
    let with_env = |java_opts: &str| {
        let mut d = deployment();
        d["spec"]["template"]["spec"]["containers"][0]["env"] =
            json!([{"name": "JAVA_OPTS", "value": java_opts}, {"name": "MODE", "value": "hub"}]);
        d
    };
    let config = |expr: &str| {
        json!([{
            "resourceIdentifier": {"group": "apps", "resource": "deployments", "namespace": "default", "name": "hello"},
            "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {"force": true, "ignoreFields": [
                {"condition": "OnSpokePresent", "jqPathExpressions": [expr]}]}}
        }])
    };
    let expr = r#".spec.template.spec.containers[].env[] | select(.name == "JAVA_OPTS")"#;
    create_work(
        &env,
        "jq",
        json!({"workload": {"manifests": [with_env("-Xmx1g")]}, "manifestConfigs": config(expr)}),
    )
    .await;
    env.agent.sync_all().await.unwrap();
    let deployments: Api<Deployment> = Api::namespaced(env.spoke_client.clone(), "default");
    let java_opts = |d: &Deployment| {
        let v = serde_json::to_value(d).unwrap();
        v.pointer("/spec/template/spec/containers/0/env")
            .and_then(Value::as_array)
            .and_then(|env| env.iter().find(|e| e["name"] == "JAVA_OPTS"))
            .and_then(|e| e["value"].as_str().map(String::from))
    };
    assert_eq!(
        java_opts(&deployments.get("hello").await.unwrap()).as_deref(),
        Some("-Xmx1g"),
        "ignored fields are sent on create"
    );
    // The hub changes JAVA_OPTS: the spoke value stays, since the field is ignored once present.
    update_work(
        &env,
        "jq",
        json!({"workload": {"manifests": [with_env("-Xmx4g")]}, "manifestConfigs": config(expr)}),
    )
    .await;
    env.agent.sync_all().await.unwrap();
    let w = work(&env, "jq").await.unwrap();
    assert_eq!(manifest_condition(&w, 0, "Applied").status, "True");
    assert_eq!(
        java_opts(&deployments.get("hello").await.unwrap()).as_deref(),
        Some("-Xmx1g")
    );

    // A broken expression fails that manifest with upstream's reason.
    update_work(&env, "jq", json!({"workload": {"manifests": [with_env("-Xmx4g")]}, "manifestConfigs": config(".spec.(")})).await;
    env.agent.sync_all().await.ok();
    let applied = manifest_condition(&work(&env, "jq").await.unwrap(), 0, "Applied");
    assert_eq!(applied.status, "False");
    assert_eq!(applied.reason, "AppliedManifestSSAIgnoreFieldError");
    assert!(
        applied
            .message
            .starts_with("Failed to process ignoreFields: JQ expression error in '.spec.(': failed to parse jq expression"),
        "{}",
        applied.message
    );
}

/// The seed's Job (no selector) named `name`, optionally with a manual selector.
fn job(name: &str, manual_selector: bool) -> Value {
    let mut job = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": {
            "containers": [{"name": "pi", "image": "perl:5.34.0", "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]}],
            "restartPolicy": "Never"}},
            "backoffLimit": 4}});
    if manual_selector {
        job["spec"]["manualSelector"] = json!(true);
        job["spec"]["selector"] = json!({"matchLabels": {"job": name}});
        job["spec"]["template"]["metadata"] = json!({"labels": {"job": name}});
    }
    job
}

#[tokio::test]
async fn the_seed_job_fails_on_immutable_defaults_and_both_documented_fixes_work() {
    let env = env().await;
    let applied = |w: &ManifestWork| manifest_condition(w, 0, "Applied");

    // A Job without spec.selector: the server generates the selector and pod labels, which are
    // immutable; the next apply compares, finds differences and its update is refused.
    create_work(
        &env,
        "example-job",
        json!({"workload": {"manifests": [job("pi", false)]}}),
    )
    .await;
    env.agent.sync_all().await.ok();
    assert_eq!(
        applied(&work(&env, "example-job").await.unwrap()).status,
        "True",
        "created"
    );
    env.agent.sync_all().await.ok();
    let c = applied(&work(&env, "example-job").await.unwrap());
    assert_eq!(c.status, "False", "{}", c.message);
    assert_eq!(c.reason, "AppliedManifestFailed");
    assert!(c.message.contains("field is immutable"), "{}", c.message);

    // Fix 1: a manual selector with matching pod labels.
    create_work(
        &env,
        "example-job-1",
        json!({"workload": {"manifests": [job("pi-manual", true)]}}),
    )
    .await;
    // Fix 2: server-side apply.
    create_work(&env, "example-job-2", json!({
        "workload": {"manifests": [job("pi-ssa", false)]},
        "manifestConfigs": [{
            "resourceIdentifier": {"group": "batch", "resource": "jobs", "namespace": "default", "name": "pi-ssa"},
            "updateStrategy": {"type": "ServerSideApply"}
        }]
    }))
    .await;
    for _ in 0..3 {
        env.agent.sync_all().await.ok();
    }
    for name in ["example-job-1", "example-job-2"] {
        let c = applied(&work(&env, name).await.unwrap());
        assert_eq!(c.status, "True", "{name}: {}", c.message);
        let w = work(&env, name).await.unwrap();
        assert_eq!(work_condition(&w, "Applied").0, "True", "{name}");
    }
}

/// Resources applied by a pass whose AppliedManifestWork bookkeeping failed are still
/// garbage-collected when a later version of the work drops them.
#[tokio::test]
async fn resources_applied_before_a_failed_bookkeeping_are_still_collected() {
    let env = env().await;
    create_work(
        &env,
        "w",
        json!({"workload": {"manifests": [configmap("a", "v1"), configmap("b", "v1")]}}),
    )
    .await;
    // The first pass applies both ConfigMaps, then fails to record them.
    env.spoke.faults().add(
        ocm_testkit::fault::FaultRule::new(500)
            .verb("patch")
            .resource("appliedmanifestworks")
            .times(1),
    );
    assert!(
        env.agent.sync_all().await.is_err(),
        "the bookkeeping failed"
    );
    assert!(configmap_value(&env.spoke_client, "b").await.is_some());
    // The work drops `b` before any pass recorded it.
    update_work(
        &env,
        "w",
        json!({"workload": {"manifests": [configmap("a", "v2")]}}),
    )
    .await;
    env.agent.sync_all().await.unwrap();
    env.agent.sync_all().await.unwrap();
    assert_eq!(
        configmap_value(&env.spoke_client, "a").await.as_deref(),
        Some("v2")
    );
    assert_eq!(
        configmap_value(&env.spoke_client, "b").await,
        None,
        "the dropped ConfigMap is collected"
    );
}

/// Upstream's vector "remove conditions set by deleted rules": a work at generation 2 whose
/// status still carries a deleted rule's `Complete` (True, on the work and its manifest, with
/// no observedGeneration), written by an agent that records manifests without their kind, and
/// whose remaining rule is another one. Each sync prunes the deleted rule's conditions
/// (`Complete` is then not found, on the manifest and on the work) and evaluates the rule that
/// is left; nothing of the old `Complete` survives later syncs.
#[tokio::test]
async fn conditions_of_deleted_rules_go_even_with_a_stale_observed_generation() {
    let env = env().await;
    Api::<ConfigMap>::namespaced(env.spoke_client.clone(), "default")
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "n1", "namespace": "default"},
                "data": {"key1": "val1"}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let spec = |rule: &str| {
        json!({
            "workload": {"manifests": [configmap("n1", "val1")]},
            "manifestConfigs": [{"resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": "n1"},
                "conditionRules": [{"type": "CEL", "condition": rule, "celExpressions": ["true"]}]}]
        })
    };
    create_work(&env, "rules", spec("Complete")).await;
    update_work(&env, "rules", spec("SomeOtherRule")).await;
    let api = Api::<ManifestWork>::namespaced(env.hub_client.clone(), CLUSTER);
    api.patch(
        "rules",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"finalizers": ["cluster.open-cluster-management.io/manifest-work-cleanup"]}})),
    )
    .await
    .unwrap();
    let at = "2026-01-01T00:00:00Z";
    api.patch_status(
        "rules",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"status": {
            "conditions": [
                {"type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete",
                    "message": "Apply manifest work complete", "lastTransitionTime": at},
                {"type": "Complete", "status": "True", "reason": "ConditionRulesAggregated",
                    "message": "", "lastTransitionTime": at},
            ],
            "resourceStatus": {"manifests": [{
                "resourceMeta": {"ordinal": 0, "group": "", "version": "v1",
                    "resource": "configmaps", "namespace": "default", "name": "n1"},
                "conditions": [{"type": "Complete", "status": "True",
                    "reason": "ConditionRuleEvaluated", "message": "", "lastTransitionTime": at}],
            }]},
        }})),
    )
    .await
    .unwrap();
    assert_eq!(
        work(&env, "rules").await.unwrap().metadata.generation,
        Some(2)
    );

    for pass in 0..3 {
        env.agent.sync_all().await.unwrap();
        let w = work(&env, "rules").await.unwrap();
        let manifest = manifest_status(&w, 0);
        assert!(
            conditions::find(&manifest.conditions, "Complete").is_none(),
            "sync {pass}: the deleted rule's manifest condition is pruned: {:?}",
            manifest.conditions
        );
        let rule = conditions::find(&manifest.conditions, "SomeOtherRule")
            .unwrap_or_else(|| panic!("sync {pass}: {:?}", manifest.conditions));
        assert_eq!(
            (rule.status.as_str(), rule.reason.as_str()),
            ("True", "ConditionRuleEvaluated")
        );
        let conds = w.status.as_ref().unwrap().conditions.clone().unwrap();
        assert!(
            conditions::find(&conds, "Complete").is_none(),
            "sync {pass}: the work's Complete is not found: {conds:?}"
        );
    }
}
