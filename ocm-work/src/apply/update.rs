//! The `Update` strategy (upstream's default) as a pure decision.
//!
//! Given the required manifest, the owner reference to set and the live object (if any), the
//! strategy either creates the object, leaves it alone, or replaces it:
//!
//! 1. no live object: create the manifest with its removal instructions stripped;
//! 2. otherwise merge labels and annotations (`key-` deletes `key`) and owner references onto
//!    the live values, keep the live finalizers, and compare: when no merged value changed and
//!    the objects are the same apart from `metadata` and `status`, nothing is written;
//! 3. else replace the object (a PUT carrying the live `resourceVersion`).
//!
//! Owner references written in the manifest itself are discarded for this strategy; the work's
//! owner reference (or its removal marker) is the only one required.
//!
//! [`plan_update`] is the decision; [`UpdateApplier`] carries it out.

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::PostParams;
use serde_json::Value;

use super::applier::{Applier, ApplyRequest};
use super::engine::ApplyError;
use super::metadata::{
    merge_map, metadata_mut, owner_references, set_string_map, string_map,
    strip_removal_instructions,
};
use crate::owner::merge_owner_refs;

/// What the `Update` strategy does with one manifest.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum UpdatePlan {
    /// Create this object.
    Create(Value),
    /// The live object already matches: no write.
    Unchanged,
    /// Replace the live object with this one (it carries the live `resourceVersion`).
    Replace(Value),
}

/// Whether `required` and `live` are the same object with the same content, ignoring their
/// top-level `metadata` and `status`: upstream's `isSame`. Fields the server defaulted but the
/// manifest lacks count as differences.
pub fn is_same(required: &Value, live: &Value) -> bool {
    let field = |v: &Value, path: &[&str]| {
        let mut cur = v;
        for p in path {
            cur = match cur.get(p) {
                Some(next) => next,
                None => return None,
            };
        }
        cur.as_str().map(str::to_string)
    };
    for path in [
        &["apiVersion"][..],
        &["kind"],
        &["metadata", "name"],
        &["metadata", "namespace"],
    ] {
        if field(required, path).unwrap_or_default() != field(live, path).unwrap_or_default() {
            return false;
        }
    }
    let (Some(a), Some(b)) = (required.as_object(), live.as_object()) else {
        return required == live;
    };
    let content = |m: &serde_json::Map<String, Value>| {
        m.iter()
            .filter(|(k, _)| k.as_str() != "metadata" && k.as_str() != "status")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<serde_json::Map<_, _>>()
    };
    content(a) == content(b)
}

/// Decides what the `Update` strategy does for `required` with the work's `owner` reference
/// (or its removal marker), given the `live` object if it exists.
pub fn plan_update(required: &Value, owner: &OwnerReference, live: Option<&Value>) -> UpdatePlan {
    let mut required = required.clone();
    if let Some(metadata) = metadata_mut(&mut required) {
        metadata.remove("uid");
        let refs = serde_json::to_value(vec![owner.clone()]).unwrap_or(Value::Null);
        metadata.insert("ownerReferences".into(), refs);
    }
    let Some(live) = live else {
        strip_removal_instructions(&mut required);
        return UpdatePlan::Create(required);
    };

    let mut changed = false;
    for field in ["labels", "annotations"] {
        let mut merged = string_map(live, field);
        changed |= merge_map(&mut merged, &string_map(&required, field));
        set_string_map(&mut required, field, &merged);
    }
    let (refs, refs_changed) =
        merge_owner_refs(&owner_references(live), std::slice::from_ref(owner));
    changed |= refs_changed;
    let live_meta = live.get("metadata");
    if let Some(metadata) = metadata_mut(&mut required) {
        if refs.is_empty() {
            metadata.remove("ownerReferences");
        } else {
            metadata.insert(
                "ownerReferences".into(),
                serde_json::to_value(&refs).unwrap_or(Value::Null),
            );
        }
        match live_meta.and_then(|m| m.get("finalizers")) {
            Some(finalizers) => {
                metadata.insert("finalizers".into(), finalizers.clone());
            }
            None => {
                metadata.remove("finalizers");
            }
        }
    }
    if !changed && is_same(&required, live) {
        return UpdatePlan::Unchanged;
    }
    if let (Some(metadata), Some(rv)) = (
        metadata_mut(&mut required),
        live_meta.and_then(|m| m.get("resourceVersion")),
    ) {
        metadata.insert("resourceVersion".into(), rv.clone());
    }
    UpdatePlan::Replace(required)
}

/// The `Update` strategy (upstream's default): reads the live object and creates, leaves
/// alone or replaces it as [`plan_update`] decides. A create or replace planned from an
/// informer's copy that the server refuses as stale (conflict, or not found) is planned again
/// from a fresh read.
#[derive(Clone, Copy, Debug, Default)]
pub struct UpdateApplier;

