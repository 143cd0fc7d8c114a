//! Frozen JSON: the compact, immutable form in which a store keeps its objects and their
//! watch history.
//!
//! A fleet of fake clusters holds the same JSON over and over: every managed cluster's copy of
//! the same CRDs, the field sets of `managedFields`, the Deployment each cluster got from the
//! same ManifestWork, and each object's earlier versions in the watch history. A
//! `serde_json::Value` keeps every copy apart, and each of its JSON objects is a B-tree whose
//! first node alone takes more than 600 bytes. A [`Frozen`] value is a tree of
//! reference-counted slices whose strings, arrays and objects are interned process-wide: equal
//! subtrees, in any cluster, object or version, share one allocation. So an object's next
//! version costs only the parts that changed, and a thousand clusters' copies of one CRD cost
//! little more than one.
//!
//! Interning is by content: a node is shared only with a node that is equal to it (children
//! compared by identity, which for interned children is equality). A hash collision costs
//! sharing, never correctness. The interner holds weak references, swept once a table has
//! doubled since its last sweep, so it never keeps a value alive.
//!
//! Reads turn a frozen value back into a `Value` ([`Frozen::thaw`]); responses are serialized
//! from it directly ([`Frozen`] implements `Serialize`), byte for byte as the `Value` would be,
//! since object keys keep `serde_json::Map`'s (sorted) order.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use ocm_api::k8s::json::descend;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Number, Value};

/// The entries of a frozen JSON object, in key order.
pub(crate) type Entries = [(Arc<str>, Frozen)];

/// An immutable JSON value whose strings, arrays and objects are shared (see the module docs).
#[derive(Clone, Debug)]
pub(crate) enum Frozen {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(Arc<str>),
    /// An array.
    Array(Arc<[Frozen]>),
    /// An object, its entries sorted by key.
    Object(Arc<Entries>),
}

impl Frozen {
    /// The frozen (interned) form of `value`, and how deeply its arrays and objects nest. Values of any
    /// depth are frozen: each level runs on a stack with room for it.
    pub(crate) fn freeze_measured(value: &Value) -> (Frozen, usize) {
        let mut deepest = 0;
        let frozen = Self::freeze_at(value, 0, &mut deepest);
        (frozen, deepest)
    }

    fn freeze_at(value: &Value, depth: usize, deepest: &mut usize) -> Frozen {
        match value {
            Value::Null => Frozen::Null,
            Value::Bool(b) => Frozen::Bool(*b),
            Value::Number(n) => Frozen::Number(n.clone()),
            Value::String(s) => Frozen::String(intern_str(s)),
            Value::Array(items) => descend(|| {
                *deepest = (*deepest).max(depth + 1);
                Frozen::Array(intern_array(
                    items
                        .iter()
                        .map(|v| Self::freeze_at(v, depth + 1, deepest))
                        .collect(),
                ))
            }),
            Value::Object(map) => descend(|| {
                *deepest = (*deepest).max(depth + 1);
                Frozen::Object(intern_object(
                    map.iter()
                        .map(|(k, v)| (intern_str(k), Self::freeze_at(v, depth + 1, deepest)))
                        .collect(),
                ))
            }),
        }
    }

    /// The value as a `serde_json::Value` (a deep copy). Values of any depth are thawed, but the
    /// `Value` given back is as deep as this one: handle a deep one inside
    /// `ocm_api::k8s::json::with_stack`.
    pub(crate) fn thaw(&self) -> Value {
        match self {
            Frozen::Null => Value::Null,
            Frozen::Bool(b) => Value::Bool(*b),
            Frozen::Number(n) => Value::Number(n.clone()),
            Frozen::String(s) => Value::String(s.to_string()),
            Frozen::Array(items) => {
                descend(|| Value::Array(items.iter().map(Self::thaw).collect()))
            }
            Frozen::Object(entries) => descend(|| {
                Value::Object(
                    entries
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.thaw()))
                        .collect::<Map<String, Value>>(),
                )
            }),
        }
    }

    /// The member `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Frozen> {
        let Frozen::Object(entries) = self else {
            return None;
        };
        entries
            .binary_search_by(|(k, _)| k.as_ref().cmp(key))
            .ok()
            .and_then(|i| entries.get(i))
            .map(|(_, v)| v)
    }

    /// The value at a JSON pointer (`/metadata/name`), as `Value::pointer` finds it.
    pub(crate) fn pointer(&self, pointer: &str) -> Option<&Frozen> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut current = self;
        for token in rest.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            current = match current {
                Frozen::Object(_) => current.get(&token)?,
                Frozen::Array(items) => {
                    if token.starts_with('+') || (token.starts_with('0') && token.len() > 1) {
                        return None;
                    }
                    items.get(token.parse::<usize>().ok()?)?
                }
                _ => return None,
            };
        }
        Some(current)
    }

    /// The string, if this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Frozen::String(s) => Some(s),
            _ => None,
        }
    }
}

