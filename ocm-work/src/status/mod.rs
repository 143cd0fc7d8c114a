//! ManifestWork status bookkeeping: merging manifest conditions across syncs and aggregating
//! manifest conditions into work conditions, with upstream's rules, reasons and messages.
//!
//! Everything here is pure; `now` is passed in. [`StatusBuilder`] puts the pieces together the
//! way the work agent's sync does: from the apply results and the live objects it builds each
//! manifest's conditions and feedback and the work's aggregated conditions.

mod build;

pub use build::{Observed, StatusBuilder, prune_stale_rule_conditions, with_every_field};

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::work as c;
use ocm_api::work::v1::{ManifestCondition, ManifestResourceMeta};

/// Merges freshly computed manifest conditions into existing ones.
///
/// For every new condition whose type exists with a **different** observedGeneration, the old
/// one is removed first (so its transition time restarts and it moves to the end); then the
/// new condition is set with set-condition semantics. Conditions of other types are kept.
pub fn merge_status_conditions(
    existing: &[Condition],
    new: &[NewCondition],
    now: &Time,
) -> Vec<Condition> {
    let mut merged = existing.to_vec();
    for condition in new {
        if let Some(old) = conditions::find(&merged, &condition.type_)
            && old.observed_generation != condition.observed_generation
        {
            conditions::remove(&mut merged, &condition.type_);
        }
        conditions::set(&mut merged, condition.clone(), now);
    }
    merged
}

/// A freshly computed manifest entry: its resource meta and new conditions.
#[derive(Clone, Debug, PartialEq)]
pub struct NewManifestCondition {
    /// The resource the entry is about.
    pub resource_meta: ManifestResourceMeta,
    /// Its freshly computed conditions.
    pub conditions: Vec<NewCondition>,
}

type MetaKey = (i32, String, String, String, String, String, String);

fn key(meta: &ManifestResourceMeta, with_ordinal: bool) -> MetaKey {
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    (
        if with_ordinal { meta.ordinal } else { 0 },
        s(&meta.group),
        s(&meta.version),
        s(&meta.kind),
        s(&meta.resource),
        s(&meta.name),
        s(&meta.namespace),
    )
}

/// Merges the manifest entries of this sync (`new`, in spec order) into the stored ones.
///
/// An entry matches a stored one by full resource meta, or else by resource meta without the
/// ordinal (when that is unique among the stored entries and not empty). A matched entry keeps
/// its stored status feedback and merges its conditions with [`merge_status_conditions`]; an
/// unmatched one starts fresh. Stored entries without a new counterpart are dropped.
pub fn merge_manifest_conditions(
    existing: &[ManifestCondition],
    new: &[NewManifestCondition],
    now: &Time,
) -> Vec<ManifestCondition> {
    let mut by_full: HashMap<MetaKey, usize> = HashMap::new();
    let mut by_identity: HashMap<MetaKey, Option<usize>> = HashMap::new();
    let empty_identity = key(&ManifestResourceMeta::default(), false);
    for (i, entry) in existing.iter().enumerate() {
        by_full.entry(key(&entry.resource_meta, true)).or_insert(i);
        let identity = key(&entry.resource_meta, false);
        if identity != empty_identity {
            by_identity
                .entry(identity)
                .and_modify(|slot| *slot = None)
                .or_insert(Some(i));
        }
    }
    new.iter()
        .map(|entry| {
            let matched = by_full
                .get(&key(&entry.resource_meta, true))
                .copied()
                .or_else(|| {
                    by_identity
                        .get(&key(&entry.resource_meta, false))
                        .copied()
                        .flatten()
                });
            match matched.map(|i| &existing[i]) {
                Some(old) => ManifestCondition {
                    resource_meta: entry.resource_meta.clone(),
                    status_feedbacks: old.status_feedbacks.clone(),
                    conditions: merge_status_conditions(&old.conditions, &entry.conditions, now),
                },
                None => ManifestCondition {
                    resource_meta: entry.resource_meta.clone(),
                    status_feedbacks: None,
                    conditions: entry
                        .conditions
                        .iter()
                        .map(|c| {
                            let mut fresh = c.clone();
                            fresh.last_transition_time = None;
                            fresh.into_condition(now)
                        })
                        .collect(),
                },
            }
        })
        .collect()
}

