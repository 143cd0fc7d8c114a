//! The ManifestWorkReplicaSet controller reads every object on its own: a replica set (or a
//! Placement) its types reject is reported on the object and stops no other replica set, and a
//! template nested past `serde_json`'s 128 levels (up to the API server's 10,000) is fanned out
//! like any other, on tokio worker threads' 2 MiB stacks.

use std::time::Duration;

use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::core::ApiResource;
use kube::{Client, Resource};
use ocm_api::constants::{labels, replicaset as rc};
use ocm_api::k8s::object::RawObject;
use ocm_api::work::v1::ManifestWork;
use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;
use ocm_testkit::FakeCluster;
use ocm_work::replicaset::controller::ReplicaSetController;
use ocm_work::replicaset::status::REASON_DECODE_FAILED;
use serde_json::{Value, json};

use crate::support;

use support::eventually;
use support::replicaset::{NS, hub, placement, settle};

const REPLICA_SETS: &str = "/apis/work.open-cluster-management.io/v1alpha1/namespaces";

/// A replica set of one ConfigMap for Placement `p`, as JSON; `extra` is put into the
/// ConfigMap (an unknown field, kept by the manifests' schema) and `strategy` is its
/// placement's rollout strategy.
fn replica_set(name: &str, extra: &str, strategy: &str) -> String {
    format!(
        r#"{{"apiVersion":"work.open-cluster-management.io/v1alpha1","kind":"ManifestWorkReplicaSet","metadata":{{"name":"{name}","namespace":"{NS}"}},"spec":{{"placementRefs":[{{"name":"p","rolloutStrategy":{strategy}}}],"manifestWorkTemplate":{{"workload":{{"manifests":[{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"default"}},"data":{{"k":"v"}},"extra":{extra}}}]}}}}}}}}"#
    )
}

const ALL: &str = r#"{"type":"All"}"#;

/// A rollout strategy the API server admits (its CRD leaves int32 ranges unchecked, as
/// upstream's) and the controller's types cannot hold: a decision group index of 10^12.
const OUT_OF_RANGE: &str = r#"{"type":"Progressive","progressive":{"mandatoryDecisionGroups":[{"groupIndex":1000000000000}],"maxConcurrency":1}}"#;

/// `"x"` nested in `depth` objects.
fn nested(depth: usize) -> String {
    format!("{}\"x\"{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

/// Creates a replica set from its JSON text; the answer is not decoded (kube's typed client
/// would refuse a deep one, as it refuses lists with such an object).
async fn create_raw(client: &Client, body: String) {
    let request = http::Request::post(format!("{REPLICA_SETS}/{NS}/manifestworkreplicasets"))
        .header("content-type", "application/json")
        .body(body.into_bytes())
        .unwrap();
    client
        .request_text(request)
        .await
        .expect("the hub takes the replica set");
}

/// Condition `type_` of replica set `name` as (status, reason, message), read from its JSON
/// (the replica set may not decode, or be deep).
async fn condition(client: &Client, name: &str, type_: &str) -> Option<(String, String, String)> {
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Object {
        status: Status,
    }
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Status {
        conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
    }
    let raw = support::raw_api::<ManifestWorkReplicaSet>(client, Some(NS))
        .get_opt(name)
        .await
        .unwrap()?;
    let object: Object = serde_json::from_str(raw.json()).unwrap();
    object
        .status
        .conditions
        .into_iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status, c.reason, c.message))
}

/// The clusters with a work of replica set `name`, and how deeply the deepest of them nests.
async fn fanned_out(client: &Client, name: &str) -> (Vec<String>, usize) {
    let works = support::raw_api::<ManifestWork>(client, None)
        .list(&ListParams::default().labels(&format!(
            "{}={NS}.{name}",
            labels::MANIFEST_WORK_REPLICA_SET
        )))
        .await
        .unwrap()
        .items;
    let mut clusters: Vec<String> = works
        .iter()
        .filter_map(|w| w.meta().namespace.clone())
        .collect();
    clusters.sort();
    (
        clusters,
        works.iter().map(RawObject::depth).max().unwrap_or(0),
    )
}

/// Status writes to replica set `name`.
fn status_writes(fake: &FakeCluster, name: &str) -> usize {
    fake.journal().count(|e| {
        e.is_write()
            && e.resource.as_deref() == Some("manifestworkreplicasets")
            && e.subresource.as_deref() == Some("status")
            && e.name.as_deref() == Some(name)
    })
}

