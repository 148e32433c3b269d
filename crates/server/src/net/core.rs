//! One connection's rules between "a batch was served" and "its replies are
//! on their way", written once for both IO drivers (epoll: `connection.rs`;
//! io_uring: `uring/conn.rs`): the read buffer's size and charge, handing
//! the batch's writes to the OS before its replies, charging pending output
//! to the memory budget, the "out of memory" refusal, and the hand-over of
//! the socket to a replication stream. The drivers only move bytes and wait.

use crate::protocols::any::AnySession;
use crate::protocols::out::Out;
use crate::protocols::session::{ConnState, Cx, LateAnswer, LateTx, Step};
use crate::state::budget::Charge;
use crate::state::counters as stats;
use crate::state::replication::StreamRequest;
use crate::state::server::Server;
use bytes::BytesMut;
use memstored_protocol::LARGE_VALUE;
use std::sync::Arc;

/// A read buffer may grow to this size (or `-B`, if larger) without asking
/// the memory budget, so small requests are served even when it is spent.
const UNBUDGETED_READ: usize = 16 << 10;

/// What a read buffer of `capacity` bytes is charged.
fn read_charge(capacity: usize, unbudgeted: usize) -> usize {
    if capacity > unbudgeted {
        capacity
    } else {
        0
    }
}

/// The read buffer's size rules, from the server's flags (`-o`
/// initial/reserve sizes), shared by the epoll and io_uring paths.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadLimits {
    pub initial: usize,
    pub reserve: usize,
    pub unbudgeted: usize,
}

/// What a read buffer needs before the next read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadSpace {
    Enough,
    /// Replace it with an empty buffer of this capacity (a big value is done).
    Fresh(usize),
    /// Reserve `want` more bytes, `grow` beyond its capacity; `charged`: the
    /// growth must be granted by the memory budget first.
    Grow {
        want: usize,
        grow: usize,
        charged: bool,
    },
}

impl ReadLimits {
    pub(crate) fn of(srv: &Server) -> ReadLimits {
        let initial = srv.cfg.initial_size.max(64);
        ReadLimits {
            initial,
            reserve: srv.cfg.reserve_size.max(64),
            unbudgeted: initial.max(UNBUDGETED_READ),
        }
    }

    /// Keep free space for the read; room for the rest of the frame when
    /// the handler said how big it is (`need`), but a declared length only
    /// buys 1 MiB at once: beyond that the buffer doubles as bytes arrive.
    pub(crate) fn plan(&self, rbuf: &BytesMut, need: usize) -> ReadSpace {
        let want = self.want(rbuf, need);
        if rbuf.capacity() - rbuf.len() >= want {
            ReadSpace::Enough
        } else if rbuf.is_empty() && rbuf.capacity() > self.initial.max(want) * 4 {
            // Give back the memory of a big value once it is done.
            ReadSpace::Fresh(self.initial.max(want))
        } else {
            let total = rbuf.len().saturating_add(want);
            ReadSpace::Grow {
                want,
                grow: total.saturating_sub(rbuf.capacity()),
                charged: total > self.unbudgeted,
            }
        }
    }

    /// The free space to have before the next read.
    fn want(&self, rbuf: &BytesMut, need: usize) -> usize {
        need.saturating_sub(rbuf.len())
            .min(rbuf.capacity().max(1 << 20))
            .max(self.reserve)
    }

    /// After a batch that was waiting for a frame of `served` bytes, the
    /// capacity of a buffer to replace `rbuf` with: a buffer a large frame
    /// was read into (`memstored_protocol::LARGE_VALUE` or more) is
    /// replaced once it is empty, so that its charge (or the oversize
    /// admission) is given back now, not at the next read, which may never
    /// come, and no later request is read into memory that a value stored
    /// as a slice of the frame still holds. (The rest of a buffer a big
    /// frame was cut from keeps the capacity the buffer grew to.)
    pub(crate) fn renew(&self, rbuf: &BytesMut, served: usize, need: usize) -> Option<usize> {
        let large = served >= LARGE_VALUE && rbuf.is_empty();
        large.then(|| self.initial.max(self.want(rbuf, need)))
    }

    /// The most the next read may take: up to the end of a large frame
    /// being read (`need`), so that its buffer holds nothing else and the
    /// value can be stored without a copy (`memstored_protocol::owned_value`).
    pub(crate) fn read_max(&self, rbuf: &BytesMut, need: usize) -> usize {
        if need >= LARGE_VALUE && need > rbuf.len() {
            need - rbuf.len()
        } else {
            usize::MAX
        }
    }

    /// What a read buffer of `capacity` bytes is charged.
    pub(crate) fn charge(&self, capacity: usize) -> usize {
        read_charge(capacity, self.unbudgeted)
    }
}

/// Replies pending up to this size are not charged to the budget.
pub(crate) const UNBUDGETED_OUT: usize = 64 << 10;

