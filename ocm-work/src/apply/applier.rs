//! Appliers: how one manifest is written to the managed cluster, one per update strategy, and
//! the registry the [`ApplyEngine`](super::engine::ApplyEngine) picks them from.
//!
//! The engine does everything that is the same for every strategy (decoding the manifest,
//! resolving its kind, the delete option's owner reference or removal marker, the executor's
//! permission check, skipping a manifest whose resource completed, the manifest config) and
//! then hands an [`ApplyRequest`] to the [`Applier`] chosen by [`Appliers`]. The built-in
//! appliers are upstream's four strategies:
//!
//! | strategy | applier |
//! |---|---|
//! | `Update` (the default) | [`UpdateApplier`] |
//! | `CreateOnly` | [`CreateOnlyApplier`] |
//! | `ServerSideApply` | [`ServerSideApplier`] |
//! | `ReadOnly` | [`ReadOnlyApplier`] |
//!
//! # Custom appliers (our addition)
//!
//! Upstream's set of appliers is fixed. Here an applier is any type implementing [`Applier`],
//! and [`Appliers`] can replace the one used for an update strategy
//! ([`Appliers::with_strategy`]) or for one group and kind, whatever the strategy
//! ([`Appliers::with_kind`], which wins over the strategy's). Give the registry to the agent
//! with [`WorkAgent::with_appliers`](crate::agent::WorkAgent::with_appliers) (or to an engine
//! with [`ApplyEngine::with_appliers`](super::engine::ApplyEngine::with_appliers)).
//!
//! An applier returns the object as it is on the cluster after the apply (or as it was read):
//! its `metadata.uid` is recorded in the AppliedManifestWork (when absent, the agent reads the
//! live object's), and its `metadata.resourceVersion` lets the agent skip later syncs while
//! nothing changed. An error is reported on the manifest's `Applied` condition
//! (`AppliedManifestFailed`) and the manifest is applied again at the next status sync. The
//! built-in appliers are public, so a custom one can do its part and delegate the rest:
//!
//! ```
//! use futures::future::BoxFuture;
//! use ocm_work::apply::applier::{Applier, ApplyRequest, Appliers};
//! use ocm_work::apply::engine::ApplyError;
//! use ocm_work::apply::update::UpdateApplier;
//! use serde_json::{Value, json};
//!
//! /// Labels every Deployment it applies, then applies it as `Update` does.
//! struct Labelled;
//!
//! impl Applier for Labelled {
//!     fn apply<'a>(&'a self, mut request: ApplyRequest<'a>) -> BoxFuture<'a, Result<Value, ApplyError>> {
//!         Box::pin(async move {
//!             if let Some(meta) = request.required.get_mut("metadata").and_then(Value::as_object_mut) {
//!                 let labels = meta.entry("labels").or_insert_with(|| json!({}));
//!                 labels["example.com/applied-by"] = json!("labelled");
//!             }
//!             UpdateApplier.apply(request).await
//!         })
//!     }
//! }
//!
//! let appliers = Appliers::default().with_kind("apps", "Deployment", Labelled);
//! // WorkAgent::new(hub, spoke, config).with_appliers(appliers)
//! # let _ = appliers;
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use ocm_api::work::v1::{
    ManifestConfigOption, ManifestResourceMeta, ManifestWork, UpdateStrategyType,
};
use serde_json::Value;

use super::create_only::CreateOnlyApplier;
use super::engine::ApplyError;
use super::read_only::ReadOnlyApplier;
use super::reader::ObjectReader;
use super::server_side::ServerSideApplier;
use super::update::UpdateApplier;
use crate::discovery::ResolvedResource;

/// Writes one manifest to the managed cluster (see the [module docs](self)).
///
/// The future may borrow from the applier and the request; box it with `Box::pin(async move
/// { ... })`.
pub trait Applier: Send + Sync + 'static {
    /// Applies `request.required` and returns the object as it is on the cluster afterwards
    /// (or as it was read when nothing was written).
    fn apply<'a>(&'a self, request: ApplyRequest<'a>) -> BoxFuture<'a, Result<Value, ApplyError>>;
}

