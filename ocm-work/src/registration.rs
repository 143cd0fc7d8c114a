//! The parts of upstream's registration agent that run beside the work agent on a managed
//! cluster, opt-in: the cluster lease, the cluster's availability, and ClusterClaims.
//!
//! Upstream splits a klusterlet into a registration agent (joins the hub, renews the cluster
//! lease, reports health and ClusterClaims) and a work agent. This module is the
//! registration agent for clusters that already joined (certificates and the join handshake
//! are not emulated):
//!
//! * **lease**: while the hub's `ManagedCluster` has `HubAcceptedManagedCluster=True`, the
//!   `coordination.k8s.io/v1` Lease `managed-cluster-lease` in the cluster namespace on the
//!   hub gets `spec.renewTime = now` every `spec.leaseDurationSeconds` (60 s when 0), as
//!   upstream's lease controller does (without its ±25 % jitter). The hub creates the lease
//!   (`ocm_placement::inventory::lease::ClusterLeaseController`) and marks the cluster
//!   `Available=Unknown` when it is not renewed for 5 lease durations;
//! * **availability**: on every renewal the managed cluster's `/livez` (then `/healthz` when
//!   that is 404 or 403) is probed and `ManagedClusterConditionAvailable` set to `True`
//!   (`ManagedClusterAvailable`, `Managed cluster is available`), or, once the probe has
//!   failed for 20 s, to `False` (`ManagedClusterKubeAPIServerUnavailable`, `The
//!   kube-apiserver is not ok, status code: <code>, <body>`), as upstream's status controller
//!   does;
//! * **ClusterClaims**: the spoke's `ClusterClaim`s are reported to
//!   `ManagedCluster.status.clusterClaims` (reserved claims first, at most 20 others, claims
//!   labelled `open-cluster-management.io/spoke-only` kept back), once the cluster has joined
//!   (`ManagedClusterJoined=True`), with [`ClusterClaimReporter`] (the list itself is
//!   [`cluster_claims_status`]).
//!
//! Every object is read as raw JSON and decoded on its own (see `crate::read`): a
//! ClusterClaim that does not decode (a field a newer release changed, say) is left out of the
//! report and logged at WARN once per resource version, and every other claim is reported; a
//! `ManagedCluster` that does not decode fails the round with an error naming the field.
//!
//! The agent's hub identity needs upstream's registration RBAC (the `ManagedCluster` and its
//! status, the lease in its namespace); `ocm_testkit::FakeHub` grants it.
//!
//! ```
//! use std::sync::Arc;
//! use ocm_api::clock::ManualClock;
//! use ocm_work::registration::RegistrationAgent;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let clock = Arc::new(ManualClock::new("2026-01-01T00:00:00Z".parse()?));
//! let fake = ocm_testkit::FakeHub::with_builder(
//!     ocm_testkit::FakeCluster::builder().clock(clock.clone()), 1)?;
//! let spoke = fake.cluster("cluster1").unwrap();
//! ocm_testkit::install_crds(spoke)?;
//! let agent = RegistrationAgent::new(fake.hub().client(), spoke.client(), "cluster1")
//!     .with_clock(clock.clone());
//! // No lease yet: the hub's lease controller creates it.
//! assert!(!agent.renew_lease().await?);
//! # Ok(())
//! # }
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::{ClusterClaim, cluster_claims_status};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::cluster::{self as c, DEFAULT_MAX_CUSTOM_CLAIMS};
use serde_json::json;

use crate::error::{Error, Result};
use crate::read::{self, Decoder};

const KIND_CLUSTER: &str = "ManagedCluster";

/// How long the managed cluster's API server may fail its health probe before the cluster is
/// reported unavailable (upstream's `failureThreshold`).
pub const HEALTH_FAILURE_THRESHOLD: Duration = Duration::from_secs(20);

fn kube_error(action: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let action = action.into();
    move |source| Error::Kube { action, source }
}

/// The registration side of a managed cluster's agent (see the [module](self) docs).
#[derive(Clone)]
pub struct RegistrationAgent {
    hub: Client,
    spoke: Client,
    cluster_name: String,
    clock: Arc<dyn Clock>,
    lease: bool,
    claims: bool,
    max_custom_claims: usize,
    first_failure: Arc<Mutex<Option<Timestamp>>>,
    decoder: Decoder,
}

