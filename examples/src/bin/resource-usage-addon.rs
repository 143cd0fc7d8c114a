//! `resource-usage-addon`: the "resource-usage-collect" addon of the OCM documentation, on the
//! `ocm_work::addon` framework. One binary, three subcommands:
//!
//! ```text
//! resource-usage-addon demo
//!     # everything in this process: a fake hub, three fake managed clusters with nodes and
//!     # pods, the placement controller, work agents, the addon manager and the agents;
//!     # then a Placement that picks the cluster with the most free CPU
//! resource-usage-addon manager --hub-kubeconfig hub.kubeconfig --placement default/all
//!     # the hub side: installs the agent on every cluster the Placement selects
//! resource-usage-addon agent --hub-kubeconfig hub.kubeconfig --kubeconfig cluster1.kubeconfig \
//!     --cluster-name cluster1
//!     # the agent: scores its cluster into AddOnPlacementScore resource-usage-score
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config, ResourceExt};
use ocm_api::addon::v1alpha1::{InstallStrategy, InstallStrategyType, PlacementStrategy};
use ocm_api::addon::v1beta1::ManagedClusterAddOn;
use ocm_api::cluster::builder::PlacementBuilder;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::conditions;
use ocm_examples::resource_usage::{
    ADDON_NAME, CPU_SCORE, MAX_CPU_CORES, MAX_MEMORY_MIB, ResourceUsageAddon, SCORE_RESOURCE,
    UsageAgent,
};
use ocm_placement::controller::PlacementController;
use ocm_testkit::FakeHub;
use ocm_work::addon::AddonManager;
use ocm_work::addon::lease::LeaseHealthChecker;
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use serde_json::json;

/// The resource-usage-collect addon: hub manager, cluster agent, or an in-process demo.
#[derive(Parser, Debug)]
#[command(name = "resource-usage-addon", version)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Everything in one process against fake clusters.
    Demo,
    /// The hub side: the addon manager serving this addon.
    Manager {
        /// Kubeconfig of the hub.
        #[arg(long, value_name = "FILE")]
        hub_kubeconfig: PathBuf,
        /// Install on the clusters of this Placement (`namespace/name`); the
        /// ClusterManagementAddOn is created with this install strategy when missing.
        #[arg(long)]
        placement: Option<String>,
        /// Image of the agent (a build of this binary).
        #[arg(long, default_value = "quay.io/ocm-rs/resource-usage-addon:latest")]
        image: String,
        /// Reconcile at least this often (Go duration syntax).
        #[arg(long, default_value = "60s", value_parser = parse_duration)]
        resync: Duration,
    },
    /// The agent: scores one managed cluster.
    Agent {
        /// Kubeconfig of the hub (the agent's own identity there).
        #[arg(long, value_name = "FILE")]
        hub_kubeconfig: PathBuf,
        /// Kubeconfig of the managed cluster; in-cluster configuration when absent.
        #[arg(long, value_name = "FILE")]
        kubeconfig: Option<PathBuf>,
        /// The managed cluster's name (its namespace on the hub).
        #[arg(long)]
        cluster_name: String,
        /// The namespace of the addon's lease on the managed cluster.
        #[arg(long, default_value = ocm_api::constants::addon::DEFAULT_AGENT_INSTALL_NAMESPACE)]
        namespace: String,
        /// Time between rounds (Go duration syntax).
        #[arg(long, default_value = "60s", value_parser = parse_duration)]
        interval: Duration,
        /// How long written scores stay valid (Go duration syntax).
        #[arg(long, default_value = "10m", value_parser = parse_duration)]
        valid_for: Duration,
        /// Free CPU cores that score 100.
        #[arg(long, default_value_t = MAX_CPU_CORES)]
        max_cpu: f64,
        /// Free memory in MiB that scores 100.
        #[arg(long, default_value_t = MAX_MEMORY_MIB)]
        max_memory_mib: f64,
        /// One round, then exit.
        #[arg(long)]
        once: bool,
    },
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    ocm_api::cluster::v1alpha1::duration::parse_go_duration(s).map_err(|e| e.to_string())
}

type Failure = Box<dyn std::error::Error + Send + Sync>;

async fn client_from(path: &Path) -> Result<Client, Failure> {
    let kubeconfig = Kubeconfig::read_from(path)
        .map_err(|e| format!("cannot read kubeconfig {}: {e}", path.display()))?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("invalid kubeconfig {}: {e}", path.display()))?;
    Ok(Client::try_from(config)?)
}

