//! "One ManifestWork per decided cluster": the fan-out every placement consumer writes, as a
//! reusable synchroniser.
//!
//! [`PlacementFanout::reconcile`] reads the decisions of one Placement, renders a work for
//! each decided cluster (your closure gets the cluster name), applies it with the
//! [`WorkApplier`] (no write when nothing changed), deletes the works of clusters that are no
//! longer decided, and cleans up when the Placement goes. Rendering errors are reported per
//! cluster in the outcome; the other clusters keep converging.
//!
//! # Clean-up scheme (our addition)
//!
//! The works live in the cluster namespaces and the Placement in another namespace, so an
//! owner reference cannot tie them together. Instead:
//!
//! * every work carries three labels: [`OWNER_LABEL`] (the fan-out's name),
//!   [`PLACEMENT_NAMESPACE_LABEL`] and upstream's
//!   `work.open-cluster-management.io/placementname` (the Placement's name);
//! * the Placement gets the finalizer [`finalizer`]`(owner)` on the first reconcile;
//! * once the Placement is being deleted (or is gone), the next reconcile deletes every work
//!   with those labels and then removes the finalizer.
//!
//! # Objects it cannot decode
//!
//! The fan-out reads everything one object at a time (see `crate::read`): of the Placement
//! it reads only its finalizers and deletion timestamp, field by field, so a Placement that
//! does not decode as a whole is fanned out all the same; a work of the fan-out that does not
//! decode is still deleted when its cluster is no longer decided (and left out of
//! [`PlacementFanout::works`], logged at WARN once per resource version); a PlacementDecision
//! that does not decode fails the round with an error naming it (the clusters are unknown),
//! so nothing is created or deleted until it changes.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use ocm_api::work::v1::{Manifest, ManifestWorkSpec, ManifestsTemplate};
//! use ocm_work::fanout::PlacementFanout;
//!
//! let hub = ocm_testkit::FakeHub::new(2)?;
//! # let client = hub.hub().client();
//! # for (n, clusters) in [("web", vec!["cluster1", "cluster2"])] {
//! #     hub.hub().apply_yaml(&format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: apps}}\n---\napiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {{name: {n}, namespace: apps}}\nspec: {{}}\n---\napiVersion: cluster.open-cluster-management.io/v1beta1\nkind: PlacementDecision\nmetadata: {{name: {n}-decision-1, namespace: apps, labels: {{cluster.open-cluster-management.io/placement: {n}, cluster.open-cluster-management.io/decision-group-index: '0'}}}}\n"))?;
//! #     let api: kube::Api<ocm_api::cluster::v1beta1::PlacementDecision> = kube::Api::namespaced(client.clone(), "apps");
//! #     let decisions: Vec<_> = clusters.iter().map(|c| serde_json::json!({"clusterName": c, "reason": ""})).collect();
//! #     api.patch_status(&format!("{n}-decision-1"), &Default::default(), &kube::api::Patch::Merge(serde_json::json!({"status": {"decisions": decisions}}))).await?;
//! # }
//! // The placement apps/web decided cluster1 and cluster2.
//! let fanout = PlacementFanout::new(hub.hub().client(), "hello-app", "apps", "web", "hello")?;
//! let outcome = fanout
//!     .reconcile(&|cluster: &str| {
//!         let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
//!             "metadata": {"name": "hello", "namespace": "default"},
//!             "data": {"cluster": cluster}});
//!         Ok(ManifestWorkSpec {
//!             workload: Some(ManifestsTemplate { manifests: Some(vec![Manifest::new(cm)]) }),
//!             ..Default::default()
//!         })
//!     })
//!     .await?;
//! assert_eq!(outcome.applied, ["cluster1", "cluster2"]);
//! assert_eq!(fanout.works().await?.len(), 2);
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use ocm_api::cluster::v1beta1::ClustersTracker;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::constants::labels;
use ocm_api::k8s::object::RawObject;
use ocm_api::work::v1::{ManifestWork, ManifestWorkSpec};
use serde_json::json;

use crate::applier::WorkApplier;
use crate::read::{self, Decoder};
use crate::{Error, Result};

/// Label on every work of a fan-out: the fan-out's name (our addition).
pub const OWNER_LABEL: &str = "fanout.ocm-rs.io/owner";
/// Label on every work of a fan-out: the Placement's namespace (our addition).
pub const PLACEMENT_NAMESPACE_LABEL: &str = "fanout.ocm-rs.io/placement-namespace";

/// The finalizer a fan-out named `owner` puts on its Placement (our addition).
pub fn finalizer(owner: &str) -> String {
    format!("fanout.ocm-rs.io/{owner}")
}

