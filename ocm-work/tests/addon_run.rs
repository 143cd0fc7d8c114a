//! The addon manager as a running controller (watches, batching, resync), against API errors
//! and slow answers.

use crate::addon_support;
use crate::support;

use std::sync::Arc;
use std::time::Duration;

use addon_support::{Fleet, deployment, namespace};
use ocm_api::addon::v1beta1::ManagedClusterAddOn;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::work::v1::Manifest;
use ocm_testkit::FaultRule;
use ocm_work::addon::{AddonConfigs, AgentAddon, AgentAddonOptions, RenderError};

struct Hello(&'static str);

impl AgentAddon for Hello {
    fn options(&self) -> AgentAddonOptions {
        AgentAddonOptions::new(self.0)
    }

    fn manifests(
        &self,
        _: &ManagedCluster,
        _: &ManagedClusterAddOn,
        _: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        Ok(vec![
            namespace(self.0),
            deployment(self.0, "agent", "agent:v1"),
        ])
    }
}

fn install(fleet: &Fleet, name: &str, cluster: &str) {
    fleet.apply(&format!(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {{name: {name}}}\nspec: {{}}\n---\n\
         apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {{name: {name}, namespace: {cluster}}}\nspec: {{}}\n"
    ));
}

#[tokio::test]
async fn failing_and_slow_writes_are_retried_and_do_not_hold_back_others() {
    let fleet = Fleet::new(2, |m| {
        m.with_addon(Arc::new(Hello("a")))
            .with_addon(Arc::new(Hello("b")))
    })
    .await;
    install(&fleet, "a", "cluster1");
    install(&fleet, "b", "cluster2");
    // The hub refuses the first two ManifestWork creations in cluster1 and answers slowly in
    // cluster2.
    fleet.hub.hub().inject(
        FaultRule::new(500)
            .verb("create")
            .resource("manifestworks")
            .namespace("cluster1")
            .times(2),
    );
    fleet.hub.hub().inject(
        FaultRule::delay_only(Duration::from_millis(50))
            .resource("manifestworks")
            .namespace("cluster2"),
    );
    let out = fleet.round().await;
    assert_eq!(out["a"].failed.len(), 1, "{:?}", out["a"]);
    assert!(out["b"].failed.is_empty(), "{:?}", out["b"]);
    let c = fleet
        .condition("cluster1", "a", "ManifestApplied")
        .await
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "ManifestWorkApplyFailed")
    );
    assert!(
        c.message.starts_with("failed to apply manifestWork: "),
        "{}",
        c.message
    );
    // People read the message with `kubectl describe`: it carries the server's message, never
    // kube's Debug dump of the Status.
    assert!(
        c.message.ends_with(": injected fault (500)"),
        "{}",
        c.message
    );
    assert!(!c.message.contains("Status {"), "{}", c.message);
    assert!(fleet.work("cluster2", "addon-b-deploy-0").await.is_some());
    let out = fleet.rounds(3).await;
    assert_eq!(
        fleet.cond("cluster2", "b", "ManifestApplied").await.0,
        "True"
    );
    assert!(out["a"].failed.is_empty(), "{:?}", out["a"]);
    assert_eq!(
        fleet.cond("cluster1", "a", "ManifestApplied").await,
        ("True".into(), "AddonManifestApplied".into())
    );
}

