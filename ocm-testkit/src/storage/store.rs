//! The in-memory object store of one fake cluster.
//!
//! Objects are JSON values keyed by group, resource, namespace and name. Every
//! write goes through one lock, takes the next global resourceVersion, is
//! appended to its resource's bounded history and is fanned out to watchers in order.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use crate::api_error::{ApiError, ApiResult, Cause};
use crate::clock::{Clock, SystemClock, format_time};
use crate::storage::frozen::Frozen;
use crate::storage::patch::{self, PatchKind};
use crate::storage::registry::{GroupResource, Gvr, Registry, ResourceInfo};
use crate::storage::schema::Shape;
use crate::storage::selector::{FieldSelector, LabelSelector};
use crate::storage::ssa::{self, Writer};
use crate::storage::uid::UidGenerator;
use crate::storage::watch::{EventType, StoredEvent, Subscription, WatchOptions, WatcherSlot};
use crate::validation::field_validation::{FieldValidation, Warnings};

/// The receiving end of a multi-resource watch.
type EventReceiver = mpsc::UnboundedReceiver<Arc<StoredEvent>>;

/// Namespace and name of a stored object (namespace empty when cluster-scoped).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// Namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectKey {
    /// Build a key.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

/// How many change events a store keeps per resource for watches that resume from a
/// resourceVersion, unless configured ([`StoreConfig::watch_history`],
/// [`FakeClusterBuilder::watch_history`](crate::FakeClusterBuilder::watch_history)).
///
/// kube-apiserver keeps a watch cache per resource, at least 100 events
/// (`--default-watch-cache-size`) and more while its events are younger than 75 s, and answers
/// a watch from an older resourceVersion with `410 Gone` (a kube-runtime watcher or a client-go
/// informer then lists again). A fake cluster keeps a fixed count per resource instead:
/// enough for the watch resumptions of a busy test fleet (a watch resumes from its last
/// event or bookmark, at most a few seconds old) without holding every object's recent
/// versions for long (10,000 events for the whole store, before, held about 33 KiB per
/// cluster of the 1,000-cluster fleet bench's hub in heap). Resident memory of that bench once
/// converged (first sample, load 3-4) was 261 KiB per cluster with 1,000 events per resource,
/// 268 KiB with 10,000 and 277 KiB with 100: the count is not what bounds it, within the
/// run-to-run spread of about 10 KiB.
pub const DEFAULT_WATCH_HISTORY: usize = 1_000;

/// How a store is set up (see [`FakeClusterBuilder`](crate::FakeClusterBuilder) for the
/// usual way to set it).
#[derive(Clone)]
#[non_exhaustive]
pub struct StoreConfig {
    /// Source of timestamps.
    pub clock: Arc<dyn Clock>,
    /// Seed of the uid and generateName generator: random unless set (set one for the same
    /// uids on every run).
    pub uid_seed: u64,
    /// How many change events are kept per resource (group and resource, all namespaces) for
    /// watches that resume from a resourceVersion; older resourceVersions get `410 Gone`, as
    /// kube-apiserver's watch cache answers them. Default [`DEFAULT_WATCH_HISTORY`].
    pub watch_history: usize,
    /// How long change events are kept for resuming watches (by the store's
    /// clock); older resourceVersions get `410 Gone`. `None` (the default)
    /// bounds the history by [`watch_history`](Self::watch_history) only.
    pub watch_history_age: Option<std::time::Duration>,
    /// Refuse to create namespaced objects in namespaces that do not exist.
    pub strict_namespaces: bool,
    /// A plain watch from a resourceVersion the store has not issued yet waits, silent, until
    /// the store reaches it, as kube-apiserver's does, instead of the default `410 Gone` (see
    /// [`crate::storage::watch`]): for testing clients against a server that lost its state.
    pub future_watches_wait: bool,
    /// Run the OCM hub's admission webhooks ([`crate::validation::webhook`]); `None` (the default) runs
    /// none. [`FakeHub`](crate::FakeHub) turns them on for its hub.
    pub hub_admission: Option<crate::validation::webhook::HubAdmission>,
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreConfig")
            .field("uid_seed", &self.uid_seed)
            .field("watch_history", &self.watch_history)
            .field("watch_history_age", &self.watch_history_age)
            .field("strict_namespaces", &self.strict_namespaces)
            .field("future_watches_wait", &self.future_watches_wait)
            .field("hub_admission", &self.hub_admission)
            .finish_non_exhaustive()
    }
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            clock: Arc::new(SystemClock),
            uid_seed: crate::storage::uid::random_seed(),
            watch_history: DEFAULT_WATCH_HISTORY,
            watch_history_age: None,
            strict_namespaces: false,
            future_watches_wait: false,
            hub_admission: None,
        }
    }
}

/// Options of a create, update or patch.
///
/// ```
/// use ocm_testkit::WriteOptions;
/// use ocm_testkit::field_validation::FieldValidation;
///
/// let opts = WriteOptions::manager("my-controller")
///     .subresource("status")
///     .field_validation(FieldValidation::Strict);
/// assert_eq!(opts.subresource.as_deref(), Some("status"));
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct WriteOptions {
    /// `fieldManager`; defaults to `unknown`.
    pub field_manager: Option<String>,
    /// `dryRun=All`: validate and compute, but store nothing.
    pub dry_run: bool,
    /// `force` for server-side apply.
    pub force: bool,
    /// The subresource written (`status`), if any.
    pub subresource: Option<String>,
    /// `fieldValidation`: what to do about unknown and duplicate fields
    /// (`Warn` by default, as kube-apiserver does when a client sends nothing).
    pub field_validation: FieldValidation,
    /// Fields the request body named twice, as found by the front door that
    /// parsed it (paths like `metadata.name`); reported like unknown fields.
    pub duplicate_fields: Vec<String>,
    /// Fields the request body has that its kind does not, as found (and dropped) by the
    /// front door that parsed it, in the order the body names them (paths like
    /// `spec.template.spec.containers[0].imagee`); reported with the duplicate fields and
    /// with those the server finds itself.
    pub unknown_fields: Vec<String>,
    /// Where `Warn` puts its warnings (keep a clone to read them after the write).
    pub warnings: Warnings,
    /// Who writes: with a user, writes of Roles, ClusterRoles and their bindings are
    /// checked for RBAC escalation as kube-apiserver checks them; `None` (direct store
    /// access, clusters without authentication) writes as a cluster administrator.
    pub user: Option<crate::validation::auth::UserInfo>,
}

impl WriteOptions {
    /// Options for a write by `manager`.
    pub fn manager(manager: impl Into<String>) -> Self {
        Self {
            field_manager: Some(manager.into()),
            ..Self::default()
        }
    }

    fn manager_name(&self) -> &str {
        self.field_manager.as_deref().unwrap_or("unknown")
    }

    fn sub(&self) -> &str {
        self.subresource.as_deref().unwrap_or("")
    }
}

ocm_api::setters!(WriteOptions {
    /// With `dryRun=All` (`true`) or not.
    dry_run: bool,
    /// With server-side apply's `force` (`true`) or not.
    force: bool,
    /// Writing this subresource (`status`, `scale`) instead of the object.
    subresource: impl Into<String> => Some(subresource.into()),
    /// With this `fieldValidation`.
    field_validation: FieldValidation,
    /// Putting `Warn`'s warnings here (keep a clone to read them).
    warnings: Warnings,
    /// Writing as this user (RBAC escalation checks apply).
    user: crate::validation::auth::UserInfo => Some(user),
});

/// Options of a list.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ListOptions {
    /// `labelSelector`.
    pub label_selector: LabelSelector,
    /// `fieldSelector`.
    pub field_selector: FieldSelector,
    /// `limit` (0 = everything).
    pub limit: usize,
    /// `continue` token from a previous page.
    pub continue_token: Option<String>,
    /// `resourceVersion`: the list is served from the current state, which is always at
    /// least as new as any version the store issued; a version newer than the store's gets
    /// kube-apiserver's `504 Too large resource version` (see [`crate::storage::watch`]).
    pub resource_version: Option<String>,
}

