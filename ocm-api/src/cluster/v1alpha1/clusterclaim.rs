//! ClusterClaim: a fact a managed cluster states about itself.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a [`ClusterClaim`]: the claimed value.
///
/// ClusterClaims are cluster-scoped and live on the managed cluster. The registration agent
/// copies them (name and value) into the ManagedCluster's `status.clusterClaims` on the hub,
/// where Placements can select clusters by them with a `claimSelector`. The names
/// `id.k8s.io`, `kubeversion.open-cluster-management.io`,
/// `platform.open-cluster-management.io` and `product.open-cluster-management.io` are reserved
/// and reported first.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.open-cluster-management.io",
    version = "v1alpha1",
    kind = "ClusterClaim",
    doc = "A fact a managed cluster states about itself (a name and a value), reported to the hub in the ManagedCluster status.",
    plural = "clusterclaims",
    derive = "PartialEq",
    derive = "Default"
)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct ClusterClaimSpec {
    /// The value of the claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub value: Option<String>,
}

crate::cluster::spec_may_be_absent!(ClusterClaimSpec);

/// The `status.clusterClaims` list the registration agent reports for a managed cluster whose
/// ClusterClaims are `claims`, by upstream's rules: claims labelled
/// `open-cluster-management.io/spoke-only` stay on the spoke; the reserved claims
/// ([`RESERVED_CLAIM_NAMES`](crate::constants::cluster::RESERVED_CLAIM_NAMES)) come first,
/// sorted by name, then the others sorted by name and cut to `max_custom_claims`
/// (upstream's `--max-custom-cluster-claims`, default
/// [`DEFAULT_MAX_CUSTOM_CLAIMS`](crate::constants::cluster::DEFAULT_MAX_CUSTOM_CLAIMS)).
///
/// ```
/// use ocm_api::cluster::v1alpha1::{ClusterClaim, cluster_claims_status};
///
/// let claim = |name: &str, value: &str| -> ClusterClaim {
///     serde_json::from_value(serde_json::json!({
///         "metadata": {"name": name}, "spec": {"value": value}})).unwrap()
/// };
/// let status = cluster_claims_status(
///     &[claim("region", "eu"), claim("id.k8s.io", "abc"), claim("az", "1")], 20);
/// let names: Vec<_> = status.iter().map(|c| c.name.as_deref().unwrap()).collect();
/// assert_eq!(names, ["id.k8s.io", "az", "region"]);
/// ```
pub fn cluster_claims_status(
    claims: &[ClusterClaim],
    max_custom_claims: usize,
) -> Vec<crate::cluster::v1::ManagedClusterClaim> {
    use crate::cluster::v1::ManagedClusterClaim;
    use crate::constants::cluster::{CLAIM_SPOKE_ONLY_LABEL, RESERVED_CLAIM_NAMES};

    let mut reserved = Vec::new();
    let mut custom = Vec::new();
    for claim in claims {
        let spoke_only = claim
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(CLAIM_SPOKE_ONLY_LABEL));
        if spoke_only {
            continue;
        }
        let name = claim.metadata.name.as_deref().unwrap_or_default();
        let item = ManagedClusterClaim {
            name: Some(name.to_string()),
            value: claim.spec.value.clone(),
        };
        if RESERVED_CLAIM_NAMES.contains(&name) {
            reserved.push(item);
        } else {
            custom.push(item);
        }
    }
    reserved.sort_by(|a, b| a.name.cmp(&b.name));
    custom.sort_by(|a, b| a.name.cmp(&b.name));
    custom.truncate(max_custom_claims);
    reserved.extend(custom);
    reserved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constants::cluster::CLAIM_SPOKE_ONLY_LABEL;
    use serde_json::json;

    fn claim(name: &str, value: &str, spoke_only: bool) -> ClusterClaim {
        let labels = if spoke_only {
            json!({CLAIM_SPOKE_ONLY_LABEL: ""})
        } else {
            json!({})
        };
        serde_json::from_value(json!({"metadata": {"name": name, "labels": labels},
            "spec": {"value": value}}))
        .unwrap()
    }

    #[test]
    fn reserved_first_custom_truncated_spoke_only_hidden() {
        let claims = [
            claim("z", "1", false),
            claim("b", "2", false),
            claim("platform.open-cluster-management.io", "AWS", false),
            claim("secret", "x", true),
            claim("a", "3", false),
        ];
        let got = cluster_claims_status(&claims, 2);
        let names: Vec<_> = got.iter().map(|c| c.name.clone().unwrap()).collect();
        assert_eq!(names, ["platform.open-cluster-management.io", "a", "b"]);
        assert_eq!(got[0].value.as_deref(), Some("AWS"));
    }
}
