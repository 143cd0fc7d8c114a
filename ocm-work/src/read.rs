//! Reading hub objects one at a time: the one way the hub controllers, the fan-out, the addon
//! manager and the registration parts list, get and write the objects they read.
//!
//! A typed request (`Api<ManifestWorkReplicaSet>::list`) decodes a whole answer at once: one
//! object that does not decode (a field or enum value a newer release added, a number out of
//! range, JSON nested deeper than `serde_json`'s 128 levels, which the API server takes up to
//! 10,000) fails the whole list, and keeps failing it for as long as that object exists. Here
//! every answer is read as [`RawObject`]s (the JSON text as the server sent it, of any depth)
//! and each object is decoded on its own, up to the API server's nesting limit, by a
//! [`Decoder`]:
//!
//! * an object that does not decode is one failure naming the object and the field at fault
//!   ([`DecodeFailure`]); the decoder logs it at WARN once per resource version of the object
//!   (and again once it decodes and later fails again), and the caller decides what else to do
//!   (a condition on an object whose status it owns, skipping it otherwise); every other object
//!   is handled as usual;
//! * a decoder remembers how deeply the deepest object it read nests, and
//!   [`Decoder::stacked`] runs a task with stack enough for it
//!   ([`ocm_api::k8s::json::WithStack`]), so a controller whose objects nest thousands of
//!   levels runs on tokio's 2 MiB worker threads. Reading an object deeper than any before
//!   yields once, so that the task's next poll (where the object is decoded and handled) has
//!   that stack already.
//!
//! Writes whose answer may be as deep as the object written (a ManifestWork fanned out from a
//! deep template) go through `Api<RawObject>` too ([`to_raw`]): kube's typed client would
//! refuse the answer of a write that succeeded.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::core::ApiResource;
use kube::{Client, Resource};
use ocm_api::cluster::v1beta1::PlacementDecision;
use ocm_api::conditions::{self, NewCondition};
use ocm_api::k8s::json;
use ocm_api::k8s::object::{DecodeFailure, RawObject};
use ocm_api::repeats::LastSaid;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use serde_json::value::RawValue;

use crate::{Error, Result};

/// `Api<RawObject>` for the objects of type `K`, in `namespace` or everywhere with `None`.
pub(crate) fn api<K: Resource<DynamicType = ()>>(
    client: &Client,
    namespace: Option<&str>,
) -> Api<RawObject> {
    let resource = ApiResource::erase::<K>(&());
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

/// The value at `path` (a path of object keys) of a raw object, when it is there and decodes
/// as `T`; the rest of the object (of any depth) is skipped without recursion, so this reads
/// a field of an object that does not decode as a whole. The value itself is decoded up to
/// the API server's nesting limit (see [`json::from_slice`]).
pub(crate) fn field<T: DeserializeOwned>(raw: &RawObject, path: &[&str]) -> Option<T> {
    let mut text = raw.json();
    for key in path {
        let map: BTreeMap<String, &RawValue> = serde_json::from_str(text).ok()?;
        text = map.get(*key)?.get();
    }
    json::from_slice(text.as_bytes()).ok()
}

/// The labels of a raw object, read on their own: none when absent or not a map of strings.
pub(crate) fn labels(raw: &RawObject) -> BTreeMap<String, String> {
    field(raw, &["metadata", "labels"]).unwrap_or_default()
}

/// The status conditions of a raw object that decode, read one by one (the rest of the object
/// may not decode).
pub(crate) fn conditions_of(raw: &RawObject) -> Vec<Condition> {
    field::<Vec<Box<RawValue>>>(raw, &["status", "conditions"])
        .unwrap_or_default()
        .iter()
        .filter_map(|c| serde_json::from_str::<Condition>(c.get()).ok())
        .collect()
}

/// `object` as JSON text, for a write through `Api<RawObject>` whose answer is read raw.
pub(crate) fn to_raw<T: Serialize>(object: &T, what: impl FnOnce() -> String) -> Result<RawObject> {
    // serde_json's writer has no depth limit; deep parts (manifests) serialise level by level.
    let text = serde_json::to_string(object).map_err(|source| Error::Serialize {
        what: what(),
        source,
    })?;
    RawValue::from_string(text)
        .map(RawObject::from_json)
        .map_err(|source| Error::Serialize {
            what: "a serialised object".to_string(),
            source,
        })
}

/// The [`Error::Undecodable`] of `failure`, an object of `kind`.
pub(crate) fn undecodable(kind: &str, failure: &DecodeFailure) -> Error {
    Error::Undecodable {
        kind: kind.to_string(),
        object: failure.object(),
        message: failure.error.clone(),
    }
}

/// Sets `condition` among the status conditions of `raw`, an object that does not decode,
/// with a merge patch of `status.conditions`; only when that changes them. The conditions are
/// read from a fresh copy of the object, each on its own (those that do not decode are not
/// kept). Returns whether it wrote.
pub(crate) async fn set_raw_condition(
    api: &Api<RawObject>,
    kind: &str,
    raw: &RawObject,
    condition: NewCondition,
    now: &Time,
    params: &PatchParams,
) -> Result<bool> {
    let name = raw.meta().name.clone().unwrap_or_default();
    let object = match raw.meta().namespace.as_deref() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    };
    // Nothing to write when the copy at hand says so already (the watch echo of our write).
    let mut conds = conditions_of(raw);
    if !conditions::set(&mut conds, condition.clone(), now) {
        return Ok(false);
    }
    let Some(fresh) = api
        .get_opt(&name)
        .await
        .map_err(|e| Error::kube(format!("get {object}"), e))?
    else {
        return Ok(false);
    };
    let mut conds = conditions_of(&fresh);
    if !conditions::set(&mut conds, condition, now) {
        return Ok(false);
    }
    match api
        .patch_status(
            &name,
            params,
            &Patch::Merge(&json!({ "status": { "conditions": conds } })),
        )
        .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(e) => Err(Error::kube(format!("update status of {object}"), e)),
    }
}