impl Applier for UpdateApplier {
    fn apply<'a>(&'a self, request: ApplyRequest<'a>) -> BoxFuture<'a, Result<Value, ApplyError>> {
        Box::pin(async move {
            let mut fresh = false;
            loop {
                let (live, cached) = request.read(fresh).await?;
                // A refusal caused by a stale cached copy is retried once against the server.
                let retry = |e: &kube::Error, code: u16| {
                    cached && matches!(e, kube::Error::Api(s) if s.code == code)
                };
                match plan_update(&request.required, request.owner, live.as_deref()) {
                    UpdatePlan::Create(object) => {
                        request.count("create");
                        match request
                            .api()
                            .create(&PostParams::default(), &super::engine::from_value(object)?)
                            .await
                        {
                            Ok(created) => return request.written(&created),
                            Err(e) if retry(&e, 409) => fresh = true,
                            Err(e) => return Err(e.into()),
                        }
                    }
                    UpdatePlan::Replace(object) => {
                        request.count("update");
                        match request
                            .api()
                            .replace(
                                request.name(),
                                &PostParams::default(),
                                &super::engine::from_value(object)?,
                            )
                            .await
                        {
                            Ok(replaced) => return request.written(&replaced),
                            Err(e) if retry(&e, 409) || retry(&e, 404) => fresh = true,
                            Err(e) => return Err(e.into()),
                        }
                    }
                    UpdatePlan::Unchanged => {
                        return live.map(|l| (*l).clone()).ok_or_else(|| {
                            ApplyError::Api(format!("{} vanished", request.name()))
                        });
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owner::{applied_manifest_work_ref, removal_marker};
    use serde_json::json;

    fn cm(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default", "labels": {"app": "x", "old-": ""}},
            "data": data})
    }

    fn live_of(required: &Value, owner: &OwnerReference) -> Value {
        let UpdatePlan::Create(mut created) = plan_update(required, owner, None) else {
            panic!("expected create")
        };
        let meta = created["metadata"].as_object_mut().unwrap();
        meta.insert("resourceVersion".into(), json!("7"));
        meta.insert("uid".into(), json!("live-uid"));
        meta.insert("finalizers".into(), json!(["example.com/keep"]));
        created
    }

    #[test]
    fn create_then_unchanged_then_replace() {
        let owner = applied_manifest_work_ref("h-w", "amw-uid");
        let required = cm(json!({"k": "v"}));
        let UpdatePlan::Create(created) = plan_update(&required, &owner, None) else {
            panic!("expected create")
        };
        assert_eq!(created["metadata"]["labels"], json!({"app": "x"}));
        assert_eq!(created["metadata"]["ownerReferences"][0]["uid"], "amw-uid");

        let live = live_of(&required, &owner);
        assert_eq!(
            plan_update(&required, &owner, Some(&live)),
            UpdatePlan::Unchanged
        );

        let UpdatePlan::Replace(next) = plan_update(&cm(json!({"k": "v2"})), &owner, Some(&live))
        else {
            panic!("expected replace")
        };
        assert_eq!(next["metadata"]["resourceVersion"], "7");
        assert_eq!(next["metadata"]["finalizers"], json!(["example.com/keep"]));
        assert_eq!(next["data"]["k"], "v2");
    }

    #[test]
    fn label_and_owner_changes_force_a_write() {
        let owner = applied_manifest_work_ref("h-w", "amw-uid");
        let required = cm(json!({"k": "v"}));
        let mut live = live_of(&required, &owner);
        live["metadata"]["labels"]["old"] = json!("remove me");
        let UpdatePlan::Replace(next) = plan_update(&required, &owner, Some(&live)) else {
            panic!("expected replace")
        };
        assert_eq!(next["metadata"]["labels"], json!({"app": "x"}));

        // Orphaning: the removal marker strips the owner reference.
        let live = live_of(&required, &owner);
        let UpdatePlan::Replace(next) =
            plan_update(&required, &removal_marker(&owner), Some(&live))
        else {
            panic!("expected replace")
        };
        assert!(next["metadata"].get("ownerReferences").is_none());
    }

    #[test]
    fn server_defaulted_fields_count_as_differences_but_status_does_not() {
        let owner = applied_manifest_work_ref("h-w", "amw-uid");
        let required = cm(json!({"k": "v"}));
        let mut live = live_of(&required, &owner);
        live["status"] = json!({"anything": 1});
        assert_eq!(
            plan_update(&required, &owner, Some(&live)),
            UpdatePlan::Unchanged
        );
        live["immutable"] = json!(false);
        assert!(matches!(
            plan_update(&required, &owner, Some(&live)),
            UpdatePlan::Replace(_)
        ));
    }

    #[test]
    fn is_same_compares_identity() {
        let a = cm(json!({}));
        let mut b = a.clone();
        b["metadata"]["namespace"] = json!("other");
        assert!(!is_same(&a, &b));
        assert!(is_same(&a, &a.clone()));
    }
}
