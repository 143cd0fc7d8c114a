//! The AddOn prioritizer `AddOn/<resourceName>/<scoreName>`.
//!
//! Each candidate scores the value of the item `scoreName` (the last one when repeated) of the
//! AddOnPlacementScore `<cluster name>/<resourceName>`; 0 when the object or the item is
//! missing, and 0 when `validUntil` is set and `now` is strictly after it. Expired scores make
//! the prioritizer report a Warning `AddOnPlacementScores <ns>/<res> … expired` (scheduling
//! goes on).

use crate::snapshot::{ClusterId, Snapshot};

/// Prefix of AddOn prioritizer names.
pub const NAME_PREFIX: &str = "AddOn";

/// The reported name of an AddOn prioritizer.
pub fn name(resource_name: &str, score_name: &str) -> String {
    format!("{NAME_PREFIX}/{resource_name}/{score_name}")
}

/// Scores `candidates` (aligned); returns the scores and the Warning message if any expired.
pub(crate) fn score_all(
    snapshot: &Snapshot,
    resource_name: &str,
    score_name: &str,
    candidates: &[ClusterId],
    now: i128,
) -> (Vec<Option<i64>>, Option<String>) {
    let mut out = vec![Some(0); candidates.len()];
    let mut expired = String::new();
    let Some(table) = snapshot.scores.get(resource_name) else {
        return (out, None);
    };
    let score_sym = snapshot.symbols.lookup(score_name);
    // Both lists are sorted by cluster id: walk them together.
    let mut row = 0;
    for (slot, id) in out.iter_mut().zip(candidates) {
        while row < table.clusters.len() && table.clusters[row] < *id {
            row += 1;
        }
        if row >= table.clusters.len() {
            break;
        }
        if table.clusters[row] != *id {
            continue;
        }
        if table.valid_until[row].is_some_and(|until| now > until) {
            expired.push(' ');
            expired.push_str(snapshot.cluster_name(*id));
            expired.push('/');
            expired.push_str(resource_name);
            continue;
        }
        if let Some(v) = table.value(row, score_sym) {
            *slot = Some(i64::from(v));
        }
    }
    let warning = (!expired.is_empty()).then(|| format!("AddOnPlacementScores{expired} expired"));
    (out, warning)
}
