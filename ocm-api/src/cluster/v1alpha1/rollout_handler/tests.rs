use super::*;
use crate::cluster::v1alpha1::{
    MandatoryDecisionGroups, RolloutAll, RolloutConfig, RolloutProgressive,
    RolloutProgressivePerGroup,
};
use proptest::prelude::*;

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

const NOW: &str = "2026-01-01T12:00:00Z";

fn groups(spec: &[(&str, i32, &[&str])]) -> ClusterGroups {
    let mut g = ClusterGroups::default();
    for (name, index, clusters) in spec {
        for c in *clusters {
            g.insert(GroupKey::new(*name, *index), *c);
        }
    }
    g
}

fn status(cluster: &str, index: i32, status: RolloutStatus, since: &str) -> ClusterRolloutStatus {
    ClusterRolloutStatus::new(cluster, GroupKey::new("", index), status).since(ts(since))
}

fn names(list: &[ClusterRolloutStatus]) -> Vec<&str> {
    list.iter().map(|s| s.cluster_name.as_str()).collect()
}

fn all(deadline: Option<&str>) -> RolloutStrategy {
    RolloutStrategy {
        type_: Some(RolloutType::All),
        all: Some(RolloutAll {
            config: RolloutConfig {
                progress_deadline: deadline.map(str::to_string),
                ..Default::default()
            },
        }),
        ..Default::default()
    }
}

fn progressive(
    max_concurrency: Option<IntOrString>,
    max_failures: Option<IntOrString>,
    mandatory: &[MandatoryDecisionGroup],
    min_success: Option<&str>,
    deadline: Option<&str>,
) -> RolloutStrategy {
    RolloutStrategy {
        type_: Some(RolloutType::Progressive),
        progressive: Some(RolloutProgressive {
            config: RolloutConfig {
                min_success_time: min_success.map(str::to_string),
                progress_deadline: deadline.map(str::to_string),
                max_failures,
            },
            mandatory_decision_groups: MandatoryDecisionGroups {
                mandatory_decision_groups: (!mandatory.is_empty()).then(|| mandatory.to_vec()),
            },
            max_concurrency,
        }),
        ..Default::default()
    }
}

fn by_name(name: &str) -> MandatoryDecisionGroup {
    MandatoryDecisionGroup {
        group_name: Some(name.into()),
        group_index: None,
    }
}

#[test]
fn all_rolls_out_everything_and_times_out_slow_clusters() {
    let g = groups(&[("", 0, &["c1", "c2", "c3"])]);
    let handler = RolloutHandler::new(&g);
    let r = handler.rollout(&all(None), &[], ts(NOW)).unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["c1", "c2", "c3"]);
    assert!(r.recheck_after.is_none());

    let current = [
        status("c1", 0, RolloutStatus::Progressing, "2026-01-01T11:50:00Z"),
        status("c2", 0, RolloutStatus::Progressing, "2026-01-01T11:58:00Z"),
        status("c3", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
    ];
    let r = handler
        .rollout(&all(Some("5m")), &current, ts(NOW))
        .unwrap();
    assert_eq!(names(&r.clusters_timeout), ["c1"]);
    assert_eq!(r.clusters_timeout[0].status, RolloutStatus::TimeOut);
    assert_eq!(names(&r.clusters_to_rollout), ["c2"]);
    assert_eq!(r.recheck_after, Some(Duration::from_secs(180)));
    // All never breaches: maxFailures is the cluster count.
    assert!(!r.max_failure_breach);
}

#[test]
fn untyped_strategy_defaults_to_all() {
    let g = groups(&[("", 0, &["a", "b"])]);
    let r = RolloutHandler::new(&g)
        .rollout(&RolloutStrategy::default(), &[], ts(NOW))
        .unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["a", "b"]);
}

/// Upstream's `GetRolloutCluster` refuses a type it does not know; so does ours, with its
/// message, instead of failing to decode the object.
#[test]
fn an_unknown_type_is_refused_with_upstreams_message() {
    let g = groups(&[("", 0, &["a", "b"])]);
    let strategy: RolloutStrategy =
        serde_json::from_value(serde_json::json!({"type": "Canary"})).unwrap();
    assert_eq!(strategy.type_, Some(RolloutType::Unknown("Canary".into())));
    let err = RolloutHandler::new(&g)
        .rollout(&strategy, &[], ts(NOW))
        .unwrap_err();
    assert_eq!(err, RolloutError::UnknownType("Canary".into()));
    assert_eq!(err.to_string(), "incorrect rollout strategy type Canary");
}

