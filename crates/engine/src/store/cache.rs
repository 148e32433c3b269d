//! The capped in-memory hash (`*#capsiz=..`, `*#capnum=..`): a cache that
//! evicts with CLOCK, an LRU approximation whose hits only set a bit, so
//! lookups stay under the shard's shared read lock.
//!
//! Records live in the hash index's packed entry vector (`slab_hash.rs`),
//! and the clock hand sweeps that vector: a referenced record has its bit
//! cleared and is passed, an unreferenced one is evicted. Evictions leave
//! holes just behind the hand, and new records fill the most recent hole
//! first (or go at the end), so a new record is the last the hand reaches —
//! the same order as a second-chance FIFO, without a queue. One entry per
//! record and keys and short values inline make a small record cost ~110
//! bytes in all, which is what `charge` accounts.

use super::index::{Index, Key, SmallValue, INLINE_LEN};
use super::slab_hash::SlabHash;
use super::{Store, StoreStats};
use crate::access::{Access, AccessWord};
use crate::record::{Meta, Record};
use crate::status::{Error, Result};
use bytes::Bytes;
use std::ops::Bound;

/// Bytes charged per record whatever its size: its entry (inline key 24,
/// value 32, metadata 24, reference bit with access state 4, padded: 88) and its share of the
/// position table (8 bytes a slot, at most 3/4 full and at least 3/8 after
/// growing: up to 21). `docs/format.md` states the bound.
pub(crate) const ENTRY_OVERHEAD: u64 = 112;

/// Heap bytes of a key or value that does not fit inline: glibc's chunk for
/// `len` bytes (8 bytes of header, 16-byte granules).
fn heap(len: usize) -> u64 {
    if len <= INLINE_LEN {
        0
    } else {
        (len as u64 + 8).next_multiple_of(16)
    }
}

/// What one record costs against `cap_mem_size`.
pub fn charge(key_len: usize, value_len: usize) -> u64 {
    ENTRY_OVERHEAD + heap(key_len) + heap(value_len)
}

struct CacheEntry {
    value: SmallValue,
    meta: Meta,
    /// The CLOCK reference bit (set on every hit; the clock hand clears it
    /// once before evicting) and memcached's fetched bit and last access
    /// time, in one word that fits the padding the bit alone left.
    access: AccessWord,
}

pub(crate) struct CacheStore {
    index: SlabHash<CacheEntry>,
    /// The clock hand: a position in the index's entry vector.
    hand: usize,
    /// Sum of `charge` over held records.
    used: u64,
    cap_bytes: u64,
    cap_recs: u64,
    evictions: u64,
    max_cas: u64,
}

impl CacheStore {
    /// A cache holding at most `cap_bytes` (0 = no byte cap) and `cap_recs` records (0 = no count cap).
    pub(crate) fn new(cap_bytes: u64, cap_recs: u64) -> Self {
        CacheStore {
            index: SlabHash::default(),
            hand: 0,
            used: 0,
            cap_bytes,
            cap_recs,
            evictions: 0,
            max_cas: 0,
        }
    }

    /// True when `bytes` more bytes and `records` more records would not fit.
    fn over_cap(&self, bytes: u64, records: u64) -> bool {
        (self.cap_bytes > 0 && self.used + bytes > self.cap_bytes)
            || (self.cap_recs > 0 && self.index.len() as u64 + records > self.cap_recs)
    }

    /// Evicts unreferenced records, sparing `keep`, until `bytes` and
    /// `records` more fit. Called before the write it makes room for, so the
    /// holes it leaves are just behind the hand and the new record fills the
    /// last of them: the hand reaches it last.
    fn make_room(&mut self, bytes: u64, records: u64, keep: &[u8]) {
        // Each live record is passed at most twice (once to clear its bit),
        // so two sweeps and a bit always suffice.
        let mut budget = 2 * self.index.slots_len() + 2;
        while self.over_cap(bytes, records) && budget > 0 {
            budget -= 1;
            if self.hand >= self.index.slots_len() {
                self.hand = 0;
            }
            let victim = match self.index.entry_at(self.hand) {
                Some((k, e)) => k != keep && !e.access.take_reference(),
                None => false,
            };
            if victim {
                let key = self.index.entry_at(self.hand).map(|(k, _)| Key::from(k));
                if let Some(old) = key.and_then(|k| self.index.remove(&k).map(|e| (k, e))) {
                    self.used -= charge(old.0.len(), old.1.value.len());
                    self.evictions += 1;
                }
            }
            self.hand += 1;
        }
    }

    /// A new record that landed at or ahead of the hand (pushed at the end
    /// of the vector while the hand is mid-way, or in an old hole ahead of
    /// it) trades places with the record under the hand, and the hand steps
    /// past it: the newest record is then the last the hand reaches, and the
    /// record it displaced (the next to be examined) waits one sweep longer.
    fn place_behind_hand(&mut self, pos: usize) {
        if self.hand >= self.index.slots_len() || pos < self.hand {
            return;
        }
        if pos == self.hand || self.index.swap_entries(pos, self.hand) {
            self.hand += 1;
        }
    }
}

