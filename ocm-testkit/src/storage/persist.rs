//! Saving a fake cluster's objects to disk and loading them back (our addition: a real
//! cluster keeps its objects in etcd).
//!
//! A snapshot is one JSON document: the cluster's resourceVersion and every stored object
//! with its group and resource. Loading it into a fresh store brings back every object as it
//! was (uid, resourceVersion, managedFields, finalizers, owner references), the resources
//! of the CustomResourceDefinitions among them, and the resourceVersion counter; the watch
//! history starts empty, so a watch from an older resourceVersion gets `410 Gone` and lists
//! again, as after an etcd compaction.
//!
//! ```
//! use ocm_testkit::FakeCluster;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = std::env::temp_dir().join(format!("ocm-testkit-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let path = dir.join("cluster.json");
//! let first = FakeCluster::new();
//! first.apply_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept, namespace: default}\ndata: {a: b}\n")?;
//! first.store().save(&path)?;
//!
//! let second = FakeCluster::new();
//! second.store().load(&path)?;
//! let kept: k8s_openapi::api::core::v1::ConfigMap = second.get("default", "kept")?;
//! assert_eq!(kept.data.unwrap()["a"], "b");
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde::de::DeserializeSeed;
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::error::{Error, Result};
use crate::storage::crd::resource_from_crd;
use crate::storage::registry::{GroupResource, Registry};
use crate::storage::store::{Entry, ObjectKey, Store, meta_str, owner_uids};
use crate::storage::uid::UidGenerator;

/// The snapshot format's version.
const FORMAT: u64 = 1;

fn bad(message: impl Into<String>) -> Error {
    Error::Api(ApiError::bad_request(message))
}

impl Store {
    /// Every object of the store, as a JSON document [`restore`](Self::restore) reads.
    pub fn snapshot(&self) -> Value {
        let inner = self.read();
        let mut groups: Vec<(&GroupResource, _)> = inner.objects.iter().collect();
        // CRDs first, so that loading registers their resources before their objects.
        groups.sort_by_key(|(gr, _)| {
            (
                !(gr.group == "apiextensions.k8s.io" && gr.resource == "customresourcedefinitions"),
                gr.group.clone(),
                gr.resource.clone(),
            )
        });
        let objects: Vec<Value> = groups
            .into_iter()
            .flat_map(|(gr, objs)| {
                objs.values().map(move |e| {
                    json!({"group": gr.group, "resource": gr.resource, "object": e.obj.thaw()})
                })
            })
            .collect();
        json!({
            "format": FORMAT,
            "resourceVersion": inner.rv,
            "objects": objects,
        })
    }

    /// Replace every object of the store with those of `snapshot` (from
    /// [`snapshot`](Self::snapshot)); returns how many objects were loaded.
    ///
    /// A malformed snapshot is refused before anything changes.
    pub fn restore(&self, snapshot: &Value) -> Result<usize> {
        self.on_stack(ocm_api::k8s::json::value_depth(snapshot), || {
            if snapshot.get("format").and_then(Value::as_u64) != Some(FORMAT) {
                return Err(bad(format!(
                    "not an ocm-testkit snapshot of format {FORMAT}"
                )));
            }
            let rv = snapshot
                .get("resourceVersion")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad("snapshot: resourceVersion is missing"))?;
            let items = snapshot
                .get("objects")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("snapshot: objects is missing"))?;
            let mut parsed = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let field = |k: &str| {
                    item.get(k)
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| bad(format!("snapshot: objects[{i}].{k} is missing")))
                };
                let (group, resource) = (field("group")?, field("resource")?);
                let obj = item
                    .get("object")
                    .filter(|o| o.is_object())
                    .ok_or_else(|| {
                        bad(format!("snapshot: objects[{i}].object is not an object"))
                    })?;
                let name = meta_str(obj, "name")
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| bad(format!("snapshot: objects[{i}] has no metadata.name")))?;
                let key = ObjectKey::new(meta_str(obj, "namespace").unwrap_or_default(), name);
                parsed.push((GroupResource::new(group, resource), key, obj.clone()));
            }
            let mut inner = self.write();
            let mut registry = Registry::with_builtins();
            let mut objects: HashMap<GroupResource, std::collections::BTreeMap<ObjectKey, Entry>> =
                HashMap::new();
            let mut uids = HashMap::new();
            let mut dependents: HashMap<String, HashSet<(GroupResource, ObjectKey)>> =
                HashMap::new();
            let mut deepest = inner.deepest;
            for (gr, key, obj) in &parsed {
                if gr.group == "apiextensions.k8s.io"
                    && gr.resource == "customresourcedefinitions"
                    && let Ok(info) = resource_from_crd(obj)
                {
                    registry.insert(info);
                }
                let obj = Arc::new(obj.clone());
                if let Some(uid) = meta_str(&obj, "uid").filter(|u| !u.is_empty()) {
                    uids.insert(uid.to_string(), (gr.clone(), key.clone()));
                }
                for owner in owner_uids(&obj) {
                    dependents
                        .entry(owner)
                        .or_default()
                        .insert((gr.clone(), key.clone()));
                }
                objects.entry(gr.clone()).or_default().insert(key.clone(), {
                    let (entry, depth) = Entry::measured(&obj);
                    deepest = deepest.max(depth);
                    entry
                });
            }
            inner.registry = registry;
            inner.objects = objects;
            inner.uids = uids;
            inner.dependents = dependents;
            inner.deepest = deepest;
            inner.rv = inner.rv.max(rv);
            inner.history = HashMap::new();
            inner.forget_rbac_views();
            inner.compacted_rv = inner.rv;
            // New uids must not repeat the restored ones: continue from another seed.
            inner.uidgen =
                UidGenerator::new(inner.config.uid_seed ^ inner.rv.rotate_left(32) ^ 0xa5a5);
            Ok(parsed.len())
        })
    }

    /// Write [`snapshot`](Self::snapshot) to `path` (through a temporary file and a rename, so
    /// that a crash never leaves half a snapshot).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let text = self.on_stack(0, || {
            let snapshot = self.snapshot();
            let text = serde_json::to_vec(&ocm_api::k8s::json::Deep(&snapshot));
            ocm_api::k8s::json::drop_value(snapshot);
            text
        })?;
        let tmp = path.with_extension("tmp");
        crate::fixtures::files::write_private(&tmp, &text)?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    }

    /// [`restore`](Self::restore) the snapshot saved at `path`.
    pub fn load(&self, path: impl AsRef<Path>) -> Result<usize> {
        let path = path.as_ref();
        let text = std::fs::read(path)?;
        // A snapshot nests its objects three levels down, so it may be that much deeper than
        // the API server's limit on one object.
        let depth = ocm_api::k8s::json::nesting_depth(&text);
        if depth > ocm_api::k8s::json::MAX_NESTING_DEPTH + 3 {
            return Err(bad(format!(
                "{}: not a snapshot: it nests {depth} levels deep",
                path.display()
            )));
        }
        ocm_api::k8s::json::with_stack(depth, || {
            let mut de = serde_json::Deserializer::from_slice(&text);
            de.disable_recursion_limit();
            let snapshot = ocm_api::k8s::json::DeepValue
                .deserialize(&mut de)
                .and_then(|v| de.end().map(|()| v))
                .map_err(|e| bad(format!("{}: not a JSON snapshot: {e}", path.display())))?;
            let loaded = self.restore(&snapshot);
            ocm_api::k8s::json::drop_value(snapshot);
            loaded
        })
    }
}
