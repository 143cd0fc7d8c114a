//! The resource registry: which resources a fake cluster serves and how.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// A resource within an API group, e.g. `deployments.apps` or `configmaps`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupResource {
    /// API group; empty for the core group.
    pub group: String,
    /// Plural resource name, e.g. `configmaps`.
    pub resource: String,
}

impl GroupResource {
    /// Build from a group and a plural resource name.
    pub fn new(group: impl Into<String>, resource: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            resource: resource.into(),
        }
    }
}

impl fmt::Display for GroupResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// One `additionalPrinterColumns` entry of a CRD version.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PrinterColumn {
    /// Column header.
    pub name: String,
    /// OpenAPI type: `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: String,
    /// Kubernetes JSONPath into the object (without braces), e.g. `.spec.replicas` or
    /// `.status.conditions[?(@.type=="Ready")].status`.
    pub json_path: String,
    /// Column description.
    pub description: String,
    /// Priority; 0 columns are shown by default.
    pub priority: i64,
    /// OpenAPI format (`name`, …), often empty.
    pub format: String,
}

/// How one resource is served.
///
/// Built with [`ResourceInfo::new`], then changed field by field (the type may gain fields,
/// so it cannot be written as a struct literal outside this crate):
///
/// ```
/// use ocm_testkit::{FakeCluster, Gvr};
/// use ocm_testkit::registry::ResourceInfo;
///
/// let mut info = ResourceInfo::new("example.com", "v1", "Widget", "widgets", true);
/// info.status_subresource = true;
/// info.short_names = vec!["wd".into()];
/// let cluster = FakeCluster::new();
/// cluster.store().register(info);
/// assert!(cluster.store().resolve(&Gvr::new("example.com", "v1", "widgets")).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResourceInfo {
    /// API group; empty for the core group.
    pub group: String,
    /// Served versions; the first is the preferred one.
    pub versions: Vec<String>,
    /// Kind, e.g. `ConfigMap`.
    pub kind: String,
    /// Plural name, e.g. `configmaps`.
    pub plural: String,
    /// Singular name, e.g. `configmap`.
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether a `/status` subresource exists (main writes then ignore status).
    pub status_subresource: bool,
    /// Whether `metadata.generation` is maintained.
    pub tracks_generation: bool,
    /// Short names for kubectl, e.g. `cm`.
    pub short_names: Vec<String>,
    /// Categories, e.g. `all`.
    pub categories: Vec<String>,
    /// Verbs advertised in discovery.
    pub verbs: Vec<String>,
    /// The structural schema (`openAPIV3Schema`) per version, for CRDs.
    pub schemas: BTreeMap<String, Arc<Value>>,
    /// Printer columns, for CRDs.
    pub printer_columns: Vec<PrinterColumn>,
    /// Name of the CustomResourceDefinition that registered this resource, if any.
    pub crd_name: Option<String>,
    /// The `scale` subresource (autoscaling/v1 `Scale`), if the resource has one.
    pub scale: Option<ScaleSubresource>,
}

/// Where a resource keeps what its `scale` subresource shows: JSON paths as a CRD's
/// `subresources.scale` names them (`.spec.replicas`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScaleSubresource {
    /// The desired replicas (`Scale.spec.replicas`).
    pub spec_replicas_path: String,
    /// The observed replicas (`Scale.status.replicas`).
    pub status_replicas_path: String,
    /// A string label selector (`Scale.status.selector`), for custom resources; built-in
    /// workloads render their `spec.selector` instead.
    pub label_selector_path: Option<String>,
}

impl PrinterColumn {
    /// A column `name` of OpenAPI type `type_` showing `json_path`, with no description,
    /// priority 0 and no format.
    pub fn new(
        name: impl Into<String>,
        type_: impl Into<String>,
        json_path: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            type_: type_.into(),
            json_path: json_path.into(),
            description: String::new(),
            priority: 0,
            format: String::new(),
        }
    }
}

impl ScaleSubresource {
    /// A scale subresource reading the desired replicas at `spec_replicas_path` and the
    /// observed ones at `status_replicas_path`, with no label selector path.
    pub fn new(
        spec_replicas_path: impl Into<String>,
        status_replicas_path: impl Into<String>,
    ) -> Self {
        Self {
            spec_replicas_path: spec_replicas_path.into(),
            status_replicas_path: status_replicas_path.into(),
            label_selector_path: None,
        }
    }
}

