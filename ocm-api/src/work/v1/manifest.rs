//! [`Manifest`]: one Kubernetes object embedded in a ManifestWork.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(transparent)]
pub struct Manifest(pub Value);

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
    pub fn into_value(self) -> Value {
        self.0
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
        manifest.0
    }
}
