//! String interning for the snapshot.
//!
//! Every label key and value, claim name and value, and taint key, value and effect of the
//! snapshot is stored once and referred to by a small integer. Selectors and tolerations are
//! translated into the same integers when a placement is scheduled, so that matching a cluster
//! compares integers instead of strings and allocates nothing.

use std::collections::HashMap;
use std::sync::Arc;

/// An interned string.
pub(crate) type Sym = u32;

/// A symbol no interned string has: a selector value or toleration key that appears nowhere in
/// the snapshot is translated to it, so it never compares equal to anything a cluster carries.
pub(crate) const ABSENT: Sym = Sym::MAX;

/// The string table of a snapshot.
#[derive(Debug, Default, Clone)]
pub(crate) struct Symbols {
    /// A table shared with others (the simulator's, shared by every snapshot built from its
    /// input), whose symbols come first; this table adds the strings it lacks.
    base: Option<Arc<Symbols>>,
    /// How many strings `base` holds.
    base_len: usize,
    /// Seeded per process, so that crafted strings cannot be made to collide.
    index: HashMap<Arc<str>, Sym, foldhash::fast::RandomState>,
    /// The strings this table adds, from symbol `base_len` on.
    strings: Vec<Arc<str>>,
}

impl Symbols {
    /// A table that starts with `base`'s strings, shared rather than copied.
    pub(crate) fn extending(base: Arc<Symbols>) -> Self {
        Symbols {
            base_len: base.len(),
            base: Some(base),
            ..Symbols::default()
        }
    }

    /// Returns the symbol of `s`, adding it when new.
    pub(crate) fn intern(&mut self, s: &str) -> Sym {
        let sym = self.lookup(s);
        if sym != ABSENT {
            return sym;
        }
        // The table never holds more than u32::MAX - 1 strings: a snapshot that large would
        // not fit in memory anyway, so saturate rather than wrap.
        let sym = Sym::try_from(self.len()).unwrap_or(ABSENT - 1);
        let shared: Arc<str> = Arc::from(s);
        self.strings.push(Arc::clone(&shared));
        self.index.insert(shared, sym);
        sym
    }

    /// Returns the symbol of `s`, or [`ABSENT`] when no cluster uses that string.
    pub(crate) fn lookup(&self, s: &str) -> Sym {
        if let Some(base) = &self.base {
            let sym = base.lookup(s);
            if sym != ABSENT {
                return sym;
            }
        }
        self.index.get(s).copied().unwrap_or(ABSENT)
    }

    /// How many strings are interned (symbols are below this).
    pub(crate) fn len(&self) -> usize {
        self.base_len + self.strings.len()
    }

    /// Returns the string of a symbol (empty for [`ABSENT`]).
    pub(crate) fn resolve(&self, sym: Sym) -> &str {
        let i = sym as usize;
        match (&self.base, i.checked_sub(self.base_len)) {
            (Some(base), None) => base.resolve(sym),
            (_, own) => self.strings.get(own.unwrap_or(i)).map_or("", |s| s),
        }
    }

    /// Approximate heap bytes held by the table (a shared base included).
    pub(crate) fn heap_bytes(&self) -> usize {
        let strings: usize = self.strings.iter().map(|s| s.len() + 16).sum();
        strings
            + self.strings.capacity() * std::mem::size_of::<Arc<str>>()
            + self.index.capacity() * (std::mem::size_of::<(Arc<str>, Sym)>() + 1)
            + self.base.as_ref().map_or(0, |b| b.heap_bytes())
    }
}

/// Something that hands out a symbol per distinct string.
pub(crate) trait Intern {
    /// The symbol of `s`, added when new.
    fn intern(&mut self, s: &str) -> Sym;
}

impl Intern for Symbols {
    fn intern(&mut self, s: &str) -> Sym {
        Symbols::intern(self, s)
    }
}

