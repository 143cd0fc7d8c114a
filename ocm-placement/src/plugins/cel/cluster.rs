//! The `managedCluster` variable: built part by part, only where an expression reads it, and
//! cached per snapshot.
//!
//! Converting a whole ManagedCluster to a CEL value (through its JSON form) costs several
//! microseconds, far more than evaluating a typical selector. Most expressions read a few
//! fixed paths (`managedCluster.metadata.labels["env"]`, `managedCluster.status.clusterClaims`,
//! …): chains of selections and constant string indexes. So each compiled expression has
//! every such chain replaced by a hidden identifier naming its path (see [`rewrite_reads`]),
//! and the resolver answers those identifiers with values built for that path alone: the
//! common paths straight from the typed object, any other one by navigating the object's JSON
//! form. The whole object is converted only when an expression uses `managedCluster` other than
//! through such a chain (for example `has(managedCluster.metadata)` or
//! `type(managedCluster)`).
//!
//! The answers are the values the same chains would produce on the whole object, so results
//! do not change; where a path is absent the resolver answers nothing, and the identifier is
//! undeclared: an evaluation error, as the failing lookup on the whole object would be.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use cel::common::ast::{Expr, IdedExpr, LiteralValue, operators};
use cel::common::types::{CelInt, CelList, CelMap, CelMapKey, CelString};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use ocm_api::cluster::v1::{ManagedCluster, ManagedClusterClaim};

use super::{SCORES_VARIABLE, VARIABLE, entry_exprs, entry_exprs_mut, json_to_val};
use crate::snapshot::ClusterRef;

/// A selection path below `managedCluster` (`["metadata", "labels"]`); empty for the whole
/// object.
pub(crate) type ReadPath = Vec<String>;

/// A part of `managedCluster` an expression reads, cached per cluster.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Read {
    /// The value at a path (the whole object for the empty path).
    Path(ReadPath),
    /// What a comprehension over the value at a path iterates over instead: for a list, its
    /// positions `[0, 1, …]`; for any other value, the value itself.
    Positions(ReadPath),
    /// For a comprehension over the value at a path, the field of its items, by position: for
    /// a list, the entries named so of its items that are maps having it (a list when all
    /// are, else a map from the position); for any other value, an empty map.
    Field(ReadPath, String),
}

/// One lazily built value per cluster; `None` inside when the path is absent.
type Slot = OnceLock<Option<Arc<dyn Val>>>;

/// Values of one path for every cluster of a snapshot.
type Column = Arc<ColumnData>;

/// Values interned by a column: their count, and by hash of their strings, the strings and
/// the value.
type Interned = (
    usize,
    HashMap<u64, Vec<(Vec<Option<String>>, Arc<dyn Val>)>>,
);

/// Most values a column interns (see [`ColumnData::intern`]).
const INTERNED_PER_COLUMN: usize = 1024;

/// The values of one read for every cluster, with the values built from strings interned:
/// clusters whose strings are equal share one value (typically a label value such as `prod`,
/// or the claim names), which stays hot in the CPU cache and is built once.
pub(crate) struct ColumnData {
    slots: Box<[Slot]>,
    /// (how many, hash of the strings → (the strings, the value built from them)).
    interned: Mutex<Interned>,
}

impl ColumnData {
    fn new(clusters: usize) -> Self {
        ColumnData {
            slots: (0..clusters).map(|_| OnceLock::new()).collect(),
            interned: Mutex::new((0, HashMap::new())),
        }
    }

    /// The value `build` makes of `strings`: shared with the clusters of the same strings, as
    /// long as fewer than [`INTERNED_PER_COLUMN`] values are interned. `build` must depend on
    /// `strings` alone.
    fn intern(
        &self,
        strings: &[Option<&str>],
        build: impl FnOnce() -> Arc<dyn Val>,
    ) -> Arc<dyn Val> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        strings.hash(&mut hasher);
        let hash = hasher.finish();
        let mut guard = self
            .interned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (count, interned) = &mut *guard;
        let same = |(k, _): &&(Vec<Option<String>>, Arc<dyn Val>)| {
            k.iter().map(Option::as_deref).eq(strings.iter().copied())
        };
        if let Some((_, value)) = interned.get(&hash).and_then(|b| b.iter().find(same)) {
            return Arc::clone(value);
        }
        let value = build();
        if *count < INTERNED_PER_COLUMN {
            *count += 1;
            let key = strings.iter().map(|s| s.map(str::to_string)).collect();
            interned
                .entry(hash)
                .or_default()
                .push((key, Arc::clone(&value)));
        }
        value
    }
}

/// Per-snapshot cache of the CEL values of clusters, one column per path read by some
/// expression. Shared by clones of the snapshot; filled on first use.
pub(crate) struct CelCache {
    clusters: usize,
    columns: Mutex<HashMap<Read, Column>>,
}

impl CelCache {
    /// An empty cache for `clusters` clusters.
    pub(crate) fn new(clusters: usize) -> Self {
        CelCache {
            clusters,
            columns: Mutex::new(HashMap::new()),
        }
    }

