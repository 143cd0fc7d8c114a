//! Native evaluation of CEL selectors: the same results as the `cel` crate's interpreter, at a
//! fraction of its cost.
//!
//! The interpreter walks the syntax tree with every value a boxed trait object: each call
//! matches its function by name, collects its arguments in a vector, looks its overload up,
//! and every value a selector reads (the cluster's labels, its claims) must first be built as
//! such objects. For placement that is most of the time a CEL selector takes.
//!
//! So each compiled expression (after the rewrites of `cluster.rs`, and with the cost charges of
//! [`ocm_api::cel::Program::executable`]) is also compiled here into a tree of [`Node`]s that
//! evaluates over [`V`] values borrowing straight from the snapshot: a label is a `&str` into the
//! ManagedCluster, the claims list is the cluster's own slice, AddOn scores are the snapshot's
//! score table. Nothing is built per cluster and nothing is cached, so the first schedule on a
//! snapshot costs what the next ones do.
//!
//! What the evaluator does itself is what it can do exactly as the interpreter does: control
//! flow (`&&`, `||`, `? :`, comprehensions with their deferred errors), literals, variables,
//! field selection, `has()`, indexing, list literals, `in`, equality, ordering and arithmetic
//! between values of one scalar kind, `size`, `startsWith`, `endsWith`, `contains`, `scores`,
//! and the two cost functions. Any other call, and any of those calls on values of other
//! kinds (lists compared with `==`, an int added to a double, a semver, an optional), is an
//! *escape*: the evaluated operands are handed to the interpreter as variables of a one-call
//! expression, so the answer is the interpreter's own. Escapes are memoized for the duration
//! of one schedule by the values of their operands (CEL functions are pure), so
//! `semver(managedCluster.metadata.labels["version"])` runs the interpreter once per distinct
//! version, not once per cluster.
//!
//! Costs are charged exactly where the interpreter charges them (the same cost functions, in
//! the same order, with the same meter), so limits stop the same evaluations. The only
//! deliberate difference: a comprehension over a map visits its keys in key order, where the
//! interpreter visits them in the (random) order of its hash map; `all` and `exists` do not
//! depend on the order, a `map` or `filter` over a map can only list its results in another
//! order.
//!
//! An expression the evaluator does not compile (a map or struct literal, optional list
//! elements, a two-variable comprehension) is evaluated by the interpreter as before.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::rc::Rc;

use cel::common::ast::{CallExpr, ComprehensionExpr, Expr, IdedExpr, LiteralValue, operators};
use cel::common::types::{
    CelBool, CelBytes, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::Val;
use cel::{Context, Value};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use ocm_api::cel::{Budget, COST_FUNCTION, LOOP_COST_FUNCTION, Program};
use ocm_api::cluster::v1::ManagedCluster;

use super::VARIABLE;
use super::cluster::{ClusterReads, Read, ReadPath, read_name};
use crate::snapshot::{ClusterEntry, ClusterId, ClusterRef, Snapshot};
use crate::symbols::{ABSENT, Sym, SymMap, Symbols};

/// The error of a native evaluation. Which error it was does not matter: a selector only
/// distinguishes `true` from everything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failed;

type R<T> = Result<T, Failed>;

// ---------------------------------------------------------------------------------------------
// Values.

/// A string: one of the snapshot's, a literal of the program, borrowed from a cluster, or built
/// by the evaluation.
#[derive(Debug, Clone)]
enum Str<'a> {
    /// A string of the snapshot's table.
    Sym(Sym, &'a Symbols),
    /// A literal, with its symbol in the snapshot's table ([`ABSENT`] when no cluster has it).
    Lit(&'a str, Sym),
    Ref(&'a str),
    Own(Rc<str>),
}

impl Str<'_> {
    fn as_str(&self) -> &str {
        match self {
            Str::Sym(s, symbols) => symbols.resolve(*s),
            Str::Lit(s, _) | Str::Ref(s) => s,
            Str::Own(s) => s,
        }
    }

    /// The string's symbol, when it is known to be one of the snapshot's (or to be none).
    fn sym(&self) -> Option<Sym> {
        match self {
            Str::Sym(s, _) | Str::Lit(_, s) => Some(*s),
            _ => None,
        }
    }

    fn equals(&self, other: &Str<'_>) -> bool {
        match (self, other) {
            (Str::Sym(a, _), Str::Sym(b, _)) => a == b,
            // A literal no cluster has is equal to none of the snapshot's strings.
            (Str::Sym(a, _), Str::Lit(_, b)) | (Str::Lit(_, b), Str::Sym(a, _)) => a == b,
            _ => self.as_str() == other.as_str(),
        }
    }
}

/// A field of the items of the claims list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Name,
    Value,
    /// Any other key: no claim has it.
    Other,
}

impl Field {
    fn of(name: &str) -> Self {
        match name {
            "name" => Field::Name,
            "value" => Field::Value,
            _ => Field::Other,
        }
    }

    /// The field of a claim `(name, value)`, when set.
    fn get(self, claim: (Sym, Sym)) -> Option<Sym> {
        let s = match self {
            Field::Name => claim.0,
            Field::Value => claim.1,
            Field::Other => ABSENT,
        };
        (s != ABSENT).then_some(s)
    }
}

/// A list value.
#[derive(Debug, Clone)]
enum List<'a> {
    /// Built by the evaluation (list literals, concatenations).
    Own(Rc<Vec<V<'a>>>),
    /// `[0, 1, …, n - 1]`: the positions a comprehension over the claims iterates over.
    Positions(usize),
    /// `status.clusterClaims`, each item a map with its `name` and `value` when set.
    Claims(&'a [(Sym, Sym)], &'a Symbols),
    /// One field of every claim, all of which have it.
    ClaimField(&'a [(Sym, Sym)], Field, &'a Symbols),
    /// The `status.scores` items of an AddOnPlacementScore, each a `{name, value}` map.
    Scores(&'a [(Sym, i32)], &'a Symbols),
}

impl<'a> List<'a> {
    fn len(&self) -> usize {
        match self {
            List::Own(v) => v.len(),
            List::Positions(n) => *n,
            List::Claims(c, _) | List::ClaimField(c, _, _) => c.len(),
            List::Scores(s, _) => s.len(),
        }
    }

    fn get(&self, i: usize) -> Option<V<'a>> {
        match self {
            List::Own(v) => v.get(i).cloned(),
            List::Positions(n) => (i < *n).then(|| V::Int(i64::try_from(i).unwrap_or(i64::MAX))),
            List::Claims(c, symbols) => c.get(i).map(|&c| V::Map(Map::Claim(c, symbols))),
            List::ClaimField(c, f, symbols) => c
                .get(i)
                .and_then(|&c| f.get(c))
                .map(|s| V::Str(Str::Sym(s, symbols))),
            List::Scores(items, symbols) => items
                .get(i)
                .map(|&(name, value)| V::Map(Map::ScoreItem(name, value, symbols))),
        }
    }

    fn to_vec(&self) -> Vec<V<'a>> {
        (0..self.len()).filter_map(|i| self.get(i)).collect()
    }
}

