//! The hub inventory controller: the I/O shell around [`plan`](super::plan).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::cluster::v1::{ManagedCluster, Taint};
use ocm_api::cluster::v1beta2::{
    ManagedClusterSelector, ManagedClusterSet, ManagedClusterSetBinding,
};
use ocm_api::constants::{cluster as c, labels};
use serde_json::json;

use super::{InventoryChange, InventoryOptions, plan};
use crate::error::{Error, kube_error};
use crate::watch::{self, Round};

/// How often [`ClusterInventoryController::run`] looks at the hub even without changes
/// (upstream re-checks the well-known sets every 10 seconds).
pub const INVENTORY_RESYNC_PERIOD: Duration = Duration::from_secs(10);

/// What one pass wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InventoryOutcome {
    /// Writes made.
    pub writes: usize,
    /// Objects skipped because they could not be evaluated (for example an invalid
    /// selector), with the reason.
    pub skipped: Vec<String>,
}

/// The hub's cluster inventory controllers in one: ManagedClusterSet `ClusterSetEmpty`,
/// ManagedClusterSetBinding `Bound`, the `default` and `global` sets, the optional default
/// cluster-set label, and the health taints.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use kube::api::{Api, PostParams};
/// use ocm_api::cluster::v1beta2::ManagedClusterSet;
/// use ocm_placement::inventory::ClusterInventoryController;
///
/// let hub = ocm_testkit::FakeCluster::new();
/// ocm_testkit::install_crds(&hub)?;
/// let controller = ClusterInventoryController::new(hub.client());
/// controller.reconcile_all().await?;
/// let set = Api::<ManagedClusterSet>::all(hub.client()).get("global").await?;
/// let cond = &set.status.unwrap().conditions.unwrap()[0];
/// assert_eq!(cond.reason, "NoClusterMatched");
/// // A second pass has nothing to do.
/// assert_eq!(controller.reconcile_all().await?.writes, 0);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ClusterInventoryController {
    client: Client,
    clock: Arc<dyn Clock>,
    options: InventoryOptions,
    synced: Option<Arc<AtomicBool>>,
    /// What was last logged: a problem found again on every pass is logged once per change.
    said: Arc<ocm_api::repeats::LastSaid>,
}

