//! The rollout engine (upstream's `RolloutHandler` of its cluster `v1alpha1` API helpers): which
//! clusters a workload applier rolls out to next. The overview and an example are in the
//! [parent module](super)'s docs.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

use super::duration;
use super::{MandatoryDecisionGroup, RolloutConfig, RolloutStrategy, RolloutType};
use crate::cluster::v1beta1::PlacementDecision;
use crate::constants::labels;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// What can go wrong computing a rollout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RolloutError {
    /// A `progressDeadline` does not match upstream's pattern.
    #[error("invalid timeout format")]
    InvalidTimeout(String),
    /// A duration could not be parsed (Go's message).
    #[error("{0}")]
    Duration(String),
    /// A percentage threshold is malformed.
    #[error("'{0}' is an invalid maximum threshold value: string is not a percentage")]
    NotAPercentage(String),
    /// `maxConcurrency` is malformed.
    #[error("failed to parse the provided maxConcurrency: {0}")]
    MaxConcurrency(Box<RolloutError>),
    /// `maxFailures` is malformed.
    #[error("failed to parse the provided maxFailures: {0}")]
    MaxFailures(Box<RolloutError>),
    /// `minSuccessTime` is malformed.
    #[error("failed to parse the provided minSuccessTime: {0}")]
    MinSuccessTime(Box<RolloutError>),
    /// A PlacementDecision has no parseable decision-group index label.
    #[error("incorrect group index: {0}")]
    GroupIndex(String),
    /// The strategy's `type` is not one this version knows ([`RolloutType::Unknown`]).
    #[error("incorrect rollout strategy type {0}")]
    UnknownType(String),
}

/// The rollout status of one cluster, in upstream's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RolloutStatus {
    /// Not applied yet, or outdated: apply it.
    ToApply,
    /// Being rolled out.
    Progressing,
    /// Rolled out successfully.
    Succeeded,
    /// The rollout failed.
    Failed,
    /// The rollout took longer than the progress deadline.
    TimeOut,
    /// Left out of the rollout.
    Skip,
}

/// A decision group: its name (may be empty) and index.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupKey {
    /// The decision group name (`""` when the group has none).
    pub name: String,
    /// The decision group index.
    pub index: i32,
}

impl GroupKey {
    /// A group key.
    pub fn new(name: impl Into<String>, index: i32) -> Self {
        Self {
            name: name.into(),
            index,
        }
    }

    /// The group a PlacementDecision slice belongs to, from its labels
    /// `cluster.open-cluster-management.io/decision-group-index` (required) and
    /// `cluster.open-cluster-management.io/decision-group-name` (optional, `""` when absent).
    ///
    /// Fails with upstream's message when the index label is missing or not a number.
    ///
    /// ```
    /// use ocm_api::cluster::v1alpha1::GroupKey;
    /// use ocm_api::cluster::v1beta1::PlacementDecision;
    ///
    /// let decision: PlacementDecision = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "web-decision-1", "labels": {
    ///         "cluster.open-cluster-management.io/decision-group-index": "2",
    ///         "cluster.open-cluster-management.io/decision-group-name": "canary"}}
    /// }))?;
    /// assert_eq!(GroupKey::of_decision(&decision)?, GroupKey::new("canary", 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of_decision(decision: &PlacementDecision) -> Result<Self, RolloutError> {
        let labels_map = decision.metadata.labels.as_ref();
        let index_text = labels_map
            .and_then(|l| l.get(labels::DECISION_GROUP_INDEX))
            .map(String::as_str)
            .unwrap_or("");
        let index: i32 = index_text.parse().map_err(|_| {
            RolloutError::GroupIndex(format!(
                "strconv.Atoi: parsing \"{index_text}\": invalid syntax"
            ))
        })?;
        let name = labels_map
            .and_then(|l| l.get(labels::DECISION_GROUP_NAME))
            .cloned()
            .unwrap_or_default();
        Ok(Self::new(name, index))
    }
}

