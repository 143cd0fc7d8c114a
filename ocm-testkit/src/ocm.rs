//! OCM fixtures: a fake hub serving every OCM CRD, with N fake managed clusters.

use serde_json::{Value, json};

use crate::clock::format_time;
use crate::cluster::{FakeCluster, FakeClusterBuilder};
use crate::error::Result;
use crate::registry::Gvr;
use crate::store::WriteOptions;
use ocm_api::constants::{cluster as cc, groups, labels};

/// Manager name the fixtures write with.
const FIXTURE_MANAGER: &str = "ocm-testkit";
/// A hub cluster with the OCM CRDs installed and managed clusters registered,
/// each with its own fake cluster for the agent side (with the CRDs a managed cluster
/// needs: `AppliedManifestWork` and `ClusterClaim`).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let hub = ocm_testkit::FakeHub::new(3)?;
/// assert_eq!(hub.cluster_names(), ["cluster1", "cluster2", "cluster3"]);
/// let managed = hub.cluster("cluster2").unwrap();
/// # let _ = managed.client();
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FakeHub {
    hub: FakeCluster,
    clusters: Vec<(String, FakeCluster)>,
}

impl FakeHub {
    /// A hub with `n` available managed clusters named `cluster1`…`clusterN`.
    pub fn new(n: usize) -> Result<Self> {
        Self::with_builder(FakeCluster::builder(), n)
    }

    /// Like [`FakeHub::new`], building every cluster (hub and managed) from `builder`.
    ///
    /// The hub runs the OCM hub's admission webhooks ([`HubAdmission`](crate::HubAdmission)):
    /// the builder's [`hub_admission`](FakeClusterBuilder::hub_admission) settings, or
    /// upstream's defaults when it has none. The managed clusters run none.
    pub fn with_builder(builder: FakeClusterBuilder, n: usize) -> Result<Self> {
        let admission = builder.hub_admission_settings().unwrap_or_default();
        let hub = builder
            .clone()
            .name("hub")
            .hub_admission(Some(admission))
            .build();
        let builder = builder.hub_admission(None);
        install_crds(&hub)?;
        let mut me = Self {
            hub,
            clusters: Vec::with_capacity(n),
        };
        for set in [cc::DEFAULT_CLUSTER_SET, cc::GLOBAL_CLUSTER_SET] {
            me.create_cluster_set(set)?;
        }
        for i in 1..=n {
            let name = format!("cluster{i}");
            me.register(&name, builder.clone().name(&name).build())?;
        }
        Ok(me)
    }

    /// The hub cluster.
    pub fn hub(&self) -> &FakeCluster {
        &self.hub
    }

    /// A managed cluster by name.
    pub fn cluster(&self, name: &str) -> Option<&FakeCluster> {
        self.clusters
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
    }

    /// Names of the managed clusters, in registration order.
    pub fn cluster_names(&self) -> Vec<String> {
        self.clusters.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Every managed cluster with its name.
    pub fn clusters(&self) -> impl Iterator<Item = (&str, &FakeCluster)> {
        self.clusters.iter().map(|(n, c)| (n.as_str(), c))
    }

    /// Register one more managed cluster: its namespace and an accepted, joined and
    /// available `ManagedCluster` on the hub, in the default cluster set; and on the managed
    /// cluster the CRDs upstream's klusterlet installs ([`install_managed_cluster_crds`]:
    /// `AppliedManifestWork`, `ClusterClaim`).
    pub fn register(&mut self, name: &str, cluster: FakeCluster) -> Result<()> {
        install_managed_cluster_crds(&cluster)?;
        let store = self.hub.store();
        let opts = WriteOptions::manager(FIXTURE_MANAGER);
        store.create(
            &Gvr::new("", "v1", "namespaces"),
            "",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
            &opts,
        )?;
        let gvr = Gvr::new(groups::CLUSTER, "v1", "managedclusters");
        let mc = json!({
            "apiVersion": format!("{}/v1", groups::CLUSTER),
            "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": {labels::CLUSTER_SET: cc::DEFAULT_CLUSTER_SET}},
            "spec": {"hubAcceptsClient": true, "leaseDurationSeconds": cc::DEFAULT_LEASE_DURATION_SECONDS},
        });
        store.create(&gvr, "", mc, &opts)?;
        let now = format_time(store.now());
        let cond = |t: &str, reason: &str, message: &str| {
            json!({"type": t, "status": "True", "reason": reason, "message": message,
                   "lastTransitionTime": now})
        };
        let status = json!({"status": {
            "conditions": [
                cond(cc::CONDITION_HUB_ACCEPTED, cc::REASON_HUB_CLUSTER_ADMIN_ACCEPTED, "Accepted by hub cluster admin"),
                cond(cc::CONDITION_JOINED, cc::REASON_MANAGED_CLUSTER_JOINED, "Managed cluster joined"),
                cond(cc::CONDITION_AVAILABLE, cc::REASON_MANAGED_CLUSTER_AVAILABLE, "Managed cluster is available"),
            ],
            "version": {"kubernetes": "v1.33.0"},
            "capacity": {cc::RESOURCE_CPU: "8", cc::RESOURCE_MEMORY: "32Gi"},
            "allocatable": {cc::RESOURCE_CPU: "8", cc::RESOURCE_MEMORY: "32Gi"},
        }});
        store.patch(
            &gvr,
            "",
            name,
            crate::PatchKind::Merge,
            &status,
            &WriteOptions {
                subresource: Some("status".into()),
                ..opts
            },
        )?;
        if !self.hub.identities().is_empty() {
            self.grant_agent(name)?;
        }
        self.clusters.push((name.to_string(), cluster));
        Ok(())
    }

