//! Label, annotation and owner-reference handling shared by the update strategies.
//!
//! In a manifest, a label or annotation key ending in `-` is an instruction: delete the key
//! without the suffix from the object on the managed cluster. Such keys are never written
//! themselves.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde_json::{Map, Value, json};

use crate::owner::merge_owner_refs;

/// The owner references of `object` (none when missing or malformed).
pub fn owner_references(object: &Value) -> Vec<OwnerReference> {
    object
        .get("metadata")
        .and_then(|m| m.get("ownerReferences"))
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default()
}

/// The JSON merge patch that merges `owner` (or removes it, for a removal marker) into the
/// owner references of `object`, carrying the object's uid and resourceVersion as
/// preconditions; `None` when the owner references would not change.
///
/// `CreateOnly` and `ServerSideApply` set the work's owner this way on an object they did not
/// otherwise change.
pub fn owner_references_patch(object: &Value, owner: &OwnerReference) -> Option<Value> {
    let (merged, changed) =
        merge_owner_refs(&owner_references(object), std::slice::from_ref(owner));
    if !changed {
        return None;
    }
    let metadata = object.get("metadata");
    Some(json!({"metadata": {
        "uid": metadata.and_then(|m| m.get("uid")),
        "resourceVersion": metadata.and_then(|m| m.get("resourceVersion")),
        "ownerReferences": merged,
    }}))
}

/// Merges `required` into `existing`: every required key sets its value, and a key ending in
/// `-` deletes the key without the suffix. Returns whether `existing` changed.
pub fn merge_map(
    existing: &mut BTreeMap<String, String>,
    required: &BTreeMap<String, String>,
) -> bool {
    let mut changed = false;
    for (key, value) in required {
        if let Some(target) = key.strip_suffix('-') {
            changed |= existing.remove(target).is_some();
        } else if existing.get(key) != Some(value) {
            existing.insert(key.clone(), value.clone());
            changed = true;
        }
    }
    changed
}

/// A string map (`metadata.labels` or `metadata.annotations`) read from an object; missing or
/// malformed entries count as absent.
pub fn string_map(object: &Value, field: &str) -> BTreeMap<String, String> {
    object
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Writes a string map into `metadata.<field>`, removing the field when the map is empty.
pub fn set_string_map(object: &mut Value, field: &str, map: &BTreeMap<String, String>) {
    let Some(metadata) = metadata_mut(object) else {
        return;
    };
    if map.is_empty() {
        metadata.remove(field);
    } else {
        let value = map
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<_, _>>();
        metadata.insert(field.to_string(), Value::Object(value));
    }
}

/// The object's `metadata` map, created if missing; `None` when the object is not a map or its
/// metadata is not a map.
pub fn metadata_mut(object: &mut Value) -> Option<&mut Map<String, Value>> {
    let map = object.as_object_mut()?;
    map.entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

/// Prepares an object for creation: drops label and annotation keys ending in `-` and owner
/// references whose uid ends in `-` (removal markers).
pub fn strip_removal_instructions(object: &mut Value) {
    let Some(metadata) = metadata_mut(object) else {
        return;
    };
    for field in ["labels", "annotations"] {
        if let Some(Value::Object(map)) = metadata.get_mut(field) {
            map.retain(|k, _| !k.ends_with('-'));
        }
    }
    if let Some(Value::Array(refs)) = metadata.get_mut("ownerReferences") {
        refs.retain(|r| {
            !r.get("uid")
                .and_then(Value::as_str)
                .is_some_and(|uid| uid.ends_with('-'))
        });
    }
}

/// Removes every `creationTimestamp: null` found in any nested `metadata` map (what
/// ServerSideApply does before sending a manifest, to avoid a spurious generation bump).
pub fn remove_null_creation_timestamps(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(meta)) = map.get_mut("metadata")
                && meta.get("creationTimestamp").is_some_and(Value::is_null)
            {
                meta.remove("creationTimestamp");
            }
            map.values_mut().for_each(remove_null_creation_timestamps);
        }
        Value::Array(items) => items.iter_mut().for_each(remove_null_creation_timestamps),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn merge_sets_overwrites_and_deletes() {
        let mut existing = map(&[("a", "1"), ("b", "2"), ("keep", "x")]);
        assert!(merge_map(
            &mut existing,
            &map(&[("a", "9"), ("b-", ""), ("c", "3")])
        ));
        assert_eq!(existing, map(&[("a", "9"), ("c", "3"), ("keep", "x")]));
        assert!(!merge_map(
            &mut existing,
            &map(&[("a", "9"), ("gone-", "")])
        ));
    }

    #[test]
    fn create_strips_removal_instructions() {
        let mut obj = json!({"metadata": {
            "labels": {"app": "x", "old-": ""},
            "annotations": {"note-": ""},
            "ownerReferences": [{"uid": "u1"}, {"uid": "u2-"}]
        }});
        strip_removal_instructions(&mut obj);
        assert_eq!(
            obj,
            json!({"metadata": {
                "labels": {"app": "x"}, "annotations": {}, "ownerReferences": [{"uid": "u1"}]
            }})
        );
    }

    #[test]
    fn null_creation_timestamps_are_removed_at_every_level() {
        let mut obj = json!({"metadata": {"name": "d", "creationTimestamp": null},
            "spec": {"template": {"metadata": {"creationTimestamp": null, "labels": {"a": "b"}}}},
            "keep": {"creationTimestamp": null}});
        remove_null_creation_timestamps(&mut obj);
        assert_eq!(
            obj,
            json!({"metadata": {"name": "d"},
            "spec": {"template": {"metadata": {"labels": {"a": "b"}}}},
            "keep": {"creationTimestamp": null}})
        );
    }

    #[test]
    fn owner_patches_only_when_the_references_change() {
        use crate::owner::{applied_manifest_work_ref, removal_marker};
        let owner = applied_manifest_work_ref("h-w", "amw-uid");
        let object = json!({"metadata": {"name": "c", "uid": "u", "resourceVersion": "3"}});
        let patch = owner_references_patch(&object, &owner).unwrap();
        assert_eq!(patch["metadata"]["uid"], "u");
        assert_eq!(patch["metadata"]["resourceVersion"], "3");
        assert_eq!(patch["metadata"]["ownerReferences"][0]["uid"], "amw-uid");
        let mut owned = object.clone();
        owned["metadata"]["ownerReferences"] = patch["metadata"]["ownerReferences"].clone();
        assert_eq!(owner_references(&owned), vec![owner.clone()]);
        assert!(owner_references_patch(&owned, &owner).is_none());
        // The removal marker removes it, and then has nothing left to do.
        let released = owner_references_patch(&owned, &removal_marker(&owner)).unwrap();
        assert_eq!(released["metadata"]["ownerReferences"], json!([]));
        assert!(owner_references_patch(&object, &removal_marker(&owner)).is_none());
        // Malformed references count as none.
        let malformed = json!({"metadata": {"ownerReferences": "nope"}});
        assert!(owner_references(&malformed).is_empty());
    }

    #[test]
    fn string_maps_round_trip() {
        let mut obj = json!({"metadata": {"labels": {"a": "1", "n": 5}}});
        let labels = string_map(&obj, "labels");
        assert_eq!(labels, map(&[("a", "1")]));
        set_string_map(&mut obj, "labels", &BTreeMap::new());
        assert_eq!(obj, json!({"metadata": {}}));
    }
}