/// Renders the work spec of one cluster; an `Err` is reported for that cluster only.
///
/// `'a` is how long the renderer may borrow: [`PlacementFanout::reconcile`] takes one that
/// borrows locals (`&Render<'_>`, any closure), [`PlacementFanout::run`] one that owns what it
/// uses (`Arc<Render<'static>>`), as it lives as long as the loop.
///
/// ```
/// # async fn demo(fanout: ocm_work::fanout::PlacementFanout) -> Result<(), ocm_work::Error> {
/// use ocm_api::work::v1::ManifestWorkSpec;
///
/// let template = ManifestWorkSpec::default(); // a local the renderer borrows
/// let render = |_cluster: &str| Ok::<_, String>(template.clone());
/// let outcome = fanout.reconcile(&render).await?;
/// # let _ = outcome;
/// # Ok(()) }
/// ```
pub type Render<'a> =
    dyn Fn(&str) -> std::result::Result<ManifestWorkSpec, String> + Send + Sync + 'a;

/// What one reconcile did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FanoutOutcome {
    /// The clusters the Placement decides now.
    pub decided: BTreeSet<String>,
    /// Clusters whose work was applied (created, updated or found up to date), in name order.
    pub applied: Vec<String>,
    /// Clusters whose work was deleted.
    pub deleted: Vec<String>,
    /// Clusters whose work could not be rendered or applied, with the reason.
    pub failed: Vec<(String, String)>,
    /// The Placement is gone or being deleted; every work was deleted.
    pub placement_deleted: bool,
    /// The Placement does not exist, this fan-out never found it and has no works: it was
    /// never there (a misspelt name, or not created yet), rather than deleted.
    /// [`PlacementFanout::run`] logs it at WARN once per change.
    pub placement_missing: bool,
}

/// What a fan-out reads of its Placement.
struct PlacementState {
    finalizers: Vec<String>,
    deleting: bool,
    resource_version: Option<String>,
}

/// Keeps one ManifestWork per cluster a Placement decides.
#[derive(Clone)]
pub struct PlacementFanout {
    client: Client,
    applier: WorkApplier,
    owner: String,
    namespace: String,
    placement: String,
    work_name: String,
    decoder: Decoder,
    /// Whether this fan-out (or a clone) has found its Placement: a Placement that is gone
    /// afterwards was deleted, not misspelt.
    seen: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for PlacementFanout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlacementFanout")
            .field("owner", &self.owner)
            .field(
                "placement",
                &format!("{}/{}", self.namespace, self.placement),
            )
            .field("work_name", &self.work_name)
            .finish_non_exhaustive()
    }
}

fn check_label_value(what: &str, value: &str) -> Result<()> {
    let ok = !value.is_empty()
        && value.len() <= 63
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && value.starts_with(|c: char| c.is_ascii_alphanumeric())
        && value.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidObject {
            object: format!("PlacementFanout {what} {value:?}"),
            message: "must be a label value: 1 to 63 letters, digits, '-', '_' or '.', \
                      starting and ending with a letter or digit"
                .into(),
        })
    }
}

impl PlacementFanout {
    /// A fan-out named `owner` (a label value, unique among the fan-outs of the hub) of the
    /// work `work_name` to the clusters of Placement `namespace/placement`.
    pub fn new(
        client: Client,
        owner: impl Into<String>,
        namespace: impl Into<String>,
        placement: impl Into<String>,
        work_name: impl Into<String>,
    ) -> Result<Self> {
        let decoder = Decoder::default();
        let me = Self {
            applier: WorkApplier::new(client.clone()).with_decoder(decoder.clone()),
            decoder,
            client,
            owner: owner.into(),
            namespace: namespace.into(),
            placement: placement.into(),
            work_name: work_name.into(),
            seen: Arc::default(),
        };
        check_label_value("owner", &me.owner)?;
        check_label_value("placement namespace", &me.namespace)?;
        check_label_value("placement name", &me.placement)?;
        Ok(me)
    }

    /// Uses `applier` (for example with another field manager).
    #[must_use]
    pub fn with_applier(mut self, applier: WorkApplier) -> Self {
        self.applier = applier.with_decoder(self.decoder.clone());
        self
    }

    /// The label selector of this fan-out's works.
    pub fn selector(&self) -> String {
        format!(
            "{OWNER_LABEL}={},{PLACEMENT_NAMESPACE_LABEL}={},{}={}",
            self.owner,
            self.namespace,
            labels::PLACEMENT_NAME,
            self.placement
        )
    }

