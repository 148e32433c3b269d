//! One io_uring worker thread: a ring, the connections placed on it, and
//! the loop that submits their operations and dispatches the completions.

use super::conn::{Conn, Next};
use super::{Arrival, Inbox};
use crate::net::workers::Workers;
use crate::protocols::session::LateTx;
use crate::state::counters as stats;
use crate::state::server::Server;
use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::AsRawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Submission entries per ring; more are flushed early when it fills.
const ENTRIES: u32 = 1024;
/// How often the loop looks at waiting connections while there are some.
const TICK: Duration = Duration::from_millis(10);
/// user_data of the eventfd read.
const BELL: u64 = u64::MAX;
const RECV: u64 = 0;
const SEND: u64 = 1;

/// A ring for one worker, made on the worker's thread, its only
/// submitter. Deferred task work: completions are processed when the
/// worker asks for them (in `submit_and_wait`), not by interrupting it
/// whenever a socket becomes ready; on the floor server this took the CPU
/// per request under memcaslap from about 9.2 to 6.8 µs
/// (docs/bench/server-notes.md, "The floor").
pub(super) fn ring() -> io::Result<IoUring> {
    IoUring::builder()
        .setup_cqsize(ENTRIES * 4)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(ENTRIES)
}

fn tag(slot: usize, op: u64) -> u64 {
    ((slot as u64) << 1) | op
}

struct Worker<'s> {
    ring: IoUring,
    srv: &'s Arc<Server>,
    /// The per-core workers that serve what io_uring does not (RPC, KT).
    workers: Option<Arc<Workers>>,
    conns: Vec<Option<Conn<'s>>>,
    free: Vec<usize>,
    /// Slots waiting for the memory budget (retried every tick).
    waiting: Vec<usize>,
    late: LateTx,
    bell: Box<[u8; 8]>,
    /// The eventfd read into `bell` is in flight.
    bell_armed: bool,
    /// Some connection's reply is watched (`Conn::send_since`): the loop
    /// ticks until it is written or cut (see `tick`).
    deadlines: bool,
    stopping: bool,
}

impl Drop for Worker<'_> {
    /// Leaving with operations in flight (a ring error, or a panic outside
    /// a request's handling): the kernel may still write into their
    /// buffers, so those are leaked, not freed. (The normal stop leaves
    /// nothing in flight.)
    fn drop(&mut self) {
        if self.bell_armed {
            std::mem::forget(std::mem::replace(&mut self.bell, Box::new([0; 8])));
        }
        if self.conns.iter().flatten().any(|c| c.busy) {
            for c in self.conns.iter_mut().flatten() {
                c.cut();
            }
            std::mem::forget(std::mem::take(&mut self.conns));
        }
    }
}

pub(super) fn run(ring: IoUring, srv: &Arc<Server>, inbox: &Inbox, workers: Option<Arc<Workers>>) {
    // Text and binary sessions never answer late; the sender just has to exist.
    let (late, _unused) = tokio::sync::mpsc::unbounded_channel();
    let mut w = Worker {
        ring,
        srv,
        workers,
        conns: Vec::new(),
        free: Vec::new(),
        waiting: Vec::new(),
        late,
        bell: Box::new([0; 8]),
        bell_armed: false,
        deadlines: false,
        stopping: false,
    };
    // However the worker ends, nothing more is placed on it, and what was
    // placed and not taken is closed.
    struct Dead<'a>(&'a Inbox);
    impl Drop for Dead<'_> {
        fn drop(&mut self) {
            let mut arrivals = self.0.arrivals.lock().unwrap_or_else(|e| e.into_inner());
            self.0.dead.store(true, Ordering::Release);
            arrivals.clear();
        }
    }
    let _dead = Dead(inbox);
    w.listen_for_bell(inbox);
    let mut done = Vec::new();
    loop {
        let timed = !w.waiting.is_empty() || w.deadlines || srv.budget.is_spent();
        if let Err(e) = w.submit_and_wait(timed) {
            tracing::error!("io_uring worker: {e}; its connections are closed");
            break;
        }
        done.clear();
        done.extend(w.ring.completion().map(|c| (c.user_data(), c.result())));
        for &(user_data, result) in &done {
            if user_data == BELL {
                w.answer_bell(inbox);
            } else {
                w.complete((user_data >> 1) as usize, user_data & 1, result);
            }
        }
        if timed {
            w.tick();
        }
        if w.stopping && w.conns.iter().all(Option::is_none) {
            break;
        }
    }
}

