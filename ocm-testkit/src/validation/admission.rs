//! What the fake API server does to objects on their way in and after they are
//! stored: namespace bookkeeping, CRD registration, CRD schema defaulting and
//! pruning for custom resources, and the defaults, registry strategies and
//! validation of every kind ([`crate::validation::kinds`]), in kube-apiserver's order:
//!
//! 1. decoding: unknown fields dropped, built-in defaults applied;
//! 2. mutating admission webhooks;
//! 3. custom resources pruned and defaulted by their schema, unknown and duplicate
//!    fields acted on as `fieldValidation` says;
//! 4. the registry's `PrepareForCreate`/`PrepareForUpdate` (a Service's addresses);
//! 5. validation: object metadata and the kind's rules, then a custom resource's
//!    schema, all reported in one `422 Invalid`;
//! 6. validating admission webhooks.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::api_error::{ApiError, ApiResult, Cause};
use crate::storage::crd::{established_status, resource_from_crd};
use crate::storage::registry::{GroupResource, Gvr, ResourceInfo};
use crate::storage::store::{Inner, ObjectKey, WriteOptions, meta_mut};
use crate::storage::watch::EventType;
use crate::validation::custom::validate_object;
use crate::validation::field_validation::report::{Decoding, report};
use crate::validation::field_validation::unknown::drop_unknown;
use crate::validation::kinds;

fn is_crd(info: &ResourceInfo) -> bool {
    info.group == "apiextensions.k8s.io" && info.plural == "customresourcedefinitions"
}

fn is_service(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "services" && info.crd_name.is_none()
}

fn is_namespace(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces"
}

/// Apply `default`s and drop fields the schema does not know, as kube-apiserver
/// does for custom resources with structural schemas.
///
/// The dotted paths of the dropped fields are added to `pruned`.
pub(crate) fn default_and_prune(
    v: &mut Value,
    schema: &Value,
    root: bool,
    path: &str,
    pruned: &mut Vec<String>,
) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
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
                            default_and_prune(child, cs, false, &join(&k), pruned);
                        }
                    }
                    None if !preserve && (props.is_some() || root) => {
                        m.remove(&k);
                        pruned.push(join(&k));
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = schema.get("items") {
                for (i, it) in items.iter_mut().enumerate() {
                    default_and_prune(it, is, false, &format!("{path}[{i}]"), pruned);
                }
            }
        }
        _ => {}
    }
}

/// `422 Invalid` with `causes`, if there are any.
fn reject_invalid(info: &ResourceInfo, obj: &Value, causes: Vec<Cause>) -> ApiResult<()> {
    if causes.is_empty() {
        return Ok(());
    }
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(ApiError::invalid(&info.kind, &info.group, name, causes))
}

impl Inner {
    /// The cluster IPs and node ports the Services other than `obj` hold.
    fn service_allocations(&self, obj: &Value) -> kinds::Allocations {
        let gr = GroupResource::new("", "services");
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let specs: Vec<Value> = self
            .objects
            .get(&gr)
            .map(|objects| {
                objects
                    .iter()
                    .filter(|(k, _)| !(k.namespace == ns && k.name == name))
                    .filter_map(|(_, e)| e.obj.get("spec").map(|s| s.thaw()))
                    .collect()
            })
            .unwrap_or_default();
        kinds::Allocations::of(specs.iter())
    }

    /// Admission for a create: fill in server-set fields and check the object.
    pub(crate) fn admit_new(
        &mut self,
        info: &Arc<ResourceInfo>,
        gvr: &Gvr,
        obj: &mut Value,
        opts: &WriteOptions,
    ) -> ApiResult<()> {
        let mut unknown = opts.unknown_fields.clone();
        unknown.extend(drop_unknown(info, &gvr.version, obj));
        if let Some(user) = &opts.user {
            self.check_escalation(info, obj, None, user)?;
        }
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
        kinds::default(info, obj);
        self.mutating_webhooks(info, obj, None, opts)?;
        let schema = self.prune_and_report(info, gvr, obj, opts, unknown)?;
        let allocations = if is_service(info) {
            self.service_allocations(obj)
        } else {
            kinds::Allocations::default()
        };
        let prepared = kinds::prepare_create(info, obj, &allocations);
        reject_invalid(info, obj, prepared)?;
        let mut causes = kinds::validate_create(info, obj);
        if let Some(schema) = schema {
            causes.extend(validate_object(obj, &schema, None));
        }
        reject_invalid(info, obj, causes)?;
        self.validating_webhooks(info, obj, None, opts)
    }

    /// Admission for an update of `current` (a write to `subresource`, empty for the object).
    pub(crate) fn admit_update(
        &mut self,
        info: &Arc<ResourceInfo>,
        gvr: &Gvr,
        obj: &mut Value,
        current: &Value,
        opts: &WriteOptions,
    ) -> ApiResult<()> {
        let subresource = opts.subresource.as_deref().unwrap_or_default();
        let unknown = if subresource.is_empty() {
            let mut unknown = opts.unknown_fields.clone();
            unknown.extend(drop_unknown(info, &gvr.version, obj));
            unknown
        } else {
            Vec::new()
        };
        if let Some(user) = &opts.user {
            self.check_escalation(info, obj, Some(current), user)?;
        }
        if is_crd(info) {
            resource_from_crd(obj)?;
        }
        if subresource.is_empty() {
            kinds::default(info, obj);
        }
        self.mutating_webhooks(info, obj, Some(current), opts)?;
        let schema = self.prune_and_report(info, gvr, obj, opts, unknown)?;
        let allocations = if is_service(info) && subresource.is_empty() {
            self.service_allocations(obj)
        } else {
            kinds::Allocations::default()
        };
        let prepared = kinds::prepare_update(info, obj, current, subresource, &allocations);
        reject_invalid(info, obj, prepared)?;
        let mut causes = kinds::validate_update(info, obj, current, subresource);
        if let Some(schema) = schema {
            causes.extend(validate_object(obj, &schema, Some(current)));
        }
        reject_invalid(info, obj, causes)?;
        self.validating_webhooks(info, obj, Some(current), opts)
    }

    /// Prune and default custom resources, then act on unknown and duplicate fields as
    /// `fieldValidation` says. Returns a custom resource's schema, to validate it with.
    fn prune_and_report(
        &self,
        info: &Arc<ResourceInfo>,
        gvr: &Gvr,
        obj: &mut Value,
        opts: &WriteOptions,
        mut unknown: Vec<String>,
    ) -> ApiResult<Option<Arc<Value>>> {
        let schema = info
            .schema(&gvr.version)
            .filter(|_| info.crd_name.is_some())
            .cloned();
        if let Some(schema) = &schema {
            default_and_prune(obj, schema, true, "", &mut unknown);
        }
        report(info, gvr, opts, &unknown, Decoding::Body)?;
        Ok(schema)
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
                .map(|(k, v)| (k.clone(), v.value()))
                .collect();
            for (k, v) in all {
                self.commit(&gr, &k, v.as_ref().clone(), EventType::Deleted, Some(v));
            }
        }
        self.objects.remove(&gr);
        self.registry.remove(&gr);
    }
}