impl Serialize for Frozen {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Frozen::Null => serializer.serialize_unit(),
            Frozen::Bool(b) => serializer.serialize_bool(*b),
            Frozen::Number(n) => n.serialize(serializer),
            Frozen::String(s) => serializer.serialize_str(s),
            Frozen::Array(items) => descend(|| {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items.iter() {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }),
            Frozen::Object(entries) => descend(|| {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries.iter() {
                    map.serialize_entry(k.as_ref(), v)?;
                }
                map.end()
            }),
        }
    }
}

impl Drop for Frozen {
    /// Drops the last holder of a deep value level by level, each level on a stack with room
    /// for it: a value nested 10,000 levels deep is dropped on any thread.
    fn drop(&mut self) {
        match self {
            Frozen::Array(items) if Arc::strong_count(items) == 1 => {
                let last = std::mem::replace(items, empty_array());
                descend(move || drop(last));
            }
            Frozen::Object(entries) if Arc::strong_count(entries) == 1 => {
                let last = std::mem::replace(entries, empty_object());
                descend(move || drop(last));
            }
            _ => {}
        }
    }
}

/// One shared empty array, left in place of an array being dropped.
fn empty_array() -> Arc<[Frozen]> {
    static EMPTY: OnceLock<Arc<[Frozen]>> = OnceLock::new();
    EMPTY.get_or_init(|| Arc::from(Vec::new())).clone()
}

/// One shared empty object, left in place of an object being dropped.
fn empty_object() -> Arc<Entries> {
    static EMPTY: OnceLock<Arc<Entries>> = OnceLock::new();
    EMPTY.get_or_init(|| Arc::from(Vec::new())).clone()
}

/// A hasher for keys that already are hashes.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = mix(self.0, u64::from(*b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Table<T> = HashMap<u64, Weak<T>, BuildHasherDefault<Prehashed>>;

/// One shard of the interner: a table per kind of node.
#[derive(Default)]
struct Shard {
    strings: Table<str>,
    arrays: Table<[Frozen]>,
    objects: Table<Entries>,
    /// Sweep dead entries once the tables hold this many.
    sweep_at: usize,
}

impl Shard {
    fn len(&self) -> usize {
        self.strings.len() + self.arrays.len() + self.objects.len()
    }

    /// Drops the entries of values nobody holds any more, once the tables have doubled since
    /// the last sweep (amortized constant time per insert).
    fn maybe_sweep(&mut self) {
        if self.len() < self.sweep_at {
            return;
        }
        self.strings.retain(|_, w| w.strong_count() > 0);
        self.arrays.retain(|_, w| w.strong_count() > 0);
        self.objects.retain(|_, w| w.strong_count() > 0);
        self.sweep_at = (2 * self.len()).max(MIN_SWEEP);
    }
}

/// Below this many entries a shard is never swept.
const MIN_SWEEP: usize = 1024;

const SHARDS: usize = 16;

fn shards() -> &'static [Mutex<Shard>; SHARDS] {
    static INTERNER: OnceLock<[Mutex<Shard>; SHARDS]> = OnceLock::new();
    INTERNER.get_or_init(|| {
        std::array::from_fn(|_| {
            Mutex::new(Shard {
                sweep_at: MIN_SWEEP,
                ..Shard::default()
            })
        })
    })
}

fn shard(hash: u64) -> std::sync::MutexGuard<'static, Shard> {
    // The top bits pick the shard; the table uses the whole hash.
    let i = usize::try_from(hash >> 60).unwrap_or(0) % SHARDS;
    shards()[i].lock().unwrap_or_else(|e| e.into_inner())
}

