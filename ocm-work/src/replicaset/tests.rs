use super::status::*;
use super::*;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ocm_api::conditions::NewCondition;
use ocm_api::work::v1::{Manifest, ManifestWorkStatus, ManifestsTemplate};
use ocm_api::work::v1alpha1::{LocalPlacementReference, ManifestWorkReplicaSetSpec};
use serde_json::json;

fn rs(namespace: &str, name: &str) -> ManifestWorkReplicaSet {
    let mut rs = ManifestWorkReplicaSet::new(
        name,
        ManifestWorkReplicaSetSpec {
            manifest_work_template: Some(ManifestWorkSpec {
                workload: Some(ManifestsTemplate {
                    manifests: Some(vec![Manifest::new(json!({
                        "apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "cm", "namespace": "default"}
                    }))]),
                }),
                ..Default::default()
            }),
            placement_refs: vec![LocalPlacementReference {
                name: "p1".into(),
                rollout_strategy: None,
            }],
            ..Default::default()
        },
    );
    rs.metadata.namespace = Some(namespace.into());
    rs.metadata.labels = Some([("team".to_string(), "a".to_string())].into());
    rs
}

fn t(s: &str) -> Time {
    Time(s.parse().unwrap())
}

fn work_with(
    generation: i64,
    conds: &[(&str, ConditionStatus, Option<i64>, &str)],
) -> ManifestWork {
    let mut w = build_work(&rs("ns", "mwrs"), Some("w"), "c1", "p1");
    w.metadata.generation = Some(generation);
    let mut list = Vec::new();
    for (type_, status, gen_, at) in conds {
        let mut c = NewCondition::new(*type_, *status, "R", "");
        if let Some(g) = gen_ {
            c = c.observed_generation(*g);
        }
        conditions::set(&mut list, c, &t(at));
    }
    w.status = Some(ManifestWorkStatus {
        conditions: Some(list),
        resource_status: None,
    });
    w
}

#[test]
fn owner_label_and_its_length_rule() {
    assert_eq!(owner_label(&rs("ns", "mwrs")), "ns.mwrs");
    assert!(validate_owner_label("ns.mwrs").is_ok());
    let long = format!("{}.{}", "n".repeat(40), "m".repeat(30));
    let err = validate_owner_label(&long).unwrap_err();
    assert!(err.starts_with(&format!("ManifestWork owner reference \"{long}\" (namespace.name) is not a valid label value: must be no more than 63 bytes; recreate")), "{err}");
}

#[test]
fn works_carry_labels_and_generate_name() {
    let replica_set = rs("ns", "mwrs");
    let new = build_work(&replica_set, None, "cluster1", "p1");
    assert_eq!(new.metadata.generate_name.as_deref(), Some("mwrs"));
    assert_eq!(new.metadata.name, None);
    assert_eq!(new.metadata.namespace.as_deref(), Some("cluster1"));
    let l = new.metadata.labels.clone().unwrap();
    assert_eq!(
        l["work.open-cluster-management.io/manifestworkreplicaset"],
        "ns.mwrs"
    );
    assert_eq!(l["work.open-cluster-management.io/placementname"], "p1");
    assert_eq!(l["team"], "a");
    let existing = build_work(&replica_set, Some("mwrsabcde"), "cluster1", "p1");
    assert_eq!(existing.metadata.name.as_deref(), Some("mwrsabcde"));
    assert!(existing.metadata.generate_name.is_none());
    assert!(manifest_work_equal(&new, &existing));
}

#[test]
fn equality_ignores_creation_timestamps_and_empty_lists() {
    let replica_set = rs("ns", "mwrs");
    let a = build_work(&replica_set, Some("w"), "c", "p");
    let mut b = a.clone();
    b.spec.workload = Some(ManifestsTemplate {
        manifests: Some(vec![Manifest::new(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "default", "creationTimestamp": null}
        }))]),
    });
    b.spec.manifest_configs = Some(vec![]);
    assert!(manifest_work_equal(&a, &b));
    b.metadata.annotations = Some([("x".to_string(), "y".to_string())].into());
    assert!(!manifest_work_equal(&a, &b));
}

