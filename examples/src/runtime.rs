//! Process plumbing shared by `ocm-work-agent` and `ocm-hub-controller`: leader election
//! flags named as upstream's agents name them, running the controllers under the election,
//! and the health and metrics endpoints (logs: [`crate::logging`]).

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use kube::Client;
use ocm_work::runtime::health::Health;
use ocm_work::runtime::leader::{
    DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD, LeaderElectionConfig,
    LeaderElector, Outcome, lease_namespace, pod_namespace,
};
use ocm_work::runtime::metrics::Metrics;
use ocm_work::runtime::server::EndpointServer;
use ocm_work::runtime::shutdown::Shutdown;

/// Parses a Go duration (`10s`, `1m30s`), as upstream's flags take them.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    ocm_api::cluster::v1alpha1::duration::parse_go_duration(s).map_err(|e| e.to_string())
}

/// Leader election flags (upstream's names and defaults).
#[derive(clap::Args, Clone, Debug)]
pub struct LeaderElectionArgs {
    /// Disable leader election: this replica always acts.
    #[arg(long)]
    pub disable_leader_election: bool,

    /// How long standby replicas wait after the last renewal they saw before taking the
    /// leadership of a leader that stopped renewing.
    #[arg(long, default_value = "137s", value_parser = parse_duration)]
    pub leader_election_lease_duration: Duration,

    /// How long the leader keeps trying to renew before it stops leading (less than the
    /// lease duration).
    #[arg(long, default_value = "107s", value_parser = parse_duration)]
    pub leader_election_renew_deadline: Duration,

    /// How often standby replicas try to acquire and the leader renews.
    #[arg(long, default_value = "26s", value_parser = parse_duration)]
    pub leader_election_retry_period: Duration,

    /// Namespace of the leader election Lease (default: the pod's namespace, from its service
    /// account). Outside a pod it is required, as upstream's binaries require it: every
    /// replica started with the same namespace shares one Lease, and only its holder acts.
    /// Without it (and without --disable-leader-election) the process refuses to start.
    #[arg(long)]
    pub namespace: Option<String>,
}

impl Default for LeaderElectionArgs {
    fn default() -> Self {
        Self {
            disable_leader_election: false,
            leader_election_lease_duration: DEFAULT_LEASE_DURATION,
            leader_election_renew_deadline: DEFAULT_RENEW_DEADLINE,
            leader_election_retry_period: DEFAULT_RETRY_PERIOD,
            namespace: None,
        }
    }
}

impl LeaderElectionArgs {
    /// The election settings for the Lease `lease`, or `None` when leader election is off
    /// (`--disable-leader-election`). The Lease's namespace is `--namespace` or, in a pod, the
    /// pod's; outside a pod without `--namespace` this is an error
    /// ([`ocm_work::runtime::leader::NO_LEASE_NAMESPACE`]), as it is for upstream's binaries:
    /// election is never turned off behind the user's back.
    pub fn config(&self, lease: &str) -> Result<Option<LeaderElectionConfig>, String> {
        self.config_in(lease, pod_namespace())
    }

    /// [`config`](Self::config) with `pod` as the pod's namespace (`None`: not in a pod).
    pub fn config_in(
        &self,
        lease: &str,
        pod: Option<String>,
    ) -> Result<Option<LeaderElectionConfig>, String> {
        if self.disable_leader_election {
            tracing::info!("leader election disabled (--disable-leader-election)");
            return Ok(None);
        }
        let namespace =
            lease_namespace(self.namespace.as_deref(), pod).map_err(|e| e.to_string())?;
        let config = LeaderElectionConfig::new(namespace, lease).durations(
            self.leader_election_lease_duration,
            self.leader_election_renew_deadline,
            self.leader_election_retry_period,
        );
        config.validate()?;
        Ok(Some(config))
    }
}

/// Runs `lead` under `elector` (or at once without one) until `shutdown`; an error when the
/// leadership was lost (the process should exit non-zero and be restarted, as upstream's).
pub async fn run_elected<F, Fut>(
    elector: Option<&LeaderElector>,
    shutdown: &Shutdown,
    lead: F,
) -> Result<(), String>
where
    F: FnOnce(Shutdown) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(elector) = elector else {
        lead(shutdown.clone()).await;
        return Ok(());
    };
    match elector
        .run(shutdown, lead)
        .await
        .map_err(|e| e.to_string())?
    {
        Outcome::Lost => Err("leadership lost".into()),
        _ => Ok(()),
    }
}

/// A leader elector on `client`'s cluster for `config`.
pub fn elector(client: &Client, config: Option<LeaderElectionConfig>) -> Option<LeaderElector> {
    config.map(|config| LeaderElector::new(client.clone(), config))
}

