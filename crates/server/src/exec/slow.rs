//! Slow RPC calls (hard synchronize, backup, rebuild, vacuum and the key
//! searches) run on threads of their own, never on the worker threads, and
//! within bounds, so that no client can stall the others or queue work
//! without limit (issue 12, item 10; docs/reliability.md "Slow calls"):
//!
//! - a connection may have [`PER_CONNECTION`] slow calls queued or running,
//!   the whole server [`SERVER_WIDE`]; a call beyond either is answered at
//!   once with a "busy" error (a notification beyond them is dropped), and
//!   counted in `stats` as `slow_calls_rejected`;
//! - a search pattern is at most [`MAX_PATTERN`] bytes, a compiled regex at
//!   most [`REGEX_SIZE_LIMIT`], and a search stops with an error once it has
//!   run `--search-timeout` seconds (`slow_calls_timed_out`);
//! - `-W` of them run at once, each on a thread of its own at a lower CPU
//!   priority (nice +10), so that under CPU contention the worker threads
//!   answering quick requests come first, and tokio's blocking pool stays
//!   free for the server's own syncs, delayed flushes and its final close;
//! - once the server is stopping, a queued call is dropped without running
//!   and a running search stops at its next poll (about a millisecond).
//!
//! `stats` shows `slow_calls_queued` and `slow_calls_running`.

