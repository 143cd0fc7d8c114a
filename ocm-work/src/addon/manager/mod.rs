//! The addon manager: the I/O shell that runs addons on the hub.
//!
//! A round of [`AddonManager`] walks down upstream's controllers in their order. This file
//! holds the manager, its rounds and what concerns a ClusterManagementAddOn as a whole
//! (install strategies, config rollout, ownership, the CMA's status); each
//! ManagedClusterAddOn then goes through its own syncers, one file each:
//!
//! | file | upstream | what it does |
//! |---|---|---|
//! | `addon.rs` | the per-addon controllers | one addon, start to end: configs, the syncers below, `Progressing`, one write |
//! | `registration.rs` | `addonRegistrationController` | supported configs, hub permissions, registrations, agent namespace |
//! | `deploy.rs` | `addonDeployController`'s default and default hook syncers | render, deploy works, pre-delete hook work |
//! | `hosted.rs` | its hosted and hosted hook syncers | the same on the hosting cluster |
//! | `sync.rs` | the addon object the syncers share | status, finalizers and errors being built |

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::api::{Api, ApiResource, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use ocm_api::addon::v1alpha1::InstallStrategyType;
use ocm_api::addon::v1beta1::{
    ClusterManagementAddOn, ClusterManagementAddOnSpec, ClusterManagementAddOnStatus,
    ManagedClusterAddOn, ManagedClusterAddOnSpec, ManagedClusterAddOnStatus,
};
use ocm_api::clock::{Clock, SystemClock};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1beta1::DecisionClusters;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::constants::{addon as ac, groups, labels};
use ocm_api::k8s::object::{DecodeFailure, RawObject};
use ocm_api::work::split::WorkSplitter;
use ocm_api::work::v1::ManifestWork;
use serde_json::{Value, json};

use super::agent::{AddonConfigs, AgentAddon, AgentAddonOptions, ConfigGvr, ResolvedConfig};
use super::config::{self, PlacementInput};
use super::status;
use super::template::TemplateAddon;
use crate::api_errors::{is_already_exists, is_not_found};
use crate::applier::WorkApplier;
use crate::patch::merge_diff;
use crate::read::{self, Decoder};
use crate::{Error, Result};

mod addon;
mod deploy;
mod hosted;
mod registration;
mod sync;

pub use registration::build_registrations;

const KIND_CMA: &str = "ClusterManagementAddOn";
const KIND_MCA: &str = "ManagedClusterAddOn";
const KIND_CLUSTER: &str = "ManagedCluster";
const KIND_WORK: &str = "ManifestWork";

/// The field manager the addon manager writes with.
pub const FIELD_MANAGER: &str = "addon-manager";

/// ManagedClusterAddOns that do not decode, with why.
type Undecodable = Vec<(RawObject, DecodeFailure)>;

/// What one round did for one addon.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AddonOutcome {
    /// ManagedClusterAddOns created by the install strategy (cluster names).
    pub created: Vec<String>,
    /// ManagedClusterAddOns deleted by the install strategy (cluster names).
    pub deleted: Vec<String>,
    /// ManagedClusterAddOns reconciled (cluster names).
    pub reconciled: Vec<String>,
    /// Per cluster, what failed (each failure is also in a condition where upstream sets one),
    /// including each manifest of the addon's works the managed cluster did not apply, as
    /// its work's status reports it ([`status::rejected_manifests`](super::status::rejected_manifests)).
    /// [`AddonManager::run`] logs them at WARN once per change.
    pub failed: Vec<(String, String)>,
    /// When to look again (a rollout deadline or soak time), if sooner than the resync.
    pub requeue_after: Option<Duration>,
    /// Objects of this addon that could not be decoded, each with the error naming the field
    /// at fault (each also logged at WARN once per resource version; a ManagedClusterAddOn
    /// also gets a `Progressing=False` condition). A ClusterManagementAddOn or a
    /// PlacementDecision of its install strategy that does not decode stops the addon's round
    /// until it changes; a ManagedClusterAddOn only itself.
    pub undecodable: Vec<String>,
    /// Why the round could not start for this addon, when it could not: no
    /// ClusterManagementAddOn of its name on the hub, or a hub that does not serve
    /// ClusterManagementAddOns at all (OCM's CRDs not installed). [`AddonManager::run`] logs it
    /// at WARN when it first appears or changes. `None` once the addon runs.
    pub waiting: Option<String>,
}

