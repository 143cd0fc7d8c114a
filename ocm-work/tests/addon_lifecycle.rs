//! Addon lifecycle: removal with the pre-delete hook and orphaned resources, deploy works
//! split by size, manifests that cannot be built, and the hub RBAC of the agent.

use crate::addon_support;

use std::sync::{Arc, Mutex};

use addon_support::{Fleet, deployment, namespace};
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PostParams};
use ocm_api::addon::v1beta1::ManagedClusterAddOn;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::constants::addon as ac;
use ocm_api::work::v1::Manifest;
use ocm_work::addon::permission::HubPermission;
use ocm_work::addon::{
    AddonConfigs, AgentAddon, AgentAddonOptions, RegistrationOption, RenderError,
};
use serde_json::json;

/// An addon whose manifests a test can change.
struct Scripted {
    name: &'static str,
    manifests: Mutex<Vec<Manifest>>,
    options: AgentAddonOptions,
}

impl Scripted {
    fn new(name: &'static str, manifests: Vec<Manifest>) -> Arc<Self> {
        Self::with_options(name, manifests, AgentAddonOptions::new(name))
    }

    fn with_options(
        name: &'static str,
        manifests: Vec<Manifest>,
        options: AgentAddonOptions,
    ) -> Arc<Self> {
        Arc::new(Self {
            name,
            manifests: Mutex::new(manifests),
            options,
        })
    }

    fn set(&self, manifests: Vec<Manifest>) {
        *self.manifests.lock().unwrap() = manifests;
    }
}

impl AgentAddon for Scripted {
    fn options(&self) -> AgentAddonOptions {
        self.options.clone()
    }

    fn manifests(
        &self,
        _: &ManagedCluster,
        _: &ManagedClusterAddOn,
        _: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        let _ = self.name;
        Ok(self.manifests.lock().unwrap().clone())
    }
}

fn install(fleet: &Fleet, name: &str) {
    fleet.apply(&format!(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: {name}}}\nspec: {{}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {{name: {name}, namespace: cluster1}}\nspec: {{}}\n"
    ));
}

fn config_map(name: &str, bytes: usize, annotations: serde_json::Value) -> Manifest {
    Manifest::new(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "hooked", "annotations": annotations},
        "data": {"blob": "x".repeat(bytes)}
    }))
}

fn cleanup_job() -> Manifest {
    Manifest::new(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "cleanup", "namespace": "hooked",
                     "annotations": {ac::PRE_DELETE_HOOK_ANNOTATION: ""}},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "cleanup", "image": "busybox", "command": ["sh", "-c", "echo bye"]}]}}}
    }))
}

#[tokio::test]
async fn removal_runs_the_pre_delete_hook_first_and_keeps_orphans() {
    let addon = Scripted::new(
        "hooked",
        vec![
            namespace("hooked"),
            deployment("hooked", "agent", "agent:v1"),
            // Outside the addon's namespace, whose deletion would take it along.
            Manifest::new(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "keep-me", "namespace": "default",
                             "annotations": {ac::DELETION_ORPHAN_ANNOTATION: ""}}})),
            cleanup_job(),
        ],
    );
    let fleet = Fleet::new(1, |m| m.with_addon(addon.clone())).await;
    install(&fleet, "hooked");
    fleet.rounds(3).await;
    let mca = fleet.mca("cluster1", "hooked").await.unwrap();
    assert!(
        mca.finalizers()
            .contains(&ac::PRE_DELETE_HOOK_FINALIZER.to_string())
    );
    assert!(
        fleet
            .work("cluster1", "addon-hooked-pre-delete")
            .await
            .is_none(),
        "the hook runs only on removal"
    );
    assert!(
        fleet
            .spoke_object("cluster1", "batch", "v1", "jobs", "hooked", "cleanup")
            .is_none()
    );
    let work = fleet
        .work("cluster1", "addon-hooked-deploy-0")
        .await
        .unwrap();
    let rules = &work
        .spec
        .delete_option
        .as_ref()
        .unwrap()
        .selectively_orphan
        .as_ref()
        .unwrap()
        .orphaning_rules
        .as_ref()
        .unwrap()[0];
    assert_eq!(
        (rules.resource.as_str(), rules.name.as_str()),
        ("configmaps", "keep-me")
    );

    Api::<ManagedClusterAddOn>::namespaced(fleet.client.clone(), "cluster1")
        .delete("hooked", &DeleteParams::default())
        .await
        .unwrap();
    // The finalizer holds the addon; the hook work is applied and the agent runs the Job.
    fleet.manager.reconcile_all().await.unwrap();
    assert!(fleet.mca("cluster1", "hooked").await.is_some());
    let hook = fleet
        .work("cluster1", "addon-hooked-pre-delete")
        .await
        .expect("hook work");
    assert_eq!(hook.spec.manifests()[0].kind(), Some("Job"));
    let c = fleet
        .condition("cluster1", "hooked", "HookManifestCompleted")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "HookManifestIsNotCompleted")
    );
    assert_eq!(
        c.message,
        "hook manifestWork addon-hooked-pre-delete is not completed."
    );
    assert!(
        fleet
            .work("cluster1", "addon-hooked-deploy-0")
            .await
            .is_some(),
        "the agent stays while the hook runs"
    );
    fleet.agents_sync().await;
    assert!(
        fleet
            .spoke_object("cluster1", "batch", "v1", "jobs", "hooked", "cleanup")
            .is_some()
    );

    // The Job completed: the finalizer goes, then the addon and its works.
    fleet.rounds(2).await;
    assert!(fleet.mca("cluster1", "hooked").await.is_none());
    assert!(fleet.works("cluster1").await.is_empty());
    assert!(
        fleet
            .spoke_object("cluster1", "apps", "v1", "deployments", "hooked", "agent")
            .is_none()
    );
    assert!(
        fleet
            .spoke_object("cluster1", "", "v1", "configmaps", "default", "keep-me")
            .is_some(),
        "orphaned on removal"
    );
}