    /// The column of `read`, created empty on first request.
    fn column(&self, read: &Read) -> Column {
        let mut columns = self
            .columns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(column) = columns.get(read) {
            return Arc::clone(column);
        }
        let column: Column = Arc::new(ColumnData::new(self.clusters));
        columns.insert(read.clone(), Arc::clone(&column));
        column
    }
}

impl fmt::Debug for CelCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paths = self.columns.lock().map(|c| c.len()).unwrap_or_default();
        f.debug_struct("CelCache")
            .field("clusters", &self.clusters)
            .field("paths", &paths)
            .finish()
    }
}

/// The paths one placement's expressions read, with their cache columns; built once per
/// schedule.
pub(crate) struct ClusterReads {
    /// (hidden identifier, path, column), for non-empty paths.
    parts: Vec<(String, Read, Column)>,
    /// The whole object's column, when some expression needs it.
    whole: Option<Column>,
    /// What `managedCluster` stands for when no expression needs the whole object: it is then
    /// only ever the (ignored) receiver of `scores()`.
    placeholder: Box<dyn Val>,
    /// The lists `[0, …, n - 1]` of the short lengths `n`, shared by the clusters' positions.
    positions: Vec<Arc<dyn Val>>,
}

/// Up to which length positions lists are shared.
const SHARED_POSITIONS: usize = 16;

impl ClusterReads {
    /// Looks the columns of `paths` up in `cache`.
    pub(crate) fn new<'p>(reads: impl IntoIterator<Item = &'p Read>, cache: &CelCache) -> Self {
        let mut parts = Vec::new();
        let mut whole = None;
        for read in reads {
            match read {
                Read::Path(path) if path.is_empty() => whole = Some(cache.column(read)),
                _ => parts.push((read_name(read), read.clone(), cache.column(read))),
            }
        }
        let positions = if parts
            .iter()
            .any(|(_, r, _)| matches!(r, Read::Positions(_)))
        {
            (0..SHARED_POSITIONS).map(positions_list).collect()
        } else {
            Vec::new()
        };
        ClusterReads {
            parts,
            whole,
            placeholder: Box::new(CelMap::from(HashMap::new())),
            positions,
        }
    }
}

/// What a CEL evaluation needs of one cluster; serves `managedCluster` and its read paths by
/// reference from the snapshot's cache.
pub(crate) struct ClusterInput<'a> {
    /// The paths and their columns.
    pub(crate) reads: &'a ClusterReads,
    /// The cluster's index in the snapshot (its row in every column).
    pub(crate) index: usize,
    /// The cluster (its object decoded only when a read needs it).
    pub(crate) source: ClusterRef<'a>,
    /// resource name → list of `{name, value}`, for `scores()`.
    pub(crate) scores: ScoresInput<'a>,
}

/// The AddOn scores of one cluster as the interpreter's `scores()` reads them.
pub(crate) enum ScoresInput<'a> {
    /// Given (or none).
    Value(Option<Box<dyn Val>>),
    /// Built from the snapshot's tables the first time `scores()` asks.
    Lazy {
        snapshot: &'a crate::snapshot::Snapshot,
        id: crate::snapshot::ClusterId,
        value: OnceLock<Box<dyn Val>>,
    },
}

impl ScoresInput<'_> {
    fn get(&self) -> Option<&dyn Val> {
        match self {
            ScoresInput::Value(v) => v.as_deref(),
            ScoresInput::Lazy {
                snapshot,
                id,
                value,
            } => Some(
                value
                    .get_or_init(|| super::scores_value(snapshot, *id))
                    .as_ref(),
            ),
        }
    }
}

impl ClusterReads {
    /// The value of `read` for the cluster at `index` (`source`), built on first use: `None`
    /// when no expression of the schedule reads it, `Some(None)` when the cluster has no value
    /// there.
    pub(crate) fn value<'s>(
        &'s self,
        read: &Read,
        index: usize,
        source: ClusterRef<'_>,
    ) -> Option<Option<&'s (dyn Val + 'static)>> {
        if matches!(read, Read::Path(p) if p.is_empty()) {
            let slot = self.whole.as_ref()?.slots.get(index)?;
            return Some(
                slot.get_or_init(|| source.object().map(|c| Arc::from(whole_value(c))))
                    .as_deref(),
            );
        }
        let (_, _, column) = self.parts.iter().find(|(_, r, _)| r == read)?;
        let slot = column.slots.get(index)?;
        Some(
            slot.get_or_init(|| read_value(source.object()?, read, &self.positions, column))
                .as_deref(),
        )
    }
}

impl VariableResolver for ClusterInput<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        if variable.starts_with(READ_PREFIX) {
            let (_, read, column) = self
                .reads
                .parts
                .iter()
                .find(|(name, ..)| name == variable)?;
            let slot = column.slots.get(self.index)?;
            return slot
                .get_or_init(|| {
                    read_value(self.source.object()?, read, &self.reads.positions, column)
                })
                .as_deref()
                .map(CowVal::Borrowed);
        }
        match variable {
            VARIABLE => match &self.reads.whole {
                Some(column) => column
                    .slots
                    .get(self.index)?
                    .get_or_init(|| self.source.object().map(|c| Arc::from(whole_value(c))))
                    .as_deref()
                    .map(CowVal::Borrowed),
                None => Some(CowVal::Borrowed(self.reads.placeholder.as_ref())),
            },
            SCORES_VARIABLE => self.scores.get().map(CowVal::Borrowed),
            _ => None,
        }
    }
}

