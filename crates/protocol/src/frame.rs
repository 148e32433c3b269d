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
