//! Objects as an API server sends them, decoded one at a time.
//!
//! A typed list or watch (`Api<ManifestWork>`) decodes a whole response at once: one object
//! that does not decode (a field a newer release added, a number out of range, a value of the
//! wrong type, JSON nested deeper than `serde_json`'s 128 levels) fails the whole response, and
//! keeps failing it for as long as that object exists, so nothing else of the list is read.
//! A [`RawObject`] list or watch never fails on an object's content: each object is kept as
//! the JSON text the server sent (whatever its depth), with the identifying metadata read
//! field by field, and [`RawObject::decode`] then decodes it on its own, up to the API
//! server's nesting limit (see [`crate::k8s::json`]), with an error that names the field at
//! fault. [`decode_items`] does that for every item of a list and keeps the failures apart.
//!
//! ```
//! use ocm_api::k8s::object::{RawObject, decode_items};
//! use ocm_api::work::v1::ManifestWork;
//!
//! let list: kube::core::ObjectList<RawObject> = serde_json::from_str(r#"{
//!     "apiVersion": "v1", "kind": "List", "metadata": {},
//!     "items": [
//!         {"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
//!          "metadata": {"name": "good", "namespace": "cluster1"}, "spec": {}},
//!         {"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
//!          "metadata": {"name": "bad", "namespace": "cluster1"}, "spec": {"workload": 1}}
//!     ]}"#).unwrap();
//! let (works, failures) = decode_items::<ManifestWork>(list.items);
//! assert_eq!(works.len(), 1);
//! assert_eq!(failures[0].name, "bad");
//! assert!(failures[0].error.starts_with("spec.workload: invalid type: integer `1`"));
//! ```

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::{ApiResource, DynamicResourceScope, Resource};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::k8s::json;

/// An object as the API server sent it: its JSON text, and the identifying metadata (name,
/// namespace, uid, resourceVersion, generation) read field by field, so that it is there even
/// when the object's full metadata would not decode.
///
/// Listing or watching `RawObject`s (with `Api::all_with` / `Api::namespaced_with` and the
/// resource's [`ApiResource`]) never fails on an object's content. The text is kept as it is
/// (reading it skips nested JSON without recursion), so an object of any depth costs its
/// bytes and no stack.
#[derive(Clone, Debug)]
pub struct RawObject {
    metadata: ObjectMeta,
    json: Box<RawValue>,
}

/// Objects are equal when their texts are (the same JSON written with its keys in another
/// order is another text).
impl PartialEq for RawObject {
    fn eq(&self, other: &Self) -> bool {
        self.json.get() == other.json.get()
    }
}

/// The identifying fields of `metadata`, each read only when it has the expected type.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Identity {
    metadata: IdentityMeta,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct IdentityMeta {
    name: Lenient<String>,
    namespace: Lenient<String>,
    uid: Lenient<String>,
    #[serde(rename = "resourceVersion")]
    resource_version: Lenient<String>,
    generation: Lenient<i64>,
}

/// A field read when it has the expected type and skipped (without recursion) otherwise.
struct Lenient<T>(Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Buffered as raw text first, so a value of another type (even a deep one) is skipped.
        let raw = <&RawValue>::deserialize(d)
            .map(|r| r.get().to_string())
            .or_else(|_| Ok::<_, D::Error>(String::new()))?;
        Ok(Self(serde_json::from_str::<T>(&raw).ok()))
    }
}

impl RawObject {
    /// Keeps `text`, a JSON object as the API server sent it.
    pub fn from_json(json: Box<RawValue>) -> Self {
        let identity: Identity = serde_json::from_str(json.get()).unwrap_or_default();
        let m = identity.metadata;
        let metadata = ObjectMeta {
            name: m.name.0,
            namespace: m.namespace.0,
            uid: m.uid.0,
            resource_version: m.resource_version.0,
            generation: m.generation.0,
            ..ObjectMeta::default()
        };
        Self { metadata, json }
    }

    /// Wraps a JSON value (of any depth).
    pub fn new(value: Value) -> Self {
        let text = json::to_vec(&value);
        json::drop_value(value);
        // A `Value` always serialises to JSON text.
        let raw = String::from_utf8(text)
            .ok()
            .and_then(|t| RawValue::from_string(t).ok())
            .unwrap_or_else(|| RawValue::from_string("null".into()).unwrap_or_default());
        Self::from_json(raw)
    }

    /// The object's JSON text.
    pub fn json(&self) -> &str {
        self.json.get()
    }

    /// How deeply the object's JSON nests.
    pub fn depth(&self) -> usize {
        json::nesting_depth(self.json.get().as_bytes())
    }

    /// The object's JSON as a `Value` (an error when it nests deeper than the API server
    /// allows). A deep value must be handled as [`crate::k8s::json`] says.
    pub fn to_value(&self) -> Result<Value, String> {
        json::from_slice(self.json.get().as_bytes()).map_err(|e| e.to_string())
    }

    /// Decodes the object as `K`, on a stack big enough for its depth. The error names the
    /// field that failed, for example
    /// `spec.manifestConfigs[0].updateStrategy.type: unknown variant ...`.
    pub fn decode<K: DeserializeOwned>(&self) -> Result<K, String> {
        let text = self.json.get().as_bytes();
        let depth = json::nesting_depth(text);
        if depth > json::MAX_NESTING_DEPTH {
            return Err(format!(
                "the object nests {depth} levels deep, more than the API server's limit of {}",
                json::MAX_NESTING_DEPTH
            ));
        }
        json::with_stack(depth, || {
            let mut de = serde_json::Deserializer::from_slice(text);
            de.disable_recursion_limit();
            serde_path_to_error::deserialize::<_, K>(&mut de)
                .map_err(|e| {
                    let path = e.path().to_string();
                    let error = without_position(e.inner());
                    if path == "." {
                        error
                    } else {
                        format!("{path}: {error}")
                    }
                })
                .and_then(|k| de.end().map(|()| k).map_err(|e| e.to_string()))
        })
    }
}

