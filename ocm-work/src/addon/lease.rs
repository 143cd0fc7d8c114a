//! Lease-based addon health.
//!
//! * [`LeaseUpdater`] runs in the addon's agent: it renews a Lease named after the addon in
//!   the agent's namespace on the managed cluster (addon-framework's `lease.LeaseUpdater`:
//!   60-second leases, renewed every 60 seconds, and, when that namespace does not exist and
//!   a hub client is given, a lease in the cluster's namespace on the hub instead).
//! * [`LeaseHealthChecker`] does what upstream's registration agent does on each managed
//!   cluster for addons whose `status.healthCheck.mode` is `Lease`: it reads that lease and
//!   sets `Available` (`ManagedClusterAddOnLeaseUpdated` within five lease durations of the
//!   last renewal, `ManagedClusterAddOnLeaseUpdateStopped` after, and
//!   `ManagedClusterAddOnLeaseNotFound`, `Unknown`, without a lease). This SDK has no
//!   registration agent, so run it next to the work agent of each managed cluster. It reads
//!   the addons one at a time (see `crate::read`): one that does not decode is skipped and
//!   logged at WARN once per resource version (the addon manager reports it on the addon),
//!   and the others are checked.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ocm_api::addon::v1beta1::{HealthCheckMode, ManagedClusterAddOn};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::addon as ac;
use serde_json::json;

use crate::api_errors::is_not_found;
use crate::read::{self, Decoder};
use crate::{Error, Result};

/// The lease duration agents write, in seconds.
pub const LEASE_DURATION_SECONDS: i32 = 60;

/// The `Available` condition for an addon given its lease (or none) at `now`.
///
/// ```
/// use ocm_work::addon::lease::lease_condition;
/// let now = "2026-01-01T00:10:00Z".parse().unwrap();
/// let c = lease_condition("hello", None, now);
/// assert_eq!((c.status.as_str(), c.reason.as_str()), ("Unknown", "ManagedClusterAddOnLeaseNotFound"));
/// assert_eq!(c.message, "The status of hello add-on is unknown.");
/// ```
pub fn lease_condition(addon: &str, lease: Option<&Lease>, now: Timestamp) -> NewCondition {
    let Some(lease) = lease else {
        return NewCondition::new(
            ac::CONDITION_AVAILABLE,
            ConditionStatus::Unknown,
            ac::REASON_AVAILABLE_LEASE_NOT_FOUND,
            format!("The status of {addon} add-on is unknown."),
        );
    };
    let grace = SignedDuration::from_secs(i64::from(
        ac::LEASE_DURATION_TIMES * ac::LEASE_DURATION_SECONDS,
    ));
    let fresh = lease
        .spec
        .as_ref()
        .and_then(|s| s.renew_time.as_ref())
        .and_then(|t| t.0.checked_add(grace).ok())
        .is_some_and(|deadline| now < deadline);
    if fresh {
        NewCondition::new(
            ac::CONDITION_AVAILABLE,
            ConditionStatus::True,
            ac::REASON_AVAILABLE_LEASE_UPDATED,
            format!("{addon} add-on is available."),
        )
    } else {
        NewCondition::new(
            ac::CONDITION_AVAILABLE,
            ConditionStatus::False,
            ac::REASON_AVAILABLE_LEASE_UPDATE_STOPPED,
            format!("{addon} add-on is not available."),
        )
    }
}

/// The namespace an addon's agent is installed in, as the registration agent reads it:
/// `status.namespace`, else the v1alpha1 install-namespace annotation, else the default.
pub fn install_namespace(addon: &ManagedClusterAddOn) -> String {
    addon
        .status
        .as_ref()
        .and_then(|s| s.namespace.clone())
        .filter(|n| !n.is_empty())
        .or_else(|| {
            addon
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(ac::V1ALPHA1_INSTALL_NAMESPACE_ANNOTATION))
                .cloned()
                .filter(|n| !n.is_empty())
        })
        .unwrap_or_else(|| ac::DEFAULT_AGENT_INSTALL_NAMESPACE.to_string())
}

