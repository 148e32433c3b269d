//! Framing of Kyoto Tycoon's binary requests. A bulk request declares a
//! record count, then each record its own sizes, so its length is only
//! known by walking the records: the walk is remembered across calls, so a
//! large request arriving in pieces is scanned once, not once per read.
//! Sizes from the wire are checked against [`Limits`] before anything waits
//! for them, and nothing is allocated on the strength of a declared count.

use super::{
    FrameError, KeyRecord, Refusal, Request, SetRecord, FLAG_NO_REPLY, MAGIC_GET_BULK,
    MAGIC_PLAY_SCRIPT, MAGIC_REMOVE_BULK, MAGIC_REPLICATION, MAGIC_SET_BULK, MAX_BULK_RECORDS,
};
use crate::{Frame, Framer};
use bytes::{Buf, Bytes, BytesMut};

/// Bounds on what a request may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest key (and play_script procedure name).
    pub max_key: u64,
    /// Longest value (the server's item limit, `-I`).
    pub max_value: u64,
    /// Longest whole request.
    pub max_frame: u64,
}

/// The replication request: magic, flags u32, ts u64, sid u16.
const REPLICATION_LEN: usize = 1 + 4 + 8 + 2;

/// How a request's records are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// set_bulk: dbidx u16, ksiz u32, vsiz u32, xt i64, key, value.
    Set,
    /// remove_bulk, get_bulk: dbidx u16, ksiz u32, key.
    Key,
    /// play_script: ksiz u32, vsiz u32, key, value.
    Pair,
}

impl Shape {
    fn head_len(self) -> usize {
        match self {
            Shape::Set => 18,
            Shape::Key => 6,
            Shape::Pair => 8,
        }
    }

    /// (ksiz, vsiz) from a record head of `head_len` bytes.
    fn sizes(self, h: &[u8]) -> (u64, u64) {
        match self {
            Shape::Set => (be32(h, 2), be32(h, 6)),
            Shape::Key => (be32(h, 2), 0),
            Shape::Pair => (be32(h, 0), be32(h, 4)),
        }
    }
}

/// A big-endian u32 at `at`; callers pass slices known to be long enough,
/// and a short one reads as 0 rather than panicking.
fn be32(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 4)
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .map_or(0, |a| u64::from(u32::from_be_bytes(a)))
}

/// Where the walk over the front request stopped.
#[derive(Debug, Clone, Copy, Default)]
struct Walk {
    /// Offset of the next record not yet known to be complete.
    pos: usize,
    /// Records known to be complete.
    done: u64,
}

/// Frames Kyoto Tycoon binary requests.
#[derive(Debug, Clone)]
pub struct KtFramer {
    limits: Limits,
    walk: Option<Walk>,
}

impl KtFramer {
    pub fn new(limits: Limits) -> KtFramer {
        KtFramer { limits, walk: None }
    }

    fn refuse(&mut self, error: FrameError, no_reply: bool) -> Frame<Request, Refusal> {
        self.walk = None;
        Frame::Close(Some(Refusal { error, no_reply }))
    }

    /// Checks the declared sizes of what starts at `pos` with a head of
    /// `head` bytes; its end offset if they are allowed. A play_script
    /// parameter's name is held to the value limit, not the key limit.
    fn check(
        &self,
        shape: Shape,
        pos: usize,
        head: usize,
        sizes: (u64, u64),
    ) -> Result<usize, FrameError> {
        let (ksiz, vsiz) = sizes;
        let l = &self.limits;
        let max_key = if shape == Shape::Pair {
            l.max_key.max(l.max_value)
        } else {
            l.max_key
        };
        if ksiz > max_key {
            return Err(FrameError::KeyTooLarge {
                size: ksiz,
                max: max_key,
            });
        }
        if vsiz > l.max_value {
            return Err(FrameError::ValueTooLarge {
                size: vsiz,
                max: l.max_value,
            });
        }
        let end = (pos as u64) + (head as u64) + ksiz + vsiz;
        if end > l.max_frame {
            return Err(FrameError::FrameTooLarge {
                size: end,
                max: l.max_frame,
            });
        }
        usize::try_from(end).map_err(|_| FrameError::FrameTooLarge {
            size: end,
            max: l.max_frame,
        })
    }
}

impl Framer for KtFramer {
    type Request = Request;
    type Refusal = Refusal;

