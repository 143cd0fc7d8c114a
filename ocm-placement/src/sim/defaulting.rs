//! Schema defaults applied while an object is decoded straight into its type, with no
//! document tree in between.
//!
//! A [`Plan`] is the part of an OpenAPI v3 schema that can add something: the `default`s of
//! properties and the paths (`properties`, `items`, `additionalProperties`) leading to them.
//! [`DefaultingMap`] wraps the map a typed `Deserialize` reads and gives it what
//! [`apply_schema_defaults`](super::apply_schema_defaults) would have written into the
//! document first: an absent property with a default is added after the present ones, a
//! `null` one that is not `nullable` reads as its default, and the walk goes on into present
//! values. Subtrees whose schema has no default anywhere are read untouched.
//!
//! Only the self-describing JSON deserializer is used with it: a `null` is found with
//! `deserialize_option`, which peeks without consuming anything else.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::take::{Take, take_value};

thread_local! {
    /// Defaults added on this thread so far (see [`applied`]).
    static APPLIED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many defaults decoding on this thread has added so far: compare the count before and
/// after decoding an object to learn whether its schema added anything to it (when nothing
/// was added, the object is exactly what its text says).
pub(crate) fn applied() -> u64 {
    APPLIED.with(std::cell::Cell::get)
}

fn note_applied() {
    APPLIED.with(|n| n.set(n.get().wrapping_add(1)));
}

/// A property's default, already defaulted itself (the walk descends into values it adds).
#[derive(Debug, Clone)]
struct PropertyDefault {
    name: String,
    value: Value,
    nullable: bool,
}

/// What a schema can add to a value; see the module documentation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    defaults: Vec<PropertyDefault>,
    /// Properties whose own plan is not empty.
    children: Vec<(String, Plan)>,
    /// Every property name, when `additional` is set (those keys do not take it).
    known: Vec<String>,
    additional: Option<Box<Plan>>,
    items: Option<Box<Plan>>,
    /// Members taken out of the object (see [`super::take`]).
    takes: Vec<(String, Take)>,
}

/// What a plan says about one key of a map.
#[derive(Debug, Clone, Copy, Default)]
struct KeyPlan<'p> {
    /// Index into [`Plan::defaults`].
    default: Option<usize>,
    child: Option<&'p Plan>,
    take: Option<Take>,
}

impl Plan {
    /// The plan of an OpenAPI v3 schema (as JSON).
    pub(crate) fn new(schema: &Value) -> Plan {
        let mut plan = Plan::default();
        let properties = schema.get("properties").and_then(Value::as_object);
        for (key, prop) in properties.into_iter().flatten() {
            if let Some(default) = prop.get("default") {
                let mut value = default.clone();
                super::apply_schema_defaults(&mut value, prop);
                plan.defaults.push(PropertyDefault {
                    name: key.clone(),
                    value,
                    nullable: prop.get("nullable").and_then(Value::as_bool) == Some(true),
                });
            }
            let child = Plan::new(prop);
            if !child.is_empty() {
                plan.children.push((key.clone(), child));
            }
        }
        if let Some(additional) = schema.get("additionalProperties")
            && additional.is_object()
        {
            let child = Plan::new(additional);
            if !child.is_empty() {
                plan.known = properties
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k.clone())
                    .collect();
                plan.additional = Some(Box::new(child));
            }
        }
        if let Some(items) = schema.get("items") {
            let child = Plan::new(items);
            if !child.is_empty() {
                plan.items = Some(Box::new(child));
            }
        }
        plan
    }

    /// This plan, also taking out the member at `path` (object keys from the top; at least
    /// one) as `take`.
    pub(crate) fn taking(mut self, path: &[&str], take: Take) -> Plan {
        let Some((&last, parents)) = path.split_last() else {
            return self;
        };
        let mut plan = &mut self;
        for &key in parents {
            let at = match plan.children.iter().position(|(name, _)| name == key) {
                Some(at) => at,
                None => {
                    plan.children.push((key.to_string(), Plan::default()));
                    plan.children.len() - 1
                }
            };
            plan = &mut plan.children[at].1;
        }
        plan.takes.push((last.to_string(), take));
        self
    }

    /// Whether the plan never adds or takes anything.
    fn is_empty(&self) -> bool {
        self.defaults.is_empty()
            && self.children.is_empty()
            && self.additional.is_none()
            && self.items.is_none()
            && self.takes.is_empty()
    }

    fn for_key(&self, key: &str) -> KeyPlan<'_> {
        let take = self
            .takes
            .iter()
            .find(|(name, _)| name == key)
            .map(|&(_, take)| take);
        if take.is_some() {
            return KeyPlan {
                take,
                ..KeyPlan::default()
            };
        }
        let default = self.defaults.iter().position(|d| d.name == key);
        let child = match self.children.iter().find(|(name, _)| name == key) {
            Some((_, child)) => Some(child),
            None => self
                .additional
                .as_deref()
                .filter(|_| !self.known.iter().any(|k| k == key)),
        };
        KeyPlan {
            default,
            child,
            take: None,
        }
    }
}

