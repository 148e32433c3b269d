//! The segment cache (`*#capsiz=..,cache_kind=segments`; issue 16): items are
//! appended into fixed-size segments, found through a table of 9-byte
//! slots, and evicted a segment at a time with a second chance per item.
//!
//! Why: the CLOCK cache (`cache.rs`) keeps an 88-byte entry per record plus
//! a heap allocation for a value over 22 bytes, ~240 bytes for a 16-byte
//! key and a 100-byte value where memcached needs ~170. Here an item costs
//! its bytes plus a 4-byte header (`item.rs`) and its share of the table
//! (9 bytes a slot, 11/16 to 7/8 full, `table.rs`): no allocation per item, and memory
//! that is only ever whole segments (Pelikan's Segcache, NSDI'21).
//!
//! Items are appended to the open segment of their TTL class, and a
//! segment whose items have all expired is freed whole before anything
//! is evicted (`expiry.rs`).
//!
//! Eviction, when no segment has room and the cap forbids another: the
//! oldest segment of probation (new items) or of main (items read since
//! they were written) is passed over (`policy.rs`). Each of its items that
//! is still current and was read since it was written or last passed (its
//! reference bit) moves to main, the others are dropped, and the emptied
//! segment becomes the newest of probation, its room open for new items.
//! So items never read go on their first pass (the one-hit wonders
//! S3-FIFO keeps out of its main queue), items read once in a while
//! survive, and main's share of the cache is bounded, so that new items
//! are kept long enough to be read. Expired items are
//! dropped on the same pass. An item larger than a segment gets a segment
//! of its own size. Values kept aside (1 KiB and more) are evicted only as
//! far as the byte cap needs, at least a 64th of it a pass (`make_room`).

mod aside;
mod expiry;
mod ghost;
pub(crate) mod item;
mod no_evictions;
mod policy;
mod table;
mod ttl;

use super::index::Key;
use super::tagged_table::{in_window, key_hash, prefetch_line, process_hasher, KeysAt, ProbeHint};
use super::{Store, StoreStats};
use crate::access::{Access, AccessWord};
use crate::record::{Meta, Record};
use crate::status::{Error, Result};
use bytes::Bytes;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::ops::Bound;
use std::sync::Arc;
use table::{CacheSlots, Loc, SlotWord, Table, MAX_SEGMENTS};
use ttl::{joined, ttl_class, NEVER, TTL_CLASSES};

// Values of `EXTERNAL_MIN` bytes or more are kept aside, as the `Bytes`
// they came in (`item::Value::External`): a read hands out a shared handle
// instead of a copy, so replies pending on many connections (non-reading
// clients, issue 12) do not multiply a large value, and a large value
// never takes a segment of its own.
use item::EXTERNAL_MIN;

/// Bytes charged for a value kept aside beyond its length: its handle in
/// the table (32) and the allocator's header and rounding (16).
const EXTERNAL_OVERHEAD: u64 = 48;

/// A byte-cap pass over the oldest segment frees at least this share of
/// the cap in values kept aside once it starts (`make_room`).
const EXTERNAL_EVICTION_SHARE: u64 = 64;

/// Segments are this big unless the cap is small (`segment_size`).
/// What the byte cap bounds: the segments' capacity plus the table.
const MAX_SEGMENT: usize = 1 << 20;

/// A 16th of the cap (so eviction frees a small share at a time), between
/// 4 KiB and 1 MiB, and never above the cap itself.
fn segment_size(cap_bytes: u64) -> usize {
    if cap_bytes == 0 {
        return MAX_SEGMENT;
    }
    let share = (cap_bytes / 16).clamp(4096, MAX_SEGMENT as u64);
    share.min(cap_bytes) as usize
}

