//! Spec §16.1: the upstream `TestSchedule` cases, run through `Scheduler::schedule`.

use crate::common;

use common::*;
use ocm_placement::StatusCode;
use serde_json::json;

fn s(v: &[(&str, i64)]) -> Vec<(String, i64)> {
    v.iter().map(|(n, x)| (n.to_string(), *x)).collect()
}

#[test]
fn new_placement_satisfied() {
    let snap = hub(&[member("cluster1")]).build();
    let r = schedule(&placement("p", json!({})), &snap);
    assert_eq!(selected(&r), ["cluster1"]);
    let records: Vec<(String, Vec<String>)> = r
        .filter_records
        .iter()
        .map(|f| (f.name.clone(), names(&r, &f.clusters)))
        .collect();
    assert_eq!(
        records,
        [
            ("Predicate".to_string(), vec!["cluster1".to_string()]),
            (
                "Predicate,TaintToleration".to_string(),
                vec!["cluster1".to_string()]
            )
        ]
    );
    let mut ps: Vec<(String, i32)> = r
        .prioritizers
        .iter()
        .map(|p| (p.name.clone(), p.weight))
        .collect();
    ps.sort();
    assert_eq!(ps, [("Balance".to_string(), 1), ("Steady".to_string(), 1)]);
    assert_eq!(prioritizer(&r, "Balance"), s(&[("cluster1", 100)]));
    assert_eq!(prioritizer(&r, "Steady"), s(&[("cluster1", 0)]));
    assert_eq!(r.unscheduled, 0);
    assert_eq!(r.status.code, StatusCode::Success);
}

#[test]
fn new_placement_unsatisfied() {
    let snap = hub(&[member("cluster1")]).build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 3})), &snap);
    assert_eq!(selected(&r), ["cluster1"]);
    assert_eq!(r.unscheduled, 2);
}

#[test]
fn new_placement_misconfigured() {
    let snap = hub(&[member("cluster1")]).build();
    let p = placement(
        "p",
        json!({"tolerations": [{"value": "value1", "operator": "Equal"}]}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(r.status.code, StatusCode::Misconfigured);
    assert_eq!(r.status.plugin, "TaintToleration");
    assert_eq!(
        r.status.message,
        "If the key is empty, operator must be Exists."
    );
    assert_eq!(r.filter_records.len(), 1);
    assert_eq!(r.filter_records[0].name, "Predicate");
    assert!(r.prioritizers.is_empty());
    assert!(r.selected.is_empty());
    assert_eq!(
        r.misconfigured.message,
        "TaintToleration:If the key is empty, operator must be Exists."
    );
}

#[test]
fn placement_with_all_decisions_scheduled() {
    let snap = hub(&[member("cluster1"), member("cluster2"), member("cluster3")])
        .placement_decision(&decision(
            NS,
            "p-decision-1",
            Some("p"),
            &["cluster1", "cluster2"],
        ))
        .build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 2})), &snap);
    assert_eq!(selected(&r), ["cluster1", "cluster2"]);
    assert_eq!(
        prioritizer(&r, "Steady"),
        s(&[("cluster1", 100), ("cluster2", 100), ("cluster3", 0)])
    );
    assert_eq!(
        prioritizer(&r, "Balance"),
        s(&[("cluster1", 100), ("cluster2", 100), ("cluster3", 100)])
    );
    assert_eq!(r.unscheduled, 0);
}

#[test]
fn placement_with_empty_prioritizer_policy_mode() {
    let snap = hub(&[member("cluster1")]).build();
    let r = schedule(
        &placement("p", json!({"prioritizerPolicy": {"mode": ""}})),
        &snap,
    );
    let mut ps: Vec<(String, i32)> = r
        .prioritizers
        .iter()
        .map(|p| (p.name.clone(), p.weight))
        .collect();
    ps.sort();
    assert_eq!(ps, [("Balance".to_string(), 1), ("Steady".to_string(), 1)]);
}

