//! The SIG PlacementDecision controller: the I/O shell around [`plan`](super::plan).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use ocm_api::cluster::v1beta1::PlacementDecision;
use ocm_api::multicluster::v1alpha1::PlacementDecision as SigPlacementDecision;

use super::{SigChange, plan};
use crate::Error;
use crate::watch::{self, Round};

/// How often [`SigPlacementDecisionController::run`] looks at the hub even without changes
/// (the informer resync of upstream's placement controller).
pub const SIG_RESYNC_PERIOD: Duration = Duration::from_secs(10 * 60);

/// What one pass wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SigOutcome {
    /// Writes made (creates, updates, deletes).
    pub writes: usize,
    /// OCM PlacementDecisions that could not be mirrored, with the reason.
    pub skipped: Vec<String>,
}

/// Mirrors OCM PlacementDecisions as SIG-Multicluster PlacementDecisions (the
/// `SIGPlacementDecision` gate; see [the module docs](super)).
///
/// The hub must serve the SIG CRD (`ocm_api::crd::multicluster_crds()`).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use kube::api::{Api, PostParams};
/// use ocm_api::cluster::v1beta1::PlacementDecision;
/// use ocm_api::multicluster::v1alpha1::PlacementDecision as SigPlacementDecision;
/// use ocm_placement::sig::SigPlacementDecisionController;
///
/// let hub = ocm_testkit::FakeCluster::new();
/// ocm_testkit::install_crds(&hub)?;
/// let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
///     Api::all(hub.client());
/// for crd in ocm_api::crd::multicluster_crds() {
///     crds.create(&PostParams::default(), &crd).await?;
/// }
/// let ocm: PlacementDecision = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "web-decision-1", "namespace": "default", "labels": {
///         "cluster.open-cluster-management.io/placement": "web"}}
/// }))?;
/// Api::<PlacementDecision>::namespaced(hub.client(), "default")
///     .create(&PostParams::default(), &ocm)
///     .await?;
///
/// let controller = SigPlacementDecisionController::new(hub.client());
/// assert_eq!(controller.reconcile_all().await?.writes, 1);
/// let sig = Api::<SigPlacementDecision>::namespaced(hub.client(), "default")
///     .get("web-decision-1")
///     .await?;
/// assert_eq!(sig.spec.scheduler_name.as_deref(), Some("open-cluster-management"));
/// // A second pass has nothing to do.
/// assert_eq!(controller.reconcile_all().await?.writes, 0);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SigPlacementDecisionController {
    client: Client,
    synced: Option<Arc<AtomicBool>>,
    /// What was last logged: a problem found again on every pass is logged once per change.
    said: Arc<ocm_api::repeats::LastSaid>,
}

impl std::fmt::Debug for SigPlacementDecisionController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigPlacementDecisionController")
            .finish_non_exhaustive()
    }
}

