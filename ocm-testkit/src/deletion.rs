//! Deletion: finalizers, deletionTimestamp, ownerReference garbage collection
//! (Background, Foreground, Orphan) and namespace termination.
//!
//! Garbage collection runs synchronously inside the write that triggers it, so a
//! test sees its outcome as soon as the delete call returns.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::registry::GroupResource;
use crate::store::{
    DeleteOutcome, Inner, ObjectKey, Propagation, meta_mut, owner_uids, pending_finalizers,
};
use crate::watch::EventType;

const FOREGROUND: &str = "foregroundDeletion";

fn namespaces() -> GroupResource {
    GroupResource::new("", "namespaces")
}

impl Inner {
    /// Delete one object with the given propagation policy.
    pub(crate) fn delete_object(
        &mut self,
        gr: &GroupResource,
        key: &ObjectKey,
        propagation: Propagation,
    ) -> DeleteOutcome {
        let Some(cur) = self.lookup(gr, key) else {
            return DeleteOutcome::Deleted(Value::Null);
        };
        if *gr == namespaces() {
            return self.delete_namespace(key, cur);
        }
        if cur.pointer("/metadata/deletionTimestamp").is_some() {
            return DeleteOutcome::Pending(cur.as_ref().clone());
        }
        let uid = cur
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if propagation == Propagation::Orphan {
            self.orphan_dependents(&uid);
        }
        let mut fins = crate::store::finalizers(&cur);
        let foreground = propagation == Propagation::Foreground
            && self.dependents.get(&uid).is_some_and(|d| !d.is_empty());
        if foreground && !fins.iter().any(|f| f == FOREGROUND) {
            fins.push(FOREGROUND.to_string());
        }
        if fins.is_empty() {
            let last = self.remove_object(gr, key, &cur);
            return DeleteOutcome::Deleted(last.as_ref().clone());
        }
        let mut obj = cur.as_ref().clone();
        let now = crate::clock::format_time(self.config.clock.now());
        let meta = meta_mut(&mut obj);
        meta.insert("deletionTimestamp".into(), json!(now));
        meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        meta.insert("finalizers".into(), json!(fins));
        let stored = self.commit(gr, key, obj, EventType::Modified, Some(cur));
        if foreground {
            self.delete_dependents(&uid);
            self.try_finish_foreground(&uid);
        }
        match self.lookup(gr, key) {
            Some(now) => DeleteOutcome::Pending(now.as_ref().clone()),
            None => DeleteOutcome::Deleted(stored.as_ref().clone()),
        }
    }

    /// Remove an object for good and run the garbage collection it triggers.
    pub(crate) fn remove_object(
        &mut self,
        gr: &GroupResource,
        key: &ObjectKey,
        cur: &Arc<Value>,
    ) -> Arc<Value> {
        let last = self.commit(
            gr,
            key,
            cur.as_ref().clone(),
            EventType::Deleted,
            Some(cur.clone()),
        );
        let uid = last
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.collect_dependents(&uid);
        for owner in owner_uids(&last) {
            self.try_finish_foreground(&owner);
        }
        if !key.namespace.is_empty() {
            self.try_finish_namespace(&key.namespace);
        }
        if gr.group == "apiextensions.k8s.io" && gr.resource == "customresourcedefinitions" {
            self.unregister_crd(&last);
        }
        last
    }

    fn dependents_of(&self, uid: &str) -> Vec<(GroupResource, ObjectKey)> {
        let mut out: Vec<_> = self
            .dependents
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        out.sort();
        out
    }

    /// Background collection: dependents whose owners are all gone are deleted;
    /// dependents with a surviving owner lose the dangling reference.
    fn collect_dependents(&mut self, uid: &str) {
        for (dgr, dkey) in self.dependents_of(uid) {
            let Some(dep) = self.lookup(&dgr, &dkey) else {
                continue;
            };
            let owners = owner_uids(&dep);
            if owners.iter().all(|o| !self.uids.contains_key(o)) {
                self.delete_object(&dgr, &dkey, Propagation::Background);
            } else {
                self.drop_owner_ref(&dgr, &dkey, &dep, uid);
            }
        }
    }

    fn delete_dependents(&mut self, uid: &str) {
        for (dgr, dkey) in self.dependents_of(uid) {
            self.delete_object(&dgr, &dkey, Propagation::Background);
        }
    }

    fn orphan_dependents(&mut self, uid: &str) {
        for (dgr, dkey) in self.dependents_of(uid) {
            if let Some(dep) = self.lookup(&dgr, &dkey) {
                self.drop_owner_ref(&dgr, &dkey, &dep, uid);
            }
        }
    }