/// Hands the batch's writes to the OS before its replies go (`Db::flush_dirty`).
/// False when that failed: the replies must not go, since some of them may
/// acknowledge writes the OS did not take; the connection is closed without
/// them, so the client never reads a write as stored that is not. (A full
/// disk does not come here: each write reserved its space before it was
/// applied, and one without room was answered with an error, see
/// docs/design.md "A full disk"; this is a disk that fails.)
pub(crate) fn hand_writes_to_os(srv: &Server) -> bool {
    match srv.db.flush_dirty() {
        Ok(()) => true,
        Err(e) => {
            tracing::error!(
                "handing writes to the OS failed: {e}; closing the connection without its replies"
            );
            false
        }
    }
}

/// What sending a batch's replies is to be.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SendPlan {
    /// The replies are charged to the memory budget while they wait.
    pub charged: bool,
    /// A client that takes none of them for the budget's wait may be
    /// dropped (`Charge::must_progress`); one that reads, however slowly, is not.
    pub watched: bool,
}

/// Whether and how a batch's replies go.
pub(crate) enum Sending {
    /// Nothing is pending.
    Nothing,
    /// The batch's writes did not reach the OS: close without the replies.
    Abort,
    Go(SendPlan),
}

/// Before the pending replies `out` go: writes acknowledged in this batch
/// reach the OS first, so they survive the server being killed; replies over
/// `UNBUDGETED_OUT` are charged to the memory budget (beside the read
/// buffer's `read_buffer`) while they wait. Every port's connections use it.
#[inline]
pub(crate) fn before_send(
    srv: &Server,
    out: &Out,
    charge: &mut Charge<'_>,
    read_buffer: usize,
) -> Sending {
    if out.is_empty() {
        return Sending::Nothing;
    }
    if !hand_writes_to_os(srv) {
        return Sending::Abort;
    }
    let charged = out.held() > UNBUDGETED_OUT;
    if charged {
        charge.set(read_buffer + out.held());
    }
    Sending::Go(SendPlan {
        charged,
        watched: charged || srv.budget.is_spent(),
    })
}

/// `n` bytes of replies were sent (the whole batch): the output's charge
/// is given back, the bytes counted.
#[inline]
pub(crate) fn sent(
    srv: &Server,
    plan: SendPlan,
    charge: &mut Charge<'_>,
    read_buffer: usize,
    n: usize,
) {
    if plan.charged {
        charge.set(read_buffer);
    }
    stats::add(&srv.counters.here().bytes_written, n as u64);
}

/// A connection's buffers, session and charge, whichever driver moves its bytes.
pub(crate) struct ConnCore<'s> {
    pub rbuf: BytesMut,
    pub out: Out,
    pub charge: Charge<'s>,
    pub cs: ConnState,
    pub session: Option<AnySession>,
    pub limits: ReadLimits,
    /// Bytes the buffer must hold for the next request (0 = unknown).
    pub need: usize,
    /// The socket's descriptor, which watchers log as `cfd`.
    pub fd: i32,
}

/// Growth the memory budget must grant before the next read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grow {
    pub want: usize,
    pub grow: usize,
}