/// The value of `read` for `cluster`, `None` when absent; `shared` holds the short positions
/// lists.
fn read_value(
    cluster: &ManagedCluster,
    read: &Read,
    shared: &[Arc<dyn Val>],
    column: &ColumnData,
) -> Option<Arc<dyn Val>> {
    let positions = |len: usize| {
        shared
            .get(len)
            .cloned()
            .unwrap_or_else(|| positions_list(len))
    };
    match read {
        Read::Path(path) if path.is_empty() => Some(Arc::from(whole_value(cluster))),
        Read::Path(path) => path_value_shared(cluster, path, column),
        Read::Positions(path) => {
            if is_claims(path) {
                let claims = cluster.status.as_ref()?.cluster_claims.as_ref()?;
                return Some(positions(claims.len()));
            }
            let value = path_value(cluster, path)?;
            Some(match value.downcast_ref::<CelList<'_>>() {
                Some(list) => positions(list.inner().len()),
                None => Arc::from(value),
            })
        }
        Read::Field(path, field) => {
            if is_claims(path) {
                let claims = cluster.status.as_ref()?.cluster_claims.as_ref()?;
                fn entry<'c>(c: &'c ManagedClusterClaim, field: &str) -> Option<&'c str> {
                    match field {
                        "name" => c.name.as_deref(),
                        "value" => c.value.as_deref(),
                        _ => None,
                    }
                }
                if claims.iter().all(|c| entry(c, field).is_some()) {
                    let items: Vec<Box<dyn Val>> = claims
                        .iter()
                        .filter_map(|c| entry(c, field))
                        .map(string)
                        .collect();
                    return Some(Arc::new(CelList::from(items)));
                }
                return Some(by_position(
                    claims.iter().map(|c| entry(c, field).map(string)),
                ));
            }
            let value = path_value(cluster, path)?;
            Some(match value.downcast_ref::<CelList<'_>>() {
                Some(list) => by_position(
                    list.inner()
                        .iter()
                        .map(|item| descend(item.as_ref(), field)),
                ),
                None => Arc::new(CelMap::from(HashMap::new())),
            })
        }
    }
}

/// [`path_value`], built in place for the string values read most.
fn path_value_shared(
    cluster: &ManagedCluster,
    path: &[String],
    column: &ColumnData,
) -> Option<Arc<dyn Val>> {
    let shared = |s: &str| {
        column.intern(&[Some(s)], || {
            Arc::new(CelString::from(s.to_string())) as Arc<dyn Val>
        })
    };
    let status = cluster.status.as_ref();
    match path {
        [a, b] if a == "metadata" && b == "name" => cluster.metadata.name.as_deref().map(shared),
        [a, b, key] if a == "metadata" && b == "labels" => cluster
            .metadata
            .labels
            .as_ref()
            .and_then(|m| m.get(key))
            .map(|v| shared(v)),
        [a, b, key] if a == "metadata" && b == "annotations" => cluster
            .metadata
            .annotations
            .as_ref()
            .and_then(|m| m.get(key))
            .map(|v| shared(v)),
        [a, b, key] if a == "status" && b == "allocatable" => status
            .and_then(|s| s.allocatable.as_ref())
            .and_then(|m| m.get(key))
            .map(|q| shared(&q.0)),
        [a, b, key] if a == "status" && b == "capacity" => status
            .and_then(|s| s.capacity.as_ref())
            .and_then(|m| m.get(key))
            .map(|q| shared(&q.0)),
        _ => path_value(cluster, path).map(Arc::from),
    }
}

/// Whether `path` is `status.clusterClaims`.
fn is_claims(path: &[String]) -> bool {
    matches!(path, [a, b] if a == "status" && b == "clusterClaims")
}

/// The list `[0, 1, …, len - 1]`.
fn positions_list(len: usize) -> Arc<dyn Val> {
    let items: Vec<Box<dyn Val>> = (0..len)
        .map(|i| Box::new(CelInt::from(i64::try_from(i).unwrap_or(i64::MAX))) as Box<dyn Val>)
        .collect();
    Arc::new(CelList::from(items))
}

/// Entries by position: a list when all are present, else a map from the positions of those
/// present.
fn by_position(entries: impl Iterator<Item = Option<Box<dyn Val>>>) -> Arc<dyn Val> {
    let entries: Vec<Option<Box<dyn Val>>> = entries.collect();
    if entries.iter().all(Option::is_some) {
        return Arc::new(CelList::from(
            entries.into_iter().flatten().collect::<Vec<_>>(),
        ));
    }
    let map: HashMap<CelMapKey<'static>, Box<dyn Val>> = entries
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| Some((CelMapKey::Int(CelInt::from(i64::try_from(i).ok()?)), v?)))
        .collect();
    Arc::new(CelMap::from(map))
}

