//! The agent's reconciler in kube-runtime's shape, to mount in a `Controller` of your own.
//!
//! [`WorkAgent::run`] is the complete agent (informers, eviction of unmanaged records, watched
//! feedback, graceful shutdown). When you already run a `kube::runtime::Controller` and want
//! the agent's ManifestWork sync inside it, [`reconcile`] and [`error_policy`] have the shape
//! `Controller::run` takes:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use futures::StreamExt;
//! use kube::api::{Api, PostParams};
//! use kube::runtime::{Controller, watcher};
//! use ocm_api::work::v1::ManifestWork;
//! use ocm_work::agent::{AgentConfig, WorkAgent, error_policy, reconcile};
//!
//! # let hub = ocm_testkit::FakeCluster::new();
//! # let spoke = ocm_testkit::FakeCluster::new();
//! # ocm_testkit::install_crds(&hub)?;
//! # ocm_testkit::install_crds(&spoke)?;
//! # hub.apply_yaml("apiVersion: v1\nkind: Namespace\nmetadata: {name: cluster1}")?;
//! let (hub_client, spoke_client) = (hub.client(), spoke.client());
//! let agent = WorkAgent::new(
//!     hub_client.clone(),
//!     spoke_client.clone(),
//!     AgentConfig::new("cluster1", ocm_work::identity::hub_hash("https://hub.example.com")),
//! );
//! let works: Api<ManifestWork> = Api::namespaced(hub_client.clone(), "cluster1");
//! let work: ManifestWork = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "hello", "namespace": "cluster1"},
//!     "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
//!         "metadata": {"name": "hello", "namespace": "default"}, "data": {"a": "b"}}]}}
//! }))?;
//! works.create(&PostParams::default(), &work).await?;
//!
//! let controller = Controller::new(works, watcher::Config::default())
//!     .run(reconcile, error_policy, Arc::new(agent));
//! // Run until the ConfigMap is there (a real controller runs until shutdown).
//! let configmaps: Api<k8s_openapi::api::core::v1::ConfigMap> =
//!     Api::namespaced(spoke_client, "default");
//! tokio::pin!(controller);
//! while configmaps.get_opt("hello").await?.is_none() {
//!     controller.next().await;
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Mounted this way the agent reads the work from your controller's store. Start its
//! informers ([`WorkAgent::start_caches`]) to have it prefer its own, fresher copy (which
//! holds its own last writes) and read applied resources from informers; without them a
//! copy older than the agent's last write makes that write conflict, and the error policy
//! retries it. Eviction of unmanaged AppliedManifestWorks is not a per-work reconcile: call
//! [`WorkAgent::evict_unmanaged`] periodically (as [`WorkAgent::run`] does).

use std::sync::Arc;

use kube::ResourceExt;
use kube::runtime::controller::Action;
use ocm_api::work::v1::ManifestWork;

use super::{SyncOutcome, WorkAgent};
use crate::{Error, Result};

/// Syncs one ManifestWork ([`WorkAgent::sync`]) and says when to look at it again.
pub async fn reconcile(work: Arc<ManifestWork>, agent: Arc<WorkAgent>) -> Result<Action> {
    let work = agent.freshest(work);
    let name = work.name_any();
    let started = std::time::Instant::now();
    let span = tracing::info_span!("reconcile", cluster = %agent.config.cluster_name, work = %name);
    let result = tracing::Instrument::instrument(agent.sync(&work), span).await;
    if let Some(metrics) = &agent.metrics {
        metrics.reconcile.observe(
            crate::runtime::metrics::AGENT_CONTROLLER,
            started.elapsed(),
            result.is_ok(),
        );
    }
    let outcome = result?;
    agent.sync_succeeded(&name);
    Ok(action(outcome))
}

/// What to do after a failed [`reconcile`]: retry after a backoff per work, from
/// [`SYNC_RETRY_MIN`](super::SYNC_RETRY_MIN) doubling up to
/// [`SYNC_RETRY_MAX`](super::SYNC_RETRY_MAX); the error is logged once per new error.
pub fn error_policy(work: Arc<ManifestWork>, error: &Error, agent: Arc<WorkAgent>) -> Action {
    Action::requeue(agent.sync_failed(&work.name_any(), error))
}

/// The controller action for a sync's outcome.
pub(crate) fn action(outcome: SyncOutcome) -> Action {
    match outcome.requeue_after {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    }
}

/// Whether resource version `a` is newer than `b` (numbers, as every etcd-backed server
/// issues them; anything else is not comparable and counts as not newer).
pub(crate) fn newer(a: Option<&str>, b: Option<&str>) -> bool {
    match (
        a.and_then(|a| a.parse::<u64>().ok()),
        b.and_then(|b| b.parse::<u64>().ok()),
    ) {
        (Some(a), Some(b)) => a > b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn versions_compare_as_numbers_only() {
        assert!(newer(Some("10"), Some("9")));
        assert!(!newer(Some("9"), Some("10")));
        assert!(!newer(Some("9"), Some("9")));
        assert!(!newer(Some("abc"), Some("1")));
        assert!(!newer(None, Some("1")));
    }

    #[test]
    fn outcomes_map_to_actions() {
        assert_eq!(
            action(SyncOutcome {
                requeue_after: Some(Duration::from_secs(3)),
                applied: true
            }),
            Action::requeue(Duration::from_secs(3))
        );
        assert_eq!(action(SyncOutcome::default()), Action::await_change());
    }
}
