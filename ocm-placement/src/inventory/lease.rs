//! Cluster leases on the hub: a managed cluster whose registration agent stops renewing its
//! lease becomes `ManagedClusterConditionAvailable=Unknown`.
//!
//! Upstream's hub lease controller, rule for rule:
//!
//! * clusters that were never accepted (no `HubAcceptedManagedCluster` condition) are skipped;
//! * a cluster without its Lease (`managed-cluster-lease` in the cluster namespace) gets one,
//!   labelled with the cluster name, held by `managed-cluster-lease` and renewed now; a
//!   cluster being deleted without a lease is marked unknown at once instead;
//! * the grace period is [`LEASE_DURATION_TIMES`] (5) × `spec.leaseDurationSeconds`
//!   (5 × 60 s when that is 0);
//! * once `now ≥ renewTime + grace`, the Available condition becomes `Unknown` with reason
//!   `ManagedClusterLeaseUpdateStopped` and message `Registration agent stopped updating its
//!   lease.` (unless it is already `Unknown`), announced by a Warning Event `AvailableUnknown`;
//!   the cluster is looked at again when its lease would expire.
//!
//! [`lease_verdict`] decides (pure); [`ClusterLeaseController`] (feature `controller`) acts.
//! The inventory controller then adds the `unreachable` taint to an `Unknown` cluster.
//!
//! ```
//! use ocm_api::cluster::v1::ManagedCluster;
//! use ocm_placement::inventory::lease::{LeaseVerdict, lease_verdict};
//! use k8s_openapi::api::coordination::v1::Lease;
//! use serde_json::json;
//!
//! let cluster: ManagedCluster = serde_json::from_value(json!({
//!     "metadata": {"name": "c1"}, "spec": {"leaseDurationSeconds": 60},
//!     "status": {"conditions": [{"type": "HubAcceptedManagedCluster", "status": "True",
//!         "reason": "HubClusterAdminAccepted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
//! }))?;
//! let lease: Lease = serde_json::from_value(json!({
//!     "metadata": {"name": "managed-cluster-lease", "namespace": "c1"},
//!     "spec": {"renewTime": "2026-01-01T00:00:00.000000Z"}}))?;
//! let at = |s: &str| s.parse().unwrap();
//! assert!(matches!(lease_verdict(&cluster, Some(&lease), at("2026-01-01T00:04:59Z")),
//!     LeaseVerdict::Fresh { .. }));
//! assert!(matches!(lease_verdict(&cluster, Some(&lease), at("2026-01-01T00:05:00Z")),
//!     LeaseVerdict::MarkUnknown { .. }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::conditions;
use ocm_api::constants::cluster as c;

pub use ocm_api::constants::cluster::{LEASE_DURATION_TIMES, LEASE_NAME};

/// What the hub does about one cluster's lease.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseVerdict {
    /// Nothing: the cluster was never accepted.
    Skip,
    /// The lease does not exist yet: create it, renewed now.
    CreateLease,
    /// The lease is fresh; look again after `expires_in`.
    Fresh {
        /// Time left until the lease expires.
        expires_in: Duration,
    },
    /// The lease expired (or the cluster is being deleted without one): the Available
    /// condition becomes `Unknown` (when it is not already); look again after `recheck_after`.
    MarkUnknown {
        /// The grace period, after which the controller looks again.
        recheck_after: Duration,
    },
}

/// The grace period of a cluster: [`LEASE_DURATION_TIMES`] × its lease duration (60 s when
/// unset or 0).
pub fn grace_period(cluster: &ManagedCluster) -> Duration {
    let seconds = match cluster.spec.lease_duration_seconds.unwrap_or(0) {
        0 => i64::from(c::DEFAULT_LEASE_DURATION_SECONDS),
        s => i64::from(s),
    };
    Duration::from_secs(u64::try_from(LEASE_DURATION_TIMES * seconds.max(0)).unwrap_or(0))
}

