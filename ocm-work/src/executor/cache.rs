//! The executor validating cache (upstream's `ExecutorValidatingCaches` feature gate).
//!
//! [`ExecutorCache`] remembers, per executor (`"<saNamespace>/<saName>"`) and per
//! [`Dimension`] (group, version, resource, namespace, name and whether the work may also delete
//! the resource), whether the SubjectAccessReviews allowed it. An
//! [`ExecutorValidator`] built
//! [`with_cache`](super::ExecutorValidator::with_cache) answers from it and fills it.
//!
//! [`CacheController`] keeps the answers current:
//!
//! * on start it records every (executor, dimension) the current works need, with an unknown
//!   answer, so RBAC changes for those executors are followed from the beginning;
//! * it watches Roles, ClusterRoles, RoleBindings and ClusterRoleBindings on the managed
//!   cluster. A change of a binding whose subjects include an executor with cache entries, or of
//!   a Role or ClusterRole such a binding refers to, re-runs the reviews for every dimension of
//!   that executor;
//! * every ten minutes (configurable) it drops the entries no current work needs.
//!
//! Differences from upstream, all on the side of re-evaluating more often:
//!
//! * an update of a binding re-evaluates the executors of its old subjects too, so removing a
//!   ServiceAccount from a binding's subjects is noticed;
//! * a ServiceAccount subject of a RoleBinding without a namespace means the binding's namespace
//!   (as the RBAC authorizer reads it), and bindings to the groups a ServiceAccount belongs to
//!   (`system:serviceaccounts`, `system:serviceaccounts:<namespace>`, `system:authenticated`)
//!   or to its user name (`system:serviceaccount:<namespace>:<name>`) count as touching it;
//! * when the cluster does not answer a re-evaluation, the entry becomes unknown (the next
//!   validation asks again) instead of keeping its old answer;
//! * an answer computed by a validation while the controller saw an RBAC change is not stored,
//!   so a review made against the old RBAC cannot overwrite a fresher one.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding, Subject};
use kube::Client;
use kube::api::Api;
use kube::core::GroupVersionKind;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use ocm_api::work::v1::ManifestWork;
use tokio::sync::Notify;

use super::{ExecutorError, ExecutorValidator, Target};
use crate::discovery::ResourceResolver;
use crate::owner::owned_by_the_work;

/// How often [`CacheController`] drops entries no work needs (upstream's resync interval).
pub const CLEANUP_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// What the executor does with a resource: upstream's `ExecuteAction`, part of a [`Dimension`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExecuteAction {
    /// Create, update and delete: the work owns the resource (0 in the dimension's JSON).
    #[default]
    ApplyAndDelete,
    /// Create and update only: the resource is orphaned by the work's delete option (1).
    ApplyNoDelete,
}

impl ExecuteAction {
    /// `ApplyAndDelete` when the work owns the resource, `ApplyNoDelete` otherwise.
    pub fn from_owned(owned: bool) -> Self {
        if owned {
            Self::ApplyAndDelete
        } else {
            Self::ApplyNoDelete
        }
    }

    /// Whether the work owns the resource (and the executor must also be allowed to delete).
    pub fn owned(self) -> bool {
        self == Self::ApplyAndDelete
    }

    /// The number upstream encodes: 0 for `ApplyAndDelete`, 1 for `ApplyNoDelete`.
    pub fn code(self) -> u8 {
        match self {
            Self::ApplyAndDelete => 0,
            Self::ApplyNoDelete => 1,
        }
    }

    /// The name: `ApplyAndDelete` or `ApplyNoDelete`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApplyAndDelete => "ApplyAndDelete",
            Self::ApplyNoDelete => "ApplyNoDelete",
        }
    }
}

impl std::fmt::Display for ExecuteAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a cached answer is about: one resource and what the executor does with it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dimension {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource.
    pub resource: String,
    /// Namespace (`""` when cluster-scoped).
    pub namespace: String,
    /// Object name.
    pub name: String,
    /// Whether the work owns the resource.
    pub execute_action: ExecuteAction,
}

impl Dimension {
    /// The dimension of `target`.
    pub fn from_target(target: &Target<'_>) -> Self {
        Self {
            group: target.group.to_string(),
            version: target.version.to_string(),
            resource: target.resource.to_string(),
            namespace: target.namespace.to_string(),
            name: target.name.to_string(),
            execute_action: ExecuteAction::from_owned(target.owned),
        }
    }