impl SigPlacementDecisionController {
    /// A controller writing through `client`.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            synced: None,
            said: Arc::default(),
        }
    }

    /// Sets `flag` once [`SigPlacementDecisionController::run`]'s informers have listed (for a
    /// readiness probe); it stays as it is otherwise, so reset it before a new `run`.
    #[must_use]
    pub fn with_synced_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.synced = Some(flag);
        self
    }

    /// Lists both kinds and makes the writes one pass needs; nothing is written when every
    /// mirror is up to date.
    pub async fn reconcile_all(&self) -> Result<SigOutcome, Error> {
        let ocm = watch::list_all::<PlacementDecision>(&self.client).await?.0;
        let sig = watch::list_all::<SigPlacementDecision>(&self.client)
            .await?
            .0;
        self.reconcile_objects(
            &ocm.iter().collect::<Vec<_>>(),
            &sig.iter().collect::<Vec<_>>(),
        )
        .await
    }

    /// Makes the writes one pass needs for the given objects (for example from watch caches).
    pub async fn reconcile_objects(
        &self,
        ocm: &[&PlacementDecision],
        sig: &[&SigPlacementDecision],
    ) -> Result<SigOutcome, Error> {
        let plan = plan(ocm, sig);
        // Each skipped object is logged when it starts being skipped, not on every pass.
        let skipped_now = plan.skipped.iter().map(ToString::to_string);
        for skipped in self.said.news("skipped", skipped_now) {
            tracing::warn!(%skipped, "PlacementDecision not mirrored");
        }
        let mut outcome = SigOutcome {
            writes: 0,
            skipped: plan.skipped,
        };
        let mut errors = Vec::new();
        for change in plan.changes {
            match self.apply(change).await {
                Ok(true) => outcome.writes += 1,
                Ok(false) => {}
                Err(e) => errors.push(e),
            }
        }
        match errors.len() {
            0 => Ok(outcome),
            1 => Err(errors.remove(0)),
            _ => Err(Error::Several(errors)),
        }
    }

    /// Makes one write; `false` when there was nothing left to do (already deleted).
    async fn apply(&self, change: SigChange) -> Result<bool, Error> {
        let api = |namespace: &str| -> Api<SigPlacementDecision> {
            Api::namespaced(self.client.clone(), namespace)
        };
        let error = |action: String| move |source| Error::Kube { action, source };
        match change {
            SigChange::Create(decision) => {
                let (namespace, name) = names(&decision);
                api(&namespace)
                    .create(&PostParams::default(), &decision)
                    .await
                    .map_err(error(format!(
                        "create SIG PlacementDecision {namespace}/{name}"
                    )))?;
                tracing::debug!(%namespace, %name, "created SIG PlacementDecision");
            }
            SigChange::Update(decision) => {
                let (namespace, name) = names(&decision);
                api(&namespace)
                    .replace(&name, &PostParams::default(), &decision)
                    .await
                    .map_err(error(format!(
                        "update SIG PlacementDecision {namespace}/{name}"
                    )))?;
                tracing::debug!(%namespace, %name, "updated SIG PlacementDecision");
            }
            SigChange::Delete { namespace, name } => {
                match api(&namespace)
                    .delete(&name, &DeleteParams::default())
                    .await
                {
                    Ok(_) => tracing::debug!(%namespace, %name, "deleted SIG PlacementDecision"),
                    Err(kube::Error::Api(status)) if status.code == 404 => return Ok(false),
                    Err(e) => {
                        return Err(error(format!(
                            "delete SIG PlacementDecision {namespace}/{name}"
                        ))(e));
                    }
                }
            }
        }
        Ok(true)
    }

    /// Watches both kinds and keeps the mirrors up to date until `shutdown` completes; looks
    /// again at least every [`SIG_RESYNC_PERIOD`].
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) {
        let (ocm, w1) = watch::cache::<PlacementDecision>(&self.client);
        let (sig, w2) = watch::cache::<SigPlacementDecision>(&self.client);
        let ready = async {
            let _ = ocm.wait_until_ready().await;
            let _ = sig.wait_until_ready().await;
        };
        let this = &self;
        let stores = (&ocm, &sig);
        watch::run_loop(
            vec![w1, w2],
            ready,
            self.synced.as_deref(),
            shutdown,
            SIG_RESYNC_PERIOD,
            move || async move {
                let (ocm, sig) = (stores.0.state(), stores.1.state());
                let ocm: Vec<&PlacementDecision> = ocm.iter().map(AsRef::as_ref).collect();
                let sig: Vec<&SigPlacementDecision> = sig.iter().map(AsRef::as_ref).collect();
                let result = this.reconcile_objects(&ocm, &sig).await;
                watch::round_of(&this.said, "SIG PlacementDecision", result, |outcome| {
                    if outcome.writes > 0 {
                        tracing::debug!(
                            writes = outcome.writes,
                            "SIG PlacementDecisions reconciled"
                        );
                    }
                    Round::default()
                })
            },
        )
        .await;
    }
}

fn names(decision: &SigPlacementDecision) -> (String, String) {
    (
        decision.metadata.namespace.clone().unwrap_or_default(),
        decision.metadata.name.clone().unwrap_or_default(),
    )
}