ocm_api::setters!(ListOptions {
    /// Selecting by labels.
    label_selector: LabelSelector,
    /// Selecting by fields.
    field_selector: FieldSelector,
    /// Pages of at most this many objects (0 = everything).
    limit: usize,
    /// The page after the one that gave this token.
    continue_token: impl Into<String> => Some(continue_token.into()),
    /// At least as new as this resourceVersion.
    resource_version: impl Into<String> => Some(resource_version.into()),
});

/// A page of a list.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ObjectList {
    /// The objects, ordered by namespace then name.
    pub items: Vec<Arc<Value>>,
    /// The list's resourceVersion.
    pub resource_version: u64,
    /// Token for the next page, when there is one.
    pub continue_token: Option<String>,
    /// How many objects the next pages hold (when no selector was used).
    pub remaining_item_count: Option<usize>,
}

/// `propagationPolicy` of a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Propagation {
    /// Delete now; dependents are collected afterwards.
    #[default]
    Background,
    /// Dependents go first; the owner waits with the `foregroundDeletion` finalizer.
    Foreground,
    /// Dependents lose their ownerReference and stay.
    Orphan,
}

/// Options of a delete.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DeleteOptions {
    /// `propagationPolicy` (`None` = the resource's default, Background).
    pub propagation: Option<Propagation>,
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_resource_version: Option<String>,
    /// `dryRun=All`.
    pub dry_run: bool,
}

ocm_api::setters!(DeleteOptions {
    /// With this `propagationPolicy`.
    propagation: Propagation => Some(propagation),
    /// Only if the object's uid is this.
    precondition_uid: impl Into<String> => Some(precondition_uid.into()),
    /// Only if the object's resourceVersion is this.
    precondition_resource_version: impl Into<String> => Some(precondition_resource_version.into()),
    /// With `dryRun=All` (`true`) or not.
    dry_run: bool,
});

/// What a delete did.
#[derive(Debug, Clone)]
pub enum DeleteOutcome {
    /// The object is gone; this was its last state.
    Deleted(Value),
    /// The object is being deleted but finalizers keep it; this is its state now.
    Pending(Value),
}

/// A stored object, frozen (see [`crate::storage::frozen`]): cheap to clone, shared with the other
/// versions and clusters that hold the same parts.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) obj: Frozen,
}

impl Entry {
    /// The entry of `obj`, and how deeply `obj` nests.
    pub(crate) fn measured(obj: &Value) -> (Self, usize) {
        let (obj, depth) = Frozen::freeze_measured(obj);
        (Self { obj }, depth)
    }

    /// The object as a `Value`.
    pub(crate) fn value(&self) -> Arc<Value> {
        Arc::new(self.obj.thaw())
    }
}

/// A page of a list, as stored entries (for the HTTP front door).
pub(crate) struct EntryList {
    pub(crate) entries: Vec<Entry>,
    pub(crate) resource_version: u64,
    pub(crate) continue_token: Option<String>,
    pub(crate) remaining_item_count: Option<usize>,
}

/// One change kept in the store's history, for watches that resume from a resourceVersion.
#[derive(Debug)]
pub(crate) struct HistoryEvent {
    pub(crate) resource_version: u64,
    pub(crate) event_type: EventType,
    pub(crate) group_resource: GroupResource,
    pub(crate) namespace: String,
    /// The object after the change (the last state for deletions).
    pub(crate) object: Frozen,
    /// The object before the change, for modifications.
    pub(crate) previous: Option<Frozen>,
}

impl HistoryEvent {
    /// The event as watchers get it; the previous state only when `with_previous`.
    fn stored(&self, with_previous: bool) -> StoredEvent {
        StoredEvent {
            resource_version: self.resource_version,
            event_type: self.event_type,
            group_resource: self.group_resource.clone(),
            namespace: self.namespace.clone(),
            object: Arc::new(self.object.thaw()),
            previous: self
                .previous
                .as_ref()
                .filter(|_| with_previous)
                .map(|p| Arc::new(p.thaw())),
        }
    }
}

/// The change events kept for one resource.
#[derive(Debug, Default)]
pub(crate) struct ResourceHistory {
    pub(crate) events: VecDeque<HistoryEvent>,
    /// When each event was recorded (kept only with `watch_history_age`).
    pub(crate) times: VecDeque<jiff::Timestamp>,
    /// The resourceVersion of the newest event dropped: a watch from an older one gets
    /// `410 Gone`.
    pub(crate) compacted_rv: u64,
}

impl ResourceHistory {
    fn drop_oldest(&mut self) {
        if let Some(old) = self.events.pop_front() {
            self.compacted_rv = old.resource_version;
        }
        self.times.pop_front();
    }
}

pub(crate) struct Inner {
    pub(crate) registry: Registry,
    pub(crate) objects: HashMap<GroupResource, BTreeMap<ObjectKey, Entry>>,
    /// uid → where the object lives.
    pub(crate) uids: HashMap<String, (GroupResource, ObjectKey)>,
    /// owner uid → dependents.
    pub(crate) dependents: HashMap<String, HashSet<(GroupResource, ObjectKey)>>,
    pub(crate) rv: u64,
    /// The change events kept for resuming watches, per resource.
    pub(crate) history: HashMap<GroupResource, ResourceHistory>,
    /// Every resource's history starts after this resourceVersion (the store was compacted or
    /// restored then).
    pub(crate) compacted_rv: u64,
    pub(crate) watchers: Vec<WatcherSlot>,
    pub(crate) uidgen: UidGenerator,
    pub(crate) config: StoreConfig,
    /// How garbage is collected, and the deferred collection work.
    pub(crate) gc: crate::storage::deletion::GcState,
    /// The RBAC objects as `Value`s, by resource, while none of them changes (the authorizer
    /// reads them on every request; the store keeps them frozen).
    pub(crate) rbac_views: std::sync::Mutex<HashMap<String, Arc<Vec<Arc<Value>>>>>,
    /// How deeply the deepest object this store ever held nests. Past
    /// `ocm_api::k8s::json::SHALLOW_DEPTH`, requests run on a stack grown to fit it.
    pub(crate) deepest: usize,
}

/// One fake cluster's objects, registry, history and watchers.
///
/// This is the "direct access" front door: fixtures and assertions go through
/// it without HTTP. The same rules apply as over HTTP.
pub struct Store {
    inner: RwLock<Inner>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("resource_version", &self.resource_version())
            .finish_non_exhaustive()
    }
}

impl Default for Store {
    fn default() -> Self {
        Self::new(StoreConfig::default())
    }
}

fn meta(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    meta(obj)?.get(field)?.as_str()
}

pub(crate) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object)
        && let Some(m) = obj.as_object_mut()
    {
        m.insert("metadata".into(), Value::Object(Map::new()));
    }
    match obj.get_mut("metadata") {
        Some(Value::Object(m)) => m,
        // The branch above guarantees an object when `obj` is one; callers
        // only pass objects.
        _ => unreachable_metadata(),
    }
}

#[allow(clippy::panic)]
fn unreachable_metadata() -> ! {
    panic!("metadata is always an object after normalization")
}

pub(crate) fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Finalizers that hold an object back from removal (for namespaces, also `spec.finalizers`).
pub(crate) fn pending_finalizers(gr: &GroupResource, obj: &Value) -> Vec<String> {
    let mut out = finalizers(obj);
    if gr.group.is_empty()
        && gr.resource == "namespaces"
        && let Some(a) = obj.pointer("/spec/finalizers").and_then(Value::as_array)
    {
        out.extend(a.iter().filter_map(|f| f.as_str().map(str::to_string)));
    }
    out
}

