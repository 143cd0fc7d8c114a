//! The `Balance` prioritizer: prefers clusters that other placements use less.
//!
//! Counts, over every PlacementDecision in every namespace except this placement's own (same
//! namespace and `cluster.open-cluster-management.io/placement` label), how many decision
//! entries name each cluster, and takes the largest count `max` (names of clusters that no
//! longer exist count too). A cluster with no entry scores 100; otherwise
//! `2 * trunc(100.0 * (0.5 - count / max))`: truncated before doubling, so scores are even.

use std::borrow::Cow;

use crate::snapshot::{ClusterId, Snapshot};

/// Prioritizer name.
pub const NAME: &str = "Balance";

/// The score of one cluster given its count and the largest count.
pub fn score(count: u32, max: u32) -> i64 {
    if count == 0 || max == 0 {
        return 100;
    }
    2 * ((100.0 * (0.5 - f64::from(count) / f64::from(max))) as i64)
}

/// Scores `candidates` (aligned output).
pub(crate) fn score_all(
    snapshot: &Snapshot,
    namespace: &str,
    placement: &str,
    candidates: &[ClusterId],
) -> Vec<Option<i64>> {
    let mut own = snapshot.own_records(namespace, placement).peekable();
    let counts: Cow<'_, [u32]> = if own.peek().is_none() {
        Cow::Borrowed(&snapshot.decision_counts)
    } else {
        let mut counts = snapshot.decision_counts.clone();
        for record in own {
            for &slot in record.slots.iter() {
                if let Some(c) = counts.get_mut(slot as usize) {
                    *c = c.saturating_sub(1);
                }
            }
        }
        Cow::Owned(counts)
    };
    let max = counts.iter().copied().max().unwrap_or(0);
    candidates
        .iter()
        .map(|id| Some(score(counts.get(id.index()).copied().unwrap_or(0), max)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::score;

    #[test]
    fn truncates_before_doubling() {
        assert_eq!(score(0, 5), 100);
        assert_eq!(score(1, 1), -100);
        assert_eq!(score(1, 2), 0);
        assert_eq!(score(1, 3), 32);
        assert_eq!(score(2, 3), -32);
        assert_eq!(score(1, 4), 50);
        assert_eq!(score(3, 4), -50);
    }
}
