//! Leader election with a `coordination.k8s.io/v1` Lease, as upstream's agents and hub
//! controllers do it (client-go's leader election through openshift/library-go).
//!
//! Run several replicas of a binary; [`LeaderElector::run`] lets exactly one of them run its
//! controllers at a time:
//!
//! 1. every replica is a candidate: it reads the Lease every `retryPeriod` (jittered) and takes
//!    it when it is free: absent, released, or not renewed by its holder for `leaseDuration`
//!    (see [`record`] for the exact rules, which match client-go's so our replicas and Go ones
//!    can share a Lease, and why clock skew between nodes does not matter);
//! 2. the leader runs its controllers and renews the Lease every `retryPeriod`; when renewals
//!    keep failing for `renewDeadline` it stops its controllers (syncs under way finish) and
//!    [`LeaderElector::run`] returns [`Outcome::Lost`] (upstream's process exits then; our
//!    binaries exit with an error so that Kubernetes restarts them as candidates);
//! 3. on shutdown the leader stops its controllers, keeps renewing until they have finished,
//!    then releases the Lease (no holder, one-second duration), so a standby replica takes over
//!    at once instead of after `leaseDuration`.
//!
//! A leader that dies without releasing (killed, node lost) is replaced once a candidate has
//! seen its Lease unchanged for `leaseDuration`. Because a leader stops acting after
//! `renewDeadline` without a successful renewal and a candidate waits at least
//! `leaseDuration` (longer), two replicas never act at once as long as the controllers stop
//! within `leaseDuration - renewDeadline` (30 s with upstream's defaults) and the API server
//! is reachable from the node that decides.
//!
//! Upstream's defaults and flags ([`DEFAULT_LEASE_DURATION`] 137 s,
//! [`DEFAULT_RENEW_DEADLINE`] 107 s, [`DEFAULT_RETRY_PERIOD`] 26 s;
//! `--leader-election-lease-duration`, `--leader-election-renew-deadline`,
//! `--leader-election-retry-period`, `--disable-leader-election`) and Lease names
//! (`<component>-lock`: [`WORK_AGENT_LEASE`]) are kept.
//!
//! # Where the Lease lives
//!
//! [`lease_namespace`] picks the namespace as upstream's binaries do (openshift/library-go's
//! controller command): `--namespace` when given, else the pod's own namespace, read from its
//! service account. Outside a pod and without `--namespace` there is no namespace, and upstream
//! refuses to start (`namespace may not be empty`); so do our binaries, with a message that
//! names both ways out. Election is never switched off silently: two replicas started the
//! same way either share one Lease or do not start, and running without election takes
//! `--disable-leader-election`.
//!
//! # Why a module of our own
//!
//! `kube-lease-manager` 0.13 builds on kube 5, but its model (a duration and a grace period,
//! expiry judged from the holder's `renewTime` against the local clock, server-side apply
//! under its own field manager) maps onto neither upstream's three settings nor client-go's
//! skew-free observation rule; `kube-leader-election` is still on kube 4. Sharing a Lease with
//! upstream's Go agents, and upstream's flags, need client-go's algorithm, which is small:
//! [`record`] (pure, unit-tested) and this loop.
//!
//! ```no_run
//! # async fn demo(client: kube::Client, agent: ocm_work::agent::WorkAgent) -> ocm_work::Result<()> {
//! use ocm_work::runtime::leader::{LeaderElectionConfig, LeaderElector, Outcome, WORK_AGENT_LEASE};
//! use ocm_work::runtime::shutdown::Shutdown;
//!
//! let shutdown = Shutdown::on_signals();
//! let config = LeaderElectionConfig::new("open-cluster-management-agent", WORK_AGENT_LEASE);
//! let elector = LeaderElector::new(client, config);
//! match elector.run(&shutdown, |leading| agent.run(leading.cancelled())).await? {
//!     Outcome::Lost => std::process::exit(1), // restart as a candidate
//!     _ => {}
//! }
//! # Ok(())
//! # }
//! ```

pub mod record;

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, PostParams};
use tokio::sync::watch;

use crate::runtime::shutdown::Shutdown;
use crate::{Error, Result};
use record::{Decision, Observed};

