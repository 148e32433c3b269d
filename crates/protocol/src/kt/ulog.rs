//! The frames of Kyoto Tycoon's replication command (spex.html, binary
//! protocol "replication", 0xB1) and the update-log message each carries,
//! laid out as `ktserver` writes them, so that a Kyoto Tycoon slave
//! (`ktserver -mhost`, `ktremotemgr slave`) can follow a memstored master.
//!
//! After the request `[0xB1][flags u32][ts u64][sid u16]` the master answers
//! the byte 0xB1, then, for each update log message, `[0xB1][ts u64][size
//! u32][message]`. When the slave has caught up the master sends `[0xB0][ts
//! u64]` (the clock now, so the slave's position advances while nothing is
//! written) and the slave answers the one byte 0xB1. All numbers big-endian.
//!
//! A message (`DBUpdateLogger` and `TimedDB::log_update` in Kyoto Tycoon):
//!
//! | bytes | field |
//! |---|---|
//! | 2 | server id of the update's origin (u16) |
//! | 2 | database index (u16) |
//! | 1 | operation: 0xA1 set, 0xA2 remove, 0xA5 clear |
//! | varnum | set, remove: key size |
//! | varnum | set: value size |
//! | ksiz | set, remove: key |
//! | vsiz | set: value; in a database with expiry (not `ktopts=p`) the value is preceded by its expiration time, 5 bytes (epoch seconds, 2^40 − 1 for none) |
//!
//! A varnum is Kyoto Cabinet's: 7 bits a byte, most significant first, the
//! high bit set on every byte but the last.
//!
//! Timestamps are Kyoto Tycoon's update-log clock, nanoseconds since the
//! epoch (milliseconds × 10^6 plus a sequence number); a slave asks for the
//! messages after the last timestamp it read.

use super::{MAGIC_NOP, MAGIC_REPLICATION, XT_MAX};
use bytes::{BufMut, BytesMut};

/// The request flag asking only for messages of the given server id
/// (`ReplicationClient::WHITESID`); without it those are left out.
pub const FLAG_WHITE_SID: u32 = 0x01;

pub const OP_SET: u8 = 0xA1;
pub const OP_REMOVE: u8 = 0xA2;
pub const OP_CLEAR: u8 = 0xA5;

/// Bytes of the expiration time before a value (`TimedDB::XTWIDTH`).
pub const XT_WIDTH: usize = 5;

/// One update, as a message says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogOp<'a> {
    /// `xt`: the expiration time in epoch seconds (`None`: never) for a
    /// database with expiry; `persistent` databases (`ktopts=p`) carry the
    /// bare value.
    Set {
        key: &'a [u8],
        value: &'a [u8],
        xt: Option<u64>,
        persistent: bool,
    },
    Remove {
        key: &'a [u8],
    },
    Clear,
}

/// Kyoto Cabinet's `writevarnum`.
pub fn put_varnum(out: &mut BytesMut, n: u64) {
    let groups = (1..10).take_while(|i| n >> (7 * i) != 0).count() + 1;
    for i in (1..groups).rev() {
        out.put_u8(((n >> (7 * i)) & 0x7f) as u8 | 0x80);
    }
    out.put_u8((n & 0x7f) as u8);
}

/// The answer accepting a replication request.
pub fn encode_accept(out: &mut BytesMut) {
    out.put_u8(MAGIC_REPLICATION);
}

/// One message frame: `[0xB1][ts][size][sid][dbid][op...]`.
pub fn encode_log(ts: u64, sid: u16, dbid: u16, op: LogOp<'_>, out: &mut BytesMut) {
    out.put_u8(MAGIC_REPLICATION);
    out.put_u64(ts);
    let size_at = out.len();
    out.put_u32(0);
    let start = out.len();
    out.put_u16(sid);
    out.put_u16(dbid);
    match op {
        LogOp::Set {
            key,
            value,
            xt,
            persistent,
        } => {
            out.put_u8(OP_SET);
            let prefix = if persistent { 0 } else { XT_WIDTH };
            put_varnum(out, key.len() as u64);
            put_varnum(out, (prefix + value.len()) as u64);
            out.put_slice(key);
            if !persistent {
                let xt = xt.map_or(XT_MAX as u64, |x| x.min(XT_MAX as u64));
                out.put_slice(&xt.to_be_bytes()[8 - XT_WIDTH..]);
            }
            out.put_slice(value);
        }
        LogOp::Remove { key } => {
            out.put_u8(OP_REMOVE);
            put_varnum(out, key.len() as u64);
            out.put_slice(key);
        }
        LogOp::Clear => out.put_u8(OP_CLEAR),
    }
    let size = (out.len() - start) as u32;
    out[size_at..start].copy_from_slice(&size.to_be_bytes());
}