/// A map value (all the native ones have string keys, but the positions map of a claim field).
#[derive(Debug, Clone)]
enum Map<'a> {
    /// Labels, interned.
    Labels(&'a SymMap, &'a Symbols),
    /// Annotations.
    Strings(&'a BTreeMap<String, String>),
    /// Allocatable or capacity: quantities as strings.
    Quantities(&'a BTreeMap<String, Quantity>),
    /// One claim: `name` and `value` when set.
    Claim((Sym, Sym), &'a Symbols),
    /// One field of the claims, by position, for the claims that have it.
    ClaimFieldByPos(&'a [(Sym, Sym)], Field, &'a Symbols),
    /// One AddOn score item: `{name, value}`.
    ScoreItem(Sym, i32, &'a Symbols),
    /// The empty map (what `managedCluster` stands for when only the receiver of `scores()`).
    Empty,
}

impl<'a> Map<'a> {
    fn len(&self) -> usize {
        match self {
            Map::Labels(m, _) => m.pairs().len(),
            Map::Strings(m) => m.len(),
            Map::Quantities(m) => m.len(),
            Map::Claim(c, _) => usize::from(c.0 != ABSENT) + usize::from(c.1 != ABSENT),
            Map::ClaimFieldByPos(c, f, _) => c.iter().filter(|&&c| f.get(c).is_some()).count(),
            Map::ScoreItem(..) => 2,
            Map::Empty => 0,
        }
    }

    /// The entry of a string key.
    fn get_str(&self, key: &Str<'_>) -> Option<V<'a>> {
        let s = |v: &'a str| V::Str(Str::Ref(v));
        match self {
            Map::Labels(m, symbols) => {
                let k = key.sym().unwrap_or_else(|| symbols.lookup(key.as_str()));
                if k == ABSENT {
                    return None;
                }
                m.get(k).map(|v| V::Str(Str::Sym(v, symbols)))
            }
            Map::Strings(m) => m.get(key.as_str()).map(|v| s(v)),
            Map::Quantities(m) => m.get(key.as_str()).map(|q| s(&q.0)),
            Map::Claim(c, symbols) => Field::of(key.as_str())
                .get(*c)
                .map(|v| V::Str(Str::Sym(v, symbols))),
            Map::ScoreItem(name, value, symbols) => match key.as_str() {
                "name" => Some(V::Str(Str::Sym(*name, symbols))),
                "value" => Some(V::Int(i64::from(*value))),
                _ => None,
            },
            Map::ClaimFieldByPos(..) | Map::Empty => None,
        }
    }

    /// The entry of a key, with the interpreter's numeric fallbacks; `Err` for a value that
    /// cannot be a key, `Ok(None)` for a missing one.
    fn get(&self, key: &V<'a>) -> R<Option<V<'a>>> {
        match key {
            V::Str(k) => Ok(self.get_str(k)),
            V::Int(_) | V::Uint(_) | V::Double(_) => Ok(match self {
                Map::ClaimFieldByPos(claims, f, symbols) => position(key)
                    .and_then(|i| claims.get(i))
                    .and_then(|&c| f.get(c))
                    .map(|s| V::Str(Str::Sym(s, symbols))),
                _ => None,
            }),
            V::Bool(_) => Ok(None),
            _ => Err(Failed),
        }
    }

    /// The keys, in order.
    fn keys(&self) -> Vec<V<'a>> {
        let s = |v: &'a str| V::Str(Str::Ref(v));
        match self {
            Map::Labels(m, symbols) => m
                .pairs()
                .iter()
                .map(|&(k, _)| V::Str(Str::Sym(k, symbols)))
                .collect(),
            Map::Strings(m) => m.keys().map(|k| s(k)).collect(),
            Map::Quantities(m) => m.keys().map(|k| s(k)).collect(),
            Map::Claim(c, _) => [("name", c.0), ("value", c.1)]
                .into_iter()
                .filter(|(_, v)| *v != ABSENT)
                .map(|(k, _)| s(k))
                .collect(),
            Map::ClaimFieldByPos(c, f, _) => c
                .iter()
                .enumerate()
                .filter(|&(_, &c)| f.get(c).is_some())
                .map(|(i, _)| V::Int(i64::try_from(i).unwrap_or(i64::MAX)))
                .collect(),
            Map::ScoreItem(..) => vec![s("name"), s("value")],
            Map::Empty => Vec::new(),
        }
    }
}

/// The position a numeric map key stands for (a double only when whole).
fn position(key: &V<'_>) -> Option<usize> {
    match key {
        V::Int(i) => usize::try_from(*i).ok(),
        V::Uint(u) => usize::try_from(*u).ok(),
        V::Double(d) => whole(*d).and_then(|i| usize::try_from(i).ok()),
        _ => None,
    }
}

/// `d` as an integer when it is one exactly.
fn whole(d: f64) -> Option<i64> {
    let i = d as i64;
    (d.is_finite() && i as f64 == d && d.fract() == 0.0).then_some(i)
}

/// A value of the interpreter's that the evaluator does not represent itself (a semver, a
/// quantity, an optional, bytes, a type, a list or map it returned): kept as is.
#[derive(Debug, Clone)]
enum CelRef<'a> {
    Borrowed(&'a (dyn Val + 'static)),
    Shared(Rc<Box<dyn Val + 'static>>),
}

impl CelRef<'_> {
    fn as_val(&self) -> &(dyn Val + 'static) {
        match self {
            CelRef::Borrowed(v) => *v,
            CelRef::Shared(v) => v.as_ref().as_ref(),
        }
    }
}

/// A value during a native evaluation.
#[derive(Debug, Clone)]
enum V<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(Str<'a>),
    List(List<'a>),
    Map(Map<'a>),
    Cel(CelRef<'a>),
}

impl<'a> V<'a> {
    fn is_scalar(&self) -> bool {
        matches!(
            self,
            V::Null | V::Bool(_) | V::Int(_) | V::Uint(_) | V::Double(_) | V::Str(_)
        )
    }

    /// The value of the interpreter's `v`, borrowing what it can.
    fn from_cel(v: &'a (dyn Val + 'static)) -> V<'a> {
        if let Some(b) = v.downcast_ref::<CelBool>() {
            V::Bool(*b.inner())
        } else if let Some(i) = v.downcast_ref::<CelInt>() {
            V::Int(*i.inner())
        } else if let Some(u) = v.downcast_ref::<CelUInt>() {
            V::Uint(*u.inner())
        } else if let Some(d) = v.downcast_ref::<CelDouble>() {
            V::Double(*d.inner())
        } else if let Some(s) = v.downcast_ref::<CelString<'_>>() {
            V::Str(Str::Ref(s.inner()))
        } else if v.downcast_ref::<CelNull>().is_some() {
            V::Null
        } else {
            V::Cel(CelRef::Borrowed(v))
        }
    }

    /// The value of a shared interpreter value: scalars copied, anything else kept as is (so
    /// that the same value keeps its identity, which memoized escapes key on).
    fn from_shared(v: &Rc<Box<dyn Val + 'static>>) -> V<'a> {
        let inner: &dyn Val = v.as_ref().as_ref();
        if let Some(b) = inner.downcast_ref::<CelBool>() {
            V::Bool(*b.inner())
        } else if let Some(i) = inner.downcast_ref::<CelInt>() {
            V::Int(*i.inner())
        } else if let Some(u) = inner.downcast_ref::<CelUInt>() {
            V::Uint(*u.inner())
        } else if let Some(d) = inner.downcast_ref::<CelDouble>() {
            V::Double(*d.inner())
        } else if let Some(s) = inner.downcast_ref::<CelString<'_>>() {
            V::Str(Str::Own(Rc::from(s.inner())))
        } else if inner.downcast_ref::<CelNull>().is_some() {
            V::Null
        } else {
            V::Cel(CelRef::Shared(Rc::clone(v)))
        }
    }

    /// The value as the interpreter's.
    fn to_cel(&self) -> Box<dyn Val + 'static> {
        match self {
            V::Null => Box::new(CelNull),
            V::Bool(b) => Box::new(CelBool::from(*b)),
            V::Int(i) => Box::new(CelInt::from(*i)),
            V::Uint(u) => Box::new(CelUInt::from(*u)),
            V::Double(d) => Box::new(CelDouble::from(*d)),
            V::Str(s) => Box::new(CelString::from(s.as_str().to_string())),
            V::List(l) => Box::new(CelList::from(
                l.to_vec().iter().map(V::to_cel).collect::<Vec<_>>(),
            )),
            V::Map(m) => {
                let entries: HashMap<CelMapKey<'static>, Box<dyn Val + 'static>> = m
                    .keys()
                    .into_iter()
                    .filter_map(|k| {
                        let v = m.get(&k).ok().flatten()?;
                        let key = match &k {
                            V::Str(s) => CelMapKey::String(CelString::from(s.as_str().to_string())),
                            V::Int(i) => CelMapKey::Int(CelInt::from(*i)),
                            _ => return None,
                        };
                        Some((key, v.to_cel()))
                    })
                    .collect();
                Box::new(CelMap::from(entries))
            }
            V::Cel(c) => c.as_val().clone_as_boxed(),
        }
    }

    /// The elements a comprehension over this value iterates over: a list's items, a map's
    /// keys; `Err` for anything else.
    fn items(&self) -> R<Items<'a>> {
        match self {
            V::List(l) => Ok(Items::List(l.clone())),
            V::Map(m) => Ok(Items::Keys(m.keys())),
            V::Cel(c) => {
                let v = c.as_val();
                if let Some(list) = v.downcast_ref::<CelList<'_>>() {
                    Ok(Items::Keys(
                        list.inner()
                            .iter()
                            .map(|item| V::from_shared(&Rc::new(item.clone_as_boxed())))
                            .collect(),
                    ))
                } else if let Some(map) = v.downcast_ref::<CelMap<'_>>() {
                    let mut keys: Vec<V<'a>> = map
                        .inner()
                        .keys()
                        .map(|k| V::from_shared(&Rc::new(k.inner().clone_as_boxed())))
                        .collect();
                    keys.sort_by(order_keys);
                    Ok(Items::Keys(keys))
                } else {
                    Err(Failed)
                }
            }
            _ => Err(Failed),
        }
    }

    /// How many units of cost traversing the value takes (see `ocm_api::cel`'s cost module):
    /// a unit per ten bytes of a string or bytes, per entry of a list or map.
    fn size_units(&self) -> u64 {
        let len = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        match self {
            V::Str(s) => len(s.as_str().len()).div_ceil(10),
            V::List(l) => len(l.len()),
            V::Map(m) => len(m.len()),
            V::Cel(c) => {
                let v = c.as_val();
                if let Some(b) = v.downcast_ref::<CelBytes<'_>>() {
                    len(b.inner().len()).div_ceil(10)
                } else if let Some(l) = v.downcast_ref::<CelList<'_>>() {
                    len(l.inner().len())
                } else if let Some(m) = v.downcast_ref::<CelMap<'_>>() {
                    len(m.inner().len())
                } else {
                    0
                }
            }
            _ => 0,
        }
    }

    /// How many elements a loop over the value charges for.
    fn elements(&self) -> u64 {
        let len = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        match self {
            V::List(l) => len(l.len()),
            V::Map(m) => len(m.len()),
            V::Cel(c) => {
                let v = c.as_val();
                if let Some(l) = v.downcast_ref::<CelList<'_>>() {
                    len(l.inner().len())
                } else if let Some(m) = v.downcast_ref::<CelMap<'_>>() {
                    len(m.inner().len())
                } else {
                    0
                }
            }
            _ => 0,
        }
    }
}

/// What a comprehension iterates over.
enum Items<'a> {
    List(List<'a>),
    Keys(Vec<V<'a>>),
}

impl<'a> Items<'a> {
    fn len(&self) -> usize {
        match self {
            Items::List(l) => l.len(),
            Items::Keys(k) => k.len(),
        }
    }

    fn get(&self, i: usize) -> Option<V<'a>> {
        match self {
            Items::List(l) => l.get(i),
            Items::Keys(k) => k.get(i).cloned(),
        }
    }
}