#[test]
fn upstream_rollout_status_needs_progressing() {
    use ConditionStatus::*;
    let g = GroupKey::new("", 0);
    let st = |w: &ManifestWork| {
        cluster_rollout_status("c1", g.clone(), w, SuccessCriteria::ProgressingCondition).status
    };
    let at = "2026-01-01T00:00:00Z";
    // Applied and Available, but no Progressing: the upstream trap.
    assert_eq!(
        st(&work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Available", True, Some(1), at)
            ]
        )),
        RolloutStatus::ToApply
    );
    assert_eq!(
        st(&work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Progressing", True, Some(1), at)
            ]
        )),
        RolloutStatus::Progressing
    );
    assert_eq!(
        st(&work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Progressing", False, Some(1), at)
            ]
        )),
        RolloutStatus::Succeeded
    );
    assert_eq!(
        st(&work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Progressing", Unknown, Some(1), at)
            ]
        )),
        RolloutStatus::Progressing
    );
    assert_eq!(
        st(&work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Progressing", True, Some(1), at),
                ("Degraded", True, Some(1), "2026-01-01T00:01:00Z")
            ]
        )),
        RolloutStatus::Failed
    );
    // Degraded ignored when Progressing is False.
    assert_eq!(
        st(&work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Progressing", False, Some(1), at),
                ("Degraded", True, Some(1), at)
            ]
        )),
        RolloutStatus::Succeeded
    );
    // Stale generations mean ToApply.
    assert_eq!(
        st(&work_with(
            2,
            &[
                ("Applied", True, Some(1), at),
                ("Progressing", False, Some(2), at)
            ]
        )),
        RolloutStatus::ToApply
    );
    assert_eq!(
        st(&work_with(
            2,
            &[
                ("Applied", True, Some(2), at),
                ("Progressing", False, Some(2), at),
                ("Degraded", False, Some(1), at)
            ]
        )),
        RolloutStatus::ToApply
    );
    // The transition time is Degraded's for Failed, Progressing's otherwise.
    let failed = cluster_rollout_status(
        "c1",
        g.clone(),
        &work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Progressing", True, Some(1), at),
                ("Degraded", True, Some(1), "2026-01-01T00:01:00Z"),
            ],
        ),
        SuccessCriteria::ProgressingCondition,
    );
    assert_eq!(
        failed.last_transition_time,
        Some("2026-01-01T00:01:00Z".parse().unwrap())
    );
}

#[test]
fn opt_in_counts_available_works_as_succeeded() {
    use ConditionStatus::*;
    let g = GroupKey::new("", 0);
    let st = |w: &ManifestWork| {
        cluster_rollout_status("c1", g.clone(), w, SuccessCriteria::AppliedAndAvailable)
    };
    let at = "2026-01-01T00:00:00Z";
    let later = "2026-01-01T00:02:00Z";
    let done = st(&work_with(
        1,
        &[
            ("Applied", True, Some(1), at),
            ("Available", True, Some(1), later),
        ],
    ));
    assert_eq!(done.status, RolloutStatus::Succeeded);
    assert_eq!(done.last_transition_time, Some(later.parse().unwrap()));
    assert_eq!(
        st(&work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Available", Unknown, Some(1), at)
            ]
        ))
        .status,
        RolloutStatus::Progressing
    );
    assert_eq!(
        st(&work_with(1, &[("Applied", False, Some(1), at)])).status,
        RolloutStatus::Failed
    );
    assert_eq!(st(&work_with(1, &[])).status, RolloutStatus::ToApply);
    assert_eq!(
        st(&work_with(
            2,
            &[
                ("Applied", True, Some(1), at),
                ("Available", True, Some(1), at)
            ]
        ))
        .status,
        RolloutStatus::ToApply
    );
    // A work with condition rules keeps upstream's judgement.
    assert_eq!(
        st(&work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Available", True, Some(1), at),
                ("Progressing", True, Some(1), at)
            ]
        ))
        .status,
        RolloutStatus::Progressing
    );
}

