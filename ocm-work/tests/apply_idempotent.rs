//! "Apply planning is idempotent" (ARCHITECTURE.md, testing): for generated manifests, live
//! objects, owners (the work's owner reference or its removal marker) and strategies, planning
//! against the object a planned write leaves behind plans no further write.
//!
//! The writes go to a small model of the API server: create, replace (with the
//! resourceVersion precondition), JSON merge patch (with the uid and resourceVersion
//! preconditions the owner patches carry) and server-side apply (fields merged into the live
//! object, lists replaced, owner references merged by uid). The model does not default fields:
//! with a server that does, `Update` replaces again on every pass, as upstream's `isSame` does
//! (see `ocm_work::apply::update::is_same`).
//!
//! Per strategy:
//!
//! * `Update` ([`plan_update`]): the second plan is `Unchanged`; label and annotation merging
//!   with `key-` removal instructions, owner-reference merging and the live finalizers take
//!   part. A manifest that both sets and removes the same key is left out: it is rewritten on
//!   every pass, here as upstream.
//! * `CreateOnly` ([`plan_create_only`]): the second plan is `Unchanged` (the owner reference
//!   is set once).
//! * `ServerSideApply` ([`ServerSideApplyPlan`]): with `ignoreFields` (JSON paths, JSON
//!   pointers and jq expressions, `OnSpokePresent` and `OnSpokeChange`) the second pass keeps
//!   the live object (its configuration hash matches) and writes nothing; without them the
//!   manifest is applied on every pass, as upstream, and the second apply changes nothing.
//!
//! Owner references are merged as upstream's `MergeOwnerRefs` does: the first reference to
//! the same owner (name, kind, group) is the one replaced or removed. A live object with two
//! references to the work's AppliedManifestWork (a stale uid and the current one) therefore
//! takes one pass per reference to be orphaned, here as upstream; the generated live objects
//! never carry both.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use ocm_api::work::v1::ServerSideApplyConfig;
use ocm_work::apply::create_only::{CreateOnlyPlan, plan_create_only};
use ocm_work::apply::metadata::owner_references_patch;
use ocm_work::apply::server_side::{ServerSideApplyPlan, ServerSideApplyStep};
use ocm_work::apply::update::{UpdatePlan, plan_update};
use ocm_work::owner::{applied_manifest_work_ref, removal_marker};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// The API server model.

fn metadata(object: &mut Value) -> &mut Map<String, Value> {
    object
        .as_object_mut()
        .and_then(|o| {
            o.entry("metadata")
                .or_insert_with(|| json!({}))
                .as_object_mut()
        })
        .expect("objects and their metadata are maps")
}

