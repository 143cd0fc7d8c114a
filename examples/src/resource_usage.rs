//! The "resource-usage-collect" addon (the OCM documentation's extensible-scheduling
//! scenario) on the addon framework.
//!
//! * Hub side: [`ResourceUsageAddon`] installs the agent (a Deployment with its RBAC on the
//!   managed cluster) on every cluster the ClusterManagementAddOn's install strategy selects,
//!   registers a hub identity for it and grants that identity the right to write
//!   AddOnPlacementScores in its cluster's namespace. The agent's settings follow the
//!   AddOnDeploymentConfig (node placement, registries, proxy, install namespace).
//! * Agent side: [`UsageAgent`] reads the managed cluster's nodes and pods, computes the free
//!   CPU and memory (allocatable of the schedulable nodes minus the requests of their
//!   unfinished pods), normalises them to `[-100, 100]` as the documentation describes
//!   (`score = 200 * (x - min) / (max - min) - 100`, at most 100 at or above `max`), and writes
//!   the AddOnPlacementScore `resource-usage-score` (`cpuAvailable`, `memAvailable`) with a
//!   `validUntil`, refreshing it every interval; it also renews the addon's lease.
//!
//! A Placement with an `AddOn` prioritizer on `resource-usage-score`/`cpuAvailable` then
//! picks the cluster with the most free CPU.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Client;
use kube::api::{Api, ListParams};
use ocm_api::addon::v1beta1::ManagedClusterAddOn;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::AddOnPlacementScoreItem;
use ocm_api::constants::addon as ac;
use ocm_api::k8s::quantity::approximate_f64;
use ocm_api::work::v1::Manifest;
use ocm_placement::inventory::score::{ScoreWriter, normalize};
use ocm_work::addon::deployment_config::DeploymentValues;
use ocm_work::addon::lease::LeaseUpdater;
use ocm_work::addon::permission::HubPermission;
use ocm_work::addon::{
    AddonConfigs, AgentAddon, AgentAddonOptions, ConfigGvr, HealthProber, RegistrationOption,
    RenderError,
};
use serde_json::json;

/// The addon's name.
pub const ADDON_NAME: &str = "resource-usage-collect";
/// The AddOnPlacementScore the agent writes (a placement's `addOn.resourceName`).
pub const SCORE_RESOURCE: &str = "resource-usage-score";
/// The free-CPU score name.
pub const CPU_SCORE: &str = "cpuAvailable";
/// The free-memory score name.
pub const MEMORY_SCORE: &str = "memAvailable";
/// Free CPU, in cores, that scores 100 (upstream example's `MAXCPUCOUNT`).
pub const MAX_CPU_CORES: f64 = 100.0;
/// Free memory, in MiB, that scores 100 (upstream example's `MAXMEMCOUNT`, 1 TiB).
pub const MAX_MEMORY_MIB: f64 = 1024.0 * 1024.0;
/// The hub Role the agent is bound to in its cluster's namespace.
pub const AGENT_ROLE: &str = "resource-usage-collect-agent";
/// The agent's name in its registration (`…:agent:<agent>`).
pub const AGENT_NAME: &str = "agent";

/// The hub side of the addon.
#[derive(Clone, Debug)]
pub struct ResourceUsageAddon {
    image: String,
}

impl ResourceUsageAddon {
    /// The addon, running the agent from `image` (an image that contains the
    /// `resource-usage-addon` binary).
    pub fn new(image: impl Into<String>) -> Self {
        Self {
            image: image.into(),
        }
    }
}

fn install_namespace(configs: &AddonConfigs) -> Result<String, RenderError> {
    Ok(configs
        .deployment_config()?
        .and_then(|c| c.spec.agent_install_namespace)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| ac::DEFAULT_AGENT_INSTALL_NAMESPACE.to_string()))
}

impl AgentAddon for ResourceUsageAddon {
    fn options(&self) -> AgentAddonOptions {
        let role = serde_json::from_value(json!({
            "metadata": {"name": AGENT_ROLE},
            "rules": [{"apiGroups": ["cluster.open-cluster-management.io"],
                       "resources": ["addonplacementscores", "addonplacementscores/status"],
                       "verbs": ["get", "list", "watch", "create", "update", "patch"]}]
        }))
        .unwrap_or_default();
        AgentAddonOptions::new(ADDON_NAME)
            .with_registration(
                RegistrationOption::kube_client(ADDON_NAME, AGENT_NAME)
                    .with_permission(HubPermission::KubeClientRole(role)),
            )
            .with_supported_config(ConfigGvr::addon_deployment_config())
            .with_health_prober(HealthProber::Lease)
            .with_agent_install_namespace(Arc::new(|_, configs| install_namespace(configs)))
    }

