//! The `WellKnownStatus` rule: built-in feedback paths per kind.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use ocm_api::work::v1::{FieldValue, JsonPath};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::jsonpath::{ParseError, Template};
use crate::value::{ValueOptions, type_json, type_value};

/// The group, version and kind of a live object, read like Go's `Unstructured`: from
/// `apiVersion` (`group/version`, or just `version` for the core group) and `kind`. An
/// `apiVersion` with more than one `/` yields an all-empty value, as upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct GroupVersionKind<'a> {
    /// API group; empty for the core group.
    pub group: &'a str,
    /// API version, e.g. `v1`.
    pub version: &'a str,
    /// Kind, e.g. `Deployment`.
    pub kind: &'a str,
}

impl<'a> GroupVersionKind<'a> {
    /// A group, version and kind.
    pub fn new(group: &'a str, version: &'a str, kind: &'a str) -> Self {
        Self {
            group,
            version,
            kind,
        }
    }

    /// Reads `apiVersion` and `kind` of `object` (missing or non-string fields count as empty).
    pub fn of(object: &'a Value) -> Self {
        let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or_default();
        let api_version = text("apiVersion");
        let kind = text("kind");
        match api_version.split_once('/') {
            None => Self::new("", api_version, kind),
            Some((group, version)) if !version.contains('/') => Self::new(group, version, kind),
            Some(_) => Self::default(),
        }
    }
}

/// Go's rendering: `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`.
impl fmt::Display for GroupVersionKind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// A named feedback path, parsed once.
///
/// A path that does not parse is kept with its error, which is reported each time it is
/// evaluated (as upstream, which parses on every sync).
#[derive(Clone, Debug)]
pub struct FeedbackPath {
    name: String,
    version: Option<String>,
    path: String,
    template: Result<Template, ParseError>,
}

impl FeedbackPath {
    /// A path named `name`, valid for any version.
    pub fn new(name: impl Into<String>, path: impl Into<String>) -> Self {
        let path = path.into();
        Self {
            name: name.into(),
            version: None,
            template: Template::parse_path(&path),
            path,
        }
    }

    /// The path of an API [`JsonPath`] entry.
    pub fn from_api(json_path: &JsonPath) -> Self {
        Self {
            version: json_path.version.clone(),
            ..Self::new(json_path.name.clone(), json_path.path.clone())
        }
    }

    /// The name values are reported under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The path as written (without braces).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The version the path is restricted to; `None` (or empty) for any.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref().filter(|v| !v.is_empty())
    }

    /// The parsed template, or why it does not parse.
    pub fn template(&self) -> Result<&Template, &ParseError> {
        self.template.as_ref()
    }

    /// Evaluates the path on `object` and types the result (no version check): `Ok(None)`
    /// when nothing (or null) is found.
    pub fn evaluate(&self, object: &Value, options: ValueOptions) -> Result<Option<FieldValue>> {
        let template = self.template.as_ref().map_err(|source| Error::Parse {
            name: self.name.clone(),
            path: self.path.clone(),
            source: source.clone(),
        })?;
        if let Some(found) = template.lookup(object) {
            return match found {
                Some(value) => type_json(&self.name, value, options),
                None => Ok(None),
            };
        }
        let results = template
            .find_results(object)
            .map_err(|source| Error::Eval {
                name: self.name.clone(),
                source,
            })?;
        type_value(&self.name, &results, options)
    }
}

/// Finds the well-known feedback paths of a kind. Implement it to extend or replace the
/// built-in table; [`WellKnownStatusTable`] is the usual implementation. Resolvers are shared
/// between threads, like the readers that use them.
pub trait WellKnownStatusResolver: Send + Sync {
    /// The paths reported for `gvk`, in output order; `None` (or an empty list) when the kind
    /// has none, which makes a `WellKnownStatus` rule fail.
    fn paths(&self, gvk: &GroupVersionKind<'_>) -> Option<&[FeedbackPath]>;
}

/// A table of well-known feedback paths keyed by exact group, version and kind.
///
/// [`upstream`](Self::upstream) holds upstream OCM's table, which covers exactly four kinds:
///
/// | kind | values |
/// |---|---|
/// | `apps/v1 Deployment` | `ReadyReplicas`, `Replicas`, `AvailableReplicas` |
/// | `apps/v1 DaemonSet` | `NumberReady`, `DesiredNumberScheduled`, `NumberAvailable` |
/// | `batch/v1 Job` | `JobComplete` (the `Complete` condition's status), `JobSucceeded` |
/// | `v1 Pod` | `PodReady` (the `Ready` condition's status), `PodPhase` |
///
/// Other kinds (StatefulSet, ReplicaSet, …) are not well known upstream; add them with
/// [`insert`](Self::insert) if your agent should report them (that is an extension to
/// upstream behaviour).
#[derive(Clone, Debug, Default)]
pub struct WellKnownStatusTable {
    entries: HashMap<(String, String, String), Vec<FeedbackPath>>,
}

impl WellKnownStatusTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Upstream OCM's table (a copy you can extend).
    pub fn upstream() -> Self {
        let mut table = Self::new();
        table.insert(
            "apps",
            "v1",
            "Deployment",
            vec![
                FeedbackPath::new("ReadyReplicas", ".status.readyReplicas"),
                FeedbackPath::new("Replicas", ".status.replicas"),
                FeedbackPath::new("AvailableReplicas", ".status.availableReplicas"),
            ],
        );
        table.insert(
            "batch",
            "v1",
            "Job",
            vec![
                FeedbackPath::new(
                    "JobComplete",
                    r#".status.conditions[?(@.type=="Complete")].status"#,
                ),
                FeedbackPath::new("JobSucceeded", ".status.succeeded"),
            ],
        );
        table.insert(
            "",
            "v1",
            "Pod",
            vec![
                FeedbackPath::new(
                    "PodReady",
                    r#".status.conditions[?(@.type=="Ready")].status"#,
                ),
                FeedbackPath::new("PodPhase", ".status.phase"),
            ],
        );
        table.insert(
            "apps",
            "v1",
            "DaemonSet",
            vec![
                FeedbackPath::new("NumberReady", ".status.numberReady"),
                FeedbackPath::new("DesiredNumberScheduled", ".status.desiredNumberScheduled"),
                FeedbackPath::new("NumberAvailable", ".status.numberAvailable"),
            ],
        );
        table
    }

    /// A shared, lazily built copy of upstream's table.
    pub fn shared_upstream() -> &'static Self {
        static TABLE: OnceLock<WellKnownStatusTable> = OnceLock::new();
        TABLE.get_or_init(Self::upstream)
    }

    /// Sets the paths of one kind (replacing any it had).
    pub fn insert(
        &mut self,
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
        paths: Vec<FeedbackPath>,
    ) -> &mut Self {
        self.entries
            .insert((group.into(), version.into(), kind.into()), paths);
        self
    }
}

impl WellKnownStatusResolver for WellKnownStatusTable {
    fn paths(&self, gvk: &GroupVersionKind<'_>) -> Option<&[FeedbackPath]> {
        // Few entries: a scan avoids building an owned key per lookup.
        self.entries
            .iter()
            .find(|((g, v, k), _)| g == gvk.group && v == gvk.version && k == gvk.kind)
            .map(|(_, paths)| paths.as_slice())
    }
}