#[test]
fn progressive_respects_max_concurrency_batch_by_batch() {
    let g = groups(&[("", 0, &["c1", "c2", "c3", "c4", "c5", "c6"])]);
    let h = RolloutHandler::new(&g);
    let s = progressive(Some(IntOrString::Int(2)), None, &[], None, None);
    let r = h.rollout(&s, &[], ts(NOW)).unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["c1", "c2"]);

    // In flight: nothing new starts.
    let busy = [
        status("c1", 0, RolloutStatus::Progressing, NOW),
        status("c2", 0, RolloutStatus::Progressing, NOW),
    ];
    let r = h.rollout(&s, &busy, ts(NOW)).unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["c1", "c2"]);
    assert!(
        r.clusters_to_rollout
            .iter()
            .all(|c| c.status == RolloutStatus::Progressing)
    );

    // Done: the next two.
    let done = [
        status("c1", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
        status("c2", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
    ];
    let r = h.rollout(&s, &done, ts(NOW)).unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["c3", "c4"]);
}

#[test]
fn progressive_soaks_for_min_success_time() {
    let g = groups(&[("", 0, &["c1", "c2", "c3"])]);
    let s = progressive(Some(IntOrString::Int(1)), None, &[], Some("5m"), None);
    let current = [status(
        "c1",
        0,
        RolloutStatus::Succeeded,
        "2026-01-01T11:59:00Z",
    )];
    let r = RolloutHandler::new(&g)
        .rollout(&s, &current, ts(NOW))
        .unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["c1"]);
    assert_eq!(
        r.clusters_to_rollout[0].recheck_time,
        Some(ts("2026-01-01T12:04:00Z"))
    );
    assert_eq!(r.recheck_after, Some(Duration::from_secs(240)));
    let later = ts("2026-01-01T12:05:00Z");
    let r = RolloutHandler::new(&g)
        .rollout(&s, &current, later)
        .unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["c2"]);
}