    /// The hub user of a managed cluster's agent, with
    /// [authentication](FakeClusterBuilder::authentication) on:
    /// `system:open-cluster-management:<cluster>:agent`, in the groups
    /// `system:open-cluster-management:<cluster>` and
    /// `system:open-cluster-management:managed-clusters`, as upstream's registration gives
    /// its agents (upstream names the agent at random; ours is `agent`). Its kubeconfig comes
    /// from [`LoopbackServer::kubeconfig_yaml_as`](crate::LoopbackServer::kubeconfig_yaml_as).
    pub fn agent_user(cluster: &str) -> String {
        format!("system:open-cluster-management:{cluster}:agent")
    }

    /// The hub RBAC upstream's registration controller gives an accepted cluster's agents,
    /// bound to the cluster's agent groups: its own ManagedCluster and that object's status
    /// (`open-cluster-management:managedcluster:<cluster>`), and in the cluster's namespace
    /// only, the lease, addon status and events (`…:registration`) and ManifestWorks with
    /// their status (`…:work`).
    fn grant_agent(&self, name: &str) -> Result<()> {
        let store = self.hub.store();
        let opts = WriteOptions::manager(FIXTURE_MANAGER);
        const WORK_ROLE: &str = "open-cluster-management:managedcluster:work";
        let roles = Gvr::new("rbac.authorization.k8s.io", "v1", "clusterroles");
        if store.get(&roles, "", WORK_ROLE).is_err() {
            store.create(
                &roles,
                "",
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": WORK_ROLE, "labels": {"open-cluster-management.io/cluster-name": ""}},
                    "rules": [
                        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"],
                         "verbs": ["create", "patch", "update"]},
                        {"apiGroups": [groups::WORK], "resources": ["manifestworks"],
                         "verbs": ["get", "list", "watch", "update", "patch"]},
                        {"apiGroups": [groups::WORK], "resources": ["manifestworks/status"],
                         "verbs": ["patch", "update"]},
                    ]}),
                &opts,
            )?;
        }
        const REGISTRATION_ROLE: &str = "open-cluster-management:managedcluster:registration";
        if store.get(&roles, "", REGISTRATION_ROLE).is_err() {
            store.create(
                &roles,
                "",
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": REGISTRATION_ROLE, "labels": {"open-cluster-management.io/cluster-name": ""}},
                    "rules": [
                        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                         "verbs": ["get", "list", "watch", "update"]},
                        {"apiGroups": [groups::ADDON], "resources": ["managedclusteraddons"],
                         "verbs": ["get", "list", "watch"]},
                        {"apiGroups": [groups::ADDON], "resources": ["managedclusteraddons/status"],
                         "verbs": ["patch", "update"]},
                        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create"]},
                    ]}),
                &opts,
            )?;
        }
        let group = format!("system:open-cluster-management:{name}");
        let subjects = json!([
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group},
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
             "name": format!("open-cluster-management:{name}")},
        ]);
        // The accepted cluster's own role: its ManagedCluster and that object's status.
        let own = format!("open-cluster-management:managedcluster:{name}");
        store.create(
            &roles,
            "",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": own, "labels": {"open-cluster-management.io/cluster-name": name}},
            "rules": [
                {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"],
                 "verbs": ["create", "get", "list", "watch"]},
                {"apiGroups": ["register.open-cluster-management.io"],
                 "resources": ["managedclusters/clientcertificates"], "verbs": ["renew"]},
                {"apiGroups": [groups::CLUSTER], "resources": ["managedclusters"],
                 "resourceNames": [name], "verbs": ["get", "list", "update", "watch"]},
                {"apiGroups": [groups::CLUSTER], "resources": ["managedclusters/status"],
                 "resourceNames": [name], "verbs": ["patch", "update"]},
            ]}),
            &opts,
        )?;
        // The bindings of the cluster's groups: to its own role, and in its namespace to the
        // registration and work roles.
        let bind = |kind: &str, namespace: &str, binding: String, role: &str| {
            let resource = if namespace.is_empty() {
                "clusterrolebindings"
            } else {
                "rolebindings"
            };
            let mut metadata = json!({"name": binding,
                "labels": {"open-cluster-management.io/cluster-name": name}});
            if !namespace.is_empty() {
                metadata["namespace"] = json!(namespace);
            }
            store.create(
                &Gvr::new("rbac.authorization.k8s.io", "v1", resource),
                namespace,
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                    "metadata": metadata,
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                    "subjects": subjects}),
                &opts,
            )
        };
        bind("ClusterRoleBinding", "", own.clone(), &own)?;
        bind(
            "RoleBinding",
            name,
            format!("{own}:registration"),
            REGISTRATION_ROLE,
        )?;
        bind("RoleBinding", name, format!("{own}:work"), WORK_ROLE)?;
        self.hub.add_identity(crate::auth::Identity::new(
            Self::agent_user(name),
            [
                group,
                "system:open-cluster-management:managed-clusters".to_string(),
            ],
        ))?;
        Ok(())
    }

    fn create_cluster_set(&self, name: &str) -> Result<()> {
        let spec = if name == cc::GLOBAL_CLUSTER_SET {
            json!({"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": {}}})
        } else {
            json!({"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}})
        };
        let obj = json!({
            "apiVersion": format!("{}/v1beta2", groups::CLUSTER),
            "kind": "ManagedClusterSet",
            "metadata": {"name": name},
            "spec": spec,
        });
        self.hub.store().create(
            &Gvr::new(groups::CLUSTER, "v1beta2", "managedclustersets"),
            "",
            obj,
            &WriteOptions::manager(FIXTURE_MANAGER),
        )?;
        Ok(())
    }
}