#[tokio::test]
async fn without_a_hook_there_is_no_finalizer() {
    let addon = Scripted::new(
        "plain",
        vec![namespace("plain"), deployment("plain", "agent", "agent:v1")],
    );
    let fleet = Fleet::new(1, |m| m.with_addon(addon.clone())).await;
    install(&fleet, "plain");
    fleet.rounds(2).await;
    assert!(
        fleet
            .mca("cluster1", "plain")
            .await
            .unwrap()
            .finalizers()
            .is_empty()
    );
    // A hook added later brings the finalizer; removed again, it goes.
    addon.set(vec![
        namespace("plain"),
        deployment("plain", "agent", "agent:v1"),
        cleanup_job(),
    ]);
    fleet.rounds(2).await;
    assert_eq!(
        fleet.mca("cluster1", "plain").await.unwrap().finalizers(),
        [ac::PRE_DELETE_HOOK_FINALIZER]
    );
    addon.set(vec![
        namespace("plain"),
        deployment("plain", "agent", "agent:v1"),
    ]);
    fleet.rounds(2).await;
    assert!(
        fleet
            .mca("cluster1", "plain")
            .await
            .unwrap()
            .finalizers()
            .is_empty()
    );
}

#[tokio::test]
async fn large_manifest_sets_are_split_across_works() {
    let big = |n: usize| {
        (0..n)
            .map(|i| config_map(&format!("cm{i}"), 1400, json!({})))
            .collect::<Vec<_>>()
    };
    let addon = Scripted::new("big", big(6));
    let fleet = Fleet::new(1, |m| m.with_addon(addon.clone()).with_manifest_limit(4000)).await;
    install(&fleet, "big");
    fleet.rounds(3).await;
    let names: Vec<String> = fleet
        .works("cluster1")
        .await
        .iter()
        .map(|w| w.name_any())
        .collect();
    assert_eq!(
        names,
        [
            "addon-big-deploy-0",
            "addon-big-deploy-1",
            "addon-big-deploy-2"
        ]
    );
    for i in 0..6 {
        assert!(
            fleet
                .spoke_object(
                    "cluster1",
                    "",
                    "v1",
                    "configmaps",
                    "hooked",
                    &format!("cm{i}")
                )
                .is_some(),
            "cm{i}"
        );
    }
    assert_eq!(
        fleet.cond("cluster1", "big", "ManifestApplied").await,
        ("True".into(), "AddonManifestApplied".into())
    );
    assert_eq!(
        fleet.cond("cluster1", "big", "Progressing").await,
        ("False".into(), "Completed".into())
    );
    // Fewer manifests: emptied works are deleted, the rest keep their names.
    addon.set(big(2));
    fleet.rounds(3).await;
    let names: Vec<String> = fleet
        .works("cluster1")
        .await
        .iter()
        .map(|w| w.name_any())
        .collect();
    assert_eq!(names, ["addon-big-deploy-0"]);
    assert!(
        fleet
            .spoke_object("cluster1", "", "v1", "configmaps", "hooked", "cm5")
            .is_none()
    );
}