fn start(
    controller: ReplicaSetController,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(controller.run(async move {
        let _ = stopped.await;
    }));
    (stop, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_set_that_does_not_decode_is_reported_once_and_stops_no_other() {
    let clusters = ["cluster1", "cluster2"];
    let hub = hub(&clusters).await;
    placement(&hub.client, "p", &[("", clusters.to_vec())]).await;
    create_raw(&hub.client, replica_set("bad", "1", OUT_OF_RANGE)).await;
    create_raw(&hub.client, replica_set("good", "1", ALL)).await;
    // The controller starts with the bad replica set there: its first list holds it.
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    let (stop, task) = start(controller);

    let reported = |client: Client| async move {
        condition(&client, "bad", rc::CONDITION_MANIFESTWORK_APPLIED)
            .await
            .is_some_and(|(status, reason, _)| status == "False" && reason == REASON_DECODE_FAILED)
    };
    assert!(
        eventually(Duration::from_secs(30), || async {
            fanned_out(&hub.client, "good").await.0 == clusters
                && reported(hub.client.clone()).await
        })
        .await,
        "good fanned out to {:?}; bad's condition: {:?}",
        fanned_out(&hub.client, "good").await.0,
        condition(&hub.client, "bad", rc::CONDITION_MANIFESTWORK_APPLIED).await
    );
    let (_, _, message) = condition(&hub.client, "bad", rc::CONDITION_MANIFESTWORK_APPLIED)
        .await
        .unwrap();
    // The path ends where the rollout strategy's own decoding takes over.
    assert_eq!(
        message,
        "the ManifestWorkReplicaSet cannot be decoded: \
         spec.placementRefs[0].rolloutStrategy.progressive: invalid value: integer \
         `1000000000000`, expected i32"
    );
    assert!(fanned_out(&hub.client, "bad").await.0.is_empty());
    // The good one's status is written after its works: wait for it too.
    let verified = || async {
        condition(&hub.client, "good", rc::CONDITION_PLACEMENT_VERIFIED)
            .await
            .map(|c| (c.0, c.1))
    };
    let expected = Some(("True".to_string(), rc::REASON_AS_EXPECTED.to_string()));
    eventually(Duration::from_secs(30), || async {
        verified().await == expected
    })
    .await;
    assert_eq!(verified().await, expected);
    // Reported once: the watch brings the write back, and it is not written again (nor
    // retried: nothing changes while the object does not).
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(status_writes(&hub.fake, "bad"), 1);

    // Fixed, it is reconciled like any other.
    support::raw_api::<ManifestWorkReplicaSet>(&hub.client, Some(NS))
        .patch(
            "bad",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"placementRefs": [{"name": "p", "rolloutStrategy": {"type": "All"}}]}})),
        )
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(30), || async {
            fanned_out(&hub.client, "bad").await.0 == clusters
                && condition(&hub.client, "bad", rc::CONDITION_MANIFESTWORK_APPLIED)
                    .await
                    .is_some_and(|(_, reason, _)| reason != REASON_DECODE_FAILED)
        })
        .await,
        "the fixed replica set is fanned out"
    );
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

/// A replica set that does not decode is deleted like any other: its works go and the
/// finalizer is removed (what that needs is read field by field).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_set_that_stopped_decoding_is_still_finalized() {
    let clusters = ["cluster1"];
    let hub = hub(&clusters).await;
    placement(&hub.client, "p", &[("", clusters.to_vec())]).await;
    create_raw(&hub.client, replica_set("rs", "1", ALL)).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    let (stop, task) = start(controller);
    assert!(
        eventually(Duration::from_secs(30), || async {
            fanned_out(&hub.client, "rs").await.0 == clusters
        })
        .await,
        "fanned out"
    );
    let api = support::raw_api::<ManifestWorkReplicaSet>(&hub.client, Some(NS));
    api.patch(
        "rs",
        &PatchParams::default(),
        &Patch::Merge(
            json!({"spec": {"placementRefs": [{"name": "p", "rolloutStrategy":
            serde_json::from_str::<Value>(OUT_OF_RANGE).unwrap()}]}}),
        ),
    )
    .await
    .unwrap();
    api.delete("rs", &Default::default()).await.unwrap();
    assert!(
        eventually(Duration::from_secs(30), || async {
            api.get_opt("rs").await.unwrap().is_none()
                && fanned_out(&hub.client, "rs").await.0.is_empty()
        })
        .await,
        "the replica set and its works are gone"
    );
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

