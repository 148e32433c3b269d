//! Replicate: this server's update log as Tkrzw-RPC's server stream, what a
//! `tkrzw_server --repl_master` replica (or a memstored one started so)
//! follows.
//!
//! As tkrzw_server answers it: FAILED_PRECONDITION "disabled update
//! logging" without `--ulog-dir`, INVALID_ARGUMENT "self server ID" for
//! the master's own id; then a first message `OP_NOOP` carrying the
//! master's server id, then one message per logged change from
//! `min_timestamp` on (those logged under the replica's id skipped), and,
//! whenever nothing new came within the request's `wait_time`, a message
//! with status INFEASIBLE_ERROR and the timestamp the replica is now
//! complete up to (its position moves while nothing is written).
//!
//! Timestamps on this wire are Tkrzw's, milliseconds; the log's are
//! microseconds: a replica resuming from a millisecond receives again the
//! changes of that millisecond it already has, which replay to the same
//! state, as with tkrzw_server, whose timestamps are milliseconds too.
//! Only keys and values travel (Tkrzw's records have no flags or expiry):
//! memcached items replicated this way lose both; `--replicate-from` keeps
//! them.
//!
//! The log is read on a thread of its own (file I/O, and a replica far
//! behind must not hold a worker), which hands one message at a time to
//! tonic through a small channel: what the replica has not taken stays in
//! the log. A replica that takes nothing for `STALL` is dropped; while every
//! stream place is taken, one silent for `EVICT_AFTER` gives its place up.

use super::pb::replicate_response::OpType;
use super::pb::{ReplicateRequest, ReplicateResponse, StatusProto};
use crate::state::replication::liveness::{Liveness, STALL};
use crate::state::replication::progress::StreamProgress;
use crate::state::replication::StreamSlot;
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::status::code;
use memstored_engine::ulog::{UlogOp, Update, UpdateLog};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tonic::Status;

/// Messages queued for tonic ahead of what the replica has read.
const QUEUE: usize = 8;
/// The longest `wait_time` honoured (tkrzw_server's own bound), and the
/// shortest: a replica asking for 0 would otherwise get a heartbeat per
/// round trip.
const MAX_WAIT: Duration = Duration::from_secs(5);
const MIN_WAIT: Duration = Duration::from_millis(50);
/// Changes sent between two looks at the shutdown flag and its place, and
/// between two counts of the stream's progress.
const PASS: u64 = 1024;
/// How often a waiting stream looks at the shutdown flag and its place.
const POLL: Duration = Duration::from_millis(100);

/// Starts the stream for `req` from `peer`: the messages arrive on the
/// receiver; `Err` is the refusal tkrzw_server would answer.
pub fn start(
    srv: &Arc<Server>,
    req: &ReplicateRequest,
    peer: String,
) -> Result<mpsc::Receiver<Result<ReplicateResponse, Status>>, Status> {
    let Some(log) = srv.replication.ulog.get().cloned() else {
        return Err(Status::failed_precondition("disabled update logging"));
    };
    let own = log.options().server_id;
    if req.server_id == i32::from(own) {
        return Err(Status::invalid_argument("self server ID"));
    }
    let min_us = u64::try_from(req.min_timestamp)
        .unwrap_or(0)
        .saturating_mul(1000);
    if let Some(why) = srv.replication.gap(min_us) {
        return Err(Status::failed_precondition(why));
    }
    let slot = StreamSlot::take(&srv.replication).ok_or_else(|| {
        Status::resource_exhausted(format!(
            "{} replication streams are being served already",
            crate::state::replication::MAX_STREAMS
        ))
    })?;
    let wait = Duration::try_from_secs_f64(req.wait_time)
        .unwrap_or(Duration::ZERO)
        .clamp(MIN_WAIT, MAX_WAIT);
    // Tkrzw's ids are int32, memstored's 16 bits: another id never matches.
    let replica_id = u16::try_from(req.server_id).ok();
    let (tx, rx) = mpsc::channel(QUEUE);
    let feed = Feed {
        srv: srv.clone(),
        log,
        tx,
        handle: tokio::runtime::Handle::current(),
        replica_id,
        min_us,
        wait,
    };
    std::thread::Builder::new()
        .name("memstored-repl-grpc".into())
        .spawn(move || feed.serve(peer, slot))
        .map_err(|e| Status::resource_exhausted(format!("no thread for the stream: {e}")))?;
    Ok(rx)
}

/// One stream's reader of the log.
struct Feed {
    srv: Arc<Server>,
    log: Arc<UpdateLog>,
    tx: mpsc::Sender<Result<ReplicateResponse, Status>>,
    /// The runtime tonic runs on: the thread waits on the channel there.
    handle: tokio::runtime::Handle,
    replica_id: Option<u16>,
    min_us: u64,
    wait: Duration,
}

/// Why a stream ended.
enum End {
    /// The replica went away (the call ended, or tonic dropped it).
    Gone,
    /// The replica took nothing for `STALL`.
    Stalled,
    /// Its place was given to a new stream.
    Evicted,
    Stopping,
    Log(memstored_engine::Error),
}