pub(crate) struct SegCache {
    table: Table,
    /// By segment id; `None` for an id in `free_ids`.
    segs: Vec<Option<Vec<u8>>>,
    free_ids: Vec<u32>,
    /// Segments of new items, oldest first: writes go to their open ones
    /// (`policy.rs`).
    probation: VecDeque<u32>,
    /// Segments of items read since they were written, oldest first.
    main: VecDeque<u32>,
    /// The main segment that a pass moves the items it keeps into.
    main_open: Option<u32>,
    /// By segment id: whether it is in `main`.
    in_main: Vec<bool>,
    /// Bytes of the items in main segments, with their values kept aside.
    main_live: u64,
    /// Main's share of the live bytes, in 2^-32ths (`policy.rs`).
    main_share: u64,
    /// Keys evicted a while ago, and from which queue (`ghost.rs`).
    ghosts: ghost::Ghosts,
    /// The segment each TTL class appends to (`expiry.rs`).
    open: [Option<u32>; TTL_CLASSES],
    /// By segment id: the latest expiry of its items (`ttl::NEVER` if
    /// one never expires, 0 while empty).
    seg_expiry: Vec<u64>,
    /// No closed segment expires whole before this time.
    soonest_expiry: u64,
    /// By segment id: the CAS its items are stored against (`item.rs`),
    /// the shard's counter when it was opened empty.
    cas_base: Vec<u64>,
    seg_size: usize,
    /// Sum of the segments' capacities (with the table's bytes, what the
    /// byte cap bounds).
    allocated: u64,
    /// Sum of the live items' sizes (`stats().bytes`).
    live_bytes: u64,
    /// Large values (`EXTERNAL_MIN`), by the index their items hold;
    /// `None` for an index in `big_free`.
    big: Vec<Option<Bytes>>,
    big_free: Vec<u32>,
    /// Bytes charged for them (`EXTERNAL_OVERHEAD` each beyond the value).
    external: u64,
    cap_bytes: u64,
    cap_recs: u64,
    /// False: a full cache refuses writes instead of evicting
    /// (`disable_evictions=true`, `no_evictions.rs`).
    evict: bool,
    evictions: u64,
    /// Of the items evicted, and of the expired ones dropped, those never
    /// fetched (`StoreStats`).
    evicted_unfetched: u64,
    expired_unfetched: u64,
    /// Passes over a segment so far (`recycle_oldest_with`), for tests.
    passes: u64,
    max_cas: u64,
    /// Per-process seeded: keys come from the network (HashDoS).
    /// `process_hasher()`'s, kept beside the table for the hot path.
    hasher: foldhash::fast::RandomState,
    /// Where the table is, for writers waiting for the shard's lock
    /// (`ProbeHint`); republished after every insert and clear.
    probe: Arc<ProbeHint>,
    /// Hears of each eviction (`Db::set_eviction_watch`).
    eviction_watch: Option<Arc<dyn crate::evictions::EvictionWatch>>,
    /// Where `evict_aside` stopped: a segment and the offset of the next
    /// record it reads there (`aside.rs`). Forgotten when that segment is
    /// passed whole, released or rebased.
    aside_cursor: Option<(u32, usize)>,
}

/// `retire`'s segment for a value that was never stored in one.
const NO_SEGMENT: u32 = u32::MAX;

/// What an item of `len` bytes in its segment weighs with its value if
/// kept aside (`main_live`).
fn charge_of(len: usize, value: &item::Value<'_>) -> u64 {
    match value {
        item::Value::External(_, n) => (len + n) as u64 + EXTERNAL_OVERHEAD,
        item::Value::Inline(_) => len as u64,
    }
}

/// The value as `retire` needs it, without borrowing the segment.
fn external_only(v: item::Value<'_>) -> item::Value<'static> {
    match v {
        item::Value::External(i, n) => item::Value::External(i, n),
        item::Value::Inline(_) => item::Value::Inline(&[]),
    }
}

/// The key of the item at `loc` (empty if the location is stale, which a
/// live slot's never is).
fn key_at(segs: &[Option<Vec<u8>>], loc: Loc) -> &[u8] {
    segs.get(loc.seg as usize)
        .and_then(|s| s.as_ref())
        .and_then(|b| b.get(loc.off as usize..))
        .and_then(item::key_of)
        .unwrap_or(&[])
}

/// The keys of the table's slots, for its growths (`KeysAt`): each in its
/// segment, a prefetch away.
struct SegmentKeys<'a> {
    segs: &'a [Option<Vec<u8>>],
    hasher: &'a foldhash::fast::RandomState,
}

impl KeysAt<Loc> for SegmentKeys<'_> {
    fn hash_at(&self, loc: Loc) -> u64 {
        self.hasher.hash_one(key_at(self.segs, loc))
    }
    fn prefetch_at(&self, loc: Loc) {
        if let Some(Some(seg)) = self.segs.get(loc.seg as usize) {
            prefetch_line(seg.as_ptr().wrapping_add(loc.off as usize));
        }
    }
}

