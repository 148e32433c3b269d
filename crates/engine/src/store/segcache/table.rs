//! The segment cache's index: groups of 8 slots, each slot a control byte
//! (empty, removed, or an 8-bit tag of the key's hash), a 5-byte location
//! (20-bit segment, 20-bit offset) and the item's 4-byte access word: 10
//! bytes a slot, laid out by group so that a probe reads one group's eight
//! control bytes as one word and finds the location beside them. Keys are
//! not kept here: a slot whose tag matches compares the key where its
//! location points.
//!
//! Probing goes group by group from the one the hash picks, and stops at the
//! first group with an empty slot (as in SwissTable): so a group with an
//! empty slot has never been full since the last rebuild, no key was placed
//! past it, and a removal there can empty its slot outright; a removal in a
//! full group leaves a tombstone, dropped when the table grows. The table
//! grows once live slots and tombstones together pass 7/8 of it, to 11/16
//! full, moving its items a few groups per insert (`Table`): between those
//! an item costs 11.4 to 14.5 bytes here (twice that in the inserts a
//! growth takes, while both arrays are held).

use crate::access::AccessWord;

/// Where an item is: its segment and byte offset in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    pub seg: u32,
    pub off: u32,
}

/// Segment ids and offsets must fit 20 bits each: offsets do, as segments
/// are at most 1 MiB and an item bigger than that has one of its own (at
/// offset 0); ids are checked where segments are made (a million segments,
/// a TiB at the largest segment size).
pub const MAX_SEGMENTS: u32 = (1 << 20) - 1;

const GROUP: usize = 8;
const EMPTY: u8 = 0;
const TOMB: u8 = 1;

/// Tags are 2..=255 (0 and 1 mark empty and removed slots).
#[inline]
fn tag_of(hash: u64) -> u8 {
    ((hash >> 56) as u8).max(2)
}

#[inline]
fn pack(loc: Loc) -> [u8; 5] {
    let w = u64::from(loc.off) | (u64::from(loc.seg) << 20);
    let b = w.to_le_bytes();
    [b[0], b[1], b[2], b[3], b[4]]
}

#[inline]
fn unpack(b: [u8; 5]) -> Loc {
    let w = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], 0, 0, 0]);
    Loc {
        off: (w & 0xf_ffff) as u32,
        seg: ((w >> 20) & 0xf_ffff) as u32,
    }
}

/// Eight slots: 80 bytes.
struct Group {
    ctrl: [u8; GROUP],
    locs: [[u8; 5]; GROUP],
    access: [AccessWord; GROUP],
}

impl Group {
    #[cfg(test)]
    fn empty() -> Group {
        Group {
            ctrl: [EMPTY; GROUP],
            locs: [[0; 5]; GROUP],
            access: [const { AccessWord::unused() }; GROUP],
        }
    }

    /// Bit `i` set where the control byte equals `byte` (SWAR: exact, as
    /// each lane is checked on its own).
    #[inline]
    fn matching(&self, byte: u8) -> u32 {
        let w = u64::from_le_bytes(self.ctrl) ^ (0x0101_0101_0101_0101 * u64::from(byte));
        // A lane is zero iff its low 7 bits and its high bit are zero.
        let low7 = (w & 0x7f7f_7f7f_7f7f_7f7f).wrapping_add(0x7f7f_7f7f_7f7f_7f7f);
        let zero = !(low7 | w) & 0x8080_8080_8080_8080;
        let mut bits = 0u32;
        let mut z = zero;
        while z != 0 {
            bits |= 1 << (z.trailing_zeros() / 8);
            z &= z - 1;
        }
        bits
    }
}

/// One array of groups, probed as the module doc says.
#[derive(Default)]
struct Groups(Vec<Group>);

impl Groups {
    /// `n` empty groups, allocated zeroed: the OS hands out zero pages on
    /// first touch, so a table pre-sized for more items than it gets costs
    /// address space, not memory.
    fn of(n: usize) -> Groups {
        if n == 0 {
            return Groups(Vec::new());
        }
        let layout = std::alloc::Layout::array::<Group>(n).expect("table size overflows");
        // SAFETY: an all-zero Group is a valid empty group (EMPTY control
        // bytes, zero locations, `AccessWord::unused()`; checked by a test),
        // the layout is that of `n` groups and nonzero, and the Vec takes
        // ownership of the allocation with the same layout.
        unsafe {
            let ptr = std::alloc::alloc_zeroed(layout).cast::<Group>();
            if ptr.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            Groups(Vec::from_raw_parts(ptr, n, n))
        }
    }

