//! The agent against a managed cluster whose deletion is not synchronous (ocm-testkit's
//! asynchronous garbage collection and held finalizers), as on a real cluster: resources whose
//! deletion was accepted stay pending in `appliedResources`, the work is looked at again until
//! they are gone, and nothing stalls.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use ocm_api::work::v1::{AppliedManifestWork, ManifestWork};
use ocm_testkit::{FakeCluster, GarbageCollection};
use ocm_work::agent::{AgentConfig, SYNC_RETRY_MAX, WorkAgent};
use ocm_work::identity::hub_hash;
use serde_json::{Value, json};
use support::{CLUSTER, HUB_URL, clusters, create_work, eventually, start, work_object};

/// Long enough that nothing happens by itself during a test step.
const LATER: Duration = Duration::from_secs(3600);

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

fn configmap_in(ns: &str, name: &str, finalizers: &[&str]) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "finalizers": finalizers}, "data": {"k": "v"}})
}

async fn set_manifests(hub: &FakeCluster, work: &str, manifests: Vec<Value>) {
    Api::<ManifestWork>::namespaced(hub.client(), CLUSTER)
        .patch(
            work,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"workload": {"manifests": manifests}}})),
        )
        .await
        .expect("update work");
}

/// `namespace/name` of every entry in the work's `appliedResources`.
fn applied(spoke: &FakeCluster, work: &str) -> Vec<String> {
    let name = format!("{}-{work}", hub_hash(HUB_URL));
    spoke
        .get::<AppliedManifestWork>("", &name)
        .ok()
        .and_then(|a| a.status)
        .and_then(|s| s.applied_resources)
        .unwrap_or_default()
        .iter()
        .map(|r| format!("{}/{}", r.namespace.clone().unwrap_or_default(), r.name))
        .collect()
}

fn agent(hub: &FakeCluster, spoke: &FakeCluster, interval: Duration) -> WorkAgent {
    let config = AgentConfig::new(CLUSTER, hub_hash(HUB_URL))
        .status_sync_interval(interval)
        .resync_interval(interval);
    WorkAgent::new(hub.client(), spoke.client(), config)
}