    fn next(&mut self, buf: &mut BytesMut) -> Frame<Request, Refusal> {
        let Some(&magic) = buf.first() else {
            return Frame::Incomplete { need: 1 };
        };
        let (shape, head_len) = match magic {
            MAGIC_SET_BULK => (Shape::Set, 9),
            MAGIC_REMOVE_BULK | MAGIC_GET_BULK => (Shape::Key, 9),
            MAGIC_PLAY_SCRIPT => (Shape::Pair, 13),
            MAGIC_REPLICATION => return replication(buf),
            // ktserver ends the session on an unknown magic, answering nothing.
            _ => return Frame::Close(None),
        };
        if buf.len() < head_len {
            return Frame::Incomplete { need: head_len };
        }
        let flags = be32(buf, 1);
        // play_script: magic, flags, nsiz, rnum; the others: magic, flags, rnum.
        let rnum = be32(buf, head_len - 4);
        let no_reply = flags & u64::from(FLAG_NO_REPLY) != 0 && magic != MAGIC_GET_BULK;
        if rnum > MAX_BULK_RECORDS {
            let error = FrameError::TooManyRecords {
                count: rnum,
                max: MAX_BULK_RECORDS,
            };
            return self.refuse(error, no_reply);
        }
        let mut walk = match self.walk.take() {
            Some(w) => w,
            None if magic == MAGIC_PLAY_SCRIPT => {
                // The procedure name sits between the head and the records.
                let nsiz = be32(buf, 5);
                match self.check(Shape::Key, 0, head_len, (nsiz, 0)) {
                    Ok(pos) => Walk { pos, done: 0 },
                    Err(e) => return self.refuse(e, no_reply),
                }
            }
            None => Walk {
                pos: head_len,
                done: 0,
            },
        };
        while walk.done < rnum {
            let rec_head = walk.pos + shape.head_len();
            let Some(h) = buf.get(walk.pos..rec_head) else {
                self.walk = Some(walk);
                return Frame::Incomplete { need: rec_head };
            };
            let sizes = shape.sizes(h);
            let end = match self.check(shape, walk.pos, shape.head_len(), sizes) {
                Ok(end) => end,
                Err(e) => return self.refuse(e, no_reply),
            };
            if buf.len() < end {
                self.walk = Some(walk);
                return Frame::Incomplete { need: end };
            }
            walk = Walk {
                pos: end,
                done: walk.done + 1,
            };
        }
        if buf.len() < walk.pos {
            // No records, and the play_script name not all here yet.
            self.walk = Some(walk);
            return Frame::Incomplete { need: walk.pos };
        }
        let frame = buf.split_to(walk.pos).freeze();
        Frame::Request(decode(magic, shape, head_len, no_reply, rnum, &frame))
    }
}

fn replication(buf: &mut BytesMut) -> Frame<Request, Refusal> {
    if buf.len() < REPLICATION_LEN {
        return Frame::Incomplete {
            need: REPLICATION_LEN,
        };
    }
    buf.advance(1);
    let flags = buf.get_u32();
    let ts = buf.get_u64();
    let sid = buf.get_u16();
    Frame::Request(Request::Replication { flags, ts, sid })
}

/// Builds the request from a frame the walk found complete and within the
/// limits (so every slice below is in bounds; `cut` still never panics).
fn decode(
    magic: u8,
    shape: Shape,
    head_len: usize,
    no_reply: bool,
    rnum: u64,
    f: &Bytes,
) -> Request {
    let cut = |from: usize, len: u64| {
        let to = from.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
        f.slice(from.min(f.len())..to.min(f.len()))
    };
    // Every record takes at least its head, so the frame bounds the count.
    let n = usize::try_from(rnum)
        .unwrap_or(usize::MAX)
        .min(f.len() / shape.head_len());
    let mut pos = head_len;
    let name = if magic == MAGIC_PLAY_SCRIPT {
        let nsiz = be32(f, 5);
        let name = cut(pos, nsiz);
        pos += name.len();
        name
    } else {
        Bytes::new()
    };
    // Sized once for the shape in use (growing by doubling cost seven
    // reallocations and copies for a bulk of 100).
    let room = |s: Shape| if s == shape { n } else { 0 };
    let mut sets = Vec::with_capacity(room(Shape::Set));
    let mut keys = Vec::with_capacity(room(Shape::Key));
    let mut pairs = Vec::with_capacity(room(Shape::Pair));
    for _ in 0..n {
        let h = f.get(pos..pos + shape.head_len()).unwrap_or_default();
        let (ksiz, vsiz) = shape.sizes(h);
        let dbidx = h
            .get(..2)
            .and_then(|d| <[u8; 2]>::try_from(d).ok())
            .map_or(0, u16::from_be_bytes);
        pos += shape.head_len();
        let key = cut(pos, ksiz);
        pos += key.len();
        let value = cut(pos, vsiz);
        pos += value.len();
        match shape {
            Shape::Set => {
                let xt = h
                    .get(10..18)
                    .and_then(|s| <[u8; 8]>::try_from(s).ok())
                    .map_or(0, i64::from_be_bytes);
                sets.push(SetRecord {
                    dbidx,
                    key,
                    value,
                    xt,
                });
            }
            Shape::Key => keys.push(KeyRecord { dbidx, key }),
            Shape::Pair => pairs.push((key, value)),
        }
    }
    match magic {
        MAGIC_SET_BULK => Request::SetBulk {
            no_reply,
            records: sets,
        },
        MAGIC_REMOVE_BULK => Request::RemoveBulk { no_reply, keys },
        MAGIC_GET_BULK => Request::GetBulk { keys },
        _ => Request::PlayScript {
            no_reply,
            name,
            params: pairs,
        },
    }
}
