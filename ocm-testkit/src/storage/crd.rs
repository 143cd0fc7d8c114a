//! CustomResourceDefinitions: turning a CRD object into a served resource.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::api_error::{ApiError, ApiResult, Cause};
use crate::storage::registry::{PrinterColumn, ResourceInfo};

fn invalid(name: &str, field: &str, message: String) -> ApiError {
    ApiError::invalid(
        "CustomResourceDefinition",
        "apiextensions.k8s.io",
        name,
        vec![Cause {
            reason: "FieldValueInvalid".into(),
            message,
            field: field.into(),
        }],
    )
}

fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn strings(v: &Value, ptr: &str) -> Vec<String> {
    v.pointer(ptr)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// One shared copy of each distinct schema: the same CRD installed in many fake clusters
/// (a fleet's managed clusters) keeps one schema in memory, not one per cluster.
fn intern(schema: &Value) -> Arc<Value> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock, Weak};
    static SCHEMAS: OnceLock<Mutex<HashMap<String, Weak<Value>>>> = OnceLock::new();
    let Ok(key) = serde_json::to_string(schema) else {
        return Arc::new(schema.clone());
    };
    let mut map = SCHEMAS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(shared) = map.get(&key).and_then(Weak::upgrade) {
        return shared;
    }
    let shared = Arc::new(schema.clone());
    // Forget schemas nobody uses any more, so that the table does not grow without bound.
    if map.len() > 256 {
        map.retain(|_, w| w.strong_count() > 0);
    }
    map.insert(key, Arc::downgrade(&shared));
    shared
}

/// The `additionalPrinterColumns` of one entry of a CRD's `spec.versions`.
fn columns_of(version: &Value) -> Vec<PrinterColumn> {
    version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| PrinterColumn {
            name: s(c, "/name").to_string(),
            type_: s(c, "/type").to_string(),
            json_path: s(c, "/jsonPath").to_string(),
            description: s(c, "/description").to_string(),
            priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
            format: s(c, "/format").to_string(),
        })
        .collect()
}

/// The printer columns the CRD object `crd` gives its version `version` (kube-apiserver
/// prints each version with its own), or `None` when it does not serve that version.
pub(crate) fn version_printer_columns(crd: &Value, version: &str) -> Option<Vec<PrinterColumn>> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)?
        .iter()
        .find(|v| s(v, "/name") == version)
        .map(columns_of)
}

/// The `selectableFields` of `version` of a CRD object, as field selector paths
/// (`spec.color`, from the JSON path `.spec.color`).
pub(crate) fn version_selectable_fields(crd: &Value, version: &str) -> Vec<String> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| vs.iter().find(|v| s(v, "/name") == version))
        .and_then(|v| v.get("selectableFields"))
        .and_then(Value::as_array)
        .map(|fields| {
            fields
                .iter()
                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                .map(|p| p.trim_start_matches('.').to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The resource a CRD object defines, or why the CRD is invalid.
pub(crate) fn resource_from_crd(crd: &Value) -> ApiResult<ResourceInfo> {
    let name = s(crd, "/metadata/name");
    let group = s(crd, "/spec/group");
    let plural = s(crd, "/spec/names/plural");
    let kind = s(crd, "/spec/names/kind");
    if group.is_empty() {
        return Err(invalid(name, "spec.group", "Required value".into()));
    }
    if plural.is_empty() {
        return Err(invalid(name, "spec.names.plural", "Required value".into()));
    }
    if kind.is_empty() {
        return Err(invalid(name, "spec.names.kind", "Required value".into()));
    }
    if name != format!("{plural}.{group}") {
        return Err(invalid(
            name,
            "metadata.name",
            format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    let scope = s(crd, "/spec/scope");
    if scope != "Namespaced" && scope != "Cluster" {
        return Err(invalid(
            name,
            "spec.scope",
            format!(
                "Unsupported value: \"{scope}\": supported values: \"Cluster\", \"Namespaced\""
            ),
        ));
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        return Err(invalid(
            name,
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version".into(),
        ));
    }
    let mut served: Vec<&Value> = versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(false))
        .collect();
    // The storage version first, so it is the preferred one.
    served.sort_by_key(|v| !v.get("storage").and_then(Value::as_bool).unwrap_or(false));
    let mut schemas = BTreeMap::new();
    let mut status_subresource = false;
    let mut scale = None;
    let mut printer_columns = Vec::new();
    for v in &served {
        let vname = s(v, "/name").to_string();
        if let Some(schema) = v.pointer("/schema/openAPIV3Schema") {
            schemas.insert(vname.clone(), intern(schema));
        }
        if v.pointer("/subresources/status").is_some() {
            status_subresource = true;
        }
        if scale.is_none()
            && let Some(sc) = v.pointer("/subresources/scale")
        {
            scale = Some(crate::storage::registry::ScaleSubresource {
                spec_replicas_path: s(sc, "/specReplicasPath").to_string(),
                status_replicas_path: s(sc, "/statusReplicasPath").to_string(),
                label_selector_path: Some(s(sc, "/labelSelectorPath").to_string())
                    .filter(|p| !p.is_empty()),
            });
        }
        if printer_columns.is_empty() {
            printer_columns = columns_of(v);
        }
    }
    let singular = match s(crd, "/spec/names/singular") {
        "" => kind.to_ascii_lowercase(),
        x => x.to_string(),
    };
    Ok(ResourceInfo {
        group: group.to_string(),
        versions: served.iter().map(|v| s(v, "/name").to_string()).collect(),
        kind: kind.to_string(),
        plural: plural.to_string(),
        singular,
        namespaced: scope == "Namespaced",
        status_subresource,
        tracks_generation: true,
        short_names: strings(crd, "/spec/names/shortNames"),
        categories: strings(crd, "/spec/names/categories"),
        verbs: ResourceInfo::standard_verbs(),
        schemas,
        printer_columns,
        crd_name: Some(name.to_string()),
        scale,
    })
}

/// The status a CRD gets once its names are accepted and it is served.
pub(crate) fn established_status(crd: &Value, now: &str) -> Value {
    let storage: Vec<Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("storage").and_then(Value::as_bool).unwrap_or(false))
                .filter_map(|v| v.get("name").cloned())
                .collect()
        })
        .unwrap_or_default();
    let names = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let cond = |t: &str, reason: &str, msg: &str| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": reason, "message": msg});
    json!({
        "conditions": [
            cond("NamesAccepted", "NoConflicts", "no conflicts found"),
            cond("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "acceptedNames": names,
        "storedVersions": storage,
    })
}