impl SegCache {
    /// A cache holding at most `cap_bytes` of segments (0 = no byte cap)
    /// and `cap_recs` items (0 = no count cap).
    pub(crate) fn new(cap_bytes: u64, cap_recs: u64) -> Self {
        Self::with_capacity(cap_bytes, cap_recs, 0)
    }

    /// As `new`, with room in the table for `items` before it first grows
    /// (`num_buckets`; untouched room costs address space only).
    pub(crate) fn with_capacity(cap_bytes: u64, cap_recs: u64, items: usize) -> Self {
        SegCache {
            table: Table::with_capacity(items),
            segs: Vec::new(),
            free_ids: Vec::new(),
            probation: VecDeque::new(),
            main: VecDeque::new(),
            main_open: None,
            in_main: Vec::new(),
            main_live: 0,
            main_share: policy::MAIN_SHARE,
            ghosts: ghost::Ghosts::default(),
            open: [None; TTL_CLASSES],
            seg_expiry: Vec::new(),
            soonest_expiry: NEVER,
            cas_base: Vec::new(),
            seg_size: segment_size(cap_bytes),
            allocated: 0,
            live_bytes: 0,
            big: Vec::new(),
            big_free: Vec::new(),
            external: 0,
            cap_bytes,
            cap_recs,
            evict: true,
            evictions: 0,
            evicted_unfetched: 0,
            expired_unfetched: 0,
            passes: 0,
            max_cas: 0,
            hasher: *process_hasher(),
            probe: Arc::new(ProbeHint::new::<CacheSlots>(key_hash)),
            eviction_watch: None,
            aside_cursor: None,
        }
    }

    /// This cache, refusing writes when full instead of evicting
    /// (`disable_evictions=true`, memcached's `-M`; `no_evictions.rs`).
    pub(crate) fn without_evictions(mut self) -> Self {
        self.evict = false;
        self
    }

    #[inline]
    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    fn slot_of(&self, key: &[u8]) -> Option<usize> {
        self.slot_hashed(key, self.hash(key))
    }

    /// Whether the item of `key` in `slot` belongs to the window
    /// `from..next` of a walk (`Table::live_window`).
    fn homed_in(&self, slot: usize, key: &[u8], from: usize, next: Option<usize>) -> bool {
        in_window(self.table.home_position(slot, self.hash(key)), from, next)
    }

    /// `slot_of` for a key whose hash the caller has already.
    fn slot_hashed(&self, key: &[u8], hash: u64) -> Option<usize> {
        let segs = &self.segs;
        self.table.find(hash, |loc| key_at(segs, loc) == key)
    }

    /// A read of the item in `slot` for the eviction hand (its reference
    /// bit). Only a cache that evicts ever reads the bit back: without a
    /// cap, a pass over a segment keeps every item (`make_byte_room`'s
    /// quota of 0), so an uncapped `*` skips it and a read writes nothing.
    /// Setting it was a store into the slot's line on the first read of
    /// every item, a line then moved between the cores when two threads
    /// read (issue 46).
    /// Calls `f` with the value and metadata of the item in `slot`,
    /// borrowed where it lies (in its segment, or kept aside).
    fn lend(&self, s: usize, f: &mut dyn FnMut(&[u8], &Meta)) -> Result<bool> {
        let Some(it) = self.item_at(self.table.loc(s)) else {
            return Ok(false);
        };
        let value = match it.value {
            item::Value::Inline(v) => v,
            item::Value::External(i, _) => match self.big.get(i as usize) {
                Some(Some(b)) => b,
                _ => return Ok(false),
            },
        };
        f(value, &it.meta);
        Ok(true)
    }

    #[inline]
    fn reference(&self, slot: usize) {
        if self.evicts() {
            self.table.access(slot).reference();
        }
    }

    /// Whether a pass can evict: a cap, and evictions allowed.
    #[inline]
    fn evicts(&self) -> bool {
        self.evict && (self.cap_bytes > 0 || self.cap_recs > 0)
    }

