//! One ManagedClusterAddOn, reconciled as upstream's per-addon controllers do in turn:
//! its configs (`addon-config`), registration ([`super::registration`]), the deploy chain
//! ([`super::deploy`], [`super::hosted`]) and health, `Progressing` (`addon-progressing`),
//! then one write of what they changed.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::Patch;
use ocm_api::addon::v1beta1::{ManagedClusterAddOn, ManagedClusterAddOnStatus};
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::constants::addon as ac;
use serde_json::{Value, json};

use super::sync::{AddonSync, DeployContext};
use super::{AddonManager, KIND_CLUSTER, write_params};
use crate::addon::agent::{AddonConfigs, AgentAddon, AgentAddonOptions};
use crate::addon::{config, status};
use crate::api_errors::is_not_found;
use crate::patch::merge_diff;
use crate::read;
use crate::{Error, Result};

/// What reconciling one ManagedClusterAddOn found for the round's outcome.
pub(super) struct Reconciled {
    /// When to look at it again, if soon.
    pub(super) requeue: Option<Duration>,
    /// Manifests of its works the cluster did not apply ([`status::rejected_manifests`]).
    pub(super) rejected: Vec<String>,
}

impl AddonManager {
    /// Everything for one ManagedClusterAddOn: a requeue hint and the manifests the cluster
    /// rejected.
    pub(super) async fn reconcile_one(
        &self,
        addon: &dyn AgentAddon,
        options: &AgentAddonOptions,
        mca: &ManagedClusterAddOn,
        update: Option<&config::AddonConfigUpdate>,
        now: &Time,
    ) -> Result<Reconciled> {
        let old = mca.status.clone().unwrap_or_default();
        let mut sync = AddonSync::new(mca, old.clone());
        if let Some(u) = update {
            config::apply_update(&mut sync.status, u, now);
        }
        let configs = self.resolve_configs(options, mca, &mut sync.status).await;
        let clusters = read::api::<ManagedCluster>(&self.client, None);
        let cluster = self
            .decoder
            .get::<ManagedCluster>(
                &clusters,
                KIND_CLUSTER,
                &mca.namespace().unwrap_or_default(),
            )
            .await?;
        let (requeue, hosted) = match &cluster {
            Some(cluster) => {
                self.sync_agent(addon, options, cluster, mca, &configs, now, &mut sync)
                    .await?
            }
            None => (None, false),
        };
        let rejected = self.sync_progressing(mca, hosted, now, &mut sync).await?;
        let requeue = self.write_addon(mca, &old, sync, requeue).await?;
        Ok(Reconciled { requeue, rejected })
    }

    /// Registration, then, once registered, the deploy chain and the health check. Returns
    /// a requeue hint (soon, while the addon is being deleted) and whether it is hosted.
    #[allow(clippy::too_many_arguments)] // upstream's syncer inputs, one each
    async fn sync_agent(
        &self,
        addon: &dyn AgentAddon,
        options: &AgentAddonOptions,
        cluster: &ManagedCluster,
        mca: &ManagedClusterAddOn,
        configs: &AddonConfigs,
        now: &Time,
        sync: &mut AddonSync,
    ) -> Result<(Option<Duration>, bool)> {
        if let Err(e) = self
            .register(options, cluster, mca, &mut sync.status, configs, now)
            .await
        {
            sync.fail(e);
        }
        if !sync.has_condition(ac::CONDITION_REGISTRATION_APPLIED) {
            return Ok((None, false));
        }
        let hosting = Self::hosting_cluster(options, mca, cluster);
        let hosted = hosting.is_some();
        let current = sync.current(mca);
        let ctx = DeployContext {
            addon,
            options,
            cluster,
            mca: &current,
            configs,
            hosting,
            now,
        };
        let manifests = self.deploy(&ctx, sync).await;
        let works = if hosted {
            self.hosting_works(mca).await?
        } else {
            self.addon_works(mca).await?
        };
        let current = sync.current(mca);
        status::probe_health(
            options,
            cluster,
            &current,
            &mut sync.status,
            &works,
            &manifests,
            now,
        );
        let requeue = mca
            .metadata
            .deletion_timestamp
            .is_some()
            .then_some(Duration::from_secs(1));
        Ok((requeue, hosted))
    }

    /// `addon-progressing`: `Progressing` from the addon's works (and its hosting works).
    /// Returns the manifests of those works the cluster did not apply
    /// ([`status::rejected_manifests`]).
    async fn sync_progressing(
        &self,
        mca: &ManagedClusterAddOn,
        hosted: bool,
        now: &Time,
        sync: &mut AddonSync,
    ) -> Result<Vec<String>> {
        let mut works = self.addon_works(mca).await?;
        if hosted {
            works.extend(self.hosting_works(mca).await?);
        }
        status::update_progressing(mca, &mut sync.status, &works, now);
        Ok(status::rejected_manifests(mca, &works))
    }

    /// Writes what the syncers changed: changed finalizers first (the addon is then
    /// reconciled again at once), otherwise the status, as a merge patch from `old`. The
    /// syncers' errors come last, aggregated.
    async fn write_addon(
        &self,
        mca: &ManagedClusterAddOn,
        old: &ManagedClusterAddOnStatus,
        mut sync: AddonSync,
        requeue: Option<Duration>,
    ) -> Result<Option<Duration>> {
        let cluster_name = mca.namespace().unwrap_or_default();
        let name = mca.name_any();
        let api = read::api::<ManagedClusterAddOn>(&self.client, Some(&cluster_name));
        if sync.finalizers != mca.finalizers() {
            let patch = json!({"metadata": {
                "resourceVersion": mca.metadata.resource_version,
                "finalizers": sync.finalizers,
            }});
            api.patch(&name, &write_params(), &Patch::Merge(&patch))
                .await
                .map_err(|e| {
                    Error::kube(
                        format!("update finalizers of ManagedClusterAddOn {cluster_name}/{name}"),
                        e,
                    )
                })?;
            Error::aggregate(sync.errors)?;
            return Ok(Some(Duration::ZERO));
        }
        if sync.status != *old {
            let diff = merge_diff(
                &serde_json::to_value(old).unwrap_or(Value::Null),
                &serde_json::to_value(&sync.status).unwrap_or(Value::Null),
            );
            if let Some(diff) = diff {
                let written = api
                    .patch_status(
                        &name,
                        &write_params(),
                        &Patch::Merge(json!({"status": diff})),
                    )
                    .await;
                match written {
                    Ok(_) => {}
                    Err(e) if is_not_found(&e) => {}
                    Err(e) => sync.fail(Error::kube(
                        format!("update status of ManagedClusterAddOn {cluster_name}/{name}"),
                        e,
                    )),
                }
            }
        }
        Error::aggregate(sync.errors)?;
        Ok(requeue)
    }
}