    /// The target this dimension describes.
    pub fn target(&self) -> Target<'_> {
        Target {
            group: &self.group,
            version: &self.version,
            resource: &self.resource,
            namespace: &self.namespace,
            name: &self.name,
            owned: self.execute_action.owned(),
        }
    }

    /// The JSON upstream hashes: Go's encoding of its struct, field names as keys in
    /// declaration order, the action as a number, `<`, `>` and `&` escaped.
    ///
    /// ```
    /// use ocm_work::executor::cache::{Dimension, ExecuteAction};
    ///
    /// let d = Dimension {
    ///     version: "v1".into(),
    ///     resource: "secrets".into(),
    ///     namespace: "ns".into(),
    ///     name: "s".into(),
    ///     execute_action: ExecuteAction::ApplyNoDelete,
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     d.to_go_json(),
    ///     r#"{"Group":"","Version":"v1","Resource":"secrets","Namespace":"ns","Name":"s","ExecuteAction":1}"#
    /// );
    /// ```
    pub fn to_go_json(&self) -> String {
        let mut out = String::with_capacity(96);
        out.push('{');
        for (i, (key, value)) in [
            ("Group", &self.group),
            ("Version", &self.version),
            ("Resource", &self.resource),
            ("Namespace", &self.namespace),
            ("Name", &self.name),
        ]
        .into_iter()
        .enumerate()
        {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "\"{key}\":");
            ocm_api::k8s::gojson::push_string(&mut out, value);
        }
        let _ = write!(out, ",\"ExecuteAction\":{}}}", self.execute_action.code());
        out
    }

    /// The key of this dimension in the cache: hex SHA-256 of [`to_go_json`](Self::to_go_json).
    pub fn hash(&self) -> String {
        ocm_api::k8s::digest::sha256_hex(self.to_go_json().as_bytes())
    }
}

/// The cache key of an executor: `"<saNamespace>/<saName>"`.
pub fn executor_key(sa_namespace: &str, sa_name: &str) -> String {
    format!("{sa_namespace}/{sa_name}")
}

/// What the current works need: executor key → dimensions.
pub type NeededDimensions = HashMap<String, HashSet<Dimension>>;

#[derive(Clone, Debug)]
struct Entry {
    dimension: Dimension,
    allowed: Option<bool>,
}

#[derive(Debug, Default)]
struct Inner {
    /// executor key → dimension hash → entry.
    executors: HashMap<String, HashMap<String, Entry>>,
    /// Bumped by the controller whenever it sees an RBAC change.
    epoch: u64,
}

/// Cached review answers per executor and [`Dimension`]. Cheap to clone; clones share the
/// entries. Safe to use from several tasks.
///
/// An entry's answer is `Some(true)` (allowed), `Some(false)` (denied) or `None` (unknown: the
/// entry only marks the dimension as needed, the next validation asks the cluster).
#[derive(Clone, Default)]
pub struct ExecutorCache {
    inner: Arc<RwLock<Inner>>,
}

impl std::fmt::Debug for ExecutorCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.read();
        f.debug_struct("ExecutorCache")
            .field("executors", &inner.executors.len())
            .field(
                "entries",
                &inner.executors.values().map(HashMap::len).sum::<usize>(),
            )
            .finish()
    }
}