/// A map with its schema defaults, for a typed `Deserialize` to read.
pub(crate) struct DefaultingMap<'p, A> {
    inner: A,
    plan: &'p Plan,
    /// Which of the plan's defaults had their key present.
    seen: Vec<bool>,
    /// The plan of the key just read.
    current: KeyPlan<'p>,
    inner_done: bool,
    /// The next default to consider adding once `inner` has ended.
    next_default: usize,
    /// The default whose key was just added.
    adding: Option<&'p Value>,
}

impl<'p, A> DefaultingMap<'p, A> {
    pub(crate) fn new(inner: A, plan: &'p Plan) -> Self {
        DefaultingMap {
            inner,
            plan,
            seen: vec![false; plan.defaults.len()],
            current: KeyPlan::default(),
            inner_done: false,
            next_default: 0,
            adding: None,
        }
    }
}

impl<'de, 'p, A: MapAccess<'de>> MapAccess<'de> for DefaultingMap<'p, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        // The seed stays here unless the inner map has a key for it.
        let mut seed = Some(seed);
        if !self.inner_done {
            let mut found = KeyPlan::default();
            let key = self.inner.next_key_seed(KeySeed {
                seed: &mut seed,
                plan: self.plan,
                found: &mut found,
            })?;
            if let Some(key) = key {
                if let Some(seen) = found.default.and_then(|i| self.seen.get_mut(i)) {
                    *seen = true;
                }
                self.current = found;
                return Ok(Some(key));
            }
            self.inner_done = true;
        }
        let Some(seed) = seed else {
            return Err(de::Error::custom("a map key was read without its seed"));
        };
        while let Some(d) = self.plan.defaults.get(self.next_default) {
            let seen = self.seen.get(self.next_default).copied().unwrap_or(true);
            self.next_default += 1;
            if !seen {
                note_applied();
                self.adding = Some(&d.value);
                return seed
                    .deserialize(de::value::StrDeserializer::<A::Error>::new(&d.name))
                    .map(Some);
            }
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        if let Some(value) = self.adding.take() {
            return seed.deserialize(value.clone()).map_err(de::Error::custom);
        }
        let KeyPlan {
            default,
            child,
            take,
        } = std::mem::take(&mut self.current);
        if let Some(take) = take {
            return take_value(&mut self.inner, take, seed);
        }
        let default = default
            .and_then(|i| self.plan.defaults.get(i))
            .filter(|d| !d.nullable)
            .map(|d| &d.value);
        if default.is_none() && child.is_none() {
            return self.inner.next_value_seed(seed);
        }
        self.inner.next_value_seed(ValueSeed {
            seed,
            child,
            default,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// The elements of an array whose items have a plan.
struct DefaultingSeq<'p, A> {
    inner: A,
    items: &'p Plan,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for DefaultingSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.inner.next_element_seed(ValueSeed {
            seed,
            child: Some(self.items),
            default: None,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// Which `deserialize_*` method a typed `Deserialize` called, to call it again on another
/// deserializer.
#[derive(Debug, Clone, Copy)]
enum Hint {
    Any,
    Bool,
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    F32,
    F64,
    Char,
    Str,
    String,
    Bytes,
    ByteBuf,
    Option,
    Unit,
    UnitStruct(&'static str),
    NewtypeStruct(&'static str),
    Seq,
    Tuple(usize),
    TupleStruct(&'static str, usize),
    Map,
    Struct(&'static str, &'static [&'static str]),
    Enum(&'static str, &'static [&'static str]),
    Identifier,
    IgnoredAny,
}

impl Hint {
    fn call<'de, D: Deserializer<'de>, V: Visitor<'de>>(
        self,
        de: D,
        v: V,
    ) -> Result<V::Value, D::Error> {
        match self {
            Hint::Any => de.deserialize_any(v),
            Hint::Bool => de.deserialize_bool(v),
            Hint::I8 => de.deserialize_i8(v),
            Hint::I16 => de.deserialize_i16(v),
            Hint::I32 => de.deserialize_i32(v),
            Hint::I64 => de.deserialize_i64(v),
            Hint::I128 => de.deserialize_i128(v),
            Hint::U8 => de.deserialize_u8(v),
            Hint::U16 => de.deserialize_u16(v),
            Hint::U32 => de.deserialize_u32(v),
            Hint::U64 => de.deserialize_u64(v),
            Hint::U128 => de.deserialize_u128(v),
            Hint::F32 => de.deserialize_f32(v),
            Hint::F64 => de.deserialize_f64(v),
            Hint::Char => de.deserialize_char(v),
            Hint::Str => de.deserialize_str(v),
            Hint::String => de.deserialize_string(v),
            Hint::Bytes => de.deserialize_bytes(v),
            Hint::ByteBuf => de.deserialize_byte_buf(v),
            Hint::Option => de.deserialize_option(v),
            Hint::Unit => de.deserialize_unit(v),
            Hint::UnitStruct(name) => de.deserialize_unit_struct(name, v),
            Hint::NewtypeStruct(name) => de.deserialize_newtype_struct(name, v),
            Hint::Seq => de.deserialize_seq(v),
            Hint::Tuple(len) => de.deserialize_tuple(len, v),
            Hint::TupleStruct(name, len) => de.deserialize_tuple_struct(name, len, v),
            Hint::Map => de.deserialize_map(v),
            Hint::Struct(name, fields) => de.deserialize_struct(name, fields, v),
            Hint::Enum(name, variants) => de.deserialize_enum(name, variants, v),
            Hint::Identifier => de.deserialize_identifier(v),
            Hint::IgnoredAny => de.deserialize_ignored_any(v),
        }
    }
}

/// A `Deserializer` whose every method goes through `self.go(Hint, visitor)`.
macro_rules! hinted_deserializer {
    () => {
        fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Any, v)
        }
        fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Bool, v)
        }
        fn deserialize_i8<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::I8, v)
        }
        fn deserialize_i16<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::I16, v)
        }
        fn deserialize_i32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::I32, v)
        }
        fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::I64, v)
        }
        fn deserialize_i128<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::I128, v)
        }
        fn deserialize_u8<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::U8, v)
        }
        fn deserialize_u16<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::U16, v)
        }
        fn deserialize_u32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::U32, v)
        }
        fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::U64, v)
        }
        fn deserialize_u128<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::U128, v)
        }
        fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::F32, v)
        }
        fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::F64, v)
        }
        fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Char, v)
        }
        fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Str, v)
        }
        fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::String, v)
        }
        fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Bytes, v)
        }
        fn deserialize_byte_buf<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::ByteBuf, v)
        }
        fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Option, v)
        }
        fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Unit, v)
        }
        fn deserialize_unit_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            v: V,
        ) -> Result<V::Value, Self::Error> {
            self.go(Hint::UnitStruct(name), v)
        }
        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            v: V,
        ) -> Result<V::Value, Self::Error> {
            self.go(Hint::NewtypeStruct(name), v)
        }
        fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Seq, v)
        }
        fn deserialize_tuple<V: Visitor<'de>>(
            self,
            len: usize,
            v: V,
        ) -> Result<V::Value, Self::Error> {
            self.go(Hint::Tuple(len), v)
        }
        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            len: usize,
            v: V,
        ) -> Result<V::Value, Self::Error> {
            self.go(Hint::TupleStruct(name, len), v)
        }
        fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Map, v)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            fields: &'static [&'static str],
            v: V,
        ) -> Result<V::Value, Self::Error> {
            self.go(Hint::Struct(name, fields), v)
        }
        fn deserialize_enum<V: Visitor<'de>>(
            self,
            name: &'static str,
            variants: &'static [&'static str],
            v: V,
        ) -> Result<V::Value, Self::Error> {
            self.go(Hint::Enum(name, variants), v)
        }
        fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::Identifier, v)
        }
        fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.go(Hint::IgnoredAny, v)
        }
        fn is_human_readable(&self) -> bool {
            self.de.is_human_readable()
        }
    };
}