#[tokio::test]
async fn manifests_that_cannot_be_built_are_a_condition() {
    let broken = Scripted::new(
        "broken",
        vec![Manifest::new(json!({"metadata": {"name": "no-kind"}}))],
    );
    let huge = Scripted::new("huge", vec![config_map("huge", 8000, json!({}))]);
    let fine = Scripted::new("fine", vec![config_map("fine", 10, json!({}))]);
    let fleet = Fleet::new(1, |m| {
        m.with_addon(broken)
            .with_addon(huge)
            .with_addon(fine)
            .with_manifest_limit(4000)
    })
    .await;
    for n in ["broken", "huge", "fine"] {
        install(&fleet, n);
    }
    let out = fleet.rounds(2).await;
    let c = fleet
        .condition("cluster1", "broken", "ManifestApplied")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "ManifestWorkApplyFailed")
    );
    assert_eq!(
        c.message,
        "failed to build manifestwork: manifest 0: got empty kind/version from object"
    );
    let c = fleet
        .condition("cluster1", "huge", "ManifestApplied")
        .await
        .unwrap();
    assert!(
        c.message
            .starts_with("failed to build manifestwork: manifest v1 ConfigMap hooked/huge is "),
        "{}",
        c.message
    );
    assert_eq!(out["broken"].failed.len(), 1);
    assert!(out["fine"].failed.is_empty());
    assert_eq!(
        fleet.cond("cluster1", "fine", "ManifestApplied").await.0,
        "True"
    );
}

#[tokio::test]
async fn hub_permissions_follow_the_registration() {
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "reporter-agent"},
        "rules": [{"apiGroups": ["cluster.open-cluster-management.io"], "resources": ["addonplacementscores"],
                   "verbs": ["get", "create", "update", "patch"]}]
    }))
    .unwrap();
    let options = AgentAddonOptions::new("reporter").with_registration(
        RegistrationOption::kube_client("reporter", "agent")
            .with_permission(HubPermission::KubeClientRole(role)),
    );
    let addon = Scripted::with_options("reporter", vec![config_map("r", 10, json!({}))], options);
    let fleet = Fleet::new(2, |m| m.with_addon(addon)).await;
    install(&fleet, "reporter");
    fleet.rounds(1).await;
    assert_eq!(
        fleet
            .cond("cluster1", "reporter", "RegistrationApplied")
            .await,
        ("False".into(), "PermissionConfigPending".into())
    );
    fleet.rounds(2).await;
    assert_eq!(
        fleet
            .cond("cluster1", "reporter", "RegistrationApplied")
            .await,
        ("True".into(), "SetPermissionApplied".into())
    );
    let st = fleet
        .mca("cluster1", "reporter")
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(
        st.namespace.as_deref(),
        Some("open-cluster-management-agent-addon")
    );
    let binding = Api::<RoleBinding>::namespaced(fleet.client.clone(), "cluster1")
        .get("reporter-agent")
        .await
        .unwrap();
    assert_eq!(
        binding.subjects.as_ref().unwrap().len(),
        3,
        "the user and both groups"
    );
    let user = "system:open-cluster-management:cluster:cluster1:addon:reporter:agent:agent";
    let review = |ns: &str, verb: &str| {
        serde_json::from_value::<SubjectAccessReview>(json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "resourceAttributes": {"namespace": ns, "verb": verb,
                "group": "cluster.open-cluster-management.io", "resource": "addonplacementscores"}}
        }))
        .unwrap()
    };
    let api: Api<SubjectAccessReview> = Api::all(fleet.client.clone());
    let allowed = |r: SubjectAccessReview| {
        let api = api.clone();
        async move {
            api.create(&PostParams::default(), &r)
                .await
                .unwrap()
                .status
                .unwrap()
                .allowed
        }
    };
    assert!(allowed(review("cluster1", "update")).await);
    assert!(!allowed(review("cluster2", "update")).await);
    assert!(!allowed(review("cluster1", "delete")).await);
    // The RBAC goes with the addon.
    Api::<ManagedClusterAddOn>::namespaced(fleet.client.clone(), "cluster1")
        .delete("reporter", &DeleteParams::default())
        .await
        .unwrap();
    assert!(
        Api::<RoleBinding>::namespaced(fleet.client.clone(), "cluster1")
            .get_opt("reporter-agent")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<Role>::namespaced(fleet.client.clone(), "cluster1")
            .get_opt("reporter-agent")
            .await
            .unwrap()
            .is_none()
    );
}