/// The rollout status of one cluster, as the applier reports it and the engine returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterRolloutStatus {
    /// The cluster.
    pub cluster_name: String,
    /// The decision group the cluster is in.
    pub group_key: GroupKey,
    /// Its status.
    pub status: RolloutStatus,
    /// When the status last changed (the condition's transition time), if known.
    pub last_transition_time: Option<Timestamp>,
    /// When the engine wants to look at this cluster again (set by the engine).
    pub recheck_time: Option<Timestamp>,
}

impl ClusterRolloutStatus {
    /// A status for `cluster_name` in group `group_key`.
    pub fn new(
        cluster_name: impl Into<String>,
        group_key: GroupKey,
        status: RolloutStatus,
    ) -> Self {
        Self {
            cluster_name: cluster_name.into(),
            group_key,
            status,
            last_transition_time: None,
            recheck_time: None,
        }
    }

    /// Sets the transition time.
    #[must_use]
    pub fn since(mut self, time: Timestamp) -> Self {
        self.last_transition_time = Some(time);
        self
    }
}

/// What the engine decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RolloutResult {
    /// The clusters to roll out to now (status `ToApply`), and those still in progress or in
    /// their soak time, which the applier leaves alone.
    pub clusters_to_rollout: Vec<ClusterRolloutStatus>,
    /// The clusters whose rollout passed the progress deadline.
    pub clusters_timeout: Vec<ClusterRolloutStatus>,
    /// The clusters that have a status but are no longer in any decision group.
    pub clusters_removed: Vec<ClusterRolloutStatus>,
    /// More clusters failed or timed out than `maxFailures` allows: the rollout stops.
    pub max_failure_breach: bool,
    /// When to evaluate again (a deadline or a soak time ends), if ever.
    pub recheck_after: Option<Duration>,
}

/// The clusters of a placement, by decision group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterGroups {
    groups: BTreeMap<GroupKey, BTreeSet<String>>,
    /// Every cluster with its group, in name order (a cluster in several groups keeps the
    /// last one it was added to).
    members: BTreeMap<String, GroupKey>,
}

impl ClusterGroups {
    /// Adds `cluster` to `group`.
    pub fn insert(&mut self, group: GroupKey, cluster: impl Into<String>) {
        let cluster = cluster.into();
        self.members.insert(cluster.clone(), group.clone());
        self.groups.entry(group).or_default().insert(cluster);
    }

    /// The groups of a placement from its PlacementDecisions (labels
    /// `cluster.open-cluster-management.io/decision-group-index`, required, and
    /// `.../decision-group-name`, optional).
    pub fn from_decisions<'a>(
        decisions: impl IntoIterator<Item = &'a PlacementDecision>,
    ) -> Result<Self, RolloutError> {
        let mut groups = Self::default();
        for decision in decisions {
            let key = GroupKey::of_decision(decision)?;
            groups.groups.entry(key.clone()).or_default();
            for d in decision
                .status
                .as_ref()
                .map(|s| s.decisions.as_slice())
                .unwrap_or_default()
            {
                if !d.cluster_name.is_empty() {
                    groups.insert(key.clone(), d.cluster_name.clone());
                }
            }
        }
        Ok(groups)
    }

    /// Every cluster of every group, in name order.
    pub fn clusters(&self) -> impl Iterator<Item = &str> {
        self.members.keys().map(String::as_str)
    }

    /// The number of clusters over all groups.
    pub fn cluster_count(&self) -> usize {
        self.groups.values().map(BTreeSet::len).sum()
    }

    fn contains_cluster(&self, cluster: &str) -> bool {
        self.members.contains_key(cluster)
    }

    /// The keys that mandatory groups name: a group name selects every group of that name,
    /// otherwise the group index selects that group if it exists.
    fn mandatory_keys(&self, mandatory: &[MandatoryDecisionGroup]) -> Vec<GroupKey> {
        let mut out = Vec::new();
        for m in mandatory {
            match m.group_name.as_deref() {
                Some(name) if !name.is_empty() => {
                    out.extend(self.groups.keys().filter(|k| k.name == name).cloned());
                }
                _ => {
                    let index = m.group_index.unwrap_or(0);
                    out.extend(self.groups.keys().filter(|k| k.index == index).cloned());
                }
            }
        }
        out
    }

    fn all(&self) -> View<'_> {
        View {
            groups: self,
            keep: Keep::All,
        }
    }

    /// Only the given groups.
    fn only<'a>(&'a self, keys: &'a [GroupKey]) -> View<'a> {
        View {
            groups: self,
            keep: Keep::Only(keys),
        }
    }

    /// Every group but the given ones. Upstream walks indexes `0..n` where `n` is the number
    /// of groups, so a group whose index is `n` or more is left out (a quirk kept on purpose).
    fn besides<'a>(&'a self, keys: &'a [GroupKey]) -> View<'a> {
        View {
            groups: self,
            keep: Keep::Besides(keys, i32::try_from(self.groups.len()).unwrap_or(i32::MAX)),
        }
    }
}

