//! Work queue metrics for controllers built on kube's `Controller`, with client-go's metric
//! names (`workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
//! `workqueue_work_duration_seconds`, `workqueue_retries_total`, all labelled `name`), so
//! dashboards made for upstream's controllers read ours.
//!
//! kube's controller keeps its queue to itself, so a [`QueueTracker`] follows what goes in and
//! out around it: a key is *added* when something asks for it to be reconciled (a change, or a
//! requeue whose time has come), *started* when its reconcile begins and *done* when it ends.
//! Like client-go's queue it counts a key once however many times it is added before it starts;
//! a requeue (`Action::requeue(d)`) counts as an add `d` later.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The `name` label of a queue.
pub(crate) type NameLabel = [(&'static str, String); 1];

/// The queue metrics of one controller (`name`).
#[derive(Clone, Debug)]
pub struct QueueTracker {
    name: String,
    /// Keys added and not started, with the time they became due.
    waiting: Arc<Mutex<HashMap<String, Instant>>>,
    adds: Family<NameLabel, Counter>,
    retries: Family<NameLabel, Counter>,
    queue_duration: Family<NameLabel, Histogram>,
    work_duration: Family<NameLabel, Histogram>,
}

fn seconds_buckets() -> Family<NameLabel, Histogram> {
    // 1 ms to about 65 s.
    Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.001, 2.0, 17)))
}

impl QueueTracker {
    /// A tracker for the queue `name`, registered in `registry`.
    pub fn new(name: impl Into<String>, registry: &mut Registry) -> Self {
        let tracker = Self {
            name: name.into(),
            waiting: Arc::default(),
            adds: Family::default(),
            retries: Family::default(),
            queue_duration: seconds_buckets(),
            work_duration: seconds_buckets(),
        };
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by the work queue",
            tracker.adds.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by the work queue",
            tracker.retries.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in the work queue before being reconciled",
            tracker.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds reconciling an item from the work queue takes",
            tracker.work_duration.clone(),
        );
        registry.register_collector(Box::new(DepthCollector(tracker.clone())));
        tracker
    }

    fn label(&self) -> NameLabel {
        [("name", self.name.clone())]
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `key` is to be reconciled now.
    pub fn add(&self, key: &str) {
        self.add_at(key, Instant::now());
    }

    /// `key` is to be reconciled `after` from now (a requeue).
    pub fn add_after(&self, key: &str, after: Duration) {
        self.add_at(key, Instant::now() + after);
    }

    /// `key` failed and is retried `after` from now.
    pub fn retry(&self, key: &str, after: Duration) {
        self.retries.get_or_create(&self.label()).inc();
        self.add_after(key, after);
    }

    fn add_at(&self, key: &str, due: Instant) {
        let mut waiting = self.lock();
        match waiting.get_mut(key) {
            // Already waiting: the earlier due time wins (the queue holds it once).
            Some(existing) => {
                if due < *existing {
                    *existing = due;
                }
            }
            None => {
                waiting.insert(key.to_string(), due);
                self.adds.get_or_create(&self.label()).inc();
            }
        }
    }

    /// The reconcile of `key` starts: records how long it waited; returns the start time for
    /// [`QueueTracker::done`].
    pub fn start(&self, key: &str) -> Instant {
        let now = Instant::now();
        if let Some(due) = self.lock().remove(key) {
            let waited = now.saturating_duration_since(due);
            self.queue_duration
                .get_or_create(&self.label())
                .observe(waited.as_secs_f64());
        }
        now
    }

    /// The reconcile of `key` that began at `started` ended.
    pub fn done(&self, started: Instant) {
        self.work_duration
            .get_or_create(&self.label())
            .observe(started.elapsed().as_secs_f64());
    }

    /// `key` will not be reconciled (it is gone).
    pub fn forget(&self, key: &str) {
        self.lock().remove(key);
    }

    /// Keys waiting whose time has come.
    pub fn depth(&self) -> usize {
        let now = Instant::now();
        self.lock().values().filter(|due| **due <= now).count()
    }
}

/// `workqueue_depth`, computed at scrape time (a requeued key counts once it is due).
#[derive(Debug)]
struct DepthCollector(QueueTracker);

impl Collector for DepthCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let gauge = ConstGauge::new(i64::try_from(self.0.depth()).unwrap_or(i64::MAX));
        let mut metric = encoder.encode_descriptor(
            "workqueue_depth",
            "Current depth of the work queue",
            None,
            gauge.metric_type(),
        )?;
        let label = self.0.label();
        gauge.encode(metric.encode_family(&label)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(registry: &Registry) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, registry).unwrap();
        out
    }

    #[test]
    fn adds_are_counted_once_until_started_and_requeues_count_when_due() {
        let mut registry = Registry::default();
        let queue = QueueTracker::new("manifestwork", &mut registry);
        queue.add("a");
        queue.add("a");
        queue.add("b");
        queue.add_after("c", Duration::from_secs(3600));
        assert_eq!(queue.depth(), 2, "c is not due yet");
        let started = queue.start("a");
        queue.done(started);
        assert_eq!(queue.depth(), 1);
        queue.retry("a", Duration::ZERO);
        let out = text(&registry);
        assert!(
            out.contains("workqueue_adds_total{name=\"manifestwork\"} 4"),
            "{out}"
        );
        assert!(out.contains("workqueue_retries_total{name=\"manifestwork\"} 1"));
        assert!(out.contains("workqueue_depth{name=\"manifestwork\"} 2"));
        assert!(out.contains("workqueue_queue_duration_seconds_count{name=\"manifestwork\"} 1"));
        assert!(out.contains("workqueue_work_duration_seconds_count{name=\"manifestwork\"} 1"));
        queue.forget("b");
        queue.forget("a");
        assert_eq!(queue.depth(), 0);
    }
}
