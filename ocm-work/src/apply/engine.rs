//! Applying a ManifestWork's manifests to the managed cluster.
//!
//! For each manifest (in kind order, results reported under the manifest's ordinal): decode
//! it, resolve its kind through discovery, decide whether the work owns it (delete options),
//! find its manifest config, and apply it with its update strategy:
//!
//! * `Update` (default): create, leave alone, or replace ([`super::update`]);
//! * `CreateOnly`: create when missing, otherwise only adopt it (owner reference);
//! * `ServerSideApply`: server-side apply with the configured field manager and `force`, with
//!   `ignoreFields` (JSON paths of plain fields, JSON pointers and jq path expressions, see
//!   [`super::jq`]) and the configuration-hash annotation;
//! * `ReadOnly`: nothing is written.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use ocm_api::conditions;
use ocm_api::constants::{annotations, work as wc};
use ocm_api::work::v1::{
    IgnoreFieldsCondition, Manifest, ManifestResourceMeta, ManifestWork, ServerSideApplyConfig,
    UpdateStrategyType,
};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

use super::hash::config_hash;
use super::metadata::{remove_null_creation_timestamps, strip_removal_instructions};
use super::update::{UpdatePlan, plan_update};
use crate::cache::SpokeObjects;
use crate::config::{ResourceRef, find_manifest_config};
use crate::discovery::{ResolvedResource, ResourceResolver};
use crate::order::apply_order;
use crate::owner::{merge_owner_refs, owned_by_the_work, removal_marker};

/// Why one manifest could not be applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The manifest is not a decodable Kubernetes object.
    #[error("{0}")]
    Decode(String),
    /// The cluster does not serve the manifest's kind.
    #[error(transparent)]
    UnknownKind(#[from] crate::discovery::UnknownKind),
    /// The API server refused a request.
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

impl ApplyError {
    fn api(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(status) => Self::Api(status.message.clone()),
            other => Self::Api(other.to_string()),
        }
    }
}

/// What happened to one manifest.
#[derive(Debug)]
pub struct ManifestApply {
    /// The manifest's identity (ordinal, group, version, kind, resource, namespace, name).
    pub meta: ManifestResourceMeta,
    /// How its kind resolved, when it did.
    pub resolved: Option<ResolvedResource>,
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
    client: Client,
    resolver: ResourceResolver,
    executor: crate::executor::ExecutorValidator,
    objects: Arc<OnceLock<SpokeObjects>>,
    requests: Arc<OnceLock<RequestObserver>>,
}

/// Told the verb of every request the engine sends (`get`, `create`, `update`, `patch`,
/// `apply`), for metrics.
pub type RequestObserver = Arc<dyn Fn(&'static str) + Send + Sync>;

impl std::fmt::Debug for ApplyEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApplyEngine").finish_non_exhaustive()
    }
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

impl ApplyEngine {
    /// An engine writing to the cluster behind `client`.
    pub fn new(client: Client) -> Self {
        Self {
            resolver: ResourceResolver::new(client.clone()),
            executor: crate::executor::ExecutorValidator::new(client.clone()),
            objects: Arc::new(OnceLock::new()),
            requests: Arc::new(OnceLock::new()),
            client,
        }
    }

    /// Tells `observer` the verb of every request the engine sends from now on. Returns false
    /// (and changes nothing) when an observer was already set. Shared by the engine's clones.
    pub fn observe_requests(&self, observer: RequestObserver) -> bool {
        self.requests.set(observer).is_ok()
    }

    fn count(&self, verb: &'static str) {
        if let Some(observer) = self.requests.get() {
            observer(verb);
        }
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
        self.objects.set(objects).is_ok()
    }

    /// The object cache, once [`ApplyEngine::use_object_cache`] set one.
    pub fn object_cache(&self) -> Option<&SpokeObjects> {
        self.objects.get()
    }

