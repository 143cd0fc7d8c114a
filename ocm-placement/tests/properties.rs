//! Property tests of scheduler invariants.

mod common;

use common::*;
use jiff::Timestamp;
use ocm_placement::{Scheduler, Snapshot};
use proptest::prelude::*;
use serde_json::{Value, json};

const EFFECTS: [&str; 3] = ["NoSelect", "PreferNoSelect", "NoSelectIfNew"];
const KEYS: [&str; 3] = ["k1", "k2", "k3"];
const VALUES: [&str; 3] = ["", "v1", "v2"];

#[derive(Debug, Clone)]
struct GenTaint {
    key: usize,
    value: usize,
    effect: usize,
    age: i64,
}

#[derive(Debug, Clone)]
struct GenToleration {
    key: Option<usize>,
    exists: bool,
    value: usize,
    effect: Option<usize>,
    seconds: Option<i64>,
}

fn taint() -> impl Strategy<Value = GenTaint> {
    (0..3usize, 0..3usize, 0..3usize, 0..40i64).prop_map(|(key, value, effect, age)| GenTaint {
        key,
        value,
        effect,
        age,
    })
}

fn toleration() -> impl Strategy<Value = GenToleration> {
    (
        proptest::option::of(0..3usize),
        any::<bool>(),
        0..3usize,
        proptest::option::of(0..3usize),
        proptest::option::of(0..30i64),
    )
        .prop_map(|(key, exists, value, effect, seconds)| GenToleration {
            key,
            exists,
            value,
            effect,
            seconds,
        })
}

#[derive(Debug, Clone)]
struct Case {
    clusters: Vec<(u8, Vec<GenTaint>, Option<i32>)>,
    tolerations: Vec<GenToleration>,
    number_of_clusters: Option<i32>,
    decided: Vec<usize>,
    per_group: Option<i32>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(
            (
                0..4u8,
                proptest::collection::vec(taint(), 0..3),
                proptest::option::of(-100..=100i32),
            ),
            0..260,
        ),
        proptest::collection::vec(toleration(), 0..4),
        proptest::option::of(0..300i32),
        proptest::collection::vec(0..260usize, 0..20),
        proptest::option::of(0..150i32),
    )
        .prop_map(
            |(clusters, tolerations, number_of_clusters, decided, per_group)| Case {
                clusters,
                tolerations,
                number_of_clusters,
                decided,
                per_group,
            },
        )
}

fn toleration_json(t: &GenToleration) -> Value {
    // Keep tolerations valid: an empty key needs Exists, Exists needs an empty value.
    let exists = t.exists || t.key.is_none();
    let mut v = json!({"operator": if exists { "Exists" } else { "Equal" }});
    if let Some(k) = t.key {
        v["key"] = json!(KEYS[k]);
    }
    if !exists && t.value > 0 {
        v["value"] = json!(VALUES[t.value]);
    }
    if let Some(e) = t.effect {
        v["effect"] = json!(EFFECTS[e]);
    }
    if let Some(s) = t.seconds {
        v["tolerationSeconds"] = json!(s);
    }
    v
}

/// Independent oracle: is a NoSelect taint tolerated at `now`?
fn no_select_tolerated(t: &GenTaint, tols: &[GenToleration], now: Timestamp) -> bool {
    tols.iter().any(|tol| {
        let exists = tol.exists || tol.key.is_none();
        let effect_ok = tol.effect.is_none_or(|e| EFFECTS[e] == "NoSelect");
        let key_ok = tol.key.is_none_or(|k| k == t.key);
        let value_ok = exists || tol.value == t.value;
        let time_ok = tol.seconds.is_none_or(|s| {
            let added = secs(now, -t.age);
            now < secs(added, s)
        });
        effect_ok && key_ok && value_ok && time_ok
    })
}