impl ExecutorCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The known answer for `executor` and `dimension`: `None` when there is no entry or its
    /// answer is unknown.
    pub fn lookup(&self, executor: &str, dimension: &Dimension) -> Option<bool> {
        self.read()
            .executors
            .get(executor)
            .and_then(|d| d.get(&dimension.hash()))
            .and_then(|e| e.allowed)
    }

    /// Whether there is an entry (known or not) for `executor` and `dimension`.
    pub fn contains(&self, executor: &str, dimension: &Dimension) -> bool {
        self.read()
            .executors
            .get(executor)
            .is_some_and(|d| d.contains_key(&dimension.hash()))
    }

    /// Whether `executor` has any entry.
    pub fn has_executor(&self, executor: &str) -> bool {
        self.read().executors.contains_key(executor)
    }

    /// Sets the answer for `executor` and `dimension` (`None`: unknown), adding the entry.
    pub fn insert(&self, executor: &str, dimension: Dimension, allowed: Option<bool>) {
        let hash = dimension.hash();
        self.write()
            .executors
            .entry(executor.to_string())
            .or_default()
            .insert(hash, Entry { dimension, allowed });
    }

    /// Removes the entry for `executor` and `dimension`; returns whether there was one. An
    /// executor without entries is forgotten.
    pub fn remove(&self, executor: &str, dimension: &Dimension) -> bool {
        let mut inner = self.write();
        let Some(dimensions) = inner.executors.get_mut(executor) else {
            return false;
        };
        let removed = dimensions.remove(&dimension.hash()).is_some();
        if dimensions.is_empty() {
            inner.executors.remove(executor);
        }
        removed
    }

    /// The entries of `executor`: each dimension with its answer.
    pub fn entries(&self, executor: &str) -> Vec<(Dimension, Option<bool>)> {
        let mut entries: Vec<_> = self
            .read()
            .executors
            .get(executor)
            .map(|d| {
                d.values()
                    .map(|e| (e.dimension.clone(), e.allowed))
                    .collect()
            })
            .unwrap_or_default();
        entries.sort();
        entries
    }

    /// The executors with entries, sorted.
    pub fn executors(&self) -> Vec<String> {
        let mut keys: Vec<_> = self.read().executors.keys().cloned().collect();
        keys.sort();
        keys
    }

    /// The number of entries over all executors.
    pub fn len(&self) -> usize {
        self.read().executors.values().map(HashMap::len).sum()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.read().executors.is_empty()
    }

    /// Adds an unknown entry for every needed dimension that has none (existing answers stay).
    pub fn prepopulate(&self, needed: &NeededDimensions) {
        let mut inner = self.write();
        for (executor, dimensions) in needed {
            let cached = inner.executors.entry(executor.clone()).or_default();
            for dimension in dimensions {
                cached.entry(dimension.hash()).or_insert_with(|| Entry {
                    dimension: dimension.clone(),
                    allowed: None,
                });
            }
            if cached.is_empty() {
                inner.executors.remove(executor);
            }
        }
    }

    /// Drops every entry that is not in `needed`; returns how many were dropped.
    pub fn retain_needed(&self, needed: &NeededDimensions) -> usize {
        let mut inner = self.write();
        let mut dropped = 0;
        inner.executors.retain(|executor, cached| {
            let before = cached.len();
            match needed.get(executor) {
                None => cached.clear(),
                Some(dimensions) => {
                    let keep: HashSet<String> = dimensions.iter().map(Dimension::hash).collect();
                    cached.retain(|hash, _| keep.contains(hash));
                }
            }
            dropped += before - cached.len();
            !cached.is_empty()
        });
        dropped
    }

    /// The current RBAC-change counter.
    pub(crate) fn epoch(&self) -> u64 {
        self.read().epoch
    }

    /// Records that the RBAC objects changed.
    fn bump_epoch(&self) {
        let mut inner = self.write();
        inner.epoch = inner.epoch.wrapping_add(1);
    }

    /// Stores `allowed` unless an RBAC change was seen since `epoch` was read.
    pub(crate) fn insert_unless_changed(
        &self,
        executor: &str,
        dimension: Dimension,
        allowed: bool,
        epoch: u64,
    ) {
        let mut inner = self.write();
        if inner.epoch != epoch {
            return;
        }
        let hash = dimension.hash();
        inner
            .executors
            .entry(executor.to_string())
            .or_default()
            .insert(
                hash,
                Entry {
                    dimension,
                    allowed: Some(allowed),
                },
            );
    }

    /// Sets the answer of an existing entry (a dropped entry stays dropped).
    fn update_existing(&self, executor: &str, dimension: &Dimension, allowed: Option<bool>) {
        if let Some(entry) = self
            .write()
            .executors
            .get_mut(executor)
            .and_then(|d| d.get_mut(&dimension.hash()))
        {
            entry.allowed = allowed;
        }
    }
}

/// The (executor, dimension) pairs `works` need: for every work whose executor is a
/// ServiceAccount, one dimension per manifest, the resource resolved through `resolver` and the
/// action from the work's delete option. Manifests that cannot be decoded or resolved are
/// skipped.
pub async fn needed_dimensions(
    resolver: &ResourceResolver,
    works: &[ManifestWork],
) -> NeededDimensions {
    let mut needed = NeededDimensions::new();
    for work in works {
        let Some(sa) = work
            .spec
            .executor
            .as_ref()
            .and_then(|e| e.subject.as_ref())
            // As upstream's loader: only ServiceAccount subjects are validated at all.
            .filter(|s| s.type_ == ocm_api::work::v1::ExecutorSubjectType::ServiceAccount)
            .and_then(|s| s.service_account.as_ref())
        else {
            continue;
        };
        let executor = executor_key(&sa.namespace, &sa.name);
        for manifest in work.spec.manifests() {
            let (Some(api_version), Some(kind), Some(name)) =
                (manifest.api_version(), manifest.kind(), manifest.name())
            else {
                continue;
            };
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            let gvk = GroupVersionKind::gvk(group, version, kind);
            let Ok(resolved) = resolver.resolve(&gvk).await else {
                tracing::debug!(%kind, work = ?work.metadata.name, "executor cache: unknown kind skipped");
                continue;
            };
            let namespace = if resolved.namespaced {
                manifest.namespace().unwrap_or_default()
            } else {
                ""
            };
            let resource = resolved.api_resource.plural.as_str();
            let owned = owned_by_the_work(
                group,
                resource,
                namespace,
                name,
                work.spec.delete_option.as_ref(),
            );
            needed
                .entry(executor.clone())
                .or_default()
                .insert(Dimension {
                    group: group.to_string(),
                    version: version.to_string(),
                    resource: resource.to_string(),
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                    execute_action: ExecuteAction::from_owned(owned),
                });
        }
    }
    needed
}

