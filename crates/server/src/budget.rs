//! The server-wide memory budget for connection buffers: read buffers
//! (partial requests) and pending output (replies a client has not read).
//!
//! Why: each connection's buffers are bounded on their own (a request by
//! `-I`, output by `session::FLUSH_AT` plus one reply), but a thousand
//! connections each holding a partial 1 MB value add up to a gigabyte that
//! no cache cap accounts for. memcached bounds this with its slab memory
//! (`-m`): a body is read into an item it allocated, and when none can be
//! had it answers "SERVER_ERROR out of memory". Here every connection
//! charges what its buffers hold to one [`Budget`]:
//!
//! - a read buffer grows past its initial size only if the budget grants
//!   the growth; otherwise the connection stops reading and waits up to
//!   [`Budget::wait`] for memory to be given back, then is answered "out of
//!   memory" and closed (`stats`: `conn_buffer_refused`);
//! - while the budget is spent, a connection whose client does not read its
//!   replies gets the same wait for the socket to drain, then is closed.
//!
//! A read buffer up to 16 KiB and a batch of replies up to 64 KiB are not
//! charged (so small requests keep being served when the budget is spent,
//! and the common path touches no shared counter).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// `--conn-memory`'s default: room for a few dozen large values in flight.
pub const DEFAULT_LIMIT: usize = 256 << 20;

/// How long a connection waits for memory (or for its client to read)
/// before it is refused, when the budget is spent.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(1);

/// Bytes of connection buffers the server may hold in all.
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    used: AtomicUsize,
    wait: Duration,
    released: Notify,
    /// Connections in [`Budget::take`]; a release wakes them only if any,
    /// so the common path never touches `released`'s lock.
    waiters: AtomicUsize,
    /// Connections refused (answered "out of memory", closed) for want of budget.
    pub refused: AtomicU64,
}

impl Budget {
    pub fn new(limit: usize, wait: Duration) -> Budget {
        Budget {
            limit,
            used: AtomicUsize::new(0),
            wait,
            released: Notify::new(),
            waiters: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes charged now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// True when nothing more can be granted.
    pub fn is_spent(&self) -> bool {
        self.used() >= self.limit
    }

    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// Charges `n` bytes if they fit under the limit.
    pub fn try_take(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |u| {
                u.checked_add(n).filter(|t| *t <= self.limit)
            })
            .is_ok()
    }

    /// Charges `n` bytes, waiting up to [`Budget::wait`] for them to be
    /// given back by others. False: still no room.
    pub async fn take(&self, n: usize) -> bool {
        if self.try_take(n) {
            return true;
        }
        self.waiters.fetch_add(1, Ordering::AcqRel);
        let granted = self.take_waiting(n).await;
        self.waiters.fetch_sub(1, Ordering::AcqRel);
        granted
    }

    async fn take_waiting(&self, n: usize) -> bool {
        let deadline = tokio::time::Instant::now() + self.wait;
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            // Registered before the check, so a release in between is not missed.
            released.as_mut().enable();
            if self.try_take(n) {
                return true;
            }
            if tokio::time::timeout_at(deadline, released).await.is_err() {
                return false;
            }
        }
    }

    /// Charges `n` bytes whatever the limit (memory already held).
    pub fn force_take(&self, n: usize) {
        self.used.fetch_add(n, Ordering::AcqRel);
    }

    /// Gives back `n` bytes charged by `take` or `try_take`.
    pub fn give(&self, n: usize) {
        if n > 0 {
            self.used.fetch_sub(n, Ordering::AcqRel);
            if self.waiters.load(Ordering::Acquire) > 0 {
                self.released.notify_waiters();
            }
        }
    }
}

/// What one connection has charged; given back when dropped.
#[derive(Debug)]
pub struct Charge<'a> {
    budget: &'a Budget,
    held: usize,
}

impl<'a> Charge<'a> {
    pub fn new(budget: &'a Budget) -> Charge<'a> {
        Charge { budget, held: 0 }
    }

    pub fn budget(&self) -> &'a Budget {
        self.budget
    }

    /// Bytes charged now.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Charges `n` more bytes before an allocation, waiting as
    /// [`Budget::take`] does. False: refused.
    pub async fn grow(&mut self, n: usize) -> bool {
        let granted = self.budget.take(n).await;
        if granted {
            self.held += n;
        }
        granted
    }

    /// Charges `n` more bytes if they fit now, without waiting. False: refused.
    pub fn try_grow(&mut self, n: usize) -> bool {
        let granted = self.budget.try_take(n);
        if granted {
            self.held += n;
        }
        granted
    }

    /// Records that the connection now holds `bytes` (its buffers' actual
    /// size after an allocation the budget granted or always allows).
    pub fn set(&mut self, bytes: usize) {
        if bytes > self.held {
            self.budget.force_take(bytes - self.held);
        } else {
            self.budget.give(self.held - bytes);
        }
        self.held = bytes;
    }
}

impl Drop for Charge<'_> {
    fn drop(&mut self) {
        self.budget.give(self.held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_up_to_the_limit_and_gives_back_on_drop() {
        let b = Budget::new(100, Duration::ZERO);
        assert!(b.try_take(60));
        assert!(!b.try_take(41));
        assert!(b.try_take(40));
        assert!(b.is_spent());
        b.give(100);
        let mut c = Charge::new(&b);
        c.set(70);
        assert_eq!(b.used(), 70);
        c.set(20);
        assert_eq!(b.used(), 20);
        drop(c);
        assert_eq!(b.used(), 0);
    }

    #[tokio::test]
    async fn a_waiter_gets_memory_given_back_meanwhile() {
        let b = std::sync::Arc::new(Budget::new(10, Duration::from_secs(30)));
        assert!(b.try_take(10));
        let waiter = {
            let b = b.clone();
            tokio::spawn(async move { b.take(5).await })
        };
        // The waiter can only finish once memory is given back.
        tokio::task::yield_now().await;
        b.give(10);
        assert!(waiter.await.unwrap());
        assert_eq!(b.used(), 5);
    }

    #[tokio::test]
    async fn a_waiter_is_refused_after_the_wait() {
        let b = Budget::new(10, Duration::from_millis(1));
        assert!(b.try_take(10));
        assert!(!b.take(1).await);
    }
}