/// The whole cluster as a CEL value, through its JSON form.
pub(crate) fn whole_value(cluster: &ManagedCluster) -> Box<dyn Val> {
    json_to_val(&serde_json::to_value(cluster).unwrap_or(serde_json::Value::Null))
}

/// The value at `path` of the cluster's JSON form, `None` when absent.
pub(crate) fn path_value(cluster: &ManagedCluster, path: &[String]) -> Option<Box<dyn Val>> {
    let segments: Vec<&str> = path.iter().map(String::as_str).collect();
    let status = cluster.status.as_ref();
    match segments.as_slice() {
        ["metadata", "name"] => cluster.metadata.name.as_deref().map(string),
        ["metadata", "namespace"] => cluster.metadata.namespace.as_deref().map(string),
        ["metadata", "labels"] => cluster
            .metadata
            .labels
            .as_ref()
            .map(|m| string_map(m.iter().map(|(k, v)| (k.as_str(), v.as_str())))),
        ["metadata", "annotations"] => cluster
            .metadata
            .annotations
            .as_ref()
            .map(|m| string_map(m.iter().map(|(k, v)| (k.as_str(), v.as_str())))),
        ["status", "clusterClaims"] => status
            .and_then(|s| s.cluster_claims.as_ref())
            .map(|claims| claims_value(claims)),
        ["status", "allocatable"] => status
            .and_then(|s| s.allocatable.as_ref())
            .map(|m| string_map(m.iter().map(|(k, q)| (k.as_str(), q.0.as_str())))),
        ["status", "capacity"] => status
            .and_then(|s| s.capacity.as_ref())
            .map(|m| string_map(m.iter().map(|(k, q)| (k.as_str(), q.0.as_str())))),
        ["metadata", "labels", key] => cluster
            .metadata
            .labels
            .as_ref()
            .and_then(|m| m.get(*key))
            .map(|v| string(v)),
        ["metadata", "annotations", key] => cluster
            .metadata
            .annotations
            .as_ref()
            .and_then(|m| m.get(*key))
            .map(|v| string(v)),
        ["status", "allocatable", key] => status
            .and_then(|s| s.allocatable.as_ref())
            .and_then(|m| m.get(*key))
            .map(|q| string(&q.0)),
        ["status", "capacity", key] => status
            .and_then(|s| s.capacity.as_ref())
            .and_then(|m| m.get(*key))
            .map(|q| string(&q.0)),
        [a, b, _, ..] => {
            // Below a path built directly: descend from it.
            let head = [a.to_string(), b.to_string()];
            if is_direct(&head) {
                let mut value = path_value(cluster, &head)?;
                for field in path.get(2..).unwrap_or_default() {
                    value = descend(value.as_ref(), field)?;
                }
                Some(value)
            } else {
                generic_path_value(cluster, path)
            }
        }
        _ => generic_path_value(cluster, path),
    }
}

/// Whether `path_value` builds `path` straight from the typed object.
fn is_direct(path: &[String; 2]) -> bool {
    matches!(
        [path[0].as_str(), path[1].as_str()],
        ["metadata", "name" | "namespace" | "labels" | "annotations"]
            | ["status", "clusterClaims" | "allocatable" | "capacity"]
    )
}

/// The entry `field` of a map value; `None` for a missing key or a value that is no map.
fn descend(value: &(dyn Val + 'static), field: &str) -> Option<Box<dyn Val>> {
    let map = value.downcast_ref::<CelMap<'_>>()?;
    let key = CelString::from(field);
    map.as_indexer()?
        .get(&key)
        .ok()
        .map(|v| v.as_ref().clone_as_boxed())
}

/// The value at `path`, found in the JSON form of the whole object.
fn generic_path_value(cluster: &ManagedCluster, path: &[String]) -> Option<Box<dyn Val>> {
    let json = serde_json::to_value(cluster).ok()?;
    let mut at = &json;
    for segment in path {
        at = at.as_object()?.get(segment)?;
    }
    Some(json_to_val(at))
}

fn string(s: &str) -> Box<dyn Val> {
    Box::new(CelString::from(s.to_string()))
}

fn string_map<'s>(entries: impl Iterator<Item = (&'s str, &'s str)>) -> Box<dyn Val> {
    let map: HashMap<CelMapKey<'static>, Box<dyn Val>> = entries
        .map(|(k, v)| (CelMapKey::String(CelString::from(k.to_string())), string(v)))
        .collect();
    Box::new(CelMap::from(map))
}

fn claims_value(claims: &[ManagedClusterClaim]) -> Box<dyn Val> {
    let items: Vec<Box<dyn Val>> = claims
        .iter()
        .map(|c| {
            // The keys are constants: borrowed, not copied.
            let map: HashMap<CelMapKey<'static>, Box<dyn Val>> =
                [("name", c.name.as_deref()), ("value", c.value.as_deref())]
                    .into_iter()
                    .filter_map(|(k, v)| {
                        v.map(|v| (CelMapKey::String(CelString::from(k)), string(v)))
                    })
                    .collect();
            Box::new(CelMap::from(map)) as Box<dyn Val>
        })
        .collect();
    Box::new(CelList::from(items))
}

