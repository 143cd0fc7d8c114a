//! Conversion between the served versions of a multi-version custom resource.
//!
//! kube-apiserver keeps one copy of each object, in the CRD's storage version, and converts it
//! to the version a client asks for (and a written object to the storage version). With the
//! CRD's `None` strategy only `apiVersion` changes; OCM's addon kinds use a conversion webhook
//! (upstream's addon webhook) that reshapes the fields. The fake API server does both: the
//! addon kinds (`ClusterManagementAddOn`, `ManagedClusterAddOn`, `AddOnDeploymentConfig` in
//! `addon.open-cluster-management.io` `v1alpha1` ⇄ `v1beta1`) are converted with
//! [`ocm_api::addon::conversion`], every other kind by rewriting `apiVersion`.
//!
//! A write is validated against the schema of the version it was sent in, then converted and
//! stored in the storage version (the first served version); reads, watch events and write
//! responses are converted to the version of the request.
//!
//! Core `v1` Events and `events.k8s.io/v1` Events are one store, as in kube-apiserver: an
//! Event written through either API is read through both, its fields renamed
//! (`involvedObject` ⇄ `regarding`, `message` ⇄ `note`, `reportingComponent` ⇄
//! `reportingController`, `source`/`firstTimestamp`/`lastTimestamp`/`count` ⇄ their
//! `deprecated…` names). Field selectors of `events.k8s.io` lists name the core fields
//! (`involvedObject.name`), a difference from kube-apiserver.

use std::borrow::Cow;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::storage::registry::ResourceInfo;
use ocm_api::addon::{v1alpha1, v1beta1};
use ocm_api::constants::groups;

/// Whether objects of `info` are converted by a webhook (rather than by rewriting
/// `apiVersion`).
fn has_webhook(info: &ResourceInfo) -> bool {
    info.group == groups::ADDON
        && matches!(
            info.kind.as_str(),
            "ClusterManagementAddOn" | "ManagedClusterAddOn" | "AddOnDeploymentConfig"
        )
}

