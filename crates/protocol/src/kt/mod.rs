//! Kyoto Tycoon's binary protocol (`kyototycoon/doc/spex.html`, "Binary
//! Protocol"): set_bulk, remove_bulk, get_bulk, play_script and replication,
//! each a magic byte in 0xB0–0xBF, numbers big-endian. An error answers the
//! one byte [`MAGIC_ERROR`] with nothing after it.
//!
//! [`KtFramer`] frames requests; the encoders here write the replies' fixed
//! parts (values are left to the caller, to be sent without a copy). Nothing
//! here knows about storage: what "a hit" is, or what `dbidx` selects, is the
//! server's business.

mod framer;
#[cfg(test)]
mod tests;
pub mod tsv;
pub mod ulog;
pub mod ulog_read;

pub use framer::{KtFramer, Limits};

use bytes::{BufMut, Bytes, BytesMut};
use thiserror::Error;

/// Sent by a replication master when the slave has caught up (followed by a
/// timestamp); never a request.
pub const MAGIC_NOP: u8 = 0xB0;
pub const MAGIC_REPLICATION: u8 = 0xB1;
pub const MAGIC_PLAY_SCRIPT: u8 = 0xB4;
pub const MAGIC_SET_BULK: u8 = 0xB8;
pub const MAGIC_REMOVE_BULK: u8 = 0xB9;
pub const MAGIC_GET_BULK: u8 = 0xBA;
/// The whole reply to a request that failed.
pub const MAGIC_ERROR: u8 = 0xBF;

/// `flags` bit: send no reply (set_bulk, remove_bulk, play_script; get_bulk
/// always answers, as `ktserver` does).
pub const FLAG_NO_REPLY: u32 = 0x01;

/// Kyoto Tycoon's largest expiration time (`TimedDB::XTMAX`, 2^40 − 1):
/// what a record without an expiry reports, and where larger ones are clipped.
pub const XT_MAX: i64 = (1 << 40) - 1;

/// One record of a set_bulk request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRecord {
    pub dbidx: u16,
    pub key: Bytes,
    pub value: Bytes,
    /// Kyoto Tycoon's `xt`: seconds from now, or, when negative, minus an
    /// absolute epoch time (see [`expires_at`]).
    pub xt: i64,
}

/// One key of a remove_bulk or get_bulk request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub dbidx: u16,
    pub key: Bytes,
}

/// A framed request. Keys and values are slices of the request's frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    SetBulk {
        no_reply: bool,
        records: Vec<SetRecord>,
    },
    RemoveBulk {
        no_reply: bool,
        keys: Vec<KeyRecord>,
    },
    GetBulk {
        keys: Vec<KeyRecord>,
    },
    PlayScript {
        no_reply: bool,
        name: Bytes,
        params: Vec<(Bytes, Bytes)>,
    },
    Replication {
        flags: u32,
        ts: u64,
        sid: u16,
    },
}

/// Why a request cannot be framed; the connection ends after the answer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    #[error("a key of {size} bytes is over the limit of {max}")]
    KeyTooLarge { size: u64, max: u64 },
    #[error("a value of {size} bytes is over the limit of {max}")]
    ValueTooLarge { size: u64, max: u64 },
    #[error("a request of {size} bytes or more is over the frame limit of {max}")]
    FrameTooLarge { size: u64, max: u64 },
    #[error("a request of {count} records is over the limit of {max}")]
    TooManyRecords { count: u64, max: u64 },
}

/// The most records one bulk request may name. Why: a request is held
/// decoded, one `KeyRecord` or `SetRecord` (40-80 bytes) a record, where
/// the frame spends as little as 7 bytes on one: a 64 MiB frame of 9
/// million one-byte keys took over 1 GB. `ktserver` has no such limit;
/// its own clients send bulks of thousands.
pub const MAX_BULK_RECORDS: u64 = 1 << 18;

/// A request the framer gave up on: answer [`MAGIC_ERROR`] unless the
/// request asked for no reply, then close (the rest of the request was
/// never read, as in `ktserver`, which also hangs up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub error: FrameError,
    pub no_reply: bool,
}

/// Kyoto Tycoon's `xt` to an absolute expiry in the engine's terms (0 =
/// never; a record is gone once the clock reaches it), given the current
/// epoch second. As `TimedDB::modify_exptime`: a negative `xt` is minus an
/// absolute time, any other is seconds from now (so 0 is "until this second
/// ends"), and anything at or past [`XT_MAX`] never expires. Kyoto Tycoon
/// keeps a record while the clock is at or before its `xt`, hence the `+ 1`.
pub fn expires_at(xt: i64, now: u64) -> u64 {
    let at = if xt < 0 {
        xt.checked_neg().unwrap_or(i64::MAX)
    } else {
        i64::try_from(now).unwrap_or(i64::MAX).saturating_add(xt)
    };
    if at >= XT_MAX {
        0
    } else {
        // 0 <= at < XT_MAX here.
        at.unsigned_abs() + 1
    }
}

/// An engine expiry back to the `xt` get_bulk reports: the absolute time,
/// [`XT_MAX`] for a record that never expires.
pub fn xt_of(expires_at: u64) -> i64 {
    if expires_at == 0 {
        return XT_MAX;
    }
    i64::try_from(expires_at - 1).map_or(XT_MAX, |t| t.min(XT_MAX))
}

/// The whole reply to a failed request.
pub fn encode_error(out: &mut BytesMut) {
    out.put_u8(MAGIC_ERROR);
}

/// set_bulk's and remove_bulk's reply: the magic and how many records were
/// stored or removed.
pub fn encode_hits(magic: u8, hits: u32, out: &mut BytesMut) {
    out.put_u8(magic);
    out.put_u32(hits);
}

/// The head of get_bulk's reply; each record follows as
/// [`encode_record_head`], its key, then its value.
pub fn encode_get_head(hits: u32, out: &mut BytesMut) {
    encode_hits(MAGIC_GET_BULK, hits, out);
}

/// A get_bulk record's fixed part: dbidx, ksiz, vsiz, xt. Sizes are the
/// caller's lengths, which the framer bounded (keys) or the engine did
/// (values under 4 GiB); a larger one is clipped, never wrapped.
///
/// Written as one 18-byte append (four `put_*` calls each checked the
/// buffer's room).
pub fn encode_record_head(dbidx: u16, ksiz: usize, vsiz: usize, xt: i64, out: &mut impl BufMut) {
    let mut head = [0u8; 18];
    head[..2].copy_from_slice(&dbidx.to_be_bytes());
    head[2..6].copy_from_slice(&u32::try_from(ksiz).unwrap_or(u32::MAX).to_be_bytes());
    head[6..10].copy_from_slice(&u32::try_from(vsiz).unwrap_or(u32::MAX).to_be_bytes());
    head[10..].copy_from_slice(&xt.to_be_bytes());
    out.put_slice(&head);
}
