//! Spec §16.2: `TestSchedulingController_sync`, eligibility helpers and the PlacementDecision
//! generation half of `TestBind`, plus the decision-group scenarios of the integration suite.

use crate::common;

use common::*;
use ocm_api::cluster::v1beta2::ManagedClusterSet;
use ocm_placement::{Scheduler, Snapshot, StatusCode};
use serde_json::json;

fn sv(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn g(i: usize, name: &str, pds: &[&str], count: usize) -> (usize, String, Vec<String>, usize) {
    (i, name.to_string(), sv(pds), count)
}

#[test]
fn placement_satisfied_creates_one_decision() {
    let snap = hub(&[member("cluster1"), member("cluster2"), member("cluster3")]).build();
    let r = schedule(&placement("p", json!({})), &snap);
    assert_eq!(groups(&r), [g(0, "", &["p-decision-1"], 3)]);
    let st = r.placement_status(None, now());
    assert_eq!(st.number_of_selected_clusters, Some(3));
    let conds = st.conditions.unwrap();
    // Upstream's order (clusteradm's `get placements -otable` shows the first one).
    let types: Vec<&str> = conds.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["PlacementMisconfigured", "PlacementSatisfied"]);
    let sat = conds
        .iter()
        .find(|c| c.type_ == "PlacementSatisfied")
        .unwrap();
    assert_eq!(
        (sat.status.as_str(), sat.reason.as_str()),
        ("True", "AllDecisionsScheduled")
    );
    let mis = conds
        .iter()
        .find(|c| c.type_ == "PlacementMisconfigured")
        .unwrap();
    assert_eq!(
        (mis.status.as_str(), mis.reason.as_str()),
        ("False", "Succeedconfigured")
    );
    let dg = &st.decision_groups.unwrap()[0];
    assert_eq!(dg.decision_group_index, Some(0));
    assert_eq!(dg.decision_group_name.as_deref(), Some(""));
    assert_eq!(dg.cluster_count, Some(3));
}

#[test]
fn placement_unsatisfied() {
    let snap = hub(&[member("cluster1"), member("cluster2"), member("cluster3")]).build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 4})), &snap);
    assert_eq!(r.satisfied.reason, "NotAllDecisionsScheduled");
    assert_eq!(r.satisfied.message, "1 cluster decisions unscheduled");
    assert_eq!(groups(&r), [g(0, "", &["p-decision-1"], 3)]);
}

fn clouds() -> Snapshot {
    hub(&[
        member("cluster1").label("cloud", "Amazon"),
        member("cluster2").label("cloud", "Amazon"),
        member("cluster3").label("cloud", "Azure"),
        member("cluster4").label("cloud", "Azure"),
    ])
    .build()
}

#[test]
fn canary_group_strategy() {
    let p = placement(
        "p",
        json!({"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": 1, "decisionGroups": [
            {"groupName": "canary", "groupClusterSelector": {"labelSelector": {"matchLabels": {"cloud": "Azure"}}}}]}}}),
    );
    let r = schedule(&p, &clouds());
    assert_eq!(
        groups(&r),
        [
            g(0, "canary", &["p-decision-1"], 1),
            g(1, "canary", &["p-decision-2"], 1),
            g(2, "", &["p-decision-3"], 1),
            g(3, "", &["p-decision-4"], 1)
        ]
    );
    assert_eq!(
        slices(&r),
        [
            sv(&["cluster3"]),
            sv(&["cluster4"]),
            sv(&["cluster1"]),
            sv(&["cluster2"])
        ]
    );
}

