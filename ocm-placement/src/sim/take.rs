//! Members a decoding thread takes out of a ManagedCluster while it is decoded: its
//! `metadata.labels`, `status.clusterClaims` and `spec.taints` are interned straight from
//! the text into the thread's string table, and the typed object reads them as `null`. The cluster's entry is
//! then built from what was taken, and the typed object (which only lives until its text is
//! kept) never allocates those strings and maps.
//!
//! A [`Plan`](super::defaulting::Plan) names the members to take
//! ([`Plan::taking`](super::defaulting::Plan::taking)). What is taken must decode exactly as
//! the typed field would, or fail: anything unusual (a claim written as an array, a repeated
//! claim field) fails, and the read falls back to the path that decodes everything.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ocm_api::cluster::v1::TaintEffect;

use crate::snapshot::{CompactTaint, EntryParts};
use crate::symbols::{ABSENT, Intern, PackedSymbols, Sym};

/// A member taken out of the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Take {
    /// A map of strings to strings: a ManagedCluster's `metadata.labels`.
    Labels,
    /// A list of `{name, value}` objects: a ManagedCluster's `status.clusterClaims`.
    Claims,
    /// A list of taints: a ManagedCluster's `spec.taints`.
    Taints,
}

/// What this thread took out of the object it decoded last, and the table its strings are
/// interned in.
#[derive(Default)]
pub(crate) struct Taken {
    /// The table the decoding thread interns a batch's strings in.
    pub(crate) symbols: PackedSymbols,
    /// The labels as (key, value) pairs in text order (`None`: absent or `null`).
    pub(crate) labels: Option<Vec<(Sym, Sym)>>,
    /// The claims as (name, value) pairs, [`ABSENT`] for a missing or `null` field.
    pub(crate) claims: Option<Vec<(Sym, Sym)>>,
    /// The taints.
    pub(crate) taints: Option<Vec<CompactTaint>>,
}

impl Taken {
    /// What was taken, leaving nothing.
    pub(crate) fn parts(&mut self) -> EntryParts {
        EntryParts {
            labels: self.labels.take(),
            claims: self.claims.take(),
            taints: self.taints.take(),
        }
    }
}

thread_local! {
    static TAKEN: RefCell<Taken> = RefCell::new(Taken::default());
}

/// Runs `f` on this thread's [`Taken`]. Not to be called from inside `f`.
pub(crate) fn with_taken<R>(f: impl FnOnce(&mut Taken) -> R) -> R {
    TAKEN.with(|taken| f(&mut taken.borrow_mut()))
}

fn intern(s: &str) -> Sym {
    with_taken(|t| t.symbols.intern(s))
}

/// Reads the value of a taken member from `map` and keeps it in this thread's [`Taken`]
/// (a repeated member replaces what was taken before, as a repeated field does); then gives
/// `seed` a `null`, as if the member's value were one.
pub(crate) fn take_value<'de, A: MapAccess<'de>, S: DeserializeSeed<'de>>(
    map: &mut A,
    take: Take,
    seed: S,
) -> Result<S::Value, A::Error> {
    match take {
        Take::Labels => {
            let labels = map.next_value_seed(Seed(LabelsVisitor))?;
            with_taken(|t| t.labels = labels);
        }
        Take::Claims => {
            let claims = map.next_value_seed(Seed(ListOrNull {
                element: ClaimVisitor,
                what: "claims",
            }))?;
            with_taken(|t| t.claims = claims);
        }
        Take::Taints => {
            let taints = map.next_value_seed(Seed(ListOrNull {
                element: TaintVisitor,
                what: "taints",
            }))?;
            with_taken(|t| t.taints = taints);
        }
    }
    seed.deserialize(de::value::UnitDeserializer::new())
}

/// A seed reading any value with its visitor.
struct Seed<V>(V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for Seed<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        de.deserialize_any(self.0)
    }
}

/// `null`, or a list whose elements `element` reads (`status.clusterClaims`, `spec.taints`);
/// `what` names the elements in errors.
struct ListOrNull<V> {
    element: V,
    what: &'static str,
}

impl<'de, V: Visitor<'de> + Copy> Visitor<'de> for ListOrNull<V> {
    type Value = Option<Vec<V::Value>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of {} or null", self.what)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4));
        while let Some(item) = seq.next_element_seed(Seed(self.element))? {
            items.push(item);
        }
        Ok(Some(items))
    }
}

/// A string, interned.
struct Str;