/// An empty message: it moves the slave's position past messages it was
/// not sent (another server's, or its own), as `ktserver` sends one after
/// every 256 left out.
pub fn encode_skipped(ts: u64, out: &mut BytesMut) {
    out.put_u8(MAGIC_REPLICATION);
    out.put_u64(ts);
    out.put_u32(0);
}

/// "Caught up, the clock is `ts`": the slave answers one 0xB1 byte.
pub fn encode_caught_up(ts: u64, out: &mut BytesMut) {
    out.put_u8(MAGIC_NOP);
    out.put_u64(ts);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varnum(n: u64) -> Vec<u8> {
        let mut b = BytesMut::new();
        put_varnum(&mut b, n);
        b.to_vec()
    }

    #[test]
    fn varnums_are_kyoto_cabinets() {
        assert_eq!(varnum(0), [0x00]);
        assert_eq!(varnum(127), [0x7f]);
        assert_eq!(varnum(128), [0x81, 0x00]);
        assert_eq!(varnum(300), [0x82, 0x2c]);
        assert_eq!(varnum(16_384), [0x81, 0x80, 0x00]);
        assert_eq!(varnum(u64::MAX).len(), 10);
    }

    #[test]
    fn a_set_with_expiry_carries_the_expiration_before_the_value() {
        let mut b = BytesMut::new();
        let op = LogOp::Set {
            key: b"ab",
            value: b"xyz",
            xt: Some(0x01_0203_0405),
            persistent: false,
        };
        encode_log(0x1122, 7, 1, op, &mut b);
        let mut want = vec![0xB1, 0, 0, 0, 0, 0, 0, 0x11, 0x22, 0, 0, 0, 17];
        want.extend([0, 7, 0, 1, 0xA1, 2, 8, b'a', b'b', 1, 2, 3, 4, 5]);
        want.extend(b"xyz");
        assert_eq!(b.to_vec(), want);
    }

    #[test]
    fn a_set_without_expiry_says_xt_max_or_nothing_when_persistent() {
        let mut b = BytesMut::new();
        let set = |persistent| LogOp::Set {
            key: b"k",
            value: b"v",
            xt: None,
            persistent,
        };
        encode_log(1, 2, 0, set(false), &mut b);
        assert_eq!(
            &b[17..],
            [0xA1, 1, 6, b'k', 0xff, 0xff, 0xff, 0xff, 0xff, b'v']
        );
        b.clear();
        encode_log(1, 2, 0, set(true), &mut b);
        assert_eq!(&b[9..13], [0, 0, 0, 9]);
        assert_eq!(&b[17..], [0xA1, 1, 1, b'k', b'v']);
    }

    #[test]
    fn remove_clear_and_the_stream_markers() {
        let mut b = BytesMut::new();
        encode_log(9, 1, 2, LogOp::Remove { key: b"gone" }, &mut b);
        assert_eq!(
            &b[9..],
            [0, 0, 0, 10, 0, 1, 0, 2, 0xA2, 4, b'g', b'o', b'n', b'e']
        );
        b.clear();
        encode_log(9, 1, 0, LogOp::Clear, &mut b);
        assert_eq!(&b[9..], [0, 0, 0, 5, 0, 1, 0, 0, 0xA5]);
        b.clear();
        encode_skipped(3, &mut b);
        encode_caught_up(4, &mut b);
        encode_accept(&mut b);
        let mut want = vec![0xB1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0];
        want.extend([0xB0, 0, 0, 0, 0, 0, 0, 0, 4, 0xB1]);
        assert_eq!(b.to_vec(), want);
    }
}