    fn slots(&self) -> usize {
        self.0.len() * GROUP
    }

    /// The first group to probe: the low 48 bits of the hash scaled to the
    /// number of groups (any number, not only powers of two, so the table
    /// can grow by less than double); the tag is the top 8.
    #[inline]
    fn start(&self, hash: u64) -> usize {
        (((hash & 0xffff_ffff_ffff) as u128 * self.0.len() as u128) >> 48) as usize
    }

    #[inline]
    fn find(&self, hash: u64, is_key: &mut impl FnMut(Loc) -> bool) -> Option<usize> {
        let n = self.0.len();
        if n == 0 {
            return None;
        }
        let tag = tag_of(hash);
        let mut g = self.start(hash);
        for _ in 0..n {
            let group = &self.0[g];
            let mut hits = group.matching(tag);
            while hits != 0 {
                let i = hits.trailing_zeros() as usize;
                if is_key(unpack(group.locs[i])) {
                    return Some(g * GROUP + i);
                }
                hits &= hits - 1;
            }
            if group.matching(EMPTY) != 0 {
                return None;
            }
            g = if g + 1 == n { 0 } else { g + 1 };
        }
        None
    }

    /// The first empty or removed slot on `hash`'s probe path (there is
    /// one: an array is never full).
    fn free_slot(&self, hash: u64) -> usize {
        let n = self.0.len();
        let mut g = self.start(hash);
        loop {
            let group = &self.0[g];
            let free = group.matching(EMPTY) | group.matching(TOMB);
            if free != 0 {
                return g * GROUP + free.trailing_zeros() as usize;
            }
            g = if g + 1 == n { 0 } else { g + 1 };
        }
    }

    /// Fills a free slot; whether it was a tombstone.
    fn put(&mut self, slot: usize, ctrl: u8, loc: [u8; 5], access: AccessWord) -> bool {
        let group = &mut self.0[slot / GROUP];
        let i = slot % GROUP;
        let was_tomb = group.ctrl[i] == TOMB;
        group.ctrl[i] = ctrl;
        group.locs[i] = loc;
        group.access[i] = access;
        was_tomb
    }

    /// Empties `slot` (module doc: outright if its group has an empty
    /// slot); whether it left a tombstone.
    fn remove(&mut self, slot: usize) -> bool {
        let group = &mut self.0[slot / GROUP];
        let tomb = group.matching(EMPTY) == 0;
        group.ctrl[slot % GROUP] = if tomb { TOMB } else { EMPTY };
        tomb
    }
}

/// The live slots of one array, their indexes or'ed with `bit`.
fn live_in(arr: &Groups, bit: usize) -> impl Iterator<Item = (usize, Loc)> + '_ {
    arr.0.iter().enumerate().flat_map(move |(g, group)| {
        (0..GROUP)
            .filter(move |&i| group.ctrl[i] > TOMB)
            .map(move |i| ((g * GROUP + i) | bit, unpack(group.locs[i])))
    })
}

/// Slots of the table being drained are handed out with this bit set.
const OLD: usize = 1 << (usize::BITS - 1);

/// Groups moved from the old array to the new one per insert while a
/// growth is under way. The new array starts 11/16 full (counting what is
/// still to move) and must not pass 7/8 before the old one is empty: that
/// leaves 3/16 of its slots, about 0.27 inserts per item, while the old
/// array has an 8-slot group per 7 items; 2 groups an insert finishes in
/// about a quarter of that.
const MIGRATE_PER_INSERT: usize = 2;

/// Arrays smaller than this (320 KiB, about 28k items) grow at once: the
/// rebuild takes well under a millisecond, and holding two arrays while
/// the items move would, under a small byte cap, take a noticeable share
/// of the memory away from the items.
const INCREMENTAL_FROM_GROUPS: usize = 4096;

/// The index. Growing moves the items to a larger array a few groups per
/// insert instead of all at once: rebuilding ten million slots in one go
/// held the shard's lock for seconds (4.5 s at 9.4M items, docs/design.md), and
/// every client of the shard waited. While a growth is under way a lookup
/// probes the new array, then the old one, whose moved slots are
/// tombstones (so probes through them go on as before).
pub struct Table {
    cur: Groups,
    /// Being drained into `cur`; empty when no growth is under way.
    old: Groups,
    /// Groups of `old` below this have been moved.
    moved: usize,
    /// Live items in `cur` and in `old`, and tombstones in `cur`.
    cur_live: usize,
    old_live: usize,
    tombs: usize,
    /// `INCREMENTAL_FROM_GROUPS`, lowered by tests of the incremental path.
    incremental_from: usize,
    /// Groups made at creation (`with_capacity`), made again by `clear`.
    presized: usize,
}

