//! Feedback aggregation (our addition, off by default): chosen status-feedback values of a
//! ManifestWorkReplicaSet's ManifestWorks, aggregated into its status, so a fleet-wide view
//! (how many clusters run which version, the least ready replicas anywhere) needs no client
//! that lists every work.
//!
//! Turn it on with
//! [`ReplicaSetController::with_feedback_aggregation`](super::controller::ReplicaSetController::with_feedback_aggregation)
//! (`ocm-hub-controller --feedback-aggregation`) and name the values in the replica set's
//! `spec.feedbackAggregation.values` (resource identifier and feedback name, as the template's
//! `manifestConfigs` feedback rules report them). Upstream has neither field; with the
//! opt-in off, the controller reads and writes neither. They are in the extended CRDs
//! (`ocm_api::crd::extended_crds`, `ocm-crdgen --extended`); on a hub serving upstream's CRD
//! the controller says so in [`super::fields`]' `OptInFieldsInstalled` condition.
//!
//! For each value, `status.feedbackAggregation.values` holds how many works report it, the
//! count per distinct value (most frequent first, at most [`MAX_DISTINCT_VALUES`], the rest
//! counted in `other`), and the min, max and sum of the `Integer` values. Works being deleted
//! do not count, so a cluster that leaves the placement drops out.
//!
//! The aggregates are rate-limited ([`plan`]): they are written only when they changed, and at
//! most once per `spec.feedbackAggregation.interval` (default [`DEFAULT_INTERVAL`]); a change
//! within the interval is written when it ends (the controller requeues for it). The time of
//! the last write is `status.feedbackAggregation.lastUpdateTime`, so the limit holds across
//! controller restarts.
//!
//! # Example
//!
//! ```
//! use ocm_api::work::v1::{ManifestWork, ResourceIdentifier};
//! use ocm_api::work::v1alpha1::FeedbackValueSelector;
//! use ocm_work::replicaset::feedback::aggregate;
//!
//! let work = |cluster: &str, ready: i64| -> ManifestWork {
//!     serde_json::from_value(serde_json::json!({
//!         "metadata": {"name": "w", "namespace": cluster}, "spec": {},
//!         "status": {"resourceStatus": {"manifests": [{
//!             "resourceMeta": {"ordinal": 0, "group": "apps", "resource": "deployments",
//!                              "namespace": "default", "name": "web"},
//!             "statusFeedback": {"values": [
//!                 {"name": "ReadyReplicas", "fieldValue": {"type": "Integer", "integer": ready}}]},
//!             "conditions": []}]}}
//!     })).unwrap()
//! };
//! let works = [work("c1", 2), work("c2", 3), work("c3", 3)];
//! let id = ResourceIdentifier::new("apps", "deployments", "default", "web");
//! let out = aggregate(&[FeedbackValueSelector::new(id, "ReadyReplicas")], &works);
//! assert_eq!(out[0].reported, 3);
//! let counts = out[0].counts.as_deref().unwrap();
//! assert_eq!((counts[0].value.as_str(), counts[0].count), ("3", 2));
//! assert_eq!((out[0].min, out[0].max, out[0].sum), (Some(2), Some(3), Some(8)));
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use ocm_api::cluster::v1alpha1::duration::parse_go_duration;
use ocm_api::conditions::{ConditionStatus, NewCondition};
use ocm_api::work::v1::{ManifestWork, ValueType};
use ocm_api::work::v1alpha1::{
    FeedbackAggregate, FeedbackAggregationSpec, FeedbackAggregationStatus, FeedbackValueCount,
    FeedbackValueSelector,
};
use ocm_feedback::lookup;

/// `spec.feedbackAggregation.interval` when unset.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// How many distinct values an aggregate lists; works reporting others are counted in
/// `other`.
pub const MAX_DISTINCT_VALUES: usize = 20;

/// The condition a controller with feedback aggregation writes on a replica set that asks for
/// it: `True` (reason [`REASON_AS_EXPECTED`]), or `False` (reason [`REASON_INVALID_INTERVAL`])
/// when `spec.feedbackAggregation.interval` does not parse (the default is used then).
pub const CONDITION_FEEDBACK_AGGREGATED: &str = "FeedbackAggregated";
/// Reason of `FeedbackAggregated=True`.
pub const REASON_AS_EXPECTED: &str = "AsExpected";
/// Reason of `FeedbackAggregated=False`: the interval is not a duration.
pub const REASON_INVALID_INTERVAL: &str = "InvalidInterval";

/// The interval of `spec`, or why it is invalid (naming the field).
pub fn interval(spec: &FeedbackAggregationSpec) -> Result<Duration, String> {
    match spec.interval.as_deref() {
        None => Ok(DEFAULT_INTERVAL),
        Some(text) => parse_go_duration(text).map_err(|e| {
            format!(
                "spec.feedbackAggregation.interval {text:?} is not a duration ({e}); the \
                 default {}s is used",
                DEFAULT_INTERVAL.as_secs()
            )
        }),
    }
}