impl<'s> ConnCore<'s> {
    /// A connection of `srv` whose first bytes (if any) are in `rbuf`.
    pub fn new(srv: &'s Server, mut rbuf: BytesMut, fd: i32) -> ConnCore<'s> {
        let limits = ReadLimits::of(srv);
        if rbuf.capacity() < limits.initial {
            rbuf.reserve(limits.initial - rbuf.len());
        }
        ConnCore {
            rbuf,
            out: Out::new(),
            charge: Charge::new(&srv.budget),
            cs: ConnState::default(),
            session: None,
            limits,
            need: 0,
            fd,
        }
    }

    /// The reply batch, the charge and what the read buffer is charged:
    /// what `connection::write_out` takes.
    #[inline]
    pub fn send_parts(&mut self) -> (&mut Out, &mut Charge<'s>, usize) {
        let read_buffer = self.read_charge();
        (&mut self.out, &mut self.charge, read_buffer)
    }

    /// What the read buffer is charged now.
    #[inline]
    pub fn read_charge(&self) -> usize {
        self.limits.charge(self.rbuf.capacity())
    }

    /// Makes room for the next read as far as that needs no waiting;
    /// `Some`: the budget must grant the growth first (then [`Self::grown`]).
    #[inline(always)]
    pub fn make_room(&mut self) -> Option<Grow> {
        match self.limits.plan(&self.rbuf, self.need) {
            ReadSpace::Enough => None,
            ReadSpace::Fresh(capacity) => {
                self.rbuf = BytesMut::with_capacity(capacity);
                self.charge.set(self.read_charge());
                None
            }
            ReadSpace::Grow {
                want,
                grow,
                charged: true,
            } => Some(Grow { want, grow }),
            ReadSpace::Grow { want, .. } => {
                self.grown(want);
                None
            }
        }
    }

    /// The budget granted the growth (or it needed none): reserve it.
    #[inline]
    pub fn grown(&mut self, want: usize) {
        self.rbuf.reserve(want);
        // Buffers within the unbudgeted size are not charged.
        self.charge.set(self.read_charge());
    }

    /// The most the next read may take (`ReadLimits::read_max`).
    #[inline]
    pub fn read_max(&self) -> usize {
        self.limits.read_max(&self.rbuf, self.need)
    }

    /// `n` bytes arrived. False: nothing to serve yet (a refused body being
    /// skipped, or nothing at all).
    #[inline]
    pub fn arrived(&mut self, srv: &Server, n: usize) -> bool {
        stats::add(&srv.counters.here().bytes_read, n as u64);
        !(self.cs.discard(&mut self.rbuf) || self.rbuf.is_empty())
    }

    /// Picks the session from the first bytes, once. False: refused.
    #[inline]
    pub fn pick_session(&mut self, srv: &Server) -> bool {
        if self.session.is_none() {
            self.session = AnySession::sniff(srv, &self.rbuf);
        }
        self.session.is_some()
    }

    /// Serves every complete request buffered, until a reply must go out.
    #[inline]
    pub fn serve(&mut self, srv: &Arc<Server>, late: &LateTx) -> Step {
        let Some(s) = self.session.as_mut() else {
            return Step::Close;
        };
        let mut cx = Cx {
            srv,
            out: &mut self.out,
            late,
        };
        let _serving = crate::state::watch::Serving::conn(self.fd);
        s.process(&mut cx, &mut self.cs, &mut self.rbuf)
    }

    /// The batch that waited for a frame of `served` bytes is done and the
    /// next request needs `need`: a big request gives its memory (and the
    /// budget's charge, or the oversize admission) back now, not at the
    /// next read, which may never come.
    #[inline]
    pub fn batch_done(&mut self, served: usize, need: usize) {
        if let Some(capacity) = self.limits.renew(&self.rbuf, served, need) {
            self.rbuf = BytesMut::with_capacity(capacity);
            self.charge.set(self.read_charge());
        }
        self.need = need;
    }

    /// Requests answered elsewhere and not yet here (RPC slow calls).
    #[inline]
    pub fn in_flight(&self) -> usize {
        self.session.as_ref().map_or(0, AnySession::in_flight)
    }

    /// A late answer joins the output, without a copy. Its charge passes to
    /// the output's when it is sent.
    pub fn take_late(&mut self, mut done: LateAnswer) {
        if let Some(s) = self.session.as_mut() {
            s.answered_late();
        }
        self.out.value(std::mem::take(&mut done.bytes).freeze());
    }

    /// [`before_send`] for this connection's replies.
    #[inline]
    pub fn before_send(&mut self, srv: &Server) -> Sending {
        let read_buffer = self.read_charge();
        before_send(srv, &self.out, &mut self.charge, read_buffer)
    }

    /// [`sent`] for this connection's replies.
    #[inline]
    pub fn sent(&mut self, srv: &Server, plan: SendPlan, n: usize) {
        let read_buffer = self.read_charge();
        sent(srv, plan, &mut self.charge, read_buffer, n);
    }

    /// Answers the request at the front of the buffer "out of memory" in its
    /// wire's words and drops its body as it arrives. True: the connection
    /// goes on. A wire without that answer (MessagePack-RPC declares no
    /// frame length) has its connection closed instead.
    pub fn refuse_for_memory(&mut self, srv: &Server) -> bool {
        stats::bump(&srv.budget.refused);
        let (used, limit) = (srv.budget.held(), srv.budget.limit());
        let rest = self.need.saturating_sub(self.rbuf.len()) as u64;
        let go_on = rest > 0
            && self
                .session
                .as_mut()
                .is_some_and(|s| s.out_of_memory(&mut self.rbuf, &mut self.out));
        tracing::info!(
            "a request needs more than the connection memory budget has left ({used} of {limit} bytes in use): {}",
            if go_on { "refused" } else { "closing the connection" }
        );
        if go_on {
            crate::command::store::count_refused_for_memory(srv);
            self.rbuf.clear();
            self.cs.skip = rest;
        }
        go_on
    }

    /// The watcher the session became as it closed (`watch`).
    pub fn watcher(&mut self) -> Option<Arc<crate::state::watch::Watcher>> {
        self.session.as_mut().and_then(AnySession::take_watcher)
    }

    /// How the session says the connection closed.
    pub fn close_reason(&self) -> crate::state::watch::CloseReason {
        self.session.as_ref().map_or(
            crate::state::watch::CloseReason::Error,
            AnySession::close_reason,
        )
    }

    /// The replication stream the session accepted as it closed.
    pub fn handover(&mut self) -> Option<StreamRequest> {
        self.session.as_mut().and_then(AnySession::take_stream)
    }
}