/// An order of map keys: by kind, then by value.
fn order_keys(a: &V<'_>, b: &V<'_>) -> std::cmp::Ordering {
    fn rank(v: &V<'_>) -> u8 {
        match v {
            V::Bool(_) => 0,
            V::Int(_) => 1,
            V::Uint(_) => 2,
            V::Str(_) => 3,
            _ => 4,
        }
    }
    match (a, b) {
        (V::Bool(x), V::Bool(y)) => x.cmp(y),
        (V::Int(x), V::Int(y)) => x.cmp(y),
        (V::Uint(x), V::Uint(y)) => x.cmp(y),
        (V::Str(x), V::Str(y)) => x.as_str().cmp(y.as_str()),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Equality of two scalars, as the interpreter's `==`: numbers across kinds by value (a NaN
/// equal to nothing), other kinds only with themselves. `None` when either is no scalar.
fn scalar_eq(a: &V<'_>, b: &V<'_>) -> Option<bool> {
    use std::cmp::Ordering;
    Some(match (a, b) {
        (V::Null, V::Null) => true,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Str(x), V::Str(y)) => x.equals(y),
        (V::Int(_) | V::Uint(_) | V::Double(_), V::Int(_) | V::Uint(_) | V::Double(_)) => {
            numeric_cmp(a, b) == Some(Ordering::Equal)
        }
        _ if a.is_scalar() && b.is_scalar() => false,
        _ => return None,
    })
}

/// The interpreter's comparison of two numbers.
fn numeric_cmp(a: &V<'_>, b: &V<'_>) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    match (a, b) {
        (V::Int(x), V::Int(y)) => Some(x.cmp(y)),
        (V::Uint(x), V::Uint(y)) => Some(x.cmp(y)),
        (V::Int(x), V::Uint(y)) => Some(u64::try_from(*x).map_or(Ordering::Less, |x| x.cmp(y))),
        (V::Uint(x), V::Int(y)) => Some(i64::try_from(*x).map_or(Ordering::Greater, |x| x.cmp(y))),
        (V::Double(x), V::Double(y)) => x.partial_cmp(y),
        (V::Int(x), V::Double(y)) => (*x as f64).partial_cmp(y),
        (V::Uint(x), V::Double(y)) => (*x as f64).partial_cmp(y),
        (V::Double(x), V::Int(y)) => x.partial_cmp(&(*y as f64)),
        (V::Double(x), V::Uint(y)) => x.partial_cmp(&(*y as f64)),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Programs.

/// What a read of the cluster gives natively.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ReadKind {
    Name,
    /// One label: its key and the key's position among the strings looked up.
    Label(String, usize),
    /// `metadata.labels` (`annotations` when the flag is set).
    Strings(bool),
    /// One label (annotation).
    String(bool, String),
    /// `status.allocatable` (`capacity` when the flag is set).
    Quantities(bool),
    Quantity(bool, String),
    Claims,
    ClaimPositions,
    ClaimField(Field),
    /// Any other read: the interpreter's value, from the snapshot's cache.
    Column(Read),
}

impl ReadKind {
    fn of(read: &Read) -> ReadKind {
        let is = |path: &ReadPath, a: &str, b: &str| matches!(path.as_slice(), [x, y] if x == a && y == b);
        match read {
            Read::Path(path) => match path.as_slice() {
                [a, b] if a == "metadata" && b == "name" => ReadKind::Name,
                [a, b] if a == "metadata" && (b == "labels" || b == "annotations") => {
                    ReadKind::Strings(b == "annotations")
                }
                [a, b, key] if a == "metadata" && (b == "labels" || b == "annotations") => {
                    ReadKind::String(b == "annotations", key.clone())
                }
                [a, b] if a == "status" && (b == "allocatable" || b == "capacity") => {
                    ReadKind::Quantities(b == "capacity")
                }
                [a, b, key] if a == "status" && (b == "allocatable" || b == "capacity") => {
                    ReadKind::Quantity(b == "capacity", key.clone())
                }
                [a, b] if a == "status" && b == "clusterClaims" => ReadKind::Claims,
                _ => ReadKind::Column(read.clone()),
            },
            Read::Positions(path) if is(path, "status", "clusterClaims") => {
                ReadKind::ClaimPositions
            }
            Read::Field(path, field) if is(path, "status", "clusterClaims") => {
                ReadKind::ClaimField(Field::of(field))
            }
            _ => ReadKind::Column(read.clone()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    In,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StrFn {
    StartsWith,
    EndsWith,
    Contains,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    And,
    Or,
}

/// Where a native operation hands its operands to the interpreter: the one-call expression with
/// the operands as variables (`@ocm_t` for a receiver, `@ocm_a<i>` for the arguments).
#[derive(Debug)]
struct Site {
    id: usize,
    expr: IdedExpr,
}

#[derive(Debug)]
struct Comp {
    iter: usize,
    accu: usize,
    range: Node,
    init: Node,
    cond: Node,
    step: Node,
    result: Node,
    fold: Option<Fold>,
    /// For a step that only appends to a list accumulator (`map`, `filter`): its guard and
    /// the list appended, evaluated as the interpreter does when the accumulator starts empty.
    append: Option<(Option<Node>, Node)>,
}

/// A literal.
#[derive(Debug)]
enum Lit {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    /// The string and its position among the strings the program looks up in the snapshot.
    Str(Box<str>, usize),
}

/// A compiled expression node.
#[derive(Debug)]
enum Node {
    Const(Lit),
    Var(usize),
    Read(usize),
    /// `managedCluster` itself.
    Cluster,
    And(Box<[Node; 2]>),
    Or(Box<[Node; 2]>),
    Cond(Box<[Node; 3]>),
    NotStrictlyFalse(Box<Node>),
    Not(Box<Node>, Site),
    Neg(Box<Node>, Site),
    Bin(BinOp, Box<[Node; 2]>, Site),
    Index(Box<[Node; 2]>, Site),
    Select {
        operand: Box<Node>,
        field: Box<str>,
        test: bool,
        site: Site,
    },
    List(Vec<Node>),
    /// `size(x)` (`x.size()` when the flag is set).
    Size(Box<Node>, Site, bool),
    /// A member string function: receiver, argument.
    StrCall(StrFn, Box<[Node; 2]>, Site),
    /// `x.scores(name)`: receiver, name.
    Scores(Box<[Node; 2]>),
    Cost(Box<Node>, u64),
    CostEach(Box<Node>, u64),
    Comp(Box<Comp>),
    /// A call evaluated by the interpreter: receiver (when an operand), arguments.
    Escape {
        target: Option<Box<Node>>,
        args: Vec<Node>,
        site: Site,
    },
}

/// An expression compiled for native evaluation.
#[derive(Debug)]
pub(crate) struct NativeProgram {
    root: Node,
    /// The strings (literals, label keys) whose symbols a schedule looks up once.
    interned: Vec<Box<str>>,
    reads: Vec<ReadKind>,
    /// The reads whose values come from the snapshot's cache (the whole object included).
    cached: Vec<Read>,
    slots: usize,
    base_cost: u64,
    charges: bool,
    program: Program,
}

const TARGET: &str = "@ocm_t";

/// Prefixes of namespaced functions (`optional.of`, `math.greatest`): a receiver that names one
/// is no operand.
const NAMESPACES: &[&str] = &[
    "optional", "math", "lists", "ip", "format", "strings", "cidr", "url", "semver", "quantity",
];

fn arg_name(i: usize) -> String {
    format!("@ocm_a{i}")
}

/// Compiles `program` (rewritten as `cluster.rs` does; `reads` are its reads) for native
/// evaluation; `None` when it holds something the evaluator does not handle.
pub(crate) fn compile(
    program: &Program,
    reads: &std::collections::BTreeSet<Read>,
) -> Option<NativeProgram> {
    let names: HashMap<String, Read> = reads.iter().map(|r| (read_name(r), r.clone())).collect();
    let mut c = Compiler {
        names,
        interned: Vec::new(),
        reads: Vec::new(),
        scope: Vec::new(),
        slots: 0,
        sites: 0,
    };
    let root = program.with_stack(|| c.node(program.executable()))?;
    let cached = reads
        .iter()
        .filter(|r| matches!(ReadKind::of(r), ReadKind::Column(_)))
        .cloned()
        .collect();
    Some(NativeProgram {
        root,
        interned: c.interned,
        reads: c.reads,
        cached,
        slots: c.slots,
        base_cost: program.base_cost(),
        charges: program.charges(),
        program: program.clone(),
    })
}

struct Compiler {
    names: HashMap<String, Read>,
    interned: Vec<Box<str>>,
    reads: Vec<ReadKind>,
    /// Comprehension variables in scope, innermost last, with their slots.
    scope: Vec<(String, usize)>,
    slots: usize,
    sites: usize,
}

impl Compiler {
    fn site(&mut self, expr: IdedExpr) -> Site {
        self.sites += 1;
        Site {
            id: self.sites - 1,
            expr,
        }
    }

    fn bound(&self, name: &str) -> Option<usize> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, slot)| *slot)
    }

    /// The position of `s` among the strings the program looks up in the snapshot.
    fn intern(&mut self, s: &str) -> usize {
        match self.interned.iter().position(|x| &**x == s) {
            Some(i) => i,
            None => {
                self.interned.push(s.into());
                self.interned.len() - 1
            }
        }
    }

    fn read(&mut self, read: &Read) -> usize {
        let kind = match ReadKind::of(read) {
            ReadKind::String(false, key) => {
                let i = self.intern(&key);
                ReadKind::Label(key, i)
            }
            kind => kind,
        };
        match self.reads.iter().position(|k| *k == kind) {
            Some(i) => i,
            None => {
                self.reads.push(kind);
                self.reads.len() - 1
            }
        }
    }

    /// Whether `e` is an identifier the evaluator binds (a variable, a read, the cluster).
    fn is_operand_ident(&self, e: &IdedExpr) -> bool {
        match &e.expr {
            Expr::Ident(name) => {
                self.bound(name).is_some() || self.names.contains_key(name) || name == VARIABLE
            }
            _ => false,
        }
    }

    /// The one-call expression of `call` with its operands replaced by variables. A receiver
    /// that is an identifier the evaluator does not bind (a namespace such as `optional`, or
    /// a type) stays as written; returns whether the receiver is an operand.
    fn call_site(&mut self, id: u64, call: &CallExpr) -> (Site, bool) {
        let ident = |name: String| IdedExpr {
            id,
            expr: Expr::Ident(name),
        };
        let target_is_operand = call
            .target
            .as_deref()
            .is_some_and(|t| !matches!(&t.expr, Expr::Ident(_)) || self.is_operand_ident(t));
        let target = call.target.as_deref().map(|t| {
            Box::new(if target_is_operand {
                ident(TARGET.to_string())
            } else {
                t.clone()
            })
        });
        let expr = IdedExpr {
            id,
            expr: Expr::Call(CallExpr {
                func_name: call.func_name.clone(),
                target,
                args: (0..call.args.len()).map(|i| ident(arg_name(i))).collect(),
            }),
        };
        (self.site(expr), target_is_operand)
    }

    fn boxed2(&mut self, a: &IdedExpr, b: &IdedExpr) -> Option<Box<[Node; 2]>> {
        Some(Box::new([self.node(a)?, self.node(b)?]))
    }

    fn node(&mut self, e: &IdedExpr) -> Option<Node> {
        Some(match &e.expr {
            Expr::Literal(l) => Node::Const(match l {
                LiteralValue::Null => Lit::Null,
                LiteralValue::Boolean(b) => Lit::Bool(*b.inner()),
                LiteralValue::Int(i) => Lit::Int(*i.inner()),
                LiteralValue::UInt(u) => Lit::Uint(*u.inner()),
                LiteralValue::Double(d) => Lit::Double(*d.inner()),
                LiteralValue::String(s) => Lit::Str(s.inner().into(), self.intern(s.inner())),
                LiteralValue::Bytes(_) => return self.escape_expr(e),
            }),
            Expr::Ident(name) => {
                if let Some(slot) = self.bound(name) {
                    Node::Var(slot)
                } else if let Some(read) = self.names.get(name).cloned() {
                    Node::Read(self.read(&read))
                } else if name == VARIABLE {
                    Node::Cluster
                } else {
                    // A type name, or an undeclared one: the interpreter knows.
                    return self.escape_expr(e);
                }
            }
            Expr::Select(s) => {
                if !self.roots_in_operand(&s.operand) {
                    // `a.b.c` naming something qualified the interpreter resolves.
                    return self.escape_expr(e);
                }
                let operand = self.node(&s.operand)?;
                let expr = IdedExpr {
                    id: e.id,
                    expr: Expr::Select(cel::common::ast::SelectExpr {
                        operand: Box::new(IdedExpr {
                            id: e.id,
                            expr: Expr::Ident(TARGET.to_string()),
                        }),
                        field: s.field.clone(),
                        test: s.test,
                    }),
                };
                Node::Select {
                    operand: Box::new(operand),
                    field: s.field.as_str().into(),
                    test: s.test,
                    site: self.site(expr),
                }
            }
            Expr::List(l) => {
                if !l.optional_indices.is_empty() {
                    return None;
                }
                Node::List(
                    l.elements
                        .iter()
                        .map(|x| self.node(x))
                        .collect::<Option<Vec<_>>>()?,
                )
            }
            Expr::Call(call) => return self.call(e.id, call),
            Expr::Comprehension(c) => return self.comprehension(c),
            Expr::Map(_) | Expr::Struct(_) | Expr::Unspecified => return None,
        })
    }

    /// Whether a chain of selections bottoms out at something other than an identifier the
    /// evaluator does not bind.
    fn roots_in_operand(&self, e: &IdedExpr) -> bool {
        match &e.expr {
            Expr::Select(s) => self.roots_in_operand(&s.operand),
            Expr::Ident(_) => self.is_operand_ident(e),
            _ => true,
        }
    }

    /// An expression with no operands, evaluated by the interpreter (once per schedule).
    fn escape_expr(&mut self, e: &IdedExpr) -> Option<Node> {
        if !self.closed(e) {
            return None;
        }
        let site = self.site(e.clone());
        Some(Node::Escape {
            target: None,
            args: Vec::new(),
            site,
        })
    }

    /// Whether `e` uses no identifier the evaluator binds.
    fn closed(&self, e: &IdedExpr) -> bool {
        let mut open = false;
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if self.is_operand_ident(x) {
                open = true;
                break;
            }
            if let Expr::Comprehension(_) = &x.expr {
                open = true;
                break;
            }
            stack.extend(ocm_api::cel::children(x));
        }
        !open
    }

    // Long on purpose: one arm per CEL operator and function the native evaluator compiles,
    // in the order of the CEL specification's tables; anything else falls back to the
    // interpreter at the end.
    fn call(&mut self, id: u64, call: &CallExpr) -> Option<Node> {
        let args = call.args.as_slice();
        let name = call.func_name.as_str();
        if call.target.is_none() {
            match (name, args) {
                (operators::LOGICAL_AND, [a, b]) => return Some(Node::And(self.boxed2(a, b)?)),
                (operators::LOGICAL_OR, [a, b]) => return Some(Node::Or(self.boxed2(a, b)?)),
                (operators::CONDITIONAL, [c, a, b]) => {
                    return Some(Node::Cond(Box::new([
                        self.node(c)?,
                        self.node(a)?,
                        self.node(b)?,
                    ])));
                }
                (operators::NOT_STRICTLY_FALSE, [a]) => {
                    return Some(Node::NotStrictlyFalse(Box::new(self.node(a)?)));
                }
                (COST_FUNCTION | LOOP_COST_FUNCTION, [a, w]) => {
                    let Expr::Literal(LiteralValue::Int(w)) = &w.expr else {
                        return None;
                    };
                    let weight = u64::try_from(*w.inner()).unwrap_or(0);
                    let a = Box::new(self.node(a)?);
                    return Some(if name == COST_FUNCTION {
                        Node::Cost(a, weight)
                    } else {
                        Node::CostEach(a, weight)
                    });
                }
                _ => {}
            }
        }
        if let Some(Expr::Ident(n)) = call.target.as_deref().map(|t| &t.expr)
            && NAMESPACES.contains(&n.as_str())
            && self.bound(n).is_some()
        {
            // A variable named like a function namespace: which one the call means is the
            // interpreter's business.
            return None;
        }
        let (site, target_is_operand) = self.call_site(id, call);
        if call.target.is_none() {
            let bin = match name {
                operators::EQUALS => Some(BinOp::Eq),
                operators::NOT_EQUALS => Some(BinOp::Ne),
                operators::LESS => Some(BinOp::Lt),
                operators::LESS_EQUALS => Some(BinOp::Le),
                operators::GREATER => Some(BinOp::Gt),
                operators::GREATER_EQUALS => Some(BinOp::Ge),
                operators::ADD => Some(BinOp::Add),
                operators::SUBSTRACT => Some(BinOp::Sub),
                operators::MULTIPLY => Some(BinOp::Mul),
                operators::DIVIDE => Some(BinOp::Div),
                operators::MODULO => Some(BinOp::Mod),
                operators::IN => Some(BinOp::In),
                _ => None,
            };
            match (bin, name, args) {
                (Some(op), _, [a, b]) => return Some(Node::Bin(op, self.boxed2(a, b)?, site)),
                (_, operators::INDEX, [a, b]) => {
                    return Some(Node::Index(self.boxed2(a, b)?, site));
                }
                (_, operators::LOGICAL_NOT, [a]) => {
                    return Some(Node::Not(Box::new(self.node(a)?), site));
                }
                (_, operators::NEGATE, [a]) => {
                    return Some(Node::Neg(Box::new(self.node(a)?), site));
                }
                (_, "size", [a]) => {
                    return Some(Node::Size(Box::new(self.node(a)?), site, false));
                }
                _ => {}
            }
        } else if target_is_operand {
            let target = call.target.as_deref()?;
            let str_fn = match name {
                "startsWith" => Some(StrFn::StartsWith),
                "endsWith" => Some(StrFn::EndsWith),
                "contains" => Some(StrFn::Contains),
                _ => None,
            };
            match (str_fn, name, args) {
                (Some(f), _, [a]) => {
                    return Some(Node::StrCall(f, self.boxed2(target, a)?, site));
                }
                (_, "size", []) => {
                    return Some(Node::Size(Box::new(self.node(target)?), site, true));
                }
                (_, "scores", [a]) => return Some(Node::Scores(self.boxed2(target, a)?)),
                _ => {}
            }
        }
        let target = match (&call.target, target_is_operand) {
            (Some(t), true) => Some(Box::new(self.node(t)?)),
            (Some(t), false) if !self.closed(t) => return None,
            _ => None,
        };
        let args = args
            .iter()
            .map(|a| self.node(a))
            .collect::<Option<Vec<_>>>()?;
        Some(Node::Escape { target, args, site })
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Option<Node> {
        if c.iter_var2.is_some() {
            return None;
        }
        // Evaluated outside the variables' scope.
        let range = self.node(&c.iter_range)?;
        let init = self.node(&c.accu_init)?;
        let depth = self.scope.len();
        let iter = self.scope.len();
        let accu = iter + 1;
        self.slots = self.slots.max(accu + 1);
        self.scope.push((c.iter_var.clone(), iter));
        self.scope.push((c.accu_var.clone(), accu));
        let compiled = (|| {
            let cond = self.node(&c.loop_cond)?;
            let step = self.node(&c.loop_step)?;
            let result = self.node(&c.result)?;
            let append = match append_step(c) {
                Some((guard, items)) => Some((
                    match guard {
                        Some(g) => Some(self.node(g)?),
                        None => None,
                    },
                    self.node(items)?,
                )),
                None => None,
            };
            Some((cond, step, result, append))
        })();
        self.scope.truncate(depth);
        let (cond, step, result, append) = compiled?;
        Some(Node::Comp(Box::new(Comp {
            iter,
            accu,
            range,
            init,
            cond,
            step,
            result,
            fold: fold_of(c),
            append,
        })))
    }
}

/// The interpreter's `LogicalFold::of`: a step `@accu && x` or `@accu || x`.
fn fold_of(c: &ComprehensionExpr) -> Option<Fold> {
    let Expr::Call(call) = &c.loop_step.expr else {
        return None;
    };
    let folds_accu = call.target.is_none()
        && matches!(call.args.first().map(|a| &a.expr), Some(Expr::Ident(n)) if *n == c.accu_var);
    match call.func_name.as_str() {
        operators::LOGICAL_AND if folds_accu => Some(Fold::And),
        operators::LOGICAL_OR if folds_accu => Some(Fold::Or),
        _ => None,
    }
}

/// The interpreter's `AppendStep::of`: a step `@accu + [x]`, or `c ? @accu + [x] : @accu`, with
/// `@accu` as result and a literal loop condition; returns the guard and the appended list.
fn append_step(c: &ComprehensionExpr) -> Option<(Option<&IdedExpr>, &IdedExpr)> {
    fn items_of<'e>(e: &'e IdedExpr, accu: &str) -> Option<&'e IdedExpr> {
        match &e.expr {
            Expr::Call(call) if call.func_name == operators::ADD && call.target.is_none() => {
                match call.args.as_slice() {
                    [lhs, rhs]
                        if matches!(&lhs.expr, Expr::Ident(n) if n == accu)
                            && matches!(rhs.expr, Expr::List(_)) =>
                    {
                        Some(rhs)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
    let accu = c.accu_var.as_str();
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if n == accu);
    if !is_accu(&c.result) || !matches!(c.loop_cond.expr, Expr::Literal(_)) {
        return None;
    }
    match &c.loop_step.expr {
        Expr::Call(call) if call.func_name == operators::CONDITIONAL && call.target.is_none() => {
            match call.args.as_slice() {
                [guard, step, otherwise] if is_accu(otherwise) => {
                    Some((Some(guard), items_of(step, accu)?))
                }
                _ => None,
            }
        }
        _ => Some((None, items_of(&c.loop_step, accu)?)),
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluation.

/// The cost meter of one evaluation (the interpreter's, in `ocm_api::cel`).
#[derive(Debug, Clone, Copy)]
struct Meter {
    used: u64,
    limit: u64,
    exceeded: bool,
    /// Whether charges count (not when the program is evaluated unmetered).
    on: bool,
}

impl Meter {
    fn charge(&mut self, units: u64) -> R<()> {
        if !self.on {
            return Ok(());
        }
        if self.exceeded {
            return Err(Failed);
        }
        self.used = self.used.saturating_add(units);
        if self.used > self.limit {
            self.used = self.limit.saturating_add(1);
            self.exceeded = true;
            return Err(Failed);
        }
        Ok(())
    }
}

/// A memo key part: an operand's value, by content (a value of the interpreter's by identity).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyPart {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(u64),
    Str(Box<str>),
    Sym(Sym),
    Ptr(usize),
}

/// The memo key of one operand, `None` when it has none (a list or map).
fn key_part(v: &V<'_>) -> Option<KeyPart> {
    Some(match v {
        V::Null => KeyPart::Null,
        V::Bool(b) => KeyPart::Bool(*b),
        V::Int(i) => KeyPart::Int(*i),
        V::Uint(u) => KeyPart::Uint(*u),
        V::Double(d) => KeyPart::Double(d.to_bits()),
        V::Str(s) => match s.sym() {
            Some(sym) if sym != ABSENT => KeyPart::Sym(sym),
            _ => KeyPart::Str(s.as_str().into()),
        },
        V::Cel(c) => KeyPart::Ptr(std::ptr::from_ref(c.as_val()).cast::<()>() as usize),
        V::List(_) | V::Map(_) => return None,
    })
}

/// Remembered escape results: by (program, site, operands) the outcome and, for values of the
/// interpreter's in the key, the values themselves (so their addresses stay theirs).
type Memo = HashMap<
    (usize, usize, Vec<KeyPart>),
    (
        Result<Rc<Box<dyn Val + 'static>>, Failed>,
        Vec<Rc<Box<dyn Val + 'static>>>,
    ),
>;

/// Most escape results one schedule remembers.
const MEMO_LIMIT: usize = 1 << 16;

/// What native evaluations of one schedule share: the interpreter's context for escapes and
/// their memo.
pub(crate) struct Escapes<'a> {
    root: Context<'static, 'static>,
    memo: RefCell<Memo>,
    /// By program, the symbols of its looked-up strings (one schedule, one snapshot).
    syms: RefCell<Vec<(usize, Rc<[Sym]>)>>,
    /// Buffers for the variables and reads of an evaluation, kept between evaluations.
    scratch: RefCell<Scratch<'a>>,
}

/// Buffers of one evaluation.
type Scratch<'a> = (Vec<V<'a>>, Vec<Option<R<V<'a>>>>);

impl<'a> Escapes<'a> {
    pub(crate) fn new(root: Context<'static, 'static>) -> Self {
        Escapes {
            root,
            memo: RefCell::new(HashMap::new()),
            syms: RefCell::new(Vec::new()),
            scratch: RefCell::new((Vec::new(), Vec::new())),
        }
    }

    /// The symbols of `program`'s looked-up strings in `symbols`, looked up once.
    fn syms(&self, program: &NativeProgram, symbols: &Symbols) -> Rc<[Sym]> {
        let key = std::ptr::from_ref(program) as usize;
        let mut all = self.syms.borrow_mut();
        if let Some((_, s)) = all.iter().find(|(k, _)| *k == key) {
            return Rc::clone(s);
        }
        let s: Rc<[Sym]> = program.interned.iter().map(|x| symbols.lookup(x)).collect();
        all.push((key, Rc::clone(&s)));
        s
    }
}

impl std::fmt::Debug for Escapes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Escapes")
            .field("memoized", &self.memo.borrow().len())
            .finish()
    }
}

/// One cluster as the native evaluator reads it.
#[derive(Clone, Copy)]
pub(crate) struct NativeInput<'a> {
    /// The cluster (its object decoded only when a read needs more than the entry).
    pub(crate) cluster: ClusterRef<'a>,
    pub(crate) entry: &'a ClusterEntry,
    pub(crate) id: ClusterId,
    pub(crate) snapshot: &'a Snapshot,
    /// The columns of reads the evaluator does not build itself.
    pub(crate) reads: &'a ClusterReads,
}

struct Eval<'a> {
    program: &'a NativeProgram,
    input: NativeInput<'a>,
    escapes: &'a Escapes<'a>,
    vars: Vec<V<'a>>,
    /// The value of each read, once read.
    reads: Vec<Option<R<V<'a>>>>,
    meter: Meter,
    /// The symbols of the program's looked-up strings in this snapshot.
    syms: Rc<[Sym]>,
}