impl Default for Table {
    fn default() -> Table {
        Table {
            cur: Groups::default(),
            old: Groups::default(),
            moved: 0,
            cur_live: 0,
            old_live: 0,
            tombs: 0,
            incremental_from: INCREMENTAL_FROM_GROUPS,
            presized: 0,
        }
    }
}

impl Table {
    /// A table with room for `items` before its first growth.
    pub fn with_capacity(items: usize) -> Table {
        let presized = if items == 0 {
            0
        } else {
            Self::grown_groups(items)
        };
        Table {
            cur: Groups::of(presized),
            presized,
            ..Table::default()
        }
    }

    pub fn len(&self) -> usize {
        self.cur_live + self.old_live
    }

    /// Bytes the slots take: charged against the cache's byte cap.
    pub fn bytes(&self) -> u64 {
        ((self.cur.0.len() + self.old.0.len()) * std::mem::size_of::<Group>()) as u64
    }

    /// Bytes the table will take after one more insert (at most: a growth
    /// that ends during it frees the old array).
    pub fn bytes_after_insert(&self) -> u64 {
        if self.needs_growth() {
            let mut grown = Self::grown_groups(self.len());
            if !self.grows_at_once(grown) {
                grown += self.cur.0.len(); // both held while the items move
            }
            (grown * std::mem::size_of::<Group>()) as u64
        } else {
            self.bytes()
        }
    }

    /// Past 7/8 full (tombstones included): beyond that most groups are
    /// full and probes run long.
    fn needs_growth(&self) -> bool {
        (self.cur_live + self.tombs + 1) * 8 > self.cur.slots() * 7
    }

    /// Whether a growth to `groups` rebuilds the array in one go: when it
    /// does not enlarge it (tombstones from eviction filled it; moving bit
    /// by bit would hold two arrays of the same size, and under a byte cap
    /// that memory comes out of the items), or when it is small.
    fn grows_at_once(&self, groups: usize) -> bool {
        groups <= self.cur.0.len() || self.cur.0.len() < self.incremental_from
    }

    /// 11/16 full once every item has moved.
    fn grown_groups(len: usize) -> usize {
        ((len + 1) * 16 / 11).div_ceil(GROUP).max(2)
    }

    /// The slot of the live item whose location `is_key` accepts, among
    /// those whose tag matches `hash`'s.
    #[inline]
    pub fn find(&self, hash: u64, mut is_key: impl FnMut(Loc) -> bool) -> Option<usize> {
        if let Some(s) = self.cur.find(hash, &mut is_key) {
            return Some(s);
        }
        if self.old_live == 0 {
            return None;
        }
        self.old.find(hash, &mut is_key).map(|s| s | OLD)
    }

    fn group(&self, slot: usize) -> (&Group, usize) {
        let arr = if slot & OLD != 0 {
            &self.old
        } else {
            &self.cur
        };
        let s = slot & !OLD;
        (&arr.0[s / GROUP], s % GROUP)
    }

    pub fn loc(&self, slot: usize) -> Loc {
        let (g, i) = self.group(slot);
        unpack(g.locs[i])
    }

    pub fn access(&self, slot: usize) -> &AccessWord {
        let (g, i) = self.group(slot);
        &g.access[i]
    }

    /// Points `slot` at the item's new place (same key, so same tag).
    pub fn set_loc(&mut self, slot: usize, loc: Loc) {
        let (arr, s) = if slot & OLD != 0 {
            (&mut self.old, slot & !OLD)
        } else {
            (&mut self.cur, slot)
        };
        arr.0[s / GROUP].locs[s % GROUP] = pack(loc);
    }

    pub fn remove_at(&mut self, slot: usize) {
        if slot & OLD != 0 {
            // Tombstones in the old array are never counted: it is dropped
            // whole when drained.
            self.old.remove(slot & !OLD);
            self.old_live -= 1;
        } else {
            if self.cur.remove(slot) {
                self.tombs += 1;
            }
            self.cur_live -= 1;
        }
    }