/// The work's `Applied` condition, or `None` when no manifest has an `Applied` condition (for
/// example a work without manifests).
pub fn work_applied_condition(
    manifests: &[ManifestCondition],
    generation: i64,
) -> Option<NewCondition> {
    let applied: Vec<_> = manifests
        .iter()
        .filter_map(|m| conditions::find(&m.conditions, c::CONDITION_APPLIED))
        .collect();
    if applied.is_empty() {
        return None;
    }
    let condition = if applied.iter().any(|a| a.status == "False") {
        NewCondition::new(
            c::CONDITION_APPLIED,
            ConditionStatus::False,
            c::REASON_APPLIED_MANIFEST_WORK_FAILED,
            c::MESSAGE_APPLIED_MANIFEST_WORK_FAILED,
        )
    } else {
        NewCondition::new(
            c::CONDITION_APPLIED,
            ConditionStatus::True,
            c::REASON_APPLIED_MANIFEST_WORK_COMPLETE,
            c::MESSAGE_APPLIED_MANIFEST_WORK_COMPLETE,
        )
    };
    Some(condition.observed_generation(generation))
}

/// The work's `Available` condition, aggregated over the manifests' `Available` conditions.
pub fn work_available_condition(manifests: &[ManifestCondition], generation: i64) -> NewCondition {
    let total = manifests.len();
    let (mut yes, mut no, mut unknown) = (0usize, 0usize, 0usize);
    for m in manifests {
        match conditions::status(&m.conditions, c::CONDITION_AVAILABLE) {
            Some(ConditionStatus::True) => yes += 1,
            Some(ConditionStatus::False) => no += 1,
            Some(ConditionStatus::Unknown) => unknown += 1,
            None => {}
        }
    }
    let (status, reason, message) = if no > 0 {
        (
            ConditionStatus::False,
            c::REASON_RESOURCES_NOT_AVAILABLE,
            format!("{no} of {total} resources are not available"),
        )
    } else if unknown > 0 {
        (
            ConditionStatus::Unknown,
            c::REASON_RESOURCES_STATUS_UNKNOWN,
            format!("{unknown} of {total} resources have unknown status"),
        )
    } else if yes == 0 {
        (
            ConditionStatus::Unknown,
            c::REASON_RESOURCES_STATUS_UNKNOWN,
            c::MESSAGE_NO_AVAILABLE_RESOURCE.to_string(),
        )
    } else {
        (
            ConditionStatus::True,
            c::REASON_RESOURCES_AVAILABLE,
            c::MESSAGE_RESOURCES_AVAILABLE.to_string(),
        )
    };
    NewCondition::new(c::CONDITION_AVAILABLE, status, reason, message)
        .observed_generation(generation)
}

