//! A fake fleet for the addon tests: a hub with N managed clusters, a work agent per cluster,
//! the placement controller and an addon manager, driven one round at a time.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use ocm_api::addon::v1beta1::{ClusterManagementAddOn, ManagedClusterAddOn};
use ocm_api::conditions;
use ocm_api::work::v1::{Manifest, ManifestWork};
use ocm_placement::controller::PlacementController;
use ocm_testkit::FakeHub;
use ocm_work::addon::{AddonManager, AddonOutcome};
use ocm_work::agent::{AgentConfig, WorkAgent};
use ocm_work::identity::hub_hash;
use serde_json::Value;

pub const NS: &str = "addons";

pub struct Fleet {
    pub hub: FakeHub,
    pub client: Client,
    pub agents: Vec<(String, WorkAgent)>,
    pub placement: PlacementController,
    pub manager: AddonManager,
}

impl Fleet {
    /// `n` clusters, a namespace `addons` bound to the `default` set, and `manager` (built
    /// from the hub client) as the addon manager.
    pub async fn new(n: usize, manager: impl FnOnce(AddonManager) -> AddonManager) -> Self {
        let hub = FakeHub::new(n).expect("hub");
        let client = hub.hub().client();
        hub.hub()
            .apply_yaml(&format!(
                "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NS}}}\n---\n\
                 apiVersion: cluster.open-cluster-management.io/v1beta2\nkind: ManagedClusterSetBinding\n\
                 metadata: {{name: default, namespace: {NS}}}\nspec: {{clusterSet: default}}\n"
            ))
            .expect("fixtures");
        let hash = hub_hash("https://hub.addon-tests.local:6443");
        let mut agents = Vec::new();
        for (name, cluster) in hub.clusters() {
            ocm_testkit::install_crds(cluster).expect("spoke CRDs");
            let config = AgentConfig::new(name, hash.clone()).resync_interval(Duration::ZERO);
            agents.push((
                name.to_string(),
                WorkAgent::new(client.clone(), cluster.client(), config),
            ));
        }
        Self {
            placement: PlacementController::new(client.clone()),
            manager: manager(AddonManager::new(client.clone())),
            hub,
            client,
            agents,
        }
    }

    pub fn apply(&self, yaml: &str) {
        self.hub.hub().apply_yaml(yaml).expect("apply fixtures");
    }

    /// The work agents and the workload controllers of every cluster, once.
    pub async fn agents_sync(&self) {
        for (_, agent) in &self.agents {
            agent.sync_all().await.expect("agent sync");
        }
        for (_, cluster) in self.hub.clusters() {
            ocm_testkit::settle_workloads(cluster.store());
        }
        for (_, agent) in &self.agents {
            agent.sync_all().await.expect("agent sync");
        }
    }

    /// One round: scheduler, addon manager, agents.
    pub async fn round(&self) -> BTreeMap<String, AddonOutcome> {
        self.placement.reconcile_all().await.expect("placement");
        let out = self.manager.reconcile_all().await.expect("addon manager");
        self.agents_sync().await;
        out
    }

    /// `n` rounds; the outcomes of the last.
    pub async fn rounds(&self, n: usize) -> BTreeMap<String, AddonOutcome> {
        let mut last = BTreeMap::new();
        for _ in 0..n {
            last = self.round().await;
        }
        last
    }

    pub async fn mca(&self, cluster: &str, name: &str) -> Option<ManagedClusterAddOn> {
        Api::<ManagedClusterAddOn>::namespaced(self.client.clone(), cluster)
            .get_opt(name)
            .await
            .expect("get mca")
    }

    pub async fn mca_clusters(&self, name: &str) -> Vec<String> {
        let mut out: Vec<String> = Api::<ManagedClusterAddOn>::all(self.client.clone())
            .list(&ListParams::default().fields(&format!("metadata.name={name}")))
            .await
            .expect("list mcas")
            .items
            .iter()
            .filter_map(|m| m.namespace())
            .collect();
        out.sort();
        out
    }

    pub async fn cma(&self, name: &str) -> ClusterManagementAddOn {
        Api::<ClusterManagementAddOn>::all(self.client.clone())
            .get(name)
            .await
            .expect("get cma")
    }

    pub async fn condition(&self, cluster: &str, name: &str, type_: &str) -> Option<Condition> {
        let mca = self.mca(cluster, name).await?;
        let conds = mca.status?.conditions?;
        conditions::find(&conds, type_).cloned()
    }

    /// `(status, reason)` of a condition, or `("", "")`.
    pub async fn cond(&self, cluster: &str, name: &str, type_: &str) -> (String, String) {
        self.condition(cluster, name, type_)
            .await
            .map_or((String::new(), String::new()), |c| (c.status, c.reason))
    }

    pub async fn works(&self, cluster: &str) -> Vec<ManifestWork> {
        let mut works = Api::<ManifestWork>::namespaced(self.client.clone(), cluster)
            .list(&ListParams::default())
            .await
            .expect("list works")
            .items;
        works.sort_by_key(|w| w.name_any());
        works
    }

    pub async fn work(&self, cluster: &str, name: &str) -> Option<ManifestWork> {
        Api::<ManifestWork>::namespaced(self.client.clone(), cluster)
            .get_opt(name)
            .await
            .expect("get work")
    }

    /// An object on a managed cluster, read from its store.
    pub fn spoke_object(
        &self,
        cluster: &str,
        group: &str,
        version: &str,
        resource: &str,
        ns: &str,
        name: &str,
    ) -> Option<Value> {
        let store = self.hub.cluster(cluster)?.store();
        store
            .get(&ocm_testkit::Gvr::new(group, version, resource), ns, name)
            .ok()
            .map(|o| o.as_ref().clone())
    }
}

/// A Deployment manifest of an agent.
pub fn deployment(namespace: &str, name: &str, image: &str) -> Manifest {
    Manifest::new(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "agent", "image": image}]}}}
    }))
}

pub fn namespace(name: &str) -> Manifest {
    Manifest::new(
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
    )
}