#[test]
fn progressive_stops_when_failures_exceed_max_failures() {
    let g = groups(&[("", 0, &["c1", "c2", "c3", "c4", "c5"])]);
    let s = progressive(
        Some(IntOrString::Int(2)),
        Some(IntOrString::Int(1)),
        &[],
        None,
        None,
    );
    let one_failed = [
        status("c1", 0, RolloutStatus::Failed, NOW),
        status("c2", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
    ];
    let r = RolloutHandler::new(&g)
        .rollout(&s, &one_failed, ts(NOW))
        .unwrap();
    assert!(!r.max_failure_breach);
    assert_eq!(names(&r.clusters_to_rollout), ["c1", "c3"]);

    let two_failed = [
        status("c1", 0, RolloutStatus::Failed, NOW),
        status("c2", 0, RolloutStatus::Failed, NOW),
    ];
    let r = RolloutHandler::new(&g)
        .rollout(&s, &two_failed, ts(NOW))
        .unwrap();
    assert!(r.max_failure_breach);
    assert!(
        r.clusters_to_rollout
            .iter()
            .all(|c| c.status != RolloutStatus::ToApply)
    );
}

#[test]
fn max_failures_larger_than_the_cluster_count_tolerates_nothing() {
    // Upstream quirk: 5 > 3 clusters collapses to the default 0.
    let g = groups(&[("", 0, &["c1", "c2", "c3"])]);
    let s = progressive(
        Some(IntOrString::Int(1)),
        Some(IntOrString::Int(5)),
        &[],
        None,
        None,
    );
    let r = RolloutHandler::new(&g)
        .rollout(&s, &[status("c1", 0, RolloutStatus::Failed, NOW)], ts(NOW))
        .unwrap();
    assert!(r.max_failure_breach);
}

#[test]
fn mandatory_groups_go_first() {
    let g = groups(&[("canary", 0, &["a", "b"]), ("prod", 1, &["c", "d", "e"])]);
    let h = RolloutHandler::new(&g);
    let s = progressive(None, None, &[by_name("canary")], None, None);
    let r = h.rollout(&s, &[], ts(NOW)).unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["a", "b"]);

    let canary_busy = [
        status("a", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
        status("b", 0, RolloutStatus::Progressing, NOW),
    ];
    let r = h.rollout(&s, &canary_busy, ts(NOW)).unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["b"]);

    let canary_done = [
        status("a", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
        status("b", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
    ];
    let r = h.rollout(&s, &canary_done, ts(NOW)).unwrap();
    // maxConcurrency unset: every remaining cluster at once.
    assert_eq!(names(&r.clusters_to_rollout), ["c", "d", "e"]);

    // By index too.
    let by_index = MandatoryDecisionGroup {
        group_name: None,
        group_index: Some(1),
    };
    let s = progressive(None, None, &[by_index], None, None);
    let r = h.rollout(&s, &[], ts(NOW)).unwrap();
    assert_eq!(names(&r.clusters_to_rollout), ["c", "d", "e"]);
}

#[test]
fn progressive_per_group_goes_group_by_group() {
    let g = groups(&[("", 0, &["a", "b"]), ("", 1, &["c"]), ("", 2, &["d", "e"])]);
    let s = RolloutStrategy {
        type_: Some(RolloutType::ProgressivePerGroup),
        progressive_per_group: Some(RolloutProgressivePerGroup::default()),
        ..Default::default()
    };
    let h = RolloutHandler::new(&g);
    assert_eq!(
        names(&h.rollout(&s, &[], ts(NOW)).unwrap().clusters_to_rollout),
        ["a", "b"]
    );
    let first_done = [
        status("a", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
        status("b", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
    ];
    assert_eq!(
        names(
            &h.rollout(&s, &first_done, ts(NOW))
                .unwrap()
                .clusters_to_rollout
        ),
        ["c"]
    );
}

#[test]
fn removed_clusters_are_reported() {
    let g = groups(&[("", 0, &["a"])]);
    let current = [
        status("gone", 0, RolloutStatus::Succeeded, NOW),
        status("a", 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"),
    ];
    let r = RolloutHandler::new(&g)
        .rollout(&all(None), &current, ts(NOW))
        .unwrap();
    assert_eq!(names(&r.clusters_removed), ["gone"]);
    assert!(r.clusters_to_rollout.is_empty());
}

#[test]
fn groups_beyond_the_group_count_are_skipped_after_mandatory() {
    // Upstream walks indexes 0..n; with indexes {0, 5} the group at 5 is never reached.
    let g = groups(&[("m", 0, &["a"]), ("", 5, &["z"])]);
    let s = progressive(None, None, &[by_name("m")], None, None);
    let done = [status(
        "a",
        0,
        RolloutStatus::Succeeded,
        "2026-01-01T11:00:00Z",
    )];
    let r = RolloutHandler::new(&g).rollout(&s, &done, ts(NOW)).unwrap();
    assert!(r.clusters_to_rollout.is_empty());
}

#[test]
fn size_and_parse_errors() {
    let s = |v: &str| IntOrString::String(v.into());
    assert_eq!(calculate_rollout_size(&s("7%"), 100, 0), Ok(8));
    assert_eq!(calculate_rollout_size(&s("0%"), 10, 4), Ok(4));
    assert_eq!(calculate_rollout_size(&s("100%"), 10, 0), Ok(10));
    assert_eq!(calculate_rollout_size(&IntOrString::Int(0), 10, 3), Ok(3));
    assert_eq!(
        calculate_rollout_size(&s("abc"), 10, 0)
            .unwrap_err()
            .to_string(),
        "'abc' is an invalid maximum threshold value: string is not a percentage"
    );
    let g = groups(&[("", 0, &["a"])]);
    let bad = progressive(Some(s("x%")), None, &[], None, None);
    assert_eq!(
        RolloutHandler::new(&g)
            .rollout(&bad, &[], ts(NOW))
            .unwrap_err()
            .to_string(),
        "failed to parse the provided maxConcurrency: 'x%' is an invalid maximum threshold value: string is not a percentage"
    );
    let bad = progressive(None, None, &[], None, Some("2d"));
    assert_eq!(
        RolloutHandler::new(&g)
            .rollout(&bad, &[], ts(NOW))
            .unwrap_err()
            .to_string(),
        "invalid timeout format"
    );
}

#[test]
fn groups_from_placement_decisions() {
    use crate::cluster::v1beta1::{ClusterDecision, PlacementDecision, PlacementDecisionStatus};
    let pd = |name: &str, index: Option<&str>, group: Option<&str>, clusters: &[&str]| {
        let mut labels = std::collections::BTreeMap::new();
        if let Some(i) = index {
            labels.insert(labels::DECISION_GROUP_INDEX.to_string(), i.to_string());
        }
        if let Some(g) = group {
            labels.insert(labels::DECISION_GROUP_NAME.to_string(), g.to_string());
        }
        let mut d = PlacementDecision::default();
        d.metadata.name = Some(name.into());
        d.metadata.labels = Some(labels);
        d.status = Some(PlacementDecisionStatus {
            decisions: clusters
                .iter()
                .map(|c| ClusterDecision {
                    cluster_name: (*c).into(),
                    ..Default::default()
                })
                .collect(),
        });
        d
    };
    let decisions = [
        pd("p-decision-1", Some("0"), Some("canary"), &["a", "b"]),
        pd("p-decision-2", Some("1"), None, &["c"]),
    ];
    let g = ClusterGroups::from_decisions(&decisions).unwrap();
    assert_eq!(g.cluster_count(), 3);
    assert!(g.groups.contains_key(&GroupKey::new("canary", 0)));
    assert!(g.groups.contains_key(&GroupKey::new("", 1)));
    let err = ClusterGroups::from_decisions(&[pd("x", None, None, &["a"])]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "incorrect group index: strconv.Atoi: parsing \"\": invalid syntax"
    );
}

fn arb_status() -> impl Strategy<Value = RolloutStatus> {
    prop_oneof![
        Just(RolloutStatus::ToApply),
        Just(RolloutStatus::Progressing),
        Just(RolloutStatus::Succeeded),
        Just(RolloutStatus::Failed),
        Just(RolloutStatus::TimeOut),
        Just(RolloutStatus::Skip),
    ]
}

proptest! {
    #[test]
    fn progressive_never_exceeds_max_concurrency_and_is_deterministic(
        n in 1usize..40,
        concurrency in 1i32..10,
        known in proptest::collection::vec((0usize..40, arb_status(), 0i64..3600), 0..40),
    ) {
        let clusters: Vec<String> = (0..n).map(|i| format!("c{i:02}")).collect();
        let mut g = ClusterGroups::default();
        for c in &clusters {
            g.insert(GroupKey::new("", 0), c.clone());
        }
        let now = ts(NOW);
        let mut seen = HashSet::new();
        let current: Vec<_> = known
            .into_iter()
            .filter(|(i, _, _)| *i < n && seen.insert(*i))
            .map(|(i, st, ago)| {
                let since = now.checked_sub(SignedDuration::from_secs(ago)).unwrap();
                ClusterRolloutStatus::new(clusters[i].clone(), GroupKey::new("", 0), st).since(since)
            })
            .collect();
        let s = progressive(Some(IntOrString::Int(concurrency)), None, &[], Some("10m"), Some("30m"));
        let h = RolloutHandler::new(&g);
        let r1 = h.rollout(&s, &current, now).unwrap();
        prop_assert!(r1.clusters_to_rollout.len() <= concurrency as usize);
        let r2 = h.rollout(&s, &current, now).unwrap();
        prop_assert_eq!(r1, r2);
    }

    #[test]
    fn nothing_outside_mandatory_groups_starts_before_they_finish(
        canary in 1usize..5,
        rest in 1usize..10,
        done in proptest::collection::vec(any::<bool>(), 5),
    ) {
        let mut g = ClusterGroups::default();
        for i in 0..canary {
            g.insert(GroupKey::new("canary", 0), format!("a{i}"));
        }
        for i in 0..rest {
            g.insert(GroupKey::new("", 1), format!("b{i}"));
        }
        let current: Vec<_> = (0..canary)
            .filter(|i| done[*i])
            .map(|i| status(&format!("a{i}"), 0, RolloutStatus::Succeeded, "2026-01-01T11:00:00Z"))
            .collect();
        let all_done = current.len() == canary;
        let s = progressive(Some(IntOrString::Int(3)), None, &[by_name("canary")], None, None);
        let r = RolloutHandler::new(&g).rollout(&s, &current, ts(NOW)).unwrap();
        let started_rest = r.clusters_to_rollout.iter().any(|c| c.cluster_name.starts_with('b'));
        prop_assert_eq!(started_rest, all_done);
    }
}