/// Keeps an [`ExecutorCache`] current: follows RBAC changes on the managed cluster and drops
/// entries no work needs. See the [module documentation](self).
///
/// ```no_run
/// # async fn demo(spoke: kube::Client) {
/// use ocm_work::executor::ExecutorValidator;
/// use ocm_work::executor::cache::{CacheController, ExecutorCache};
///
/// let cache = ExecutorCache::new();
/// let validator = ExecutorValidator::new(spoke.clone()).with_cache(cache.clone());
/// let controller = CacheController::new(spoke, cache, Vec::new);
/// tokio::spawn(controller.run(std::future::pending()));
/// # let _ = validator;
/// # }
/// ```
pub struct CacheController<W> {
    spoke: Client,
    cache: ExecutorCache,
    works: W,
    resolver: ResourceResolver,
    cleanup_interval: Duration,
}

impl<W> std::fmt::Debug for CacheController<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheController")
            .field("cache", &self.cache)
            .field("cleanup_interval", &self.cleanup_interval)
            .finish_non_exhaustive()
    }
}

impl<W> CacheController<W>
where
    W: Fn() -> Vec<ManifestWork> + Send + Sync,
{
    /// A controller for `cache`, asking the managed cluster behind `spoke` (the cluster the
    /// reviews go to) and calling `works` for the current ManifestWorks of the cluster (on
    /// start and before every cleanup).
    pub fn new(spoke: Client, cache: ExecutorCache, works: W) -> Self {
        Self {
            resolver: ResourceResolver::new(spoke.clone()),
            spoke,
            cache,
            works,
            cleanup_interval: CLEANUP_INTERVAL,
        }
    }

    /// Resolves manifests' kinds with `resolver` (for example the apply engine's) instead of a
    /// resolver of its own.
    pub fn resolver(mut self, resolver: ResourceResolver) -> Self {
        self.resolver = resolver;
        self
    }

    /// Drops unneeded entries this often instead of every [`CLEANUP_INTERVAL`] (a zero
    /// interval is taken as one millisecond).
    pub fn cleanup_interval(mut self, every: Duration) -> Self {
        self.cleanup_interval = every.max(Duration::from_millis(1));
        self
    }

    /// Runs until `shutdown` completes: pre-populates the cache from the works, then watches
    /// the RBAC objects, re-evaluates affected executors and cleans up periodically.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::select! {
            () = shutdown => {}
            () = self.work() => {}
        }
    }

    /// Pre-populates, then follows RBAC changes and cleans up; never returns.
    async fn work(&self) {
        let needed = needed_dimensions(&self.resolver, &(self.works)()).await;
        self.cache.prepopulate(&needed);

        let queue = Queue::default();
        let validator = ExecutorValidator::new(self.spoke.clone());
        let events = follow_rbac(&self.spoke, &self.cache, &queue);
        let worker = async {
            loop {
                while let Some(executor) = queue.pop() {
                    refresh(&validator, &self.cache, &executor).await;
                }
                queue.wake.notified().await;
            }
        };
        let cleanup = async {
            let mut tick = tokio::time::interval(self.cleanup_interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let needed = needed_dimensions(&self.resolver, &(self.works)()).await;
                let dropped = self.cache.retain_needed(&needed);
                tracing::debug!(
                    dropped,
                    left = self.cache.len(),
                    "executor cache cleaned up"
                );
            }
        };
        tokio::join!(events, worker, cleanup);
    }
}

/// Runs a [`CacheController`] for `cache` with the default cleanup interval until `shutdown`
/// completes. `works` lists the cluster's current ManifestWorks.
pub async fn run_cache_controller<W>(
    spoke: Client,
    cache: ExecutorCache,
    works: W,
    shutdown: impl Future<Output = ()>,
) where
    W: Fn() -> Vec<ManifestWork> + Send + Sync,
{
    CacheController::new(spoke, cache, works)
        .run(shutdown)
        .await;
}

/// Executors waiting for re-evaluation, each at most once.
#[derive(Default)]
struct Queue {
    pending: Mutex<(VecDeque<String>, HashSet<String>)>,
    wake: Notify,
}

impl Queue {
    fn push(&self, executor: String) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.1.insert(executor.clone()) {
            pending.0.push_back(executor);
            self.wake.notify_one();
        }
    }

    fn pop(&self) -> Option<String> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let executor = pending.0.pop_front()?;
        pending.1.remove(&executor);
        Some(executor)
    }
}