#[test]
fn placement_with_taint_and_toleration() {
    let snap = hub(&[
        member("cluster1").taint("key1", "value1", "NoSelect", Some(now())),
        member("cluster2").taint("key2", "value2", "NoSelect", Some(now())),
        member("cluster3"),
    ])
    .build();
    let p = placement(
        "p",
        json!({"numberOfClusters": 3, "tolerations": [{"key": "key1", "value": "value1", "operator": "Equal"}]}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(selected(&r), ["cluster1", "cluster3"]);
    assert_eq!(r.unscheduled, 1);
}

fn additive_fixture() -> ocm_placement::Snapshot {
    hub(&[
        member("cluster1").resource("memory", "100", "100"),
        member("cluster2").resource("memory", "50", "100"),
        member("cluster3").resource("memory", "0", "100"),
    ])
    .addon_score(&addon_score("cluster1", "demo", &[("demo", 30)], None))
    .addon_score(&addon_score("cluster2", "demo", &[("demo", 40)], None))
    .addon_score(&addon_score("cluster3", "demo", &[("demo", 50)], None))
    .build()
}

#[test]
fn placement_with_additive_prioritizer_policy() {
    let snap = additive_fixture();
    let p = placement(
        "p",
        json!({"numberOfClusters": 2, "prioritizerPolicy": {"mode": "Additive", "configurations": [
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Balance"}, "weight": 3},
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 1},
            {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}}, "weight": 1}
        ]}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(selected(&r), ["cluster1", "cluster2"]);
    assert_eq!(
        prioritizer(&r, "ResourceAllocatableMemory"),
        s(&[("cluster1", 100), ("cluster2", 0), ("cluster3", -100)])
    );
    assert_eq!(
        prioritizer(&r, "AddOn/demo/demo"),
        s(&[("cluster1", 30), ("cluster2", 40), ("cluster3", 50)])
    );
    assert_eq!(
        prioritizer(&r, "Balance"),
        s(&[("cluster1", 100), ("cluster2", 100), ("cluster3", 100)])
    );
    assert_eq!(
        prioritizer(&r, "Steady"),
        s(&[("cluster1", 0), ("cluster2", 0), ("cluster3", 0)])
    );
    let weights: Vec<(String, i32)> = r
        .prioritizers
        .iter()
        .map(|p| (p.name.clone(), p.weight))
        .collect();
    assert!(weights.contains(&("Balance".to_string(), 3)));
    assert!(weights.contains(&("Steady".to_string(), 1)));
    // Spec §15: totals 430, 340, 250.
    let totals: Vec<i64> = r.scores.iter().map(|s| s.total).collect();
    assert_eq!(totals, [430, 340, 250]);
}

#[test]
fn placement_with_exact_prioritizer_policy() {
    let snap = additive_fixture();
    let p = placement(
        "p",
        json!({"numberOfClusters": 2, "prioritizerPolicy": {"mode": "Exact", "configurations": [
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Balance"}, "weight": 3},
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 1}
        ]}}),
    );
    let r = schedule(&p, &snap);
    let mut ps: Vec<String> = r.prioritizers.iter().map(|p| p.name.clone()).collect();
    ps.sort();
    assert_eq!(ps, ["Balance", "ResourceAllocatableMemory"]);
    assert_eq!(selected(&r), ["cluster1", "cluster2"]);
}

#[test]
fn placement_with_part_of_decisions_scheduled() {
    let snap = hub(&[member("cluster1"), member("cluster2")])
        .placement_decision(&decision(NS, "p-decision-1", Some("p"), &["cluster1"]))
        .build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 4})), &snap);
    assert_eq!(selected(&r), ["cluster1", "cluster2"]);
    assert_eq!(r.unscheduled, 2);
    assert_eq!(
        prioritizer(&r, "Steady"),
        s(&[("cluster1", 100), ("cluster2", 0)])
    );
}

#[test]
fn schedule_to_cluster_with_least_decisions() {
    let snap = hub(&[member("cluster1"), member("cluster2"), member("cluster3")])
        .placement_decision(&decision(
            NS,
            "others-decision-1",
            None,
            &["cluster1", "cluster2"],
        ))
        .build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 1})), &snap);
    assert_eq!(
        prioritizer(&r, "Balance"),
        s(&[("cluster1", -100), ("cluster2", -100), ("cluster3", 100)])
    );
    assert_eq!(selected(&r), ["cluster3"]);
    // The final order (upstream shows it in the last filter record).
    let order: Vec<String> = r
        .scores
        .iter()
        .map(|s| r.cluster_name(s.cluster).to_string())
        .collect();
    assert_eq!(order, ["cluster3", "cluster1", "cluster2"]);
}

