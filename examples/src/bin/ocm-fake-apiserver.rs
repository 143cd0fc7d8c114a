//! `ocm-fake-apiserver`: a fake OCM hub (and, optionally, fake managed clusters) on
//! 127.0.0.1, for kubectl, controllers in any language, or the example binaries.
//!
//! ```text
//! ocm-fake-apiserver --kubeconfig hub.kubeconfig
//! ocm-fake-apiserver --kubeconfig hub.kubeconfig --clusters 3 --cluster-kubeconfigs spokes/
//! kubectl --kubeconfig hub.kubeconfig get managedclusters
//! ```
//!
//! The hub has every OCM CRD installed, the `default` and `global` ManagedClusterSets, and
//! `--clusters` registered, available ManagedClusters (`cluster1`, `cluster2`, …), each with its
//! namespace. With `--cluster-kubeconfigs DIR` every managed cluster is served too (its own
//! fake API server with workload simulators, so Deployments and Jobs report progress) and
//! `DIR/<cluster>.kubeconfig` is written. Everything lives in memory until the process stops
//! (Ctrl-C). Only loopback addresses are served.
//!
//! With `--authentication` the hub checks bearer tokens and RBAC as kube-apiserver does:
//! `--agent-kubeconfigs DIR` writes `DIR/<cluster>-agent.kubeconfig` for each managed
//! cluster's agent, which may read and update ManifestWorks in its own cluster namespace
//! only, as upstream's hub RBAC allows.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use ocm_testkit::{FakeHub, LoopbackServer, WorkloadSimulator};

/// Serve a fake OCM hub and managed clusters on 127.0.0.1.
#[derive(Parser, Debug)]
#[command(name = "ocm-fake-apiserver", version)]
struct Args {
    /// Where to write the hub's kubeconfig.
    #[arg(long, value_name = "FILE", default_value = "hub.kubeconfig")]
    kubeconfig: PathBuf,

    /// Port of the hub on 127.0.0.1 (0 picks a free port).
    #[arg(long, default_value_t = 0)]
    port: u16,

    /// Number of registered managed clusters.
    #[arg(long, default_value_t = 0)]
    clusters: usize,

    /// Also serve every managed cluster and write `<cluster>.kubeconfig` files here.
    #[arg(long, value_name = "DIR")]
    cluster_kubeconfigs: Option<PathBuf>,

    /// Authenticate hub requests by bearer token and authorize them with RBAC, as
    /// kube-apiserver does (the hub kubeconfig is the cluster administrator's). Each managed
    /// cluster's agent gets its upstream identity and hub RBAC (ManifestWorks in its own
    /// namespace only).
    #[arg(long)]
    authentication: bool,

    /// With `--authentication`: write each agent's hub kubeconfig here, as
    /// `<cluster>-agent.kubeconfig`.
    #[arg(long, value_name = "DIR", requires = "authentication")]
    agent_kubeconfigs: Option<PathBuf>,
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

async fn run(args: Args) -> Result<(), String> {
    let builder = ocm_testkit::FakeCluster::builder().authentication(args.authentication);
    let fake = FakeHub::with_builder(builder, args.clusters)
        .map_err(|e| format!("cannot build the fake hub: {e}"))?;
    let hub: LoopbackServer = fake
        .hub()
        .serve_loopback_on(args.port)
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", args.port))?;
    hub.write_kubeconfig(&args.kubeconfig)
        .map_err(|e| format!("cannot write {}: {e}", args.kubeconfig.display()))?;
    println!(
        "hub serving on {} (kubeconfig: {})",
        hub.url(),
        args.kubeconfig.display()
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
    if let Some(dir) = &args.cluster_kubeconfigs {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (name, cluster) in fake.clusters() {
            ocm_testkit::install_crds(cluster)
                .map_err(|e| format!("cannot install CRDs on {name}: {e}"))?;
            simulators.push(cluster.simulate_workloads());
            let server = cluster
                .serve_loopback()
                .await
                .map_err(|e| format!("cannot serve cluster {name}: {e}"))?;
            let path = dir.join(format!("{name}.kubeconfig"));
            server
                .write_kubeconfig(&path)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!(
                "managed cluster {name} serving on {} (kubeconfig: {})",
                server.url(),
                path.display()
            );
            servers.push(server);
        }
    } else {
        for name in fake.cluster_names() {
            println!("managed cluster {name} registered on the hub");
        }
    }
    println!("ready; press Ctrl-C to stop");
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| format!("cannot wait for Ctrl-C: {e}"))?;
    drop(simulators);
    drop(servers);
    Ok(())
}