fn via<From, To>(obj: &Value) -> Result<Value, String>
where
    From: DeserializeOwned,
    To: std::convert::From<From> + Serialize,
{
    let typed: From = serde_json::from_value(obj.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(To::from(typed)).map_err(|e| e.to_string())
}

fn webhook(kind: &str, from: &str, to: &str, obj: &Value) -> Result<Value, String> {
    match (kind, from, to) {
        ("ClusterManagementAddOn", "v1alpha1", "v1beta1") => {
            via::<v1alpha1::ClusterManagementAddOn, v1beta1::ClusterManagementAddOn>(obj)
        }
        ("ClusterManagementAddOn", "v1beta1", "v1alpha1") => {
            via::<v1beta1::ClusterManagementAddOn, v1alpha1::ClusterManagementAddOn>(obj)
        }
        ("ManagedClusterAddOn", "v1alpha1", "v1beta1") => {
            via::<v1alpha1::ManagedClusterAddOn, v1beta1::ManagedClusterAddOn>(obj)
        }
        ("ManagedClusterAddOn", "v1beta1", "v1alpha1") => {
            via::<v1beta1::ManagedClusterAddOn, v1alpha1::ManagedClusterAddOn>(obj)
        }
        ("AddOnDeploymentConfig", "v1alpha1", "v1beta1") => {
            via::<v1alpha1::AddOnDeploymentConfig, v1beta1::AddOnDeploymentConfig>(obj)
        }
        ("AddOnDeploymentConfig", "v1beta1", "v1alpha1") => {
            via::<v1beta1::AddOnDeploymentConfig, v1alpha1::AddOnDeploymentConfig>(obj)
        }
        _ => Err(format!("no conversion from {from} to {to}")),
    }
}

/// Field names of a core `v1` Event and their `events.k8s.io/v1` names (kube-apiserver keeps
/// both APIs in one store and converts between them).
const EVENT_FIELDS: [(&str, &str); 10] = [
    ("involvedObject", "regarding"),
    ("related", "related"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("eventTime", "eventTime"),
];

/// Whether `info` is `events.k8s.io` Events, stored with the core `v1` Events.
pub(crate) fn is_events_api(info: &ResourceInfo) -> bool {
    info.group == "events.k8s.io" && info.kind == "Event"
}

/// A core `v1` Event as an `events.k8s.io/v1` Event, or the reverse.
fn convert_event(obj: &Value, to_events_api: bool) -> Value {
    let Some(m) = obj.as_object() else {
        return obj.clone();
    };
    let mut out = serde_json::Map::new();
    for (k, v) in m {
        let renamed = EVENT_FIELDS.iter().find_map(|(core, new)| {
            if to_events_api && k == core {
                Some(*new)
            } else if !to_events_api && k == new {
                Some(*core)
            } else {
                None
            }
        });
        // Zero values the other API does not have are dropped, as Go's omitempty does.
        if v.is_null() {
            continue;
        }
        out.insert(renamed.unwrap_or(k.as_str()).to_string(), v.clone());
    }
    if to_events_api {
        out.insert("apiVersion".into(), json!("events.k8s.io/v1"));
        // An empty `source` has no events.k8s.io counterpart.
        if out
            .get("deprecatedSource")
            .and_then(Value::as_object)
            .is_some_and(|o| o.is_empty())
        {
            out.remove("deprecatedSource");
        }
    } else {
        out.insert("apiVersion".into(), json!("v1"));
    }
    out.insert("kind".into(), json!("Event"));
    Value::Object(out)
}

/// `obj`, written through the resource `info`, as it is stored: in the storage version, and
/// for `events.k8s.io` Events as a core `v1` Event.
pub(crate) fn to_storage(info: &ResourceInfo, obj: Value) -> Result<Value, ApiError> {
    if is_events_api(info) {
        return Ok(convert_event(&obj, false));
    }
    let storage = info.preferred_version().to_string();
    Ok(match convert(info, &obj, &storage)? {
        Cow::Borrowed(_) => obj,
        Cow::Owned(v) => v,
    })
}

/// `obj` (of the resource `info`) as seen in `version`.
///
/// A webhook conversion that fails (the stored object does not decode as its version's type)
/// is an error with kube-apiserver's wording for a failed conversion webhook.
pub(crate) fn convert<'a>(
    info: &ResourceInfo,
    obj: &'a Value,
    version: &str,
) -> Result<Cow<'a, Value>, ApiError> {
    let want = info.api_version(version);
    let have = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if have == want || have.is_empty() {
        return Ok(Cow::Borrowed(obj));
    }
    if info.kind == "Event" && (is_events_api(info) || info.group.is_empty()) {
        return Ok(Cow::Owned(convert_event(obj, is_events_api(info))));
    }
    let from = have.rsplit('/').next().unwrap_or_default();
    if has_webhook(info) && from != version {
        let mut out = webhook(&info.kind, from, version, obj).map_err(|e| {
            ApiError::internal(format!(
                "conversion webhook for {}/{}, Kind={} failed: {e}",
                info.group, from, info.kind
            ))
        })?;
        // The webhook returns the object with its own metadata; kube-apiserver keeps the
        // stored metadata (only labels and annotations may change).
        if let (Some(m), Some(meta)) = (out.as_object_mut(), obj.get("metadata")) {
            let mut meta = meta.clone();
            for key in ["labels", "annotations"] {
                match m.get("metadata").and_then(|n| n.get(key)) {
                    Some(v) if !v.as_object().is_some_and(|o| o.is_empty()) => {
                        meta[key] = v.clone();
                    }
                    _ => {
                        if let Some(mm) = meta.as_object_mut() {
                            mm.remove(key);
                        }
                    }
                }
            }
            m.insert("metadata".into(), meta);
            m.insert("apiVersion".into(), json!(want));
            m.insert("kind".into(), json!(info.kind));
        }
        return Ok(Cow::Owned(out));
    }
    let mut o = obj.clone();
    o["apiVersion"] = json!(want);
    Ok(Cow::Owned(o))
}