#[tokio::test]
async fn run_reacts_to_events() {
    let fleet = Fleet::new(1, |m| m.with_addon(Arc::new(Hello("watched")))).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let manager = fleet.manager.clone();
    let task = tokio::spawn(manager.run(Duration::from_secs(3600), async move {
        let _ = stopped.await;
    }));
    install(&fleet, "watched", "cluster1");
    let mut found = false;
    for _ in 0..300 {
        if fleet
            .work("cluster1", "addon-watched-deploy-0")
            .await
            .is_some()
            && fleet
                .condition("cluster1", "watched", "RegistrationApplied")
                .await
                .is_some()
        {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(found, "the manager deployed the addon after the events");
    // Deleting the addon: the works go with it, whatever the manager does.
    kube::Api::<ManagedClusterAddOn>::namespaced(fleet.client.clone(), "cluster1")
        .delete("watched", &Default::default())
        .await
        .unwrap();
    assert!(
        fleet
            .work("cluster1", "addon-watched-deploy-0")
            .await
            .is_none()
    );
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("stops")
        .unwrap();
}

/// An addon that cannot start says why: in its outcome, and in one WARN line from `run` (not
/// one per round), whether the hub has no ClusterManagementAddOn of its name or does not serve
/// the kind at all.
#[tokio::test]
async fn an_addon_that_cannot_start_says_why_once() {
    // A hub without OCM's CRDs.
    let bare = ocm_testkit::FakeCluster::new();
    let manager =
        ocm_work::addon::AddonManager::new(bare.client()).with_addon(Arc::new(Hello("a")));
    let out = manager.reconcile_all().await.unwrap();
    let why = out["a"].waiting.as_deref().unwrap_or_default();
    assert!(
        why.starts_with("the hub does not serve ClusterManagementAddOns") && why.contains("CRDs"),
        "{why}"
    );

    // A hub with the CRDs but no ClusterManagementAddOn "a".
    let hub = ocm_testkit::FakeCluster::new();
    ocm_testkit::install_crds(&hub).unwrap();
    let manager = ocm_work::addon::AddonManager::new(hub.client()).with_addon(Arc::new(Hello("a")));
    let out = manager.reconcile_all().await.unwrap();
    assert_eq!(
        out["a"].waiting.as_deref(),
        Some(r#"no ClusterManagementAddOn "a" on the hub: create one to install addon a"#)
    );

    // `run` logs it once, however many rounds find it so.
    let runner = manager.clone();
    let warnings = support::warnings_while_running(
        Duration::from_millis(300),
        "addon not running",
        |shutdown| runner.run(Duration::from_millis(20), shutdown),
    )
    .await;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(r#"addon not running: no ClusterManagementAddOn "a" on the hub"#),
        "{}",
        warnings[0]
    );

    // Once the ClusterManagementAddOn exists, the addon runs.
    hub.apply_yaml(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ClusterManagementAddOn\n\
         metadata: {name: a}\nspec: {}\n",
    )
    .unwrap();
    let out = manager.reconcile_all().await.unwrap();
    assert_eq!(out["a"].waiting, None);
}

/// An addon whose Deployment asks for -1 replicas, which the managed cluster's API server
/// refuses.
struct Rejected;

impl AgentAddon for Rejected {
    fn options(&self) -> AgentAddonOptions {
        AgentAddonOptions::new("rejected")
    }

    fn manifests(
        &self,
        _: &ManagedCluster,
        _: &ManagedClusterAddOn,
        _: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        let mut bad = deployment("rejected", "agent", "agent:v1");
        bad.0["spec"]["replicas"] = serde_json::json!(-1);
        Ok(vec![namespace("rejected"), bad])
    }
}

/// A manifest the managed cluster refuses is in the round's `failed`, naming the cluster, the
/// work, the manifest and the cluster's message (not only in the ManifestWork's status), and
/// `run` logs it at WARN once however many rounds find it.
#[tokio::test]
async fn manifests_the_cluster_rejects_are_in_failed_and_logged_once() {
    let fleet = Fleet::new(1, |m| m.with_addon(Arc::new(Rejected))).await;
    install(&fleet, "rejected", "cluster1");
    fleet.rounds(3).await;
    let out = fleet.round().await;
    let failed = &out["rejected"].failed;
    assert_eq!(failed.len(), 1, "{failed:?}");
    let (cluster, why) = &failed[0];
    assert_eq!(cluster, "cluster1");
    let works = fleet.works("cluster1").await;
    let kinds: Vec<_> = works[0]
        .manifests()
        .iter()
        .map(|m| m.kind().unwrap_or_default().to_string())
        .collect();
    let ordinal = kinds.iter().position(|k| k == "Deployment").unwrap();
    assert_eq!(
        why,
        &format!(
            "ManifestWork cluster1/addon-rejected-deploy-0: manifest {ordinal} (Deployment \
             rejected/agent) not applied: Failed to apply manifest: Deployment.apps \"agent\" is \
             invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        )
    );
    // The namespace was applied, so only the Deployment is named; the addon is still
    // progressing, as upstream says.
    assert_eq!(
        fleet.cond("cluster1", "rejected", "Progressing").await,
        ("True".to_string(), "Progressing".to_string())
    );

    let runner = fleet.manager.clone();
    let warnings = support::warnings_while_running(
        Duration::from_millis(300),
        "not applied",
        |shutdown| async move { runner.run(Duration::from_millis(20), shutdown).await },
    )
    .await;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("addon round left clusters behind: cluster1: ManifestWork"),
        "{}",
        warnings[0]
    );
}

/// [`AddonManager::reconcile_addon`](ocm_work::addon::AddonManager::reconcile_addon) mounted
/// in kube's own `Controller` (the shape the addon module's docs show): over
/// ClusterManagementAddOns, each ManagedClusterAddOn mapped to the one of its name. Enabling
/// the addon on a cluster (a ManagedClusterAddOn) reconciles the addon, and its work is
/// written.
#[tokio::test]
async fn reconcile_addon_mounts_in_kubes_controller() {
    use futures::StreamExt;
    use kube::ResourceExt;
    use kube::api::Api;
    use kube::runtime::reflector::ObjectRef;
    use kube::runtime::{Controller, controller::Action, watcher};
    use ocm_api::addon::v1beta1::ClusterManagementAddOn;
    use ocm_work::addon::AddonManager;

    let fleet = Fleet::new(2, |m| m.with_addon(Arc::new(Hello("a")))).await;
    install(&fleet, "a", "cluster1");
    let manager = Arc::new(fleet.manager.clone());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let controller = Controller::new(
        Api::<ClusterManagementAddOn>::all(fleet.client.clone()),
        watcher::Config::default(),
    )
    .watches(
        Api::<ManagedClusterAddOn>::all(fleet.client.clone()),
        watcher::Config::default(),
        |mca| Some(ObjectRef::new(&mca.name_any())),
    )
    .graceful_shutdown_on(async move {
        let _ = stopped.await;
    })
    .run(
        |cma: Arc<ClusterManagementAddOn>, manager: Arc<AddonManager>| async move {
            let outcome = manager.reconcile_addon(&cma.name_any()).await?;
            let resync = Duration::from_secs(60);
            Ok::<_, ocm_work::Error>(Action::requeue(outcome.requeue_after.unwrap_or(resync)))
        },
        |_, _, _| Action::requeue(Duration::from_secs(1)),
        manager,
    )
    .for_each(|_| async {});
    let task = tokio::spawn(controller);

    let works = async |cluster: &str| fleet.works(cluster).await.len();
    ocm_testkit::wait::wait_for(
        "the addon's work on cluster1",
        Duration::from_secs(10),
        async || works("cluster1").await == 1,
    )
    .await;
    // A second cluster enabled later.
    fleet.apply(
        "apiVersion: addon.open-cluster-management.io/v1beta1\nkind: ManagedClusterAddOn\n\
         metadata: {name: a, namespace: cluster2}\nspec: {}\n",
    );
    ocm_testkit::wait::wait_for(
        "the addon's work on cluster2",
        Duration::from_secs(10),
        async || works("cluster2").await == 1,
    )
    .await;
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the controller stops")
        .unwrap();
}
