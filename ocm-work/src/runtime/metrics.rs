//! The metrics the binaries export on `/metrics` ([`crate::runtime::server`]), with the
//! Prometheus project's client (`prometheus-client`).
//!
//! | series | labels | what |
//! |---|---|---|
//! | `workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`, `workqueue_retries_total` | `name` | the agent's work queue (client-go's names, see [`crate::runtime::workqueue`]) |
//! | `ocm_reconcile_total` | `controller`, `result` (`success`, `error`) | reconciles |
//! | `ocm_reconcile_errors_total` | `controller` | failed reconciles |
//! | `ocm_reconcile_duration_seconds` | `controller` | how long reconciles take |
//! | `ocm_work_apply_requests_total` | `verb` (`get`, `create`, `update`, `patch`, `apply`, `delete`) | requests the agent's apply engine and garbage collection send to the managed cluster |
//! | `ocm_work_feedback_scrapes_total` | `scrape_type` (`Poll`, `Watch`) | status feedback reads of resources with feedback rules |
//! | `ocm_placement_schedule_duration_seconds` | | how long scheduling one placement takes (the scheduler core) |
//! | `ocm_placement_schedules_total` | `result` | placements scheduled |
//! | `ocm_manifestworkreplicaset_clusters` | `namespace`, `name`, `state` (`total`, `applied`, `available`, `progressing`, `degraded`) | rollout progress of each ManifestWorkReplicaSet, from its status summary |
//! | `leader_election_master_status` | `name` | 1 while this replica leads the Lease `name` (client-go's series) |
//!
//! ```
//! use ocm_work::runtime::metrics::Metrics;
//!
//! let metrics = Metrics::new();
//! let agent = metrics.agent(); // give it to WorkAgent::with_metrics
//! agent.apply_request("create");
//! assert!(metrics.encode().contains("ocm_work_apply_requests_total{verb=\"create\"} 1"));
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::collections::HashMap;

use kube::runtime::reflector::Store;
use kube::{Resource, ResourceExt};
use ocm_api::k8s::object::RawObject;
use ocm_api::work::v1alpha1::{ManifestWorkReplicaSet, ManifestWorkReplicaSetSummary};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::sync::watch;

use crate::read::Decoder;
use crate::runtime::leader::LeaderState;
use crate::runtime::workqueue::QueueTracker;

type Labels = Vec<(&'static str, String)>;

/// A registry of metrics, encoded on each scrape. Cloning shares it.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
}

impl Metrics {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers with the underlying registry (for metrics of your own).
    pub fn register(&self, f: impl FnOnce(&mut Registry)) {
        f(&mut self.lock());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The work agent's metrics, registered here. Call once per registry.
    pub fn agent(&self) -> AgentMetrics {
        let mut registry = self.lock();
        AgentMetrics::register(&mut registry)
    }

    /// The hub controllers' metrics, registered here. Call once per registry.
    pub fn hub(&self) -> HubMetrics {
        let mut registry = self.lock();
        HubMetrics::register(&mut registry)
    }

    /// Exports the rollout progress of the replica sets in `store` (a reflector the caller
    /// keeps running).
    pub fn replica_set_rollouts(&self, store: Store<ManifestWorkReplicaSet>) {
        self.lock().register_collector(Box::new(RolloutCollector {
            source: Rollouts::Typed(store),
        }));
    }

    /// Exports the rollout progress of every ManifestWorkReplicaSet on the hub behind
    /// `client`: registers the collector and returns the reflector that keeps it current (run
    /// it until shutdown; watch errors are retried with kube's default backoff).
    ///
    /// The reflector keeps the replica sets as raw JSON and the collector reads only each one's
    /// `status.summary` (once per resource version): a replica set of any depth costs its text,
    /// and one whose summary does not decode is left out of the series (logged at WARN once
    /// per resource version) while every other is exported.
    pub fn follow_replica_set_rollouts(
        &self,
        client: kube::Client,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        use futures::StreamExt;
        use kube::runtime::WatchStreamExt;
        let resource = kube::core::ApiResource::erase::<ManifestWorkReplicaSet>(&());
        let writer = kube::runtime::reflector::store::Writer::<RawObject>::new(resource.clone());
        self.lock().register_collector(Box::new(RolloutCollector {
            source: Rollouts::Raw {
                store: writer.as_reader(),
                summaries: Mutex::default(),
                decoder: Decoder::default(),
            },
        }));
        let api = kube::Api::<RawObject>::all_with(client, &resource);
        let stream = kube::runtime::reflector(
            writer,
            kube::runtime::watcher(api, kube::runtime::watcher::Config::default()),
        )
        .default_backoff();
        async move {
            stream
                .for_each(|event| {
                    if let Err(error) = event {
                        tracing::debug!(%error, "ManifestWorkReplicaSet watch for metrics");
                    }
                    futures::future::ready(())
                })
                .await;
        }
    }

    /// Exports `leader_election_master_status{name}` from an elector's state.
    pub fn leader(&self, lease: &str, state: watch::Receiver<LeaderState>) {
        self.lock().register_collector(Box::new(LeaderCollector {
            lease: lease.to_string(),
            state,
        }));
    }

    /// Everything, in the Prometheus text format (version 0.0.4).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.lock());
        out
    }

