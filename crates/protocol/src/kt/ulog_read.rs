//! The slave's side of Kyoto Tycoon's replication stream (`ulog`'s frames,
//! read instead of written), so that a memstored replica can follow a
//! `ktserver` master as `ktserver -mhost` does (`ReplicationClient::read`
//! and `TimedDB::recover` in Kyoto Tycoon 0.9.56b).
//!
//! The master is a peer, not trusted: [`decode_frame`] refuses a frame
//! whose header declares more than the caller's limit before any of it is
//! read, and [`parse_message`] checks every size against the message, where
//! Kyoto Tycoon trusts them. Both are pure: they look at a buffer and say
//! how much of it a frame took.

use super::ulog::{OP_CLEAR, OP_REMOVE, OP_SET, XT_WIDTH};
use super::{MAGIC_NOP, MAGIC_REPLICATION};
use crate::Parse;
use thiserror::Error;

/// Bytes of a log frame's header: magic, timestamp u64, size u32.
const LOG_HEADER: usize = 1 + 8 + 4;
/// Bytes of a caught-up frame: magic, timestamp u64.
const NOP_LEN: usize = 1 + 8;
/// A message's origin server id and database index.
const MESSAGE_HEADER: usize = 2 + 2;
/// The longest varnum that fits a u64 (Kyoto Cabinet writes at most this).
const VARNUM_MAX: usize = 10;

/// One frame of the master's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// An update-log message logged at `ts` (empty: the master left
    /// messages out up to `ts`, and the position moves on).
    Log { ts: u64, message: &'a [u8] },
    /// The slave has caught up; the master's clock is `ts`. The slave
    /// answers the one byte 0xB1.
    CaughtUp { ts: u64 },
}

/// Why the stream cannot be read on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StreamError {
    #[error("a frame starting with {0:#04x}, neither 0xb1 (a message) nor 0xb0 (caught up)")]
    BadMagic(u8),
    #[error("a message of {size} bytes, over the {limit} this replica reads")]
    TooLarge { size: u64, limit: usize },
}

/// Why a message cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MessageError {
    #[error("a message of {0} bytes, shorter than its server id and database index")]
    Short(usize),
    #[error("a {op} message whose sizes do not add up to its {len} bytes")]
    Sizes { op: &'static str, len: usize },
    #[error("a {0} message with a malformed size")]
    Varnum(&'static str),
}

/// The first frame at the front of `buf`; a message over `max_message`
/// bytes is refused as soon as its header is in.
pub fn decode_frame(buf: &[u8], max_message: usize) -> Result<Parse<Frame<'_>>, StreamError> {
    let Some(&magic) = buf.first() else {
        return Ok(Parse::Incomplete);
    };
    let ts_at = |b: &[u8]| {
        b.get(1..9)
            .and_then(|t| t.try_into().ok())
            .map(u64::from_be_bytes)
    };
    match magic {
        MAGIC_NOP => Ok(match ts_at(buf) {
            Some(ts) => Parse::Complete(Frame::CaughtUp { ts }, NOP_LEN),
            None => Parse::Incomplete,
        }),
        MAGIC_REPLICATION => {
            let (Some(ts), Some(size)) = (ts_at(buf), buf.get(9..LOG_HEADER)) else {
                return Ok(Parse::Incomplete);
            };
            let size = u32::from_be_bytes([size[0], size[1], size[2], size[3]]);
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            if size > max_message {
                let size = size as u64;
                return Err(StreamError::TooLarge {
                    size,
                    limit: max_message,
                });
            }
            let end = LOG_HEADER + size;
            Ok(match buf.get(LOG_HEADER..end) {
                Some(message) => Parse::Complete(Frame::Log { ts, message }, end),
                None => Parse::Incomplete,
            })
        }
        other => Err(StreamError::BadMagic(other)),
    }
}

/// A message's operation. Values keep what the master logged: in a
/// database with expiry (not `ktopts=p`), the 5-byte expiration time and
/// then the value ([`split_xt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    Set {
        key: &'a [u8],
        raw: &'a [u8],
    },
    Remove {
        key: &'a [u8],
    },
    Clear,
    /// An operation Kyoto Tycoon does not replay (it ignores them too).
    Other(u8),
}

