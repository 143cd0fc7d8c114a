//! The `Steady` prioritizer: prefers clusters this placement already selected (100 for a
//! cluster in the placement's existing decisions, else 0), so selections do not churn.

use crate::snapshot::ClusterId;

/// Prioritizer name.
pub const NAME: &str = "Steady";

/// Scores `candidates` (aligned output) given the sorted ids of decided clusters.
pub(crate) fn score_all(decided: &[ClusterId], candidates: &[ClusterId]) -> Vec<Option<i64>> {
    candidates
        .iter()
        .map(|id| {
            Some(if decided.binary_search(id).is_ok() {
                100
            } else {
                0
            })
        })
        .collect()
}
