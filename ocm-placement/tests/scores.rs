//! Scores in decisions (our addition, `Scheduler::with_decision_scores`, the hub controller's
//! `PlacementDecisionScore` gate): `ClusterDecision.score`, `spec.sortBy` and
//! `spec.scoreRateLimit`, in the pure core. Without the option everything is upstream's.

use crate::common;

use common::*;
use ocm_placement::{ScheduleResult, Scheduler, Snapshot};
use serde_json::{Value, json};

/// Four clusters with AddOn scores c1=10, c2=80, c3=80, c4=0; c1 and c4 are `canary`.
fn scored_hub() -> Snapshot {
    let mut b = hub(&[
        member("c1").label("ring", "canary"),
        member("c2"),
        member("c3"),
        member("c4").label("ring", "canary"),
    ]);
    for (cluster, value) in [("c1", 10), ("c2", 80), ("c3", 80), ("c4", 0)] {
        b.add_addon_score(&addon_score(cluster, "usage", &[("cpu", value)], None));
    }
    b.build()
}

fn by_addon(extra: Value) -> Value {
    let mut spec = json!({"prioritizerPolicy": {"mode": "Exact", "configurations": [{
        "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "usage", "scoreName": "cpu"}},
        "weight": 1}]}});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    spec
}

fn scheduled(scores: bool, spec: Value, snapshot: &Snapshot) -> ScheduleResult {
    Scheduler::new()
        .with_decision_scores(scores)
        .schedule(&placement("p", spec), snapshot, now())
        .unwrap()
}

/// `(cluster, score)` of every decision of every PlacementDecision, in order.
fn written(
    r: &ScheduleResult,
    spec: Value,
    snapshot: &Snapshot,
) -> Vec<Vec<(String, Option<i64>)>> {
    r.placement_decisions(&placement("p", spec), snapshot)
        .into_iter()
        .map(|pd| {
            pd.status
                .unwrap()
                .decisions
                .into_iter()
                .map(|d| (d.cluster_name, d.score))
                .collect()
        })
        .collect()
}

fn pairs(list: &[(&str, Option<i64>)]) -> Vec<(String, Option<i64>)> {
    list.iter().map(|(c, s)| (c.to_string(), *s)).collect()
}

#[test]
fn without_the_option_sort_by_and_scores_are_ignored_as_upstream() {
    let snap = scored_hub();
    let spec = by_addon(json!({"sortBy": "Score", "scoreRateLimit": "1d"}));
    let r = scheduled(false, spec.clone(), &snap);
    assert_eq!(
        written(&r, spec, &snap),
        [pairs(&[
            ("c1", None),
            ("c2", None),
            ("c3", None),
            ("c4", None)
        ])]
    );
    assert_eq!(r.score_rate_limit, None);
    // An invalid rate limit means nothing to upstream's scheduler.
    assert_eq!(r.misconfigured.reason, "Succeedconfigured");
}

#[test]
fn scores_are_written_in_name_order_by_default() {
    let snap = scored_hub();
    let spec = by_addon(json!({}));
    let r = scheduled(true, spec.clone(), &snap);
    // A score of 0 is left out, as Go's `omitzero` writes it.
    assert_eq!(
        written(&r, spec, &snap),
        [pairs(&[
            ("c1", Some(10)),
            ("c2", Some(80)),
            ("c3", Some(80)),
            ("c4", None)
        ])]
    );
    assert_eq!(r.score_rate_limit, Some(std::time::Duration::from_secs(60)));
}

#[test]
fn sort_by_score_orders_decisions_best_first_ties_by_name() {
    let snap = scored_hub();
    let spec = by_addon(json!({"sortBy": "Score", "scoreRateLimit": "30s"}));
    let r = scheduled(true, spec.clone(), &snap);
    assert_eq!(
        written(&r, spec, &snap),
        [pairs(&[
            ("c2", Some(80)),
            ("c3", Some(80)),
            ("c1", Some(10)),
            ("c4", None)
        ])]
    );
    assert_eq!(r.score_rate_limit, Some(std::time::Duration::from_secs(30)));
    assert_eq!(r.misconfigured.reason, "Succeedconfigured");
}