fn resource_version(object: &Value) -> u64 {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The object as stored, with the live `uid`, `creationTimestamp` and the next version.
fn stored(mut object: Value, live: Option<&Value>) -> Value {
    let version = live.map_or(1, |l| resource_version(l) + 1);
    let uid = live
        .and_then(|l| l.pointer("/metadata/uid").cloned())
        .unwrap_or_else(|| json!("live-uid"));
    let meta = metadata(&mut object);
    meta.insert("uid".into(), uid);
    meta.insert("resourceVersion".into(), json!(version.to_string()));
    meta.insert("creationTimestamp".into(), json!("2030-01-01T00:00:00Z"));
    object
}

fn create(object: Value) -> Value {
    assert!(
        object.pointer("/metadata/resourceVersion").is_none(),
        "a create carries no resourceVersion"
    );
    stored(object, None)
}

fn replace(live: &Value, object: Value) -> Value {
    assert_eq!(
        resource_version(&object),
        resource_version(live),
        "a replace carries the live resourceVersion"
    );
    stored(object, Some(live))
}

fn merge_patch(live: &Value, mut patch: Value) -> Value {
    let meta = metadata(&mut patch);
    for precondition in ["uid", "resourceVersion"] {
        let given = meta.remove(precondition).unwrap_or(Value::Null);
        assert_eq!(
            Some(&given),
            live.get("metadata").and_then(|m| m.get(precondition)),
            "the patch's {precondition} precondition"
        );
    }
    let mut object = live.clone();
    json_patch::merge(&mut object, &patch);
    if object == *live {
        return object;
    }
    stored(object, Some(live))
}

/// Server-side apply: `applied`'s fields merged into `live` (maps merged, other values
/// replaced, owner references merged by uid); the version moves only when something changed.
fn server_side_apply(live: Option<&Value>, applied: &Value) -> Value {
    fn merge(into: &mut Value, from: &Value, path: &str) {
        match (into, from) {
            (Value::Object(a), Value::Object(b)) => {
                for (k, v) in b {
                    let child = format!("{path}/{k}");
                    match a.get_mut(k) {
                        Some(existing) => merge(existing, v, &child),
                        None => {
                            a.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            (Value::Array(a), Value::Array(b)) if path == "/metadata/ownerReferences" => {
                for r in b {
                    match a.iter_mut().find(|x| x.get("uid") == r.get("uid")) {
                        Some(existing) => *existing = r.clone(),
                        None => a.push(r.clone()),
                    }
                }
            }
            (into, from) => *into = from.clone(),
        }
    }
    let Some(live) = live else {
        return create(applied.clone());
    };
    let mut object = live.clone();
    merge(&mut object, applied, "");
    if object == *live {
        return object;
    }
    stored(object, Some(live))
}

// ---------------------------------------------------------------------------------------------
// Generators.

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::from),
        (-3i64..4).prop_map(Value::from),
        "[a-c]{0,2}".prop_map(Value::from),
    ]
}

fn tree() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn string_map(keys: &'static [&'static str]) -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(prop::sample::select(keys), "[a-c]{1,2}", 0..keys.len())
        .prop_map(|m| m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn map_value(map: &BTreeMap<String, String>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

fn reference(kind: &str, name: &str, uid: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid})
}

/// A manifest: an identity, labels and annotations (with `key-` removal instructions when
/// `removals`, for keys it does not set), owner references of other owners, and content.
fn manifest(removals: bool) -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec![
            ("v1", "ConfigMap"),
            ("apps/v1", "Deployment"),
            ("example.com/v1", "Widget"),
        ]),
        prop::option::of(Just("default")),
        string_map(&["app", "tier", "team"]),
        string_map(&["note", "owner"]),
        prop::sample::subsequence(vec!["old-", "gone-"], 0..=2),
        prop::bool::ANY,
        prop::collection::btree_map(
            prop::sample::select(vec!["spec", "data", "rules"]),
            tree(),
            0..3,
        ),
    )
        .prop_map(
            move |((api_version, kind), ns, labels, annotations, remove, owned, content)| {
                let mut labels = map_value(&labels);
                let mut annotations = map_value(&annotations);
                if removals {
                    for key in remove {
                        labels[key] = json!("");
                        annotations[key] = json!("");
                    }
                }
                let mut object = json!({"apiVersion": api_version, "kind": kind,
                    "metadata": {"name": "obj", "labels": labels, "annotations": annotations}});
                if let Some(ns) = ns {
                    object["metadata"]["namespace"] = json!(ns);
                }
                if owned {
                    object["metadata"]["ownerReferences"] =
                        json!([reference("ReplicaSet", "rs", "rs-uid")]);
                }
                for (k, v) in content {
                    object[k] = v;
                }
                object
            },
        )
}

