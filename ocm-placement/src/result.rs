//! What one scheduling round produces.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision, PlacementStatus};
use ocm_api::conditions::{self, NewCondition};

use crate::decisions::{DecisionGroup, DecisionSlice};
use crate::snapshot::{ClusterId, Snapshot};

/// Outcome class of a scheduling round, as upstream's framework status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatusCode {
    /// Everything went fine.
    Success,
    /// Scheduling finished but something needs attention (expired AddOn scores); upstream
    /// retries the placement with backoff.
    Warning,
    /// The placement's spec is wrong; nothing is selected (unless only decision groups are
    /// wrong).
    Misconfigured,
    /// An internal failure.
    Error,
}

/// Status of a scheduling round: code, the plugin that set it and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScheduleStatus {
    /// The code.
    pub code: StatusCode,
    /// The plugin that reported it (`Predicate`, `TaintToleration`, `AddOn/<r>/<s>`, a custom
    /// plugin's name, or empty for prioritizer-policy and decision-group problems).
    pub plugin: String,
    /// The message.
    pub message: String,
}

impl ScheduleStatus {
    /// A success status.
    pub fn success() -> Self {
        ScheduleStatus {
            code: StatusCode::Success,
            plugin: String::new(),
            message: String::new(),
        }
    }

    pub(crate) fn new(
        code: StatusCode,
        plugin: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ScheduleStatus {
            code,
            plugin: plugin.into(),
            message: message.into(),
        }
    }

    /// Whether the code is Misconfigured or Error.
    pub fn is_error(&self) -> bool {
        matches!(self.code, StatusCode::Misconfigured | StatusCode::Error)
    }
}

/// Survivors after a prefix of the filter pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FilterRecord {
    /// Comma-joined filter names so far (`Predicate`, `Predicate,TaintToleration`, …).
    pub name: String,
    /// Surviving clusters in name order.
    pub clusters: Vec<ClusterId>,
}

/// The scores one prioritizer gave.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrioritizerScores {
    /// Prioritizer name (`Balance`, `AddOn/<resource>/<score>`, …).
    pub name: String,
    /// Its weight.
    pub weight: i32,
    /// Scores aligned with [`ScheduleResult::feasible`]; `None` = no entry (counts 0).
    pub scores: Vec<Option<i64>>,
}

/// A feasible cluster with its total score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScoredCluster {
    /// The cluster.
    pub cluster: ClusterId,
    /// Σ weight × score over the enabled prioritizers.
    pub total: i64,
}

/// Inputs of the `PlacementSatisfied` condition that come from cluster-set eligibility.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Eligibility {
    /// Number of bindings in the namespace that name an existing cluster set.
    pub valid_bindings: usize,
    /// Eligible cluster sets, sorted.
    pub cluster_sets: Vec<String>,
}

