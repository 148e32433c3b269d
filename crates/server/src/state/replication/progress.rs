//! The master's view of each replica it streams to: what it sent, what the
//! replica acknowledged having applied, and so how far behind it is, in
//! records and in milliseconds. `stats` shows one group of
//! `repl_replica_<n>_*` lines per stream (as Redis's `slave<n>`), and
//! `/metrics` one series per replica.
//!
//! Every replica acknowledges each batch it applied with the master
//! timestamp of the batch's last update (`wire::ACK`). The master keeps,
//! per stream, the batches sent and not yet acknowledged (their last
//! timestamp and the running count of records sent up to them): an
//! acknowledgement of timestamp `t` retires every batch ending at or before
//! `t`, so the records acknowledged are counted exactly without the replica
//! sending counts of its own.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

/// Batches remembered per stream while unacknowledged. A replica that never
/// acknowledges must not grow the master's memory: past this, the newest
/// entry absorbs further batches (the count stays exact, the timestamp
/// granularity coarser).
const MAX_IN_FLIGHT: usize = 1024;

/// Microseconds since the epoch: the update log's clock.
pub fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// One replication stream's progress.
pub struct StreamProgress {
    /// The replica's address and its `--server-id`.
    pub peer: String,
    pub replica_id: u16,
    /// Whether the replica still reads (`liveness`).
    pub live: super::liveness::Liveness,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Records sent since the stream started.
    sent: u64,
    /// Records the replica acknowledged.
    acked: u64,
    /// The master timestamp of the last update acknowledged (0: none yet).
    acked_ts: u64,
    /// The timestamp of the first update not acknowledged (0: none sent).
    oldest_unacked_ts: u64,
    /// Records logged and not yet sent, as of the last batch.
    unsent: u64,
    /// Sent, unacknowledged batches: (first timestamp, last timestamp,
    /// records sent up to and including the batch).
    in_flight: VecDeque<(u64, u64, u64)>,
}

impl StreamProgress {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A batch of `records` updates spanning timestamps `first..=last` was
    /// sent; `unsent` records remain in the log after it.
    pub fn sent(&self, records: u64, first: u64, last: u64, unsent: u64) {
        let mut g = self.lock();
        g.unsent = unsent;
        if records == 0 {
            return;
        }
        g.sent += records;
        let sent = g.sent;
        if g.in_flight.is_empty() {
            g.oldest_unacked_ts = first;
        }
        let full = g.in_flight.len() >= MAX_IN_FLIGHT;
        match g.in_flight.back_mut() {
            Some(back) if full => {
                back.1 = last;
                back.2 = sent;
            }
            _ => g.in_flight.push_back((first, last, sent)),
        }
        // Already acknowledged, if the acknowledgement overtook the count.
        retire(&mut g);
    }

    /// The replica acknowledged every update up to timestamp `ts`.
    pub fn acked(&self, ts: u64) {
        let mut g = self.lock();
        g.acked_ts = g.acked_ts.max(ts);
        retire(&mut g);
    }

    /// Records the replica has yet to apply: sent and unacknowledged, plus
    /// those still in the log.
    pub fn lag_records(&self) -> u64 {
        let g = self.lock();
        g.sent - g.acked + g.unsent
    }

    /// How long the oldest update the replica has not applied has been
    /// waiting, in milliseconds (now minus its timestamp, both the master's
    /// clock, so a replica stuck on the last write still shows a growing
    /// lag); 0 when the replica has everything.
    pub fn lag_ms(&self) -> u64 {
        self.lag_ms_at(now_micros())
    }

    fn lag_ms_at(&self, now: u64) -> u64 {
        let g = self.lock();
        if g.sent == g.acked && g.unsent == 0 {
            return 0;
        }
        // Not yet sent: at least as old as the newest acknowledged update.
        let oldest = if g.oldest_unacked_ts != 0 {
            g.oldest_unacked_ts
        } else {
            g.acked_ts
        };
        now.saturating_sub(oldest) / 1000
    }

    fn stats(&self, n: usize, out: &mut Vec<(String, String)>) {
        let (sent, acked_ts) = {
            let g = self.lock();
            (g.sent, g.acked_ts)
        };
        let mut line = |field: &str, v: String| out.push((format!("repl_replica_{n}_{field}"), v));
        line("addr", self.peer.clone());
        line("server_id", self.replica_id.to_string());
        line("sent_records", sent.to_string());
        line("acked_timestamp", acked_ts.to_string());
        line("lag_records", self.lag_records().to_string());
        line("lag_ms", self.lag_ms().to_string());
    }
}

/// Retires the batches the replica has acknowledged.
fn retire(g: &mut Inner) {
    while let Some(&(_, last, sent)) = g.in_flight.front() {
        if last > g.acked_ts {
            break;
        }
        g.acked = sent;
        g.in_flight.pop_front();
    }
    g.oldest_unacked_ts = g.in_flight.front().map_or(0, |b| b.0);
}