impl ResourceInfo {
    /// A resource of `group` (empty for the core group) served at `version`, of kind `kind`
    /// and plural `plural`, namespaced or not. The singular is the kind in lower case; it has
    /// the standard verbs, no subresources, no short names, categories, schemas or printer
    /// columns, does not track `metadata.generation` and belongs to no CRD. Change the
    /// fields for more.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
        plural: impl Into<String>,
        namespaced: bool,
    ) -> Self {
        let kind = kind.into();
        Self {
            group: group.into(),
            versions: vec![version.into()],
            singular: kind.to_lowercase(),
            kind,
            plural: plural.into(),
            namespaced,
            status_subresource: false,
            tracks_generation: false,
            short_names: Vec::new(),
            categories: Vec::new(),
            verbs: Self::standard_verbs(),
            schemas: BTreeMap::new(),
            printer_columns: Vec::new(),
            crd_name: None,
            scale: None,
        }
    }

    /// The group and resource.
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(self.group.clone(), self.plural.clone())
    }

    /// Where objects of this resource are kept: its own group and resource, except for
    /// `events.k8s.io` Events, which share the core `v1` Events' store.
    pub fn storage_resource(&self) -> GroupResource {
        if self.group == "events.k8s.io" && self.plural == "events" {
            GroupResource::new("", "events")
        } else {
            self.group_resource()
        }
    }

    /// The preferred version.
    pub fn preferred_version(&self) -> &str {
        self.versions.first().map(String::as_str).unwrap_or("v1")
    }

    /// `apiVersion` for a given version: `v1` or `apps/v1`.
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{}", self.group, version)
        }
    }

    /// The schema to use for a version, falling back to any version's schema.
    pub fn schema(&self, version: &str) -> Option<&Arc<Value>> {
        self.schemas
            .get(version)
            .or_else(|| self.schemas.values().next())
    }

    /// The usual verbs of a stored resource.
    pub fn standard_verbs() -> Vec<String> {
        [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ]
        .iter()
        .map(|v| v.to_string())
        .collect()
    }
}

/// The resources of a registry, by group and plural.
type ResourceMap = BTreeMap<GroupResource, Arc<ResourceInfo>>;

/// Every resource a fake cluster serves, keyed by group and plural.
///
/// Registries share what they hold: every registry starts from one set of built-in entries,
/// equal resources (the same CRD installed in many clusters) are one [`ResourceInfo`], and
/// registries that made the same changes to the same registry end up as one map, so a fleet
/// of clusters with the same CRDs holds one registry between them. Cloning is cheap.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    by_gr: Arc<ResourceMap>,
}

impl Registry {
    /// A registry holding only the built-in kinds (shared by every registry: each store
    /// holds references to one set of built-in entries).
    pub fn with_builtins() -> Self {
        static BUILTINS: std::sync::OnceLock<Arc<ResourceMap>> = std::sync::OnceLock::new();
        let by_gr = BUILTINS.get_or_init(|| {
            Arc::new(
                crate::storage::builtin::builtin_resources()
                    .into_iter()
                    .map(|info| (info.group_resource(), Arc::new(info)))
                    .collect(),
            )
        });
        Self {
            by_gr: by_gr.clone(),
        }
    }

    /// Add or replace a resource.
    pub fn insert(&mut self, info: ResourceInfo) {
        let info = shared_info(info);
        let gr = info.group_resource();
        if self.by_gr.get(&gr).is_some_and(|i| Arc::ptr_eq(i, &info)) {
            return;
        }
        self.by_gr = with_resource(&self.by_gr, gr, info);
    }

    /// Remove a resource.
    pub fn remove(&mut self, gr: &GroupResource) -> Option<Arc<ResourceInfo>> {
        let old = self.by_gr.get(gr).cloned()?;
        Arc::make_mut(&mut self.by_gr).remove(gr);
        Some(old)
    }

    /// Look a resource up by group and plural.
    pub fn get(&self, gr: &GroupResource) -> Option<&Arc<ResourceInfo>> {
        self.by_gr.get(gr)
    }

    /// Look a resource up by group, version and plural (the version must be served).
    pub fn get_versioned(
        &self,
        group: &str,
        version: &str,
        resource: &str,
    ) -> Option<&Arc<ResourceInfo>> {
        self.by_gr
            .get(&GroupResource::new(group, resource))
            .filter(|i| i.versions.iter().any(|v| v == version))
    }

    /// Look a resource up by group and kind.
    pub fn by_kind(&self, group: &str, kind: &str) -> Option<&Arc<ResourceInfo>> {
        self.by_gr
            .values()
            .find(|i| i.group == group && i.kind == kind)
    }

