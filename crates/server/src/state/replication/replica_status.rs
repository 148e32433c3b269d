//! What `stats` shows of a replica (`repl_*`), updated by its thread
//! (`crate::replication::replica`) and by `changemaster`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// What `stats` shows of the replica (`repl_*`).
#[derive(Default)]
pub struct Status {
    pub master: Mutex<String>,
    pub connected: AtomicBool,
    /// The master's server id, from its answer to `replicate`.
    pub master_id: AtomicU64,
    /// The master timestamp of the last update applied (the saved position).
    pub applied_ts: AtomicU64,
    /// Updates applied since start.
    pub applied: AtomicU64,
    /// The master's newest timestamp and its records not yet sent, as of
    /// the last batch.
    pub master_ts: AtomicU64,
    pub pending: AtomicU64,
    /// Connections made to the master since start.
    pub connects: AtomicU64,
    /// Why the last connection to the master that failed ended (`stats`
    /// shows it once one has).
    pub last_error: Mutex<String>,
    /// Bumped by `changemaster`: the connection in use ends, and the next
    /// one goes to `master` (none while it is empty: promoted).
    pub generation: AtomicU64,
    /// Microseconds to step the position back on the next connection
    /// (`changemaster --ts_skew`: the new master's clock may be behind).
    pub skew_us: AtomicU64,
}

impl Status {
    /// The master to follow now; empty when promoted.
    pub fn master(&self) -> String {
        self.master.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// `changemaster`: follow `master` (empty: none) from the current
    /// position stepped back by `skew_us`.
    pub fn change_master(&self, master: &str, skew_us: u64) {
        if let Ok(mut m) = self.master.lock() {
            master.clone_into(&mut m);
        }
        self.skew_us.store(skew_us, Relaxed);
        self.generation.fetch_add(1, Relaxed);
    }

    /// How far behind the master, in milliseconds of the master's clock
    /// (its newest write's timestamp minus the last applied one's): 0 when
    /// nothing is pending.
    pub fn lag_ms(&self) -> u64 {
        if self.pending.load(Relaxed) == 0 {
            return 0;
        }
        let (m, a) = (self.master_ts.load(Relaxed), self.applied_ts.load(Relaxed));
        m.saturating_sub(a) / 1000
    }

    pub fn stats(&self) -> Vec<(&'static str, String)> {
        let master = self.master();
        let n = |a: &AtomicU64| a.load(Relaxed).to_string();
        let mut v = vec![
            ("repl_master", master),
            (
                "repl_connected",
                u8::from(self.connected.load(Relaxed)).to_string(),
            ),
            ("repl_master_server_id", n(&self.master_id)),
            ("repl_applied_timestamp", n(&self.applied_ts)),
            ("repl_applied_records", n(&self.applied)),
            ("repl_lag_records", n(&self.pending)),
            ("repl_lag_ms", self.lag_ms().to_string()),
            ("repl_connects", n(&self.connects)),
        ];
        let last_error = self
            .last_error
            .lock()
            .map(|e| e.clone())
            .unwrap_or_default();
        if !last_error.is_empty() {
            v.push(("repl_last_error", last_error));
        }
        v
    }
}
