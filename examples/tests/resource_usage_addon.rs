//! The resource-usage-collect example addon end to end: in process against fake clusters, the
//! `demo` subcommand, and the `manager` and `agent` binaries as real processes over loopback
//! HTTP, with the agent acting on the hub as its registered identity (checked by RBAC), read
//! back with `kubectl`.
//!
//! Without kubectl on PATH the kubectl reads report SKIPPED; with `CI=true` they fail instead.

use crate::common;

use common::{Running, kubectl_available, scratch};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::addon::v1alpha1::{InstallStrategy, InstallStrategyType, PlacementStrategy};
use ocm_api::addon::v1beta1::{
    ClusterManagementAddOn, ClusterManagementAddOnSpec, ManagedClusterAddOn,
};
use ocm_api::cluster::builder::PlacementBuilder;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions;
use ocm_examples::resource_usage::{
    ADDON_NAME, CPU_SCORE, ResourceUsageAddon, SCORE_RESOURCE, UsageAgent,
};
use ocm_placement::controller::PlacementController;
use ocm_testkit::{FakeCluster, FakeHub};
use ocm_work::addon::AddonManager;
use ocm_work::addon::lease::LeaseHealthChecker;
use ocm_work::agent::{AgentConfig, WorkAgent};
use serde_json::json;

async fn add_node(client: &Client, name: &str, cpu: &str, memory: &str) {
    let api: Api<Node> = Api::all(client.clone());
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": name}})).unwrap(),
    )
    .await
    .unwrap();
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"allocatable": {"cpu": cpu, "memory": memory}}})),
    )
    .await
    .unwrap();
}