/// Decodes the objects one component reads, one at a time (see the [module docs](self)).
/// Cheap to clone: clones share what they remember.
#[derive(Clone, Default)]
pub(crate) struct Decoder {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// How deeply the deepest object read nests.
    deepest: AtomicUsize,
    /// The failures logged, by kind and object: once per resource version.
    said: LastSaid,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("deepest", &self.deepest())
            .finish_non_exhaustive()
    }
}

impl Decoder {
    /// How deeply the deepest object this decoder read nests.
    pub(crate) fn deepest(&self) -> usize {
        self.shared.deepest.load(Ordering::Relaxed)
    }

    /// `future`, polled with stack enough for the deepest object read so far (read again at
    /// every poll).
    pub(crate) fn stacked<F: Future>(&self, future: F) -> impl Future<Output = F::Output> {
        let shared = self.shared.clone();
        json::WithStack::new(move || shared.deepest.load(Ordering::Relaxed), future)
    }

    /// Takes note of objects `depth` levels deep; when deeper than any before, yields once,
    /// so that a [`Decoder::stacked`] task handles them from its next poll with the stack they
    /// need.
    pub(crate) async fn fit(&self, depth: usize) {
        let before = self.shared.deepest.fetch_max(depth, Ordering::Relaxed);
        if depth > before && depth > json::SHALLOW_DEPTH {
            tokio::task::yield_now().await;
        }
    }

    /// [`Decoder::fit`] for every object of `objects`.
    pub(crate) async fn fit_all(&self, objects: &[RawObject]) {
        let depth = objects.iter().map(RawObject::depth).max().unwrap_or(0);
        self.fit(depth).await;
    }

    /// Decodes `raw` as `K` (an object of `kind`); a failure is logged at WARN once per
    /// resource version of the object.
    pub(crate) fn decode<K: DeserializeOwned>(
        &self,
        kind: &str,
        raw: &RawObject,
    ) -> Result<K, DecodeFailure> {
        self.decode_with(kind, raw, false)
    }

    /// Decodes `raw` as `K` without logging a failure (for objects whose failure the caller
    /// reports on the object itself); it is still remembered, so that a later decode of the
    /// same version through [`Decoder::decode`] does not log it.
    pub(crate) fn decode_quietly<K: DeserializeOwned>(
        &self,
        kind: &str,
        raw: &RawObject,
    ) -> Result<K, DecodeFailure> {
        self.decode_with(kind, raw, true)
    }

    fn decode_with<K: DeserializeOwned>(
        &self,
        kind: &str,
        raw: &RawObject,
        quiet: bool,
    ) -> Result<K, DecodeFailure> {
        let key = failure_key(kind, raw);
        self.shared
            .deepest
            .fetch_max(raw.depth(), Ordering::Relaxed);
        match raw.decode::<K>() {
            Ok(object) => {
                self.shared.said.forget(&key);
                Ok(object)
            }
            Err(error) => {
                let failure = DecodeFailure::of(raw, without_position(error));
                let version = format!(
                    "{}\n{}",
                    failure.resource_version.as_deref().unwrap_or_default(),
                    failure.error
                );
                if self.shared.said.changed(&key, &version) && !quiet {
                    tracing::warn!(
                        kind,
                        object = %failure.object(),
                        resource_version = failure.resource_version.as_deref().unwrap_or_default(),
                        error = %failure.error,
                        "skipping an object that cannot be decoded; every other object is still handled"
                    );
                }
                Err(failure)
            }
        }
    }