impl std::fmt::Debug for RegistrationAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrationAgent")
            .field("cluster_name", &self.cluster_name)
            .field("lease", &self.lease)
            .field("claims", &self.claims)
            .field("max_custom_claims", &self.max_custom_claims)
            .finish_non_exhaustive()
    }
}

impl RegistrationAgent {
    /// The registration agent of `cluster_name`, writing to the hub through `hub` and reading
    /// the managed cluster through `spoke`; lease, availability and claims all on, with the
    /// wall clock.
    pub fn new(hub: Client, spoke: Client, cluster_name: impl Into<String>) -> Self {
        Self {
            hub,
            spoke,
            cluster_name: cluster_name.into(),
            clock: Arc::new(SystemClock),
            lease: true,
            claims: true,
            max_custom_claims: DEFAULT_MAX_CUSTOM_CLAIMS,
            first_failure: Arc::new(Mutex::new(None)),
            decoder: Decoder::default(),
        }
    }

    /// Uses `clock` for renew times and condition times.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Renew the lease and report availability (on by default).
    #[must_use]
    pub fn with_lease(mut self, on: bool) -> Self {
        self.lease = on;
        self
    }

    /// Report ClusterClaims (on by default).
    #[must_use]
    pub fn with_cluster_claims(mut self, on: bool) -> Self {
        self.claims = on;
        self
    }

    /// Report at most `max` non-reserved claims (upstream's `--max-custom-cluster-claims`,
    /// 20 by default).
    #[must_use]
    pub fn with_max_custom_claims(mut self, max: usize) -> Self {
        self.max_custom_claims = max;
        self
    }

    /// The cluster's `ManagedCluster` on the hub.
    pub async fn cluster(&self) -> Result<ManagedCluster> {
        managed_cluster(&self.decoder, &self.hub, &self.cluster_name).await
    }

    /// Renews the lease once: `Ok(false)` when the hub has not created it yet.
    pub async fn renew_lease(&self) -> Result<bool> {
        let api: Api<Lease> = Api::namespaced(self.hub.clone(), &self.cluster_name);
        let Some(mut lease) = api
            .get_opt(c::LEASE_NAME)
            .await
            .map_err(kube_error(format!(
                "get lease {}/{}",
                self.cluster_name,
                c::LEASE_NAME
            )))?
        else {
            return Ok(false);
        };
        lease.spec.get_or_insert_with(Default::default).renew_time =
            Some(MicroTime(self.clock.now()));
        api.replace(c::LEASE_NAME, &PostParams::default(), &lease)
            .await
            .map_err(kube_error(format!(
                "update lease {}/{}",
                self.cluster_name,
                c::LEASE_NAME
            )))?;
        Ok(true)
    }

