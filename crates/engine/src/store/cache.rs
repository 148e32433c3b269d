//! The capped in-memory hash (`*#capsiz=..`, `*#capnum=..`): a cache that
//! evicts with CLOCK, an LRU approximation whose hits only set a bit, so
//! lookups stay under the shard's shared read lock.
//!
//! The clock is kept as a queue of slots in insertion order (second-chance
//! FIFO, the same algorithm as a circular CLOCK): the hand takes the oldest
//! record; a referenced one has its bit cleared and goes to the back, an
//! unreferenced one is evicted. New records join at the back, so they are the
//! last considered. (A hand sweeping the slot array would meet a new record
//! placed in a reused slot just ahead of it first, and evict the newest data.)

use super::index::{HashIndex, Index, Key};
use super::{Store, StoreStats};
use crate::record::{Meta, Record};
use crate::status::{Error, Result};
use bytes::Bytes;
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes charged per record on top of its key and value, covering the index
/// entry, the slot and allocator overhead. With it, the accounted size tracks
/// real memory closely; `docs/format.md` states the bound.
pub const ENTRY_OVERHEAD: u64 = 128;

/// What one record costs against `cap_mem_size`: the key is held twice
/// (index and slot), the value once, plus the fixed overhead.
pub fn charge(key_len: usize, value_len: usize) -> u64 {
    2 * key_len as u64 + value_len as u64 + ENTRY_OVERHEAD
}

struct Slot {
    key: Key,
    value: Bytes,
    meta: Meta,
    /// Set on every hit; the clock hand clears it once before evicting.
    referenced: AtomicBool,
    /// Which placement of a record in this slot this is, so that queue
    /// entries left by a removed record are recognised as stale.
    generation: u64,
}

pub struct CacheStore {
    /// Key to slot number.
    map: HashIndex<u32>,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    /// Slots in clock order, oldest first, with the generation they held
    /// when queued; entries whose slot has moved on are skipped.
    queue: VecDeque<(u32, u64)>,
    next_generation: u64,
    /// Sum of `charge` over held records.
    used: u64,
    cap_bytes: u64,
    cap_recs: u64,
    evictions: u64,
    max_cas: u64,
}

impl CacheStore {
    /// A cache holding at most `cap_bytes` (0 = no byte cap) and `cap_recs` records (0 = no count cap).
    pub fn new(cap_bytes: u64, cap_recs: u64) -> Self {
        CacheStore {
            map: HashIndex::with_capacity(0),
            slots: Vec::new(),
            free: Vec::new(),
            queue: VecDeque::new(),
            next_generation: 0,
            used: 0,
            cap_bytes,
            cap_recs,
            evictions: 0,
            max_cas: 0,
        }
    }

    fn over_cap(&self) -> bool {
        (self.cap_bytes > 0 && self.used > self.cap_bytes)
            || (self.cap_recs > 0 && self.map.len() as u64 > self.cap_recs)
    }

    fn take_slot(&mut self, idx: u32) -> Option<Slot> {
        let slot = self.slots.get_mut(idx as usize)?.take()?;
        self.used -= charge(slot.key.len(), slot.value.len());
        self.free.push(idx);
        Some(slot)
    }

    /// Evicts unreferenced records, sparing `keep`, until within the caps.
    fn evict(&mut self, keep: u32) {
        // Each live record is passed over at most twice (once to clear its
        // bit), so this ends; stale entries are dropped as they come.
        let mut budget = 2 * self.queue.len() + 1;
        while self.over_cap() && budget > 0 {
            budget -= 1;
            let Some((idx, generation)) = self.queue.pop_front() else {
                break;
            };
            let victim = match &self.slots[idx as usize] {
                Some(s) if s.generation == generation => {
                    idx != keep && !s.referenced.swap(false, Ordering::Relaxed)
                }
                _ => continue,
            };
            if victim {
                if let Some(slot) = self.take_slot(idx) {
                    self.map.remove(&slot.key[..]);
                    self.evictions += 1;
                }
            } else {
                self.queue.push_back((idx, generation));
            }
        }
    }

    /// Drops stale queue entries once they outnumber live ones, so that
    /// removals without evictions cannot grow the queue without bound.
    fn compact_queue(&mut self) {
        if self.queue.len() > 2 * self.map.len() + 64 {
            let slots = &self.slots;
            self.queue.retain(|&(idx, generation)| {
                matches!(&slots[idx as usize], Some(s) if s.generation == generation)
            });
        }
    }
}

impl Store for CacheStore {
    fn get(&self, key: &[u8]) -> Result<Option<Record>> {
        let Some(&idx) = self.map.get(key) else {
            return Ok(None);
        };
        Ok(self
            .slots
            .get(idx as usize)
            .and_then(Option::as_ref)
            .map(|s| {
                s.referenced.store(true, Ordering::Relaxed);
                Record {
                    value: s.value.clone(),
                    meta: s.meta,
                }
            }))
    }
    fn get_meta(&self, key: &[u8]) -> Result<Option<Meta>> {
        let Some(&idx) = self.map.get(key) else {
            return Ok(None);
        };
        Ok(self
            .slots
            .get(idx as usize)
            .and_then(Option::as_ref)
            .map(|s| s.meta))
    }
    fn put(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        let cost = charge(key.len(), value.len());
        if self.cap_bytes > 0 && cost > self.cap_bytes {
            return Err(Error::Infeasible(format!(
                "a record of {cost} bytes does not fit a cache shard of {} bytes",
                self.cap_bytes
            )));
        }
        self.max_cas = self.max_cas.max(meta.cas);
        if let Some(&idx) = self.map.get(key) {
            // An update keeps the record's place in the clock.
            let old_generation = self.take_slot(idx).map_or(0, |s| s.generation);
            self.free.pop();
            self.used += cost;
            self.slots[idx as usize] = Some(Slot {
                key: key.into(),
                value,
                meta,
                referenced: AtomicBool::new(true),
                generation: old_generation,
            });
            self.evict(idx);
            return Ok(());
        }
        let generation = self.next_generation;
        self.next_generation += 1;
        let slot = Slot {
            key: key.into(),
            value,
            meta,
            referenced: AtomicBool::new(false),
            generation,
        };
        let idx = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                (self.slots.len() - 1) as u32
            }
        };
        self.map.insert(key, idx);
        self.queue.push_back((idx, generation));
        self.used += cost;
        self.evict(idx);
        self.compact_queue();
        Ok(())
    }
    fn remove(&mut self, key: &[u8]) -> Result<bool> {
        match self.map.remove(key) {
            Some(idx) => {
                let removed = self.take_slot(idx).is_some();
                self.compact_queue();
                Ok(removed)
            }
            None => Ok(false),
        }
    }
    fn len(&self) -> u64 {
        self.map.len() as u64
    }
    fn clear(&mut self) -> Result<()> {
        self.map.clear();
        self.slots.clear();
        self.free.clear();
        self.queue.clear();
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
        self.slots.iter().flatten().map(|s| s.key.clone()).collect()
    }
    fn max_cas(&self) -> u64 {
        self.max_cas
    }
    fn stats(&self) -> StoreStats {
        StoreStats {
            bytes: self.used,
            evictions: self.evictions,
            file_size: 0,
        }
    }
}