async fn add_pod(client: &Client, name: &str, node: &str, cpu: &str) {
    let pod = serde_json::from_value(json!({"metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}}))
    .unwrap();
    Api::<k8s_openapi::api::core::v1::Pod>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &pod)
        .await
        .unwrap();
}

async fn fleet_setup(hub: &FakeHub) {
    hub.hub()
        .apply_yaml(
            "apiVersion: cluster.open-cluster-management.io/v1beta2\nkind: ManagedClusterSetBinding\n\
             metadata: {name: default, namespace: default}\nspec: {clusterSet: default}\n",
        )
        .unwrap();
    Api::<Placement>::namespaced(hub.hub().client(), "default")
        .create(
            &PostParams::default(),
            &PlacementBuilder::new("all", "default").build().unwrap(),
        )
        .await
        .unwrap();
    let cma = ClusterManagementAddOn::new(
        ADDON_NAME,
        ClusterManagementAddOnSpec {
            add_on_meta: None,
            default_configs: None,
            install_strategy: Some(InstallStrategy {
                type_: Some(InstallStrategyType::Placements),
                placements: Some(vec![PlacementStrategy {
                    namespace: "default".into(),
                    name: "all".into(),
                    configs: None,
                    rollout_strategy: None,
                }]),
            }),
        },
    );
    Api::<ClusterManagementAddOn>::all(hub.hub().client())
        .create(&PostParams::default(), &cma)
        .await
        .unwrap();
}

#[tokio::test]
async fn the_placement_picks_the_cluster_with_the_most_free_cpu() {
    let hub = FakeHub::new(3).unwrap();
    let client = hub.hub().client();
    fleet_setup(&hub).await;
    let mut agents = Vec::new();
    for (name, cpu, used) in [
        ("cluster1", "8", "6"),
        ("cluster2", "32", "4"),
        ("cluster3", "4", "0"),
    ] {
        let cluster = hub.cluster(name).unwrap();
        ocm_testkit::install_crds(cluster).unwrap();
        add_node(&cluster.client(), &format!("{name}-n"), cpu, "32Gi").await;
        add_pod(&cluster.client(), "w", &format!("{name}-n"), used).await;
        let work = WorkAgent::new(
            client.clone(),
            cluster.client(),
            AgentConfig::new(name, "hash").resync_interval(Duration::ZERO),
        );
        let usage = UsageAgent::new(
            client.clone(),
            cluster.client(),
            name,
            "open-cluster-management-agent-addon",
        );
        let lease = LeaseHealthChecker::new(client.clone(), cluster.client(), name);
        agents.push((name, work, usage, lease));
    }
    let placement = PlacementController::new(client.clone());
    let manager =
        AddonManager::new(client.clone()).with_addon(Arc::new(ResourceUsageAddon::new("img")));
    for _ in 0..3 {
        placement.reconcile_all().await.unwrap();
        manager.reconcile_all().await.unwrap();
        for (_, work, _, _) in &agents {
            work.sync_all().await.unwrap();
        }
        for (_, c) in hub.clusters() {
            ocm_testkit::settle_workloads(c.store());
        }
        for (_, work, usage, lease) in &agents {
            work.sync_all().await.unwrap();
            usage.run_once().await.unwrap();
            lease.check_all().await.unwrap();
        }
    }
    // The addon runs everywhere, healthy by its lease, with its hub permissions.
    for (name, _, _, _) in &agents {
        let mca = Api::<ManagedClusterAddOn>::namespaced(client.clone(), name)
            .get(ADDON_NAME)
            .await
            .unwrap();
        let conds = mca.status.unwrap().conditions.unwrap();
        for (t, reason) in [
            ("ManifestApplied", "AddonManifestApplied"),
            ("Available", "ManagedClusterAddOnLeaseUpdated"),
            ("RegistrationApplied", "SetPermissionApplied"),
        ] {
            assert_eq!(
                conditions::find(&conds, t).map(|c| c.reason.as_str()),
                Some(reason),
                "{name} {t}"
            );
        }
        let score = Api::<AddOnPlacementScore>::namespaced(client.clone(), name)
            .get(SCORE_RESOURCE)
            .await
            .unwrap();
        assert!(score.status.as_ref().unwrap().valid_until.is_some());
        assert!(score.score("memAvailable").is_some());
    }
    // 28 free cores of 100: 200 * 28 / 100 - 100 = -44.
    let cpu = |n: &str| {
        let client = client.clone();
        let n = n.to_string();
        async move {
            Api::<AddOnPlacementScore>::namespaced(client, &n)
                .get(SCORE_RESOURCE)
                .await
                .unwrap()
                .score(CPU_SCORE)
        }
    };
    assert_eq!(
        (
            cpu("cluster1").await,
            cpu("cluster2").await,
            cpu("cluster3").await
        ),
        (Some(-96), Some(-44), Some(-92))
    );

    let most_cpu = PlacementBuilder::new("placement1", "default")
        .number_of_clusters(1)
        .prioritizer_mode("Exact")
        .addon_prioritizer(SCORE_RESOURCE, CPU_SCORE, 1)
        .build()
        .unwrap();
    Api::<Placement>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &most_cpu)
        .await
        .unwrap();
    placement.reconcile_all().await.unwrap();
    let decided = |client: Client| async move {
        Api::<PlacementDecision>::namespaced(client, "default")
            .list(
                &ListParams::default()
                    .labels("cluster.open-cluster-management.io/placement=placement1"),
            )
            .await
            .unwrap()
            .items
            .into_iter()
            .flat_map(|d| d.status.unwrap_or_default().decisions)
            .map(|d| d.cluster_name)
            .collect::<Vec<_>>()
    };
    assert_eq!(decided(client.clone()).await, ["cluster2"]);
    let events = Api::<Event>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let score_update = events
        .iter()
        .find(|e| {
            e.reason.as_deref() == Some("ScoreUpdate")
                && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("placement1")
        })
        .expect("ScoreUpdate event");
    assert_eq!(
        score_update.note.as_deref(),
        Some("cluster1:-96 cluster2:-44 cluster3:-92 ")
    );

    // cluster2 fills up; its agent refreshes the score and the placement follows.
    add_pod(
        &hub.cluster("cluster2").unwrap().client(),
        "big",
        "cluster2-n",
        "27",
    )
    .await;
    let round = agents[1].2.run_once().await.unwrap();
    assert_eq!(round.writes, 1);
    placement.reconcile_all().await.unwrap();
    assert_eq!(decided(client.clone()).await, ["cluster3"]);
}

#[test]
fn demo_runs() {
    let out = Command::new(env!("CARGO_BIN_EXE_resource-usage-addon"))
        .arg("demo")
        .output()
        .expect("run resource-usage-addon demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Event ScoreUpdate: cluster1:-96 cluster2:-44 cluster3:-92"),
        "{stdout}"
    );
    assert!(stdout.contains("decision: [\"cluster3\"]"), "{stdout}");
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// Several workers: kubectl runs blocking while the loopback servers answer it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manager_and_agent_binaries_end_to_end() {
    let dir = scratch("e2e");
    let hub = FakeHub::with_builder(FakeCluster::builder().enforce_impersonation(true), 1).unwrap();
    let client = hub.hub().client();
    fleet_setup(&hub).await;
    let spoke = hub.cluster("cluster1").unwrap();
    add_node(&spoke.client(), "n1", "16", "64Gi").await;
    let hub_server = hub.hub().serve_loopback().await.unwrap();
    let spoke_server = spoke.serve_loopback().await.unwrap();
    let hub_kc = dir.join("hub.kubeconfig");
    let spoke_kc = dir.join("cluster1.kubeconfig");
    hub_server.write_kubeconfig(&hub_kc).unwrap();
    spoke_server.write_kubeconfig(&spoke_kc).unwrap();
    // The agent's hub identity: the user and groups the manager registers for it.
    let user =
        "system:open-cluster-management:cluster:cluster1:addon:resource-usage-collect:agent:agent";
    let agent_kc = dir.join("agent-hub.kubeconfig");
    std::fs::write(
        &agent_kc,
        hub_server.kubeconfig_yaml().replace(
            "user: {}",
            &format!("user: {{as: \"{user}\", as-groups: [\"system:open-cluster-management:cluster:cluster1:addon:resource-usage-collect\", \"system:authenticated\"]}}"),
        ),
    )
    .unwrap();

    let exe = env!("CARGO_BIN_EXE_resource-usage-addon");
    let _manager = Running(
        Command::new(exe)
            .args(["manager", "--hub-kubeconfig"])
            .arg(&hub_kc)
            .args(["--placement", "default/all", "--resync", "1s"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start manager"),
    );
    let _agent = Running(
        Command::new(exe)
            .args(["agent", "--hub-kubeconfig"])
            .arg(&agent_kc)
            .arg("--kubeconfig")
            .arg(&spoke_kc)
            .args(["--cluster-name", "cluster1", "--interval", "1s"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start agent"),
    );
    let placement = PlacementController::new(client.clone());
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut score = None;
    while Instant::now() < deadline {
        placement.reconcile_all().await.unwrap();
        if let Some(s) = Api::<AddOnPlacementScore>::namespaced(client.clone(), "cluster1")
            .get_opt(SCORE_RESOURCE)
            .await
            .unwrap()
            && s.score(CPU_SCORE).is_some()
        {
            score = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let score = score.expect("the agent wrote its score once the manager granted its permissions");
    // 16 free cores of 100: 200 * 16 / 100 - 100 = -68.
    assert_eq!(score.score(CPU_SCORE), Some(-68));
    let mca = Api::<ManagedClusterAddOn>::namespaced(client.clone(), "cluster1")
        .get(ADDON_NAME)
        .await
        .unwrap();
    assert_eq!(mca.owner_references()[0].kind, "ClusterManagementAddOn");

    if kubectl_available() {
        let reason = kubectl(
            &hub_kc,
            &[
                "get",
                "managedclusteraddons",
                "-n",
                "cluster1",
                ADDON_NAME,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"RegistrationApplied\")].reason}",
            ],
        );
        assert_eq!(reason, "SetPermissionApplied");
        let value = kubectl(
            &hub_kc,
            &[
                "get",
                "addonplacementscores",
                "-n",
                "cluster1",
                SCORE_RESOURCE,
                "-o",
                "jsonpath={.status.scores[?(@.name==\"cpuAvailable\")].value}",
            ],
        );
        assert_eq!(value, "-68");
        let works = kubectl(
            &hub_kc,
            &["get", "manifestworks", "-n", "cluster1", "-o", "name"],
        );
        assert!(
            works.contains(
                "manifestwork.work.open-cluster-management.io/addon-resource-usage-collect-deploy-0"
            ),
            "{works}"
        );
        // As the agent, kubectl may read the scores of its own cluster only.
        let own = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&agent_kc)
            .args([
                "get",
                "addonplacementscores",
                "-n",
                "cluster1",
                "-o",
                "name",
            ])
            .output()
            .unwrap();
        assert!(
            own.status.success(),
            "{}",
            String::from_utf8_lossy(&own.stderr)
        );
        let other = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&agent_kc)
            .args(["get", "managedclusteraddons", "-n", "cluster1"])
            .output()
            .unwrap();
        assert!(
            !other.status.success(),
            "the agent has no right to read addons"
        );
        assert!(
            String::from_utf8_lossy(&other.stderr).contains("forbidden"),
            "{}",
            String::from_utf8_lossy(&other.stderr)
        );
    }
}
