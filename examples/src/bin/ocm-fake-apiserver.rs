//! `ocm-fake-apiserver`: a fake OCM hub (and, optionally, fake managed clusters) on
//! 127.0.0.1, for kubectl, controllers in any language, or the example binaries.
//!
//! ```text
//! ocm-fake-apiserver --kubeconfig hub.kubeconfig
//! ocm-fake-apiserver --kubeconfig hub.kubeconfig --clusters 3 --cluster-kubeconfigs spokes/
//! ocm-fake-apiserver --clusters 2 --cluster-kubeconfigs . --context-prefix kind- --state-dir state/
//! kubectl --kubeconfig hub.kubeconfig get managedclusters
//! ```
//!
//! See `--help` for what the server is, what it keeps and what it does not do.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use ocm_testkit::{FakeCluster, FakeHub, LoopbackServer, WorkloadSimulator};
use serde_json::{Value, json};

const LONG_ABOUT: &str = "\
Serve a fake OCM hub, and optionally fake managed clusters, on 127.0.0.1.

What it is: ocm-testkit's in-memory Kubernetes API server (not kube-apiserver, no etcd, no
nodes, no pods running anything). The hub has every OCM CRD installed (upstream's, as a hub
is set up by default; --extended-crds installs the extended ManifestWorkReplicaSet CRD that
ocm-hub-controller --rollback and --feedback-aggregation need), the `default` and
`global` ManagedClusterSets, and --clusters registered, accepted and available
ManagedClusters (cluster1, cluster2, ...), each with its namespace. The hub runs the OCM
hub's admission webhooks as upstream registers them (ManagedCluster taint times and checks,
ManagedClusterSetBinding bind checks, ManifestWork validation and execute-as checks), and
our execute-as check of ManifestWorkReplicaSet executors.
With --cluster-kubeconfigs DIR every managed cluster is served too (its own fake API server,
with workload simulators so that Deployments run Pods through a ReplicaSet and Deployments,
StatefulSets, DaemonSets and Jobs report progress, and with the ClusterClaim reporter of the
cluster's registration agent, so that its ClusterClaims appear in the ManagedCluster's
status on the hub) and DIR/<cluster>.kubeconfig is written. Each kubeconfig names its cluster and
context after the cluster (`hub`, `cluster1`, ...; `--context-prefix kind-` gives
`kind-hub`, `kind-cluster1` as upstream's walkthroughs use), so they merge with
KUBECONFIG=a:b and `kubectl --context` picks one.

What it keeps: objects live in memory. Without --state-dir they are gone when the process
stops (Ctrl-C). With --state-dir DIR every cluster's objects are saved to DIR/state.json
(within a second of each change, and on Ctrl-C) and loaded again at the next start, with the
same ports, so that kubeconfigs written before stay valid. Watches do not survive a restart
(clients list again).

What it does not run: no other controllers. Run ocm-hub-controller (placement, replica sets,
cluster inventory, --cluster-lease) and one ocm-work-agent per cluster (--cluster-lease for
the registration agent's lease) against it. Only loopback addresses are served.

With --authentication the hub checks bearer tokens and RBAC as kube-apiserver does:
--agent-kubeconfigs DIR writes DIR/<cluster>-agent.kubeconfig for each managed cluster's
agent, which has upstream's hub RBAC for its cluster only.";

/// Serve a fake OCM hub and managed clusters on 127.0.0.1.
#[derive(Parser, Debug)]
#[command(name = "ocm-fake-apiserver", version, long_about = LONG_ABOUT)]
struct Args {
    /// Where to write the hub's kubeconfig.
    #[arg(long, value_name = "FILE", default_value = "hub.kubeconfig")]
    kubeconfig: PathBuf,

    /// Port of the hub on 127.0.0.1 (0 picks a free port, or the saved one with
    /// --state-dir).
    #[arg(long, default_value_t = 0)]
    port: u16,

    /// Number of registered managed clusters (with --state-dir and a saved state, the saved
    /// clusters are used).
    #[arg(long, default_value_t = 0)]
    clusters: usize,

    /// Also serve every managed cluster and write `<cluster>.kubeconfig` files here.
    #[arg(long, value_name = "DIR")]
    cluster_kubeconfigs: Option<PathBuf>,

    /// Prefix of the cluster and context names in the kubeconfigs (`kind-` gives
    /// `kind-hub`, `kind-cluster1`, ...).
    #[arg(long, default_value = "")]
    context_prefix: String,

    /// Do not report the served managed clusters' ClusterClaims to the hub (for when
    /// `ocm-work-agent --cluster-claims` reports them).
    #[arg(long)]
    no_cluster_claims: bool,

    /// Keep every cluster's objects in DIR/state.json and load them at the next start (same
    /// ports).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,

    /// Authenticate hub requests by bearer token and authorize them with RBAC, as
    /// kube-apiserver does (the hub kubeconfig is the cluster administrator's). Each managed
    /// cluster's agent gets its upstream identity and hub RBAC.
    #[arg(long)]
    authentication: bool,

    /// With `--authentication`: write each agent's hub kubeconfig here, as
    /// `<cluster>-agent.kubeconfig`.
    #[arg(long, value_name = "DIR", requires = "authentication")]
    agent_kubeconfigs: Option<PathBuf>,

    /// Install the extended CRDs (`ocm-crdgen --extended`: the ManifestWorkReplicaSet CRD
    /// with the fields of ocm-hub-controller's --rollback and --feedback-aggregation) instead
    /// of upstream's.
    #[arg(long)]
    extended_crds: bool,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    // Warnings and errors of the fake server (RUST_LOG for more), without colour off a terminal.
    ocm_examples::logging::init("warn");
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ocm-fake-apiserver: {message}");
            ExitCode::FAILURE
        }
    }
}