    /// Everything, in the OpenMetrics text format (ends with `# EOF`).
    pub fn encode_openmetrics(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.lock());
        out
    }
}

fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

/// Reconcile counts, errors and durations of controllers (label `controller`).
#[derive(Clone, Debug)]
pub struct ReconcileMetrics {
    total: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    duration: Family<Labels, Histogram>,
}

impl ReconcileMetrics {
    fn register(registry: &mut Registry) -> Self {
        let me = Self {
            total: Family::default(),
            errors: Family::default(),
            duration: Family::new_with_constructor(duration_histogram),
        };
        registry.register(
            "ocm_reconcile",
            "Reconciles per controller and result",
            me.total.clone(),
        );
        registry.register(
            "ocm_reconcile_errors",
            "Failed reconciles per controller",
            me.errors.clone(),
        );
        registry.register(
            "ocm_reconcile_duration_seconds",
            "How long reconciles take, per controller",
            me.duration.clone(),
        );
        me
    }

    /// A reconcile of `controller` took `elapsed` and succeeded or not.
    pub fn observe(&self, controller: &str, elapsed: Duration, ok: bool) {
        let result = if ok { "success" } else { "error" };
        self.total
            .get_or_create(&vec![
                ("controller", controller.to_string()),
                ("result", result.to_string()),
            ])
            .inc();
        if !ok {
            self.errors
                .get_or_create(&vec![("controller", controller.to_string())])
                .inc();
        }
        self.duration
            .get_or_create(&vec![("controller", controller.to_string())])
            .observe(elapsed.as_secs_f64());
    }
}

/// The work agent's metrics; give them to `WorkAgent::with_metrics`.
#[derive(Clone, Debug)]
pub struct AgentMetrics {
    /// The ManifestWork queue.
    pub queue: QueueTracker,
    /// Reconciles (`controller="manifestwork"`).
    pub reconcile: ReconcileMetrics,
    apply_requests: Family<Labels, Counter>,
    feedback_scrapes: Family<Labels, Counter>,
}

/// The `controller` label of the agent's reconciles and the `name` of its queue.
pub const AGENT_CONTROLLER: &str = "manifestwork";

impl AgentMetrics {
    fn register(registry: &mut Registry) -> Self {
        let me = Self {
            queue: QueueTracker::new(AGENT_CONTROLLER, registry),
            reconcile: ReconcileMetrics::register(registry),
            apply_requests: Family::default(),
            feedback_scrapes: Family::default(),
        };
        registry.register(
            "ocm_work_apply_requests",
            "Requests the work agent's apply engine and garbage collection send to the managed cluster, by verb",
            me.apply_requests.clone(),
        );
        registry.register(
            "ocm_work_feedback_scrapes",
            "Status feedback reads of resources with feedback rules, by scrape type",
            me.feedback_scrapes.clone(),
        );
        me
    }

    /// Counts one request with this verb.
    pub fn apply_request(&self, verb: &str) {
        self.apply_requests
            .get_or_create(&vec![("verb", verb.to_string())])
            .inc();
    }

    /// Counts one feedback read (`Poll` or `Watch`).
    pub fn feedback_scrape(&self, scrape_type: &str) {
        self.feedback_scrapes
            .get_or_create(&vec![("scrape_type", scrape_type.to_string())])
            .inc();
    }
}

/// The hub controllers' metrics.
#[derive(Clone, Debug)]
pub struct HubMetrics {
    /// Reconciles (`controller="placement"`, one per placement scheduled).
    pub reconcile: ReconcileMetrics,
    schedule_duration: Histogram,
    schedules: Family<Labels, Counter>,
}

impl HubMetrics {
    fn register(registry: &mut Registry) -> Self {
        let me = Self {
            reconcile: ReconcileMetrics::register(registry),
            schedule_duration: Histogram::new(exponential_buckets(0.0001, 2.0, 18)),
            schedules: Family::default(),
        };
        registry.register(
            "ocm_placement_schedule_duration_seconds",
            "How long scheduling one placement takes (the scheduler core)",
            me.schedule_duration.clone(),
        );
        registry.register(
            "ocm_placement_schedules",
            "Placements scheduled, by result",
            me.schedules.clone(),
        );
        me
    }
}