pub(crate) fn owner_uids(obj: &Value) -> Vec<String> {
    meta(obj)
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Everything but metadata (and status, when it is a subresource): what bumps generation.
fn spec_part(obj: &Value, status_subresource: bool) -> Value {
    match obj {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| {
                    let server_side = matches!(k.as_str(), "metadata" | "apiVersion" | "kind");
                    let status = status_subresource && k.as_str() == "status";
                    !(server_side || status)
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A body of `null` decodes into an empty object (kube-apiserver then finds what is missing).
fn null_as_empty(obj: Value) -> Value {
    if obj.is_null() { json!({}) } else { obj }
}

/// A stored object as a read of `version` returns it (the stored copy itself when nothing
/// changes).
fn in_version(info: &ResourceInfo, version: &str, obj: Arc<Value>) -> Arc<Value> {
    match crate::storage::conversion::convert_for_read(info, &obj, version) {
        std::borrow::Cow::Borrowed(_) => obj,
        std::borrow::Cow::Owned(v) => Arc::new(v),
    }
}

impl Store {
    /// A store holding the built-in kinds and the usual namespaces
    /// (`default`, `kube-system`, `kube-public`, `kube-node-lease`).
    pub fn new(config: StoreConfig) -> Self {
        let uidgen = UidGenerator::new(config.uid_seed);
        let store = Self {
            inner: RwLock::new(Inner {
                registry: Registry::with_builtins(),
                objects: HashMap::new(),
                uids: HashMap::new(),
                dependents: HashMap::new(),
                rv: 0,
                history: HashMap::new(),
                compacted_rv: 0,
                watchers: Vec::new(),
                uidgen,
                config,
                gc: Default::default(),
                rbac_views: Default::default(),
                deepest: 0,
            }),
        };
        let ns = Gvr::new("", "v1", "namespaces");
        {
            // The namespaces every cluster starts with. Their bodies are constant and decode,
            // so they skip the decoding a request body goes through; the write itself
            // (defaults, validation, managed fields, history) is every create's.
            let mut inner = store.write();
            if let Ok(info) = inner.resolve(&ns) {
                for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
                    let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
                    // Creating a fresh namespace in an empty store cannot fail.
                    let _ = inner.create(&info, &ns, "", obj, &WriteOptions::default(), None);
                }
            }
        }
        store
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// How deeply the deepest object this store ever held nests (at least what it holds now).
    pub(crate) fn deepest(&self) -> usize {
        self.read().deepest
    }

    /// Runs `f` with enough stack for the deepest object the store held and for a value
    /// `depth` levels deep: on the caller's stack while they are shallow, as they nearly always
    /// are (see `ocm_api::k8s::json::with_stack`).
    pub(crate) fn on_stack<R>(&self, depth: usize, f: impl FnOnce() -> R) -> R {
        ocm_api::k8s::json::with_stack(self.deepest().max(depth), f)
    }

    /// The store clock's current time.
    pub fn now(&self) -> jiff::Timestamp {
        self.read().config.clock.now()
    }

    /// The newest resourceVersion handed out.
    pub fn resource_version(&self) -> u64 {
        self.read().rv
    }

    /// A copy of the registry of served resources.
    pub fn registry(&self) -> Registry {
        self.read().registry.clone()
    }

    /// Serve an extra resource (CRDs created through the API register themselves).
    pub fn register(&self, info: ResourceInfo) {
        self.write().registry.insert(info);
    }

    /// Forget all change history, so that every watch resuming from an older
    /// resourceVersion gets `410 Gone`.
    pub fn compact(&self) {
        let mut inner = self.write();
        inner.history.clear();
        inner.compacted_rv = inner.rv;
    }

    /// Look up how a GVR is served.
    pub fn resolve(&self, gvr: &Gvr) -> ApiResult<Arc<ResourceInfo>> {
        self.read().resolve(gvr)
    }

    /// Read one object, in the version `gvr` names (converted as a read through the API
    /// would be: addon kinds by upstream's conversion, `events.k8s.io` Events from the core
    /// Events they are stored as).
    pub fn get(&self, gvr: &Gvr, namespace: &str, name: &str) -> ApiResult<Arc<Value>> {
        self.on_stack(0, || {
            let info = self.resolve(gvr)?;
            self.get_entry(gvr, namespace, name)
                .map(|e| in_version(&info, &gvr.version, e.value()))
        })
    }

    pub(crate) fn get_entry(&self, gvr: &Gvr, namespace: &str, name: &str) -> ApiResult<Entry> {
        let inner = self.read();
        let info = inner.resolve(gvr)?;
        let key = ObjectKey::new(if info.namespaced { namespace } else { "" }, name);
        inner
            .objects
            .get(&info.storage_resource())
            .and_then(|m| m.get(&key))
            .cloned()
            .ok_or_else(|| ApiError::not_found(&info.group_resource(), name))
    }

    /// List objects, in one namespace or (with `None`) across all, in the version `gvr`
    /// names (see [`Store::get`]).
    pub fn list(
        &self,
        gvr: &Gvr,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<ObjectList> {
        self.on_stack(0, || {
            let info = self.resolve(gvr)?;
            let l = self.list_entries(gvr, namespace, opts)?;
            Ok(ObjectList {
                items: l
                    .entries
                    .iter()
                    .map(|e| in_version(&info, &gvr.version, e.value()))
                    .collect(),
                resource_version: l.resource_version,
                continue_token: l.continue_token,
                remaining_item_count: l.remaining_item_count,
            })
        })
    }

    pub(crate) fn list_entries(
        &self,
        gvr: &Gvr,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<EntryList> {
        let inner = self.read();
        let info = inner.resolve(gvr)?;
        let gr = info.storage_resource();
        let namespace = namespace
            .filter(|_| info.namespaced)
            .filter(|n| !n.is_empty());
        let (list_rv, after) = match opts.continue_token.as_deref().filter(|t| !t.is_empty()) {
            Some(tok) => {
                let (rv, after) = crate::serving::continue_token::decode(tok)
                    .map_err(|e| ApiError::bad_request(format!("invalid continue token: {e}")))?;
                if rv < inner.compacted_rv_of(&gr) {
                    return Err(ApiError::gone(
                        "The provided continue parameter is too old to display a consistent list result. \
                         You can start a new list without the continue parameter, or use the continue token \
                         in this response to retrieve the remainder of the results. Continuing with the \
                         provided token results in an inconsistent list - objects that were created, \
                         modified, or deleted between the time the first chunk was returned and now may \
                         show up in the list.",
                    ));
                }
                (rv, Some(after))
            }
            None => {
                if let Some(rv) = opts
                    .resource_version
                    .as_deref()
                    .filter(|rv| !rv.is_empty() && *rv != "0")
                {
                    let wanted =
                        crate::serving::options::list_resource_version(Some(rv))?.unwrap_or(0);
                    if wanted > inner.rv {
                        return Err(crate::storage::watch::too_large_resource_version(
                            wanted, inner.rv,
                        ));
                    }
                }
                (inner.rv, None)
            }
        };
        let empty = BTreeMap::new();
        let objects = inner.objects.get(&gr).unwrap_or(&empty);
        let lower = match (&after, namespace) {
            (Some(k), _) => std::ops::Bound::Excluded(k.clone()),
            (None, Some(ns)) => std::ops::Bound::Included(ObjectKey::new(ns, "")),
            (None, None) => std::ops::Bound::Unbounded,
        };
        let filtering = !opts.label_selector.is_empty() || !opts.field_selector.is_empty();
        let mut items = Vec::new();
        let mut last_key = None;
        let mut more = false;
        let mut remaining = 0usize;
        for (k, v) in objects.range((lower, std::ops::Bound::Unbounded)) {
            if namespace.is_some_and(|ns| k.namespace != ns) {
                break;
            }
            if filtering
                && !(opts.label_selector.matches_frozen(&v.obj)
                    && opts.field_selector.matches_frozen(&v.obj))
            {
                continue;
            }
            if opts.limit > 0 && items.len() >= opts.limit {
                more = true;
                if filtering {
                    break;
                }
                remaining += 1;
                continue;
            }
            items.push(v.clone());
            last_key = Some(k.clone());
        }
        let continue_token = match (more, last_key) {
            (true, Some(k)) => Some(crate::serving::continue_token::encode(list_rv, &k)),
            _ => None,
        };
        Ok(EntryList {
            entries: items,
            resource_version: list_rv,
            remaining_item_count: (more && !filtering).then_some(remaining),
            continue_token,
        })
    }

    /// Create an object (POST).
    ///
    /// The object must decode as kube-apiserver decodes it: built-in kinds into their real
    /// types, custom resources with an `ObjectMeta` (a value of the wrong JSON type is a
    /// `400 BadRequest` worded as kube-apiserver words it).
    pub fn create(
        &self,
        gvr: &Gvr,
        namespace: &str,
        obj: Value,
        opts: &WriteOptions,
    ) -> ApiResult<Value> {
        self.on_stack(ocm_api::k8s::json::value_depth(&obj), || {
            self.create_decoded(gvr, namespace, obj, opts, None)
        })
    }

    /// [`create`](Self::create) of a request body: with `raw` (the body as sent), the type
    /// meta is checked as kube-apiserver's decoder checks it too.
    pub(crate) fn create_decoded(
        &self,
        gvr: &Gvr,
        namespace: &str,
        obj: Value,
        opts: &WriteOptions,
        raw: Option<&[u8]>,
    ) -> ApiResult<Value> {
        let mut inner = self.write();
        let info = inner.resolve(gvr)?;
        inner.decode_body(&info, gvr, &obj, raw)?;
        inner.create(&info, gvr, namespace, null_as_empty(obj), opts, None)
    }

    /// Replace an object (PUT), or its status with `opts.subresource = Some("status")`.
    ///
    /// The object must decode as for [`create`](Self::create).
    pub fn update(
        &self,
        gvr: &Gvr,
        namespace: &str,
        name: &str,
        obj: Value,
        opts: &WriteOptions,
    ) -> ApiResult<Value> {
        self.on_stack(ocm_api::k8s::json::value_depth(&obj), || {
            self.update_decoded(gvr, namespace, name, obj, opts, None)
        })
    }

    /// [`update`](Self::update) of a request body (see [`create_decoded`](Self::create_decoded)).
    pub(crate) fn update_decoded(
        &self,
        gvr: &Gvr,
        namespace: &str,
        name: &str,
        obj: Value,
        opts: &WriteOptions,
        raw: Option<&[u8]>,
    ) -> ApiResult<Value> {
        let mut inner = self.write();
        let info = inner.resolve(gvr)?;
        inner.decode_body(&info, gvr, &obj, raw)?;
        let obj = null_as_empty(obj);
        let key = ObjectKey::new(if info.namespaced { namespace } else { "" }, name);
        let current = inner
            .lookup(&info.storage_resource(), &key)
            .ok_or_else(|| ApiError::not_found(&info.group_resource(), name))?;
        inner.update(&info, gvr, &key, &current, obj, opts, UpdateKind::Put)
    }

    /// Patch an object (PATCH). Server-side apply creates the object when it is missing;
    /// the boolean says whether it did.
    pub fn patch(
        &self,
        gvr: &Gvr,
        namespace: &str,
        name: &str,
        kind: PatchKind,
        body: &Value,
        opts: &WriteOptions,
    ) -> ApiResult<(Value, bool)> {
        self.on_stack(ocm_api::k8s::json::value_depth(body), || {
            self.write().patch(gvr, namespace, name, kind, body, opts)
        })
    }

    /// Delete an object.
    pub fn delete(
        &self,
        gvr: &Gvr,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<DeleteOutcome> {
        self.on_stack(0, || {
        let mut inner = self.write();
        let info = inner.resolve(gvr)?;
        let gr = info.storage_resource();
        let key = ObjectKey::new(if info.namespaced { namespace } else { "" }, name);
        let current = inner
            .lookup(&gr, &key)
            .ok_or_else(|| ApiError::not_found(&gr, name))?;
        // kube-apiserver checks the preconditions before deleting, and names the kind (not
        // the resource) in its conflict.
        let by_kind = GroupResource::new(info.group.clone(), info.kind.clone());
        if let Some(uid) = &opts.precondition_uid
            && meta_str(&current, "uid") != Some(uid.as_str())
        {
            return Err(ApiError::conflict(&by_kind, name).with_message(format!(
                "Operation cannot be fulfilled on {by_kind} \"{name}\": the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                meta_str(&current, "uid").unwrap_or_default()
            )));
        }
        if let Some(rv) = &opts.precondition_resource_version
            && meta_str(&current, "resourceVersion") != Some(rv.as_str())
        {
            return Err(ApiError::conflict(&by_kind, name).with_message(format!(
                "Operation cannot be fulfilled on {by_kind} \"{name}\": the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                meta_str(&current, "resourceVersion").unwrap_or_default()
            )));
        }
        if opts.dry_run {
            return Ok(DeleteOutcome::Deleted(current.as_ref().clone()));
        }
        Ok(inner.delete_object(&gr, &key, opts.propagation.unwrap_or_default()))
        })
    }

    /// Delete every object a list selects (DELETE on a collection).
    pub fn delete_collection(
        &self,
        gvr: &Gvr,
        namespace: Option<&str>,
        list: &ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<Vec<Value>> {
        self.on_stack(0, || {
            let all = ListOptions {
                limit: 0,
                continue_token: None,
                ..list.clone()
            };
            let items = self.list(gvr, namespace, &all)?;
            let mut out = Vec::new();
            for item in items.items {
                let ns = meta_str(&item, "namespace").unwrap_or_default();
                let name = meta_str(&item, "name").unwrap_or_default();
                match self.delete(gvr, ns, name, opts) {
                    Ok(DeleteOutcome::Deleted(v)) | Ok(DeleteOutcome::Pending(v)) => out.push(v),
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(out)
        })
    }

    /// Answer a `SubjectAccessReview`, `LocalSubjectAccessReview` or
    /// `SelfSubjectAccessReview` from the RBAC objects in the store.
    pub fn review(&self, gvr: &Gvr, namespace: &str, body: Value) -> ApiResult<Value> {
        self.review_as(gvr, namespace, body, None)
    }

    /// [`review`](Self::review) by `requester` (whose own access a `SelfSubjectAccessReview`
    /// asks about).
    pub(crate) fn review_as(
        &self,
        gvr: &Gvr,
        namespace: &str,
        body: Value,
        requester: Option<&crate::validation::auth::UserInfo>,
    ) -> ApiResult<Value> {
        let inner = self.read();
        let info = inner.resolve(gvr)?;
        let mut out = inner.review(&info.plural, namespace, body, requester);
        if let Some(m) = out.as_object_mut() {
            m.insert("apiVersion".into(), json!(gvr.api_version()));
            m.insert("kind".into(), json!(info.kind));
        }
        Ok(out)
    }

    /// The printer columns of `version` of the custom resource `info`, from its CRD object.
    pub(crate) fn crd_columns(
        &self,
        info: &ResourceInfo,
        version: &str,
    ) -> Option<Vec<crate::storage::registry::PrinterColumn>> {
        let crd = self.read().lookup(
            &GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
            &ObjectKey::new("", info.crd_name.as_deref()?),
        )?;
        crate::storage::crd::version_printer_columns(&crd, version)
    }

    /// The `selectableFields` of `version` of the custom resource `info`, from its CRD object
    /// (empty for built-in kinds).
    pub(crate) fn crd_selectable_fields(&self, info: &ResourceInfo, version: &str) -> Vec<String> {
        let Some(name) = info.crd_name.as_deref() else {
            return Vec::new();
        };
        self.read()
            .lookup(
                &GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
                &ObjectKey::new("", name),
            )
            .map(|crd| crate::storage::crd::version_selectable_fields(&crd, version))
            .unwrap_or_default()
    }

    /// Whether `user` may do what `req` asks, by the RBAC objects in the store.
    pub(crate) fn allows(
        &self,
        user: &crate::validation::auth::UserInfo,
        req: &crate::validation::auth::Request,
    ) -> bool {
        user.is_master() || self.read().allows(user, req)
    }

    /// Watch several resources in every namespace, without selectors, through one channel:
    /// their objects now (with the GVR each is watched as), then every change of them. What
    /// the workload simulators run on (one channel, where a watch per resource would take five).
    pub(crate) fn watch_resources(&self, gvrs: &[Gvr]) -> (Vec<(Gvr, Arc<Value>)>, EventReceiver) {
        let mut inner = self.write();
        let (tx, rx) = mpsc::unbounded_channel();
        let mut initial = Vec::new();
        for gvr in gvrs {
            let Ok(info) = inner.resolve(gvr) else {
                continue;
            };
            let gr = info.storage_resource();
            if let Some(objects) = inner.objects.get(&gr) {
                initial.extend(objects.values().map(|e| (gvr.clone(), e.value())));
            }
            inner.watchers.push(WatcherSlot {
                group_resource: gr,
                namespace: None,
                tx: tx.clone(),
            });
        }
        (initial, rx)
    }

    /// Start a watch, in one namespace or (with `None`) across all.
    pub fn watch(
        &self,
        gvr: &Gvr,
        namespace: Option<&str>,
        opts: WatchOptions,
    ) -> ApiResult<Subscription> {
        self.on_stack(0, || {
            let mut inner = self.write();
            let info = inner.resolve(gvr)?;
            let gr = info.storage_resource();
            let namespace = namespace
                .filter(|_| info.namespaced)
                .filter(|n| !n.is_empty())
                .map(str::to_string);
            let (tx, rx) = mpsc::unbounded_channel();
            let mut sub = Subscription {
                initial: Vec::new(),
                initial_events_end: None,
                expired: None,
                start_resource_version: inner.rv,
                wait_until: None,
                rx,
                label_selector: opts.label_selector.clone(),
                field_selector: opts.field_selector.clone(),
            };
            let rv = opts.resource_version.as_deref().unwrap_or("");
            let requested = if rv.is_empty() || rv == "0" {
                None
            } else {
                crate::serving::options::read_resource_version(Some(rv))?
            };
            let mut requested = requested;
            if let Some(wanted) = requested.filter(|wanted| *wanted > inner.rv)
                && inner.config.future_watches_wait
                && !opts.send_initial_events
            {
                // kube-apiserver's plain watch: silent until the store passes `wanted`.
                sub.wait_until = Some(wanted);
                requested = Some(inner.rv);
            }
            if let Some(wanted) = requested.filter(|wanted| *wanted > inner.rv) {
                // A version this store never issued (see `crate::storage::watch` for both answers).
                sub.expired = Some(if opts.send_initial_events {
                    crate::storage::watch::too_large_resource_version(wanted, inner.rv)
                } else {
                    crate::storage::watch::never_issued_resource_version(wanted, inner.rv)
                });
                return Ok(sub);
            }
            let from_state = opts.send_initial_events || requested.is_none();
            if from_state {
                if let Some(objects) = inner.objects.get(&gr) {
                    for (k, v) in objects {
                        if namespace.as_ref().is_some_and(|ns| *ns != k.namespace) {
                            continue;
                        }
                        if opts.label_selector.matches_frozen(&v.obj)
                            && opts.field_selector.matches_frozen(&v.obj)
                        {
                            sub.initial.push((EventType::Added, v.value()));
                        }
                    }
                }
                if opts.send_initial_events {
                    sub.initial_events_end = Some(inner.rv);
                }
            } else {
                let since = requested.unwrap_or_default();
                inner.expire_history();
                let compacted = inner.compacted_rv_of(&gr);
                if since < compacted {
                    sub.expired = Some(ApiError::gone(format!(
                        "too old resource version: {since} ({compacted})"
                    )));
                    return Ok(sub);
                }
                sub.start_resource_version = since;
                let selecting = !(opts.label_selector.is_empty() && opts.field_selector.is_empty());
                let events = inner.history.get(&gr).map(|h| &h.events);
                let first =
                    events.map_or(0, |e| e.partition_point(|ev| ev.resource_version <= since));
                for ev in events.into_iter().flat_map(|e| e.range(first..)) {
                    if namespace.as_ref().is_some_and(|ns| *ns != ev.namespace) {
                        continue;
                    }
                    if let Some(t) = sub.translate(&ev.stored(selecting)) {
                        sub.initial.push(t);
                    }
                }
            }
            inner.watchers.push(WatcherSlot {
                group_resource: gr,
                namespace,
                tx,
            });
            Ok(sub)
        })
    }
}

impl ApiError {
    fn with_message(mut self, message: String) -> Self {
        self.message = message;
        self
    }
}

/// The 422 a custom resource gets for a body naming another `kind`.
fn crd_kind_invalid(info: &ResourceInfo, name: &str, kind: &str) -> ApiError {
    ApiError::invalid(
        &info.kind,
        &info.group,
        name,
        vec![Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: must be {}",
                ocm_api::k8s::gojson::quote(kind),
                info.kind
            ),
            field: "kind".into(),
        }],
    )
}

/// Refuse a create body that is no object or names a kind other than the endpoint's.
fn check_create_kind(info: &ResourceInfo, gvr: &Gvr, obj: &Value) -> ApiResult<()> {
    if !obj.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request was not a JSON object",
        ));
    }
    if let Some(kind) = obj.get("kind").and_then(Value::as_str)
        && kind != info.kind
        && info.crd_name.is_some()
    {
        return Err(crd_kind_invalid(
            info,
            meta_str(obj, "name").unwrap_or_default(),
            kind,
        ));
    }
    if let Some(kind) = obj.get("kind").and_then(Value::as_str)
        && kind != info.kind
    {
        return Err(ApiError::bad_request(format!(
                "the API version in the data ({}) does not match the expected API version ({})",
                obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default(),
                gvr.api_version()
            ))
            .with_message(format!(
                "{} in version \"{}\" cannot be handled as a {}: no kind \"{kind}\" is registered for version \"{}\"",
                info.kind,
                gvr.version,
                info.kind,
                gvr.api_version()
            )));
    }
    Ok(())
}

/// Set a new object's type meta to the endpoint's and its namespace to the request's
/// (none for a cluster-scoped resource), refusing a body that names another namespace.
fn place_new_object(
    info: &ResourceInfo,
    gvr: &Gvr,
    namespace: &str,
    obj: &mut Value,
) -> ApiResult<()> {
    let m = obj
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("not an object"))?;
    m.insert("apiVersion".into(), json!(gvr.api_version()));
    m.insert("kind".into(), json!(info.kind));
    let body_ns = meta_str(obj, "namespace").map(str::to_string);
    let meta = meta_mut(obj);
    if info.namespaced {
        if let Some(bns) = body_ns.filter(|b| !b.is_empty())
            && !namespace.is_empty()
            && bns != namespace
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if namespace.is_empty() {
            return Err(ApiError::bad_request(
                "the server could not find the requested resource: a namespace is required",
            ));
        }
        meta.insert("namespace".into(), json!(namespace));
    } else {
        meta.remove("namespace");
    }
    Ok(())
}

/// Give a new object its name, uid and creation time, drop the metadata only the server
/// sets later, start its generation, and drop its status when that is a subresource.
fn stamp_new_meta(info: &ResourceInfo, obj: &mut Value, name: &str, uid: String, now: &str) {
    let meta = meta_mut(obj);
    meta.insert("name".into(), json!(name));
    meta.insert("uid".into(), json!(uid));
    meta.insert("creationTimestamp".into(), json!(now));
    meta.remove("deletionTimestamp");
    meta.remove("deletionGracePeriodSeconds");
    meta.remove("resourceVersion");
    meta.remove("selfLink");
    meta.remove("managedFields");
    if info.tracks_generation {
        meta.insert("generation".into(), json!(1));
    } else {
        meta.remove("generation");
    }
    if info.status_subresource
        && let Some(m) = obj.as_object_mut()
    {
        m.remove("status");
    }
}

/// Record the writer of `opts` in `obj`'s managed fields as owning what it set, compared
/// with `prior` (none for a create), at `now` and through `subresource`.
fn record_manager(
    info: &ResourceInfo,
    gvr: &Gvr,
    prior: Option<&Value>,
    obj: &mut Value,
    opts: &WriteOptions,
    now: &str,
    subresource: &str,
) {
    let schema = info.schema(&gvr.version).cloned();
    let shape = Shape::root(schema.as_deref());
    let api_version = gvr.api_version();
    ssa::record_update(
        prior,
        obj,
        &shape,
        &Writer {
            manager: opts.manager_name(),
            api_version: &api_version,
            time: now,
            subresource,
        },
    );
}

/// Refuse an update body that does not fit its target: a status write to a resource
/// without that subresource, a body that is no object, another kind, name or namespace,
/// or a resourceVersion other than the current one.
fn check_update_body(
    info: &ResourceInfo,
    gvr: &Gvr,
    key: &ObjectKey,
    current: &Value,
    obj: &Value,
    sub: &str,
) -> ApiResult<()> {
    if sub == "status" && !info.status_subresource {
        return Err(ApiError::not_found(&info.storage_resource(), &key.name));
    }
    if !obj.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request was not a JSON object",
        ));
    }
    if let Some(kind) = obj.get("kind").and_then(Value::as_str)
        && sub.is_empty()
        && kind != info.kind
        && info.crd_name.is_some()
    {
        return Err(crd_kind_invalid(info, &key.name, kind));
    }
    if let Some(kind) = obj.get("kind").and_then(Value::as_str)
        && sub.is_empty()
        && kind != info.kind
    {
        return Err(ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: no kind \"{kind}\" is registered for version \"{}\"",
            info.kind,
            gvr.version,
            info.kind,
            gvr.api_version()
        )));
    }
    if let Some(n) = meta_str(obj, "name").filter(|n| !n.is_empty())
        && n != key.name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({})",
            key.name
        )));
    }
    if info.namespaced
        && let Some(n) = meta_str(obj, "namespace").filter(|n| !n.is_empty())
        && n != key.namespace
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if let Some(rv) = meta_str(obj, "resourceVersion").filter(|r| !r.is_empty()) {
        // The storage layer parses the version first: one that is no number is its
        // error, passed on as a 500.
        if let Some(e) = crate::serving::options::parse_uint_error(rv) {
            return Err(ApiError::new(500, "", e));
        }
        if Some(rv) != meta_str(current, "resourceVersion") {
            return Err(ApiError::conflict(&info.storage_resource(), &key.name));
        }
    }
    Ok(())
}