/// Re-runs the reviews for every cached dimension of `executor`.
async fn refresh(validator: &ExecutorValidator, cache: &ExecutorCache, executor: &str) {
    let Some((sa_namespace, sa_name)) = executor.split_once('/') else {
        return;
    };
    for (dimension, _) in cache.entries(executor) {
        let answer = match validator
            .check_subject_access_reviews(sa_namespace, sa_name, dimension.target())
            .await
        {
            Ok(()) => Some(true),
            Err(ExecutorError::NotAllowed(_)) => Some(false),
            Err(error) => {
                tracing::debug!(%executor, ?dimension, %error, "executor cache: review failed");
                None
            }
        };
        cache.update_existing(executor, &dimension, answer);
    }
}

/// Who a binding grants to, as far as executors are concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Grantee {
    /// One ServiceAccount (executor key).
    Executor(String),
    /// Every ServiceAccount of a namespace.
    Namespace(String),
    /// Every ServiceAccount.
    All,
}

fn grantees(subjects: &[Subject], binding_namespace: &str) -> Vec<Grantee> {
    let mut out = Vec::new();
    for subject in subjects {
        match subject.kind.as_str() {
            "ServiceAccount" => {
                let namespace = subject
                    .namespace
                    .as_deref()
                    .filter(|n| !n.is_empty())
                    .unwrap_or(binding_namespace);
                out.push(Grantee::Executor(executor_key(namespace, &subject.name)));
            }
            "User" => {
                if let Some((namespace, name)) = subject
                    .name
                    .strip_prefix("system:serviceaccount:")
                    .and_then(|rest| rest.split_once(':'))
                {
                    out.push(Grantee::Executor(executor_key(namespace, name)));
                }
            }
            "Group" => match subject.name.as_str() {
                "system:serviceaccounts" | "system:authenticated" => out.push(Grantee::All),
                group => {
                    if let Some(namespace) = group.strip_prefix("system:serviceaccounts:") {
                        out.push(Grantee::Namespace(namespace.to_string()));
                    }
                }
            },
            _ => {}
        }
    }
    out
}

/// What the controller remembers of a binding.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Binding {
    namespace: String,
    role_kind: String,
    role_name: String,
    grantees: Vec<Grantee>,
    resource_version: Option<String>,
}

impl Binding {
    fn refers_to_role(&self, namespace: &str, name: &str) -> bool {
        self.role_kind == "Role" && self.namespace == namespace && self.role_name == name
    }

    fn refers_to_cluster_role(&self, name: &str) -> bool {
        self.role_kind == "ClusterRole" && self.role_name == name
    }
}

/// One watched kind's objects (key → remembered value), replaced atomically after a re-list.
struct Tracked<V> {
    live: HashMap<String, V>,
    buffer: Option<HashMap<String, V>>,
}

impl<V> Default for Tracked<V> {
    fn default() -> Self {
        Self {
            live: HashMap::new(),
            buffer: None,
        }
    }
}

/// A change of one object: its remembered value before and after.
struct Change<V> {
    key: String,
    old: Option<V>,
    new: Option<V>,
}

impl<V: Clone + PartialEq> Tracked<V> {
    /// Applies a watch event, returning the changes; `remember` gives an object's key and value.
    fn apply<K>(
        &mut self,
        event: Event<K>,
        remember: impl Fn(&K) -> (String, V),
    ) -> Vec<Change<V>> {
        match event {
            Event::Init => {
                self.buffer = Some(HashMap::new());
                Vec::new()
            }
            Event::InitApply(object) => {
                let (key, value) = remember(&object);
                self.buffer
                    .get_or_insert_with(HashMap::new)
                    .insert(key, value);
                Vec::new()
            }
            Event::InitDone => {
                let fresh = self.buffer.take().unwrap_or_default();
                let mut changes = Vec::new();
                for (key, value) in &fresh {
                    let old = self.live.get(key);
                    if old != Some(value) {
                        changes.push(Change {
                            key: key.clone(),
                            old: old.cloned(),
                            new: Some(value.clone()),
                        });
                    }
                }
                for (key, value) in &self.live {
                    if !fresh.contains_key(key) {
                        changes.push(Change {
                            key: key.clone(),
                            old: Some(value.clone()),
                            new: None,
                        });
                    }
                }
                self.live = fresh;
                changes
            }
            Event::Apply(object) => {
                let (key, value) = remember(&object);
                let old = self.live.insert(key.clone(), value.clone());
                vec![Change {
                    key,
                    old,
                    new: Some(value),
                }]
            }
            Event::Delete(object) => {
                let (key, value) = remember(&object);
                let old = self.live.remove(&key).or(Some(value));
                vec![Change {
                    key,
                    old,
                    new: None,
                }]
            }
        }
    }
}