#[test]
fn do_not_schedule_to_other_cluster_even_with_least_decisions() {
    let snap = hub(&[member("cluster1"), member("cluster2"), member("cluster3")])
        .placement_decision(&decision(
            NS,
            "others1-decision-1",
            Some("others1"),
            &["cluster2", "cluster3"],
        ))
        .placement_decision(&decision(
            NS,
            "others2-decision-1",
            Some("others2"),
            &["cluster1", "cluster2"],
        ))
        .placement_decision(&decision(NS, "p-decision-1", Some("p"), &["cluster3"]))
        .build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 1})), &snap);
    assert_eq!(
        prioritizer(&r, "Balance"),
        s(&[("cluster1", 0), ("cluster2", -100), ("cluster3", 0)])
    );
    assert_eq!(
        prioritizer(&r, "Steady"),
        s(&[("cluster1", 0), ("cluster2", 0), ("cluster3", 100)])
    );
    assert_eq!(selected(&r), ["cluster3"]);
}

#[test]
fn number_of_clusters_zero_selects_nothing() {
    let snap = hub(&[member("cluster1")]).build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 0})), &snap);
    assert!(r.selected.is_empty());
    assert_eq!(r.satisfied.reason, "NoManagedClusterMatched");
    assert_eq!(r.slices.len(), 1);
    assert!(r.slices[0].clusters.is_empty());
}

/// The CRD admits a negative `numberOfClusters` (upstream's scheduler panics on it): the
/// placement is misconfigured, selects nothing, and its conditions say why.
#[test]
fn negative_number_of_clusters_is_misconfigured() {
    let snap = hub(&[member("cluster1")]).build();
    let r = schedule(&placement("p", json!({"numberOfClusters": -1})), &snap);
    assert!(r.selected.is_empty());
    assert_eq!(r.unscheduled, 0);
    assert_eq!(
        (
            r.misconfigured.status,
            r.misconfigured.reason.as_str(),
            r.misconfigured.message.as_str()
        ),
        (
            ocm_api::conditions::ConditionStatus::True,
            "Misconfigured",
            ":spec.numberOfClusters must not be negative, got -1"
        )
    );
    assert_eq!(r.satisfied.reason, "NoManagedClusterMatched");
    // One empty PlacementDecision, as for every placement that selects nothing.
    assert_eq!(r.slices.len(), 1);
    assert!(r.slices[0].clusters.is_empty());
}

#[test]
fn duplicate_addon_coordinates_both_count() {
    let snap = additive_fixture();
    let one = json!({"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}}, "weight": 1});
    let p = placement(
        "p",
        json!({"prioritizerPolicy": {"mode": "Exact", "configurations": [one.clone(), one]}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(r.prioritizers.len(), 2);
    let totals: Vec<(String, i64)> = r
        .scores
        .iter()
        .map(|s| (r.cluster_name(s.cluster).to_string(), s.total))
        .collect();
    assert_eq!(
        totals,
        s(&[("cluster3", 100), ("cluster2", 80), ("cluster1", 60)])
    );
}

#[test]
fn unknown_builtin_and_spread_are_misconfigured_even_without_candidates() {
    let snap = hub(&[]).build();
    let p = placement(
        "p",
        json!({"prioritizerPolicy": {"configurations": [{"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Spread"}, "weight": 1}]}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(r.status.code, StatusCode::Misconfigured);
    assert_eq!(
        r.misconfigured.message,
        ":incorrect builtin prioritizer: Spread"
    );
}

#[test]
fn weights_beyond_crd_range_are_multiplied() {
    let snap = additive_fixture();
    let p = placement(
        "p",
        json!({"prioritizerPolicy": {"mode": "Exact", "configurations": [
            {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}}, "weight": 50}]}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(r.scores[0].total, 2500);
}
