//! # Write your first addon
//!
//! This guide goes from an empty crate to an addon whose behaviour is checked by a test
//! against [`ocm_testkit`](https://docs.rs/ocm-testkit): a hub side that installs an agent on
//! every cluster a Placement selects, configured by an AddOnDeploymentConfig and reporting
//! its health. The complete example in the repository is the `resource-usage-addon` binary
//! (`examples/src/resource_usage.rs`).
//!
//! ## 1. The crate
//!
//! The crates are not on crates.io yet: take them from git (pin a `rev`). The addon needs the
//! addon framework only; its test also runs the work agent on the fake clusters and the
//! Placement scheduler on the fake hub, so those come in as dev-dependencies (cargo unifies
//! the features for the test build).
//!
//! ```toml
//! [dependencies]
//! ocm-api = { git = "https://github.com/ocm-rs/ocm-rs" }
//! # The addon framework, without the work agent (ocm-work's default feature).
//! ocm-work = { git = "https://github.com/ocm-rs/ocm-rs", default-features = false, features = ["addon"] }
//! k8s-openapi = { version = "0.29", features = ["latest"] }
//! kube = { version = "5", features = ["client", "runtime", "rustls-tls"] }
//! serde_json = "1"
//! tokio = { version = "1", features = ["full"] }
//!
//! [dev-dependencies]
//! ocm-testkit = { git = "https://github.com/ocm-rs/ocm-rs" }
//! # The work agent for the fake clusters, and the Placement scheduler for the fake hub.
//! ocm-work = { git = "https://github.com/ocm-rs/ocm-rs", features = ["agent"] }
//! ocm-placement = { git = "https://github.com/ocm-rs/ocm-rs" }
//! ```
//!
//! Once they are published, `version = "0.1"` replaces each `git = ...`.
//!
//! ## 2. The addon: what goes on a managed cluster
//!
//! An addon is a type implementing [`AgentAddon`](super::AgentAddon). `manifests` returns the
//! objects to install for one cluster; it receives the cluster, its `ManagedClusterAddOn` and
//! the configuration objects resolved for it, and does no I/O. The options say how the addon
//! manager treats the addon: here it supports AddOnDeploymentConfigs and judges health by the
//! agent Deployment's ready replicas.
//!
//! ```
//! use ocm_api::addon::v1beta1::ManagedClusterAddOn;
//! use ocm_api::cluster::v1::ManagedCluster;
//! use ocm_api::work::v1::Manifest;
//! use ocm_work::addon::deployment_config::DeploymentValues;
//! use ocm_work::addon::{AddonConfigs, AgentAddon, AgentAddonOptions, ConfigGvr, HealthProber, RenderError};
//!
//! pub struct Hello;
//!
//! impl AgentAddon for Hello {
//!     fn options(&self) -> AgentAddonOptions {
//!         AgentAddonOptions::new("hello")
//!             .with_supported_config(ConfigGvr::addon_deployment_config())
//!             .with_health_prober(HealthProber::DeploymentAvailability)
//!     }
//!
//!     fn manifests(&self, cluster: &ManagedCluster, _: &ManagedClusterAddOn, configs: &AddonConfigs)
//!         -> Result<Vec<Manifest>, RenderError> {
//!         // Node placement, image mirrors, proxy and variables from the AddOnDeploymentConfig.
//!         let values = match configs.deployment_config()? {
//!             Some(config) => DeploymentValues::from_config(&config)?,
//!             None => DeploymentValues::default(),
//!         };
//!         let greeting = values.variables.get("GREETING").cloned().unwrap_or_else(|| "hello".into());
//!         let mut deployment = serde_json::json!({
//!             "apiVersion": "apps/v1", "kind": "Deployment",
//!             "metadata": {"name": "hello-agent", "namespace": "hello"},
//!             "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "hello"}},
//!                 "template": {"metadata": {"labels": {"app": "hello"}}, "spec": {"containers": [{
//!                     "name": "agent", "image": "quay.io/example/hello:v1",
//!                     "args": [format!("--greeting={greeting}"),
//!                              format!("--cluster={}", cluster.metadata.name.as_deref().unwrap_or(""))]}]}}}
//!         });
//!         values.decorate_pod_template(&mut deployment)?;
//!         Ok(vec![
//!             Manifest::new(serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "hello"}})),
//!             Manifest::new(deployment),
//!         ])
//!     }
//! }
//! ```
//!
//! The AddOnDeploymentConfig CRD defaults `agentInstallNamespace` to
//! `open-cluster-management-agent-addon`, so a config read from a hub always names an install
//! namespace, set or not: [`DeploymentValues::install_namespace`](super::deployment_config::DeploymentValues::install_namespace)
//! is `Some("open-cluster-management-agent-addon")` for a config that says nothing about it.
//! The addon above keeps its own namespace (`hello`) and ignores the value; an addon that
//! follows it (as upstream's template addons do) installs its agent there unless the config
//! names another namespace, and a test that expects `None` fails.
//!
//! An error from `manifests` becomes `ManifestApplied=False` (reason
//! `ManifestWorkApplyFailed`) on that cluster's `ManagedClusterAddOn`; other clusters carry
//! on. Annotate a Job or Pod `addon.open-cluster-management.io/addon-pre-delete` to run it
//! before the addon is removed, and any object `addon.open-cluster-management.io/deletion-orphan`
//! to leave it behind.
//!
//! ## 3. The hub side: running the manager
//!
//! The [`AddonManager`](super::AddonManager) does the rest: ManifestWorks, status,
//! configurations, rollouts, install strategies. Against a real hub:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # struct Hello;
//! # impl ocm_work::addon::AgentAddon for Hello {
//! #     fn options(&self) -> ocm_work::addon::AgentAddonOptions { ocm_work::addon::AgentAddonOptions::new("hello") }
//! #     fn manifests(&self, _: &ocm_api::cluster::v1::ManagedCluster, _: &ocm_api::addon::v1beta1::ManagedClusterAddOn,
//! #         _: &ocm_work::addon::AddonConfigs) -> Result<Vec<ocm_api::work::v1::Manifest>, ocm_work::addon::RenderError> { Ok(vec![]) }
//! # }
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let client = kube::Client::try_default().await?;
//!     ocm_work::addon::AddonManager::new(client)
//!         .with_addon(Arc::new(Hello))
//!         .run(std::time::Duration::from_secs(60), async { let _ = tokio::signal::ctrl_c().await; })
//!         .await;
//!     Ok(())
//! }
//! ```
//!
//! Apply a `ClusterManagementAddOn` named after the addon. With `installStrategy: {type:
//! Manual}` users enable the addon on a cluster by creating a `ManagedClusterAddOn` in its
//! namespace; with `type: Placements` the manager creates and deletes them for the clusters of
//! the listed Placements, and rolls configuration changes out with each placement's
//! `rolloutStrategy` (`All`, `Progressive`, `ProgressivePerGroup`).
//!
//! ## 4. A test against a fake fleet
//!
//! [`ocm_testkit::Fleet`](https://docs.rs/ocm-testkit/latest/ocm_testkit/fleet/index.html)
//! starts a fake hub, fake managed clusters (with a workload simulator playing the Deployment
//! controller), the work agent on each cluster and the hub controllers you give it, all
//! running as they would on real clusters. The test writes what a user would and waits, with
//! one helper, [`ocm_testkit::wait::wait_for`](https://docs.rs/ocm-testkit/latest/ocm_testkit/wait/fn.wait_for.html),
//! for each cluster's addon to be available:
//!
//! ```
//! # use ocm_api::addon::v1beta1::ManagedClusterAddOn;
//! # use ocm_api::cluster::v1::ManagedCluster;
//! # use ocm_api::work::v1::Manifest;
//! # use ocm_work::addon::{AddonConfigs, AgentAddon, AgentAddonOptions, ConfigGvr, HealthProber, RenderError};
//! # use ocm_work::addon::deployment_config::DeploymentValues;
//! # struct Hello;
//! # impl AgentAddon for Hello {
//! #     fn options(&self) -> AgentAddonOptions {
//! #         AgentAddonOptions::new("hello").with_supported_config(ConfigGvr::addon_deployment_config())
//! #             .with_health_prober(HealthProber::DeploymentAvailability)
//! #     }
//! #     fn manifests(&self, cluster: &ManagedCluster, _: &ManagedClusterAddOn, configs: &AddonConfigs)
//! #         -> Result<Vec<Manifest>, RenderError> {
//! #         let values = match configs.deployment_config()? {
//! #             Some(config) => DeploymentValues::from_config(&config)?, None => DeploymentValues::default() };
//! #         let greeting = values.variables.get("GREETING").cloned().unwrap_or_else(|| "hello".into());
//! #         let deployment = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
//! #             "metadata": {"name": "hello-agent", "namespace": "hello"},
//! #             "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "hello"}},
//! #                 "template": {"metadata": {"labels": {"app": "hello"}}, "spec": {"containers": [{
//! #                     "name": "agent", "image": "quay.io/example/hello:v1",
//! #                     "args": [format!("--greeting={greeting}")]}]}}}});
//! #         Ok(vec![Manifest::new(deployment)])
//! #     }
//! # }
//! use std::sync::Arc;
//! use std::time::Duration;
//! use kube::api::Api;
//! use ocm_api::conditions;
//! use ocm_placement::controller::PlacementController;
//! use ocm_testkit::{Fleet, Gvr, wait::wait_for};
//! use ocm_work::addon::AddonManager;
//! use ocm_work::agent::{AgentConfig, WorkAgent};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let fleet = Fleet::builder(2)
//!     .agents(|c| WorkAgent::new(c.hub, c.spoke, AgentConfig::new(&c.name, "test-hub")).run(c.shutdown))
//!     .hub_controller(|hub, stop| PlacementController::new(hub).run(stop))
//!     .hub_controller(|hub, stop| {
//!         AddonManager::new(hub).with_addon(Arc::new(Hello)).run(Duration::from_secs(30), stop)
//!     })
//!     .start()?;
//! fleet.wait_ready(Duration::from_secs(10)).await?;
//!
//! // The addon, installed on every cluster of Placement `default/all`, configured by default
//! // with the AddOnDeploymentConfig `default/hello`.
//! fleet.hub().hub().apply_yaml(r#"
//! apiVersion: cluster.open-cluster-management.io/v1beta2
//! kind: ManagedClusterSetBinding
//! metadata: {name: default, namespace: default}
//! spec: {clusterSet: default}
//! ---
//! apiVersion: cluster.open-cluster-management.io/v1beta1
//! kind: Placement
//! metadata: {name: all, namespace: default}
//! spec: {}
//! ---
//! apiVersion: addon.open-cluster-management.io/v1beta1
//! kind: AddOnDeploymentConfig
//! metadata: {name: hello, namespace: default}
//! spec:
//!   customizedVariables: [{name: GREETING, value: bonjour}]
//! ---
//! apiVersion: addon.open-cluster-management.io/v1beta1
//! kind: ClusterManagementAddOn
//! metadata: {name: hello}
//! spec:
//!   defaultConfigs:
//!   - {group: addon.open-cluster-management.io, resource: addondeploymentconfigs, namespace: default, name: hello}
//!   installStrategy:
//!     type: Placements
//!     placements: [{namespace: default, name: all}]
//! "#)?;
//!
//! for cluster in ["cluster1", "cluster2"] {
//!     let addons = Api::<ocm_api::addon::v1beta1::ManagedClusterAddOn>::namespaced(fleet.hub_client(), cluster);
//!     wait_for(&format!("addon hello available on {cluster}"), Duration::from_secs(30), async || {
//!         let Ok(Some(addon)) = addons.get_opt("hello").await else { return false };
//!         let conds = addon.status.and_then(|s| s.conditions).unwrap_or_default();
//!         conditions::find(&conds, "Available").is_some_and(|c| c.reason == "ProbeAvailable")
//!             && conditions::find(&conds, "Progressing").is_some_and(|c| c.reason == "Completed")
//!     })
//!     .await;
//!     let deployment = fleet.cluster(cluster).unwrap().store()
//!         .get(&Gvr::new("apps", "v1", "deployments"), "hello", "hello-agent")?;
//!     assert_eq!(deployment["spec"]["template"]["spec"]["containers"][0]["args"][0], "--greeting=bonjour");
//! }
//! fleet.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! `cargo test` runs it in about a second. From here, test the rest the same way: change
//! the AddOnDeploymentConfig and watch `status.configReferences[].desiredConfig.specHash`
//! change and `Progressing` go back to `Completed`; delete the ClusterManagementAddOn and see
//! the ManagedClusterAddOns and their works go; inject API errors with `FakeCluster::inject`.
//!
//! Each round's [`AddonOutcome`](super::AddonOutcome) says what did not go to plan, per
//! addon: `waiting` when the addon cannot start (no ClusterManagementAddOn of its name, or a
//! hub without OCM's CRDs), and in `failed`, per cluster, what failed, including each manifest
//! the managed cluster refused (`ManifestWork cluster1/addon-hello-deploy-0: manifest 1
//! (Deployment hello/hello-agent) not applied: <the cluster's message>`). `AddonManager::run`
//! logs both at WARN once per change.
//!
//! When a test does not do what you expect, call `ocm_testkit::logs::show()` at its start:
//! the manager's and the agents' logs then appear with the test's output (at `RUST_LOG`'s
//! levels, INFO by default). `ocm_testkit::logs::capture()` collects them to assert on, for
//! example that a warning names your addon.
//!
//! ## Hub credentials for the agent
//!
//! Upstream, each managed cluster's registration agent turns `status.registrations` into a
//! hub credential for the addon agent (a CSR approved and signed on the hub, or a service
//! account token) and writes it to the Secret `<addon>-hub-kubeconfig` in the agent's
//! namespace. This SDK has no registration agent, so the addon author provides the
//! credential:
//!
//! 1. Declare the identity: [`RegistrationOption::kube_client`](super::RegistrationOption::kube_client)
//!    registers upstream's default user and groups
//!    (`system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>`), or
//!    [`RegistrationOption::from_fn`](super::RegistrationOption::from_fn) any subject you
//!    control (for example a hub ServiceAccount you create per cluster).
//! 2. Grant it what the agent needs with [`HubPermission`](super::permission::HubPermission)s;
//!    the manager creates the RBAC once the registration is written
//!    (`RegistrationApplied=True`, reason `SetPermissionApplied`).
//! 3. Give the agent a hub kubeconfig for that identity: a ServiceAccount token, a client
//!    certificate you sign, or, in tests, a kubeconfig that impersonates the user
//!    (`as:` / `as-groups:`), delivered as the Secret `<addon>-hub-kubeconfig` in the agent's
//!    namespace (for example as one more manifest, or by your own tooling).
//!
//! The `resource-usage-addon` test `manager_and_agent_binaries_end_to_end` runs exactly this:
//! the agent process acts on the hub as the registered user, the fake hub checks every request
//! against the RBAC the manager created, and the agent may write its cluster's
//! AddOnPlacementScore and nothing else.
//!
//! ## Health
//!
//! * [`HealthProber::Work`](super::HealthProber::Work) with probe fields (feedback rules, for
//!   example JSONPaths) and a checker, or the ready-made
//!   [`DeploymentAvailability`](super::HealthProber::DeploymentAvailability) and
//!   [`WorkloadAvailability`](super::HealthProber::WorkloadAvailability): `Available` follows
//!   the work's status feedback.
//! * [`HealthProber::Lease`](super::HealthProber::Lease): the agent renews a Lease with
//!   [`LeaseUpdater`](super::lease::LeaseUpdater); run a
//!   [`LeaseHealthChecker`](super::lease::LeaseHealthChecker) per managed cluster (next to
//!   its work agent) to turn it into `Available`, as upstream's registration agent does.
//! * [`HealthProber::None`](super::HealthProber::None): you set `Available` yourself.
//!
//! ## Without code: template addons
//!
//! An `AddOnTemplate` and a `ClusterManagementAddOn` whose default configs name it are an
//! addon: run the manager `with_templates(true)`; see [`template`](super::template).
