//! The running agent skips and reports a ManifestWork it cannot decode, and keeps converging
//! every other work.

use crate::support;

use std::time::Duration;

use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use support::*;

/// What a newer OCM release could do: the hub's ManifestWork CRD takes an update strategy of
/// a type this agent's types do not decode (a number; an unknown string value decodes).
async fn allow_a_newer_update_strategy(hub: &ocm_testkit::FakeCluster) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: kube::Api<CustomResourceDefinition> = kube::Api::all(hub.client());
    let name = "manifestworks.work.open-cluster-management.io";
    let crd = api.get(name).await.unwrap();
    let mut value = serde_json::to_value(&crd).unwrap();
    let strategy = value
        .pointer_mut(
            "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/manifestConfigs/items/properties/updateStrategy/properties/type",
        )
        .and_then(serde_json::Value::as_object_mut)
        .expect("the CRD lists the update strategies");
    strategy.remove("enum");
    strategy.remove("default");
    strategy.insert("type".into(), serde_json::json!("integer"));
    let crd: CustomResourceDefinition = serde_json::from_value(value).unwrap();
    api.replace(name, &Default::default(), &crd).await.unwrap();
}

/// A work the agent cannot decode: its config names the newer strategy.
fn undecodable_work(name: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": CLUSTER},
        "spec": {
            "workload": {"manifests": [configmap(name, "v1")]},
            "manifestConfigs": [{
                "resourceIdentifier": {"resource": "configmaps", "namespace": "default", "name": name},
                "updateStrategy": {"type": 7}
            }]
        }
    })
}

async fn create_raw_work(hub: &ocm_testkit::FakeCluster, object: serde_json::Value) {
    let ar = kube::core::ApiResource::erase::<ocm_api::work::v1::ManifestWork>(&());
    let api: kube::Api<kube::core::DynamicObject> =
        kube::Api::namespaced_with(hub.client(), CLUSTER, &ar);
    let object: kube::core::DynamicObject = serde_json::from_value(object).unwrap();
    api.create(&Default::default(), &object)
        .await
        .expect("the hub accepts the work");
}

