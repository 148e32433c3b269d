//! The file tree engine's index: the ordered leaves of `leaf_tree` holding
//! each key and only its record's log offset (32 bytes an entry: a 24-byte
//! `SmallKey` and 8). The rest of a location (lengths, codec, flags,
//! expiry, CAS) is read back from the record's header when asked for, as
//! the file hash index does: a get reads the record anyway, so the header
//! costs it nothing more, and a leaf of full `Loc`s (72-byte entries) took
//! 76 MB of RSS for 1M records where Tkrzw's tree took 59.

use super::index::{Index, Key, TreeIndex};
use super::log::Loc;
use super::log_index::{LogIndex, LogReader};
use std::ops::Bound;

pub struct OffsetTree(TreeIndex<u64>);

impl OffsetTree {
    /// The location of the record at `offset`, from its header.
    fn loc(log: &LogReader<'_>, offset: u64) -> Option<Loc> {
        log.entry(offset).map(|(loc, _)| loc)
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
        Self::loc(log, Index::insert(&mut self.0, key, loc.offset)?)
    }

    fn remove(&mut self, log: &LogReader<'_>, key: &[u8]) -> Option<Loc> {
        Self::loc(log, Index::remove(&mut self.0, key)?)
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
        Index::for_each(&self.0, &mut |key, &offset| {
            if let Some(loc) = Self::loc(log, offset) {
                f(key, loc)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::index::SmallKey;

    /// What the module doc promises an entry costs.
    #[test]
    fn an_entry_is_a_key_and_an_offset() {
        assert_eq!(std::mem::size_of::<(SmallKey, u64)>(), 32);
        assert!(std::mem::size_of::<(SmallKey, Loc)>() >= 72);
    }
}