/// Upstream's `--leader-election-lease-duration` default.
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(137);
/// Upstream's `--leader-election-renew-deadline` default.
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(107);
/// Upstream's `--leader-election-retry-period` default.
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(26);

/// The Lease of upstream's work agent (`work-agent` + `-lock`), which ours uses too: a Go
/// agent and ours on the same cluster and namespace never act at once.
pub const WORK_AGENT_LEASE: &str = "work-agent-lock";

/// The Lease of `ocm-hub-controller` (our own component; upstream runs the placement and
/// work hub controllers as `placement-lock` and `work-manager-lock`).
pub const HUB_CONTROLLER_LEASE: &str = "ocm-hub-controller-lock";

/// Where a pod finds its namespace (the default namespace of the Lease, as upstream's).
pub const SERVICE_ACCOUNT_NAMESPACE_FILE: &str =
    "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// The namespace this process runs in, from its service account (None outside a pod).
pub fn pod_namespace() -> Option<String> {
    std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE_FILE)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Why [`lease_namespace`] found no namespace (upstream's words first).
pub const NO_LEASE_NAMESPACE: &str = "leader election: namespace may not be empty: this \
    process runs outside a pod (no service account namespace) and no --namespace was given; \
    pass --namespace <namespace> (the same on every replica) to elect a leader with a Lease in \
    that namespace, or --disable-leader-election to run this replica alone";

/// The namespace of the leader election Lease, as upstream's binaries choose it: `flag` (the
/// `--namespace` flag) when it is given and not empty, else `pod` (the pod's namespace, see
/// [`pod_namespace`]). Neither is an error ([`NO_LEASE_NAMESPACE`]): upstream's binaries refuse
/// to start then, rather than run without election.
///
/// ```
/// use ocm_work::runtime::leader::lease_namespace;
/// assert_eq!(lease_namespace(Some("ops"), Some("pod-ns".into())).unwrap(), "ops");
/// assert_eq!(lease_namespace(None, Some("pod-ns".into())).unwrap(), "pod-ns");
/// assert!(lease_namespace(Some(""), None).unwrap_err().to_string().contains("--namespace"));
/// ```
pub fn lease_namespace(flag: Option<&str>, pod: Option<String>) -> Result<String> {
    flag.filter(|n| !n.is_empty())
        .map(str::to_string)
        .or(pod)
        .ok_or_else(|| Error::Config(NO_LEASE_NAMESPACE.to_string()))
}

/// A holder identity unique to this process: `<hostname>_<random>` (library-go's form).
pub fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}_{:016x}", random_u64())
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(Instant::now().elapsed().as_nanos());
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// `d` plus up to `factor` times `d` at random (client-go's `wait.Jitter`).
fn jitter(d: Duration, factor: f64) -> Duration {
    let fraction = (random_u64() % 10_000) as f64 / 10_000.0;
    d + d.mul_f64(factor * fraction)
}

/// Leader election settings.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaderElectionConfig {
    /// The Lease's namespace.
    pub namespace: String,
    /// The Lease's name.
    pub name: String,
    /// This replica's holder identity.
    pub identity: String,
    /// How long candidates wait after the last change they saw before taking the Lease.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops leading.
    pub renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews.
    pub retry_period: Duration,
}

impl LeaderElectionConfig {
    /// The Lease `namespace`/`name` with upstream's durations and a fresh identity.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
            identity: default_identity(),
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
        }
    }

    /// Uses `identity` as the holder identity.
    #[must_use]
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = identity.into();
        self
    }

    /// Sets the three durations.
    #[must_use]
    pub fn durations(
        mut self,
        lease_duration: Duration,
        renew_deadline: Duration,
        retry_period: Duration,
    ) -> Self {
        self.lease_duration = lease_duration;
        self.renew_deadline = renew_deadline;
        self.retry_period = retry_period;
        self
    }

    /// Checks client-go's constraints: lease duration > renew deadline > 1.2 × retry period
    /// > 0, and a namespace, name and identity.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.namespace.is_empty() {
            return Err("leader election: the Lease namespace is empty (set --namespace)".into());
        }
        if self.name.is_empty() || self.identity.is_empty() {
            return Err(
                "leader election: the Lease name and the identity must not be empty".into(),
            );
        }
        if self.retry_period.is_zero() {
            return Err("leader election: the retry period must be positive".into());
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(format!(
                "leader election: the lease duration ({:?}) must be greater than the renew deadline ({:?})",
                self.lease_duration, self.renew_deadline
            ));
        }
        if self.renew_deadline <= self.retry_period.mul_f64(1.2) {
            return Err(format!(
                "leader election: the renew deadline ({:?}) must be greater than 1.2 × the retry period ({:?})",
                self.renew_deadline, self.retry_period
            ));
        }
        Ok(())
    }
}