impl HubMetrics {
    /// Records that scheduling one placement took `elapsed` and succeeded or not (what the
    /// Placement controller reports through its `ScheduleObserver` hook). A hub binary
    /// connects the two with a closure:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// use ocm_placement::controller::ScheduleObserver;
    /// use ocm_work::runtime::metrics::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// let hub = metrics.hub();
    /// // What `PlacementController::with_observer` takes.
    /// let observer: Arc<dyn ScheduleObserver> = Arc::new(
    ///     move |namespace: &str, name: &str, elapsed: Duration, succeeded: bool| {
    ///         hub.scheduled(namespace, name, elapsed, succeeded)
    ///     },
    /// );
    /// observer.scheduled("default", "placement1", Duration::from_millis(2), true);
    /// assert!(metrics.encode().contains("ocm_placement_schedules_total{result=\"success\"} 1"));
    /// ```
    pub fn scheduled(&self, _namespace: &str, _name: &str, elapsed: Duration, succeeded: bool) {
        self.schedule_duration.observe(elapsed.as_secs_f64());
        let result = if succeeded { "success" } else { "error" };
        self.schedules
            .get_or_create(&vec![("result", result.to_string())])
            .inc();
        self.reconcile.observe("placement", elapsed, succeeded);
    }
}

/// `ocm_manifestworkreplicaset_clusters`, computed at scrape time from a reflector store.
struct RolloutCollector {
    source: Rollouts,
}

/// Where the replica sets' summaries come from.
enum Rollouts {
    /// A caller's reflector of decoded replica sets.
    Typed(Store<ManifestWorkReplicaSet>),
    /// [`Metrics::follow_replica_set_rollouts`]'s reflector of raw replica sets, with each
    /// one's summary read once per resource version (`None`: it does not decode).
    Raw {
        store: Store<RawObject>,
        summaries: Mutex<RawSummaries>,
        decoder: Decoder,
    },
}

/// Summaries by namespace and name, with the resource version they were read at.
type RawSummaries =
    HashMap<(String, String), (Option<String>, Option<ManifestWorkReplicaSetSummary>)>;

/// The part of a replica set the gauge reads.
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct SummaryOnly {
    status: SummaryStatus,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct SummaryStatus {
    summary: Option<ManifestWorkReplicaSetSummary>,
}

impl Rollouts {
    /// (namespace, name, summary) of every replica set, sorted.
    fn summaries(&self) -> Vec<(String, String, ManifestWorkReplicaSetSummary)> {
        let mut out: Vec<_> = match self {
            Rollouts::Typed(store) => store
                .state()
                .iter()
                .map(|rs| {
                    (
                        rs.namespace().unwrap_or_default(),
                        rs.name_any(),
                        rs.status
                            .as_ref()
                            .and_then(|s| s.summary.clone())
                            .unwrap_or_default(),
                    )
                })
                .collect(),
            Rollouts::Raw {
                store,
                summaries,
                decoder,
            } => {
                let mut known = summaries.lock().unwrap_or_else(|e| e.into_inner());
                let mut seen = std::collections::HashSet::new();
                let mut out = Vec::new();
                for raw in store.state() {
                    let meta = raw.meta();
                    let key = (
                        meta.namespace.clone().unwrap_or_default(),
                        meta.name.clone().unwrap_or_default(),
                    );
                    let fresh = known
                        .get(&key)
                        .is_some_and(|(v, _)| v.is_some() && *v == meta.resource_version);
                    if !fresh {
                        let summary = decoder
                            .decode::<SummaryOnly>("ManifestWorkReplicaSet", &raw)
                            .ok()
                            .map(|s| s.status.summary.unwrap_or_default());
                        known.insert(key.clone(), (meta.resource_version.clone(), summary));
                    }
                    if let Some((_, Some(summary))) = known.get(&key) {
                        out.push((key.0.clone(), key.1.clone(), summary.clone()));
                    }
                    seen.insert(key);
                }
                known.retain(|k, _| seen.contains(k));
                out
            }
        };
        out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        out
    }
}

impl std::fmt::Debug for RolloutCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RolloutCollector").finish_non_exhaustive()
    }
}

