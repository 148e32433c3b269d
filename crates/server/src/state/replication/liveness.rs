//! Whether a replication stream's replica is still reading, and what
//! happens to one that is not: its writes fail after `STALL`, and, while
//! every stream slot is taken, a new stream takes the slot of one not heard
//! from for `EVICT_AFTER`.
//!
//! Why not a plain write timeout: `SO_SNDTIMEO` bounds one `write` call,
//! and a call that moved a single byte starts the next one's clock afresh.
//! A replica that stopped reading still lets its kernel take data now and
//! then (its receive queue is compacted, a window probe reopens the
//! window), tens of KiB at a time on loopback, so the stream lived three
//! timeouts (30 s) instead of one. Bytes taken by the socket are no proof
//! of reading; an answer is. So a replica on memstored's wire answers every
//! frame it is sent, heartbeats included, and a frame sent whole must be
//! answered within `STALL`, checked between frames and while a write
//! blocks. Besides, a write must move `MIN_PROGRESS` bytes within each
//! `STALL`, the clock running across calls (the only bound on a Kyoto
//! Tycoon slave while it is behind: it answers nothing then).

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a replica may go without reading (taking bytes, or answering
/// what it was sent) before it is dropped.
pub const STALL: Duration = Duration::from_secs(10);

/// Bytes a replica must take within each `STALL` while there is more to
/// send it (a replica on a link slower than 6.4 KB/s is dropped).
pub const MIN_PROGRESS: usize = 64 << 10;
/// While every stream slot is taken, a stream whose replica has neither
/// answered nor taken `MIN_PROGRESS` bytes for this long gives its slot to
/// a new stream. A replica that reads answers every heartbeat (1 s).
pub const EVICT_AFTER: Duration = Duration::from_secs(3);

/// One stream's signs of life, shared by its writer, the thread reading
/// its answers and `StreamSlot::take`.
pub struct Liveness {
    born: Instant,
    /// Milliseconds from `born` to the last sign of life.
    heard_ms: AtomicU64,
    /// Milliseconds from `born` to when a frame sent whole began waiting
    /// for an answer, plus one (0: none waits).
    waiting_ms: AtomicU64,
    /// A handle on the stream's socket, shut down to evict it.
    sock: Option<TcpStream>,
    /// The stream's slot flag (`StreamSlot`): set once the slot is given back.
    released: Arc<AtomicBool>,
}

impl Liveness {
    /// `sock`: a clone of the stream's socket; `released`: its slot's flag.
    pub fn new(sock: Option<TcpStream>, released: Arc<AtomicBool>) -> Liveness {
        Liveness {
            born: Instant::now(),
            heard_ms: AtomicU64::new(0),
            waiting_ms: AtomicU64::new(0),
            sock,
            released,
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX - 1)
    }

    fn heard(&self) {
        self.heard_ms.store(self.now_ms(), Relaxed);
    }

    /// The replica answered (acknowledged a batch or a heartbeat): nothing
    /// waits any more (an answer to an older frame counts for the newer
    /// ones too; the next frame sent starts the wait again).
    pub fn answered(&self) {
        self.waiting_ms.store(0, Relaxed);
        self.heard();
    }

    /// A frame the replica must answer was sent whole.
    pub fn sent_frame(&self) {
        let now = self.now_ms() + 1;
        let _ = self.waiting_ms.compare_exchange(0, now, Relaxed, Relaxed);
    }

    /// An error once a frame sent whole has waited `STALL` for its answer.
    pub fn check_answered(&self) -> io::Result<()> {
        match self.unanswered_for() {
            Some(d) if d >= STALL => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the replica answered nothing for {d:?}: it does not read"),
            )),
            _ => Ok(()),
        }
    }

    fn unanswered_for(&self) -> Option<Duration> {
        let since = self.waiting_ms.load(Relaxed).checked_sub(1)?;
        Some(Duration::from_millis(self.now_ms().saturating_sub(since)))
    }

    /// How long since the last sign of life.
    pub fn silent_for(&self) -> Duration {
        let heard = Duration::from_millis(self.heard_ms.load(Relaxed));
        self.born.elapsed().saturating_sub(heard)
    }

    /// Writes all of `buf`; an error when the replica took fewer than
    /// `MIN_PROGRESS` bytes in `STALL` (or the rest, if less), or left a
    /// frame sent before unanswered for `STALL` meanwhile.
    pub fn send_all(&self, sock: &mut TcpStream, mut buf: &[u8]) -> io::Result<()> {
        let mut window = Instant::now();
        let mut taken = 0usize;
        while !buf.is_empty() {
            self.check_answered()?;
            let left = STALL.saturating_sub(window.elapsed());
            if left.is_zero() {
                return Err(stalled());
            }
            let answer_left = self
                .unanswered_for()
                .map_or(STALL, |d| STALL.saturating_sub(d));
            // At least a millisecond: a zero timeout means none.
            let wait = left.min(answer_left).max(Duration::from_millis(1));
            sock.set_write_timeout(Some(wait))?;
            match sock.write(buf) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    buf = &buf[n..];
                    taken += n;
                    if taken >= MIN_PROGRESS {
                        self.heard();
                        window = Instant::now();
                        taken = 0;
                    }
                }
                // Timed out: the loop's checks say which bound ran out.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted
                            | io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Ends the stream to free its slot (counted down in `streams` here,
    /// not again when the stream ends); false when it was freed already.
    pub fn evict(&self, streams: &AtomicU64) -> bool {
        if self.released.swap(true, Relaxed) {
            return false;
        }
        streams.fetch_sub(1, Relaxed);
        if let Some(s) = &self.sock {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        true
    }
}

fn stalled() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "the replica took under {} KiB in {STALL:?}: it does not read",
            MIN_PROGRESS >> 10
        ),
    )
}