/// [`convert`] for reads: an object that cannot be converted is shown with its
/// `apiVersion` rewritten (and the failure logged) rather than failing a whole list.
pub(crate) fn convert_for_read<'a>(
    info: &ResourceInfo,
    obj: &'a Value,
    version: &str,
) -> Cow<'a, Value> {
    match convert(info, obj, version) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e.message, "cannot convert a stored object");
            let mut o = obj.clone();
            o["apiVersion"] = json!(info.api_version(version));
            Cow::Owned(o)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::registry::Registry;

    fn mca_info() -> ResourceInfo {
        let crd = ocm_api::crds()
            .into_iter()
            .find(|c| c.spec.names.kind == "ManagedClusterAddOn")
            .map(|c| serde_json::to_value(c).unwrap())
            .unwrap();
        let _ = Registry::with_builtins();
        crate::storage::crd::resource_from_crd(&crd).unwrap()
    }

    #[test]
    fn install_namespace_travels_in_an_annotation() {
        let info = mca_info();
        assert_eq!(info.versions[0], "v1alpha1", "storage version first");
        let alpha = json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1",
            "kind": "ManagedClusterAddOn",
            "metadata": {"name": "hello", "namespace": "cluster1", "uid": "u1",
                         "resourceVersion": "7"},
            "spec": {"installNamespace": "hello-ns"},
        });
        let beta = convert(&info, &alpha, "v1beta1").unwrap().into_owned();
        assert_eq!(
            beta["apiVersion"],
            "addon.open-cluster-management.io/v1beta1"
        );
        assert_eq!(beta["metadata"]["uid"], "u1");
        assert_eq!(beta["metadata"]["resourceVersion"], "7");
        assert_eq!(
            beta["metadata"]["annotations"]["addon.open-cluster-management.io/v1alpha1-install-namespace"],
            "hello-ns"
        );
        assert!(beta["spec"].get("installNamespace").is_none());
        let back = convert(&info, &beta, "v1alpha1").unwrap();
        assert_eq!(back["spec"]["installNamespace"], "hello-ns");
        // Same version: untouched.
        assert!(matches!(
            convert(&info, &alpha, "v1alpha1").unwrap(),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn events_convert_both_ways() {
        let core = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "p.1", "namespace": "ns"},
            "involvedObject": {"kind": "Placement", "name": "p"}, "message": "hi",
            "reportingComponent": "placementController", "reportingInstance": "i", "reason": "R",
            "type": "Normal", "action": "A", "count": 2, "source": {},
            "eventTime": "2026-01-01T00:00:00.000000Z"});
        let new = convert_event(&core, true);
        assert_eq!(new["apiVersion"], "events.k8s.io/v1");
        assert_eq!(new["regarding"]["name"], "p");
        assert_eq!(new["note"], "hi");
        assert_eq!(new["reportingController"], "placementController");
        assert_eq!(new["deprecatedCount"], 2);
        assert!(new.get("deprecatedSource").is_none());
        let back = convert_event(&new, false);
        assert_eq!(back["involvedObject"]["kind"], "Placement");
        assert_eq!(back["message"], "hi");
        assert_eq!(back["apiVersion"], "v1");
    }

    #[test]
    fn an_undecodable_object_is_a_conversion_error_not_a_panic() {
        let info = mca_info();
        let bad = json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1",
            "kind": "ManagedClusterAddOn",
            "metadata": {"name": "x"}, "spec": {"installNamespace": 5},
        });
        let e = convert(&info, &bad, "v1beta1").unwrap_err();
        assert_eq!(e.code, 500);
        assert!(
            e.message
                .contains("conversion webhook for addon.open-cluster-management.io/v1alpha1, Kind=ManagedClusterAddOn failed:"),
            "{}",
            e.message
        );
        let shown = convert_for_read(&info, &bad, "v1beta1");
        assert_eq!(
            shown["apiVersion"],
            "addon.open-cluster-management.io/v1beta1"
        );
    }
}
