//! The reconcilers in kube-runtime's shape (`ocm_work::runtime::reconcile`) mounted in
//! `Controller`s of our own: a Placement and a ManifestWorkReplicaSet on a fake hub reach the
//! clusters, and the work agent's reconcile applies the resulting work.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{Controller, watcher};
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::ManagedClusterSetBinding;
use ocm_api::work::v1::ManifestWork;
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
use ocm_placement::controller::PlacementController;
use ocm_testkit::FakeHub;
use ocm_testkit::wait::eventually;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use ocm_work::replicaset::controller::ReplicaSetController;
use ocm_work::runtime::reconcile;
use ocm_work::runtime::shutdown::Shutdown;
use serde_json::json;

const NS: &str = "apps";

#[tokio::test]
async fn the_reconcilers_run_in_controllers_of_our_own() {
    let fleet = FakeHub::new(2).unwrap();
    let hub = fleet.hub().client();
    fleet
        .hub()
        .apply_yaml(&format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NS}}}"
        ))
        .unwrap();
    let binding: ManagedClusterSetBinding = serde_json::from_value(json!({
        "metadata": {"name": "default", "namespace": NS}, "spec": {"clusterSet": "default"}
    }))
    .unwrap();
    Api::<ManagedClusterSetBinding>::namespaced(hub.clone(), NS)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    let placement: Placement =
        serde_json::from_value(json!({"metadata": {"name": "p", "namespace": NS}, "spec": {}}))
            .unwrap();
    Api::<Placement>::namespaced(hub.clone(), NS)
        .create(&PostParams::default(), &placement)
        .await
        .unwrap();
    let replica_set: ManifestWorkReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "rs", "namespace": NS},
        "spec": {
            "placementRefs": [{"name": "p", "rolloutStrategy": {"type": "All"}}],
            "manifestWorkTemplate": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "from-rs", "namespace": "default"}, "data": {"v": "1"}}]}}
        }
    }))
    .unwrap();
    Api::<ManifestWorkReplicaSet>::namespaced(hub.clone(), NS)
        .create(&PostParams::default(), &replica_set)
        .await
        .unwrap();

    let shutdown = Shutdown::new();
    let placements = Controller::new(
        Api::<Placement>::all(hub.clone()),
        watcher::Config::default(),
    )
    .graceful_shutdown_on(shutdown.cancelled())
    .run(
        ocm_placement::controller::reconcile_placement,
        ocm_placement::controller::placement_error_policy,
        Arc::new(PlacementController::new(hub.clone())),
    )
    .for_each(|_| async {});
    // Our own watch: a decision change reconciles the replica sets of its namespace.
    let replica_sets = Controller::new(
        Api::<ManifestWorkReplicaSet>::all(hub.clone()),
        watcher::Config::default(),
    )
    .watches(
        Api::<PlacementDecision>::all(hub.clone()),
        watcher::Config::default(),
        |_| Some(ObjectRef::<ManifestWorkReplicaSet>::new("rs").within(NS)),
    )
    .graceful_shutdown_on(shutdown.cancelled())
    .run(
        reconcile::replica_set,
        reconcile::replica_set_error_policy,
        Arc::new(ReplicaSetController::new(hub.clone())),
    )
    .for_each(|_| async {});
    let spoke = fleet.cluster("cluster1").unwrap().client();
    ocm_testkit::install_crds(fleet.cluster("cluster1").unwrap()).unwrap();
    let agent = WorkAgent::new(
        hub.clone(),
        spoke.clone(),
        AgentConfig::new("cluster1", hub_hash("https://hub.example.com")),
    );
    let works = Controller::new(
        Api::<ManifestWork>::namespaced(hub.clone(), "cluster1"),
        watcher::Config::default(),
    )
    .graceful_shutdown_on(shutdown.cancelled())
    .run(
        reconcile::work,
        reconcile::work_error_policy,
        Arc::new(agent),
    )
    .for_each(|_| async {});
    let tasks = [
        tokio::spawn(placements),
        tokio::spawn(replica_sets),
        tokio::spawn(works),
    ];

    let work_api = |ns: &str| Api::<ManifestWork>::namespaced(hub.clone(), ns);
    assert!(
        eventually(Duration::from_secs(20), || async {
            // Named `rs<random suffix>` (generateName, as upstream).
            let mut found = 0;
            for ns in ["cluster1", "cluster2"] {
                let list = work_api(ns).list(&Default::default()).await.unwrap();
                found += list
                    .items
                    .iter()
                    .filter(|w| {
                        w.metadata
                            .name
                            .as_deref()
                            .is_some_and(|n| n.starts_with("rs"))
                    })
                    .count();
            }
            found == 2
        })
        .await,
        "the replica set reached both clusters through the placement: {:?}",
        Api::<ManifestWorkReplicaSet>::namespaced(hub.clone(), NS)
            .get("rs")
            .await
            .unwrap()
            .status
    );
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke, "default");
    assert!(
        eventually(Duration::from_secs(20), || async {
            configmaps.get_opt("from-rs").await.unwrap().is_some()
        })
        .await,
        "the agent's reconcile applied cluster1's work"
    );
    shutdown.cancel();
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("each controller stops on shutdown")
            .unwrap();
    }
}