/// A string table that keeps its strings back to back in one buffer, for a decoding thread
/// to fill and the adding thread to read: a few buffers in all, reused from batch to batch,
/// where a [`Symbols`] allocates every string (and the adding thread would free them).
#[derive(Default)]
pub(crate) struct PackedSymbols {
    text: String,
    /// Where each string ends in `text`, by symbol.
    ends: Vec<usize>,
    /// Hash of a string → the newest symbol with that hash.
    index: HashMap<u64, Sym, foldhash::fast::RandomState>,
    /// Symbol → the previous symbol with the same hash ([`ABSENT`] for none).
    chain: Vec<Sym>,
    hasher: foldhash::fast::RandomState,
}

impl PackedSymbols {
    /// The string of `sym` (empty for one this table did not hand out).
    pub(crate) fn resolve(&self, sym: Sym) -> &str {
        let i = sym as usize;
        let start = match i.checked_sub(1) {
            Some(prev) => self.ends.get(prev).copied().unwrap_or(0),
            None => 0,
        };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.text.get(start..end).unwrap_or_default()
    }

    /// The strings, by symbol.
    pub(crate) fn strings(&self) -> impl ExactSizeIterator<Item = &str> {
        (0..self.ends.len()).map(|i| self.resolve(Sym::try_from(i).unwrap_or(ABSENT)))
    }

    /// Forgets every string, keeping the buffers.
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
        self.index.clear();
        self.chain.clear();
    }
}

impl Intern for PackedSymbols {
    fn intern(&mut self, s: &str) -> Sym {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(s);
        let mut at = self.index.get(&hash).copied().unwrap_or(ABSENT);
        while at != ABSENT {
            if self.resolve(at) == s {
                return at;
            }
            at = self.chain.get(at as usize).copied().unwrap_or(ABSENT);
        }
        let sym = Sym::try_from(self.ends.len()).unwrap_or(ABSENT - 1);
        self.text.push_str(s);
        self.ends.push(self.text.len());
        let previous = self.index.insert(hash, sym).unwrap_or(ABSENT);
        self.chain.push(previous);
        sym
    }
}

/// A small sorted map from symbol to symbol: a cluster's labels or claims.
///
/// Kept sorted by key so lookups are a short scan or a binary search; shared, not copied,
/// by the snapshots built from one simulator input.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct SymMap(Arc<[(Sym, Sym)]>);

impl SymMap {
    /// Builds the map from pairs; for a repeated key the last pair wins.
    pub(crate) fn from_pairs(mut pairs: Vec<(Sym, Sym)>) -> Self {
        // A stable sort keeps the input order among equal keys, so keeping the last of each
        // run implements "later duplicates overwrite earlier ones".
        pairs.sort_by_key(|&(k, _)| k);
        let mut out: Vec<(Sym, Sym)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = v,
                _ => out.push((k, v)),
            }
        }
        SymMap(out.into())
    }

    /// The value stored for `key`.
    #[inline]
    pub(crate) fn get(&self, key: Sym) -> Option<Sym> {
        let entries = &self.0;
        if entries.len() <= 8 {
            entries.iter().find(|&&(k, _)| k == key).map(|&(_, v)| v)
        } else {
            entries
                .binary_search_by_key(&key, |&(k, _)| k)
                .ok()
                .map(|i| entries[i].1)
        }
    }

    /// The pairs, sorted by key symbol.
    pub(crate) fn pairs(&self) -> &[(Sym, Sym)] {
        &self.0
    }

    /// The map with every symbol translated by `map` (from another table to this one's;
    /// distinct symbols must stay distinct). A symbol outside `map` becomes [`ABSENT`].
    pub(crate) fn remap(&mut self, map: &[Sym]) {
        let apply = |pairs: &mut [(Sym, Sym)]| {
            for (k, v) in pairs.iter_mut() {
                *k = remap(map, *k);
                *v = remap(map, *v);
            }
            pairs.sort_unstable_by_key(|&(k, _)| k);
        };
        match Arc::get_mut(&mut self.0) {
            Some(pairs) => apply(pairs),
            None => {
                let mut pairs = self.0.to_vec();
                apply(&mut pairs);
                self.0 = pairs.into();
            }
        }
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.0.len() * std::mem::size_of::<(Sym, Sym)>()
    }
}