fn object_key(namespace: Option<&str>, name: Option<&str>) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{}", name.unwrap_or_default()),
        _ => name.unwrap_or_default().to_string(),
    }
}

/// The RBAC objects the controller follows.
#[derive(Default)]
struct RbacState {
    roles: Tracked<Option<String>>,
    cluster_roles: Tracked<Option<String>>,
    role_bindings: Tracked<Binding>,
    cluster_role_bindings: Tracked<Binding>,
}

enum RbacEvent {
    Role(Event<Role>),
    ClusterRole(Event<ClusterRole>),
    RoleBinding(Event<RoleBinding>),
    ClusterRoleBinding(Event<ClusterRoleBinding>),
}

fn watch<K>(
    api: Api<K>,
    wrap: fn(Event<K>) -> RbacEvent,
) -> std::pin::Pin<Box<dyn Stream<Item = Result<RbacEvent, watcher::Error>> + Send>>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .map(move |event| event.map(wrap))
        .boxed()
}

fn binding_of(
    namespace: &str,
    role_kind: &str,
    role_name: &str,
    subjects: Option<&Vec<Subject>>,
    resource_version: Option<&String>,
) -> Binding {
    Binding {
        namespace: namespace.to_string(),
        role_kind: role_kind.to_string(),
        role_name: role_name.to_string(),
        grantees: grantees(subjects.map_or(&[], Vec::as_slice), namespace),
        resource_version: resource_version.cloned(),
    }
}

impl RbacState {
    /// Applies `event` and returns the grantees whose permissions it may have changed.
    fn handle(&mut self, event: RbacEvent) -> Vec<Grantee> {
        let mut touched = Vec::new();
        let binding_changes = |touched: &mut Vec<Grantee>, changes: Vec<Change<Binding>>| {
            for change in changes {
                for binding in change.old.iter().chain(change.new.iter()) {
                    touched.extend(binding.grantees.iter().cloned());
                }
            }
        };
        match event {
            RbacEvent::RoleBinding(event) => {
                let changes = self.role_bindings.apply(event, |rb: &RoleBinding| {
                    let namespace = rb.metadata.namespace.as_deref().unwrap_or_default();
                    (
                        object_key(Some(namespace), rb.metadata.name.as_deref()),
                        binding_of(
                            namespace,
                            &rb.role_ref.kind,
                            &rb.role_ref.name,
                            rb.subjects.as_ref(),
                            rb.metadata.resource_version.as_ref(),
                        ),
                    )
                });
                binding_changes(&mut touched, changes);
            }
            RbacEvent::ClusterRoleBinding(event) => {
                let changes =
                    self.cluster_role_bindings
                        .apply(event, |crb: &ClusterRoleBinding| {
                            (
                                object_key(None, crb.metadata.name.as_deref()),
                                binding_of(
                                    "",
                                    &crb.role_ref.kind,
                                    &crb.role_ref.name,
                                    crb.subjects.as_ref(),
                                    crb.metadata.resource_version.as_ref(),
                                ),
                            )
                        });
                binding_changes(&mut touched, changes);
            }
            RbacEvent::Role(event) => {
                let changes = self.roles.apply(event, |role: &Role| {
                    (
                        object_key(
                            role.metadata.namespace.as_deref(),
                            role.metadata.name.as_deref(),
                        ),
                        role.metadata.resource_version.clone(),
                    )
                });
                for change in changes {
                    let (namespace, name) = change.key.split_once('/').unwrap_or(("", &change.key));
                    for binding in self.role_bindings.live.values() {
                        if binding.refers_to_role(namespace, name) {
                            touched.extend(binding.grantees.iter().cloned());
                        }
                    }
                }
            }
            RbacEvent::ClusterRole(event) => {
                let changes = self.cluster_roles.apply(event, |role: &ClusterRole| {
                    (
                        object_key(None, role.metadata.name.as_deref()),
                        role.metadata.resource_version.clone(),
                    )
                });
                for change in changes {
                    for binding in self
                        .role_bindings
                        .live
                        .values()
                        .chain(self.cluster_role_bindings.live.values())
                    {
                        if binding.refers_to_cluster_role(&change.key) {
                            touched.extend(binding.grantees.iter().cloned());
                        }
                    }
                }
            }
        }
        touched
    }
}

/// The executors with cache entries among `grantees`, each once.
fn interested(cache: &ExecutorCache, grantees: &[Grantee]) -> Vec<String> {
    if grantees.is_empty() {
        return Vec::new();
    }
    let cached = cache.executors();
    let mut out: Vec<String> = Vec::new();
    for executor in &cached {
        let namespace = executor.split_once('/').map_or("", |(ns, _)| ns);
        let hit = grantees.iter().any(|g| match g {
            Grantee::Executor(key) => key == executor,
            Grantee::Namespace(ns) => ns == namespace,
            Grantee::All => true,
        });
        if hit {
            out.push(executor.clone());
        }
    }
    out
}

