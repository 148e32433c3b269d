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
//! - a client with replies pending that reads nothing for [`Budget::wait`]
//!   while the budget is spent is closed ([`Charge::must_progress`]); one
//!   that reads, however slowly, is not.
//!
//! **One request larger than the budget** (a 1.5 GiB value with `-I 2g`
//! under the default 256 MiB): growth that does not fit within the limit
//! may take the *oversize admission* instead — one per server, for up to
//! twice a frame of `-I` ([`Budget::oversize_for_item`], the buffer doubling as it
//! fills). Its holder's whole charge moves there, so the limit's share
//! stays for everyone else, and it is given back as soon as what the
//! holder keeps fits within the limit again (its request read and stored,
//! its reply written). A second connection wanting it waits like any
//! other, then is refused "out of memory"; from then on the holder must
//! keep its client moving or be closed like a non-reader. So connection
//! memory stays within `--conn-memory` plus one frame of `-I` (twice that
//! in address space), whatever clients do.
//!
//! A read buffer up to 16 KiB and a batch of replies up to 64 KiB are not
//! charged (so small requests keep being served when the budget is spent,
//! and the common path touches no shared counter).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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
    /// Connections in [`Charge::grow`]; a release wakes them only if any,
    /// so the common path never touches `released`'s lock.
    waiters: AtomicUsize,
    /// The one admission beyond the limit (see the module's doc): taken by
    /// one connection at a time, for at most `oversize_max` bytes.
    oversize_taken: AtomicBool,
    /// Bytes its holder has charged to it (`stats`).
    oversize_bytes: AtomicUsize,
    oversize_max: usize,
    /// Someone was refused the oversize admission since it was taken: its
    /// holder must then keep its client moving (`Charge::must_progress`).
    oversize_wanted: AtomicBool,
    /// Connections refused (answered "out of memory", closed) for want of budget.
    pub refused: AtomicU64,
}

impl Budget {
    /// `oversize_max`: the most one connection may hold beyond the limit
    /// (`for_item_size`); 0 admits none.
    pub fn new(limit: usize, wait: Duration, oversize_max: usize) -> Budget {
        Budget {
            limit,
            used: AtomicUsize::new(0),
            wait,
            released: Notify::new(),
            waiters: AtomicUsize::new(0),
            oversize_taken: AtomicBool::new(false),
            oversize_bytes: AtomicUsize::new(0),
            oversize_max,
            oversize_wanted: AtomicBool::new(false),
            refused: AtomicU64::new(0),
        }
    }

    /// The oversize admission for requests of up to `max_item` bytes of
    /// value: the request's frame (value, key, header: `-I` + 1 MiB) in a
    /// read buffer that doubles as it fills, so up to twice that.
    pub fn oversize_for_item(max_item: u64) -> usize {
        let frame = usize::try_from(max_item)
            .unwrap_or(usize::MAX)
            .saturating_add(1 << 20);
        frame.saturating_mul(2)
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes charged now within the limit.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Bytes charged now in all, the oversize admission's included.
    pub fn held(&self) -> usize {
        self.used()
            .saturating_add(self.oversize_bytes.load(Ordering::Relaxed))
    }

    /// True when nothing more can be granted within the limit.
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

    /// Charges `n` bytes within the limit, waiting up to [`Budget::wait`]
    /// for them to be given back by others. False: still no room.
    pub async fn take(&self, n: usize) -> bool {
        self.try_take(n) || self.wait_for(|| self.try_take(n)).await
    }

    /// Charges `n` bytes whatever the limit (memory already held).
    pub fn force_take(&self, n: usize) {
        self.used.fetch_add(n, Ordering::AcqRel);
    }

    /// Gives back `n` bytes charged by `take` or `try_take`.
    pub fn give(&self, n: usize) {
        if n > 0 {
            self.used.fetch_sub(n, Ordering::AcqRel);
            self.wake();
        }
    }

    fn wake(&self) {
        if self.waiters.load(Ordering::Acquire) > 0 {
            self.released.notify_waiters();
        }
    }

    /// Takes the oversize admission for `bytes`, if free and big enough.
    /// When it is taken by another, says that it is wanted.
    fn claim_oversize(&self, bytes: usize) -> bool {
        if bytes > self.oversize_max {
            return false;
        }
        let claimed = self
            .oversize_taken
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if claimed {
            self.oversize_bytes.store(bytes, Ordering::Relaxed);
        } else {
            self.oversize_wanted.store(true, Ordering::Release);
        }
        claimed
    }

    fn release_oversize(&self) {
        self.oversize_bytes.store(0, Ordering::Relaxed);
        self.oversize_wanted.store(false, Ordering::Release);
        self.oversize_taken.store(false, Ordering::Release);
        self.wake();
    }

    /// Waits up to [`Budget::wait`] for `grant` to succeed, retrying it
    /// each time memory is given back. False: still refused.
    async fn wait_for(&self, mut grant: impl FnMut() -> bool) -> bool {
        self.waiters.fetch_add(1, Ordering::AcqRel);
        let deadline = tokio::time::Instant::now() + self.wait;
        let granted = loop {
            let released = self.released.notified();
            tokio::pin!(released);
            // Registered before the check, so a release in between is not missed.
            released.as_mut().enable();
            if grant() {
                break true;
            }
            if tokio::time::timeout_at(deadline, released).await.is_err() {
                break false;
            }
        };
        self.waiters.fetch_sub(1, Ordering::AcqRel);
        granted
    }
}

/// What one connection has charged; given back when dropped.
#[derive(Debug)]
pub struct Charge<'a> {
    budget: &'a Budget,
    held: usize,
    /// `held` is charged to the oversize admission, not within the limit.
    oversize: bool,
}