/// Work conditions aggregated from the manifests' condition-rule conditions (every type but
/// `Available` whose reason starts with `ConditionRule`), sorted by type.
///
/// `Progressing` is True if any manifest's is True, else Unknown if any is Unknown, else
/// False. Every other type is False if any is False, else Unknown if any is Unknown or none is
/// True, else True.
pub fn work_rule_conditions(manifests: &[ManifestCondition], generation: i64) -> Vec<NewCondition> {
    #[derive(Default)]
    struct Tally<'a> {
        yes: usize,
        no: usize,
        unknown: usize,
        messages: Vec<&'a str>,
    }
    let mut by_type: BTreeMap<&str, Tally<'_>> = BTreeMap::new();
    for m in manifests {
        for cond in &m.conditions {
            if cond.type_ == c::CONDITION_AVAILABLE
                || !cond.reason.starts_with(c::CONDITION_RULE_REASON_PREFIX)
            {
                continue;
            }
            let tally = by_type.entry(cond.type_.as_str()).or_default();
            match ConditionStatus::parse(&cond.status) {
                Some(ConditionStatus::True) => tally.yes += 1,
                Some(ConditionStatus::False) => tally.no += 1,
                _ => tally.unknown += 1,
            }
            tally.messages.push(cond.message.as_str());
        }
    }
    by_type
        .into_iter()
        .map(|(type_, t)| {
            let status = if type_ == c::CONDITION_PROGRESSING {
                if t.yes > 0 {
                    ConditionStatus::True
                } else if t.unknown > 0 {
                    ConditionStatus::Unknown
                } else {
                    ConditionStatus::False
                }
            } else if t.no > 0 {
                ConditionStatus::False
            } else if t.unknown > 0 || t.yes == 0 {
                ConditionStatus::Unknown
            } else {
                ConditionStatus::True
            };
            let message = match t.messages.as_slice() {
                [only] if !only.is_empty() => (*only).to_string(),
                all => format!("Aggregated from {} manifest conditions", all.len()),
            };
            NewCondition::new(type_, status, c::REASON_CONDITION_RULES_AGGREGATED, message)
                .observed_generation(generation)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Time {
        Time(s.parse().unwrap())
    }

    fn meta(ordinal: i32, name: &str) -> ManifestResourceMeta {
        ManifestResourceMeta {
            ordinal,
            group: Some("apps".into()),
            version: Some("v1".into()),
            kind: Some("Deployment".into()),
            resource: Some("deployments".into()),
            name: Some(name.into()),
            namespace: Some("default".into()),
        }
    }

    fn cond(
        type_: &str,
        status: ConditionStatus,
        reason: &str,
        generation: Option<i64>,
    ) -> NewCondition {
        let c = NewCondition::new(type_, status, reason, "");
        match generation {
            Some(g) => c.observed_generation(g),
            None => c,
        }
    }

    fn manifest(conds: &[(&str, ConditionStatus, &str)]) -> ManifestCondition {
        let now = t("2026-01-01T00:00:00Z");
        ManifestCondition {
            resource_meta: meta(0, "x"),
            status_feedbacks: None,
            conditions: conds
                .iter()
                .map(|(ty, st, reason)| {
                    NewCondition::new(*ty, *st, *reason, "m").into_condition(&now)
                })
                .collect(),
        }
    }

    #[test]
    fn generation_change_resets_transition_time_and_moves_condition_last() {
        let t0 = t("2026-01-01T00:00:00Z");
        let t1 = t("2026-01-01T01:00:00Z");
        let existing = merge_status_conditions(
            &[],
            &[
                cond(
                    "Applied",
                    ConditionStatus::True,
                    "AppliedManifestComplete",
                    Some(1),
                ),
                cond(
                    "Available",
                    ConditionStatus::True,
                    "ResourceAvailable",
                    None,
                ),
            ],
            &t0,
        );
        let same = merge_status_conditions(
            &existing,
            &[cond(
                "Applied",
                ConditionStatus::True,
                "AppliedManifestComplete",
                Some(1),
            )],
            &t1,
        );
        assert_eq!(same, existing);
        let bumped = merge_status_conditions(
            &existing,
            &[cond(
                "Applied",
                ConditionStatus::True,
                "AppliedManifestComplete",
                Some(2),
            )],
            &t1,
        );
        assert_eq!(bumped[0].type_, "Available");
        assert_eq!(bumped[1].type_, "Applied");
        assert_eq!(bumped[1].last_transition_time, t1);
        assert_eq!(bumped[1].observed_generation, Some(2));
    }

    #[test]
    fn manifest_entries_match_by_meta_then_identity_and_keep_feedback() {
        let t0 = t("2026-01-01T00:00:00Z");
        let t1 = t("2026-01-01T01:00:00Z");
        let applied = |g| {
            vec![cond(
                "Applied",
                ConditionStatus::True,
                "AppliedManifestComplete",
                Some(g),
            )]
        };
        let first = merge_manifest_conditions(
            &[],
            &[
                NewManifestCondition {
                    resource_meta: meta(0, "a"),
                    conditions: applied(1),
                },
                NewManifestCondition {
                    resource_meta: meta(1, "b"),
                    conditions: applied(1),
                },
            ],
            &t0,
        );
        let mut stored = first.clone();
        stored[1].status_feedbacks = Some(Default::default());
        // "b" moved to ordinal 0 and "a" was removed from the work; "c" is new.
        let second = merge_manifest_conditions(
            &stored,
            &[
                NewManifestCondition {
                    resource_meta: meta(0, "b"),
                    conditions: applied(1),
                },
                NewManifestCondition {
                    resource_meta: meta(1, "c"),
                    conditions: applied(1),
                },
            ],
            &t1,
        );
        assert_eq!(second.len(), 2);
        assert_eq!(second[0].resource_meta, meta(0, "b"));
        assert!(
            second[0].status_feedbacks.is_some(),
            "feedback kept on identity match"
        );
        assert_eq!(second[0].conditions[0].last_transition_time, t0);
        assert_eq!(second[1].conditions[0].last_transition_time, t1);
        assert!(second[1].status_feedbacks.is_none());
    }

    #[test]
    fn ambiguous_identity_does_not_match() {
        let t0 = t("2026-01-01T00:00:00Z");
        let stored = vec![
            manifest(&[("Applied", ConditionStatus::True, "AppliedManifestComplete")]),
            manifest(&[("Applied", ConditionStatus::False, "AppliedManifestFailed")]),
        ];
        let mut stored = stored;
        stored[1].resource_meta.ordinal = 1;
        let merged = merge_manifest_conditions(
            &stored,
            &[NewManifestCondition {
                resource_meta: meta(5, "x"),
                conditions: vec![cond(
                    "Applied",
                    ConditionStatus::True,
                    "AppliedManifestComplete",
                    Some(1),
                )],
            }],
            &t0,
        );
        assert_eq!(merged[0].conditions.len(), 1);
        assert_eq!(merged[0].conditions[0].observed_generation, Some(1));
    }

    #[test]
    fn work_applied_follows_manifests() {
        assert!(work_applied_condition(&[], 1).is_none());
        let ok = manifest(&[("Applied", ConditionStatus::True, "AppliedManifestComplete")]);
        let bad = manifest(&[("Applied", ConditionStatus::False, "AppliedManifestFailed")]);
        let applied = work_applied_condition(std::slice::from_ref(&ok), 3).unwrap();
        assert_eq!(applied.status, ConditionStatus::True);
        assert_eq!(applied.reason, "AppliedManifestWorkComplete");
        assert_eq!(applied.message, "Apply manifest work complete");
        assert_eq!(applied.observed_generation, Some(3));
        let failed = work_applied_condition(&[ok, bad], 3).unwrap();
        assert_eq!(failed.reason, "AppliedManifestWorkFailed");
        assert_eq!(failed.message, "Failed to apply manifest work");
    }

    #[test]
    fn work_available_table() {
        use ConditionStatus::*;
        let m = |s| manifest(&[("Available", s, "x")]);
        let none = manifest(&[]);
        let got = work_available_condition(&[m(True), m(False), m(Unknown)], 2);
        assert_eq!(
            (got.status, got.reason.as_str(), got.message.as_str()),
            (
                False,
                "ResourcesNotAvailable",
                "1 of 3 resources are not available"
            )
        );
        let got = work_available_condition(&[m(True), m(Unknown), m(Unknown)], 2);
        assert_eq!(
            (got.status, got.message.as_str()),
            (Unknown, "2 of 3 resources have unknown status")
        );
        let got = work_available_condition(&[], 2);
        assert_eq!(
            (got.status, got.reason.as_str(), got.message.as_str()),
            (
                Unknown,
                "ResourcesStatusUnknown",
                "cannot get any available resource "
            )
        );
        let got = work_available_condition(std::slice::from_ref(&none), 2);
        assert_eq!(got.status, Unknown);
        let got = work_available_condition(&[m(True), none], 2);
        assert_eq!(
            (got.status, got.reason.as_str(), got.message.as_str()),
            (True, "ResourcesAvailable", "All resources are available")
        );
        assert_eq!(got.observed_generation, Some(2));
    }

    #[test]
    fn rule_conditions_aggregate_by_type() {
        use ConditionStatus::*;
        let rule = "ConditionRuleEvaluated";
        let manifests = vec![
            manifest(&[
                ("Complete", True, rule),
                ("Progressing", False, rule),
                ("Available", False, "ConditionRuleX"),
            ]),
            manifest(&[("Complete", Unknown, rule), ("Progressing", True, rule)]),
            manifest(&[("Degraded", True, "NotARule")]),
            manifest(&[("Custom", True, rule)]),
        ];
        let got = work_rule_conditions(&manifests, 7);
        let summary: Vec<_> = got
            .iter()
            .map(|c| (c.type_.as_str(), c.status, c.message.as_str()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("Complete", Unknown, "Aggregated from 2 manifest conditions"),
                ("Custom", True, "m"),
                ("Progressing", True, "Aggregated from 2 manifest conditions"),
            ]
        );
        assert!(got.iter().all(|c| c.reason == "ConditionRulesAggregated" && c.observed_generation == Some(7)));
    }
}