/// A namespace removed from a work terminates, its contents are deleted later by the
/// namespace controller: the namespace stays in `appliedResources` meanwhile, the sync asks to
/// be run again soon, and the pass after the namespace is gone drops it.
#[tokio::test]
async fn a_terminating_namespace_stays_pending_until_the_collector_removes_it() {
    let (hub, spoke) = clusters().await;
    spoke
        .store()
        .set_garbage_collection(GarbageCollection::asynchronous(LATER));
    let agent = agent(&hub, &spoke, Duration::ZERO);
    create_work(
        &hub.client(),
        &work_object(
            "ns-work",
            json!({"workload": {"manifests": [namespace("team"), configmap_in("team", "inside", &[])]}}),
        ),
    )
    .await;
    agent.sync_all().await.unwrap();
    assert_eq!(applied(&spoke, "ns-work"), ["team/inside", "/team"]);

    set_manifests(&hub, "ns-work", vec![]).await;
    let work: ManifestWork = hub.get(CLUSTER, "ns-work").unwrap();
    let outcome = agent.sync(&work).await.unwrap();
    let namespaces: Api<Namespace> = Api::all(spoke.client());
    let team = namespaces.get("team").await.unwrap();
    assert_eq!(
        team.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    assert_eq!(
        applied(&spoke, "ns-work"),
        ["team/inside", "/team"],
        "both deletions were accepted, neither is done"
    );
    let requeue = outcome.requeue_after.expect("asks to be run again");
    assert!(
        requeue <= SYNC_RETRY_MAX + SYNC_RETRY_MAX / 2,
        "{requeue:?}"
    );

    // Later passes drop the ConfigMap (it went at once) and keep the namespace while it
    // terminates, without deleting anything again.
    spoke.journal().clear();
    for _ in 0..3 {
        agent.sync_all().await.unwrap();
    }
    assert_eq!(applied(&spoke, "ns-work"), ["/team"]);
    let deletes = spoke.journal().count(|e| e.verb == "delete");
    assert_eq!(deletes, 0, "terminating resources are not deleted again");

    // The namespace controller does its work; the next pass sees both gone.
    spoke.store().finish_garbage_collection();
    assert!(namespaces.get_opt("team").await.unwrap().is_none());
    agent.sync_all().await.unwrap();
    assert!(applied(&spoke, "ns-work").is_empty());
}

/// With the agent running, a resource held by a finalizer for a while is dropped from
/// `appliedResources` soon after its finalizer is released, without waiting for a resync or a
/// status sync (both an hour here): the pending deletion requeues the work by itself.
#[tokio::test]
async fn a_resource_held_by_a_finalizer_is_dropped_soon_after_it_goes() {
    let (hub, spoke) = clusters().await;
    spoke.store().set_garbage_collection(
        GarbageCollection::asynchronous(Duration::from_millis(100))
            .hold_finalizer("example.com/hold", Duration::from_millis(800)),
    );
    let (stop, task) = start(agent(&hub, &spoke, Duration::from_secs(3600)));
    create_work(
        &hub.client(),
        &work_object(
            "held",
            json!({"workload": {"manifests": [
                configmap_in("default", "keep", &[]),
                configmap_in("default", "held", &["example.com/hold"]),
            ]}}),
        ),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(10), || async {
            applied(&spoke, "held") == ["default/held", "default/keep"]
        })
        .await,
        "applied: {:?}",
        applied(&spoke, "held")
    );

    set_manifests(&hub, "held", vec![configmap_in("default", "keep", &[])]).await;
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    assert!(
        eventually(Duration::from_secs(10), || async {
            configmaps
                .get_opt("held")
                .await
                .unwrap()
                .is_some_and(|c| c.metadata.deletion_timestamp.is_some())
        })
        .await,
        "deletion requested"
    );
    assert_eq!(
        applied(&spoke, "held"),
        ["default/held", "default/keep"],
        "pending while its finalizer holds it"
    );
    assert!(
        eventually(Duration::from_secs(10), || async {
            applied(&spoke, "held") == ["default/keep"]
        })
        .await,
        "dropped once gone: {:?}",
        applied(&spoke, "held")
    );
    assert!(configmaps.get_opt("held").await.unwrap().is_none());
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

/// A resource someone deletes in the foreground (it waits for its dependents) and that then
/// leaves the work stays pending until the garbage collector has removed its dependents and
/// it is gone.
#[tokio::test]
async fn a_resource_deleted_in_the_foreground_stays_pending_until_it_is_gone() {
    let (hub, spoke) = clusters().await;
    spoke
        .store()
        .set_garbage_collection(GarbageCollection::asynchronous(LATER));
    let agent = agent(&hub, &spoke, Duration::ZERO);
    create_work(
        &hub.client(),
        &work_object(
            "fg",
            json!({"workload": {"manifests": [configmap_in("default", "parent", &[])]}}),
        ),
    )
    .await;
    agent.sync_all().await.unwrap();
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    let parent = configmaps.get("parent").await.unwrap();
    let child: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "child",
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "parent",
            "uid": parent.metadata.uid, "blockOwnerDeletion": true}]}}))
    .unwrap();
    configmaps
        .create(&PostParams::default(), &child)
        .await
        .unwrap();
    configmaps
        .delete("parent", &DeleteParams::foreground())
        .await
        .unwrap();

    set_manifests(&hub, "fg", vec![]).await;
    agent.sync_all().await.unwrap();
    assert_eq!(applied(&spoke, "fg"), ["default/parent"]);
    agent.sync_all().await.unwrap();
    assert_eq!(
        applied(&spoke, "fg"),
        ["default/parent"],
        "still terminating"
    );

    spoke.store().finish_garbage_collection();
    assert!(configmaps.get_opt("parent").await.unwrap().is_none());
    agent.sync_all().await.unwrap();
    assert!(applied(&spoke, "fg").is_empty());
}

/// A delete the server answers with "gone at once" still counts as pending for one pass
/// (upstream's rule: only a GET answering 404 drops a resource), and that pass follows soon.
#[tokio::test]
async fn a_resource_deleted_at_once_is_dropped_by_the_next_pass() {
    let (hub, spoke) = clusters().await;
    let agent = agent(&hub, &spoke, Duration::ZERO);
    create_work(
        &hub.client(),
        &work_object(
            "quick",
            json!({"workload": {"manifests": [configmap_in("default", "a", &[]), configmap_in("default", "b", &[])]}}),
        ),
    )
    .await;
    agent.sync_all().await.unwrap();
    set_manifests(&hub, "quick", vec![configmap_in("default", "a", &[])]).await;
    let work: ManifestWork = hub.get(CLUSTER, "quick").unwrap();
    let outcome = agent.sync(&work).await.unwrap();
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    assert!(configmaps.get_opt("b").await.unwrap().is_none(), "deleted");
    assert_eq!(applied(&spoke, "quick"), ["default/a", "default/b"]);
    assert!(
        outcome
            .requeue_after
            .is_some_and(|d| d < Duration::from_millis(100)),
        "the pass that drops it comes soon: {:?}",
        outcome.requeue_after
    );
    tokio::time::sleep(outcome.requeue_after.unwrap_or_default()).await;
    let work: ManifestWork = hub.get(CLUSTER, "quick").unwrap();
    let outcome = agent.sync(&work).await.unwrap();
    assert!(outcome.applied, "the requeued pass applies again");
    assert_eq!(applied(&spoke, "quick"), ["default/a"]);
}

