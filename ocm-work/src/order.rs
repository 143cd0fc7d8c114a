//! The order in which a work's manifests are applied.
//!
//! Manifests are applied in a stable order by kind, so that namespaces and CRDs exist before the
//! objects that need them. Only the kind is looked at, not the group; results are still
//! reported under each manifest's position in the work (its ordinal).

use ocm_api::work::v1::Manifest;

/// The rank of a kind: lower ranks are applied first. Unknown kinds rank 1000.
pub fn kind_rank(kind: &str) -> u32 {
    match kind {
        "PriorityClass"
        | "Namespace"
        | "CustomResourceDefinition"
        | "StorageClass"
        | "PersistentVolume"
        | "PodSecurityPolicy" => 0,
        "ClusterRole" | "ClusterRoleBinding" | "Role" | "RoleBinding" => 1,
        "NetworkPolicy"
        | "ResourceQuota"
        | "LimitRange"
        | "PodDisruptionBudget"
        | "ServiceAccount" => 2,
        "Secret" | "ConfigMap" | "PersistentVolumeClaim" => 3,
        "Service" => 4,
        "DaemonSet"
        | "Pod"
        | "ReplicationController"
        | "ReplicaSet"
        | "Deployment"
        | "HorizontalPodAutoscaler"
        | "StatefulSet"
        | "Job"
        | "CronJob" => 5,
        "APIService"
        | "MutatingWebhookConfiguration"
        | "ValidatingWebhookConfiguration"
        | "ValidatingAdmissionPolicy"
        | "ValidatingAdmissionPolicyBinding" => 6,
        _ => 1000,
    }
}

/// The rank of a manifest that cannot be decoded: after everything else.
pub const UNDECODABLE_RANK: u32 = 1001;

/// The ordinals of `manifests` in apply order (stable: equal ranks keep their work order).
///
/// ```
/// use ocm_api::work::v1::Manifest;
/// use serde_json::json;
///
/// let manifests = [
///     Manifest::new(json!({"apiVersion": "apps/v1", "kind": "Deployment"})),
///     Manifest::new(json!({"apiVersion": "v1", "kind": "ServiceAccount"})),
///     Manifest::new(json!({"apiVersion": "v1", "kind": "Namespace"})),
/// ];
/// assert_eq!(ocm_work::order::apply_order(&manifests), vec![2, 1, 0]);
/// ```
pub fn apply_order(manifests: &[Manifest]) -> Vec<usize> {
    let mut order: Vec<(u32, usize)> = manifests
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let rank = match (m.api_version(), m.kind()) {
                (Some(v), Some(k)) if !v.is_empty() && !k.is_empty() => kind_rank(k),
                _ => UNDECODABLE_RANK,
            };
            (rank, i)
        })
        .collect();
    order.sort_by_key(|&(rank, _)| rank);
    order.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ranks_follow_upstream_table() {
        assert_eq!(kind_rank("CustomResourceDefinition"), 0);
        assert_eq!(kind_rank("RoleBinding"), 1);
        assert_eq!(kind_rank("ServiceAccount"), 2);
        assert_eq!(kind_rank("ConfigMap"), 3);
        assert_eq!(kind_rank("Service"), 4);
        assert_eq!(kind_rank("CronJob"), 5);
        assert_eq!(kind_rank("ValidatingAdmissionPolicyBinding"), 6);
        assert_eq!(kind_rank("ManifestWork"), 1000);
    }

    #[test]
    fn undecodable_manifests_go_last_and_order_is_stable() {
        let m = |kind: Option<&str>| {
            Manifest::new(match kind {
                Some(k) => json!({"apiVersion": "v1", "kind": k}),
                None => json!({"data": 1}),
            })
        };
        let manifests = [
            m(None),
            m(Some("Foo")),
            m(Some("ConfigMap")),
            m(Some("Bar")),
            m(Some("Namespace")),
            m(Some("Secret")),
        ];
        assert_eq!(apply_order(&manifests), vec![4, 2, 5, 1, 3, 0]);
    }
}