/// `FeedbackAggregated` for the interval's parse result.
pub fn aggregated_condition(interval: &Result<Duration, String>) -> NewCondition {
    match interval {
        Ok(_) => NewCondition::new(
            CONDITION_FEEDBACK_AGGREGATED,
            ConditionStatus::True,
            REASON_AS_EXPECTED,
            "",
        ),
        Err(message) => NewCondition::new(
            CONDITION_FEEDBACK_AGGREGATED,
            ConditionStatus::False,
            REASON_INVALID_INTERVAL,
            message.clone(),
        ),
    }
}

/// The aggregate of each selected value over `works` (those being deleted left out), in the
/// order of `selectors`.
pub fn aggregate<'a>(
    selectors: &[FeedbackValueSelector],
    works: impl IntoIterator<Item = &'a ManifestWork> + Clone,
) -> Vec<FeedbackAggregate> {
    selectors
        .iter()
        .map(|selector| {
            let mut out =
                FeedbackAggregate::new(selector.resource_identifier.clone(), &selector.name);
            let mut by_value: BTreeMap<String, i64> = BTreeMap::new();
            let mut integers = Vec::new();
            for work in works.clone() {
                if work.metadata.deletion_timestamp.is_some() {
                    continue;
                }
                let Some(value) =
                    lookup::feedback_value(work, &selector.resource_identifier, &selector.name)
                else {
                    continue;
                };
                // A value whose type names a missing field (or a type unknown here) is no
                // value.
                if lookup::to_json(value).is_null() {
                    continue;
                }
                out.reported += 1;
                *by_value.entry(value.to_string()).or_default() += 1;
                if value.type_ == ValueType::Integer
                    && let Some(i) = value.integer
                {
                    integers.push(i);
                }
            }
            let mut counts: Vec<FeedbackValueCount> = by_value
                .into_iter()
                .map(|(value, count)| FeedbackValueCount { value, count })
                .collect();
            // Most frequent first; the sort is stable, so ties stay in value order.
            counts.sort_by_key(|c| std::cmp::Reverse(c.count));
            let other: i64 = counts
                .iter()
                .skip(MAX_DISTINCT_VALUES)
                .map(|c| c.count)
                .sum();
            counts.truncate(MAX_DISTINCT_VALUES);
            out.other = (other > 0).then_some(other);
            out.counts = (!counts.is_empty()).then_some(counts);
            out.min = integers.iter().copied().min();
            out.max = integers.iter().copied().max();
            out.sum = if integers.is_empty() {
                None
            } else {
                integers.iter().try_fold(0i64, |acc, i| acc.checked_add(*i))
            };
            out
        })
        .collect()
}

/// What to do with freshly computed aggregates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Plan {
    /// The new `status.feedbackAggregation`, when it is to be written now.
    pub write: Option<FeedbackAggregationStatus>,
    /// Reconcile again after this long: the aggregates changed within the interval.
    pub requeue_after: Option<Duration>,
}