/// Visitor methods passed on unchanged to `self.inner`.
macro_rules! forward_visits {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

/// The scalar visitor methods, passed on unchanged.
macro_rules! forward_scalar_visits {
    () => {
        forward_visits!(
            visit_bool: bool, visit_i8: i8, visit_i16: i16, visit_i32: i32, visit_i64: i64,
            visit_i128: i128, visit_u8: u8, visit_u16: u16, visit_u32: u32, visit_u64: u64,
            visit_u128: u128, visit_f32: f32, visit_f64: f64, visit_char: char,
            visit_bytes: &[u8], visit_borrowed_bytes: &'de [u8], visit_byte_buf: Vec<u8>,
        );
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            self.inner.visit_none()
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            self.inner.visit_unit()
        }
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.inner.expecting(f)
        }
    };
}

/// A map key, noting what the plan says about it.
struct KeySeed<'a, 'p, K> {
    seed: &'a mut Option<K>,
    plan: &'p Plan,
    found: &'a mut KeyPlan<'p>,
}

impl<'de, 'p, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, 'p, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<K::Value, D::Error> {
        let Some(seed) = self.seed.take() else {
            return Err(de::Error::custom("a map key was read twice"));
        };
        seed.deserialize(KeyDe {
            de,
            plan: self.plan,
            found: self.found,
        })
    }
}