    /// Lists `api` (objects of `kind`) with `params` as raw objects, with stack for the
    /// deepest of them from the next poll on; `action` names the list in an error.
    pub(crate) async fn list_raw(
        &self,
        api: &Api<RawObject>,
        params: &ListParams,
        action: impl FnOnce() -> String,
    ) -> Result<Vec<RawObject>> {
        let list = api
            .list(params)
            .await
            .map_err(|e| Error::kube(action(), e))?;
        self.fit_all(&list.items).await;
        Ok(list.items)
    }

    /// Lists `api` (objects of `kind`) with `params`, decoding each object on its own: the
    /// objects that decode, and the failures of the others (each logged, see
    /// [`Decoder::decode`]).
    pub(crate) async fn list<K: DeserializeOwned>(
        &self,
        api: &Api<RawObject>,
        params: &ListParams,
        kind: &str,
        action: impl FnOnce() -> String,
    ) -> Result<(Vec<K>, Vec<DecodeFailure>)> {
        let items = self.list_raw(api, params, action).await?;
        let mut objects = Vec::with_capacity(items.len());
        let mut failures = Vec::new();
        for raw in &items {
            match self.decode::<K>(kind, raw) {
                Ok(object) => objects.push(object),
                Err(failure) => failures.push(failure),
            }
        }
        Ok((objects, failures))
    }

    /// The PlacementDecisions of placement `namespace/placement`, each decoded on its own, with
    /// those that do not decode.
    pub(crate) async fn list_placement_decisions(
        &self,
        client: &Client,
        namespace: &str,
        placement: &str,
    ) -> Result<(Vec<PlacementDecision>, Vec<DecodeFailure>)> {
        self.list::<PlacementDecision>(
            &api::<PlacementDecision>(client, Some(namespace)),
            &ListParams::default().labels(&PlacementDecision::selector_for(placement)),
            "PlacementDecision",
            || format!("list PlacementDecisions of {namespace}/{placement}"),
        )
        .await
    }

    /// Gets `name` from `api` (an object of `kind`) as a raw object, with stack for it from
    /// the next poll on.
    pub(crate) async fn get_raw(
        &self,
        api: &Api<RawObject>,
        kind: &str,
        name: &str,
    ) -> Result<Option<RawObject>> {
        let raw = api
            .get_opt(name)
            .await
            .map_err(|e| Error::kube(format!("get {kind} {}", named(api, name)), e))?;
        if let Some(raw) = &raw {
            self.fit(raw.depth()).await;
        }
        Ok(raw)
    }

    /// Gets `name` from `api` and decodes it as `K` (an object of `kind`): `None` when it does
    /// not exist, an [`Error::Undecodable`] naming the field at fault when it does not decode
    /// (logged, see [`Decoder::decode`]).
    pub(crate) async fn get<K: DeserializeOwned>(
        &self,
        api: &Api<RawObject>,
        kind: &str,
        name: &str,
    ) -> Result<Option<K>> {
        let Some(raw) = self.get_raw(api, kind, name).await? else {
            return Ok(None);
        };
        self.decode::<K>(kind, &raw)
            .map(Some)
            .map_err(|failure| undecodable(kind, &failure))
    }

    /// Decodes an object the server answered with (a read, or the object as a write left it),
    /// with stack for it from the next poll on: an [`Error::Undecodable`] when it does not
    /// decode (logged, see [`Decoder::decode`]).
    pub(crate) async fn answer<K: DeserializeOwned>(
        &self,
        kind: &str,
        raw: RawObject,
    ) -> Result<K> {
        self.fit(raw.depth()).await;
        self.decode::<K>(kind, &raw)
            .map_err(|failure| undecodable(kind, &failure))
    }
}

/// A decode error without `serde_json`'s " at line L column C": where in the text the error
/// is moves whenever the object's metadata changes (a new resourceVersion, managed fields),
/// and a message written into a condition must not change with it. The field path names the
/// place.
fn without_position(message: String) -> String {
    let Some(at) = message.rfind(" at line ") else {
        return message;
    };
    let rest = &message[at + " at line ".len()..];
    let mut parts = rest.splitn(3, ' ');
    let positional = matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(line), Some("column"), Some(column))
            if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())
                && !column.is_empty() && column.bytes().all(|b| b.is_ascii_digit())
    );
    if positional {
        message[..at].to_string()
    } else {
        message
    }
}