/// Prefix of the hidden identifiers that stand for read paths in rewritten expressions (not a
/// valid CEL identifier, so expressions cannot name them).
const READ_PREFIX: &str = "@ocm_read:";

/// The hidden identifier of `read`: its kind and its segments length-prefixed, so that
/// distinct reads, whatever their keys, have distinct names.
pub(crate) fn read_name(read: &Read) -> String {
    let (kind, path, field) = match read {
        Read::Path(path) => ('p', path, None),
        Read::Positions(path) => ('i', path, None),
        Read::Field(path, field) => ('f', path, Some(field)),
    };
    let mut name = String::from(READ_PREFIX);
    name.push(kind);
    for segment in path.iter().chain(field) {
        name.push_str(&segment.len().to_string());
        name.push(':');
        name.push_str(segment);
    }
    name
}

/// Adds to `out` the paths below `managedCluster` that `e` reads; the empty path when it uses
/// the variable in any other way. `bound` holds the comprehension variables in scope (which
/// shadow the cluster).
#[cfg(test)]
pub(crate) fn collect_reads(e: &IdedExpr, bound: &mut Vec<String>, out: &mut BTreeSet<Read>) {
    rewrite_reads(&mut e.clone(), bound, out);
}

/// Replaces in `e` every read of a path below `managedCluster` (a chain of selections and
/// constant string indexes, `managedCluster.metadata.labels["env"]`) by the hidden identifier
/// of that path (see [`read_name`]), which the resolver answers from the cache, and adds the
/// paths to `out`; adds the empty path when `e` uses the variable in any other way. `bound`
/// holds the comprehension variables in scope (which shadow the cluster).
///
/// On the JSON form of a cluster, every value below the root is a map, list or scalar, and
/// selecting a field of a map is looking its key up, like indexing it with a string: both
/// give the entry or an error, so a path does not record which of the two reached a key. The
/// identifier of an absent path is undeclared, an error like the failing lookup it replaces
/// (and the result of a selector only distinguishes errors from values).
pub(crate) fn rewrite_reads(e: &mut IdedExpr, bound: &mut Vec<String>, out: &mut BTreeSet<Read>) {
    if let Some(path) = cluster_chain(e, bound).filter(|p| !p.is_empty()) {
        let read = Read::Path(path);
        e.expr = Expr::Ident(read_name(&read));
        out.insert(read);
        return;
    }
    match &mut e.expr {
        Expr::Unspecified | Expr::Literal(_) => {}
        Expr::Ident(name) => {
            if is_cluster(name, bound) {
                out.insert(Read::Path(Vec::new()));
            }
        }
        // `has(x.f)` resolves `x` and tests `f`; a plain selection that is no chain has no
        // chain for operand either.
        Expr::Select(s) => rewrite_reads(&mut s.operand, bound, out),
        Expr::Call(call) => {
            if let Some(t) = &mut call.target {
                // `managedCluster.scores(…)` ignores its receiver.
                let ignored = call.func_name == "scores"
                    && matches!(&t.expr, Expr::Ident(n) if is_cluster(n, bound));
                if !ignored {
                    rewrite_reads(t, bound, out);
                }
            }
            for a in &mut call.args {
                rewrite_reads(a, bound, out);
            }
        }
        Expr::Comprehension(c) => {
            simplify_exists_condition(c);
            if !rewrite_by_position(c, bound, out) {
                rewrite_reads(&mut c.iter_range, bound, out);
            }
            rewrite_reads(&mut c.accu_init, bound, out);
            let depth = bound.len();
            bound.push(c.iter_var.clone());
            if let Some(v2) = &c.iter_var2 {
                bound.push(v2.clone());
            }
            bound.push(c.accu_var.clone());
            rewrite_reads(&mut c.loop_cond, bound, out);
            rewrite_reads(&mut c.loop_step, bound, out);
            rewrite_reads(&mut c.result, bound, out);
            bound.truncate(depth);
        }
        Expr::List(l) => l
            .elements
            .iter_mut()
            .for_each(|x| rewrite_reads(x, bound, out)),
        Expr::Map(m) => entry_exprs_mut(&mut m.entries).for_each(|x| rewrite_reads(x, bound, out)),
        Expr::Struct(s) => {
            entry_exprs_mut(&mut s.entries).for_each(|x| rewrite_reads(x, bound, out))
        }
    }
}

