//! Following a master over Tkrzw-RPC's gRPC (`--repl_master`, or a
//! ChangeMaster call on the gRPC port): the master's Replicate stream, from
//! a tkrzw_server started with `--ulog_prefix` or from another memstored's
//! `--grpc-listen` port, applied as `replica.rs` applies memstored's own
//! wire. One connection per call of [`follow`]; `replica.rs`'s loop
//! reconnects with its backoff.
//!
//! Tkrzw's timestamps are milliseconds; the replica's position is kept in
//! microseconds (ms x 1000) like every other, and resumes from its
//! millisecond: the changes of that millisecond come again and replay to
//! the same state, as they do between two tkrzw_servers. `--repl_ts_file`
//! holds the position in Tkrzw's milliseconds, so that a tkrzw_server given
//! the same file resumes where memstored stopped, and the other way round.
//! It is saved, after the store has the changes, every `SAVE_EVERY` changes
//! and whenever the master says there is nothing more for now, as
//! tkrzw_server saves its own.

use super::replica::{max_frame, Ended, Follower};
use crate::protocols::grpc::pb::dbm_service_client::DbmServiceClient;
use crate::protocols::grpc::pb::replicate_response::OpType;
use crate::protocols::grpc::pb::{ReplicateRequest, ReplicateResponse};
use memstored_engine::status::code;
use memstored_engine::ulog::{UlogOp, Update};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Changes applied between two saves of the position (tkrzw_server's).
const SAVE_EVERY: u64 = 1000;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How often a waiting read looks at the stop flag and for a new master.
const POLL: Duration = Duration::from_millis(100);
/// Nothing from the master for this long, heartbeats included (it sends one
/// per `wait_time`): the connection is dead.
const DEAD_AFTER: Duration = Duration::from_secs(5);

/// What the gRPC wire needs besides the follower.
#[derive(Debug, Clone)]
pub struct GrpcOptions {
    /// `--repl_wait`: how long the master waits for a change before it
    /// sends a heartbeat, in seconds.
    pub wait: f64,
}

/// One connection to `master`, until it ends.
pub(super) fn follow(
    f: &Follower,
    opts: &GrpcOptions,
    master: &str,
    stop: &AtomicBool,
) -> Result<(), Ended> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut s = Session {
        f,
        stop,
        generation: f.status.generation.load(Relaxed),
        unsaved: 0,
        head: false,
    };
    let r = rt.block_on(s.run(opts, master));
    let saved = s.persist();
    r.and(saved)
}

struct Session<'a> {
    f: &'a Follower,
    stop: &'a AtomicBool,
    /// `Status::generation` when connected: a change ends the connection.
    generation: u64,
    /// Changes applied since the position was last saved.
    unsaved: u64,
    /// Whether the master's first message (its server id) came.
    head: bool,
}

fn io_error(e: impl std::fmt::Display) -> Ended {
    Ended::Io(io::Error::other(e.to_string()))
}