async fn manager(
    hub: PathBuf,
    placement: Option<String>,
    image: String,
    resync: Duration,
) -> Result<(), Failure> {
    let client = client_from(&hub).await?;
    let addon = ResourceUsageAddon::new(image);
    let mut manager = AddonManager::new(client.clone());
    if let Some(p) = placement {
        let (namespace, name) = p
            .split_once('/')
            .ok_or_else(|| format!("--placement {p:?} is not namespace/name"))?;
        let strategy = InstallStrategy {
            type_: Some(InstallStrategyType::Placements),
            placements: Some(vec![PlacementStrategy {
                namespace: namespace.into(),
                name: name.into(),
                configs: None,
                rollout_strategy: None,
            }]),
        };
        manager = manager.with_addon(Arc::new(WithStrategy(addon, strategy)));
    } else {
        manager = manager.with_addon(Arc::new(addon));
    }
    manager.ensure_cluster_management_addons().await?;
    tracing::info!("serving addon {ADDON_NAME}");
    manager
        .run(resync, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
    Ok(())
}

/// The addon with an install strategy for the ClusterManagementAddOn the manager creates.
struct WithStrategy(ResourceUsageAddon, InstallStrategy);

impl ocm_work::addon::AgentAddon for WithStrategy {
    fn options(&self) -> ocm_work::addon::AgentAddonOptions {
        self.0.options().with_install_strategy(self.1.clone())
    }

    fn manifests(
        &self,
        cluster: &ocm_api::cluster::v1::ManagedCluster,
        addon: &ManagedClusterAddOn,
        configs: &ocm_work::addon::AddonConfigs,
    ) -> Result<Vec<ocm_api::work::v1::Manifest>, ocm_work::addon::RenderError> {
        self.0.manifests(cluster, addon, configs)
    }
}

#[allow(clippy::too_many_arguments)]
async fn agent(
    hub: PathBuf,
    kubeconfig: Option<PathBuf>,
    cluster: String,
    namespace: String,
    interval: Duration,
    valid_for: Duration,
    max_cpu: f64,
    max_memory_mib: f64,
    once: bool,
) -> Result<(), Failure> {
    let hub = client_from(&hub).await?;
    let spoke = match kubeconfig {
        Some(path) => client_from(&path).await?,
        None => Client::try_default().await?,
    };
    let agent = UsageAgent::new(hub, spoke, &cluster, &namespace)
        .valid_for(valid_for)
        .maxima(max_cpu, max_memory_mib);
    if once {
        let round = agent.run_once().await?;
        println!("{cluster}: {:?}", round.scores);
        return Ok(());
    }
    agent
        .run(interval, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
    Ok(())
}

fn step(text: &str) {
    println!("\n==> {text}");
}

/// CPU and memory, as quantities.
type Resources<'a> = &'a [(&'a str, &'a str)];

/// The demo's clusters: (name, nodes' allocatable, pods' requests).
const CLUSTERS: [(&str, Resources<'static>, Resources<'static>); 3] = [
    ("cluster1", &[("8", "32Gi")], &[("6", "8Gi")]),
    (
        "cluster2",
        &[("16", "64Gi"), ("16", "64Gi")],
        &[("4", "16Gi")],
    ),
    ("cluster3", &[("4", "16Gi")], &[]),
];

async fn add_pod(
    client: &Client,
    name: &str,
    node: &str,
    cpu: &str,
    memory: &str,
) -> Result<(), Failure> {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "busybox",
            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]},
        "status": {"phase": "Running"}
    }))?;
    Api::<Pod>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &pod)
        .await?;
    Ok(())
}

struct Demo {
    hub: Client,
    placement: PlacementController,
    manager: AddonManager,
    agents: Vec<(String, WorkAgent, UsageAgent, LeaseHealthChecker)>,
    fake: FakeHub,
}

impl Demo {
    async fn tick(&self, score: bool) -> Result<(), Failure> {
        self.placement.reconcile_all().await?;
        self.manager.reconcile_all().await?;
        for (_, work, _, _) in &self.agents {
            work.sync_all().await?;
        }
        for (_, cluster) in self.fake.clusters() {
            ocm_testkit::settle_workloads(cluster.store());
        }
        for (_, work, usage, lease) in &self.agents {
            work.sync_all().await?;
            // The agent Deployment cannot run in a fake cluster: run its loop body here.
            if score {
                usage.run_once().await?;
            }
            lease.check_all().await?;
        }
        Ok(())
    }
}

