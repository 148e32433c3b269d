//! `Loc`: where a record lives in a log file, with its metadata. The leaf
//! of the log family: the log store, its indexes and hints all hold it.

use crate::format::{Codec, RecordHeader};
use crate::record::Meta;

/// Where the newest record of a key lives, with its metadata so that checks
/// of expiry and CAS need no disk read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    pub offset: u64,
    pub key_len: u32,
    pub stored_len: u32,
    pub codec: Codec,
    pub meta: Meta,
    /// Bytes of the record's header (`format::head_len` of the fields).
    pub header_len: u8,
}

impl Loc {
    /// The location of the record at `offset` whose header is `h`.
    pub fn of_record(offset: u64, h: &RecordHeader) -> Loc {
        Loc {
            offset,
            key_len: h.key_len,
            stored_len: h.stored_len,
            codec: h.codec,
            meta: h.meta,
            header_len: h.header_len,
        }
    }

    /// Bytes of the record's header.
    #[inline]
    pub fn head_len(&self) -> u64 {
        u64::from(self.header_len)
    }

    pub fn total_len(&self) -> u64 {
        self.head_len() + self.key_len as u64 + self.stored_len as u64
    }
}
