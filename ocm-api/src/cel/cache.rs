//! A bounded cache of compiled expressions.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Compiled expressions (or their compile errors) by source, so that an expression evaluated
/// again and again (a placement on every schedule, a condition rule on every status sync) is
/// parsed once.
///
/// Bounded both in entries and in the total length of the sources it keeps (a compiled
/// expression takes memory in proportion to its source); when either bound would be passed,
/// the oldest entries go first.
#[derive(Debug)]
pub struct Cache<V> {
    inner: Mutex<Inner<V>>,
    max_entries: usize,
    max_source_bytes: usize,
}

#[derive(Debug)]
struct Inner<V> {
    map: HashMap<String, V>,
    order: VecDeque<String>,
    source_bytes: usize,
}

impl<V: Clone> Cache<V> {
    /// A cache of at most `max_entries` expressions whose sources total at most
    /// `max_source_bytes`.
    pub fn new(max_entries: usize, max_source_bytes: usize) -> Self {
        Cache {
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                order: VecDeque::new(),
                source_bytes: 0,
            }),
            max_entries,
            max_source_bytes,
        }
    }

    /// The value cached for `source`, else the one `make` builds (then cached, unless the
    /// source alone is longer than the cache may hold).
    pub fn get_or_insert_with(&self, source: &str, make: impl FnOnce() -> V) -> V {
        if let Some(hit) = self.lock().map.get(source) {
            return hit.clone();
        }
        // Built without the lock: compiling may take a while.
        let value = make();
        if source.len() > self.max_source_bytes || self.max_entries == 0 {
            return value;
        }
        let mut inner = self.lock();
        if let Some(hit) = inner.map.get(source) {
            return hit.clone();
        }
        while inner.map.len() >= self.max_entries
            || inner.source_bytes + source.len() > self.max_source_bytes
        {
            let Some(oldest) = inner.order.pop_front() else {
                break;
            };
            inner.source_bytes -= oldest.len();
            inner.map.remove(&oldest);
        }
        inner.source_bytes += source.len();
        inner.order.push_back(source.to_string());
        inner.map.insert(source.to_string(), value.clone());
        value
    }

    /// How many expressions are cached.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<V>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<V: Clone> Default for Cache<V> {
    /// 1,024 expressions, 4 MiB of source.
    fn default() -> Self {
        Cache::new(1024, 4 << 20)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_and_bounds() {
        let cache: Cache<usize> = Cache::new(2, 10);
        let built = std::cell::Cell::new(0);
        let get = |s: &str| {
            cache.get_or_insert_with(s, || {
                built.set(built.get() + 1);
                s.len()
            })
        };
        assert_eq!(get("aa"), 2);
        assert_eq!(get("aa"), 2);
        assert_eq!(get("bbb"), 3);
        assert_eq!(get("cc"), 2); // evicts "aa" (two entries at most)
        assert_eq!(get("aa"), 2);
        assert_eq!(get("dddddddddd"), 10); // 10 bytes: everything else goes
        assert_eq!(get("eeeeeeeeeee"), 11); // longer than the cache: not kept
        assert_eq!(get("eeeeeeeeeee"), 11);
        assert_eq!(built.get(), 7);
        assert_eq!(cache.len(), 1);
    }
}
