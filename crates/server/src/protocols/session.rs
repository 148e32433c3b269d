//! What every protocol session shares: the one loop over framed requests.
//!
//! A protocol implements [`Session`]: how to frame (its protocol crate's
//! framer), how to serve a request, how to answer a refusal. [`process`]
//! drives any of them over a connection's buffered input; the connection
//! (`net/`) owns the socket, the read buffer and the one output
//! buffer, and knows nothing of protocols beyond sniffing the first byte.

use crate::protocols::out::Out;
use crate::state::server::Server;
use bytes::{Buf, BytesMut};
use memstored_protocol::{Frame, Framer};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Replies pending above this size are written before parsing goes on, so
/// one pipelined batch cannot build unbounded output.
pub const FLUSH_AT: usize = 4 << 20;

/// Answers finished off the connection's task (RPC slow calls), in encoded
/// form, to be appended to its output in the order they complete.
pub type LateTx = mpsc::UnboundedSender<LateAnswer>;

/// An encoded answer on its way to its connection, charged to the memory
/// budget from the moment it is built until the connection has taken it
/// into its output (which is charged as output): a client that sends slow
/// calls and never reads would otherwise have their answers wait in the
/// channel, uncharged, 16 per connection and 256 in all.
pub struct LateAnswer {
    pub bytes: BytesMut,
    srv: Arc<Server>,
    charged: usize,
}

impl LateAnswer {
    /// Charges `bytes` to `srv`'s budget if they fit now; `None` (the bytes
    /// dropped) when not. Not waiting for room as a read buffer does: the
    /// bytes are held while they wait, and answers to a client that does
    /// not read come as fast as the calls run.
    pub fn charged(srv: Arc<Server>, bytes: BytesMut) -> Option<LateAnswer> {
        let n = bytes.len();
        if !srv.budget.try_take(n) {
            crate::state::counters::bump(&srv.budget.refused);
            return None;
        }
        Some(LateAnswer {
            bytes,
            srv,
            charged: n,
        })
    }
}

impl LateAnswer {
    /// A short answer (an error) that is always delivered: charged whatever
    /// the budget holds, as output is (`Charge::set`), since an answer never
    /// sent would leave its client waiting and its connection open for good.
    pub fn forced(srv: Arc<Server>, bytes: BytesMut) -> LateAnswer {
        let n = bytes.len();
        srv.budget.force_take(n);
        LateAnswer {
            bytes,
            srv,
            charged: n,
        }
    }
}

impl Drop for LateAnswer {
    fn drop(&mut self) {
        self.srv.budget.give(self.charged);
    }
}

/// What the connection should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Everything complete was handled; read more. The number is how many
    /// bytes the buffer must hold for the next request (0 = unknown).
    NeedInput(usize),
    /// Too much output pending: write it, then call again without reading.
    Flush,
    /// Write what is pending, then close.
    Close,
}

/// Whether to go on after a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Close,
    /// Write what is pending, then call [`Session::resume`] before anything
    /// more is framed: the session has work of its own left to do first.
    Flush,
}

/// Everything a session may touch while serving a batch.
pub struct Cx<'a> {
    pub srv: &'a Arc<Server>,
    pub out: &'a mut Out,
    /// Where answers finished elsewhere go.
    pub late: &'a LateTx,
}

/// One protocol spoken on a connection.
pub trait Session {
    /// The protocol crate's framer.
    type Framer: Framer;

    fn framer(&mut self) -> &mut Self::Framer;