/// A live object for `manifest`: none, or the manifest as a create would leave it, changed on
/// the cluster (content, labels, owners, finalizers, a configuration hash).
fn live(manifest: Value) -> impl Strategy<Value = Option<Value>> {
    let changes = (
        prop::option::of(tree()),
        string_map(&["app", "old", "extra"]),
        prop::sample::select(owner_lists()),
        prop::bool::ANY,
        prop::option::of(prop::sample::select(vec!["stale-hash", "another"])),
    );
    prop::option::of(changes).prop_map(move |changes| {
        let (content, labels, refs, finalizer, hash) = changes?;
        let mut object = manifest.clone();
        if let Some(content) = content {
            object["spec"] = content;
        }
        let meta = metadata(&mut object);
        meta.insert("labels".into(), map_value(&labels));
        meta.insert("ownerReferences".into(), Value::Array(refs));
        if finalizer {
            meta.insert("finalizers".into(), json!(["example.com/keep"]));
        }
        if let Some(hash) = hash {
            meta.insert(
                "annotations".into(),
                json!({"open-cluster-management.io/config-spec-hash": hash}),
            );
        }
        Some(create(object))
    })
}

/// The owner references a live object may carry: another owner's, a stale one to the work's
/// AppliedManifestWork (another uid), the current one. Never the stale and the current one
/// together: owner references are merged as upstream's `MergeOwnerRefs`, which matches the
/// first reference to the same owner (name, kind, group) only, so with two of them a removal
/// marker takes one pass per reference (as upstream).
fn owner_lists() -> Vec<Vec<Value>> {
    let other = reference("ReplicaSet", "rs", "rs-uid");
    let stale = json!({"apiVersion": "work.open-cluster-management.io/v1",
        "kind": "AppliedManifestWork", "name": "hash-work", "uid": "old-uid"});
    let current = serde_json::to_value(owner()).expect("an owner reference");
    vec![
        vec![],
        vec![other.clone()],
        vec![stale.clone()],
        vec![current.clone()],
        vec![other.clone(), stale],
        vec![other, current],
    ]
}

fn owner() -> OwnerReference {
    applied_manifest_work_ref("hash-work", "amw-uid")
}

fn owners() -> impl Strategy<Value = OwnerReference> {
    prop_oneof![Just(owner()), Just(removal_marker(&owner()))]
}

fn server_side_config() -> impl Strategy<Value = ServerSideApplyConfig> {
    let field = (
        prop::sample::select(vec!["OnSpokePresent", "OnSpokeChange"]),
        prop::sample::subsequence(vec![".spec.a", ".metadata.labels.app", ".data.b"], 0..=2),
        prop::sample::subsequence(
            vec!["/spec/b", "/data", "/metadata/annotations/note"],
            0..=1,
        ),
        prop::sample::subsequence(vec![".spec.c", ".metadata.annotations", ".rules"], 0..=1),
    )
        .prop_map(|(condition, paths, pointers, jq)| {
            json!({"condition": condition, "jsonPaths": paths, "jsonPointers": pointers,
                "jqPathExpressions": jq})
        });
    (
        prop::option::of(prop::collection::vec(field, 1..3)),
        prop::option::of(prop::bool::ANY),
    )
        .prop_map(|(ignore, force)| {
            serde_json::from_value(json!({"ignoreFields": ignore, "force": force}))
                .expect("a server-side apply config")
        })
}

/// Whether the manifest sets and removes the same label or annotation key.
fn contradicts_itself(manifest: &Value) -> bool {
    ["labels", "annotations"].iter().any(|field| {
        manifest["metadata"][field]
            .as_object()
            .is_some_and(|m| m.keys().any(|k| m.contains_key(&format!("{k}-"))))
    })
}

// ---------------------------------------------------------------------------------------------
// One pass of each strategy against the model: the object afterwards, and whether it wrote.

fn update_pass(manifest: &Value, owner: &OwnerReference, live: Option<&Value>) -> (Value, bool) {
    match plan_update(manifest, owner, live) {
        UpdatePlan::Create(object) => (create(object), true),
        UpdatePlan::Replace(object) => (
            replace(live.expect("a replace has a live object"), object),
            true,
        ),
        UpdatePlan::Unchanged => (live.expect("unchanged has a live object").clone(), false),
        other => panic!("unexpected plan {other:?}"),
    }
}