    fn manifests(
        &self,
        cluster: &ManagedCluster,
        _addon: &ManagedClusterAddOn,
        configs: &AddonConfigs,
    ) -> Result<Vec<Manifest>, RenderError> {
        let cluster_name = cluster.metadata.name.clone().unwrap_or_default();
        let ns = install_namespace(configs)?;
        let values = match configs.deployment_config()? {
            Some(adc) => DeploymentValues::from_config(&adc)?,
            None => DeploymentValues::default(),
        };
        let sa = "resource-usage-collect-agent";
        let mut deployment = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "resource-usage-collect-agent", "namespace": ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "resource-usage-collect-agent"}},
                "template": {"metadata": {"labels": {"app": "resource-usage-collect-agent"}},
                    "spec": {"serviceAccountName": sa,
                        "containers": [{"name": "agent", "image": self.image,
                            "args": ["agent", format!("--cluster-name={cluster_name}"),
                                     format!("--hub-kubeconfig={}", ac::TEMPLATE_HUB_KUBECONFIG_PATH),
                                     format!("--namespace={ns}")],
                            "volumeMounts": [{"name": "hub-kubeconfig", "mountPath": ac::TEMPLATE_HUB_KUBECONFIG_MOUNT_PATH}]}],
                        "volumes": [{"name": "hub-kubeconfig",
                            "secret": {"secretName": ocm_work::addon::names::hub_kubeconfig_secret(ADDON_NAME)}}]}}}
        });
        values.decorate_pod_template(&mut deployment)?;
        Ok(vec![
            Manifest::new(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
            ),
            Manifest::new(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": sa, "namespace": ns}})),
            Manifest::new(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "resource-usage-collect-agent"},
                "rules": [{"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list", "watch"]},
                          {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                           "verbs": ["get", "create", "update"]}]}),
            ),
            Manifest::new(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": "resource-usage-collect-agent"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": "resource-usage-collect-agent"},
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]}),
            ),
            Manifest::new(deployment),
        ])
    }
}

/// Free resources of a cluster.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// Free CPU, in cores.
    pub cpu_cores: f64,
    /// Free memory, in bytes.
    pub memory_bytes: f64,
}

fn quantity(
    map: Option<
        &std::collections::BTreeMap<
            String,
            k8s_openapi::apimachinery::pkg::api::resource::Quantity,
        >,
    >,
    name: &str,
) -> f64 {
    map.and_then(|m| m.get(name))
        .and_then(|q| approximate_f64(&q.0))
        .unwrap_or(0.0)
}

/// Requests of the unfinished pods on `node` for `resource` (the example's
/// `calculateNodeResourceUsage`: containers summed, an init container's request counting when
/// larger than the running total, pod overhead added).
fn node_usage(node: &str, pods: &[Pod], resource: &str) -> f64 {
    let mut total = 0.0;
    for pod in pods {
        let spec = pod.spec.as_ref();
        if spec.and_then(|s| s.node_name.as_deref()) != Some(node) {
            continue;
        }
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded" | "Failed"))
            || pod.metadata.deletion_timestamp.is_some()
        {
            continue;
        }
        let Some(spec) = spec else { continue };
        for c in &spec.containers {
            total += quantity(
                c.resources.as_ref().and_then(|r| r.requests.as_ref()),
                resource,
            );
        }
        for c in spec.init_containers.iter().flatten() {
            let v = quantity(
                c.resources.as_ref().and_then(|r| r.requests.as_ref()),
                resource,
            );
            if total < v {
                total = v;
            }
        }
        total += quantity(spec.overhead.as_ref(), resource);
    }
    total
}

/// The free CPU and memory of a cluster (the example's `calculateClusterAvailable`):
/// allocatable of the schedulable nodes minus the requests of their unfinished pods.
pub fn available(nodes: &[Node], pods: &[Pod]) -> Usage {
    let mut usage = Usage::default();
    for node in nodes {
        if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
            continue;
        }
        let name = node.metadata.name.as_deref().unwrap_or("");
        let alloc = node.status.as_ref().and_then(|s| s.allocatable.as_ref());
        usage.cpu_cores += quantity(alloc, "cpu") - node_usage(name, pods, "cpu");
        usage.memory_bytes += quantity(alloc, "memory") - node_usage(name, pods, "memory");
    }
    usage
}

/// The two scores, normalised with min 0 and max `max_cpu_cores` / `max_memory_mib`.
pub fn scores(
    usage: Usage,
    max_cpu_cores: f64,
    max_memory_mib: f64,
) -> Result<Vec<AddOnPlacementScoreItem>, String> {
    let cpu = normalize(usage.cpu_cores, 0.0, max_cpu_cores).map_err(|e| e.to_string())?;
    let mem = normalize(usage.memory_bytes / (1024.0 * 1024.0), 0.0, max_memory_mib)
        .map_err(|e| e.to_string())?;
    Ok(vec![
        AddOnPlacementScoreItem {
            name: CPU_SCORE.into(),
            value: cpu,
        },
        AddOnPlacementScoreItem {
            name: MEMORY_SCORE.into(),
            value: mem,
        },
    ])
}

/// The agent: scores one managed cluster into the hub.
#[derive(Clone)]
pub struct UsageAgent {
    spoke: Client,
    writer: ScoreWriter,
    lease: LeaseUpdater,
    valid_for: Duration,
    max_cpu_cores: f64,
    max_memory_mib: f64,
}

