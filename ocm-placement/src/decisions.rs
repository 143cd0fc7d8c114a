//! Decision groups and PlacementDecision slices.
//!
//! The selected clusters are split into decision groups (`spec.decisionStrategy.groupStrategy`)
//! and each group into PlacementDecision objects of at most
//! [`MAX_CLUSTERS_PER_DECISION`] clusters, named and labelled like upstream:
//!
//! 1. Group length from `clustersPerDecisionGroup`: an integer as is, `"N%"` as
//!    `ceil(N / 100 * total)`; anything else is misconfigured; a length ≤ 0 or above the total
//!    becomes the total.
//! 2. Each `decisionGroups[i]` (in order) takes the still-unassigned selected clusters its
//!    label and claim selectors match, sorted by name and chunked by the length, all named
//!    `groupName`. A selector error stops here: the groups built so far are kept.
//! 3. The remaining clusters, sorted by name and chunked, form groups named `""`.
//! 4. No group at all gives one empty group named `""`.
//!
//! PlacementDecisions are numbered from 1 across groups: `<placement>-decision-<n>`; a group
//! with no clusters still gets one (empty) PlacementDecision.
//!
//! # Scores in decisions (our addition)
//!
//! Upstream's API has `spec.sortBy`, `spec.scoreRateLimit`, `status.lastScoreUpdateTime` and
//! `ClusterDecision.score`, but its scheduler neither reads nor writes them (an implementation
//! of the accepted proposal, "Placement score visibility", is not merged). With
//! [`Scheduler::with_decision_scores`](crate::Scheduler::with_decision_scores) (the hub
//! controller's `PlacementDecisionScore` gate) they mean what the API and the proposal say:
//!
//! * every `ClusterDecision` carries the cluster's total prioritizer score (absent when it is 0,
//!   as Go's `omitzero` writes it), whatever `sortBy` says;
//! * `sortBy: Score` orders the clusters by score, highest first, ties by name: inside each
//!   PlacementDecision, and when cutting groups by `clustersPerDecisionGroup` (each declared
//!   group's clusters, then the remaining ones, are chunked in that order), so the first
//!   group holds the best clusters. `ClusterName` (the default) keeps upstream's name order;
//! * a round whose decisions differ from the current ones only in scores or order (the same
//!   clusters selected, in PlacementDecision objects of the same names) writes them at most
//!   once per
//!   `scoreRateLimit` (default `1m`; `<digits>h|m|s`) after `status.lastScoreUpdateTime`
//!   ([`score_update`]); any other change writes at once, with the latest scores. Every
//!   write that changes a score sets `lastScoreUpdateTime` to the time of the round.
//! * An invalid `scoreRateLimit` (the CRD's pattern refuses it, so only objects written
//!   without the CRD's validation carry one) makes `PlacementMisconfigured` `True` with a
//!   message naming the field; the default `1m` is used and the decisions are written.
//!
//! Without the option nothing of this happens: decisions are name-ordered and carry no score,
//! as upstream's.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ocm_api::cluster::v1beta1::{
    ClusterDecision, DecisionGroupStatus, GroupStrategy, Placement, PlacementDecision,
    PlacementDecisionStatus,
};
use ocm_api::constants::{labels, placement as placement_consts};

use crate::plugins::predicate::selector_specs;
use crate::result::ScoredCluster;
use crate::snapshot::{ClusterId, Snapshot};

/// Most clusters in one PlacementDecision.
pub const MAX_CLUSTERS_PER_DECISION: usize = placement_consts::MAX_CLUSTERS_PER_DECISION;

/// One decision group.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecisionGroup {
    /// Position in the group list (the `decision-group-index` label).
    pub index: usize,
    /// `groupName` of the strategy entry, or `""` for leftover groups.
    pub name: String,
    /// Member clusters in name order (in score order with `sortBy: Score` and
    /// [`Scheduler::with_decision_scores`](crate::Scheduler::with_decision_scores)).
    pub clusters: Vec<ClusterId>,
    /// Names of this group's PlacementDecision objects, in order.
    pub decisions: Vec<String>,
}

