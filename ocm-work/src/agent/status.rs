//! Refreshing a ManifestWork's status (upstream's available-status controller): every applied
//! resource is read (through the engine's [`ObjectReader`](crate::apply::reader::ObjectReader),
//! or its feedback informer when watched) and the pure [`StatusBuilder`] turns what was read
//! into each manifest's `Available`, `StatusFeedbackSynced` and condition-rule conditions and
//! feedback values, and the work's aggregated conditions. Resources with `feedbackScrapeType:
//! Watch` are registered with the [watch registry](super::watch).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kube::ResourceExt;
use kube::core::GroupVersionKind;
use ocm_api::work::v1::{
    FeedbackScrapeType, ManifestCondition, ManifestConfigOption, ManifestWork, ManifestWorkStatus,
};
use serde_json::Value;

use super::WorkAgent;
use super::watch::watch_key;
use crate::apply::engine::ManifestApply;
use crate::config::{ResourceRef, find_manifest_config};
use crate::discovery::ResolvedResource;
use crate::status::{Observed, StatusBuilder, with_every_field};

impl WorkAgent {
    /// Refreshes `status` from the live objects (see the [module docs](self)); `applied` are
    /// the results of this sync's apply pass, whose resolved kinds and manifest configs are
    /// reused (otherwise each manifest's kind and config are resolved from its status entry,
    /// once). Returns the resource version each manifest's resource was read at, by ordinal
    /// (absent when it was not found or not read).
    pub(super) async fn refresh_status(
        &self,
        work: &ManifestWork,
        builder: &StatusBuilder,
        status: &mut ManifestWorkStatus,
        applied: Option<&[ManifestApply]>,
    ) -> HashMap<i32, String> {
        let mut observed = HashMap::new();
        if !builder.begin_refresh(status) {
            return observed;
        }
        let configs = work.spec.manifest_configs.as_deref().unwrap_or_default();
        let work_name = work.name_any();
        let mut watched = HashSet::new();
        let manifests = status
            .resource_status
            .as_mut()
            .and_then(|r| r.manifests.as_mut());
        for (i, entry) in manifests.into_iter().flatten().enumerate() {
            // An apply pass's entries are its results, in the same order.
            let known = applied
                .and_then(|results| results.get(i))
                .filter(|r| with_every_field(&r.meta) == entry.resource_meta);
            let ordinal = entry.resource_meta.ordinal;
            let (key, version) = self
                .refresh_manifest(&work_name, entry, builder, known, configs)
                .await;
            if let Some(key) = key {
                watched.insert(key);
            }
            if let Some(version) = version {
                observed.insert(ordinal, version);
            }
        }
        self.retain_watches(&work_name, &watched);
        builder.aggregate(status);
        observed
    }

    /// Refreshes one manifest's entry; returns the watch key when its feedback is watched, and
    /// the resource version the resource was read at.
    async fn refresh_manifest(
        &self,
        work_name: &str,
        entry: &mut ManifestCondition,
        builder: &StatusBuilder,
        known: Option<&ManifestApply>,
        configs: &[ManifestConfigOption],
    ) -> (Option<String>, Option<String>) {
        let meta = &entry.resource_meta;
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        let (group, version, kind, resource, namespace, name) = (
            s(&meta.group),
            s(&meta.version),
            s(&meta.kind),
            s(&meta.resource),
            s(&meta.namespace),
            s(&meta.name),
        );
        if resource.is_empty() || version.is_empty() || name.is_empty() {
            builder.refresh_manifest(entry, Observed::IncompleteMeta, None);
            return (None, None);
        }
        let key = watch_key(&group, &resource, &version, &namespace, &name);
        let resolved: Result<Cow<'_, ResolvedResource>, String> =
            match known.and_then(|r| r.resolved.as_ref()) {
                Some(resolved) => Ok(Cow::Borrowed(resolved)),
                None => self
                    .engine
                    .resolver()
                    .resolve(&GroupVersionKind::gvk(&group, &version, &kind))
                    .await
                    .map(Cow::Owned)
                    .map_err(|e| e.to_string()),
            };
        let live: Result<Option<Arc<Value>>, String> = match &resolved {
            Ok(resolved) => self
                .engine
                .reader()
                .get_for_status(resolved, &namespace, &name, self.is_watched(&key))
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        let live = match live {
            Ok(Some(live)) => live,
            Ok(None) => {
                builder.refresh_manifest(entry, Observed::Missing, None);
                return (self.is_watched(&key).then_some(key), None);
            }
            Err(e) => {
                builder.refresh_manifest(entry, Observed::Failed(&e), None);
                return (self.is_watched(&key).then_some(key), None);
            }
        };
        let found;
        let config = match known {
            Some(r) => r.config.as_ref(),
            None => {
                found = find_manifest_config(
                    &ResourceRef {
                        group: &group,
                        resource: &resource,
                        namespace: &namespace,
                        name: &name,
                    },
                    configs,
                );
                found.as_ref()
            }
        };
        let watch = config
            .and_then(|c| c.feedback_scrape_type.as_ref())
            .is_some_and(|t| *t == FeedbackScrapeType::Watch);
        let watched = match (&resolved, watch) {
            (Ok(resolved), true) => self.register_watch(work_name, &key, resolved, &namespace),
            _ => false,
        };
        if let Some(metrics) = &self.metrics
            && config
                .and_then(|c| c.feedback_rules.as_ref())
                .is_some_and(|r| !r.is_empty())
        {
            metrics.feedback_scrape(if watched { "Watch" } else { "Poll" });
        }
        builder.refresh_manifest(entry, Observed::Found(&live), config);
        let version = live
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string);
        (watched.then_some(key), version)
    }

    fn watch_registry(&self) -> std::sync::MutexGuard<'_, super::watch::WatchRegistry> {
        self.watches.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn is_watched(&self, key: &str) -> bool {
        self.watch_registry().is_watched(key)
    }

    /// Registers `work`'s interest in the resource `key`; false when the informer limit is
    /// reached (the resource is then polled, as upstream does silently) or caches are off.
    fn register_watch(
        &self,
        work: &str,
        key: &str,
        resolved: &ResolvedResource,
        namespace: &str,
    ) -> bool {
        let Some(caches) = self.caches.get() else {
            return false;
        };
        self.watch_registry().register(
            &caches.objects,
            self.config.max_feedback_watch,
            work,
            key,
            resolved,
            namespace,
        )
    }

    /// Drops `work`'s watch registrations other than `keep`; informers nobody needs any more
    /// stop unless cached reads use them.
    pub(super) fn retain_watches(&self, work: &str, keep: &HashSet<String>) {
        let unused = self.watch_registry().retain(work, keep);
        if !self.config.cached_reads
            && let Some(caches) = self.caches.get()
        {
            for informer in unused {
                caches.objects.stop(&informer);
            }
        }
    }

    /// The works watching the resource `key`.
    pub(super) fn watching_works(&self, key: &str) -> Vec<String> {
        self.watch_registry().watching(key)
    }
}
