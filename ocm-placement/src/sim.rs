//! A placement simulator: schedule Placements offline from hub objects as `kubectl get -o
//! yaml` prints them, exactly as the hub controller would, and render the outcome as JSON.
//!
//! The steps are pure functions:
//!
//! 1. [`SimInput::add_document`] takes one decoded document (a single object or a `List`),
//!    keeps the kinds the scheduler reads (ManagedCluster, ManagedClusterSet,
//!    ManagedClusterSetBinding, Placement, PlacementDecision, AddOnPlacementScore), counts the
//!    others, and fills in the defaults a real API server would have applied from our CRD
//!    schemas ([`apply_schema_defaults`]);
//! 2. [`SimInput::snapshot`] builds the scheduler's [`Snapshot`] (each placement sees the
//!    PlacementDecisions of the input, as the controller sees the ones on the hub);
//! 3. [`SimInput::schedule`] schedules one placement at a given instant;
//! 4. [`render`] turns a [`ScheduleResult`] into the JSON the `ocm-placement-sim` binary prints.
//!
//! Memory: the input keeps each ManagedCluster as what the scheduler reads of it (labels,
//! claims, taints and resources, their strings shared across clusters) and its JSON text,
//! not as a typed object, which costs several times as much. A snapshot built from it
//! decodes a cluster's object the first time something asks for it (a custom plugin calling
//! [`ClusterView::managed_cluster`](crate::plugins::ClusterView::managed_cluster), or a CEL
//! selector reading more than the name, labels and claims) and keeps it from then on. A
//! ManagedCluster of a JSON `List` keeps its own text, compacted, without what the entry
//! already holds (labels, claims and taints) and without `apiVersion` and `kind`; its labels
//! and claims go from the text to the entry without ever being decoded as strings. When
//! decoding the item added a schema default to it, or the cluster came from YAML or a
//! document read whole, the text is written from the decoded object instead: that form
//! holds times to the second (as k8s-openapi writes `Time`), so a sub-second time in such a
//! cluster's conditions or metadata is truncated in the object decoded later. Taints are
//! rebuilt from the entry with their full `timeAdded`, which is also what scheduling
//! (tolerationSeconds) uses.
//!
//! ```
//! use ocm_placement::sim::SimInput;
//! use serde_json::json;
//!
//! let mut input = SimInput::new();
//! input.add_document("hub.yaml", json!({"apiVersion": "v1", "kind": "List", "items": [
//!     {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
//!      "metadata": {"name": "c1", "labels": {"cluster.open-cluster-management.io/clusterset": "default"}}},
//!     {"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
//!      "metadata": {"name": "default"}},
//!     {"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSetBinding",
//!      "metadata": {"name": "default", "namespace": "apps"}, "spec": {"clusterSet": "default"}},
//!     {"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
//!      "metadata": {"name": "web", "namespace": "apps"}, "spec": {}},
//!     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
//! ]}))?;
//! assert_eq!(input.ignored()["ConfigMap"], 1);
//! let snapshot = input.snapshot();
//! let now = "2026-01-01T00:00:00Z".parse()?;
//! let placement = &input.placements()[0];
//! let result = input.schedule(placement, &snapshot, now)?;
//! let out = ocm_placement::sim::render(placement, &result, &snapshot, now);
//! assert_eq!(out["selected"], json!(["c1"]));
//! assert_eq!(out["placementDecisions"][0]["name"], "web-decision-1");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compact;
mod defaulting;
mod parallel;
mod stream;
mod take;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use ocm_api::cluster::v1::ManagedCluster;
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::{Placement, PlacementDecision};
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding};
use ocm_api::constants::groups;
use ocm_api::k8s::yaml;
use serde_json::{Map, Value, json};

use crate::explain::Outcome;
use crate::hub::HubState;
use crate::snapshot::{PreparedCluster, PreparedScore};
use crate::symbols::Symbols;
use crate::{ScheduleResult, Scheduler, Snapshot};

pub use crate::error::SimError;

/// Hub objects collected from simulator input.
#[derive(Debug, Clone, Default)]
pub struct SimInput {
    /// The objects read, ManagedClusters and AddOnPlacementScores apart.
    hub: HubState,
    /// The ManagedClusters read, as the snapshot keeps them (their JSON text and what the
    /// scheduler reads of them, interned in `symbols`): a typed object with its maps and
    /// strings costs several times as much.
    clusters: Vec<PreparedCluster>,
    /// The strings of `clusters`; every snapshot starts from a copy of it.
    symbols: Arc<Symbols>,
    /// The AddOnPlacementScores read, reduced to what the scheduler reads of them (there is
    /// usually one or more per cluster: their full objects would cost as much as the clusters).
    scores: Vec<PreparedScore>,
    ignored: BTreeMap<String, usize>,
    schemas: BTreeMap<(String, String, String), Value>,
    /// The defaults plans of the served versions of [`KINDS`]: (version, kind, plan).
    plans: Arc<[(String, String, defaulting::Plan)]>,
    scheduler: Arc<Scheduler>,
}

/// The kinds the simulator reads, all in group `cluster.open-cluster-management.io`.
const KINDS: [&str; 6] = [
    "ManagedCluster",
    "ManagedClusterSet",
    "ManagedClusterSetBinding",
    "Placement",
    "PlacementDecision",
    "AddOnPlacementScore",
];

impl SimInput {
    /// Empty input, with upstream's scheduler and our CRDs' schemas for defaulting.
    pub fn new() -> Self {
        let mut schemas = BTreeMap::new();
        for crd in ocm_api::crds() {
            let group = crd.spec.group.clone();
            let kind = crd.spec.names.kind.clone();
            for version in &crd.spec.versions {
                let schema = version
                    .schema
                    .as_ref()
                    .and_then(|s| s.open_api_v3_schema.as_ref())
                    .and_then(|s| serde_json::to_value(s).ok());
                if let Some(schema) = schema {
                    schemas.insert((group.clone(), version.name.clone(), kind.clone()), schema);
                }
            }
        }
        let plans = schemas
            .iter()
            .filter(|((group, _, kind), _)| group == groups::CLUSTER && KINDS.contains(&&**kind))
            .map(|((_, version, kind), schema)| {
                (version.clone(), kind.clone(), defaulting::Plan::new(schema))
            })
            .collect();
        Self {
            schemas,
            plans,
            ..Self::default()
        }
    }

    /// Uses `scheduler` (for example with custom plugins) instead of upstream's.
    #[must_use]
    pub fn with_scheduler(mut self, scheduler: Scheduler) -> Self {
        self.scheduler = Arc::new(scheduler);
        self
    }

    /// Adds one decoded document from `source_name` (a file name, for error messages): an
    /// object, or a list (any kind ending in `List`), read as [`ocm_api::k8s::yaml`] says.
    /// Null documents and items are skipped.
    pub fn add_document(&mut self, source_name: &str, document: Value) -> Result<(), SimError> {
        self.add_value(source_name, document, "")
    }

    /// Reads one file as `ocm-placement-sim` does: a `.json` file as one JSON document, any
    /// other as a YAML stream (one or more documents separated by `---`). Errors name the file
    /// and, for YAML, the document and the line it starts on.
    ///
    /// A `.json` file holding a `List` (as `kubectl get -o json` writes it) is read a chunk at
    /// a time, never whole, and its items are decoded on as many threads as the machine has
    /// cores (at most four, spawned for the call and joined before it returns); the outcome is
    /// the one of reading the text with [`SimInput::add_json`]. Any other `.json` document is
    /// read whole.
    pub fn add_file(&mut self, path: &Path) -> Result<(), SimError> {
        let name = path.display().to_string();
        let read_error = |e: std::io::Error| SimError::Read {
            source_name: name.clone(),
            message: e.to_string(),
        };
        let json = path.extension().and_then(|e| e.to_str()) == Some("json");
        if json {
            let file = std::fs::File::open(path).map_err(read_error)?;
            match self.stream_json_list(&name, file) {
                Ok(Some(result)) => return result,
                Ok(None) => {}
                Err(e) => return Err(read_error(e)),
            }
        }
        // Read whole: serde_json parses from memory several times faster than through a
        // reader (whose path handles the text byte by byte).
        let text = std::fs::read_to_string(path).map_err(read_error)?;
        if json {
            self.add_json_whole(&name, &text)
        } else {
            self.add_yaml(&name, &text)
        }
    }