/// A tracked resource with no recorded uid is never deleted (upstream skips it: the live
/// object may have been created by someone else under that name); it is forgotten.
#[tokio::test]
async fn a_tracked_resource_without_a_recorded_uid_is_forgotten_not_deleted() {
    let (hub, spoke) = clusters().await;
    let agent = agent(&hub, &spoke, Duration::ZERO);
    create_work(
        &hub.client(),
        &work_object(
            "nouid",
            json!({"workload": {"manifests": [configmap_in("default", "a", &[]), configmap_in("default", "b", &[])]}}),
        ),
    )
    .await;
    agent.sync_all().await.unwrap();
    // The record of `b` loses its uid (an older agent, or a hand edit).
    let amws: Api<AppliedManifestWork> = Api::all(spoke.client());
    let name = format!("{}-nouid", hub_hash(HUB_URL));
    let mut amw = amws.get(&name).await.unwrap();
    let mut resources = amw.status.clone().unwrap().applied_resources.unwrap();
    for r in resources.iter_mut().filter(|r| r.name == "b") {
        r.uid = None;
    }
    amw.status.as_mut().unwrap().applied_resources = Some(resources);
    amws.replace_status(&name, &PostParams::default(), &amw)
        .await
        .unwrap();

    set_manifests(&hub, "nouid", vec![configmap_in("default", "a", &[])]).await;
    agent.sync_all().await.unwrap();
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    let b = configmaps.get_opt("b").await.unwrap();
    assert!(b.is_some(), "not deleted without a uid to check");
    assert_eq!(applied(&spoke, "nouid"), ["default/a"], "and forgotten");
    assert!(
        !spoke
            .journal()
            .entries()
            .iter()
            .any(|e| e.verb == "delete" && e.path.ends_with("/configmaps/b")),
        "no delete request for it"
    );
}

/// Deleting a work whose resource is held by a finalizer: the work keeps its finalizer (and
/// exists) until the resource is gone, then goes, with the agent running.
#[tokio::test]
async fn a_work_is_released_only_after_its_held_resource_is_gone() {
    let (hub, spoke) = clusters().await;
    spoke.store().set_garbage_collection(
        GarbageCollection::asynchronous(Duration::from_millis(100))
            .hold_finalizer("example.com/hold", Duration::from_millis(800)),
    );
    let (stop, task) = start(agent(&hub, &spoke, Duration::from_secs(3600)));
    create_work(
        &hub.client(),
        &work_object(
            "bye",
            json!({"workload": {"manifests": [configmap_in("default", "held", &["example.com/hold"])]}}),
        ),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(10), || async {
            applied(&spoke, "bye") == ["default/held"]
        })
        .await
    );
    let works: Api<ManifestWork> = Api::namespaced(hub.client(), CLUSTER);
    works.delete("bye", &DeleteParams::default()).await.unwrap();
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    assert!(
        eventually(Duration::from_secs(10), || async {
            configmaps
                .get_opt("held")
                .await
                .unwrap()
                .is_some_and(|c| c.metadata.deletion_timestamp.is_some())
        })
        .await
    );
    let work = works.get_opt("bye").await.unwrap();
    assert!(
        work.is_some_and(|w| !w.finalizers().is_empty()),
        "the work waits for its resource"
    );
    assert!(
        eventually(Duration::from_secs(10), || async {
            works.get_opt("bye").await.unwrap().is_none()
        })
        .await,
        "released once the resource is gone"
    );
    assert!(configmaps.get_opt("held").await.unwrap().is_none());
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

