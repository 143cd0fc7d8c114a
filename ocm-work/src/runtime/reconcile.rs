//! Every controller's reconciler in kube-runtime's shape, in one place, to mount in a
//! `kube::runtime::Controller` of your own (with your own watches, queue settings,
//! concurrency and metrics):
//!
//! | object | reconcile | error policy | context | feature |
//! |---|---|---|---|---|
//! | ManifestWork (managed cluster side) | `work` | `work_error_policy` | `WorkAgent` | `agent` |
//! | ManifestWorkReplicaSet | `replica_set` | `replica_set_error_policy` | `ReplicaSetController` | `hub` |
//! | ManifestWorkReplicaSet, read raw | `replica_set_raw` | `replica_set_raw_error_policy` | `ReplicaSetController` | `hub` |
//!
//! The Placement controller's reconciler is ocm-placement's own
//! (`ocm_placement::controller::reconcile_placement`): ocm-work does not depend on the
//! scheduler.
//!
//! Each `run` of the SDK is such a controller with the watches the component needs; these
//! functions are the same reconciles without them. A reconciler mounted on its own does not
//! get what its `run` adds around it (the agent's eviction of unmanaged AppliedManifestWorks,
//! the replica set controller's watches of works, decisions and placements): see each
//! function.
//!
//! A `Controller<ManifestWorkReplicaSet>` decodes every replica set it lists or watches as a
//! whole: one replica set its types reject (or nested deeper than `serde_json`'s 128 levels)
//! fails the list, and with it every replica set. Mount `replica_set_raw` on a
//! `Controller<RawObject>` instead (`Controller::new_with` and
//! `ApiResource::erase::<ManifestWorkReplicaSet>`), as `ReplicaSetController::run` does: each
//! replica set is then decoded on its own, and one that does not decode is reported in its
//! `ManifestworkApplied` condition (`ReplicaSetController::reconcile_raw`).

#[cfg(feature = "agent")]
#[cfg_attr(docsrs, doc(cfg(feature = "agent")))]
pub use crate::agent::{error_policy as work_error_policy, reconcile as work};
#[cfg(feature = "hub")]
#[cfg_attr(docsrs, doc(cfg(feature = "hub")))]
pub use hub::*;

#[cfg(feature = "agent")]
#[doc(no_inline)]
pub use crate::agent::WorkAgent;

/// The ManifestWorkReplicaSet reconcilers (feature `hub`).
#[cfg(feature = "hub")]
mod hub {
    use std::sync::Arc;
    use std::time::Duration;

    use kube::runtime::controller::Action;
    use kube::{Resource, ResourceExt};
    use ocm_api::k8s::object::RawObject;
    use ocm_api::work::v1alpha1::ManifestWorkReplicaSet;

    #[doc(no_inline)]
    pub use crate::replicaset::controller::ReplicaSetController;
    use crate::{Error, Result};

    /// How soon a failed replica set reconcile is retried (what
    /// [`ReplicaSetController::run`] does).
    pub const REPLICA_SET_RETRY: Duration = Duration::from_secs(5);

    /// Reconciles one ManifestWorkReplicaSet ([`ReplicaSetController::reconcile`]). Mounted on its
    /// own it is reconciled when the replica set changes and when it asks; add watches of its
    /// ManifestWorks (label `work.open-cluster-management.io/manifestworkreplicaset`), its
    /// Placements and their PlacementDecisions to follow rollouts as
    /// [`ReplicaSetController::run`] does.
    pub async fn replica_set(
        replica_set: Arc<ManifestWorkReplicaSet>,
        ctx: Arc<ReplicaSetController>,
    ) -> Result<Action> {
        let outcome = ctx.reconcile(&replica_set).await?;
        Ok(match outcome.requeue_after {
            Some(after) => Action::requeue(after),
            None => Action::await_change(),
        })
    }

    /// What to do after a failed [`replica_set`]: log it and retry after
    /// [`REPLICA_SET_RETRY`].
    pub fn replica_set_error_policy(
        replica_set: Arc<ManifestWorkReplicaSet>,
        error: &Error,
        _ctx: Arc<ReplicaSetController>,
    ) -> Action {
        tracing::warn!(%error, namespace = replica_set.namespace().unwrap_or_default(), replica_set = %replica_set.name_any(), "ManifestWorkReplicaSet reconcile failed");
        Action::requeue(REPLICA_SET_RETRY)
    }

    /// Reconciles one ManifestWorkReplicaSet as the API server sent it
    /// ([`ReplicaSetController::reconcile_raw`]): decoded on its own, or reported in its
    /// `ManifestworkApplied` condition when it does not decode. For a `Controller<RawObject>` of
    /// replica sets (see the [module docs](super)); otherwise as [`replica_set`].
    pub async fn replica_set_raw(
        replica_set: Arc<RawObject>,
        ctx: Arc<ReplicaSetController>,
    ) -> Result<Action> {
        let outcome = ctx.reconcile_raw(&replica_set).await?;
        Ok(match outcome.requeue_after {
            Some(after) => Action::requeue(after),
            None => Action::await_change(),
        })
    }

    /// What to do after a failed [`replica_set_raw`]: log it and retry after
    /// [`REPLICA_SET_RETRY`].
    pub fn replica_set_raw_error_policy(
        replica_set: Arc<RawObject>,
        error: &Error,
        _ctx: Arc<ReplicaSetController>,
    ) -> Action {
        let meta = replica_set.meta();
        tracing::warn!(%error, namespace = meta.namespace.as_deref().unwrap_or_default(), replica_set = meta.name.as_deref().unwrap_or_default(), "ManifestWorkReplicaSet reconcile failed");
        Action::requeue(REPLICA_SET_RETRY)
    }
}