/// The health and metrics endpoints' flag.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct EndpointArgs {
    /// Serve `/healthz`, `/readyz` and `/metrics` on this address (`:8080`, `0.0.0.0:8080`,
    /// `127.0.0.1:9090`). Off when empty (the default; the deployment manifests set it).
    #[arg(long, default_value = "")]
    pub endpoints_address: String,
}

impl EndpointArgs {
    /// The address to serve on, `None` when off.
    pub fn address(&self) -> Result<Option<SocketAddr>, String> {
        parse_address(&self.endpoints_address)
    }

    /// Binds the endpoints (when on) and serves them until `shutdown`.
    pub async fn serve(
        &self,
        health: Health,
        metrics: Metrics,
        shutdown: &Shutdown,
    ) -> Result<Option<tokio::task::JoinHandle<()>>, String> {
        let Some(address) = self.address()? else {
            return Ok(None);
        };
        let server = EndpointServer::bind(address, health, metrics)
            .await
            .map_err(|e| e.to_string())?;
        let bound = server.local_addr().map_err(|e| e.to_string())?;
        tracing::info!(address = %bound, "serving /healthz, /readyz and /metrics");
        Ok(Some(tokio::spawn(server.run(shutdown.cancelled()))))
    }
}

/// Parses `:port` (all interfaces, as Go's flags take it), `host:port`, or empty (off).
pub fn parse_address(text: &str) -> Result<Option<SocketAddr>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let full = if text.starts_with(':') {
        format!("0.0.0.0{text}")
    } else {
        text.to_string()
    };
    full.parse()
        .map(Some)
        .map_err(|_| format!("--endpoints-address {text:?} is not host:port or :port"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        election: LeaderElectionArgs,
    }

    #[test]
    fn flags_are_upstreams() {
        let cli = Cli::parse_from(["x", "--namespace", "ns"]);
        assert_eq!(
            cli.election.leader_election_lease_duration,
            Duration::from_secs(137)
        );
        assert_eq!(
            cli.election.leader_election_renew_deadline,
            Duration::from_secs(107)
        );
        assert_eq!(
            cli.election.leader_election_retry_period,
            Duration::from_secs(26)
        );
        let config = cli.election.config("work-agent-lock").unwrap().unwrap();
        assert_eq!(config.namespace, "ns");
        assert_eq!(config.name, "work-agent-lock");

        let cli = Cli::parse_from([
            "x",
            "--namespace",
            "ns",
            "--leader-election-lease-duration",
            "15s",
            "--leader-election-renew-deadline",
            "10s",
            "--leader-election-retry-period",
            "2s",
        ]);
        let config = cli.election.config("l").unwrap().unwrap();
        assert_eq!(config.lease_duration, Duration::from_secs(15));
        assert_eq!(config.renew_deadline, Duration::from_secs(10));
        assert_eq!(config.retry_period, Duration::from_secs(2));

        let cli = Cli::parse_from(["x", "--disable-leader-election", "--namespace", "ns"]);
        assert_eq!(cli.election.config("l").unwrap(), None);

        let cli = Cli::parse_from([
            "x",
            "--namespace",
            "ns",
            "--leader-election-renew-deadline",
            "200s",
        ]);
        assert!(
            cli.election
                .config("l")
                .unwrap_err()
                .contains("renew deadline")
        );
    }

    /// Upstream's rule for the Lease namespace: the flag, else the pod's; neither is an error,
    /// never election quietly turned off (two replicas started alike would both act).
    #[test]
    fn the_lease_namespace_is_the_flag_or_the_pods_and_never_missing() {
        let pod = || Some("pod-ns".to_string());
        let cli = Cli::parse_from(["x"]);
        let config = cli.election.config_in("l", pod()).unwrap().unwrap();
        assert_eq!(config.namespace, "pod-ns");
        let cli = Cli::parse_from(["x", "--namespace", "ops"]);
        let config = cli.election.config_in("l", pod()).unwrap().unwrap();
        assert_eq!(config.namespace, "ops");
        // Outside a pod without --namespace: refused, naming both ways out.
        for args in [vec!["x"], vec!["x", "--namespace", ""]] {
            let cli = Cli::parse_from(args);
            let error = cli.election.config_in("l", None).unwrap_err();
            assert!(error.contains("namespace may not be empty"), "{error}");
            assert!(error.contains("--namespace <namespace>"), "{error}");
            assert!(error.contains("--disable-leader-election"), "{error}");
        }
        // Turning election off takes the flag, in a pod or not.
        let cli = Cli::parse_from(["x", "--disable-leader-election"]);
        assert_eq!(cli.election.config_in("l", None).unwrap(), None);
        assert_eq!(cli.election.config_in("l", pod()).unwrap(), None);
    }
}
