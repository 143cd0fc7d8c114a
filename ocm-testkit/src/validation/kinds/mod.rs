//! Built-in kinds as kube-apiserver treats them on every write: their defaults (and the
//! canonical form decoding gives resource quantities), what
//! their registry strategies fill in, and their validation, with kube's messages and
//! field paths; and object metadata validation for every kind, custom resources
//! included.
//!
//! A write goes through these steps, in kube-apiserver's order (see
//! [`crate::validation::admission`]):
//!
//! 1. [`default`]: the defaults decoding gives a built-in object (`SetDefaults_*`).
//! 2. mutating admission webhooks.
//! 3. [`prepare_create`] / [`prepare_update`]: what the kind's registry fills in before
//!    it validates (a Service's cluster IP and node ports, a Pod's status, a Job's
//!    generated selector, a DaemonSet's template generation, a cleared status).
//! 4. [`validate_create`] / [`validate_update`]: `ValidateObjectMeta` and the kind's
//!    rules; any error is a `422 Invalid`.
//! 5. validating admission webhooks.
//!
//! The kinds and their rules are in one table, [`KINDS`]; a kind not in it (a custom
//! resource, or a built-in kind without rules of its own) gets the metadata rules only.

mod apps;
mod batch;
mod core;
mod cron;
mod field;
mod format;
mod meta;
mod networking;
mod pod;
mod quantity;
mod rbac;
mod service;

use serde_json::{Map, Value};

use crate::api_error::Cause;
use crate::storage::registry::ResourceInfo;

use field::Errors;
pub(crate) use service::Allocations;

// ---------------------------------------------------------------------------------------
// Small accessors the rule files share.
// ---------------------------------------------------------------------------------------

/// `v[k]` as a string, `""` when absent or not a string.
pub(crate) fn get_str<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

/// `v[k]` as an integer.
pub(crate) fn get_i64(v: &Value, k: &str) -> Option<i64> {
    v.get(k).and_then(Value::as_i64)
}

/// `v[k]` as a list, empty when absent.
pub(crate) fn arr<'a>(v: &'a Value, k: &str) -> &'a [Value] {
    v.get(k)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The object at `m[k]`, made an empty one when absent or `null`.
pub(crate) fn obj_mut<'a>(m: &'a mut Map<String, Value>, k: &str) -> &'a mut Map<String, Value> {
    let v = m.entry(k.to_string()).or_insert(Value::Null);
    if !v.is_object() {
        *v = Value::Object(Map::new());
    }
    match v {
        Value::Object(o) => o,
        _ => unreachable!("just made an object"),
    }
}

/// Set `m[k]` to `value` when it is absent or `null` (or an empty string, for string
/// defaults: Go cannot tell `""` from unset).
pub(crate) fn set_default(m: &mut Map<String, Value>, k: &str, value: Value) {
    match m.get(k) {
        None | Some(Value::Null) => {
            m.insert(k.to_string(), value);
        }
        Some(Value::String(s)) if s.is_empty() && value.is_string() => {
            m.insert(k.to_string(), value);
        }
        _ => {}
    }
}

/// The object's `spec`, made an empty object when absent.
pub(crate) fn spec_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.as_object_mut().map(|m| obj_mut(m, "spec"))
}

// ---------------------------------------------------------------------------------------
// The kind table.
// ---------------------------------------------------------------------------------------

type DefaultFn = fn(&mut Value);
type ValidateFn = fn(&Value, &mut Errors);
type ValidateUpdateFn = fn(&Value, &Value, &mut Errors);

/// What kube-apiserver does with one built-in kind.
pub(crate) struct Kind {
    group: &'static str,
    kind: &'static str,
    /// `SetDefaults_<Kind>` and the generated defaulters of its fields.
    default: Option<DefaultFn>,
    /// `Validate<Kind>` (create).
    validate: ValidateFn,
    /// `Validate<Kind>Update`.
    validate_update: ValidateUpdateFn,
    /// The status strategy's `ValidateUpdate`, when the kind has rules for it.
    validate_status_update: Option<ValidateUpdateFn>,
}

/// A kind whose only rules are the metadata's (core's `ValidateObjectMeta` with `name`).
macro_rules! meta_only {
    ($group:expr, $kind:expr, $namespaced:expr, $name:expr) => {
        Kind {
            group: $group,
            kind: $kind,
            default: None,
            validate: |o, e| meta::validate_core_object_meta(o, $namespaced, $name, e),
            validate_update: |n, o, e| meta::validate_core_object_meta_update(n, o, e),
            validate_status_update: None,
        }
    };
}