impl<'s> Worker<'s> {
    fn submit_and_wait(&mut self, timed: bool) -> io::Result<()> {
        let r = if timed {
            let ts = types::Timespec::from(TICK);
            let args = types::SubmitArgs::new().timespec(&ts);
            self.ring.submitter().submit_with_args(1, &args)
        } else {
            self.ring.submit_and_wait(1)
        };
        match r {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn push(&mut self, entry: squeue::Entry) {
        loop {
            // SAFETY: every entry points into buffers owned by a connection
            // (or the worker's bell) that stay put until its completion.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
            if let Err(e) = self.ring.submit() {
                if !matches!(e.raw_os_error(), Some(libc::EINTR | libc::EBUSY)) {
                    tracing::error!("io_uring submit: {e}");
                }
            }
        }
    }

    fn listen_for_bell(&mut self, inbox: &Inbox) {
        let e = opcode::Read::new(types::Fd(inbox.wake.as_raw_fd()), self.bell.as_mut_ptr(), 8)
            .build()
            .user_data(BELL);
        self.push(e);
        self.bell_armed = true;
    }

    /// New connections, or the stop.
    fn answer_bell(&mut self, inbox: &Inbox) {
        self.bell_armed = false;
        let arrivals: Vec<Arrival> =
            std::mem::take(&mut *inbox.arrivals.lock().unwrap_or_else(|e| e.into_inner()));
        if inbox.stop.load(Ordering::Acquire) {
            self.stopping = true;
            drop(arrivals);
            for slot in 0..self.conns.len() {
                let Some(c) = self.conns[slot].as_mut() else {
                    continue;
                };
                c.close_as(crate::state::watch::CloseReason::Shutdown);
                if !c.busy {
                    self.close(slot);
                } else if c.sending {
                    // Its replies go out first, then it closes.
                    c.draining = true;
                } else {
                    c.cut();
                }
            }
            return;
        }
        for a in arrivals {
            let slot = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            self.conns[slot] = Some(Conn::new(self.srv, a.stream, a.peer, a.live));
            self.act(slot, Next::Recv);
        }
        self.listen_for_bell(inbox);
    }

    fn complete(&mut self, slot: usize, op: u64, result: i32) {
        let srv = self.srv;
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        c.busy = false;
        c.sending = false;
        if c.closing || (c.draining && (op != SEND || result <= 0)) {
            return self.close(slot);
        }
        let next = if result < 0 {
            match -result {
                libc::EINTR | libc::EAGAIN => {
                    if op == SEND {
                        Next::Send
                    } else {
                        Next::Recv
                    }
                }
                _ => Next::Close,
            }
        } else if result == 0 {
            // End of file, or a send that wrote nothing.
            if op != SEND {
                c.close_as(crate::state::watch::CloseReason::Normal);
            }
            Next::Close
        } else {
            let late = &self.late;
            let n = result as usize;
            // A panic in a request's handling closes that connection only,
            // as a panicking task does on the epoll path.
            catch_unwind(AssertUnwindSafe(|| {
                if op == SEND {
                    c.sent(srv, late, n)
                } else {
                    c.received(srv, late, n)
                }
            }))
            .unwrap_or_else(|_| {
                tracing::error!("a request's handling panicked; closing its connection");
                Next::Close
            })
        };
        let next = match (c.draining, next) {
            // Stopping: the batch's replies go out (as on the epoll path,
            // which finishes the batch it is in); then it closes, reading
            // nothing more.
            (true, Next::Send) => Next::Send,
            (true, _) => Next::Close,
            (false, next) => next,
        };
        self.act(slot, next);
    }

    fn act(&mut self, slot: usize, next: Next) {
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        match next {
            Next::Recv => {
                c.busy = true;
                let e = c.recv_entry(tag(slot, RECV));
                self.push(e);
            }
            Next::Send => {
                c.busy = true;
                c.sending = true;
                self.deadlines |= c.send_since.is_some();
                let e = c.send_entry(tag(slot, SEND));
                self.push(e);
            }
            Next::WaitMemory => {
                if !self.waiting.contains(&slot) {
                    self.waiting.push(slot);
                }
            }
            Next::Close => self.close(slot),
            Next::Handover => self.hand_over(slot),
        }
    }

    /// Retries reads waiting for memory; drops clients that do not read
    /// their replies while the budget is spent.
    fn tick(&mut self) {
        for slot in std::mem::take(&mut self.waiting) {
            let next = match self.conns.get_mut(slot).and_then(Option::as_mut) {
                Some(c) if !c.busy => c.read_next(self.srv),
                _ => continue,
            };
            self.act(slot, next);
        }
        // A watched reply whose client took nothing for the budget's wait
        // is cut if it must make progress now (as on the epoll path,
        // `connection::write`); each byte taken starts the wait again.
        let wait = self.srv.budget.wait();
        let mut deadlines = false;
        for c in self.conns.iter_mut().flatten() {
            let Some(since) = c.send_since.filter(|_| c.sending && !c.closing) else {
                continue;
            };
            if since.elapsed() >= wait && c.must_progress() {
                stats::bump(&self.srv.budget.refused);
                tracing::info!("closing a connection that does not read its replies: the connection memory budget is spent");
                c.cut();
            } else {
                deadlines = true;
            }
        }
        self.deadlines = deadlines;
    }

    fn close(&mut self, slot: usize) {
        if let Some(c) = self.conns.get_mut(slot) {
            if c.take().is_some() {
                self.free.push(slot);
            }
        }
        self.waiting.retain(|&s| s != slot);
    }

    /// MessagePack-RPC and Kyoto Tycoon's protocol are served by a tokio
    /// worker; the bytes read so far go with the socket.
    fn hand_over(&mut self, slot: usize) {
        let Some(mut c) = self.conns.get_mut(slot).and_then(Option::take) else {
            return;
        };
        self.free.push(slot);
        c.unlist();
        let Some(workers) = self.workers.clone() else {
            tracing::warn!("{}: no tokio worker to serve this protocol", c.peer);
            return;
        };
        let rbuf = std::mem::take(&mut c.core.rbuf);
        if let Some(w) = c.watcher.take() {
            let Conn {
                stream, peer, live, ..
            } = c;
            crate::net::placement::place_std(&workers, stream, peer, live, move |s, _, srv| {
                crate::net::connection::serve_watcher(s, srv, w)
            });
            return;
        }
        let Conn {
            stream, peer, live, ..
        } = c;
        crate::net::placement::place_std(&workers, stream, peer, live, move |s, p, srv| {
            crate::net::connection::serve_from(s, p, srv, rbuf)
        });
    }
}
