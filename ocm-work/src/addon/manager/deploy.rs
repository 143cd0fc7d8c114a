//! The deploy chain of one ManagedClusterAddOn (upstream's `addonDeployController`): render
//! the addon's manifests, then the default syncer (the deploy works in the cluster's
//! namespace), the hosted syncers ([`super::hosted`]) and the default hook syncer (the
//! pre-delete hook work), in upstream's order.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::ListParams;
use ocm_api::addon::v1beta1::ManagedClusterAddOn;
use ocm_api::constants::addon as ac;
use ocm_api::work::v1::{Manifest, ManifestConfigOption, ManifestWork};

use super::sync::{AddonSync, DeployContext, Rendered};
use super::{AddonManager, KIND_WORK};
use crate::Error;
use crate::Result;
use crate::addon::status;
use crate::addon::works::{self, WorkTarget};
use crate::read;

impl AddonManager {
    /// The deploy chain. Returns the rendered manifests (empty when rendering failed or was
    /// skipped), which the health check reads.
    pub(super) async fn deploy(
        &self,
        ctx: &DeployContext<'_>,
        sync: &mut AddonSync,
    ) -> Vec<Manifest> {
        let Some(rendered) = self.render(ctx, sync) else {
            return Vec::new();
        };
        let Some(managed) = self.sync_default(ctx, &rendered, sync).await else {
            return rendered.manifests;
        };
        let hold_hooks = ctx.options.hosted_mode_enabled
            && ctx.options.hosted_mode_info.is_some()
            && self.sync_hosted(ctx, &rendered, sync).await;
        if !hold_hooks {
            self.sync_default_hook(ctx, &managed, sync).await;
        }
        rendered.manifests
    }

    /// The addon's manifests and the manifest configs of its works; `None` when the addon is
    /// not configured yet (with the config check on) or its manifests failed (a
    /// `ManifestApplied` condition and an error).
    fn render(&self, ctx: &DeployContext<'_>, sync: &mut AddonSync) -> Option<Rendered> {
        let mca = ctx.mca;
        if ctx.options.config_check_enabled && !sync.is_true(ac::CONDITION_CONFIGURED) {
            tracing::info!(addon = %mca.name_any(), cluster = %mca.namespace().unwrap_or_default(), "Addon configured condition is not set in status");
            return None;
        }
        let manifests = match ctx.addon.manifests(ctx.cluster, mca, ctx.configs) {
            Ok(m) => m,
            Err(e) => {
                let message = format!("{}{e}", ac::MESSAGE_GET_MANIFESTS_FAILED_PREFIX);
                status::manifest_apply_failed(
                    sync.conditions(),
                    ac::CONDITION_MANIFEST_APPLIED,
                    ac::MESSAGE_GET_MANIFESTS_FAILED_PREFIX,
                    &e.to_string(),
                    ctx.now,
                );
                sync.fail(Error::InvalidObject {
                    object: ctx.object(),
                    message,
                });
                return None;
            }
        };
        let mut configs = works::manifest_configs(ctx.options, &manifests);
        for extra in ctx
            .addon
            .extra_manifest_configs(ctx.cluster, mca, ctx.configs)
        {
            if !configs
                .iter()
                .any(|c| c.resource_identifier == extra.resource_identifier)
            {
                configs.push(extra);
            }
        }
        Some(Rendered { manifests, configs })
    }

    /// The default syncer: the deploy works of the manifests that go to the managed cluster,
    /// unless the addon or its cluster is being deleted (and no hook holds them). Returns
    /// those manifests, or `None` when the chain stops here (they could not be sorted, or the
    /// addon's works could not be listed).
    async fn sync_default(
        &self,
        ctx: &DeployContext<'_>,
        rendered: &Rendered,
        sync: &mut AddonSync,
    ) -> Option<Vec<Manifest>> {
        let mca = ctx.mca;
        let managed = works::deployable_manifests(
            &WorkTarget::Managed,
            ctx.options.hosted_mode_enabled,
            ctx.hosting.is_some(),
            &rendered.manifests,
        );
        let managed = match managed {
            Ok(m) => m,
            Err(e) => {
                status::manifest_apply_failed(
                    sync.conditions(),
                    ac::CONDITION_MANIFEST_APPLIED,
                    ac::MESSAGE_BUILD_WORK_FAILED_PREFIX,
                    &e,
                    ctx.now,
                );
                sync.fail(Error::InvalidObject {
                    object: ctx.object(),
                    message: format!("{}{e}", ac::MESSAGE_BUILD_WORK_FAILED_PREFIX),
                });
                return None;
            }
        };
        let existing = match self.addon_works(mca).await {
            Ok(w) => w,
            Err(e) => {
                sync.fail(e);
                return None;
            }
        };
        let deleting = mca.metadata.deletion_timestamp.is_some()
            || ctx.cluster.metadata.deletion_timestamp.is_some();
        if sync.has_finalizer(ac::PRE_DELETE_HOOK_FINALIZER) || !deleting {
            let prefix = WorkTarget::Managed.deploy_prefix(mca);
            let current: Vec<ManifestWork> = existing
                .into_iter()
                .filter(|w| w.name_any().starts_with(&prefix))
                .collect();
            self.sync_deploy_works(
                ctx,
                &WorkTarget::Managed,
                &managed,
                &rendered.configs,
                &current,
                ac::CONDITION_MANIFEST_APPLIED,
                sync,
            )
            .await;
        }
        Some(managed)
    }