/// Every built-in kind with rules of its own.
pub(crate) static KINDS: &[Kind] = &[
    Kind {
        group: "",
        kind: "ConfigMap",
        default: None,
        validate: core::validate_configmap,
        validate_update: core::validate_configmap_update,
        validate_status_update: None,
    },
    Kind {
        group: "",
        kind: "Secret",
        default: Some(core::default_secret),
        validate: core::validate_secret,
        validate_update: core::validate_secret_update,
        validate_status_update: None,
    },
    Kind {
        group: "",
        kind: "ServiceAccount",
        default: None,
        validate: core::validate_service_account,
        validate_update: core::validate_service_account_update,
        validate_status_update: None,
    },
    Kind {
        group: "",
        kind: "Namespace",
        default: None,
        validate: core::validate_namespace,
        validate_update: core::validate_namespace_update,
        validate_status_update: None,
    },
    Kind {
        group: "",
        kind: "PersistentVolumeClaim",
        default: Some(core::default_pvc),
        validate: core::validate_pvc,
        validate_update: core::validate_pvc_update,
        validate_status_update: None,
    },
    Kind {
        group: "",
        kind: "Pod",
        default: Some(core::default_pod),
        validate: core::validate_pod,
        validate_update: core::validate_pod_update,
        validate_status_update: None,
    },
    Kind {
        group: "",
        kind: "Service",
        default: Some(service::default_service),
        validate: service::validate_service,
        validate_update: service::validate_service_update,
        validate_status_update: None,
    },
    Kind {
        group: "apps",
        kind: "Deployment",
        default: Some(apps::default_deployment),
        validate: apps::validate_deployment,
        validate_update: apps::validate_deployment_update,
        validate_status_update: Some(apps::validate_deployment_status_update),
    },
    Kind {
        group: "apps",
        kind: "ReplicaSet",
        default: Some(apps::default_replicaset),
        validate: apps::validate_replicaset,
        validate_update: apps::validate_replicaset_update,
        validate_status_update: Some(apps::validate_replicaset_status_update),
    },
    Kind {
        group: "apps",
        kind: "StatefulSet",
        default: Some(apps::default_statefulset),
        validate: apps::validate_statefulset,
        validate_update: apps::validate_statefulset_update,
        validate_status_update: Some(apps::validate_statefulset_status_update),
    },
    Kind {
        group: "apps",
        kind: "DaemonSet",
        default: Some(apps::default_daemonset),
        validate: apps::validate_daemonset,
        validate_update: apps::validate_daemonset_update,
        validate_status_update: Some(apps::validate_daemonset_status_update),
    },
    Kind {
        group: "batch",
        kind: "Job",
        default: Some(batch::default_job),
        validate: batch::validate_job,
        validate_update: batch::validate_job_update,
        validate_status_update: None,
    },
    Kind {
        group: "batch",
        kind: "CronJob",
        default: Some(batch::default_cronjob),
        validate: batch::validate_cronjob,
        validate_update: batch::validate_cronjob_update,
        validate_status_update: None,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        kind: "Role",
        default: None,
        validate: rbac::validate_role,
        validate_update: rbac::validate_role_update,
        validate_status_update: None,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        default: None,
        validate: rbac::validate_cluster_role,
        validate_update: rbac::validate_cluster_role_update,
        validate_status_update: None,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        kind: "RoleBinding",
        default: Some(rbac::default_binding),
        validate: rbac::validate_role_binding,
        validate_update: rbac::validate_role_binding_update,
        validate_status_update: None,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        kind: "ClusterRoleBinding",
        default: Some(rbac::default_binding),
        validate: rbac::validate_cluster_role_binding,
        validate_update: rbac::validate_cluster_role_binding_update,
        validate_status_update: None,
    },
    Kind {
        group: "networking.k8s.io",
        kind: "Ingress",
        default: None,
        validate: networking::validate_ingress,
        validate_update: networking::validate_ingress_update,
        validate_status_update: None,
    },
    Kind {
        group: "networking.k8s.io",
        kind: "NetworkPolicy",
        default: Some(networking::default_network_policy),
        validate: networking::validate_network_policy,
        validate_update: networking::validate_network_policy_update,
        validate_status_update: None,
    },
    meta_only!("", "Node", false, meta::dns_subdomain),
    meta_only!("", "Endpoints", true, meta::dns_subdomain),
    meta_only!("", "ResourceQuota", true, meta::dns_subdomain),
    meta_only!("", "Event", true, meta::dns_subdomain),
    meta_only!("events.k8s.io", "Event", true, meta::dns_subdomain),
    meta_only!("apps", "ControllerRevision", true, meta::dns_subdomain),
    meta_only!("coordination.k8s.io", "Lease", true, meta::dns_subdomain),
    meta_only!("policy", "PodDisruptionBudget", true, meta::dns_subdomain),
    meta_only!(
        "scheduling.k8s.io",
        "PriorityClass",
        false,
        meta::dns_subdomain
    ),
];

fn kind_of(info: &ResourceInfo) -> Option<&'static Kind> {
    if info.crd_name.is_some() {
        return None;
    }
    KINDS
        .iter()
        .find(|k| k.kind == info.kind && k.group == info.group)
}