/// Runs addons on the hub: the controllers of upstream's addon-framework
/// (`addon-deploy`, `addon-registration`, `addon-config`, `cma-config`) and of upstream's
/// hub addon manager (`addon-management` install strategies, `addon-configuration` with
/// rollouts, `addon-owner`, `addon-progressing`, `cma-install-progression`, and the
/// addon-template controller with [`with_templates`](Self::with_templates)), each round
/// reconciling every ClusterManagementAddOn it serves.
///
/// See the [module documentation](super) for what it writes and the
/// [guide](super::guide) for a walk-through.
#[derive(Clone)]
pub struct AddonManager {
    client: Client,
    addons: Arc<RwLock<BTreeMap<String, Arc<dyn AgentAddon>>>>,
    templates: bool,
    strict_templates: bool,
    clock: Arc<dyn Clock>,
    splitter: WorkSplitter,
    applier: WorkApplier,
    decoder: Decoder,
}

impl std::fmt::Debug for AddonManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .addons
            .read()
            .map(|a| a.keys().cloned().collect())
            .unwrap_or_default();
        f.debug_struct("AddonManager")
            .field("addons", &names)
            .field("templates", &self.templates)
            .finish_non_exhaustive()
    }
}

/// The group, version and kind-less resource of a configuration kind, for dynamic reads.
fn api_resource(gvr: &ConfigGvr) -> ApiResource {
    ApiResource {
        group: gvr.group.clone(),
        version: gvr.version.clone(),
        api_version: if gvr.group.is_empty() {
            gvr.version.clone()
        } else {
            format!("{}/{}", gvr.group, gvr.version)
        },
        kind: String::new(),
        plural: gvr.resource.clone(),
    }
}

/// Merge patches carry the manager's name as field manager.
fn write_params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    }
}

fn now_time(clock: &dyn Clock) -> Time {
    clock.now_time()
}

