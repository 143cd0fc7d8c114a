//! The hosted syncers of one ManagedClusterAddOn (upstream's `hostedSyncer` and
//! `hostedHookSyncer`): for an addon in hosted mode, its deploy works and pre-delete hook
//! work on the hosting cluster, held by their finalizers; for one that left hosted mode (or
//! whose hosting cluster is gone), the hosting works are cleaned up.

use kube::ResourceExt;
use ocm_api::addon::v1beta1::ManagedClusterAddOn;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::conditions::{self, ConditionStatus, NewCondition};
use ocm_api::constants::addon as ac;
use ocm_api::work::v1::{Manifest, ManifestConfigOption, ManifestWork};

use super::sync::{AddonSync, DeployContext, Rendered};
use super::{AddonManager, KIND_CLUSTER};
use crate::Result;
use crate::addon::agent::AgentAddonOptions;
use crate::addon::works::{self, WorkTarget};
use crate::addon::{names, status};
use crate::read;

/// How the hosted deploy syncer ends.
enum HostedDeploy {
    /// Done (or nothing to deploy): the hosted hook syncer runs next.
    Done,
    /// The hosting finalizer was just added: the chain stops, and the default hook syncer
    /// waits for the next reconcile.
    FinalizerAdded,
    /// The hosting works could not be listed (kept as an error): the chain stops.
    Failed,
}

impl AddonManager {
    /// The install mode of an addon: `Some(hosting cluster)` when hosted.
    pub(super) fn hosting_cluster(
        options: &AgentAddonOptions,
        mca: &ManagedClusterAddOn,
        cluster: &ManagedCluster,
    ) -> Option<String> {
        if !options.hosted_mode_enabled {
            return None;
        }
        let info = options.hosted_mode_info.as_ref()?;
        let (mode, hosting) = info(mca, cluster);
        (mode == ac::INSTALL_MODE_HOSTED).then_some(hosting)
    }

    /// The hosted syncer and the hosted hook syncer. Returns whether the default hook syncer
    /// must wait (a finalizer was just added).
    pub(super) async fn sync_hosted(
        &self,
        ctx: &DeployContext<'_>,
        rendered: &Rendered,
        sync: &mut AddonSync,
    ) -> bool {
        let Some(hosting) = ctx.hosting.clone() else {
            // Back to the default mode: the hosting works go.
            if sync.has_finalizer(ac::HOSTING_MANIFEST_FINALIZER) {
                self.clean_up_hosting(ctx.mca, false, sync).await;
            }
            sync.remove_finalizer(ac::HOSTING_MANIFEST_FINALIZER);
            return false;
        };
        let Some(hosting_cluster) = self.check_hosting_cluster(ctx, &hosting, sync).await else {
            return false;
        };
        let target = WorkTarget::Hosting(hosting);
        let manifests = match works::deployable_manifests(&target, true, true, &rendered.manifests)
        {
            Ok(m) => m,
            Err(e) => {
                status::manifest_apply_failed(
                    sync.conditions(),
                    ac::CONDITION_HOSTING_MANIFEST_APPLIED,
                    ac::MESSAGE_BUILD_WORK_FAILED_PREFIX,
                    &e,
                    ctx.now,
                );
                return false;
            }
        };
        let deployed = self
            .sync_hosted_deploy(
                ctx,
                &target,
                &manifests,
                &rendered.configs,
                &hosting_cluster,
                sync,
            )
            .await;
        match deployed {
            HostedDeploy::FinalizerAdded => true,
            HostedDeploy::Failed => false,
            HostedDeploy::Done => {
                self.sync_hosted_hook(ctx, &target, &manifests, &hosting_cluster, sync)
                    .await;
                false
            }
        }
    }

    /// `HostingClusterValidity`: the hosting cluster must be a ManagedCluster of the hub.
    /// When it is not, the hosting works go with their finalizers, and `None` stops the
    /// hosted syncers (as does a failed read, kept as an error).
    async fn check_hosting_cluster(
        &self,
        ctx: &DeployContext<'_>,
        hosting: &str,
        sync: &mut AddonSync,
    ) -> Option<ManagedCluster> {
        let clusters = read::api::<ManagedCluster>(&self.client, None);
        let found = match self
            .decoder
            .get::<ManagedCluster>(&clusters, KIND_CLUSTER, hosting)
            .await
        {
            Ok(c) => c,
            Err(e) => {
                sync.fail(e);
                return None;
            }
        };
        let Some(cluster) = found else {
            if sync.has_finalizer(ac::HOSTING_MANIFEST_FINALIZER) {
                self.clean_up_hosting(ctx.mca, false, sync).await;
            }
            if sync.has_finalizer(ac::HOSTING_PRE_DELETE_HOOK_FINALIZER) {
                self.clean_up_hosting(ctx.mca, true, sync).await;
            }
            conditions::set(
                sync.conditions(),
                NewCondition::new(
                    ac::CONDITION_HOSTING_CLUSTER_VALIDITY,
                    ConditionStatus::False,
                    ac::REASON_HOSTING_CLUSTER_INVALID,
                    format!("hosting cluster {hosting} is not a managed cluster of the hub"),
                ),
                ctx.now,
            );
            sync.remove_finalizer(ac::HOSTING_MANIFEST_FINALIZER);
            sync.remove_finalizer(ac::HOSTING_PRE_DELETE_HOOK_FINALIZER);
            return None;
        };
        conditions::set(
            sync.conditions(),
            NewCondition::new(
                ac::CONDITION_HOSTING_CLUSTER_VALIDITY,
                ConditionStatus::True,
                ac::REASON_HOSTING_CLUSTER_VALID,
                format!("hosting cluster {hosting} is a managed cluster of the hub"),
            ),
            ctx.now,
        );
        Some(cluster)
    }

