//! Evicting values kept aside (`EXTERNAL_MIN` bytes or more) a few at a
//! time, as memcached evicts one item per allocation.
//!
//! Why: the records of large values are small, so one segment holds the
//! records of thousands of them, and a pass (`policy.rs`) reads its whole
//! segment. A cache full of large values whose open segment still has room
//! for the next record is over its cap by that value's bytes only; a whole
//! pass for each insert was too slow, and a pass that freed a 64th of the
//! cap at once (what it did before) emptied that much of the cache for one
//! insert: with 11 KB values in 60 MB, 45 values a shard went at once, and
//! a watcher of evictions (memcached's t/watcher.t) saw none for the 44
//! sets that followed. Here the pass goes on where the last one stopped
//! (`aside_cursor`) and stops once the insert's bytes are free: each
//! record is read once per round, whatever the inserts' sizes.
//!
//! It decides as the whole pass does (an item read since the last pass
//! goes to main's open segment, others are evicted) but in place: nothing
//! is compacted, an evicted item's record stays as dead bytes until the
//! whole pass over that segment drops them. Records of values kept inline
//! are left to that pass too.

use super::{item, SegCache, EXTERNAL_OVERHEAD};
use crate::record::now_secs;

impl SegCache {
    /// Frees at least `need` bytes of values kept aside from the oldest
    /// segment of the queue whose turn it is, going on from where the
    /// last such pass stopped in it. False when it reached that segment's
    /// end (or main's share) first: the whole pass takes over.
    pub(super) fn evict_aside(&mut self, need: u64) -> bool {
        let from_main = self.main_turn();
        let Some(&id) = self.queue(from_main).front() else {
            return false;
        };
        let Some(buf) = self.segs.get_mut(id as usize).and_then(Option::take) else {
            return false;
        };
        let mut read = match self.aside_cursor {
            Some((seg, off)) if seg == id && off <= buf.len() => off,
            _ => 0,
        };
        let (now, base, was_main) = (now_secs(), self.cas_base_of(id), self.is_main(id));
        let mut freed = 0u64;
        while read < buf.len() && freed < need {
            let Some(it) = item::decode(&buf[read..], base) else {
                break; // never: segments hold only what `encode` wrote
            };
            let len = it.len;
            let item::Value::External(_, n) = it.value else {
                read += len;
                continue;
            };
            let hash = self.hash(it.key);
            let Some(slot) = self.slot_at(hash, id, read) else {
                read += len;
                continue;
            };
            // As the whole pass: probation stops feeding main past its share.
            if !from_main && self.main_over_share() {
                break;
            }
            let expired = it.meta.is_expired(now);
            if !expired && self.table.access(slot).take_reference() {
                if !self.move_to_main(slot, &it, was_main) {
                    // Kept where it is, for the whole pass to decide.
                    self.table.access(slot).reference();
                }
            } else {
                freed += n as u64 + EXTERNAL_OVERHEAD;
                if !expired {
                    self.tell_eviction(slot, &it);
                }
                self.count_unfetched(slot, expired);
                self.table.remove_at(slot);
                self.retire(id, len, it.value);
                if !expired {
                    self.evictions += 1;
                    self.ghosts.remember(hash, was_main);
                }
            }
            read += len;
        }
        self.segs[id as usize] = Some(buf);
        self.aside_cursor = Some((id, read));
        freed >= need
    }
}