async fn addon_table(demo: &Demo) -> Result<(), Failure> {
    println!(
        "    {:<10} {:<16} {:<10} {:<12} {:<10}",
        "CLUSTER", "MANIFESTAPPLIED", "AVAILABLE", "NAMESPACE", "WORKS"
    );
    for (name, _, _, _) in &demo.agents {
        let api: Api<ManagedClusterAddOn> = Api::namespaced(demo.hub.clone(), name);
        let Some(mca) = api.get_opt(ADDON_NAME).await? else {
            println!("    {name:<10} -");
            continue;
        };
        let st = mca.status.unwrap_or_default();
        let conds = st.conditions.unwrap_or_default();
        let s = |t: &str| conditions::find(&conds, t).map_or("-".to_string(), |c| c.status.clone());
        let works = Api::<ocm_api::work::v1::ManifestWork>::namespaced(demo.hub.clone(), name)
            .list(&ListParams::default().labels(&format!(
                "{}={ADDON_NAME}",
                ocm_api::constants::addon::ADDON_LABEL
            )))
            .await?
            .items
            .iter()
            .map(|w| w.name_any())
            .collect::<Vec<_>>()
            .join(",");
        println!(
            "    {name:<10} {:<16} {:<10} {:<12} {works}",
            s("ManifestApplied"),
            s("Available"),
            st.namespace
                .unwrap_or_default()
                .chars()
                .take(12)
                .collect::<String>()
        );
    }
    Ok(())
}

async fn score_table(hub: &Client) -> Result<BTreeMap<String, i32>, Failure> {
    let mut out = BTreeMap::new();
    let scores: Api<AddOnPlacementScore> = Api::all(hub.clone());
    for s in scores.list(&ListParams::default()).await?.items {
        let ns = s.namespace().unwrap_or_default();
        let st = s.status.clone().unwrap_or_default();
        let items = st.scores.clone().unwrap_or_default();
        let text = items
            .iter()
            .map(|i| format!("{}={}", i.name, i.value))
            .collect::<Vec<_>>()
            .join(" ");
        let until = st.valid_until.map(|t| t.0.to_string()).unwrap_or_default();
        println!("    {ns:<10} {} {text}  validUntil={until}", s.name_any());
        if let Some(v) = s.score(CPU_SCORE) {
            out.insert(ns, v);
        }
    }
    Ok(out)
}

async fn decision(hub: &Client, name: &str) -> Result<Vec<String>, Failure> {
    let api: Api<PlacementDecision> = Api::namespaced(hub.clone(), "default");
    let mut out = Vec::new();
    for pd in api
        .list(
            &ListParams::default()
                .labels(&format!("{}={name}", ocm_api::constants::labels::PLACEMENT)),
        )
        .await?
        .items
    {
        out.extend(
            pd.status
                .into_iter()
                .flat_map(|s| s.decisions)
                .map(|d| d.cluster_name),
        );
    }
    Ok(out)
}

/// `(reason, note)` of the Events about the placement `name`.
async fn events(hub: &Client, name: &str) -> Result<Vec<(String, String)>, Failure> {
    let api: Api<Event> = Api::namespaced(hub.clone(), "default");
    Ok(api
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
        .collect())
}

