//! The segment cache's index: open addressing with linear probing over
//! 12-byte slots, each a packed location (segment, offset, 16-bit tag of
//! the key's hash) and the item's access word. Keys are not kept here: a
//! probe whose tag matches compares the key where the location points.
//!
//! Removal leaves a tombstone (moving later slots back would need their
//! keys' hashes, read from the segments); tombstones are dropped when the
//! table is rebuilt, which happens once live slots and tombstones together
//! pass 13/16 of it.

use crate::access::AccessWord;

/// Where an item is: its segment and byte offset in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    pub seg: u32,
    pub off: u32,
}

/// Segment ids and offsets must fit 24 bits each: offsets do, as segments
/// are at most 1 MiB and an item bigger than that has one of its own (at
/// offset 0); ids are checked where segments are made.
pub const MAX_SEGMENTS: u32 = (1 << 24) - 2;

const EMPTY: u64 = u64::MAX;
const TOMB: u64 = u64::MAX - 1;

fn pack(loc: Loc, tag: u16) -> u64 {
    u64::from(loc.off) | (u64::from(loc.seg) << 24) | (u64::from(tag) << 48)
}

fn unpack(w: u64) -> Loc {
    Loc {
        off: (w & 0xff_ffff) as u32,
        seg: ((w >> 24) & 0xff_ffff) as u32,
    }
}

fn tag_of(hash: u64) -> u16 {
    (hash >> 48) as u16
}

/// Two `u32`s rather than a `u64`, so that a slot is 12 bytes, not 16.
struct Slot {
    lo: u32,
    hi: u32,
    access: AccessWord,
}

impl Slot {
    fn empty() -> Slot {
        Slot {
            lo: EMPTY as u32,
            hi: (EMPTY >> 32) as u32,
            access: AccessWord::stored(false),
        }
    }
    #[inline]
    fn word(&self) -> u64 {
        u64::from(self.lo) | (u64::from(self.hi) << 32)
    }
    #[inline]
    fn set_word(&mut self, w: u64) {
        self.lo = w as u32;
        self.hi = (w >> 32) as u32;
    }
}

#[derive(Default)]
pub struct Table {
    slots: Vec<Slot>,
    len: usize,
    tombs: usize,
}

impl Table {
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes the slots take: charged against the cache's byte cap.
    pub fn bytes(&self) -> u64 {
        (self.slots.len() * std::mem::size_of::<Slot>()) as u64
    }

    /// Bytes the table will take after one more insert.
    pub fn bytes_after_insert(&self) -> u64 {
        if self.needs_rebuild() {
            (Self::rebuilt_size(self.len) * std::mem::size_of::<Slot>()) as u64
        } else {
            self.bytes()
        }
    }

    /// The first slot to probe: the low 48 bits of the hash scaled to the
    /// table's size (any size, not only powers of two, so the table can
    /// grow by less than double); the tag is the top 16.
    #[inline]
    fn start(&self, hash: u64) -> usize {
        (((hash & 0xffff_ffff_ffff) as u128 * self.slots.len() as u128) >> 48) as usize
    }

    /// Past 13/16 full (tombstones included): linear probing's misses grow
    /// fast beyond that.
    fn needs_rebuild(&self) -> bool {
        (self.len + self.tombs + 1) * 16 > self.slots.len() * 13
    }

    /// 10/16 full after a rebuild, so the load stays between 5/8 and 13/16
    /// (16.5 bytes a live item on average).
    fn rebuilt_size(len: usize) -> usize {
        ((len + 1) * 16 / 10).max(16)
    }

    /// The slot of the live item whose location `is_key` accepts, among
    /// those whose tag matches `hash`'s.
    #[inline]
    pub fn find(&self, hash: u64, mut is_key: impl FnMut(Loc) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let n = self.slots.len();
        let tag = tag_of(hash);
        let mut i = self.start(hash);
        loop {
            let w = self.slots[i].word();
            if w == EMPTY {
                return None;
            }
            if w != TOMB && (w >> 48) as u16 == tag && is_key(unpack(w)) {
                return Some(i);
            }
            i = if i + 1 == n { 0 } else { i + 1 };
        }
    }

    pub fn loc(&self, slot: usize) -> Loc {
        unpack(self.slots[slot].word())
    }

    pub fn access(&self, slot: usize) -> &AccessWord {
        &self.slots[slot].access
    }

    /// Points `slot` at the item's new place (same key, so same tag).
    pub fn set_loc(&mut self, slot: usize, loc: Loc) {
        let tag = (self.slots[slot].word() >> 48) as u16;
        self.slots[slot].set_word(pack(loc, tag));
    }

    pub fn remove_at(&mut self, slot: usize) {
        self.slots[slot].set_word(TOMB);
        self.len -= 1;
        self.tombs += 1;
    }

    /// Adds a key known to be absent; `hash_at` gives the hash of the key
    /// at a location, for rebuilding the table when it must grow.
    pub fn insert(
        &mut self,
        hash: u64,
        loc: Loc,
        access: AccessWord,
        hash_at: impl Fn(Loc) -> u64,
    ) -> usize {
        if self.needs_rebuild() {
            self.rebuild(Self::rebuilt_size(self.len), &hash_at);
        }
        let n = self.slots.len();
        let mut i = self.start(hash);
        loop {
            let w = self.slots[i].word();
            if w == EMPTY || w == TOMB {
                if w == TOMB {
                    self.tombs -= 1;
                }
                self.slots[i].set_word(pack(loc, tag_of(hash)));
                self.slots[i].access = access;
                self.len += 1;
                return i;
            }
            i = if i + 1 == n { 0 } else { i + 1 };
        }
    }

    fn rebuild(&mut self, size: usize, hash_at: &impl Fn(Loc) -> u64) {
        let old = std::mem::replace(&mut self.slots, (0..size).map(|_| Slot::empty()).collect());
        for s in old {
            let w = s.word();
            if w == EMPTY || w == TOMB {
                continue;
            }
            let mut i = self.start(hash_at(unpack(w)));
            while self.slots[i].word() != EMPTY {
                i = if i + 1 == size { 0 } else { i + 1 };
            }
            self.slots[i] = s;
        }
        self.tombs = 0;
    }

    /// Every live slot's index and location.
    pub fn live(&self) -> impl Iterator<Item = (usize, Loc)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.word() < TOMB)
            .map(|(i, s)| (i, unpack(s.word())))
    }

    pub fn clear(&mut self) {
        *self = Table::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_twelve_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 12);
    }

    #[test]
    fn packs_and_finds_through_growth_and_tombstones() {
        let mut t = Table::default();
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
