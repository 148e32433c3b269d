//! A bounds-checking walk over MessagePack bytes that finds where one object
//! ends without decoding (or allocating for) anything.
//!
//! rmpv's decoder reserves memory for the lengths a header declares, so a
//! peer claiming a 4 GiB bin would make it allocate 4 GiB. The scanner runs
//! first: it reports `Incomplete` until every byte of the frame is in the
//! buffer, and refuses frames that are too large, too deep or made of too many
//! objects, so the decoder only ever sees a complete, bounded frame whose
//! declared lengths are all backed by bytes that are really there.

use super::{FrameError, Limits};
use crate::Parse;

/// Deepest nesting the scanner can track (its stack is a fixed array, so
/// scanning never allocates). `Limits::max_depth` is capped at this.
pub const MAX_DEPTH_CAP: usize = 64;

/// One object header: bytes of the header itself, bytes of payload after
/// it, and how many child objects follow (arrays: n, maps: 2n).
struct Head {
    header: usize,
    payload: u64,
    children: u64,
}

fn be(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Reads the header at the start of `buf`: `Ok(None)` when the header
/// itself is cut short.
fn head(buf: &[u8]) -> Result<Option<Head>, FrameError> {
    let Some(&m) = buf.first() else {
        return Ok(None);
    };
    // (header length, how many bytes of it are a big-endian length field,
    // what the length counts)
    enum Len {
        Payload,
        Array,
        Map,
    }
    let fixed = |header: usize, payload: u64| {
        Ok(Some(Head {
            header,
            payload,
            children: 0,
        }))
    };
    let (header, len_bytes, what) = match m {
        0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => return fixed(1, 0),
        0x80..=0x8f => {
            return Ok(Some(Head {
                header: 1,
                payload: 0,
                children: 2 * u64::from(m & 0x0f),
            }))
        }
        0x90..=0x9f => {
            return Ok(Some(Head {
                header: 1,
                payload: 0,
                children: u64::from(m & 0x0f),
            }))
        }
        0xa0..=0xbf => return fixed(1, u64::from(m & 0x1f)),
        0xc1 => return Err(FrameError::Invalid("reserved marker byte 0xc1")),
        // bin 8/16/32, str 8/16/32
        0xc4 | 0xd9 => (2, 1, Len::Payload),
        0xc5 | 0xda => (3, 2, Len::Payload),
        0xc6 | 0xdb => (5, 4, Len::Payload),
        // ext 8/16/32: length, then a type byte
        0xc7 => (3, 1, Len::Payload),
        0xc8 => (4, 2, Len::Payload),
        0xc9 => (6, 4, Len::Payload),
        0xca => return fixed(1, 4),
        0xcb => return fixed(1, 8),
        0xcc | 0xd0 => return fixed(1, 1),
        0xcd | 0xd1 => return fixed(1, 2),
        0xce | 0xd2 => return fixed(1, 4),
        0xcf | 0xd3 => return fixed(1, 8),
        // fixext 1/2/4/8/16: a type byte, then the data
        0xd4 => return fixed(2, 1),
        0xd5 => return fixed(2, 2),
        0xd6 => return fixed(2, 4),
        0xd7 => return fixed(2, 8),
        0xd8 => return fixed(2, 16),
        0xdc => (3, 2, Len::Array),
        0xdd => (5, 4, Len::Array),
        0xde => (3, 2, Len::Map),
        0xdf => (5, 4, Len::Map),
    };
    if buf.len() < header {
        return Ok(None);
    }
    let n = be(&buf[1..1 + len_bytes]);
    Ok(Some(match what {
        Len::Payload => Head {
            header,
            payload: n,
            children: 0,
        },
        Len::Array => Head {
            header,
            payload: 0,
            children: n,
        },
        Len::Map => Head {
            header,
            payload: 0,
            children: 2 * n,
        },
    }))
}

/// Finds the end of one MessagePack object at the front of a buffer.
///
/// Stateless use: `FrameScanner::default().scan(buf, limits)`. A connection
/// may instead keep one scanner per connection and call `scan` again with the
/// same buffer grown by newly read bytes: it resumes at the last object
/// boundary it reached, so a large frame that arrives in many reads is walked
/// once, not once per read. After `Complete` or an error it starts afresh.
/// If the caller changes the front of the buffer between calls (drops bytes),
/// it must call [`FrameScanner::reset`].
#[derive(Debug, Clone)]
pub struct FrameScanner {
    /// Offset of the next object header to read.
    pos: usize,
    /// Objects read so far in this frame.
    objects: u64,
    /// Open containers: how many children each still expects.
    stack: [u64; MAX_DEPTH_CAP],
    depth: usize,
}

impl Default for FrameScanner {
    fn default() -> Self {
        FrameScanner {
            pos: 0,
            objects: 0,
            stack: [0; MAX_DEPTH_CAP],
            depth: 0,
        }
    }
}

impl FrameScanner {
    /// Forgets any progress: the next `scan` starts at offset 0.
    pub fn reset(&mut self) {
        self.pos = 0;
        self.objects = 0;
        self.depth = 0;
    }

    /// Walks the object at the front of `buf`. `Complete((), len)`: the first
    /// `len` bytes are one whole object. `Incomplete`: read more.
    pub fn scan(&mut self, buf: &[u8], limits: &Limits) -> Result<Parse<()>, FrameError> {
        let r = self.walk(buf, limits);
        if !matches!(r, Ok(Parse::Incomplete)) {
            self.reset();
        }
        r
    }

    fn walk(&mut self, buf: &[u8], limits: &Limits) -> Result<Parse<()>, FrameError> {
        let max_depth = limits.max_depth.min(MAX_DEPTH_CAP);
        let max_frame = limits.max_frame as u64;
        loop {
            let Some(rest) = buf.get(self.pos..) else {
                // The caller shrank the buffer under us; start again.
                self.reset();
                return Ok(Parse::Incomplete);
            };
            let Some(h) = head(rest)? else {
                return Ok(Parse::Incomplete);
            };
            let objects = self.objects + 1;
            if objects > limits.max_objects {
                return Err(FrameError::TooManyObjects {
                    limit: limits.max_objects,
                });
            }
            let end = self.pos as u64 + h.header as u64 + h.payload;
            // Every child takes at least one byte, so a declared child count
            // alone can show the frame is too large or too busy.
            if end.saturating_add(h.children) > max_frame {
                return Err(FrameError::TooLarge {
                    limit: limits.max_frame,
                });
            }
            if objects.saturating_add(h.children) > limits.max_objects {
                return Err(FrameError::TooManyObjects {
                    limit: limits.max_objects,
                });
            }
            if end > buf.len() as u64 {
                return Ok(Parse::Incomplete);
            }
            // Commit: this object is wholly present.
            self.pos = end as usize;
            self.objects = objects;
            if h.children > 0 {
                if self.depth >= max_depth {
                    return Err(FrameError::TooDeep { limit: max_depth });
                }
                self.stack[self.depth] = h.children;
                self.depth += 1;
                continue;
            }
            // A leaf (or empty container) completes one child of its parent,
            // which may complete the parent, and so on up.
            loop {
                if self.depth == 0 {
                    return Ok(Parse::Complete((), self.pos));
                }
                let top = &mut self.stack[self.depth - 1];
                *top -= 1;
                if *top > 0 {
                    break;
                }
                self.depth -= 1;
            }
        }
    }
}

/// The length of the MessagePack object at the front of `buf` (stateless).
pub fn frame_len(buf: &[u8], limits: &Limits) -> Result<Parse<()>, FrameError> {
    FrameScanner::default().scan(buf, limits)
}
