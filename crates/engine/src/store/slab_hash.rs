//! The hash index: entries in one dense vector, in insertion order, and a
//! hash table that holds only their positions (4 bytes a slot).
//!
//! Why not a plain `HashMap<SmallKey, V>`: its table keeps the entries
//! themselves (72 bytes for a memory or log record) in slots that are half
//! empty after a resize, so 1M records took ~150 MB and every lookup was a
//! cache and TLB miss somewhere in it. Here the table is 8 bytes a slot
//! (`positions.rs`: 16 MB for 1M records) and the entries are packed; records
//! written together sit together, so reading them back in the same order
//! streams through memory the way Tkrzw's TinyDBM does with its malloc'd
//! records. Iteration follows insertion order (holes aside).
//!
//! Removal leaves a hole that the next insert reuses; when holes outnumber
//! live entries the vector is compacted (order kept) and the table's
//! positions rewritten, so memory follows the live set.
//!
//! Positions are `u32`: at most 2^32 - 1 records per shard (288 GB of entries
//! at the smallest entry size; use more shards before that).

use super::index::{Index, SmallKey};
use super::positions::PositionTable;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::ops::Bound;

/// Holes below this many slots are never compacted away: small indexes
/// would only churn.
const COMPACT_MIN_SLOTS: usize = 4096;

pub(crate) struct SlabHash<V> {
    /// Positions in `slots`, found by the hash of their entry's key.
    table: PositionTable,
    /// Entries; `None` is a hole listed in `free`.
    slots: Vec<Option<(SmallKey, V)>>,
    /// Holes to reuse, oldest first: filled in the order they were made, so
    /// a cache's clock hand (which makes them in sweep order) meets the
    /// records put there in the order they were written.
    free: VecDeque<u32>,
    /// Per-process seeded: keys come from the network (HashDoS).
    hasher: foldhash::fast::RandomState,
}

impl<V> Default for SlabHash<V> {
    fn default() -> Self {
        SlabHash {
            table: PositionTable::default(),
            slots: Vec::new(),
            free: VecDeque::new(),
            hasher: Default::default(),
        }
    }
}

/// The key stored at `pos`, or an empty key for a hole (never searched for:
/// the table only holds positions of live entries).
#[inline]
fn key_at<V>(slots: &[Option<(SmallKey, V)>], pos: u32) -> &[u8] {
    match slots.get(pos as usize) {
        Some(Some((k, _))) => k.as_slice(),
        _ => &[],
    }
}

impl<V> SlabHash<V> {
    #[inline]
    fn hash(&self, k: &[u8]) -> u64 {
        self.hasher.hash_one(k)
    }

    #[inline]
    fn find(&self, hash: u64, k: &[u8]) -> Option<u32> {
        let slots = &self.slots;
        self.table.find(hash, |pos| key_at(slots, pos) == k)
    }

    /// Moves live entries to the front, keeping their order, and points the
    /// table at their new positions.
    fn compact(&mut self) {
        let mut new_pos = vec![u32::MAX; self.slots.len()];
        let mut packed = Vec::with_capacity(self.table.len());
        for (old, slot) in std::mem::take(&mut self.slots).into_iter().enumerate() {
            if let Some(entry) = slot {
                if let Some(p) = new_pos.get_mut(old) {
                    *p = packed.len() as u32;
                }
                packed.push(Some(entry));
            }
        }
        self.table
            .remap(|pos| new_pos.get(pos as usize).copied().unwrap_or(pos));
        self.slots = packed;
        self.free.clear();
    }
}

impl<V> SlabHash<V> {
    /// Length of the entry vector, holes included: positions run below it.
    pub(crate) fn slots_len(&self) -> usize {
        self.slots.len()
    }

    /// Inserts or replaces `k`'s entry with one lookup; returns its position
    /// and the value it replaced.
    #[inline]
    pub(crate) fn upsert(&mut self, k: &[u8], v: V) -> (usize, Option<V>) {
        let hash = self.hash(k);
        if let Some(pos) = self.find(hash, k) {
            if let Some(Some((_, old))) = self.slots.get_mut(pos as usize) {
                return (pos as usize, Some(std::mem::replace(old, v)));
            }
        }
        let entry = Some((SmallKey::from(k), v));
        let pos = match self.free.pop_front() {
            Some(pos) => {
                if let Some(slot) = self.slots.get_mut(pos as usize) {
                    *slot = entry;
                }
                pos
            }
            None => {
                self.slots.push(entry);
                (self.slots.len() - 1) as u32
            }
        };
        self.table.insert_unique(hash, pos);
        (pos as usize, None)
    }

