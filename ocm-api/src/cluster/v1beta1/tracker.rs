//! The decided clusters of one Placement, by decision group, and how they change (upstream's
//! `PlacementDecisionClustersTracker` of its cluster `v1beta1` API helpers). The overview is in
//! the [parent module](super)'s docs.

use std::collections::{BTreeMap, BTreeSet};

use super::PlacementDecision;
use crate::cluster::v1alpha1::{ClusterGroups, GroupKey, RolloutError};
use crate::constants::labels;

/// The decided clusters of a Placement, grouped by decision group (sdk-go's
/// `ClusterGroupsMap`).
///
/// Every PlacementDecision slice contributes its clusters to the group its labels name
/// (`cluster.open-cluster-management.io/decision-group-index`, required, and
/// `.../decision-group-name`, optional). A group with no cluster is kept, as upstream keeps it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecisionClusters {
    groups: BTreeMap<GroupKey, BTreeSet<String>>,
}

impl DecisionClusters {
    /// The clusters of `decisions`, by group. Decisions of other placements are not filtered
    /// out here: pass the slices of one placement (see [`ClustersTracker::refresh`]).
    ///
    /// Fails, like upstream, when a decision has no parseable group-index label.
    pub fn from_decisions<'a>(
        decisions: impl IntoIterator<Item = &'a PlacementDecision>,
    ) -> Result<Self, RolloutError> {
        let mut out = Self::default();
        for decision in decisions {
            let key = GroupKey::of_decision(decision)?;
            let set = out.groups.entry(key).or_default();
            for d in decision
                .status
                .as_ref()
                .map(|s| s.decisions.as_slice())
                .unwrap_or_default()
            {
                set.insert(d.cluster_name.clone());
            }
        }
        Ok(out)
    }

    /// Clusters in group `key` (the group is created when missing).
    pub fn insert(&mut self, key: GroupKey, cluster: impl Into<String>) {
        self.groups.entry(key).or_default().insert(cluster.into());
    }

    /// Every cluster of every group.
    pub fn clusters(&self) -> BTreeSet<String> {
        self.groups.values().flatten().cloned().collect()
    }

    /// Whether `cluster` is in any group.
    pub fn contains(&self, cluster: &str) -> bool {
        self.groups.values().any(|g| g.contains(cluster))
    }

    /// The number of groups.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether there is no group at all.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The clusters of one group.
    pub fn group(&self, key: &GroupKey) -> Option<&BTreeSet<String>> {
        self.groups.get(key)
    }

    /// The group keys ordered by group index (sdk-go's `GetOrderedGroupKeys`).
    pub fn ordered_group_keys(&self) -> Vec<GroupKey> {
        let mut keys: Vec<GroupKey> = self.groups.keys().cloned().collect();
        keys.sort_by(|a, b| a.index.cmp(&b.index).then_with(|| a.name.cmp(&b.name)));
        keys
    }

    /// Every group with its clusters.
    pub fn groups(&self) -> impl Iterator<Item = (&GroupKey, &BTreeSet<String>)> {
        self.groups.iter()
    }

    /// Each cluster with the group it is in (sdk-go's `ClusterToGroupKey`; a cluster listed in
    /// several groups keeps the last in key order).
    pub fn cluster_to_group(&self) -> BTreeMap<String, GroupKey> {
        let mut out = BTreeMap::new();
        for (key, clusters) in &self.groups {
            for c in clusters {
                out.insert(c.clone(), key.clone());
            }
        }
        out
    }

    /// The same groups as the rollout engine's input.
    pub fn to_cluster_groups(&self) -> ClusterGroups {
        let mut out = ClusterGroups::default();
        for (key, clusters) in &self.groups {
            for c in clusters {
                out.insert(key.clone(), c.clone());
            }
        }
        out
    }
}

/// A decision group named by its name or by its index, as a consumer asks for it (sdk-go's
/// `GroupKey` with only one of its fields set).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GroupRef {
    /// Every group with this name.
    Name(String),
    /// The group with this index.
    Index(i32),
}

/// The clusters added and removed between two looks at a placement's decisions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterChanges {
    /// Clusters decided now and not before.
    pub added: BTreeSet<String>,
    /// Clusters decided before and not now.
    pub removed: BTreeSet<String>,
}