    /// This fan-out's works, by cluster (a work that does not decode is left out and logged
    /// at WARN once per resource version).
    pub async fn works(&self) -> Result<BTreeMap<String, ManifestWork>> {
        let mut works = BTreeMap::new();
        for raw in self.raw_works().await? {
            if let Ok(work) = self.decoder.decode::<ManifestWork>("ManifestWork", &raw) {
                works.insert(work.namespace().unwrap_or_default(), work);
            }
        }
        Ok(works)
    }

    /// This fan-out's works as the hub holds them, decodable or not.
    async fn raw_works(&self) -> Result<Vec<RawObject>> {
        let api = read::api::<ManifestWork>(&self.client, None);
        let mut items = self
            .decoder
            .list_raw(
                &api,
                &ListParams::default().labels(&self.selector()),
                || format!("list ManifestWorks of fan-out {}", self.owner),
            )
            .await?;
        items.retain(|w| w.meta().name.as_deref() == Some(self.work_name.as_str()));
        Ok(items)
    }

    /// The clusters that have a work of this fan-out, decodable or not.
    async fn work_clusters(&self) -> Result<BTreeSet<String>> {
        Ok(self
            .raw_works()
            .await?
            .iter()
            .filter_map(|w| w.meta().namespace.clone())
            .collect())
    }

    /// The Placement's finalizers and deletion timestamp, read field by field (`None` when it
    /// is gone): the fan-out needs nothing else of it.
    async fn placement(&self, placements: &Api<RawObject>) -> Result<Option<PlacementState>> {
        let raw = self
            .decoder
            .get_raw(placements, "Placement", &self.placement)
            .await?;
        Ok(raw.map(|raw| PlacementState {
            finalizers: read::field(&raw, &["metadata", "finalizers"]).unwrap_or_default(),
            deleting: read::field::<serde_json::Value>(&raw, &["metadata", "deletionTimestamp"])
                .is_some_and(|t| !t.is_null()),
            resource_version: raw.meta().resource_version.clone(),
        }))
    }

    /// One reconcile: see the [module docs](self).
    pub async fn reconcile(&self, render: &Render<'_>) -> Result<FanoutOutcome> {
        self.decoder.stacked(self.reconcile_round(render)).await
    }