impl Feed {
    fn serve(self, peer: String, slot: StreamSlot) {
        let r = &self.srv.replication;
        r.streams_total.fetch_add(1, Relaxed);
        let id = self.replica_id.unwrap_or(u16::MAX);
        tracing::info!(
            "gRPC replication stream to {peer} (server id {id}) from timestamp {}",
            self.min_us
        );
        let live = Liveness::new(None, slot.released.clone());
        let progress = r.progress.register(peer.clone(), id, live);
        let why = match self.run(&progress, &slot) {
            End::Gone => "the replica went away".to_string(),
            End::Stalled => format!("the replica took nothing for {STALL:?}"),
            End::Evicted => "its place went to a new stream".to_string(),
            End::Stopping => {
                let _ = self
                    .tx
                    .try_send(Err(Status::unavailable("the server is stopping")));
                "the server is stopping".to_string()
            }
            End::Log(e) => {
                let _ = self.tx.try_send(Err(Status::internal(e.to_string())));
                format!("reading the update log: {e}")
            }
        };
        tracing::info!("gRPC replication stream to {peer} ended: {why}");
        r.progress.forget(&progress);
        drop(slot);
    }

    /// Hands one message to tonic, waiting while the replica reads slowly.
    fn send(&self, msg: ReplicateResponse, progress: &StreamProgress) -> Result<(), End> {
        // The timer is made inside the runtime (made outside, it panics).
        let sent = self
            .handle
            .block_on(async { tokio::time::timeout(STALL, self.tx.send(Ok(msg))).await });
        match sent {
            Ok(Ok(())) => {
                // Taken off the queue: the replica reads (HTTP/2's flow
                // control holds tonic back from one that does not).
                progress.live.answered();
                Ok(())
            }
            Ok(Err(_)) => Err(End::Gone),
            Err(_) => Err(End::Stalled),
        }
    }

    /// Records `n` changes sent, from timestamp `first` to `last`. Tkrzw's
    /// replicas acknowledge nothing: what tonic took off the queue (HTTP/2's
    /// flow control lets it only as the replica reads) counts as received.
    fn counted(
        &self,
        progress: &StreamProgress,
        n: u64,
        first: u64,
        last: u64,
        reader: &memstored_engine::ulog::Updates,
    ) {
        if n > 0 {
            progress.sent(n, first, last, self.log.pending_after(reader.position()));
            progress.acked(last);
        }
    }

    fn check(&self, slot: &StreamSlot) -> Result<(), End> {
        if *self.srv.shutdown.borrow() {
            return Err(End::Stopping);
        }
        if slot.released.load(Relaxed) {
            return Err(End::Evicted);
        }
        if self.tx.is_closed() {
            return Err(End::Gone);
        }
        Ok(())
    }

    fn run(&self, progress: &StreamProgress, slot: &StreamSlot) -> End {
        match self.follow(progress, slot) {
            Ok(never) => match never {},
            Err(e) => e,
        }
    }

    fn follow(
        &self,
        progress: &StreamProgress,
        slot: &StreamSlot,
    ) -> Result<std::convert::Infallible, End> {
        let own = self.log.options().server_id;
        // Everything written before the reader opens is visible to it.
        let mut seen = self.log.wait_visible(u64::MAX, Duration::ZERO);
        let mut reader = self.log.read_from(self.min_us).map_err(End::Log)?;
        let head = ReplicateResponse {
            op_type: OpType::OpNoop as i32,
            server_id: i32::from(own),
            ..Default::default()
        };
        self.send(head, progress)?;
        loop {
            self.check(slot)?;
            // Counted a pass of up to `PASS` changes at a time: the log's
            // count of what is left takes its lock.
            let (mut sent, mut first, mut last) = (0u64, 0u64, 0u64);
            while let Some(u) = reader.next() {
                let u = u.map_err(End::Log)?;
                if Some(u.server_id) == self.replica_id {
                    continue;
                }
                (first, last) = (if sent == 0 { u.timestamp } else { first }, u.timestamp);
                self.send(change(u), progress)?;
                sent += 1;
                if sent == PASS {
                    self.counted(progress, sent, first, last, &reader);
                    sent = 0;
                    self.check(slot)?;
                }
            }
            self.counted(progress, sent, first, last, &reader);
            // All visible changes are sent: wait for more, up to `wait`.
            let since = Instant::now();
            let before = seen;
            while seen == before && since.elapsed() < self.wait {
                self.check(slot)?;
                let left = self.wait.saturating_sub(since.elapsed());
                seen = self.log.wait_visible(seen, POLL.min(left));
            }
            if seen == before {
                // Nothing new: the replica is complete up to `seen`.
                self.send(heartbeat(seen), progress)?;
                progress.sent(0, 0, 0, 0);
            }
        }
    }
}

/// Microseconds of the log as Tkrzw's milliseconds.
fn millis(us: u64) -> i64 {
    i64::try_from(us / 1000).unwrap_or(i64::MAX)
}

fn change(u: Update) -> ReplicateResponse {
    let op = match u.op {
        UlogOp::Set => OpType::OpSet,
        UlogOp::Remove => OpType::OpRemove,
        UlogOp::Clear => OpType::OpClear,
    };
    ReplicateResponse {
        status: Some(StatusProto {
            code: code::SUCCESS,
            message: String::new(),
        }),
        timestamp: millis(u.timestamp),
        server_id: i32::from(u.server_id),
        dbm_index: i32::try_from(u.dbm_index).unwrap_or(i32::MAX),
        op_type: op as i32,
        key: Bytes::from(u.key),
        value: Bytes::from(u.value),
    }
}

/// Nothing new within the wait: INFEASIBLE_ERROR and the position.
fn heartbeat(complete_to_us: u64) -> ReplicateResponse {
    ReplicateResponse {
        status: Some(StatusProto {
            code: code::INFEASIBLE_ERROR,
            message: "no update log within the wait time".into(),
        }),
        timestamp: millis(complete_to_us),
        ..Default::default()
    }
}
