//! `ocm-work-agent`: applies the ManifestWorks of one managed cluster.
//!
//! ```text
//! ocm-work-agent --hub-kubeconfig hub.kubeconfig --cluster-name cluster1   # in a pod
//! ocm-work-agent --hub-kubeconfig hub.kubeconfig --spoke-kubeconfig spoke.kubeconfig \
//!     --cluster-name cluster1 --namespace default --status-sync-interval 10s --feature-gates RawFeedbackJsonString=true
//! ```
//!
//! It watches the ManifestWorks in the hub namespace named after the cluster, applies them to
//! the managed cluster (`--spoke-kubeconfig`, default: KUBECONFIG or in-cluster), and writes
//! their status back to the hub. Flags and defaults follow upstream's agent.
//!
//! SIGTERM or SIGINT stops it gracefully: syncs under way finish, then the leader Lease is
//! released. Several replicas elect a leader with the Lease `work-agent-lock` (upstream's) on
//! the managed cluster, in `--namespace` (default: the pod's namespace). Outside a pod
//! `--namespace` is required, as upstream's agent requires it (`namespace may not be empty`),
//! so two replicas started the same way never both act; `--disable-leader-election` runs one
//! replica without a Lease.
//!
//! `--endpoints-address :8080` serves `/healthz`, `/readyz` (ready: a standby replica, or the
//! leader once its informers have listed and while the hub and the managed cluster answer
//! them within the resync period) and `/metrics` (Prometheus text; see
//! `ocm_work::runtime::metrics` for the series). `--log-format json` writes one JSON object
//! per line (the level from `RUST_LOG`); text logs have colours only on a terminal.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use ocm_examples::runtime::{
    EndpointArgs, LeaderElectionArgs, elector, parse_duration, run_elected,
};
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use ocm_work::runtime::health::{Health, leader_ready_with};
use ocm_work::runtime::leader::WORK_AGENT_LEASE;
use ocm_work::runtime::metrics::Metrics;
use ocm_work::runtime::shutdown::Shutdown;

/// Apply the hub's ManifestWorks for one managed cluster.
#[derive(Parser, Debug)]
#[command(name = "ocm-work-agent", version)]
struct Args {
    /// Kubeconfig of the hub.
    #[arg(long, value_name = "FILE")]
    hub_kubeconfig: PathBuf,

    /// Kubeconfig of the managed cluster (default: KUBECONFIG, ~/.kube/config or in-cluster).
    #[arg(long, value_name = "FILE")]
    spoke_kubeconfig: Option<PathBuf>,

    /// The managed cluster's name: the agent handles the works in this hub namespace.
    #[arg(long)]
    cluster_name: String,

    /// The agent id (default: the hub hash).
    #[arg(long, default_value = "")]
    agent_id: String,

    /// How often status and feedback are refreshed (Go duration syntax: 10s, 1m).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    status_sync_interval: Duration,

    /// How long an AppliedManifestWork whose ManifestWork is gone is kept before its resources
    /// are deleted (Go duration syntax).
    #[arg(long = "appliedmanifestwork-eviction-grace-period", default_value = "60m", value_parser = parse_duration)]
    eviction_grace_period: Duration,

    /// How many resources may have their feedback watched (`feedbackScrapeType: Watch`);
    /// beyond it their feedback is polled.
    #[arg(long, default_value_t = 50)]
    max_feedback_watch: usize,

    /// Read applied resources with a GET per manifest, as upstream's agent does, instead of
    /// from informers on the managed cluster.
    #[arg(long)]
    no_cached_reads: bool,

    /// Feature gates, `Name=true|false,...` (RawFeedbackJsonString, ExecutorValidatingCaches).
    #[arg(long, default_value = "")]
    feature_gates: String,

    /// Install (server-side apply) the AppliedManifestWork CRD on the managed cluster first.
    #[arg(long)]
    install_crds: bool,

    /// Also run the registration agent's ClusterClaim reporter: the managed cluster's
    /// ClusterClaims appear in `ManagedCluster.status.clusterClaims` on the hub.
    #[arg(long)]
    cluster_claims: bool,

    /// With `--cluster-claims`: how many non-reserved claims are reported.
    #[arg(long, default_value_t = 20)]
    max_custom_cluster_claims: usize,

    /// Also renew the cluster lease on the hub and report the cluster's availability, as
    /// upstream's registration agent does (the hub marks a cluster whose lease is not renewed
    /// `Available=Unknown`).
    #[arg(long)]
    cluster_lease: bool,

    #[command(flatten)]
    election: LeaderElectionArgs,

    #[command(flatten)]
    endpoints: EndpointArgs,

    #[command(flatten)]
    logs: ocm_examples::logging::LogArgs,
}

fn parse_gates(text: &str) -> Result<Vec<(String, bool)>, String> {
    text.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|pair| {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("feature gate {pair:?} is not Name=true|false"))?;
            let value = value
                .trim()
                .parse::<bool>()
                .map_err(|_| format!("feature gate {name}: {value:?} is not true or false"))?;
            let known = [
                ocm_api::constants::feature_gates::RAW_FEEDBACK_JSON_STRING,
                ocm_api::constants::feature_gates::EXECUTOR_VALIDATING_CACHES,
            ];
            if !known.contains(&name.trim()) {
                return Err(format!(
                    "unknown feature gate {name:?} (known: {})",
                    known.join(", ")
                ));
            }
            Ok((name.trim().to_string(), value))
        })
        .collect()
}