    /// Probes the managed cluster's API server as upstream does: `/livez`, then `/healthz`
    /// when `/livez` is 404 or 403. Returns the status code and body of the failing probe.
    async fn probe(&self) -> std::result::Result<(), (u16, String)> {
        let get = |path: &'static str| {
            let spoke = self.spoke.clone();
            async move {
                let req = http::Request::get(path)
                    .body(Vec::new())
                    .map_err(|e| (0u16, e.to_string()))?;
                match spoke.request_text(req).await {
                    Ok(_) => Ok(()),
                    Err(kube::Error::Api(s)) => Err((s.code, s.message)),
                    Err(e) => Err((0, e.to_string())),
                }
            }
        };
        match get("/livez").await {
            Ok(()) => Ok(()),
            Err((404 | 403, _)) => get("/healthz").await,
            Err(e) => Err(e),
        }
    }

    /// Sets `ManagedClusterConditionAvailable` from a health probe of the managed cluster
    /// (see the [module](self) docs); returns whether the status was written.
    pub async fn sync_available(&self, cluster: &ManagedCluster) -> Result<bool> {
        let now = self.clock.now();
        let condition = match self.probe().await {
            Ok(()) => {
                if let Ok(mut f) = self.first_failure.lock() {
                    *f = None;
                }
                NewCondition::new(
                    c::CONDITION_AVAILABLE,
                    ConditionStatus::True,
                    c::REASON_MANAGED_CLUSTER_AVAILABLE,
                    c::MESSAGE_MANAGED_CLUSTER_AVAILABLE,
                )
            }
            Err((code, body)) => {
                let since = match self.first_failure.lock() {
                    Ok(mut f) => *f.get_or_insert(now),
                    Err(_) => now,
                };
                let failing = Duration::try_from(since.duration_until(now)).unwrap_or_default();
                if failing < HEALTH_FAILURE_THRESHOLD {
                    return Ok(false);
                }
                NewCondition::new(
                    c::CONDITION_AVAILABLE,
                    ConditionStatus::False,
                    c::REASON_KUBE_APISERVER_UNAVAILABLE,
                    format!("The kube-apiserver is not ok, status code: {code}, {body}"),
                )
            }
        };
        let mut conds = cluster
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        if !conditions::set(&mut conds, condition, &self.clock.now_time()) {
            return Ok(false);
        }
        read::api::<ManagedCluster>(&self.hub, None)
            .patch_status(
                &self.cluster_name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": {"conditions": conds}})),
            )
            .await
            .map_err(kube_error(format!(
                "update the availability of ManagedCluster {}",
                self.cluster_name
            )))?;
        Ok(true)
    }

    /// Reports the ClusterClaims once, if the cluster has joined; returns the number of
    /// writes.
    pub async fn sync_claims(&self, cluster: &ManagedCluster) -> Result<usize> {
        let joined = cluster
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .is_some_and(|cs| conditions::is_true(cs, c::CONDITION_JOINED));
        if !joined {
            return Ok(0);
        }
        self.reporter()
            .sync()
            .await
            .map_err(|e| Error::InvalidObject {
                object: format!("ManagedCluster {}", self.cluster_name),
                message: format!("cannot report cluster claims: {e}"),
            })
    }

    fn reporter(&self) -> ClusterClaimReporter {
        let mut reporter = ClusterClaimReporter::new(
            self.hub.clone(),
            self.spoke.clone(),
            self.cluster_name.clone(),
        )
        .with_max_custom_claims(self.max_custom_claims);
        reporter.decoder = self.decoder.clone();
        reporter
    }

    /// One round: lease and availability (when the hub accepted the cluster), then claims.
    /// Returns how long to wait before the next round (the lease duration).
    pub async fn sync_once(&self) -> Result<Duration> {
        let cluster = self.cluster().await?;
        let seconds = match cluster.spec.lease_duration_seconds.unwrap_or(0) {
            0 => c::DEFAULT_LEASE_DURATION_SECONDS,
            s => s,
        };
        let every = Duration::from_secs(u64::try_from(seconds).unwrap_or(60).max(1));
        let accepted = cluster
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .is_some_and(|cs| conditions::is_true(cs, c::CONDITION_HUB_ACCEPTED));
        let mut errors = Vec::new();
        if self.lease && accepted {
            if let Err(e) = self.renew_lease().await {
                errors.push(e);
            }
            if let Err(e) = self.sync_available(&cluster).await {
                errors.push(e);
            }
        }
        if self.claims
            && let Err(e) = self.sync_claims(&cluster).await
        {
            errors.push(e);
        }
        match errors.len() {
            0 => Ok(every),
            1 => Err(errors.remove(0)),
            _ => Err(Error::Aggregate(errors)),
        }
    }

    /// Runs until `shutdown` completes: a round every lease duration, and the claims again
    /// whenever a ClusterClaim changes on the managed cluster.
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        use futures::StreamExt;
        let mut changes = if self.claims {
            crate::runtime::watch::changes(
                read::api::<ClusterClaim>(&self.spoke, None),
                kube::runtime::watcher::Config::default(),
            )
        } else {
            futures::stream::pending().boxed()
        };
        let mut shutdown = std::pin::pin!(shutdown);
        let mut next = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(next) => {
                    let wait = match self.sync_once().await {
                        Ok(every) => every,
                        Err(error) => {
                            tracing::warn!(cluster = %self.cluster_name, %error, "registration round failed");
                            Duration::from_secs(5)
                        }
                    };
                    next = tokio::time::Instant::now() + wait;
                }
                Some(()) = changes.next() => {
                    // Let a burst of claim changes settle, then report once.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let result = match self.cluster().await {
                        Ok(cluster) => self.sync_claims(&cluster).await.map(|_| ()),
                        Err(e) => Err(e),
                    };
                    if let Err(error) = result {
                        tracing::warn!(cluster = %self.cluster_name, %error, "claim report failed");
                    }
                }
                _ = &mut shutdown => break,
            }
        }
    }
}

