//! Spec §16.9 and §15: the scheduling outcomes of upstream's integration suite
//! (`prioritizer_test.go`, `toleration_test.go`, `placement_test.go`, `predicate_test.go`),
//! replayed against snapshots.

use crate::common;

use common::*;
use ocm_placement::{Snapshot, SnapshotBuilder, StatusCode};
use serde_json::{Value, json};

fn resources() -> Vec<ClusterB> {
    vec![
        member("c0")
            .resource("cpu", "10", "10")
            .resource("memory", "50", "100"),
        member("c1")
            .resource("cpu", "7", "10")
            .resource("memory", "90", "100"),
        member("c2")
            .resource("cpu", "9", "10")
            .resource("memory", "80", "100"),
    ]
}

fn policy(mode: &str, configs: Value) -> Value {
    json!({"numberOfClusters": 2, "prioritizerPolicy": {"mode": mode, "configurations": configs}})
}

fn builtin(name: &str, weight: i32) -> Value {
    json!({"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight})
}

fn with_decision(
    b: SnapshotBuilder,
    r: &ocm_placement::ScheduleResult,
    p: &str,
) -> SnapshotBuilder {
    let names = selected(r);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    b.placement_decision(&decision(NS, &format!("{p}-decision-1"), Some(p), &refs))
}

#[test]
fn default_policy_picks_by_name() {
    let r = schedule(
        &placement("p", json!({"numberOfClusters": 2})),
        &hub(&resources()).build(),
    );
    assert_eq!(selected_set(&r), ["c0", "c1"]);
}

#[test]
fn exact_cpu_and_memory() {
    let p = placement(
        "p",
        policy(
            "Exact",
            json!([
                builtin("ResourceAllocatableCPU", 1),
                builtin("ResourceAllocatableMemory", 1)
            ]),
        ),
    );
    let r = schedule(&p, &hub(&resources()).build());
    // §15: CPU 100, -100, 33; memory -100, 100, 50; totals 0, 0, 83.
    assert_eq!(
        prioritizer(&r, "ResourceAllocatableCPU"),
        [("c0".into(), 100), ("c1".into(), -100), ("c2".into(), 33)]
    );
    assert_eq!(selected(&r), ["c2", "c0"]);
}

#[test]
fn steady_keeps_decisions_and_float_trap() {
    let p = placement(
        "p",
        policy(
            "Additive",
            json!([
                builtin("Steady", 3),
                builtin("ResourceAllocatableCPU", 1),
                builtin("ResourceAllocatableMemory", 1)
            ]),
        ),
    );
    let r1 = schedule(&p, &hub(&resources()).build());
    assert_eq!(selected_set(&r1), ["c0", "c2"]);
    // A foreign PD on c1 and a new, bigger cluster c3: still {c0, c2}.
    let mut clusters = resources();
    clusters.push(
        member("c3")
            .resource("cpu", "10", "10")
            .resource("memory", "100", "100"),
    );
    let b =
        hub(&clusters).placement_decision(&decision(NS, "p-1-decision-1", Some("p-1"), &["c1"]));
    let snap = with_decision(b, &r1, "p").build();
    let r2 = schedule(&p, &snap);
    assert_eq!(selected_set(&r2), ["c0", "c2"]);
    // §15 float trap: the 80 cluster scores 19 for memory; totals c0 400, c1 -140, c2 452, c3 300.
    let mut totals: Vec<(String, i64)> = r2
        .scores
        .iter()
        .map(|s| (r2.cluster_name(s.cluster).to_string(), s.total))
        .collect();
    totals.sort();
    assert_eq!(
        totals,
        [
            ("c0".into(), 400),
            ("c1".into(), -140),
            ("c2".into(), 452),
            ("c3".into(), 300)
        ]
    );
}

#[test]
fn balance_with_foreign_decision() {
    let snap = hub(&resources())
        .placement_decision(&decision(NS, "fake-1", Some("fake"), &["c0"]))
        .build();
    let p = placement(
        "p",
        policy(
            "Exact",
            json!([builtin("Balance", 2), builtin("ResourceAllocatableCPU", 1)]),
        ),
    );
    assert_eq!(selected_set(&schedule(&p, &snap)), ["c1", "c2"]);
}

#[test]
fn reschedule_when_cluster_added_and_deleted() {
    let p = placement(
        "p",
        policy(
            "Exact",
            json!([
                builtin("ResourceAllocatableCPU", 1),
                builtin("ResourceAllocatableMemory", 1)
            ]),
        ),
    );
    assert_eq!(
        selected_set(&schedule(&p, &hub(&resources()).build())),
        ["c0", "c2"]
    );
    let mut clusters = resources();
    clusters.push(
        member("c3")
            .resource("cpu", "10", "10")
            .resource("memory", "100", "100"),
    );
    assert_eq!(
        selected_set(&schedule(&p, &hub(&clusters).build())),
        ["c2", "c3"]
    );
    assert_eq!(
        selected_set(&schedule(&p, &hub(&resources()).build())),
        ["c0", "c2"]
    );
}

#[test]
fn addon_scores_drive_selection() {
    let p = placement(
        "p",
        policy(
            "Exact",
            json!([{"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}}, "weight": 1}]),
        ),
    );
    let with = |vals: [i32; 3]| {
        let valid = Some(secs(now(), 10));
        let mut b = hub(&resources());
        for (c, v) in ["c0", "c1", "c2"].iter().zip(vals) {
            b = b.addon_score(&addon_score(c, "demo", &[("demo", v)], valid));
        }
        b.build()
    };
    assert_eq!(
        selected_set(&schedule(&p, &hub(&resources()).build())),
        ["c0", "c1"]
    );
    assert_eq!(
        selected_set(&schedule(&p, &with([80, 90, 100]))),
        ["c1", "c2"]
    );
    assert_eq!(
        selected_set(&schedule(&p, &with([100, 90, 100]))),
        ["c0", "c2"]
    );
}

#[test]
fn taint_toleration_matches() {
    let snap = hub(&[
        member("c0").taint("key1", "value1", "NoSelect", Some(now())),
        member("c1").taint("key2", "value2", "NoSelect", Some(now())),
        member("c2").taint("key2", "value3", "NoSelect", Some(now())),
    ])
    .build();
    let p = placement(
        "p",
        json!({"numberOfClusters": 3, "tolerations": [
            {"key": "key1", "operator": "Exists"}, {"key": "key2", "operator": "Equal", "value": "value2"}]}),
    );
    assert_eq!(selected_set(&schedule(&p, &snap)), ["c0", "c1"]);
}

#[test]
fn taint_effects_and_no_select_if_new_for_decided_clusters() {
    let clusters = vec![
        member("c0").taint("key1", "", "NoSelect", Some(now())),
        member("c1").taint("key2", "", "NoSelectIfNew", Some(now())),
        member("c2").taint("key3", "", "PreferNoSelect", Some(now())),
        member("c3"),
    ];
    let p = placement(
        "p",
        json!({"numberOfClusters": 4, "tolerations": [
            {"key": "key1", "operator": "Exists", "effect": "NoSelectIfNew"},
            {"key": "key2", "operator": "Exists", "effect": "NoSelect"},
            {"key": "key3", "operator": "Exists", "effect": "NoSelect"},
            {"key": "key4", "operator": "Exists", "effect": "PreferNoSelect"}]}),
    );
    let r = schedule(&p, &hub(&clusters).build());
    assert_eq!(selected_set(&r), ["c2", "c3"]);
    let mut clusters2 = clusters.clone();
    clusters2[3] = member("c3").taint("key4", "", "NoSelectIfNew", Some(now()));
    let snap = with_decision(hub(&clusters2), &r, "p").build();
    assert_eq!(selected_set(&schedule(&p, &snap)), ["c2", "c3"]);
}

#[test]
fn reschedule_when_toleration_seconds_expire() {
    let t0 = now();
    let clusters = vec![
        member("c0").taint("key1", "", "NoSelect", Some(t0)),
        member("c1").taint("key2", "", "NoSelect", Some(t0)),
        member("c2").taint("key2", "", "NoSelect", Some(secs(t0, -60))),
        member("c3"),
    ];
    let p = placement(
        "p",
        json!({"numberOfClusters": 4, "tolerations": [
            {"key": "key1", "operator": "Exists", "tolerationSeconds": 10},
            {"key": "key2", "operator": "Exists", "tolerationSeconds": 20}]}),
    );
    let sched = |snap: &Snapshot, at| {
        ocm_placement::Scheduler::new()
            .schedule(&p, snap, at)
            .unwrap()
    };
    let r = sched(&hub(&clusters).build(), t0);
    assert_eq!(selected_set(&r), ["c0", "c1", "c3"]);
    let snap = with_decision(hub(&clusters), &r, "p").build();
    let r = sched(&snap, t0);
    assert_eq!(r.requeue_after, Some(std::time::Duration::from_secs(10)));
    let r = sched(&snap, secs(t0, 10));
    assert_eq!(selected_set(&r), ["c1", "c3"]);
    let snap = with_decision(hub(&clusters), &r, "p").build();
    let r = sched(&snap, secs(t0, 10));
    assert_eq!(r.requeue_after, Some(std::time::Duration::from_secs(10)));
    let r = sched(&snap, secs(t0, 20));
    assert_eq!(selected_set(&r), ["c3"]);
    let mut clusters = clusters;
    clusters[3] = member("c3").taint("key3", "", "NoSelect", Some(secs(t0, -60)));
    let r = sched(&hub(&clusters).build(), secs(t0, 20));
    assert!(r.selected.is_empty());
}

#[test]
fn number_of_clusters_changes_and_terminating_clusters() {
    let clusters: Vec<ClusterB> = (0..5).map(|i| member(&format!("c{i}"))).collect();
    let snap = hub(&clusters).build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 10})), &snap);
    assert_eq!(r.selected.len(), 5);
    assert_eq!(r.satisfied.reason, "NotAllDecisionsScheduled");
    let r = schedule(&placement("p", json!({"numberOfClusters": 4})), &snap);
    assert_eq!(
        (r.selected.len(), r.satisfied.reason.as_str()),
        (4, "AllDecisionsScheduled")
    );
    let mut with_deleting = clusters.clone();
    with_deleting[0] = member("c0").deleting();
    let r = schedule(
        &placement("p", json!({"numberOfClusters": 10})),
        &hub(&with_deleting).build(),
    );
    assert_eq!(r.selected.len(), 4);
}

#[test]
fn misconfigured_then_fixed() {
    let snap = hub(&[member("c0")]).build();
    let bad = placement(
        "p",
        json!({"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}),
    );
    let r = schedule(&bad, &snap);
    assert!(r.selected.is_empty());
    assert_eq!(r.slices.len(), 1);
    assert_eq!(
        r.misconfigured.status,
        ocm_api::conditions::ConditionStatus::True
    );
    assert_eq!(
        r.misconfigured.message,
        "TaintToleration:If the operator is Exists, the value should be empty."
    );
    assert_eq!(r.satisfied.reason, "NoManagedClusterMatched");
    let good = placement("p", json!({}));
    let r = schedule(&good, &snap);
    assert_eq!(r.selected.len(), 1);
    assert_eq!(
        r.misconfigured.status,
        ocm_api::conditions::ConditionStatus::False
    );
    assert_eq!(r.satisfied.reason, "AllDecisionsScheduled");
}

#[test]
fn two_bound_sets_and_cluster_sets_filter() {
    let mut clusters: Vec<ClusterB> = (0..5)
        .map(|i| cluster(&format!("a{i}")).label(SET_LABEL, "set1"))
        .collect();
    clusters.extend((0..3).map(|i| cluster(&format!("b{i}")).label(SET_LABEL, "set2")));
    let mut b = Snapshot::builder()
        .cluster_set(&exclusive_set("set1"))
        .cluster_set(&exclusive_set("set2"))
        .binding(&binding(NS, "set1"))
        .binding(&binding(NS, "set2"));
    for c in &clusters {
        b.add_cluster(c.build());
    }
    let snap = b.build();
    let r = schedule(&placement("p", json!({"numberOfClusters": 10})), &snap);
    assert_eq!(r.selected.len(), 8);
    assert_eq!(r.satisfied.reason, "NotAllDecisionsScheduled");
    let r = schedule(&placement("p", json!({"clusterSets": ["set2"]})), &snap);
    assert_eq!(r.selected.len(), 3);
}

#[test]
fn predicate_changes() {
    let clusters = vec![
        member("c0").label("cloud", "Azure").claim("cloud", "Azure"),
        member("c1").label("cloud", "Azure").claim("cloud", "Azure"),
        member("c2")
            .label("cloud", "Amazon")
            .claim("cloud", "Amazon"),
        member("c3")
            .label("cloud", "Amazon")
            .claim("cloud", "Amazon"),
        member("c4")
            .label("cloud", "Amazon")
            .claim("cloud", "Amazon"),
    ];
    let snap = hub(&clusters)
        .addon_score(&addon_score("c0", "demo", &[("demo", 70)], None))
        .addon_score(&addon_score("c1", "demo", &[("demo", 90)], None))
        .build();
    let by_label = |cloud: &str| {
        placement(
            "p",
            json!({"predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"cloud": cloud}}}}]}),
        )
    };
    let r = schedule(&by_label("Amazon"), &snap);
    assert_eq!(r.groups[0].clusters.len(), 3);
    assert_eq!(schedule(&by_label("Azure"), &snap).selected.len(), 2);
    let by_claim = placement(
        "p",
        json!({"predicates": [{"requiredClusterSelector": {"claimSelector": {"matchExpressions": [
            {"key": "cloud", "operator": "In", "values": ["Amazon"]}]}}}]}),
    );
    assert_eq!(schedule(&by_claim, &snap).selected.len(), 3);
    let bad_cel = placement(
        "p",
        json!({"predicates": [{"requiredClusterSelector": {"celSelector": {"celExpressions": ["xxxx.expression"]}}}]}),
    );
    let r = schedule(&bad_cel, &snap);
    assert!(r.selected.is_empty());
    assert_eq!(r.status.code, StatusCode::Misconfigured);
    let cel = placement(
        "p",
        json!({"predicates": [{"requiredClusterSelector": {"celSelector": {"celExpressions": [
            "managedCluster.scores(\"demo\").filter(s, s.name == 'demo').all(e, e.value > 80)"]}}}]}),
    );
    assert_eq!(selected(&schedule(&cel, &snap)), ["c1"]);
}
