//! Build a [`ManifestWork`] from Kubernetes manifests on disk or in memory.
//!
//! This is what `clusteradm create work NAME -f FILE_OR_DIR` does: every YAML or JSON document
//! in the given files (and, for directories, every `.yaml`, `.yml` and `.json` file below them,
//! in name order) becomes one manifest of the work. `List` objects contribute their items.
//! Manifest configs, the delete option, the executor, labels and annotations can be set too.
//!
//! Errors name the file and the document at fault: malformed YAML, a document without
//! `apiVersion` or `kind`, or a work whose manifests exceed the hub's size limit.
//!
//! ```
//! use ocm_api::builder::ManifestWorkBuilder;
//!
//! let yaml = r#"
//! apiVersion: v1
//! kind: ServiceAccount
//! metadata: { name: my-sa, namespace: default }
//! ---
//! apiVersion: apps/v1
//! kind: Deployment
//! metadata: { name: nginx, namespace: default }
//! spec:
//!   replicas: 1
//!   selector: { matchLabels: { app: nginx } }
//!   template:
//!     metadata: { labels: { app: nginx } }
//!     spec:
//!       serviceAccountName: my-sa
//!       containers: [{ name: nginx, image: nginx:1.27 }]
//! "#;
//! let work = ManifestWorkBuilder::new("my-first-work", "cluster1")
//!     .yaml("nginx.yaml", yaml)?
//!     .build()?;
//! assert_eq!(work.metadata.namespace.as_deref(), Some("cluster1"));
//! assert_eq!(work.spec.manifests().len(), 2);
//! assert_eq!(work.spec.manifests()[1].kind(), Some("Deployment"));
//! # Ok::<(), ocm_api::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::constants::limits::MANIFEST_SIZE_LIMIT;
use crate::k8s::yaml::{self, EntryError};
use crate::work::v1::{
    DeleteOption, Manifest, ManifestConfigOption, ManifestWork, ManifestWorkExecutor,
    ManifestWorkSpec, ManifestsTemplate,
};
use crate::{Error, Result};

/// Builds a [`ManifestWork`] for one cluster namespace.
#[derive(Clone, Debug)]
#[must_use]
pub struct ManifestWorkBuilder {
    name: String,
    namespace: String,
    manifests: Vec<Manifest>,
    manifest_configs: Vec<ManifestConfigOption>,
    delete_option: Option<DeleteOption>,
    executor: Option<ManifestWorkExecutor>,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    size_limit: usize,
}

