//! JSON to CEL values, the one mapping every user of the environment shares.
//!
//! Objects become maps with string keys, arrays lists, strings strings, `null` null, booleans
//! booleans; a number becomes an `int` when it fits an `i64`, else a `uint` when it fits a
//! `u64`, else a `double` (as `k8s.io/apiserver` converts unstructured objects). The
//! conversions recurse once per level of the document, on a stack deep enough for it (see
//! [`super::Program::walk`]).

use std::collections::HashMap;
use std::sync::Arc;

use cel::Value;
use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::Val;
use cel::objects::{Key, Map};

use super::program::with_stack;

/// Stack one level of a conversion needs, with a margin.
const STACK_PER_LEVEL: usize = if cfg!(debug_assertions) {
    16 << 10
} else {
    2 << 10
};

/// How deep `json` is (a scalar is one level), computed without recursion.
pub fn json_depth(json: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(json, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            serde_json::Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            serde_json::Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// Runs a conversion of `json` on a stack deep enough for it.
fn deep_enough<R>(json: &serde_json::Value, f: impl FnOnce() -> R) -> R {
    let depth = json_depth(json);
    with_stack(depth.saturating_mul(STACK_PER_LEVEL), f)
}

/// Converts JSON into a CEL [`Value`].
pub fn json_to_value(json: &serde_json::Value) -> Value {
    deep_enough(json, || to_value(json))
}

/// Converts JSON into the interpreter's value tree (what variable resolvers hand out), with
/// the mapping of [`json_to_value`].
pub fn json_to_val(json: &serde_json::Value) -> Box<dyn Val> {
    deep_enough(json, || to_val(json))
}

/// Converts a CEL [`Value`] into the interpreter's value tree (`null` for a value the tree
/// cannot hold, such as a function).
pub fn value_to_val(value: Value) -> Box<dyn Val> {
    Box::<dyn Val>::try_from(value).unwrap_or_else(|_| Box::new(CelNull))
}

fn to_value(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::Int(i),
            (None, Some(u), _) => Value::UInt(u),
            (_, _, Some(f)) => Value::Float(f),
            _ => Value::Null,
        },
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(items) => {
            Value::List(Arc::new(items.iter().map(to_value).collect()))
        }
        serde_json::Value::Object(map) => {
            let entries: HashMap<Key, Value> = map
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_value(v)))
                .collect();
            Value::Map(Map {
                map: Arc::new(entries),
            })
        }
    }
}

fn to_val(json: &serde_json::Value) -> Box<dyn Val> {
    match json {
        serde_json::Value::Null => Box::new(CelNull),
        serde_json::Value::Bool(b) => Box::new(CelBool::from(*b)),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Box::new(CelInt::from(i)),
            (None, Some(u), _) => Box::new(CelUInt::from(u)),
            (_, _, Some(f)) => Box::new(CelDouble::from(f)),
            _ => Box::new(CelNull),
        },
        serde_json::Value::String(s) => Box::new(CelString::from(s.clone())),
        serde_json::Value::Array(items) => {
            Box::new(CelList::from(items.iter().map(to_val).collect::<Vec<_>>()))
        }
        serde_json::Value::Object(map) => {
            let entries: HashMap<CelMapKey<'static>, Box<dyn Val>> = map
                .iter()
                .map(|(k, v)| (CelMapKey::String(CelString::from(k.clone())), to_val(v)))
                .collect();
            Box::new(CelMap::from(entries))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_containers() {
        let json = json!({"i": -1, "u": u64::MAX, "f": 1.5, "s": "x", "l": [true, null], "m": {}});
        let value = json_to_value(&json);
        let Value::Map(map) = &value else {
            panic!("a map")
        };
        let get = |k: &str| map.map.get(&Key::String(Arc::new(k.into()))).cloned();
        assert_eq!(get("i"), Some(Value::Int(-1)));
        assert_eq!(get("u"), Some(Value::UInt(u64::MAX)));
        assert_eq!(get("f"), Some(Value::Float(1.5)));
        assert_eq!(get("s"), Some(Value::String(Arc::new("x".into()))));
        assert_eq!(
            get("l"),
            Some(Value::List(Arc::new(vec![Value::Bool(true), Value::Null])))
        );
        assert_eq!(
            Value::try_from(json_to_val(&json).as_ref()).ok(),
            Some(value)
        );
        assert_eq!(json_depth(&json), 3);
    }

    #[test]
    fn deep_documents_convert_on_a_worker_stack() {
        let mut json = json!(1);
        for _ in 0..10_000 {
            json = serde_json::Value::Array(vec![json]);
        }
        let converted = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let depth = json_depth(&json);
                let value = json_to_val(&json);
                // Dropping deep trees recurses too: on the same kind of stack.
                with_stack(depth * STACK_PER_LEVEL, move || {
                    drop(value);
                    drop(json);
                });
                depth
            })
            .expect("thread")
            .join()
            .expect("no crash");
        assert_eq!(converted, 10_001);
    }
}
