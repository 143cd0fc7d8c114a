//! What the in-process demos (`quickstart`, `mwrs-rollback`, `mwrs-opt-ins`) share: a work
//! agent per fake managed cluster, a cluster set bound to a namespace, and creating an object
//! written as JSON.

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{Api, PostParams};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_testkit::{FakeHub, WorkloadSimulator};
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use serde_json::{Value, json};

/// The error the demos report.
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// The work agents of a [`FakeHub`]'s managed clusters, driven round by round by the demo.
#[non_exhaustive]
pub struct Agents {
    /// Per managed cluster: its name, its work agent and a client of the cluster.
    pub agents: Vec<(String, WorkAgent, Client)>,
    /// The workload simulators (one per cluster, when asked for); they stop when dropped.
    pub simulators: Vec<WorkloadSimulator>,
}

impl std::fmt::Debug for Agents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agents")
            .field(
                "clusters",
                &self.agents.iter().map(|(n, _, _)| n).collect::<Vec<_>>(),
            )
            .field("simulators", &self.simulators.len())
            .finish()
    }
}

/// Installs the managed-cluster CRDs on every cluster of `fake` and builds a work agent for
/// each (no resync of its own: the demo calls it), connected to the hub as `hub_url` names it.
/// With `simulate`, a workload simulator runs on every cluster too.
pub fn agents(fake: &FakeHub, hub_url: &str, simulate: bool) -> Result<Agents, Failure> {
    let hub = fake.hub().client();
    let hash = hub_hash(hub_url);
    let mut out = Agents {
        agents: Vec::new(),
        simulators: Vec::new(),
    };
    for (name, cluster) in fake.clusters() {
        ocm_testkit::install_crds(cluster)?;
        if simulate {
            out.simulators.push(cluster.simulate_workloads());
        }
        let spoke = cluster.client();
        let config = AgentConfig::new(name, hash.clone()).resync_interval(Duration::ZERO);
        out.agents.push((
            name.to_string(),
            WorkAgent::new(hub.clone(), spoke.clone(), config),
            spoke,
        ));
    }
    Ok(out)
}

/// Creates the object `value` through `api`.
pub async fn create<K>(api: &Api<K>, value: Value) -> Result<K, Failure>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value)?;
    Ok(api.create(&PostParams::default(), &object).await?)
}

/// Creates namespace `namespace`, the ManagedClusterSet `set` (clusters join it by the
/// `cluster.open-cluster-management.io/clusterset` label) and its binding to the namespace.
pub async fn bind_cluster_set(hub: &Client, namespace: &str, set: &str) -> Result<(), Failure> {
    create(
        &Api::<Namespace>::all(hub.clone()),
        json!({"metadata": {"name": namespace}}),
    )
    .await?;
    create(&Api::<ManagedClusterSet>::all(hub.clone()), json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
        "metadata": {"name": set}, "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}
    }))
    .await?;
    create(&Api::<ManagedClusterSetBinding>::namespaced(hub.clone(), namespace), json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
        "metadata": {"name": set, "namespace": namespace}, "spec": {"clusterSet": set}
    }))
    .await?;
    Ok(())
}