impl Store for CacheStore {
    fn get(&self, key: &[u8]) -> Result<Option<Record>> {
        Ok(self.index.get(key).map(|e| {
            e.access.reference();
            Record {
                value: e.value.to_bytes(),
                meta: e.meta,
            }
        }))
    }
    fn fetch(&self, key: &[u8], bump: bool) -> Result<Option<(Record, Option<Access>)>> {
        Ok(self.index.get(key).map(|e| {
            let before = e.access.fetch(bump);
            let r = Record {
                value: e.value.to_bytes(),
                meta: e.meta,
            };
            (r, Some(before))
        }))
    }
    fn access(&self, key: &[u8]) -> Option<Access> {
        self.index.get(key).map(|e| e.access.peek())
    }
    fn touch(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        match self.index.get_mut(key) {
            // Same value, same charge: only the expiry changes, and the
            // touch counts as a fetch (memcached's do_item_touch bumps).
            Some(e) => {
                e.meta = meta;
                e.access.fetch(true);
                Ok(())
            }
            None => self.put(key, value, meta),
        }
    }
    fn get_meta(&self, key: &[u8]) -> Result<Option<Meta>> {
        Ok(self.index.get(key).map(|e| e.meta))
    }
    fn put(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        let cost = charge(key.len(), value.len());
        if self.cap_bytes > 0 && cost > self.cap_bytes {
            return Err(Error::TooLarge {
                size: cost,
                cap: self.cap_bytes,
            });
        }
        self.max_cas = self.max_cas.max(meta.cas);
        let old = self
            .index
            .get(key)
            .map(|e| charge(key.len(), e.value.len()));
        if let Some(c) = old {
            self.used -= c;
        }
        self.make_room(cost, u64::from(old.is_none()), key);
        let entry = CacheEntry {
            value: SmallValue::from_bytes(value),
            meta,
            // An update keeps the record's place in the clock and counts as
            // a use; a new record is placed where the hand comes last. Either
            // way it is a new item to memcached: not fetched, accessed now.
            access: AccessWord::stored(old.is_some()),
        };
        let (pos, replaced) = self.index.upsert(key, entry);
        if replaced.is_none() {
            self.place_behind_hand(pos);
        }
        self.used += cost;
        Ok(())
    }
    fn update(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        let kept = self.index.get(key).map(|e| e.access.peek());
        self.put(key, value, meta)?;
        if let (Some(a), Some(e)) = (kept, self.index.get(key)) {
            e.access.restore(a);
        }
        Ok(())
    }
    fn remove(&mut self, key: &[u8]) -> Result<bool> {
        match self.index.remove(key) {
            Some(e) => {
                self.used -= charge(key.len(), e.value.len());
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn len(&self) -> u64 {
        self.index.len() as u64
    }
    fn clear(&mut self) -> Result<()> {
        self.index.clear();
        self.hand = 0;
        self.used = 0;
        Ok(())
    }
    fn synchronize(&mut self, _hard: bool) -> Result<()> {
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        Ok(())
    }
    fn seek(&self, _from: Bound<&[u8]>, _forward: bool) -> Option<Key> {
        None
    }
    fn keys(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.index.len());
        self.index.for_each(&mut |k, _| out.push(k.into()));
        out
    }
    fn max_cas(&self) -> u64 {
        self.max_cas
    }
    fn stats(&self) -> StoreStats {
        StoreStats {
            bytes: self.used,
            evictions: self.evictions,
            file_size: 0,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_state_costs_no_bytes() {
        // The entry the charge above accounts: the access word took the
        // padding the reference bit left.
        assert_eq!(
            std::mem::size_of::<Option<(super::super::index::SmallKey, CacheEntry)>>(),
            88
        );
    }

    #[test]
    fn a_touch_keeps_the_access_state_and_counts_as_a_fetch() {
        let mut c = CacheStore::new(0, 0);
        c.put(b"k", Bytes::from_static(b"v"), Meta::default())
            .unwrap();
        assert_eq!(c.access(b"k").map(|a| a.fetched), Some(false));
        let meta = Meta {
            expires_at: 99,
            ..Meta::default()
        };
        c.touch(b"k", Bytes::from_static(b"v"), meta).unwrap();
        assert_eq!(c.access(b"k").map(|a| a.fetched), Some(true));
        assert_eq!(c.get_meta(b"k").unwrap().map(|m| m.expires_at), Some(99));
        // a store makes a new item
        c.put(b"k", Bytes::from_static(b"w"), Meta::default())
            .unwrap();
        assert_eq!(c.access(b"k").map(|a| a.fetched), Some(false));
    }

    #[test]
    fn fetch_reports_the_state_before_it() {
        let mut c = CacheStore::new(0, 0);
        c.put(b"k", Bytes::from_static(b"v"), Meta::default())
            .unwrap();
        let first = c.fetch(b"k", true).unwrap().and_then(|(_, a)| a);
        assert_eq!(first.map(|a| a.fetched), Some(false));
        let second = c.fetch(b"k", false).unwrap().and_then(|(_, a)| a);
        assert_eq!(second.map(|a| a.fetched), Some(true));
        assert!(c.fetch(b"nope", true).unwrap().is_none());
        // an internal read is not a fetch
        c.put(b"j", Bytes::from_static(b"v"), Meta::default())
            .unwrap();
        c.get(b"j").unwrap();
        assert_eq!(c.access(b"j").map(|a| a.fetched), Some(false));
    }
}