impl NativeProgram {
    /// The reads whose values come from the snapshot's cache.
    pub(crate) fn cached_reads(&self) -> impl Iterator<Item = &Read> {
        self.cached.iter()
    }

    /// Evaluates the expression for one cluster, charging `budget` as
    /// [`Program::evaluate`] does; `true` only for the result `true`.
    pub(crate) fn evaluate<'a>(
        &'a self,
        input: NativeInput<'a>,
        escapes: &'a Escapes<'a>,
        budget: &mut Budget,
    ) -> bool {
        let remaining = budget.remaining();
        let per_evaluation = budget.per_evaluation();
        let limit = remaining.min(per_evaluation);
        if !self.charges && self.base_cost <= limit {
            budget.spend(self.base_cost);
            let meter = Meter {
                used: 0,
                limit: u64::MAX,
                exceeded: false,
                on: false,
            };
            return self.run(input, escapes, meter).0 == Ok(true);
        }
        if self.base_cost > limit {
            budget.spend(self.base_cost);
            return false;
        }
        let meter = Meter {
            used: self.base_cost,
            limit,
            exceeded: false,
            on: self.charges,
        };
        let (result, meter) = self.run(input, escapes, meter);
        budget.spend(meter.used);
        !meter.exceeded && result == Ok(true)
    }

    fn run<'a>(
        &'a self,
        input: NativeInput<'a>,
        escapes: &'a Escapes<'a>,
        meter: Meter,
    ) -> (R<bool>, Meter) {
        let (mut vars, mut reads) = std::mem::take(&mut *escapes.scratch.borrow_mut());
        vars.clear();
        vars.resize(self.slots, V::Null);
        reads.clear();
        reads.resize(self.reads.len(), None);
        let mut eval = Eval {
            program: self,
            input,
            escapes,
            vars,
            reads,
            meter,
            syms: escapes.syms(self, &input.snapshot.symbols),
        };
        let result = self
            .program
            .with_stack(|| eval.eval(&self.root).map(|v| matches!(v, V::Bool(true))));
        let Eval {
            vars, reads, meter, ..
        } = eval;
        *escapes.scratch.borrow_mut() = (vars, reads);
        (result, meter)
    }
}

