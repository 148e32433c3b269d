//! memcached's per-item access state: whether an item has been fetched since
//! it was stored (`ITEM_FETCHED`) and when it was last accessed (`it->time`),
//! which meta `mg` reports as `h` and `l`, `me` as `fetch=` and `la=`, and
//! `lru_crawler metadump` as `fetch=` and `la=`.
//!
//! Why a packed 32-bit word: the capped cache keeps it in every item, beside
//! its CLOCK reference bit, in what used to be the padding after that bit, so
//! an item costs no more than before. Times are seconds since this process's
//! clock started (memcached's `current_time`), so 30 bits last 34 years.
//!
//! How a fetch changes the state follows memcached 1.6's segmented LRU
//! (`do_item_bump`): the first fetch after a store only sets the fetched bit
//! and leaves the access time at the store; later fetches set the access
//! time to now. (memcached skips that while an item is "active", a state its
//! LRU maintainer clears within about a second; memstored has no maintainer
//! and always bumps, which differs from memcached by at most that second.)

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// An item's access state as a fetch found it (before the fetch changed it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Fetched at least once since it was stored (memcached's `h1`, `fetch=yes`).
    pub fetched: bool,
    /// When it was stored or last bumped, in [`clock`] seconds.
    pub last_access: u32,
}

impl Access {
    /// Seconds since the last access (meta `l`, `me`'s `la=`).
    pub fn idle_secs(&self) -> u32 {
        clock().saturating_sub(self.last_access)
    }

    /// The last access as Unix seconds (`lru_crawler metadump`'s `la=`).
    pub fn last_access_unix(&self) -> u64 {
        (epoch().unix + u64::from(self.last_access)).saturating_sub(START)
    }
}

struct Epoch {
    /// The monotonic clock's reading, in seconds, when the epoch was taken.
    mono: u64,
    /// The Unix time then.
    unix: u64,
}

fn epoch() -> &'static Epoch {
    static EPOCH: OnceLock<Epoch> = OnceLock::new();
    EPOCH.get_or_init(|| Epoch {
        mono: monotonic_secs(),
        unix: crate::record::now_secs(),
    })
}

/// Whole seconds of a monotonic clock. On Linux the coarse clock: a read of
/// the vDSO page, no system call and no TSC read, which matters because
/// every cache hit reads it.
#[cfg(target_os = "linux")]
fn monotonic_secs() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    if rc == 0 {
        u64::try_from(ts.tv_sec).unwrap_or(0)
    } else {
        fallback_secs()
    }
}

#[cfg(not(target_os = "linux"))]
fn monotonic_secs() -> u64 {
    fallback_secs()
}

fn fallback_secs() -> u64 {
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs()
}

/// The clock's value at its epoch. Not 0, so that a time of 0 always lies
/// in the past (memcached starts `current_time` above 0 for the same reason).
const START: u64 = 2;

/// Low bits of the packed word: the access time.
pub(crate) const TIME_MASK: u32 = (1 << 30) - 1;
/// The fetched-since-stored bit.
pub(crate) const FETCHED: u32 = 1 << 30;
/// The cache's CLOCK reference bit (set on every read, cleared by the hand).
pub(crate) const REFERENCED: u32 = 1 << 31;

/// Seconds since this process's access clock started (memcached's
/// `current_time`); saturates after 34 years.
#[inline]
pub fn clock() -> u32 {
    let secs = monotonic_secs().saturating_sub(epoch().mono) + START;
    u32::try_from(secs).unwrap_or(TIME_MASK).min(TIME_MASK)
}

/// An item's access state and its cache reference bit in one word, updated
/// with relaxed atomics under the shard's read lock. Two readers racing may
/// both write; each writes "fetched, accessed now", so nothing is lost that
/// matters.
#[derive(Debug)]
pub(crate) struct AccessWord(AtomicU32);