/// Replaces the loop condition `@not_strictly_false(!@result)` of an `exists()` (a
/// comprehension whose accumulator starts `false` and steps as `@result || …`) by
/// `@result ? false : true`, which the interpreter evaluates without allocating (its `!`
/// prepares an error message on every call). The two agree on a bool, and the accumulator is
/// one: the literal `false`, then only ever a result of `||`, a bool (a failing step leaves it
/// unchanged).
fn simplify_exists_condition(c: &mut cel::common::ast::ComprehensionExpr) {
    let accu = c.accu_var.as_str();
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if n == accu);
    let starts_false = matches!(&c.accu_init.expr,
        Expr::Literal(LiteralValue::Boolean(b)) if !*b.inner());
    let steps_or = matches!(&c.loop_step.expr, Expr::Call(call)
        if call.func_name == operators::LOGICAL_OR
            && call.target.is_none()
            && call.args.len() == 2
            && is_accu(&call.args[0]));
    let Expr::Call(cond) = &mut c.loop_cond.expr else {
        return;
    };
    let negated = cond.func_name == operators::NOT_STRICTLY_FALSE
        && cond.target.is_none()
        && matches!(cond.args.as_slice(), [not] if matches!(&not.expr, Expr::Call(n)
            if n.func_name == operators::LOGICAL_NOT
                && n.target.is_none()
                && matches!(n.args.as_slice(), [a] if is_accu(a))));
    if !(starts_false && steps_or && negated) {
        return;
    }
    let id = c.loop_cond.id;
    let literal = |b: bool| IdedExpr {
        id,
        expr: Expr::Literal(LiteralValue::Boolean(b.into())),
    };
    *cond = cel::common::ast::CallExpr {
        func_name: operators::CONDITIONAL.to_string(),
        target: None,
        args: vec![
            IdedExpr {
                id,
                expr: Expr::Ident(c.accu_var.clone()),
            },
            literal(false),
            literal(true),
        ],
    };
}

/// Rewrites a comprehension over a path below `managedCluster` whose variable is only ever
/// used to select a field (`claims.exists(c, c.name == "a" && c.value == "b")`) to iterate
/// over the positions of the items instead, reading `c.f` as the entry at position `c` of the
/// items' fields `f` (see [`Read::Positions`], [`Read::Field`]): no item is copied into the
/// variable. A field selection on an item that is no map or lacks the field is an error, and
/// so is the lookup of a position without entry; a comprehension over a value that is no list
/// iterates over the same keys, whose field selections, like their lookups in the empty map,
/// are errors. Returns whether it rewrote `c` (its range then needs no other rewriting).
fn rewrite_by_position(
    c: &mut cel::common::ast::ComprehensionExpr,
    bound: &[String],
    out: &mut BTreeSet<Read>,
) -> bool {
    if c.iter_var2.is_some() || c.accu_var == c.iter_var {
        return false;
    }
    let Some(path) = cluster_chain(&c.iter_range, bound).filter(|p| !p.is_empty()) else {
        return false;
    };
    let mut fields = BTreeSet::new();
    let var = c.iter_var.as_str();
    if ![&c.loop_cond, &c.loop_step, &c.result]
        .into_iter()
        .all(|e| only_fields_of(e, var, &mut fields))
    {
        return false;
    }
    let var = c.iter_var.clone();
    for e in [&mut c.loop_cond, &mut c.loop_step, &mut c.result] {
        fields_by_position(e, &var, &path);
    }
    let positions = Read::Positions(path.clone());
    c.iter_range.expr = Expr::Ident(read_name(&positions));
    out.insert(positions);
    for field in fields {
        out.insert(Read::Field(path.clone(), field));
    }
    true
}

/// Whether `e` uses `var` only as the operand of plain field selections, which it adds to
/// `fields`; false too when an inner comprehension binds the same name.
fn only_fields_of(e: &IdedExpr, var: &str, fields: &mut BTreeSet<String>) -> bool {
    fn all<'e>(
        xs: impl IntoIterator<Item = &'e IdedExpr>,
        var: &str,
        fields: &mut BTreeSet<String>,
    ) -> bool {
        xs.into_iter().all(|x| only_fields_of(x, var, fields))
    }
    match &e.expr {
        Expr::Unspecified | Expr::Literal(_) => true,
        Expr::Ident(name) => name != var,
        Expr::Select(s) => match &s.operand.expr {
            Expr::Ident(name) if name == var => {
                if !s.test {
                    fields.insert(s.field.clone());
                }
                !s.test
            }
            _ => only_fields_of(&s.operand, var, fields),
        },
        Expr::Call(call) => all(
            call.target.iter().map(|t| &**t).chain(call.args.iter()),
            var,
            fields,
        ),
        Expr::Comprehension(c) => {
            let rebinds =
                c.iter_var == var || c.accu_var == var || c.iter_var2.as_deref() == Some(var);
            !rebinds
                && all(
                    [
                        &c.iter_range,
                        &c.accu_init,
                        &c.loop_cond,
                        &c.loop_step,
                        &c.result,
                    ],
                    var,
                    fields,
                )
        }
        Expr::List(l) => all(&l.elements, var, fields),
        Expr::Map(m) => all(entry_exprs(&m.entries), var, fields),
        Expr::Struct(st) => all(entry_exprs(&st.entries), var, fields),
    }
}