/// Put back the parts of the body an update may not change: everything but status for a
/// status write, status for a main-resource write (unless applied); and the type meta.
fn carry_over_body(
    info: &ResourceInfo,
    gvr: &Gvr,
    obj: &mut Value,
    current: &Value,
    sub: &str,
    kind: UpdateKind,
) {
    if sub == "status" {
        let status = obj.get("status").cloned();
        *obj = current.clone();
        if let Some(m) = obj.as_object_mut() {
            match status {
                Some(s) => m.insert("status".into(), s),
                None => m.remove("status"),
            };
        }
    } else if kind != UpdateKind::Apply {
        scrub_for_subresource(obj, info, "", Some(current));
    }
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), json!(gvr.api_version()));
        m.insert("kind".into(), json!(info.kind));
    }
}

/// Put back the metadata only the server sets (all of it for a status write), keep an
/// apply's merged managed fields, and drop `selfLink` and an empty finalizer list.
fn carry_over_meta(obj: &mut Value, current: &Value, sub: &str, applied_managed: Option<Value>) {
    let cur_meta = meta(current).cloned().unwrap_or_default();
    let meta = meta_mut(obj);
    for f in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "resourceVersion",
        "managedFields",
    ] {
        match cur_meta.get(f) {
            Some(v) => meta.insert(f.into(), v.clone()),
            None => meta.remove(f),
        };
    }
    if sub == "status" {
        // Status writes keep every other metadata field as it was.
        *meta = cur_meta.clone();
    }
    if let Some(mf) = applied_managed {
        meta.insert("managedFields".into(), mf);
    }
    meta.remove("selfLink");
    if let Some(Value::Array(a)) = meta.get("finalizers")
        && a.is_empty()
    {
        meta.remove("finalizers");
    }
}