    fn item_at(&self, loc: Loc) -> Option<item::ItemRef<'_>> {
        let seg = self.segs.get(loc.seg as usize)?.as_ref()?;
        item::decode(seg.get(loc.off as usize..)?, self.cas_base_of(loc.seg))
    }

    fn cas_base_of(&self, id: u32) -> u64 {
        self.cas_base.get(id as usize).copied().unwrap_or(0)
    }

    /// Segment `id` is empty: its items will be stored against the CAS
    /// its middle item can expect, the counter the shard has reached (the
    /// write about to go in has taken it) plus half of what the segment
    /// holds of items of ~128 bytes. Why the middle: differences are
    /// signed (`item.rs`), so a 1 MiB segment's ~8,700 items of 120 bytes
    /// all stay within the 2-byte range (-8,192 to 8,191); from its first
    /// item on, its last ~500 took 3.
    fn rebase(&mut self, id: u32) {
        self.forget_aside_cursor(id);
        let i = id as usize;
        if self.cas_base.len() <= i {
            self.cas_base.resize(i + 1, 0);
        }
        let room = self
            .segs
            .get(i)
            .and_then(Option::as_ref)
            .map_or(0, Vec::capacity);
        self.cas_base[i] = self.max_cas.wrapping_add(room as u64 / 256);
    }

    fn record_at(&self, slot: usize) -> Option<Record> {
        let it = self.item_at(self.table.loc(slot))?;
        let value = match it.value {
            item::Value::Inline(v) => Bytes::copy_from_slice(v),
            item::Value::External(i, _) => self.big.get(i as usize)?.clone()?,
        };
        Some(Record {
            value,
            meta: it.meta,
        })
    }

    /// Forgets an item of segment `seg` (`NO_SEGMENT`: a value not stored
    /// yet) that is no longer live: its bytes, and its value if kept aside.
    /// (Its slot is the caller's business.)
    fn retire(&mut self, seg: u32, len: usize, value: item::Value<'_>) {
        self.live_bytes -= len as u64;
        if self.is_main(seg) {
            self.main_live -= charge_of(len, &value);
        }
        if let item::Value::External(i, n) = value {
            if let Some(b) = self.big.get_mut(i as usize) {
                *b = None;
                self.big_free.push(i);
                self.external -= n as u64 + EXTERNAL_OVERHEAD;
            }
        }
    }

    /// Drops `key`'s item, returning its access state.
    fn unlink(&mut self, key: &[u8]) -> Option<Access> {
        self.unlink_hashed(key, self.hash(key))
    }

    fn unlink_hashed(&mut self, key: &[u8], hash: u64) -> Option<Access> {
        let slot = self.slot_hashed(key, hash)?;
        let (len, value) = match self.item_at(self.table.loc(slot)) {
            Some(it) => (it.len, external_only(it.value)),
            None => (0, item::Value::Inline(&[])),
        };
        let access = self.table.access(slot).peek();
        let seg = self.table.loc(slot).seg;
        self.table.remove_at(slot);
        self.retire(seg, len, value);
        Some(access)
    }

    fn new_segment(&mut self, size: usize, class: usize) -> Result<()> {
        let id = match self.free_ids.pop() {
            Some(id) => id,
            None if self.segs.len() < MAX_SEGMENTS as usize => {
                self.segs.push(None);
                (self.segs.len() - 1) as u32
            }
            None => {
                return Err(Error::TooLarge {
                    size: size as u64,
                    cap: self.allocated,
                })
            }
        };
        self.segs[id as usize] = Some(Vec::with_capacity(size));
        self.rebase(id);
        self.allocated += size as u64;
        self.probation.push_back(id);
        self.set_main(id, false);
        self.set_expiry(id, 0);
        self.open_for(class, id);
        Ok(())
    }

    /// Free bytes in the segment `class` appends to.
    fn room_in(&self, class: usize) -> usize {
        self.open_segment(class)
            .and_then(|id| self.segs[id as usize].as_ref())
            .map_or(0, |b| b.capacity() - b.len())
    }

    /// Makes room for an item of `len` bytes in the segment of TTL class
    /// `class`, and for one more item under the count cap: first by
    /// freeing segments whose items all expired, then by evicting as the
    /// module doc says.
    fn make_room(&mut self, len: usize, class: usize) -> Result<()> {
        if self.room_in(class) < len
            || (self.cap_recs > 0 && self.table.len() as u64 >= self.cap_recs)
        {
            self.expire_whole_segments();
        }
        // Each pass over a segment clears the reference bits it keeps, so
        // two passes over every segment always free something.
        let mut passes = 2 * self.segments() + 2;
        while self.cap_recs > 0 && self.table.len() as u64 >= self.cap_recs && passes > 0 {
            passes -= 1;
            // A pass evicts at most a 16th of the count cap: a segment can
            // hold all of a small cap's items, and one pass must not empty
            // the cache to make room for one.
            let quota = (self.cap_recs / 16).max(1);
            self.recycle_oldest_with(false, quota, u64::MAX, class);
        }
        self.make_byte_room(len, class)
    }

    /// `make_room`'s part for the byte cap: room for `len` bytes in the
    /// segment of TTL class `class`, evicting as the module doc says.
    /// Without a byte cap nothing is evicted.
    fn make_byte_room(&mut self, len: usize, class: usize) -> Result<()> {
        let size = len.max(self.seg_size);
        let mut passes = 2 * self.segments() + 2;
        let mut compacted = false;
        loop {
            let room = self.room_in(class) >= len;
            if !room && self.cap_bytes == 0 && self.live_bytes * 2 < self.allocated {
                // No byte cap to force eviction: without this, overwritten
                // and removed items would hold their segments for good.
                // More than half of the segments is dead, so compacting the
                // oldest (every live item kept) gives room back.
                self.recycle_oldest_with(true, 0, u64::MAX, class);
                if self.room_in(class) >= len {
                    return Ok(());
                }
            }
            // The table is charged too, as it will be after the insert.
            let table = self.table.bytes_after_insert();
            let fits = |extra: usize| {
                self.cap_bytes == 0
                    || self.allocated + self.external + extra as u64 + table <= self.cap_bytes
            };
            let room = self.room_in(class) >= len;
            if room && fits(0) {
                return Ok(());
            }
            if !room && fits(size) {
                return self.new_segment(size, class);
            }
            if passes == 0 || self.segments() == 0 {
                // Last resort, once eviction has done what it can: a
                // segment of what the cap has left (large values aside can
                // leave less than a standard segment).
                let used = self.allocated + self.external + table;
                let left = self.cap_bytes.saturating_sub(used) as usize;
                if !room && left >= len {
                    return self.new_segment(left.min(self.seg_size), class);
                }
                return Err(Error::TooLarge {
                    size: len as u64,
                    cap: self.cap_bytes,
                });
            }
            passes -= 1;
            // Emptied segments give memory back only when more is needed
            // than a recycled segment's room: a bigger segment, or the
            // table's growth.
            let free_empty = size > self.seg_size || !fits(0);
            // With room for the item's record, only the bytes over the cap
            // need freeing, and only values kept aside free bytes without
            // freeing a whole segment: their records are small, so one
            // segment can hold the records of every large value, and a
            // whole pass over it evicted all of them that were not read
            // since (a 64 MB cache of 1 MB values kept 39 of them, not 60).
            // At least a 64th of the cap a pass: a pass reads the whole
            // segment, which can hold tens of thousands of records, so it
            // must not run for every insert (with the bytes over the cap
            // alone, 1.5M values of 2 KB into 1 GiB took minutes).
            let over = (self.allocated + self.external + table).saturating_sub(self.cap_bytes);
            // A few values at a time while the record has room (`aside.rs`).
            if room && self.evict_aside(over) {
                continue;
            }
            // Without room for the record, a first pass frees only the
            // bytes over the cap: it compacts as it goes, and the records
            // `evict_aside` left dead may be room enough. Only if not does
            // the next pass evict every item its segment holds unread.
            let external_quota = if room {
                over.max(self.cap_bytes / EXTERNAL_EVICTION_SHARE)
            } else if !compacted {
                compacted = true;
                over
            } else {
                u64::MAX
            };
            self.recycle_oldest_with(free_empty, u64::MAX, external_quota, class);
        }
    }

    /// Counts the item in `slot`, about to be dropped (`expired`) or
    /// evicted, if no client fetched it.
    /// Segment `id`'s records move or go: `evict_aside` starts it afresh.
    fn forget_aside_cursor(&mut self, id: u32) {
        if self.aside_cursor.is_some_and(|(seg, _)| seg == id) {
            self.aside_cursor = None;
        }
    }

    /// Tells the eviction watch, if one listens, of the item `it` in
    /// `slot`, about to be evicted.
    fn tell_eviction(&self, slot: usize, it: &item::ItemRef<'_>) {
        let Some(w) = self.eviction_watch.as_ref().filter(|w| w.watching()) else {
            return;
        };
        let access = self.table.access(slot).peek();
        w.evicted(&crate::evictions::Evicted {
            key: it.key,
            fetched: access.fetched,
            expires_at: it.meta.expires_at,
            idle_secs: access.idle_secs(),
            size: it.value.len(),
        });
    }

    fn count_unfetched(&mut self, slot: usize, expired: bool) {
        if self.table.access(slot).fetched() {
            return;
        }
        if expired {
            self.expired_unfetched += 1;
        } else {
            self.evicted_unfetched += 1;
        }
    }

    /// The slot of the item with `key` at offset `off` of segment `id`,
    /// if that item is still the key's current one.
    /// (`hash`: the key's.)
    fn slot_at(&self, hash: u64, id: u32, off: usize) -> Option<usize> {
        let here = Loc {
            seg: id,
            off: off as u32,
        };
        self.table.find(hash, |loc| loc == here)
    }

    /// Gives back segment `id` (already taken out of `segs`, with
    /// `capacity` bytes) and its id.
    fn release_segment(&mut self, id: u32, capacity: usize) {
        self.forget_aside_cursor(id);
        self.allocated -= capacity as u64;
        self.free_ids.push(id);
        self.set_expiry(id, 0);
        for open in self.open.iter_mut().filter(|o| **o == Some(id)) {
            *open = None;
        }
        if self.main_open == Some(id) {
            self.main_open = None;
        }
        self.set_main(id, false);
    }

    fn put_with(&mut self, key: &[u8], value: Stored<'_>, meta: Meta, keep: Keep) -> Result<()> {
        if !self.evict && keep == Keep::Touch && self.touch_in_place(key, value.as_slice(), &meta) {
            return Ok(());
        }
        let vlen = value.len();
        let external = vlen >= EXTERNAL_MIN;
        let (index, len, charge) = self.footprint(key, &value, &meta);
        let mut value = Some(value);
        let too_large = |cap| Error::TooLarge { size: charge, cap };
        // Checked before the old item is dropped, so that a write that
        // cannot fit loses nothing: with every other item evicted the
        // table keeps its size (it never shrinks), so this is the test.
        if self.cap_bytes > 0 && charge + self.table.bytes_after_insert() > self.cap_bytes {
            return Err(too_large(self.cap_bytes));
        }
        self.max_cas = self.max_cas.max(meta.cas);
        if external {
            // Taken before the old item is dropped: dropping it may free an
            // index of its own, which must not be mistaken for this one.
            match self.big_free.pop() {
                Some(i) => debug_assert_eq!(i, index),
                None => self.big.push(None),
            }
        }
        // Hashed once for the old item's unlink and the new one's slot.
        let hash = self.hash(key);
        if external {
            // Filled and charged before room is made, so that eviction
            // accounts for it (the index was taken above, so eviction
            // cannot hand it out again).
            self.big[index as usize] = value.take().map(Stored::into_bytes);
            self.external += vlen as u64 + EXTERNAL_OVERHEAD;
        }
        let class = ttl_class(meta.expires_at);
        // Without evictions, room is made while the old item is still
        // there (`no_evictions.rs`); with them, after it is dropped.
        let room = if self.evict {
            None
        } else {
            let adds_record = self.slot_hashed(key, hash).is_none();
            Some(self.make_room_keeping(len, class, adds_record, charge))
        };
        if let Some(Err(e)) = room {
            if external {
                self.retire(NO_SEGMENT, 0, item::Value::External(index, vlen));
            }
            return Err(e);
        }
        let before = self.unlink_hashed(key, hash);
        // A key written again soon after its eviction (`policy.rs`).
        let ghost = before.is_none() && self.evicts() && self.ghost_hit(hash, charge);
        let access = access_after(keep, before, ghost);
        if room.is_none() {
            if let Err(e) = self.make_room(len, class) {
                if external {
                    self.retire(NO_SEGMENT, 0, item::Value::External(index, vlen));
                }
                return Err(e);
            }
        }
        let shape = match &value {
            Some(v) => item::Value::Inline(v.as_slice()),
            None => item::Value::External(index, vlen),
        };
        self.append(key, hash, &shape, &meta, class, &access, charge)
    }

    /// Where `value` would go and what it costs: the index it would take if
    /// kept aside (its encoding's size depends on it; taken by the caller,
    /// before eviction frees others), the item's longest encoding (room is
    /// made for it: its CAS is stored against the base of whichever segment
    /// gets it, `item.rs`) and its charge against the byte cap.
    #[inline]
    fn footprint(&self, key: &[u8], value: &Stored<'_>, meta: &Meta) -> (u32, usize, u64) {
        let vlen = value.len();
        let index = self
            .big_free
            .last()
            .copied()
            .unwrap_or(self.big.len() as u32);
        if vlen >= EXTERNAL_MIN {
            let len = item::max_encoded_len(key, &item::Value::External(index, vlen), meta);
            (index, len, len as u64 + vlen as u64 + EXTERNAL_OVERHEAD)
        } else {
            let len = item::max_encoded_len(key, &item::Value::Inline(value.as_slice()), meta);
            (index, len, len as u64)
        }
    }

    /// Writes the item at the end of the open segment of `class`, room
    /// having been made, and indexes it under `hash`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn append(
        &mut self,
        key: &[u8],
        hash: u64,
        shape: &item::Value<'_>,
        meta: &Meta,
        class: usize,
        access: &AccessWord,
        charge: u64,
    ) -> Result<()> {
        let too_large = |cap| Error::TooLarge { size: charge, cap };
        let Some(id) = self.open_segment(class) else {
            return Err(too_large(self.cap_bytes));
        };
        let base = self.cas_base_of(id);
        let Some(buf) = self.segs[id as usize].as_mut() else {
            return Err(too_large(self.cap_bytes));
        };
        let off = buf.len() as u32;
        item::encode(buf, key, shape, meta, base);
        let written = buf.len() - off as usize;
        self.set_expiry(id, joined(self.expiry_of(id), meta.expires_at));
        self.live_bytes += written as u64;
        let keys = SegmentKeys {
            segs: &self.segs,
            hasher: &self.hasher,
        };
        self.table
            .insert(hash, SlotWord::new(Loc { seg: id, off }, access), keys);
        self.table.publish(&self.probe);
        Ok(())
    }
}