/// Which groups of a [`ClusterGroups`] a rollout phase looks at, without copying them.
#[derive(Clone, Copy)]
enum Keep<'a> {
    All,
    Only(&'a [GroupKey]),
    Besides(&'a [GroupKey], i32),
}

#[derive(Clone, Copy)]
struct View<'a> {
    groups: &'a ClusterGroups,
    keep: Keep<'a>,
}

impl<'a> View<'a> {
    fn keeps(&self, key: &GroupKey) -> bool {
        match self.keep {
            Keep::All => true,
            Keep::Only(keys) => keys.contains(key),
            Keep::Besides(keys, n) => (0..n).contains(&key.index) && !keys.contains(key),
        }
    }

    fn is_empty(&self) -> bool {
        !self.groups.groups.keys().any(|k| self.keeps(k))
    }

    fn cluster_count(&self) -> usize {
        self.groups
            .groups
            .iter()
            .filter(|(k, _)| self.keeps(k))
            .map(|(_, set)| set.len())
            .sum()
    }

    /// Every cluster with its group, in cluster-name order.
    fn clusters_by_name(self) -> impl Iterator<Item = (&'a str, &'a GroupKey)> {
        self.groups
            .members
            .iter()
            .filter(move |(_, k)| self.keeps(k))
            .map(|(c, k)| (c.as_str(), k))
    }

    /// Group keys and their clusters, ordered by index.
    fn ordered_groups(self) -> Vec<(&'a GroupKey, &'a BTreeSet<String>)> {
        let mut keys: Vec<_> = self
            .groups
            .groups
            .iter()
            .filter(|(k, _)| self.keeps(k))
            .collect();
        keys.sort_by_key(|(k, _)| k.index);
        keys
    }
}

/// Resolves a number-or-percentage threshold against `total` clusters, as upstream does.
///
/// A number is taken as is; a string must be a percentage whose prefix parses as a float, and
/// becomes `ceil((p / 100.0) * total)` computed in `f64` in that order, so float artefacts
/// carry through (`7%` of 100 is 8). A result that is not positive, **or is larger than
/// `total`**, becomes `default`.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
/// use ocm_api::cluster::v1alpha1::calculate_rollout_size;
/// let s = |v: &str| IntOrString::String(v.into());
/// assert_eq!(calculate_rollout_size(&s("7%"), 100, 0), Ok(8));
/// assert_eq!(calculate_rollout_size(&s("50%"), 5, 0), Ok(3));
/// assert_eq!(calculate_rollout_size(&IntOrString::Int(5), 3, 0), Ok(0));
/// ```
pub fn calculate_rollout_size(
    value: &IntOrString,
    total: usize,
    default: usize,
) -> Result<usize, RolloutError> {
    let size: i64 = match value {
        IntOrString::Int(i) => i64::from(*i),
        IntOrString::String(s) => {
            let percent = s
                .strip_suffix('%')
                .and_then(|p| p.parse::<f64>().ok())
                .ok_or_else(|| RolloutError::NotAPercentage(s.clone()))?;
            let raw = ((percent / 100.0) * total as f64).ceil();
            if raw.is_finite() { raw as i64 } else { 0 }
        }
    };
    if size <= 0 || size as u128 > total as u128 {
        Ok(default)
    } else {
        Ok(size as usize)
    }
}

