//! What the fake API server does to objects on their way in and after they are
//! stored: namespace bookkeeping, CRD registration, and CRD schema defaulting
//! and pruning for custom resources.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::api_error::ApiResult;
use crate::crd::{established_status, resource_from_crd};
use crate::registry::{GroupResource, Gvr, ResourceInfo};
use crate::store::{Inner, ObjectKey, meta_mut};
use crate::watch::EventType;

fn is_crd(info: &ResourceInfo) -> bool {
    info.group == "apiextensions.k8s.io" && info.plural == "customresourcedefinitions"
}

fn is_namespace(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces"
}

/// Apply `default`s and drop fields the schema does not know, as kube-apiserver
/// does for custom resources with structural schemas.
pub(crate) fn default_and_prune(v: &mut Value, schema: &Value, root: bool) {
    match v {
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            let preserve = schema
                .get("x-kubernetes-preserve-unknown-fields")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if let Some(props) = props {
                for (k, ps) in props {
                    if root && k == "metadata" {
                        continue;
                    }
                    if let (false, Some(d)) = (m.contains_key(k), ps.get("default")) {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let child_schema = props.and_then(|p| p.get(&k)).or(additional);
                match child_schema {
                    Some(cs) => {
                        if let Some(child) = m.get_mut(&k) {
                            default_and_prune(child, cs, false);
                        }
                    }
                    None if !preserve && (props.is_some() || root) => {
                        m.remove(&k);
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = schema.get("items") {
                for it in items {
                    default_and_prune(it, is, false);
                }
            }
        }
        _ => {}
    }
}

impl Inner {
    /// Admission for a create: fill in server-set fields and check the object.
    pub(crate) fn admit_new(
        &mut self,
        info: &Arc<ResourceInfo>,
        gvr: &Gvr,
        obj: &mut Value,
    ) -> ApiResult<()> {
        if is_namespace(info) {
            let name = obj
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let meta = meta_mut(obj);
            let labels = meta
                .entry("labels")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(l) = labels.as_object_mut() {
                l.insert("kubernetes.io/metadata.name".into(), json!(name));
            }
            if let Some(m) = obj.as_object_mut() {
                m.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
                m.insert("status".into(), json!({"phase": "Active"}));
            }
        }
        if is_crd(info) {
            resource_from_crd(obj)?;
        }
        self.admit_custom(info, gvr, obj);
        Ok(())
    }

    /// Admission for an update.
    pub(crate) fn admit_update(
        &mut self,
        info: &Arc<ResourceInfo>,
        gvr: &Gvr,
        obj: &mut Value,
    ) -> ApiResult<()> {
        if is_crd(info) {
            resource_from_crd(obj)?;
        }
        self.admit_custom(info, gvr, obj);
        Ok(())
    }

    fn admit_custom(&self, info: &Arc<ResourceInfo>, gvr: &Gvr, obj: &mut Value) {
        if let (true, Some(schema)) = (info.crd_name.is_some(), info.schema(&gvr.version)) {
            default_and_prune(obj, &schema.clone(), true);
        }
    }

    /// Side effects of a stored write: CRDs become served resources.
    pub(crate) fn after_write(&mut self, info: &Arc<ResourceInfo>, stored: &Arc<Value>) {
        if !is_crd(info) || stored.pointer("/metadata/deletionTimestamp").is_some() {
            return;
        }
        let Ok(res) = resource_from_crd(stored) else {
            return;
        };
        self.registry.insert(res);
        let now = crate::clock::format_time(self.config.clock.now());
        let mut desired = established_status(stored, &now);
        // Keep transition times stable when the conditions already hold.
        if let Some(c) = stored.pointer("/status/conditions") {
            desired["conditions"] = c.clone();
        }
        if stored.get("status") != Some(&desired) {
            let mut next = stored.as_ref().clone();
            if let Some(m) = next.as_object_mut() {
                m.insert("status".into(), desired);
            }
            let name = stored
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let gr = info.group_resource();
            self.commit(
                &gr,
                &ObjectKey::new("", name),
                next,
                EventType::Modified,
                Some(stored.clone()),
            );
        }
    }

    /// A CRD is gone: stop serving its resource and drop its objects.
    pub(crate) fn unregister_crd(&mut self, crd: &Value) {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let plural = crd
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let gr = GroupResource::new(group, plural);
        if let Some(objects) = self.objects.get(&gr) {
            let all: Vec<(ObjectKey, Arc<Value>)> = objects
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (k, v) in all {
                self.commit(&gr, &k, v.as_ref().clone(), EventType::Deleted, Some(v));
            }
        }
        self.objects.remove(&gr);
        self.registry.remove(&gr);
    }
}