fn cma_owner(cma: &ClusterManagementAddOn) -> OwnerReference {
    OwnerReference {
        api_version: format!("{}/v1beta1", groups::ADDON),
        kind: "ClusterManagementAddOn".into(),
        name: cma.name_any(),
        uid: cma.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

impl AddonManager {
    /// A manager talking to the hub through `client`, serving no addon yet.
    pub fn new(client: Client) -> Self {
        let decoder = Decoder::default();
        Self {
            applier: WorkApplier::new(client.clone())
                .with_field_manager(FIELD_MANAGER)
                .with_decoder(decoder.clone()),
            decoder,
            client,
            addons: Arc::default(),
            templates: false,
            strict_templates: false,
            clock: Arc::new(SystemClock),
            splitter: WorkSplitter::new(),
        }
    }

    /// Serves `addon` (replacing an addon of the same name).
    #[must_use]
    pub fn with_addon(self, addon: Arc<dyn AgentAddon>) -> Self {
        self.add_addon(addon);
        self
    }

    /// Serves `addon` from now on (replacing an addon of the same name).
    pub fn add_addon(&self, addon: Arc<dyn AgentAddon>) {
        let name = addon.options().addon_name;
        if let Ok(mut map) = self.addons.write() {
            map.insert(name, addon);
        }
    }

    /// Also serves every template addon: each ClusterManagementAddOn whose default configs
    /// name an `addontemplates` object and that no registered addon serves.
    #[must_use]
    pub fn with_templates(mut self, enabled: bool) -> Self {
        self.templates = enabled;
        self
    }

    /// Template addons refuse undefined `{{VARIABLES}}` (see
    /// [`TemplateAddon::strict_variables`]).
    #[must_use]
    pub fn with_strict_template_variables(mut self, strict: bool) -> Self {
        self.strict_templates = strict;
        self
    }

    /// Uses `clock` for condition times and rollouts.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The hub's ManifestWork size limit (default 500 KiB); deploy works are filled to 80 %
    /// of it.
    #[must_use]
    pub fn with_manifest_limit(mut self, bytes: usize) -> Self {
        self.splitter = WorkSplitter::with_manifests_limit(bytes);
        self
    }

    fn registered(&self) -> BTreeMap<String, Arc<dyn AgentAddon>> {
        self.addons.read().map(|m| m.clone()).unwrap_or_default()
    }

    /// Creates, for every registered addon with an install strategy or default configs in its
    /// options, its ClusterManagementAddOn when it does not exist (our addition; an existing
    /// one is never changed).
    pub async fn ensure_cluster_management_addons(&self) -> Result<()> {
        let api: Api<ClusterManagementAddOn> = Api::all(self.client.clone());
        for (name, addon) in self.registered() {
            let options = addon.options();
            if options.install_strategy.is_none() && options.default_configs.is_empty() {
                continue;
            }
            let mut cma = ClusterManagementAddOn::new(
                &name,
                ClusterManagementAddOnSpec {
                    add_on_meta: None,
                    default_configs: (!options.default_configs.is_empty())
                        .then(|| options.default_configs.clone()),
                    install_strategy: options.install_strategy.clone(),
                },
            );
            cma.metadata.annotations = Some(BTreeMap::from([(
                ac::LIFECYCLE_ANNOTATION.to_string(),
                ac::LIFECYCLE_ADDON_MANAGER.to_string(),
            )]));
            match api.create(&PostParams::default(), &cma).await {
                Ok(_) => {}
                Err(e) if is_already_exists(&e) => {}
                Err(e) => {
                    return Err(Error::kube(
                        format!("create ClusterManagementAddOn {name}"),
                        e,
                    ));
                }
            }
        }
        Ok(())
    }

    /// One round over every addon this manager serves (with stack enough for the deepest
    /// object read, see the [module docs](super)).
    pub async fn reconcile_all(&self) -> Result<BTreeMap<String, AddonOutcome>> {
        self.decoder.stacked(self.reconcile_all_round()).await
    }

    async fn reconcile_all_round(&self) -> Result<BTreeMap<String, AddonOutcome>> {
        let mut names: BTreeSet<String> = self.registered().keys().cloned().collect();
        if self.templates {
            // A ClusterManagementAddOn that does not decode is logged and left out.
            let (cmas, _) = self
                .decoder
                .list::<ClusterManagementAddOn>(
                    &read::api::<ClusterManagementAddOn>(&self.client, None),
                    &ListParams::default(),
                    KIND_CMA,
                    || "list ClusterManagementAddOns".to_string(),
                )
                .await?;
            for cma in cmas {
                if supports_template(&cma) {
                    names.insert(cma.name_any());
                }
            }
        }
        let mut out = BTreeMap::new();
        let mut errors = Vec::new();
        for name in names {
            match self.reconcile_addon_round(&name).await {
                Ok(o) => {
                    out.insert(name, o);
                }
                Err(e) => errors.push(e),
            }
        }
        Error::aggregate(errors)?;
        Ok(out)
    }

    fn addon_for(
        &self,
        name: &str,
        cma: Option<&ClusterManagementAddOn>,
    ) -> Option<Arc<dyn AgentAddon>> {
        if let Some(a) = self.registered().get(name) {
            return Some(a.clone());
        }
        if self.templates && cma.is_some_and(supports_template) {
            return Some(Arc::new(
                TemplateAddon::new(name).strict_variables(self.strict_templates),
            ));
        }
        None
    }

    /// One round for the addon `name` (with stack enough for the deepest object read).
    pub async fn reconcile_addon(&self, name: &str) -> Result<AddonOutcome> {
        self.decoder.stacked(self.reconcile_addon_round(name)).await
    }

    async fn reconcile_addon_round(&self, name: &str) -> Result<AddonOutcome> {
        let mut outcome = AddonOutcome::default();
        let Some(mut cma) = self.read_cma(name, &mut outcome).await? else {
            return Ok(outcome);
        };
        let Some(addon) = self.addon_for(name, Some(&cma)) else {
            return Ok(outcome);
        };
        let options = addon.options();
        let now = now_time(self.clock.as_ref());

        // cma-install-progression + cma-config: the CMA's default config references and
        // install progressions, with spec hashes.
        let old_status = cma.status.clone().unwrap_or_default();
        let mut cma_status = self.cma_config_status(&cma, &options, &old_status).await;

        // addon-management: install strategies.
        let (mut mcas, undecodable) = self.list_addons(name).await?;
        self.report_undecodable_addons(&undecodable, &now, &mut outcome)
            .await;
        let Some(inputs) = self
            .manage_installs(&cma, &mut mcas, &undecodable, &mut outcome)
            .await?
        else {
            return Ok(outcome);
        };

        // addon-owner: every ManagedClusterAddOn is owned by its CMA.
        self.own_addons(&cma, &mut mcas, &mut outcome).await;

        // addon-configuration: which configs each addon runs with, rolled out.
        cma.status = Some(cma_status.clone());
        let plan = config::plan(&cma, &mcas, &inputs, self.clock.now()).map_err(|source| {
            Error::Rollout {
                placement: format!("install strategy of {name}"),
                source,
            }
        })?;
        outcome.requeue_after = plan.requeue_after;
        for p in cma_status.install_progressions.iter_mut().flatten() {
            if let Some((condition, completed)) = plan
                .progressions
                .get(&(p.namespace.clone(), p.name.clone()))
            {
                config::apply_progression(p, condition, *completed, &now);
            }
        }
        self.write_cma_status(name, &old_status, &cma_status)
            .await?;

        // Each addon: its registration, deploy works, health and status.
        self.reconcile_addons(
            name,
            addon.as_ref(),
            &options,
            &mcas,
            &plan,
            &now,
            &mut outcome,
        )
        .await;
        Ok(outcome)
    }

    /// The ClusterManagementAddOn `name`; `None` when it does not exist or does not decode
    /// (then named in `outcome`).
    async fn read_cma(
        &self,
        name: &str,
        outcome: &mut AddonOutcome,
    ) -> Result<Option<ClusterManagementAddOn>> {
        let cmas = read::api::<ClusterManagementAddOn>(&self.client, None);
        let raw = match self.decoder.get_raw(&cmas, KIND_CMA, name).await {
            Ok(Some(raw)) => raw,
            Ok(None) => {
                outcome.waiting = Some(Self::why_no_cma(&cmas, name).await);
                return Ok(None);
            }
            // A 404 that is not an object's NotFound: the hub does not serve the kind.
            Err(Error::Kube { source, .. }) if crate::api_errors::is_not_found(&source) => {
                outcome.waiting = Some(cma_not_served(name));
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        match self
            .decoder
            .decode::<ClusterManagementAddOn>(KIND_CMA, &raw)
        {
            Ok(cma) => Ok(Some(cma)),
            Err(failure) => {
                outcome
                    .undecodable
                    .push(read::undecodable(KIND_CMA, &failure).to_string());
                Ok(None)
            }
        }
    }

    /// Why the ClusterManagementAddOn `name` was not found: the hub does not serve the kind
    /// (one list, only on this path, tells), or it has no object of that name.
    async fn why_no_cma(cmas: &Api<RawObject>, name: &str) -> String {
        match cmas.list(&ListParams::default().limit(1)).await {
            Err(e) if crate::api_errors::is_not_found(&e) => cma_not_served(name),
            _ => format!(
                "no ClusterManagementAddOn {name:?} on the hub: create one to install addon {name}"
            ),
        }
    }

    /// The CMA's status with its default config references and install progressions as its
    /// spec and the configs' spec hashes make them (upstream's cma-config and
    /// cma-install-progression controllers).
    async fn cma_config_status(
        &self,
        cma: &ClusterManagementAddOn,
        options: &AgentAddonOptions,
        old_status: &ClusterManagementAddOnStatus,
    ) -> ClusterManagementAddOnStatus {
        let mut cma_status = old_status.clone();
        let defaults = cma.spec.default_configs.clone().unwrap_or_default();
        let mut default_refs = config::default_config_references(
            &defaults,
            cma_status
                .default_config_references
                .as_deref()
                .unwrap_or_default(),
        );
        let strategy = cma.spec.install_strategy.clone().unwrap_or_default();
        let placements = strategy.placements.clone().unwrap_or_default();
        let mut progressions = if strategy.strategy_type() == InstallStrategyType::Placements {
            config::install_progressions(
                &defaults,
                &placements,
                cma_status
                    .install_progressions
                    .as_deref()
                    .unwrap_or_default(),
            )
        } else {
            Vec::new()
        };
        let hashes = self
            .config_hashes(options, &default_refs, &progressions)
            .await;
        config::fill_cma_spec_hashes(&mut default_refs, &mut progressions, &|g, r, ns, n| {
            hashes
                .get(&(g.to_string(), r.to_string(), ns.to_string(), n.to_string()))
                .cloned()
        });
        cma_status.default_config_references = Some(default_refs);
        cma_status.install_progressions = Some(progressions);
        cma_status
    }

    /// The ManagedClusterAddOns named `name` that decode, and those that do not (each with
    /// its raw object, to be reported on itself and otherwise left alone).
    async fn list_addons(&self, name: &str) -> Result<(Vec<ManagedClusterAddOn>, Undecodable)> {
        let mca_api = read::api::<ManagedClusterAddOn>(&self.client, None);
        let selector = format!("metadata.name={name}");
        let items = self
            .decoder
            .list_raw(&mca_api, &ListParams::default().fields(&selector), || {
                format!("list ManagedClusterAddOns {name}")
            })
            .await?;
        let mut mcas = Vec::with_capacity(items.len());
        let mut undecodable = Vec::new();
        for raw in items {
            match self
                .decoder
                .decode_quietly::<ManagedClusterAddOn>(KIND_MCA, &raw)
            {
                Ok(mca) => mcas.push(mca),
                Err(failure) => undecodable.push((raw, failure)),
            }
        }
        Ok((mcas, undecodable))
    }

    /// Names each addon that does not decode in `outcome`, and says why in its `Progressing`
    /// condition.
    async fn report_undecodable_addons(
        &self,
        undecodable: &Undecodable,
        now: &Time,
        outcome: &mut AddonOutcome,
    ) {
        for (raw, failure) in undecodable {
            outcome
                .undecodable
                .push(read::undecodable(KIND_MCA, failure).to_string());
            if let Err(e) = self.report_undecodable_addon(raw, failure, now).await {
                outcome
                    .failed
                    .push((failure.namespace.clone(), e.to_string()));
            }
        }
    }

    /// Upstream's addon-management controller: with the `Placements` install strategy, a
    /// ManagedClusterAddOn is created in every cluster the placements decide and deleted from
    /// the others (`mcas` is listed again after a change). Returns the placements' decisions
    /// for the config rollout; `None` when a decision does not decode (named in `outcome`):
    /// nothing is installed or removed then until the decision changes.
    async fn manage_installs(
        &self,
        cma: &ClusterManagementAddOn,
        mcas: &mut Vec<ManagedClusterAddOn>,
        undecodable: &Undecodable,
        outcome: &mut AddonOutcome,
    ) -> Result<Option<Vec<PlacementInput>>> {
        let name = cma.name_any();
        let name = name.as_str();
        let strategy = cma.spec.install_strategy.clone().unwrap_or_default();
        let placements = strategy.placements.clone().unwrap_or_default();
        let mut inputs = Vec::new();
        if strategy.strategy_type() != InstallStrategyType::Placements {
            return Ok(Some(inputs));
        }
        let mut required = BTreeSet::new();
        for p in &placements {
            // Only whether it exists and its decision group size are read, field by field.
            let placement_api = read::api::<Placement>(&self.client, Some(&p.namespace));
            let Some(placement) = self
                .decoder
                .get_raw(&placement_api, "Placement", &p.name)
                .await?
            else {
                tracing::debug!(addon = name, placement = %format!("{}/{}", p.namespace, p.name), "placement not found");
                continue;
            };
            let (items, failures) = self
                .decoder
                .list_placement_decisions(&self.client, &p.namespace, &p.name)
                .await?;
            // Without every decision the addon's clusters are unknown: nothing is installed
            // or removed until the decision changes.
            if !failures.is_empty() {
                outcome.undecodable.extend(
                    failures
                        .iter()
                        .map(|f| read::undecodable("PlacementDecision", f).to_string()),
                );
                return Ok(None);
            }
            let groups =
                DecisionClusters::from_decisions(&items).map_err(|source| Error::Rollout {
                    placement: format!("{}/{}", p.namespace, p.name),
                    source,
                })?;
            required.extend(groups.clusters().into_iter().filter(|c| !c.is_empty()));
            inputs.push(PlacementInput {
                strategy: p.clone(),
                decisions: groups,
                clusters_per_decision_group: read::field(
                    &placement,
                    &[
                        "spec",
                        "decisionStrategy",
                        "groupStrategy",
                        "clustersPerDecisionGroup",
                    ],
                ),
            });
        }
        let existing: BTreeSet<String> = mcas
            .iter()
            .filter_map(|m| m.namespace())
            .chain(undecodable.iter().map(|(_, f)| f.namespace.clone()))
            .collect();
        for cluster in required.difference(&existing) {
            match self.create_addon(cma, cluster).await {
                Ok(()) => outcome.created.push(cluster.clone()),
                Err(e) => outcome.failed.push((cluster.clone(), e.to_string())),
            }
        }
        for cluster in existing.difference(&required) {
            let api = read::api::<ManagedClusterAddOn>(&self.client, Some(cluster));
            match api.delete(name, &DeleteParams::default()).await {
                Ok(_) => outcome.deleted.push(cluster.clone()),
                Err(e) if is_not_found(&e) => {}
                Err(e) => outcome.failed.push((
                    cluster.clone(),
                    Error::kube(format!("delete ManagedClusterAddOn {cluster}/{name}"), e)
                        .to_string(),
                )),
            }
        }
        if !outcome.created.is_empty() || !outcome.deleted.is_empty() {
            *mcas = self.list_addons(name).await?.0;
        }
        Ok(Some(inputs))
    }

    /// Upstream's addon-owner controller: every ManagedClusterAddOn gets its CMA as an owner.
    async fn own_addons(
        &self,
        cma: &ClusterManagementAddOn,
        mcas: &mut [ManagedClusterAddOn],
        outcome: &mut AddonOutcome,
    ) {
        let name = cma.name_any();
        let owner = cma_owner(cma);
        for mca in mcas {
            let refs = mca.metadata.owner_references.clone().unwrap_or_default();
            if refs.iter().any(|r| r.uid == owner.uid) {
                continue;
            }
            let mut merged: Vec<OwnerReference> = refs;
            merged.push(owner.clone());
            let ns = mca.namespace().unwrap_or_default();
            let api = read::api::<ManagedClusterAddOn>(&self.client, Some(&ns));
            let patch = json!({"metadata": {"resourceVersion": mca.metadata.resource_version, "ownerReferences": merged}});
            let patched = match api
                .patch(&name, &write_params(), &Patch::Merge(&patch))
                .await
            {
                Ok(raw) => {
                    self.decoder
                        .answer::<ManagedClusterAddOn>(KIND_MCA, raw)
                        .await
                }
                Err(e) => Err(Error::kube(
                    format!("set owner of ManagedClusterAddOn {name}"),
                    e,
                )),
            };
            match patched {
                Ok(updated) => *mca = updated,
                Err(e) => outcome.failed.push((ns, e.to_string())),
            }
        }
    }

    /// Writes what changed of the CMA's status (a merge patch of the difference).
    async fn write_cma_status(
        &self,
        name: &str,
        old_status: &ClusterManagementAddOnStatus,
        cma_status: &ClusterManagementAddOnStatus,
    ) -> Result<()> {
        if cma_status == old_status {
            return Ok(());
        }
        let diff = merge_diff(
            &serde_json::to_value(old_status).unwrap_or(Value::Null),
            &serde_json::to_value(cma_status).unwrap_or(Value::Null),
        );
        if let Some(diff) = diff {
            let cmas = read::api::<ClusterManagementAddOn>(&self.client, None);
            cmas.patch_status(
                name,
                &write_params(),
                &Patch::Merge(json!({"status": diff})),
            )
            .await
            .map_err(|e| {
                Error::kube(format!("update status of ClusterManagementAddOn {name}"), e)
            })?;
        }
        Ok(())
    }

    /// Reconciles each addon of the round with the config update the plan gives its cluster,
    /// noting in `outcome` which were reconciled, which failed, and the soonest requeue.
    #[allow(clippy::too_many_arguments)]
    async fn reconcile_addons(
        &self,
        name: &str,
        addon: &dyn AgentAddon,
        options: &AgentAddonOptions,
        mcas: &[ManagedClusterAddOn],
        plan: &config::ConfigPlan,
        now: &Time,
        outcome: &mut AddonOutcome,
    ) {
        for mca in mcas {
            let cluster = mca.namespace().unwrap_or_default();
            let update = plan.updates.get(&cluster);
            match self.reconcile_one(addon, options, mca, update, now).await {
                Ok(addon::Reconciled { requeue, rejected }) => {
                    outcome
                        .failed
                        .extend(rejected.into_iter().map(|why| (cluster.clone(), why)));
                    outcome.reconciled.push(cluster);
                    if let Some(r) = requeue {
                        outcome.requeue_after = Some(outcome.requeue_after.map_or(r, |d| d.min(r)));
                    }
                }
                Err(e) => {
                    tracing::warn!(addon = name, cluster = %cluster, error = %e, "addon reconcile failed");
                    outcome.failed.push((cluster, e.to_string()));
                }
            }
        }
    }

    /// Says in the `Progressing` condition of an addon that does not decode why (see
    /// [`status::undecodable`]), when it does not say so already.
    async fn report_undecodable_addon(
        &self,
        raw: &RawObject,
        failure: &DecodeFailure,
        now: &Time,
    ) -> Result<bool> {
        let api = read::api::<ManagedClusterAddOn>(&self.client, Some(&failure.namespace));
        let mut condition = status::undecodable(&failure.error);
        if let Some(generation) = raw.meta().generation {
            condition = condition.observed_generation(generation);
        }
        let said =
            read::set_raw_condition(&api, KIND_MCA, raw, condition, now, &write_params()).await?;
        if said {
            tracing::warn!(
                addon = %failure.object(),
                error = %failure.error,
                "ManagedClusterAddOn cannot be decoded; it is reported in its Progressing condition and every other addon is still reconciled"
            );
        }
        Ok(said)
    }

    async fn create_addon(&self, cma: &ClusterManagementAddOn, cluster: &str) -> Result<()> {
        let clusters = read::api::<ManagedCluster>(&self.client, None);
        let mc = clusters
            .get(cluster)
            .await
            .map_err(|e| Error::kube(format!("get ManagedCluster {cluster}"), e))?;
        let mc: ManagedCluster = self.decoder.answer(KIND_CLUSTER, mc).await?;
        let annotations: BTreeMap<String, String> = mc
            .annotations()
            .iter()
            .filter(|(k, _)| k.starts_with(groups::ADDON))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut mca = ManagedClusterAddOn::new(&cma.name_any(), ManagedClusterAddOnSpec::default());
        mca.metadata.namespace = Some(cluster.to_string());
        mca.metadata.owner_references = Some(vec![cma_owner(cma)]);
        if !annotations.is_empty() {
            mca.metadata.annotations = Some(annotations);
        }
        let api = read::api::<ManagedClusterAddOn>(&self.client, Some(cluster));
        let mca = read::to_raw(&mca, || {
            format!("ManagedClusterAddOn {cluster}/{}", cma.name_any())
        })?;
        match api.create(&PostParams::default(), &mca).await {
            Ok(_) => Ok(()),
            Err(e) if is_already_exists(&e) => Ok(()),
            Err(e) => Err(Error::kube(
                format!("create ManagedClusterAddOn {cluster}/{}", cma.name_any()),
                e,
            )),
        }
    }

    /// Reads one configuration object.
    async fn read_config(
        &self,
        gvr: &ConfigGvr,
        namespace: &str,
        name: &str,
    ) -> std::result::Result<Value, String> {
        let ar = api_resource(gvr);
        // Raw: a config (an AddOnTemplate's manifests) may nest as deep as the API server
        // takes; the value is handled within the manager's stacked round.
        let api: Api<RawObject> = if namespace.is_empty() {
            Api::all_with(self.client.clone(), &ar)
        } else {
            Api::namespaced_with(self.client.clone(), namespace, &ar)
        };
        match api.get(name).await {
            Ok(obj) => {
                self.decoder.fit(obj.depth()).await;
                obj.to_value()
            }
            Err(e) => Err(crate::api_errors::describe(&e)),
        }
    }

    /// The spec hashes of the configs the CMA status names, for supported kinds.
    async fn config_hashes(
        &self,
        options: &AgentAddonOptions,
        defaults: &[ocm_api::addon::v1beta1::DefaultConfigReference],
        progressions: &[ocm_api::addon::v1alpha1::InstallProgression],
    ) -> BTreeMap<(String, String, String, String), String> {
        let mut wanted = BTreeSet::new();
        for d in defaults {
            if let Some(c) = &d.desired_config {
                wanted.insert((
                    d.group.clone().unwrap_or_default(),
                    d.resource.clone(),
                    c.namespace.clone().unwrap_or_default(),
                    c.name.clone(),
                ));
            }
        }
        for p in progressions {
            for r in p.config_references.iter().flatten() {
                if let Some(c) = &r.desired_config {
                    wanted.insert((
                        r.group.clone().unwrap_or_default(),
                        r.resource.clone(),
                        c.namespace.clone().unwrap_or_default(),
                        c.name.clone(),
                    ));
                }
            }
        }
        let mut out = BTreeMap::new();
        for key in wanted {
            let Some(gvr) = options
                .supported_configs
                .iter()
                .find(|g| g.group == key.0 && g.resource == key.1)
            else {
                continue;
            };
            if let Ok(obj) = self.read_config(gvr, &key.2, &key.3).await {
                out.insert(key, config::spec_hash(&obj));
            }
        }
        out
    }

    /// Reads the objects `status.configReferences` names (supported kinds only), filling the
    /// spec hashes of the addon's own configs and the observed generations on the way.
    async fn resolve_configs(
        &self,
        options: &AgentAddonOptions,
        mca: &ManagedClusterAddOn,
        status: &mut ManagedClusterAddOnStatus,
    ) -> AddonConfigs {
        let refs = status.config_references.clone().unwrap_or_default();
        let mut objects: BTreeMap<
            (String, String, String, String),
            std::result::Result<Value, String>,
        > = BTreeMap::new();
        for r in &refs {
            let Some(d) = &r.desired_config else { continue };
            let group = r.group.clone().unwrap_or_default();
            let Some(gvr) = options
                .supported_configs
                .iter()
                .find(|g| g.group == group && g.resource == r.resource)
            else {
                continue;
            };
            let ns = d.namespace.clone().unwrap_or_default();
            let result = self.read_config(gvr, &ns, &d.name).await;
            objects.insert((group, r.resource.clone(), ns, d.name.clone()), result);
        }
        let own = mca.spec.configs.clone().unwrap_or_default();
        let mut refs = refs;
        config::fill_addon_spec_hashes(&own, &mut refs, &|g, r, ns, n| {
            let obj = objects
                .get(&(g.to_string(), r.to_string(), ns.to_string(), n.to_string()))?
                .as_ref()
                .ok()?;
            Some((
                config::spec_hash(obj),
                obj.pointer("/metadata/generation").and_then(Value::as_i64),
            ))
        });
        if status.config_references.is_some() {
            status.config_references = Some(refs.clone());
        }
        refs.iter()
            .filter_map(|r| {
                let d = r.desired_config.as_ref()?;
                let group = r.group.clone().unwrap_or_default();
                let ns = d.namespace.clone().unwrap_or_default();
                let key = (
                    group.clone(),
                    r.resource.clone(),
                    ns.clone(),
                    d.name.clone(),
                );
                let hash = d.spec_hash.clone().unwrap_or_default();
                let (object, mut error) = match objects.get(&key) {
                    Some(Ok(obj)) => (obj.clone(), None),
                    Some(Err(e)) => (Value::Null, Some(e.clone())),
                    None => return None,
                };
                if hash.is_empty() && error.is_none() {
                    error = Some("desired spec hash is empty".into());
                }
                Some(ResolvedConfig {
                    group,
                    resource: r.resource.clone(),
                    namespace: (!ns.is_empty()).then_some(ns),
                    name: d.name.clone(),
                    spec_hash: hash,
                    object,
                    error,
                })
            })
            .collect()
    }

    /// Reconciles every addon at once, then whenever a ClusterManagementAddOn,
    /// ManagedClusterAddOn, addon ManifestWork, Placement, PlacementDecision,
    /// ManagedCluster or configuration object changes (events are batched for 100 ms), and
    /// every `resync`, until `shutdown` completes. Failed rounds are logged and retried.
    pub async fn run(
        self,
        resync: Duration,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) {
        use crate::runtime::watch;
        let c = self.client.clone();
        let mut streams = vec![
            watch::changes(
                read::api::<ClusterManagementAddOn>(&c, None),
                watcher::Config::default(),
            ),
            watch::changes(
                read::api::<ManagedClusterAddOn>(&c, None),
                watcher::Config::default(),
            ),
            watch::changes(
                read::api::<ManifestWork>(&c, None),
                watcher::Config::default().labels(ac::ADDON_LABEL),
            ),
            watch::changes(read::api::<Placement>(&c, None), watcher::Config::default()),
            watch::changes(
                read::api::<PlacementDecision>(&c, None),
                watcher::Config::default().labels(labels::PLACEMENT),
            ),
            watch::changes(
                read::api::<ManagedCluster>(&c, None),
                watcher::Config::default(),
            ),
        ];
        let mut gvrs: BTreeSet<ConfigGvr> = self
            .registered()
            .values()
            .flat_map(|a| a.options().supported_configs)
            .collect();
        if self.templates {
            gvrs.insert(ConfigGvr::addon_deployment_config());
            gvrs.insert(ConfigGvr::addon_template());
        }
        for gvr in gvrs {
            let api: Api<RawObject> = Api::all_with(c.clone(), &api_resource(&gvr));
            streams.push(watch::changes(api, watcher::Config::default()));
        }
        let this = &self;
        // What made an addon wait, logged once per change.
        let said = &ocm_api::repeats::LastSaid::default();
        ocm_api::rounds::run_rounds(
            streams,
            Duration::from_millis(100),
            shutdown,
            move || async move {
                match this.reconcile_all().await {
                    Ok(outcomes) => {
                        for (name, o) in &outcomes {
                            match &o.waiting {
                                Some(why) if said.changed(name, why) => {
                                    tracing::warn!(addon = %name, "addon not running: {why}");
                                }
                                Some(_) => {}
                                None => said.forget(name),
                            }
                            let failed = failures_text(&o.failed);
                            let key = format!("{name}#failed");
                            if failed.is_empty() {
                                said.forget(&key);
                            } else if said.changed(&key, &failed) {
                                tracing::warn!(addon = %name, "addon round left clusters behind: {failed}");
                            }
                        }
                        outcomes
                            .values()
                            .filter_map(|o| o.requeue_after)
                            .min()
                            .map_or(resync, |r| r.clamp(Duration::from_millis(100), resync))
                    }
                    Err(error) => {
                        tracing::warn!(%error, "addon manager round failed");
                        Duration::from_secs(5).min(resync)
                    }
                }
            },
        )
        .await;
    }
}

/// A round's failures as one line for a log: `cluster1: why; cluster2: why`.
fn failures_text(failed: &[(String, String)]) -> String {
    failed
        .iter()
        .map(|(cluster, why)| format!("{cluster}: {why}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why addon `name` waits on a hub that does not serve ClusterManagementAddOns.
fn cma_not_served(name: &str) -> String {
    format!(
        "the hub does not serve ClusterManagementAddOns (addon.open-cluster-management.io): \
         install OCM's CRDs (ocm_api::crd::crds()) to run addon {name}"
    )
}

/// Whether a ClusterManagementAddOn is a template addon (upstream's `SupportAddOnTemplate`).
pub fn supports_template(cma: &ClusterManagementAddOn) -> bool {
    cma.spec.default_configs.iter().flatten().any(|c| {
        c.group.as_deref() == Some(groups::ADDON) && c.resource == ac::ADDON_TEMPLATE_RESOURCE
    })
}
