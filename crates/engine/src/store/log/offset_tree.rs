//! The file tree engine's index: the ordered leaves of `leaf_tree` holding
//! each key and only its record's log offset (32 bytes an entry: a 24-byte
//! `SmallKey` and 8). The rest of a location (lengths, codec, flags,
//! expiry, CAS) is read back from the record's header when asked for, as
//! the file hash index does: a get reads the record anyway, so the header
//! costs it nothing more, and a leaf of full `Loc`s (72-byte entries) took
//! 76 MB of RSS for 1M records where Tkrzw's tree took 59.
//!
//! The offset takes 48 of the value's 64 bits (`MAX_LOG_LEN`); the other 16 keep the
//! record's length when it fits, so that replacing or removing a record
//! accounts its bytes without reading it back: with random keys that read
//! was a miss a write, and a page of the log mapped into memory for nothing.

use super::index::{LogIndex, LogReader, MAX_LOG_LEN};
use super::loc::Loc;
use crate::store::index::{Index, Key};
use crate::store::shapes::TreeIndex;
use std::ops::Bound;

/// Bits of an entry's value that hold the offset.
const OFFSET_BITS: u32 = 48;
const _: () = assert!(MAX_LOG_LEN <= 1 << OFFSET_BITS);

/// An entry's value: the offset, and the record's length above it when it
/// is below 2^16 (0 otherwise: read from the header when needed).
fn pack(loc: &Loc) -> u64 {
    debug_assert!(loc.offset < MAX_LOG_LEN);
    let len = loc.total_len();
    let len = if len < 1 << (64 - OFFSET_BITS) {
        len
    } else {
        0
    };
    loc.offset | len << OFFSET_BITS
}

fn offset_of(value: u64) -> u64 {
    value & ((1 << OFFSET_BITS) - 1)
}

pub(crate) struct OffsetTree(TreeIndex<u64>);

impl OffsetTree {
    /// The location of the record an entry's value points to, from its header.
    fn loc(log: &LogReader<'_>, value: u64) -> Option<Loc> {
        log.entry(offset_of(value)).map(|(loc, _)| loc)
    }

    /// The length of the record an entry's value points to: kept in the
    /// value, or read from the header.
    fn len(log: &LogReader<'_>, value: u64) -> Option<u64> {
        match value >> OFFSET_BITS {
            0 => Self::loc(log, value).map(|loc| loc.total_len()),
            len => Some(len),
        }
    }
}

impl LogIndex for OffsetTree {
    fn with_capacity(items: usize) -> Self {
        OffsetTree(Index::with_capacity(items))
    }

    fn get(&self, log: &LogReader<'_>, key: &[u8]) -> Option<Loc> {
        Self::loc(log, *Index::get(&self.0, key)?)
    }

    fn insert(&mut self, log: &LogReader<'_>, key: &[u8], loc: Loc) -> Option<Loc> {
        Self::loc(log, Index::insert(&mut self.0, key, pack(&loc))?)
    }

    fn remove(&mut self, log: &LogReader<'_>, key: &[u8]) -> Option<Loc> {
        Self::loc(log, Index::remove(&mut self.0, key)?)
    }

    fn insert_len(&mut self, log: &LogReader<'_>, key: &[u8], loc: Loc) -> Option<u64> {
        Self::len(log, Index::insert(&mut self.0, key, pack(&loc))?)
    }

    fn remove_len(&mut self, log: &LogReader<'_>, key: &[u8]) -> Option<u64> {
        Self::len(log, Index::remove(&mut self.0, key)?)
    }

    fn len(&self) -> usize {
        Index::len(&self.0)
    }

    fn clear(&mut self) {
        Index::clear(&mut self.0)
    }

    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<Key> {
        Index::seek(&self.0, from, forward).map(Into::into)
    }

    fn for_each(&self, log: &LogReader<'_>, f: &mut dyn FnMut(&[u8], Loc)) {
        Index::for_each(&self.0, &mut |key, &value| {
            if let Some(loc) = Self::loc(log, value) {
                f(key, loc)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::index::SmallKey;

    /// An empty log: every read of it fails, so what these calls answer
    /// comes from the index alone.
    #[test]
    fn replacing_or_removing_reads_no_old_record() {
        use crate::format::Codec;
        use crate::io::SliceFile;
        use crate::record::Meta;
        let file = SliceFile(Vec::new());
        let log = LogReader {
            file: &file,
            map: None,
            flushed: 0,
            pending: &[],
        };
        let loc = |offset, stored_len| Loc {
            offset,
            key_len: 3,
            stored_len,
            codec: Codec::Raw,
            meta: Meta::default(),
            header_len: 9,
        };
        let mut t = OffsetTree::with_capacity(0);
        assert_eq!(t.insert_len(&log, b"key", loc(100, 10)), None);
        assert_eq!(t.insert_len(&log, b"key", loc(200, 20)), Some(9 + 3 + 10));
        assert_eq!(t.remove_len(&log, b"key"), Some(9 + 3 + 20));
        assert_eq!(t.remove_len(&log, b"key"), None);
        // Too long for the bits: read from the header, here unreadable.
        t.insert_len(&log, b"big", loc(300, 70_000));
        assert_eq!(t.remove_len(&log, b"big"), None);
        // The largest offset keeps all its bits beside a length.
        t.insert_len(&log, b"far", loc(MAX_LOG_LEN - 1, 5));
        let value = *Index::get(&t.0, b"far").unwrap();
        assert_eq!(offset_of(value), MAX_LOG_LEN - 1);
        assert_eq!(value >> OFFSET_BITS, 9 + 3 + 5);
    }

    /// What the module doc promises an entry costs.
    #[test]
    fn an_entry_is_a_key_and_an_offset() {
        assert_eq!(std::mem::size_of::<(SmallKey, u64)>(), 32);
        assert!(std::mem::size_of::<(SmallKey, Loc)>() >= 72);
    }
}
