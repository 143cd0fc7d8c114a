//! The addon manager reads every object on its own: a ClusterManagementAddOn or a
//! ManagedClusterAddOn its types reject stops no other addon (the addon gets a condition
//! saying why), and an AddOnTemplate nested past `serde_json`'s 128 levels (up to the API
//! server's 10,000) is installed like any other.

use kube::api::{Api, ListParams, PostParams};
use kube::{Client, Resource};
use ocm_api::addon::v1beta1::ManagedClusterAddOn;
use ocm_api::work::v1::ManifestWork;
use ocm_work::addon::status::REASON_DECODE_FAILED;
use serde_json::{Value, json};

use crate::addon_support;
use crate::support;

use addon_support::Fleet;

const ADDONS: &str = "/apis/addon.open-cluster-management.io";

/// A template addon `addon` installing one ConfigMap (with `extra`, an unknown field kept by
/// the manifests' schema, nested as given), its ClusterManagementAddOn, and no
/// ManagedClusterAddOn.
fn template_addon(addon: &str, extra: &str) -> (String, String) {
    let template = format!(
        r#"{{"apiVersion":"addon.open-cluster-management.io/v1alpha1","kind":"AddOnTemplate","metadata":{{"name":"{addon}-v1"}},"spec":{{"addonName":"{addon}","agentSpec":{{"workload":{{"manifests":[{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{addon}","namespace":"default"}},"data":{{"cluster":"{{{{CLUSTER_NAME}}}}"}},"extra":{extra}}}]}}}}}}}}"#
    );
    let cma = json!({
        "apiVersion": "addon.open-cluster-management.io/v1beta1", "kind": "ClusterManagementAddOn",
        "metadata": {"name": addon},
        "spec": {"defaultConfigs": [{"group": "addon.open-cluster-management.io",
            "resource": "addontemplates", "name": format!("{addon}-v1")}]}
    });
    (template, cma.to_string())
}

/// POSTs `body` to `path`; the answer is not decoded.
async fn post(client: &Client, path: &str, body: String) {
    let request = http::Request::post(path)
        .header("content-type", "application/json")
        .body(body.into_bytes())
        .unwrap();
    client
        .request_text(request)
        .await
        .unwrap_or_else(|e| panic!("POST {path}: {e}"));
}

async fn install_template_addon(fleet: &Fleet, addon: &str, extra: &str) {
    let (template, cma) = template_addon(addon, extra);
    post(
        &fleet.client,
        &format!("{ADDONS}/v1alpha1/addontemplates"),
        template,
    )
    .await;
    post(
        &fleet.client,
        &format!("{ADDONS}/v1beta1/clustermanagementaddons"),
        cma,
    )
    .await;
}

async fn enable(fleet: &Fleet, cluster: &str, addon: &str) {
    let mca = json!({
        "apiVersion": "addon.open-cluster-management.io/v1beta1", "kind": "ManagedClusterAddOn",
        "metadata": {"name": addon, "namespace": cluster}, "spec": {}
    });
    post(
        &fleet.client,
        &format!("{ADDONS}/v1beta1/namespaces/{cluster}/managedclusteraddons"),
        mca.to_string(),
    )
    .await;
}

/// What a newer OCM release could do: ManagedClusterAddOns stored as v1beta1, whose config
/// names may be numbers (this SDK's types want strings).
async fn allow_numbered_config_names(client: &Client) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = "managedclusteraddons.addon.open-cluster-management.io";
    let mut crd = serde_json::to_value(api.get(name).await.unwrap()).unwrap();
    for version in crd["spec"]["versions"].as_array_mut().unwrap() {
        let beta = version["name"] == "v1beta1";
        version["storage"] = json!(beta);
        if beta {
            let config_name = version
                .pointer_mut(
                    "/schema/openAPIV3Schema/properties/spec/properties/configs/items/properties/name",
                )
                .expect("the CRD describes config names");
            *config_name = json!({"type": "integer"});
        }
    }
    let crd: CustomResourceDefinition = serde_json::from_value(crd).unwrap();
    api.replace(name, &PostParams::default(), &crd)
        .await
        .unwrap();
}

/// The deploy works of `addon` in `cluster`, with how deeply each nests.
async fn deploy_works(client: &Client, cluster: &str, addon: &str) -> Vec<(String, usize)> {
    support::raw_api::<ManifestWork>(client, Some(cluster))
        .list(
            &ListParams::default()
                .labels(&format!("open-cluster-management.io/addon-name={addon}")),
        )
        .await
        .unwrap()
        .items
        .iter()
        .map(|w| (w.meta().name.clone().unwrap_or_default(), w.depth()))
        .collect()
}

/// The `Progressing` condition of an addon, read from its JSON (it may not decode).
async fn progressing(
    client: &Client,
    cluster: &str,
    addon: &str,
) -> Option<(String, String, String)> {
    let raw = support::raw_api::<ManagedClusterAddOn>(client, Some(cluster))
        .get_opt(addon)
        .await
        .unwrap()?;
    let value: Value = serde_json::from_str(raw.json()).unwrap();
    value["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Progressing")
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (text("status"), text("reason"), text("message"))
        })
}

/// Status writes to the addon `addon` of `cluster`.
fn status_writes(fleet: &Fleet, cluster: &str, addon: &str) -> usize {
    fleet.hub.hub().journal().count(|e| {
        e.is_write()
            && e.resource.as_deref() == Some("managedclusteraddons")
            && e.subresource.as_deref() == Some("status")
            && e.namespace.as_deref() == Some(cluster)
            && e.name.as_deref() == Some(addon)
    })
}