/// Install every OCM CRD (`ocm_api::crds()`, upstream's, what a hub installs by default) into
/// a cluster; they are served at once. CRDs the cluster already has are kept as they are.
pub fn install_crds(cluster: &FakeCluster) -> Result<()> {
    install(cluster, |_| true)
}

/// Install the extended OCM CRDs (`ocm_api::crd::extended_crds()`: upstream's, with the
/// ManifestWorkReplicaSet fields of our opt-ins, rollback and feedback aggregation), for tests
/// of those opt-ins. A ManifestWorkReplicaSet CRD the cluster already has (the default one a
/// [`FakeHub`] installs) is replaced, as `kubectl apply` of the extended CRDs replaces it on
/// a real hub; the other CRDs it has are kept.
///
/// ```
/// let hub = ocm_testkit::FakeHub::new(1)?;
/// ocm_testkit::install_extended_crds(hub.hub())?;
/// # Ok::<(), ocm_testkit::Error>(())
/// ```
pub fn install_extended_crds(cluster: &FakeCluster) -> Result<()> {
    let gvr = Gvr::new("apiextensions.k8s.io", "v1", "customresourcedefinitions");
    for crd in ocm_api::crd::extended_crds() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let mut value = serde_json::to_value(&crd)?;
        match cluster.store().get(&gvr, "", &name) {
            Err(_) => {
                cluster
                    .store()
                    .create(&gvr, "", value, &WriteOptions::manager(FIXTURE_MANAGER))?;
            }
            Ok(current) if current.get("spec") != value.get("spec") => {
                if let Some(version) = current.pointer("/metadata/resourceVersion") {
                    value["metadata"]["resourceVersion"] = version.clone();
                }
                cluster.store().update(
                    &gvr,
                    "",
                    &name,
                    value,
                    &WriteOptions::manager(FIXTURE_MANAGER),
                )?;
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

/// The kinds upstream's klusterlet installs on a managed cluster: `AppliedManifestWork` (the
/// work agent's bookkeeping) and `ClusterClaim`.
pub const MANAGED_CLUSTER_KINDS: [&str; 2] = ["AppliedManifestWork", "ClusterClaim"];

/// Install the CRDs a managed cluster needs ([`MANAGED_CLUSTER_KINDS`]), as upstream's
/// klusterlet does; [`FakeHub`] does it for every managed cluster it registers. CRDs the
/// cluster already has are kept.
pub fn install_managed_cluster_crds(cluster: &FakeCluster) -> Result<()> {
    install(cluster, |kind| MANAGED_CLUSTER_KINDS.contains(&kind))
}

/// Every OCM CRD as `(kind, name, JSON)`, generated once per process (generating them is far
/// slower than storing them).
fn crd_values() -> Result<&'static [(String, String, Value)]> {
    static CRDS: std::sync::OnceLock<Vec<(String, String, Value)>> = std::sync::OnceLock::new();
    if let Some(v) = CRDS.get() {
        return Ok(v);
    }
    let mut out = Vec::new();
    for crd in ocm_api::crds() {
        out.push((
            crd.spec.names.kind.clone(),
            crd.metadata.name.clone().unwrap_or_default(),
            serde_json::to_value(&crd)?,
        ));
    }
    Ok(CRDS.get_or_init(|| out))
}

fn install(cluster: &FakeCluster, wanted: impl Fn(&str) -> bool) -> Result<()> {
    let gvr = Gvr::new("apiextensions.k8s.io", "v1", "customresourcedefinitions");
    for (kind, name, crd) in crd_values()? {
        if !wanted(kind) || cluster.store().get(&gvr, "", name).is_ok() {
            continue;
        }
        cluster.store().create(
            &gvr,
            "",
            crd.clone(),
            &WriteOptions::manager(FIXTURE_MANAGER),
        )?;
    }
    Ok(())
}