impl std::fmt::Debug for UsageAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsageAgent")
            .field("writer", &self.writer)
            .field("valid_for", &self.valid_for)
            .finish_non_exhaustive()
    }
}

/// What one round wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// The free resources found.
    pub usage: Usage,
    /// The scores written.
    pub scores: Vec<AddOnPlacementScoreItem>,
    /// Writes made to the AddOnPlacementScore (0 when nothing changed and it is fresh).
    pub writes: usize,
}

impl UsageAgent {
    /// An agent for `cluster`, reading the managed cluster through `spoke` and writing to the
    /// hub through `hub`; its lease lives in `namespace` on the managed cluster.
    pub fn new(hub: Client, spoke: Client, cluster: &str, namespace: &str) -> Self {
        Self {
            writer: ScoreWriter::new(hub, cluster, SCORE_RESOURCE),
            lease: LeaseUpdater::new(spoke.clone(), ADDON_NAME, namespace),
            spoke,
            valid_for: Duration::from_secs(10 * 60),
            max_cpu_cores: MAX_CPU_CORES,
            max_memory_mib: MAX_MEMORY_MIB,
        }
    }

    /// Scores stay valid this long after each write (default 10 minutes).
    #[must_use]
    pub fn valid_for(mut self, d: Duration) -> Self {
        self.valid_for = d;
        self
    }

    /// The free CPU (cores) and memory (MiB) that score 100.
    #[must_use]
    pub fn maxima(mut self, cpu_cores: f64, memory_mib: f64) -> Self {
        self.max_cpu_cores = cpu_cores;
        self.max_memory_mib = memory_mib;
        self
    }

    /// Uses `clock` for `validUntil` and lease renewals.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn ocm_api::clock::Clock>) -> Self {
        self.writer = self.writer.with_clock(clock.clone());
        self.lease = self.lease.with_clock(clock);
        self
    }

    /// One round: measure, score, write, renew the lease.
    pub async fn run_once(&self) -> Result<Round, String> {
        let nodes = Api::<Node>::all(self.spoke.clone())
            .list(&ListParams::default())
            .await
            .map_err(|e| format!("list nodes: {e}"))?
            .items;
        let pods = Api::<Pod>::all(self.spoke.clone())
            .list(&ListParams::default())
            .await
            .map_err(|e| format!("list pods: {e}"))?
            .items;
        let usage = available(&nodes, &pods);
        let scores = scores(usage, self.max_cpu_cores, self.max_memory_mib)?;
        let writes = self
            .writer
            .write(&scores, Some(self.valid_for))
            .await
            .map_err(|e| e.to_string())?;
        self.lease.renew_once().await.map_err(|e| e.to_string())?;
        Ok(Round {
            usage,
            scores,
            writes,
        })
    }

    /// Rounds every `interval` until `shutdown`; failed rounds are logged and retried.
    pub async fn run(self, interval: Duration, shutdown: impl std::future::Future<Output = ()>) {
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            match self.run_once().await {
                Ok(r) => {
                    tracing::info!(cpu_cores = r.usage.cpu_cores, scores = ?r.scores, writes = r.writes, "scored")
                }
                Err(error) => tracing::warn!(%error, "scoring round failed"),
            }
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, cpu: &str, mem: &str, unschedulable: bool) -> Node {
        serde_json::from_value(
            json!({"metadata": {"name": name}, "spec": {"unschedulable": unschedulable},
            "status": {"allocatable": {"cpu": cpu, "memory": mem}}}),
        )
        .unwrap()
    }

    fn pod(node: &str, cpu: &str, mem: &str, phase: &str) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]},
            "status": {"phase": phase}}))
        .unwrap()
    }

    #[test]
    fn free_resources_and_scores() {
        let nodes = [
            node("a", "8", "32Gi", false),
            node("b", "16", "64Gi", false),
            node("c", "100", "1Ti", true),
        ];
        let pods = [
            pod("a", "500m", "1Gi", "Running"),
            pod("a", "1500m", "1Gi", "Pending"),
            pod("a", "4", "4Gi", "Succeeded"),
            pod("b", "6", "8Gi", "Running"),
            pod("elsewhere", "6", "8Gi", "Running"),
        ];
        let u = available(&nodes, &pods);
        assert_eq!(u.cpu_cores, 16.0);
        assert_eq!(u.memory_bytes, 86.0 * 1024.0 * 1024.0 * 1024.0);
        let s = scores(u, MAX_CPU_CORES, MAX_MEMORY_MIB).unwrap();
        // 200 * 16 / 100 - 100 = -68; memory: 86 GiB of 1 TiB = 200 * 88064 / 1048576 - 100.
        assert_eq!((s[0].name.as_str(), s[0].value), ("cpuAvailable", -68));
        assert_eq!((s[1].name.as_str(), s[1].value), ("memAvailable", -83));
        let full = scores(
            Usage {
                cpu_cores: 150.0,
                memory_bytes: 0.0,
            },
            MAX_CPU_CORES,
            MAX_MEMORY_MIB,
        )
        .unwrap();
        assert_eq!((full[0].value, full[1].value), (100, -100));
    }
}