    async fn reconcile_round(&self, render: &Render<'_>) -> Result<FanoutOutcome> {
        let mut outcome = FanoutOutcome::default();
        let placements = read::api::<Placement>(&self.client, Some(&self.namespace));
        let placement = self.placement(&placements).await?;
        if placement.is_some() {
            self.seen.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let fin = finalizer(&self.owner);
        let Some(placement) = placement.filter(|p| !p.deleting) else {
            return self.clean_up(&placements, &fin, outcome).await;
        };
        if !placement.finalizers.contains(&fin) {
            let mut list = placement.finalizers.clone();
            list.push(fin.clone());
            self.patch_finalizers(
                &placements,
                &placement.resource_version,
                &list,
                "add finalizer to",
            )
            .await?;
        }

        let decisions = read::api::<PlacementDecision>(&self.client, Some(&self.namespace));
        let mut tracker = ClustersTracker::new(&self.namespace, &self.placement);
        let (items, failures) = self
            .decoder
            .list::<PlacementDecision>(
                &decisions,
                &ListParams::default().labels(&tracker.label_selector()),
                "PlacementDecision",
                || {
                    format!(
                        "list PlacementDecisions of {}/{}",
                        self.namespace, self.placement
                    )
                },
            )
            .await?;
        // Without every decision the decided clusters are unknown: nothing is changed.
        if let Some(failure) = failures.first() {
            return Err(read::undecodable("PlacementDecision", failure));
        }
        tracker.refresh(&items).map_err(|source| Error::Rollout {
            placement: format!("{}/{}", self.namespace, self.placement),
            source,
        })?;
        outcome.decided = tracker.clusters();
        outcome.decided.retain(|c| !c.is_empty());

        let existing = self.work_clusters().await?;
        let mut errors = Vec::new();
        for cluster in &outcome.decided {
            let spec = match render(cluster) {
                Ok(spec) => spec,
                Err(message) => {
                    tracing::warn!(cluster, %message, owner = %self.owner, "rendering the work failed");
                    outcome.failed.push((cluster.clone(), message));
                    continue;
                }
            };
            let work = self.work_for(cluster, spec);
            if let Err(e) = work.validate() {
                outcome.failed.push((cluster.clone(), e.to_string()));
                continue;
            }
            match self.applier.apply(&work).await {
                Ok(_) => outcome.applied.push(cluster.clone()),
                Err(e) => outcome.failed.push((cluster.clone(), e.to_string())),
            }
        }
        for cluster in &existing {
            if outcome.decided.contains(cluster) {
                continue;
            }
            match self.applier.delete(cluster, &self.work_name).await {
                Ok(()) => outcome.deleted.push(cluster.clone()),
                Err(e) => errors.push(e),
            }
        }
        Error::aggregate(errors)?;
        Ok(outcome)
    }

    async fn clean_up(
        &self,
        placements: &Api<RawObject>,
        fin: &str,
        mut outcome: FanoutOutcome,
    ) -> Result<FanoutOutcome> {
        let clusters = self.work_clusters().await?;
        // Not seen yet means not found this round either (a found one is marked seen first).
        if clusters.is_empty() && !self.seen.load(std::sync::atomic::Ordering::Relaxed) {
            // Never found, and nothing was ever fanned out from it: not a deletion to report.
            outcome.placement_missing = true;
            return Ok(outcome);
        }
        outcome.placement_deleted = true;
        let mut errors = Vec::new();
        for cluster in clusters {
            match self.applier.delete(&cluster, &self.work_name).await {
                Ok(()) => outcome.deleted.push(cluster),
                Err(e) => errors.push(e),
            }
        }
        Error::aggregate(errors)?;
        if let Some(p) = self.placement(placements).await?
            && p.finalizers.iter().any(|f| f == fin)
        {
            let rest: Vec<&String> = p.finalizers.iter().filter(|f| *f != fin).collect();
            self.patch_finalizers(
                placements,
                &p.resource_version,
                &rest,
                "remove finalizer from",
            )
            .await?;
        }
        Ok(outcome)
    }

    /// Sets the Placement's finalizers to `finalizers`, guarded by `resource_version`;
    /// `action` names the change in the error ("add finalizer to").
    async fn patch_finalizers<T: serde::Serialize>(
        &self,
        placements: &Api<RawObject>,
        resource_version: &Option<String>,
        finalizers: &[T],
        action: &str,
    ) -> Result<()> {
        let patch = json!({"metadata": {
            "resourceVersion": resource_version,
            "finalizers": finalizers,
        }});
        placements
            .patch(
                &self.placement,
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .map_err(|e| {
                Error::kube(
                    format!("{action} Placement {}/{}", self.namespace, self.placement),
                    e,
                )
            })?;
        Ok(())
    }

    fn work_for(&self, cluster: &str, spec: ManifestWorkSpec) -> ManifestWork {
        let mut work = ManifestWork {
            metadata: Default::default(),
            spec,
            status: None,
        };
        work.metadata.name = Some(self.work_name.clone());
        work.metadata.namespace = Some(cluster.to_string());
        work.metadata.labels = Some(BTreeMap::from([
            (OWNER_LABEL.to_string(), self.owner.clone()),
            (
                PLACEMENT_NAMESPACE_LABEL.to_string(),
                self.namespace.clone(),
            ),
            (labels::PLACEMENT_NAME.to_string(), self.placement.clone()),
        ]));
        work
    }

    /// Reconciles until `shutdown` completes: at once, whenever the Placement, its decisions
    /// or this fan-out's works change, and every `resync` (failed rounds are retried at the
    /// next event or resync and logged).
    pub async fn run(
        self,
        render: Arc<Render<'static>>,
        resync: Duration,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) {
        use crate::runtime::watch;
        let changes = vec![
            watch::changes(
                read::api::<PlacementDecision>(&self.client, Some(&self.namespace)),
                watcher::Config::default()
                    .labels(&PlacementDecision::selector_for(&self.placement)),
            ),
            watch::changes(
                read::api::<Placement>(&self.client, Some(&self.namespace)),
                watcher::Config::default().fields(&format!("metadata.name={}", self.placement)),
            ),
            watch::changes(
                read::api::<ManifestWork>(&self.client, None),
                watcher::Config::default().labels(&self.selector()),
            ),
        ];
        let this = &self;
        let render = render.as_ref();
        // Whether the missing Placement was logged already.
        let missing_said = &std::sync::atomic::AtomicBool::new(false);
        ocm_api::rounds::run_rounds(changes, Duration::ZERO, shutdown, move || async move {
            let outcome = this.reconcile(render).await;
            let missing = matches!(&outcome, Ok(o) if o.placement_missing);
            let said_before = missing_said.swap(missing, std::sync::atomic::Ordering::Relaxed);
            if missing && !said_before {
                tracing::warn!(
                    owner = %this.owner,
                    "Placement {}/{} not found: nothing to fan out until it exists (is the name right?)",
                    this.namespace,
                    this.placement
                );
            }
            match outcome {
                Ok(o) if !o.failed.is_empty() => {
                    tracing::warn!(owner = %this.owner, failed = ?o.failed, "fan-out round left clusters behind");
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(owner = %this.owner, %error, "fan-out round failed"),
            }
            resync
        })
        .await;
    }
}
