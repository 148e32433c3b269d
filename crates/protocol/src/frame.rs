//! What a framer finds at the front of a connection's buffer. Framing —
//! headers, declared lengths, the item limit, what to skip — is decided here,
//! once per protocol, so the server only decides what a request *means*.

/// The next thing at the front of a buffer.
#[derive(Debug)]
pub enum Frame<R, F> {
    /// A complete request, already removed from the buffer.
    Request(R),
    /// A request that is not served as sent: `answer` says why (the session
    /// words the reply, after its own checks such as authentication). The
    /// next `skip` bytes — a refused body, some perhaps not yet arrived —
    /// are dropped as they come, never buffered.
    Refused { answer: F, skip: u64 },
    /// Read more. `need` is how many bytes the buffer must hold for the next
    /// frame (0 = unknown); a declared length is a hint, never an allocation.
    Incomplete { need: usize },
    /// The stream cannot be framed any more: send `answer`, if any, then close.
    Close(Option<F>),
}

/// A protocol's framer: what [`Frame`] is at the front of a buffer.
pub trait Framer {
    type Request;
    type Refusal;

    /// The next frame; a `Request` or `Refused` frame is removed from `buf`.
    fn next(&mut self, buf: &mut bytes::BytesMut) -> Frame<Self::Request, Self::Refusal>;
}

/// A value this large is passed on as a slice of the frame it came in, not
/// copied: the server reads a frame this large into a buffer that holds
/// nothing else (its reads stop at the frame's end, and the buffer is
/// replaced once the frame is served), so the slice pins no other bytes,
/// and a large value is never held twice (issue 40: a 1.5 GiB set peaked at
/// 3x the value). A smaller value is copied: a slice would pin the whole
/// read buffer it shares with other requests for as long as it is stored.
pub const LARGE_VALUE: usize = 1 << 20;

/// `value` as a request hands it on for storing: itself when
/// [`LARGE_VALUE`] or more, else a copy of its own.
pub fn owned_value(value: bytes::Bytes) -> bytes::Bytes {
    if value.len() >= LARGE_VALUE {
        value
    } else {
        bytes::Bytes::copy_from_slice(&value)
    }
}