/// Reports a managed cluster's ClusterClaims to its `ManagedCluster` on the hub (upstream's
/// claim controller of the registration agent), on its own or as part of
/// [`RegistrationAgent`].
///
/// [`sync`](Self::sync) lists the claims on the managed cluster, computes the list upstream
/// reports ([`cluster_claims_status`]) and patches `status.clusterClaims` only when it differs;
/// [`run`](Self::run) does so whenever a claim changes.
#[derive(Clone)]
pub struct ClusterClaimReporter {
    hub: Client,
    spoke: Client,
    cluster_name: String,
    max_custom_claims: usize,
    decoder: Decoder,
}

impl std::fmt::Debug for ClusterClaimReporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterClaimReporter")
            .field("cluster_name", &self.cluster_name)
            .finish_non_exhaustive()
    }
}

impl ClusterClaimReporter {
    /// A reporter for cluster `cluster_name`, reading claims through `spoke` and writing the
    /// `ManagedCluster` status through `hub`.
    pub fn new(hub: Client, spoke: Client, cluster_name: impl Into<String>) -> Self {
        Self {
            hub,
            spoke,
            cluster_name: cluster_name.into(),
            max_custom_claims: DEFAULT_MAX_CUSTOM_CLAIMS,
            decoder: Decoder::default(),
        }
    }

    /// Reports at most `max` non-reserved claims (upstream's `--max-custom-cluster-claims`).
    #[must_use]
    pub fn with_max_custom_claims(mut self, max: usize) -> Self {
        self.max_custom_claims = max;
        self
    }

    /// Reads the claims and the hub's `ManagedCluster`, and patches its
    /// `status.clusterClaims` when it differs. Returns the number of writes (0 or 1).
    pub async fn sync(&self) -> Result<usize> {
        // A claim that does not decode is left out (and logged); the others are reported.
        let (claims, _) = self
            .decoder
            .list::<ClusterClaim>(
                &read::api::<ClusterClaim>(&self.spoke, None),
                &kube::api::ListParams::default(),
                "ClusterClaim",
                || "list ClusterClaims on the managed cluster".to_string(),
            )
            .await?;
        let want = cluster_claims_status(&claims, self.max_custom_claims);
        let clusters = read::api::<ManagedCluster>(&self.hub, None);
        let name = &self.cluster_name;
        let cluster = managed_cluster(&self.decoder, &self.hub, name).await?;
        let have = cluster
            .status
            .as_ref()
            .and_then(|s| s.cluster_claims.clone())
            .unwrap_or_default();
        if have == want {
            return Ok(0);
        }
        let patch = json!({"status": {"clusterClaims": want}});
        clusters
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(kube_error(format!(
                "update claims of ManagedCluster {name}"
            )))?;
        Ok(1)
    }

    /// Syncs whenever a ClusterClaim changes and at least every `resync`, until `shutdown`
    /// completes.
    pub async fn run(
        self,
        resync: Duration,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        use crate::runtime::watch;
        let changes = watch::changes(
            read::api::<ClusterClaim>(&self.spoke, None),
            kube::runtime::watcher::Config::default(),
        );
        let this = &self;
        ocm_api::rounds::run_rounds(
            vec![changes],
            Duration::from_millis(20),
            shutdown,
            move || async move {
                if let Err(error) = this.sync().await {
                    tracing::warn!(%error, cluster = %this.cluster_name, "claim sync failed");
                }
                resync
            },
        )
        .await;
    }
}

/// The ManagedCluster `name`, read as raw JSON and decoded on its own (an error naming the field
/// at fault when it does not decode).
async fn managed_cluster(decoder: &Decoder, hub: &Client, name: &str) -> Result<ManagedCluster> {
    let raw = read::api::<ManagedCluster>(hub, None)
        .get(name)
        .await
        .map_err(kube_error(format!("get ManagedCluster {name}")))?;
    decoder.answer(KIND_CLUSTER, raw).await
}