impl<'de> DeserializeSeed<'de> for Str {
    type Value = Sym;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Sym, D::Error> {
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for Str {
    type Value = Sym;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Sym, E> {
        Ok(intern(v))
    }
}

/// A string or `null` ([`ABSENT`]), interned.
struct OptionalStr;

impl<'de> DeserializeSeed<'de> for OptionalStr {
    type Value = Sym;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Sym, D::Error> {
        de.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for OptionalStr {
    type Value = Sym;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Sym, E> {
        Ok(ABSENT)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Sym, E> {
        Ok(ABSENT)
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Sym, D::Error> {
        Str.deserialize(de)
    }
}

/// `metadata.labels`: `null`, or a map of strings.
struct LabelsVisitor;

impl<'de> Visitor<'de> for LabelsVisitor {
    type Value = Option<Vec<(Sym, Sym)>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of strings or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(pair) = map.next_entry_seed(Str, Str)? {
            pairs.push(pair);
        }
        Ok(Some(pairs))
    }
}

/// A claim's field.
enum Field {
    Name,
    Value,
    Other,
}

impl<'de> DeserializeSeed<'de> for Field {
    type Value = Field;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Field, D::Error> {
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for Field {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
        Ok(match v {
            "name" => Field::Name,
            "value" => Field::Value,
            _ => Field::Other,
        })
    }
}

/// One claim, an object (the typed field also takes other forms: they fail here, and the
/// read falls back); unknown fields are skipped and a repeated field fails, as the typed
/// field does.
#[derive(Clone, Copy)]
struct ClaimVisitor;

impl<'de> Visitor<'de> for ClaimVisitor {
    type Value = (Sym, Sym);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a claim object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(Sym, Sym), A::Error> {
        let (mut name, mut value) = (None, None);
        while let Some(field) = map.next_key_seed(Field::Other)? {
            match field {
                Field::Name if name.is_some() => return Err(de::Error::duplicate_field("name")),
                Field::Value if value.is_some() => {
                    return Err(de::Error::duplicate_field("value"));
                }
                Field::Name => name = Some(map.next_value_seed(OptionalStr)?),
                Field::Value => value = Some(map.next_value_seed(OptionalStr)?),
                Field::Other => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        Ok((name.unwrap_or(ABSENT), value.unwrap_or(ABSENT)))
    }
}

/// A taint's field.
enum TaintField {
    Key,
    Value,
    Effect,
    TimeAdded,
    Other,
}

impl<'de> DeserializeSeed<'de> for TaintField {
    type Value = TaintField;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<TaintField, D::Error> {
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for TaintField {
    type Value = TaintField;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<TaintField, E> {
        Ok(match v {
            "key" => TaintField::Key,
            "value" => TaintField::Value,
            "effect" => TaintField::Effect,
            "timeAdded" => TaintField::TimeAdded,
            _ => TaintField::Other,
        })
    }
}

/// A taint's effect: a string, its known values as their variants (other forms the typed
/// field reads fail here).
struct Effect;

impl<'de> DeserializeSeed<'de> for Effect {
    type Value = TaintEffect;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<TaintEffect, D::Error> {
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for Effect {
    type Value = TaintEffect;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a taint effect")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<TaintEffect, E> {
        Ok(TaintEffect::from(v))
    }
}

/// One taint, an object: `key` and `effect` required, a repeated field fails and unknown
/// fields are skipped, as the typed field reads it.
#[derive(Clone, Copy)]
struct TaintVisitor;

impl<'de> Visitor<'de> for TaintVisitor {
    type Value = CompactTaint;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a taint object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CompactTaint, A::Error> {
        let mut key = None;
        let mut value = None;
        let mut effect = None;
        let mut time: Option<Option<i128>> = None;
        while let Some(field) = map.next_key_seed(TaintField::Other)? {
            match field {
                TaintField::Key if key.is_some() => {
                    return Err(de::Error::duplicate_field("key"));
                }
                TaintField::Value if value.is_some() => {
                    return Err(de::Error::duplicate_field("value"));
                }
                TaintField::Effect if effect.is_some() => {
                    return Err(de::Error::duplicate_field("effect"));
                }
                TaintField::TimeAdded if time.is_some() => {
                    return Err(de::Error::duplicate_field("timeAdded"));
                }
                TaintField::Key => key = Some(map.next_value_seed(Str)?),
                TaintField::Value => value = Some(map.next_value_seed(OptionalStr)?),
                TaintField::Effect => effect = Some(map.next_value_seed(Effect)?),
                TaintField::TimeAdded => {
                    let at = map.next_value::<Option<Time>>()?;
                    time = Some(at.map(|t| t.0.as_nanosecond()));
                }
                TaintField::Other => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let key = key.ok_or_else(|| de::Error::missing_field("key"))?;
        let effect = effect.ok_or_else(|| de::Error::missing_field("effect"))?;
        let value = value.unwrap_or(ABSENT);
        let (has_value, value) = if value == ABSENT {
            (false, intern(""))
        } else {
            (true, value)
        };
        Ok(CompactTaint {
            key,
            value,
            effect,
            time_added: time
                .flatten()
                .unwrap_or(crate::snapshot::GO_ZERO_TIME_NANOS),
            has_value,
            has_time: time.flatten().is_some(),
        })
    }
}