    /// Adds a key known to be absent; `hash_at` gives the hash of the key
    /// at a location, for moving items when the table grows.
    pub fn insert(
        &mut self,
        hash: u64,
        loc: Loc,
        access: AccessWord,
        hash_at: impl Fn(Loc) -> u64,
    ) -> usize {
        self.migrate(MIGRATE_PER_INSERT, &hash_at);
        if self.needs_growth() {
            // Never with a growth under way unless the bound above failed
            // (many removals refilled as tombstones): finish it first.
            self.migrate(usize::MAX, &hash_at);
            let groups = Self::grown_groups(self.len());
            let at_once = self.grows_at_once(groups);
            self.old = std::mem::replace(&mut self.cur, Groups::of(groups));
            self.moved = 0;
            self.old_live = self.cur_live;
            self.cur_live = 0;
            self.tombs = 0;
            let step = if at_once {
                usize::MAX
            } else {
                MIGRATE_PER_INSERT
            };
            self.migrate(step, &hash_at);
        }
        let slot = self.cur.free_slot(hash);
        if self.cur.put(slot, tag_of(hash), pack(loc), access) {
            self.tombs -= 1;
        }
        self.cur_live += 1;
        slot
    }

    /// Moves up to `groups` groups of the old array into the new one, and
    /// drops the old array once it is drained.
    fn migrate(&mut self, groups: usize, hash_at: &impl Fn(Loc) -> u64) {
        if self.old.0.is_empty() {
            return;
        }
        let end = self.moved.saturating_add(groups).min(self.old.0.len());
        for g in self.moved..end {
            for i in 0..GROUP {
                let ctrl = self.old.0[g].ctrl[i];
                if ctrl <= TOMB {
                    continue;
                }
                let loc = self.old.0[g].locs[i];
                let access = std::mem::replace(&mut self.old.0[g].access[i], AccessWord::unused());
                self.old.0[g].ctrl[i] = TOMB;
                let slot = self.cur.free_slot(hash_at(unpack(loc)));
                if self.cur.put(slot, ctrl, loc, access) {
                    self.tombs -= 1;
                }
                self.old_live -= 1;
                self.cur_live += 1;
            }
        }
        self.moved = end;
        if self.moved == self.old.0.len() {
            self.old = Groups::default();
            self.moved = 0;
        }
    }