fn try_bool(v: R<V<'_>>) -> R<bool> {
    match v? {
        V::Bool(b) => Ok(b),
        _ => Err(Failed),
    }
}

impl<'a> Eval<'a> {
    /// `&&` (`short` false) and `||` (`short` true) as CEL evaluates them: the left side
    /// equal to `short` decides alone; otherwise the right side decides, and an error on one
    /// side is absorbed when the other side is `short` (commutative short-circuit).
    fn logic(&mut self, x: &'a [Node; 2], short: bool) -> R<V<'a>> {
        let left = try_bool(self.eval(&x[0]));
        if left == Ok(short) {
            return Ok(V::Bool(short));
        }
        let right = match self.eval(&x[1])? {
            V::Bool(b) => Some(b),
            _ => None,
        };
        match (left, right) {
            (Ok(l), Some(r)) if l != short => Ok(V::Bool(r)),
            (Err(_), Some(r)) if r == short => Ok(V::Bool(short)),
            _ => Err(Failed),
        }
    }

    // Long on purpose: one arm per node kind of the compiled program, each a line or a few;
    // the match is the table of what every node evaluates to.
    fn eval(&mut self, node: &'a Node) -> R<V<'a>> {
        match node {
            Node::Const(l) => Ok(match l {
                Lit::Null => V::Null,
                Lit::Bool(b) => V::Bool(*b),
                Lit::Int(i) => V::Int(*i),
                Lit::Uint(u) => V::Uint(*u),
                Lit::Double(d) => V::Double(*d),
                Lit::Str(s, i) => V::Str(Str::Lit(s, self.syms.get(*i).copied().unwrap_or(ABSENT))),
            }),
            Node::Var(slot) => self.vars.get(*slot).cloned().ok_or(Failed),
            Node::Read(i) => self.read(*i),
            Node::Cluster => self.cluster(),
            Node::And(x) => self.logic(x, false),
            Node::Or(x) => self.logic(x, true),
            Node::Cond(x) => {
                if try_bool(self.eval(&x[0]))? {
                    self.eval(&x[1])
                } else {
                    self.eval(&x[2])
                }
            }
            Node::NotStrictlyFalse(x) => Ok(V::Bool(try_bool(self.eval(x)).unwrap_or(true))),
            Node::Not(x, site) => match self.eval(x)? {
                V::Bool(b) => Ok(V::Bool(!b)),
                v => self.escape(site, None, vec![v]),
            },
            Node::Neg(x, site) => match self.eval(x)? {
                V::Int(i) => i.checked_neg().map(V::Int).ok_or(Failed),
                V::Double(d) => Ok(V::Double(-d)),
                v => self.escape(site, None, vec![v]),
            },
            Node::Bin(op, x, site) => {
                let a = self.eval(&x[0])?;
                let b = self.eval(&x[1])?;
                match binary(*op, &a, &b) {
                    Some(r) => r,
                    None => self.escape(site, None, vec![a, b]),
                }
            }
            Node::Index(x, site) => {
                let a = self.eval(&x[0])?;
                let b = self.eval(&x[1])?;
                match index(&a, &b) {
                    Some(r) => r,
                    None => self.escape(site, None, vec![a, b]),
                }
            }
            Node::Select {
                operand,
                field,
                test,
                site,
            } => {
                let v = self.eval(operand)?;
                match &v {
                    V::Map(m) => {
                        let found = m.get_str(&Str::Ref(field));
                        if *test {
                            Ok(V::Bool(found.is_some()))
                        } else {
                            found.ok_or(Failed)
                        }
                    }
                    V::Cel(_) => self.escape(site, Some(v), Vec::new()),
                    // Lists and scalars have no fields: an error, with `has()` too.
                    _ => Err(Failed),
                }
            }
            Node::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.eval(item)?);
                }
                Ok(V::List(List::Own(Rc::new(out))))
            }
            Node::Size(x, site, member) => {
                let v = self.eval(x)?;
                let n = match &v {
                    V::Str(s) => s.as_str().chars().count(),
                    V::List(l) => l.len(),
                    V::Map(m) => m.len(),
                    _ if *member => return self.escape(site, Some(v), Vec::new()),
                    _ => return self.escape(site, None, vec![v]),
                };
                Ok(V::Int(i64::try_from(n).unwrap_or(i64::MAX)))
            }
            Node::StrCall(f, x, site) => {
                // The interpreter evaluates a call's arguments before its receiver.
                let arg = self.eval(&x[1])?;
                let target = self.eval(&x[0])?;
                match (&target, &arg) {
                    (V::Str(t), V::Str(a)) => {
                        let (t, a) = (t.as_str(), a.as_str());
                        Ok(V::Bool(match f {
                            StrFn::StartsWith => t.starts_with(a),
                            StrFn::EndsWith => t.ends_with(a),
                            StrFn::Contains => t.contains(a),
                        }))
                    }
                    _ => self.escape(site, Some(target), vec![arg]),
                }
            }
            Node::Scores(x) => {
                let name = self.eval(&x[1])?;
                // The receiver is evaluated (and may fail), then ignored.
                self.eval(&x[0])?;
                let V::Str(name) = name else {
                    return Err(Failed);
                };
                let snapshot = self.input.snapshot;
                let table = snapshot.scores.get(name.as_str()).ok_or(Failed)?;
                let row = table.row(self.input.id).ok_or(Failed)?;
                Ok(V::List(List::Scores(table.items(row), &snapshot.symbols)))
            }
            Node::Cost(x, weight) => {
                let v = self.eval(x)?;
                self.meter.charge(weight.saturating_add(v.size_units()))?;
                Ok(v)
            }
            Node::CostEach(x, weight) => {
                let v = self.eval(x)?;
                self.meter
                    .charge(v.elements().saturating_mul(weight.saturating_add(1)))?;
                Ok(v)
            }
            Node::Comp(c) => self.comprehension(c),
            Node::Escape { target, args, site } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(a)?);
                }
                let target = match target {
                    Some(t) => Some(self.eval(t)?),
                    None => None,
                };
                self.escape(site, target, values)
            }
        }
    }

    fn comprehension(&mut self, c: &'a Comp) -> R<V<'a>> {
        let init = self.eval(&c.init)?;
        let range = self.eval(&c.range)?;
        if let Some((guard, items)) = &c.append
            && matches!(&init, V::List(l) if l.len() == 0)
        {
            let mut out: Vec<V<'a>> = Vec::new();
            let elements = range.items()?;
            for i in 0..elements.len() {
                let item = elements.get(i).ok_or(Failed)?;
                if !try_bool(self.eval(&c.cond))? {
                    break;
                }
                self.vars[c.iter] = item;
                if let Some(g) = guard
                    && !try_bool(self.eval(g))?
                {
                    continue;
                }
                match self.eval(items)? {
                    V::List(l) => out.extend(l.to_vec()),
                    // The interpreter extends a list with a list only.
                    _ => return Err(Failed),
                }
            }
            return Ok(V::List(List::Own(Rc::new(out))));
        }
        self.vars[c.accu] = init;
        let mut pending = false;
        let elements = range.items()?;
        for i in 0..elements.len() {
            let item = elements.get(i).ok_or(Failed)?;
            if !try_bool(self.eval(&c.cond))? {
                break;
            }
            self.vars[c.iter] = item;
            let step = self.eval(&c.step);
            match (step, c.fold) {
                (Err(_), Some(_)) => pending = true,
                (Err(e), None) => return Err(e),
                (Ok(accu), Some(fold)) if pending => {
                    let absorbing = matches!(accu, V::Bool(b) if b == (fold == Fold::Or));
                    if absorbing {
                        pending = false;
                        self.vars[c.accu] = accu;
                    }
                }
                (Ok(accu), _) => {
                    pending = false;
                    self.vars[c.accu] = accu;
                }
            }
        }
        if pending {
            return Err(Failed);
        }
        self.eval(&c.result)
    }

    fn cluster(&mut self) -> R<V<'a>> {
        let whole = Read::Path(Vec::new());
        match self
            .input
            .reads
            .value(&whole, self.input.id.index(), self.input.cluster)
        {
            Some(Some(v)) => Ok(V::from_cel(v)),
            Some(None) => Err(Failed),
            None => Ok(V::Map(Map::Empty)),
        }
    }

    fn read(&mut self, i: usize) -> R<V<'a>> {
        if let Some(Some(v)) = self.reads.get(i) {
            return v.clone();
        }
        let v = self.read_now(i);
        if let Some(slot) = self.reads.get_mut(i) {
            *slot = Some(v.clone());
        }
        v
    }

    // Long on purpose: one arm per kind of cluster read, sharing the accessors defined at the
    // top (labels, annotations, capacity, allocatable, claims).
    fn read_now(&mut self, i: usize) -> R<V<'a>> {
        let source: ClusterRef<'a> = self.input.cluster;
        let cluster = || source.object().ok_or(Failed);
        let entry = self.input.entry;
        let claims = || {
            if entry.has_claims {
                Ok(())
            } else {
                Err(Failed)
            }
        };
        let strings = |annotations: bool| {
            let cluster: &'a ManagedCluster = cluster()?;
            if annotations {
                cluster.metadata.annotations.as_ref()
            } else {
                cluster.metadata.labels.as_ref()
            }
            .ok_or(Failed)
        };
        let quantities = |capacity: bool| {
            let cluster: &'a ManagedCluster = cluster()?;
            cluster
                .status
                .as_ref()
                .and_then(|s| {
                    if capacity {
                        s.capacity.as_ref()
                    } else {
                        s.allocatable.as_ref()
                    }
                })
                .ok_or(Failed)
        };
        match self.program.reads.get(i).ok_or(Failed)? {
            ReadKind::Name => entry
                .has_name
                .then(|| V::Str(Str::Ref(self.input.snapshot.cluster_name(self.input.id))))
                .ok_or(Failed),
            ReadKind::Label(_, k) => {
                let key = self.syms.get(*k).copied().unwrap_or(ABSENT);
                if key == ABSENT || !entry.has_labels {
                    return Err(Failed);
                }
                let symbols = &self.input.snapshot.symbols;
                self.input
                    .entry
                    .labels
                    .get(key)
                    .map(|v| V::Str(Str::Sym(v, symbols)))
                    .ok_or(Failed)
            }
            ReadKind::Strings(false) => {
                if !entry.has_labels {
                    return Err(Failed);
                }
                Ok(V::Map(Map::Labels(
                    &self.input.entry.labels,
                    &self.input.snapshot.symbols,
                )))
            }
            ReadKind::Strings(a) => Ok(V::Map(Map::Strings(strings(*a)?))),
            ReadKind::String(a, key) => strings(*a)?
                .get(key)
                .map(|v| V::Str(Str::Ref(v)))
                .ok_or(Failed),
            ReadKind::Quantities(c) => Ok(V::Map(Map::Quantities(quantities(*c)?))),
            ReadKind::Quantity(c, key) => quantities(*c)?
                .get(key)
                .map(|q| V::Str(Str::Ref(&q.0)))
                .ok_or(Failed),
            ReadKind::Claims => {
                claims()?;
                Ok(V::List(List::Claims(
                    &self.input.entry.claim_list,
                    &self.input.snapshot.symbols,
                )))
            }
            ReadKind::ClaimPositions => {
                claims()?;
                Ok(V::List(List::Positions(self.input.entry.claim_list.len())))
            }
            ReadKind::ClaimField(f) => {
                claims()?;
                let claims: &'a [(Sym, Sym)] = &self.input.entry.claim_list;
                let symbols = &self.input.snapshot.symbols;
                Ok(if claims.iter().all(|&c| f.get(c).is_some()) {
                    V::List(List::ClaimField(claims, *f, symbols))
                } else {
                    V::Map(Map::ClaimFieldByPos(claims, *f, symbols))
                })
            }
            ReadKind::Column(read) => {
                match self
                    .input
                    .reads
                    .value(read, self.input.id.index(), self.input.cluster)
                {
                    Some(Some(v)) => Ok(V::from_cel(v)),
                    _ => Err(Failed),
                }
            }
        }
    }

    /// Evaluates `site` with the interpreter on `target` and `args`, memoized.
    fn escape(&mut self, site: &'a Site, target: Option<V<'a>>, args: Vec<V<'a>>) -> R<V<'a>> {
        let program = std::ptr::from_ref(self.program) as usize;
        let key: Option<Vec<KeyPart>> = target.iter().chain(&args).map(key_part).collect();
        let key = key.map(|k| (program, site.id, k));
        if let Some(key) = &key
            && let Some((outcome, _)) = self.escapes.memo.borrow().get(key)
        {
            return outcome.as_ref().map(V::from_shared).map_err(|e| *e);
        }
        let outcome = {
            let mut scope = self.escapes.root.new_inner_scope();
            if let Some(t) = &target {
                scope.add_variable_as_val(TARGET, t.to_cel());
            }
            for (i, a) in args.iter().enumerate() {
                scope.add_variable_as_val(arg_name(i), a.to_cel());
            }
            Value::resolve_val(&site.expr, &scope)
                .map(|v| Rc::new(v.into_owned()))
                .map_err(|_| Failed)
        };
        let value = outcome.as_ref().map(V::from_shared).map_err(|e| *e);
        let mut memo = self.escapes.memo.borrow_mut();
        if let Some(key) = key
            && memo.len() < MEMO_LIMIT
        {
            // Values of the interpreter's in the key are kept alive with it, so their
            // addresses stay theirs while the memo lives.
            let keep: Vec<Rc<Box<dyn Val + 'static>>> = target
                .iter()
                .chain(&args)
                .filter_map(|v| match v {
                    V::Cel(CelRef::Shared(rc)) => Some(Rc::clone(rc)),
                    _ => None,
                })
                .collect();
            memo.insert(key, (outcome, keep));
        }
        value
    }
}