fn mix(h: u64, x: u64) -> u64 {
    (h.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// A final avalanche, so that every bit of the hash depends on every input bit.
fn finish(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

fn hash_str(s: &str) -> u64 {
    let bytes = s.as_bytes();
    let mut h = mix(0x243f_6a88_85a3_08d3, bytes.len() as u64);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        h = mix(h, chunk.iter().fold(0, |a, b| (a << 8) | u64::from(*b)));
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        h = mix(h, tail.iter().fold(0, |a, b| (a << 8) | u64::from(*b)));
    }
    finish(h)
}

/// What identifies a child within its parent: its value for scalars, its address for interned
/// strings, arrays and objects.
fn identity(v: &Frozen) -> u64 {
    match v {
        Frozen::Null => 1,
        Frozen::Bool(b) => 2 + u64::from(*b),
        Frozen::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => mix(4, u),
            (None, Some(i)) => mix(5, i as u64),
            _ => mix(6, n.as_f64().unwrap_or_default().to_bits()),
        },
        Frozen::String(s) => mix(7, Arc::as_ptr(s).cast::<u8>() as usize as u64),
        Frozen::Array(a) => mix(8, Arc::as_ptr(a).cast::<u8>() as usize as u64),
        Frozen::Object(o) => mix(9, Arc::as_ptr(o).cast::<u8>() as usize as u64),
    }
}

/// Whether two children are the same: equal scalars, or the same shared node.
fn same(a: &Frozen, b: &Frozen) -> bool {
    match (a, b) {
        (Frozen::Null, Frozen::Null) => true,
        (Frozen::Bool(x), Frozen::Bool(y)) => x == y,
        (Frozen::Number(x), Frozen::Number(y)) => x == y,
        (Frozen::String(x), Frozen::String(y)) => Arc::ptr_eq(x, y),
        (Frozen::Array(x), Frozen::Array(y)) => Arc::ptr_eq(x, y),
        (Frozen::Object(x), Frozen::Object(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

/// The shared copy of `s` (for other compact records, such as the request journal's).
pub(crate) fn shared_str(s: &str) -> Arc<str> {
    intern_str(s)
}

/// The shared copy of `s`.
fn intern_str(s: &str) -> Arc<str> {
    let hash = hash_str(s);
    let mut shard = shard(hash);
    if let Some(found) = shard.strings.get(&hash).and_then(Weak::upgrade)
        && *found == *s
    {
        return found;
    }
    let new: Arc<str> = Arc::from(s);
    shard.strings.insert(hash, Arc::downgrade(&new));
    shard.maybe_sweep();
    new
}

/// The shared copy of an array of frozen items.
fn intern_array(items: Vec<Frozen>) -> Arc<[Frozen]> {
    let hash = finish(
        items
            .iter()
            .fold(mix(0x1000, items.len() as u64), |h, v| mix(h, identity(v))),
    );
    let found = {
        let shard = shard(hash);
        shard.arrays.get(&hash).and_then(Weak::upgrade)
    };
    // `items` (and with it any child the found node does not share) is dropped outside the
    // lock: dropping a value may take a shard's lock itself.
    if let Some(found) = found
        && found.len() == items.len()
        && found.iter().zip(&items).all(|(a, b)| same(a, b))
    {
        return found;
    }
    let new: Arc<[Frozen]> = Arc::from(items);
    let mut shard = shard(hash);
    shard.arrays.insert(hash, Arc::downgrade(&new));
    shard.maybe_sweep();
    new
}

/// The shared copy of an object's entries (sorted by key, as `serde_json::Map` holds them).
fn intern_object(entries: Vec<(Arc<str>, Frozen)>) -> Arc<Entries> {
    let hash = finish(
        entries
            .iter()
            .fold(mix(0x2000, entries.len() as u64), |h, (k, v)| {
                mix(
                    mix(h, Arc::as_ptr(k).cast::<u8>() as usize as u64),
                    identity(v),
                )
            }),
    );
    let found = {
        let shard = shard(hash);
        shard.objects.get(&hash).and_then(Weak::upgrade)
    };
    if let Some(found) = found
        && found.len() == entries.len()
        && found
            .iter()
            .zip(&entries)
            .all(|((ka, va), (kb, vb))| Arc::ptr_eq(ka, kb) && same(va, vb))
    {
        return found;
    }
    let new: Arc<Entries> = Arc::from(entries);
    let mut shard = shard(hash);
    shard.objects.insert(hash, Arc::downgrade(&new));
    shard.maybe_sweep();
    new
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn freeze(value: &Value) -> Frozen {
        Frozen::freeze_measured(value).0
    }

    fn sample() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "a/b~c": "x"},
                "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
            "spec": {"replicas": 2, "paused": false, "ratio": 0.5, "neg": -3, "big": 18446744073709551615u64,
                "empty": {}, "none": [], "nothing": null,
                "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
            "unicode": "ünïcødé \u{1F600} \"quoted\" \n"
        })
    }

    #[test]
    fn freezing_and_thawing_gives_back_the_same_value_and_the_same_json() {
        let v = sample();
        let f = freeze(&v);
        assert_eq!(f.thaw(), v);
        assert_eq!(
            serde_json::to_vec(&f).unwrap(),
            serde_json::to_vec(&v).unwrap()
        );
        assert_eq!(
            serde_json::to_string_pretty(&f).unwrap(),
            serde_json::to_string_pretty(&v).unwrap()
        );
    }

    #[test]
    fn reads_find_what_value_reads_find() {
        let v = sample();
        let f = freeze(&v);
        for ptr in [
            "",
            "/metadata/name",
            "/metadata/labels/a~1b~0c",
            "/spec/template/spec/containers/0/image",
            "/spec/template/spec/containers/1",
            "/spec/template/spec/containers/00",
            "/spec/template/spec/containers/+0",
            "/spec/nothing",
            "/spec/missing",
            "/kind/x",
            "metadata",
        ] {
            assert_eq!(
                f.pointer(ptr).map(Frozen::thaw).as_ref(),
                v.pointer(ptr),
                "{ptr}"
            );
        }
        assert_eq!(f.get("kind").and_then(Frozen::as_str), Some("Deployment"));
        assert!(f.get("zzz").is_none());
        assert!(matches!(f.pointer("/spec/nothing"), Some(Frozen::Null)));
    }

    #[test]
    fn equal_subtrees_share_one_allocation_and_different_ones_do_not() {
        let a = freeze(&sample());
        let mut other = sample();
        other["metadata"]["name"] = json!("other");
        let b = freeze(&other);
        let (Some(Frozen::Object(spec_a)), Some(Frozen::Object(spec_b))) =
            (a.get("spec"), b.get("spec"))
        else {
            panic!("spec is an object");
        };
        assert!(Arc::ptr_eq(spec_a, spec_b), "the unchanged spec is shared");
        let (Some(Frozen::Object(meta_a)), Some(Frozen::Object(meta_b))) =
            (a.get("metadata"), b.get("metadata"))
        else {
            panic!("metadata is an object");
        };
        assert!(!Arc::ptr_eq(meta_a, meta_b));
        // Numbers of different kinds are different values.
        let one = freeze(&json!({"n": 1}));
        let one_float = freeze(&json!({"n": 1.0}));
        assert_eq!(one_float.thaw(), json!({"n": 1.0}));
        assert_eq!(one.thaw(), json!({"n": 1}));
    }

    #[test]
    fn the_interner_lets_go_of_values_nobody_holds() {
        let unique = format!("only-here-{}", std::process::id());
        let f = freeze(&json!({"k": unique}));
        let Some(Frozen::String(s)) = f.get("k") else {
            panic!("a string");
        };
        let weak = Arc::downgrade(s);
        drop(f);
        assert!(weak.upgrade().is_none());
        // Interning the same text again gives a working value.
        assert_eq!(freeze(&json!(unique)).as_str(), Some(unique.as_str()));
    }

    #[test]
    fn values_as_deep_as_the_api_server_takes_are_frozen_read_and_dropped_on_a_small_stack() {
        let depth = ocm_api::k8s::json::MAX_NESTING_DEPTH;
        let text = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        let v: Value = ocm_api::k8s::json::from_slice(text.as_bytes()).unwrap();
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                let (f, measured) = Frozen::freeze_measured(&v);
                assert_eq!(measured, depth);
                assert_eq!(serde_json::to_vec(&f).unwrap(), text.as_bytes());
                let back = f.thaw();
                assert!(ocm_api::k8s::json::values_equal(&back, &v));
                ocm_api::k8s::json::drop_value(back);
                ocm_api::k8s::json::drop_value(v);
                drop(f);
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn freezing_from_many_threads_agrees() {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                std::thread::spawn(move || {
                    (0..200)
                        .map(|j| {
                            let v = json!({"i": j % 7, "list": [j % 3, "x"], "t": i % 2});
                            let f = freeze(&v);
                            assert_eq!(f.thaw(), v);
                            f
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap().len(), 200);
        }
    }
}
