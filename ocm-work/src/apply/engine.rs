//! Applying a ManifestWork's manifests to the managed cluster.
//!
//! A work is applied in two steps, so that what is resolved for a manifest is resolved once per
//! sync and shared with the status refresh:
//!
//! 1. [`ApplyEngine::identify_work`]: decode every manifest, resolve its kind through discovery
//!    and find its manifest config ([`IdentifiedManifest`]);
//! 2. [`ApplyEngine::apply_identified`]: in kind order (results reported under the manifest's
//!    ordinal), skip a manifest whose resource completed, decide whether the work owns it
//!    (delete options), check the work's executor, and hand it to the [`Applier`] the engine's
//!    [`Appliers`] choose for its update strategy (or kind):
//!    * `Update` (default): create, leave alone, or replace ([`super::update`]);
//!    * `CreateOnly`: create when missing, otherwise only adopt it ([`super::create_only`]);
//!    * `ServerSideApply`: server-side apply with `ignoreFields` and the configuration-hash
//!      annotation ([`super::server_side`]);
//!    * `ReadOnly`: nothing is written ([`super::read_only`]).
//!
//! [`ApplyEngine::apply_work`] does both. Live objects are read through the engine's one
//! [`ObjectReader`].
//!
//! [`Applier`]: super::applier::Applier

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::core::GroupVersionKind;
use ocm_api::conditions;
use ocm_api::constants::work as wc;
use ocm_api::work::v1::{Manifest, ManifestConfigOption, ManifestResourceMeta, ManifestWork};
use serde_json::Value;
use std::sync::Arc;

use super::applier::{Appliers, ApplyRequest};
use super::reader::ObjectReader;
use crate::cache::SpokeObjects;
use crate::config::{ResourceRef, find_manifest_config};
use crate::discovery::{ResolvedResource, ResourceResolver};
use crate::order::apply_order;
use crate::owner::{owned_by_the_work, removal_marker};

pub use super::reader::RequestObserver;

/// Why one manifest could not be applied.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The manifest is not a decodable Kubernetes object.
    #[error("{0}")]
    Decode(String),
    /// The cluster does not serve the manifest's kind.
    #[error(transparent)]
    UnknownKind(#[from] crate::discovery::UnknownKind),
    /// The API server refused a request (or a custom applier failed).
    #[error("{0}")]
    Api(String),
    /// Server-side apply found fields owned by another manager (not a sync error upstream).
    #[error("{0}")]
    Conflict(String),
    /// `ignoreFields` could not be processed.
    #[error("{0}")]
    IgnoreField(String),
    /// The work's executor may not apply this resource.
    #[error(transparent)]
    Executor(#[from] crate::executor::ExecutorError),
}

impl From<kube::Error> for ApplyError {
    /// An [`ApplyError::Api`] with the server's message (or the client's error).
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(status) => Self::Api(status.message.clone()),
            other => Self::Api(other.to_string()),
        }
    }
}

/// One manifest of a work, decoded, with its kind resolved and its manifest config found.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IdentifiedManifest {
    /// The manifest's identity (ordinal, group, version, kind, resource, namespace, name).
    pub meta: ManifestResourceMeta,
    /// How its kind resolved, or why it did not (the manifest does not decode, or the cluster
    /// does not serve the kind).
    pub resolved: Result<ResolvedResource, ApplyError>,
    /// Its manifest config (merged from every matching `manifestConfigs` entry), when its
    /// kind resolved and a config applies.
    pub config: Option<ManifestConfigOption>,
}

/// What happened to one manifest.
#[derive(Debug)]
#[non_exhaustive]
pub struct ManifestApply {
    /// The manifest's identity (ordinal, group, version, kind, resource, namespace, name).
    pub meta: ManifestResourceMeta,
    /// How its kind resolved, when it did.
    pub resolved: Option<ResolvedResource>,
    /// Its manifest config, when one applies.
    pub config: Option<ManifestConfigOption>,
    /// The object as applied (or read), or why it failed.
    pub outcome: Result<Value, ApplyError>,
}

impl ManifestApply {
    /// The manifest's `Applied` condition, with upstream's reasons and messages.
    pub fn applied_condition(&self, generation: i64) -> conditions::NewCondition {
        use conditions::{ConditionStatus, NewCondition};
        let c = match &self.outcome {
            Ok(_) => NewCondition::new(
                wc::CONDITION_APPLIED,
                ConditionStatus::True,
                wc::REASON_APPLIED_MANIFEST_COMPLETE,
                wc::MESSAGE_APPLIED_MANIFEST_COMPLETE,
            ),
            Err(ApplyError::IgnoreField(e)) => NewCondition::new(
                wc::CONDITION_APPLIED,
                ConditionStatus::False,
                wc::REASON_APPLIED_MANIFEST_SSA_IGNORE_FIELD_ERROR,
                format!("{}{e}", wc::MESSAGE_IGNORE_FIELD_ERROR_PREFIX),
            ),
            Err(e) => NewCondition::new(
                wc::CONDITION_APPLIED,
                ConditionStatus::False,
                wc::REASON_APPLIED_MANIFEST_FAILED,
                format!("{}{e}", wc::MESSAGE_APPLIED_MANIFEST_FAILED_PREFIX),
            ),
        };
        c.observed_generation(generation)
    }
}