/// The streams being served, in the order they started.
#[derive(Default)]
pub struct Progress {
    streams: Mutex<Vec<Arc<StreamProgress>>>,
}

impl Progress {
    fn lock(&self) -> MutexGuard<'_, Vec<Arc<StreamProgress>>> {
        self.streams.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new stream's record; `forget` it when the stream ends.
    pub fn register(
        &self,
        peer: String,
        replica_id: u16,
        live: super::liveness::Liveness,
    ) -> Arc<StreamProgress> {
        let p = Arc::new(StreamProgress {
            peer,
            replica_id,
            live,
            inner: Mutex::new(Inner::default()),
        });
        self.lock().push(p.clone());
        p
    }

    pub fn forget(&self, p: &Arc<StreamProgress>) {
        self.lock().retain(|s| !Arc::ptr_eq(s, p));
    }

    /// Ends the stream silent the longest, if it has been silent for
    /// `EVICT_AFTER`, and gives its slot back (counted down in `streams`).
    pub fn evict_silent(&self, streams: &std::sync::atomic::AtomicU64) -> bool {
        let victim = self
            .lock()
            .iter()
            .map(|s| (s.live.silent_for(), s.clone()))
            .filter(|(silent, _)| *silent >= super::liveness::EVICT_AFTER)
            .max_by_key(|(silent, _)| *silent);
        let Some((silent, s)) = victim else {
            return false;
        };
        tracing::warn!(
            "replication stream to {} ended: silent for {silent:?} while a new stream wanted its slot",
            s.peer
        );
        s.live.evict(streams)
    }

    /// `repl_replica_<n>_*` lines, one group per stream.
    pub fn stats(&self, out: &mut Vec<(String, String)>) {
        for (n, s) in self.lock().iter().enumerate() {
            s.stats(n, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detached() -> crate::state::replication::liveness::Liveness {
        crate::state::replication::liveness::Liveness::new(None, Arc::default())
    }

    fn stream() -> Arc<StreamProgress> {
        Progress::default().register("127.0.0.1:1".into(), 2, detached())
    }

    #[test]
    fn acknowledgements_retire_whole_batches() {
        let s = stream();
        s.sent(3, 10_000, 12_000, 5);
        s.sent(2, 13_000, 14_000, 3);
        assert_eq!(s.lag_records(), 8);
        // The oldest unapplied update has waited 10 ms at 20 ms.
        assert_eq!(s.lag_ms_at(20_000), 10);
        s.acked(12_000);
        assert_eq!(s.lag_records(), 5);
        assert_eq!(s.lag_ms_at(20_000), 7);
        // An acknowledgement inside a batch retires nothing more.
        s.acked(13_500);
        assert_eq!(s.lag_records(), 5);
        s.acked(14_000);
        assert_eq!(s.lag_records(), 3);
        // Only unsent records left: measured from the last acknowledged one.
        assert_eq!(s.lag_ms_at(20_000), 6);
        s.sent(3, 15_000, 20_000, 0);
        s.acked(20_000);
        assert_eq!((s.lag_records(), s.lag_ms_at(90_000)), (0, 0));
    }

    /// The replica may acknowledge a batch before the master has counted
    /// it as sent; it must not stay counted as unapplied.
    #[test]
    fn an_acknowledgement_that_overtakes_its_batch_still_counts() {
        let s = stream();
        s.acked(5_000);
        s.sent(4, 2_000, 5_000, 0);
        assert_eq!((s.lag_records(), s.lag_ms_at(90_000)), (0, 0));
        s.sent(1, 6_000, 6_000, 0);
        assert_eq!(s.lag_records(), 1);
    }

    #[test]
    fn a_replica_that_never_acknowledges_costs_bounded_memory() {
        let s = stream();
        for i in 0..(MAX_IN_FLIGHT as u64 * 3) {
            s.sent(2, i * 10 + 1, i * 10 + 2, 0);
        }
        assert_eq!(s.lock().in_flight.len(), MAX_IN_FLIGHT);
        assert_eq!(s.lag_records(), MAX_IN_FLIGHT as u64 * 6);
        // The absorbed batches are retired by an acknowledgement of the last.
        s.acked(MAX_IN_FLIGHT as u64 * 30);
        assert_eq!(s.lag_records(), 0);
    }

    #[test]
    fn stats_name_each_stream_by_its_place() {
        let progress = Progress::default();
        let a = progress.register("127.0.0.1:7".into(), 5, detached());
        let b = progress.register("127.0.0.1:8".into(), 6, detached());
        b.sent(4, 1_000, 2_000, 0);
        progress.forget(&a);
        let mut out = Vec::new();
        progress.stats(&mut out);
        let get = |k: &str| out.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("repl_replica_0_server_id"), Some("6"));
        assert_eq!(get("repl_replica_0_addr"), Some("127.0.0.1:8"));
        assert_eq!(get("repl_replica_0_lag_records"), Some("4"));
        assert_eq!(get("repl_replica_1_server_id"), None);
    }
}