impl ClusterChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

/// Tracks the decided clusters of one Placement (sdk-go's
/// `PlacementDecisionClustersTracker`), as a pure value: feed it the placement's
/// PlacementDecisions and it answers with the decided clusters, the clusters of chosen decision
/// groups, and the clusters added and removed since the previous refresh.
///
/// ```
/// use ocm_api::cluster::v1beta1::PlacementDecision;
/// use ocm_api::cluster::v1beta1::{ClustersTracker, GroupRef};
///
/// let decision = |n: usize, group: &str, index: usize, clusters: &[&str]| -> PlacementDecision {
///     serde_json::from_value(serde_json::json!({
///         "metadata": {"name": format!("web-decision-{n}"), "namespace": "apps", "labels": {
///             "cluster.open-cluster-management.io/placement": "web",
///             "cluster.open-cluster-management.io/decision-group-name": group,
///             "cluster.open-cluster-management.io/decision-group-index": index.to_string()}},
///         "status": {"decisions": clusters.iter()
///             .map(|c| serde_json::json!({"clusterName": c, "reason": ""})).collect::<Vec<_>>()}
///     })).unwrap()
/// };
/// let mut tracker = ClustersTracker::new("apps", "web");
/// let changes = tracker.cluster_changes(&[decision(1, "canary", 0, &["c1"]), decision(2, "", 1, &["c2", "c3"])])?;
/// assert_eq!(changes.added.len(), 3);
/// let canary = tracker.existing_cluster_groups(&[GroupRef::Name("canary".into())]);
/// assert_eq!(canary.clusters().into_iter().collect::<Vec<_>>(), ["c1"]);
///
/// let changes = tracker.cluster_changes(&[decision(1, "canary", 0, &["c1", "c4"])])?;
/// assert_eq!(changes.added.into_iter().collect::<Vec<_>>(), ["c4"]);
/// assert_eq!(changes.removed.into_iter().collect::<Vec<_>>(), ["c2", "c3"]);
/// # Ok::<(), ocm_api::cluster::v1alpha1::RolloutError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ClustersTracker {
    namespace: String,
    name: String,
    existing: DecisionClusters,
    index_to_name: BTreeMap<i32, String>,
    name_to_index: BTreeMap<String, Vec<i32>>,
}