/// Applies manifests to one managed cluster.
#[derive(Clone)]
pub struct ApplyEngine {
    reader: ObjectReader,
    resolver: ResourceResolver,
    executor: crate::executor::ExecutorValidator,
    appliers: Appliers,
}

impl std::fmt::Debug for ApplyEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApplyEngine")
            .field("appliers", &self.appliers)
            .finish_non_exhaustive()
    }
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

impl ApplyEngine {
    /// An engine writing to the cluster behind `client`, with upstream's appliers.
    pub fn new(client: Client) -> Self {
        Self {
            resolver: ResourceResolver::new(client.clone()),
            executor: crate::executor::ExecutorValidator::new(client.clone()),
            reader: ObjectReader::new(client),
            appliers: Appliers::default(),
        }
    }

    /// Applies manifests with `appliers` (see [`super::applier`]).
    #[must_use]
    pub fn with_appliers(mut self, appliers: Appliers) -> Self {
        self.appliers = appliers;
        self
    }

    /// The appliers the engine chooses from.
    pub fn appliers(&self) -> &Appliers {
        &self.appliers
    }

    /// Tells `observer` the verb of every request the engine sends from now on. Returns false
    /// (and changes nothing) when an observer was already set. Shared by the engine's clones.
    pub fn observe_requests(&self, observer: RequestObserver) -> bool {
        self.reader.observe_requests(observer)
    }

    /// Caches executor permission checks in `cache` (feature gate `ExecutorValidatingCaches`;
    /// see [`crate::executor::cache`]).
    #[must_use]
    pub fn with_executor_cache(mut self, cache: crate::executor::cache::ExecutorCache) -> Self {
        self.executor = self.executor.with_cache(cache);
        self
    }

    /// Reads live objects through `objects` from now on (see [`crate::cache`]): a synced cache
    /// answers instead of a GET, and objects the engine writes go into it. Returns false (and
    /// changes nothing) when a cache was already set. Shared by the engine's clones.
    pub fn use_object_cache(&self, objects: SpokeObjects) -> bool {
        self.reader.use_informers(objects, true)
    }

    /// The object cache, once [`ApplyEngine::use_object_cache`] set one.
    pub fn object_cache(&self) -> Option<&SpokeObjects> {
        self.reader.object_cache()
    }

    /// The reader of live objects (shared by the engine's clones).
    pub fn reader(&self) -> &ObjectReader {
        &self.reader
    }

