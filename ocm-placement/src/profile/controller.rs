//! The ClusterProfile controller: the I/O shell around [`plan`](super::plan).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::multicluster::v1alpha1::ClusterProfile;
use serde_json::json;

use super::{ProfileChange, plan};
use crate::Error;
use crate::watch::{self, Round};

/// How often [`ClusterProfileController::run`] looks at the hub even without changes (the
/// informer resync of upstream's registration hub).
pub const PROFILE_RESYNC_PERIOD: Duration = Duration::from_secs(10 * 60);

/// What one pass wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProfileOutcome {
    /// Writes made (creates, deletes, status and label patches).
    pub writes: usize,
    /// What could not be used, with the reason (see [`ProfilePlan::skipped`](super::ProfilePlan)).
    pub skipped: Vec<String>,
}

/// Maintains SIG-Multicluster ClusterProfiles for the hub's ManagedClusters (the
/// `ClusterProfile` gate; see [the module docs](super)).
///
/// The hub must serve the ClusterProfile CRD (`ocm_api::crd::multicluster_crds()`). Bindings
/// count once the inventory controller (or upstream's registration hub) has marked them
/// `Bound`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use k8s_openapi::api::core::v1::Namespace;
/// use kube::api::{Api, PostParams};
/// use ocm_api::cluster::v1beta2::ManagedClusterSetBinding;
/// use ocm_api::multicluster::v1alpha1::ClusterProfile;
/// use ocm_placement::inventory::ClusterInventoryController;
/// use ocm_placement::profile::ClusterProfileController;
///
/// let fake = ocm_testkit::FakeHub::new(1)?; // cluster1, in the `default` set
/// let hub = fake.hub().client();
/// let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
///     Api::all(hub.clone());
/// for crd in ocm_api::crd::multicluster_crds() {
///     crds.create(&PostParams::default(), &crd).await?;
/// }
/// let ns: Namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": "apps"}}))?;
/// Api::all(hub.clone()).create(&PostParams::default(), &ns).await?;
/// let binding: ManagedClusterSetBinding = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "default", "namespace": "apps"}, "spec": {"clusterSet": "default"}
/// }))?;
/// Api::namespaced(hub.clone(), "apps").create(&PostParams::default(), &binding).await?;
/// ClusterInventoryController::new(hub.clone()).reconcile_all().await?; // marks it Bound
///
/// let controller = ClusterProfileController::new(hub.clone());
/// controller.reconcile_all().await?;
/// let profile = Api::<ClusterProfile>::namespaced(hub.clone(), "apps").get("cluster1").await?;
/// assert_eq!(profile.spec.cluster_manager.name, "open-cluster-management");
/// // A second pass has nothing to do.
/// assert_eq!(controller.reconcile_all().await?.writes, 0);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ClusterProfileController {
    client: Client,
    clock: Arc<dyn Clock>,
    synced: Option<Arc<AtomicBool>>,
    /// What was last logged: a problem found again on every pass is logged once per change.
    said: Arc<ocm_api::repeats::LastSaid>,
}

impl std::fmt::Debug for ClusterProfileController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterProfileController")
            .finish_non_exhaustive()
    }
}