/// Warning Events about `work` on the hub, with the reason of an undecodable work.
fn undecodable_events(
    hub: &ocm_testkit::FakeCluster,
    work: &str,
) -> Vec<k8s_openapi::api::events::v1::Event> {
    hub.list::<k8s_openapi::api::events::v1::Event>(Some(CLUSTER))
        .unwrap_or_default()
        .into_iter()
        .filter(|e| {
            e.reason.as_deref() == Some(ocm_work::agent::REASON_UNDECODABLE)
                && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(work)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_that_does_not_decode_is_reported_once_and_stops_no_other_work() {
    let (hub, spoke) = clusters().await;
    allow_a_newer_update_strategy(&hub).await;
    create_work(&hub.client(), &one_configmap_work("good", "v1")).await;
    create_work(&hub.client(), &one_configmap_work("doomed", "v1")).await;
    create_raw_work(&hub, undecodable_work("newer")).await;
    // The agent starts (or restarts) while the undecodable work exists.
    let config = AgentConfig::new(CLUSTER, hub_hash(HUB_URL))
        .status_sync_interval(Duration::from_secs(1))
        .eviction_grace_period(Duration::from_secs(1));
    let agent = WorkAgent::new(hub.client(), spoke.client(), config);
    let (stop, task) = start(agent);
    assert!(
        eventually(Duration::from_secs(15), || async {
            all_applied(&hub, &["good".to_string(), "doomed".to_string()])
        })
        .await,
        "the other works are applied"
    );
    // Works keep being created, updated and deleted meanwhile.
    create_work(&hub.client(), &one_configmap_work("later", "v1")).await;
    let works = kube::Api::<ocm_api::work::v1::ManifestWork>::namespaced(hub.client(), CLUSTER);
    let mut good = works.get("good").await.unwrap();
    good.spec = one_configmap_work("good", "v2").spec;
    works
        .replace("good", &Default::default(), &good)
        .await
        .unwrap();
    works.delete("doomed", &Default::default()).await.unwrap();
    assert!(
        eventually(Duration::from_secs(15), || async {
            configmap_value(&spoke, "later").as_deref() == Some("v1")
                && configmap_value(&spoke, "good").as_deref() == Some("v2")
                && configmap_value(&spoke, "doomed").is_none()
                && stored_work(&hub, "doomed").is_none()
        })
        .await,
        "created, updated and deleted works converge: {:?}",
        configmap_names(&spoke)
    );
    assert!(
        configmap_value(&spoke, "newer").is_none(),
        "nothing of the undecodable work is applied"
    );
    // Reported where a user looks: one Warning Event on the hub naming the work and the field.
    assert!(
        eventually(Duration::from_secs(10), || async {
            !undecodable_events(&hub, "newer").is_empty()
        })
        .await,
        "a Warning Event names the work"
    );
    // Several status syncs later it is still reported once (once per resourceVersion).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let events = undecodable_events(&hub, "newer");
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    let note = event.note.clone().unwrap_or_default();
    assert!(
        note.contains("spec.manifestConfigs[0].updateStrategy.type"),
        "the note names the field: {note}"
    );
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_that_stops_decoding_keeps_its_resources_and_is_applied_again_once_fixed() {
    let (hub, spoke) = clusters().await;
    allow_a_newer_update_strategy(&hub).await;
    let config = AgentConfig::new(CLUSTER, hub_hash(HUB_URL))
        .status_sync_interval(Duration::from_secs(1))
        .eviction_grace_period(Duration::from_secs(1));
    let agent = WorkAgent::new(hub.client(), spoke.client(), config);
    let (stop, task) = start(agent);
    create_work(&hub.client(), &one_configmap_work("changing", "v1")).await;
    assert!(
        eventually(Duration::from_secs(15), || async {
            all_applied(&hub, &["changing".to_string()])
        })
        .await,
        "applied"
    );
    // The work changes into something this agent cannot decode.
    let ar = kube::core::ApiResource::erase::<ocm_api::work::v1::ManifestWork>(&());
    let raw: kube::Api<kube::core::DynamicObject> =
        kube::Api::namespaced_with(hub.client(), CLUSTER, &ar);
    raw.patch(
        "changing",
        &Default::default(),
        &kube::api::Patch::Merge(serde_json::json!({"spec": undecodable_work("changing")["spec"]})),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(10), || async {
            !undecodable_events(&hub, "changing").is_empty()
        })
        .await,
        "reported"
    );
    // Eviction (1 s grace here) must not take it for a work that is gone.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        configmap_value(&spoke, "changing").as_deref(),
        Some("v1"),
        "its resources stay"
    );
    let records: Vec<ocm_api::work::v1::AppliedManifestWork> = spoke.list(None).unwrap();
    assert_eq!(records.len(), 1, "its AppliedManifestWork stays");
    assert!(
        records[0]
            .status
            .as_ref()
            .and_then(|s| s.eviction_start_time.as_ref())
            .is_none()
    );
    // Fixed on the hub: applied again.
    raw.patch(
        "changing",
        &Default::default(),
        &kube::api::Patch::Merge(serde_json::json!({"spec": {
            "workload": {"manifests": [configmap("changing", "v2")]},
            "manifestConfigs": null
        }})),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(15), || async {
            configmap_value(&spoke, "changing").as_deref() == Some("v2")
                && all_applied(&hub, &["changing".to_string()])
        })
        .await,
        "the fixed work is applied"
    );
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

#[tokio::test]
async fn without_informers_sync_all_syncs_the_others_and_names_the_undecodable_work() {
    let (hub, spoke) = clusters().await;
    allow_a_newer_update_strategy(&hub).await;
    create_raw_work(&hub, undecodable_work("newer")).await;
    create_work(&hub.client(), &one_configmap_work("fine", "v1")).await;
    let config = AgentConfig::new(CLUSTER, hub_hash(HUB_URL)).resync_interval(Duration::ZERO);
    let agent = WorkAgent::new(hub.client(), spoke.client(), config);
    let error = agent
        .sync_all()
        .await
        .expect_err("the undecodable work is reported");
    let message = error.to_string();
    assert!(
        message.contains("ManifestWork cluster1/newer cannot be decoded")
            && message.contains("spec.manifestConfigs[0].updateStrategy.type"),
        "{message}"
    );
    assert!(
        matches!(error, ocm_work::Error::Undecodable { .. }),
        "{error:?}"
    );
    assert_eq!(configmap_value(&spoke, "fine").as_deref(), Some("v1"));
    assert!(configmap_value(&spoke, "newer").is_none());
}
