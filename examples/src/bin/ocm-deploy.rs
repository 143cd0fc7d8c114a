//! `ocm-deploy`: prints the Kubernetes manifests that deploy `ocm-work-agent` on a managed
//! cluster or `ocm-hub-controller` on a hub (see `ocm_examples::deploy` for what they hold
//! and why each permission is there).
//!
//! ```text
//! ocm-deploy agent --cluster-name cluster1 --image registry.example/ocm-rs:v0.1 | kubectl apply -f -
//! ocm-deploy hub --image registry.example/ocm-rs:v0.1 --replicas 2 | kubectl apply -f -
//! ```
//!
//! The agent's Deployment mounts its hub kubeconfig from the Secret `hub-kubeconfig-secret`
//! (key `kubeconfig`) in its namespace, as upstream's klusterlet does; create it from the
//! kubeconfig registration gave the cluster.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use ocm_examples::deploy::{AgentOptions, DEFAULT_IMAGE, HubOptions};

/// Print the manifests (Namespace, CRDs, ServiceAccount, RBAC, Deployment) of ocm-work-agent or ocm-hub-controller.
#[derive(Parser, Debug)]
#[command(name = "ocm-deploy", version)]
struct Args {
    #[command(subcommand)]
    component: Component,
}

#[derive(Subcommand, Debug)]
enum Component {
    /// The work agent, for a managed cluster.
    Agent {
        /// The managed cluster's name on the hub.
        #[arg(long)]
        cluster_name: String,
        /// The agent's namespace.
        #[arg(long, default_value = "open-cluster-management-agent")]
        namespace: String,
        #[command(flatten)]
        common: Common,
    },
    /// The hub controllers (Placement, cluster inventory, ManifestWorkReplicaSet).
    Hub {
        /// The controller's namespace.
        #[arg(long, default_value = "open-cluster-management-hub")]
        namespace: String,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(clap::Args, Debug)]
struct Common {
    /// Container image with the binaries in /usr/local/bin (built from the Containerfile).
    #[arg(long, default_value = DEFAULT_IMAGE)]
    image: String,
    /// Replicas (more than one elect a leader with a Lease).
    #[arg(long, default_value_t = 1)]
    replicas: u32,
    /// Leave the CRDs out.
    #[arg(long)]
    no_crds: bool,
}

fn main() -> ExitCode {
    let objects = match Args::parse().component {
        Component::Agent {
            cluster_name,
            namespace,
            common,
        } => {
            let mut options = AgentOptions::new(cluster_name);
            options.namespace = namespace;
            options.image = common.image;
            options.replicas = common.replicas;
            options.crds = !common.no_crds;
            ocm_examples::deploy::agent_manifests(&options)
        }
        Component::Hub { namespace, common } => {
            let mut options = HubOptions::default();
            options.namespace = namespace;
            options.image = common.image;
            options.replicas = common.replicas;
            options.crds = !common.no_crds;
            ocm_examples::deploy::hub_manifests(&options)
        }
    };
    match ocm_examples::deploy::to_yaml(&objects) {
        Ok(yaml) => {
            ocm_examples::output::write_out(&yaml);
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("ocm-deploy: {message}");
            ExitCode::FAILURE
        }
    }
}