impl ClusterProfileController {
    /// A controller writing through `client`, with the wall clock.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            clock: Arc::new(SystemClock),
            synced: None,
            said: Arc::default(),
        }
    }

    /// Uses `clock` for condition transition times.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets `flag` once [`ClusterProfileController::run`]'s informers have listed (for a
    /// readiness probe); it stays as it is otherwise, so reset it before a new `run`.
    #[must_use]
    pub fn with_synced_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.synced = Some(flag);
        self
    }

    /// Lists the hub and makes the writes one pass needs; nothing is written when every
    /// profile is up to date.
    pub async fn reconcile_all(&self) -> Result<ProfileOutcome, Error> {
        let clusters = watch::list_all::<ManagedCluster>(&self.client).await?.0;
        let sets = watch::list_all::<ManagedClusterSet>(&self.client).await?.0;
        let bindings = watch::list_all::<ManagedClusterSetBinding>(&self.client)
            .await?
            .0;
        let profiles = watch::list_all::<ClusterProfile>(&self.client).await?.0;
        self.reconcile_objects(
            &clusters.iter().collect::<Vec<_>>(),
            &sets.iter().collect::<Vec<_>>(),
            &bindings.iter().collect::<Vec<_>>(),
            &profiles.iter().collect::<Vec<_>>(),
        )
        .await
    }

    /// Makes the writes one pass needs for the given objects (for example from watch caches).
    pub async fn reconcile_objects(
        &self,
        clusters: &[&ManagedCluster],
        sets: &[&ManagedClusterSet],
        bindings: &[&ManagedClusterSetBinding],
        profiles: &[&ClusterProfile],
    ) -> Result<ProfileOutcome, Error> {
        let now = Time(self.clock.now());
        let plan = plan(clusters, sets, bindings, profiles, &now);
        // Each skipped object is logged when it starts being skipped, not on every pass.
        let skipped_now = plan.skipped.iter().map(ToString::to_string);
        for skipped in self.said.news("skipped", skipped_now) {
            tracing::warn!(%skipped, "ClusterProfile input left out");
        }
        let mut outcome = ProfileOutcome {
            writes: 0,
            skipped: plan.skipped,
        };
        let mut errors = Vec::new();
        // Upstream creates and deletes nothing in a namespace that is gone or terminating;
        // its namespace is read only when a profile there must be created or deleted.
        let mut live: BTreeMap<String, bool> = BTreeMap::new();
        for change in plan.changes {
            if change.is_lifecycle() {
                let namespace = change.namespace().to_string();
                let ok = match live.get(&namespace) {
                    Some(ok) => *ok,
                    None => match self.namespace_is_live(&namespace).await {
                        Ok(ok) => *live.entry(namespace).or_insert(ok),
                        Err(e) => {
                            errors.push(e);
                            continue;
                        }
                    },
                };
                if !ok {
                    continue;
                }
            }
            match self.apply(change).await {
                Ok(writes) => outcome.writes += writes,
                Err(e) => errors.push(e),
            }
        }
        match errors.len() {
            0 => Ok(outcome),
            1 => Err(errors.remove(0)),
            _ => Err(Error::Several(errors)),
        }
    }

    async fn namespace_is_live(&self, namespace: &str) -> Result<bool, Error> {
        match Api::<Namespace>::all(self.client.clone())
            .get_opt(namespace)
            .await
        {
            Ok(found) => Ok(found.is_some_and(|ns| ns.metadata.deletion_timestamp.is_none())),
            Err(source) => Err(Error::Kube {
                action: format!("get Namespace {namespace}"),
                source,
            }),
        }
    }

    /// Makes one change; returns the number of writes.
    async fn apply(&self, change: ProfileChange) -> Result<usize, Error> {
        let api = |namespace: &str| -> Api<ClusterProfile> {
            Api::namespaced(self.client.clone(), namespace)
        };
        let error = |action: String| move |source| Error::Kube { action, source };
        let params = PatchParams::default();
        match change {
            ProfileChange::Create { profile, status } => {
                let namespace = profile.metadata.namespace.clone().unwrap_or_default();
                let name = profile.metadata.name.clone().unwrap_or_default();
                let created = api(&namespace)
                    .create(&PostParams::default(), &profile)
                    .await
                    .map_err(error(format!("create ClusterProfile {namespace}/{name}")))?;
                tracing::debug!(%namespace, %name, "created ClusterProfile");
                // The create drops the status (a subresource): write it now.
                let have =
                    serde_json::to_value(created.status.unwrap_or_default()).unwrap_or_default();
                match super::merge_patch(&have, &status) {
                    None => Ok(1),
                    Some(patch) => {
                        api(&namespace)
                            .patch_status(&name, &params, &Patch::Merge(json!({"status": patch})))
                            .await
                            .map_err(error(format!(
                                "update status of ClusterProfile {namespace}/{name}"
                            )))?;
                        Ok(2)
                    }
                }
            }
            ProfileChange::Delete { namespace, name } => {
                match api(&namespace)
                    .delete(&name, &DeleteParams::default())
                    .await
                {
                    Ok(_) => {
                        tracing::debug!(%namespace, %name, "deleted ClusterProfile");
                        Ok(1)
                    }
                    Err(kube::Error::Api(status)) if status.code == 404 => Ok(0),
                    Err(e) => Err(error(format!("delete ClusterProfile {namespace}/{name}"))(
                        e,
                    )),
                }
            }
            ProfileChange::Status {
                namespace,
                name,
                patch,
            } => {
                api(&namespace)
                    .patch_status(&name, &params, &Patch::Merge(json!({"status": patch})))
                    .await
                    .map_err(error(format!(
                        "update status of ClusterProfile {namespace}/{name}"
                    )))?;
                Ok(1)
            }
            ProfileChange::Labels {
                namespace,
                name,
                labels,
            } => {
                api(&namespace)
                    .patch(
                        &name,
                        &params,
                        &Patch::Merge(json!({"metadata": {"labels": labels}})),
                    )
                    .await
                    .map_err(error(format!("label ClusterProfile {namespace}/{name}")))?;
                Ok(1)
            }
        }
    }

    /// Watches ManagedClusters, ManagedClusterSets, bindings and ClusterProfiles and keeps the
    /// profiles up to date until `shutdown` completes; looks again at least every
    /// [`PROFILE_RESYNC_PERIOD`].
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        let (clusters, w1) = watch::cache::<ManagedCluster>(&self.client);
        let (sets, w2) = watch::cache::<ManagedClusterSet>(&self.client);
        let (bindings, w3) = watch::cache::<ManagedClusterSetBinding>(&self.client);
        let (profiles, w4) = watch::cache::<ClusterProfile>(&self.client);
        let ready = async {
            let _ = clusters.wait_until_ready().await;
            let _ = sets.wait_until_ready().await;
            let _ = bindings.wait_until_ready().await;
            let _ = profiles.wait_until_ready().await;
        };
        let this = &self;
        let stores = (&clusters, &sets, &bindings, &profiles);
        watch::run_loop(
            vec![w1, w2, w3, w4],
            ready,
            self.synced.as_deref(),
            shutdown,
            PROFILE_RESYNC_PERIOD,
            move || async move {
                let (c, s, b, p) = (
                    stores.0.state(),
                    stores.1.state(),
                    stores.2.state(),
                    stores.3.state(),
                );
                let result = this
                    .reconcile_objects(&refs(&c), &refs(&s), &refs(&b), &refs(&p))
                    .await;
                watch::round_of(&this.said, "ClusterProfile", result, |outcome| {
                    if outcome.writes > 0 {
                        tracing::debug!(writes = outcome.writes, "ClusterProfiles reconciled");
                    }
                    Round::default()
                })
            },
        )
        .await;
    }
}

/// The objects behind the cache's `Arc`s.
fn refs<K>(items: &[Arc<K>]) -> Vec<&K> {
    items.iter().map(AsRef::as_ref).collect()
}