fn build(c: &Case, reversed: bool) -> Snapshot {
    let mut b = Snapshot::builder()
        .cluster_set(&exclusive_set(SET))
        .binding(&binding(NS, SET));
    let mut order: Vec<usize> = (0..c.clusters.len()).collect();
    if reversed {
        order.reverse();
    }
    for i in order {
        let (env, taints, score) = &c.clusters[i];
        let mut cb = member(&format!("c{i}")).label("env", &format!("e{env}"));
        for t in taints {
            cb = cb.taint(
                KEYS[t.key],
                VALUES[t.value],
                EFFECTS[t.effect],
                Some(secs(now(), -t.age)),
            );
        }
        b.add_cluster(cb.build());
        if let Some(s) = score {
            b.add_addon_score(&addon_score(
                &format!("c{i}"),
                "demo",
                &[("demo", *s)],
                None,
            ));
        }
    }
    let decided: Vec<String> = c
        .decided
        .iter()
        .filter(|i| **i < c.clusters.len())
        .map(|i| format!("c{i}"))
        .collect();
    let refs: Vec<&str> = decided.iter().map(String::as_str).collect();
    b.placement_decision(&decision(NS, "p-decision-1", Some("p"), &refs))
        .placement_decision(&decision(
            "other",
            "o-decision-1",
            Some("o"),
            &refs[..refs.len() / 2],
        ))
        .build()
}

fn placement_of(c: &Case) -> ocm_api::cluster::v1beta1::Placement {
    let mut spec = json!({
        "tolerations": c.tolerations.iter().map(toleration_json).collect::<Vec<_>>(),
        "predicates": [{"requiredClusterSelector": {"labelSelector": {"matchExpressions": [
            {"key": "env", "operator": "NotIn", "values": ["e3"]}]}}}],
        "prioritizerPolicy": {"mode": "Additive", "configurations": [
            {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}}, "weight": 1}]},
        "decisionStrategy": {"groupStrategy": {"decisionGroups": [
            {"groupName": "zero", "groupClusterSelector": {"labelSelector": {"matchLabels": {"env": "e0"}}}}]}}
    });
    if let Some(n) = c.number_of_clusters {
        spec["numberOfClusters"] = json!(n);
    }
    if let Some(g) = c.per_group {
        spec["decisionStrategy"]["groupStrategy"]["clustersPerDecisionGroup"] = json!(g);
    }
    placement("p", spec)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn scheduler_invariants(c in case()) {
        let snap = build(&c, false);
        let p = placement_of(&c);
        let r = Scheduler::new().schedule(&p, &snap, now()).unwrap();

        // Never more than numberOfClusters.
        if let Some(n) = c.number_of_clusters {
            prop_assert!(r.selected.len() <= n as usize);
        }
        // Never a cluster whose NoSelect taint is not tolerated.
        for id in &r.selected {
            let name = r.cluster_name(*id);
            let i: usize = name[1..].parse().unwrap();
            for t in &c.clusters[i].1 {
                if EFFECTS[t.effect] == "NoSelect" {
                    prop_assert!(no_select_tolerated(t, &c.tolerations, now()), "{name} selected despite {t:?}");
                }
            }
        }
        // Slices hold at most 100 clusters and together exactly the selection, once each.
        let mut in_slices: Vec<_> = r.slices.iter().flat_map(|s| s.clusters.iter().copied()).collect();
        prop_assert!(r.slices.iter().all(|s| s.clusters.len() <= 100));
        prop_assert!(!r.slices.is_empty());
        in_slices.sort();
        let mut sel = r.selected.clone();
        sel.sort();
        prop_assert_eq!(in_slices, sel);
        // Names inside a slice are sorted.
        for s in &r.slices {
            let names: Vec<&str> = s.clusters.iter().map(|id| r.cluster_name(*id)).collect();
            prop_assert!(names.windows(2).all(|w| w[0] < w[1]));
        }

        // Deterministic: same input, and the same input added in another order.
        let again = Scheduler::new().schedule(&p, &snap, now()).unwrap();
        prop_assert_eq!(&again.selected, &r.selected);
        prop_assert_eq!(&again.slices, &r.slices);
        let rev = Scheduler::new().schedule(&p, &build(&c, true), now()).unwrap();
        prop_assert_eq!(rev.selected_names(), r.selected_names());
        prop_assert_eq!(&rev.slices, &r.slices);
        prop_assert_eq!(rev.requeue_after, r.requeue_after);
    }
}