/// What the hub lease controller does for `cluster`, whose lease is `lease`, at `now`.
pub fn lease_verdict(
    cluster: &ManagedCluster,
    lease: Option<&Lease>,
    now: Timestamp,
) -> LeaseVerdict {
    let conds = cluster
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    if conditions::find(conds, c::CONDITION_HUB_ACCEPTED).is_none() {
        return LeaseVerdict::Skip;
    }
    let grace = grace_period(cluster);
    let Some(lease) = lease else {
        return if cluster.metadata.deletion_timestamp.is_some() {
            LeaseVerdict::MarkUnknown {
                recheck_after: grace,
            }
        } else {
            LeaseVerdict::CreateLease
        };
    };
    let renewed = lease
        .spec
        .as_ref()
        .and_then(|s| s.renew_time.as_ref())
        .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
    let expiry = renewed
        .checked_add(SignedDuration::try_from(grace).unwrap_or(SignedDuration::MAX))
        .unwrap_or(Timestamp::MAX);
    if now >= expiry {
        LeaseVerdict::MarkUnknown {
            recheck_after: grace,
        }
    } else {
        let left = now.duration_until(expiry);
        LeaseVerdict::Fresh {
            expires_in: Duration::try_from(left).unwrap_or_default(),
        }
    }
}

/// Whether the cluster's Available condition is already `Unknown`.
pub fn already_unknown(cluster: &ManagedCluster) -> bool {
    let conds = cluster
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    conditions::find(conds, c::CONDITION_AVAILABLE).is_some_and(|c| c.status == "Unknown")
}

#[cfg(feature = "controller")]
pub use controller::{ClusterLeaseController, LeaseOutcome};

#[cfg(feature = "controller")]
mod controller {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::time::Duration;

    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::api::core::v1::ObjectReference;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use kube::api::{Api, Patch, PatchParams, PostParams};
    use kube::runtime::events::{Event, EventType, Recorder, Reporter};
    use kube::{Client, Resource, ResourceExt};
    use ocm_api::clock::{Clock, SystemClock};
    use ocm_api::cluster::v1::ManagedCluster;
    use ocm_api::conditions::{ConditionStatus, NewCondition};
    use ocm_api::constants::{cluster as c, labels};
    use serde_json::json;

    use super::{LEASE_NAME, LeaseVerdict, already_unknown, lease_verdict};
    use crate::error::{Error, kube_error};
    use crate::watch::{self, Round};

    /// What one pass of the lease controller did.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    #[non_exhaustive]
    pub struct LeaseOutcome {
        /// Leases created.
        pub leases_created: usize,
        /// Clusters marked `Available=Unknown`.
        pub marked_unknown: usize,
        /// When the next lease expires, if any is fresh.
        pub next_expiry: Option<Duration>,
    }

    /// The hub's cluster lease controller (see the [module](super) docs).
    pub struct ClusterLeaseController {
        client: Client,
        clock: Arc<dyn Clock>,
        recorder: Recorder,
        /// What was last logged: a failure repeated on every retry is logged once.
        said: ocm_api::repeats::LastSaid,
    }