fn recheck(ltt: Option<Timestamp>, d: Option<Duration>, now: Timestamp) -> Option<Timestamp> {
    let d = SignedDuration::try_from(d?).ok()?;
    ltt.unwrap_or(now).checked_add(d).ok()
}

/// Upstream's `determine`: decides, for a cluster with a known status, whether it belongs in
/// the rollout list, the time-out list, or neither. Returns the status after the decision.
fn determine(
    status: &ClusterRolloutStatus,
    min_success: Duration,
    timeout: Option<Duration>,
    now: Timestamp,
    rollout: &mut Vec<ClusterRolloutStatus>,
    timeouts: &mut Vec<ClusterRolloutStatus>,
) -> RolloutStatus {
    match status.status {
        RolloutStatus::ToApply => {
            rollout.push(status.clone());
            RolloutStatus::ToApply
        }
        RolloutStatus::Succeeded => {
            if let Some(r) = recheck(status.last_transition_time, Some(min_success), now)
                && now < r
            {
                let mut listed = status.clone();
                listed.recheck_time = Some(r);
                rollout.push(listed);
            }
            RolloutStatus::Succeeded
        }
        RolloutStatus::TimeOut | RolloutStatus::Skip => status.status,
        RolloutStatus::Progressing | RolloutStatus::Failed => {
            let r = recheck(status.last_transition_time, timeout, now);
            let mut listed = status.clone();
            listed.recheck_time = r;
            if r.is_none_or(|r| now < r) {
                rollout.push(listed);
                status.status
            } else {
                listed.status = RolloutStatus::TimeOut;
                timeouts.push(listed);
                RolloutStatus::TimeOut
            }
        }
    }
}

fn min_recheck_after(rollout: &[ClusterRolloutStatus], now: Timestamp) -> Option<Duration> {
    rollout
        .iter()
        .filter_map(|s| s.recheck_time)
        .filter_map(|t| {
            let d = t.duration_since(now);
            (d > SignedDuration::ZERO).then(|| Duration::try_from(d).ok())?
        })
        .min()
}

fn finish(
    rollout: Vec<ClusterRolloutStatus>,
    timeouts: Vec<ClusterRolloutStatus>,
    breach: bool,
    now: Timestamp,
) -> RolloutResult {
    RolloutResult {
        recheck_after: min_recheck_after(&rollout, now),
        clusters_to_rollout: rollout,
        clusters_timeout: timeouts,
        clusters_removed: Vec::new(),
        max_failure_breach: breach,
    }
}

struct Settings {
    min_success: Duration,
    timeout: Option<Duration>,
    now: Timestamp,
}

fn progressive_per_cluster(
    groups: View<'_>,
    rollout_size: usize,
    max_failures: usize,
    settings: &Settings,
    current: &[&ClusterRolloutStatus],
) -> RolloutResult {
    let mut sorted: Vec<&ClusterRolloutStatus> = current.to_vec();
    sorted.sort_by(|a, b| a.cluster_name.cmp(&b.cluster_name));
    let (mut rollout, mut timeouts) = (Vec::new(), Vec::new());
    let mut existing: HashSet<&str> = HashSet::with_capacity(sorted.len());
    let (mut failures, mut breach) = (0usize, false);
    for status in sorted {
        if status.cluster_name.is_empty() {
            continue;
        }
        existing.insert(status.cluster_name.as_str());
        let mut outcome = status.status;
        if !breach || status.status != RolloutStatus::ToApply {
            outcome = determine(
                status,
                settings.min_success,
                settings.timeout,
                settings.now,
                &mut rollout,
                &mut timeouts,
            );
        }
        if matches!(outcome, RolloutStatus::TimeOut | RolloutStatus::Failed) {
            failures += 1;
            breach = failures > max_failures;
        }
        if rollout.len() >= rollout_size {
            return finish(rollout, timeouts, breach, settings.now);
        }
    }
    if breach {
        return finish(rollout, timeouts, true, settings.now);
    }
    for (cluster, key) in groups.clusters_by_name() {
        if existing.contains(cluster) {
            continue;
        }
        rollout.push(ClusterRolloutStatus::new(
            cluster,
            key.clone(),
            RolloutStatus::ToApply,
        ));
        if rollout.len() >= rollout_size {
            return finish(rollout, timeouts, breach, settings.now);
        }
    }
    finish(rollout, timeouts, false, settings.now)
}