    /// Reads a JSON `List` from `reader` a chunk at a time, each item decoded as
    /// [`SimInput::add_json`] decodes it, so the text is never held whole. Items are decoded
    /// on as many threads as the machine has cores (at most four) and added in list order.
    /// `Ok(None)`, with nothing added, when the text is not a well-formed `List` (or an item
    /// does not decode): the caller then reads it whole, which gives the result or the error.
    fn stream_json_list(
        &mut self,
        source: &str,
        reader: impl std::io::Read,
    ) -> std::io::Result<Option<Result<(), SimError>>> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        self.stream_json_list_with(source, reader, threads, parallel::BATCH)
    }

    /// [`SimInput::stream_json_list`] on `threads` decoding threads (none below two), with
    /// `batch` items handed to a thread at a time.
    fn stream_json_list_with(
        &mut self,
        source: &str,
        reader: impl std::io::Read,
        threads: usize,
        batch: usize,
    ) -> std::io::Result<Option<Result<(), SimError>>> {
        let mark = self.mark();
        let mut first_error = None;
        let scan = if threads < 2 {
            let plans = Arc::clone(&self.plans);
            let mut index = 0;
            stream::scan_list(reader, |bytes| {
                index += 1;
                if first_error.is_some() {
                    // `add_document` stops at the first error: the rest only has to be valid.
                    return serde_json::from_slice::<serde::de::IgnoredAny>(bytes).map(|_| ());
                }
                let decoded = DecodeSeed::new(&plans).decode_slice(bytes)?;
                self.add_decoded(source, index, decoded, &mut first_error);
                Ok(())
            })
            .map_item_error(|_| ())
        } else {
            parallel::scan(
                self,
                source,
                reader,
                threads,
                batch.max(1),
                &mut first_error,
            )
        };
        let is_list = match scan {
            stream::Scan::Done(head) => {
                head.items == 1 && head.kind.as_deref().is_some_and(yaml::is_list_kind)
            }
            stream::Scan::Io(e) => {
                self.rollback(mark);
                return Err(e);
            }
            stream::Scan::NotAList | stream::Scan::Item(()) => false,
        };
        if !is_list {
            self.rollback(mark);
            return Ok(None);
        }
        Ok(Some(first_error.map_or(Ok(()), Err)))
    }

    /// Adds the documents of a YAML stream read from `source_name`.
    ///
    /// A `List` is read item by item (see [`SimInput::add_json`]).
    pub fn add_yaml(&mut self, source_name: &str, text: &str) -> Result<(), SimError> {
        for doc in yaml::documents(text) {
            let source = format!("{source_name} (document {}, line {})", doc.index, doc.line);
            let streamed = self.stream_list(&source, |seed| {
                serde_saphyr::with_deserializer_from_str_with_options(
                    doc.text,
                    yaml_options(),
                    |de| serde::de::DeserializeSeed::deserialize(seed, de),
                )
                .ok()
            });
            if let Some(result) = streamed {
                result?;
                continue;
            }
            let value: Value = serde_saphyr::from_str_with_options(doc.text, yaml_options())
                .map_err(|e| SimError::Read {
                    source_name: source.clone(),
                    message: format!("invalid YAML: {e}"),
                })?;
            self.add_document(&source, value)?;
        }
        Ok(())
    }

    /// Adds the JSON document read from `source_name`.
    ///
    /// A `List` is read item by item, as [`SimInput::add_file`] reads a `.json` file: only
    /// a few items' document trees are in memory at a time, not the whole list's. The result
    /// is the one [`SimInput::add_document`] gives for the whole document (anything else than
    /// a well-formed `List` is read as a whole).
    pub fn add_json(&mut self, source_name: &str, text: &str) -> Result<(), SimError> {
        // Reading from memory cannot fail: an error would only send it to the whole read.
        if let Ok(Some(result)) = self.stream_json_list(source_name, text.as_bytes()) {
            return result;
        }
        self.add_json_whole(source_name, text)
    }

    /// Adds a JSON document read as a whole.
    fn add_json_whole(&mut self, source_name: &str, text: &str) -> Result<(), SimError> {
        let value: Value = serde_json::from_str(text).map_err(|e| SimError::Read {
            source_name: source_name.to_string(),
            message: format!("invalid JSON: {e}"),
        })?;
        self.add_document(source_name, value)
    }

    /// Reads one YAML document with `parse` as a `List`, adding its items as they are
    /// decoded. Returns `None`, with nothing added, when the document is not a well-formed
    /// `List` (or does not parse): the caller then reads it as a whole, which gives the result
    /// (or the error) of [`SimInput::add_document`].
    fn stream_list(
        &mut self,
        source: &str,
        parse: impl FnOnce(ListSeed<'_, '_>) -> Option<ListOutcome>,
    ) -> Option<Result<(), SimError>> {
        let mark = self.mark();
        let mut first_error = None;
        let outcome = parse(ListSeed {
            input: &mut *self,
            source,
            first_error: &mut first_error,
        });
        let is_list = outcome
            .is_some_and(|o| o.items == 1 && o.kind.as_deref().is_some_and(yaml::is_list_kind));
        if !is_list {
            self.rollback(mark);
            return None;
        }
        Some(first_error.map_or(Ok(()), Err))
    }

    /// What [`SimInput::rollback`] restores.
    fn mark(&self) -> ([usize; 6], BTreeMap<String, usize>) {
        let h = &self.hub;
        (
            [
                self.clusters.len(),
                h.sets.len(),
                h.bindings.len(),
                h.placements.len(),
                h.decisions.len(),
                self.scores.len(),
            ],
            self.ignored.clone(),
        )
    }

    /// Forgets what was added since `mark`.
    fn rollback(&mut self, (lengths, ignored): ([usize; 6], BTreeMap<String, usize>)) {
        let h = &mut self.hub;
        self.clusters.truncate(lengths[0]);
        h.sets.truncate(lengths[1]);
        h.bindings.truncate(lengths[2]);
        h.placements.truncate(lengths[3]);
        h.decisions.truncate(lengths[4]);
        self.scores.truncate(lengths[5]);
        self.ignored = ignored;
    }

    fn add_value(&mut self, source: &str, value: Value, position: &str) -> Result<(), SimError> {
        let err = |object: String, message: String| SimError::Object {
            source_name: source.to_string(),
            object,
            message,
        };
        let at = |what: &str| {
            if position.is_empty() {
                what.to_string()
            } else {
                format!("{what} ({position})")
            }
        };
        let object = match yaml::entry(value) {
            Ok(yaml::Entry::Empty) => return Ok(()),
            Ok(yaml::Entry::Object(object)) => object,
            Ok(yaml::Entry::List(items)) => {
                for (i, item) in items.into_iter().enumerate() {
                    let inner = if position.is_empty() {
                        format!("item {}", i + 1)
                    } else {
                        format!("{position}, item {}", i + 1)
                    };
                    self.add_value(source, item, &inner)?;
                }
                return Ok(());
            }
            Err(yaml::EntryError::ItemsNotAList { kind, .. }) => {
                return Err(err(at(&kind), "items is not a list".into()));
            }
            Err(yaml::EntryError::NotAnObject { found }) => {
                return Err(err(
                    at("document"),
                    format!("expected an object, found {found}"),
                ));
            }
            Err(e) => return Err(err(at("document"), e.to_string())),
        };
        let kind = match object.get("kind") {
            Some(Value::String(k)) if !k.is_empty() => k.clone(),
            _ => return Err(err(at("object"), "has no kind".into())),
        };
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        if group != groups::CLUSTER || !KINDS.contains(&kind.as_str()) {
            *self.ignored.entry(kind).or_default() += 1;
            return Ok(());
        }
        let name = object
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let namespace = object
            .get("metadata")
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let label = check_identity(source, position, &kind, &name, &namespace)?;
        let key = (group.to_string(), version.to_string(), kind.clone());
        let Some(schema) = self.schemas.get(&key) else {
            return Err(err(
                label,
                format!("version {version} of {kind} is not served (apiVersion {api_version})"),
            ));
        };
        let mut value = Value::Object(object);
        apply_schema_defaults(&mut value, schema);
        self.keep_value(&kind, value)
            .map_err(|e| err(label, e.to_string()))
    }

    /// Decodes `value`, an object of the served `kind`, and keeps it.
    fn keep_value(&mut self, kind: &str, value: Value) -> Result<(), serde_json::Error> {
        match kind {
            "ManagedCluster" => {
                let cluster: ManagedCluster = serde_json::from_value(value)?;
                self.clusters.push(PreparedCluster::new(
                    Arc::make_mut(&mut self.symbols),
                    cluster,
                    &mut Vec::new(),
                ));
            }
            "ManagedClusterSet" => self.hub.sets.push(Arc::new(serde_json::from_value(value)?)),
            "ManagedClusterSetBinding" => self
                .hub
                .bindings
                .push(Arc::new(serde_json::from_value(value)?)),
            "Placement" => self
                .hub
                .placements
                .push(Arc::new(serde_json::from_value(value)?)),
            "PlacementDecision" => self
                .hub
                .decisions
                .push(Arc::new(serde_json::from_value(value)?)),
            _ => {
                let score = serde_json::from_value::<AddOnPlacementScore>(value)?;
                let symbols = Arc::make_mut(&mut self.symbols);
                self.scores.push(PreparedScore::new(symbols, &score));
            }
        }
        Ok(())
    }

    /// Objects of other kinds that were skipped, counted by kind.
    pub fn ignored(&self) -> &BTreeMap<String, usize> {
        &self.ignored
    }

    /// The Placements read, sorted by namespace and name.
    pub fn placements(&self) -> Vec<Placement> {
        let mut out: Vec<Placement> = self.hub.placements.iter().map(|p| (**p).clone()).collect();
        out.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        out
    }

    /// The scheduler's view of the input.
    pub fn snapshot(&self) -> Snapshot {
        let mut builder = self.hub.builder();
        builder.with_symbols(Symbols::extending(Arc::clone(&self.symbols)));
        for cluster in &self.clusters {
            builder.add_prepared(cluster.clone());
        }
        for score in &self.scores {
            builder.add_prepared_score(score.clone());
        }
        builder.build()
    }

    /// Schedules `placement` against `snapshot` at `now`.
    pub fn schedule(
        &self,
        placement: &Placement,
        snapshot: &Snapshot,
        now: Timestamp,
    ) -> Result<ScheduleResult, SimError> {
        self.scheduler
            .schedule(placement, snapshot, now)
            .map_err(|source| SimError::schedule(key_of(placement), source))
    }
}