/// Where a replica stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaderState {
    /// A candidate: another replica leads (or nobody yet).
    Standby,
    /// This replica leads: its controllers run.
    Leading,
    /// Election is over for this replica (shut down or leadership lost).
    Stopped,
}

/// How [`LeaderElector::run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Shut down; if this replica led, its controllers finished and the Lease was released.
    Released,
    /// The controllers returned by themselves; the Lease was released.
    Finished,
    /// Renewals failed for the renew deadline: the controllers were stopped. Exit (upstream
    /// does) or call `run` again to be a candidate.
    Lost,
}

/// Campaigns for a Lease and runs the leader's work while it holds it.
#[derive(Debug)]
pub struct LeaderElector {
    api: Api<Lease>,
    config: LeaderElectionConfig,
    state: watch::Sender<LeaderState>,
    observed: Mutex<Option<Observed>>,
}

impl LeaderElector {
    /// An elector for the Lease of `config` on `client`'s cluster.
    pub fn new(client: Client, config: LeaderElectionConfig) -> Self {
        Self {
            api: Api::namespaced(client, &config.namespace),
            config,
            state: watch::Sender::new(LeaderState::Standby),
            observed: Mutex::new(None),
        }
    }

    /// The settings.
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.config
    }

    /// Follows this replica's state (for readiness probes and metrics).
    pub fn state(&self) -> watch::Receiver<LeaderState> {
        self.state.subscribe()
    }

    /// Whether this replica leads now.
    pub fn is_leader(&self) -> bool {
        *self.state.borrow() == LeaderState::Leading
    }

    /// Campaigns until this replica leads (or `shutdown`), then runs `lead` with a signal
    /// that is cancelled on shutdown or when leadership is lost, renewing the Lease until
    /// `lead` returns. See the module docs for the protocol. Errors only for settings that
    /// fail [`LeaderElectionConfig::validate`]; API errors are logged and retried.
    pub async fn run<F, Fut>(&self, shutdown: &Shutdown, lead: F) -> Result<Outcome>
    where
        F: FnOnce(Shutdown) -> Fut,
        Fut: Future<Output = ()>,
    {
        self.config.validate().map_err(Error::Config)?;
        if !self.acquire(shutdown).await {
            self.state.send_replace(LeaderState::Stopped);
            return Ok(Outcome::Released);
        }
        tracing::info!(lease = %self.config.name, namespace = %self.config.namespace, identity = %self.config.identity, "leading");
        self.state.send_replace(LeaderState::Leading);
        let leading = shutdown.child();
        let work = lead(leading.clone());
        let renewing = self.keep_renewing();
        tokio::pin!(work);
        tokio::pin!(renewing);
        let outcome = tokio::select! {
            () = &mut work => {
                if shutdown.is_cancelled() { Outcome::Released } else { Outcome::Finished }
            }
            () = &mut renewing => {
                tracing::error!(lease = %self.config.name, renew_deadline = ?self.config.renew_deadline, "leadership lost: the Lease could not be renewed; stopping");
                leading.cancel();
                work.await;
                Outcome::Lost
            }
        };
        leading.cancel();
        if outcome != Outcome::Lost {
            self.release().await;
        }
        self.state.send_replace(LeaderState::Stopped);
        Ok(outcome)
    }

    /// Tries until this replica holds the Lease (true) or `shutdown` (false).
    async fn acquire(&self, shutdown: &Shutdown) -> bool {
        let mut last_holder = String::new();
        // The last error logged: a candidate that keeps failing the same way (a missing
        // namespace, a missing permission) says so once, not every retry period.
        let mut last_error = String::new();
        loop {
            if shutdown.is_cancelled() {
                return false;
            }
            match self.try_acquire_or_renew().await {
                Ok(Attempt::Holding) => return true,
                Ok(Attempt::HeldBy(holder)) => {
                    last_error.clear();
                    if holder != last_holder {
                        tracing::info!(lease = %self.config.name, %holder, "standing by: another replica leads");
                        last_holder = holder;
                    }
                }
                Ok(Attempt::Conflict) => {}
                Err(error) => {
                    let text = error.to_string();
                    if text == last_error {
                        tracing::debug!(%error, lease = %self.config.name, "cannot acquire the Lease (again)");
                    } else {
                        tracing::warn!(%error, lease = %self.config.name, "cannot acquire the Lease");
                        last_error = text;
                    }
                }
            }
            tokio::select! {
                () = tokio::time::sleep(jitter(self.config.retry_period, 1.2)) => {}
                () = shutdown.cancelled() => return false,
            }
        }
    }

    /// Renews every retry period; returns when renewals failed for the renew deadline.
    async fn keep_renewing(&self) {
        loop {
            tokio::time::sleep(self.config.retry_period).await;
            let deadline = Instant::now() + self.config.renew_deadline;
            loop {
                match self.try_acquire_or_renew().await {
                    Ok(Attempt::Holding) => break,
                    Ok(Attempt::HeldBy(holder)) => {
                        tracing::error!(lease = %self.config.name, %holder, "the Lease was taken by another replica");
                        return;
                    }
                    Ok(Attempt::Conflict) => {}
                    Err(error) => {
                        tracing::warn!(%error, lease = %self.config.name, "cannot renew the Lease")
                    }
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return;
                }
                tokio::time::sleep(self.config.retry_period.min(left)).await;
                if Instant::now() >= deadline {
                    return;
                }
            }
        }
    }

    fn observed(&self) -> std::sync::MutexGuard<'_, Option<Observed>> {
        self.observed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One read-decide-write round.
    async fn try_acquire_or_renew(&self) -> Result<Attempt> {
        let name = &self.config.name;
        let current =
            self.api.get_opt(name).await.map_err(|e| {
                Error::kube(format!("get Lease {}/{name}", self.config.namespace), e)
            })?;
        let now = Instant::now();
        let spec = current.as_ref().map(|l| l.spec.clone().unwrap_or_default());
        let decision = {
            let mut observed = self.observed();
            *observed = record::observe(observed.take(), spec.as_ref(), now);
            record::decide(
                &self.config.identity,
                observed.as_ref(),
                self.config.lease_duration,
                now,
                Timestamp::now(),
            )
        };
        let written = match decision {
            Decision::Held { holder, .. } => return Ok(Attempt::HeldBy(holder)),
            Decision::Create(spec) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(name.clone()),
                        namespace: Some(self.config.namespace.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(spec),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            Decision::Update(spec) => {
                let mut lease = current.unwrap_or_default();
                lease.spec = Some(spec);
                // The read resourceVersion makes a concurrent write by another replica fail.
                self.api.replace(name, &PostParams::default(), &lease).await
            }
        };
        match written {
            Ok(lease) => {
                *self.observed() = Some(Observed {
                    spec: lease.spec.unwrap_or_default(),
                    at: Instant::now(),
                });
                Ok(Attempt::Holding)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(Attempt::Conflict),
            Err(e) => Err(Error::kube(
                format!("write Lease {}/{name}", self.config.namespace),
                e,
            )),
        }
    }

    /// Gives the Lease up if this replica still holds it (best effort: a failure only makes
    /// the next leader wait for the lease duration).
    async fn release(&self) {
        let name = &self.config.name;
        let Ok(Some(mut lease)) = self.api.get_opt(name).await else {
            return;
        };
        let spec = lease.spec.clone().unwrap_or_default();
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return;
        }
        lease.spec = Some(record::released(&spec, Timestamp::now()));
        match self.api.replace(name, &PostParams::default(), &lease).await {
            Ok(_) => tracing::info!(lease = %name, "released the Lease"),
            Err(error) => tracing::warn!(
                error = %crate::api_errors::describe(&error),
                lease = %name,
                "cannot release the Lease"
            ),
        }
    }
}

/// What one round found.
enum Attempt {
    /// This replica holds the Lease (created, renewed or taken).
    Holding,
    /// Another replica holds a valid Lease.
    HeldBy(String),
    /// Another replica wrote the Lease at the same time.
    Conflict,
}
