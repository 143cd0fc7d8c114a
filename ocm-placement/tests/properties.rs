//! Property tests of scheduler invariants.

use crate::common;

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

// ---------------------------------------------------------------------------------------------
// Topology spread (our addition, `Scheduler::with_topology_spread`).
// ---------------------------------------------------------------------------------------------

/// The spread keys: `(topologyKey, topologyKeyType, number of values)`.
const SPREAD_KEYS: [(&str, &str, usize); 3] = [
    ("zone", "Label", 4),
    ("region", "Claim", 2),
    ("rack", "Label", 7),
];

#[derive(Debug, Clone)]
struct SpreadCluster {
    /// A value index per spread key, `None` without the key.
    values: [Option<usize>; 3],
    /// `e3` is filtered out by the predicate.
    env: u8,
    score: Option<i32>,
}

#[derive(Debug, Clone)]
struct SpreadTerm {
    key: usize,
    max_skew: i32,
    hard: bool,
}

#[derive(Debug, Clone)]
struct SpreadCase {
    clusters: Vec<SpreadCluster>,
    terms: Vec<SpreadTerm>,
    number_of_clusters: Option<i32>,
}

fn spread_case() -> impl Strategy<Value = SpreadCase> {
    let cluster = (
        proptest::option::weighted(0.9, 0..SPREAD_KEYS[0].2),
        proptest::option::weighted(0.9, 0..SPREAD_KEYS[1].2),
        proptest::option::weighted(0.9, 0..SPREAD_KEYS[2].2),
        0..4u8,
        proptest::option::of(-100..=100i32),
    )
        .prop_map(|(a, b, c, env, score)| SpreadCluster {
            values: [a, b, c],
            env,
            score,
        });
    let term = (0..3usize, 1..4i32, any::<bool>()).prop_map(|(key, max_skew, hard)| SpreadTerm {
        key,
        max_skew,
        hard,
    });
    (
        proptest::collection::vec(cluster, 0..120),
        proptest::collection::vec(term, 1..4),
        proptest::option::of(0..140i32),
    )
        .prop_map(|(clusters, terms, number_of_clusters)| SpreadCase {
            clusters,
            terms,
            number_of_clusters,
        })
}

fn spread_snapshot(c: &SpreadCase) -> Snapshot {
    let mut b = Snapshot::builder()
        .cluster_set(&exclusive_set(SET))
        .binding(&binding(NS, SET));
    for (i, cl) in c.clusters.iter().enumerate() {
        let mut cb = member(&format!("c{i:03}")).label("env", &format!("e{}", cl.env));
        for (k, v) in cl.values.iter().enumerate() {
            let Some(v) = v else { continue };
            let (key, kind, _) = SPREAD_KEYS[k];
            let value = format!("{key}-{v}");
            cb = if kind == "Claim" {
                cb.claim(key, &value)
            } else {
                cb.label(key, &value)
            };
        }
        b.add_cluster(cb.build());
        if let Some(s) = cl.score {
            b.add_addon_score(&addon_score(
                &format!("c{i:03}"),
                "demo",
                &[("demo", s)],
                None,
            ));
        }
    }
    b.build()
}

fn spread_placement(
    c: &SpreadCase,
    terms: &[SpreadTerm],
    with_policy: bool,
) -> ocm_api::cluster::v1beta1::Placement {
    let mut spec = json!({
        "predicates": [{"requiredClusterSelector": {"labelSelector": {"matchExpressions": [
            {"key": "env", "operator": "NotIn", "values": ["e3"]}]}}}],
        "prioritizerPolicy": {"mode": "Exact", "configurations": [
            {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "demo"}}, "weight": 1}]}
    });
    if let Some(n) = c.number_of_clusters {
        spec["numberOfClusters"] = json!(n);
    }
    if with_policy {
        let terms: Vec<Value> = terms
            .iter()
            .map(|t| {
                let (key, kind, _) = SPREAD_KEYS[t.key];
                json!({"topologyKey": key, "topologyKeyType": kind, "maxSkew": t.max_skew,
                    "whenUnsatisfiable": if t.hard { "DoNotSchedule" } else { "ScheduleAnyway" }})
            })
            .collect();
        spec["spreadPolicy"] = json!({"spreadConstraints": terms});
    }
    placement("p", spec)
}