    /// The hosted syncer: the deploy works on the hosting cluster, held by the hosting
    /// finalizer; while the addon or the hosting cluster is being deleted (and no hook holds
    /// them) they go instead.
    async fn sync_hosted_deploy(
        &self,
        ctx: &DeployContext<'_>,
        target: &WorkTarget,
        manifests: &[Manifest],
        configs: &[ManifestConfigOption],
        hosting_cluster: &ManagedCluster,
        sync: &mut AddonSync,
    ) -> HostedDeploy {
        let mca = ctx.mca;
        if !sync.has_finalizer(ac::HOSTING_PRE_DELETE_HOOK_FINALIZER) {
            if hosting_cluster.metadata.deletion_timestamp.is_some()
                || mca.metadata.deletion_timestamp.is_some()
            {
                if sync.has_finalizer(ac::HOSTING_MANIFEST_FINALIZER) {
                    self.clean_up_hosting(mca, false, sync).await;
                }
                sync.remove_finalizer(ac::HOSTING_MANIFEST_FINALIZER);
                return HostedDeploy::Done;
            }
            if ctx.cluster.metadata.deletion_timestamp.is_some() {
                return HostedDeploy::Done;
            }
        }
        if sync.add_finalizer(ac::HOSTING_MANIFEST_FINALIZER) {
            return HostedDeploy::FinalizerAdded;
        }
        let prefix = target.deploy_prefix(mca);
        let current: Vec<ManifestWork> = match self.hosting_works(mca).await {
            Ok(list) => list
                .into_iter()
                .filter(|w| w.name_any().starts_with(&prefix))
                .collect(),
            Err(e) => {
                sync.fail(e);
                return HostedDeploy::Failed;
            }
        };
        self.sync_deploy_works(
            ctx,
            target,
            manifests,
            configs,
            &current,
            ac::CONDITION_HOSTING_MANIFEST_APPLIED,
            sync,
        )
        .await;
        HostedDeploy::Done
    }

    /// The hosted hook syncer: the pre-delete hook work on the hosting cluster, held by its
    /// finalizer, applied once the addon is being deleted; once it completed, the hosting hook
    /// works go and the finalizer is released.
    async fn sync_hosted_hook(
        &self,
        ctx: &DeployContext<'_>,
        target: &WorkTarget,
        manifests: &[Manifest],
        hosting_cluster: &ManagedCluster,
        sync: &mut AddonSync,
    ) {
        let mca = ctx.mca;
        if hosting_cluster.metadata.deletion_timestamp.is_some() {
            if sync.has_finalizer(ac::HOSTING_PRE_DELETE_HOOK_FINALIZER) {
                self.clean_up_hosting(mca, true, sync).await;
            }
            sync.remove_finalizer(ac::HOSTING_PRE_DELETE_HOOK_FINALIZER);
            return;
        }
        let Some(hook) = works::build_hook_work(mca, target, manifests) else {
            sync.remove_finalizer(ac::HOSTING_PRE_DELETE_HOOK_FINALIZER);
            return;
        };
        if mca.metadata.deletion_timestamp.is_none() {
            sync.add_finalizer(ac::HOSTING_PRE_DELETE_HOOK_FINALIZER);
            return;
        }
        if !sync.has_finalizer(ac::HOSTING_PRE_DELETE_HOOK_FINALIZER) {
            return;
        }
        if sync.is_true(ac::CONDITION_HOOK_MANIFEST_COMPLETED) {
            self.clean_up_hosting(mca, true, sync).await;
            sync.remove_finalizer(ac::HOSTING_PRE_DELETE_HOOK_FINALIZER);
            return;
        }
        if let Some(applied) = self
            .apply_work(&hook, ac::CONDITION_HOSTING_MANIFEST_APPLIED, ctx.now, sync)
            .await
        {
            let done = works::hook_work_completed(&applied);
            status::hook_completed(sync.conditions(), &hook.name_any(), done, ctx.now);
        }
    }

    /// Deletes the addon's works on hosting clusters (deploy or hook works).
    async fn clean_up_hosting(&self, mca: &ManagedClusterAddOn, hooks: bool, sync: &mut AddonSync) {
        let hook_prefix = names::pre_delete_work_name(&mca.name_any());
        let list = match self.hosting_works(mca).await {
            Ok(list) => list,
            Err(e) => {
                sync.fail(e);
                return;
            }
        };
        for w in list {
            if w.name_any().starts_with(&hook_prefix) != hooks {
                continue;
            }
            if let Err(e) = self
                .applier
                .delete(&w.namespace().unwrap_or_default(), &w.name_any())
                .await
            {
                sync.fail(e);
            }
        }
    }

    /// The addon's works on hosting clusters (labelled with its namespace), any namespace.
    /// (A work that does not decode is left out and logged.)
    pub(super) async fn hosting_works(
        &self,
        mca: &ManagedClusterAddOn,
    ) -> Result<Vec<ManifestWork>> {
        let ns = mca.namespace().unwrap_or_default();
        let selector = format!(
            "{}={},{}={ns}",
            ac::ADDON_LABEL,
            mca.name_any(),
            ac::ADDON_NAMESPACE_LABEL
        );
        self.list_works(None, &selector, || {
            format!(
                "list hosting ManifestWorks of addon {ns}/{}",
                mca.name_any()
            )
        })
        .await
    }
}