/// `namespace/name`, or `name` for a cluster-scoped request.
fn named(api: &Api<RawObject>, name: &str) -> String {
    // The URL of a namespaced Api ends in `/namespaces/<ns>/<plural>`.
    let url = api.resource_url();
    let mut parts = url.rsplit('/');
    let _plural = parts.next();
    match (parts.next(), parts.next()) {
        (Some(ns), Some("namespaces")) => format!("{ns}/{name}"),
        _ => name.to_string(),
    }
}

fn failure_key(kind: &str, raw: &RawObject) -> String {
    let meta = raw.meta();
    format!(
        "{kind} {}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocm_api::work::v1::ManifestWork;

    fn raw(text: &str) -> RawObject {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn labels_and_conditions_are_read_leniently() {
        let object = raw(r#"{"metadata": {"name": "a", "labels": {"x": "1"}},
                "spec": {"deep": [[[[1]]]]},
                "status": {"conditions": [
                    {"type": "Ready", "status": "True", "reason": "R", "message": "",
                     "lastTransitionTime": "2026-01-01T00:00:00Z"},
                    {"type": 7}]}}"#);
        assert_eq!(labels(&object), BTreeMap::from([("x".into(), "1".into())]));
        let conds = conditions_of(&object);
        assert_eq!(conds.len(), 1);
        assert_eq!(conds[0].type_, "Ready");
        let odd = raw(r#"{"metadata": {"labels": {"x": 1}}, "status": {"conditions": 3}}"#);
        assert!(labels(&odd).is_empty());
        assert!(conditions_of(&odd).is_empty());
        assert_eq!(
            field::<String>(&object, &["metadata", "name"]).as_deref(),
            Some("a")
        );
        assert_eq!(field::<String>(&object, &["metadata", "uid"]), None);
        assert_eq!(field::<String>(&odd, &["status", "conditions", "x"]), None);
    }

    #[test]
    fn failures_name_the_field_and_are_remembered_per_version() {
        let decoder = Decoder::default();
        let bad = raw(
            r#"{"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
                "metadata": {"name": "w", "namespace": "c1", "resourceVersion": "3"},
                "spec": {"workload": 1}}"#,
        );
        let failure = decoder
            .decode::<ManifestWork>("ManifestWork", &bad)
            .unwrap_err();
        assert_eq!(failure.object(), "c1/w");
        assert!(
            failure.error.starts_with("spec.workload:"),
            "{}",
            failure.error
        );
        // The same version again: remembered, not news.
        let key = failure_key("ManifestWork", &bad);
        assert!(
            !decoder
                .shared
                .said
                .changed(&key, &format!("3\n{}", failure.error))
        );
    }

    #[test]
    fn positions_are_left_out_of_messages() {
        assert_eq!(
            without_position("spec.x: invalid type: integer `1` at line 1 column 1353".into()),
            "spec.x: invalid type: integer `1`"
        );
        for kept in ["spec.x: bad at line one", "at line 3 column", "plain"] {
            assert_eq!(without_position(kept.into()), kept);
        }
    }

    #[test]
    fn a_deep_object_is_decoded_and_its_depth_remembered() {
        let decoder = Decoder::default();
        let depth = 3_000;
        let text = format!(
            r#"{{"metadata": {{"name": "w", "namespace": "c1"}}, "spec": {{"workload": {{"manifests": [{{"kind": "ConfigMap", "x": {}1{}}}]}}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let object = raw(&text);
        let work = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                let work = decoder.decode::<ManifestWork>("ManifestWork", &object);
                (work.is_ok(), decoder.deepest())
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(work, (true, depth + 5));
    }

    #[tokio::test]
    async fn errors_name_the_object_of_a_namespaced_api() {
        // Only the URLs are used: the client talks to nothing.
        let service = tower::service_fn(|_req: http::Request<kube::client::Body>| async {
            Err::<http::Response<kube::client::Body>, std::io::Error>(std::io::Error::other(
                "no server",
            ))
        });
        let client = Client::new(service, "default");
        assert_eq!(
            named(&api::<ManifestWork>(&client, Some("cluster1")), "w"),
            "cluster1/w"
        );
        assert_eq!(named(&api::<ManifestWork>(&client, None), "w"), "w");
    }
}