/// Replaces in `e` every `var.f` by the entry at position `var` of the field `f` of the items
/// at `path`.
fn fields_by_position(e: &mut IdedExpr, var: &str, path: &ReadPath) {
    if let Expr::Select(s) = &e.expr
        && !s.test
        && matches!(&s.operand.expr, Expr::Ident(name) if name == var)
    {
        let field = Read::Field(path.clone(), s.field.clone());
        let id = e.id;
        e.expr = Expr::Call(cel::common::ast::CallExpr {
            func_name: operators::INDEX.to_string(),
            target: None,
            args: vec![
                IdedExpr {
                    id,
                    expr: Expr::Ident(read_name(&field)),
                },
                IdedExpr {
                    id,
                    expr: Expr::Ident(var.to_string()),
                },
            ],
        });
        return;
    }
    match &mut e.expr {
        Expr::Unspecified | Expr::Literal(_) | Expr::Ident(_) => {}
        Expr::Select(s) => fields_by_position(&mut s.operand, var, path),
        Expr::Call(call) => {
            if let Some(t) = &mut call.target {
                fields_by_position(t, var, path);
            }
            for a in &mut call.args {
                fields_by_position(a, var, path);
            }
        }
        Expr::Comprehension(c) => {
            for x in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                fields_by_position(x, var, path);
            }
        }
        Expr::List(l) => l
            .elements
            .iter_mut()
            .for_each(|x| fields_by_position(x, var, path)),
        Expr::Map(m) => {
            entry_exprs_mut(&mut m.entries).for_each(|x| fields_by_position(x, var, path))
        }
        Expr::Struct(st) => {
            entry_exprs_mut(&mut st.entries).for_each(|x| fields_by_position(x, var, path))
        }
    }
}

fn is_cluster(name: &str, bound: &[String]) -> bool {
    name == VARIABLE && !bound.iter().any(|b| b == name)
}

