//! Replication's shared state (issue 18): the update log a master streams,
//! the streams being served and their places, a replica's status, and the
//! semi-synchronous gate. Data only: the streams and the replica thread
//! live in `crate::replication`, which fills these in; connections read them
//! and get the gate's wait and the stream hand-over as values.

pub mod liveness;
pub mod progress;
pub mod replica_status;
pub mod semisync;

use memstored_engine::ulog::UpdateLog;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

/// Replication state shared by the server's connections.
#[derive(Default)]
pub struct Replication {
    /// The server's update log (`--ulog-dir`); what `replicate` streams.
    pub ulog: OnceLock<Arc<UpdateLog>>,
    /// Set on a replica (`--replicate-from`).
    pub replica: OnceLock<Arc<replica_status::Status>>,
    /// `--replica-writable`: clients may write while it follows a master.
    pub replica_writable: AtomicBool,
    /// Replication streams being served now (this server as a master).
    pub streams: Arc<AtomicU64>,
    /// Streams served since start.
    pub streams_total: AtomicU64,
    /// What each stream being served sent and had acknowledged (its lag).
    pub progress: progress::Progress,
    /// `--sync-replicas`, when given.
    pub semi: OnceLock<semisync::SemiSync>,
}

impl Replication {
    /// Why a stream from `min_ts` cannot be served: retention removed updates
    /// at or after it, which the replica would silently miss.
    pub fn gap(&self, min_ts: u64) -> Option<String> {
        let log = self.ulog.get()?;
        log.has_gap_before(min_ts).then(|| {
            format!(
                "the update log no longer holds the updates from timestamp {min_ts} \
                 (removed up to {} by --ulog-keep): seed this replica from a backup",
                log.dropped_until()
            )
        })
    }

    /// Called by a connection before it sends a batch of replies, with the
    /// timestamp of the batch's last logged write (0: it wrote nothing): with
    /// `--sync-replicas`, waits for the replicas to have it (`semisync`).
    pub async fn before_replies(&self, wrote: u64) {
        if wrote == 0 {
            return;
        }
        if let Some(semi) = self.semi.get() {
            // The streams read what the log has handed to the OS: without this
            // the batch's own records would wait for someone else's flush, and
            // a lone writer would wait out the whole timeout on every write.
            if let Some(log) = self.ulog.get() {
                if let Err(e) = log.flush() {
                    tracing::error!("handing the update log to the OS failed: {e}");
                }
            }
            semi.wait(wrote).await;
        }
    }

    /// `stats` lines: `repl_*`.
    pub fn stats(&self) -> Vec<(String, String)> {
        let mut v = Vec::new();
        if self.ulog.get().is_some() {
            v.push(("repl_streams", self.streams.load(Relaxed).to_string()));
            v.push((
                "repl_streams_total",
                self.streams_total.load(Relaxed).to_string(),
            ));
        }
        let mut v: Vec<(String, String)> = v.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        self.progress.stats(&mut v);
        let own = |(k, v): (&str, String)| (k.to_string(), v);
        if let Some(r) = self.replica.get() {
            v.extend(r.stats().into_iter().map(own));
        }
        if let Some(s) = self.semi.get() {
            v.extend(s.stats().into_iter().map(own));
        }
        v
    }
}

/// At most this many replication streams at once: each costs two threads
/// and a batch buffer, so a client calling `replicate` on many connections
/// must not turn `-c` into thousands of threads.
pub const MAX_STREAMS: u64 = 32;

/// A `replicate` call accepted by the RPC session, to be served once the
/// connection hands its socket over.
#[derive(Debug)]
pub struct StreamRequest {
    pub wire: Wire,
    /// The first timestamp wanted (ours, microseconds).
    pub min_ts: u64,
    pub replica_id: u16,
    /// The stream's place under `MAX_STREAMS`, held until it ends.
    pub slot: StreamSlot,
}

/// Which protocol asked for the stream.
#[derive(Debug, Clone, Copy)]
pub enum Wire {
    /// MessagePack-RPC `replicate` (`wire`), answered under `msgid`.
    Rpc { msgid: u32 },
    /// Kyoto Tycoon's binary command 0xB1 (`kt_stream`); `white`: only the
    /// updates of the requester's server id.
    Kt { white: bool },
}

/// One of the `MAX_STREAMS` places, counted in `repl_streams`; given back
/// when dropped, whichever way the stream ends (or fails to start), or
/// earlier when a new stream evicts this silent one (`liveness`).
pub struct StreamSlot {
    /// `Replication::streams`, given one back when the place is.
    streams: Arc<AtomicU64>,
    /// Set once the place is given back (by whichever comes first).
    pub released: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for StreamSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StreamSlot")
    }
}

impl StreamSlot {
    /// A place for one more stream, or `None` when `MAX_STREAMS` run and
    /// none of them is silent (one silent for `liveness::EVICT_AFTER` is
    /// ended and gives its place up), so that streams that do not read
    /// cannot hold every place.
    pub fn take(r: &Replication) -> Option<StreamSlot> {
        let grab = || {
            r.streams
                .fetch_update(Relaxed, Relaxed, |n| (n < MAX_STREAMS).then_some(n + 1))
                .is_ok()
        };
        let taken = grab() || (r.progress.evict_silent(&r.streams) && grab());
        taken.then(|| StreamSlot {
            streams: r.streams.clone(),
            released: Arc::default(),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if !self.released.swap(true, Relaxed) {
            self.streams.fetch_sub(1, Relaxed);
        }
    }
}