/// A binary operator on two values natively; `None` to leave it to the interpreter.
fn binary<'a>(op: BinOp, a: &V<'a>, b: &V<'a>) -> Option<R<V<'a>>> {
    use std::cmp::Ordering;
    let cmp = |a: &V<'a>, b: &V<'a>| -> Option<R<Ordering>> {
        Some(match (a, b) {
            (V::Str(x), V::Str(y)) => Ok(x.as_str().cmp(y.as_str())),
            (V::Bool(x), V::Bool(y)) => Ok(x.cmp(y)),
            (V::Int(_) | V::Uint(_) | V::Double(_), V::Int(_) | V::Uint(_) | V::Double(_)) => {
                numeric_cmp(a, b).ok_or(Failed)
            }
            _ => return None,
        })
    };
    let ordering = |want: fn(Ordering) -> bool| -> Option<R<V<'a>>> {
        Some(cmp(a, b)?.map(|o| V::Bool(want(o))))
    };
    match op {
        BinOp::Eq => scalar_eq(a, b).map(|x| Ok(V::Bool(x))),
        BinOp::Ne => scalar_eq(a, b).map(|x| Ok(V::Bool(!x))),
        BinOp::Lt => ordering(|o| o == Ordering::Less),
        BinOp::Le => ordering(|o| o != Ordering::Greater),
        BinOp::Gt => ordering(|o| o == Ordering::Greater),
        BinOp::Ge => ordering(|o| o != Ordering::Less),
        BinOp::Add => Some(match (a, b) {
            (V::Int(x), V::Int(y)) => x.checked_add(*y).map(V::Int).ok_or(Failed),
            (V::Uint(x), V::Uint(y)) => x.checked_add(*y).map(V::Uint).ok_or(Failed),
            (V::Double(x), V::Double(y)) => Ok(V::Double(x + y)),
            (V::Str(x), V::Str(y)) => {
                let mut s = String::with_capacity(x.as_str().len() + y.as_str().len());
                s.push_str(x.as_str());
                s.push_str(y.as_str());
                Ok(V::Str(Str::Own(Rc::from(s))))
            }
            (V::List(x), V::List(y)) => {
                let mut v = x.to_vec();
                v.extend(y.to_vec());
                Ok(V::List(List::Own(Rc::new(v))))
            }
            _ => return None,
        }),
        BinOp::Sub => Some(match (a, b) {
            (V::Int(x), V::Int(y)) => x.checked_sub(*y).map(V::Int).ok_or(Failed),
            (V::Uint(x), V::Uint(y)) => x.checked_sub(*y).map(V::Uint).ok_or(Failed),
            (V::Double(x), V::Double(y)) => Ok(V::Double(x - y)),
            _ => return None,
        }),
        BinOp::Mul => Some(match (a, b) {
            (V::Int(x), V::Int(y)) => x.checked_mul(*y).map(V::Int).ok_or(Failed),
            (V::Uint(x), V::Uint(y)) => x.checked_mul(*y).map(V::Uint).ok_or(Failed),
            (V::Double(x), V::Double(y)) => Ok(V::Double(x * y)),
            _ => return None,
        }),
        BinOp::Div => Some(match (a, b) {
            (V::Int(x), V::Int(y)) => x.checked_div(*y).map(V::Int).ok_or(Failed),
            (V::Uint(x), V::Uint(y)) => x.checked_div(*y).map(V::Uint).ok_or(Failed),
            (V::Double(x), V::Double(y)) => Ok(V::Double(x / y)),
            _ => return None,
        }),
        BinOp::Mod => Some(match (a, b) {
            (V::Int(x), V::Int(y)) => x.checked_rem(*y).map(V::Int).ok_or(Failed),
            (V::Uint(x), V::Uint(y)) => x.checked_rem(*y).map(V::Uint).ok_or(Failed),
            _ => return None,
        }),
        BinOp::In => match b {
            V::List(l) if a.is_scalar() => {
                let mut found = false;
                for i in 0..l.len() {
                    let item = l.get(i)?;
                    // An item that is no scalar: leave the whole test to the interpreter.
                    if !scalar_eq(&item, a)? {
                        continue;
                    }
                    found = true;
                    break;
                }
                Some(Ok(V::Bool(found)))
            }
            V::Map(m) => match a {
                V::Str(_) | V::Int(_) | V::Uint(_) | V::Double(_) | V::Bool(_) => {
                    Some(m.get(a).map(|v| V::Bool(v.is_some())))
                }
                V::Null | V::List(_) | V::Map(_) => Some(Err(Failed)),
                V::Cel(_) => None,
            },
            _ => None,
        },
    }
}

/// `a[b]` natively; `None` to leave it to the interpreter.
fn index<'a>(a: &V<'a>, b: &V<'a>) -> Option<R<V<'a>>> {
    match a {
        V::List(l) => {
            let i = match b {
                V::Int(i) => usize::try_from(*i).map_err(|_| Failed),
                V::Uint(u) => usize::try_from(*u).map_err(|_| Failed),
                V::Double(d) => whole(*d)
                    .ok_or(Failed)
                    .and_then(|i| usize::try_from(i).map_err(|_| Failed)),
                V::Cel(_) => return None,
                _ => Err(Failed),
            };
            Some(i.and_then(|i| l.get(i).ok_or(Failed)))
        }
        V::Map(m) => match b {
            V::Cel(_) => None,
            _ => Some(m.get(b).and_then(|v| v.ok_or(Failed))),
        },
        V::Cel(_) => None,
        _ => match b {
            V::Cel(_) => None,
            _ => Some(Err(Failed)),
        },
    }
}

#[cfg(test)]
mod tests {
    //! The native evaluation against the interpreter's, expression by expression: the same
    //! outcome (`true` or not) and the same runtime cost, on clusters of every shape.

    use std::collections::BTreeSet;
    use std::sync::OnceLock;

    use proptest::prelude::*;
    use serde_json::json;

    use super::super::{ClusterInput, ClusterReads, CompiledExpression, ScoresInput, compile};
    use super::*;
    use crate::snapshot::Snapshot;

