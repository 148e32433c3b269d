//! The segment cache's index: the shared tagged table (`tagged_table.rs`)
//! whose slots hold a 5-byte location (20-bit segment, 20-bit offset) and
//! the item's 4-byte access word, 10 bytes a slot with its control byte:
//! between the table's growths an item costs 11.4 to 14.5 bytes here.

use crate::access::AccessWord;
use crate::store::tagged_table::{self, Slots};

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

/// A group's eight locations and access words: 72 bytes (80 with the
/// control bytes).
pub struct CacheSlots {
    locs: [[u8; 5]; GROUP],
    access: [AccessWord; GROUP],
}

// SAFETY: zeroed locations are valid bytes, and a zeroed access word is
// `AccessWord::unused()` (checked by a test).
unsafe impl Slots for CacheSlots {
    type Loc = Loc;
    type Entry = (Loc, AccessWord);

    #[inline]
    fn loc(&self, i: usize) -> Loc {
        unpack(self.locs[i])
    }
    fn set_loc(&mut self, i: usize, loc: Loc) {
        self.locs[i] = pack(loc);
    }
    fn take(&mut self, i: usize) -> (Loc, AccessWord) {
        let access = std::mem::replace(&mut self.access[i], AccessWord::unused());
        (unpack(self.locs[i]), access)
    }
    fn put(&mut self, i: usize, (loc, access): (Loc, AccessWord)) {
        self.locs[i] = pack(loc);
        self.access[i] = access;
    }
    fn entry_loc(entry: &(Loc, AccessWord)) -> Loc {
        entry.0
    }
}

pub type Table = tagged_table::Table<CacheSlots>;

impl tagged_table::Table<CacheSlots> {
    pub fn access(&self, slot: usize) -> &AccessWord {
        let (g, i) = self.group(slot);
        &g.access[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_eighty_bytes() {
        assert_eq!(std::mem::size_of::<tagged_table::Group<CacheSlots>>(), 80);
    }

    #[test]
    fn a_zeroed_slot_holds_an_unused_access_word() {
        // SAFETY: the bytes of an `AtomicU32`, read back as one.
        let zeroed: AccessWord = unsafe { std::mem::zeroed() };
        assert!(zeroed.is_unused());
        assert!(AccessWord::unused().is_unused());
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
    fn finds_items_and_their_access_words_through_growth() {
        let hash = |n: u32| u64::from(n).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let loc = |n: u32| Loc {
            seg: n >> 10,
            off: n & 0x3ff,
        };
        let hash_at = |l: Loc| hash((l.seg << 10) | l.off);
        let mut t = Table::default();
        // The access words carry the clock (seconds): a slow run may cross
        // a tick between storing and checking, so the time is checked to
        // lie between the two (CI run 17 stored at 2 and compared with 3).
        let before = crate::access::clock();
        for n in 0..50_000 {
            t.insert(hash(n), (loc(n), AccessWord::stored(n % 3 == 0)), hash_at);
        }
        for n in 0..50_000 {
            let s = t.find(hash(n), |l| l == loc(n)).unwrap();
            assert_eq!(t.loc(s), loc(n));
            let (got, fresh) = (t.access(s).peek(), AccessWord::stored(n % 3 == 0).peek());
            assert_eq!(got.fetched, fresh.fetched, "{n}");
            assert!(
                (before..=fresh.last_access).contains(&got.last_access),
                "{n}: {got:?} not stored between {before} and now ({fresh:?})"
            );
        }
    }
}