/// A decode error without `serde_json`'s ` at line L column C`: the path names the field, and
/// a position in the text would change with every unrelated change of the object.
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    if error.line() == 0 {
        return text;
    }
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    text.strip_suffix(&suffix)
        .map_or(text.clone(), str::to_string)
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(RawObject::from_json)
    }
}

impl Serialize for RawObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(s)
    }
}

impl Resource for RawObject {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }
    fn group(dt: &ApiResource) -> Cow<'_, str> {
        dt.group.as_str().into()
    }
    fn version(dt: &ApiResource) -> Cow<'_, str> {
        dt.version.as_str().into()
    }
    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }
    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        dt.plural.as_str().into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// An object that could not be decoded, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeFailure {
    /// The object's namespace (empty when cluster-scoped).
    pub namespace: String,
    /// The object's name.
    pub name: String,
    /// The object's uid, if it has one.
    pub uid: Option<String>,
    /// The resource version that failed.
    pub resource_version: Option<String>,
    /// The decode error, naming the field at fault.
    pub error: String,
}

impl DecodeFailure {
    /// `namespace`/`name` failed to decode with `error`.
    pub fn new(
        namespace: impl Into<String>,
        name: impl Into<String>,
        error: impl Into<String>,
    ) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
            uid: None,
            resource_version: None,
            error: error.into(),
        }
    }

    /// The same failure, for the object with this uid at this resource version.
    #[must_use]
    pub fn at(mut self, uid: Option<String>, resource_version: Option<String>) -> Self {
        self.uid = uid;
        self.resource_version = resource_version;
        self
    }

    /// The failure of `raw` with `error`.
    pub fn of(raw: &RawObject, error: impl Into<String>) -> Self {
        let m = &raw.metadata;
        Self::new(
            m.namespace.clone().unwrap_or_default(),
            m.name.clone().unwrap_or_default(),
            error,
        )
        .at(m.uid.clone(), m.resource_version.clone())
    }

    /// `namespace/name`, or `name` for a cluster-scoped object.
    pub fn object(&self) -> String {
        if self.namespace.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }
}

/// Decodes each of `items` on its own: the objects that decode, and the failures of those
/// that do not (each naming the object and the field at fault).
pub fn decode_items<K: DeserializeOwned>(
    items: impl IntoIterator<Item = RawObject>,
) -> (Vec<K>, Vec<DecodeFailure>) {
    let mut objects = Vec::new();
    let mut failures = Vec::new();
    for raw in items {
        match raw.decode::<K>() {
            Ok(k) => objects.push(k),
            Err(e) => failures.push(DecodeFailure::of(&raw, e)),
        }
    }
    (objects, failures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::v1::ManifestWork;

    fn deep_work(name: &str, depth: usize) -> String {
        format!(
            r#"{{"apiVersion":"work.open-cluster-management.io/v1","kind":"ManifestWork","metadata":{{"name":"{name}","namespace":"cluster1","resourceVersion":"7","uid":"u-{name}"}},"spec":{{"workload":{{"manifests":[{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"deep","namespace":"default"}},"extra":{}"x"{}}}]}}}}}}"#,
            r#"{"a":"#.repeat(depth),
            "}".repeat(depth)
        )
    }

    #[test]
    fn a_list_with_a_deep_object_reads_every_object() {
        let list = format!(
            r#"{{"apiVersion":"v1","kind":"List","metadata":{{}},"items":[{},{}]}}"#,
            deep_work("deep", 5_000),
            deep_work("plain", 1)
        );
        // serde_json's own limit stays on for the list: the items are kept as text.
        let list: kube::core::ObjectList<RawObject> = serde_json::from_str(&list).unwrap();
        assert_eq!(list.items[0].meta().name.as_deref(), Some("deep"));
        assert_eq!(list.items[0].meta().resource_version.as_deref(), Some("7"));
        let (works, failures) = std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(move || {
                let (works, failures) = decode_items::<ManifestWork>(list.items);
                let names: Vec<String> = works
                    .iter()
                    .filter_map(|w| w.metadata.name.clone())
                    .collect();
                drop(works);
                (names, failures)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(works, ["deep", "plain"]);
        assert!(failures.is_empty());
    }

    #[test]
    fn objects_past_the_api_servers_limit_are_one_failure() {
        let raw: RawObject = serde_json::from_str(&deep_work("too-deep", 10_001)).unwrap();
        let failure = DecodeFailure::of(&raw, raw.decode::<ManifestWork>().unwrap_err());
        assert_eq!(failure.object(), "cluster1/too-deep");
        assert_eq!(failure.uid.as_deref(), Some("u-too-deep"));
        assert!(
            failure
                .error
                .contains("more than the API server's limit of 10000"),
            "{}",
            failure.error
        );
    }

    #[test]
    fn metadata_of_the_wrong_type_is_skipped_not_fatal() {
        let raw: RawObject = serde_json::from_str(
            r#"{"metadata":{"name":"n","namespace":{"deep":[[[1]]]},"generation":"x","labels":{"a":1}}}"#,
        )
        .unwrap();
        assert_eq!(raw.meta().name.as_deref(), Some("n"));
        assert_eq!(raw.meta().namespace, None);
        assert_eq!(raw.meta().generation, None);
        let back = RawObject::new(raw.to_value().unwrap());
        assert_eq!(back.to_value(), raw.to_value());
        assert_eq!(back.meta(), raw.meta());
    }
}