    /// Clusters of every shape: labels (dotted keys, empty values) or none, claims with a
    /// missing name or value and a repeated name, or none, resources, annotations, AddOn
    /// scores or none.
    fn snapshot() -> Snapshot {
        let clusters = [
            json!({"metadata": {"name": "c1", "labels": {"env": "prod", "a.b/c": "1", "empty": "",
                    "version": "1.30.2", "cloud": "Amazon"},
                    "annotations": {"x": "y"}},
                   "spec": {"hubAcceptsClient": true},
                   "status": {"clusterClaims": [{"name": "platform", "value": "Amazon"},
                                                {"name": "id", "value": "id-1"},
                                                {"name": "platform", "value": "Azure"}],
                              "allocatable": {"cpu": "4", "memory": "8Gi"},
                              "capacity": {"cpu": "8", "memory": "16Gi"},
                              "version": {"kubernetes": "v1.30.0"}}}),
            json!({"metadata": {"name": "c2", "labels": {"env": "dev", "version": "junk"}},
                   "status": {"clusterClaims": [{"name": "only-name"}, {"value": "only-value"}, {}]}}),
            json!({"metadata": {"name": "c3", "labels": {}}, "status": {"clusterClaims": []}}),
            json!({"metadata": {"name": "c4"}, "status": {}}),
            json!({"metadata": {"name": "c5", "labels": {"env": "prod", "cloud": "Azure"}},
                   "status": {"clusterClaims": [{"name": "platform", "value": "Azure"}],
                              "allocatable": {"memory": "200Gi"}}}),
            // A claim without name before one with: loops that fail, then succeed.
            json!({"metadata": {"name": "c6", "labels": {"env": "c", "cloud": "c"}},
                   "status": {"clusterClaims": [{"value": "Azure"}, {"name": "c", "value": "c"},
                                                {"name": "prod", "value": ""}]}}),
        ];
        let mut b = Snapshot::builder();
        for c in clusters {
            let c: ManagedCluster = serde_json::from_value(c).expect("cluster");
            b.add_cluster(c);
        }
        for (ns, items) in [
            (
                "c1",
                json!([{"name": "demo", "value": 7}, {"name": "cpu", "value": -3}]),
            ),
            ("c2", json!([])),
            ("c5", json!([{"name": "demo", "value": -1}])),
        ] {
            let score = serde_json::from_value(json!({
                "metadata": {"name": "demo", "namespace": ns},
                "status": {"scores": items}
            }))
            .expect("score");
            b.add_addon_score(&score);
        }
        b.build()
    }

