//! `--sync-replicas K`: a write is acknowledged to its client only once K
//! replicas have applied it, so that promoting one of them after the
//! master dies loses no acknowledged write.
//!
//! Each replica acknowledges every batch it applied (`replicate_ack` with
//! the master timestamp of its last update); the stream's ack reader
//! (`master.rs`) records it here. Before a connection sends a batch of
//! replies (`connection.rs`), it waits until K streams have acknowledged
//! the batch's last logged write, or `--sync-replicas-timeout`; a batch
//! that wrote nothing does not wait. Slow calls wait in `slow::Ticket::run`
//! and the `--kt-listen` port's binary and HTTP requests in `kt_port`. The
//! wait is skipped while fewer than K replicas are connected (the mode
//! falls back to asynchronous then, as MySQL's semi-sync does; counted in
//! `repl_sync_unguarded`), and a wait that times out is counted in
//! `repl_sync_timeouts`: only writes acknowledged otherwise are guaranteed.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;

pub struct SemiSync {
    pub replicas: usize,
    pub timeout: Duration,
    /// The acknowledged timestamp of each stream being served.
    acks: Mutex<Vec<Arc<AtomicU64>>>,
    acked: Notify,
    pub waits: AtomicU64,
    pub timeouts: AtomicU64,
    pub unguarded: AtomicU64,
}

impl SemiSync {
    pub fn new(replicas: usize, timeout: Duration) -> SemiSync {
        SemiSync {
            replicas,
            timeout,
            acks: Mutex::new(Vec::new()),
            acked: Notify::new(),
            waits: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
            unguarded: AtomicU64::new(0),
        }
    }

    /// A new stream's acknowledgement slot; `forget` it when the stream ends.
    fn acks(&self) -> MutexGuard<'_, Vec<Arc<AtomicU64>>> {
        self.acks.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn register(&self) -> Arc<AtomicU64> {
        let slot = Arc::new(AtomicU64::new(0));
        self.acks().push(slot.clone());
        slot
    }

    pub fn forget(&self, slot: &Arc<AtomicU64>) {
        self.acks().retain(|s| !Arc::ptr_eq(s, slot));
        self.acked.notify_waiters();
    }

    /// A replica acknowledged `ts` on `slot`.
    pub fn ack(&self, slot: &AtomicU64, ts: u64) {
        slot.fetch_max(ts, Relaxed);
        self.acked.notify_waiters();
    }

    /// (streams connected, streams that acknowledged `ts`).
    fn count(&self, ts: u64) -> (usize, usize) {
        let acks = self.acks();
        let done = acks.iter().filter(|a| a.load(Relaxed) >= ts).count();
        (acks.len(), done)
    }

    /// Waits until `replicas` streams have acknowledged the update with
    /// timestamp `target` (see the module's notes for when it does not wait).
    pub async fn wait(&self, target: u64) {
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut counted = false;
        loop {
            // Registered before counting, so an ack in between is not missed.
            let acked = self.acked.notified();
            tokio::pin!(acked);
            acked.as_mut().enable();
            let (connected, done) = self.count(target);
            if done >= self.replicas {
                return;
            }
            if connected < self.replicas {
                self.unguarded.fetch_add(1, Relaxed);
                return;
            }
            if !counted {
                self.waits.fetch_add(1, Relaxed);
                counted = true;
            }
            if tokio::time::timeout_at(deadline, acked).await.is_err() {
                self.timeouts.fetch_add(1, Relaxed);
                return;
            }
        }
    }

    pub fn stats(&self) -> Vec<(&'static str, String)> {
        vec![
            ("repl_sync_replicas", self.replicas.to_string()),
            // Streams whose acknowledgements count (a stream is counted in
            // `repl_streams` a moment before it is here).
            ("repl_sync_connected", self.acks().len().to_string()),
            ("repl_sync_waits", self.waits.load(Relaxed).to_string()),
            (
                "repl_sync_timeouts",
                self.timeouts.load(Relaxed).to_string(),
            ),
            (
                "repl_sync_unguarded",
                self.unguarded.load(Relaxed).to_string(),
            ),
        ]
    }
}
