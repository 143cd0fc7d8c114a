//! JSON as deep as the API server takes it, handled without overflowing a thread's stack.
//!
//! kube-apiserver decodes request bodies with Go's `encoding/json` rules, which allow values
//! nested up to [`MAX_NESTING_DEPTH`] (10,000) levels; a custom resource whose schema keeps
//! unknown fields (a ManifestWork's manifests, for one) can be stored that deep, and every
//! client that lists or watches it then receives it. `serde_json` refuses more than 128 levels
//! while parsing, and every recursive operation on a `serde_json::Value` (parsing, cloning,
//! comparing, serialising, even dropping) uses the thread's stack for each level: about 2-3 KiB
//! per level in a debug build, so a 10,000-level value overflows any thread's default stack.
//!
//! This module is how the SDK reads and handles such values:
//!
//! - [`from_slice`] decodes JSON up to the API server's limit, on a stack grown to fit the
//!   input's depth ([`nesting_depth`]), so that one deep object is one object to decode,
//!   not an error for a whole list;
//! - [`with_stack`] runs any code that handles a value of a known depth on a stack big enough
//!   for it (on the same thread; nothing is grown for shallow values);
//! - [`DeepValue`] and [`Deep`] deserialise and serialise a `Value` of any depth, growing the
//!   stack level by level; [`clone_value`], [`values_equal`] and [`drop_value`] clone, compare
//!   and drop one. [`Manifest`](crate::work::v1::Manifest) uses them, so a ManifestWork of any
//!   depth is safe to clone, compare, serialise and drop on any thread.
//!
//! ```
//! use ocm_api::k8s::json;
//!
//! let deep = format!("{}1{}", "[".repeat(5_000), "]".repeat(5_000));
//! assert_eq!(json::nesting_depth(deep.as_bytes()), 5_000);
//! let value: serde_json::Value = json::from_slice(deep.as_bytes()).unwrap();
//! assert_eq!(json::value_depth(&value), 5_000);
//! let copy = json::clone_value(&value);
//! assert!(json::values_equal(&copy, &value));
//! let text = json::to_vec(&value);
//! assert_eq!(text, deep.as_bytes());
//! json::drop_value(copy);
//! json::drop_value(value);
//!
//! let too_deep = format!("{}1{}", "[".repeat(10_001), "]".repeat(10_001));
//! let err = json::from_slice::<serde_json::Value>(too_deep.as_bytes()).unwrap_err();
//! assert!(err.to_string().contains("exceeds the API server's limit of 10000"));
//! ```

use std::fmt;

use serde::de::{DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

/// The deepest nesting kube-apiserver accepts in a request body (Go's `encoding/json` limit):
/// 10,000 levels of objects and arrays.
pub const MAX_NESTING_DEPTH: usize = 10_000;

/// Values at most this deep are handled on whatever stack the caller has: every thread's
/// default stack holds this many levels of any operation, in debug builds too.
pub const SHALLOW_DEPTH: usize = 64;

/// Stack one level of a value takes in the most demanding whole-value operation (a debug
/// build's serde_json parse and clone take 2-3 KiB; code that walks values keeps a margin).
#[cfg(debug_assertions)]
const STACK_PER_LEVEL: usize = 16 << 10;
#[cfg(not(debug_assertions))]
const STACK_PER_LEVEL: usize = 4 << 10;

/// Stack kept besides the levels, for the caller's frames and what the operation calls.
const STACK_BASE: usize = 1 << 20;

/// Free stack below which a level-by-level walk moves to a new stack segment.
const RED_ZONE: usize = 128 << 10;

/// The size of each new segment a level-by-level walk grows.
const SEGMENT: usize = 2 << 20;

/// The stack an operation on a value `depth` levels deep needs (see [`with_stack`]).
pub fn stack_for(depth: usize) -> usize {
    depth
        .saturating_mul(STACK_PER_LEVEL)
        .saturating_add(STACK_BASE)
}

/// Runs `f`, which handles a value `depth` levels deep, with enough stack for it: directly
/// when the value is shallow or the current stack has room, else on a new stack segment of
/// the same thread (it is mapped lazily, so only the pages used cost memory).
#[inline]
pub fn with_stack<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    if depth <= SHALLOW_DEPTH {
        return f();
    }
    let need = stack_for(depth);
    stacker::maybe_grow(need, need.saturating_add(STACK_BASE), f)
}