// On the test's thread: the log capture reads what is logged there.
#[tokio::test]
async fn addons_that_do_not_decode_stop_no_other_addon() {
    let capture = crate::support::logs::capture();
    let fleet = Fleet::new(2, |m| m.with_templates(true)).await;
    allow_numbered_config_names(&fleet.client).await;
    install_template_addon(&fleet, "hello", "1").await;
    enable(&fleet, "cluster1", "hello").await;
    // The same addon on cluster2 names a config by number.
    post(
        &fleet.client,
        &format!("{ADDONS}/v1beta1/namespaces/cluster2/managedclusteraddons"),
        json!({
            "apiVersion": "addon.open-cluster-management.io/v1beta1", "kind": "ManagedClusterAddOn",
            "metadata": {"name": "hello", "namespace": "cluster2"},
            "spec": {"configs": [{"group": "addon.open-cluster-management.io",
                "resource": "addondeploymentconfigs", "namespace": "addons", "name": 7}]}
        })
        .to_string(),
    )
    .await;
    // A ClusterManagementAddOn of an older version whose rollout names a decision group past
    // int32 (the API server admits it).
    post(
        &fleet.client,
        &format!("{ADDONS}/v1alpha1/clustermanagementaddons"),
        json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1", "kind": "ClusterManagementAddOn",
            "metadata": {"name": "broken"},
            "spec": {"installStrategy": {"type": "Placements", "placements": [{
                "name": "p", "namespace": "addons",
                "rolloutStrategy": {"type": "Progressive", "progressive": {
                    "mandatoryDecisionGroups": [{"groupIndex": 1_000_000_000_000_i64}]}}}]}}
        })
        .to_string(),
    )
    .await;
    install_template_addon(&fleet, "other", "1").await;
    enable(&fleet, "cluster2", "other").await;

    let outcomes = fleet.rounds(3).await;
    // Both good addons are installed and running.
    assert_eq!(
        deploy_works(&fleet.client, "cluster1", "hello").await.len(),
        1
    );
    assert_eq!(
        deploy_works(&fleet.client, "cluster2", "other").await.len(),
        1
    );
    for (cluster, addon) in [("cluster1", "hello"), ("cluster2", "other")] {
        assert_eq!(
            fleet
                .spoke_object(cluster, "", "v1", "configmaps", "default", addon)
                .map(|cm| cm["data"]["cluster"].clone()),
            Some(json!(cluster)),
            "{addon} runs on {cluster}"
        );
    }
    // The undecodable addon says why, once, and gets no work.
    let (status, reason, message) = progressing(&fleet.client, "cluster2", "hello")
        .await
        .expect("a Progressing condition");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", REASON_DECODE_FAILED)
    );
    assert!(
        message.starts_with("the ManagedClusterAddOn cannot be decoded: spec.configs[0].name:"),
        "{message}"
    );
    assert!(
        deploy_works(&fleet.client, "cluster2", "hello")
            .await
            .is_empty()
    );
    assert_eq!(status_writes(&fleet, "cluster2", "hello"), 1);
    assert_eq!(
        outcomes["hello"].undecodable.len(),
        1,
        "{:?}",
        outcomes["hello"].undecodable
    );
    assert!(
        outcomes["hello"].undecodable[0]
            .starts_with("ManagedClusterAddOn cluster2/hello cannot be decoded")
    );
    assert!(!outcomes.contains_key("broken"));
    // Each is named at WARN once, however many rounds saw it.
    let warned = |kind: &str, object: &str| {
        capture
            .logs()
            .warnings()
            .into_iter()
            .filter(|l| l.contains(kind) && l.contains(object))
            .count()
    };
    assert_eq!(warned("ManagedClusterAddOn", "cluster2/hello"), 1);
    assert_eq!(
        warned("ClusterManagementAddOn", "broken"),
        1,
        "{}",
        capture.logs().text()
    );
}

async fn a_deep_template_is_installed(depth: usize) {
    let fleet = Fleet::new(1, |m| m.with_templates(true)).await;
    install_template_addon(
        &fleet,
        "deep",
        &format!("{}\"x\"{}", r#"{"a":"#.repeat(depth), "}".repeat(depth)),
    )
    .await;
    enable(&fleet, "cluster1", "deep").await;
    install_template_addon(&fleet, "plain", "1").await;
    enable(&fleet, "cluster1", "plain").await;
    // The manager alone (the agents' part is tested with the agent).
    for _ in 0..3 {
        let outcomes = fleet.manager.reconcile_all().await.expect("addon manager");
        assert!(
            outcomes.values().all(|o| o.failed.is_empty()),
            "{outcomes:?}"
        );
    }
    // The work carries the manifest whole: object, spec, workload, manifests, the manifest.
    assert_eq!(
        deploy_works(&fleet.client, "cluster1", "deep").await,
        [("addon-deep-deploy-0".to_string(), depth + 5)]
    );
    assert_eq!(
        deploy_works(&fleet.client, "cluster1", "plain").await.len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_nested_past_serde_jsons_limit_is_installed() {
    a_deep_template_is_installed(1_000).await;
}

/// The deepest AddOnTemplate the API server takes: 10,000 levels in all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_as_deep_as_the_api_server_takes_is_installed() {
    a_deep_template_is_installed(10_000 - 6).await;
}