/// One PlacementDecision object to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecisionSlice {
    /// Object name: `<placement>-decision-<n>`.
    pub name: String,
    /// Index of the group the slice belongs to.
    pub group_index: usize,
    /// Name of that group.
    pub group_name: String,
    /// The clusters of the slice, in name order (at most [`MAX_CLUSTERS_PER_DECISION`]; in
    /// score order with `sortBy: Score` and
    /// [`Scheduler::with_decision_scores`](crate::Scheduler::with_decision_scores)).
    pub clusters: Vec<ClusterId>,
}

/// Computes the group length from `clustersPerDecisionGroup`.
pub fn group_length(value: Option<&IntOrString>, total: usize) -> Result<usize, String> {
    let not_percentage = |s: &str| format!("{s} invalid type: string is not a percentage");
    let length: i64 = match value {
        None => 0,
        Some(IntOrString::Int(i)) => i64::from(*i),
        Some(IntOrString::String(s)) => match s.strip_suffix('%') {
            Some(p) => {
                let percent: f64 = p.parse().map_err(|_| not_percentage(s))?;
                let l = (percent / 100.0 * total as f64).ceil();
                // Go converts a non-finite or out-of-range float to an undefined value that
                // is negative on common platforms: it then falls back to the total.
                if l.is_finite() && l >= 0.0 && l <= i64::MAX as f64 {
                    l as i64
                } else {
                    -1
                }
            }
            None => return Err(not_percentage(s)),
        },
    };
    let total_i = i64::try_from(total).unwrap_or(i64::MAX);
    Ok(if length <= 0 || length > total_i {
        total
    } else {
        usize::try_from(length).unwrap_or(total)
    })
}

/// Builds the decision groups of the selected clusters. Each group's clusters come in name
/// order, or, with `keep_order`, in the order of `selected` (score order for `sortBy: Score`).
/// On a selector error, returns the groups built before it together with the error text.
pub(crate) fn build_groups(
    strategy: Option<&GroupStrategy>,
    selected: &[ClusterId],
    snapshot: &Snapshot,
    keep_order: bool,
) -> (Vec<(String, Vec<ClusterId>)>, Option<String>) {
    let total = selected.len();
    let mut groups: Vec<(String, Vec<ClusterId>)> = Vec::new();
    let length = match group_length(
        strategy.and_then(|s| s.clusters_per_decision_group.as_ref()),
        total,
    ) {
        Ok(l) => l.max(1),
        Err(e) => return (groups, Some(e)),
    };
    let mut remaining = if keep_order {
        selected.to_vec()
    } else {
        sorted_ids(selected, snapshot.clusters.len())
    };
    let mut error = None;
    let decision_groups = strategy
        .and_then(|s| s.decision_groups.as_deref())
        .unwrap_or_default();
    for group in decision_groups {
        let selector = &group.group_cluster_selector;
        let claim_exprs = selector
            .claim_selector
            .as_ref()
            .and_then(|c| c.match_expressions.as_deref())
            .unwrap_or_default();
        let (label_spec, claim_spec) =
            match selector_specs(selector.label_selector.as_ref(), claim_exprs) {
                Ok(specs) => specs,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            };
        let labels = label_spec.compile(&snapshot.symbols);
        let claims = claim_spec.compile(&snapshot.symbols);
        let (matched, rest): (Vec<ClusterId>, Vec<ClusterId>) = remaining.iter().partition(|id| {
            snapshot
                .clusters
                .get(id.index())
                .is_some_and(|e| labels.matches(&e.labels) && claims.matches(&e.claims))
        });
        remaining = rest;
        for chunk in matched.chunks(length) {
            groups.push((group.group_name.clone(), chunk.to_vec()));
        }
    }
    if error.is_some() {
        return (groups, error);
    }
    for chunk in remaining.chunks(length) {
        groups.push((String::new(), chunk.to_vec()));
    }
    if groups.is_empty() {
        groups.push((String::new(), Vec::new()));
    }
    (groups, None)
}

/// The ids in ascending order: a bitmap pass over the snapshot instead of a sort.
fn sorted_ids(ids: &[ClusterId], cluster_count: usize) -> Vec<ClusterId> {
    if ids.is_sorted() {
        return ids.to_vec();
    }
    let mut mark = vec![false; cluster_count];
    for id in ids {
        if let Some(m) = mark.get_mut(id.index()) {
            *m = true;
        }
    }
    mark.iter()
        .enumerate()
        .filter(|(_, m)| **m)
        .filter_map(|(i, _)| u32::try_from(i).ok().map(ClusterId))
        .collect()
}