/// The keys of a chain of plain selections and constant string indexes
/// `managedCluster.a["b"]…` (the cluster itself giving the empty path); `None` when `e` is not
/// such a chain.
fn cluster_chain(e: &IdedExpr, bound: &[String]) -> Option<ReadPath> {
    let mut fields = Vec::new();
    let mut at = e;
    loop {
        match &at.expr {
            Expr::Select(s) if !s.test => {
                fields.push(s.field.clone());
                at = &s.operand;
            }
            Expr::Call(call) if call.func_name == operators::INDEX && call.target.is_none() => {
                match call.args.as_slice() {
                    [operand, key] => match &key.expr {
                        Expr::Literal(LiteralValue::String(k)) => {
                            fields.push(k.inner().to_string());
                            at = operand;
                        }
                        _ => return None,
                    },
                    _ => return None,
                }
            }
            Expr::Ident(name) if is_cluster(name, bound) => {
                fields.reverse();
                return Some(fields);
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cel::Value;
    use serde_json::json;

    fn to_value(v: Option<Box<dyn Val>>) -> Option<Value> {
        v.map(|v| Value::try_from(v.as_ref()).expect("built-in value"))
    }

    fn clusters() -> Vec<ManagedCluster> {
        [
            json!({"metadata": {"name": "c1", "labels": {"a": "1", "b": ""},
                "annotations": {"x": "y"}},
              "spec": {"hubAcceptsClient": true},
              "status": {"clusterClaims": [{"name": "n", "value": "v"}, {"name": "only-name"}, {}],
                         "allocatable": {"cpu": "4", "memory": "8Gi"},
                         "capacity": {"cpu": "8"}, "version": {"kubernetes": "v1.30.0"}}}),
            json!({"metadata": {"name": "c2", "labels": {}}, "status": {}}),
            json!({"metadata": {}}),
        ]
        .into_iter()
        .map(|j| serde_json::from_value(j).expect("cluster"))
        .collect()
    }

    #[test]
    fn fast_paths_equal_the_json_form() {
        let paths = [
            "metadata.name",
            "metadata.namespace",
            "metadata.labels",
            "metadata.annotations",
            "status.clusterClaims",
            "status.allocatable",
            "status.capacity",
            "status.version",
            "metadata",
            "spec.hubAcceptsClient",
            "metadata.labels.a",
            "metadata.labels.zz",
            "status.allocatable.cpu",
            "status.clusterClaims.name",
            "metadata.name.x",
        ];
        for cluster in clusters() {
            for p in paths {
                let path: ReadPath = p.split('.').map(str::to_string).collect();
                assert_eq!(
                    to_value(path_value(&cluster, &path)),
                    to_value(generic_path_value(&cluster, &path)),
                    "{p} of {:?}",
                    cluster.metadata.name
                );
                assert_eq!(
                    shared_value(read_value(
                        &cluster,
                        &Read::Path(path.clone()),
                        &[],
                        &ColumnData::new(0)
                    )),
                    to_value(generic_path_value(&cluster, &path)),
                    "{p} of {:?}",
                    cluster.metadata.name
                );
            }
        }
    }

    fn shared_value(v: Option<Arc<dyn Val>>) -> Option<Value> {
        v.map(|v| Value::try_from(v.as_ref()).expect("built-in value"))
    }

    #[test]
    fn claims_by_position_equal_the_json_form() {
        let claims = path("status.clusterClaims");
        let shared: Vec<Arc<dyn Val>> = (0..2).map(positions_list).collect();
        // One column per field for all the clusters, so values are interned across them.
        let interned: Vec<ColumnData> = (0..3).map(|_| ColumnData::new(0)).collect();
        for cluster in clusters().into_iter().chain(clusters()) {
            let generic = generic_path_value(&cluster, &claims);
            let list = generic
                .as_ref()
                .and_then(|v| v.downcast_ref::<CelList<'_>>());
            let positions = list.map(|l| positions_list(l.inner().len()));
            for share in [&shared[..], &[]] {
                assert_eq!(
                    shared_value(read_value(
                        &cluster,
                        &Read::Positions(claims.clone()),
                        share,
                        &ColumnData::new(0)
                    )),
                    shared_value(positions.clone())
                );
            }
            for (field, interned) in ["name", "value", "other"].into_iter().zip(&interned) {
                let expected = list.map(|l| {
                    by_position(l.inner().iter().map(|item| descend(item.as_ref(), field)))
                });
                assert_eq!(
                    shared_value(read_value(
                        &cluster,
                        &Read::Field(claims.clone(), field.into()),
                        &shared,
                        interned
                    )),
                    shared_value(expected),
                    "{field} of {:?}",
                    cluster.metadata.name
                );
            }
        }
    }

    #[test]
    fn exists_conditions_are_simplified() {
        let program = ocm_api::cel::environment()
            .compile("[1].exists(x, x > 0) && [1].all(x, x > 0)")
            .expect("compiles");
        let mut e = program.expression().clone();
        rewrite_reads(&mut e, &mut Vec::new(), &mut BTreeSet::new());
        let Expr::Call(and) = &e.expr else {
            panic!("{e:?}")
        };
        let conditions: Vec<&str> = and
            .args
            .iter()
            .map(|a| match &a.expr {
                Expr::Comprehension(c) => match &c.loop_cond.expr {
                    Expr::Call(call) => call.func_name.as_str(),
                    _ => "",
                },
                _ => "",
            })
            .collect();
        assert_eq!(
            conditions,
            [operators::CONDITIONAL, operators::NOT_STRICTLY_FALSE]
        );
    }

    fn reads(source: &str) -> BTreeSet<Read> {
        let program = ocm_api::cel::environment()
            .compile(source)
            .expect("compiles");
        let mut out = BTreeSet::new();
        collect_reads(program.expression(), &mut Vec::new(), &mut out);
        out
    }

    fn path(p: &str) -> ReadPath {
        if p.is_empty() {
            Vec::new()
        } else {
            p.split('.').map(str::to_string).collect()
        }
    }

    fn set(paths: &[&str]) -> BTreeSet<Read> {
        paths.iter().map(|p| Read::Path(path(p))).collect()
    }

    #[test]
    fn reads_are_the_selection_chains() {
        assert_eq!(
            reads(
                "managedCluster.metadata.labels['env'] == 'x' || managedCluster.status.clusterClaims.exists(c, c.name == 'a')"
            ),
            [
                Read::Path(path("metadata.labels.env")),
                Read::Positions(path("status.clusterClaims")),
                Read::Field(path("status.clusterClaims"), "name".into()),
            ]
            .into_iter()
            .collect()
        );
        // A comprehension variable used other than to select a field: the items themselves.
        assert_eq!(
            reads("managedCluster.status.clusterClaims.exists(c, has(c.name))"),
            set(&["status.clusterClaims"])
        );
        assert_eq!(
            reads("managedCluster.status.clusterClaims.all(c, [1].all(c, c > 0))"),
            set(&["status.clusterClaims"])
        );
        // Constant string indexes extend a chain like selections; other indexes end it.
        let mut dotted = set(&["metadata"]);
        dotted.insert(Read::Path(vec![
            "metadata".into(),
            "labels".into(),
            "a.b/c".into(),
        ]));
        assert_eq!(
            reads("managedCluster['metadata'].labels['a.b/c'] == managedCluster.metadata[1]"),
            dotted
        );
        assert_eq!(
            reads("managedCluster.status.clusterClaims[0].name == 'x'"),
            set(&["status.clusterClaims"])
        );
        assert_eq!(
            reads("has(managedCluster.metadata.labels)"),
            set(&["metadata"])
        );
        assert_eq!(reads("has(managedCluster.metadata)"), set(&[""]));
        assert_eq!(
            reads("managedCluster['metadata'].name == 'x'"),
            set(&["metadata.name"])
        );
        assert_eq!(reads("type(managedCluster) == map"), set(&[""]));
        assert_eq!(
            reads("managedCluster.scores('a').size() > 0"),
            BTreeSet::new()
        );
        // A comprehension variable of the same name shadows the cluster.
        assert_eq!(
            reads("[{'a': 1}].all(managedCluster, managedCluster.a == 1)"),
            BTreeSet::new()
        );
        assert_eq!(
            reads("managedCluster.metadata.labels.all(k, k != managedCluster.metadata.name)"),
            set(&["metadata.labels", "metadata.name"])
        );
    }
}