#[test]
fn canary_strategy_by_percentage() {
    let p = placement(
        "p",
        json!({"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": "25%", "decisionGroups": [
            {"groupName": "canary", "groupClusterSelector": {"labelSelector": {"matchLabels": {"cloud": "Azure"}}}}]}}}),
    );
    let r = schedule(&p, &clouds());
    assert_eq!(
        slices(&r),
        [
            sv(&["cluster3"]),
            sv(&["cluster4"]),
            sv(&["cluster1"]),
            sv(&["cluster2"])
        ]
    );
    let pds = r.placement_decisions(&p, &clouds());
    let labels = pds[1].metadata.labels.as_ref().unwrap();
    assert_eq!(
        labels["cluster.open-cluster-management.io/decision-group-name"],
        "canary"
    );
    assert_eq!(
        labels["cluster.open-cluster-management.io/decision-group-index"],
        "1"
    );
    assert_eq!(labels["cluster.open-cluster-management.io/placement"], "p");
    assert_eq!(
        labels["cluster.open-cluster-management.io/decision-group-name"],
        "canary"
    );
    let owner = &pds[0].metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.api_version.as_str()),
        ("Placement", "cluster.open-cluster-management.io/v1beta1")
    );
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    assert_eq!(pds[0].metadata.namespace.as_deref(), Some(NS));
    let d = &pds[0].status.as_ref().unwrap().decisions[0];
    assert_eq!(
        (d.cluster_name.as_str(), d.reason.as_str(), d.score),
        ("cluster3", "", None)
    );
}