/// The `selected` clusters in the order of `scores` (total descending, then name).
pub(crate) fn score_order(selected: &[ClusterId], scores: &[ScoredCluster]) -> Vec<ClusterId> {
    let mut wanted = selected.to_vec();
    wanted.sort_unstable();
    scores
        .iter()
        .map(|s| s.cluster)
        .filter(|id| wanted.binary_search(id).is_ok())
        .collect()
}

/// Cuts groups into PlacementDecision slices, numbering them from 1 across groups.
pub(crate) fn slice_groups(
    placement_name: &str,
    groups: Vec<(String, Vec<ClusterId>)>,
) -> (Vec<DecisionGroup>, Vec<DecisionSlice>) {
    let mut counter = 1usize;
    let mut out_groups = Vec::with_capacity(groups.len());
    let mut slices = Vec::new();
    for (index, (name, clusters)) in groups.into_iter().enumerate() {
        let mut names = Vec::new();
        let chunks: Vec<&[ClusterId]> = if clusters.is_empty() {
            vec![&[]]
        } else {
            clusters.chunks(MAX_CLUSTERS_PER_DECISION).collect()
        };
        for chunk in chunks {
            let slice_name = decision_name(placement_name, counter);
            counter += 1;
            names.push(slice_name.clone());
            slices.push(DecisionSlice {
                name: slice_name,
                group_index: index,
                group_name: name.clone(),
                clusters: chunk.to_vec(),
            });
        }
        out_groups.push(DecisionGroup {
            index,
            name,
            clusters,
            decisions: names,
        });
    }
    (out_groups, slices)
}

/// `<placement>-decision-<n>`.
pub fn decision_name(placement_name: &str, n: usize) -> String {
    format!(
        "{placement_name}{}{n}",
        placement_consts::DECISION_NAME_INFIX
    )
}

impl DecisionGroup {
    /// The `status.decisionGroups` entry of this group.
    pub fn to_status(&self) -> DecisionGroupStatus {
        DecisionGroupStatus {
            decision_group_index: Some(i32::try_from(self.index).unwrap_or(i32::MAX)),
            decision_group_name: Some(self.name.clone()),
            decisions: Some(self.decisions.clone()),
            cluster_count: Some(i32::try_from(self.clusters.len()).unwrap_or(i32::MAX)),
        }
    }
}

impl DecisionSlice {
    /// The labels upstream puts on the PlacementDecision.
    pub fn labels(&self, placement_name: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            (labels::PLACEMENT.to_string(), placement_name.to_string()),
            (
                labels::DECISION_GROUP_NAME.to_string(),
                self.group_name.clone(),
            ),
            (
                labels::DECISION_GROUP_INDEX.to_string(),
                self.group_index.to_string(),
            ),
        ])
    }

    /// The PlacementDecision object for this slice: name, namespace, labels, controller owner
    /// reference to the placement, and `status.decisions` (`reason` empty, no `score`).
    pub fn to_placement_decision(
        &self,
        placement: &Placement,
        snapshot: &Snapshot,
    ) -> PlacementDecision {
        self.to_scored_placement_decision(placement, snapshot, |_| None)
    }

    /// [`to_placement_decision`](Self::to_placement_decision) with each cluster's `score`
    /// from `score` (a score of `Some(0)` is left out, as Go's `omitzero` writes it).
    pub fn to_scored_placement_decision(
        &self,
        placement: &Placement,
        snapshot: &Snapshot,
        score: impl Fn(ClusterId) -> Option<i64>,
    ) -> PlacementDecision {
        let placement_name = placement.metadata.name.clone().unwrap_or_default();
        let owner = OwnerReference {
            api_version: format!("{}/v1beta1", ocm_api::constants::groups::CLUSTER),
            kind: "Placement".to_string(),
            name: placement_name.clone(),
            uid: placement.metadata.uid.clone().unwrap_or_default(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        let mut pd = PlacementDecision::new(&self.name, Default::default());
        pd.metadata = ObjectMeta {
            name: Some(self.name.clone()),
            namespace: placement.metadata.namespace.clone(),
            labels: Some(self.labels(&placement_name)),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        };
        pd.status = Some(PlacementDecisionStatus {
            decisions: self
                .clusters
                .iter()
                .map(|id| ClusterDecision {
                    cluster_name: snapshot.cluster_name(*id).to_string(),
                    reason: String::new(),
                    score: score(*id).filter(|s| *s != 0),
                })
                .collect(),
        });
        pd
    }
}

/// `scoreRateLimit` when the placement does not set it.
pub const DEFAULT_SCORE_RATE_LIMIT: Duration = Duration::from_secs(60);

/// Parses `spec.scoreRateLimit` (`<digits>` then `h`, `m` or `s`; absent means
/// [`DEFAULT_SCORE_RATE_LIMIT`]). The error names the field and says what is expected.
///
/// ```
/// use std::time::Duration;
/// use ocm_placement::decisions::score_rate_limit;
///
/// assert_eq!(score_rate_limit(None), Ok(Duration::from_secs(60)));
/// assert_eq!(score_rate_limit(Some("90s")), Ok(Duration::from_secs(90)));
/// assert_eq!(score_rate_limit(Some("2h")), Ok(Duration::from_secs(7200)));
/// assert!(score_rate_limit(Some("1d")).unwrap_err().contains("spec.scoreRateLimit"));
/// ```
pub fn score_rate_limit(value: Option<&str>) -> Result<Duration, String> {
    let Some(text) = value else {
        return Ok(DEFAULT_SCORE_RATE_LIMIT);
    };
    let invalid = |why: &str| format!("spec.scoreRateLimit {text:?} {why}");
    let (digits, unit) = text.split_at(text.len().saturating_sub(1));
    let seconds_per_unit: u64 = match unit {
        "h" => 3600,
        "m" => 60,
        "s" => 1,
        _ => return Err(invalid("must be a number followed by h, m or s")),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid("must be a number followed by h, m or s"));
    }
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(seconds_per_unit))
        .map(Duration::from_secs)
        .ok_or_else(|| invalid("is too long"))
}

