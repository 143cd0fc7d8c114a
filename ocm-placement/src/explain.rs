//! Per-cluster explanations of a scheduling round, as data.

use crate::result::ScheduleResult;
use crate::snapshot::ClusterId;

/// Why one candidate cluster was or was not selected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// A filter dropped the cluster.
    FilteredOut {
        /// The filter's name (`Predicate`, `TaintToleration` or a custom filter).
        filter: String,
    },
    /// The cluster passed every filter and was scored.
    Scored {
        /// Σ weight × score.
        total: i64,
        /// Position in the score order (0 = best).
        rank: usize,
        /// Whether it is among the selected clusters.
        selected: bool,
        /// `(prioritizer, weight, score)`; a `None` score counted 0.
        scores: Vec<(String, i32, Option<i64>)>,
    },
    /// Scheduling stopped before this cluster was examined (misconfigured placement).
    NotEvaluated,
}

/// The explanation of one candidate cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterExplanation {
    /// The cluster.
    pub cluster: ClusterId,
    /// Its name.
    pub name: String,
    /// What happened to it.
    pub outcome: Outcome,
}

impl ScheduleResult {
    /// Explains every candidate cluster (members of eligible sets), in name order.
    pub fn explain(&self) -> Vec<ClusterExplanation> {
        let mut rank = vec![usize::MAX; self.feasible.len()];
        for (r, s) in self.scores.iter().enumerate() {
            if let Ok(i) = self.feasible.binary_search(&s.cluster) {
                rank[i] = r;
            }
        }
        // With topology spread the selection is not a prefix of the score order.
        let mut selected = self.selected.clone();
        selected.sort_unstable();
        self.candidates
            .iter()
            .map(|&id| {
                let outcome = match self.feasible.binary_search(&id) {
                    Ok(i) if rank[i] != usize::MAX => Outcome::Scored {
                        total: self.scores[rank[i]].total,
                        rank: rank[i],
                        selected: selected.binary_search(&id).is_ok(),
                        scores: self
                            .prioritizers
                            .iter()
                            .map(|p| (p.name.clone(), p.weight, p.scores.get(i).copied().flatten()))
                            .collect(),
                    },
                    _ => self.dropped_by(id).map_or(Outcome::NotEvaluated, |filter| {
                        Outcome::FilteredOut { filter }
                    }),
                };
                ClusterExplanation {
                    cluster: id,
                    name: self.cluster_name(id).to_string(),
                    outcome,
                }
            })
            .collect()
    }

    fn dropped_by(&self, id: ClusterId) -> Option<String> {
        self.filter_records
            .iter()
            .find(|r| r.clusters.binary_search(&id).is_err())
            .map(|r| r.name.rsplit(',').next().unwrap_or(&r.name).to_string())
    }
}
