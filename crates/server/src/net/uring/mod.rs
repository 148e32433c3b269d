//! io_uring workers (`--io io-uring`, issue 15): one ring per worker thread,
//! one `io_uring_enter` for all the receives and replies that a pass over
//! its connections produced.
//!
//! Why: with epoll every request costs a `read` and a `writev`, and the
//! worker is woken (and often preempted on the way back from the write) once
//! per request. With a ring the kernel completes receives on its own (its
//! internal poll) and the worker submits every reply of a pass at once. A
//! canned-reply server measured both ways on seed 000's run
//! (docs/bench/server-notes.md, "The floor") spent half the CPU per request
//! with the ring.
//!
//! What runs here: the memcached protocols (binary, text, meta), whose
//! sessions are synchronous. A connection whose first bytes are
//! MessagePack-RPC or Kyoto Tycoon's binary protocol is handed, with those
//! bytes, to a per-core tokio worker (RPC has slow calls answered late,
//! replication hand-overs, ...). Waits that are async on the epoll path are
//! done by the loop's tick here: a read buffer waiting for the memory budget,
//! a reply a client does not read while the budget is spent.

mod conn;
mod worker;

use crate::net::placement::Live;
use crate::net::workers::Workers;
use crate::state::server::IoEngine;
use crate::state::server::Server;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How the server waits for its sockets (`--io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IoChoice {
    /// io_uring where the kernel allows it and the configuration permits
    /// (per-core scheduler, no --sync-replicas); epoll otherwise.
    Auto,
    /// io_uring; refuse to start without it.
    IoUring,
    /// epoll through tokio.
    Epoll,
}

/// Picks the engine at start. `Err`: io_uring was asked for and cannot be used.
pub fn choose(
    choice: IoChoice,
    per_core: bool,
    sync_replicas: bool,
    tls: bool,
) -> Result<IoEngine, String> {
    let refused = if !per_core {
        Some("it needs --scheduler per-core".to_string())
    } else if tls {
        Some(
            "-Z: TLS connections are served by the epoll workers (the io_uring loop has no TLS)"
                .to_string(),
        )
    } else if sync_replicas {
        Some("--sync-replicas waits for replicas before each reply, which the io_uring loop does not".to_string())
    } else {
        probe().err().map(|e| format!("the kernel refuses it: {e}"))
    };
    match (choice, refused) {
        (IoChoice::Epoll, _) => Ok(IoEngine::Epoll),
        (_, None) => Ok(IoEngine::IoUring),
        (IoChoice::Auto, Some(why)) => {
            tracing::info!("serving through epoll, not io_uring: {why}");
            Ok(IoEngine::Epoll)
        }
        (IoChoice::IoUring, Some(why)) => Err(format!("--io io-uring: {why}")),
    }
}

/// Can this process set up a ring with the operations the workers use?
/// (A seccomp filter or `kernel.io_uring_disabled` says no here.)
pub fn probe() -> io::Result<()> {
    use io_uring::opcode;
    let ring = worker::ring()?;
    let mut p = io_uring::Probe::new();
    ring.submitter().register_probe(&mut p)?;
    for (code, name) in [
        (opcode::Recv::CODE, "recv"),
        (opcode::Send::CODE, "send"),
        (opcode::SendMsg::CODE, "sendmsg"),
        (opcode::Read::CODE, "read"),
    ] {
        if !p.is_supported(code) {
            return Err(io::Error::other(format!("no {name} operation")));
        }
    }
    Ok(())
}

/// A socket accepted by the listener, on its way to a worker.
pub(crate) struct Arrival {
    pub stream: std::net::TcpStream,
    pub peer: SocketAddr,
    pub live: Live,
}

/// What the listener and a worker share.
struct Inbox {
    arrivals: Mutex<Vec<Arrival>>,
    /// An eventfd the worker keeps a read on: written to wake it.
    wake: OwnedFd,
    stop: AtomicBool,
    /// The worker has ended: nothing more may be placed on it.
    dead: AtomicBool,
}

impl Inbox {
    fn ring_bell(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live buffer to our (non-blocking)
        // eventfd. It can only fail if the counter is about to overflow,
        // when the worker has a wake-up pending anyway.
        let _ = unsafe { libc::write(self.wake.as_raw_fd(), one.as_ptr().cast(), 8) };
    }
}

/// The io_uring worker threads.
pub struct UringWorkers {
    inboxes: Vec<Arc<Inbox>>,
    next: AtomicUsize,
}

impl UringWorkers {
    /// Starts `n` workers (at least one) serving connections of `srv`;
    /// called inside the main runtime.
    pub fn start(
        n: usize,
        srv: &Arc<Server>,
        workers: Option<Arc<Workers>>,
    ) -> io::Result<UringWorkers> {
        let mut inboxes = Vec::new();
        for i in 0..n.max(1) {
            // SAFETY: plain syscall; the result is checked before use.
            let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            let inbox = Arc::new(Inbox {
                arrivals: Mutex::new(Vec::new()),
                // SAFETY: a descriptor we just opened and own.
                wake: unsafe { OwnedFd::from_raw_fd(fd) },
                stop: AtomicBool::new(false),
                dead: AtomicBool::new(false),
            });
            let (srv, shared, workers) = (srv.clone(), inbox.clone(), workers.clone());
            // The ring is made on the worker's thread (its only submitter);
            // start waits for it, so a refusal is a start-up error.
            let (ready_tx, ready) = std::sync::mpsc::channel();
            // Commands that spawn (a delayed flush, a background dump)
            // spawn onto the main runtime.
            let runtime = tokio::runtime::Handle::current();
            std::thread::Builder::new()
                .name(format!("memstored-uring-{i}"))
                .spawn(move || {
                    let ring = match worker::ring() {
                        Ok(ring) => ring,
                        Err(e) => return drop(ready_tx.send(Err(e))),
                    };
                    let _ = ready_tx.send(Ok(()));
                    let _entered = runtime.enter();
                    crate::exec::block::blocks_in_place();
                    worker::run(ring, &srv, &shared, workers)
                })?;
            ready
                .recv()
                .map_err(|_| io::Error::other("an io_uring worker ended at start"))??;
            inboxes.push(inbox);
        }
        Ok(UringWorkers {
            inboxes,
            next: AtomicUsize::new(0),
        })
    }

    /// Hands a connection to the next live worker in turn. With none left
    /// (they failed), the connection is closed.
    pub(crate) fn place(&self, arrival: Arrival) {
        let n = self.inboxes.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let live = (0..n)
            .filter_map(|k| self.inboxes.get((start + k) % n))
            .find(|i| !i.dead.load(Ordering::Acquire));
        match live {
            Some(inbox) => {
                let mut arrivals = inbox.arrivals.lock().unwrap_or_else(|e| e.into_inner());
                // Checked again under the lock the worker takes on its way out.
                if inbox.dead.load(Ordering::Acquire) {
                    return tracing::warn!("{}: its io_uring worker ended; closed", arrival.peer);
                }
                arrivals.push(arrival);
                drop(arrivals);
                inbox.ring_bell();
            }
            None => tracing::warn!("{}: no io_uring worker left; closed", arrival.peer),
        }
    }

    /// Closes every connection once its reply in flight is written, and
    /// ends the workers.
    pub fn stop(&self) {
        for inbox in &self.inboxes {
            inbox.stop.store(true, Ordering::Release);
            inbox.ring_bell();
        }
    }
}