impl Session<'_> {
    async fn run(&mut self, opts: &GrpcOptions, master: &str) -> Result<(), Ended> {
        let endpoint = tonic::transport::Endpoint::from_shared(format!("http://{master}"))
            .map_err(|e| Ended::Refused(format!("a bad master address {master:?}: {e}")))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true);
        let channel = endpoint.connect().await.map_err(io_error)?;
        let mut client =
            DbmServiceClient::new(channel).max_decoding_message_size(max_frame(self.f.max_item));
        let status = &self.f.status;
        status.connects.fetch_add(1, Relaxed);
        let skew = status.skew_us.swap(0, Relaxed);
        let from_ms = status.applied_ts.load(Relaxed).saturating_sub(skew) / 1000;
        let req = ReplicateRequest {
            min_timestamp: i64::try_from(from_ms).unwrap_or(i64::MAX),
            server_id: i32::from(self.f.server_id),
            wait_time: opts.wait,
        };
        tracing::info!("replicating from {master} over gRPC (timestamps from {from_ms} ms)");
        let answered = tokio::time::timeout(DEAD_AFTER, client.replicate(req))
            .await
            .map_err(|_| Ended::Silent(DEAD_AFTER))?;
        let mut stream = answered
            .map_err(|s| Ended::Refused(format!("{:?}: {}", s.code(), s.message())))?
            .into_inner();
        let wait = Duration::try_from_secs_f64(opts.wait).unwrap_or(Duration::ZERO);
        let dead = DEAD_AFTER.max(wait.saturating_mul(3));
        let mut heard = Instant::now();
        loop {
            if self.stop.load(Relaxed) {
                return Err(Ended::Stopping);
            }
            if status.generation.load(Relaxed) != self.generation {
                return Err(Ended::Switched);
            }
            match tokio::time::timeout(POLL, stream.message()).await {
                Err(_) if heard.elapsed() > dead => return Err(Ended::Silent(heard.elapsed())),
                Err(_) => {}
                Ok(Err(s)) => {
                    return Err(Ended::Refused(format!("{:?}: {}", s.code(), s.message())))
                }
                Ok(Ok(None)) => return Err(Ended::Closed),
                Ok(Ok(Some(m))) => {
                    // Received after a ChangeMaster: not this replica's any more.
                    if status.generation.load(Relaxed) != self.generation {
                        return Err(Ended::Switched);
                    }
                    heard = Instant::now();
                    self.take(m)?;
                }
            }
        }
    }

    /// One message of the stream.
    fn take(&mut self, m: ReplicateResponse) -> Result<(), Ended> {
        let status = &self.f.status;
        if !self.head {
            // The first message: OP_NOOP and the master's server id.
            if m.server_id == i32::from(self.f.server_id) {
                return Err(Ended::Refused(format!(
                    "the master has this server's id {}: give each server its own --server-id",
                    self.f.server_id
                )));
            }
            status
                .master_id
                .store(u64::try_from(m.server_id).unwrap_or(0), Relaxed);
            status.connected.store(true, Relaxed);
            self.head = true;
            return Ok(());
        }
        let ts_us = u64::try_from(m.timestamp).unwrap_or(0).saturating_mul(1000);
        match m.status.as_ref().map_or(code::SUCCESS, |s| s.code) {
            code::SUCCESS => self.apply(m, ts_us),
            code::INFEASIBLE_ERROR => {
                // Nothing more for now: complete up to the master's timestamp.
                status.applied_ts.fetch_max(ts_us, Relaxed);
                status.master_ts.store(ts_us, Relaxed);
                status.pending.store(0, Relaxed);
                self.persist()
            }
            c => Err(Ended::Refused(format!(
                "the master's stream failed: {} ({c})",
                m.status.map(|s| s.message).unwrap_or_default()
            ))),
        }
    }

    fn apply(&mut self, m: ReplicateResponse, ts_us: u64) -> Result<(), Ended> {
        let op = match OpType::try_from(m.op_type) {
            Ok(OpType::OpSet) => UlogOp::Set,
            Ok(OpType::OpRemove) => UlogOp::Remove,
            Ok(OpType::OpClear) => UlogOp::Clear,
            _ => return Ok(()),
        };
        self.f.check_size(m.key.len(), m.value.len())?;
        let u = Update {
            timestamp: ts_us,
            // Tkrzw's ids are int32, memstored's 16 bits.
            server_id: u16::try_from(m.server_id).unwrap_or(u16::MAX),
            dbm_index: u32::try_from(m.dbm_index).unwrap_or(u32::MAX),
            op,
            key: m.key.to_vec(),
            value: m.value.to_vec(),
            flags: 0,
            expires_at: 0,
        };
        let applied = self.f.apply_one(&u)?;
        let status = &self.f.status;
        status.applied_ts.fetch_max(ts_us, Relaxed);
        status.master_ts.fetch_max(ts_us, Relaxed);
        status.applied.fetch_add(u64::from(applied), Relaxed);
        self.unsaved += 1;
        if self.unsaved >= SAVE_EVERY {
            self.persist()?;
        }
        Ok(())
    }

    /// Hands what was applied to the OS, then saves the position.
    fn persist(&mut self) -> Result<(), Ended> {
        self.unsaved = 0;
        for db in &self.f.dbs {
            db.flush_dirty()?;
        }
        if let Some(rts) = &self.f.rts {
            rts.save(self.f.status.applied_ts.load(Relaxed) / 1000)?;
        }
        Ok(())
    }
}