/// How YAML documents are parsed: the parser's defaults, but without its limits on the size
/// of one document (250 000 nodes, a million events, 64 MiB of scalars), which a `List` of a
/// few tens of thousands of clusters exceeds. The limits on aliases, anchors and nesting
/// (against "billion laughs" inputs) stay.
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = usize::MAX;
    budget.max_events = usize::MAX;
    budget.max_total_scalar_bytes = usize::MAX;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// What reading a document as a `List` saw: its last `kind` (when a string) and how many
/// `items` keys it has (with a list value; any other value fails the read).
struct ListOutcome {
    kind: Option<String>,
    items: usize,
}

/// Reads a document as a `List`, adding each item to `input` as soon as it is decoded (the
/// `items` of kubectl's output come before its `kind`: [`SimInput::stream_list`] undoes them
/// when the document turns out not to be a `List`).
struct ListSeed<'i, 's> {
    input: &'i mut SimInput,
    source: &'s str,
    /// The first item that could not be added; later items are then skipped, as
    /// [`SimInput::add_document`] stops there.
    first_error: &'i mut Option<SimError>,
}

impl<'de> serde::de::DeserializeSeed<'de> for ListSeed<'_, '_> {
    type Value = ListOutcome;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<ListOutcome, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ListSeed<'_, '_> {
    type Value = ListOutcome;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a List")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<ListOutcome, A::Error> {
        let mut outcome = ListOutcome {
            kind: None,
            items: 0,
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "kind" => {
                    outcome.kind = match map.next_value::<Value>()? {
                        Value::String(k) => Some(k),
                        _ => None,
                    }
                }
                "items" => {
                    outcome.items += 1;
                    map.next_value_seed(ItemsSeed {
                        input: &mut *self.input,
                        source: self.source,
                        first_error: &mut *self.first_error,
                    })?;
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(outcome)
    }
}

/// The `items` of a [`ListSeed`].
struct ItemsSeed<'i, 's> {
    input: &'i mut SimInput,
    source: &'s str,
    first_error: &'i mut Option<SimError>,
}

impl<'de> serde::de::DeserializeSeed<'de> for ItemsSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ItemsSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while let Some(item) = seq.next_element::<Value>()? {
            i += 1;
            if self.first_error.is_none()
                && let Err(e) = self
                    .input
                    .add_value(self.source, item, &format!("item {i}"))
            {
                *self.first_error = Some(e);
            }
        }
        Ok(())
    }
}

/// One list item decoded, not yet added: [`DecodeSeed`] makes it (on any thread) and
/// [`SimInput::add_decoded`] adds it, in list order.
#[derive(Debug)]
enum Decoded {
    Cluster(ManagedCluster),
    /// A ManagedCluster already in the form the input keeps (made by a decoding thread).
    Prepared(PreparedCluster),
    Set(ManagedClusterSet),
    Binding(ManagedClusterSetBinding),
    Placement(Placement),
    Decision(PlacementDecision),
    Score(AddOnPlacementScore),
    /// An AddOnPlacementScore already in the form the input keeps (made by a decoding
    /// thread).
    PreparedScore(PreparedScore),
    /// Anything else, read as a document tree.
    Tree(Value),
}

/// Decodes one list item: an object of a kind the simulator reads whose `apiVersion` and
/// `kind` come before its other keys (as in kubectl's output) is decoded straight into its
/// type, its schema defaults applied on the way; anything else is read as a document tree.
/// A typed decoding error is an error (the whole read then falls back to the tree path).
#[derive(Clone, Copy)]
struct DecodeSeed<'p> {
    /// [`SimInput::plans`].
    plans: &'p [(String, String, defaulting::Plan)],
    /// The plan a v1 ManagedCluster is decoded with instead of its own in `plans`, when its
    /// labels, claims and taints are taken out (see [`take`]).
    taking: Option<&'p defaulting::Plan>,
}

impl<'p> DecodeSeed<'p> {
    /// Decodes with `plans`, taking nothing out.
    fn new(plans: &'p [(String, String, defaulting::Plan)]) -> Self {
        DecodeSeed {
            plans,
            taking: None,
        }
    }

    /// The plan that decodes a v1 ManagedCluster from `plans` with its labels, claims and
    /// taints taken out, for [`DecodeSeed::taking`].
    fn taking_plan(plans: &[(String, String, defaulting::Plan)]) -> defaulting::Plan {
        plans
            .iter()
            .find(|(version, kind, _)| version == "v1" && kind == "ManagedCluster")
            .map(|(_, _, plan)| plan.clone())
            .unwrap_or_default()
            .taking(&["metadata", "labels"], take::Take::Labels)
            .taking(&["status", "clusterClaims"], take::Take::Claims)
            .taking(&["spec", "taints"], take::Take::Taints)
    }
}