/// What the controller does with a round's PlacementDecisions under `scoreRateLimit` (see the
/// [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScoreUpdate {
    /// Write the decisions. `scores_changed`: some cluster's score differs from the one in the
    /// current decisions (or is new), so `lastScoreUpdateTime` moves to now.
    Write {
        /// Whether any score changes.
        scores_changed: bool,
    },
    /// The decisions differ only in scores or order and the last score update is too recent:
    /// keep the current decisions until `until`.
    Hold {
        /// When the held update may be written.
        until: jiff::Timestamp,
    },
}

/// Decides whether the `desired` PlacementDecisions of a placement may replace its `existing`
/// ones now, given the last score update and the rate limit.
///
/// ```
/// use std::time::Duration;
/// use ocm_api::cluster::v1beta1::PlacementDecision;
/// use ocm_placement::decisions::{ScoreUpdate, score_update};
///
/// let pd = |scores: &[(&str, i64)]| -> PlacementDecision {
///     serde_json::from_value(serde_json::json!({
///         "metadata": {"name": "p-decision-1", "namespace": "ns"},
///         "status": {"decisions": scores.iter().map(|(c, s)|
///             serde_json::json!({"clusterName": c, "reason": "", "score": s})).collect::<Vec<_>>()}
///     })).unwrap()
/// };
/// let now: jiff::Timestamp = "2026-01-01T00:00:30Z".parse()?;
/// let last = Some("2026-01-01T00:00:00Z".parse()?);
/// let minute = Duration::from_secs(60);
/// let have = pd(&[("a", 10), ("b", 5)]);
/// // Scores (and so the order) changed, same clusters: wait until a minute after the last.
/// assert_eq!(
///     score_update(&[pd(&[("b", 20), ("a", 10)])], &[&have], last, minute, now),
///     ScoreUpdate::Hold { until: "2026-01-01T00:01:00Z".parse()? }
/// );
/// // Another cluster selected: written at once.
/// assert_eq!(
///     score_update(&[pd(&[("c", 30), ("a", 10)])], &[&have], last, minute, now),
///     ScoreUpdate::Write { scores_changed: true }
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn score_update(
    desired: &[PlacementDecision],
    existing: &[&PlacementDecision],
    last: Option<jiff::Timestamp>,
    limit: Duration,
    now: jiff::Timestamp,
) -> ScoreUpdate {
    let scores = |pds: &mut dyn Iterator<Item = &PlacementDecision>| {
        let mut all: Vec<(String, Option<i64>)> = pds
            .flat_map(|pd| pd.status.iter().flat_map(|s| s.decisions.iter()))
            .map(|d| (d.cluster_name.clone(), d.score.filter(|s| *s != 0)))
            .collect();
        all.sort();
        all
    };
    let want = scores(&mut desired.iter());
    let have = scores(&mut existing.iter().copied());
    let scored = |all: &[(String, Option<i64>)]| -> Vec<(String, i64)> {
        all.iter()
            .filter_map(|(name, score)| score.map(|s| (name.clone(), s)))
            .collect()
    };
    let scores_changed = scored(&want) != scored(&have);
    let names = |pds: &mut dyn Iterator<Item = &PlacementDecision>| {
        let mut names: Vec<String> = pds.filter_map(|pd| pd.metadata.name.clone()).collect();
        names.sort();
        names
    };
    let same_objects = names(&mut desired.iter()) == names(&mut existing.iter().copied());
    let same_clusters =
        want.len() == have.len() && want.iter().zip(&have).all(|((a, _), (b, _))| a == b);
    let order_or_scores_only = same_objects && same_clusters;
    if order_or_scores_only && let Some(last) = last {
        let limit = jiff::SignedDuration::try_from(limit).unwrap_or(jiff::SignedDuration::MAX);
        let until = last.checked_add(limit).unwrap_or(jiff::Timestamp::MAX);
        if until > now {
            let unchanged = desired.iter().all(|d| {
                existing
                    .iter()
                    .find(|e| e.metadata.name == d.metadata.name)
                    .is_some_and(|e| e.status == d.status)
            });
            if !unchanged {
                return ScoreUpdate::Hold { until };
            }
        }
    }
    ScoreUpdate::Write { scores_changed }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> IntOrString {
        IntOrString::String(v.to_string())
    }

    #[test]
    fn group_length_rules() {
        assert_eq!(group_length(None, 7), Ok(7));
        assert_eq!(group_length(Some(&IntOrString::Int(2)), 7), Ok(2));
        assert_eq!(group_length(Some(&IntOrString::Int(0)), 7), Ok(7));
        assert_eq!(group_length(Some(&IntOrString::Int(-3)), 7), Ok(7));
        assert_eq!(group_length(Some(&IntOrString::Int(9)), 7), Ok(7));
        assert_eq!(group_length(Some(&s("100%")), 7), Ok(7));
        assert_eq!(group_length(Some(&s("25%")), 4), Ok(1));
        assert_eq!(group_length(Some(&s("25%")), 3), Ok(1));
        assert_eq!(group_length(Some(&s("50%")), 5), Ok(3));
        assert_eq!(
            group_length(Some(&s("2")), 7),
            Err("2 invalid type: string is not a percentage".to_string())
        );
        assert_eq!(
            group_length(Some(&s("x%")), 7),
            Err("x% invalid type: string is not a percentage".to_string())
        );
    }

    #[test]
    fn slices_are_numbered_across_groups_and_capped_at_100() {
        let ids = |r: std::ops::Range<u32>| r.map(ClusterId).collect::<Vec<_>>();
        let (groups, slices) = slice_groups(
            "p",
            vec![
                ("canary".into(), ids(0..2)),
                (String::new(), ids(2..203)),
                (String::new(), vec![]),
            ],
        );
        let names: Vec<&str> = slices.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "p-decision-1",
                "p-decision-2",
                "p-decision-3",
                "p-decision-4",
                "p-decision-5"
            ]
        );
        assert!(
            slices
                .iter()
                .all(|s| s.clusters.len() <= MAX_CLUSTERS_PER_DECISION)
        );
        assert_eq!(
            groups[1].decisions,
            ["p-decision-2", "p-decision-3", "p-decision-4"]
        );
        assert_eq!(slices[3].clusters.len(), 1);
        assert_eq!(groups[2].decisions, ["p-decision-5"]);
        assert!(slices[4].clusters.is_empty());
        let l = slices[0].labels("p");
        assert_eq!(l[labels::DECISION_GROUP_INDEX], "0");
        assert_eq!(l[labels::DECISION_GROUP_NAME], "canary");
        assert_eq!(l[labels::PLACEMENT], "p");
    }

    fn pd(name: &str, decisions: &[(&str, Option<i64>)]) -> PlacementDecision {
        let mut pd = PlacementDecision::new(name, Default::default());
        pd.status = Some(PlacementDecisionStatus {
            decisions: decisions
                .iter()
                .map(|(c, score)| ClusterDecision {
                    cluster_name: c.to_string(),
                    reason: String::new(),
                    score: *score,
                })
                .collect(),
        });
        pd
    }

    fn at(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn score_only_changes_wait_for_the_rate_limit() {
        let minute = Duration::from_secs(60);
        let have = pd("p-decision-1", &[("a", Some(10)), ("b", Some(5))]);
        let reordered = pd("p-decision-1", &[("b", Some(20)), ("a", Some(10))]);
        let last = Some(at("2026-01-01T00:00:00Z"));
        let hold = ScoreUpdate::Hold {
            until: at("2026-01-01T00:01:00Z"),
        };
        let now = at("2026-01-01T00:00:59Z");
        assert_eq!(
            score_update(
                std::slice::from_ref(&reordered),
                &[&have],
                last,
                minute,
                now
            ),
            hold
        );
        // Once the limit has passed, or without a previous update, it is written.
        let write = ScoreUpdate::Write {
            scores_changed: true,
        };
        let later = at("2026-01-01T00:01:00Z");
        assert_eq!(
            score_update(
                std::slice::from_ref(&reordered),
                &[&have],
                last,
                minute,
                later
            ),
            write
        );
        assert_eq!(
            score_update(
                std::slice::from_ref(&reordered),
                &[&have],
                None,
                minute,
                now
            ),
            write
        );
        // A zero limit never holds.
        assert_eq!(
            score_update(
                std::slice::from_ref(&reordered),
                &[&have],
                last,
                Duration::ZERO,
                now
            ),
            write
        );
        // A limit too long for the calendar holds for good.
        assert_eq!(
            score_update(&[reordered], &[&have], last, Duration::MAX, now),
            ScoreUpdate::Hold {
                until: jiff::Timestamp::MAX
            }
        );
    }

    #[test]
    fn other_changes_are_written_at_once() {
        let minute = Duration::from_secs(60);
        let last = Some(at("2026-01-01T00:00:00Z"));
        let now = at("2026-01-01T00:00:01Z");
        let have = pd("p-decision-1", &[("a", Some(10)), ("b", Some(5))]);
        // Another cluster.
        let other = pd("p-decision-1", &[("a", Some(10)), ("c", Some(5))]);
        assert!(matches!(
            score_update(&[other], &[&have], last, minute, now),
            ScoreUpdate::Write { .. }
        ));
        // The same clusters spread over other objects.
        let split = [
            pd("p-decision-1", &[("a", Some(10))]),
            pd("p-decision-2", &[("b", Some(5))]),
        ];
        assert!(matches!(
            score_update(&split, &[&have], last, minute, now),
            ScoreUpdate::Write { .. }
        ));
        // Nothing changed: nothing to hold, no score update.
        assert_eq!(
            score_update(std::slice::from_ref(&have), &[&have], last, minute, now),
            ScoreUpdate::Write {
                scores_changed: false
            }
        );
        // A decision without status yet (just created) is written.
        let mut bare = have.clone();
        bare.status = None;
        assert!(matches!(
            score_update(std::slice::from_ref(&have), &[&bare], last, minute, now),
            ScoreUpdate::Write {
                scores_changed: true
            }
        ));
    }

    #[test]
    fn unscored_clusters_do_not_count_as_score_changes() {
        let minute = Duration::from_secs(60);
        let have = pd("p-decision-1", &[("a", None)]);
        let want = pd("p-decision-1", &[("a", Some(0)), ("b", None)]);
        assert_eq!(
            score_update(&[want], &[&have], None, minute, at("2026-01-01T00:00:00Z")),
            ScoreUpdate::Write {
                scores_changed: false
            }
        );
    }

    #[test]
    fn score_order_follows_the_scores() {
        let scores = [
            ScoredCluster {
                cluster: ClusterId(3),
                total: 9,
            },
            ScoredCluster {
                cluster: ClusterId(0),
                total: 5,
            },
            ScoredCluster {
                cluster: ClusterId(2),
                total: 5,
            },
            ScoredCluster {
                cluster: ClusterId(1),
                total: -1,
            },
        ];
        let selected = [ClusterId(1), ClusterId(2), ClusterId(3)];
        assert_eq!(
            score_order(&selected, &scores),
            [ClusterId(3), ClusterId(2), ClusterId(1)]
        );
    }
}