#[test]
fn sort_by_score_fills_the_first_groups_with_the_best_clusters() {
    let snap = scored_hub();
    let spec = by_addon(
        json!({"sortBy": "Score", "decisionStrategy": {"groupStrategy": {
        "clustersPerDecisionGroup": 2}}}),
    );
    let r = scheduled(true, spec.clone(), &snap);
    assert_eq!(slices(&r), [vec!["c2", "c3"], vec!["c1", "c4"]]);
    // By name (the default), the groups are cut in name order.
    let by_name = by_addon(json!({"decisionStrategy": {"groupStrategy": {
        "clustersPerDecisionGroup": 2}}}));
    let r = scheduled(true, by_name, &snap);
    assert_eq!(slices(&r), [vec!["c1", "c2"], vec!["c3", "c4"]]);
}

#[test]
fn declared_groups_are_ordered_by_score_within_themselves() {
    let snap = scored_hub();
    let spec = by_addon(
        json!({"sortBy": "Score", "decisionStrategy": {"groupStrategy": {
        "decisionGroups": [{"groupName": "canary", "groupClusterSelector": {
            "labelSelector": {"matchLabels": {"ring": "canary"}}}}]}}}),
    );
    let r = scheduled(true, spec.clone(), &snap);
    assert_eq!(
        groups(&r).iter().map(|g| g.1.as_str()).collect::<Vec<_>>(),
        ["canary", ""]
    );
    assert_eq!(slices(&r), [vec!["c1", "c4"], vec!["c2", "c3"]]);
    assert_eq!(
        written(&r, spec, &snap)[0],
        pairs(&[("c1", Some(10)), ("c4", None)])
    );
}

#[test]
fn more_than_a_hundred_clusters_are_sliced_in_score_order() {
    // 150 clusters scored by the number in their name: the best 100 in the first slice.
    let clusters: Vec<ClusterB> = (0..150).map(|i| member(&format!("c{i:03}"))).collect();
    let mut b = hub(&clusters);
    for i in 0..150 {
        b.add_addon_score(&addon_score(
            &format!("c{i:03}"),
            "usage",
            &[("cpu", i - 50)],
            None,
        ));
    }
    let snap = b.build();
    let spec = by_addon(json!({"sortBy": "Score"}));
    let r = scheduled(true, spec.clone(), &snap);
    let pds = written(&r, spec, &snap);
    assert_eq!(pds.len(), 2);
    assert_eq!(pds[0].len(), 100);
    assert_eq!(pds[0][0], ("c149".to_string(), Some(99)));
    assert_eq!(pds[0][99], ("c050".to_string(), None));
    assert_eq!(pds[1][0], ("c049".to_string(), Some(-1)));
    assert_eq!(pds[1][49], ("c000".to_string(), Some(-50)));
    let totals: Vec<i64> = pds.iter().flatten().map(|(_, s)| s.unwrap_or(0)).collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{totals:?}");
}

#[test]
fn an_invalid_rate_limit_is_reported_and_the_default_used() {
    let snap = scored_hub();
    for (limit, why) in [
        ("1d", "must be a number followed by h, m or s"),
        ("m", "must be a number followed by h, m or s"),
        ("99999999999999999999h", "is too long"),
    ] {
        let spec = by_addon(json!({"sortBy": "Score", "scoreRateLimit": limit}));
        let r = scheduled(true, spec.clone(), &snap);
        assert_eq!(
            (
                r.misconfigured.status.as_str(),
                r.misconfigured.reason.as_str()
            ),
            ("True", "Misconfigured")
        );
        assert_eq!(
            r.misconfigured.message,
            format!(":spec.scoreRateLimit {limit:?} {why}; the default 1m is used")
        );
        // The selection and its decisions stand.
        assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
        assert_eq!(written(&r, spec, &snap)[0].len(), 4);
        assert_eq!(r.score_rate_limit, Some(std::time::Duration::from_secs(60)));
    }
}

#[test]
fn a_scheduler_misconfiguration_keeps_its_own_message() {
    let snap = scored_hub();
    let spec = json!({"scoreRateLimit": "1d", "prioritizerPolicy": {"configurations": [{
        "scoreCoordinate": {"type": "BuiltIn", "builtIn": "Spread"}, "weight": 1}]}});
    let r = scheduled(true, spec, &snap);
    assert_eq!(r.misconfigured.status.as_str(), "True");
    assert!(
        r.misconfigured.message.contains("Spread"),
        "{}",
        r.misconfigured.message
    );
}
