//! What a database keeps for Tkrzw's calls (`tkrzw_ops.rs`, `queue.rs`):
//! the queue's wake-up signal and the timestamp. A leaf, so that `db.rs`
//! can hold it without importing the modules that extend `Db`.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The wall time as Tkrzw's `GetWallTime` gives it: whole microseconds.
pub fn wall_time() -> f64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    since.as_micros() as f64 / 1_000_000.0
}

/// What `pop_first` waiters sleep on: a count of notifying pushes, so a
/// push between a waiter's failed attempt and its sleep is never missed.
#[derive(Default)]
pub(crate) struct QueueSignal {
    pushes: Mutex<u64>,
    cond: Condvar,
}

impl QueueSignal {
    pub(crate) fn pushes(&self) -> u64 {
        *self.pushes.lock()
    }

    pub(crate) fn notify(&self) {
        *self.pushes.lock() += 1;
        self.cond.notify_all();
    }

    /// Sleeps until a push after `seen` or the deadline (`None`: none).
    pub(crate) fn wait_past(&self, seen: u64, deadline: Option<Instant>) {
        let mut n = self.pushes.lock();
        while *n == seen {
            match deadline {
                Some(d) => {
                    if self.cond.wait_until(&mut n, d).timed_out() {
                        return;
                    }
                }
                None => self.cond.wait(&mut n),
            }
        }
    }
}

/// State the Tkrzw calls keep per database: the queue's wake-up signal and
/// the timestamp `timestamp` reports.
pub(crate) struct TkrzwState {
    pub(crate) queue: QueueSignal,
    /// `f64` bits of the wall time of the open or the last synchronize.
    pub(crate) stamp: AtomicU64,
}

impl Default for TkrzwState {
    fn default() -> Self {
        let s = TkrzwState {
            queue: QueueSignal::default(),
            stamp: AtomicU64::new(0),
        };
        s.touch();
        s
    }
}

impl TkrzwState {
    /// Sets the timestamp to now.
    pub(crate) fn touch(&self) {
        let now = wall_time();
        self.stamp.store(now.to_bits(), Ordering::Relaxed);
    }
}