/// One manifest to apply, with what the engine resolved for it and access to the cluster.
#[derive(Debug)]
#[non_exhaustive]
pub struct ApplyRequest<'a> {
    /// The work the manifest belongs to.
    pub work: &'a ManifestWork,
    /// The manifest's identity (ordinal, group, version, kind, resource, namespace, name).
    pub meta: &'a ManifestResourceMeta,
    /// The resource that serves the manifest's kind.
    pub resolved: &'a ResolvedResource,
    /// The manifest as JSON (without `metadata.uid`): what the cluster should have.
    pub required: Value,
    /// The owner reference to the work's AppliedManifestWork, or its removal marker (see
    /// [`crate::owner`]) when the work's delete option orphans the resource.
    pub owner: &'a OwnerReference,
    /// The manifest's config, merged from every matching `manifestConfigs` entry, if any.
    pub config: Option<&'a ManifestConfigOption>,
    pub(crate) reader: &'a ObjectReader,
    pub(crate) namespace: &'a str,
    pub(crate) name: &'a str,
}

impl ApplyRequest<'_> {
    /// The update strategy the manifest's config asks for (`Update` when none does).
    pub fn strategy(&self) -> UpdateStrategyType {
        self.config
            .and_then(|c| c.update_strategy.as_ref())
            .map(|s| s.type_.clone())
            .unwrap_or_default()
    }

    /// The object's namespace (`""` when cluster-scoped).
    pub fn namespace(&self) -> &str {
        self.namespace
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The reader of live objects the engine uses.
    pub fn reader(&self) -> &ObjectReader {
        self.reader
    }

    /// The dynamic API of the object's resource and namespace.
    pub fn api(&self) -> Api<DynamicObject> {
        self.reader.api(self.resolved, self.namespace)
    }

    /// Reads the live object; `fresh` skips the informer. The flag says whether an informer
    /// answered: a write planned from its copy that the server refuses as stale (a conflict,
    /// or not found) is worth retrying from a fresh read.
    pub async fn read(&self, fresh: bool) -> Result<(Option<Arc<Value>>, bool), ApplyError> {
        self.reader
            .read(self.resolved, self.namespace, self.name, fresh)
            .await
            .map_err(ApplyError::from)
    }

    /// Counts one request the applier sends (`create`, `update`, `patch`, `apply`, ...), for
    /// the agent's metrics.
    pub fn count(&self, verb: &'static str) {
        self.reader.count(verb);
    }

    /// Converts an object the server returned from a write to JSON, and records it in the
    /// informer (so the next read sees the agent's own write).
    pub fn written(&self, object: &DynamicObject) -> Result<Value, ApplyError> {
        let value = serde_json::to_value(object).map_err(|e| ApplyError::Decode(e.to_string()))?;
        self.reader.record(self.resolved, self.namespace, &value);
        Ok(value)
    }

    /// Merges [`ApplyRequest::owner`] into `object`'s owner references and patches them only
    /// when they change (with the object's uid and resourceVersion as preconditions). Returns
    /// the object as it is afterwards.
    pub async fn set_owner(&self, object: &Value) -> Result<Value, ApplyError> {
        let Some(patch) = super::metadata::owner_references_patch(object, self.owner) else {
            return Ok(object.clone());
        };
        self.count("patch");
        let patched = self
            .api()
            .patch(self.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(ApplyError::from)?;
        self.written(&patched)
    }
}

/// The appliers an engine chooses from: one per update strategy, and overrides per group and
/// kind (see the [module docs](self)). [`Appliers::default`] holds upstream's four.
#[derive(Clone)]
pub struct Appliers {
    by_strategy: HashMap<UpdateStrategyType, Arc<dyn Applier>>,
    by_kind: HashMap<(String, String), Arc<dyn Applier>>,
}

impl std::fmt::Debug for Appliers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut kinds: Vec<_> = self.by_kind.keys().collect();
        kinds.sort();
        f.debug_struct("Appliers")
            .field("kinds", &kinds)
            .finish_non_exhaustive()
    }
}

impl Default for Appliers {
    /// Upstream's appliers: [`UpdateApplier`], [`CreateOnlyApplier`], [`ServerSideApplier`]
    /// and [`ReadOnlyApplier`], and no override per kind.
    fn default() -> Self {
        let by_strategy: HashMap<UpdateStrategyType, Arc<dyn Applier>> = HashMap::from([
            (
                UpdateStrategyType::Update,
                Arc::new(UpdateApplier) as Arc<dyn Applier>,
            ),
            (UpdateStrategyType::CreateOnly, Arc::new(CreateOnlyApplier)),
            (
                UpdateStrategyType::ServerSideApply,
                Arc::new(ServerSideApplier),
            ),
            (UpdateStrategyType::ReadOnly, Arc::new(ReadOnlyApplier)),
        ]);
        Self {
            by_strategy,
            by_kind: HashMap::new(),
        }
    }
}