/// What `--state-dir` keeps: every cluster's objects and the ports they were served on.
struct Saved {
    hub_port: Option<u16>,
    clusters: Vec<(String, Option<u16>, Value)>,
    hub: Value,
}

fn state_file(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

fn read_state(dir: &Path) -> Result<Option<Saved>, String> {
    let path = state_file(dir);
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    // The saved stores hold objects up to the API server's nesting limit, five levels down.
    let mut v: Value =
        ocm_api::k8s::json::from_slice_within(&text, ocm_api::k8s::json::MAX_NESTING_DEPTH + 5)
            .map_err(|e| format!("{} is not a saved state: {e}", path.display()))?;
    let port = |v: &Value| {
        v.get("port")
            .and_then(Value::as_u64)
            .and_then(|p| u16::try_from(p).ok())
    };
    // Stores are taken out of the document, not copied: they may be deep.
    let store = |v: &mut Value| v.get_mut("store").map(Value::take).unwrap_or(Value::Null);
    let hub = v
        .get_mut("hub")
        .ok_or_else(|| format!("{}: no hub", path.display()))?;
    let (hub_port, hub) = (port(hub), store(hub));
    let mut clusters = Vec::new();
    for (i, c) in v
        .get_mut("clusters")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{}: clusters[{i}] has no name", path.display()))?
            .to_string();
        clusters.push((name, port(c), store(c)));
    }
    ocm_api::k8s::json::drop_value(v);
    Ok(Some(Saved {
        hub_port,
        hub,
        clusters,
    }))
}

impl Drop for Saved {
    fn drop(&mut self) {
        ocm_api::k8s::json::dismantle(&mut self.hub);
        for (_, _, store) in &mut self.clusters {
            ocm_api::k8s::json::dismantle(store);
        }
    }
}

/// Everything `--state-dir` writes.
struct Persisted {
    hub: FakeCluster,
    hub_port: u16,
    clusters: Vec<(String, FakeCluster, Option<u16>)>,
}

impl Persisted {
    fn versions(&self) -> Vec<u64> {
        std::iter::once(self.hub.store().resource_version())
            .chain(
                self.clusters
                    .iter()
                    .map(|(_, c, _)| c.store().resource_version()),
            )
            .collect()
    }