    /// Exchanges the places of the live entries at `a` and `b` (the cache
    /// moves a new record behind its clock hand). False, and nothing moved,
    /// unless both are live.
    pub(crate) fn swap_entries(&mut self, a: usize, b: usize) -> bool {
        let (Some((ka, _)), Some((kb, _))) = (self.entry_at(a), self.entry_at(b)) else {
            return false;
        };
        let (ha, hb) = (self.hash(ka), self.hash(kb));
        if !self.table.swap_positions(ha, a as u32, hb, b as u32) {
            return false;
        }
        self.slots.swap(a, b);
        true
    }

    /// The entry at `pos`, or `None` for a hole or a position past the end.
    /// Positions change when the vector is compacted (after removals), so
    /// they are hints — the cache's clock hand — not handles.
    pub(crate) fn entry_at(&self, pos: usize) -> Option<(&[u8], &V)> {
        match self.slots.get(pos) {
            Some(Some((k, v))) => Some((k.as_slice(), v)),
            _ => None,
        }
    }
}

impl<V: Send + Sync> Index<V> for SlabHash<V> {
    fn with_capacity(n: usize) -> Self {
        SlabHash {
            table: PositionTable::with_capacity(n),
            // Address space only: pages are touched as entries are written.
            slots: Vec::with_capacity(n),
            free: VecDeque::new(),
            hasher: Default::default(),
        }
    }

    #[inline]
    fn get(&self, k: &[u8]) -> Option<&V> {
        let pos = self.find(self.hash(k), k)?;
        match self.slots.get(pos as usize) {
            Some(Some((_, v))) => Some(v),
            _ => None,
        }
    }

    #[inline]
    fn get_mut(&mut self, k: &[u8]) -> Option<&mut V> {
        let pos = self.find(self.hash(k), k)?;
        match self.slots.get_mut(pos as usize) {
            Some(Some((_, v))) => Some(v),
            _ => None,
        }
    }

    #[inline]
    fn insert(&mut self, k: &[u8], v: V) -> Option<V> {
        self.upsert(k, v).1
    }

    #[inline]
    fn remove(&mut self, k: &[u8]) -> Option<V> {
        let hash = self.hash(k);
        let slots = &self.slots;
        let pos = self.table.remove(hash, |pos| key_at(slots, pos) == k)?;
        let (_, v) = self.slots.get_mut(pos as usize)?.take()?;
        if pos as usize + 1 == self.slots.len() {
            self.slots.pop();
        } else {
            self.free.push_back(pos);
        }
        if self.table.is_empty() {
            self.slots.clear();
            self.free.clear();
        } else if self.slots.len() >= COMPACT_MIN_SLOTS && self.free.len() > self.table.len() {
            self.compact();
        }
        Some(v)
    }

    fn len(&self) -> usize {
        self.table.len()
    }

    fn clear(&mut self) {
        self.table.clear();
        self.slots.clear();
        self.free.clear();
    }

    fn seek(&self, _from: Bound<&[u8]>, _forward: bool) -> Option<&[u8]> {
        None
    }

    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a [u8], &'a V)) {
        for (k, v) in self.slots.iter().flatten() {
            f(k.as_slice(), v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Enough churn to compact several times: every lookup, the length and
    /// iteration agree with a model throughout.
    #[test]
    fn matches_a_model_through_compactions() {
        let mut idx = <SlabHash<u64> as Index<u64>>::with_capacity(16);
        let mut model = HashMap::<Vec<u8>, u64>::new();
        let key = |i: u64| format!("key-{:08}-{}", i, "x".repeat((i % 30) as usize)).into_bytes();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..6 {
            for i in 0..20_000u64 {
                let k = key(next() % 30_000);
                if round % 2 == 0 || i % 4 == 0 {
                    assert_eq!(Index::insert(&mut idx, &k, i), model.insert(k, i));
                } else {
                    assert_eq!(Index::remove(&mut idx, &k), model.remove(&k));
                }
            }
            assert_eq!(Index::len(&idx), model.len());
            for (k, v) in &model {
                assert_eq!(Index::get(&idx, k), Some(v));
            }
            let mut seen = 0;
            Index::for_each(&idx, &mut |k, v| {
                assert_eq!(model.get(k), Some(v));
                seen += 1;
            });
            assert_eq!(seen, model.len());
            assert!(
                idx.slots.len() <= 2 * model.len().max(COMPACT_MIN_SLOTS) + 1,
                "holes are reclaimed: {} slots for {} records",
                idx.slots.len(),
                model.len()
            );
        }
        for k in model.keys() {
            assert!(Index::remove(&mut idx, k).is_some());
        }
        assert_eq!(Index::len(&idx), 0);
        assert!(idx.slots.is_empty() && idx.free.is_empty());
    }

    #[test]
    fn iteration_follows_insertion_order() {
        let mut idx = SlabHash::<u32>::default();
        for i in 0..100u32 {
            Index::insert(&mut idx, format!("{i:03}").as_bytes(), i);
        }
        let mut order = Vec::new();
        Index::for_each(&idx, &mut |_, v| order.push(*v));
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }
}