struct KeyDe<'a, 'p, D> {
    de: D,
    plan: &'p Plan,
    found: &'a mut KeyPlan<'p>,
}

impl<'de, 'p, D: Deserializer<'de>> KeyDe<'_, 'p, D> {
    fn go<V: Visitor<'de>>(self, hint: Hint, visitor: V) -> Result<V::Value, D::Error> {
        hint.call(
            self.de,
            KeyVisitor {
                inner: visitor,
                plan: self.plan,
                found: self.found,
            },
        )
    }
}

impl<'de, 'p, D: Deserializer<'de>> Deserializer<'de> for KeyDe<'_, 'p, D> {
    type Error = D::Error;
    hinted_deserializer!();
}

struct KeyVisitor<'a, 'p, V> {
    inner: V,
    plan: &'p Plan,
    found: &'a mut KeyPlan<'p>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyVisitor<'_, '_, V> {
    type Value = V::Value;

    forward_scalar_visits!();

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        *self.found = self.plan.for_key(v);
        self.inner.visit_str(v)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        *self.found = self.plan.for_key(v);
        self.inner.visit_borrowed_str(v)
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        *self.found = self.plan.for_key(&v);
        self.inner.visit_string(v)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(a)
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(a)
    }
    fn visit_enum<A: EnumAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(a)
    }
}

/// A value under a plan: `child` applies inside it, `default` replaces a `null`.
struct ValueSeed<'p, S> {
    seed: S,
    child: Option<&'p Plan>,
    default: Option<&'p Value>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for ValueSeed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(ValueDe {
            de,
            child: self.child,
            default: self.default,
        })
    }
}

struct ValueDe<'p, D> {
    de: D,
    child: Option<&'p Plan>,
    default: Option<&'p Value>,
}

impl<'de, D: Deserializer<'de>> ValueDe<'_, D> {
    fn go<V: Visitor<'de>>(self, hint: Hint, visitor: V) -> Result<V::Value, D::Error> {
        match (self.default, self.child) {
            (Some(default), child) => self.de.deserialize_option(NullVisitor {
                inner: visitor,
                hint,
                child,
                default,
            }),
            (None, Some(plan)) => hint.call(
                self.de,
                ChildVisitor {
                    inner: visitor,
                    plan,
                },
            ),
            (None, None) => hint.call(self.de, visitor),
        }
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ValueDe<'_, D> {
    type Error = D::Error;
    hinted_deserializer!();
}

