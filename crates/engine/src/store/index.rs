//! The two in-memory index shapes every engine is built from: a hash map and
//! an ordered map, behind one trait so each engine is written once.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

/// Keys are owned boxed slices: 16 bytes of handle, no spare capacity.
pub type Key = Box<[u8]>;

#[allow(clippy::len_without_is_empty)]
pub trait Index<V>: Send + Sync + Default {
    /// True when iteration follows key order.
    const ORDERED: bool;
    fn with_capacity(n: usize) -> Self;
    fn get(&self, k: &[u8]) -> Option<&V>;
    fn get_mut(&mut self, k: &[u8]) -> Option<&mut V>;
    /// Inserts or replaces; returns the old value.
    fn insert(&mut self, k: &[u8], v: V) -> Option<V>;
    fn remove(&mut self, k: &[u8]) -> Option<V>;
    fn len(&self) -> usize;
    fn clear(&mut self);
    /// Ordered indexes: the nearest key at or beyond `from` in the direction.
    /// Hash indexes return `None`.
    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<&[u8]>;
    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a [u8], &'a V));
}

/// A fast, per-process-seeded hasher: keys come from the network, so the
/// seed must not be predictable (HashDoS).
pub type HashIndex<V> = HashMap<Key, V, foldhash::fast::RandomState>;
pub type TreeIndex<V> = BTreeMap<Key, V>;

impl<V: Send + Sync> Index<V> for HashIndex<V> {
    const ORDERED: bool = false;
    fn with_capacity(n: usize) -> Self {
        HashMap::with_capacity_and_hasher(n, Default::default())
    }
    fn get(&self, k: &[u8]) -> Option<&V> {
        HashMap::get(self, k)
    }
    fn get_mut(&mut self, k: &[u8]) -> Option<&mut V> {
        HashMap::get_mut(self, k)
    }
    fn insert(&mut self, k: &[u8], v: V) -> Option<V> {
        match HashMap::get_mut(self, k) {
            Some(slot) => Some(std::mem::replace(slot, v)),
            None => HashMap::insert(self, k.into(), v),
        }
    }
    fn remove(&mut self, k: &[u8]) -> Option<V> {
        HashMap::remove(self, k)
    }
    fn len(&self) -> usize {
        HashMap::len(self)
    }
    fn clear(&mut self) {
        HashMap::clear(self)
    }
    fn seek(&self, _from: Bound<&[u8]>, _forward: bool) -> Option<&[u8]> {
        None
    }
    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a [u8], &'a V)) {
        for (k, v) in self.iter() {
            f(k, v)
        }
    }
}

impl<V: Send + Sync> Index<V> for TreeIndex<V> {
    const ORDERED: bool = true;
    fn with_capacity(_n: usize) -> Self {
        BTreeMap::new()
    }
    fn get(&self, k: &[u8]) -> Option<&V> {
        BTreeMap::get(self, k)
    }
    fn get_mut(&mut self, k: &[u8]) -> Option<&mut V> {
        BTreeMap::get_mut(self, k)
    }
    fn insert(&mut self, k: &[u8], v: V) -> Option<V> {
        match BTreeMap::get_mut(self, k) {
            Some(slot) => Some(std::mem::replace(slot, v)),
            None => BTreeMap::insert(self, k.into(), v),
        }
    }
    fn remove(&mut self, k: &[u8]) -> Option<V> {
        BTreeMap::remove(self, k)
    }
    fn len(&self) -> usize {
        BTreeMap::len(self)
    }
    fn clear(&mut self) {
        BTreeMap::clear(self)
    }
    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<&[u8]> {
        let found = if forward {
            self.range::<[u8], _>((from, Bound::Unbounded)).next()
        } else {
            self.range::<[u8], _>((Bound::Unbounded, from)).next_back()
        };
        found.map(|(k, _)| &k[..])
    }
    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a [u8], &'a V)) {
        for (k, v) in self.iter() {
            f(k, v)
        }
    }
}