    fn save(&self, dir: &Path) -> Result<(), String> {
        let state = json!({
            "hub": {"port": self.hub_port, "store": self.hub.store().snapshot()},
            "clusters": self.clusters.iter().map(|(name, c, port)| json!({
                "name": name, "port": port, "store": c.store().snapshot(),
            })).collect::<Vec<_>>(),
        });
        let path = state_file(dir);
        let tmp = path.with_extension("tmp");
        let text = serde_json::to_vec(&ocm_api::k8s::json::Deep(&state));
        ocm_api::k8s::json::drop_value(state);
        // The state holds every object, Secrets and tokens included: its owner's only.
        ocm_testkit::files::write_private(&tmp, text.map_err(|e| e.to_string())?)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

async fn serve(cluster: &FakeCluster, port: u16, what: &str) -> Result<LoopbackServer, String> {
    match cluster.serve_loopback_on(port).await {
        Ok(s) => Ok(s),
        Err(e) => Err(format!("cannot serve {what} on 127.0.0.1:{port}: {e}")),
    }
}

/// The ClusterClaim reporter of `name`'s registration agent, in this process: claims on the
/// cluster go to its ManagedCluster's status on the hub. Stops when the sender fires.
fn report_claims(
    fake: &FakeHub,
    name: &str,
    cluster: &FakeCluster,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let agent =
        ocm_work::registration::RegistrationAgent::new(fake.hub().client(), cluster.client(), name)
            .with_cluster_claims(true)
            .with_lease(false);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(agent.run(async move {
        let _ = rx.await;
    }));
    (tx, task)
}

async fn run(args: Args) -> Result<(), String> {
    let saved = match &args.state_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            read_state(dir)?
        }
        None => None,
    };
    let n = saved.as_ref().map_or(args.clusters, |s| s.clusters.len());
    if let Some(s) = &saved
        && args.clusters != 0
        && args.clusters != n
    {
        eprintln!(
            "ocm-fake-apiserver: {} holds {} clusters; --clusters {} is ignored",
            state_file(args.state_dir.as_deref().unwrap_or(Path::new("."))).display(),
            s.clusters.len(),
            args.clusters
        );
    }
    let builder = FakeCluster::builder().authentication(args.authentication);
    let fake =
        FakeHub::with_builder(builder, n).map_err(|e| format!("cannot build the fake hub: {e}"))?;
    if let Some(s) = &saved {
        fake.hub()
            .store()
            .restore(&s.hub)
            .map_err(|e| format!("cannot load the hub's saved objects: {e}"))?;
        for (name, _, snapshot) in &s.clusters {
            if let Some(cluster) = fake.cluster(name) {
                cluster
                    .store()
                    .restore(snapshot)
                    .map_err(|e| format!("cannot load {name}'s saved objects: {e}"))?;
            }
        }
        println!(
            "loaded the saved state of the hub and {} clusters",
            s.clusters.len()
        );
    }
    // After a restore too: the flag upgrades a saved hub's ManifestWorkReplicaSet CRD.
    if args.extended_crds {
        ocm_testkit::install_extended_crds(fake.hub())
            .map_err(|e| format!("cannot install the extended CRDs: {e}"))?;
    }
    let hub_port = match (args.port, saved.as_ref().and_then(|s| s.hub_port)) {
        (0, Some(p)) => p,
        (p, _) => p,
    };
    let mut hub = serve(fake.hub(), hub_port, "the hub").await?;
    hub.set_context_name(format!("{}hub", args.context_prefix));
    hub.write_kubeconfig(&args.kubeconfig)
        .map_err(|e| format!("cannot write {}: {e}", args.kubeconfig.display()))?;
    println!(
        "hub serving on {} (kubeconfig: {}, context {})",
        hub.url(),
        args.kubeconfig.display(),
        hub.context_name()
    );
    if let Some(dir) = &args.agent_kubeconfigs {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for name in fake.cluster_names() {
            let path = dir.join(format!("{name}-agent.kubeconfig"));
            hub.write_kubeconfig_as(&FakeHub::agent_user(&name), &path)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!(
                "agent of {name} authenticates to the hub with {}",
                path.display()
            );
        }
    }
    let mut servers = Vec::new();
    let mut simulators: Vec<WorkloadSimulator> = Vec::new();
    let mut claim_reporters = Vec::new();
    let mut ports: Vec<(String, FakeCluster, Option<u16>)> = Vec::new();
    if let Some(dir) = &args.cluster_kubeconfigs {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (name, cluster) in fake.clusters() {
            if saved.is_none() {
                ocm_testkit::install_crds(cluster)
                    .map_err(|e| format!("cannot install CRDs on {name}: {e}"))?;
            }
            simulators.push(cluster.simulate_workloads_with_pods());
            if !args.no_cluster_claims {
                claim_reporters.push(report_claims(&fake, name, cluster));
            }
            let port = saved
                .as_ref()
                .and_then(|s| s.clusters.iter().find(|(n, _, _)| n == name))
                .and_then(|(_, p, _)| *p)
                .unwrap_or(0);
            let mut server = serve(cluster, port, &format!("cluster {name}")).await?;
            server.set_context_name(format!("{}{name}", args.context_prefix));
            let path = dir.join(format!("{name}.kubeconfig"));
            server
                .write_kubeconfig(&path)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!(
                "managed cluster {name} serving on {} (kubeconfig: {}, context {})",
                server.url(),
                path.display(),
                server.context_name()
            );
            ports.push((
                name.to_string(),
                cluster.clone(),
                Some(server.addr().port()),
            ));
            servers.push(server);
        }
    } else {
        for (name, cluster) in fake.clusters() {
            println!("managed cluster {name} registered on the hub");
            ports.push((name.to_string(), cluster.clone(), None));
        }
    }
    let persisted = Arc::new(Persisted {
        hub: fake.hub().clone(),
        hub_port: hub.addr().port(),
        clusters: ports,
    });
    let saver = args.state_dir.clone().map(|dir| {
        let p = persisted.clone();
        tokio::spawn(async move {
            let mut last = Vec::new();
            loop {
                let now = p.versions();
                if now != last {
                    match p.save(&dir) {
                        Ok(()) => last = now,
                        Err(e) => eprintln!("ocm-fake-apiserver: {e}"),
                    }
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
    });
    println!("ready; press Ctrl-C to stop");
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| format!("cannot wait for Ctrl-C: {e}"))?;
    if let Some(task) = saver {
        task.abort();
    }
    if let Some(dir) = &args.state_dir {
        persisted.save(dir)?;
        println!("state saved in {}", state_file(dir).display());
    }
    for (stop, task) in claim_reporters {
        let _ = stop.send(());
        let _ = task.await;
    }
    drop(simulators);
    drop(servers);
    Ok(())
}