async fn config_from(path: Option<&PathBuf>) -> Result<(Config, String), String> {
    match path {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .map_err(|e| format!("cannot read kubeconfig {}: {e}", path.display()))?;
            let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| format!("invalid kubeconfig {}: {e}", path.display()))?;
            let host = config.cluster_url.to_string();
            Ok((config, host))
        }
        None => {
            let config = Config::infer()
                .await
                .map_err(|e| format!("no spoke kubeconfig given and none found: {e}"))?;
            let host = config.cluster_url.to_string();
            Ok((config, host))
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    args.logs.init();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ocm-work-agent: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let gates = parse_gates(&args.feature_gates)?;
    let (hub_config, hub_host) = config_from(Some(&args.hub_kubeconfig)).await?;
    let (spoke_config, _) = config_from(args.spoke_kubeconfig.as_ref()).await?;
    // Upstream hashes the host exactly as written in the kubeconfig; kube normalises the URL
    // with a trailing slash, which is trimmed here.
    let hash = hub_hash(hub_host.trim_end_matches('/'));
    let hub =
        Client::try_from(hub_config).map_err(|e| format!("cannot build the hub client: {e}"))?;
    let spoke = Client::try_from(spoke_config)
        .map_err(|e| format!("cannot build the spoke client: {e}"))?;
    if args.install_crds {
        let api: Api<CustomResourceDefinition> = Api::all(spoke.clone());
        for crd in ocm_api::crds()
            .into_iter()
            .filter(|c| c.spec.names.kind == "AppliedManifestWork")
        {
            let name = crd.metadata.name.clone().unwrap_or_default();
            api.patch(
                &name,
                &PatchParams::apply("ocm-work-agent").force(),
                &Patch::Apply(&crd),
            )
            .await
            .map_err(|e| format!("cannot install CRD {name}: {e}"))?;
        }
    }
    let gate = |name: &str| gates.iter().any(|(n, v)| n == name && *v);
    let raw_json = gate(ocm_api::constants::feature_gates::RAW_FEEDBACK_JSON_STRING);
    let executor_caches = gate(ocm_api::constants::feature_gates::EXECUTOR_VALIDATING_CACHES);
    let config = AgentConfig::new(&args.cluster_name, hash.clone())
        .agent_id(&args.agent_id)
        .status_sync_interval(args.status_sync_interval)
        .raw_feedback_json_string(raw_json)
        .executor_validating_caches(executor_caches)
        .max_feedback_watch(args.max_feedback_watch)
        .cached_reads(!args.no_cached_reads)
        .eviction_grace_period(args.eviction_grace_period);
    let election = args.election.config(WORK_AGENT_LEASE)?;
    // The Lease is on the managed cluster, where the agent runs (as upstream's).
    let elector = elector(&spoke, election);
    tracing::info!(cluster = %args.cluster_name, hub_hash = %hash, leader_election = elector.is_some(), "work agent started");
    let metrics = Metrics::new();
    let (agent_hub, agent_spoke) = (hub.clone(), spoke.clone());
    let agent = WorkAgent::new(hub, spoke, config).with_metrics(metrics.agent());
    let health = Health::new();
    let synced = agent.clone();
    health.readiness_check(
        "informers",
        leader_ready_with(elector.as_ref().map(|e| e.state()), move || {
            synced.readiness()
        }),
    );
    if let Some(elector) = &elector {
        metrics.leader(WORK_AGENT_LEASE, elector.state());
    }
    let shutdown = Shutdown::on_signals();
    let registration = (args.cluster_claims || args.cluster_lease).then(|| {
        let registration = ocm_work::registration::RegistrationAgent::new(
            agent_hub.clone(),
            agent_spoke.clone(),
            &args.cluster_name,
        )
        .with_cluster_claims(args.cluster_claims)
        .with_max_custom_claims(args.max_custom_cluster_claims)
        .with_lease(args.cluster_lease);
        tokio::spawn(registration.run(shutdown.cancelled()))
    });
    // The endpoints stop after the agent (and the Lease release): probes answer meanwhile.
    let endpoints_stop = Shutdown::new();
    let endpoints = args
        .endpoints
        .serve(health, metrics, &endpoints_stop)
        .await?;
    let result = run_elected(elector.as_ref(), &shutdown, |leading| {
        agent.run(leading.cancelled())
    })
    .await;
    if let Some(task) = registration {
        let _ = task.await;
    }
    endpoints_stop.cancel();
    if let Some(task) = endpoints {
        let _ = task.await;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_gates_parse() {
        assert_eq!(parse_gates("").unwrap(), vec![]);
        assert_eq!(
            parse_gates("RawFeedbackJsonString=true").unwrap(),
            vec![("RawFeedbackJsonString".to_string(), true)]
        );
        assert!(
            parse_gates("Nope=true")
                .unwrap_err()
                .contains("unknown feature gate")
        );
        assert!(
            parse_gates("RawFeedbackJsonString")
                .unwrap_err()
                .contains("Name=true|false")
        );
        assert!(
            parse_gates("RawFeedbackJsonString=maybe")
                .unwrap_err()
                .contains("not true or false")
        );
    }
}