/// Bump the generation of a resource that tracks it when the update changes its spec
/// (everything but metadata, and status when that is a subresource).
fn bump_generation(info: &ResourceInfo, obj: &mut Value, current: &Value) {
    if info.tracks_generation
        && spec_part(obj, info.status_subresource) != spec_part(current, info.status_subresource)
    {
        let g = current
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta_mut(obj).insert("generation".into(), json!(g + 1));
    }
}

/// What a patch works on: the resource, the object's key, and the object as stored and
/// as the request's version sees it (both missing when there is none yet).
struct PatchTarget<'a> {
    info: Arc<ResourceInfo>,
    gvr: &'a Gvr,
    namespace: &'a str,
    key: ObjectKey,
    stored: Option<Arc<Value>>,
    current: Option<Arc<Value>>,
}

/// Refuse an apply body that is no object, is of another kind or version than the
/// endpoint's, sets managed fields, names another object, or has fields of the wrong
/// type or unknown to the schema.
fn check_apply_body(
    info: &ResourceInfo,
    gvr: &Gvr,
    api_version: &str,
    name: &str,
    applied: &Value,
    schema: Option<&Value>,
) -> ApiResult<()> {
    if !applied.is_object() {
        return Err(ApiError::bad_request("apply patches must be objects"));
    }
    // The field manager applies objects of the endpoint's kind and version only.
    let said = |k: &str| applied.get(k).and_then(Value::as_str).unwrap_or_default();
    if said("apiVersion") != api_version || said("kind") != info.kind {
        let (group, version) = match said("apiVersion").rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", said("apiVersion")),
        };
        return Err(ApiError::bad_request(format!(
            "invalid object type: {group}/{version}, Kind={}",
            said("kind")
        )));
    }
    if let Some(m) = applied.get("metadata").and_then(Value::as_object) {
        if m.contains_key("managedFields") {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        if m.get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| n != name)
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                m.get("name").and_then(Value::as_str).unwrap_or_default()
            )));
        }
    }
    if let Some(e) = crate::validation::decode::type_error(info, applied) {
        return Err(crate::validation::decode::apply_type_error(
            info, gvr, applied, &e,
        ));
    }
    crate::validation::field_validation::check_apply(info, gvr, applied, schema)
}

