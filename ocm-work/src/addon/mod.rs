//! The addon framework: an addon is a trait impl, not a hand-written controller
//! (upstream's addon-framework and hub addon manager, in Rust).
//!
//! Implement [`AgentAddon`] (what to install on a managed cluster, and
//! [`AgentAddonOptions`]: registration and hub permissions, health prober, supported
//! configuration kinds, manifest configs), hand it to an [`AddonManager`] and run the manager
//! against the hub. For every `ManagedClusterAddOn` of the addon the manager:
//!
//! * creates and deletes `ManagedClusterAddOn`s following the `ClusterManagementAddOn`'s
//!   install strategy (`Manual`, or `Placements` with its placements' decisions), owns them
//!   by the `ClusterManagementAddOn`, and keeps its `status.defaultConfigReferences` and
//!   `status.installProgressions`;
//! * resolves the configurations of each addon (defaults < placement configs < the addon's
//!   own `spec.configs`), hashes them (`specHash`), and rolls changes out with the
//!   placement's rollout strategy (`All`, `Progressive`, `ProgressivePerGroup`, through
//!   [`RolloutHandler`](ocm_api::cluster::v1alpha1::RolloutHandler)): `configReferences` and
//!   `Configured`;
//! * writes `supportedConfigs`, `registrations`, `namespace`, the hub RBAC of the agent and
//!   `RegistrationApplied`;
//! * renders the manifests into the ManifestWorks `addon-<name>-deploy-<n>` (split at 80 % of
//!   the hub's size limit, labelled `open-cluster-management.io/addon-name`, owned by the
//!   `ManagedClusterAddOn`, annotated with the configs' spec hashes) and the pre-delete hook
//!   work `addon-<name>-pre-delete`, with the `addon.open-cluster-management.io/addon-pre-delete`
//!   finalizer holding the addon until the hook completed: `ManifestApplied` and
//!   `HookManifestCompleted`;
//! * in hosted mode ([`AgentAddonOptions::with_hosted_mode`]), puts the manifests located
//!   `hosting` into `addon-<name>-deploy-hosting-<cluster>-<n>` works in the hosting cluster's
//!   namespace (with their own pre-delete hook work and finalizers, `HostingManifestApplied`
//!   and `HostingClusterValidity`);
//! * probes health (`status.healthCheck.mode`, `Available`) from work feedback, and sets
//!   `Progressing` and the last applied configs once the works run the desired configs.
//!
//! Bad input (a template with an unknown variable under strict variables, a configuration
//! that does not resolve, manifests that cannot be built or applied) becomes a condition on
//! that one `ManagedClusterAddOn` with upstream's reason and a message naming the cause; the
//! other addons and clusters keep converging.
//!
//! Objects the manager cannot decode stop nothing else either: it reads every object as raw
//! JSON and decodes each on its own, and runs its rounds with stack enough for the deepest
//! object read (manifests nest as deep as the API server takes, 10,000 levels). A
//! `ManagedClusterAddOn` that does not decode gets `Progressing=False` with reason
//! [`status::REASON_DECODE_FAILED`] and the decode error, naming the field, as its message
//! (written once, a merge patch of `status.conditions`); a `ClusterManagementAddOn`, Placement
//! decision, cluster or work that does not decode is logged at WARN once per resource version
//! and named in [`AddonOutcome::undecodable`]; its addon (or cluster) waits until it changes,
//! and every other addon keeps converging. Upstream's manager stops as a whole on such an
//! object (its informers fail); going on is our addition.
//!
//! Template addons ([`template`]) need no Rust code at all; [`lease`] has the lease updater an
//! agent runs and the lease health check. The pure parts are public: [`works`] (work
//! building), [`config`] (configuration resolution and rollout), [`status`] (conditions),
//! [`deployment_config`] (AddOnDeploymentConfig values), [`permission`] (hub RBAC).
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use kube::api::{Api, PostParams};
//! use ocm_api::addon::v1beta1::{ClusterManagementAddOn, ManagedClusterAddOn, ManagedClusterAddOnSpec, ClusterManagementAddOnSpec};
//! use ocm_api::cluster::v1::ManagedCluster;
//! use ocm_api::work::v1::{Manifest, ManifestWork};
//! use ocm_work::addon::{AddonConfigs, AddonManager, AgentAddon, AgentAddonOptions, RenderError};
//!
//! struct Hello;
//!
//! impl AgentAddon for Hello {
//!     fn options(&self) -> AgentAddonOptions {
//!         AgentAddonOptions::new("hello")
//!     }
//!     fn manifests(&self, cluster: &ManagedCluster, _: &ManagedClusterAddOn, _: &AddonConfigs)
//!         -> Result<Vec<Manifest>, RenderError> {
//!         Ok(vec![Manifest::new(serde_json::json!({
//!             "apiVersion": "v1", "kind": "ConfigMap",
//!             "metadata": {"name": "hello", "namespace": "default"},
//!             "data": {"cluster": cluster.metadata.name}
//!         }))])
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let hub = ocm_testkit::FakeHub::new(1)?;
//! let client = hub.hub().client();
//! Api::<ClusterManagementAddOn>::all(client.clone())
//!     .create(&PostParams::default(), &ClusterManagementAddOn::new("hello", ClusterManagementAddOnSpec::default()))
//!     .await?;
//! // Manual install: enable the addon on cluster1.
//! Api::<ManagedClusterAddOn>::namespaced(client.clone(), "cluster1")
//!     .create(&PostParams::default(), &ManagedClusterAddOn::new("hello", ManagedClusterAddOnSpec::default()))
//!     .await?;
//!
//! let manager = AddonManager::new(client.clone()).with_addon(Arc::new(Hello));
//! manager.reconcile_all().await?;
//! manager.reconcile_all().await?;
//! let work = Api::<ManifestWork>::namespaced(client.clone(), "cluster1").get("addon-hello-deploy-0").await?;
//! assert_eq!(work.spec.manifests()[0].as_value()["data"]["cluster"], "cluster1");
//! let addon = Api::<ManagedClusterAddOn>::namespaced(client, "cluster1").get("hello").await?;
//! let conditions = addon.status.unwrap().conditions.unwrap();
//! assert!(conditions.iter().any(|c| c.type_ == "RegistrationApplied" && c.reason == "NilRegistration"));
//! # Ok(())
//! # }
//! ```
//!
//! # In your own controller
//!
//! [`AddonManager::run`] is one loop for every addon. To run the manager under your own
//! `kube::runtime::Controller` instead (its queue, backoff and metrics), mount
//! [`AddonManager::reconcile_addon`]: one ClusterManagementAddOn per reconcile, with every
//! ManagedClusterAddOn mapped to the ClusterManagementAddOn of its name (they share the
//! addon's name), as upstream's addon manager maps them. A test runs exactly this
//! (`reconcile_addon_mounts_in_kubes_controller`).
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use futures::StreamExt;
//! use kube::api::Api;
//! use kube::runtime::reflector::ObjectRef;
//! use kube::runtime::{Controller, controller::Action, watcher};
//! use kube::ResourceExt;
//! use ocm_api::addon::v1beta1::{ClusterManagementAddOn, ManagedClusterAddOn};
//! use ocm_work::addon::AddonManager;
//!
//! # async fn mount(client: kube::Client, manager: AddonManager) {
//! Controller::new(Api::<ClusterManagementAddOn>::all(client.clone()), watcher::Config::default())
//!     .watches(
//!         Api::<ManagedClusterAddOn>::all(client),
//!         watcher::Config::default(),
//!         |mca| Some(ObjectRef::new(&mca.name_any())),
//!     )
//!     .run(
//!         |cma: Arc<ClusterManagementAddOn>, manager: Arc<AddonManager>| async move {
//!             let outcome = manager.reconcile_addon(&cma.name_any()).await?;
//!             let resync = Duration::from_secs(60);
//!             Ok::<_, ocm_work::Error>(Action::requeue(outcome.requeue_after.unwrap_or(resync)))
//!         },
//!         |_, _, _| Action::requeue(Duration::from_secs(5)),
//!         Arc::new(manager),
//!     )
//!     .for_each(|_| async {})
//!     .await;
//! # }
//! ```
//!
//! [`AddonManager::run`] also watches the addons' ManifestWorks, Placements and
//! configuration objects; add `watches` for those you want to react to at once (the
//! `requeue` above picks the rest up). The fan-out's [`PlacementFanout::reconcile`](crate::fanout::PlacementFanout::reconcile)
//! mounts the same way, over its Placement.
//!
//! # What is upstream-exact, and what is ours
//!
//! Names, labels, annotations, finalizers, owner references, condition types, reasons and
//! messages, configuration precedence, spec hashes (SHA-256 of the Go JSON encoding of the
//! object without `apiVersion`, `kind`, `metadata` and `status`), the config-spec-hash
//! annotation, rollout arithmetic and the progressing rules are upstream's. Ours:
//!
//! * [`AgentAddon::manifests`] receives the resolved configuration objects instead of
//!   reading them itself, so it stays pure; a configuration that cannot be read reaches the
//!   addon as an error in [`AddonConfigs`].
//! * Hub permissions are declarative ([`permission::HubPermission`]) and applied with
//!   server-side apply; works are applied with server-side apply too
//!   ([`crate::applier`]).
//! * One manager runs what upstream splits between the addon-framework's manager (inside each
//!   addon's hub controller) and the hub's addon manager; it serves every
//!   ClusterManagementAddOn of its addons whatever their
//!   `addon.open-cluster-management.io/lifecycle` annotation says.
//! * [`template::TemplateAddon::strict_variables`] and
//!   [`AddonManager::ensure_cluster_management_addons`] are opt-ins.
//!
//! The addon API is used in `v1beta1` (upstream's manager does the same); the AddOnTemplate
//! is `v1alpha1`, the only version upstream serves it in.

mod agent;
pub mod config;
pub mod deployment_config;
pub mod guide;
pub mod lease;
mod manager;
pub mod names;
pub mod permission;
pub mod status;
pub mod template;
pub mod works;

pub use agent::{
    AddonConfigs, AgentAddon, AgentAddonOptions, ConfigGvr, FieldResult, HealthCheckerFn,
    HealthProber, HostedModeInfoFn, InstallNamespaceFn, PermissionsFn, ProbeField,
    RegistrationOption, RegistrationsFn, RenderError, ResolvedConfig, WorkHealthProber,
    hosted_mode_from_annotation, kube_client_registration, workload_availability,
};
pub use manager::{
    AddonManager, AddonOutcome, FIELD_MANAGER, build_registrations, supports_template,
};