impl Collector for RolloutCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let mut metric = encoder.encode_descriptor(
            "ocm_manifestworkreplicaset_clusters",
            "Clusters of each ManifestWorkReplicaSet by rollout state, from its status summary",
            None,
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        for (namespace, name, summary) in self.source.summaries() {
            for (state, value) in [
                ("total", summary.total),
                ("applied", summary.applied),
                ("available", summary.available),
                ("progressing", summary.progressing),
                ("degraded", summary.degraded),
            ] {
                let labels: Labels = vec![
                    ("namespace", namespace.clone()),
                    ("name", name.clone()),
                    ("state", state.to_string()),
                ];
                ConstGauge::new(value.unwrap_or(0)).encode(metric.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

/// `leader_election_master_status`, from an elector's state.
struct LeaderCollector {
    lease: String,
    state: watch::Receiver<LeaderState>,
}

impl std::fmt::Debug for LeaderCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderCollector")
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl Collector for LeaderCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let leading = *self.state.borrow() == LeaderState::Leading;
        let gauge: Gauge = Gauge::default();
        gauge.set(i64::from(leading));
        let mut metric = encoder.encode_descriptor(
            "leader_election_master_status",
            "1 while this replica leads the Lease `name`, else 0",
            None,
            gauge.metric_type(),
        )?;
        let labels: Labels = vec![("name", self.lease.clone())];
        gauge.encode(metric.encode_family(&labels)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_and_hub_series_are_encoded_with_their_labels() {
        let metrics = Metrics::new();
        let agent = metrics.agent();
        agent.apply_request("create");
        agent.apply_request("create");
        agent.apply_request("delete");
        agent.feedback_scrape("Watch");
        agent
            .reconcile
            .observe(AGENT_CONTROLLER, Duration::from_millis(3), true);
        agent
            .reconcile
            .observe(AGENT_CONTROLLER, Duration::from_millis(3), false);
        let text = metrics.encode();
        for line in [
            "ocm_work_apply_requests_total{verb=\"create\"} 2",
            "ocm_work_apply_requests_total{verb=\"delete\"} 1",
            "ocm_work_feedback_scrapes_total{scrape_type=\"Watch\"} 1",
            "ocm_reconcile_total{controller=\"manifestwork\",result=\"success\"} 1",
            "ocm_reconcile_total{controller=\"manifestwork\",result=\"error\"} 1",
            "ocm_reconcile_errors_total{controller=\"manifestwork\"} 1",
            "# TYPE workqueue_depth gauge",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        assert!(!text.contains("# EOF"), "Prometheus text, not OpenMetrics");
        assert!(metrics.encode_openmetrics().ends_with("# EOF\n"));
    }

    #[test]
    fn placement_schedules_are_observed() {
        let metrics = Metrics::new();
        let hub = metrics.hub();
        hub.scheduled("ns", "p", Duration::from_micros(250), true);
        hub.scheduled("ns", "q", Duration::from_micros(250), false);
        let text = metrics.encode();
        for line in [
            "ocm_placement_schedules_total{result=\"success\"} 1",
            "ocm_placement_schedules_total{result=\"error\"} 1",
            "ocm_placement_schedule_duration_seconds_count 2",
            "ocm_reconcile_total{controller=\"placement\",result=\"error\"} 1",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
    }

    #[test]
    fn leader_status_follows_the_state() {
        let metrics = Metrics::new();
        let (tx, rx) = watch::channel(LeaderState::Standby);
        metrics.leader("work-agent-lock", rx);
        assert!(
            metrics
                .encode()
                .contains("leader_election_master_status{name=\"work-agent-lock\"} 0")
        );
        tx.send_replace(LeaderState::Leading);
        assert!(
            metrics
                .encode()
                .contains("leader_election_master_status{name=\"work-agent-lock\"} 1")
        );
    }

    #[test]
    fn rollouts_are_read_from_the_store() {
        use kube::runtime::watcher::Event;
        let (store, mut writer) = kube::runtime::reflector::store::<ManifestWorkReplicaSet>();
        let rs: ManifestWorkReplicaSet = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "rs", "namespace": "apps"},
            "spec": {"placementRefs": []},
            "status": {"summary": {"total": 3, "applied": 2, "available": 1, "progressing": 1, "degraded": 0}}
        }))
        .unwrap();
        writer.apply_watcher_event(&Event::Apply(rs));
        let metrics = Metrics::new();
        metrics.replica_set_rollouts(store);
        let text = metrics.encode();
        assert!(
            text.contains(
                "ocm_manifestworkreplicaset_clusters{namespace=\"apps\",name=\"rs\",state=\"total\"} 3"
            ),
            "{text}"
        );
        assert!(text.contains(
            "ocm_manifestworkreplicaset_clusters{namespace=\"apps\",name=\"rs\",state=\"applied\"} 2"
        ));
    }
}