    /// What identifies this registry's set of resources (registries with the same resources
    /// share it) without keeping it alive: caches of documents built from a registry key on it.
    pub(crate) fn identity(&self) -> RegistryIdentity {
        RegistryIdentity(Arc::downgrade(&self.by_gr))
    }

    /// Every resource, ordered by group then plural.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<ResourceInfo>> {
        self.by_gr.values()
    }

    /// Every group (the core group as `""`) with its versions, preferred first, in a stable order.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for info in self.by_gr.values() {
            match out.iter_mut().find(|(g, _)| *g == info.group) {
                Some((_, vs)) => {
                    for v in &info.versions {
                        if !vs.contains(v) {
                            vs.push(v.clone());
                        }
                    }
                }
                None => out.push((info.group.clone(), info.versions.clone())),
            }
        }
        out
    }
}

/// A weak handle on a registry's set of resources (see [`Registry::identity`]).
#[derive(Debug, Clone)]
pub(crate) struct RegistryIdentity(std::sync::Weak<ResourceMap>);

impl RegistryIdentity {
    /// Whether `reg` holds this set of resources.
    pub(crate) fn is(&self, reg: &Registry) -> bool {
        std::ptr::eq(self.0.as_ptr(), Arc::as_ptr(&reg.by_gr))
    }

    /// Whether some registry still holds this set of resources.
    pub(crate) fn alive(&self) -> bool {
        self.0.strong_count() > 0
    }
}

/// The one shared copy of a resource equal to `info`.
fn shared_info(info: ResourceInfo) -> Arc<ResourceInfo> {
    use std::sync::{Mutex, OnceLock, Weak};
    type Infos = std::collections::HashMap<GroupResource, Vec<Weak<ResourceInfo>>>;
    static INFOS: OnceLock<Mutex<Infos>> = OnceLock::new();
    let mut infos = INFOS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let same = infos.entry(info.group_resource()).or_default();
    same.retain(|w| w.strong_count() > 0);
    if let Some(found) = same.iter().filter_map(Weak::upgrade).find(|i| **i == info) {
        return found;
    }
    let info = Arc::new(info);
    same.push(Arc::downgrade(&info));
    info
}

/// `base` with `info` served as `gr`, as the one shared map equal to it (while anyone holds
/// it): registries that end up with the same resources share one map.
fn with_resource(
    base: &Arc<ResourceMap>,
    gr: GroupResource,
    info: Arc<ResourceInfo>,
) -> Arc<ResourceMap> {
    use std::collections::HashMap;
    use std::hash::{Hash, Hasher};
    use std::sync::{Mutex, OnceLock, Weak};
    struct Maps {
        by_hash: HashMap<u64, Vec<Weak<ResourceMap>>>,
        sweep_at: usize,
    }
    static MAPS: OnceLock<Mutex<Maps>> = OnceLock::new();
    let mut map = ResourceMap::clone(base);
    map.insert(gr, info);
    // The resources are shared (`shared_info`), so their addresses tell maps apart.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for (gr, info) in &map {
        gr.hash(&mut hasher);
        (Arc::as_ptr(info) as usize).hash(&mut hasher);
    }
    let hash = hasher.finish();
    let mut maps = MAPS
        .get_or_init(|| {
            Mutex::new(Maps {
                by_hash: HashMap::new(),
                sweep_at: 64,
            })
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let same = maps.by_hash.entry(hash).or_default();
    same.retain(|w| w.strong_count() > 0);
    let found = same.iter().filter_map(Weak::upgrade).find(|m| {
        m.len() == map.len()
            && m.iter()
                .zip(&map)
                .all(|((ga, ia), (gb, ib))| ga == gb && Arc::ptr_eq(ia, ib))
    });
    if let Some(found) = found {
        return found;
    }
    let map = Arc::new(map);
    same.push(Arc::downgrade(&map));
    if maps.by_hash.len() >= maps.sweep_at {
        maps.by_hash.retain(|_, same| {
            same.retain(|w| w.strong_count() > 0);
            !same.is_empty()
        });
        maps.sweep_at = (2 * maps.by_hash.len()).max(64);
    }
    map
}

/// A group, version and plural resource: what a request path names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Gvr {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl Gvr {
    /// Build from parts.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
        }
    }

    /// The GVR of a kube resource type, e.g. `Gvr::of::<ConfigMap>()`.
    pub fn of<K: kube::Resource<DynamicType = ()>>() -> Self {
        Self::new(K::group(&()), K::version(&()), K::plural(&()))
    }

    /// The group and resource.
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(self.group.clone(), self.resource.clone())
    }

    /// `apiVersion` for this group and version.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}