fn create_only_pass(
    manifest: &Value,
    owner: &OwnerReference,
    live: Option<&Value>,
) -> (Value, bool) {
    match plan_create_only(manifest, owner, live) {
        CreateOnlyPlan::Create(object) => {
            // The applier sets the owner on what it created when that changes anything.
            let created = create(object);
            match owner_references_patch(&created, owner) {
                Some(patch) => (merge_patch(&created, patch), true),
                None => (created, true),
            }
        }
        CreateOnlyPlan::SetOwner(patch) => (merge_patch(live.expect("live"), patch), true),
        CreateOnlyPlan::Unchanged => (live.expect("live").clone(), false),
        other => panic!("unexpected plan {other:?}"),
    }
}

/// One server-side apply pass: the object afterwards, and the body applied (if any) and
/// whether the owner was patched.
fn server_side_pass(
    plan: &ServerSideApplyPlan,
    owner: &OwnerReference,
    live: Option<&Value>,
) -> (Value, Option<Value>, bool) {
    // Without ignoreFields the applier does not read: it applies whatever the cluster has.
    let step = plan.decide(if plan.needs_live() { live } else { None });
    let (object, applied) = match (step, live) {
        (ServerSideApplyStep::KeepLive { .. }, Some(live)) => (live.clone(), None),
        (
            ServerSideApplyStep::Apply(body) | ServerSideApplyStep::KeepLive { fallback: body },
            live,
        ) => (server_side_apply(live, body), Some(body.clone())),
        (other, _) => panic!("unexpected step {other:?}"),
    };
    match owner_references_patch(&object, owner) {
        Some(patch) => (merge_patch(&object, patch), applied, true),
        None => (object, applied, false),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn update_plans_no_second_write(
        (manifest, live) in manifest(true).prop_flat_map(|m| (Just(m.clone()), live(m))),
        owner in owners(),
    ) {
        prop_assume!(!contradicts_itself(&manifest));
        let (after, _) = update_pass(&manifest, &owner, live.as_ref());
        prop_assert_eq!(plan_update(&manifest, &owner, Some(&after)), UpdatePlan::Unchanged);
    }

    #[test]
    fn create_only_plans_no_second_write(
        (manifest, live) in manifest(true).prop_flat_map(|m| (Just(m.clone()), live(m))),
        owner in owners(),
    ) {
        let (after, _) = create_only_pass(&manifest, &owner, live.as_ref());
        prop_assert_eq!(plan_create_only(&manifest, &owner, Some(&after)), CreateOnlyPlan::Unchanged);
        // An existing object's content is never changed.
        if let Some(live) = &live {
            let content = |o: &Value| {
                let mut o = o.clone();
                o.as_object_mut().map(|m| m.remove("metadata"));
                o
            };
            prop_assert_eq!(content(&after), content(live));
        }
    }

    #[test]
    fn server_side_apply_plans_no_second_write(
        (manifest, live) in manifest(false).prop_flat_map(|m| (Just(m.clone()), live(m))),
        owner in owners(),
        config in server_side_config(),
    ) {
        // An ignoreFields entry that cannot be processed is reported, and nothing is written.
        let Ok(plan) = ServerSideApplyPlan::new(manifest.clone(), &config) else {
            return Ok(());
        };
        let (after, _, _) = server_side_pass(&plan, &owner, live.as_ref());
        // Planned again from the same manifest: the same plan.
        let again = ServerSideApplyPlan::new(manifest.clone(), &config).expect("plans again");
        prop_assert_eq!(&again, &plan);
        let (second, applied, owner_patched) = server_side_pass(&again, &owner, Some(&after));
        prop_assert!(!owner_patched, "the owner is set once");
        if plan.needs_live() {
            prop_assert!(plan.hash().is_some());
            prop_assert_eq!(applied, None, "the hash matches: nothing is applied");
        } else {
            prop_assert!(applied.is_some(), "applied on every pass, as upstream");
        }
        prop_assert_eq!(second, after, "the second pass changes nothing");
    }
}