/// The rate limit: given the status written before, the aggregates now, the interval and the
/// controller's clock, whether to write (only on a change, and not before `interval` has
/// passed since the last write) or to come back when the interval ends.
pub fn plan(
    previous: Option<&FeedbackAggregationStatus>,
    current: Vec<FeedbackAggregate>,
    interval: Duration,
    now: Timestamp,
) -> Plan {
    if previous.and_then(|p| p.values.as_ref()) == Some(&current) {
        return Plan::default();
    }
    let next = previous
        .and_then(|p| p.last_update_time.as_ref())
        .and_then(|t| {
            let interval = k8s_openapi::jiff::SignedDuration::try_from(interval).ok()?;
            t.0.checked_add(interval).ok()
        });
    match next {
        Some(next) if next > now => Plan {
            write: None,
            requeue_after: Some(Duration::try_from(next.duration_since(now)).unwrap_or_default()),
        },
        _ => {
            let mut status = previous.cloned().unwrap_or_default();
            status.last_update_time = Some(Time(now));
            status.values = Some(current);
            Plan {
                write: Some(status),
                requeue_after: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ocm_api::work::v1::ResourceIdentifier;
    use serde_json::{Value, json};

    use super::*;

    fn id() -> ResourceIdentifier {
        ResourceIdentifier::new("apps", "deployments", "default", "web")
    }

    fn work(cluster: &str, values: Value) -> ManifestWork {
        serde_json::from_value(json!({
            "metadata": {"name": "w", "namespace": cluster}, "spec": {},
            "status": {"resourceStatus": {"manifests": [{
                "resourceMeta": {"ordinal": 0, "group": "apps", "resource": "deployments",
                                 "namespace": "default", "name": "web"},
                "statusFeedback": {"values": values}, "conditions": []}]}}
        }))
        .unwrap()
    }

    fn int(name: &str, i: i64) -> Value {
        json!({"name": name, "fieldValue": {"type": "Integer", "integer": i}})
    }

    fn selectors(names: &[&str]) -> Vec<FeedbackValueSelector> {
        names
            .iter()
            .map(|n| FeedbackValueSelector::new(id(), *n))
            .collect()
    }

    fn counts(a: &FeedbackAggregate) -> Vec<(String, i64)> {
        a.counts
            .iter()
            .flatten()
            .map(|c| (c.value.clone(), c.count))
            .collect()
    }

    #[test]
    fn values_are_counted_and_integers_summarised() {
        let works = [
            work(
                "c1",
                json!([int("ready", 1), {"name": "image", "fieldValue": {"type": "String", "string": "v2"}}]),
            ),
            work(
                "c2",
                json!([int("ready", 3), {"name": "image", "fieldValue": {"type": "String", "string": "v1"}}]),
            ),
            work(
                "c3",
                json!([int("ready", 3), {"name": "image", "fieldValue": {"type": "String", "string": "v2"}}]),
            ),
            // No value, a value with its field missing, and a work being deleted: not counted.
            work(
                "c4",
                json!([{"name": "ready", "fieldValue": {"type": "Integer"}}]),
            ),
        ];
        let mut deleting = work("c5", json!([int("ready", 100)]));
        deleting.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
        let all: Vec<&ManifestWork> = works.iter().chain([&deleting]).collect();
        let out = aggregate(
            &selectors(&["ready", "image", "absent"]),
            all.iter().copied(),
        );
        assert_eq!(out[0].reported, 3);
        assert_eq!(counts(&out[0]), [("3".into(), 2), ("1".into(), 1)]);
        assert_eq!(
            (out[0].min, out[0].max, out[0].sum),
            (Some(1), Some(3), Some(7))
        );
        assert_eq!(counts(&out[1]), [("v2".into(), 2), ("v1".into(), 1)]);
        assert_eq!((out[1].min, out[1].max, out[1].sum), (None, None, None));
        assert_eq!(out[2], FeedbackAggregate::new(id(), "absent"));
    }

    #[test]
    fn many_distinct_values_are_cut_and_an_overflowing_sum_is_left_out() {
        let works: Vec<ManifestWork> = (0..25)
            .map(|i| work(&format!("c{i}"), json!([int("n", i64::MAX - i)])))
            .collect();
        let out = aggregate(&selectors(&["n"]), &works);
        assert_eq!(out[0].counts.as_ref().unwrap().len(), MAX_DISTINCT_VALUES);
        assert_eq!(out[0].other, Some(5));
        assert_eq!(out[0].sum, None);
        assert_eq!(out[0].max, Some(i64::MAX));
    }

    #[test]
    fn writes_only_changes_and_at_most_once_per_interval() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let at = |s: i64| t0 + k8s_openapi::jiff::SignedDuration::from_secs(s);
        let agg = |n: i64| {
            let mut a = FeedbackAggregate::new(id(), "ready");
            a.reported = n;
            vec![a]
        };
        let minute = Duration::from_secs(60);
        // Nothing written yet: write at once.
        let first = plan(None, agg(1), minute, t0);
        let written = first.write.clone().expect("first write");
        assert_eq!(written.last_update_time, Some(Time(t0)));
        // Unchanged: no write, no requeue, even long after.
        assert_eq!(
            plan(Some(&written), agg(1), minute, at(3600)),
            Plan::default()
        );
        // Changed within the interval: held back until it ends.
        let held = plan(Some(&written), agg(2), minute, at(10));
        assert_eq!(held.write, None);
        assert_eq!(held.requeue_after, Some(Duration::from_secs(50)));
        // At the end of the interval: written.
        let later = plan(Some(&written), agg(2), minute, at(60));
        let w = later.write.expect("write after the interval");
        assert_eq!(w.values, Some(agg(2)));
        assert_eq!(w.last_update_time, Some(Time(at(60))));
    }

    #[test]
    fn an_invalid_interval_names_the_field_and_falls_back() {
        let mut spec = FeedbackAggregationSpec::new(selectors(&["ready"]));
        assert_eq!(interval(&spec), Ok(DEFAULT_INTERVAL));
        spec.interval = Some("90s".into());
        assert_eq!(interval(&spec), Ok(Duration::from_secs(90)));
        spec.interval = Some("soon".into());
        let err = interval(&spec).unwrap_err();
        assert!(
            err.starts_with("spec.feedbackAggregation.interval \"soon\" is not a duration"),
            "{err}"
        );
        let c = aggregated_condition(&Err(err));
        assert_eq!(c.reason, REASON_INVALID_INTERVAL);
    }
}