    /// The live object `name` of `resolved` in `namespace`: from the object cache when it
    /// knows, else from the API server.
    pub async fn get_live(
        &self,
        resolved: &ResolvedResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Value>>, kube::Error> {
        self.reader.get(resolved, namespace, name).await
    }

    /// The resolver the engine uses (shared with status and GC code).
    pub fn resolver(&self) -> &ResourceResolver {
        &self.resolver
    }

    /// The dynamic API for `resolved` in `namespace` (cluster-wide when empty).
    pub fn api(&self, resolved: &ResolvedResource, namespace: &str) -> Api<DynamicObject> {
        self.reader.api(resolved, namespace)
    }

    /// Decodes and resolves the manifest at `ordinal`.
    pub async fn identify(
        &self,
        ordinal: usize,
        manifest: &Manifest,
    ) -> (ManifestResourceMeta, Result<ResolvedResource, ApplyError>) {
        let mut meta = ManifestResourceMeta {
            ordinal: i32::try_from(ordinal).unwrap_or(i32::MAX),
            ..Default::default()
        };
        let value = manifest.as_value();
        let (Some(api_version), Some(kind)) = (manifest.api_version(), manifest.kind()) else {
            let message = if !value.is_object() {
                "manifest is not a JSON object".to_string()
            } else {
                "Object 'Kind' is missing in manifest".to_string()
            };
            return (meta, Err(ApplyError::Decode(message)));
        };
        let (group, version) = split_api_version(api_version);
        let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
        meta.group = non_empty(group);
        meta.version = non_empty(version);
        meta.kind = non_empty(kind);
        meta.name = manifest.name().and_then(non_empty);
        meta.namespace = manifest.namespace().and_then(non_empty);
        let gvk = GroupVersionKind::gvk(group, version, kind);
        match self.resolver.resolve(&gvk).await {
            Ok(resolved) => {
                meta.resource = non_empty(&resolved.api_resource.plural);
                if !resolved.namespaced {
                    meta.namespace = None;
                }
                (meta, Ok(resolved))
            }
            Err(e) => (meta, Err(e.into())),
        }
    }

    /// Decodes and resolves every manifest of `work` and finds its manifest config, in
    /// manifest order: once per sync, for the apply pass and the status refresh.
    pub async fn identify_work(&self, work: &ManifestWork) -> Vec<IdentifiedManifest> {
        let configs = work.spec.manifest_configs.as_deref().unwrap_or_default();
        let manifests = work.spec.manifests();
        let mut identified = Vec::with_capacity(manifests.len());
        for (i, manifest) in manifests.iter().enumerate() {
            let (meta, resolved) = self.identify(i, manifest).await;
            let config = resolved
                .is_ok()
                .then(|| find_manifest_config(&resource_ref(&meta), configs))
                .flatten();
            identified.push(IdentifiedManifest {
                meta,
                resolved,
                config,
            });
        }
        identified
    }

    /// Applies every manifest of `work`, owned by the AppliedManifestWork `owner`. Results come
    /// back in manifest order.
    pub async fn apply_work(
        &self,
        work: &ManifestWork,
        owner: &OwnerReference,
    ) -> Vec<ManifestApply> {
        let identified = self.identify_work(work).await;
        self.apply_identified(work, &identified, owner).await
    }

    /// Applies the manifests of `work` as [`ApplyEngine::identify_work`] found them, owned by
    /// the AppliedManifestWork `owner`, in kind order. Results come back in manifest order.
    pub async fn apply_identified(
        &self,
        work: &ManifestWork,
        identified: &[IdentifiedManifest],
        owner: &OwnerReference,
    ) -> Vec<ManifestApply> {
        let manifests = work.spec.manifests();
        let mut results: Vec<Option<ManifestApply>> = (0..identified.len()).map(|_| None).collect();
        for i in apply_order(manifests) {
            let (Some(manifest), Some(identified)) = (manifests.get(i), identified.get(i)) else {
                continue;
            };
            let outcome = match &identified.resolved {
                Err(e) => Err(e.clone()),
                Ok(resolved) => {
                    self.apply_one(work, manifest, identified, resolved, owner)
                        .await
                }
            };
            results[i] = Some(ManifestApply {
                meta: identified.meta.clone(),
                resolved: identified.resolved.as_ref().ok().cloned(),
                config: identified.config.clone(),
                outcome,
            });
        }
        results.into_iter().flatten().collect()
    }

    async fn apply_one(
        &self,
        work: &ManifestWork,
        manifest: &Manifest,
        identified: &IdentifiedManifest,
        resolved: &ResolvedResource,
        owner: &OwnerReference,
    ) -> Result<Value, ApplyError> {
        let meta = &identified.meta;
        let mut required = manifest.as_value().clone();
        if let Some(m) = required.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("uid");
        }
        if completed(work, meta) {
            return Ok(required);
        }
        let ResourceRef {
            group,
            resource,
            namespace,
            name,
        } = resource_ref(meta);
        let owned = owned_by_the_work(
            group,
            resource,
            namespace,
            name,
            work.spec.delete_option.as_ref(),
        );
        let target = crate::executor::Target {
            group,
            version: meta.version.as_deref().unwrap_or_default(),
            resource,
            namespace,
            name,
            owned,
        };
        self.executor
            .validate(work.spec.executor.as_ref(), target, &required)
            .await?;
        let owner = if owned {
            owner.clone()
        } else {
            removal_marker(owner)
        };
        let config = identified.config.as_ref();
        let strategy = config
            .and_then(|c| c.update_strategy.as_ref())
            .map(|s| s.type_.clone())
            .unwrap_or_default();
        let kind = meta.kind.as_deref().unwrap_or_default();
        // A strategy with no applier (one a newer OCM added, or a custom one nobody
        // registered) leaves the manifest not applied, with the strategy named.
        let Some(applier) = self.appliers.get(&strategy, group, kind) else {
            return Err(ApplyError::Api(format!(
                "no applier for the update strategy {strategy}"
            )));
        };
        let request = ApplyRequest {
            work,
            meta,
            resolved,
            required,
            owner: &owner,
            config,
            reader: &self.reader,
            namespace,
            name,
        };
        applier.apply(request).await
    }
}

/// The manifest's group, resource, namespace and name as the config lookup, the executor and
/// the delete options see them (`""` when absent).
fn resource_ref(meta: &ManifestResourceMeta) -> ResourceRef<'_> {
    fn s(v: &Option<String>) -> &str {
        v.as_deref().unwrap_or_default()
    }
    ResourceRef {
        group: s(&meta.group),
        resource: s(&meta.resource),
        namespace: s(&meta.namespace),
        name: s(&meta.name),
    }
}

/// Whether the stored status says this manifest's resource completed (condition rule
/// `Complete=True`): completed manifests are not applied again.
fn completed(work: &ManifestWork, meta: &ManifestResourceMeta) -> bool {
    let Some(manifests) = work
        .status
        .as_ref()
        .and_then(|s| s.resource_status.as_ref())
        .and_then(|r| r.manifests.as_ref())
    else {
        return false;
    };
    manifests.iter().any(|m| {
        let a = &m.resource_meta;
        a.group == meta.group
            && a.version == meta.version
            && a.kind == meta.kind
            && a.resource == meta.resource
            && a.name == meta.name
            && a.namespace == meta.namespace
            && conditions::is_true(&m.conditions, wc::CONDITION_COMPLETE)
    })
}

pub(crate) fn from_value(value: Value) -> Result<DynamicObject, ApplyError> {
    serde_json::from_value(value).map_err(|e| ApplyError::Decode(e.to_string()))
}