/// `sym` translated by `map`; [`ABSENT`] stays absent, as does a symbol outside `map`.
#[inline]
pub(crate) fn remap(map: &[Sym], sym: Sym) -> Sym {
    map.get(sym as usize).copied().unwrap_or(ABSENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_lookup_does_not_add() {
        let mut s = Symbols::default();
        let a = s.intern("a");
        let b = s.intern("b");
        assert_eq!(s.intern("a"), a);
        assert_ne!(a, b);
        assert_eq!(s.lookup("zzz"), ABSENT);
        assert_eq!(s.resolve(b), "b");
        assert_eq!(s.resolve(ABSENT), "");
    }

    #[test]
    fn symmap_last_duplicate_wins() {
        let m = SymMap::from_pairs(vec![(3, 1), (1, 2), (3, 7)]);
        assert_eq!(m.get(3), Some(7));
        assert_eq!(m.get(1), Some(2));
        assert_eq!(m.get(2), None);
        let big = SymMap::from_pairs((0..20).map(|i| (i * 2, i)).collect());
        assert_eq!(big.get(10), Some(5));
        assert_eq!(big.get(11), None);
    }

    #[test]
    fn extended_tables_share_their_base() {
        let mut base = Symbols::default();
        let (a, b) = (base.intern("a"), base.intern("b"));
        let base = Arc::new(base);
        let mut one = Symbols::extending(Arc::clone(&base));
        let mut two = Symbols::extending(Arc::clone(&base));
        assert_eq!((one.intern("a"), one.intern("b")), (a, b));
        let c1 = one.intern("c");
        let d2 = two.intern("d");
        assert_eq!((c1, d2), (2, 2));
        assert_eq!((one.resolve(c1), two.resolve(d2)), ("c", "d"));
        assert_eq!((one.resolve(a), two.resolve(b)), ("a", "b"));
        assert_eq!(one.lookup("d"), ABSENT);
        assert_eq!(one.intern("c"), c1);
        assert_eq!((one.len(), base.len()), (3, 2));
        assert_eq!(one.resolve(ABSENT), "");
        assert_eq!(one.resolve(7), "");
    }

    #[test]
    fn packed_tables_intern_like_symbol_tables() {
        let mut packed = PackedSymbols::default();
        let words = ["", "a", "b", "a", "", "longer string", "b", "é"];
        let syms: Vec<Sym> = words.iter().map(|w| packed.intern(w)).collect();
        assert_eq!(syms, [0, 1, 2, 1, 0, 3, 2, 4]);
        for (w, &sym) in words.iter().zip(&syms) {
            assert_eq!(packed.resolve(sym), *w);
        }
        assert_eq!(
            packed.strings().collect::<Vec<_>>(),
            ["", "a", "b", "longer string", "é"]
        );
        assert_eq!(packed.resolve(ABSENT), "");
        packed.clear();
        assert_eq!(packed.strings().len(), 0);
        assert_eq!(packed.intern("b"), 0);
        // Many strings, so that hashes are looked up in a grown index.
        let many: Vec<String> = (0..5000).map(|i| format!("s{i}")).collect();
        let syms: Vec<Sym> = many.iter().map(|s| packed.intern(s)).collect();
        for (s, &sym) in many.iter().zip(&syms) {
            assert_eq!(packed.intern(s), sym);
            assert_eq!(packed.resolve(sym), s);
        }
    }

    #[test]
    fn remapped_maps_are_sorted_in_the_new_table() {
        let mut local = PackedSymbols::default();
        let (k1, v1) = (local.intern("zone"), local.intern("east"));
        let (k2, v2) = (local.intern("app"), local.intern("web"));
        let mut r = SymMap::from_pairs(vec![(k1, v1), (k2, v2)]);
        let mut global = Symbols::default();
        global.intern("app");
        global.intern("unrelated");
        let map: Vec<Sym> = local.strings().map(|s| global.intern(s)).collect();
        r.remap(&map);
        let resolved: Vec<(&str, &str)> = r
            .pairs()
            .iter()
            .map(|&(k, v)| (global.resolve(k), global.resolve(v)))
            .collect();
        assert_eq!(resolved, [("app", "web"), ("zone", "east")]);
        assert!(r.pairs().windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(r.get(global.lookup("zone")), Some(global.lookup("east")));
        assert_eq!(remap(&map, ABSENT), ABSENT);
    }
}