impl AccessWord {
    /// A just stored item: not fetched, accessed now.
    pub(crate) fn stored(referenced: bool) -> Self {
        let r = if referenced { REFERENCED } else { 0 };
        AccessWord(AtomicU32::new(clock() | r))
    }

    /// The packed word (`REFERENCED`, `FETCHED`, the time), for a table
    /// that keeps it in fewer bits (the segment cache's slots).
    pub(crate) fn bits(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    /// The state without changing it.
    pub(crate) fn peek(&self) -> Access {
        unpack(self.0.load(Ordering::Relaxed))
    }

    /// Gives the item back the state `a` (after an in-place update), and
    /// references it.
    pub(crate) fn restore(&self, a: Access) {
        let fetched = if a.fetched { FETCHED } else { 0 };
        self.0.store(
            REFERENCED | fetched | (a.last_access & TIME_MASK),
            Ordering::Relaxed,
        );
    }

    /// Sets the reference bit (a read that is not a client's fetch).
    #[inline]
    pub(crate) fn reference(&self) {
        let w = self.0.load(Ordering::Relaxed);
        if w & REFERENCED == 0 {
            self.0.fetch_or(REFERENCED, Ordering::Relaxed);
        }
    }

    /// Clears the reference bit; true when it was set (the CLOCK hand).
    pub(crate) fn take_reference(&self) -> bool {
        self.0.fetch_and(!REFERENCED, Ordering::Relaxed) & REFERENCED != 0
    }

    /// A client's fetch: returns the state before it and, with `bump`,
    /// records it (see the module doc). Writes only when the word changes,
    /// so repeated hits in the same second leave the cache line clean.
    #[inline]
    pub(crate) fn fetch(&self, bump: bool) -> Access {
        let old = self.0.load(Ordering::Relaxed);
        if bump {
            let new = bumped(old, clock());
            if new != old {
                self.0.store(new, Ordering::Relaxed);
            }
        } else {
            self.reference();
        }
        unpack(old)
    }
}

/// The packed word after a client's fetch that bumps (module doc): the
/// first one sets the fetched bit, later ones move the time to `now`.
pub(crate) fn bumped(old: u32, now: u32) -> u32 {
    if old & FETCHED == 0 {
        old | FETCHED | REFERENCED
    } else {
        (old & !TIME_MASK) | REFERENCED | (now & TIME_MASK)
    }
}

/// What a packed word says.
pub(crate) fn unpack(w: u32) -> Access {
    Access {
        fetched: w & FETCHED != 0,
        last_access: w & TIME_MASK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fetch_sets_the_bit_and_keeps_the_time() {
        let w = AccessWord::stored(false);
        let before = w.fetch(true);
        assert!(!before.fetched);
        let after = w.peek();
        assert!(after.fetched);
        assert_eq!(after.last_access, before.last_access);
        assert!(w.take_reference(), "a fetch references the item");
        assert!(!w.take_reference());
    }

    #[test]
    fn a_fetch_without_bump_changes_nothing_but_the_reference() {
        let w = AccessWord::stored(false);
        assert!(!w.fetch(false).fetched);
        assert!(!w.peek().fetched);
        assert!(w.take_reference());
    }

    #[test]
    fn later_fetches_move_the_time_to_now() {
        let w = AccessWord(AtomicU32::new(FETCHED)); // fetched at clock 0
        let now = clock();
        assert!(now >= START as u32);
        assert_eq!(w.fetch(true).last_access, 0);
        assert!(w.peek().last_access >= now);
        assert!(w.peek().fetched);
    }

    #[test]
    fn idle_seconds_count_from_the_last_access() {
        let a = Access {
            fetched: false,
            last_access: 0,
        };
        assert_eq!(a.idle_secs(), clock());
        assert!(a.idle_secs() >= START as u32);
        let b = Access {
            fetched: false,
            last_access: clock(),
        };
        assert!(b.last_access_unix().abs_diff(crate::record::now_secs()) <= 1);
    }
}