impl ManifestWorkBuilder {
    /// A builder for the work `name` in the cluster namespace `namespace` (on the hub, the
    /// cluster namespace has the managed cluster's name).
    pub fn new(name: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            namespace: namespace.into(),
            manifests: Vec::new(),
            manifest_configs: Vec::new(),
            delete_option: None,
            executor: None,
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            size_limit: MANIFEST_SIZE_LIMIT,
        }
    }

    /// Adds one manifest.
    pub fn manifest(mut self, manifest: Manifest) -> Self {
        self.manifests.push(manifest);
        self
    }

    /// Adds every document of a YAML (or JSON) text. `source_name` names the text in errors,
    /// usually its file name.
    pub fn yaml(mut self, source_name: &str, text: &str) -> Result<Self> {
        self.manifests.extend(parse_documents(source_name, text)?);
        Ok(self)
    }

    /// Adds the manifests of a file, or of every `.yaml`, `.yml` and `.json` file below a
    /// directory (in name order, recursively).
    pub fn path(mut self, path: impl AsRef<Path>) -> Result<Self> {
        for file in collect_files(path.as_ref())? {
            let text = std::fs::read_to_string(&file).map_err(|source| Error::Io {
                path: file.clone(),
                source,
            })?;
            self.manifests
                .extend(parse_documents(&file.display().to_string(), &text)?);
        }
        Ok(self)
    }

    /// Adds the manifests of several files or directories, in the given order.
    pub fn paths<P: AsRef<Path>>(mut self, paths: impl IntoIterator<Item = P>) -> Result<Self> {
        for path in paths {
            self = self.path(path)?;
        }
        Ok(self)
    }

    /// Adds a manifest config (update strategy, feedback rules, condition rules) for one
    /// resource.
    pub fn manifest_config(mut self, config: ManifestConfigOption) -> Self {
        self.manifest_configs.push(config);
        self
    }

    /// Asks for status feedback from one resource: adds a manifest config with `rules` for
    /// `identifier` (our shortcut for a [`ManifestConfigOption`] with only feedback rules).
    ///
    /// ```
    /// use ocm_api::builder::ManifestWorkBuilder;
    /// use ocm_api::work::v1::{FeedbackRule, JsonPath, ResourceIdentifier};
    ///
    /// let work = ManifestWorkBuilder::new("web", "cluster1")
    ///     .yaml("web.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n")?
    ///     .feedback(
    ///         ResourceIdentifier::new("apps", "deployments", "default", "web"),
    ///         [FeedbackRule::well_known_status(),
    ///          FeedbackRule::json_paths([JsonPath::new("replicas", ".spec.replicas")])],
    ///     )
    ///     .build()?;
    /// assert_eq!(work.spec.manifest_configs.unwrap()[0].feedback_rules.as_ref().unwrap().len(), 2);
    /// # Ok::<(), ocm_api::Error>(())
    /// ```
    pub fn feedback(
        mut self,
        identifier: crate::work::v1::ResourceIdentifier,
        rules: impl IntoIterator<Item = crate::work::v1::FeedbackRule>,
    ) -> Self {
        let mut config = ManifestConfigOption::new(identifier);
        config.feedback_rules = Some(rules.into_iter().collect());
        self.manifest_configs.push(config);
        self
    }

    /// Sets the delete option.
    pub fn delete_option(mut self, option: DeleteOption) -> Self {
        self.delete_option = Some(option);
        self
    }

    /// Sets the executor the agent applies the manifests as.
    pub fn executor(mut self, executor: ManifestWorkExecutor) -> Self {
        self.executor = Some(executor);
        self
    }

    /// Adds a label to the work.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Adds an annotation to the work.
    pub fn annotation(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.annotations.insert(key.into(), value.into());
        self
    }

    /// Changes the manifest size limit (default: the hub's 500 KiB).
    pub fn size_limit(mut self, bytes: usize) -> Self {
        self.size_limit = bytes;
        self
    }

    /// The number of manifests added so far.
    pub fn len(&self) -> usize {
        self.manifests.len()
    }

    /// Whether no manifest was added yet.
    pub fn is_empty(&self) -> bool {
        self.manifests.is_empty()
    }

    /// Builds the work and checks it as the hub's admission webhook would, including the
    /// manifest size limit.
    pub fn build(self) -> Result<ManifestWork> {
        let non_empty = |m: BTreeMap<String, String>| (!m.is_empty()).then_some(m);
        let work = ManifestWork {
            metadata: ObjectMeta {
                name: Some(self.name),
                namespace: Some(self.namespace),
                labels: non_empty(self.labels),
                annotations: non_empty(self.annotations),
                ..ObjectMeta::default()
            },
            spec: ManifestWorkSpec {
                workload: Some(ManifestsTemplate {
                    manifests: Some(self.manifests),
                }),
                delete_option: self.delete_option,
                manifest_configs: (!self.manifest_configs.is_empty())
                    .then_some(self.manifest_configs),
                executor: self.executor,
            },
            status: None,
        };
        work.validate_with_limit(self.size_limit)?;
        Ok(work)
    }
}

impl ManifestWorkBuilder {
    /// Builds as many works as the manifests need under the size limit (sdk-go's work
    /// builder, see [`crate::work::split`]): works are named `{name}-0`, `{name}-1`, … and
    /// each carries the labels, annotations, manifest configs, delete option and executor.
    /// `existing` are the works a previous call built (they keep their names and manifests
    /// where possible); the result says which works to apply and which to delete.
    ///
    /// ```
    /// use ocm_api::builder::ManifestWorkBuilder;
    /// use ocm_api::work::v1::Manifest;
    ///
    /// let mut builder = ManifestWorkBuilder::new("big", "cluster1").size_limit(2000);
    /// for i in 0..4 {
    ///     builder = builder.manifest(Manifest::new(serde_json::json!({
    ///         "apiVersion": "v1", "kind": "ConfigMap",
    ///         "metadata": {"name": format!("cm{i}"), "namespace": "default"},
    ///         "data": {"blob": "x".repeat(600)}
    ///     })));
    /// }
    /// let split = builder.build_split(&[])?;
    /// let names: Vec<_> = split.apply.iter().map(|w| w.metadata.name.clone().unwrap()).collect();
    /// assert_eq!(names, ["big-0", "big-1"]);
    /// # Ok::<(), ocm_api::Error>(())
    /// ```
    pub fn build_split(self, existing: &[ManifestWork]) -> Result<crate::work::split::SplitWorks> {
        use crate::work::split::{WorkSplitter, WorkTemplate};
        let labels = (!self.labels.is_empty()).then_some(self.labels.clone());
        let meta = |i: usize| ObjectMeta {
            name: Some(format!("{}-{i}", self.name)),
            namespace: Some(self.namespace.clone()),
            labels: labels.clone(),
            ..ObjectMeta::default()
        };
        let template = WorkTemplate {
            delete_option: self.delete_option.clone(),
            manifest_configs: self.manifest_configs.clone(),
            executor: self.executor.clone(),
            annotations: self.annotations.clone(),
        };
        let split = WorkSplitter::with_manifests_limit(self.size_limit).split(
            &self.manifests,
            &meta,
            &template,
            existing,
        )?;
        for work in &split.apply {
            work.validate_with_limit(self.size_limit)?;
        }
        Ok(split)
    }
}

