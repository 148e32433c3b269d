//! Which items a full cache keeps (issue 45): two queues of segments, as
//! memcached's segmented LRU and S3-FIFO have, with a second chance in each.
//!
//! New items are appended to *probation* segments. A pass over the oldest
//! probation segment moves each item read since it was written (its
//! reference bit) into *main*, and evicts the others. A pass over the
//! oldest main segment keeps, in main, each item read since the last pass
//! (clearing its bit) and evicts the others. The items a pass keeps are
//! appended to main's open segment while it has room (so main segments
//! stay full, as Segcache's merge keeps them); those that do not fit stay
//! where they are, and their segment becomes main's open one.
//!
//! Which queue a pass takes from: main's oldest while main holds more than
//! `MAIN_SHARE` of the live bytes, else probation's. Why a share: with one
//! queue and one bit, items read in a workload's previous round (each read
//! once, long ago) and items written seconds ago (not read yet) both met
//! the hand with one pass to live, and when the old ones were most of the
//! cache the new ones went first (memcslap's get test run again and again:
//! 29,674 misses of 800,000 where memcached missed none). Main's share is
//! what its old items can hold; the rest is the new items' probation, so a
//! round of new keys up to ~60% of the cache is read back before any of
//! it is evicted. The share also keeps main's items through a scan: new
//! items never read leave from probation and cannot push main below its
//! share. memcached's WARM queue takes 40% too (`warm_lru_pct`).
//!
//! The share adapts, as ARC's split does: it starts at 40%, and a write of
//! a key evicted a while ago (its ghost, `ghost.rs`) moves it. A key
//! evicted from main and wanted again says main was too small: the share
//! grows by the item's bytes (times the ghosts of probation's evictions
//! for each of main's, ARC's step); one evicted from probation shrinks it
//! so. It stays between 40% and 90% (`MIN_SHARE`: probation keeps at least
//! the 60% a churn's new rounds need). The written key is also marked read
//! (its reference bit), so its first pass moves it to main: S3-FIFO's
//! rule for a ghost, which brings back a working set larger than main's
//! share after a scan, where its keys came back to probation and were
//! evicted again before they were read twice. Without misses there are no
//! ghosts, so memcslap's churn keeps the 40% its rounds need; a scan
//! larger than the cache followed by the reuse of an earlier working set
//! grows main to hold it (0.49 of the gets hit at 40% against S3-FIFO's
//! 0.55, docs/bench/cache.md).

use super::table::{Loc, MAX_SEGMENTS};
use super::ttl::joined;
use super::{charge_of, external_only, item, SegCache, EXTERNAL_OVERHEAD};
use crate::record::now_secs;
use std::collections::VecDeque;

/// Main's share of the live bytes (module doc), in 2^-32ths: at first,
/// and its bounds. The first is also the least: below it, ARC's swings
/// lost a working set that fitted 40% (main shrunk by ghosts of
/// probation's evictions, then regrown past it by main's): 0.5925 of
/// `print_hit_ratios`' gets hit at `CAP_MB=64` with a floor of 10%,
/// 0.5953 with 40%, as with the share fixed.
pub(super) const MAIN_SHARE: u64 = share(40);
const MIN_SHARE: u64 = MAIN_SHARE;
const MAX_SHARE: u64 = share(90);

pub(super) const fn share(percent: u64) -> u64 {
    (percent << 32) / 100
}

impl SegCache {
    /// The queue of main segments, or of probation ones.
    pub(super) fn queue(&mut self, main: bool) -> &mut VecDeque<u32> {
        if main {
            &mut self.main
        } else {
            &mut self.probation
        }
    }

    /// Segments in both queues.
    pub(super) fn segments(&self) -> usize {
        self.probation.len() + self.main.len()
    }

    pub(super) fn is_main(&self, id: u32) -> bool {
        self.in_main.get(id as usize).copied().unwrap_or(false)
    }

    pub(super) fn set_main(&mut self, id: u32, main: bool) {
        let i = id as usize;
        if self.in_main.len() <= i {
            self.in_main.resize(i + 1, false);
        }
        self.in_main[i] = main;
    }

