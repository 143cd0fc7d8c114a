//! The scheduler's input: a compact, read-only view of the hub.
//!
//! A [`Snapshot`] is built once from the hub objects the scheduler reads (ManagedClusters,
//! ManagedClusterSets, ManagedClusterSetBindings, AddOnPlacementScores and PlacementDecisions)
//! and then serves any number of [`Scheduler::schedule`](crate::Scheduler::schedule) calls.
//! Building it precomputes everything the filters and prioritizers need per cluster: interned
//! labels and claims, taints with their times, allocatable CPU and memory as floats, cluster-set
//! membership, AddOn scores indexed by cluster, and decision counts. Scheduling then allocates
//! per placement, never per cluster.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use jiff::Timestamp;
use ocm_api::cluster::v1::{ManagedCluster, ManagedClusterClaim, Taint, TaintEffect};
use ocm_api::cluster::v1alpha1::AddOnPlacementScore;
use ocm_api::cluster::v1beta1::PlacementDecision;
use ocm_api::cluster::v1beta2::{ManagedClusterSet, ManagedClusterSetBinding, SelectorType};
use ocm_api::constants::{cluster as cluster_consts, labels};

use crate::selector::{CompiledSelector, SelectorSpec};
use crate::symbols::{ABSENT, Intern, Sym, SymMap, Symbols, remap};
use ocm_api::k8s::quantity::approximate_f64;

/// Index of a cluster in a [`Snapshot`]; clusters are numbered in name order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterId(pub(crate) u32);

impl ClusterId {
    /// The position of the cluster in the snapshot's name-ordered list.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Nanoseconds since the Unix epoch of Go's zero time (0001-01-01T00:00:00Z): what upstream
/// reads from a taint whose `timeAdded` is unset.
pub(crate) const GO_ZERO_TIME_NANOS: i128 = -62_135_596_800 * 1_000_000_000;

/// A taint in compact form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompactTaint {
    pub(crate) key: Sym,
    pub(crate) value: Sym,
    pub(crate) effect: TaintEffect,
    /// `timeAdded` in nanoseconds since the Unix epoch (Go's zero time when unset).
    pub(crate) time_added: i128,
    /// Whether `value` was set (`value` reads as the empty string when not).
    pub(crate) has_value: bool,
    /// Whether `timeAdded` was set.
    pub(crate) has_time: bool,
}

/// What the scheduler keeps of one ManagedCluster.
#[derive(Debug, Clone)]
pub(crate) struct ClusterEntry {
    pub(crate) labels: SymMap,
    pub(crate) claims: SymMap,
    /// `status.clusterClaims` as listed (order and repeats kept), `(name, value)` with
    /// [`ABSENT`](crate::symbols::ABSENT) for an unset one: what CEL selectors read.
    pub(crate) claim_list: Arc<[(Sym, Sym)]>,
    /// Whether `metadata.labels` is set (an empty map included).
    pub(crate) has_labels: bool,
    /// Whether `status.clusterClaims` is set (an empty list included).
    pub(crate) has_claims: bool,
    pub(crate) taints: Arc<[CompactTaint]>,
    /// Whether `spec.taints` is set (an empty list included).
    pub(crate) has_taints: bool,
    pub(crate) cpu: Option<f64>,
    pub(crate) memory: Option<f64>,
    /// Whether `metadata.name` is set.
    pub(crate) has_name: bool,
    pub(crate) source: ClusterSource,
}

/// Where the snapshot finds a cluster's whole object.
#[derive(Debug, Clone)]
pub(crate) enum ClusterSource {
    /// The object, shared with the caller (a reflector store, a [`HubState`](crate::HubState)).
    Typed(Arc<ManagedCluster>),
    /// Its JSON text, decoded the first time something asks for the object (the simulator
    /// keeps clusters so: the text costs a fraction of the typed object's maps and strings).
    Json(Arc<JsonCluster>),
}

impl ClusterEntry {
    /// The cluster's whole object; `symbols` is the table of the snapshot holding the entry.
    /// `None` only if a [`JsonCluster`]'s text does not decode, which cannot happen for text
    /// made by [`PreparedCluster::new`] or given to [`PreparedCluster::from_taken`] as that
    /// method requires.
    pub(crate) fn object<'a>(&'a self, symbols: &Symbols) -> Option<&'a ManagedCluster> {
        match &self.source {
            ClusterSource::Typed(c) => Some(c),
            ClusterSource::Json(j) => j.get(self, symbols),
        }
    }
}

/// One cluster of a snapshot, as CEL reads it: its entry, and the table its symbols are in.
#[derive(Clone, Copy)]
pub(crate) struct ClusterRef<'a> {
    pub(crate) entry: &'a ClusterEntry,
    pub(crate) symbols: &'a Symbols,
}

impl<'a> ClusterRef<'a> {
    /// The whole object (see [`ClusterEntry::object`]).
    pub(crate) fn object(self) -> Option<&'a ManagedCluster> {
        self.entry.object(self.symbols)
    }
}

/// A ManagedCluster kept as the JSON text of everything but its labels, claims and taints
/// (which the cluster's entry holds, their strings shared), decoded on first use.
pub(crate) struct JsonCluster {
    text: Box<[u8]>,
    typed: std::sync::OnceLock<Option<Box<ManagedCluster>>>,
}