/// The access state of an item written over `before` (the old item's, if
/// any): a store starts afresh (referenced if it replaced an item), an
/// update keeps the old state, and a touch also counts as a fetch. A key
/// written again soon after its eviction (`ghost`) starts referenced.
#[inline]
fn access_after(keep: Keep, before: Option<Access>, ghost: bool) -> AccessWord {
    match (keep, before) {
        (Keep::Store, old) => AccessWord::stored(old.is_some() || ghost),
        (_, None) => AccessWord::stored(ghost),
        (Keep::Update | Keep::Touch, Some(a)) => {
            let w = AccessWord::stored(true);
            w.restore(a);
            if keep == Keep::Touch {
                w.fetch(true);
            }
            w
        }
    }
}

/// A value on its way in: `Bytes` are kept as they are if the value goes
/// aside, a slice is copied.
enum Stored<'a> {
    Bytes(Bytes),
    Slice(&'a [u8]),
}

impl Stored<'_> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    fn as_slice(&self) -> &[u8] {
        match self {
            Stored::Bytes(b) => b,
            Stored::Slice(s) => s,
        }
    }
    fn into_bytes(self) -> Bytes {
        match self {
            Stored::Bytes(b) => b,
            Stored::Slice(s) => Bytes::copy_from_slice(s),
        }
    }
}