/// As upstream, a work without manifests whose status never showed `Applied` leaves the
/// resources recorded in its AppliedManifestWork alone (upstream's case: a managed cluster
/// moved to a new hub of the same hash, where the works are created again without status);
/// once its status shows `Applied`, what it no longer asks for is collected.
#[tokio::test]
async fn an_empty_work_that_never_showed_applied_leaves_recorded_resources_alone() {
    let (hub, spoke) = clusters().await;
    let agent = agent(&hub, &spoke, Duration::ZERO);
    create_work(
        &hub.client(),
        &work_object(
            "moved",
            json!({"workload": {"manifests": [configmap_in("default", "kept", &[])]}}),
        ),
    )
    .await;
    agent.sync_all().await.unwrap();
    assert_eq!(applied(&spoke, "moved"), ["default/kept"]);

    // The work is gone without the agent (its finalizer removed by hand) and comes back empty.
    let works = Api::<ManifestWork>::namespaced(hub.client(), CLUSTER);
    works
        .patch(
            "moved",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    works
        .delete("moved", &DeleteParams::default())
        .await
        .unwrap();
    create_work(
        &hub.client(),
        &work_object("moved", json!({"workload": {"manifests": []}})),
    )
    .await;
    agent.sync_all().await.unwrap();
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    assert!(configmaps.get_opt("kept").await.unwrap().is_some());
    assert_eq!(applied(&spoke, "moved"), ["default/kept"], "left alone");

    // Once its status shows `Applied`, the empty work's record is brought in line.
    works
        .patch_status(
            "moved",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [{"type": "Applied",
                "status": "True", "reason": "AppliedManifestWorkComplete", "message": "",
                "lastTransitionTime": "2030-01-01T00:00:00Z"}]}})),
        )
        .await
        .unwrap();
    agent.sync_all().await.unwrap();
    agent.sync_all().await.unwrap();
    assert!(
        configmaps.get_opt("kept").await.unwrap().is_none(),
        "collected"
    );
    assert!(applied(&spoke, "moved").is_empty());
}

/// Upstream's vector "delete untracked resources", with upstream's intervals (status sync
/// 10 s, resync 4 min): the pass that deletes resources the work no longer lists asks to run
/// again at once (upstream: its rate limiter, from 5 ms), and so does every pass while they
/// are still there, until the pass that sees them gone; with `failing`, the work also has a
/// manifest that fails to apply (alone, retried at the next status sync).
async fn untracked_resources_requeue_at_once(failing: bool) {
    let (hub, spoke) = clusters().await;
    spoke.store().set_garbage_collection(
        GarbageCollection::asynchronous(Duration::from_millis(50))
            .hold_finalizer("example.com/hold", Duration::from_millis(300)),
    );
    let agent = WorkAgent::new(
        hub.client(),
        spoke.client(),
        AgentConfig::new(CLUSTER, hub_hash(HUB_URL)),
    );
    let manifests = |names: &[&str]| -> Vec<Value> {
        let mut list: Vec<Value> = names
            .iter()
            .map(|n| configmap_in("default", n, &["example.com/hold"]))
            .collect();
        if failing {
            list.push(json!({"apiVersion": "example.com/v1", "kind": "Unserved",
                "metadata": {"name": "x", "namespace": "default"}}));
        }
        list
    };
    create_work(
        &hub.client(),
        &work_object(
            "untracked",
            json!({"workload": {"manifests": manifests(&["n1", "n2", "n3", "n4"])}}),
        ),
    )
    .await;
    agent.sync_all().await.unwrap();
    assert_eq!(applied(&spoke, "untracked").len(), 4);

    set_manifests(&hub, "untracked", manifests(&["n1", "n2"])).await;
    let mut passes = 0;
    while applied(&spoke, "untracked") != ["default/n1", "default/n2"] {
        passes += 1;
        assert!(
            passes < 200,
            "never converged: {:?}",
            applied(&spoke, "untracked")
        );
        let work: ManifestWork = hub.get(CLUSTER, "untracked").unwrap();
        let outcome = agent.sync(&work).await.unwrap();
        let pending = applied(&spoke, "untracked").len() > 2;
        let requeue = outcome.requeue_after.unwrap_or(Duration::MAX);
        if pending {
            assert!(
                requeue < Duration::from_secs(1),
                "pass {passes}: resources pending deletion, yet requeued after {requeue:?}"
            );
            assert!(outcome.applied, "pass {passes} applies");
        }
        tokio::time::sleep(requeue.min(Duration::from_secs(1))).await;
    }
    assert!(passes >= 2, "the deletion took more than one pass");
    let configmaps: Api<ConfigMap> = Api::namespaced(spoke.client(), "default");
    for gone in ["n3", "n4"] {
        assert!(configmaps.get_opt(gone).await.unwrap().is_none());
    }
}

#[tokio::test]
async fn deleting_untracked_resources_requeues_at_once_until_they_are_gone() {
    untracked_resources_requeue_at_once(false).await;
}

#[tokio::test]
async fn deleting_untracked_resources_requeues_at_once_beside_a_failing_manifest() {
    untracked_resources_requeue_at_once(true).await;
}