impl JsonCluster {
    /// Keeps `cluster` as text, without its labels, claims and taints; `scratch` is a buffer to
    /// write it in first (reused from cluster to cluster, so the text is allocated once, at
    /// its size).
    fn new(mut cluster: ManagedCluster, scratch: &mut Vec<u8>) -> Self {
        cluster.metadata.labels = None;
        cluster.spec.taints = None;
        if let Some(status) = cluster.status.as_mut() {
            status.cluster_claims = None;
        }
        scratch.clear();
        // Serializing a typed object to memory does not fail (string keys, no custom
        // serializer that errors); an empty text would decode to nothing.
        let text: Box<[u8]> = match serde_json::to_writer(&mut *scratch, &cluster) {
            Ok(()) => scratch.as_slice().into(),
            Err(_) => Box::default(),
        };
        JsonCluster::from_text(text)
    }

    /// Keeps `text`, which must decode to the object without its labels, claims and taints.
    fn from_text(text: Box<[u8]>) -> Self {
        JsonCluster {
            text,
            typed: std::sync::OnceLock::new(),
        }
    }

    /// The object, decoded once, its labels, claims and taints taken from `entry`.
    fn get(&self, entry: &ClusterEntry, symbols: &Symbols) -> Option<&ManagedCluster> {
        self.typed
            .get_or_init(|| self.decode(entry, symbols).map(Box::new))
            .as_deref()
    }

    fn decode(&self, entry: &ClusterEntry, symbols: &Symbols) -> Option<ManagedCluster> {
        let mut cluster: ManagedCluster = serde_json::from_slice(&self.text).ok()?;
        let string = |sym: Sym| (sym != ABSENT).then(|| symbols.resolve(sym).to_string());
        if entry.has_labels {
            cluster.metadata.labels = Some(
                entry
                    .labels
                    .pairs()
                    .iter()
                    .map(|&(k, v)| {
                        (
                            symbols.resolve(k).to_string(),
                            symbols.resolve(v).to_string(),
                        )
                    })
                    .collect(),
            );
        }
        if entry.has_claims {
            let claims = entry
                .claim_list
                .iter()
                .map(|&(n, v)| ManagedClusterClaim {
                    name: string(n),
                    value: string(v),
                })
                .collect();
            cluster
                .status
                .get_or_insert_with(Default::default)
                .cluster_claims = Some(claims);
        }
        if entry.has_taints {
            let mut taints = Vec::with_capacity(entry.taints.len());
            for t in entry.taints.iter() {
                let time_added = if t.has_time {
                    let at = Timestamp::from_nanosecond(t.time_added).ok()?;
                    Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at))
                } else {
                    None
                };
                taints.push(Taint {
                    key: symbols.resolve(t.key).to_string(),
                    value: t.has_value.then(|| symbols.resolve(t.value).to_string()),
                    effect: t.effect.clone(),
                    time_added,
                });
            }
            cluster.spec.taints = Some(taints);
        }
        Some(cluster)
    }

    /// The text kept.
    #[cfg(test)]
    pub(crate) fn text(&self) -> &[u8] {
        &self.text
    }

    /// Bytes held: the text (and nothing for the object until it is decoded).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.text.len()
    }
}

impl std::fmt::Debug for JsonCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonCluster")
            .field("text_bytes", &self.text.len())
            .field("decoded", &self.typed.get().is_some())
            .finish()
    }
}

/// A cluster added to a [`SnapshotBuilder`] with its entry already computed against the
/// builder's symbol table (see [`SnapshotBuilder::with_symbols`]).
#[derive(Debug, Clone)]
pub(crate) struct PreparedCluster {
    pub(crate) name: Box<str>,
    pub(crate) terminating: bool,
    pub(crate) entry: ClusterEntry,
}

impl PreparedCluster {
    /// Computes the entry of `cluster` against `symbols`, and keeps the rest of the object
    /// as JSON text (written in `scratch` first).
    pub(crate) fn new(
        symbols: &mut impl Intern,
        cluster: ManagedCluster,
        scratch: &mut Vec<u8>,
    ) -> Self {
        let name = cluster.metadata.name.as_deref().unwrap_or_default().into();
        let terminating = cluster.metadata.deletion_timestamp.is_some();
        // The entry is computed from the whole object, then takes the text of the rest.
        let mut entry = cluster_entry(symbols, &cluster, ClusterSource::Json(Arc::default()));
        entry.source = ClusterSource::Json(Arc::new(JsonCluster::new(cluster, scratch)));
        PreparedCluster {
            name,
            terminating,
            entry,
        }
    }

    /// The cluster whose labels, claims and taints were taken out while it was decoded:
    /// `cluster` is the rest (those unset), `parts` what was taken, interned in `symbols`.
    /// The rest is kept as `text` when given: JSON that decodes (as a plain
    /// `ManagedCluster`, no schema defaults added) to `cluster`; else it is written out (in
    /// `scratch` first).
    pub(crate) fn from_taken(
        symbols: &mut impl Intern,
        cluster: ManagedCluster,
        parts: EntryParts,
        text: Option<Box<[u8]>>,
        scratch: &mut Vec<u8>,
    ) -> Self {
        let name = cluster.metadata.name.as_deref().unwrap_or_default().into();
        let terminating = cluster.metadata.deletion_timestamp.is_some();
        let mut entry = entry_from_parts(
            symbols,
            &cluster,
            parts,
            ClusterSource::Json(Arc::default()),
        );
        let kept = match text {
            Some(text) => JsonCluster::from_text(text),
            None => JsonCluster::new(cluster, scratch),
        };
        entry.source = ClusterSource::Json(Arc::new(kept));
        PreparedCluster {
            name,
            terminating,
            entry,
        }
    }