#[test]
fn status_conditions_and_summaries() {
    use ConditionStatus::*;
    let at = "2026-01-01T00:00:00Z";
    let template = rs("ns", "mwrs").spec.manifest_work_template.unwrap();
    let mut deleting = work_with(
        1,
        &[
            ("Applied", True, Some(1), at),
            ("Available", True, Some(1), at),
        ],
    );
    deleting.metadata.deletion_timestamp = Some(t(at));
    let works = [
        work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Available", True, Some(1), at),
            ],
        ),
        work_with(
            1,
            &[
                ("Applied", True, Some(1), at),
                ("Progressing", True, Some(1), at),
            ],
        ),
        deleting,
    ];
    let counts = WorkCounts::count(&works, &template);
    assert_eq!(
        counts,
        WorkCounts {
            applied: 2,
            progressing: 1,
            available: 1,
            degraded: 0
        }
    );
    assert_eq!(
        manifestwork_applied(2, &counts, Some("AsExpected")).reason,
        "Processing"
    );
    let all_ok = WorkCounts {
        applied: 2,
        progressing: 0,
        available: 2,
        degraded: 0,
    };
    let c = manifestwork_applied(2, &all_ok, Some("AsExpected"));
    assert_eq!(
        (c.status, c.reason.as_str(), c.message.as_str()),
        (True, "AsExpected", "")
    );
    let degraded = WorkCounts {
        degraded: 1,
        progressing: 1,
        ..all_ok
    };
    assert_eq!(
        manifestwork_applied(2, &degraded, None).reason,
        "NotAsExpected"
    );
    assert_eq!(
        manifestwork_applied(0, &WorkCounts::default(), Some("PlacementDecisionEmpty")).reason,
        "PlacementDecisionEmpty"
    );
    assert_eq!(
        manifestwork_applied(0, &WorkCounts::default(), Some("AsExpected")).reason,
        "NotAsExpected"
    );
    assert_eq!(
        available_decision_groups(2, 3, 4),
        "2 (3 / 4 clusters applied)"
    );
    assert_eq!(placement_rolled_out(0, 0).reason, "Complete");
    assert_eq!(placement_rolled_out(3, 2).reason, "Progressing");
    assert_eq!(placement_verified(0).reason, "PlacementDecisionEmpty");
    assert_eq!(placement_verified(1).status, True);
    assert_eq!(placement_not_found().reason, "PlacementDecisionNotFound");
    assert_eq!(invalid_manifest_work_name("m").message, "m");
}

#[test]
fn works_awaiting_progressing_are_applied_now_without_any_progressing_condition() {
    use ConditionStatus::{False, True};
    let t0 = "2026-01-01T00:00:00Z";
    // Applied at this generation, no Progressing: the rollout waits for it in vain.
    assert!(awaits_progressing(&work_with(
        2,
        &[("Applied", True, Some(2), t0)]
    )));
    assert!(awaits_progressing(&work_with(
        2,
        &[
            ("Applied", True, Some(2), t0),
            ("Available", True, Some(2), t0)
        ]
    )));
    // Not applied, applied only at an older generation, or never applied: not yet.
    assert!(!awaits_progressing(&work_with(
        2,
        &[("Applied", False, Some(2), t0)]
    )));
    assert!(!awaits_progressing(&work_with(
        2,
        &[("Applied", True, Some(1), t0)]
    )));
    assert!(!awaits_progressing(&work_with(2, &[])));
    // A Progressing condition, even a stale one, means condition rules are at work.
    assert!(!awaits_progressing(&work_with(
        2,
        &[
            ("Applied", True, Some(2), t0),
            ("Progressing", False, Some(1), t0)
        ]
    )));
    let message = stalled_rollout_message(3, 5);
    assert!(message.starts_with("3 of 5 ManifestWorks are applied but report no Progressing condition, so the rollout cannot advance"), "{message}");
}