/// Everything a scheduling round produced, as data.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ScheduleResult {
    pub(crate) names: Arc<[Box<str>]>,
    /// Cluster-set eligibility.
    pub eligibility: Eligibility,
    /// Available clusters (members of eligible sets, not terminating), in name order.
    pub candidates: Vec<ClusterId>,
    /// Survivors after each filter, in pipeline order. A misconfigured filter leaves no record.
    pub filter_records: Vec<FilterRecord>,
    /// Clusters that passed every filter, in name order.
    pub feasible: Vec<ClusterId>,
    /// Per-prioritizer scores, aligned with `feasible`.
    pub prioritizers: Vec<PrioritizerScores>,
    /// Feasible clusters sorted by total score descending, then name ascending.
    pub scores: Vec<ScoredCluster>,
    /// Selected clusters in score order (a prefix of `scores`); with topology spread on and
    /// spread constraints, in the order the spread chose them (see [`crate::spread`]).
    pub selected: Vec<ClusterId>,
    /// `numberOfClusters − selected` (0 without `numberOfClusters`; with topology spread,
    /// the clusters a `DoNotSchedule` constraint left out count as well).
    pub unscheduled: i64,
    /// When the placement must be scheduled again (a time-limited toleration runs out).
    pub requeue_at: Option<Timestamp>,
    /// `requeue_at − now`.
    pub requeue_after: Option<Duration>,
    /// The round's status (decision-group errors replace the scheduler's status).
    pub status: ScheduleStatus,
    /// Decision groups.
    pub groups: Vec<DecisionGroup>,
    /// PlacementDecision slices, in order.
    pub slices: Vec<DecisionSlice>,
    /// `PlacementSatisfied`.
    pub satisfied: NewCondition,
    /// `PlacementMisconfigured`.
    pub misconfigured: NewCondition,
    /// How the spread constraints ended up, when the scheduler was built with
    /// [`Scheduler::with_topology_spread`](crate::Scheduler::with_topology_spread) and the
    /// placement has spread constraints (our addition; `None` otherwise).
    pub spread: Option<crate::spread::SpreadOutcome>,
    /// `spec.scoreRateLimit` when the scheduler was built with
    /// [`Scheduler::with_decision_scores`](crate::Scheduler::with_decision_scores) (our
    /// addition; then [`placement_decisions`](Self::placement_decisions) carries scores), `None`
    /// otherwise.
    pub score_rate_limit: Option<Duration>,
}

impl ScheduleResult {
    /// The name of a cluster of the snapshot this result came from.
    pub fn cluster_name(&self, id: ClusterId) -> &str {
        self.names.get(id.index()).map_or("", |n| n)
    }

    /// Names of the selected clusters, in score order.
    pub fn selected_names(&self) -> Vec<&str> {
        self.selected
            .iter()
            .map(|id| self.cluster_name(*id))
            .collect()
    }

    /// The PlacementDecision objects to write (see [`DecisionSlice::to_placement_decision`];
    /// with scores, see [`Scheduler::with_decision_scores`](crate::Scheduler::with_decision_scores),
    /// when [`score_rate_limit`](Self::score_rate_limit) is set).
    pub fn placement_decisions(
        &self,
        placement: &Placement,
        snapshot: &Snapshot,
    ) -> Vec<PlacementDecision> {
        if self.score_rate_limit.is_none() {
            return self
                .slices
                .iter()
                .map(|s| s.to_placement_decision(placement, snapshot))
                .collect();
        }
        let mut totals: Vec<(ClusterId, i64)> =
            self.scores.iter().map(|s| (s.cluster, s.total)).collect();
        totals.sort_unstable();
        let score = |id: ClusterId| {
            totals
                .binary_search_by_key(&id, |(c, _)| *c)
                .ok()
                .and_then(|i| totals.get(i))
                .map(|(_, total)| *total)
        };
        self.slices
            .iter()
            .map(|s| s.to_scored_placement_decision(placement, snapshot, score))
            .collect()
    }

    /// The new Placement status: `numberOfSelectedClusters`, `decisionGroups` and both
    /// conditions merged into `previous` conditions with Kubernetes "set condition" semantics
    /// (a condition's `lastTransitionTime` moves only when its status changes).
    pub fn placement_status(
        &self,
        previous: Option<&PlacementStatus>,
        now: Timestamp,
    ) -> PlacementStatus {
        let now = Time(now);
        let mut conds: Vec<Condition> = previous
            .and_then(|p| p.conditions.clone())
            .unwrap_or_default();
        // Upstream's order: a new placement lists PlacementMisconfigured first (clusteradm's
        // `get placements -otable` shows the first condition).
        conditions::set(&mut conds, self.misconfigured.clone(), &now);
        conditions::set(&mut conds, self.satisfied.clone(), &now);
        PlacementStatus {
            number_of_selected_clusters: Some(
                i32::try_from(self.selected.len()).unwrap_or(i32::MAX),
            ),
            decision_groups: Some(self.groups.iter().map(DecisionGroup::to_status).collect()),
            conditions: Some(conds),
            last_score_update_time: previous.and_then(|p| p.last_score_update_time.clone()),
        }
    }
}