/// An update-log message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// The server id of the update's origin.
    pub sid: u16,
    /// The database index on the master (`-s` order here).
    pub dbid: u16,
    pub op: Op<'a>,
}

/// Kyoto Cabinet's `readvarnum`: the number and the bytes it took.
fn read_varnum(b: &[u8]) -> Option<(u64, usize)> {
    let mut n: u64 = 0;
    for (i, &c) in b.iter().take(VARNUM_MAX).enumerate() {
        n = n.checked_mul(128)?.checked_add(u64::from(c & 0x7f))?;
        if c < 0x80 {
            return Some((n, i + 1));
        }
    }
    None
}

/// Reads the message of a non-empty log frame.
pub fn parse_message(m: &[u8]) -> Result<Message<'_>, MessageError> {
    let (Some(head), Some(body)) = (m.get(..MESSAGE_HEADER), m.get(MESSAGE_HEADER..)) else {
        return Err(MessageError::Short(m.len()));
    };
    let sid = u16::from_be_bytes([head[0], head[1]]);
    let dbid = u16::from_be_bytes([head[2], head[3]]);
    let (&opcode, rest) = body.split_first().ok_or(MessageError::Short(m.len()))?;
    let op = match opcode {
        OP_SET => {
            let (ksiz, a) = read_varnum(rest).ok_or(MessageError::Varnum("set"))?;
            let (vsiz, b) = rest
                .get(a..)
                .and_then(read_varnum)
                .ok_or(MessageError::Varnum("set"))?;
            let data = rest.get(a + b..).ok_or(MessageError::Varnum("set"))?;
            let sizes = MessageError::Sizes {
                op: "set",
                len: m.len(),
            };
            let ksiz = usize::try_from(ksiz).map_err(|_| sizes.clone())?;
            if Some(data.len() as u64) != (ksiz as u64).checked_add(vsiz) {
                return Err(sizes);
            }
            let (key, raw) = data.split_at_checked(ksiz).ok_or(sizes)?;
            Op::Set { key, raw }
        }
        OP_REMOVE => {
            let (ksiz, a) = read_varnum(rest).ok_or(MessageError::Varnum("remove"))?;
            let key = rest.get(a..).ok_or(MessageError::Varnum("remove"))?;
            if key.len() as u64 != ksiz {
                let len = m.len();
                return Err(MessageError::Sizes { op: "remove", len });
            }
            Op::Remove { key }
        }
        OP_CLEAR if rest.is_empty() => Op::Clear,
        OP_CLEAR => {
            let len = m.len();
            return Err(MessageError::Sizes { op: "clear", len });
        }
        other => Op::Other(other),
    };
    Ok(Message { sid, dbid, op })
}

/// A set's logged value in a database with expiry: its expiration time
/// (`xt`, epoch seconds, the last second the record is alive; 2^40 − 1 for
/// none) and the value. `None` when shorter than the expiration time.
pub fn split_xt(raw: &[u8]) -> Option<(u64, &[u8])> {
    let (xt, value) = (raw.get(..XT_WIDTH)?, raw.get(XT_WIDTH..)?);
    let xt = xt.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b));
    Some((xt, value))
}

#[cfg(test)]
mod tests {
    use super::super::ulog::{encode_caught_up, encode_log, encode_skipped, LogOp};
    use super::*;
    use bytes::BytesMut;

    fn one(buf: &[u8]) -> (Frame<'_>, usize) {
        decode_frame(buf, 1 << 20)
            .unwrap()
            .complete()
            .expect("a whole frame")
    }

