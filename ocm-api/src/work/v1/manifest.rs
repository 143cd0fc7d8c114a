//! [`Manifest`]: one Kubernetes object embedded in a ManifestWork.

use std::borrow::Cow;

use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeSeed;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::k8s::json;
use crate::{Error, Result};

/// One Kubernetes object of any kind, embedded verbatim in a ManifestWork.
///
/// The object is kept as JSON exactly as written, so that every field (known to this crate or
/// not) survives a round trip. The API server requires `apiVersion`, `kind` and an object
/// `metadata`; the accessors below read the identifying fields.
///
/// ```
/// use ocm_api::work::v1::Manifest;
///
/// let manifest = Manifest::new(serde_json::json!({
///     "apiVersion": "apps/v1",
///     "kind": "Deployment",
///     "metadata": { "name": "web", "namespace": "default" },
/// }));
/// assert_eq!(manifest.api_version(), Some("apps/v1"));
/// assert_eq!(manifest.group(), Some("apps"));
/// assert_eq!(manifest.version(), Some("v1"));
/// assert_eq!(manifest.kind(), Some("Deployment"));
/// assert_eq!(manifest.name(), Some("web"));
/// assert_eq!(manifest.namespace(), Some("default"));
/// ```
///
/// A manifest may nest as deeply as the API server accepts (10,000 levels): cloning, comparing,
/// serialising, deserialising and dropping one never overflows a thread's stack (see
/// [`crate::k8s::json`]). Code that walks [`as_value`](Self::as_value) itself should do so
/// inside [`crate::k8s::json::with_stack`].
pub struct Manifest(pub Value);

impl Clone for Manifest {
    fn clone(&self) -> Self {
        Self(json::clone_value(&self.0))
    }
}

impl PartialEq for Manifest {
    fn eq(&self, other: &Self) -> bool {
        json::values_equal(&self.0, &other.0)
    }
}

impl Eq for Manifest {}

impl fmt::Debug for Manifest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Manifest")
            .field(&json::Deep(&self.0))
            .finish()
    }
}

impl Drop for Manifest {
    fn drop(&mut self) {
        json::dismantle(&mut self.0);
    }
}

impl Serialize for Manifest {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        json::Deep(&self.0).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Manifest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        json::DeepValue.deserialize(d).map(Self)
    }
}

impl JsonSchema for Manifest {
    fn schema_name() -> Cow<'static, str> {
        "Manifest".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        crate::schema::embedded_resource(generator)
    }
}

impl Manifest {
    /// Wraps a JSON object.
    pub fn new(object: Value) -> Self {
        Self(object)
    }

    /// Serialises any Kubernetes object (for example a `k8s_openapi` type or a kube
    /// `DynamicObject`) into a manifest.
    pub fn from_object<T: Serialize>(object: &T) -> Result<Self> {
        serde_json::to_value(object)
            .map(Self)
            .map_err(|source| Error::Serialize {
                what: "manifest".to_string(),
                source: Box::new(source),
            })
    }

    /// The embedded object as JSON.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The embedded object as mutable JSON.
    pub fn as_value_mut(&mut self) -> &mut Value {
        &mut self.0
    }

    /// Unwraps the embedded object.
    pub fn into_value(mut self) -> Value {
        std::mem::take(&mut self.0)
    }

    /// `apiVersion`, e.g. `apps/v1` or `v1`.
    pub fn api_version(&self) -> Option<&str> {
        self.0.get("apiVersion").and_then(Value::as_str)
    }

    /// The API group of `apiVersion`: the part before the `/`, or `""` for the core group.
    pub fn group(&self) -> Option<&str> {
        self.api_version()
            .map(|v| v.rsplit_once('/').map_or("", |(group, _)| group))
    }

    /// The version part of `apiVersion`, e.g. `v1`.
    pub fn version(&self) -> Option<&str> {
        self.api_version()
            .map(|v| v.rsplit_once('/').map_or(v, |(_, version)| version))
    }

    /// `kind`, e.g. `Deployment`.
    pub fn kind(&self) -> Option<&str> {
        self.0.get("kind").and_then(Value::as_str)
    }

    /// `metadata.name`.
    pub fn name(&self) -> Option<&str> {
        self.metadata_str("name")
    }

    /// `metadata.namespace`; absent for cluster-scoped objects (and for namespaced objects
    /// that leave it to the default).
    pub fn namespace(&self) -> Option<&str> {
        self.metadata_str("namespace")
    }

    /// `metadata.generateName` (which the ManifestWork webhook rejects).
    pub fn generate_name(&self) -> Option<&str> {
        self.metadata_str("generateName")
    }

    fn metadata_str(&self, key: &str) -> Option<&str> {
        self.0
            .get("metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
    }
}

impl From<Value> for Manifest {
    fn from(object: Value) -> Self {
        Self(object)
    }
}

impl From<Manifest> for Value {
    fn from(manifest: Manifest) -> Self {
        manifest.into_value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::v1::ManifestWork;

    /// A ManifestWork whose one manifest nests `depth` levels under `extra`, as JSON text.
    fn deep_work(depth: usize) -> String {
        format!(
            r#"{{"apiVersion":"work.open-cluster-management.io/v1","kind":"ManifestWork","metadata":{{"name":"deep","namespace":"cluster1"}},"spec":{{"workload":{{"manifests":[{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"deep","namespace":"default"}},"extra":{}"x"{}}}]}}}}}}"#,
            r#"{"a":"#.repeat(depth),
            "}".repeat(depth)
        )
    }

    #[test]
    fn a_work_as_deep_as_the_api_server_takes_is_handled_on_a_small_stack() {
        let text = deep_work(json::MAX_NESTING_DEPTH - 6);
        // Everything below runs on a thread with a quarter of the usual stack.
        std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(move || {
                let work: ManifestWork = json::from_slice(text.as_bytes()).unwrap();
                let manifest = &work
                    .spec
                    .workload
                    .as_ref()
                    .unwrap()
                    .manifests
                    .as_ref()
                    .unwrap()[0];
                assert_eq!(manifest.name(), Some("deep"));
                let copy = work.clone();
                assert_eq!(copy, work);
                let written = serde_json::to_vec(&copy).unwrap();
                let again: ManifestWork = json::from_slice(&written).unwrap();
                assert_eq!(again, work);
                let debug = format!(
                    "{:?}",
                    again
                        .spec
                        .workload
                        .as_ref()
                        .unwrap()
                        .manifests
                        .as_ref()
                        .unwrap()[0]
                );
                assert!(
                    debug.starts_with("Manifest({\"apiVersion\""),
                    "{}",
                    &debug[..40]
                );
                drop(again);
                drop(copy);
                drop(work);
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn a_manifest_gives_back_its_value() {
        let m = Manifest::new(serde_json::json!({"kind": "ConfigMap"}));
        assert_eq!(
            m.clone().into_value(),
            serde_json::json!({"kind": "ConfigMap"})
        );
        assert_eq!(Value::from(m), serde_json::json!({"kind": "ConfigMap"}));
    }
}