/// A Placement the controller cannot decode (a `numberOfClusters` past int32, which the API
/// server admits) is named in `PlacementVerified`, and nothing is fanned out for it.
#[tokio::test]
async fn a_placement_that_does_not_decode_is_named_in_placement_verified() {
    let clusters = ["cluster1"];
    let hub = hub(&clusters).await;
    placement(&hub.client, "p", &[("", clusters.to_vec())]).await;
    support::raw_api::<ocm_api::cluster::v1beta1::Placement>(&hub.client, Some(NS))
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"numberOfClusters": 1_000_000_000_000_i64}})),
        )
        .await
        .expect("the API server admits it");
    create_raw(&hub.client, replica_set("rs", "1", ALL)).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    settle(&controller, &hub.client, "rs").await;
    let (status, reason, message) = condition(&hub.client, "rs", rc::CONDITION_PLACEMENT_VERIFIED)
        .await
        .expect("PlacementVerified");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", rc::REASON_NOT_AS_EXPECTED)
    );
    assert!(
        message.starts_with(&format!(
            "Placement {NS}/p cannot be decoded: spec.numberOfClusters:"
        )),
        "{message}"
    );
    assert!(fanned_out(&hub.client, "rs").await.0.is_empty());
}

async fn a_deep_template_is_fanned_out(depth: usize) {
    let clusters = ["cluster1", "cluster2"];
    let hub = hub(&clusters).await;
    placement(&hub.client, "p", &[("", clusters.to_vec())]).await;
    create_raw(&hub.client, replica_set("deep", &nested(depth), ALL)).await;
    create_raw(&hub.client, replica_set("plain", "1", ALL)).await;
    let controller = ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone());
    let (stop, task) = start(controller);
    assert!(
        eventually(Duration::from_secs(60), || async {
            fanned_out(&hub.client, "deep").await.0 == clusters
                && fanned_out(&hub.client, "plain").await.0 == clusters
                && condition(&hub.client, "deep", rc::CONDITION_PLACEMENT_VERIFIED)
                    .await
                    .is_some_and(|c| c.0 == "True")
        })
        .await,
        "deep: {:?}, plain: {:?}",
        fanned_out(&hub.client, "deep").await,
        fanned_out(&hub.client, "plain").await
    );
    // The works carry the whole template: object, spec, workload, manifests, the manifest.
    assert_eq!(fanned_out(&hub.client, "deep").await.1, depth + 5);
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_nested_past_serde_jsons_limit_is_fanned_out() {
    a_deep_template_is_fanned_out(1_000).await;
}

/// The deepest replica set the API server takes: 10,000 levels in all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_as_deep_as_the_api_server_takes_is_fanned_out() {
    a_deep_template_is_fanned_out(10_000 - 6).await;
}

/// The reconciler in kube-runtime's shape for raw replica sets, mounted in a controller of our
/// own: the same per-object reading as `ReplicaSetController::run`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_raw_reconciler_reports_a_replica_set_that_does_not_decode_and_fans_out_the_others() {
    use futures::StreamExt;
    use kube::runtime::{Controller, watcher};
    use ocm_work::runtime::reconcile;

    let clusters = ["cluster1", "cluster2"];
    let hub = hub(&clusters).await;
    placement(&hub.client, "p", &[("", clusters.to_vec())]).await;
    create_raw(&hub.client, replica_set("bad", "1", OUT_OF_RANGE)).await;
    create_raw(&hub.client, replica_set("good", "1", ALL)).await;
    let resource = ApiResource::erase::<ManifestWorkReplicaSet>(&());
    let shutdown = ocm_work::runtime::shutdown::Shutdown::new();
    let controller = Controller::new_with(
        Api::<RawObject>::all_with(hub.client.clone(), &resource),
        watcher::Config::default(),
        resource,
    )
    .graceful_shutdown_on(shutdown.cancelled())
    .run(
        reconcile::replica_set_raw,
        reconcile::replica_set_raw_error_policy,
        std::sync::Arc::new(
            ReplicaSetController::new(hub.client.clone()).with_clock(hub.clock.clone()),
        ),
    )
    .for_each(|_| async {});
    let task = tokio::spawn(controller);
    assert!(
        eventually(Duration::from_secs(30), || async {
            fanned_out(&hub.client, "good").await.0 == clusters
                && condition(&hub.client, "bad", rc::CONDITION_MANIFESTWORK_APPLIED)
                    .await
                    .is_some_and(|(status, reason, _)| {
                        status == "False" && reason == REASON_DECODE_FAILED
                    })
        })
        .await,
        "good fanned out to {:?}; bad's condition: {:?}",
        fanned_out(&hub.client, "good").await.0,
        condition(&hub.client, "bad", rc::CONDITION_MANIFESTWORK_APPLIED).await
    );
    assert!(fanned_out(&hub.client, "bad").await.0.is_empty());
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the controller stops on shutdown")
        .unwrap();
}