async fn demo() -> Result<(), Failure> {
    step("starting a fake hub and three fake managed clusters with nodes and pods");
    let fake = FakeHub::new(3)?;
    let hub = fake.hub().client();
    let hash = hub_hash("https://hub.resource-usage.local:6443");
    let mut agents = Vec::new();
    for (name, nodes, pods) in CLUSTERS {
        let cluster = fake.cluster(name).ok_or("missing cluster")?;
        ocm_testkit::install_crds(cluster)?;
        let spoke = cluster.client();
        for (i, (cpu, mem)) in nodes.iter().enumerate() {
            let node_name = format!("{name}-node{i}");
            let node: Node = serde_json::from_value(json!({"metadata": {"name": node_name}}))?;
            let nodes = Api::<Node>::all(spoke.clone());
            nodes.create(&PostParams::default(), &node).await?;
            let status = json!({"status": {"allocatable": {"cpu": cpu, "memory": mem},
                                           "capacity": {"cpu": cpu, "memory": mem}}});
            nodes
                .patch_status(&node_name, &PatchParams::default(), &Patch::Merge(&status))
                .await?;
        }
        for (i, (cpu, mem)) in pods.iter().enumerate() {
            add_pod(
                &spoke,
                &format!("workload{i}"),
                &format!("{name}-node0"),
                cpu,
                mem,
            )
            .await?;
        }
        println!("    {name}: nodes {nodes:?}, pod requests {pods:?}");
        let work = WorkAgent::new(
            hub.clone(),
            spoke.clone(),
            AgentConfig::new(name, hash.clone()).resync_interval(Duration::ZERO),
        );
        let usage = UsageAgent::new(
            hub.clone(),
            spoke.clone(),
            name,
            ocm_api::constants::addon::DEFAULT_AGENT_INSTALL_NAMESPACE,
        );
        let lease = LeaseHealthChecker::new(hub.clone(), spoke, name);
        agents.push((name.to_string(), work, usage, lease));
    }
    fake.hub().apply_yaml(
        "apiVersion: cluster.open-cluster-management.io/v1beta2\nkind: ManagedClusterSetBinding\n\
         metadata: {name: default, namespace: default}\nspec: {clusterSet: default}\n",
    )?;

    step(
        "installing the addon on the clusters of Placement default/all (ClusterManagementAddOn install strategy)",
    );
    Api::<Placement>::namespaced(hub.clone(), "default")
        .create(
            &PostParams::default(),
            &PlacementBuilder::new("all", "default").build()?,
        )
        .await?;
    let strategy = InstallStrategy {
        type_: Some(InstallStrategyType::Placements),
        placements: Some(vec![PlacementStrategy {
            namespace: "default".into(),
            name: "all".into(),
            configs: None,
            rollout_strategy: None,
        }]),
    };
    let manager = AddonManager::new(hub.clone()).with_addon(Arc::new(WithStrategy(
        ResourceUsageAddon::new("quay.io/ocm-rs/resource-usage-addon:latest"),
        strategy,
    )));
    manager.ensure_cluster_management_addons().await?;
    let demo = Demo {
        hub: hub.clone(),
        placement: PlacementController::new(hub.clone()),
        manager,
        agents,
        fake,
    };
    for round in 1..=3 {
        demo.tick(round == 3).await?;
    }
    addon_table(&demo).await?;

    step("the agents score their clusters (AddOnPlacementScore resource-usage-score)");
    let scores = score_table(&hub).await?;

    step("creating Placement placement1: one cluster, the most free CPU (AddOn prioritizer)");
    let placement = PlacementBuilder::new("placement1", "default")
        .cluster_sets(["default"])
        .number_of_clusters(1)
        .prioritizer_mode("Exact")
        .addon_prioritizer(SCORE_RESOURCE, CPU_SCORE, 1)
        .build()?;
    Api::<Placement>::namespaced(hub.clone(), "default")
        .create(&PostParams::default(), &placement)
        .await?;
    demo.placement.reconcile_all().await?;
    let chosen = decision(&hub, "placement1").await?;
    println!("    decision: {chosen:?}");
    for (reason, note) in events(&hub, "placement1").await? {
        if reason == "ScoreUpdate" {
            println!("    Event ScoreUpdate: {note}");
        }
    }
    let best = scores
        .iter()
        .max_by_key(|(_, v)| **v)
        .map(|(c, _)| c.clone());
    if chosen.first() != best.as_ref() {
        return Err(format!("expected {best:?}, placement chose {chosen:?}").into());
    }

    step(
        "a big workload lands on the chosen cluster; the agent refreshes its score and the placement moves",
    );
    if let Some(first) = chosen.first() {
        let cluster = demo.fake.cluster(first).ok_or("missing cluster")?;
        add_pod(
            &cluster.client(),
            "big-job",
            &format!("{first}-node0"),
            "15",
            "8Gi",
        )
        .await?;
        add_pod(
            &cluster.client(),
            "big-job-2",
            &format!("{first}-node1"),
            "14",
            "8Gi",
        )
        .await?;
    }
    demo.tick(true).await?;
    score_table(&hub).await?;
    demo.placement.reconcile_all().await?;
    let moved = decision(&hub, "placement1").await?;
    println!("    decision: {moved:?}");
    if moved == chosen {
        return Err("the placement did not follow the new scores".into());
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let start = Instant::now();
    let result = match Args::parse().command {
        Command::Demo => demo().await,
        Command::Manager {
            hub_kubeconfig,
            placement,
            image,
            resync,
        } => manager(hub_kubeconfig, placement, image, resync).await,
        Command::Agent {
            hub_kubeconfig,
            kubeconfig,
            cluster_name,
            namespace,
            interval,
            valid_for,
            max_cpu,
            max_memory_mib,
            once,
        } => {
            agent(
                hub_kubeconfig,
                kubeconfig,
                cluster_name,
                namespace,
                interval,
                valid_for,
                max_cpu,
                max_memory_mib,
                once,
            )
            .await
        }
    };
    match result {
        Ok(()) => {
            eprintln!("resource-usage-addon finished in {:.2?}", start.elapsed());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("resource-usage-addon: {e}");
            ExitCode::FAILURE
        }
    }
}
