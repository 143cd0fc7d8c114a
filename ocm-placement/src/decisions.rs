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

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ocm_api::cluster::v1beta1::{
    ClusterDecision, DecisionGroupStatus, GroupStrategy, Placement, PlacementDecision,
    PlacementDecisionStatus,
};
use ocm_api::constants::{labels, placement as placement_consts};

use crate::plugins::predicate::selector_specs;
use crate::snapshot::{ClusterId, Snapshot};

/// Most clusters in one PlacementDecision.
pub const MAX_CLUSTERS_PER_DECISION: usize = placement_consts::MAX_CLUSTERS_PER_DECISION;

/// One decision group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionGroup {
    /// Position in the group list (the `decision-group-index` label).
    pub index: usize,
    /// `groupName` of the strategy entry, or `""` for leftover groups.
    pub name: String,
    /// Member clusters in name order.
    pub clusters: Vec<ClusterId>,
    /// Names of this group's PlacementDecision objects, in order.
    pub decisions: Vec<String>,
}

/// One PlacementDecision object to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionSlice {
    /// Object name: `<placement>-decision-<n>`.
    pub name: String,
    /// Index of the group the slice belongs to.
    pub group_index: usize,
    /// Name of that group.
    pub group_name: String,
    /// The clusters of the slice, in name order (at most [`MAX_CLUSTERS_PER_DECISION`]).
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

/// Builds the decision groups of the selected clusters (in any order). On a selector error,
/// returns the groups built before it together with the error text.
pub(crate) fn build_groups(
    strategy: Option<&GroupStrategy>,
    selected: &[ClusterId],
    snapshot: &Snapshot,
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
    let remaining = sorted_ids(selected, snapshot.clusters.len());
    let mut remaining = remaining;
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
                    score: None,
                })
                .collect(),
        });
        pd
    }
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
}