/// Watches the RBAC objects and queues the executors their changes touch. Never returns.
async fn follow_rbac(spoke: &Client, cache: &ExecutorCache, queue: &Queue) {
    let mut streams = futures::stream::select_all([
        watch(Api::<Role>::all(spoke.clone()), RbacEvent::Role),
        watch(
            Api::<ClusterRole>::all(spoke.clone()),
            RbacEvent::ClusterRole,
        ),
        watch(
            Api::<RoleBinding>::all(spoke.clone()),
            RbacEvent::RoleBinding,
        ),
        watch(
            Api::<ClusterRoleBinding>::all(spoke.clone()),
            RbacEvent::ClusterRoleBinding,
        ),
    ]);
    let mut state = RbacState::default();
    while let Some(event) = streams.next().await {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                tracing::warn!(%error, "executor cache: RBAC watch failed; retrying");
                continue;
            }
        };
        let grantees = state.handle(event);
        if grantees.is_empty() {
            continue;
        }
        // Bump first: a validation storing its answer after this is discarded, one that stored
        // before is seen by `interested` and re-evaluated.
        cache.bump_epoch();
        for executor in interested(cache, &grantees) {
            tracing::debug!(%executor, "executor cache: RBAC changed; re-evaluating");
            queue.push(executor);
        }
    }
    std::future::pending::<()>().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(name: &str, action: ExecuteAction) -> Dimension {
        Dimension {
            group: String::new(),
            version: "v1".into(),
            resource: "secrets".into(),
            namespace: "ns".into(),
            name: name.into(),
            execute_action: action,
        }
    }

    #[test]
    fn dimension_json_is_gos() {
        let mut d = dim("a<b>&\"\\\n\u{1}\u{2028}é", ExecuteAction::ApplyAndDelete);
        d.group = "apps".into();
        assert_eq!(
            d.to_go_json(),
            "{\"Group\":\"apps\",\"Version\":\"v1\",\"Resource\":\"secrets\",\"Namespace\":\"ns\",\
             \"Name\":\"a\\u003cb\\u003e\\u0026\\\"\\\\\\n\\u0001\\u2028é\",\"ExecuteAction\":0}"
        );
    }

    #[test]
    fn dimension_hash_is_hex_sha256_of_the_json() {
        let d = dim("s", ExecuteAction::ApplyNoDelete);
        let hash = d.hash();
        assert_eq!(hash.len(), 64);
        assert!(
            hash.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        let expected = ring::digest::digest(&ring::digest::SHA256, d.to_go_json().as_bytes());
        let expected: String = expected
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hash, expected);
        assert_ne!(hash, dim("s", ExecuteAction::ApplyAndDelete).hash());
        // Empty input: sha256 of {"Group":"",...,"ExecuteAction":0} is well defined too.
        assert_eq!(Dimension::default().hash().len(), 64);
    }

    #[test]
    fn execute_action_round_trips() {
        assert_eq!(
            ExecuteAction::from_owned(true),
            ExecuteAction::ApplyAndDelete
        );
        assert_eq!(
            ExecuteAction::from_owned(false),
            ExecuteAction::ApplyNoDelete
        );
        assert!(ExecuteAction::ApplyAndDelete.owned());
        assert!(!ExecuteAction::ApplyNoDelete.owned());
        assert_eq!(ExecuteAction::ApplyNoDelete.to_string(), "ApplyNoDelete");
        assert_eq!(ExecuteAction::ApplyAndDelete.code(), 0);
    }

    #[test]
    fn store_basic_operations() {
        let cache = ExecutorCache::new();
        let a = dim("a", ExecuteAction::ApplyAndDelete);
        let b = dim("b", ExecuteAction::ApplyNoDelete);
        assert_eq!(cache.lookup("ns/sa", &a), None);
        assert!(!cache.has_executor("ns/sa"));
        cache.insert("ns/sa", a.clone(), Some(true));
        cache.insert("ns/sa", b.clone(), None);
        assert_eq!(cache.lookup("ns/sa", &a), Some(true));
        assert_eq!(cache.lookup("ns/sa", &b), None);
        assert!(cache.contains("ns/sa", &b));
        assert_eq!(cache.len(), 2);
        cache.insert("ns/sa", b.clone(), Some(false));
        assert_eq!(cache.lookup("ns/sa", &b), Some(false));
        assert_eq!(cache.len(), 2);
        assert_eq!(
            cache.entries("ns/sa"),
            vec![(a.clone(), Some(true)), (b.clone(), Some(false))]
        );
        assert!(cache.remove("ns/sa", &a));
        assert!(!cache.remove("ns/sa", &a));
        assert!(cache.remove("ns/sa", &b));
        assert!(!cache.has_executor("ns/sa"));
        assert!(cache.is_empty());
    }

    #[test]
    fn retain_and_prepopulate() {
        let cache = ExecutorCache::new();
        let a = dim("a", ExecuteAction::ApplyAndDelete);
        let b = dim("b", ExecuteAction::ApplyAndDelete);
        cache.insert("ns/one", a.clone(), Some(true));
        cache.insert("ns/one", b.clone(), Some(false));
        cache.insert("ns/two", a.clone(), Some(true));
        let mut needed = NeededDimensions::new();
        needed.insert("ns/one".into(), [a.clone()].into());
        needed.insert("ns/three".into(), [b.clone()].into());
        assert_eq!(cache.retain_needed(&needed), 2);
        assert_eq!(cache.executors(), vec!["ns/one".to_string()]);
        cache.prepopulate(&needed);
        assert_eq!(cache.lookup("ns/one", &a), Some(true), "answers stay");
        assert!(cache.contains("ns/three", &b));
        assert_eq!(cache.lookup("ns/three", &b), None);
        needed.insert("ns/empty".into(), HashSet::new());
        cache.prepopulate(&needed);
        assert!(!cache.has_executor("ns/empty"));
    }

    #[test]
    fn epoch_guards_stale_answers() {
        let cache = ExecutorCache::new();
        let a = dim("a", ExecuteAction::ApplyAndDelete);
        let epoch = cache.epoch();
        cache.bump_epoch();
        cache.insert_unless_changed("ns/sa", a.clone(), false, epoch);
        assert!(!cache.contains("ns/sa", &a));
        cache.insert_unless_changed("ns/sa", a.clone(), true, cache.epoch());
        assert_eq!(cache.lookup("ns/sa", &a), Some(true));
        cache.update_existing("ns/other", &a, Some(true));
        assert!(!cache.has_executor("ns/other"), "updates never add");
    }

    #[test]
    fn concurrent_use() {
        let cache = ExecutorCache::new();
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let cache = cache.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let d = dim(&format!("n{}", i % 20), ExecuteAction::ApplyAndDelete);
                        let key = format!("ns/sa{}", t % 3);
                        cache.insert(&key, d.clone(), Some(i % 2 == 0));
                        let _ = cache.lookup(&key, &d);
                        if i % 7 == 0 {
                            cache.remove(&key, &d);
                        }
                        let _ = cache.entries(&key);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("thread");
        }
        assert!(cache.len() <= 60);
    }

    #[test]
    fn grantees_of_subjects() {
        let subject = |kind: &str, name: &str, ns: Option<&str>| Subject {
            kind: kind.into(),
            name: name.into(),
            namespace: ns.map(str::to_string),
            ..Default::default()
        };
        let got = grantees(
            &[
                subject("ServiceAccount", "sa", Some("other")),
                subject("ServiceAccount", "local", None),
                subject("User", "system:serviceaccount:x:y", None),
                subject("User", "alice", None),
                subject("Group", "system:serviceaccounts:team", None),
                subject("Group", "system:authenticated", None),
                subject("Group", "devs", None),
                subject("", "", None),
            ],
            "bind-ns",
        );
        assert_eq!(
            got,
            vec![
                Grantee::Executor("other/sa".into()),
                Grantee::Executor("bind-ns/local".into()),
                Grantee::Executor("x/y".into()),
                Grantee::Namespace("team".into()),
                Grantee::All,
            ]
        );
        let cache = ExecutorCache::new();
        let a = dim("a", ExecuteAction::ApplyAndDelete);
        cache.insert("team/one", a.clone(), None);
        cache.insert("else/two", a, None);
        assert_eq!(
            interested(&cache, &[Grantee::Namespace("team".into())]),
            vec!["team/one".to_string()]
        );
        assert_eq!(interested(&cache, &[Grantee::All]).len(), 2);
        assert!(interested(&cache, &[Grantee::Executor("no/one".into())]).is_empty());
    }

    #[test]
    fn queue_deduplicates() {
        let queue = Queue::default();
        queue.push("a/b".into());
        queue.push("a/b".into());
        queue.push("c/d".into());
        assert_eq!(queue.pop().as_deref(), Some("a/b"));
        queue.push("a/b".into());
        assert_eq!(queue.pop().as_deref(), Some("c/d"));
        assert_eq!(queue.pop().as_deref(), Some("a/b"));
        assert_eq!(queue.pop(), None);
    }
}