use crate::state::counters as stats;
use crate::state::server::Server;
use memstored_engine::search::{SearchLimits, INTERRUPTED};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// Why a slow call was not run or did not finish: each protocol turns it
/// into its own error (`From<SlowError>` for the RPC error).
#[derive(Debug, thiserror::Error)]
pub enum SlowError {
    /// Over the per-connection or the server-wide bound.
    #[error("{0}")]
    Busy(String),
    /// The server is stopping: a queued call never runs, a search stops.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// No thread could be started, or the work panicked.
    #[error("{0}")]
    Failed(String),
    /// A search ran out of `--search-timeout`.
    #[error("{0}")]
    TimedOut(String),
    /// An argument over a bound (a pattern's length).
    #[error("{0}")]
    Invalid(String),
    /// The engine refused or failed.
    #[error(transparent)]
    Engine(#[from] memstored_engine::Error),
}

/// Slow calls one connection may have queued or running.
pub const PER_CONNECTION: usize = 16;
/// Slow calls the whole server may have queued or running.
pub const SERVER_WIDE: usize = 256;
/// The longest search pattern (regex, prefix, edit-distance origin) accepted:
/// edit distance costs the key length times this per key.
pub const MAX_PATTERN: usize = 4096;
/// The largest compiled regex (the regex crate's default is 10 MiB).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// The largest lazy-DFA cache of one regex (the regex crate's default is 2 MiB).
pub const REGEX_DFA_SIZE_LIMIT: usize = 1 << 20;

/// The slow calls of one connection, counted with the tasks that run them.
#[derive(Debug, Default)]
pub struct ConnSlots(Arc<AtomicUsize>);

impl ConnSlots {
    /// Admits one more slow call, or returns the "busy" error to answer.
    pub fn admit(&self, srv: &Arc<Server>) -> Result<Ticket, SlowError> {
        let busy = |why: String| {
            stats::bump(&srv.counters.slow_calls_rejected);
            Err(SlowError::Busy(why))
        };
        if self.0.load(Relaxed) >= PER_CONNECTION {
            return busy(format!(
                "busy: this connection already has {PER_CONNECTION} slow calls queued or running; \
                 wait for their answers"
            ));
        }
        let admitted = srv
            .slow
            .admitted
            .fetch_update(Relaxed, Relaxed, |n| (n < SERVER_WIDE).then_some(n + 1));
        if admitted.is_err() {
            return busy(format!(
                "busy: the server already has {SERVER_WIDE} slow calls queued or running; retry later"
            ));
        }
        self.0.fetch_add(1, Relaxed);
        stats::bump(&srv.counters.slow_calls_queued);
        Ok(Ticket {
            srv: srv.clone(),
            conn: self.0.clone(),
            running: false,
        })
    }
}

/// One admitted slow call; gives its place back when dropped.
pub struct Ticket {
    srv: Arc<Server>,
    conn: Arc<AtomicUsize>,
    running: bool,
}

impl Ticket {
    /// Waits for one of the `-W` permits, then runs `work` on a thread of
    /// its own. A call still waiting when the server starts stopping is
    /// dropped without running.
    pub async fn run<T: Send + 'static, E: From<SlowError> + Send + 'static>(
        mut self,
        work: impl FnOnce() -> Result<T, E> + Send + 'static,
    ) -> Result<T, E> {
        let srv = self.srv.clone();
        let mut stop = srv.shutdown.clone();
        let _permit = tokio::select! {
            biased;
            Ok(_) = stop.wait_for(|stopping| *stopping) => return Err(SlowError::ShuttingDown.into()),
            p = srv.slow.threads.acquire() => p.map_err(|_| SlowError::ShuttingDown)?,
        };
        let c = &srv.counters;
        stats::bump(&c.slow_calls_running);
        c.slow_calls_queued.fetch_sub(1, Relaxed);
        self.running = true;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("memstored-slow".into())
            .spawn(move || {
                background_priority();
                memstored_engine::ulog::take_last_appended();
                let result = work();
                let _ = tx.send((result, memstored_engine::ulog::take_last_appended()));
            });
        if let Err(e) = spawned {
            let why = format!("cannot start a thread for the call: {e}");
            return Err(SlowError::Failed(why).into());
        }
        // The sender is dropped without a send only if `work` panicked.
        let Ok((result, wrote)) = rx.await else {
            return Err(SlowError::Failed("the procedure failed".into()).into());
        };
        // The answer waits for the replicas as a quick call's does
        // (--sync-replicas), with the writes made on the call's thread.
        srv.replication.before_replies(wrote).await;
        result
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let c = &self.srv.counters;
        let gauge: &AtomicU64 = if self.running {
            &c.slow_calls_running
        } else {
            &c.slow_calls_queued
        };
        gauge.fetch_sub(1, Relaxed);
        self.srv.slow.admitted.fetch_sub(1, Relaxed);
        self.conn.fetch_sub(1, Relaxed);
    }
}

/// Lowers the calling thread's CPU priority to nice +10. On Linux a
/// thread's nice value is its own (`setpriority` on its thread id); failing
/// leaves it at the default, which costs nothing but the preference.
fn background_priority() {
    // SAFETY: gettid and setpriority take and return plain integers.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

fn stopping(srv: &Server) -> bool {
    *srv.shutdown.borrow()
}

/// Refuses a search pattern over [`MAX_PATTERN`] bytes.
pub fn check_pattern(pattern: &[u8]) -> Result<&[u8], SlowError> {
    if pattern.len() > MAX_PATTERN {
        return Err(SlowError::Invalid(format!(
            "a search pattern of {} bytes exceeds the limit of {MAX_PATTERN} bytes",
            pattern.len()
        )));
    }
    Ok(pattern)
}

/// Runs one engine search within the server's limits: the regex caps, and a
/// deadline `--search-timeout` from now that also gives way to a shutdown.
pub fn search<T>(
    srv: &Server,
    f: impl FnOnce(&SearchLimits<'_>) -> memstored_engine::Result<T>,
) -> Result<T, SlowError> {
    let timeout = srv.cfg.search_timeout;
    let deadline = Instant::now() + timeout;
    let interrupt = || Instant::now() >= deadline || stopping(srv);
    let limits = SearchLimits {
        regex_size_limit: REGEX_SIZE_LIMIT,
        regex_dfa_size_limit: REGEX_DFA_SIZE_LIMIT,
        interrupt: Some(&interrupt),
    };
    match f(&limits) {
        Ok(v) => Ok(v),
        Err(memstored_engine::Error::Infeasible(why)) if why == INTERRUPTED => {
            if stopping(srv) {
                return Err(SlowError::ShuttingDown);
            }
            stats::bump(&srv.counters.slow_calls_timed_out);
            Err(SlowError::TimedOut(format!(
                "search stopped: its time budget of {:.1} s (--search-timeout) ran out; \
                     narrow the pattern or raise the budget",
                timeout.as_secs_f64()
            )))
        }
        Err(e) => Err(SlowError::Engine(e)),
    }
}