    #[test]
    fn what_the_master_writes_reads_back() {
        let mut b = BytesMut::new();
        let set = LogOp::Set {
            key: b"key",
            value: b"value",
            xt: Some(1_700_000_000),
            persistent: false,
        };
        encode_log(7_000_000_001, 3, 1, set, &mut b);
        let (frame, used) = one(&b);
        assert_eq!(used, b.len());
        let Frame::Log { ts, message } = frame else {
            panic!("{frame:?}")
        };
        assert_eq!(ts, 7_000_000_001);
        let m = parse_message(message).unwrap();
        assert_eq!((m.sid, m.dbid), (3, 1));
        let Op::Set { key, raw } = m.op else {
            panic!("{m:?}")
        };
        assert_eq!(key, b"key");
        assert_eq!(split_xt(raw), Some((1_700_000_000, &b"value"[..])));

        b.clear();
        encode_log(1, 2, 0, LogOp::Remove { key: b"gone" }, &mut b);
        encode_log(2, 2, 0, LogOp::Clear, &mut b);
        encode_skipped(3, &mut b);
        encode_caught_up(4, &mut b);
        let (f, used) = one(&b);
        let Frame::Log { message, .. } = f else {
            panic!()
        };
        assert_eq!(
            parse_message(message).unwrap().op,
            Op::Remove { key: b"gone" }
        );
        let (f, used2) = one(&b[used..]);
        let Frame::Log { message, .. } = f else {
            panic!()
        };
        assert_eq!(parse_message(message).unwrap().op, Op::Clear);
        let at = used + used2;
        let (f, used3) = one(&b[at..]);
        assert_eq!(
            f,
            Frame::Log {
                ts: 3,
                message: &[]
            }
        );
        assert_eq!(one(&b[at + used3..]).0, Frame::CaughtUp { ts: 4 });
    }

    #[test]
    fn a_partial_frame_is_incomplete_at_every_length() {
        let mut b = BytesMut::new();
        let set = LogOp::Set {
            key: b"k",
            value: b"v",
            xt: None,
            persistent: true,
        };
        encode_log(1, 1, 0, set, &mut b);
        for n in 0..b.len() {
            assert_eq!(decode_frame(&b[..n], 64), Ok(Parse::Incomplete), "{n}");
        }
        assert_eq!(decode_frame(&[MAGIC_NOP, 0, 0], 64), Ok(Parse::Incomplete));
    }

    #[test]
    fn bad_magic_and_huge_sizes_are_refused_at_the_header() {
        assert_eq!(
            decode_frame(b"HTTP/1.1", 64),
            Err(StreamError::BadMagic(b'H'))
        );
        let mut huge = vec![MAGIC_REPLICATION, 0, 0, 0, 0, 0, 0, 0, 1];
        huge.extend(u32::MAX.to_be_bytes());
        let e = decode_frame(&huge, 1 << 20).unwrap_err();
        assert_eq!(
            e,
            StreamError::TooLarge {
                size: u32::MAX.into(),
                limit: 1 << 20
            }
        );
    }

    #[test]
    fn messages_whose_sizes_lie_are_refused() {
        assert_eq!(parse_message(&[0, 1, 0]), Err(MessageError::Short(3)));
        assert_eq!(parse_message(&[0, 1, 0, 0]), Err(MessageError::Short(4)));
        // A set claiming a 100-byte key in 3 bytes.
        let e = parse_message(&[0, 1, 0, 0, OP_SET, 100, 1, b'a', b'b', b'c']);
        assert!(
            matches!(e, Err(MessageError::Sizes { op: "set", .. })),
            "{e:?}"
        );
        // Sizes that would overflow.
        let mut m = vec![0, 1, 0, 0, OP_SET];
        m.extend([0xff; 9]);
        m.push(0x7f);
        m.push(0);
        assert!(parse_message(&m).is_err());
        // A varnum that never ends.
        assert_eq!(
            parse_message(&[0, 1, 0, 0, OP_REMOVE, 0x80]),
            Err(MessageError::Varnum("remove"))
        );
        let e = parse_message(&[0, 1, 0, 0, OP_REMOVE, 2, b'a']);
        assert!(matches!(e, Err(MessageError::Sizes { op: "remove", .. })));
        let e = parse_message(&[0, 1, 0, 0, OP_CLEAR, 0]);
        assert!(matches!(e, Err(MessageError::Sizes { op: "clear", .. })));
        // An operation Kyoto Tycoon does not replay is passed on, not refused.
        assert_eq!(
            parse_message(&[0, 1, 0, 0, 0xA3]).unwrap().op,
            Op::Other(0xA3)
        );
        assert_eq!(split_xt(b"1234"), None);
    }
}
