//! Reading a placement's PlacementDecisions from the hub.

use kube::Client;
use kube::api::{Api, ListParams};
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};

use crate::Error;
use ocm_api::cluster::v1beta1::{ClusterChanges, ClustersTracker};

/// Lists the PlacementDecisions of a Placement (sdk-go's `PlacementDecisionGetter`), through
/// any `kube::Client`: a real hub or an ocm-testkit one.
#[derive(Clone)]
pub struct PlacementDecisionGetter {
    client: Client,
}

impl std::fmt::Debug for PlacementDecisionGetter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlacementDecisionGetter")
            .finish_non_exhaustive()
    }
}

impl PlacementDecisionGetter {
    /// A getter talking to the hub through `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// The decisions of placement `namespace/name`: every PlacementDecision in `namespace`
    /// labelled `cluster.open-cluster-management.io/placement=<name>`.
    pub async fn list(&self, namespace: &str, name: &str) -> Result<Vec<PlacementDecision>, Error> {
        let api: Api<PlacementDecision> = Api::namespaced(self.client.clone(), namespace);
        let params = ListParams::default().labels(&PlacementDecision::selector_for(name));
        api.list(&params)
            .await
            .map(|l| l.items)
            .map_err(|source| Error::Kube {
                action: format!("list PlacementDecisions of {namespace}/{name}"),
                source,
            })
    }

    /// The placement itself, or `None` when it does not exist.
    pub async fn placement(&self, namespace: &str, name: &str) -> Result<Option<Placement>, Error> {
        let api: Api<Placement> = Api::namespaced(self.client.clone(), namespace);
        api.get_opt(name).await.map_err(|source| Error::Kube {
            action: format!("get Placement {namespace}/{name}"),
            source,
        })
    }

    /// Lists the tracker's placement's decisions and refreshes the tracker with them,
    /// returning the clusters added and removed since its previous refresh.
    pub async fn refresh(&self, tracker: &mut ClustersTracker) -> Result<ClusterChanges, Error> {
        let decisions = self.list(tracker.namespace(), tracker.name()).await?;
        tracker
            .cluster_changes(&decisions)
            .map_err(|source| Error::Decisions {
                placement: format!("{}/{}", tracker.namespace(), tracker.name()),
                source,
            })
    }
}
