//! Taints the hub derives from a managed cluster's health (pure functions).
//!
//! Upstream's hub taint controller keeps two well-known `NoSelect` taints with an empty value
//! in step with the cluster's `ManagedClusterConditionAvailable` condition:
//!
//! | Available | `…/unavailable` | `…/unreachable` |
//! |---|---|---|
//! | `True` | removed | removed |
//! | `False` | added | removed |
//! | `Unknown` or missing | removed | added |
//!
//! Taints are identified by (key, value, effect); `timeAdded` is ignored when comparing. Clusters
//! being deleted are left alone. Upstream relies on its mutating webhook to stamp `timeAdded`;
//! we set `timeAdded` to the caller's "now" on the taints we add, so tolerations with
//! `tolerationSeconds` work without the webhook too.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ocm_api::cluster::v1::{ManagedCluster, Taint, TaintEffect};
use ocm_api::conditions::{self, ConditionStatus};
use ocm_api::constants::{cluster as c, taints};

/// The health state the taints reflect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Health {
    /// `ManagedClusterConditionAvailable` is `True`.
    Available,
    /// `ManagedClusterConditionAvailable` is `False`.
    Unavailable,
    /// `ManagedClusterConditionAvailable` is `Unknown`, missing or malformed.
    Unreachable,
}

/// The health of `cluster` as read from its `ManagedClusterConditionAvailable` condition.
pub fn health(cluster: &ManagedCluster) -> Health {
    let conds = cluster
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    match conditions::status(conds, c::CONDITION_AVAILABLE) {
        Some(ConditionStatus::True) => Health::Available,
        Some(ConditionStatus::False) => Health::Unavailable,
        _ => Health::Unreachable,
    }
}

/// A well-known health taint (`NoSelect`, empty value) with the given key.
pub fn health_taint(key: &str, time_added: Option<Time>) -> Taint {
    Taint {
        key: key.to_string(),
        value: Some(String::new()),
        effect: TaintEffect::NoSelect,
        time_added,
    }
}

/// Whether two taints have the same identity: key, value (absent = empty) and effect.
pub fn same_taint(a: &Taint, b: &Taint) -> bool {
    a.key == b.key
        && a.value.as_deref().unwrap_or_default() == b.value.as_deref().unwrap_or_default()
        && a.effect == b.effect
}

/// The taints `cluster` should carry given its health, or `None` when nothing must change
/// (including for clusters being deleted). Added taints get `timeAdded = now`; other taints,
/// and their order, are kept.
///
/// ```
/// use ocm_placement::inventory::desired_health_taints;
/// use ocm_api::cluster::v1::ManagedCluster;
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
///
/// let cluster: ManagedCluster = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "c1"}, "spec": {}
/// }))?;
/// let now = Time("2026-01-01T00:00:00Z".parse()?);
/// // No Available condition yet: the cluster counts as unreachable.
/// let taints = desired_health_taints(&cluster, &now).expect("a change");
/// assert_eq!(taints[0].key, "cluster.open-cluster-management.io/unreachable");
/// assert_eq!(taints[0].time_added, Some(now));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn desired_health_taints(cluster: &ManagedCluster, now: &Time) -> Option<Vec<Taint>> {
    if cluster.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let current = cluster.spec.taints.clone().unwrap_or_default();
    let unavailable = health_taint(taints::UNAVAILABLE, None);
    let unreachable = health_taint(taints::UNREACHABLE, None);
    let (remove, add): (Vec<&Taint>, Option<&Taint>) = match health(cluster) {
        Health::Available => (vec![&unavailable, &unreachable], None),
        Health::Unavailable => (vec![&unreachable], Some(&unavailable)),
        Health::Unreachable => (vec![&unavailable], Some(&unreachable)),
    };
    let mut next: Vec<Taint> = current
        .iter()
        .filter(|t| !remove.iter().any(|r| same_taint(t, r)))
        .cloned()
        .collect();
    let mut changed = next.len() != current.len();
    if let Some(add) = add
        && !next.iter().any(|t| same_taint(t, add))
    {
        let mut taint = add.clone();
        taint.time_added = Some(now.clone());
        next.push(taint);
        changed = true;
    }
    changed.then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster(available: Option<&str>, taints: serde_json::Value) -> ManagedCluster {
        let conditions = match available {
            Some(s) => json!([{"type": "ManagedClusterConditionAvailable", "status": s,
                "reason": "R", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]),
            None => json!([]),
        };
        serde_json::from_value(json!({
            "metadata": {"name": "c1"},
            "spec": {"taints": taints},
            "status": {"conditions": conditions}
        }))
        .unwrap()
    }

    fn now() -> Time {
        Time("2026-02-01T00:00:00Z".parse().unwrap())
    }

    fn keys(t: &[Taint]) -> Vec<&str> {
        t.iter().map(|t| t.key.as_str()).collect()
    }

    #[test]
    fn healthy_cluster_without_taints_needs_nothing() {
        assert_eq!(
            desired_health_taints(&cluster(Some("True"), json!([])), &now()),
            None
        );
    }

    #[test]
    fn false_adds_unavailable_and_drops_unreachable() {
        let c = cluster(
            Some("False"),
            json!([{"key": taints::UNREACHABLE, "effect": "NoSelect", "value": "", "timeAdded": null},
                   {"key": "other", "effect": "NoSelect", "timeAdded": null}]),
        );
        let t = desired_health_taints(&c, &now()).unwrap();
        assert_eq!(keys(&t), ["other", taints::UNAVAILABLE]);
        assert_eq!(t[1].time_added, Some(now()));
        assert_eq!(t[1].value.as_deref(), Some(""));
    }

    #[test]
    fn unknown_and_missing_add_unreachable_once() {
        for status in [Some("Unknown"), None] {
            let c = cluster(status, json!([]));
            let t = desired_health_taints(&c, &now()).unwrap();
            assert_eq!(keys(&t), [taints::UNREACHABLE]);
            let again = cluster(status, serde_json::to_value(&t).unwrap());
            assert_eq!(desired_health_taints(&again, &now()), None, "idempotent");
        }
    }

    #[test]
    fn identity_includes_value_and_effect() {
        // A user's taint with the same key but another value or effect is not ours.
        let c = cluster(
            Some("True"),
            json!([{"key": taints::UNREACHABLE, "effect": "NoSelect", "value": "x", "timeAdded": null},
                   {"key": taints::UNAVAILABLE, "effect": "PreferNoSelect", "value": "", "timeAdded": null}]),
        );
        assert_eq!(desired_health_taints(&c, &now()), None);
        let c = cluster(
            Some("True"),
            json!([{"key": taints::UNREACHABLE, "effect": "NoSelect", "timeAdded": "2026-01-01T00:00:00Z"}]),
        );
        assert_eq!(
            desired_health_taints(&c, &now()),
            Some(vec![]),
            "absent value = empty"
        );
    }

    #[test]
    fn deleting_clusters_are_skipped() {
        let mut c = cluster(None, json!([]));
        c.metadata.deletion_timestamp = Some(now());
        assert_eq!(desired_health_taints(&c, &now()), None);
    }
}