    /// The default hook syncer: the pre-delete hook work of the managed cluster's manifests,
    /// held by its finalizer, applied once the addon is being deleted, and the finalizer
    /// released once the hook completed.
    async fn sync_default_hook(
        &self,
        ctx: &DeployContext<'_>,
        managed: &[Manifest],
        sync: &mut AddonSync,
    ) {
        let mca = ctx.mca;
        let Some(hook) = works::build_hook_work(mca, &WorkTarget::Managed, managed) else {
            sync.remove_finalizer(ac::PRE_DELETE_HOOK_FINALIZER);
            return;
        };
        if sync.add_finalizer(ac::PRE_DELETE_HOOK_FINALIZER)
            || mca.metadata.deletion_timestamp.is_none()
        {
            return;
        }
        if let Some(applied) = self
            .apply_work(&hook, ac::CONDITION_MANIFEST_APPLIED, ctx.now, sync)
            .await
        {
            let done = works::hook_work_completed(&applied);
            status::hook_completed(sync.conditions(), &hook.name_any(), done, ctx.now);
            if done {
                sync.remove_finalizer(ac::PRE_DELETE_HOOK_FINALIZER);
            }
        }
    }

    /// Builds, applies and prunes the deploy works of one target; `applied_type` is the
    /// condition that reports them.
    #[allow(clippy::too_many_arguments)] // the works' inputs, one each: no struct reads better
    pub(super) async fn sync_deploy_works(
        &self,
        ctx: &DeployContext<'_>,
        target: &WorkTarget,
        manifests: &[Manifest],
        configs: &[ManifestConfigOption],
        current: &[ManifestWork],
        applied_type: &str,
        sync: &mut AddonSync,
    ) {
        let split =
            works::build_deploy_works(ctx.mca, target, manifests, configs, current, &self.splitter);
        let split = match split {
            Ok(split) => split,
            Err(e) => {
                status::manifest_apply_failed(
                    sync.conditions(),
                    applied_type,
                    ac::MESSAGE_BUILD_WORK_FAILED_PREFIX,
                    &e.to_string(),
                    ctx.now,
                );
                sync.fail(Error::InvalidObject {
                    object: ctx.object(),
                    message: format!("{}{e}", ac::MESSAGE_BUILD_WORK_FAILED_PREFIX),
                });
                return;
            }
        };
        if split.apply.is_empty() {
            status::no_manifest_to_apply(sync.conditions(), applied_type, ctx.now);
        }
        for w in &split.delete {
            if let Err(e) = self
                .applier
                .delete(&w.namespace().unwrap_or_default(), &w.name_any())
                .await
            {
                sync.fail(e);
            }
        }
        for w in &split.apply {
            self.apply_work(w, applied_type, ctx.now, sync).await;
        }
    }

    /// Applies one work and reports it in `applied_type`; the work as written, or `None`
    /// when the write failed (reported, and kept as an error).
    pub(super) async fn apply_work(
        &self,
        work: &ManifestWork,
        applied_type: &str,
        now: &Time,
        sync: &mut AddonSync,
    ) -> Option<ManifestWork> {
        match self.applier.apply(work).await {
            Ok(applied) => {
                status::manifest_applied_from_work(sync.conditions(), applied_type, &applied, now);
                Some(applied)
            }
            Err(e) => {
                status::manifest_apply_failed(
                    sync.conditions(),
                    applied_type,
                    ac::MESSAGE_APPLY_WORK_FAILED_PREFIX,
                    &e.to_string(),
                    now,
                );
                sync.fail(e);
                None
            }
        }
    }

    /// The addon's works in its own namespace (deploy and hook works).
    /// (A work that does not decode is left out and logged.)
    pub(super) async fn addon_works(&self, mca: &ManagedClusterAddOn) -> Result<Vec<ManifestWork>> {
        let ns = mca.namespace().unwrap_or_default();
        let selector = format!(
            "{}={},!{}",
            ac::ADDON_LABEL,
            mca.name_any(),
            ac::ADDON_NAMESPACE_LABEL
        );
        self.list_works(Some(&ns), &selector, || {
            format!("list ManifestWorks of addon {ns}/{}", mca.name_any())
        })
        .await
    }

    /// The ManifestWorks `selector` selects, in `namespace` or all namespaces; `what` names
    /// the list in an error.
    pub(super) async fn list_works(
        &self,
        namespace: Option<&str>,
        selector: &str,
        what: impl FnOnce() -> String,
    ) -> Result<Vec<ManifestWork>> {
        let api = read::api::<ManifestWork>(&self.client, namespace);
        let params = ListParams::default().labels(selector);
        let (works, _) = self.decoder.list(&api, &params, KIND_WORK, what).await?;
        Ok(works)
    }
}