/// Renews an addon's lease from its agent.
#[derive(Clone)]
pub struct LeaseUpdater {
    client: Client,
    name: String,
    namespace: String,
    hub: Option<(Client, String)>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for LeaseUpdater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseUpdater")
            .field("name", &self.name)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl LeaseUpdater {
    /// Renews the lease `name` (the addon's name) in `namespace` through `client` (the
    /// managed cluster).
    pub fn new(client: Client, name: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self {
            client,
            name: name.into(),
            namespace: namespace.into(),
            hub: None,
            clock: Arc::new(SystemClock),
        }
    }

    /// Falls back to the lease in the cluster's namespace on the hub when the namespace on
    /// the managed cluster does not exist.
    #[must_use]
    pub fn with_hub(mut self, hub: Client, cluster_name: impl Into<String>) -> Self {
        self.hub = Some((hub, cluster_name.into()));
        self
    }

    /// Uses `clock` for renew times.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    async fn renew(
        &self,
        client: &Client,
        namespace: &str,
    ) -> std::result::Result<(), kube::Error> {
        let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
        let now = MicroTime(self.clock.now());
        match api.get_opt(&self.name).await? {
            None => {
                let lease: Lease = serde_json::from_value(json!({
                    "metadata": {"name": self.name, "namespace": namespace},
                    "spec": {"leaseDurationSeconds": LEASE_DURATION_SECONDS, "renewTime": now},
                }))
                .map_err(kube::Error::SerdeError)?;
                api.create(&PostParams::default(), &lease).await?;
            }
            Some(mut lease) => {
                lease.spec.get_or_insert_with(Default::default).renew_time = Some(now);
                api.replace(&self.name, &PostParams::default(), &lease)
                    .await?;
            }
        }
        Ok(())
    }

    /// Renews the lease once.
    pub async fn renew_once(&self) -> Result<()> {
        match self.renew(&self.client, &self.namespace).await {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) && self.hub.is_some() => {
                let Some((hub, cluster)) = &self.hub else {
                    return Ok(());
                };
                self.renew(hub, cluster).await.map_err(|e| {
                    Error::kube(format!("renew lease {cluster}/{} on the hub", self.name), e)
                })
            }
            Err(e) => Err(Error::kube(
                format!("renew lease {}/{}", self.namespace, self.name),
                e,
            )),
        }
    }

    /// Renews every `interval` until `shutdown`; while `healthy` returns false, the lease is
    /// not renewed (upstream's health check functions).
    pub async fn run(
        self,
        interval: Duration,
        healthy: impl Fn() -> bool + Send,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) {
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            if healthy()
                && let Err(error) = self.renew_once().await
            {
                tracing::warn!(%error, "lease renewal failed");
            }
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    }
}

/// Sets `Available` of a cluster's lease-checked addons from their leases (the registration
/// agent's addon lease controller).
#[derive(Clone)]
pub struct LeaseHealthChecker {
    hub: Client,
    spoke: Client,
    cluster: String,
    clock: Arc<dyn Clock>,
    decoder: Decoder,
}

impl std::fmt::Debug for LeaseHealthChecker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseHealthChecker")
            .field("cluster", &self.cluster)
            .finish_non_exhaustive()
    }
}

impl LeaseHealthChecker {
    /// A checker for the addons of `cluster` (their ManagedClusterAddOns on `hub`, their
    /// leases on `spoke`).
    pub fn new(hub: Client, spoke: Client, cluster: impl Into<String>) -> Self {
        Self {
            hub,
            spoke,
            cluster: cluster.into(),
            clock: Arc::new(SystemClock),
            decoder: Decoder::default(),
        }
    }