    /// Serves one request, appending its reply to `cx.out`.
    fn serve(&mut self, cx: &mut Cx<'_>, req: Request<Self>) -> Flow;

    /// Answers a request the framer refused (`closing`: the connection ends after).
    fn refuse(&mut self, cx: &mut Cx<'_>, answer: Refusal<Self>, closing: bool) -> Flow;

    /// Goes on with a reply left unfinished by `serve` (a dump written a
    /// window at a time, the rest of a binary quiet run): appends its next
    /// part and says how to go on; `None` when there is nothing to resume.
    /// `process` calls it before each request, so the requests after it
    /// wait, and has the output written after each part.
    fn resume(&mut self, _cx: &mut Cx<'_>) -> Option<Flow> {
        None
    }

    /// Answers the request whose start is in `rbuf` "out of memory" (the
    /// connection memory budget cannot hold the rest of it), in this wire's
    /// words, as memcached does when it cannot allocate an item. False: the
    /// wire has no such answer (or cannot skip the request's body), and the
    /// connection is closed instead.
    fn out_of_memory(&mut self, _rbuf: &mut BytesMut, _out: &mut Out) -> bool {
        false
    }

    /// Runs requests `serve` gathered and has not answered yet (binary
    /// quiet runs, served as batches), appending their replies, while the
    /// output is under [`FLUSH_AT`]; false when some are left (`resume`
    /// goes on with them). [`process`] calls it when the input is used up,
    /// so no request read waits for more input.
    fn settle(&mut self, _cx: &mut Cx<'_>) -> bool {
        true
    }

    /// Requests started and not yet answered (answers come through `Cx::late`).
    fn in_flight(&self) -> usize {
        0
    }

    /// One late answer was appended to the output.
    fn answered_late(&mut self) {}
}

/// What a session's framer yields.
pub type Request<S> = <<S as Session>::Framer as Framer>::Request;
/// Why a session's framer refuses.
pub type Refusal<S> = <<S as Session>::Framer as Framer>::Refusal;

/// Per-connection state every protocol shares.
#[derive(Debug, Default)]
pub struct ConnState {
    /// Bytes still to discard as they arrive (a refused body).
    pub skip: u64,
}

impl ConnState {
    /// Drops skipped bytes from the front of `rbuf`; true if more are due.
    pub fn discard(&mut self, rbuf: &mut BytesMut) -> bool {
        if self.skip == 0 {
            return false;
        }
        let n = usize::try_from(self.skip)
            .unwrap_or(usize::MAX)
            .min(rbuf.len());
        rbuf.advance(n);
        self.skip -= n as u64;
        self.skip > 0
    }
}

/// Serves every complete request in `rbuf`, in order.
pub fn process<S: Session>(
    s: &mut S,
    cx: &mut Cx<'_>,
    cs: &mut ConnState,
    rbuf: &mut BytesMut,
) -> Step {
    let step = serve_all(s, cx, cs, rbuf);
    if !s.settle(cx) && step != Step::Close {
        return Step::Flush;
    }
    step
}

/// [`process`] less the final `settle`.
fn serve_all<S: Session>(
    s: &mut S,
    cx: &mut Cx<'_>,
    cs: &mut ConnState,
    rbuf: &mut BytesMut,
) -> Step {
    loop {
        if cs.discard(rbuf) {
            return Step::NeedInput(0);
        }
        if cx.out.len() >= FLUSH_AT {
            return Step::Flush;
        }
        match s.resume(cx) {
            None => {}
            Some(Flow::Close) => return Step::Close,
            // Each part goes out before the next is made: a client that
            // does not read holds one part, not FLUSH_AT of them.
            Some(Flow::Continue | Flow::Flush) => {
                if !cx.out.is_empty() {
                    return Step::Flush;
                }
                continue;
            }
        }
        let flow = match s.framer().next(rbuf) {
            Frame::Request(r) => s.serve(cx, r),
            Frame::Refused { answer, skip } => {
                let flow = s.refuse(cx, answer, false);
                cs.skip = skip;
                flow
            }
            Frame::Incomplete { need } => return Step::NeedInput(need),
            Frame::Close(answer) => {
                if let Some(a) = answer {
                    s.refuse(cx, a, true);
                }
                return Step::Close;
            }
        };
        match flow {
            Flow::Continue => {}
            Flow::Close => return Step::Close,
            Flow::Flush => return Step::Flush,
        }
    }
}