/// Index of a cluster from its name (`c007` → 7).
fn spread_index(name: &str) -> usize {
    name[1..].parse().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// The skew invariant: every `DoNotSchedule` constraint's skew (most selected clusters in
    /// one domain minus fewest, over the domains of the clusters it allows) stays within
    /// `maxSkew`; nothing without a hard key is selected; never more than wanted; with one
    /// hard constraint the count is the largest the constraint allows; with soft constraints
    /// only the count is upstream's; a short selection says why in `PlacementSatisfied`.
    #[test]
    fn spread_keeps_hard_skews_within_max_skew(c in spread_case()) {
        let snap = spread_snapshot(&c);
        let p = spread_placement(&c, &c.terms, true);
        let r = Scheduler::new().with_topology_spread(true).schedule(&p, &snap, now()).unwrap();
        let feasible: Vec<usize> = (0..c.clusters.len()).filter(|&i| c.clusters[i].env != 3).collect();
        let hard: Vec<&SpreadTerm> = c.terms.iter().filter(|t| t.hard).collect();
        let allowed: Vec<usize> = feasible
            .iter()
            .copied()
            .filter(|&i| hard.iter().all(|t| c.clusters[i].values[t.key].is_some()))
            .collect();
        let wanted = c.number_of_clusters.map_or(feasible.len(), |n| (n as usize).min(feasible.len()));
        let mut chosen: Vec<usize> = r.selected_names().iter().map(|n| spread_index(n)).collect();
        chosen.sort();
        let before = chosen.len();
        chosen.dedup();
        prop_assert_eq!(before, chosen.len(), "a cluster selected twice");
        prop_assert!(chosen.len() <= wanted);
        for i in &chosen {
            prop_assert!(allowed.contains(i), "c{i:03} selected but not allowed");
        }
        for t in &hard {
            let mut counts = vec![None::<usize>; SPREAD_KEYS[t.key].2];
            for &i in &allowed {
                if let Some(v) = c.clusters[i].values[t.key] {
                    counts[v] = Some(0);
                }
            }
            for &i in &chosen {
                if let Some(v) = c.clusters[i].values[t.key] {
                    counts[v] = counts[v].map(|n| n + 1);
                }
            }
            let present: Vec<usize> = counts.iter().flatten().copied().collect();
            if let (Some(max), Some(min)) = (present.iter().max(), present.iter().min()) {
                prop_assert!((max - min) as i32 <= t.max_skew, "{t:?}: counts {counts:?}");
            }
        }
        // The report agrees with the oracle.
        let outcome = r.spread.as_ref().expect("spread outcome");
        prop_assert_eq!(outcome.selected, chosen.len());
        prop_assert_eq!(outcome.wanted, wanted);
        for (report, t) in outcome.constraints.iter().zip(&c.terms) {
            if t.hard {
                prop_assert!(report.skew as i32 <= t.max_skew);
            }
        }
        match hard.as_slice() {
            [] => prop_assert_eq!(chosen.len(), wanted),
            [t] => {
                // The largest count one hard constraint allows: every domain holds at most
                // (its smallest domain's size + maxSkew).
                let mut sizes = vec![0usize; SPREAD_KEYS[t.key].2];
                for &i in &allowed {
                    if let Some(v) = c.clusters[i].values[t.key] {
                        sizes[v] += 1;
                    }
                }
                let sizes: Vec<usize> = sizes.into_iter().filter(|&s| s > 0).collect();
                let best = sizes.iter().min().map_or(0, |&smallest| {
                    sizes.iter().map(|&s| s.min(smallest + t.max_skew as usize)).sum()
                });
                prop_assert_eq!(chosen.len(), wanted.min(best));
            }
            _ => {}
        }
        if chosen.len() < wanted {
            prop_assert_eq!(r.satisfied.status, ocm_api::conditions::ConditionStatus::False);
            prop_assert!(r.satisfied.message.contains(": spreadConstraints["), "{}", r.satisfied.message);
            prop_assert_eq!(r.unscheduled, c.number_of_clusters.map_or(0, i64::from).max(wanted as i64) - chosen.len() as i64);
        }
        // Decisions hold exactly the selection.
        let mut in_slices: Vec<_> = r.slices.iter().flat_map(|s| s.clusters.iter().copied()).collect();
        in_slices.sort();
        let mut sel = r.selected.clone();
        sel.sort();
        prop_assert_eq!(in_slices, sel);
    }

    /// With the option off (upstream's behaviour) spread constraints change nothing; with it
    /// on, a placement without constraints is scheduled as upstream does.
    #[test]
    fn spread_off_is_upstream(c in spread_case()) {
        let snap = spread_snapshot(&c);
        let with = spread_placement(&c, &c.terms, true);
        let without = spread_placement(&c, &c.terms, false);
        let upstream = Scheduler::new().schedule(&without, &snap, now()).unwrap();
        for r in [
            Scheduler::new().schedule(&with, &snap, now()).unwrap(),
            Scheduler::new().with_topology_spread(false).schedule(&with, &snap, now()).unwrap(),
            Scheduler::new().with_topology_spread(true).schedule(&without, &snap, now()).unwrap(),
        ] {
            prop_assert_eq!(&r.selected, &upstream.selected);
            prop_assert_eq!(&r.slices, &upstream.slices);
            prop_assert_eq!(&r.satisfied, &upstream.satisfied);
            prop_assert_eq!(&r.misconfigured, &upstream.misconfigured);
            prop_assert_eq!(r.unscheduled, upstream.unscheduled);
            prop_assert!(r.spread.is_none());
        }
    }

    /// One soft constraint over clusters that all have the key chooses exactly what the same
    /// constraint as `DoNotSchedule` chooses whenever the hard one reaches the wanted count.
    #[test]
    fn soft_spread_matches_hard_when_the_hard_one_is_satisfiable(
        c in spread_case(),
        key in 0..3usize,
        max_skew in 1..4i32,
    ) {
        let mut c = c;
        for cl in &mut c.clusters {
            cl.values[key].get_or_insert(0);
        }
        let snap = spread_snapshot(&c);
        let hard = [SpreadTerm { key, max_skew, hard: true }];
        let soft = [SpreadTerm { key, max_skew, hard: false }];
        let scheduler = Scheduler::new().with_topology_spread(true);
        let h = scheduler.schedule(&spread_placement(&c, &hard, true), &snap, now()).unwrap();
        let s = scheduler.schedule(&spread_placement(&c, &soft, true), &snap, now()).unwrap();
        if h.unscheduled == 0 {
            // The same clusters (the order may differ when every cluster is selected).
            prop_assert_eq!(selected_set(&s), selected_set(&h));
            prop_assert!(s.spread.as_ref().unwrap().constraints[0].skew as i32 <= max_skew);
        }
        prop_assert_eq!(s.unscheduled, c.number_of_clusters.map_or(0, |n| i64::from(n) - s.selected.len() as i64));
    }
}