impl<'a> Charge<'a> {
    pub fn new(budget: &'a Budget) -> Charge<'a> {
        Charge {
            budget,
            held: 0,
            oversize: false,
        }
    }

    pub fn budget(&self) -> &'a Budget {
        self.budget
    }

    /// Bytes charged now.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Whether this connection holds the oversize admission.
    pub fn is_oversize(&self) -> bool {
        self.oversize
    }

    /// Charges `n` more bytes before an allocation, waiting up to
    /// [`Budget::wait`] for memory given back (or the oversize admission).
    /// False: refused.
    pub async fn grow(&mut self, n: usize) -> bool {
        if self.try_grow(n) {
            return true;
        }
        let budget = self.budget;
        budget.wait_for(|| self.try_grow(n)).await
    }

    /// Charges `n` more bytes if they fit now, within the limit or else in
    /// the oversize admission, without waiting. False: refused.
    pub fn try_grow(&mut self, n: usize) -> bool {
        let Some(total) = self.held.checked_add(n) else {
            return false;
        };
        let granted = if self.oversize {
            total <= self.budget.oversize_max
        } else {
            self.budget.try_take(n) || self.move_to_oversize(total)
        };
        if granted {
            self.set_held(total);
        }
        granted
    }

    /// Takes the oversize admission for `total` bytes, giving back what
    /// was charged within the limit.
    fn move_to_oversize(&mut self, total: usize) -> bool {
        if !self.budget.claim_oversize(total) {
            return false;
        }
        self.budget.give(self.held);
        self.oversize = true;
        true
    }

    /// Records `held` bytes, whichever way they are charged.
    fn set_held(&mut self, held: usize) {
        self.held = held;
        if self.oversize {
            self.budget.oversize_bytes.store(held, Ordering::Relaxed);
        }
    }

    /// Records that the connection now holds `bytes` (its buffers' actual
    /// size, after an allocation the budget granted or always allows).
    /// Growth is charged within the limit if it fits, else to the oversize
    /// admission if free, else over the limit. The oversize admission is
    /// given back once what is left fits within the limit.
    pub fn set(&mut self, bytes: usize) {
        if self.oversize {
            if bytes == 0 || self.budget.try_take(bytes) {
                self.oversize = false;
                self.held = bytes;
                self.budget.release_oversize();
            } else {
                self.set_held(bytes);
            }
        } else if bytes > self.held {
            let more = bytes - self.held;
            if !self.budget.try_take(more) && !self.move_to_oversize(bytes) {
                self.budget.force_take(more);
            }
            self.set_held(bytes);
        } else {
            self.budget.give(self.held - bytes);
            self.held = bytes;
        }
    }

    /// Whether a client that makes no progress reading its replies should
    /// be dropped: the budget is spent, or this connection holds the
    /// oversize admission and another connection wants it.
    pub fn must_progress(&self) -> bool {
        self.budget.is_spent()
            || (self.oversize && self.budget.oversize_wanted.load(Ordering::Acquire))
    }
}

impl Drop for Charge<'_> {
    fn drop(&mut self) {
        if self.oversize {
            self.budget.release_oversize();
        } else {
            self.budget.give(self.held);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_up_to_the_limit_and_gives_back_on_drop() {
        let b = Budget::new(100, Duration::ZERO, 0);
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
        let b = std::sync::Arc::new(Budget::new(10, Duration::from_secs(30), 0));
        assert!(b.try_take(10));
        let waiter = {
            let b = b.clone();
            tokio::spawn(async move {
                let mut c = Charge::new(&b);
                let granted = c.grow(5).await;
                std::mem::forget(c);
                granted
            })
        };
        // The waiter can only finish once memory is given back.
        tokio::task::yield_now().await;
        b.give(10);
        assert!(waiter.await.unwrap());
        assert_eq!(b.used(), 5);
    }

    #[tokio::test]
    async fn a_waiter_is_refused_after_the_wait() {
        let b = Budget::new(10, Duration::from_millis(1), 0);
        assert!(b.try_take(10));
        assert!(!Charge::new(&b).grow(1).await);
    }

    /// One connection at a time may hold more than the limit, up to the
    /// oversize bound; it leaves the limit's share to the others, and gives
    /// the admission back once what it holds fits within the limit again.
    #[test]
    fn one_oversize_admission_at_a_time() {
        let b = Budget::new(100, Duration::ZERO, 1000);
        let mut big = Charge::new(&b);
        assert!(big.try_grow(50));
        assert!(big.try_grow(500));
        assert!(big.is_oversize());
        assert_eq!((b.used(), b.held()), (0, 550));
        assert!(!b.is_spent(), "the others keep the limit's share");
        assert!(!big.try_grow(451), "over the oversize bound");
        assert!(!big.must_progress());
        let mut other = Charge::new(&b);
        assert!(!other.try_grow(200), "one admission at a time");
        assert!(big.must_progress(), "someone wants it");
        assert!(other.try_grow(100));
        big.set(10);
        assert!(big.is_oversize(), "10 bytes do not fit: the limit is spent");
        assert_eq!(b.held(), 110);
        drop(other);
        big.set(10);
        assert!(!big.is_oversize());
        assert_eq!((b.used(), b.held()), (10, 10));
        drop(big);
        assert_eq!(b.held(), 0);
        let mut again = Charge::new(&b);
        again.set(300);
        assert!(again.is_oversize());
        drop(again);
        assert_eq!(b.held(), 0);
    }
}