    /// Whether the next pass takes main's oldest segment (module doc).
    pub(super) fn main_turn(&self) -> bool {
        if self.main.is_empty() {
            return false;
        }
        self.probation.is_empty() || self.main_over_share()
    }

    pub(super) fn main_over_share(&self) -> bool {
        let total = u128::from(self.live_bytes + self.external);
        u128::from(self.main_live) > (total * u128::from(self.main_share)) >> 32
    }

    /// A key of `hash` written that the cache did not hold: if it is a
    /// ghost, main's share moves for its `charge` bytes (module doc), and
    /// true (the item is to be written marked read).
    #[inline]
    pub(super) fn ghost_hit(&mut self, hash: u64, charge: u64) -> bool {
        let Some((from_main, step)) = self.ghosts.take(hash) else {
            return false;
        };
        let total = (self.live_bytes + self.external).max(1);
        let delta = (u128::from(charge * step) << 32) / u128::from(total);
        let delta = delta.min(u128::from(MAX_SHARE)) as u64;
        self.main_share = if from_main {
            (self.main_share + delta).min(MAX_SHARE)
        } else {
            self.main_share.saturating_sub(delta).max(MIN_SHARE)
        };
        true
    }

    /// A pass (module doc) over the oldest segment of the queue whose turn
    /// it is. Without evictions (`no_evictions.rs`) it keeps every current
    /// item that has not expired, so it only gives back dead bytes. Evicts
    /// at most `quota` items, and no more once the values kept aside that
    /// it evicted free `external_quota` bytes: the rest of the segment is
    /// kept as it is (bits untouched), and the segment stays the oldest of
    /// its queue, so the next pass goes on where this one stopped. A
    /// segment left empty becomes the one TTL class `class` appends to, or
    /// is freed when it is not of the standard size or `free_empty` asks.
    pub(super) fn recycle_oldest_with(
        &mut self,
        free_empty: bool,
        quota: u64,
        external_quota: u64,
        class: usize,
    ) {
        let from_main = self.main_turn();
        if self.evicts() {
            self.ghosts.size_for(self.table.len());
        }
        let Some(id) = self.queue(from_main).pop_front() else {
            return;
        };
        self.forget_aside_cursor(id);
        self.passes += 1;
        let Some(mut buf) = self.segs[id as usize].take() else {
            return;
        };
        let now = now_secs();
        let (mut read, mut write, mut evicted) = (0usize, 0usize, 0u64);
        let (mut freed_external, mut spared_for_bytes, mut spared_for_count) = (0u64, false, false);
        // What stays here: its latest expiry, and the bytes of its items
        // (they join main with the segment).
        let (mut expiry, mut kept_here) = (0, 0u64);
        let base = self.cas_base_of(id);
        let was_main = self.is_main(id);
        while read < buf.len() {
            let Some(it) = item::decode(&buf[read..], base) else {
                break; // never: segments hold only what `encode` wrote
            };
            let (len, expired, value) = (it.len, it.meta.is_expired(now), external_only(it.value));
            let expires_at = it.meta.expires_at;
            let hash = self.hash(it.key);
            if let Some(slot) = self.slot_at(hash, id, read) {
                // A probation pass stops where its moves took main over
                // its share: evicting the newer items after that point
                // would pay for main's growth with probation's newest.
                let main_full = !from_main && self.main_over_share();
                spared_for_bytes |= freed_external >= external_quota || main_full;
                // Without evictions a pass only compacts: every current
                // item stays, as the count cap's spared ones do.
                let compacting = !self.evict && !expired;
                spared_for_count |= evicted >= quota || compacting;
                let spared =
                    evicted >= quota || freed_external >= external_quota || compacting || main_full;
                let keep = !spared && !expired && self.table.access(slot).take_reference();
                if keep && self.move_to_main(slot, &it, was_main) {
                    // Appended to main's open segment.
                } else if spared || keep {
                    buf.copy_within(read..read + len, write);
                    let here = Loc {
                        seg: id,
                        off: write as u32,
                    };
                    self.table.set_loc(slot, here);
                    write += len;
                    expiry = joined(expiry, expires_at);
                    kept_here += charge_of(len, &value);
                } else {
                    if let item::Value::External(_, n) = value {
                        freed_external += n as u64 + EXTERNAL_OVERHEAD;
                    }
                    if !expired {
                        self.tell_eviction(slot, &it);
                    }
                    self.count_unfetched(slot, expired);
                    self.table.remove_at(slot);
                    self.retire(id, len, value);
                    evicted += 1;
                    if !expired {
                        self.evictions += 1;
                        self.ghosts.remember(hash, was_main);
                    }
                }
            }
            read += len;
        }
        buf.truncate(write);
        if spared_for_bytes {
            // Items kept for main stay in its queue with the spared ones
            // until the next pass (their bits are cleared).
            self.segs[id as usize] = Some(buf);
            self.queue(from_main).push_front(id);
            self.set_expiry(id, expiry);
            return;
        }
        if self.main_open == Some(id) {
            self.main_open = None;
        }
        if write == 0 {
            if free_empty || buf.capacity() != self.seg_size {
                self.release_segment(id, buf.capacity());
                return;
            }
            self.segs[id as usize] = Some(buf);
            self.rebase(id);
            self.set_main(id, false);
            self.probation.push_back(id);
            self.set_expiry(id, 0);
            self.open_for(class, id);
            return;
        }
        // Survivors keep the base they were stored against.
        self.segs[id as usize] = Some(buf);
        if spared_for_count {
            // Items the count cap spared (all, for a compaction): the
            // segment is probation's newest, its room open for new items.
            if was_main {
                self.main_live -= kept_here;
            }
            self.set_main(id, false);
            self.probation.push_back(id);
            self.set_expiry(id, expiry);
            self.open_for(class, id);
            return;
        }
        // Items stayed here: the segment joins main, and takes what the
        // next passes keep.
        for open in self.open.iter_mut().filter(|o| **o == Some(id)) {
            *open = None;
        }
        if !was_main {
            self.main_live += kept_here;
        }
        self.set_main(id, true);
        self.main.push_back(id);
        self.set_expiry(id, expiry);
        if let Some(old) = self.main_open.replace(id) {
            self.closed(old);
        }
    }