/// `cur` with a JSON, merge or strategic merge patch `body` applied, refused when the
/// result has fields of the wrong type (strategic merge is for built-in kinds only).
fn patched_object(
    info: &ResourceInfo,
    kind: PatchKind,
    cur: &Value,
    body: &Value,
    shape: &Shape<'_>,
) -> ApiResult<Value> {
    let patched = match kind {
        PatchKind::Json => patch::json_patch(cur, body)?,
        PatchKind::Merge => patch::merge_patch(cur, body),
        PatchKind::Strategic => {
            if info.crd_name.is_some() {
                return Err(ApiError::unsupported_patch_type(false));
            }
            patch::strategic_merge(cur, body, shape)?
        }
        PatchKind::Apply => cur.clone(),
    };
    if let Some(e) = crate::validation::decode::type_error(info, &patched) {
        return Err(if kind == PatchKind::Strategic {
            crate::validation::decode::strategic_patch_type_error(body, &e)
        } else {
            crate::validation::decode::patch_type_error(&patched, &e)
        });
    }
    Ok(patched)
}

/// Drop what a write to the main resource or to `status` may not change.
fn scrub_for_subresource(obj: &mut Value, info: &ResourceInfo, sub: &str, current: Option<&Value>) {
    let Some(m) = obj.as_object_mut() else { return };
    if sub == "status" {
        m.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status"));
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.retain(|k, _| matches!(k.as_str(), "name" | "namespace" | "resourceVersion"));
        }
    } else if info.status_subresource {
        match current.and_then(|c| c.get("status")) {
            Some(st) => {
                m.insert("status".into(), st.clone());
            }
            None => {
                m.remove("status");
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdateKind {
    Put,
    Patch,
    Apply,
}

impl Inner {
    /// Check a create or update body as kube-apiserver's decoder would: its type meta
    /// (when the raw request body is at hand) and the JSON types of its fields.
    pub(crate) fn decode_body(
        &self,
        info: &ResourceInfo,
        gvr: &Gvr,
        obj: &Value,
        raw: Option<&[u8]>,
    ) -> ApiResult<()> {
        let (kind, version) = match raw {
            Some(raw) => crate::validation::decode::type_meta(info, gvr, obj, raw, |g, v, k| {
                self.registry
                    .by_kind(g, k)
                    .is_some_and(|i| i.crd_name.is_none() && i.versions.iter().any(|x| x == v))
            })?,
            None => (info.kind.clone(), gvr.version.clone()),
        };
        if let Some(e) = crate::validation::decode::type_error(info, obj) {
            return Err(crate::validation::decode::cannot_handle(
                &kind, &version, &info.kind, &e.go,
            ));
        }
        Ok(())
    }

    pub(crate) fn resolve(&self, gvr: &Gvr) -> ApiResult<Arc<ResourceInfo>> {
        self.registry
            .get_versioned(&gvr.group, &gvr.version, &gvr.resource)
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    404,
                    "NotFound",
                    "the server could not find the requested resource",
                )
            })
    }

    /// The resourceVersion a watch of `gr` must resume after (older ones get `410 Gone`).
    pub(crate) fn compacted_rv_of(&self, gr: &GroupResource) -> u64 {
        self.history
            .get(gr)
            .map_or(0, |h| h.compacted_rv)
            .max(self.compacted_rv)
    }

    /// Drop history events older than `watch_history_age`.
    pub(crate) fn expire_history(&mut self) {
        let Some(age) = self.config.watch_history_age else {
            return;
        };
        let Ok(span) = jiff::SignedDuration::try_from(age) else {
            return;
        };
        let Ok(cutoff) = self.config.clock.now().checked_sub(span) else {
            return;
        };
        for history in self.history.values_mut() {
            while history.times.front().is_some_and(|t| *t < cutoff) {
                history.drop_oldest();
            }
        }
    }

    /// The stored object `key` of `gr`, as a `Value`.
    pub(crate) fn lookup(&self, gr: &GroupResource, key: &ObjectKey) -> Option<Arc<Value>> {
        self.entry(gr, key).map(Entry::value)
    }

    /// The stored object `key` of `gr`, frozen.
    pub(crate) fn entry(&self, gr: &GroupResource, key: &ObjectKey) -> Option<&Entry> {
        self.objects.get(gr).and_then(|m| m.get(key))
    }

    /// Whether the object `key` of `gr` exists.
    pub(crate) fn contains(&self, gr: &GroupResource, key: &ObjectKey) -> bool {
        self.entry(gr, key).is_some()
    }

    fn now(&self) -> String {
        format_time(self.config.clock.now())
    }

    /// The namespace `ns`, if it exists.
    pub(crate) fn namespace_state(&self, ns: &str) -> Option<Frozen> {
        self.entry(
            &GroupResource::new("", "namespaces"),
            &ObjectKey::new("", ns),
        )
        .map(|e| e.obj.clone())
    }

    /// Store a new state of an object (or remove it), bump the resourceVersion,
    /// keep the indexes, record history and notify watchers.
    pub(crate) fn commit(
        &mut self,
        gr: &GroupResource,
        key: &ObjectKey,
        mut obj: Value,
        event_type: EventType,
        previous: Option<Arc<Value>>,
    ) -> Arc<Value> {
        self.rv += 1;
        let rv = self.rv;
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        let obj = Arc::new(obj);
        let uid = meta_str(&obj, "uid").unwrap_or_default().to_string();
        // Owner index.
        if let Some(prev) = &previous {
            for o in owner_uids(prev) {
                if let Some(set) = self.dependents.get_mut(&o) {
                    set.remove(&(gr.clone(), key.clone()));
                    if set.is_empty() {
                        self.dependents.remove(&o);
                    }
                }
            }
        }
        let (entry, depth) = Entry::measured(&obj);
        self.deepest = self.deepest.max(depth);
        // The history keeps the state before a modification as it was stored.
        let prior = match event_type {
            EventType::Modified => self.entry(gr, key).map(|e| e.obj.clone()),
            _ => None,
        };
        if event_type == EventType::Deleted {
            if let Some(m) = self.objects.get_mut(gr) {
                m.remove(key);
            }
            self.uids.remove(&uid);
        } else {
            for o in owner_uids(&obj) {
                self.dependents
                    .entry(o)
                    .or_default()
                    .insert((gr.clone(), key.clone()));
            }
            self.objects
                .entry(gr.clone())
                .or_default()
                .insert(key.clone(), entry.clone());
            if !uid.is_empty() {
                self.uids.insert(uid, (gr.clone(), key.clone()));
            }
        }
        if gr.group == crate::validation::rbac::RBAC {
            self.forget_rbac_views();
        }
        let now = self
            .config
            .watch_history_age
            .is_some()
            .then(|| self.config.clock.now());
        let limit = self.config.watch_history;
        let history = self.history.entry(gr.clone()).or_default();
        history.events.push_back(HistoryEvent {
            resource_version: rv,
            event_type,
            group_resource: gr.clone(),
            namespace: key.namespace.clone(),
            object: entry.obj,
            previous: prior,
        });
        while history.events.len() > limit {
            history.drop_oldest();
        }
        if let Some(now) = now {
            history.times.push_back(now);
            self.expire_history();
        }
        if self
            .watchers
            .iter()
            .any(|w| w.wants_change(gr, &key.namespace))
        {
            let ev = Arc::new(StoredEvent {
                resource_version: rv,
                event_type,
                group_resource: gr.clone(),
                namespace: key.namespace.clone(),
                object: obj.clone(),
                previous,
            });
            self.watchers
                .retain(|w| !w.wants(&ev) || w.tx.send(ev.clone()).is_ok());
        }
        if self.watchers.len() > 64 {
            self.watchers.retain(|w| !w.tx.is_closed());
        }
        obj
    }

    /// Create `obj` in `namespace` (with `managed_fields` from a server-side apply, if any):
    /// check its kind, place and name it, stamp its server-set metadata, admit it, store it.
    pub(crate) fn create(
        &mut self,
        info: &Arc<ResourceInfo>,
        gvr: &Gvr,
        namespace: &str,
        mut obj: Value,
        opts: &WriteOptions,
        managed_fields: Option<Value>,
    ) -> ApiResult<Value> {
        let gr = info.storage_resource();
        check_create_kind(info, gvr, &obj)?;
        place_new_object(info, gvr, namespace, &mut obj)?;
        let name = self.name_for_new(info, &gr, namespace, &obj);
        let key = ObjectKey::new(if info.namespaced { namespace } else { "" }, &name);
        if info.namespaced {
            self.check_namespace_open(&gr, namespace, &name)?;
        }
        let now = self.now();
        let uid = self.uidgen.uid();
        stamp_new_meta(info, &mut obj, &name, uid, &now);
        self.admit_new(info, gvr, &mut obj, opts)?;
        // Validation comes first, as kube-apiserver validates before it stores.
        if self.contains(&gr, &key) {
            return Err(ApiError::already_exists(&gr, &name));
        }
        let mut obj = self.to_storage(info, obj)?;
        match managed_fields {
            Some(mf) => {
                meta_mut(&mut obj).insert("managedFields".into(), mf);
            }
            None => record_manager(info, gvr, None, &mut obj, opts, &now, ""),
        }
        crate::validation::kinds::fill_created_status(info, &mut obj);
        if opts.dry_run {
            return Ok(crate::storage::conversion::convert(info, &obj, &gvr.version)?.into_owned());
        }
        crate::storage::limits::check_object_size(&obj)?;
        let stored = self.commit(&gr, &key, obj, EventType::Added, None);
        self.after_write(info, &stored);
        Ok(crate::storage::conversion::convert_for_read(info, &stored, &gvr.version).into_owned())
    }

    /// The name a new object gets: its own, or else one made from its `generateName`
    /// that no object of `gr` in `namespace` has yet (empty when it has neither).
    fn name_for_new(
        &mut self,
        info: &ResourceInfo,
        gr: &GroupResource,
        namespace: &str,
        obj: &Value,
    ) -> String {
        let meta = meta(obj);
        let field = |f: &str| meta.and_then(|m| m.get(f)).and_then(Value::as_str);
        let name = field("name").unwrap_or_default();
        if !name.is_empty() {
            return name.to_string();
        }
        let prefix = field("generateName").unwrap_or_default();
        // Without either, validation reports the missing name.
        while !prefix.is_empty() {
            let candidate = format!("{prefix}{}", self.uidgen.name_suffix());
            let k = ObjectKey::new(if info.namespaced { namespace } else { "" }, &candidate);
            if !self.contains(gr, &k) {
                return candidate;
            }
        }
        String::new()
    }

    /// Refuse a create in a namespace that is being deleted, or (with strict namespaces)
    /// in one that does not exist.
    fn check_namespace_open(
        &self,
        gr: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> ApiResult<()> {
        match self.namespace_state(namespace) {
            Some(ns) if ns.pointer("/metadata/deletionTimestamp").is_some() => {
                Err(ApiError::forbidden(format!(
                    "{} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
                    gr
                ))
                .with_target_pub(gr, name))
            }
            None if self.config.strict_namespaces => Err(ApiError::not_found(
                &GroupResource::new("", "namespaces"),
                namespace,
            )),
            _ => Ok(()),
        }
    }

    /// [`Store::patch`] under the write lock: server-side apply goes its own way; the
    /// other kinds patch the object as the request's version sees it, then update it.
    fn patch(
        &mut self,
        gvr: &Gvr,
        namespace: &str,
        name: &str,
        kind: PatchKind,
        body: &Value,
        opts: &WriteOptions,
    ) -> ApiResult<(Value, bool)> {
        let target = self.patch_target(gvr, namespace, name)?;
        let info = &target.info;
        let schema = info.schema(&gvr.version).cloned();
        let shape = Shape::root(schema.as_deref());
        let now = format_time(self.config.clock.now());
        let api_version = gvr.api_version();
        let writer = Writer {
            manager: opts.manager_name(),
            api_version: &api_version,
            time: &now,
            subresource: opts.sub(),
        };
        if kind == PatchKind::Apply {
            let mut applied = body.clone();
            check_apply_body(info, gvr, &api_version, name, &applied, schema.as_deref())?;
            if opts.sub() == "status" {
                scrub_for_subresource(&mut applied, info, "status", target.current.as_deref());
            } else if info.status_subresource {
                // The applier neither sets nor owns status through the main resource.
                if let Some(m) = applied.as_object_mut() {
                    m.remove("status");
                }
            }
            return self.apply_checked(target, applied, &shape, &writer, opts);
        }
        let PatchTarget {
            info,
            key,
            stored,
            current,
            ..
        } = target;
        let cur = current.ok_or_else(|| ApiError::not_found(&info.storage_resource(), name))?;
        let mut patched = patched_object(&info, kind, &cur, body, &shape)?;
        let checked = crate::validation::field_validation::check_patch(
            &info,
            gvr,
            kind,
            body,
            &mut patched,
            schema.as_deref(),
            opts,
        )?;
        let opts = checked.as_ref().unwrap_or(opts);
        let stored = stored.unwrap_or(cur);
        let out = self.update(&info, gvr, &key, &stored, patched, opts, UpdateKind::Patch)?;
        Ok((out, false))
    }

    /// What a patch of `name` works on: its resource, its key, and the object as stored
    /// and as the request's version sees it.
    fn patch_target<'a>(
        &self,
        gvr: &'a Gvr,
        namespace: &'a str,
        name: &str,
    ) -> ApiResult<PatchTarget<'a>> {
        let info = self.resolve(gvr)?;
        let key = ObjectKey::new(if info.namespaced { namespace } else { "" }, name);
        let stored = self.lookup(&info.storage_resource(), &key);
        // Patches apply to the object as seen in the request's version.
        let current = match &stored {
            Some(s) => Some(
                match crate::storage::conversion::convert(&info, s, &gvr.version)? {
                    std::borrow::Cow::Borrowed(_) => s.clone(),
                    std::borrow::Cow::Owned(v) => Arc::new(v),
                },
            ),
            None => None,
        };
        Ok(PatchTarget {
            info,
            gvr,
            namespace,
            key,
            stored,
            current,
        })
    }

    /// Finish a server-side apply of the checked `applied`: create the object when it is
    /// missing (not through `status`), else merge `applied` into it and update it.
    fn apply_checked(
        &mut self,
        target: PatchTarget<'_>,
        applied: Value,
        shape: &Shape<'_>,
        writer: &Writer<'_>,
        opts: &WriteOptions,
    ) -> ApiResult<(Value, bool)> {
        let PatchTarget {
            info,
            gvr,
            namespace,
            key,
            stored,
            current,
        } = target;
        match current {
            None => {
                if opts.sub() == "status" {
                    return Err(ApiError::not_found(&info.storage_resource(), &key.name));
                }
                let mut obj = applied.clone();
                meta_mut(&mut obj).insert("name".into(), json!(key.name));
                let merged = ssa::apply(None, &applied, shape, writer, opts.force)?;
                let managed = merged.pointer("/metadata/managedFields").cloned();
                let created = self.create(&info, gvr, namespace, obj, opts, managed)?;
                Ok((created, true))
            }
            Some(cur) => {
                let merged = ssa::apply(Some(&cur), &applied, shape, writer, opts.force)?;
                let stored = stored.unwrap_or(cur);
                let out =
                    self.update(&info, gvr, &key, &stored, merged, opts, UpdateKind::Apply)?;
                Ok((out, false))
            }
        }
    }

    /// `obj` converted to the storage version of `info` (its preferred version).
    fn to_storage(&self, info: &ResourceInfo, obj: Value) -> ApiResult<Value> {
        crate::storage::conversion::to_storage(info, obj)
    }

    /// Write `obj` over `current` (a PUT, a patch's result or an apply's merge): check the
    /// body against the target, put back what the write may not change, admit it, record
    /// its manager, and store it when it changes anything.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn update(
        &mut self,
        info: &Arc<ResourceInfo>,
        gvr: &Gvr,
        key: &ObjectKey,
        current: &Arc<Value>,
        mut obj: Value,
        opts: &WriteOptions,
        kind: UpdateKind,
    ) -> ApiResult<Value> {
        let sub = opts.sub();
        // The write is made to the object as seen in the request's version; it is stored in
        // the storage version.
        let stored_current = current;
        let view;
        let current: &Arc<Value> =
            match crate::storage::conversion::convert(info, stored_current, &gvr.version)? {
                std::borrow::Cow::Borrowed(_) => stored_current,
                std::borrow::Cow::Owned(v) => {
                    view = Arc::new(v);
                    &view
                }
            };
        check_update_body(info, gvr, key, current, &obj, sub)?;
        // Start from the body, then put back what this write may not change.
        let incoming_managed = obj.pointer("/metadata/managedFields").cloned();
        let applied_managed = (kind == UpdateKind::Apply)
            .then(|| incoming_managed.clone())
            .flatten();
        carry_over_body(info, gvr, &mut obj, current, sub, kind);
        carry_over_meta(&mut obj, current, sub, applied_managed);
        // Admission (defaulting included) comes first, so that a write differing
        // only in defaulted fields is no spec change.
        self.admit_update(info, gvr, &mut obj, current, opts)?;
        bump_generation(info, &mut obj, current);
        let now = self.now();
        if kind != UpdateKind::Apply {
            if incoming_managed == Some(Value::Array(Vec::new())) {
                meta_mut(&mut obj).remove("managedFields");
            } else {
                record_manager(info, gvr, Some(current), &mut obj, opts, &now, sub);
            }
        }
        // A write that changes nothing does not produce a new resourceVersion.
        if obj == **current {
            return Ok(obj);
        }
        if opts.dry_run {
            return Ok(obj);
        }
        self.store_update(info, gvr, key, stored_current, obj)
    }

    /// Store the updated `obj` over `stored_current` in the storage version (nothing when
    /// that leaves it unchanged), removing it when it is terminating and no finalizer is
    /// left; answers the stored object as a read of the request's version sees it.
    fn store_update(
        &mut self,
        info: &Arc<ResourceInfo>,
        gvr: &Gvr,
        key: &ObjectKey,
        stored_current: &Arc<Value>,
        obj: Value,
    ) -> ApiResult<Value> {
        let gr = info.storage_resource();
        let obj = self.to_storage(info, obj)?;
        if obj == **stored_current {
            return Ok(
                crate::storage::conversion::convert_for_read(info, &obj, &gvr.version).into_owned(),
            );
        }
        crate::storage::limits::check_object_size(&obj)?;
        let terminating = obj.pointer("/metadata/deletionTimestamp").is_some();
        if terminating && pending_finalizers(&gr, &obj).is_empty() {
            let last = self.commit(
                &gr,
                key,
                obj,
                EventType::Modified,
                Some(stored_current.clone()),
            );
            let gone = self.remove_object(&gr, key, &last);
            return Ok(
                crate::storage::conversion::convert_for_read(info, &gone, &gvr.version)
                    .into_owned(),
            );
        }
        let stored = self.commit(
            &gr,
            key,
            obj,
            EventType::Modified,
            Some(stored_current.clone()),
        );
        self.after_write(info, &stored);
        Ok(crate::storage::conversion::convert_for_read(info, &stored, &gvr.version).into_owned())
    }
}

impl ApiError {
    pub(crate) fn with_target_pub(mut self, gr: &GroupResource, name: &str) -> Self {
        self.name = Some(name.to_string());
        self.group = Some(gr.group.clone()).filter(|g| !g.is_empty());
        self.kind = Some(gr.resource.clone());
        self
    }
}