    /// Every live slot's index and location.
    pub fn live(&self) -> impl Iterator<Item = (usize, Loc)> + '_ {
        live_in(&self.cur, 0).chain(live_in(&self.old, OLD))
    }

    /// Empties the table back to the room it was made with (a pre-sized
    /// one keeps it: refilling it must not rehash through growths).
    pub fn clear(&mut self) {
        *self = Table {
            cur: Groups::of(self.presized),
            incremental_from: self.incremental_from,
            presized: self.presized,
            ..Table::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_eighty_bytes() {
        assert_eq!(std::mem::size_of::<Group>(), 80);
    }

    #[test]
    fn locations_pack_to_twenty_bits_each() {
        for loc in [
            Loc { seg: 0, off: 0 },
            Loc {
                seg: MAX_SEGMENTS,
                off: (1 << 20) - 1,
            },
            Loc {
                seg: 12345,
                off: 678,
            },
        ] {
            assert_eq!(unpack(pack(loc)), loc);
        }
    }

    #[test]
    fn clearing_keeps_the_room_made_at_creation() {
        let hash = |n: u32| u64::from(n).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let loc = |n: u32| Loc { seg: 0, off: n };
        let hash_at = |l: Loc| hash(l.off);
        for items in [0, 1000] {
            let mut t = Table::with_capacity(items);
            let made = t.cur.0.len();
            for n in 0..5000 {
                t.insert(hash(n), loc(n), AccessWord::stored(false), hash_at);
            }
            assert!(t.cur.0.len() > made);
            t.clear();
            assert_eq!((t.cur.0.len(), t.old.0.len(), t.len()), (made, 0, 0));
        }
    }

    #[test]
    fn a_zeroed_group_is_an_empty_group() {
        let zeroed = Groups::of(3);
        let empty = Group::empty();
        for g in &zeroed.0 {
            assert_eq!(g.ctrl, empty.ctrl);
            assert_eq!(g.locs, empty.locs);
            assert!(g.access.iter().all(|a| a.is_unused()));
        }
        assert_eq!(EMPTY, 0);
    }

    #[test]
    fn matching_finds_exactly_the_equal_lanes() {
        let mut g = Group::empty();
        g.ctrl = [0, 1, 0x80, 0x7f, 0xff, 2, 0x80, 0];
        assert_eq!(g.matching(0), 0b1000_0001);
        assert_eq!(g.matching(1), 0b0000_0010);
        assert_eq!(g.matching(0x80), 0b0100_0100);
        assert_eq!(g.matching(0x7f), 0b0000_1000);
        assert_eq!(g.matching(0xff), 0b0001_0000);
        assert_eq!(g.matching(3), 0);
    }

    #[test]
    fn packs_and_finds_through_growth_and_tombstones() {
        // Both ways of growing: moving a few groups per insert, and at once.
        for incremental_from in [0, INCREMENTAL_FROM_GROUPS] {
            let mut t = Table {
                incremental_from,
                ..Table::default()
            };
            let hash = |n: u32| u64::from(n).wrapping_mul(0xD6E8_FEB8_6659_FD93);
            let loc = |n: u32| Loc {
                seg: n % 1000,
                off: n,
            };
            let hash_at = |l: Loc| hash(l.off);
            for n in 0..5000 {
                t.insert(hash(n), loc(n), AccessWord::stored(false), hash_at);
            }
            for n in (0..5000).step_by(2) {
                let s = t.find(hash(n), |l| l == loc(n)).unwrap();
                t.remove_at(s);
            }
            for n in 5000..9000 {
                t.insert(hash(n), loc(n), AccessWord::stored(false), hash_at);
            }
            assert_eq!(t.len(), 2500 + 4000);
            for n in 0..9000 {
                let found = t.find(hash(n), |l| l == loc(n)).map(|s| t.loc(s));
                let want = (n >= 5000 || n % 2 == 1).then(|| loc(n));
                assert_eq!(found, want, "{n}");
            }
            assert_eq!(t.live().count(), t.len());
        }
    }

    #[test]
    fn churn_at_a_steady_size_stays_findable_and_bounded() {
        // Removals and inserts at a constant live count: tombstones must
        // not pile up past a rebuild, and every live key stays findable.
        let mut t = Table::default();
        let hash = |n: u32| u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let loc = |n: u32| Loc {
            seg: n >> 16,
            off: n & 0xffff,
        };
        let hash_at = |l: Loc| hash((l.seg << 16) | l.off);
        for n in 0..1000 {
            t.insert(hash(n), loc(n), AccessWord::stored(false), hash_at);
        }
        for n in 1000..50_000 {
            let old = n - 1000;
            let s = t.find(hash(old), |l| l == loc(old)).unwrap();
            t.remove_at(s);
            t.insert(hash(n), loc(n), AccessWord::stored(false), hash_at);
        }
        assert_eq!(t.len(), 1000);
        for n in 49_000..50_000 {
            assert_eq!(
                t.find(hash(n), |l| l == loc(n)).map(|s| t.loc(s)),
                Some(loc(n))
            );
        }
        assert!(t.bytes() <= 2 * 1000 * 16 / 11 * 10, "{}", t.bytes());
    }

    #[test]
    fn a_growth_moves_items_a_few_groups_per_insert() {
        let mut t = Table {
            incremental_from: 0,
            ..Table::default()
        };
        let hash = |n: u32| u64::from(n).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let loc = |n: u32| Loc {
            seg: n >> 16,
            off: n & 0xffff,
        };
        let hash_at = |l: Loc| hash((l.seg << 16) | l.off);
        let (mut growths, mut removed_old) = (0, 0);
        let mut gone = std::collections::HashSet::new();
        for n in 0..40_000u32 {
            let was_idle = t.old.0.is_empty();
            let size = t.cur.0.len();
            t.insert(hash(n), loc(n), AccessWord::stored(false), hash_at);
            // A growth ends before the next begins: the new array never
            // passes 7/8 while the old one holds items.
            assert!(was_idle || t.cur.0.len() == size, "{n}");
            if was_idle && !t.old.0.is_empty() {
                growths += 1;
                // Just started: beyond a few groups, almost everything is
                // still in the old array.
                assert!(n < 1000 || t.old_live > 10 * t.cur_live, "{n}");
            }
            // While one is under way, remove an item still in the old array
            // now and then, and check a sample of everything.
            if !t.old.0.is_empty() && n % 7 == 0 {
                let first_old = t.live().find(|(s, _)| s & OLD != 0);
                if let Some((s, l)) = first_old {
                    assert_eq!(t.loc(s), l);
                    t.remove_at(s);
                    gone.insert((l.seg << 16) | l.off);
                    removed_old += 1;
                }
            }
            if n % 101 == 0 {
                for m in (0..=n).step_by(13) {
                    let want = (!gone.contains(&m)).then(|| loc(m));
                    assert_eq!(
                        t.find(hash(m), |l| l == loc(m)).map(|s| t.loc(s)),
                        want,
                        "{n} {m}"
                    );
                }
                assert_eq!(t.live().count(), t.len());
            }
        }
        assert!(growths >= 10 && removed_old > 0, "{growths} {removed_old}");
        assert_eq!(t.len(), 40_000 - gone.len());
    }
}