    /// The live object `name` of `resolved` in `namespace`: from the object cache when it
    /// knows, else from the API server.
    pub async fn get_live(
        &self,
        resolved: &ResolvedResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Value>>, kube::Error> {
        Ok(self.read(resolved, namespace, name, false).await?.0)
    }

    /// Reads a live object; `fresh` skips the cache. The flag says whether the cache answered.
    async fn read(
        &self,
        resolved: &ResolvedResource,
        namespace: &str,
        name: &str,
        fresh: bool,
    ) -> Result<(Option<Arc<Value>>, bool), kube::Error> {
        if !fresh
            && let Some(objects) = self.objects.get()
            && let Some(known) = objects.lookup(resolved, namespace, name).known()
        {
            return Ok((known, true));
        }
        self.count("get");
        let live = self.api(resolved, namespace).get_opt(name).await?;
        let live = match live {
            Some(object) => {
                let value = serde_json::to_value(object).map_err(kube::Error::SerdeError)?;
                self.record(resolved, namespace, &value);
                Some(Arc::new(value))
            }
            None => None,
        };
        Ok((live, false))
    }

    fn record(&self, resolved: &ResolvedResource, namespace: &str, object: &Value) {
        if let Some(objects) = self.objects.get() {
            objects.record(resolved, namespace, object);
        }
    }

    /// The resolver the engine uses (shared with status and GC code).
    pub fn resolver(&self) -> &ResourceResolver {
        &self.resolver
    }

    /// The dynamic API for `resolved` in `namespace` (cluster-wide when empty).
    pub fn api(&self, resolved: &ResolvedResource, namespace: &str) -> Api<DynamicObject> {
        if resolved.namespaced && !namespace.is_empty() {
            Api::namespaced_with(self.client.clone(), namespace, &resolved.api_resource)
        } else {
            Api::all_with(self.client.clone(), &resolved.api_resource)
        }
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

    /// Applies every manifest of `work`, owned by the AppliedManifestWork `owner`. Results come
    /// back in manifest order.
    pub async fn apply_work(
        &self,
        work: &ManifestWork,
        owner: &OwnerReference,
    ) -> Vec<ManifestApply> {
        let manifests = work.spec.manifests();
        let mut results: Vec<Option<ManifestApply>> = (0..manifests.len()).map(|_| None).collect();
        let mut identified = Vec::with_capacity(manifests.len());
        for (i, manifest) in manifests.iter().enumerate() {
            identified.push(self.identify(i, manifest).await);
        }
        for i in apply_order(manifests) {
            let (meta, resolved) = &identified[i];
            let result = match resolved {
                Err(e) => ManifestApply {
                    meta: meta.clone(),
                    resolved: None,
                    outcome: Err(match e {
                        ApplyError::Decode(m) => ApplyError::Decode(m.clone()),
                        ApplyError::UnknownKind(k) => ApplyError::UnknownKind(k.clone()),
                        other => ApplyError::Api(other.to_string()),
                    }),
                },
                Ok(resolved) => ManifestApply {
                    meta: meta.clone(),
                    resolved: Some(resolved.clone()),
                    outcome: self
                        .apply_one(work, &manifests[i], meta, resolved, owner)
                        .await,
                },
            };
            results[i] = Some(result);
        }
        results.into_iter().flatten().collect()
    }

    async fn apply_one(
        &self,
        work: &ManifestWork,
        manifest: &Manifest,
        meta: &ManifestResourceMeta,
        resolved: &ResolvedResource,
        owner: &OwnerReference,
    ) -> Result<Value, ApplyError> {
        let mut required = manifest.as_value().clone();
        if let Some(m) = required.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("uid");
        }
        if completed(work, meta) {
            return Ok(required);
        }
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        let (group, resource, namespace, name) = (
            s(&meta.group),
            s(&meta.resource),
            s(&meta.namespace),
            s(&meta.name),
        );
        let owned = owned_by_the_work(
            &group,
            &resource,
            &namespace,
            &name,
            work.spec.delete_option.as_ref(),
        );
        let target = crate::executor::Target {
            group: &group,
            version: meta.version.as_deref().unwrap_or_default(),
            resource: &resource,
            namespace: &namespace,
            name: &name,
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
        let config = find_manifest_config(
            &ResourceRef {
                group: &group,
                resource: &resource,
                namespace: &namespace,
                name: &name,
            },
            work.spec.manifest_configs.as_deref().unwrap_or_default(),
        );
        let strategy = config.as_ref().and_then(|c| c.update_strategy.clone());
        let target = Live {
            api: self.api(resolved, &namespace),
            resolved,
            namespace: &namespace,
            name: &name,
        };
        match strategy
            .as_ref()
            .map(|s| s.type_)
            .unwrap_or(UpdateStrategyType::Update)
        {
            UpdateStrategyType::ReadOnly => Ok(required),
            UpdateStrategyType::CreateOnly => self.create_only(&target, required, &owner).await,
            UpdateStrategyType::ServerSideApply => {
                let ssa = strategy
                    .and_then(|s| s.server_side_apply)
                    .unwrap_or_default();
                self.server_side_apply(&target, required, &owner, &ssa)
                    .await
            }
            UpdateStrategyType::Update => self.update(&target, &required, &owner).await,
        }
    }

    async fn update(
        &self,
        target: &Live<'_>,
        required: &Value,
        owner: &OwnerReference,
    ) -> Result<Value, ApplyError> {
        let mut fresh = false;
        loop {
            let (live, cached) = target.read(self, fresh).await?;
            // A refusal caused by a stale cached copy is retried once against the server.
            let retry = |e: &kube::Error, code: u16| {
                cached && matches!(e, kube::Error::Api(s) if s.code == code)
            };
            match plan_update(required, owner, live.as_deref()) {
                UpdatePlan::Create(object) => {
                    self.count("create");
                    match target
                        .api
                        .create(&PostParams::default(), &from_value(object)?)
                        .await
                    {
                        Ok(created) => return target.written(self, &created),
                        Err(e) if retry(&e, 409) => fresh = true,
                        Err(e) => return Err(ApplyError::api(e)),
                    }
                }
                UpdatePlan::Replace(object) => {
                    self.count("update");
                    match target
                        .api
                        .replace(target.name, &PostParams::default(), &from_value(object)?)
                        .await
                    {
                        Ok(replaced) => return target.written(self, &replaced),
                        Err(e) if retry(&e, 409) || retry(&e, 404) => fresh = true,
                        Err(e) => return Err(ApplyError::api(e)),
                    }
                }
                _ => {
                    return live
                        .map(|l| (*l).clone())
                        .ok_or_else(|| ApplyError::Api(format!("{} vanished", target.name)));
                }
            }
        }
    }

    async fn create_only(
        &self,
        target: &Live<'_>,
        mut required: Value,
        owner: &OwnerReference,
    ) -> Result<Value, ApplyError> {
        let mut fresh = false;
        loop {
            let (live, cached) = target.read(self, fresh).await?;
            let live = match live {
                Some(live) => live,
                None => {
                    if let Some(m) = required.get_mut("metadata").and_then(Value::as_object_mut) {
                        m.insert("ownerReferences".into(), json!([owner]));
                    }
                    strip_removal_instructions(&mut required);
                    self.count("create");
                    match target
                        .api
                        .create(&PostParams::default(), &from_value(required.clone())?)
                        .await
                    {
                        Ok(created) => Arc::new(target.written(self, &created)?),
                        Err(kube::Error::Api(s)) if cached && s.code == 409 => {
                            fresh = true;
                            continue;
                        }
                        Err(e) => return Err(ApplyError::api(e)),
                    }
                }
            };
            match self.apply_owner_references(target, &live, owner).await {
                Err(ApplyError::Api(_)) if cached && !fresh => fresh = true,
                other => return other,
            }
        }
    }

    /// Merges `owner` into the object's owner references and patches only when they change.
    async fn apply_owner_references(
        &self,
        target: &Live<'_>,
        object: &Value,
        owner: &OwnerReference,
    ) -> Result<Value, ApplyError> {
        let metadata = object.get("metadata");
        let existing: Vec<OwnerReference> = metadata
            .and_then(|m| m.get("ownerReferences"))
            .and_then(|o| serde_json::from_value(o.clone()).ok())
            .unwrap_or_default();
        let (merged, changed) = merge_owner_refs(&existing, std::slice::from_ref(owner));
        if !changed {
            return Ok(object.clone());
        }
        let patch = json!({"metadata": {
            "uid": metadata.and_then(|m| m.get("uid")),
            "resourceVersion": metadata.and_then(|m| m.get("resourceVersion")),
            "ownerReferences": merged,
        }});
        self.count("patch");
        let patched = target
            .api
            .patch(target.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(ApplyError::api)?;
        target.written(self, &patched)
    }

    async fn server_side_apply(
        &self,
        target: &Live<'_>,
        mut manifest: Value,
        owner: &OwnerReference,
        ssa: &ServerSideApplyConfig,
    ) -> Result<Value, ApplyError> {
        remove_null_creation_timestamps(&mut manifest);
        if let Some(m) = manifest.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        let field_manager = ssa
            .field_manager
            .clone()
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| wc::DEFAULT_FIELD_MANAGER.to_string());
        let mut params = PatchParams::apply(&field_manager);
        if ssa.force.unwrap_or(false) {
            params = params.force();
        }
        let ignore = ssa.ignore_fields.as_deref().unwrap_or_default();
        let mut to_apply = manifest.clone();
        if !ignore.is_empty() {
            let mut required = manifest.clone();
            for field in ignore
                .iter()
                .filter(|f| f.condition == IgnoreFieldsCondition::OnSpokePresent)
            {
                for path in field.json_paths.iter().flatten() {
                    remove_json_path(&mut required, path);
                }
                for pointer in field.json_pointers.iter().flatten() {
                    remove_json_pointer(&mut required, pointer)?;
                }
                for expr in field.jq_path_expressions.iter().flatten() {
                    required = delete_jq_paths(required, expr).await?;
                }
            }
            let hash = config_hash(&required);
            for object in [&mut required, &mut manifest] {
                if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
                    if let Some(map) = annotations.as_object_mut() {
                        map.insert(
                            annotations::CONFIG_SPEC_HASH.into(),
                            Value::String(hash.clone()),
                        );
                    }
                }
            }
            match target.read(self, false).await?.0 {
                None => to_apply = manifest,
                Some(live) => {
                    let same = live
                        .pointer("/metadata/annotations")
                        .and_then(|a| a.get(annotations::CONFIG_SPEC_HASH))
                        .and_then(Value::as_str)
                        == Some(hash.as_str());
                    if same {
                        match self.apply_owner_references(target, &live, owner).await {
                            Ok(v) => return Ok(v),
                            // The cached copy may be stale: apply for real below.
                            Err(_) => to_apply = required,
                        }
                    } else {
                        to_apply = required;
                    }
                }
            }
        }
        self.count("apply");
        let applied = match target
            .api
            .patch(target.name, &params, &Patch::Apply(&to_apply))
            .await
        {
            Ok(obj) => target.written(self, &obj)?,
            Err(kube::Error::Api(status)) if status.code == 409 => {
                return Err(ApplyError::Conflict(status.message.clone()));
            }
            Err(e) => return Err(ApplyError::api(e)),
        };
        self.apply_owner_references(target, &applied, owner).await
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

/// Removes the field a Kubernetes JSONPath names from `object`, as upstream's work agent does:
/// the path is split on `.`, its last segment is the key to delete, and the rest (the parent
/// path, filters and indexes included) is evaluated as a kubectl JSONPath with missing keys
/// allowed; the key is deleted from every map it yields. Hence, as upstream: a path ending in a
/// filter or an index removes nothing (its "parent" does not parse), a dot inside a filter's
/// literal breaks the split, and a path that does not parse removes nothing (upstream logs the
/// parse error; so does this, at debug level).
fn remove_json_path(object: &mut Value, path: &str) {
    let last = path.rsplit('.').next().unwrap_or(path);
    let parent = path.strip_suffix(&format!(".{last}")).unwrap_or(path);
    let template = match ocm_feedback::jsonpath::Template::parse(&format!("{{{parent}}}")) {
        Ok(template) => template.allow_missing_keys(true),
        Err(error) => {
            tracing::debug!(path, parent, %error, "ignoreFields JSONPath does not parse; nothing removed");
            return;
        }
    };
    // The maps the parent path selects, by address: found with shared borrows, then deleted
    // from in one mutable walk of the object.
    let targets: std::collections::HashSet<usize> = match template.find_results(object) {
        Ok(results) => results
            .iter()
            .flatten()
            .filter_map(|m| m.as_json())
            .filter(|v| v.is_object())
            .map(|v| std::ptr::from_ref(v) as usize)
            .collect(),
        Err(error) => {
            tracing::debug!(path, parent, %error, "ignoreFields JSONPath failed; nothing removed");
            return;
        }
    };
    if targets.is_empty() {
        return;
    }
    let mut stack: Vec<&mut Value> = vec![object];
    while let Some(node) = stack.pop() {
        let address = std::ptr::from_ref::<Value>(node) as usize;
        if targets.contains(&address)
            && let Some(map) = node.as_object_mut()
        {
            map.remove(last);
        }
        match node {
            Value::Object(map) => stack.extend(map.values_mut()),
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

fn remove_json_pointer(object: &mut Value, pointer: &str) -> Result<(), ApplyError> {
    if object.pointer(pointer).is_none() {
        return Ok(());
    }
    let patch: json_patch::Patch =
        serde_json::from_value(json!([{"op": "remove", "path": pointer}])).map_err(|e| {
            ApplyError::IgnoreField(format!("JSON Pointer error in '{pointer}': {e}"))
        })?;
    json_patch::patch(object, &patch)
        .map_err(|e| ApplyError::IgnoreField(format!("JSON Pointer error in '{pointer}': {e}")))
}

/// The object one manifest applies to, and how to reach it.
struct Live<'a> {
    api: Api<DynamicObject>,
    resolved: &'a ResolvedResource,
    namespace: &'a str,
    name: &'a str,
}

impl Live<'_> {
    async fn read(
        &self,
        engine: &ApplyEngine,
        fresh: bool,
    ) -> Result<(Option<Arc<Value>>, bool), ApplyError> {
        engine
            .read(self.resolved, self.namespace, self.name, fresh)
            .await
            .map_err(ApplyError::api)
    }

    /// Converts an object the server returned from a write, and records it in the cache.
    fn written(&self, engine: &ApplyEngine, object: &DynamicObject) -> Result<Value, ApplyError> {
        let value = to_value(object)?;
        engine.record(self.resolved, self.namespace, &value);
        Ok(value)
    }
}

/// `del(<expr>)` on `object`, off the async threads (an expression may run for up to 1 s).
async fn delete_jq_paths(mut object: Value, expr: &str) -> Result<Value, ApplyError> {
    let owned = expr.to_string();
    let result = tokio::task::spawn_blocking(move || {
        super::jq::delete_paths(&mut object, &owned).map(|()| object)
    })
    .await;
    // Messages quote the expression, cut so that the condition stays within the API's limit.
    let expr = super::jq::quoted(expr);
    match result {
        Ok(Ok(object)) => Ok(object),
        Ok(Err(e)) => Err(ApplyError::IgnoreField(format!(
            "JQ expression error in '{expr}': {e}"
        ))),
        Err(e) => Err(ApplyError::IgnoreField(format!(
            "JQ expression error in '{expr}': jq expression execution cancelled: {e}"
        ))),
    }
}

fn to_value(object: &DynamicObject) -> Result<Value, ApplyError> {
    serde_json::to_value(object).map_err(|e| ApplyError::Decode(e.to_string()))
}

fn from_value(value: Value) -> Result<DynamicObject, ApplyError> {
    serde_json::from_value(value).map_err(|e| ApplyError::Decode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths_and_pointers_remove_fields() {
        let mut obj = json!({"spec": {"replicas": 3, "template": {"a": 1}}, "metadata": {"labels": {"x": "y", "z": "w"}}});
        remove_json_path(&mut obj, ".spec.replicas");
        remove_json_path(&mut obj, ".metadata.labels.x");
        // Upstream does not strip braces: the parent `{.metadata.labels` does not parse.
        remove_json_path(&mut obj, "{.metadata.labels.z}");
        remove_json_path(&mut obj, ".spec.missing.deep");
        remove_json_path(&mut obj, ".spec.containers[0]");
        assert_eq!(
            obj,
            json!({"spec": {"template": {"a": 1}}, "metadata": {"labels": {"z": "w"}}})
        );
        remove_json_pointer(&mut obj, "/spec/template/a").unwrap();
        remove_json_pointer(&mut obj, "/not/there").unwrap();
        assert_eq!(obj["spec"]["template"], json!({}));
    }

    fn containers() -> Value {
        json!({"spec": {"name": "name1", "replicas": 1, "containers": [
            {"name": "container1", "image": "test", "env": [{"name": "A", "value": "1"}]},
            {"name": "container2", "image": "test", "env": [{"name": "B", "value": "2"}]}
        ]}})
    }

    /// Upstream's cases (server_side_apply_test.go, TestRemoveFieldByJSONPath) and the
    /// filter forms its algorithm allows.
    #[test]
    fn json_paths_with_filters_and_indexes_remove_as_upstream() {
        let mut obj = containers();
        remove_json_path(&mut obj, ".spec.replicas");
        remove_json_path(&mut obj, ".spec.containers");
        assert_eq!(obj, json!({"spec": {"name": "name1"}}));

        // A filter selects the element whose key is removed.
        let mut obj = containers();
        remove_json_path(
            &mut obj,
            r#".spec.containers[?(@.name=="container1")].image"#,
        );
        assert_eq!(
            obj["spec"]["containers"][0],
            json!({"name": "container1", "env": [{"name": "A", "value": "1"}]})
        );
        assert_eq!(obj["spec"]["containers"][1]["image"], "test");

        // The issue's example: the env of one container only.
        let mut obj = containers();
        remove_json_path(&mut obj, r#".spec.containers[?(@.name=="container2")].env"#);
        assert!(obj["spec"]["containers"][1].get("env").is_none());
        assert_eq!(obj["spec"]["containers"][0]["env"][0]["name"], "A");

        // Indexes and wildcards in the parent path.
        let mut obj = containers();
        remove_json_path(&mut obj, ".spec.containers[1].image");
        assert_eq!(obj["spec"]["containers"][0]["image"], "test");
        assert!(obj["spec"]["containers"][1].get("image").is_none());
        let mut obj = containers();
        remove_json_path(&mut obj, ".spec.containers[*].image");
        assert!(
            obj["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c.get("image").is_none())
        );

        // A path ending in a filter removes nothing (no list element is ever removed), and
        // neither does one that does not parse.
        for path in [
            r#".spec.containers[?(@.name=="container1")]"#,
            r#".spec.containers[?(@.name=="container1")].env[?(@.name=="A")]"#,
            ".spec.containers[",
            "spec.replicas",
        ] {
            let mut obj = containers();
            remove_json_path(&mut obj, path);
            assert_eq!(obj, containers(), "{path}");
        }

        // The split on `.` means a key holding a dot cannot be named.
        let annotated = json!({"metadata": {"annotations": {"example.com/x": "1"}}});
        let mut obj = annotated.clone();
        remove_json_path(&mut obj, ".metadata.annotations.example.com/x");
        assert_eq!(obj, annotated);
    }
}