/// Reads a value whose `null` stands for `default`.
struct NullVisitor<'p, V> {
    inner: V,
    hint: Hint,
    child: Option<&'p Plan>,
    default: &'p Value,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for NullVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        note_applied();
        let default = self.default.clone();
        match self.hint {
            Hint::Option => self.inner.visit_some(default),
            hint => hint.call(default, self.inner),
        }
        .map_err(E::custom)
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        let de = ValueDe {
            de: d,
            child: self.child,
            default: None,
        };
        match self.hint {
            Hint::Option => self.inner.visit_some(de),
            hint => hint.call(de, self.inner),
        }
    }
}

/// Applies a plan inside the value it visits.
struct ChildVisitor<'p, V> {
    inner: V,
    plan: &'p Plan,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for ChildVisitor<'_, V> {
    type Value = V::Value;

    forward_scalar_visits!();
    forward_visits!(visit_str: &str, visit_borrowed_str: &'de str, visit_string: String);

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(ValueDe {
            de: d,
            child: Some(self.plan),
            default: None,
        })
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(ValueDe {
            de: d,
            child: Some(self.plan),
            default: None,
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        match self.plan.items.as_deref() {
            Some(items) => self.inner.visit_seq(DefaultingSeq { inner: a, items }),
            None => self.inner.visit_seq(a),
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(DefaultingMap::new(a, self.plan))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(a)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Decodes `text` under `schema`'s plan, as a document tree.
    fn decoded(schema: &Value, text: &str) -> Value {
        let plan = Plan::new(schema);
        let mut de = serde_json::Deserializer::from_str(text);
        let seed = ValueSeed {
            seed: std::marker::PhantomData::<Value>,
            child: Some(&plan),
            default: None,
        };
        seed.deserialize(&mut de).unwrap()
    }

    /// What decoding under a plan gives is what `apply_schema_defaults` writes.
    #[test]
    fn decoding_applies_what_apply_schema_defaults_writes() {
        let schema = json!({"type": "object", "properties": {
            "a": {"default": 1},
            "b": {"default": 2, "nullable": true},
            "c": {"default": {}, "properties": {"x": {"default": "dx"}}},
            "m": {"additionalProperties": {"properties": {"x": {"default": "d"}}}},
            "known": {"type": "string"},
            "list": {"items": {"properties": {"w": {"default": 1},
                "deep": {"items": {"properties": {"z": {"default": false}}}}}}},
            "plain": {"properties": {"q": {"type": "string"}}}}});
        let mixed = json!({"type": "object",
            "properties": {"known": {"properties": {"x": {"default": 0}}}},
            "additionalProperties": {"properties": {"y": {"default": 9}}}});
        let cases = [
            (&schema, json!({})),
            (&schema, json!({"a": null, "b": null, "c": null})),
            (
                &schema,
                json!({"a": 5, "c": {"x": null}, "m": {"k": {}, "l": {"x": "set"}}}),
            ),
            (
                &schema,
                json!({"list": [{}, {"w": 3, "deep": [{}, {"z": true}]}, null, 4]}),
            ),
            (
                &schema,
                json!({"plain": {"q": "v"}, "m": null, "list": null, "other": {"a": null}}),
            ),
            (&mixed, json!({"known": {}, "k1": {}, "k2": {"y": 1}})),
            // Nothing to add.
            (
                &schema,
                json!({"a": 0, "b": null, "c": {"x": "s"}, "m": {"k": {"x": "t"}}}),
            ),
        ];
        for (schema, value) in cases {
            let mut expected = value.clone();
            super::super::apply_schema_defaults(&mut expected, schema);
            let before = applied();
            assert_eq!(decoded(schema, &value.to_string()), expected, "{value}");
            // Counted exactly when something was added.
            assert_eq!(applied() != before, expected != value, "{value}");
        }
        // A schema without defaults has an empty plan.
        assert!(Plan::new(&json!({"properties": {"a": {"items": {"type": "string"}}}})).is_empty());
    }
}