/// What a write keeps of the item it replaces.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Nothing: a store makes a new item (not fetched, accessed now), but
    /// replacing one counts as a use for eviction.
    Store,
    /// Its access state (`Store::update`).
    Update,
    /// Its access state, and the touch counts as a fetch (memcached's
    /// do_item_touch bumps).
    Touch,
}

impl Store for SegCache {
    fn probe_hint(&self) -> Option<Arc<ProbeHint>> {
        Some(self.probe.clone())
    }
    fn get(&self, key: &[u8]) -> Result<Option<Record>> {
        Ok(self.slot_of(key).and_then(|s| {
            self.reference(s);
            self.record_at(s)
        }))
    }
    /// The value borrowed where it lies (in its segment, or kept aside):
    /// no `Bytes` made, so no allocation and no copy for a read that only
    /// looks at it (`Db::get_with`).
    fn get_with(&self, key: &[u8], f: &mut dyn FnMut(&[u8], &Meta)) -> Result<bool> {
        let Some(s) = self.slot_of(key) else {
            return Ok(false);
        };
        self.reference(s);
        self.lend(s, f)
    }
    /// `get_with` that records a client's fetch, as `fetch` with `bump`.
    fn fetch_with(&self, key: &[u8], f: &mut dyn FnMut(&[u8], &Meta)) -> Result<bool> {
        let Some(s) = self.slot_of(key) else {
            return Ok(false);
        };
        self.table.access(s).fetch(true);
        self.lend(s, f)
    }
    fn fetch(&self, key: &[u8], bump: bool) -> Result<Option<(Record, Option<Access>)>> {
        Ok(self.slot_of(key).and_then(|s| {
            let before = self.table.access(s).fetch(bump);
            self.record_at(s).map(|r| (r, Some(before)))
        }))
    }
    fn access(&self, key: &[u8]) -> Option<Access> {
        self.slot_of(key).map(|s| self.table.access(s).peek())
    }
    fn get_meta(&self, key: &[u8]) -> Result<Option<Meta>> {
        Ok(self
            .slot_of(key)
            .and_then(|s| self.item_at(self.table.loc(s)))
            .map(|it| it.meta))
    }
    fn put(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        self.put_with(key, Stored::Bytes(value), meta, Keep::Store)
    }
    fn put_slice(&mut self, key: &[u8], value: &[u8], meta: Meta) -> Result<()> {
        self.put_with(key, Stored::Slice(value), meta, Keep::Store)
    }
    fn touch(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        self.put_with(key, Stored::Bytes(value), meta, Keep::Touch)
    }
    fn update(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        self.put_with(key, Stored::Bytes(value), meta, Keep::Update)
    }
    fn set_eviction_watch(&mut self, watch: Arc<dyn crate::evictions::EvictionWatch>) {
        self.eviction_watch = Some(watch);
    }
    fn remove(&mut self, key: &[u8]) -> Result<bool> {
        Ok(self.unlink(key).is_some())
    }
    fn len(&self) -> u64 {
        self.table.len() as u64
    }
    fn clear(&mut self) -> Result<()> {
        self.aside_cursor = None;
        self.table.clear();
        self.table.publish(&self.probe);
        self.segs.clear();
        self.free_ids.clear();
        self.probation.clear();
        self.main.clear();
        self.main_open = None;
        self.in_main.clear();
        self.main_live = 0;
        self.main_share = policy::MAIN_SHARE;
        self.ghosts = ghost::Ghosts::default();
        self.open = [None; TTL_CLASSES];
        self.seg_expiry.clear();
        self.cas_base.clear();
        self.soonest_expiry = NEVER;
        self.allocated = 0;
        self.live_bytes = 0;
        self.big.clear();
        self.big_free.clear();
        self.external = 0;
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
        self.table
            .live()
            .map(|(_, loc)| Key::from(key_at(&self.segs, loc)))
            .collect()
    }
    /// A window of `budget` table groups (8 slots each).
    fn keys_window(&self, from: usize, budget: usize) -> (Vec<Key>, Option<usize>) {
        let (slots, next) = self.table.live_window(from, budget);
        let keys = slots
            .into_iter()
            .map(|(slot, loc)| (slot, key_at(&self.segs, loc)))
            .filter(|&(slot, key)| self.homed_in(slot, key, from, next))
            .map(|(_, key)| Key::from(key))
            .collect();
        (keys, next)
    }
    fn window_of(&self, key: &[u8]) -> Option<usize> {
        let hash = self.hash(key);
        self.slot_hashed(key, hash)
            .map(|s| self.table.home_position(s, hash))
    }
    /// A window of `budget` table groups (8 slots each).
    fn expired_keys(&self, now: u64, from: usize, budget: usize) -> (Vec<Key>, Option<usize>) {
        let (slots, next) = self.table.live_window(from, budget);
        let expired = slots
            .into_iter()
            .filter_map(|(slot, loc)| {
                let it = self.item_at(loc)?;
                (it.meta.is_expired(now) && self.homed_in(slot, it.key, from, next))
                    .then(|| Key::from(it.key))
            })
            .collect();
        (expired, next)
    }
    fn max_cas(&self) -> u64 {
        self.max_cas
    }
    fn stats(&self) -> StoreStats {
        StoreStats {
            // Items in segments, and the values kept aside.
            bytes: self.live_bytes + self.external,
            evictions: self.evictions,
            file_size: 0,
            evicted_unfetched: self.evicted_unfetched,
            expired_unfetched: self.expired_unfetched,
        }
    }
}

#[cfg(test)]
mod tests;
