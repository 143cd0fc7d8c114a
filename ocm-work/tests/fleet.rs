//! The fleet helper with this project's components: one call starts a hub, managed
//! clusters, a work agent each and the hub controllers; a ManifestWorkReplicaSet rolls out.

use std::time::Duration;

use kube::api::{Api, ListParams, PostParams};
use ocm_api::work::v1::ManifestWork;
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
use ocm_placement::controller::PlacementController;
use ocm_testkit::Fleet;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::replicaset::SuccessCriteria;
use ocm_work::replicaset::controller::ReplicaSetController;
use serde_json::json;

fn fleet(clusters: usize, authentication: bool) -> Fleet {
    Fleet::builder(clusters)
        .authentication(authentication)
        .agents(|c| {
            let config = AgentConfig::new(&c.name, "fleet-test-hub")
                .status_sync_interval(Duration::from_millis(200));
            WorkAgent::new(c.hub, c.spoke, config).run(c.shutdown)
        })
        .hub_controller(|hub, stop| PlacementController::new(hub).run(stop))
        .hub_controller(|hub, stop| {
            ReplicaSetController::new(hub)
                .with_success_criteria(SuccessCriteria::AppliedAndAvailable)
                .run(stop)
        })
        .start()
        .expect("fleet")
}

async fn create<K>(client: &kube::Client, ns: &str, v: serde_json::Value)
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let obj: K = serde_json::from_value(v).unwrap();
    Api::<K>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &obj)
        .await
        .unwrap();
}

async fn rolls_out(authentication: bool) {
    let fleet = fleet(3, authentication);
    fleet.wait_ready(Duration::from_secs(20)).await.unwrap();
    let hub = fleet.hub_client();
    fleet
        .hub()
        .hub()
        .apply_yaml(
            r#"
apiVersion: v1
kind: Namespace
metadata: {name: apps}
---
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata: {name: default, namespace: apps}
spec: {clusterSet: default}
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: all, namespace: apps}
spec: {}
"#,
        )
        .unwrap();
    create::<ManifestWorkReplicaSet>(&hub, "apps", json!({
        "apiVersion": "work.open-cluster-management.io/v1alpha1", "kind": "ManifestWorkReplicaSet",
        "metadata": {"name": "web", "namespace": "apps"},
        "spec": {"placementRefs": [{"name": "all"}], "manifestWorkTemplate": {"workload": {"manifests": [
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "web", "namespace": "default"},
             "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}},
                                   "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}]}}}
    }))
    .await;
    let works: Api<ManifestWork> = Api::all(hub.clone());
    let mut available = 0;
    for _ in 0..300 {
        let items = works.list(&ListParams::default()).await.unwrap().items;
        available = items
            .iter()
            .filter(|w| {
                w.status
                    .as_ref()
                    .and_then(|s| s.conditions.as_deref())
                    .is_some_and(|c| {
                        ocm_api::conditions::is_true(c, "Applied")
                            && ocm_api::conditions::is_true(c, "Available")
                    })
            })
            .count();
        if available == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(available, 3, "every cluster's work applied and available");
    // The agents applied the Deployment on each cluster, and the simulators made it ready.
    for name in ["cluster1", "cluster2", "cluster3"] {
        let d: k8s_openapi::api::apps::v1::Deployment =
            fleet.cluster(name).unwrap().get("default", "web").unwrap();
        assert_eq!(d.status.unwrap().ready_replicas, Some(2), "{name}");
    }
    assert!(fleet.finished().is_empty(), "{:?}", fleet.finished());
    fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_fleet_rolls_a_replica_set_out() {
    rolls_out(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_use_their_own_identity_with_authentication() {
    rolls_out(true).await;
}

#[tokio::test]
async fn readiness_names_components_that_never_watch_or_end() {
    let never = Fleet::builder(1).agents(|c| c.shutdown).start().unwrap();
    let err = never
        .wait_ready(Duration::from_millis(100))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("no watch on the hub yet): agent of cluster1"),
        "{err}"
    );
    never.shutdown().await;
    let ends = Fleet::builder(1)
        .hub_controller(|_hub, _stop| async {})
        .start()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let err = ends.wait_ready(Duration::from_secs(1)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("ended before they were ready: hub controller #1"),
        "{err}"
    );
    assert_eq!(ends.finished(), ["hub controller #1"]);
}

/// Without authentication the agents share one hub client; each is still ready only once it
/// watches in its own namespace.
#[tokio::test]
async fn a_shared_hub_client_tells_the_agents_watches_apart() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, WatchParams};
    for authentication in [false, true] {
        let fleet = Fleet::builder(3)
            .authentication(authentication)
            .agents(|c| async move {
                // cluster2's stand-in agent watches cluster1's namespace, not its own.
                let ns = if c.name == "cluster2" {
                    "cluster1"
                } else {
                    c.name.as_str()
                };
                let api: Api<ConfigMap> = Api::namespaced(c.hub, ns);
                let _watch = api.watch(&WatchParams::default(), "0").await;
                c.shutdown.await;
            })
            .start()
            .unwrap();
        let err = fleet
            .wait_ready(Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .ends_with("(no watch on the hub yet): agent of cluster2"),
            "{authentication}: {err}"
        );
        fleet.shutdown().await;
    }
}