    fn snapshot_once() -> &'static Snapshot {
        static S: OnceLock<Snapshot> = OnceLock::new();
        S.get_or_init(snapshot)
    }

    /// The interpreter's outcome and the native one for `expr` on every cluster, with each
    /// of the budgets: (matched, budget left) pairs.
    fn outcomes(
        expr: &CompiledExpression,
        budgets: &[(u64, u64)],
    ) -> Vec<((bool, u64), (bool, u64))> {
        let snapshot = snapshot_once();
        // An expression the evaluator does not compile (a map literal) is the interpreter's.
        let native = expr.native.as_ref();
        let cache = super::super::CelCache::new(snapshot.cluster_count());
        let all: BTreeSet<&Read> = expr
            .reads
            .iter()
            .chain(native.into_iter().flat_map(|n| n.cached_reads()))
            .collect();
        let reads = ClusterReads::new(all, &cache);
        let root = super::super::root_context();
        let escapes = Escapes::new(super::super::root_context());
        let mut out = Vec::new();
        for index in 0..snapshot.cluster_count() {
            let id = ClusterId(u32::try_from(index).expect("small"));
            let entry = &snapshot.clusters[index];
            let input = ClusterInput {
                reads: &reads,
                index,
                source: ClusterRef {
                    entry,
                    symbols: &snapshot.symbols,
                },
                scores: ScoresInput::Lazy {
                    snapshot,
                    id,
                    value: OnceLock::new(),
                },
            };
            let mut scope = root.new_inner_scope();
            scope.set_variable_resolver(&input);
            for &(total, each) in budgets {
                let mut budget = Budget::new(total, each);
                let interpreted = matches!(
                    expr.rewritten.evaluate(&scope, &mut budget),
                    Ok(Value::Bool(true))
                );
                let interpreted = (interpreted, budget.remaining());
                let mut budget = Budget::new(total, each);
                let native_input = NativeInput {
                    cluster: ClusterRef {
                        entry,
                        symbols: &snapshot.symbols,
                    },
                    entry,
                    id,
                    snapshot,
                    reads: &reads,
                };
                let Some(native) = native else {
                    out.push((interpreted, interpreted));
                    continue;
                };
                let matched = native.evaluate(native_input, &escapes, &mut budget);
                out.push((interpreted, (matched, budget.remaining())));
            }
        }
        out
    }

    const BUDGETS: &[(u64, u64)] = &[
        (10_000_000, 1_000_000),
        (40, 1_000_000),
        (10_000, 25),
        (7, 3),
    ];

    /// Asserts that native and interpreted evaluations agree; returns how many clusters
    /// matched with the default budget.
    fn agree(source: &str) -> usize {
        let expr = compile(source).unwrap_or_else(|e| panic!("{source}: {e}"));
        let pairs = outcomes(&expr, BUDGETS);
        for (i, (interpreted, native)) in pairs.iter().enumerate() {
            assert_eq!(
                interpreted,
                native,
                "{source}: cluster {}, budget {:?}",
                i / BUDGETS.len(),
                BUDGETS[i % BUDGETS.len()]
            );
        }
        pairs
            .iter()
            .step_by(BUDGETS.len())
            .filter(|(i, _)| i.0)
            .count()
    }

    #[test]
    fn every_native_operation_agrees_with_the_interpreter() {
        let cases = [
            // Reads.
            ("managedCluster.metadata.name == 'c1'", 1),
            ("managedCluster.metadata.labels['env'] == 'prod'", 2),
            ("managedCluster.metadata.labels.env != 'prod'", 2),
            ("managedCluster.metadata.labels['a.b/c'] == '1'", 1),
            ("managedCluster.metadata.labels['nobody'] == 'x' || true", 6),
            ("size(managedCluster.metadata.labels) >= 2", 4),
            ("has(managedCluster.metadata.labels.env)", 4),
            ("'env' in managedCluster.metadata.labels", 4),
            ("managedCluster.metadata.labels.exists(k, k == 'cloud')", 3),
            ("managedCluster.metadata.labels.all(k, k.size() > 2)", 5),
            ("managedCluster.metadata.annotations.x == 'y'", 1),
            ("managedCluster.status.allocatable.cpu == '4'", 1),
            ("managedCluster.status.capacity['memory'] == '16Gi'", 1),
            ("'cpu' in managedCluster.status.allocatable", 1),
            (
                "managedCluster.status.version.kubernetes.startsWith('v1')",
                1,
            ),
            ("managedCluster.spec.hubAcceptsClient", 1),
            ("managedCluster.status.clusterClaims.size() == 3", 3),
            (
                "managedCluster.status.clusterClaims.exists(c, c.name == 'platform' && c.value == 'Azure')",
                2,
            ),
            ("managedCluster.status.clusterClaims.all(c, has(c.name))", 3),
            (
                "managedCluster.status.clusterClaims.exists(c, c.value == 'only-value')",
                1,
            ),
            // A failing step is forgiven by a later one that decides (`all` on false, `exists`
            // on true), not by one that does not.
            (
                "managedCluster.status.clusterClaims.all(c, c.name != 'c')",
                3,
            ),
            (
                "managedCluster.status.clusterClaims.all(c, c.name != 'x')",
                3,
            ),
            (
                "!managedCluster.status.clusterClaims.all(c, c.name != 'c')",
                1,
            ),
            (
                "managedCluster.status.clusterClaims.exists(c, c.name == 'c')",
                1,
            ),
            (
                "managedCluster.status.clusterClaims.exists_one(c, c.name == 'platform')",
                1,
            ),
            (
                "managedCluster.status.clusterClaims.filter(c, c.name == 'platform').size() == 2",
                1,
            ),
            (
                "managedCluster.status.clusterClaims.map(c, c.value) == ['Amazon', 'id-1', 'Azure']",
                1,
            ),
            ("managedCluster.status.clusterClaims[1].value == 'id-1'", 1),
            (
                "managedCluster.status.clusterClaims[0] == {'name': 'platform', 'value': 'Amazon'}",
                1,
            ),
            (
                "managedCluster.status.clusterClaims.exists(c, c.name.endsWith('form'))",
                2,
            ),
            // Scores.
            (
                "managedCluster.scores('demo').exists(s, s.name == 'demo' && s.value > 0)",
                1,
            ),
            ("managedCluster.scores('demo').size() == 0", 1),
            ("managedCluster.scores('other').size() == 0 || true", 6),
            ("managedCluster.scores('demo').map(s, s.value).sum() < 0", 1),
            // Scalars, operators, errors.
            ("1 + 2 == 3 && 2u * 3u == 6u && 1.5 + 1.5 == 3.0", 6),
            (
                "'a' + 'b' == 'ab' && 'abc'.contains('b') && 'abc'.size() == 3",
                6,
            ),
            ("9223372036854775807 + 1 == 0 || true", 6),
            ("9223372036854775807 + 1 == 0", 0),
            ("1 / 0 == 0 || 1 % 0 == 0 || true", 6),
            ("0u - 1u > 0u", 0),
            (
                "1 == 1.0 && 1u == 1 && 2.0 != 3u && !(1 == 'a') && null == null",
                6,
            ),
            ("1 < 1.5 && 2u > 1 && 'a' < 'b' && false < true", 6),
            ("1 < 'a' || true", 6),
            ("-(-9223372036854775807 - 1) > 0", 0),
            (
                "[1, 2] + [3] == [1, 2, 3] && 2 in [1, 2] && !(5 in [1, 2])",
                6,
            ),
            (
                "[1, 'a', 2.0][1] == 'a' && [1, 2][1u] == 2 && [1, 2][1.0] == 2",
                6,
            ),
            ("[1, 2][2] == 0 || [1][-1] == 0 || true", 6),
            ("(true ? 1 : 'x') == 1", 6),
            ("true ? 1 : 'x' == 1", 0),
            (
                "(1 > 0 ? managedCluster.metadata.labels.env : 'x') == 'prod'",
                2,
            ),
            ("!(managedCluster.metadata.labels.env == 'dev') && true", 3),
            (
                "managedCluster.metadata.labels.env == 'dev' || managedCluster.status.clusterClaims.size() > 1",
                3,
            ),
            // Escapes.
            (
                "semver(managedCluster.metadata.labels['version']).isGreaterThan(semver('1.29.0'))",
                1,
            ),
            ("isSemver(managedCluster.metadata.labels.version)", 1),
            (
                "quantity(managedCluster.status.allocatable.memory).isGreaterThan(quantity('100Gi'))",
                1,
            ),
            (
                "int('12') + 1 == 13 && string(1) == '1' && double(1) == 1.0",
                6,
            ),
            ("type(managedCluster.metadata.name) == string", 6),
            ("managedCluster.metadata.name.matches('^c[12]$')", 2),
            (
                "managedCluster.metadata.labels.env.upperAscii() == 'PROD'",
                2,
            ),
            ("'{\"a\": [1, 2]}'.parseJSON().a.size() == 2", 6),
            ("optional.of(managedCluster.metadata.name).hasValue()", 6),
            (
                "managedCluster.?metadata.?labels.env == optional.of('prod')",
                2,
            ),
            (
                "lists.range(3).all(i, i < 3) && math.greatest(1, 2) == 2",
                6,
            ),
            (
                "[1, 2].map(x, x * 2) == [2, 4] && [1, 2, 3].filter(x, x > 1).size() == 2",
                6,
            ),
            ("[[1], [2]].exists(l, l == [2])", 6),
            ("{'a': 1}.a == 1", 6),
            ("has(managedCluster.metadata)", 6),
            ("type(managedCluster) == map", 6),
            (
                "managedCluster.metadata.labels.exists(k, managedCluster.metadata.labels[k] == '1')",
                1,
            ),
            // Costs: loops past small limits.
            ("lists.range(20).all(i, i >= 0)", 6),
            (
                "managedCluster.status.clusterClaims.all(c, c.name + 'x' != '')",
                3,
            ),
        ];
        let wrong: Vec<(&str, usize, usize)> = cases
            .iter()
            .map(|&(source, matched)| (source, matched, agree(source)))
            .filter(|(_, want, got)| want != got)
            .collect();
        assert!(
            wrong.is_empty(),
            "(expression, expected, matched): {wrong:#?}"
        );
    }

    /// An expression and whether it iterates over a map (whose keys the interpreter visits in
    /// random order, which can change what an early-ending loop costs).
    type Gen = (String, bool);

    fn leaf() -> impl Strategy<Value = Gen> {
        prop::sample::select(vec![
            "0",
            "1",
            "-3",
            "2u",
            "1.5",
            "-0.0",
            "'a'",
            "'prod'",
            "''",
            "'Azure'",
            "'id-1'",
            "true",
            "false",
            "null",
            "[]",
            "[1, 'a']",
            "['prod', 'dev']",
            "[1, 2u, 3.0]",
            "managedCluster.metadata.name",
            "managedCluster.metadata.labels['env']",
            "managedCluster.metadata.labels.cloud",
            "managedCluster.metadata.labels['a.b/c']",
            "managedCluster.metadata.labels",
            "managedCluster.metadata.annotations",
            "managedCluster.status.clusterClaims",
            "managedCluster.status.clusterClaims[0]",
            "managedCluster.status.allocatable['memory']",
            "managedCluster.status.capacity",
            "managedCluster.status.version",
            "managedCluster.scores('demo')",
            "x",
            "y",
        ])
        .prop_map(|s| (s.to_string(), false))
    }

    fn expression() -> impl Strategy<Value = Gen> {
        leaf().prop_recursive(4, 32, 3, |inner| {
            let binary = prop::sample::select(vec![
                "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "&&", "||", "in",
            ]);
            let member = prop::sample::select(vec![
                "startsWith",
                "endsWith",
                "contains",
                "matches",
                "lowerAscii",
                "size",
            ]);
            let list_loop =
                prop::sample::select(vec!["all", "exists", "exists_one", "map", "filter"]);
            let map_loop = prop::sample::select(vec!["all", "exists", "exists_one"]);
            let ranges = prop::sample::select(vec![
                "managedCluster.status.clusterClaims",
                "managedCluster.scores('demo')",
                "[1, 2, 3]",
                "['a', 'prod']",
                "lists.range(4)",
            ]);
            let maps = prop::sample::select(vec![
                "managedCluster.metadata.labels",
                "managedCluster.status.allocatable",
            ]);
            let field = prop::sample::select(vec!["name", "value", "env", "demo", "kubernetes"]);
            prop_oneof![
                (inner.clone(), binary, inner.clone())
                    .prop_map(|(a, op, b)| (format!("({}) {op} ({})", a.0, b.0), a.1 || b.1)),
                inner.clone().prop_map(|a| (format!("!({})", a.0), a.1)),
                inner.clone().prop_map(|a| (format!("-({})", a.0), a.1)),
                inner.clone().prop_map(|a| (format!("size({})", a.0), a.1)),
                (inner.clone(), field.clone()).prop_map(|(a, f)| (format!("({}).{f}", a.0), a.1)),
                (inner.clone(), field).prop_map(|(a, f)| (format!("has(({}).{f})", a.0), a.1)),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| (format!("({})[{}]", a.0, b.0), a.1 || b.1)),
                (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| (
                    format!("({}) ? ({}) : ({})", c.0, a.0, b.0),
                    c.1 || a.1 || b.1
                )),
                (inner.clone(), member, inner.clone()).prop_map(|(a, m, b)| {
                    let arg = if matches!(m, "lowerAscii" | "size") {
                        String::new()
                    } else {
                        b.0
                    };
                    (format!("({}).{m}({arg})", a.0), a.1 || b.1)
                }),
                (ranges, list_loop, inner.clone())
                    .prop_map(|(r, l, b)| (format!("{r}.{l}(x, {})", b.0), b.1)),
                (maps, map_loop, inner.clone())
                    .prop_map(|(r, l, b)| (format!("{r}.{l}(y, {})", b.0), true)),
                inner
                    .clone()
                    .prop_map(|a| (format!("semver({}).major() == 1", a.0), a.1)),
                inner.prop_map(|a| (format!("string({})", a.0), a.1)),
            ]
        })
    }

    /// Strings: literals, the cluster's name, labels and resources, the fields of the item
    /// `var` of an enclosing loop over the claims, and concatenations.
    fn string(var: Option<&'static str>) -> BoxedStrategy<String> {
        let mut leaves = vec![
            "'prod'".to_string(),
            "'Azure'".to_string(),
            "''".to_string(),
            "'c'".to_string(),
            "managedCluster.metadata.name".to_string(),
            "managedCluster.metadata.labels['env']".to_string(),
            "managedCluster.metadata.labels.cloud".to_string(),
            "managedCluster.metadata.labels['a.b/c']".to_string(),
            "managedCluster.status.allocatable['memory']".to_string(),
        ];
        if let Some(v) = var {
            leaves.extend([
                format!("{v}.name"),
                format!("{v}.value"),
                format!("{v}.name"),
            ]);
        }
        prop::sample::select(leaves)
            .prop_recursive(2, 6, 2, |inner| {
                (inner.clone(), inner).prop_map(|(a, b)| format!("({a} + {b})"))
            })
            .boxed()
    }

    /// Integers: literals, sizes, AddOn scores, arithmetic.
    fn int(var: Option<&'static str>) -> BoxedStrategy<String> {
        let leaves = prop_oneof![
            prop::sample::select(vec![
                "0",
                "1",
                "-3",
                "7",
                "9223372036854775807",
                "managedCluster.status.clusterClaims.size()",
                "managedCluster.scores('demo').size()",
                "managedCluster.scores('demo')[0].value",
            ])
            .prop_map(str::to_string),
            string(var).prop_map(|s| format!("size({s})")),
        ];
        leaves
            .prop_recursive(2, 6, 2, |inner| {
                let op = prop::sample::select(vec!["+", "-", "*", "/", "%"]);
                prop_oneof![
                    (inner.clone(), op, inner.clone())
                        .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
                    inner.prop_map(|a| format!("-({a})")),
                ]
            })
            .boxed()
    }

    /// Conditions on the cluster (and on `var`, inside a loop over the claims).
    fn condition(var: Option<&'static str>) -> BoxedStrategy<String> {
        let cmp = prop::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]);
        let text = prop::sample::select(vec!["startsWith", "endsWith", "contains"]);
        prop_oneof![
            Just("true".to_string()),
            Just("false".to_string()),
            (string(var), cmp.clone(), string(var)).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (int(var), cmp, int(var)).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (string(var), text, string(var)).prop_map(|(a, f, b)| format!("{a}.{f}({b})")),
            string(var).prop_map(|a| format!("{a} in ['prod', 'dev', 'Azure', 'c1']")),
            string(var).prop_map(|a| format!("{a} in managedCluster.metadata.labels")),
            Just("has(managedCluster.metadata.labels.env)".to_string()),
            // Mixed kinds: errors and interpreter escapes.
            (string(var), int(var)).prop_map(|(a, b)| format!("{a} == {b}")),
            (string(var), int(var)).prop_map(|(a, b)| format!("{a} < {b}")),
        ]
        .boxed()
    }

    /// Well-typed conditions (mostly), combined and looped.
    fn typed_condition() -> impl Strategy<Value = Gen> {
        condition(None)
            .prop_map(|c| (c, false))
            .prop_recursive(3, 24, 3, |inner| {
                let quantifier = prop::sample::select(vec!["exists", "all", "exists_one"]);
                let list_loop = prop::sample::select(vec!["exists", "all", "exists_one", "filter"]);
                let cmp = prop::sample::select(vec!["==", "!=", "<", ">="]);
                prop_oneof![
                    inner.clone().prop_map(|(a, m)| (format!("!({a})"), m)),
                    (inner.clone(), inner.clone())
                        .prop_map(|(a, b)| (format!("({}) && ({})", a.0, b.0), a.1 || b.1)),
                    (inner.clone(), inner.clone())
                        .prop_map(|(a, b)| (format!("({}) || ({})", a.0, b.0), a.1 || b.1)),
                    (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| (
                        format!("({}) ? ({}) : ({})", c.0, a.0, b.0),
                        c.1 || a.1 || b.1
                    )),
                    (quantifier.clone(), condition(Some("c")), inner.clone()).prop_map(
                        |(q, body, other)| (
                            format!(
                                "managedCluster.status.clusterClaims.{q}(c, {body} || ({}))",
                                other.0
                            ),
                            other.1
                        )
                    ),
                    (list_loop, condition(Some("c"))).prop_map(|(q, body)| {
                        let e = format!("managedCluster.status.clusterClaims.{q}(c, {body})");
                        let e = if q == "filter" {
                            format!("{e}.size() > 1")
                        } else {
                            e
                        };
                        (e, false)
                    }),
                    (quantifier.clone(), cmp.clone(), int(None)).prop_map(|(q, op, i)| (
                        format!("managedCluster.scores('demo').{q}(s, s.value {op} {i})"),
                        false
                    )),
                    (quantifier.clone(), cmp, int(None))
                        .prop_map(|(q, op, i)| (format!("[1, 2, 3].{q}(x, x {op} {i})"), false)),
                    (quantifier, string(None)).prop_map(|(q, s)| (
                        format!("managedCluster.metadata.labels.{q}(k, k.startsWith({s}))"),
                        true
                    )),
                ]
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

        /// Random expressions: where both compile, native and interpreted evaluations agree on
        /// every cluster and budget (on the result alone where a loop over a map may end
        /// early at a different key).
        #[test]
        fn random_expressions_agree((source, over_map) in expression()) {
            let Ok(expr) = compile(&source) else {
                return Ok(());
            };
            prop_assume!(expr.native.is_some());
            check(&source, &expr, over_map)?;
        }

        /// Mostly well-typed random conditions: native and interpreted evaluations agree.
        #[test]
        fn random_conditions_agree((source, over_map) in typed_condition()) {
            let expr = compile(&source).map_err(|e| TestCaseError::fail(format!("{source}: {e}")))?;
            prop_assert!(expr.native.is_some(), "{} is not compiled natively", source);
            check(&source, &expr, over_map)?;
        }
    }

    fn check(source: &str, expr: &CompiledExpression, over_map: bool) -> Result<(), TestCaseError> {
        {
            let budgets: &[(u64, u64)] = if over_map { &BUDGETS[..1] } else { BUDGETS };
            for (i, (interpreted, native)) in outcomes(expr, budgets).into_iter().enumerate() {
                if over_map {
                    prop_assert_eq!(interpreted.0, native.0, "{} on cluster {}", source, i);
                } else {
                    prop_assert_eq!(
                        interpreted,
                        native,
                        "{} on cluster {}, budget {:?}",
                        source,
                        i / budgets.len(),
                        budgets[i % budgets.len()]
                    );
                }
            }
        }
        Ok(())
    }
}
