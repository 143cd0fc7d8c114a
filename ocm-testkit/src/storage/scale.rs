//! The `scale` subresource: an `autoscaling/v1` `Scale` view of a workload's replicas, as
//! kube-apiserver serves it for Deployments, ReplicaSets and StatefulSets and for custom
//! resources whose CRD declares `subresources.scale`.

use serde_json::{Map, Value, json};

use crate::api_error::{ApiError, Cause};
use crate::storage::registry::{ResourceInfo, ScaleSubresource};

/// A `.spec.replicas`-style path as JSON pointer segments.
fn segments(path: &str) -> Vec<&str> {
    path.split('.').filter(|s| !s.is_empty()).collect()
}

fn lookup<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    segments(path).iter().try_fold(obj, |v, k| v.get(*k))
}

/// `metav1.LabelSelector` rendered as kube's `labels.Selector.String()`
/// ([`ocm_api::k8s::labels::selector_string`]); empty when it is not a valid selector.
pub(crate) fn selector_string(sel: &Value) -> String {
    serde_json::from_value(sel.clone())
        .ok()
        .and_then(|sel| ocm_api::k8s::labels::selector_string(&sel).ok())
        .unwrap_or_default()
}

/// The `Scale` of `obj`.
pub(crate) fn scale_of(info: &ResourceInfo, sc: &ScaleSubresource, obj: &Value) -> Value {
    let int = |path: &str| lookup(obj, path).and_then(Value::as_i64);
    let builtin = info.crd_name.is_none();
    // Built-in workloads default spec.replicas to 1; custom resources show 0.
    let spec = int(&sc.spec_replicas_path).unwrap_or(if builtin { 1 } else { 0 });
    let status = int(&sc.status_replicas_path).unwrap_or(0);
    let selector = if builtin {
        obj.pointer("/spec/selector").map(selector_string)
    } else {
        sc.label_selector_path
            .as_deref()
            .and_then(|p| lookup(obj, p))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut meta = Map::new();
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = obj.pointer(&format!("/metadata/{k}")) {
            meta.insert(k.into(), v.clone());
        }
    }
    let mut status_v = json!({"replicas": status});
    if let Some(s) = selector.filter(|s| !s.is_empty()) {
        status_v["selector"] = json!(s);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": meta,
        "spec": {"replicas": spec},
        "status": status_v,
    })
}

/// The replicas a `Scale` body asks for, validated as kube-apiserver validates a Scale.
pub(crate) fn desired_replicas(name: &str, scale: &Value) -> Result<i64, ApiError> {
    let replicas = scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if replicas < 0 {
        return Err(ApiError::invalid(
            "Scale",
            "autoscaling",
            name,
            vec![Cause {
                reason: "FieldValueInvalid".into(),
                message: format!("Invalid value: {replicas}: must be greater than or equal to 0"),
                field: "spec.replicas".into(),
            }],
        ));
    }
    Ok(replicas)
}

/// `obj` with its desired replicas set to `replicas`.
pub(crate) fn with_replicas(sc: &ScaleSubresource, obj: &Value, replicas: i64) -> Value {
    let mut out = obj.clone();
    let segs = segments(&sc.spec_replicas_path);
    let mut at = &mut out;
    for (i, k) in segs.iter().enumerate() {
        let Some(m) = at.as_object_mut() else { break };
        if i + 1 == segs.len() {
            m.insert((*k).to_string(), json!(replicas));
            break;
        }
        let next = m
            .entry((*k).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !next.is_object() {
            *next = Value::Object(Map::new());
        }
        at = next;
    }
    out
}

/// A `ResourceInfo` standing for `autoscaling/v1` `Scale`, for decoding Scale bodies.
pub(crate) fn scale_info() -> ResourceInfo {
    ResourceInfo::new("autoscaling", "v1", "Scale", "scales", true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_render_like_kube() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "t", "operator": "In", "values": ["y", "x"]},
                                 {"key": "g", "operator": "DoesNotExist"}]});
        assert_eq!(selector_string(&sel), "a=1,b=2,!g,t in (x,y)");
    }

    #[test]
    fn replicas_are_set_on_the_path() {
        let sc = ScaleSubresource {
            spec_replicas_path: ".spec.size".into(),
            status_replicas_path: ".status.size".into(),
            label_selector_path: Some(".status.sel".into()),
        };
        let obj = json!({"metadata": {"name": "a"}, "status": {"size": 2, "sel": "app=a"}});
        let out = with_replicas(&sc, &obj, 4);
        assert_eq!(out["spec"]["size"], 4);
        let mut info = scale_info();
        info.crd_name = Some("x".into());
        let s = scale_of(&info, &sc, &out);
        assert_eq!(s["spec"]["replicas"], 4);
        assert_eq!(s["status"], json!({"replicas": 2, "selector": "app=a"}));
    }
}