fn progressive_per_group(
    groups: View<'_>,
    max_failures: &IntOrString,
    settings: &Settings,
    current: &[&ClusterRolloutStatus],
) -> Result<RolloutResult, RolloutError> {
    let (mut rollout, mut timeouts) = (Vec::new(), Vec::new());
    let mut existing: HashMap<&str, RolloutStatus> = HashMap::with_capacity(current.len());
    for status in current {
        if status.cluster_name.is_empty() || status.status == RolloutStatus::ToApply {
            continue;
        }
        let outcome = determine(
            status,
            settings.min_success,
            settings.timeout,
            settings.now,
            &mut rollout,
            &mut timeouts,
        );
        existing.insert(status.cluster_name.as_str(), outcome);
    }
    let (mut total_failures, mut breach) = (0usize, false);
    for (key, clusters) in groups.ordered_groups() {
        let group_max = calculate_rollout_size(max_failures, clusters.len(), 0)
            .map_err(|e| RolloutError::MaxFailures(Box::new(e)))?;
        let mut group_failures = 0usize;
        for cluster in clusters {
            match existing.get(cluster.as_str()) {
                Some(status) => {
                    if matches!(status, RolloutStatus::TimeOut | RolloutStatus::Failed) {
                        group_failures += 1;
                        breach = group_failures > group_max;
                    }
                }
                None => rollout.push(ClusterRolloutStatus::new(
                    cluster.as_str(),
                    key.clone(),
                    RolloutStatus::ToApply,
                )),
            }
        }
        total_failures += group_failures;
        if rollout.len() > total_failures || breach {
            return Ok(finish(rollout, timeouts, breach, settings.now));
        }
    }
    Ok(finish(rollout, timeouts, breach, settings.now))
}

/// Computes rollouts over one placement's decision groups.
#[derive(Clone, Copy, Debug)]
pub struct RolloutHandler<'a> {
    groups: &'a ClusterGroups,
}

impl<'a> RolloutHandler<'a> {
    /// A handler over the placement's current decision groups.
    pub fn new(groups: &'a ClusterGroups) -> Self {
        Self { groups }
    }