impl std::fmt::Debug for ClusterInventoryController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterInventoryController")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl ClusterInventoryController {
    /// A controller with [`InventoryOptions::default`] and the wall clock.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            clock: Arc::new(SystemClock),
            options: InventoryOptions::default(),
            synced: None,
            said: Arc::default(),
        }
    }

    /// Uses `clock` for condition times and taint `timeAdded`.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets `flag` once [`ClusterInventoryController::run`]'s informers have listed (for a
    /// readiness probe); it stays as it is otherwise, so reset it before a new `run`.
    #[must_use]
    pub fn with_synced_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.synced = Some(flag);
        self
    }

    /// Uses `options` to choose the duties.
    #[must_use]
    pub fn with_options(mut self, options: InventoryOptions) -> Self {
        self.options = options;
        self
    }

    /// Lists the hub and makes the writes one pass needs; nothing is written when the hub is
    /// up to date.
    pub async fn reconcile_all(&self) -> Result<InventoryOutcome, Error> {
        let clusters = watch::list_all::<ManagedCluster>(&self.client).await?.0;
        let sets = watch::list_all::<ManagedClusterSet>(&self.client).await?.0;
        let bindings = watch::list_all::<ManagedClusterSetBinding>(&self.client)
            .await?
            .0;
        self.reconcile_objects(&clusters, &sets, &bindings).await
    }

    /// Makes the writes one pass needs for the given objects (for example from watch caches).
    pub async fn reconcile_objects(
        &self,
        clusters: &[ManagedCluster],
        sets: &[ManagedClusterSet],
        bindings: &[ManagedClusterSetBinding],
    ) -> Result<InventoryOutcome, Error> {
        let plan = plan(clusters, sets, bindings, &self.options, self.clock.now());
        // Each skipped object is logged when it starts being skipped, not on every pass.
        let skipped_now = plan.errors.iter().map(ToString::to_string);
        for skipped in self.said.news("skipped", skipped_now) {
            tracing::warn!(%skipped, "inventory object skipped");
        }
        let mut outcome = InventoryOutcome {
            writes: 0,
            skipped: plan.errors.clone(),
        };
        let mut errors = Vec::new();
        for change in plan.changes {
            match self.apply(change, clusters, sets).await {
                Ok(()) => outcome.writes += 1,
                Err(e) => errors.push(e),
            }
        }
        match errors.len() {
            0 => Ok(outcome),
            1 => Err(errors.remove(0)),
            _ => Err(Error::Several(errors)),
        }
    }

    async fn apply(
        &self,
        change: InventoryChange,
        known: &[ManagedCluster],
        sets: &[ManagedClusterSet],
    ) -> Result<(), Error> {
        let clusters: Api<ManagedCluster> = Api::all(self.client.clone());
        let set_api: Api<ManagedClusterSet> = Api::all(self.client.clone());
        let params = PatchParams::default();
        match change {
            InventoryChange::LabelClusterIntoDefaultSet { cluster } => {
                let patch =
                    json!({"metadata": {"labels": {labels::CLUSTER_SET: c::DEFAULT_CLUSTER_SET}}});
                clusters
                    .patch(&cluster, &params, &Patch::Merge(&patch))
                    .await
                    .map_err(kube_error(format!("label ManagedCluster {cluster}")))?;
            }
            InventoryChange::SetClusterTaints {
                cluster,
                taints,
                resource_version,
            } => {
                let taints = taints_to_send(known, &cluster, taints);
                let mut patch = json!({"spec": {"taints": taints}});
                if let Some(rv) = resource_version {
                    patch["metadata"] = json!({"resourceVersion": rv});
                }
                clusters
                    .patch(&cluster, &params, &Patch::Merge(&patch))
                    .await
                    .map_err(kube_error(format!(
                        "update taints of ManagedCluster {cluster}"
                    )))?;
            }
            InventoryChange::CreateSet(set) => {
                let name = set.metadata.name.clone().unwrap_or_default();
                match set_api.create(&PostParams::default(), &*set).await {
                    Ok(_) => {}
                    // Someone else made it in the meantime: fine.
                    Err(kube::Error::Api(status)) if status.code == 409 => {}
                    Err(e) => {
                        return Err(kube_error(format!("create ManagedClusterSet {name}"))(e));
                    }
                }
            }
            InventoryChange::RestoreSetSelector { set, selector } => {
                self.restore_selector(&set_api, sets, &set, selector)
                    .await?;
            }
            InventoryChange::SetStatus { set, conditions } => {
                let patch = json!({"status": {"conditions": conditions}});
                set_api
                    .patch_status(&set, &params, &Patch::Merge(&patch))
                    .await
                    .map_err(kube_error(format!(
                        "update status of ManagedClusterSet {set}"
                    )))?;
            }
            InventoryChange::BindingStatus {
                namespace,
                name,
                conditions,
            } => {
                let api: Api<ManagedClusterSetBinding> =
                    Api::namespaced(self.client.clone(), &namespace);
                let patch = json!({"status": {"conditions": conditions}});
                api.patch_status(&name, &params, &Patch::Merge(&patch))
                    .await
                    .map_err(kube_error(format!(
                        "update status of ManagedClusterSetBinding {namespace}/{name}"
                    )))?;
            }
        }
        Ok(())
    }

    /// Puts `selector` back on the ManagedClusterSet `set` (the cached copy, or read when
    /// the cache has none).
    async fn restore_selector(
        &self,
        set_api: &Api<ManagedClusterSet>,
        sets: &[ManagedClusterSet],
        set: &str,
        selector: ManagedClusterSelector,
    ) -> Result<(), Error> {
        // A replace (not a merge patch) so that fields of a changed selector go away;
        // the resourceVersion guards against overwriting a concurrent change.
        let mut object = match sets
            .iter()
            .find(|s| s.metadata.name.as_deref() == Some(set))
        {
            Some(found) => found.clone(),
            None => set_api
                .get(set)
                .await
                .map_err(kube_error(format!("get ManagedClusterSet {set}")))?,
        };
        object.spec.cluster_selector = Some(selector);
        object.status = None;
        set_api
            .replace(set, &PostParams::default(), &object)
            .await
            .map_err(kube_error(format!(
                "restore selector of ManagedClusterSet {set}"
            )))?;
        Ok(())
    }

    /// Watches ManagedClusters, ManagedClusterSets and bindings and keeps the inventory up to
    /// date until `shutdown` completes; looks again at least every [`INVENTORY_RESYNC_PERIOD`].
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        let (clusters, w1) = watch::cache::<ManagedCluster>(&self.client);
        let (sets, w2) = watch::cache::<ManagedClusterSet>(&self.client);
        let (bindings, w3) = watch::cache::<ManagedClusterSetBinding>(&self.client);
        let ready = async {
            let _ = clusters.wait_until_ready().await;
            let _ = sets.wait_until_ready().await;
            let _ = bindings.wait_until_ready().await;
        };
        let this = &self;
        let stores = (&clusters, &sets, &bindings);
        watch::run_loop(
            vec![w1, w2, w3],
            ready,
            self.synced.as_deref(),
            shutdown,
            INVENTORY_RESYNC_PERIOD,
            move || async move {
                let (c, s, b) = (
                    owned(stores.0.state()),
                    owned(stores.1.state()),
                    owned(stores.2.state()),
                );
                let result = this.reconcile_objects(&c, &s, &b).await;
                watch::round_of(&this.said, "inventory", result, |outcome| {
                    if outcome.writes > 0 {
                        tracing::debug!(writes = outcome.writes, "inventory reconciled");
                    }
                    Round::default()
                })
            },
        )
        .await;
    }
}

fn owned<K: Clone>(items: Vec<Arc<K>>) -> Vec<K> {
    items.iter().map(|a| K::clone(a)).collect()
}

/// The taints to send for `cluster`: the hub's mutating webhook stamps `timeAdded` on new and
/// changed taints and refuses a client-set one, so those go without it, as upstream's taint
/// controller sends them; unchanged taints (as `known` has them) keep theirs.
fn taints_to_send(known: &[ManagedCluster], cluster: &str, taints: Vec<Taint>) -> Vec<Taint> {
    let before = known
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(cluster))
        .map(|c| c.taints().to_vec())
        .unwrap_or_default();
    taints
        .into_iter()
        .map(|mut t| {
            let kept = before.iter().any(|b| {
                b.key == t.key
                    && b.value.as_deref().unwrap_or_default()
                        == t.value.as_deref().unwrap_or_default()
                    && b.effect == t.effect
            });
            if !kept {
                t.time_added = None;
            }
            t
        })
        .collect()
}