fn collect_files(path: &Path) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?
        .map(|e| {
            e.map(|e| e.path()).map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })
        })
        .collect::<Result<_>>()?;
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            out.extend(collect_files(&entry)?);
        } else if entry
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        {
            out.push(entry);
        }
    }
    Ok(out)
}

/// Parses every document of `text` into manifests, under the rule of [`crate::k8s::yaml`].
pub(crate) fn parse_documents(source_name: &str, text: &str) -> Result<Vec<Manifest>> {
    let mut out = Vec::new();
    for doc in yaml::documents(text) {
        let document = doc.index;
        let value: Value = serde_saphyr::from_str(doc.text).map_err(|e| Error::Parse {
            source_name: source_name.to_string(),
            document,
            message: format!("(starting at line {}) {e}", doc.line),
        })?;
        let not_object = |message: String| Error::NotAnObject {
            source_name: source_name.to_string(),
            document,
            message,
        };
        yaml::expand(
            value,
            "",
            &mut |at, e| {
                not_object(match e {
                    EntryError::NotAnObject { found } => {
                        format!("{at}expected a Kubernetes object (a mapping), found {found}")
                    }
                    e => format!("{at}{e}"),
                })
            },
            &mut |at, object| check_object(object, at, &mut out).map_err(not_object),
        )?;
    }
    Ok(out)
}

/// Checks one object of a document (`at` names its list item, if any) and adds it.
fn check_object(
    map: serde_json::Map<String, Value>,
    at: &str,
    out: &mut Vec<Manifest>,
) -> std::result::Result<(), String> {
    let api_version = map.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    if api_version.is_empty() {
        return Err(format!("{at}object has no apiVersion"));
    }
    if kind.is_empty() {
        return Err(format!("{at}object has no kind"));
    }
    if let Some(meta) = map.get("metadata")
        && !meta.is_object()
    {
        return Err(format!(
            "{at}{kind} metadata must be a mapping, found {}",
            yaml::value_type(meta)
        ));
    }
    out.push(Manifest::new(Value::Object(map)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_are_expanded() {
        let m = parse_documents(
            "l.yaml",
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n",
        )
        .unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].kind(), Some("Secret"));
    }

    #[test]
    fn errors_name_file_and_document() {
        let err = parse_documents("x.yaml", "apiVersion: v1\nkind: A\n---\nkind: B\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "x.yaml: document 2: object has no apiVersion"
        );
        let err = parse_documents("x.yaml", "apiVersion: v1\n---\napiVersion: v1\nkind: [\n")
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("x.yaml: document 1: object has no kind"),
            "{err}"
        );
        let err = parse_documents("y.yaml", "a: b\n---\nkey: [unclosed\n").unwrap_err();
        assert!(
            matches!(err, Error::NotAnObject { document: 1, .. }),
            "{err}"
        );
        let err = parse_documents("z.yaml", "key: [unclosed\n").unwrap_err();
        assert!(
            matches!(&err, Error::Parse { document: 1, source_name, .. } if source_name == "z.yaml"),
            "{err}"
        );
        let err = parse_documents("s.yaml", "just a string\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.yaml: document 1: expected a Kubernetes object (a mapping), found a string"
        );
        let err = parse_documents(
            "l.yaml",
            "apiVersion: v1\nkind: List\nitems:\n- {kind: ConfigMap}\n",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "l.yaml: document 1: items[0]: object has no apiVersion"
        );
    }
}