    /// Uses `clock` as "now".
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Checks every addon of the cluster once; returns how many conditions changed.
    pub async fn check_all(&self) -> Result<usize> {
        let api = read::api::<ManagedClusterAddOn>(&self.hub, Some(&self.cluster));
        let (addons, _) = self
            .decoder
            .list::<ManagedClusterAddOn>(
                &api,
                &ListParams::default(),
                "ManagedClusterAddOn",
                || format!("list ManagedClusterAddOns in {}", self.cluster),
            )
            .await?;
        let mut changed = 0;
        let mut errors = Vec::new();
        for addon in addons {
            let mode = addon
                .status
                .as_ref()
                .and_then(|s| s.health_check.as_ref())
                .and_then(|h| h.mode.as_ref());
            if mode == Some(&HealthCheckMode::Customized) {
                continue;
            }
            let name = addon.name_any();
            let namespace = install_namespace(&addon);
            let leases: Api<Lease> = Api::namespaced(self.spoke.clone(), &namespace);
            let lease = match leases.get_opt(&name).await {
                Ok(l) => l,
                Err(e) => {
                    errors.push(Error::kube(format!("get lease {namespace}/{name}"), e));
                    continue;
                }
            };
            let condition = lease_condition(&name, lease.as_ref(), self.clock.now());
            let mut conds = addon
                .status
                .as_ref()
                .and_then(|s| s.conditions.clone())
                .unwrap_or_default();
            let now = Time(
                Timestamp::from_second(self.clock.now().as_second()).unwrap_or(self.clock.now()),
            );
            if conditions::set(&mut conds, condition, &now) {
                let patch = json!({"status": {"conditions": conds}});
                match api
                    .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Ok(_) => changed += 1,
                    Err(e) => errors.push(Error::kube(
                        format!(
                            "update status of ManagedClusterAddOn {}/{name}",
                            self.cluster
                        ),
                        e,
                    )),
                }
            }
        }
        Error::aggregate(errors)?;
        Ok(changed)
    }

    /// Checks every `interval` until `shutdown`.
    pub async fn run(
        self,
        interval: Duration,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) {
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            if let Err(error) = self.check_all().await {
                tracing::warn!(%error, cluster = %self.cluster, "addon lease check failed");
            }
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(renewed: &str) -> Lease {
        serde_json::from_value(json!({"metadata": {"name": "a"}, "spec": {"renewTime": renewed}}))
            .unwrap()
    }

    #[test]
    fn grace_is_five_lease_durations() {
        let now: Timestamp = "2026-01-01T00:10:00Z".parse().unwrap();
        let c = lease_condition("a", Some(&lease("2026-01-01T00:05:01.000000Z")), now);
        assert_eq!(
            (c.status, c.reason.as_str()),
            (ConditionStatus::True, "ManagedClusterAddOnLeaseUpdated")
        );
        assert_eq!(c.message, "a add-on is available.");
        let c = lease_condition("a", Some(&lease("2026-01-01T00:05:00.000000Z")), now);
        assert_eq!(
            (c.status, c.reason.as_str()),
            (
                ConditionStatus::False,
                "ManagedClusterAddOnLeaseUpdateStopped"
            )
        );
        assert_eq!(c.message, "a add-on is not available.");
    }

    #[test]
    fn install_namespace_precedence() {
        let a: ManagedClusterAddOn = serde_json::from_value(json!({"metadata": {"name": "a",
            "annotations": {ac::V1ALPHA1_INSTALL_NAMESPACE_ANNOTATION: "from-annotation"}}, "spec": {}})).unwrap();
        assert_eq!(install_namespace(&a), "from-annotation");
        let mut b = a.clone();
        b.status = Some(serde_json::from_value(json!({"namespace": "from-status"})).unwrap());
        assert_eq!(install_namespace(&b), "from-status");
        let c: ManagedClusterAddOn =
            serde_json::from_value(json!({"metadata": {"name": "a"}, "spec": {}})).unwrap();
        assert_eq!(install_namespace(&c), "open-cluster-management-agent-addon");
    }
}