    impl std::fmt::Debug for ClusterLeaseController {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ClusterLeaseController")
                .finish_non_exhaustive()
        }
    }

    impl ClusterLeaseController {
        /// A controller on `client` (the hub) with the wall clock.
        pub fn new(client: Client) -> Self {
            let reporter = Reporter {
                controller: "managed-cluster-lease-controller".into(),
                instance: None,
            };
            Self {
                recorder: Recorder::new(client.clone(), reporter),
                client,
                clock: Arc::new(SystemClock),
                said: Default::default(),
            }
        }

        /// Uses `clock` for lease expiry and renew times.
        pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
            self.clock = clock;
            self
        }

        /// One pass over every cluster and lease on the hub.
        pub async fn reconcile_all(&self) -> Result<LeaseOutcome, Error> {
            let clusters = watch::list_all::<ManagedCluster>(&self.client).await?.0;
            let leases = watch::list_all::<Lease>(&self.client).await?.0;
            self.reconcile_objects(&clusters, &leases).await
        }

        /// One pass over the given objects (for example from watch caches).
        pub async fn reconcile_objects(
            &self,
            clusters: &[ManagedCluster],
            leases: &[Lease],
        ) -> Result<LeaseOutcome, Error> {
            let by_ns: BTreeMap<&str, &Lease> = leases
                .iter()
                .filter(|l| l.metadata.name.as_deref() == Some(LEASE_NAME))
                .filter_map(|l| l.metadata.namespace.as_deref().map(|ns| (ns, l)))
                .collect();
            let now = self.clock.now();
            let mut outcome = LeaseOutcome::default();
            let mut errors = Vec::new();
            for cluster in clusters {
                let name = cluster.name_any();
                let soonest = |o: &mut LeaseOutcome, d: Duration| {
                    o.next_expiry = Some(o.next_expiry.map_or(d, |n| n.min(d)));
                };
                match lease_verdict(cluster, by_ns.get(name.as_str()).copied(), now) {
                    LeaseVerdict::Skip => {}
                    LeaseVerdict::CreateLease => match self.create_lease(&name).await {
                        Ok(()) => {
                            outcome.leases_created += 1;
                            soonest(&mut outcome, super::grace_period(cluster));
                        }
                        Err(e) => errors.push(e),
                    },
                    LeaseVerdict::Fresh { expires_in } => soonest(&mut outcome, expires_in),
                    LeaseVerdict::MarkUnknown { recheck_after } => {
                        soonest(&mut outcome, recheck_after);
                        if already_unknown(cluster) {
                            continue;
                        }
                        match self.mark_unknown(cluster).await {
                            Ok(()) => outcome.marked_unknown += 1,
                            Err(e) => errors.push(e),
                        }
                    }
                }
            }
            match errors.len() {
                0 => Ok(outcome),
                1 => Err(errors.remove(0)),
                _ => Err(Error::Several(errors)),
            }
        }

        async fn create_lease(&self, cluster: &str) -> Result<(), Error> {
            let lease: Lease = serde_json::from_value(json!({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": LEASE_NAME, "namespace": cluster,
                             "labels": {labels::CLUSTER_NAME: cluster}},
                "spec": {"holderIdentity": LEASE_NAME},
            }))
            .map_err(|e| Error::Kube {
                action: format!("build the lease of {cluster}"),
                source: kube::Error::SerdeError(e),
            })?;
            let mut lease = lease;
            if let Some(spec) = lease.spec.as_mut() {
                spec.renew_time = Some(MicroTime(self.clock.now()));
            }
            match Api::<Lease>::namespaced(self.client.clone(), cluster)
                .create(&PostParams::default(), &lease)
                .await
            {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
                Err(e) => Err(kube_error(format!("create the lease of cluster {cluster}"))(e)),
            }
        }

        async fn mark_unknown(&self, cluster: &ManagedCluster) -> Result<(), Error> {
            let name = cluster.name_any();
            let mut conds = cluster
                .status
                .as_ref()
                .and_then(|s| s.conditions.clone())
                .unwrap_or_default();
            ocm_api::conditions::set(
                &mut conds,
                NewCondition::new(
                    c::CONDITION_AVAILABLE,
                    ConditionStatus::Unknown,
                    c::REASON_LEASE_UPDATE_STOPPED,
                    c::MESSAGE_LEASE_UPDATE_STOPPED,
                ),
                &self.clock.now_time(),
            );
            let mut patch = json!({"status": {"conditions": conds}});
            if let Some(rv) = &cluster.metadata.resource_version {
                patch["metadata"] = json!({"resourceVersion": rv});
            }
            Api::<ManagedCluster>::all(self.client.clone())
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(kube_error(format!(
                    "mark ManagedCluster {name} available unknown"
                )))?;
            let mut reference: ObjectReference = cluster.object_ref(&());
            // Upstream records the event in the cluster namespace.
            reference.namespace = Some(name.clone());
            let note = format!(
                "The {name} is successfully imported. However, the connection check from the managed cluster to the hub cluster has failed"
            );
            let event = Event {
                type_: EventType::Warning,
                reason: "AvailableUnknown".into(),
                note: Some(note),
                action: "AvailableUnknown".into(),
                secondary: None,
            };
            if let Err(e) = self.recorder.publish(&event, &reference).await {
                tracing::warn!(cluster = %name, error = %crate::error::describe_kube(&e), "cannot record the AvailableUnknown event");
            }
            Ok(())
        }

        /// Runs until `shutdown` completes: watches clusters and leases, and looks again when
        /// the next lease expires.
        pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
            let (clusters, w1) = watch::cache::<ManagedCluster>(&self.client);
            let (leases, w2) = watch::cache::<Lease>(&self.client);
            let ready = async {
                let _ = clusters.wait_until_ready().await;
                let _ = leases.wait_until_ready().await;
            };
            let this = &self;
            let stores = (&clusters, &leases);
            watch::run_loop(
                vec![w1, w2],
                ready,
                None,
                shutdown,
                Duration::from_secs(60),
                move || async move {
                    let c: Vec<ManagedCluster> =
                        stores.0.state().iter().map(|a| (**a).clone()).collect();
                    let l: Vec<Lease> = stores.1.state().iter().map(|a| (**a).clone()).collect();
                    let result = this.reconcile_objects(&c, &l).await;
                    watch::round_of(&this.said, "cluster lease", result, |outcome| {
                        Round::requeue(outcome.next_expiry)
                    })
                },
            )
            .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster(accepted: bool, lease_seconds: i64) -> ManagedCluster {
        let conds = if accepted {
            json!([{"type": "HubAcceptedManagedCluster", "status": "True", "reason": "A",
                    "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}])
        } else {
            json!([])
        };
        serde_json::from_value(json!({"metadata": {"name": "c1"},
            "spec": {"leaseDurationSeconds": lease_seconds}, "status": {"conditions": conds}}))
        .unwrap()
    }

    fn lease(renewed: &str) -> Lease {
        serde_json::from_value(json!({"metadata": {"name": LEASE_NAME, "namespace": "c1"},
            "spec": {"renewTime": renewed}}))
        .unwrap()
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn grace_is_five_lease_durations_and_defaults_to_sixty_seconds() {
        assert_eq!(grace_period(&cluster(true, 10)), Duration::from_secs(50));
        assert_eq!(grace_period(&cluster(true, 0)), Duration::from_secs(300));
        let l = lease("2026-01-01T00:00:00.000000Z");
        assert_eq!(
            lease_verdict(&cluster(true, 10), Some(&l), at("2026-01-01T00:00:20Z")),
            LeaseVerdict::Fresh {
                expires_in: Duration::from_secs(30)
            }
        );
        assert_eq!(
            lease_verdict(&cluster(true, 10), Some(&l), at("2026-01-01T00:00:50Z")),
            LeaseVerdict::MarkUnknown {
                recheck_after: Duration::from_secs(50)
            }
        );
    }

    #[test]
    fn unaccepted_clusters_are_skipped_and_missing_leases_created() {
        assert_eq!(
            lease_verdict(&cluster(false, 60), None, at("2026-01-01T00:00:00Z")),
            LeaseVerdict::Skip
        );
        assert_eq!(
            lease_verdict(&cluster(true, 60), None, at("2026-01-01T00:00:00Z")),
            LeaseVerdict::CreateLease
        );
        let mut deleting = cluster(true, 60);
        deleting.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at("2026-01-01T00:00:00Z")),
        );
        assert!(matches!(
            lease_verdict(&deleting, None, at("2026-01-01T00:00:00Z")),
            LeaseVerdict::MarkUnknown { .. }
        ));
        // A lease never renewed counts as renewed at the epoch: expired.
        let empty: Lease =
            serde_json::from_value(json!({"metadata": {"name": LEASE_NAME}})).unwrap();
        assert!(matches!(
            lease_verdict(&cluster(true, 60), Some(&empty), at("2026-01-01T00:00:00Z")),
            LeaseVerdict::MarkUnknown { .. }
        ));
    }
}