/// A future polled with enough stack for values `depth()` levels deep, where `depth` is read
/// at every poll (it may grow while the future runs, as a cache meets deeper objects): for the
/// tasks that handle objects of any depth, on threads whose stacks are small (tokio's workers
/// have 2 MiB). While `depth()` stays shallow this costs one call per poll.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use ocm_api::k8s::json::{WithStack, drop_value, from_slice, values_equal, clone_value};
///
/// let deepest = Arc::new(AtomicUsize::new(0));
/// let seen = deepest.clone();
/// let text = format!("{}1{}", "[".repeat(3_000), "]".repeat(3_000));
/// let task = WithStack::new(move || seen.load(Ordering::Relaxed), async move {
///     let v: serde_json::Value = from_slice(text.as_bytes()).unwrap();
///     let same = values_equal(&clone_value(&v), &v);
///     drop_value(v);
///     same
/// });
/// deepest.store(3_000, Ordering::Relaxed);
/// assert!(futures::executor::block_on(task));
/// ```
pub struct WithStack<D, F> {
    depth: D,
    future: std::pin::Pin<Box<F>>,
}

impl<D: Fn() -> usize, F: std::future::Future> WithStack<D, F> {
    /// Wraps `future`; `depth` says how deep the values it handles may be.
    pub fn new(depth: D, future: F) -> Self {
        Self {
            depth,
            future: Box::pin(future),
        }
    }
}

impl<D: Fn() -> usize + Unpin, F: std::future::Future> std::future::Future for WithStack<D, F> {
    type Output = F::Output;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let this = &mut *self;
        let depth = (this.depth)();
        with_stack(depth, || this.future.as_mut().poll(cx))
    }
}

/// Runs one level of a recursive walk over a value: on a new stack segment when the current
/// one is nearly used up, so that a walk that calls this at every level never overflows,
/// however deep the value.
///
/// ```
/// use serde_json::Value;
///
/// fn count(v: &Value) -> usize {
///     ocm_api::k8s::json::descend(|| match v {
///         Value::Array(items) => 1 + items.iter().map(count).sum::<usize>(),
///         _ => 1,
///     })
/// }
/// let deep = (0..5_000).fold(serde_json::json!(1), |v, _| serde_json::json!([v]));
/// assert_eq!(count(&deep), 5_001);
/// # ocm_api::k8s::json::drop_value(deep);
/// ```
#[inline]
pub fn descend<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// How deeply the arrays and objects of a JSON text nest (0 for a scalar). Strings are skipped
/// with their escapes; the text need not be valid JSON, and nothing is allocated.
pub fn nesting_depth(text: &[u8]) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// How deeply a value's arrays and objects nest (0 for a scalar), found without recursion.
pub fn value_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 0usize)];
    while let Some((v, d)) = pending.pop() {
        match v {
            Value::Array(items) => {
                deepest = deepest.max(d + 1);
                pending.extend(items.iter().map(|i| (i, d + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(d + 1);
                pending.extend(map.values().map(|i| (i, d + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// Whether a value nests deeper than [`SHALLOW_DEPTH`] levels; stops looking as soon as it
/// knows, so it is cheap for the shallow values nearly every object is.
pub fn is_deep(value: &Value) -> bool {
    let mut pending = vec![(value, 0usize)];
    while let Some((v, d)) = pending.pop() {
        match v {
            Value::Array(items) => {
                if d + 1 > SHALLOW_DEPTH {
                    return true;
                }
                pending.extend(items.iter().map(|c| (c, d + 1)));
            }
            Value::Object(map) => {
                if d + 1 > SHALLOW_DEPTH {
                    return true;
                }
                pending.extend(map.values().map(|c| (c, d + 1)));
            }
            _ => {}
        }
    }
    false
}

/// Decodes JSON nested up to [`MAX_NESTING_DEPTH`] levels, as the API server sent it, on a
/// stack big enough for its depth.
///
/// Deeper input is refused with an error naming its depth and the limit (the API server never
/// sends such an object). The decoded value may be as deep as the input: types that hold
/// arbitrary JSON should hold it the way [`Manifest`](crate::work::v1::Manifest) does (through
/// [`DeepValue`] and [`Deep`]), or be handled inside [`with_stack`].
pub fn from_slice<T: DeserializeOwned>(text: &[u8]) -> serde_json::Result<T> {
    from_slice_within(text, MAX_NESTING_DEPTH)
}

/// [`from_slice`] with another limit, for documents that wrap API objects (a saved state, a
/// list) and so nest a few levels deeper than the objects in them.
pub fn from_slice_within<T: DeserializeOwned>(text: &[u8], limit: usize) -> serde_json::Result<T> {
    let depth = nesting_depth(text);
    if depth > limit {
        return Err(serde::de::Error::custom(format!(
            "the JSON nests {depth} levels deep, which exceeds the API server's limit of {limit}"
        )));
    }
    with_stack(depth, || {
        let mut de = serde_json::Deserializer::from_slice(text);
        de.disable_recursion_limit();
        let value = T::deserialize(&mut de)?;
        de.end()?;
        Ok(value)
    })
}

/// Serialises a value of any depth to JSON text.
pub fn to_vec(value: &Value) -> Vec<u8> {
    // A `Value` always serialises: its keys are strings and its numbers finite.
    serde_json::to_vec(&Deep(value)).unwrap_or_default()
}

/// Drops a value of any depth without recursion.
pub fn drop_value(value: Value) {
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Takes the arrays and objects out of a value in place, leaving it `Null`, so that what
/// remains to drop is flat; for `Drop` impls of types that hold a value of any depth.
pub fn dismantle(value: &mut Value) {
    if matches!(value, Value::Array(_) | Value::Object(_)) {
        drop_value(std::mem::take(value));
    }
}

/// Clones a value of any depth.
pub fn clone_value(value: &Value) -> Value {
    match value {
        Value::Array(items) => descend(|| Value::Array(items.iter().map(clone_value).collect())),
        Value::Object(map) => descend(|| {
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), clone_value(v)))
                    .collect(),
            )
        }),
        scalar => scalar.clone(),
    }
}

/// Whether two values of any depth are equal (as `Value`'s `==`).
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && descend(|| x.iter().zip(y).all(|(x, y)| values_equal(x, y)))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && descend(|| {
                    x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
                })
        }
        (x, y) => x == y,
    }
}

/// A `Value` of any depth, serialised level by level on a stack that grows as needed.
///
/// ```
/// let deep = (0..1_000).fold(serde_json::json!(1), |v, _| serde_json::json!([v]));
/// let text = serde_json::to_string(&ocm_api::k8s::json::Deep(&deep)).unwrap();
/// assert!(text.starts_with("[[[") && text.ends_with("]]]"));
/// # ocm_api::k8s::json::drop_value(deep);
/// ```
#[derive(Clone, Copy)]
pub struct Deep<'a>(pub &'a Value);

impl Serialize for Deep<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Array(items) => descend(|| {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Deep(item))?;
                }
                seq.end()
            }),
            Value::Object(map) => descend(|| {
                let mut m = s.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    m.serialize_entry(k, &Deep(v))?;
                }
                m.end()
            }),
            scalar => scalar.serialize(s),
        }
    }
}