/// Whether the object is a custom resource (validated by its CRD's schema, with
/// apimachinery's metadata rules) rather than a built-in kind.
fn is_custom(info: &ResourceInfo) -> bool {
    info.crd_name.is_some()
}

/// Apply the defaults decoding gives a built-in object of `info`'s kind.
pub(crate) fn default(info: &ResourceInfo, obj: &mut Value) {
    if let Some(f) = kind_of(info).and_then(|k| k.default) {
        f(obj);
    }
}

/// What the registry fills in on create, before validation (`PrepareForCreate`), for
/// kinds that fill anything in. A Service is given its cluster IPs and node ports here
/// (kube-apiserver allocates them in `BeginCreate`, before validation too); an
/// allocation that fails is the error.
pub(crate) fn prepare_create(
    info: &ResourceInfo,
    obj: &mut Value,
    allocations: &Allocations,
) -> Vec<Cause> {
    if is_custom(info) {
        return Vec::new();
    }
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Service") => {
            let mut errs = Errors::new();
            service::allocate_create(obj, allocations, &mut errs);
            errs.into_causes()
        }
        ("apps", "DaemonSet") => {
            apps::prepare_daemonset_create(obj);
            Vec::new()
        }
        ("batch", "Job") => {
            batch::prepare_job_create(obj);
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// The status a new object reads back with, for kinds whose registry clears it on
/// create and whose cleared status is not empty (Go writes some zero fields, and reading a
/// Pod or a claim back defaults its phase). Filled in after the write's managed fields
/// are recorded: no manager owns a status the main resource writes.
pub(crate) fn fill_created_status(info: &ResourceInfo, obj: &mut Value) {
    if is_custom(info) {
        return;
    }
    let status = match (info.group.as_str(), info.kind.as_str()) {
        ("", "Service") => Some(service::created_status()),
        ("", "Pod") => Some(core::created_pod_status(obj)),
        ("", "PersistentVolumeClaim") => Some(serde_json::json!({"phase": "Pending"})),
        ("apps", kind) => apps::created_status(kind),
        ("batch", "Job" | "CronJob") => Some(serde_json::json!({})),
        ("networking.k8s.io", "Ingress") => Some(networking::created_status()),
        _ => None,
    };
    if let (Some(status), Some(m)) = (status, obj.as_object_mut()) {
        m.insert("status".into(), status);
    }
}

/// What the registry fills in on update (`PrepareForUpdate`, and a Service's
/// `BeginUpdate`): allocated values the new object left out are kept.
pub(crate) fn prepare_update(
    info: &ResourceInfo,
    obj: &mut Value,
    old: &Value,
    subresource: &str,
    allocations: &Allocations,
) -> Vec<Cause> {
    if is_custom(info) || !subresource.is_empty() {
        return Vec::new();
    }
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Service") => {
            let mut errs = Errors::new();
            service::prepare_update(obj, old, allocations, &mut errs);
            errs.into_causes()
        }
        ("apps", "DaemonSet") => {
            apps::prepare_daemonset_update(obj, old);
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// The causes kube-apiserver reports for a new object (empty when it is valid). For a
/// custom resource these are the metadata's only; its schema is checked after.
pub(crate) fn validate_create(info: &ResourceInfo, obj: &Value) -> Vec<Cause> {
    let mut errs = Errors::new();
    match kind_of(info) {
        Some(k) => (k.validate)(obj, &mut errs),
        None => {
            let name_fn = if is_custom(info) {
                meta::dns_subdomain
            } else {
                builtin_name_fn(info)
            };
            if is_custom(info) {
                meta::validate_object_meta(obj, info.namespaced, name_fn, &mut errs);
            } else {
                meta::validate_core_object_meta(obj, info.namespaced, name_fn, &mut errs);
            }
        }
    }
    errs.into_causes()
}

/// The name rule of a built-in kind without rules of its own.
fn builtin_name_fn(info: &ResourceInfo) -> meta::NameFn {
    if info.group == "rbac.authorization.k8s.io" {
        meta::path_segment
    } else {
        meta::dns_subdomain
    }
}

/// The causes kube-apiserver reports for an update of `old` to `obj` (a write to
/// `subresource`, empty for the object itself).
pub(crate) fn validate_update(
    info: &ResourceInfo,
    obj: &Value,
    old: &Value,
    subresource: &str,
) -> Vec<Cause> {
    let mut errs = Errors::new();
    meta::validate_common_update(obj, old, info.namespaced, &mut errs);
    match kind_of(info) {
        Some(k) if subresource.is_empty() => (k.validate_update)(obj, old, &mut errs),
        Some(k) => match k.validate_status_update {
            Some(f) => f(obj, old, &mut errs),
            None => meta::validate_core_object_meta_update(obj, old, &mut errs),
        },
        None if is_custom(info) => meta::validate_object_meta_update(obj, old, &mut errs),
        None => meta::validate_core_object_meta_update(obj, old, &mut errs),
    }
    errs.into_causes()
}