#[test]
fn no_cluster_selected_by_canary_group() {
    let snap = hub(&[member("cluster1").label("cloud", "Amazon")]).build();
    let p = placement(
        "p",
        json!({"numberOfClusters": 0, "decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": "25%", "decisionGroups": [
            {"groupName": "canary", "groupClusterSelector": {"labelSelector": {"matchLabels": {"cloud": "Azure"}}}}]}}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(groups(&r), [g(0, "", &["p-decision-1"], 0)]);
}

#[test]
fn multiple_group_strategy() {
    let snap = hub(&[
        member("cluster1").label("cloud", "Amazon"),
        member("cluster2").label("cloud", "Amazon"),
        member("cluster3").label("cloud", "Azure"),
    ])
    .build();
    let p = placement(
        "p",
        json!({"decisionStrategy": {"groupStrategy": {"decisionGroups": [
            {"groupName": "group1", "groupClusterSelector": {"labelSelector": {"matchLabels": {"cloud": "Amazon"}}}},
            {"groupName": "group2", "groupClusterSelector": {"labelSelector": {"matchLabels": {"cloud": "Azure"}}}}]}}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(
        groups(&r),
        [
            g(0, "group1", &["p-decision-1"], 2),
            g(1, "group2", &["p-decision-2"], 1)
        ]
    );
    assert_eq!(
        slices(&r),
        [sv(&["cluster1", "cluster2"]), sv(&["cluster3"])]
    );
}

#[test]
fn only_cluster_per_decision_group() {
    let snap = hub(&[member("cluster1"), member("cluster2"), member("cluster3")]).build();
    let p = placement(
        "p",
        json!({"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": "25%"}}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(
        groups(&r),
        [
            g(0, "", &["p-decision-1"], 1),
            g(1, "", &["p-decision-2"], 1),
            g(2, "", &["p-decision-3"], 1)
        ]
    );
}

#[test]
fn missing_bindings_gives_one_empty_decision() {
    let snap = Snapshot::builder()
        .cluster_set(&exclusive_set(SET))
        .cluster(member("cluster1").build())
        .build();
    let r = schedule(&placement("p", json!({})), &snap);
    assert_eq!(r.satisfied.reason, "NoManagedClusterSetBindings");
    assert_eq!(groups(&r), [g(0, "", &["p-decision-1"], 0)]);
    assert_eq!(
        r.placement_status(None, now()).number_of_selected_clusters,
        Some(0)
    );
}

#[test]
fn all_cluster_sets_empty() {
    let snap = hub(&[]).build();
    let r = schedule(&placement("p", json!({})), &snap);
    assert_eq!(r.satisfied.reason, "AllManagedClusterSetsEmpty");
    assert_eq!(
        r.satisfied.message,
        "All ManagedClusterSets [clusterset1] have no member ManagedCluster"
    );
}

#[test]
fn no_cluster_matches() {
    let snap = hub(&[member("cluster1")]).build();
    let p = placement(
        "p",
        json!({"predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"a": "b"}}}}]}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(r.satisfied.reason, "NoManagedClusterMatched");
}

#[test]
fn no_intersection_message() {
    let snap = hub(&[member("cluster1")]).build();
    let r = schedule(
        &placement("p", json!({"clusterSets": ["other", "more"]})),
        &snap,
    );
    assert_eq!(r.satisfied.reason, "NoIntersection");
    assert_eq!(
        r.satisfied.message,
        "None of ManagedClusterSets [other,more] is bound to placement namespace"
    );
}

#[test]
fn valid_bindings_and_eligible_sets() {
    // No bound set.
    let snap = Snapshot::builder()
        .cluster_set(&exclusive_set("clusterset1"))
        .build();
    assert_eq!(
        schedule(&placement("p", json!({})), &snap)
            .eligibility
            .valid_bindings,
        0
    );
    // Binding to a set that does not exist.
    let snap = Snapshot::builder()
        .binding(&binding(NS, "clusterset1"))
        .build();
    assert_eq!(
        schedule(&placement("p", json!({})), &snap)
            .eligibility
            .valid_bindings,
        0
    );
    // Valid binding; bindings of other namespaces don't count.
    let snap = Snapshot::builder()
        .cluster_set(&exclusive_set("clusterset1"))
        .cluster_set(&exclusive_set("clusterset2"))
        .binding(&binding(NS, "clusterset1"))
        .binding(&binding(NS, "clusterset2"))
        .binding(&binding("ns2", "clusterset1"))
        .build();
    let r = schedule(&placement("p", json!({})), &snap);
    assert_eq!(r.eligibility.valid_bindings, 2);
    assert_eq!(r.eligibility.cluster_sets, ["clusterset1", "clusterset2"]);
    let r = schedule(
        &placement("p", json!({"clusterSets": ["clusterset2", "clusterset3"]})),
        &snap,
    );
    assert_eq!(r.eligibility.cluster_sets, ["clusterset2"]);
}

#[test]
fn binding_name_not_spec_is_used() {
    // The binding's *name* selects the set; its spec.clusterSet is not read.
    let snap = Snapshot::builder()
        .cluster_set(&exclusive_set("clusterset1"))
        .cluster(member("cluster1").build())
        .binding(&binding_with_spec(NS, "clusterset1", "elsewhere"))
        .build();
    assert_eq!(
        selected(&schedule(&placement("p", json!({})), &snap)),
        ["cluster1"]
    );
    let snap = Snapshot::builder()
        .cluster_set(&exclusive_set("clusterset1"))
        .cluster(member("cluster1").build())
        .binding(&binding_with_spec(NS, "elsewhere", "clusterset1"))
        .build();
    let r = schedule(&placement("p", json!({})), &snap);
    assert_eq!(r.satisfied.reason, "NoManagedClusterSetBindings");
}

#[test]
fn bound_condition_is_ignored() {
    let mut b = binding(NS, SET);
    b.status = serde_json::from_value(json!({"conditions": [{"type": "Bound", "status": "False",
        "reason": "ClusterSetNotFound", "message": "", "lastTransitionTime": "2021-01-01T00:00:00Z"}]}))
    .unwrap();
    let snap = Snapshot::builder()
        .cluster_set(&exclusive_set(SET))
        .binding(&b)
        .cluster(member("c1").build())
        .build();
    assert_eq!(
        selected(&schedule(&placement("p", json!({})), &snap)),
        ["c1"]
    );
}

#[test]
fn available_clusters_from_sets() {
    let clusters = [
        cluster("c1").label(SET_LABEL, "clusterset1"),
        cluster("c2").label(SET_LABEL, "clusterset2"),
        cluster("c3").label(SET_LABEL, "clusterset1").deleting(),
        cluster("c4").label("vendor", "openShift"),
        cluster("c5"),
    ];
    let build = |set: ocm_api::cluster::v1beta2::ManagedClusterSet| {
        let name = set.metadata.name.clone().unwrap();
        let mut b = Snapshot::builder()
            .cluster_set(&set)
            .binding(&binding(NS, &name));
        for c in &clusters {
            b.add_cluster(c.build());
        }
        let snap = b.build();
        selected_set(&schedule(&placement("p", json!({})), &snap))
    };
    // Exclusive label, and the deleting cluster is excluded.
    assert_eq!(build(exclusive_set("clusterset1")), ["c1"]);
    assert_eq!(build(set_without_selector("clusterset1")), ["c1"]);
    // LabelSelector: vendor=openShift selects only the labelled cluster.
    assert_eq!(
        build(label_set(
            "clusterset1",
            Some(json!({"matchLabels": {"vendor": "openShift"}}))
        )),
        ["c4"]
    );
    // `{}` selects everything (but not terminating clusters); nil selects nothing.
    assert_eq!(
        build(label_set("global", Some(json!({})))),
        ["c1", "c2", "c4", "c5"]
    );
    assert_eq!(build(label_set("global", None)), Vec::<String>::new());
    // Union of two sets, deduplicated.
    let mut b = Snapshot::builder()
        .cluster_set(&exclusive_set("clusterset1"))
        .cluster_set(&exclusive_set("clusterset2"))
        .cluster_set(&label_set("global", Some(json!({}))))
        .binding(&binding(NS, "clusterset1"))
        .binding(&binding(NS, "clusterset2"))
        .binding(&binding(NS, "global"));
    for c in &clusters {
        b.add_cluster(c.build());
    }
    let snap = b.build();
    let r = schedule(
        &placement("p", json!({"clusterSets": ["clusterset1", "clusterset2"]})),
        &snap,
    );
    assert_eq!(selected_set(&r), ["c1", "c2"]);
    let r = schedule(&placement("p", json!({})), &snap);
    assert_eq!(selected_set(&r), ["c1", "c2", "c4", "c5"]);
}

#[test]
fn invalid_set_selector_is_an_error() {
    let set = label_set(
        "bad",
        Some(json!({"matchExpressions": [{"key": "k", "operator": "In"}]})),
    );
    let snap = Snapshot::builder()
        .cluster_set(&set)
        .binding(&binding(NS, "bad"))
        .cluster(cluster("c1").build())
        .build();
    let err = Scheduler::new()
        .schedule(&placement("p", json!({})), &snap, now())
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("failed to get clusters from ClusterSet \"bad\": "),
        "{err}"
    );
}

/// A `selectorType` a newer OCM may add decodes, and the scheduler reports the set as upstream
/// reports a selector type it does not know.
#[test]
fn a_set_selector_type_this_sdk_does_not_know_is_an_error() {
    let set: ManagedClusterSet = serde_json::from_value(json!({"metadata": {"name": "newer"},
        "spec": {"clusterSelector": {"selectorType": "ClusterProfile"}}}))
    .unwrap();
    let snap = Snapshot::builder()
        .cluster_set(&set)
        .binding(&binding(NS, "newer"))
        .cluster(cluster("c1").build())
        .build();
    let err = Scheduler::new()
        .schedule(&placement("p", json!({})), &snap, now())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to get clusters from ClusterSet \"newer\": selectorType is not right: ClusterProfile"
    );
}

#[test]
fn one_hundred_and_one_clusters_make_two_decisions() {
    let clusters: Vec<ClusterB> = (0..101).map(|i| member(&format!("cluster{i}"))).collect();
    let snap = hub(&clusters).build();
    let r = schedule(&placement("p", json!({})), &snap);
    assert_eq!(
        groups(&r),
        [g(0, "", &["p-decision-1", "p-decision-2"], 101)]
    );
    let s = slices(&r);
    assert_eq!(s[0].len(), 100);
    assert_eq!(s[1].len(), 1);
    // Name order, lexicographic: cluster10 < cluster100 < cluster11 < … < cluster99.
    let mut all: Vec<String> = (0..101).map(|i| format!("cluster{i}")).collect();
    all.sort();
    assert_eq!(s[0], all[..100]);
    assert_eq!(s[1], all[100..]);
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
}

#[test]
fn ten_clusters_one_decision_zero_clusters_one_empty_decision() {
    let clusters: Vec<ClusterB> = (1..=10).map(|i| member(&format!("cluster{i}"))).collect();
    let r = schedule(&placement("p", json!({})), &hub(&clusters).build());
    assert_eq!(groups(&r), [g(0, "", &["p-decision-1"], 10)]);
    let r = schedule(&placement("p", json!({})), &hub(&[]).build());
    assert_eq!(groups(&r), [g(0, "", &["p-decision-1"], 0)]);
}

#[test]
fn decisions_are_name_ordered_not_score_ordered() {
    let snap = hub(&[member("cluster2"), member("cluster10"), member("cluster1")])
        .placement_decision(&decision("other", "x", Some("x"), &["cluster1"]))
        .build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 2})), &snap);
    assert_eq!(selected(&r), ["cluster10", "cluster2"]);
    assert_eq!(slices(&r), [sv(&["cluster10", "cluster2"])]);
}

#[test]
fn quoted_number_is_misconfigured_and_produces_no_decisions() {
    let snap = hub(&[member("cluster1"), member("cluster2")]).build();
    let p = placement(
        "p",
        json!({"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": "2"}}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(r.status.code, StatusCode::Misconfigured);
    assert_eq!(
        r.misconfigured.message,
        ":2 invalid type: string is not a percentage"
    );
    assert!(r.groups.is_empty());
    assert!(r.slices.is_empty());
    // The selection still counts for PlacementSatisfied.
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
    let st = r.placement_status(None, now());
    assert_eq!(st.number_of_selected_clusters, Some(2));
    assert_eq!(st.decision_groups, Some(vec![]));
}

#[test]
fn group_selector_error_keeps_earlier_groups() {
    let snap = clouds();
    let p = placement(
        "p",
        json!({"decisionStrategy": {"groupStrategy": {"decisionGroups": [
            {"groupName": "good", "groupClusterSelector": {"labelSelector": {"matchLabels": {"cloud": "Azure"}}}},
            {"groupName": "bad", "groupClusterSelector": {"claimSelector": {"matchExpressions": [{"key": "k", "operator": "In"}]}}},
            {"groupName": "never", "groupClusterSelector": {}}]}}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(r.status.code, StatusCode::Misconfigured);
    assert!(r.misconfigured.message.starts_with(':'));
    assert_eq!(groups(&r), [g(0, "good", &["p-decision-1"], 2)]);
}

#[test]
fn decision_groups_follow_cluster_changes() {
    // Integration "Should update the decision group once clusters added/deleted".
    let set = label_set("global", Some(json!({})));
    let build = |names: &[(&str, bool)]| {
        let mut b = Snapshot::builder()
            .cluster_set(&set)
            .binding(&binding(NS, "global"));
        for (n, canary) in names {
            let c = if *canary {
                cluster(n).label("vendor", "openShift")
            } else {
                cluster(n)
            };
            b.add_cluster(c.build());
        }
        b.build()
    };
    let p = placement(
        "p",
        json!({"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": 2, "decisionGroups": [
            {"groupName": "canary", "groupClusterSelector": {"labelSelector": {"matchLabels": {"vendor": "openShift"}}}}]}}}),
    );
    let r = schedule(
        &p,
        &build(&[
            ("a", true),
            ("b", true),
            ("c", false),
            ("d", false),
            ("e", false),
        ]),
    );
    assert_eq!(
        groups(&r),
        [
            g(0, "canary", &["p-decision-1"], 2),
            g(1, "", &["p-decision-2"], 2),
            g(2, "", &["p-decision-3"], 1)
        ]
    );
    let r = schedule(&p, &build(&[("a", true), ("c", false), ("d", false)]));
    assert_eq!(
        groups(&r),
        [
            g(0, "canary", &["p-decision-1"], 1),
            g(1, "", &["p-decision-2"], 2)
        ]
    );
    let r = schedule(&p, &build(&[]));
    assert_eq!(groups(&r), [g(0, "", &["p-decision-1"], 0)]);
}

#[test]
fn scheduling_disabled_annotation() {
    let mut p = placement("p", json!({}));
    assert!(!ocm_placement::is_scheduling_disabled(&p));
    p.metadata.annotations = Some(
        [(
            "cluster.open-cluster-management.io/experimental-scheduling-disable".to_string(),
            "true".to_string(),
        )]
        .into(),
    );
    assert!(ocm_placement::is_scheduling_disabled(&p));
}

#[test]
fn placement_status_keeps_transition_time_when_unchanged() {
    let snap = hub(&[member("cluster1")]).build();
    let r = schedule(&placement("p", json!({})), &snap);
    let first = r.placement_status(None, now());
    let later = secs(now(), 60);
    let second = r.placement_status(Some(&first), later);
    assert_eq!(first.conditions, second.conditions);
}

/// Issue #15.6: a decision-group selector whose `In` has no values keeps the scheduler's
/// selection and reports the group error in apimachinery's form (`null`, the nil slice).
#[test]
fn group_selector_with_empty_in_keeps_selection_and_reports_null() {
    let snap = clouds();
    let p = placement(
        "p",
        json!({"decisionStrategy": {"groupStrategy": {"decisionGroups": [
            {"groupName": "canary", "groupClusterSelector": {"labelSelector": {"matchExpressions": [
                {"key": "cloud", "operator": "In", "values": []}]}}}]}}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(r.status.code, StatusCode::Misconfigured);
    assert_eq!(
        r.misconfigured.message,
        ":values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
    );
    assert_eq!(selected_set(&r).len(), 4);
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
    assert!(r.slices.is_empty());
    let st = r.placement_status(None, now());
    assert_eq!(st.number_of_selected_clusters, Some(4));
    assert_eq!(st.decision_groups, Some(vec![]));
}

/// Issue #15.6: numeric string values where none are allowed print as a JSON list.
#[test]
fn group_selector_with_numeric_string_values_reports_json_list() {
    let snap = clouds();
    let p = placement(
        "p",
        json!({"decisionStrategy": {"groupStrategy": {"decisionGroups": [
            {"groupName": "canary", "groupClusterSelector": {"claimSelector": {"matchExpressions": [
                {"key": "tier", "operator": "Exists", "values": ["1", "2"]}]}}}]}}}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(
        r.misconfigured.message,
        r#":values: Invalid value: ["1","2"]: values set must be empty for exists and does not exist"#
    );
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
    assert_eq!(selected_set(&r).len(), 4);
}

/// Issue #15.6: label value errors end with apimachinery's examples and pattern.
#[test]
fn predicate_label_value_message_has_examples_and_regex() {
    let snap = clouds();
    let p = placement(
        "p",
        json!({"predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"cloud": "-Azure"}}}}]}),
    );
    let r = schedule(&p, &snap);
    assert_eq!(
        r.misconfigured.message,
        "Predicate:values[0][cloud]: Invalid value: \"-Azure\": a valid label must be an empty \
         string or consist of alphanumeric characters, '-', '_' or '.', and must start and end \
         with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used \
         for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    );
}