    /// Translates the entry's symbols by `map` (from the table it was computed against to
    /// another one, as [`SymMap::remap`]).
    pub(crate) fn remap(&mut self, map: &[Sym]) {
        let e = &mut self.entry;
        e.labels.remap(map);
        e.claims.remap(map);
        for_each_mut(&mut e.claim_list, |(n, v)| {
            *n = remap(map, *n);
            *v = remap(map, *v);
        });
        for_each_mut(&mut e.taints, |t| {
            t.key = remap(map, t.key);
            t.value = remap(map, t.value);
        });
    }
}

impl Default for JsonCluster {
    fn default() -> Self {
        JsonCluster::from_text(Box::default())
    }
}

/// Applies `f` to every element of `items`, in place when nothing else shares them.
fn for_each_mut<T: Clone>(items: &mut Arc<[T]>, f: impl FnMut(&mut T)) {
    if let Some(unique) = Arc::get_mut(items) {
        unique.iter_mut().for_each(f);
        return;
    }
    let mut copy = items.to_vec();
    copy.iter_mut().for_each(f);
    *items = copy.into();
}

/// A cluster waiting in a [`SnapshotBuilder`].
#[derive(Debug, Clone)]
enum PendingCluster {
    Typed(Arc<ManagedCluster>),
    Prepared(PreparedCluster),
}

impl PendingCluster {
    fn name(&self) -> &str {
        match self {
            PendingCluster::Typed(c) => c.metadata.name.as_deref().unwrap_or_default(),
            PendingCluster::Prepared(p) => &p.name,
        }
    }
}

/// One AddOnPlacementScore as added to the builder: what the scheduler reads of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScoreInput {
    namespace: Box<str>,
    resource: Box<str>,
    valid_until: Option<i128>,
    items: Box<[(Box<str>, i32)]>,
}

/// What the scheduler reads of one AddOnPlacementScore, its strings interned (as the
/// simulator keeps scores: a few bytes each, and shared with every snapshot built from it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PreparedScore {
    /// The namespace: the scored cluster.
    pub(crate) namespace: Sym,
    /// The name: the score's resource.
    pub(crate) resource: Sym,
    /// `validUntil` in nanoseconds since the Unix epoch; [`NEVER`](Self::NEVER) for unset.
    valid_until: i128,
    /// `status.scores` as (name, value), in list order.
    pub(crate) items: Arc<[(Sym, i32)]>,
}

impl PreparedScore {
    /// `valid_until` of a score without `validUntil` (no time is that far back).
    const NEVER: i128 = i128::MIN;

    /// What the scheduler reads of `score`, its strings interned in `symbols`.
    pub(crate) fn new(symbols: &mut impl Intern, score: &AddOnPlacementScore) -> Self {
        let status = score.status.as_ref();
        Self {
            namespace: symbols.intern(score.metadata.namespace.as_deref().unwrap_or_default()),
            resource: symbols.intern(score.metadata.name.as_deref().unwrap_or_default()),
            valid_until: status
                .and_then(|s| s.valid_until.as_ref())
                .map_or(Self::NEVER, |t| t.0.as_nanosecond()),
            items: status
                .and_then(|s| s.scores.as_ref())
                .map(|items| {
                    items
                        .iter()
                        .map(|i| (symbols.intern(&i.name), i.value))
                        .collect()
                })
                .unwrap_or_else(|| Arc::from([])),
        }
    }

    /// `validUntil` in nanoseconds since the Unix epoch, `None` when unset.
    pub(crate) fn valid_until(&self) -> Option<i128> {
        (self.valid_until != Self::NEVER).then_some(self.valid_until)
    }

    /// Translates the symbols by `map` (as [`PreparedCluster::remap`]).
    pub(crate) fn remap(&mut self, map: &[Sym]) {
        self.namespace = remap(map, self.namespace);
        self.resource = remap(map, self.resource);
        for_each_mut(&mut self.items, |(n, _)| *n = remap(map, *n));
    }
}