impl Appliers {
    /// Uses `applier` for manifests whose update strategy is `strategy` (unless a kind
    /// override applies to them).
    #[must_use]
    pub fn with_strategy(mut self, strategy: UpdateStrategyType, applier: impl Applier) -> Self {
        self.by_strategy.insert(strategy, Arc::new(applier));
        self
    }

    /// Uses `applier` for every manifest of `group` (`""` for the core group) and `kind`,
    /// whatever its update strategy (`ReadOnly` included: the applier can read
    /// [`ApplyRequest::strategy`] and delegate to the built-in one).
    #[must_use]
    pub fn with_kind(
        mut self,
        group: impl Into<String>,
        kind: impl Into<String>,
        applier: impl Applier,
    ) -> Self {
        self.by_kind
            .insert((group.into(), kind.into()), Arc::new(applier));
        self
    }

    /// The applier for a manifest of `group` and `kind` with update strategy `strategy`: the
    /// kind's override, else the strategy's; `None` when neither exists.
    pub fn get(
        &self,
        strategy: &UpdateStrategyType,
        group: &str,
        kind: &str,
    ) -> Option<&Arc<dyn Applier>> {
        if !self.by_kind.is_empty()
            && let Some(applier) = self.by_kind.get(&(group.to_string(), kind.to_string()))
        {
            return Some(applier);
        }
        self.by_strategy.get(strategy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Answers with its name instead of applying.
    struct Named(&'static str);

    impl Applier for Named {
        fn apply<'a>(
            &'a self,
            _request: ApplyRequest<'a>,
        ) -> BoxFuture<'a, Result<Value, ApplyError>> {
            Box::pin(async move { Ok(json!(self.0)) })
        }
    }

    /// What the applier `appliers` picks for (strategy, group, kind) answers.
    async fn picked(
        appliers: &Appliers,
        strategy: UpdateStrategyType,
        group: &str,
        kind: &str,
    ) -> Value {
        let cluster = ocm_testkit::FakeCluster::new();
        let reader = ObjectReader::new(cluster.client());
        let work = ManifestWork::default();
        let meta = ManifestResourceMeta::default();
        let resolved = ResolvedResource {
            api_resource: kube::core::ApiResource {
                group: group.into(),
                version: "v1".into(),
                api_version: "v1".into(),
                kind: kind.into(),
                plural: "things".into(),
            },
            namespaced: true,
        };
        let owner = crate::owner::applied_manifest_work_ref("amw", "uid");
        let request = ApplyRequest {
            work: &work,
            meta: &meta,
            resolved: &resolved,
            required: json!("required"),
            owner: &owner,
            config: None,
            reader: &reader,
            namespace: "default",
            name: "x",
        };
        match appliers.get(&strategy, group, kind) {
            Some(applier) => applier
                .apply(request)
                .await
                .unwrap_or_else(|e| json!(e.to_string())),
            None => Value::Null,
        }
    }

    #[tokio::test]
    async fn kind_overrides_win_over_strategies() {
        use UpdateStrategyType::*;
        // ReadOnly writes nothing: it answers with the required object.
        let appliers = Appliers::default();
        assert_eq!(
            picked(&appliers, ReadOnly, "apps", "Deployment").await,
            "required"
        );

        let appliers = appliers
            .with_strategy(CreateOnly, Named("create-only"))
            .with_kind("apps", "Deployment", Named("deployments"));
        for strategy in [Update, CreateOnly, ServerSideApply, ReadOnly] {
            assert_eq!(
                picked(&appliers, strategy, "apps", "Deployment").await,
                "deployments"
            );
        }
        assert_eq!(
            picked(&appliers, CreateOnly, "", "ConfigMap").await,
            "create-only"
        );
        // The override is per group and kind: another group's Deployment keeps its strategy's.
        assert_eq!(
            picked(&appliers, CreateOnly, "example.com", "Deployment").await,
            "create-only"
        );
        assert_eq!(
            picked(&appliers, ReadOnly, "", "ConfigMap").await,
            "required"
        );
        assert!(format!("{appliers:?}").contains("Deployment"));
    }

    #[tokio::test]
    async fn a_strategy_this_sdk_does_not_know_has_an_applier_only_when_one_is_registered() {
        let replace = UpdateStrategyType::from("Replace");
        assert!(replace.is_unknown());
        let appliers = Appliers::default();
        assert_eq!(
            picked(&appliers, replace.clone(), "", "ConfigMap").await,
            Value::Null
        );
        let appliers = appliers.with_strategy(replace.clone(), Named("replace"));
        assert_eq!(picked(&appliers, replace, "", "ConfigMap").await, "replace");
    }
}
