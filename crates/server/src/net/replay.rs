//! A connection without a socket: feeds bytes to the session a real
//! connection would pick and collects what it would have written. For tests
//! and fuzzing of whole sessions (framing, commands, replies) in-process.

use crate::protocols::any::AnySession;
use crate::protocols::out::Out;
use crate::protocols::session::{ConnState, Cx, Step, FLUSH_AT};
use crate::state::server::Server;
use bytes::BytesMut;
use std::sync::Arc;
use tokio::sync::mpsc;

/// What a replayed connection did.
#[derive(Debug, Default)]
pub struct Replay {
    /// Every byte the server would have written, in order.
    pub output: Vec<u8>,
    /// The session asked to close (or refused the protocol).
    pub closed: bool,
    /// The most output held at once before a write (bounded by `FLUSH_AT`
    /// plus one reply).
    pub peak_output: usize,
    /// The most input held at once (a partial request).
    pub peak_input: usize,
}

/// Sends `chunks` one after the other, as reads of a connection would
/// deliver them. Must run inside a multi-threaded tokio runtime (slow RPC
/// calls are spawned; their late answers are not collected).
pub fn replay(srv: &Arc<Server>, chunks: &[&[u8]]) -> Replay {
    let mut r = Replay::default();
    let mut rbuf = BytesMut::new();
    let mut out = Out::new();
    let mut cs = ConnState::default();
    let (late, _late_rx) = mpsc::unbounded_channel();
    let mut session = None;
    for chunk in chunks {
        rbuf.extend_from_slice(chunk);
        r.peak_input = r.peak_input.max(rbuf.len());
        if cs.discard(&mut rbuf) || rbuf.is_empty() {
            continue;
        }
        let s = match session.as_mut() {
            Some(s) => s,
            None => match AnySession::sniff(srv, &rbuf) {
                Some(s) => session.insert(s),
                None => {
                    r.closed = true;
                    return r;
                }
            },
        };
        let mut cx = Cx {
            srv,
            out: &mut out,
            late: &late,
        };
        loop {
            let step = s.process(&mut cx, &mut cs, &mut rbuf);
            r.peak_output = r.peak_output.max(cx.out.len());
            r.output.extend_from_slice(&cx.out.to_vec());
            cx.out.clear();
            match step {
                Step::NeedInput(_) => break,
                Step::Flush => continue,
                Step::Close => {
                    r.closed = true;
                    return r;
                }
            }
        }
    }
    r
}

/// The bound a replay's `peak_output` must respect for a session whose
/// largest single reply is `largest_reply` bytes.
pub fn output_bound(largest_reply: usize) -> usize {
    FLUSH_AT + largest_reply
}
