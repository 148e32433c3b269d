//! Server counters: relaxed atomics, per-request ones striped per thread.
//! Only `command/` bumps the per-request counters (the layering check keeps it so).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Counters bumped on every request. Each thread bumps its own copy (one
/// of `STRIPES`, each on cache lines of its own) and `stats` sums them, so
/// no line is written by all workers on the hot path: with one shared copy
/// every request on every core would pull the same lines back and forth.
#[derive(Debug, Default)]
pub struct RequestCounters {
    pub cmd_get: AtomicU64,
    pub cmd_set: AtomicU64,
    pub cmd_flush: AtomicU64,
    pub cmd_touch: AtomicU64,
    /// memcached's `cmd_meta`: `me` requests (the one meta command it counts).
    pub cmd_meta: AtomicU64,
    pub get_hits: AtomicU64,
    pub get_misses: AtomicU64,
    pub get_expired: AtomicU64,
    pub delete_hits: AtomicU64,
    pub delete_misses: AtomicU64,
    pub incr_hits: AtomicU64,
    pub incr_misses: AtomicU64,
    pub decr_hits: AtomicU64,
    pub decr_misses: AtomicU64,
    pub cas_hits: AtomicU64,
    pub cas_misses: AtomicU64,
    pub cas_badval: AtomicU64,
    pub touch_hits: AtomicU64,
    pub touch_misses: AtomicU64,
    /// Stores refused for size: over `-I`, or more than the cache holds.
    pub store_too_large: AtomicU64,
    /// Stores refused for memory: the connection buffers' budget was spent.
    pub store_no_memory: AtomicU64,
    pub total_items: AtomicU64,
    pub bytes_read: AtomicU64,
    pub bytes_written: AtomicU64,
}

impl RequestCounters {
    fn all(&self) -> [&AtomicU64; 24] {
        [
            &self.cmd_get,
            &self.cmd_set,
            &self.cmd_flush,
            &self.cmd_touch,
            &self.cmd_meta,
            &self.get_hits,
            &self.get_misses,
            &self.get_expired,
            &self.delete_hits,
            &self.delete_misses,
            &self.incr_hits,
            &self.incr_misses,
            &self.decr_hits,
            &self.decr_misses,
            &self.cas_hits,
            &self.cas_misses,
            &self.cas_badval,
            &self.touch_hits,
            &self.touch_misses,
            &self.store_too_large,
            &self.store_no_memory,
            &self.total_items,
            &self.bytes_read,
            &self.bytes_written,
        ]
    }
}

/// Copies of [`RequestCounters`]: threads beyond this many share copies
/// (still correct, only contended again). A power of two.
const STRIPES: usize = 16;

/// One copy, aligned so that no two copies share a cache line (128 bytes:
/// adjacent-line prefetch pulls pairs of 64-byte lines).
#[derive(Debug, Default)]
#[repr(align(128))]
struct Stripe(RequestCounters);

static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's copy, handed out round-robin on first use.
    static MY_STRIPE: usize = NEXT_STRIPE.fetch_add(1, Relaxed) % STRIPES;
}

/// One counter per memcached stat name; all relaxed atomics. Per-request
/// counters are striped per thread (`here`, `sum`); connection and
/// authentication counters and gauges, bumped far less often, are shared.
#[derive(Debug)]
pub struct Counters {
    pub curr_connections: AtomicU64,
    /// Of `curr_connections`, those of the Kyoto Tycoon port (its own `-c`).
    pub kt_connections: AtomicU64,
    /// Of `curr_connections`, those of the gRPC port (its own `-c`).
    pub grpc_connections: AtomicU64,
    pub total_connections: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub auth_cmds: AtomicU64,
    pub auth_errors: AtomicU64,
    /// RPC slow calls waiting for a blocking thread (a gauge; `slow.rs`).
    pub slow_calls_queued: AtomicU64,
    /// RPC slow calls running on a blocking thread (a gauge).
    pub slow_calls_running: AtomicU64,
    /// Slow calls refused as busy (per-connection or server-wide bound).
    pub slow_calls_rejected: AtomicU64,
    /// Searches stopped by `--search-timeout`.
    pub slow_calls_timed_out: AtomicU64,
    stripes: Box<[Stripe]>,
}

impl Default for Counters {
    fn default() -> Counters {
        Counters {
            curr_connections: AtomicU64::new(0),
            kt_connections: AtomicU64::new(0),
            grpc_connections: AtomicU64::new(0),
            total_connections: AtomicU64::new(0),
            rejected_connections: AtomicU64::new(0),
            auth_cmds: AtomicU64::new(0),
            auth_errors: AtomicU64::new(0),
            slow_calls_queued: AtomicU64::new(0),
            slow_calls_running: AtomicU64::new(0),
            slow_calls_rejected: AtomicU64::new(0),
            slow_calls_timed_out: AtomicU64::new(0),
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
        }
    }
}

impl Counters {
    /// The calling thread's copy of the per-request counters: bump these.
    #[inline]
    pub fn here(&self) -> &RequestCounters {
        let i = MY_STRIPE.with(|i| *i);
        &self.stripes[i % self.stripes.len()].0
    }

    /// Zeroes every thread's copy of the per-request counters (`stats reset`).
    pub fn reset_requests(&self) {
        for s in self.stripes.iter() {
            for a in s.0.all() {
                a.store(0, Relaxed);
            }
        }
    }

    /// One per-request counter summed over every thread's copy.
    pub fn sum(&self, field: impl Fn(&RequestCounters) -> &AtomicU64) -> u64 {
        self.stripes
            .iter()
            .map(|s| field(&s.0).load(Relaxed))
            .fold(0u64, u64::wrapping_add)
    }
}

/// Adds one to a counter.
#[inline]
pub fn bump(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

/// Adds `n` to a counter.
#[inline]
pub fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bumps from many threads land in their own copies and all count.
    #[test]
    fn striped_counters_sum_every_threads_bumps() {
        let c = Counters::default();
        std::thread::scope(|s| {
            for _ in 0..(STRIPES + 3) {
                s.spawn(|| {
                    for _ in 0..1000 {
                        bump(&c.here().cmd_get);
                    }
                    add(&c.here().bytes_read, 7);
                });
            }
        });
        assert_eq!(c.sum(|r| &r.cmd_get), 1000 * (STRIPES as u64 + 3));
        assert_eq!(c.sum(|r| &r.bytes_read), 7 * (STRIPES as u64 + 3));
        // More than one copy was used.
        let used = c
            .stripes
            .iter()
            .filter(|s| s.0.cmd_get.load(Relaxed) > 0)
            .count();
        assert!(used > 1, "{used}");
    }

    #[test]
    fn a_copy_owns_its_cache_lines() {
        assert_eq!(std::mem::align_of::<Stripe>(), 128);
        assert_eq!(std::mem::size_of::<Stripe>() % 128, 0);
    }
}