    /// The clusters to roll out to next under `strategy`, given the statuses the applier knows
    /// (`current`) and the time `now`.
    ///
    /// A strategy without a type is treated as `All`, the type the API server defaults it to.
    pub fn rollout(
        &self,
        strategy: &RolloutStrategy,
        current: &[ClusterRolloutStatus],
        now: Timestamp,
    ) -> Result<RolloutResult, RolloutError> {
        // Statuses of clusters outside every group are reported as removed.
        let mut removed = Vec::new();
        let mut kept: Vec<&ClusterRolloutStatus> = Vec::with_capacity(current.len());
        for status in current {
            if self.groups.contains_cluster(&status.cluster_name) {
                kept.push(status);
            } else {
                removed.push(status.clone());
            }
        }
        let current = kept;
        let mut result = match strategy.type_.as_ref().unwrap_or(&RolloutType::All) {
            RolloutType::All => {
                let config = strategy.all.clone().unwrap_or_default().config;
                let settings = Settings {
                    min_success: Duration::ZERO,
                    timeout: duration::parse_timeout(
                        config.progress_deadline.as_deref().unwrap_or(""),
                    )?,
                    now,
                };
                let n = self.groups.cluster_count();
                progressive_per_cluster(self.groups.all(), n, n, &settings, &current)
            }
            RolloutType::Progressive => {
                let progressive = strategy.progressive.clone().unwrap_or_default();
                let settings = settings_for(&progressive.config, now)?;
                let max_failures = calculate_rollout_size(
                    &progressive
                        .config
                        .max_failures
                        .clone()
                        .unwrap_or(IntOrString::Int(0)),
                    self.groups.cluster_count(),
                    0,
                )
                .map_err(|e| RolloutError::MaxFailures(Box::new(e)))?;
                let mandatory = self.groups.mandatory_keys(
                    progressive
                        .mandatory_decision_groups
                        .mandatory_decision_groups
                        .as_deref()
                        .unwrap_or_default(),
                );
                if let Some(result) = self.mandatory_phase(&mandatory, &settings, &current)? {
                    result
                } else {
                    let rest = self.groups.besides(&mandatory);
                    let rest_count = rest.cluster_count();
                    let size = calculate_rollout_size(
                        &progressive
                            .max_concurrency
                            .clone()
                            .unwrap_or(IntOrString::Int(0)),
                        rest_count,
                        rest_count,
                    )
                    .map_err(|e| RolloutError::MaxConcurrency(Box::new(e)))?;
                    progressive_per_cluster(rest, size, max_failures, &settings, &current)
                }
            }
            RolloutType::ProgressivePerGroup => {
                let per_group = strategy.progressive_per_group.clone().unwrap_or_default();
                let settings = settings_for(&per_group.config, now)?;
                let max_failures = per_group
                    .config
                    .max_failures
                    .clone()
                    .unwrap_or(IntOrString::Int(0));
                calculate_rollout_size(&max_failures, self.groups.cluster_count(), 0)
                    .map_err(|e| RolloutError::MaxFailures(Box::new(e)))?;
                let mandatory = self.groups.mandatory_keys(
                    per_group
                        .mandatory_decision_groups
                        .mandatory_decision_groups
                        .as_deref()
                        .unwrap_or_default(),
                );
                if let Some(result) = self.mandatory_phase(&mandatory, &settings, &current)? {
                    result
                } else {
                    let rest = self.groups.besides(&mandatory);
                    progressive_per_group(rest, &max_failures, &settings, &current)?
                }
            }
            RolloutType::Unknown(other) => return Err(RolloutError::UnknownType(other.clone())),
        };
        result.clusters_removed = removed;
        Ok(result)
    }

    /// Mandatory groups go first with no failure tolerated; `Some` while they are not done.
    fn mandatory_phase(
        &self,
        mandatory: &[GroupKey],
        settings: &Settings,
        current: &[&ClusterRolloutStatus],
    ) -> Result<Option<RolloutResult>, RolloutError> {
        let groups = self.groups.only(mandatory);
        if mandatory.is_empty() || groups.is_empty() {
            return Ok(None);
        }
        let result = progressive_per_group(groups, &IntOrString::Int(0), settings, current)?;
        let busy = !result.clusters_to_rollout.is_empty() || !result.clusters_timeout.is_empty();
        Ok(busy.then_some(result))
    }
}

fn settings_for(config: &RolloutConfig, now: Timestamp) -> Result<Settings, RolloutError> {
    let min_success = match config.min_success_time.as_deref() {
        None | Some("") => Duration::ZERO,
        Some(s) => {
            duration::parse_go_duration(s).map_err(|e| RolloutError::MinSuccessTime(Box::new(e)))?
        }
    };
    Ok(Settings {
        min_success,
        timeout: duration::parse_timeout(config.progress_deadline.as_deref().unwrap_or(""))?,
        now,
    })
}

#[cfg(test)]
mod tests;