impl ScoreInput {
    /// What the scheduler reads of `score`.
    pub(crate) fn new(score: &AddOnPlacementScore) -> Self {
        let status = score.status.as_ref();
        Self {
            namespace: score
                .metadata
                .namespace
                .as_deref()
                .unwrap_or_default()
                .into(),
            resource: score.metadata.name.as_deref().unwrap_or_default().into(),
            valid_until: status
                .and_then(|s| s.valid_until.as_ref())
                .map(|t| t.0.as_nanosecond()),
            items: status
                .and_then(|s| s.scores.as_ref())
                .map(|items| {
                    items
                        .iter()
                        .map(|i| (i.name.as_str().into(), i.value))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// The AddOnPlacementScores of one resource name, one row per cluster, stored flat so the
/// AddOn prioritizer reads them sequentially.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScoreTable {
    /// Scored clusters, sorted.
    pub(crate) clusters: Vec<ClusterId>,
    /// `validUntil` per row in nanoseconds since the Unix epoch; `None` never expires.
    pub(crate) valid_until: Vec<Option<i128>>,
    /// Start and end of each row's items in `items`.
    pub(crate) ranges: Vec<(u32, u32)>,
    /// `status.scores` items (name symbol, value), rows in list order.
    pub(crate) items: Vec<(Sym, i32)>,
}

impl ScoreTable {
    /// The row of a cluster.
    pub(crate) fn row(&self, cluster: ClusterId) -> Option<usize> {
        self.clusters.binary_search(&cluster).ok()
    }

    /// The items of a row.
    pub(crate) fn items(&self, row: usize) -> &[(Sym, i32)] {
        self.ranges
            .get(row)
            .and_then(|&(a, b)| self.items.get(a as usize..b as usize))
            .unwrap_or_default()
    }

    /// The value of the last item of `row` whose name is `name`.
    pub(crate) fn value(&self, row: usize, name: Sym) -> Option<i32> {
        self.items(row)
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
    }
}

/// An AddOnPlacementScore as the snapshot holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddOnScoreView<'a> {
    /// `status.validUntil`; `None` never expires.
    pub valid_until: Option<Timestamp>,
    /// `status.scores` as (name, value), in list order.
    pub scores: Vec<(&'a str, i32)>,
}

/// Membership of one cluster set.
#[derive(Debug, Clone)]
pub(crate) enum SetMembers {
    /// Member clusters that are not terminating, in id order.
    Members(Vec<ClusterId>),
    /// The set's selector could not be evaluated.
    Invalid(String),
}

/// The clusters named by one PlacementDecision.
#[derive(Debug, Clone)]
pub(crate) struct DecisionRecord {
    /// Decision "slots": ids below the cluster count are clusters; higher ids are names of
    /// clusters that do not exist in the snapshot (they still count for Balance).
    pub(crate) slots: Box<[u32]>,
}

/// A read-only, index-friendly view of the hub for the scheduler. Build it with
/// [`Snapshot::builder`].
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub(crate) symbols: Symbols,
    pub(crate) names: Arc<[Box<str>]>,
    pub(crate) clusters: Vec<ClusterEntry>,
    pub(crate) terminating: Vec<bool>,
    pub(crate) sets: BTreeMap<String, SetMembers>,
    pub(crate) bindings: HashMap<String, Vec<String>>,
    /// resource name → (cluster, score) sorted by cluster.
    pub(crate) scores: HashMap<String, ScoreTable>,
    pub(crate) decisions: Vec<DecisionRecord>,
    /// (namespace, placement label) → indexes into `decisions`.
    pub(crate) decisions_by_placement: HashMap<(String, String), Vec<usize>>,
    /// Decision entries per slot over all PlacementDecisions.
    pub(crate) decision_counts: Vec<u32>,
    /// The clusters' CEL values, built path by path the first time a CEL selector reads them
    /// and shared by clones of the snapshot.
    pub(crate) cel_cache: Arc<crate::plugins::cel::CelCache>,
}

impl Snapshot {
    /// Starts a snapshot.
    pub fn builder() -> SnapshotBuilder {
        SnapshotBuilder::default()
    }

    /// Number of clusters (terminating ones included).
    pub fn cluster_count(&self) -> usize {
        self.clusters.len()
    }

    /// The id of the cluster called `name`.
    pub fn cluster_id(&self, name: &str) -> Option<ClusterId> {
        self.names
            .binary_search_by(|n| (**n).cmp(name))
            .ok()
            .and_then(|i| u32::try_from(i).ok())
            .map(ClusterId)
    }

    /// The name of a cluster.
    pub fn cluster_name(&self, id: ClusterId) -> &str {
        self.names.get(id.index()).map_or("", |n| n)
    }

    /// The ManagedCluster object of a cluster.
    ///
    /// A snapshot the simulator builds keeps clusters as JSON text: the object is decoded the
    /// first time it is asked for, and kept (its times to the second, as their JSON form
    /// holds them).
    pub fn managed_cluster(&self, id: ClusterId) -> Option<&ManagedCluster> {
        self.clusters
            .get(id.index())
            .and_then(|c| c.object(&self.symbols))
    }

    /// The AddOnPlacementScore `<cluster name>/<resource_name>`: `None` when the snapshot
    /// holds no such object.
    pub fn addon_score(
        &self,
        cluster: ClusterId,
        resource_name: &str,
    ) -> Option<AddOnScoreView<'_>> {
        let table = self.scores.get(resource_name)?;
        let row = table.row(cluster)?;
        Some(AddOnScoreView {
            valid_until: table
                .valid_until
                .get(row)
                .copied()
                .flatten()
                .and_then(|ns| Timestamp::from_nanosecond(ns).ok()),
            scores: table
                .items(row)
                .iter()
                .map(|&(n, v)| (self.symbols.resolve(n), v))
                .collect(),
        })
    }

    /// Clusters named in the PlacementDecisions labelled for `placement` in `namespace`
    /// (existing decisions before this round), deduplicated, in id order. Names of clusters
    /// absent from the snapshot are left out.
    pub fn decided_clusters(&self, namespace: &str, placement: &str) -> Vec<ClusterId> {
        let n = self.clusters.len();
        let mut out: Vec<ClusterId> = self
            .own_records(namespace, placement)
            .flat_map(|r| r.slots.iter().copied())
            .filter(|&s| (s as usize) < n)
            .map(ClusterId)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    pub(crate) fn own_records<'a>(
        &'a self,
        namespace: &str,
        placement: &str,
    ) -> impl Iterator<Item = &'a DecisionRecord> + 'a {
        self.decisions_by_placement
            .get(&(namespace.to_string(), placement.to_string()))
            .into_iter()
            .flatten()
            .filter_map(|&i| self.decisions.get(i))
    }

    /// Each cluster's entry with its strings resolved, for comparing snapshots whose symbol
    /// tables differ.
    #[cfg(test)]
    pub(crate) fn describe_clusters(&self) -> Vec<String> {
        let s = |sym: Sym| {
            if sym == ABSENT {
                None
            } else {
                Some(self.symbols.resolve(sym))
            }
        };
        let map = |m: &SymMap| -> BTreeMap<&str, &str> {
            m.pairs()
                .iter()
                .map(|&(k, v)| (self.symbols.resolve(k), self.symbols.resolve(v)))
                .collect()
        };
        self.clusters
            .iter()
            .zip(self.names.iter())
            .zip(&self.terminating)
            .map(|((e, name), terminating)| {
                let claim_list: Vec<_> = e.claim_list.iter().map(|&(n, v)| (s(n), s(v))).collect();
                let taints: Vec<_> = e
                    .taints
                    .iter()
                    .map(|t| {
                        let set = (t.has_value, t.has_time);
                        (s(t.key), s(t.value), &t.effect, t.time_added, set)
                    })
                    .collect();
                format!(
                    "{name} {terminating} {:?} {:?} {claim_list:?} {taints:?} {:?} {:?} {} {} {} {}",
                    map(&e.labels),
                    map(&e.claims),
                    e.cpu,
                    e.memory,
                    e.has_labels,
                    e.has_claims,
                    e.has_taints,
                    e.has_name
                )
            })
            .collect()
    }

    /// Estimated bytes the snapshot itself holds per cluster: its index structures and string
    /// table, excluding the ManagedCluster objects it shares with the caller through `Arc`
    /// (the JSON text of the clusters the simulator keeps so is included).
    pub fn heap_bytes(&self) -> usize {
        let clusters: usize = self
            .clusters
            .iter()
            .map(|c| {
                std::mem::size_of::<ClusterEntry>()
                    + c.labels.heap_bytes()
                    + c.claims.heap_bytes()
                    + c.claim_list.len() * std::mem::size_of::<(Sym, Sym)>()
                    + c.taints.len() * std::mem::size_of::<CompactTaint>()
                    + match &c.source {
                        ClusterSource::Typed(_) => 0,
                        ClusterSource::Json(j) => j.heap_bytes(),
                    }
            })
            .sum();
        let names: usize = self.names.iter().map(|n| n.len() + 16).sum();
        let sets: usize = self
            .sets
            .iter()
            .map(|(k, v)| {
                k.len()
                    + 64
                    + match v {
                        SetMembers::Members(m) => m.capacity() * 4,
                        SetMembers::Invalid(e) => e.len(),
                    }
            })
            .sum();
        let scores: usize = self
            .scores
            .iter()
            .map(|(k, t)| {
                k.len()
                    + 64
                    + t.clusters.capacity() * 4
                    + t.valid_until.capacity() * std::mem::size_of::<Option<i128>>()
                    + t.ranges.capacity() * 8
                    + t.items.capacity() * 8
            })
            .sum();
        let decisions: usize = self
            .decisions
            .iter()
            .map(|d| d.slots.len() * 4 + 32)
            .sum::<usize>()
            + self.decision_counts.capacity() * 4
            + self.decisions_by_placement.len() * 96;
        clusters
            + names
            + sets
            + scores
            + decisions
            + self.symbols.heap_bytes()
            + self.terminating.len()
    }
}

/// How a cluster set selects its members.
#[derive(Debug, Clone)]
enum SetSelectorInput {
    Exclusive,
    Labels(Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>),
    /// A `selectorType` this SDK does not know, as written.
    Unknown(String),
}

/// Collects hub objects into a [`Snapshot`].
#[derive(Debug, Default)]
pub struct SnapshotBuilder {
    /// The string table to start from (prepared clusters' symbols are its).
    symbols: Option<Symbols>,
    clusters: Vec<PendingCluster>,
    sets: Vec<(String, SetSelectorInput)>,
    bindings: Vec<(String, String)>,
    scores: Vec<PendingScore>,
    decisions: Vec<(String, Option<String>, Vec<String>)>,
}

/// An AddOnPlacementScore added to a [`SnapshotBuilder`].
#[derive(Debug, Clone)]
enum PendingScore {
    Typed(ScoreInput),
    Prepared(PreparedScore),
}

impl SnapshotBuilder {
    /// Adds a ManagedCluster (an `Arc` from a reflector store is shared, not copied).
    pub fn cluster(mut self, cluster: impl Into<Arc<ManagedCluster>>) -> Self {
        self.add_cluster(cluster);
        self
    }

    /// Adds a ManagedCluster in place.
    pub fn add_cluster(&mut self, cluster: impl Into<Arc<ManagedCluster>>) -> &mut Self {
        self.clusters.push(PendingCluster::Typed(cluster.into()));
        self
    }

    /// Starts the snapshot's string table from `symbols`: what [`PreparedCluster`]s added
    /// later were computed against.
    pub(crate) fn with_symbols(&mut self, symbols: Symbols) -> &mut Self {
        self.symbols = Some(symbols);
        self
    }

    /// Adds a cluster whose entry was computed against the table given to
    /// [`SnapshotBuilder::with_symbols`].
    pub(crate) fn add_prepared(&mut self, cluster: PreparedCluster) -> &mut Self {
        self.clusters.push(PendingCluster::Prepared(cluster));
        self
    }

    /// Adds a ManagedClusterSet.
    pub fn cluster_set(mut self, set: &ManagedClusterSet) -> Self {
        self.add_cluster_set(set);
        self
    }

    /// Adds a ManagedClusterSet in place.
    pub fn add_cluster_set(&mut self, set: &ManagedClusterSet) -> &mut Self {
        let name = set.metadata.name.clone().unwrap_or_default();
        let selector = match set.spec.cluster_selector.as_ref() {
            None => SetSelectorInput::Exclusive,
            Some(s) => match &s.selector_type {
                SelectorType::ExclusiveClusterSetLabel => SetSelectorInput::Exclusive,
                SelectorType::LabelSelector => SetSelectorInput::Labels(s.label_selector.clone()),
                // A selector type this SDK does not know: the set cannot be evaluated.
                other => SetSelectorInput::Unknown(other.to_string()),
            },
        };
        self.sets.push((name, selector));
        self
    }

    /// Adds a ManagedClusterSetBinding. The scheduler reads its namespace and **name** (not
    /// `spec.clusterSet`), like upstream.
    pub fn binding(mut self, binding: &ManagedClusterSetBinding) -> Self {
        self.add_binding(binding);
        self
    }

    /// Adds a ManagedClusterSetBinding in place.
    pub fn add_binding(&mut self, binding: &ManagedClusterSetBinding) -> &mut Self {
        self.bindings.push((
            binding.metadata.namespace.clone().unwrap_or_default(),
            binding.metadata.name.clone().unwrap_or_default(),
        ));
        self
    }

    /// Adds an AddOnPlacementScore (its namespace names the cluster it scores).
    pub fn addon_score(mut self, score: &AddOnPlacementScore) -> Self {
        self.add_addon_score(score);
        self
    }

    /// Adds an AddOnPlacementScore in place.
    pub fn add_addon_score(&mut self, score: &AddOnPlacementScore) -> &mut Self {
        self.scores
            .push(PendingScore::Typed(ScoreInput::new(score)));
        self
    }

    /// Adds an AddOnPlacementScore already reduced to what the scheduler reads, its strings
    /// interned in the table [`SnapshotBuilder::with_symbols`] started the builder from.
    pub(crate) fn add_prepared_score(&mut self, score: PreparedScore) -> &mut Self {
        self.scores.push(PendingScore::Prepared(score));
        self
    }

    /// Adds an existing PlacementDecision (of any placement, in any namespace).
    pub fn placement_decision(mut self, decision: &PlacementDecision) -> Self {
        self.add_placement_decision(decision);
        self
    }

    /// Adds an existing PlacementDecision in place.
    pub fn add_placement_decision(&mut self, decision: &PlacementDecision) -> &mut Self {
        let placement = decision
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(labels::PLACEMENT))
            .cloned();
        self.decisions.push((
            decision.metadata.namespace.clone().unwrap_or_default(),
            placement,
            decision.cluster_names().map(str::to_string).collect(),
        ));
        self
    }

    /// Builds the snapshot. Clusters with the same name keep the last one added.
    pub fn build(self) -> Snapshot {
        let mut symbols = self.symbols.unwrap_or_default();
        // Interned up front so that empty taint values and tolerations compare cheaply.
        symbols.intern("");
        let set_label = symbols.intern(labels::CLUSTER_SET);

        let mut clusters = self.clusters;
        clusters.sort_by(|a, b| a.name().cmp(b.name()));
        // Keep the last of equal names: reverse-dedup keeps the first of each run.
        clusters.reverse();
        clusters.dedup_by(|a, b| a.name() == b.name());
        clusters.reverse();

        let names: Arc<[Box<str>]> = clusters.iter().map(|c| Box::from(c.name())).collect();
        let terminating: Vec<bool> = clusters
            .iter()
            .map(|c| match c {
                PendingCluster::Typed(c) => c.metadata.deletion_timestamp.is_some(),
                PendingCluster::Prepared(p) => p.terminating,
            })
            .collect();
        let entries: Vec<ClusterEntry> = clusters
            .into_iter()
            .map(|c| match c {
                PendingCluster::Typed(c) => {
                    cluster_entry(&mut symbols, &c, ClusterSource::Typed(Arc::clone(&c)))
                }
                PendingCluster::Prepared(p) => p.entry,
            })
            .collect();

        let sets = set_members(self.sets, &symbols, set_label, &entries, &terminating);
        let bindings = bindings_by_namespace(self.bindings);
        let scores = score_tables(self.scores, &mut symbols, &names);
        let (decisions, decisions_by_placement, decision_counts) =
            decision_records(self.decisions, &names);

        Snapshot {
            cel_cache: Arc::new(crate::plugins::cel::CelCache::new(entries.len())),
            symbols,
            names,
            clusters: entries,
            terminating,
            sets,
            bindings,
            scores,
            decisions,
            decisions_by_placement,
            decision_counts,
        }
    }
}

/// The members of each cluster set: by the exclusive set label, or by the set's label
/// selector (an invalid or unknown selector is the set's error).
fn set_members(
    inputs: Vec<(String, SetSelectorInput)>,
    symbols: &Symbols,
    set_label: Sym,
    entries: &[ClusterEntry],
    terminating: &[bool],
) -> BTreeMap<String, SetMembers> {
    let mut sets = BTreeMap::new();
    for (name, selector) in inputs {
        let members = match selector {
            SetSelectorInput::Exclusive => {
                let value = symbols.lookup(&name);
                let ids = member_ids(entries, terminating, |e| {
                    e.labels.get(set_label) == Some(value)
                });
                SetMembers::Members(ids)
            }
            SetSelectorInput::Labels(None) => SetMembers::Members(Vec::new()),
            // Upstream's error for a selector type it does not know.
            SetSelectorInput::Unknown(t) => {
                SetMembers::Invalid(format!("selectorType is not right: {t}"))
            }
            SetSelectorInput::Labels(Some(sel)) => {
                match SelectorSpec::from_label_selector(Some(&sel)) {
                    Ok(spec) => {
                        let compiled: CompiledSelector = spec.compile(symbols);
                        SetMembers::Members(member_ids(entries, terminating, |e| {
                            compiled.matches(&e.labels)
                        }))
                    }
                    Err(e) => SetMembers::Invalid(e),
                }
            }
        };
        sets.insert(name, members);
    }
    sets
}

/// The ManagedClusterSetBindings' set names by namespace, sorted and without repeats.
fn bindings_by_namespace(inputs: Vec<(String, String)>) -> HashMap<String, Vec<String>> {
    let mut bindings: HashMap<String, Vec<String>> = HashMap::new();
    for (ns, name) in inputs {
        bindings.entry(ns).or_default().push(name);
    }
    for names in bindings.values_mut() {
        names.sort();
        names.dedup();
    }

    bindings
}

/// The cluster with name `name` in `names` (sorted).
fn id_of(names: &[Box<str>], name: &str) -> Option<ClusterId> {
    names
        .binary_search_by(|n| (**n).cmp(name))
        .ok()
        .and_then(|i| u32::try_from(i).ok())
        .map(ClusterId)
}

/// The AddOnPlacementScores as one table per score resource, rows by cluster (a later score
/// of a cluster replaces an earlier one); scores of unknown clusters are left out.
fn score_tables(
    inputs: Vec<PendingScore>,
    symbols: &mut Symbols,
    names: &[Box<str>],
) -> HashMap<String, ScoreTable> {
    /// A score's items: names as written, or already interned in `symbols`.
    enum Items {
        Typed(Box<[(Box<str>, i32)]>),
        Prepared(Arc<[(Sym, i32)]>),
    }
    type Row = (ClusterId, Option<i128>, Items);
    let mut grouped: HashMap<String, Vec<Row>> = HashMap::new();
    let mut group = |resource: &str, row: Row| match grouped.get_mut(resource) {
        Some(rows) => rows.push(row),
        None => {
            grouped.insert(resource.to_string(), vec![row]);
        }
    };
    for pending in inputs {
        match pending {
            PendingScore::Typed(input) => {
                if let Some(id) = id_of(names, &input.namespace) {
                    let row = (id, input.valid_until, Items::Typed(input.items));
                    group(&input.resource, row);
                }
            }
            PendingScore::Prepared(p) => {
                if let Some(id) = id_of(names, symbols.resolve(p.namespace)) {
                    let row = (id, p.valid_until(), Items::Prepared(p.items));
                    group(symbols.resolve(p.resource), row);
                }
            }
        }
    }
    let mut scores: HashMap<String, ScoreTable> = HashMap::with_capacity(grouped.len());
    for (resource, mut rows) in grouped {
        // Stable sort, then keep the last of equal clusters: a later object replaces an
        // earlier one of the same name.
        rows.sort_by_key(|(id, ..)| *id);
        let mut table = ScoreTable::default();
        for (id, valid_until, items) in rows {
            let start = u32::try_from(table.items.len()).unwrap_or(u32::MAX);
            if table.clusters.last() == Some(&id) {
                table.clusters.pop();
                table.valid_until.pop();
                table.ranges.pop();
            }
            match items {
                Items::Typed(items) => table
                    .items
                    .extend(items.iter().map(|(n, v)| (symbols.intern(n), *v))),
                Items::Prepared(items) => table.items.extend(items.iter().copied()),
            }
            let end = u32::try_from(table.items.len()).unwrap_or(u32::MAX);
            table.clusters.push(id);
            table.valid_until.push(valid_until);
            table.ranges.push((start, end));
        }
        scores.insert(resource, table);
    }

    scores
}

/// A snapshot's decision records, the records of each placement (by namespace and name) and
/// the number of decisions naming each slot.
type DecisionIndex = (
    Vec<DecisionRecord>,
    HashMap<(String, String), Vec<usize>>,
    Vec<u32>,
);

/// The PlacementDecisions as slot records (clusters keep their ids; unknown names get ids
/// after them), the records of each placement, and how many decisions name each slot.
fn decision_records(
    inputs: Vec<(String, Option<String>, Vec<String>)>,
    names: &[Box<str>],
) -> DecisionIndex {
    let cluster_count = u32::try_from(names.len()).unwrap_or(u32::MAX);
    let mut phantom: HashMap<String, u32> = HashMap::new();
    let mut decisions = Vec::with_capacity(inputs.len());
    let mut decisions_by_placement: HashMap<(String, String), Vec<usize>> = HashMap::new();
    for (ns, placement, cluster_names) in inputs {
        let slots: Box<[u32]> = cluster_names
            .into_iter()
            .map(|n| match id_of(names, &n) {
                Some(id) => id.0,
                None => {
                    let next = cluster_count.saturating_add(
                        u32::try_from(phantom.len()).unwrap_or(u32::MAX - cluster_count),
                    );
                    *phantom.entry(n).or_insert(next)
                }
            })
            .collect();
        if let Some(p) = placement {
            decisions_by_placement
                .entry((ns, p))
                .or_default()
                .push(decisions.len());
        }
        decisions.push(DecisionRecord { slots });
    }
    let mut decision_counts = vec![0u32; names.len() + phantom.len()];
    for record in &decisions {
        for &slot in record.slots.iter() {
            if let Some(c) = decision_counts.get_mut(slot as usize) {
                *c += 1;
            }
        }
    }

    (decisions, decisions_by_placement, decision_counts)
}

fn member_ids(
    entries: &[ClusterEntry],
    terminating: &[bool],
    pred: impl Fn(&ClusterEntry) -> bool,
) -> Vec<ClusterId> {
    entries
        .iter()
        .enumerate()
        .filter(|(i, e)| !terminating.get(*i).copied().unwrap_or(false) && pred(e))
        .filter_map(|(i, _)| u32::try_from(i).ok().map(ClusterId))
        .collect()
}

/// What the scheduler keeps of `source`, its strings interned in `symbols`; `kept` is how
/// the entry finds the whole object.
fn cluster_entry(
    symbols: &mut impl Intern,
    source: &ManagedCluster,
    kept: ClusterSource,
) -> ClusterEntry {
    let taints = source.spec.taints.as_ref().map(|taints| {
        taints
            .iter()
            .map(|t| {
                let time = t.time_added.as_ref().map(|t| t.0.as_nanosecond());
                CompactTaint::new(symbols, &t.key, t.value.as_deref(), t.effect.clone(), time)
            })
            .collect()
    });
    let labels = source.metadata.labels.as_ref().map(|labels| {
        labels
            .iter()
            .map(|(k, v)| (symbols.intern(k), symbols.intern(v)))
            .collect()
    });
    let claims = source
        .status
        .as_ref()
        .and_then(|s| s.cluster_claims.as_ref())
        .map(|claims| {
            claims
                .iter()
                .map(|c| {
                    let mut sym = |s: Option<&String>| s.map_or(ABSENT, |s| symbols.intern(s));
                    (sym(c.name.as_ref()), sym(c.value.as_ref()))
                })
                .collect()
        });
    let parts = EntryParts {
        labels,
        claims,
        taints,
    };
    entry_from_parts(symbols, source, parts, kept)
}

/// A cluster's labels, claims and taints, interned (each `None` when unset): read from the
/// typed object, or taken out of its text while it was decoded.
#[derive(Debug, Default)]
pub(crate) struct EntryParts {
    /// `metadata.labels` as (key, value) pairs; for a repeated key the last counts.
    pub(crate) labels: Option<Vec<(Sym, Sym)>>,
    /// `status.clusterClaims` as (name, value), [`ABSENT`] for a missing field.
    pub(crate) claims: Option<Vec<(Sym, Sym)>>,
    /// `spec.taints`.
    pub(crate) taints: Option<Vec<CompactTaint>>,
}

impl CompactTaint {
    /// A taint of `key`, `value`, `effect`, added at `time` (nanoseconds since the Unix
    /// epoch), its strings interned in `symbols`.
    pub(crate) fn new(
        symbols: &mut impl Intern,
        key: &str,
        value: Option<&str>,
        effect: TaintEffect,
        time: Option<i128>,
    ) -> Self {
        CompactTaint {
            key: symbols.intern(key),
            value: symbols.intern(value.unwrap_or_default()),
            effect,
            time_added: time.unwrap_or(GO_ZERO_TIME_NANOS),
            has_value: value.is_some(),
            has_time: time.is_some(),
        }
    }
}

/// [`cluster_entry`] with the labels, claims and taints given rather than read from
/// `source`.
fn entry_from_parts(
    symbols: &mut impl Intern,
    source: &ManagedCluster,
    parts: EntryParts,
    kept: ClusterSource,
) -> ClusterEntry {
    let EntryParts {
        labels,
        claims,
        taints,
    } = parts;
    let has_labels = labels.is_some();
    let has_claims = claims.is_some();
    let has_taints = taints.is_some();
    let labels = SymMap::from_pairs(labels.unwrap_or_default());
    let claim_list: Arc<[(Sym, Sym)]> = claims.map_or_else(|| Arc::from([]), Arc::from);
    let status = source.status.as_ref();
    let empty = symbols.intern("");
    let or_empty = |s: Sym| if s == ABSENT { empty } else { s };
    let claims = SymMap::from_pairs(
        claim_list
            .iter()
            .map(|&(n, v)| (or_empty(n), or_empty(v)))
            .collect(),
    );
    let taints: Arc<[CompactTaint]> = taints.map_or_else(|| Arc::from([]), Arc::from);
    let resource = |name: &str| -> Option<f64> {
        let status = status?;
        let allocatable = status.allocatable.as_ref()?.get(name)?;
        // Upstream only counts a resource that has both allocatable and capacity.
        status.capacity.as_ref()?.get(name)?;
        approximate_f64(&allocatable.0)
    };
    ClusterEntry {
        cpu: resource(cluster_consts::RESOURCE_CPU),
        memory: resource(cluster_consts::RESOURCE_MEMORY),
        has_labels,
        has_claims,
        has_taints,
        has_name: source.metadata.name.is_some(),
        labels,
        claims,
        claim_list,
        taints,
        source: kept,
    }
}