impl DecodeSeed<'_> {
    /// Decodes the rest of `map` (after `head`) as an object of `kind` with `plan`.
    fn typed<'de, A: serde::de::MapAccess<'de>>(
        self,
        kind: &str,
        plan: &defaulting::Plan,
        head: Vec<(Text<'de>, HeadValue<'de>)>,
        map: A,
    ) -> Result<Decoded, A::Error> {
        use serde::Deserialize;
        let map = defaulting::DefaultingMap::new(
            Prefixed {
                head: head.into_iter(),
                value: None,
                inner: map,
            },
            plan,
        );
        let de = serde::de::value::MapAccessDeserializer::new(map);
        Ok(match kind {
            "ManagedCluster" => Decoded::Cluster(Deserialize::deserialize(de)?),
            "ManagedClusterSet" => Decoded::Set(Deserialize::deserialize(de)?),
            "ManagedClusterSetBinding" => Decoded::Binding(Deserialize::deserialize(de)?),
            "Placement" => Decoded::Placement(Deserialize::deserialize(de)?),
            "PlacementDecision" => Decoded::Decision(Deserialize::deserialize(de)?),
            _ => Decoded::Score(Deserialize::deserialize(de)?),
        })
    }

    /// Decodes one item from its JSON text, known to be UTF-8.
    fn decode_str(self, text: &str) -> serde_json::Result<Decoded> {
        self.decode_whole(serde_json::Deserializer::from_str(text))
    }

    /// Decodes one item from its JSON text.
    fn decode_slice(self, bytes: &[u8]) -> serde_json::Result<Decoded> {
        self.decode_whole(serde_json::Deserializer::from_slice(bytes))
    }

    /// Decodes the one value `de` reads, nothing but whitespace after it.
    fn decode_whole<'de, R: serde_json::de::Read<'de>>(
        self,
        mut de: serde_json::Deserializer<R>,
    ) -> serde_json::Result<Decoded> {
        use serde::de::DeserializeSeed;
        let decoded = self.deserialize(&mut de)?;
        de.end()?;
        Ok(decoded)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for DecodeSeed<'_> {
    type Value = Decoded;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Decoded, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for DecodeSeed<'_> {
    type Value = Decoded;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list item")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Decoded, A::Error> {
        // The keys read so far, as a map holds them: a repeated key keeps its last value.
        let mut head: Vec<(Text<'de>, HeadValue<'de>)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<Text<'de>, HeadValue<'de>>()? {
            match head.iter_mut().find(|(k, _)| k.as_str() == key.as_str()) {
                Some((_, old)) => *old = value,
                None => head.push((key, value)),
            }
            let string = |name: &str| {
                head.iter()
                    .find(|(k, _)| k.as_str() == name)
                    .and_then(|(_, v)| v.as_str())
            };
            let (Some(api_version), Some(kind)) = (string("apiVersion"), string("kind")) else {
                continue;
            };
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            let plan = (group == groups::CLUSTER)
                .then(|| {
                    self.plans
                        .iter()
                        .find(|(v, k, _)| v == version && k == kind)
                })
                .flatten();
            if let Some((_, kind, plan)) = plan {
                let plan = match self.taking {
                    Some(taking) if version == "v1" && kind == "ManagedCluster" => taking,
                    _ => plan,
                };
                return self.typed(kind, plan, head, map);
            }
            break;
        }
        // Read as a document tree: the rest too.
        let mut tree: Map<String, Value> = head
            .into_iter()
            .map(|(k, v)| (k.into_string(), v.into_value()))
            .collect();
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            tree.insert(key, value);
        }
        Ok(Decoded::Tree(Value::Object(tree)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Decoded, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Decoded::Tree(Value::Array(items)))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Decoded, E> {
        Ok(Decoded::Tree(Value::Null))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Decoded, E> {
        Ok(Decoded::Tree(Value::Bool(v)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Decoded, E> {
        Ok(Decoded::Tree(Value::from(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Decoded, E> {
        Ok(Decoded::Tree(Value::from(v)))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Decoded, E> {
        Ok(Decoded::Tree(Value::from(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Decoded, E> {
        Ok(Decoded::Tree(Value::from(v)))
    }
}

impl SimInput {
    /// Adds item `index` (1-based) of a list from `source`, decoded by [`DecodeSeed`]. The
    /// first item that cannot be added is kept in `first_error`; the items after it are not
    /// added, as [`SimInput::add_document`] stops there.
    fn add_decoded(
        &mut self,
        source: &str,
        index: usize,
        decoded: Decoded,
        first_error: &mut Option<SimError>,
    ) {
        if first_error.is_some() {
            return;
        }
        let hub = &mut self.hub;
        let at = |kind| (source, index, kind);
        let outcome = match decoded {
            Decoded::Tree(value) => self.add_value(source, value, &format!("item {index}")),
            Decoded::Prepared(p) => {
                if p.name.is_empty() {
                    let position = format!("item {index}");
                    check_identity(source, &position, "ManagedCluster", "", "").map(|_| ())
                } else {
                    self.clusters.push(p);
                    Ok(())
                }
            }
            Decoded::Cluster(o) => {
                let symbols = Arc::make_mut(&mut self.symbols);
                keep(
                    &mut self.clusters,
                    o,
                    |o| &o.metadata,
                    |o| PreparedCluster::new(symbols, o, &mut Vec::new()),
                    at("ManagedCluster"),
                )
            }
            Decoded::Set(o) => keep(
                &mut hub.sets,
                o,
                |o| &o.metadata,
                Arc::new,
                at("ManagedClusterSet"),
            ),
            Decoded::Binding(o) => keep(
                &mut hub.bindings,
                o,
                |o| &o.metadata,
                Arc::new,
                at("ManagedClusterSetBinding"),
            ),
            Decoded::Placement(o) => keep(
                &mut hub.placements,
                o,
                |o| &o.metadata,
                Arc::new,
                at("Placement"),
            ),
            Decoded::Decision(o) => keep(
                &mut hub.decisions,
                o,
                |o| &o.metadata,
                Arc::new,
                at("PlacementDecision"),
            ),
            Decoded::PreparedScore(score) => {
                let name = self.symbols.resolve(score.resource);
                let namespace = self.symbols.resolve(score.namespace);
                if has_identity("AddOnPlacementScore", name, namespace) {
                    self.scores.push(score);
                    Ok(())
                } else {
                    let position = format!("item {index}");
                    check_identity(source, &position, "AddOnPlacementScore", name, namespace)
                        .map(|_| ())
                }
            }
            Decoded::Score(o) => {
                let symbols = Arc::make_mut(&mut self.symbols);
                keep(
                    &mut self.scores,
                    o,
                    |o| &o.metadata,
                    |o| PreparedScore::new(symbols, &o),
                    at("AddOnPlacementScore"),
                )
            }
        };
        if let Err(e) = outcome {
            *first_error = Some(e);
        }
    }
}

/// Keeps `object` (as `form` makes it) in `list` when it has the name (and
/// namespace) [`SimInput::add_document`] requires.
fn keep<K, T>(
    list: &mut Vec<T>,
    object: K,
    meta: fn(&K) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    form: impl FnOnce(K) -> T,
    (source, index, kind): (&str, usize, &str),
) -> Result<(), SimError> {
    let m = meta(&object);
    let name = m.name.as_deref().unwrap_or_default();
    let namespace = m.namespace.as_deref().unwrap_or_default();
    if !has_identity(kind, name, namespace) {
        let position = format!("item {index}");
        return check_identity(source, &position, kind, name, namespace).map(|_| ());
    }
    list.push(form(object));
    Ok(())
}

/// A string of an item's text: borrowed from it unless it had escapes.
enum Text<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl<'de> Text<'de> {
    fn as_str(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Owned(s) => s,
        }
    }

    fn into_string(self) -> String {
        match self {
            Text::Borrowed(s) => s.to_string(),
            Text::Owned(s) => s,
        }
    }

    /// Hands the string to `seed`.
    fn give<S: serde::de::DeserializeSeed<'de>, E: serde::de::Error>(
        self,
        seed: S,
    ) -> Result<S::Value, E> {
        match self {
            Text::Borrowed(s) => {
                seed.deserialize(serde::de::value::BorrowedStrDeserializer::new(s))
            }
            Text::Owned(s) => seed.deserialize(serde::de::value::StringDeserializer::new(s)),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Text<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> serde::de::Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
        Ok(Text::Borrowed(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v.to_string()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v))
    }
}

/// A value read before an item's `apiVersion` and `kind` were both known: a string as
/// [`Text`] (those two are strings), anything else as a document tree.
enum HeadValue<'de> {
    Text(Text<'de>),
    Tree(Value),
}

impl HeadValue<'_> {
    fn as_str(&self) -> Option<&str> {
        match self {
            HeadValue::Text(t) => Some(t.as_str()),
            HeadValue::Tree(_) => None,
        }
    }

    fn into_value(self) -> Value {
        match self {
            HeadValue::Text(t) => Value::String(t.into_string()),
            HeadValue::Tree(v) => v,
        }
    }
}

impl<'de> serde::Deserialize<'de> for HeadValue<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(HeadValueVisitor)
    }
}

struct HeadValueVisitor;

impl<'de> serde::de::Visitor<'de> for HeadValueVisitor {
    type Value = HeadValue<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(HeadValue::Text(Text::Borrowed(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(HeadValue::Text(Text::Owned(v.to_string())))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(HeadValue::Text(Text::Owned(v)))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(HeadValue::Tree(Value::Null))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(HeadValue::Tree(Value::Bool(v)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(HeadValue::Tree(Value::from(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(HeadValue::Tree(Value::from(v)))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(HeadValue::Tree(Value::from(v)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        use serde::Deserialize;
        let de = serde::de::value::SeqAccessDeserializer::new(seq);
        Value::deserialize(de).map(HeadValue::Tree)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        use serde::Deserialize;
        let de = serde::de::value::MapAccessDeserializer::new(map);
        Value::deserialize(de).map(HeadValue::Tree)
    }
}

/// A map whose first entries (`head`) were already read.
///
/// The object's type was chosen from the `apiVersion` and `kind` in `head`, so either key
/// appearing again in the rest is an error: a JSON object keeps a repeated key's last value,
/// and the whole-document read (which the item then falls back to) decodes by that one.
struct Prefixed<'de, A> {
    head: std::vec::IntoIter<(Text<'de>, HeadValue<'de>)>,
    value: Option<HeadValue<'de>>,
    inner: A,
}

impl<'de, A: serde::de::MapAccess<'de>> serde::de::MapAccess<'de> for Prefixed<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.head.next() {
            Some((key, value)) => {
                self.value = Some(value);
                key.give(seed).map(Some)
            }
            None => match self.inner.next_key::<Text<'de>>()? {
                Some(key) if matches!(key.as_str(), "apiVersion" | "kind") => {
                    Err(serde::de::Error::custom(format_args!(
                        "`{}` appears again after the object's type was read",
                        key.as_str()
                    )))
                }
                Some(key) => key.give(seed).map(Some),
                None => Ok(None),
            },
        }
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, A::Error> {
        match self.value.take() {
            Some(HeadValue::Text(text)) => text.give(seed),
            Some(HeadValue::Tree(value)) => {
                seed.deserialize(value).map_err(serde::de::Error::custom)
            }
            None => self.inner.next_value_seed(seed),
        }
    }
}

/// Whether an object of `kind` has the name (and, when namespaced, the namespace)
/// [`check_identity`] requires.
fn has_identity(kind: &str, name: &str, namespace: &str) -> bool {
    !name.is_empty()
        && (!namespace.is_empty() || matches!(kind, "ManagedCluster" | "ManagedClusterSet"))
}

/// The label naming an object of `kind` in errors (`<kind> <name>` or `<kind>
/// <namespace>/<name>`), or the error for a missing name or namespace.
fn check_identity(
    source: &str,
    position: &str,
    kind: &str,
    name: &str,
    namespace: &str,
) -> Result<String, SimError> {
    let err = |object: String, message: &str| SimError::Object {
        source_name: source.to_string(),
        object,
        message: message.to_string(),
    };
    if name.is_empty() {
        let at = if position.is_empty() {
            kind.to_string()
        } else {
            format!("{kind} ({position})")
        };
        return Err(err(at, "has no metadata.name"));
    }
    if !has_identity(kind, name, namespace) {
        return Err(err(format!("{kind} {name}"), "has no metadata.namespace"));
    }
    if namespace.is_empty() {
        return Ok(format!("{kind} {name}"));
    }
    Ok(format!("{kind} {namespace}/{name}"))
}

fn key_of(placement: &Placement) -> String {
    format!(
        "{}/{}",
        placement.metadata.namespace.as_deref().unwrap_or_default(),
        placement.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Fills in `default`s from an OpenAPI v3 `schema` the way the API server's structural
/// defaulting does: an absent property (or a `null` one that is not `nullable`) with a
/// `default` gets a copy of it; then the walk descends into every present property, array item
/// (`items`) and map value (`additionalProperties`), including values just defaulted. Nothing
/// is added under an absent parent.
///
/// ```
/// use ocm_placement::sim::apply_schema_defaults;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {
///     "spec": {"type": "object", "properties": {
///         "mode": {"type": "string", "default": "Additive"},
///         "weights": {"type": "array", "items": {"type": "object", "properties": {
///             "weight": {"type": "integer", "default": 1}}}}}},
///     "status": {"type": "object", "properties": {"n": {"type": "integer", "default": 0}}}}});
/// let mut object = json!({"spec": {"weights": [{}, {"weight": 3}]}});
/// apply_schema_defaults(&mut object, &schema);
/// assert_eq!(object, json!({"spec": {"mode": "Additive", "weights": [{"weight": 1}, {"weight": 3}]}}));
/// ```
pub fn apply_schema_defaults(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = schema.get("properties") {
                for (key, prop) in properties {
                    let Some(default) = prop.get("default") else {
                        continue;
                    };
                    let nullable = prop.get("nullable").and_then(Value::as_bool) == Some(true);
                    match map.get(key) {
                        None => {
                            map.insert(key.clone(), default.clone());
                        }
                        Some(Value::Null) if !nullable => {
                            map.insert(key.clone(), default.clone());
                        }
                        _ => {}
                    }
                }
                for (key, prop) in properties {
                    if let Some(child) = map.get_mut(key) {
                        apply_schema_defaults(child, prop);
                    }
                }
            }
            if let Some(additional) = schema.get("additionalProperties")
                && additional.is_object()
            {
                let known: Option<&Map<String, Value>> =
                    schema.get("properties").and_then(Value::as_object);
                for (key, child) in map.iter_mut() {
                    if known.is_some_and(|k| k.contains_key(key)) {
                        continue;
                    }
                    apply_schema_defaults(child, additional);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    apply_schema_defaults(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

fn strip_time(conditions: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition]) -> Value {
    Value::Array(
        conditions
            .iter()
            .map(|c| {
                json!({"type": c.type_, "status": c.status, "reason": c.reason, "message": c.message})
            })
            .collect(),
    )
}

/// The simulator's JSON for one scheduled placement: `namespace`, `name`, `selected`
/// (cluster names in decision order), `scores` (cluster → total score, for every cluster
/// that passed the filters), `decisionGroups` (as written to status), `placementDecisions`
/// (`name`, `labels`, `decisions`), `numberOfSelectedClusters`, `conditions` (`type`,
/// `status`, `reason`, `message`) and `requeueAfterSeconds` (number or null).
pub fn render(
    placement: &Placement,
    result: &ScheduleResult,
    snapshot: &Snapshot,
    now: Timestamp,
) -> Value {
    let status = result.placement_status(placement.status.as_ref(), now);
    let decisions: Vec<Value> = result
        .placement_decisions(placement, snapshot)
        .into_iter()
        .map(|pd| {
            let names: Vec<String> = pd
                .status
                .map(|s| s.decisions.into_iter().map(|d| d.cluster_name).collect())
                .unwrap_or_default();
            json!({
                "name": pd.metadata.name,
                "labels": pd.metadata.labels.unwrap_or_default(),
                "decisions": names,
            })
        })
        .collect();
    let selected: Vec<Value> = decisions
        .iter()
        .flat_map(|d| d["decisions"].as_array().cloned().unwrap_or_default())
        .collect();
    let scores: Map<String, Value> = result
        .scores
        .iter()
        .map(|s| (result.cluster_name(s.cluster).to_string(), json!(s.total)))
        .collect();
    json!({
        "namespace": placement.metadata.namespace,
        "name": placement.metadata.name,
        "selected": selected,
        "scores": scores,
        "decisionGroups": status.decision_groups.unwrap_or_default(),
        "placementDecisions": decisions,
        "numberOfSelectedClusters": status.number_of_selected_clusters,
        "conditions": strip_time(status.conditions.as_deref().unwrap_or_default()),
        "requeueAfterSeconds": result.requeue_after.map(|d| d.as_secs_f64()),
    })
}

/// Per-cluster filter and prioritizer breakdown of a result, as JSON: `filters` (survivors
/// after each filter) and `clusters` (each candidate's outcome).
pub fn render_explain(result: &ScheduleResult) -> Value {
    let filters: Vec<Value> = result
        .filter_records
        .iter()
        .map(|r| {
            let names: Vec<&str> = r.clusters.iter().map(|c| result.cluster_name(*c)).collect();
            json!({"filters": r.name, "survivors": names})
        })
        .collect();
    let clusters: Vec<Value> = result
        .explain()
        .into_iter()
        .map(|e| match e.outcome {
            Outcome::FilteredOut { filter } => {
                json!({"cluster": e.name, "outcome": "FilteredOut", "filter": filter})
            }
            Outcome::Scored {
                total,
                rank,
                selected,
                scores,
            } => json!({
                "cluster": e.name, "outcome": "Scored", "total": total, "rank": rank,
                "selected": selected,
                "prioritizers": scores.into_iter().map(|(name, weight, score)|
                    json!({"name": name, "weight": weight, "score": score})).collect::<Vec<_>>(),
            }),
            _ => json!({"cluster": e.name, "outcome": "NotEvaluated"}),
        })
        .collect();
    json!({"filters": filters, "clusters": clusters})
}

/// Why the controller would not schedule `placement` at all, if it would not.
pub fn skip_reason(placement: &Placement) -> Option<&'static str> {
    if placement.metadata.deletion_timestamp.is_some() {
        Some("the Placement is being deleted")
    } else if crate::scheduler::is_scheduling_disabled(placement) {
        Some("scheduling is disabled by annotation")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placement_doc(spec: Value) -> Value {
        json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
    }

    /// Clusters the simulator keeps as JSON text schedule as typed ones do, whatever a CEL
    /// selector reads (the entry's strings, or the object decoded on demand), and the
    /// object a plugin gets back is the one read.
    #[test]
    fn clusters_kept_as_text_schedule_like_typed_ones() {
        let cluster = |name: &str, env: &str, cpu: &str| {
            json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                "metadata": {"name": name, "labels": {"env": env,
                    "cluster.open-cluster-management.io/clusterset": "default"},
                    "annotations": {"tier": format!("t-{env}")}},
                "spec": {"hubAcceptsClient": true},
                "status": {"clusterClaims": [{"name": "region", "value": format!("r-{name}")}],
                    "allocatable": {"cpu": cpu}, "capacity": {"cpu": "64"},
                    "version": {"kubernetes": "v1.30.1"}}})
        };
        let mut input = SimInput::new();
        input
            .add_document("f", json!({"kind": "List", "items": [
                cluster("c1", "prod", "4"), cluster("c2", "dev", "16"), cluster("c3", "prod", "32"),
                {"apiVersion": "cluster.open-cluster-management.io/v1beta2",
                 "kind": "ManagedClusterSet", "metadata": {"name": "default"}},
                {"apiVersion": "cluster.open-cluster-management.io/v1beta2",
                 "kind": "ManagedClusterSetBinding", "metadata": {"name": "default", "namespace": "ns"},
                 "spec": {"clusterSet": "default"}}]}))
            .unwrap();
        let typed: Vec<Arc<ManagedCluster>> = ["c1", "c2", "c3"]
            .iter()
            .zip([("prod", "4"), ("dev", "16"), ("prod", "32")])
            .map(|(n, (e, c))| {
                let mut v = cluster(n, e, c);
                let schema = &input.schemas[&(
                    groups::CLUSTER.to_string(),
                    "v1".to_string(),
                    "ManagedCluster".to_string(),
                )];
                apply_schema_defaults(&mut v, schema);
                Arc::new(serde_json::from_value(v).unwrap())
            })
            .collect();
        let mut hub = input.hub.clone();
        hub.clusters = typed.clone();
        let from_text = input.snapshot();
        let from_typed = hub.snapshot();
        for (i, c) in typed.iter().enumerate() {
            let id = crate::snapshot::ClusterId(u32::try_from(i).unwrap());
            assert_eq!(from_text.managed_cluster(id), Some(&**c));
        }
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        for expression in [
            r#"managedCluster.metadata.labels["env"] == "prod""#,
            r#"managedCluster.metadata.annotations["tier"] == "t-dev""#,
            r#"managedCluster.status.allocatable["cpu"] == "16""#,
            r#"managedCluster.status.clusterClaims.exists(c, c.value == "r-c3")"#,
            r#"managedCluster.status.version.kubernetes.startsWith("v1.30") && "dev" in managedCluster.metadata.labels.map(k, managedCluster.metadata.labels[k])"#,
            r#"has(managedCluster.status) && managedCluster.metadata.name != "c1""#,
        ] {
            let placement: Placement = serde_json::from_value(placement_doc(json!({
                "predicates": [{"requiredClusterSelector": {"celSelector":
                    {"celExpressions": [expression]}}}]})))
            .unwrap();
            let names = |snapshot: &Snapshot| -> Vec<String> {
                let result = input.schedule(&placement, snapshot, now).unwrap();
                render(&placement, &result, snapshot, now)["selected"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect()
            };
            let expected = names(&from_typed);
            assert!(
                !expected.is_empty() && expected.len() < 3,
                "{expression}: {expected:?}"
            );
            assert_eq!(names(&input.snapshot()), expected, "{expression}");
            assert_eq!(names(&from_text), expected, "{expression}");
        }
    }

    /// A cluster kept as text decodes to the object read, whatever of its labels, claims and
    /// taints (kept apart from the text) is set, empty or absent, read whole or streamed.
    #[test]
    fn clusters_kept_as_text_decode_to_what_was_read() {
        let shapes = [
            json!({"metadata": {"name": "a"}, "spec": {"taints": []}}),
            json!({"metadata": {"name": "a"}, "spec": {"leaseDurationSeconds": 60, "taints": [
                {"key": "k", "effect": "NoSelect"},
                {"key": "k", "value": "", "effect": "PreferNoSelect",
                    "timeAdded": "2026-01-01T00:00:00.123456789Z"},
                {"key": "u", "value": "v", "effect": "SomethingNew", "timeAdded": null},
                {"key": "z", "value": "w", "effect": "NoSelect", "timeAdded": "0001-01-01T00:00:00Z"}]}}),
            json!({"metadata": {"name": "a"}}),
            json!({"metadata": {"name": "a", "labels": {}}, "status": {}}),
            json!({"metadata": {"name": "a", "labels": {"k": "", "x": "y"},
                "annotations": {"n": "1"}}, "status": {"clusterClaims": []}}),
            json!({"metadata": {"name": "a", "deletionTimestamp": "2026-01-01T00:00:00Z",
                "finalizers": ["f"]},
                "status": {"clusterClaims": [{"name": "n"}, {"value": "v"}, {},
                    {"name": "n", "value": "second"}], "version": {"kubernetes": "v1"}}}),
        ];
        let schema = SimInput::new().schemas[&(
            groups::CLUSTER.to_string(),
            "v1".to_string(),
            "ManagedCluster".to_string(),
        )]
            .clone();
        for shape in shapes {
            let mut doc = shape.clone();
            doc["apiVersion"] = json!("cluster.open-cluster-management.io/v1");
            doc["kind"] = json!("ManagedCluster");
            let mut whole = SimInput::new();
            whole.add_document("f", doc.clone()).unwrap();
            let list = json!({"kind": "List", "items": [doc.clone()]}).to_string();
            let (streamed, result) = json_read_from(&SimInput::new(), &list, 2, 1);
            result.unwrap();
            apply_schema_defaults(&mut doc, &schema);
            let expected: ManagedCluster = serde_json::from_value(doc).unwrap();
            for input in [whole, streamed] {
                let snapshot = input.snapshot();
                let id = snapshot.cluster_id("a").unwrap();
                assert_eq!(snapshot.managed_cluster(id), Some(&expected), "{shape}");
                // The text holds neither the labels, the claims nor the taints.
                let crate::snapshot::ClusterSource::Json(text) = &input.clusters[0].entry.source
                else {
                    panic!("kept as text");
                };
                let text = std::str::from_utf8(text.text()).unwrap();
                assert!(
                    !text.contains("clusterClaims")
                        && !text.contains("labels")
                        && !text.contains("taints"),
                    "{text}"
                );
            }
        }
    }

    /// A streamed cluster keeps its own text, compacted, when its schema added nothing to
    /// it, and the text written from the object otherwise; both decode to the object read.
    #[test]
    fn streamed_clusters_keep_their_own_text() {
        let schema = SimInput::new().schemas[&(
            groups::CLUSTER.to_string(),
            "v1".to_string(),
            "ManagedCluster".to_string(),
        )]
            .clone();
        let shapes = [
            json!({"metadata": {"name": "a"}, "spec": {"leaseDurationSeconds": 60}}),
            json!({"metadata": {"name": "a", "labels": {"k": "v \" \\ é"},
                "annotations": {"labels": "x"}}, "spec": {"leaseDurationSeconds": 40,
                "taints": [{"key": "k", "effect": "NoSelect", "timeAdded": "2026-01-01T00:00:00Z"}]},
                "status": {"clusterClaims": [{"name": "n"}], "allocatable": {"cpu": "1.5"},
                "capacity": {"cpu": "2"}, "conditions": [], "version": null}}),
            // Without a spec, nothing to default.
            json!({"metadata": {"name": "a"}}),
            // The schema adds `leaseDurationSeconds`.
            json!({"metadata": {"name": "a", "labels": {"k": "v"}}, "spec": {}}),
        ];
        let mut own_texts = 0;
        for shape in shapes {
            let mut doc = shape.clone();
            doc["apiVersion"] = json!("cluster.open-cluster-management.io/v1");
            doc["kind"] = json!("ManagedCluster");
            let list = json!({"kind": "List", "items": [doc.clone()]});
            let text = serde_json::to_string_pretty(&list).unwrap();
            let (input, result) = json_read_from(&SimInput::new(), &text, 2, 1);
            result.unwrap();
            let mut defaulted = doc.clone();
            apply_schema_defaults(&mut defaulted, &schema);
            let expected: ManagedCluster = serde_json::from_value(defaulted.clone()).unwrap();
            let snapshot = input.snapshot();
            let id = snapshot.cluster_id("a").unwrap();
            assert_eq!(snapshot.managed_cluster(id), Some(&expected), "{shape}");
            let crate::snapshot::ClusterSource::Json(kept) = &input.clusters[0].entry.source else {
                panic!("kept as text");
            };
            let kept = std::str::from_utf8(kept.text()).unwrap();
            if defaulted == doc {
                let mut own = doc.clone();
                own.as_object_mut().unwrap().remove("apiVersion");
                own.as_object_mut().unwrap().remove("kind");
                own["metadata"].as_object_mut().unwrap().remove("labels");
                if let Some(status) = own.get_mut("status").and_then(Value::as_object_mut) {
                    status.remove("clusterClaims");
                }
                if let Some(spec) = own.get_mut("spec").and_then(Value::as_object_mut) {
                    spec.remove("taints");
                }
                assert_eq!(kept, own.to_string(), "{shape}");
                own_texts += 1;
            } else {
                assert!(kept.contains(r#""leaseDurationSeconds":60"#), "{kept}");
                assert!(!kept.contains("labels"), "{kept}");
            }
        }
        assert_eq!(own_texts, 3);
    }

    #[test]
    fn documents_are_split_at_markers() {
        let docs = yaml::documents("# head\n---\na: 1\n---\n\n--- b: 2\n...\n---\nc: 3\n");
        let texts: Vec<_> = docs.map(|d| (d.index, d.line, d.text.trim())).collect();
        assert_eq!(texts, [(1, 3, "a: 1"), (2, 6, "b: 2"), (3, 9, "c: 3")]);
    }

    /// What an input holds, for comparing two.
    fn state(input: &SimInput) -> String {
        let clusters: Vec<_> = input
            .clusters
            .iter()
            .map(|c| (&c.name, c.terminating, c.entry.object(&input.symbols)))
            .collect();
        // The scheduler's view of the clusters, strings resolved (the symbols themselves
        // depend on what else was interned).
        let entries = input.snapshot().describe_clusters();
        let s = |sym| input.symbols.resolve(sym);
        let scores: Vec<_> = input
            .scores
            .iter()
            .map(|p| {
                let items: Vec<_> = p.items.iter().map(|&(n, v)| (s(n), v)).collect();
                (s(p.namespace), s(p.resource), p.valid_until(), items)
            })
            .collect();
        format!(
            "{:?} {clusters:?} {entries:?} {scores:?} {:?}",
            input.hub, input.ignored
        )
    }

    /// Reading a List item by item gives what reading the whole document gives: the same
    /// objects, or the same error after the same objects; a document that is not a List is
    /// read as a whole.
    #[test]
    fn streamed_lists_read_like_whole_documents() {
        // Strings shared by clusters and strings of one cluster alone, in labels, claims and
        // taints: the threaded read interns them per batch, then in the input's table.
        // Cluster `b` lacks a property its schema defaults: the threaded read writes it out
        // from the object; the others keep their own text.
        let cluster = |name: &str| {
            let mut cluster = json!({"apiVersion": "cluster.open-cluster-management.io/v1",
                "kind": "ManagedCluster",
                "metadata": {"name": name, "labels": {"a": "b", "zone": format!("z-{name}"),
                    format!("only-{name}"): name}},
                "spec": {"taints": [{"key": format!("t-{name}"), "value": "b",
                    "effect": "NoSelect", "timeAdded": "2026-01-01T00:00:00Z"}]},
                "status": {"clusterClaims": [{"name": "id", "value": format!("id-{name}")},
                    {"name": format!("c-{name}")}, {"name": "a", "value": "b"}],
                    "allocatable": {"cpu": "2"}, "capacity": {"cpu": "4"}}});
            if name != "b" {
                cluster["spec"]["leaseDurationSeconds"] = json!(60);
            }
            cluster
        };
        let score = |cluster: &str, name: &str, items: &[(&str, i32)]| {
            let items: Vec<Value> = items
                .iter()
                .map(|(n, v)| json!({"name": n, "value": v}))
                .collect();
            json!({"apiVersion": "cluster.open-cluster-management.io/v1alpha1",
                "kind": "AddOnPlacementScore", "metadata": {"name": name, "namespace": cluster},
                "status": {"scores": items, "validUntil": "2030-01-01T00:00:00Z"}})
        };
        let bad = json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "Placement", "metadata": {"namespace": "x"}});
        let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let docs = [
            json!({"apiVersion": "v1", "items": [cluster("a"), other.clone(), placement_doc(json!({}))],
                "kind": "List", "metadata": {}}),
            json!({"items": [cluster("a"), bad.clone(), cluster("b")], "kind": "List"}),
            json!({"items": [cluster("a"), {"kind": "ManagedClusterList",
                "items": [cluster("b"), bad]}], "kind": "List"}),
            json!({"items": [], "kind": "ManagedClusterList"}),
            json!({"items": [cluster("a")], "kind": "Placement"}),
            json!({"items": [cluster("a")]}),
            json!({"items": [cluster("a")], "kind": 3}),
            json!({"items": null, "kind": "List"}),
            // Items decoded straight into their types, with schema defaults (absent, null
            // and nullable), in any key order, or failing to decode.
            json!({"kind": "List", "items": [
                placement_doc(json!({"prioritizerPolicy": {"configurations": [
                    {"scoreCoordinate": {"builtIn": "Steady"}}]}})),
                placement_doc(json!({"prioritizerPolicy": {"mode": null, "configurations": [
                    {"weight": null, "scoreCoordinate": {"builtIn": "Steady", "type": null}}]},
                    "decisionStrategy": null, "tolerations": [{"key": "k", "operator": null}]})),
                placement_doc(Value::Null),
                {"kind": "Placement", "metadata": {"name": "late", "namespace": "ns"},
                 "apiVersion": "cluster.open-cluster-management.io/v1beta1", "spec": {}},
                {"metadata": {"name": "m"}, "spec": {"leaseDurationSeconds": null},
                 "kind": "ManagedCluster", "apiVersion": "cluster.open-cluster-management.io/v1"},
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "n", "namespace": "x"}, "spec": {}},
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "o"}, "spec": {"taints": [{"key": "a", "effect": "NoSelect"}]},
                 "status": {"clusterClaims": [{"name": "c", "value": "v"}],
                    "allocatable": {"cpu": "4"}, "capacity": {"cpu": "8"}}},
                {"apiVersion": "cluster.open-cluster-management.io/v1alpha1",
                 "kind": "AddOnPlacementScore", "metadata": {"name": "s", "namespace": "o"},
                 "status": {"scores": [{"name": "x", "value": 3}]}},
                {"apiVersion": "cluster.open-cluster-management.io/v1beta1",
                 "kind": "PlacementDecision", "metadata": {"name": "d", "namespace": "ns",
                    "labels": {"cluster.open-cluster-management.io/placement": "p"}},
                 "status": {"decisions": [{"clusterName": "o", "reason": ""}]}},
                {"apiVersion": "cluster.open-cluster-management.io/v1beta2",
                 "kind": "ManagedClusterSetBinding", "metadata": {"name": "b", "namespace": "ns"},
                 "spec": {"clusterSet": "b"}},
                {"apiVersion": "cluster.open-cluster-management.io/v1beta2",
                 "kind": "ManagedClusterSet", "metadata": {"name": "b"}, "spec": null},
                null, other.clone()]}),
            json!({"kind": "List", "items": [cluster("a"),
                placement_doc(json!({"numberOfClusters": "two"})), cluster("b")]}),
            // Scores whose strings the threads intern per batch, shared and not.
            json!({"kind": "List", "items": [cluster("a"), score("a", "s1", &[("x", 1)]),
                score("b", "s1", &[("y", 2), ("x", 5)]), cluster("b"),
                score("a", "s2", &[("x", 3), ("z-a", 4)]), score("zz", "s3", &[])]}),
            json!({"kind": "List", "items": [cluster("a"),
                {"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
                 "metadata": {"name": "p"}, "spec": {}}, cluster("b")]}),
            json!({"kind": "List", "items": [cluster("a"),
                {"apiVersion": "cluster.open-cluster-management.io/v9", "kind": "ManagedCluster",
                 "metadata": {"name": "v9"}}, cluster("b")]}),
            json!({"kind": "List", "items": [cluster("a"),
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": 3}}, cluster("b")]}),
            json!({"kind": "List", "items": [cluster("a"), "text", true, 1, [cluster("b")]]}),
            json!({"items": [1, cluster("a")], "kind": "List"}),
            json!({"kind": "List"}),
            cluster("a"),
            json!([cluster("a")]),
            Value::Null,
        ];
        for doc in docs {
            let mut whole = SimInput::new();
            whole.add_document("f", cluster("before")).unwrap();
            let before = whole.clone();
            let mut json_read = whole.clone();
            let mut yaml_read = whole.clone();
            let expected = whole
                .add_document("f", doc.clone())
                .map_err(|e| e.to_string());
            let text = serde_json::to_string(&doc).unwrap();
            let got = json_read.add_json("f", &text).map_err(|e| e.to_string());
            assert_eq!(got, expected, "{doc}");
            assert_eq!(state(&json_read), state(&whole), "{doc}");
            // Read from a file a chunk at a time (here a byte at a time, pretty or not), on
            // one or more decoding threads with batches of every size.
            for text in [text.clone(), serde_json::to_string_pretty(&doc).unwrap()] {
                for (threads, batch) in [(1, 1), (2, 1), (2, 2), (3, 1), (3, 256)] {
                    let (chunked, got) = json_read_from(&before, &text, threads, batch);
                    let at = format!("{threads} threads, batches of {batch}: {text}");
                    assert_eq!(got.map_err(|e| e.to_string()), expected, "{at}");
                    assert_eq!(state(&chunked), state(&whole), "{at}");
                }
            }
            let yaml = serde_saphyr::to_string(&doc).unwrap();
            let got = yaml_read.add_yaml("f", &yaml).map_err(|e| e.to_string());
            // The YAML source also names the document.
            let got = got.map_err(|e| e.replace(" (document 1, line 1)", ""));
            assert_eq!(got, expected, "{doc}");
            assert_eq!(state(&yaml_read), state(&whole), "{doc}");
        }
        // Keys as JSON reads them: repeated (the last value counts), escaped, or with a
        // value that is not a string before the kind is known.
        let texts = [
            r#"{"kind": "List", "items": [{"apiVersion": "v1", "metadata": {"name": "d"},
                "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                "spec": {"leaseDurationSeconds": 60}}]}"#,
            r#"{"kind": "List", "items": [{"apiVersion": "cluster.open-cluster-management.io/v1",
                "kind": "ManagedCluster", "metadata": {"name": "e"}}]}"#,
            // `apiVersion` or `kind` again after both were read: the last one counts.
            r#"{"kind": "List", "items": [{"apiVersion": "cluster.open-cluster-management.io/v1",
                "kind": "ManagedCluster", "metadata": {"name": "r", "namespace": "ns"},
                "kind": "Placement", "apiVersion": "cluster.open-cluster-management.io/v1beta1",
                "spec": {}}]}"#,
            r#"{"kind": "List", "items": [{"apiVersion": "cluster.open-cluster-management.io/v1",
                "kind": "ManagedCluster", "metadata": {"name": "s"}, "kind": "Unknown"}]}"#,
            r#"{"kind": "List", "items": [{"apiVersion": "cluster.open-cluster-management.io/v1",
                "kind": "ManagedCluster", "metadata": {"name": "t"},
                "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster"}]}"#,
            r#"{"kind": "List", "items": [{"status": null, "x": [1, {"a": 2.5}], "y": true,
                "apiVersion": "cluster.open-cluster-management.io/v1", "metadata": {"name": "f"},
                "kind": "ManagedCluster"}]}"#,
            // Labels and claims as the decoding threads take them out: repeated, escaped,
            // null, with unknown or repeated claim fields, in forms only the typed field
            // reads, or read before the kind is known.
            r#"{"kind": "List", "items": [
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "g", "labels": {"a": "1", "kA": "v
", "a": "2"}},
                 "spec": {"leaseDurationSeconds": 60},
                 "status": {"clusterClaims": [{"name": null, "x": {"y": [1]}, "value": "v"},
                    {}, {"name": "n", "value": "é"}]}},
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "h", "labels": null}, "status": {"clusterClaims": null}},
                {"metadata": {"name": "i", "labels": {"x": "y"}}, "status": {"clusterClaims":
                    [{"name": "c", "value": "d"}]},
                 "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster"}]}"#,
            r#"{"kind": "List", "items": [
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "j"}, "status": {"clusterClaims": [{"name": "a", "name": "b"}]}}]}"#,
            r#"{"kind": "List", "items": [
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "k"}, "status": {"clusterClaims": [["a", "b"]]}}]}"#,
            r#"{"kind": "List", "items": [
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "l", "labels": {"a": 1}}}]}"#,
            // Taints likewise.
            r#"{"kind": "List", "items": [
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "m"}, "spec": {"leaseDurationSeconds": 60, "taints": [
                    {"key": "a", "effect": "NoSelect", "value": null, "timeAdded": null, "x": [{}]},
                    {"timeAdded": "2026-01-01T00:00:00.5Z", "effect": "Odd", "key": "b", "value": ""},
                    {"key": "c", "effect": "PreferNoSelect", "value": "v"}]}},
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "n"}, "spec": {"taints": null}}]}"#,
            r#"{"kind": "List", "items": [
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "o"}, "spec": {"taints": [{"key": "a"}]}}]}"#,
            r#"{"kind": "List", "items": [
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "p"}, "spec": {"taints": [{"key": "a", "key": "b",
                    "effect": "NoSelect"}]}}]}"#,
            r#"{"kind": "List", "items": [
                {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                 "metadata": {"name": "q"}, "spec": {"taints": [{"key": "a",
                    "effect": {"NoSelect": null}}, {"key": "b", "effect": "NoSelect",
                    "timeAdded": "yesterday"}]}}]}"#,
        ];
        for text in texts {
            let mut whole = SimInput::new();
            let expected = whole.add_json_whole("f", text).map_err(|e| e.to_string());
            for (threads, batch) in [(1, 1), (2, 1), (2, 2)] {
                let (streamed, got) = json_read_from(&SimInput::new(), text, threads, batch);
                assert_eq!(got.map_err(|e| e.to_string()), expected, "{text}");
                assert_eq!(state(&streamed), state(&whole), "{text}");
            }
        }
        assert_eq!(
            {
                let mut input = SimInput::new();
                input.add_json("f", texts[0]).unwrap();
                input.snapshot().cluster_count()
            },
            1
        );
        // A List is read item by item, anything else as a whole.
        let streams = |doc: Value| {
            let text = doc.to_string();
            SimInput::new()
                .stream_json_list("f", text.as_bytes())
                .expect("read from memory")
                .is_some()
        };
        assert!(streams(json!({"items": [cluster("a")], "kind": "List"})));
        assert!(!streams(
            json!({"items": [cluster("a")], "kind": "Placement"})
        ));
        assert!(!streams(cluster("a")));
        // Items of the kinds read are decoded into their types, defaults included; one that
        // does not decode sends the whole document to the slow path.
        let defaulted = placement_doc(json!({"prioritizerPolicy": {"mode": null,
            "configurations": [{"scoreCoordinate": {"builtIn": "Steady"}}]}}));
        assert!(streams(
            json!({"items": [cluster("a"), defaulted], "kind": "List"})
        ));
        assert!(!streams(json!({"items": [cluster("a"),
            placement_doc(json!({"numberOfClusters": "two"}))], "kind": "List"})));
        // Invalid text is an error that names the file.
        let e = SimInput::new()
            .add_json("f.json", "{\"items\": [")
            .unwrap_err();
        assert!(e.to_string().starts_with("f.json: invalid JSON"), "{e}");
    }

    /// A reader that hands out one byte per read, so that every value of a document crosses
    /// a chunk boundary somewhere.
    struct OneByte<'a>(&'a [u8]);

    impl std::io::Read for OneByte<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((&b, rest)), Some(slot)) => {
                    *slot = b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    /// `base` with `text` added as `add_file` adds a `.json` file, read a byte at a time and
    /// decoded on `threads` threads, `batch` items at a time.
    fn json_read_from(
        base: &SimInput,
        text: &str,
        threads: usize,
        batch: usize,
    ) -> (SimInput, Result<(), SimError>) {
        let mut input = base.clone();
        let reader = OneByte(text.as_bytes());
        let result = match input.stream_json_list_with("f", reader, threads, batch) {
            Ok(Some(result)) => result,
            Ok(None) => input.add_json_whole("f", text),
            Err(e) => panic!("reading from memory failed: {e}"),
        };
        (input, result)
    }

    /// A `.json` file reads as its text does through [`SimInput::add_json`], the file's path
    /// naming the source; a file that cannot be read is a read error naming it.
    #[test]
    fn json_files_read_like_their_text() {
        let dir = std::env::temp_dir().join(format!("ocm-sim-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cluster = json!({"apiVersion": "cluster.open-cluster-management.io/v1",
            "kind": "ManagedCluster", "metadata": {"name": "a"}, "spec": {}});
        let texts = [
            json!({"apiVersion": "v1", "kind": "List", "items": [cluster.clone(),
                placement_doc(json!({"prioritizerPolicy": {"mode": null}}))]})
            .to_string(),
            json!({"kind": "List", "items": [cluster.clone(),
                placement_doc(json!({"numberOfClusters": "two"}))]})
            .to_string(),
            cluster.to_string(),
            "{\"kind\": \"List\", \"items\": [".to_string(),
        ];
        for (i, text) in texts.iter().enumerate() {
            let path = dir.join(format!("hub-{i}.json"));
            std::fs::write(&path, text).unwrap();
            let name = path.display().to_string();
            let mut from_file = SimInput::new();
            let mut from_text = SimInput::new();
            let got = from_file.add_file(&path).map_err(|e| e.to_string());
            let expected = from_text.add_json(&name, text).map_err(|e| e.to_string());
            assert_eq!(got, expected, "{text}");
            assert_eq!(state(&from_file), state(&from_text), "{text}");
        }
        let missing = dir.join("missing.json");
        let e = SimInput::new().add_file(&missing).unwrap_err().to_string();
        assert!(e.starts_with(&missing.display().to_string()), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A YAML List larger than the parser's default limits (250 000 nodes) is read.
    #[test]
    fn large_yaml_lists_are_read() {
        let n = 40_000;
        let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
        for i in 0..n {
            text.push_str(&format!(
                "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c{i}\n    namespace: x\n"
            ));
        }
        let mut input = SimInput::new();
        input.add_yaml("big.yaml", &text).unwrap();
        assert_eq!(input.ignored().get("ConfigMap"), Some(&n));
    }

    #[test]
    fn crd_defaults_are_applied() {
        let mut input = SimInput::new();
        input
            .add_document(
                "t",
                placement_doc(json!({"prioritizerPolicy": {"configurations": [
                {"scoreCoordinate": {"builtIn": "Steady"}}]}})),
            )
            .unwrap();
        let p = serde_json::to_value(&input.placements()[0].spec).unwrap();
        assert_eq!(p["prioritizerPolicy"]["mode"], "Additive");
        assert_eq!(p["prioritizerPolicy"]["configurations"][0]["weight"], 1);
        assert_eq!(
            p["prioritizerPolicy"]["configurations"][0]["scoreCoordinate"]["type"],
            "BuiltIn"
        );
    }

    #[test]
    fn errors_name_the_source_and_object() {
        let mut input = SimInput::new();
        let e = input
            .add_document("f.yaml", placement_doc(json!({"numberOfClusters": "two"})))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f.yaml: Placement ns/p: "), "{e}");
        let e = input
            .add_document("g.yaml", json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster", "metadata": {}}))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "g.yaml: ManagedCluster: has no metadata.name");
        let e = input
            .add_document("h.yaml", json!([1]))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "h.yaml: document: expected an object, found a list");
        let e = input
            .add_document("l.json", json!({"kind": "List", "items": [{"kind": "Placement",
                "apiVersion": "cluster.open-cluster-management.io/v1beta1", "metadata": {"namespace": "x"}}]}))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "l.json: Placement (item 1): has no metadata.name");
    }

    #[test]
    fn nullable_nulls_are_kept_and_others_defaulted() {
        let schema = json!({"properties": {
            "a": {"default": 1}, "b": {"default": 2, "nullable": true},
            "m": {"additionalProperties": {"properties": {"x": {"default": "d"}}}}}});
        let mut v = json!({"a": null, "b": null, "m": {"k": {}}});
        apply_schema_defaults(&mut v, &schema);
        assert_eq!(v, json!({"a": 1, "b": null, "m": {"k": {"x": "d"}}}));
    }
}