impl ClustersTracker {
    /// A tracker for the placement `namespace/name` that has seen no decision yet.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self::with_groups(namespace, name, DecisionClusters::default())
    }

    /// A tracker that starts from clusters already acted on, all in group index 0 with no name
    /// (sdk-go's `NewPlacementDecisionClustersTracker` with existing clusters).
    pub fn with_existing<I, S>(
        namespace: impl Into<String>,
        name: impl Into<String>,
        clusters: I,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut groups = DecisionClusters::default();
        groups.groups.entry(GroupKey::new("", 0)).or_default();
        for c in clusters {
            groups.insert(GroupKey::new("", 0), c);
        }
        Self::with_groups(namespace, name, groups)
    }

    /// A tracker that starts from known groups (sdk-go's
    /// `NewPlacementDecisionClustersTrackerWithGroups`).
    pub fn with_groups(
        namespace: impl Into<String>,
        name: impl Into<String>,
        groups: DecisionClusters,
    ) -> Self {
        let mut me = Self {
            namespace: namespace.into(),
            name: name.into(),
            existing: groups,
            index_to_name: BTreeMap::new(),
            name_to_index: BTreeMap::new(),
        };
        me.index_groups();
        me
    }

    /// The placement's namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The placement's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The label selector that lists this placement's decisions.
    pub fn label_selector(&self) -> String {
        PlacementDecision::selector_for(&self.name)
    }

    /// Replaces the known decisions with `decisions`. Slices of other placements (by namespace
    /// or by the `cluster.open-cluster-management.io/placement` label) are ignored.
    pub fn refresh<'a>(
        &mut self,
        decisions: impl IntoIterator<Item = &'a PlacementDecision>,
    ) -> Result<(), RolloutError> {
        let mine = decisions.into_iter().filter(|d| {
            d.metadata
                .namespace
                .as_deref()
                .is_none_or(|ns| ns == self.namespace)
                && d.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(labels::PLACEMENT))
                    .is_some_and(|p| *p == self.name)
        });
        self.existing = DecisionClusters::from_decisions(mine)?;
        self.index_groups();
        Ok(())
    }

    /// Refreshes from `decisions` and returns the clusters added and removed since the
    /// previous refresh (sdk-go's `GetClusterChanges`). On error nothing changes.
    pub fn cluster_changes<'a>(
        &mut self,
        decisions: impl IntoIterator<Item = &'a PlacementDecision>,
    ) -> Result<ClusterChanges, RolloutError> {
        let before = self.existing.clusters();
        self.refresh(decisions)?;
        let after = self.existing.clusters();
        Ok(ClusterChanges {
            added: after.difference(&before).cloned().collect(),
            removed: before.difference(&after).cloned().collect(),
        })
    }

    /// Every decided cluster.
    pub fn clusters(&self) -> BTreeSet<String> {
        self.existing.clusters()
    }

    /// Every group with its clusters.
    pub fn groups(&self) -> &DecisionClusters {
        &self.existing
    }

    /// The groups `refs` name (by name: every group of that name; by index: that group);
    /// nothing when `refs` is empty.
    pub fn existing_cluster_groups(&self, refs: &[GroupRef]) -> DecisionClusters {
        let keys = self.fulfil(refs);
        self.select(|k| keys.contains(k))
    }

    /// Every group except those `refs` name; every group when `refs` is empty.
    ///
    /// Upstream walks group indexes `0..n` for `n` groups, so a group whose index is `n` or
    /// more is never returned here; the quirk is kept.
    pub fn existing_cluster_groups_besides(&self, refs: &[GroupRef]) -> DecisionClusters {
        let excluded = self.fulfil(refs);
        let n = i32::try_from(self.index_to_name.len()).unwrap_or(i32::MAX);
        let included: Vec<GroupKey> = (0..n)
            .map(|i| GroupKey::new(self.index_to_name.get(&i).cloned().unwrap_or_default(), i))
            .filter(|k| !excluded.contains(k))
            .collect();
        self.select(|k| included.contains(k))
    }

    /// The name of the group with `index`, if there is one.
    pub fn group_name(&self, index: i32) -> Option<&str> {
        self.index_to_name.get(&index).map(String::as_str)
    }

    /// The indexes of the groups named `name`, ascending.
    pub fn group_indexes(&self, name: &str) -> &[i32] {
        self.name_to_index.get(name).map_or(&[], Vec::as_slice)
    }

    fn select(&self, keep: impl Fn(&GroupKey) -> bool) -> DecisionClusters {
        DecisionClusters {
            groups: self
                .existing
                .groups
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }

    fn fulfil(&self, refs: &[GroupRef]) -> Vec<GroupKey> {
        let mut out = Vec::new();
        for r in refs {
            match r {
                GroupRef::Name(name) if !name.is_empty() => {
                    for i in self.group_indexes(name) {
                        out.push(GroupKey::new(name.clone(), *i));
                    }
                }
                GroupRef::Name(_) => {
                    // An empty name selects by index 0, as a zero GroupKey does upstream.
                    if let Some(n) = self.index_to_name.get(&0) {
                        out.push(GroupKey::new(n.clone(), 0));
                    }
                }
                GroupRef::Index(i) => {
                    if let Some(n) = self.index_to_name.get(i) {
                        out.push(GroupKey::new(n.clone(), *i));
                    }
                }
            }
        }
        out
    }

    fn index_groups(&mut self) {
        self.index_to_name.clear();
        self.name_to_index.clear();
        for key in self.existing.groups.keys() {
            self.index_to_name.insert(key.index, key.name.clone());
            self.name_to_index
                .entry(key.name.clone())
                .or_default()
                .push(key.index);
        }
        for v in self.name_to_index.values_mut() {
            v.sort_unstable();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decision(
        placement: &str,
        n: usize,
        group: &str,
        index: &str,
        clusters: &[&str],
    ) -> PlacementDecision {
        serde_json::from_value(json!({
            "metadata": {"name": format!("{placement}-decision-{n}"), "namespace": "ns", "labels": {
                labels::PLACEMENT: placement,
                labels::DECISION_GROUP_NAME: group,
                labels::DECISION_GROUP_INDEX: index}},
            "status": {"decisions": clusters.iter().map(|c| json!({"clusterName": c, "reason": ""})).collect::<Vec<_>>()}
        }))
        .unwrap()
    }

    fn names(set: BTreeSet<String>) -> Vec<String> {
        set.into_iter().collect()
    }

    #[test]
    fn added_and_removed_between_refreshes() {
        let mut t = ClustersTracker::with_existing("ns", "p", ["c1", "c2"]);
        let changes = t
            .cluster_changes(&[decision("p", 1, "", "0", &["c2", "c3"])])
            .unwrap();
        assert_eq!(names(changes.added), ["c3"]);
        assert_eq!(names(changes.removed), ["c1"]);
        let again = t
            .cluster_changes(&[decision("p", 1, "", "0", &["c2", "c3"])])
            .unwrap();
        assert!(again.is_empty());
    }

    #[test]
    fn slices_of_one_group_are_merged_and_other_placements_ignored() {
        let mut t = ClustersTracker::new("ns", "p");
        t.refresh(&[
            decision("p", 1, "a", "0", &["c1"]),
            decision("p", 2, "a", "0", &["c2"]),
            decision("q", 1, "", "0", &["other"]),
        ])
        .unwrap();
        assert_eq!(names(t.clusters()), ["c1", "c2"]);
        assert_eq!(t.groups().len(), 1);
    }

    #[test]
    fn groups_by_name_and_index() {
        let mut t = ClustersTracker::new("ns", "p");
        t.refresh(&[
            decision("p", 1, "canary", "0", &["c1"]),
            decision("p", 2, "prod", "1", &["c2"]),
            decision("p", 3, "prod", "2", &["c3"]),
            decision("p", 4, "", "3", &[]),
        ])
        .unwrap();
        assert_eq!(t.group_indexes("prod"), [1, 2]);
        assert_eq!(t.group_name(0), Some("canary"));
        let prod = t.existing_cluster_groups(&[GroupRef::Name("prod".into())]);
        assert_eq!(names(prod.clusters()), ["c2", "c3"]);
        let one = t.existing_cluster_groups(&[GroupRef::Index(1)]);
        assert_eq!(names(one.clusters()), ["c2"]);
        assert!(t.existing_cluster_groups(&[]).is_empty());
        let rest = t.existing_cluster_groups_besides(&[GroupRef::Name("canary".into())]);
        assert_eq!(names(rest.clusters()), ["c2", "c3"]);
        assert_eq!(rest.len(), 3, "the empty group 3 is kept");
        let all = t.existing_cluster_groups_besides(&[]);
        assert_eq!(names(all.clusters()), ["c1", "c2", "c3"]);
        let ordered: Vec<i32> = all.ordered_group_keys().iter().map(|k| k.index).collect();
        assert_eq!(ordered, [0, 1, 2, 3]);
        assert_eq!(all.cluster_to_group()["c3"], GroupKey::new("prod", 2));
        assert_eq!(all.to_cluster_groups().cluster_count(), 3);
    }

    #[test]
    fn besides_skips_indexes_past_the_group_count() {
        let mut t = ClustersTracker::new("ns", "p");
        t.refresh(&[
            decision("p", 1, "", "0", &["c1"]),
            decision("p", 2, "", "5", &["c5"]),
        ])
        .unwrap();
        // Two groups: upstream walks indexes 0 and 1 only.
        assert_eq!(
            names(t.existing_cluster_groups_besides(&[]).clusters()),
            ["c1"]
        );
        assert_eq!(names(t.clusters()), ["c1", "c5"]);
    }

    #[test]
    fn a_bad_group_index_is_an_error_and_changes_nothing() {
        let mut t = ClustersTracker::with_existing("ns", "p", ["c1"]);
        let err = t
            .cluster_changes(&[decision("p", 1, "", "x", &["c2"])])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "incorrect group index: strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(names(t.clusters()), ["c1"]);
    }
}