    /// A new, empty main segment to move items into: without one, a
    /// probation segment whose pass stops early (values kept aside) would
    /// keep its read items where they are, in probation, with their bits
    /// cleared. The cap evicts for its room on the passes that follow.
    fn open_main(&mut self) -> Option<u32> {
        let id = match self.free_ids.pop() {
            Some(id) => id,
            None if self.segs.len() < MAX_SEGMENTS as usize => {
                self.segs.push(None);
                (self.segs.len() - 1) as u32
            }
            None => return None,
        };
        self.segs[id as usize] = Some(Vec::with_capacity(self.seg_size));
        self.rebase(id);
        self.allocated += self.seg_size as u64;
        self.set_main(id, true);
        self.main.push_back(id);
        self.set_expiry(id, 0);
        self.main_open = Some(id);
        Some(id)
    }

    /// Appends the item `it` of `slot` (in a segment being passed, of main
    /// if `from_main`) to main's open segment if it fits there; false if
    /// not (no open segment, or no room).
    pub(super) fn move_to_main(
        &mut self,
        slot: usize,
        it: &item::ItemRef<'_>,
        from_main: bool,
    ) -> bool {
        let Some(dest) = self.main_open.or_else(|| self.open_main()) else {
            return false;
        };
        let base = self.cas_base_of(dest);
        let len = item::encoded_len(it.key, &it.value, &it.meta, base);
        let Some(seg) = self.segs.get_mut(dest as usize).and_then(Option::as_mut) else {
            return false;
        };
        if seg.capacity() - seg.len() < len {
            return false;
        }
        let off = seg.len() as u32;
        item::encode(seg, it.key, &it.value, &it.meta, base);
        self.table.set_loc(slot, Loc { seg: dest, off });
        self.set_expiry(dest, joined(self.expiry_of(dest), it.meta.expires_at));
        // Its new encoding may differ in length (another CAS base).
        self.live_bytes = self.live_bytes + len as u64 - it.len as u64;
        if from_main {
            self.main_live = self.main_live + len as u64 - it.len as u64;
        } else {
            self.main_live += charge_of(len, &it.value);
        }
        true
    }
}
