//! Segments grouped by expiry, and expiry of whole segments (Segcache's
//! TTL buckets, coarser).
//!
//! An item is appended to the open segment of its TTL class: items that
//! never expire in one, and items with a TTL in classes four times wider
//! than the one before (under 3 s, under 15 s, ..., a day and more). Each
//! segment remembers the latest expiry of what was written into it, so
//! once that time has passed every item in it has expired, and the whole
//! segment is freed without a pass of the eviction hand: its items'
//! slots go, nothing is copied, and no live item is evicted to make room
//! that expired items were holding. Without the grouping, a segment of
//! items that expire in a minute mixed with items that never do would
//! never expire whole, and the expired ones would wait for the hand.
//!
//! Not perfect: a segment the hand compacts is reopened for the class of
//! the write that needed room, survivors and all, so survivors that never
//! expire keep that segment from expiring whole, and the class's previous
//! open segment is closed with its room unused until the hand comes back.

use super::item;
use super::ttl::NEVER;
use super::SegCache;
use crate::record::now_secs;

impl SegCache {
    /// The id of the segment `class` appends to, if it has one.
    pub(super) fn open_segment(&self, class: usize) -> Option<u32> {
        self.open.get(class).copied().flatten()
    }

    /// Makes `id` the segment `class` appends to; the one it replaces is
    /// closed, and may expire whole from now on.
    pub(super) fn open_for(&mut self, class: usize, id: u32) {
        for open in self.open.iter_mut() {
            if *open == Some(id) {
                *open = None;
            }
        }
        if let Some(old) = self.open.get_mut(class).and_then(|o| o.replace(id)) {
            self.closed(old);
        }
    }

    /// Notes that segment `id` takes no more writes.
    pub(super) fn closed(&mut self, id: u32) {
        let e = self.expiry_of(id);
        if e != 0 && e != NEVER {
            self.soonest_expiry = self.soonest_expiry.min(e);
        }
    }

    pub(super) fn expiry_of(&self, id: u32) -> u64 {
        self.seg_expiry.get(id as usize).copied().unwrap_or(0)
    }

    pub(super) fn set_expiry(&mut self, id: u32, expiry: u64) {
        let i = id as usize;
        if self.seg_expiry.len() <= i {
            self.seg_expiry.resize(i + 1, 0);
        }
        self.seg_expiry[i] = expiry;
    }

    /// Frees every closed segment whose items have all expired. Cheap
    /// when none can have: the soonest closed segment's expiry is kept.
    pub(super) fn expire_whole_segments(&mut self) {
        let now = now_secs();
        if now < self.soonest_expiry {
            return;
        }
        let mut soonest = NEVER;
        for main in [false, true] {
            let queue = std::mem::take(self.queue(main));
            let mut kept = std::collections::VecDeque::with_capacity(queue.len());
            for id in queue {
                let e = self.expiry_of(id);
                let open = self.open.contains(&Some(id)) || self.main_open == Some(id);
                if open || e == 0 || e == NEVER || e > now {
                    if !open && e != 0 && e != NEVER {
                        soonest = soonest.min(e);
                    }
                    kept.push_back(id);
                } else {
                    self.drop_segment(id);
                }
            }
            *self.queue(main) = kept;
        }
        self.soonest_expiry = soonest;
    }

    /// Unlinks every item of segment `id` that is still current and frees
    /// the segment.
    fn drop_segment(&mut self, id: u32) {
        let Some(buf) = self.segs.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        let (mut read, base) = (0, self.cas_base_of(id));
        while let Some(it) = buf.get(read..).and_then(|b| item::decode(b, base)) {
            let (len, value) = (it.len, super::external_only(it.value));
            if let Some(slot) = self.slot_at(self.hash(it.key), id, read) {
                self.count_unfetched(slot, true);
                self.table.remove_at(slot);
                self.retire(id, len, value);
            }
            read += len;
        }
        self.release_segment(id, buf.capacity());
    }
}
