//! The `CreateOnly` strategy: create the object when it is missing, otherwise leave its
//! content alone and only adopt it (the work's owner reference, or its removal marker).
//!
//! [`plan_create_only`] is the decision; [`CreateOnlyApplier`] carries it out.

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::PostParams;
use serde_json::{Value, json};

use super::applier::{Applier, ApplyRequest};
use super::engine::ApplyError;
use super::metadata::{owner_references_patch, strip_removal_instructions};

/// What the `CreateOnly` strategy does with one manifest.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CreateOnlyPlan {
    /// Create this object.
    Create(Value),
    /// The object exists and already has the right owner references: no write.
    Unchanged,
    /// The object exists: merge-patch its owner references with this patch.
    SetOwner(Value),
}

/// The object `CreateOnly` creates for `required`: the manifest with the work's `owner` as its
/// only owner reference (none for a removal marker) and its removal instructions stripped.
pub fn object_for_create(required: &Value, owner: &OwnerReference) -> Value {
    let mut object = required.clone();
    if let Some(m) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("ownerReferences".into(), json!([owner]));
    }
    strip_removal_instructions(&mut object);
    object
}

/// Decides what the `CreateOnly` strategy does for `required` with the work's `owner`
/// reference (or its removal marker), given the `live` object if it exists.
pub fn plan_create_only(
    required: &Value,
    owner: &OwnerReference,
    live: Option<&Value>,
) -> CreateOnlyPlan {
    match live {
        None => CreateOnlyPlan::Create(object_for_create(required, owner)),
        Some(live) => match owner_references_patch(live, owner) {
            Some(patch) => CreateOnlyPlan::SetOwner(patch),
            None => CreateOnlyPlan::Unchanged,
        },
    }
}

/// The `CreateOnly` strategy (see [`plan_create_only`]). A create or owner patch planned from
/// an informer's copy that the server refuses is planned again from a fresh read.
#[derive(Clone, Copy, Debug, Default)]
pub struct CreateOnlyApplier;

impl Applier for CreateOnlyApplier {
    fn apply<'a>(&'a self, request: ApplyRequest<'a>) -> BoxFuture<'a, Result<Value, ApplyError>> {
        Box::pin(async move {
            let mut fresh = false;
            loop {
                let (live, cached) = request.read(fresh).await?;
                let live = match live {
                    Some(live) => live,
                    None => {
                        let object = object_for_create(&request.required, request.owner);
                        request.count("create");
                        match request
                            .api()
                            .create(&PostParams::default(), &super::engine::from_value(object)?)
                            .await
                        {
                            Ok(created) => Arc::new(request.written(&created)?),
                            Err(kube::Error::Api(s)) if cached && s.code == 409 => {
                                fresh = true;
                                continue;
                            }
                            Err(e) => return Err(e.into()),
                        }
                    }
                };
                match request.set_owner(&live).await {
                    Err(ApplyError::Api(_)) if cached && !fresh => fresh = true,
                    other => return other,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owner::{applied_manifest_work_ref, removal_marker};

    #[test]
    fn creates_when_missing_and_only_adopts_otherwise() {
        let owner = applied_manifest_work_ref("h-w", "amw-uid");
        let required = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default", "labels": {"a": "1", "b-": ""},
                "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "x"}]},
            "data": {"k": "v"}});
        let CreateOnlyPlan::Create(created) = plan_create_only(&required, &owner, None) else {
            panic!("expected create")
        };
        assert_eq!(created["metadata"]["labels"], json!({"a": "1"}));
        assert_eq!(created["metadata"]["ownerReferences"], json!([owner]));

        // An existing object is never changed, only adopted, whatever its content.
        let mut live = created.clone();
        live["data"]["k"] = json!("changed on the cluster");
        assert_eq!(
            plan_create_only(&required, &owner, Some(&live)),
            CreateOnlyPlan::Unchanged
        );
        live["metadata"]["ownerReferences"] = json!([]);
        let CreateOnlyPlan::SetOwner(patch) = plan_create_only(&required, &owner, Some(&live))
        else {
            panic!("expected an owner patch")
        };
        assert_eq!(patch["metadata"]["ownerReferences"], json!([owner]));

        // Orphaning: created without the owner, released when adopted earlier.
        let marker = removal_marker(&owner);
        let CreateOnlyPlan::Create(orphan) = plan_create_only(&required, &marker, None) else {
            panic!("expected create")
        };
        assert_eq!(orphan["metadata"]["ownerReferences"], json!([]));
        assert!(matches!(
            plan_create_only(&required, &marker, Some(&created)),
            CreateOnlyPlan::SetOwner(_)
        ));
    }
}