impl fmt::Debug for Deep<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&to_vec(self.0)))
    }
}

/// Deserialises a `Value` of any depth level by level, on a stack that grows as needed.
///
/// The deserializer must not stop at a depth of its own: `serde_json`'s stops at 128 levels
/// unless its recursion limit is disabled, as [`from_slice`] does.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeepValue;

impl<'de> DeserializeSeed<'de> for DeepValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        descend(|| d.deserialize_any(DeepVisitor))
    }
}

struct DeepVisitor;

impl<'de> Visitor<'de> for DeepVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        DeepValue.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(DeepValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(DeepValue)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}\"x\"{}", "{\"a\":".repeat(depth), "}".repeat(depth))
    }

    #[test]
    fn depth_skips_strings_and_escapes() {
        assert_eq!(nesting_depth(b"1"), 0);
        assert_eq!(nesting_depth(br#"{"a":[1,{"b":"[[[{"}]}"#), 3);
        assert_eq!(nesting_depth(br#"["\"[[", "\\", [[]]]"#), 3);
        assert_eq!(nesting_depth(b"{{{"), 3);
    }

    #[test]
    fn the_api_servers_limit_is_accepted_and_one_more_level_is_not() {
        let at_limit = nested(MAX_NESTING_DEPTH);
        let v: Value = from_slice(at_limit.as_bytes()).unwrap();
        assert_eq!(value_depth(&v), MAX_NESTING_DEPTH);
        assert!(is_deep(&v));
        assert_eq!(to_vec(&v), at_limit.as_bytes());
        drop_value(v);
        let over = nested(MAX_NESTING_DEPTH + 1);
        let err = from_slice::<Value>(over.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("10001 levels deep"), "{err}");
    }

    #[test]
    fn deep_values_are_cloned_compared_and_dropped_on_a_small_stack() {
        let text = nested(MAX_NESTING_DEPTH);
        let v: Value = from_slice(text.as_bytes()).unwrap();
        // A thread with a small stack: every walk must grow its own.
        let v = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                let copy = clone_value(&v);
                assert!(values_equal(&copy, &v));
                let mut other = clone_value(&v);
                dismantle(&mut other);
                assert!(!values_equal(&other, &v));
                drop_value(copy);
                let back: Value = {
                    let mut de = serde_json::Deserializer::from_slice(text.as_bytes());
                    de.disable_recursion_limit();
                    DeepValue.deserialize(&mut de).unwrap()
                };
                assert!(values_equal(&back, &v));
                drop_value(back);
                v
            })
            .unwrap()
            .join()
            .unwrap();
        drop_value(v);
    }

    #[test]
    fn shallow_values_are_not_deep() {
        let v: Value = from_slice(nested(SHALLOW_DEPTH).as_bytes()).unwrap();
        assert!(!is_deep(&v));
        let v: Value = from_slice(nested(SHALLOW_DEPTH + 1).as_bytes()).unwrap();
        assert!(is_deep(&v));
    }
}
