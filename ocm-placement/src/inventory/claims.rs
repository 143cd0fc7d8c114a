//! The managed-cluster side of ClusterClaims: project the spoke's cluster-scoped
//! `ClusterClaim` objects into the hub's `ManagedCluster.status.clusterClaims`.
//!
//! Rules (upstream's registration agent): claims labelled
//! `open-cluster-management.io/spoke-only` stay on the spoke; reserved claims
//! (`id.k8s.io`, `kubeversion.open-cluster-management.io`,
//! `platform.open-cluster-management.io`, `product.open-cluster-management.io`) come first,
//! sorted by name, then the other claims sorted by name and cut to at most
//! [`DEFAULT_MAX_CUSTOM_CLAIMS`]. [`cluster_claims_status`] computes the list;
//! [`ClusterClaimReporter`] (feature `controller`) writes it to the hub only when it differs.
//!
//! ```
//! use ocm_api::cluster::v1alpha1::ClusterClaim;
//! use ocm_placement::inventory::claims::cluster_claims_status;
//!
//! let claim = |name: &str, value: &str| -> ClusterClaim {
//!     serde_json::from_value(serde_json::json!({
//!         "metadata": {"name": name}, "spec": {"value": value}})).unwrap()
//! };
//! let status = cluster_claims_status(
//!     &[claim("region", "eu"), claim("id.k8s.io", "abc"), claim("az", "1")], 20);
//! let names: Vec<_> = status.iter().map(|c| c.name.as_deref().unwrap()).collect();
//! assert_eq!(names, ["id.k8s.io", "az", "region"]);
//! ```

use ocm_api::cluster::v1::ManagedClusterClaim;
use ocm_api::cluster::v1alpha1::ClusterClaim;

use super::name_of;

pub use ocm_api::constants::cluster::{
    CLAIM_SPOKE_ONLY_LABEL as SPOKE_ONLY_LABEL, DEFAULT_MAX_CUSTOM_CLAIMS, RESERVED_CLAIM_NAMES,
};

/// The `status.clusterClaims` list for a managed cluster with the ClusterClaims `claims`.
pub fn cluster_claims_status(
    claims: &[ClusterClaim],
    max_custom_claims: usize,
) -> Vec<ManagedClusterClaim> {
    let mut reserved = Vec::new();
    let mut custom = Vec::new();
    for claim in claims {
        let spoke_only = claim
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(SPOKE_ONLY_LABEL));
        if spoke_only {
            continue;
        }
        let name = name_of(&claim.metadata);
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

#[cfg(feature = "controller")]
pub use reporter::ClusterClaimReporter;

#[cfg(feature = "controller")]
mod reporter {
    use std::time::Duration;

    use futures::StreamExt;
    use kube::Client;
    use kube::api::{Api, ListParams, Patch, PatchParams};
    use kube::runtime::{WatchStreamExt, watcher};
    use ocm_api::cluster::v1::ManagedCluster;
    use ocm_api::cluster::v1alpha1::ClusterClaim;
    use serde_json::json;

    use super::{DEFAULT_MAX_CUSTOM_CLAIMS, cluster_claims_status};
    use crate::controller::ControllerError;

    /// Reports a managed cluster's ClusterClaims to its `ManagedCluster` on the hub.
    #[derive(Clone)]
    pub struct ClusterClaimReporter {
        hub: Client,
        spoke: Client,
        cluster_name: String,
        max_custom_claims: usize,
    }

    impl std::fmt::Debug for ClusterClaimReporter {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ClusterClaimReporter")
                .field("cluster_name", &self.cluster_name)
                .finish_non_exhaustive()
        }
    }

    fn kube_error(action: String) -> impl FnOnce(kube::Error) -> ControllerError {
        move |source| ControllerError::Kube { action, source }
    }

    impl ClusterClaimReporter {
        /// A reporter for cluster `cluster_name`, reading claims through `spoke` and writing
        /// the `ManagedCluster` status through `hub`.
        pub fn new(hub: Client, spoke: Client, cluster_name: impl Into<String>) -> Self {
            Self {
                hub,
                spoke,
                cluster_name: cluster_name.into(),
                max_custom_claims: DEFAULT_MAX_CUSTOM_CLAIMS,
            }
        }

        /// Reports at most `max` non-reserved claims (upstream's `--max-custom-cluster-claims`).
        #[must_use]
        pub fn with_max_custom_claims(mut self, max: usize) -> Self {
            self.max_custom_claims = max;
            self
        }

        /// Reads the claims and the hub's `ManagedCluster`, and patches its
        /// `status.clusterClaims` when it differs. Returns the number of writes (0 or 1).
        pub async fn sync(&self) -> Result<usize, ControllerError> {
            let claims = Api::<ClusterClaim>::all(self.spoke.clone())
                .list(&ListParams::default())
                .await
                .map_err(kube_error(
                    "list ClusterClaims on the managed cluster".into(),
                ))?
                .items;
            let want = cluster_claims_status(&claims, self.max_custom_claims);
            let clusters: Api<ManagedCluster> = Api::all(self.hub.clone());
            let name = &self.cluster_name;
            let cluster = clusters
                .get(name)
                .await
                .map_err(kube_error(format!("get ManagedCluster {name}")))?;
            let have = cluster
                .status
                .as_ref()
                .and_then(|s| s.cluster_claims.clone())
                .unwrap_or_default();
            if have == want {
                return Ok(0);
            }
            let patch = json!({"status": {"clusterClaims": want}});
            clusters
                .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(kube_error(format!(
                    "update claims of ManagedCluster {name}"
                )))?;
            Ok(1)
        }

        /// Syncs whenever a ClusterClaim changes and at least every `resync`, until
        /// `shutdown` completes.
        pub async fn run(
            self,
            resync: Duration,
            shutdown: impl std::future::Future<Output = ()> + Send + 'static,
        ) {
            let mut changes = watcher(
                Api::<ClusterClaim>::all(self.spoke.clone()),
                watcher::Config::default(),
            )
            .default_backoff()
            .boxed();
            let mut shutdown = std::pin::pin!(shutdown);
            loop {
                if let Err(error) = self.sync().await {
                    tracing::warn!(%error, cluster = %self.cluster_name, "claim sync failed");
                }
                tokio::select! {
                    _ = changes.next() => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    _ = tokio::time::sleep(resync) => {}
                    _ = &mut shutdown => break,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claim(name: &str, value: &str, spoke_only: bool) -> ClusterClaim {
        let labels = if spoke_only {
            json!({SPOKE_ONLY_LABEL: ""})
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