    fn drop_owner_ref(&mut self, gr: &GroupResource, key: &ObjectKey, dep: &Arc<Value>, uid: &str) {
        let mut obj = dep.as_ref().clone();
        let meta = meta_mut(&mut obj);
        let mut now_empty = false;
        if let Some(Value::Array(refs)) = meta.get_mut("ownerReferences") {
            refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid));
            now_empty = refs.is_empty();
        }
        if now_empty {
            meta.remove("ownerReferences");
        }
        self.commit(gr, key, obj, EventType::Modified, Some(dep.clone()));
    }

    /// Whether a dependent still exists whose reference to `uid` sets `blockOwnerDeletion`.
    fn has_blocking_dependents(&self, uid: &str) -> bool {
        self.dependents_of(uid).iter().any(|(gr, key)| {
            self.lookup(gr, key).is_some_and(|dep| {
                dep.pointer("/metadata/ownerReferences")
                    .and_then(Value::as_array)
                    .is_some_and(|refs| {
                        refs.iter().any(|r| {
                            r.get("uid").and_then(Value::as_str) == Some(uid)
                                && r.get("blockOwnerDeletion").and_then(Value::as_bool)
                                    == Some(true)
                        })
                    })
            })
        })
    }

    /// An owner deleted in the foreground goes once its blocking dependents are gone.
    fn try_finish_foreground(&mut self, uid: &str) {
        let Some((gr, key)) = self.uids.get(uid).cloned() else {
            return;
        };
        let Some(owner) = self.lookup(&gr, &key) else {
            return;
        };
        let fins = crate::store::finalizers(&owner);
        if owner.pointer("/metadata/deletionTimestamp").is_none()
            || !fins.iter().any(|f| f == FOREGROUND)
            || self.has_blocking_dependents(uid)
        {
            return;
        }
        let rest: Vec<&String> = fins.iter().filter(|f| *f != FOREGROUND).collect();
        let mut obj = owner.as_ref().clone();
        let meta = meta_mut(&mut obj);
        if rest.is_empty() {
            meta.remove("finalizers");
        } else {
            meta.insert("finalizers".into(), json!(rest));
        }
        let stored = self.commit(&gr, &key, obj, EventType::Modified, Some(owner));
        if pending_finalizers(&gr, &stored).is_empty() {
            self.remove_object(&gr, &key, &stored);
        }
    }

    fn delete_namespace(&mut self, key: &ObjectKey, cur: Arc<Value>) -> DeleteOutcome {
        let ns = key.name.clone();
        if cur.pointer("/metadata/deletionTimestamp").is_none() {
            let mut obj = cur.as_ref().clone();
            let now = crate::clock::format_time(self.config.clock.now());
            let meta = meta_mut(&mut obj);
            meta.insert("deletionTimestamp".into(), json!(now));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            if let Some(m) = obj.as_object_mut() {
                m.insert("status".into(), json!({"phase": "Terminating"}));
            }
            self.commit(&namespaces(), key, obj, EventType::Modified, Some(cur));
        }
        let mut contents = Vec::new();
        for (gr, objects) in &self.objects {
            let lower = ObjectKey::new(ns.clone(), "");
            for (k, _) in objects.range(lower..) {
                if k.namespace != ns {
                    break;
                }
                contents.push((gr.clone(), k.clone()));
            }
        }
        contents.sort();
        for (gr, k) in contents {
            self.delete_object(&gr, &k, Propagation::Background);
        }
        self.try_finish_namespace(&ns);
        match self.lookup(&namespaces(), key) {
            Some(now) => DeleteOutcome::Pending(now.as_ref().clone()),
            None => DeleteOutcome::Deleted(json!({
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}
            })),
        }
    }

    /// A terminating namespace goes once it is empty.
    fn try_finish_namespace(&mut self, ns: &str) {
        let key = ObjectKey::new("", ns);
        let Some(cur) = self.lookup(&namespaces(), &key) else {
            return;
        };
        if cur.pointer("/metadata/deletionTimestamp").is_none() {
            return;
        }
        let lower = ObjectKey::new(ns, "");
        let has_content = self.objects.iter().any(|(gr, objects)| {
            *gr != namespaces()
                && objects
                    .range(lower.clone()..)
                    .next()
                    .is_some_and(|(k, _)| k.namespace == ns)
        });
        if has_content {
            return;
        }
        let mut obj = cur.as_ref().clone();
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("finalizers");
        }
        if pending_finalizers(&namespaces(), &obj).is_empty() {
            let stored = Arc::new(obj);
            self.remove_object(&namespaces(), &key, &stored);
        } else if obj != *cur {
            self.commit(&namespaces(), &key, obj, EventType::Modified, Some(cur));
        }
    }
}
