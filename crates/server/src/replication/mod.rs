//! Replication (issue 18): a master streams its update log to replicas
//! over MessagePack-RPC on the main port (`master`, `wire`); a replica
//! (`--replicate-from`) follows it, applies each update and remembers how
//! far it got in a timestamp file (`replica`, `rts`).

pub mod ulog;

pub mod kt_stream;
pub mod liveness;
pub mod master;
pub mod progress;
pub mod replica;
pub mod rts;
pub mod semisync;
pub mod wire;

use memstored_engine::ulog::UpdateLog;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

/// Keys whose last change a dual master remembers for its conflict rule
/// (`memstored_engine::ulog::UpdateLog::track_recent`).
const RECENT_KEYS: usize = 1 << 20;

/// The replica's flags (flattened into `cli::Args`, so they are config
/// file keys too).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReplicaArgs {
    /// Follow the master at HOST:PORT (its main port): stream its update
    /// log from this server's saved position, apply every update, and
    /// reconnect after failures. Needs --ulog-dir (the position is kept
    /// there, in `replication.rts`) and a --server-id of its own.
    #[arg(long = "replicate-from", value_name = "HOST:PORT")]
    pub replicate_from: Option<String>,
    /// Let clients write to a replica too (a dual master). Without it a
    /// replica refuses every change from clients, as --read-only does.
    #[arg(long = "replica-writable")]
    pub replica_writable: bool,
    /// Semi-synchronous mode (on a master): replies to writes wait until K
    /// connected replicas have applied them (not while fewer than K are
    /// connected; at most --sync-replicas-timeout).
    #[arg(long = "sync-replicas", value_name = "K", default_value_t = 0)]
    pub sync_replicas: usize,
    /// How long a reply waits for --sync-replicas acknowledgements, in ms.
    #[arg(
        long = "sync-replicas-timeout",
        value_name = "MS",
        default_value_t = 1000
    )]
    pub sync_replicas_timeout: u64,
}

/// Replication state shared by the server's connections.
#[derive(Default)]
pub struct Replication {
    /// The server's update log (`--ulog-dir`); what `replicate` streams.
    pub ulog: OnceLock<Arc<UpdateLog>>,
    /// Set on a replica (`--replicate-from`).
    pub replica: OnceLock<Arc<replica::Status>>,
    /// `--replica-writable`: clients may write while it follows a master.
    pub replica_writable: std::sync::atomic::AtomicBool,
    /// Replication streams being served now (this server as a master).
    pub streams: AtomicU64,
    /// Streams served since start.
    pub streams_total: AtomicU64,
    /// What each stream being served sent and had acknowledged (its lag).
    pub progress: progress::Progress,
    /// `--sync-replicas`, when given.
    pub semi: OnceLock<semisync::SemiSync>,
}

impl Replication {
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

/// Starts following the master when `--replicate-from` is given: marks the
/// databases as a replica (unless `--replica-writable`), loads the saved
/// position and starts the thread. `Err` is a configuration error.
pub fn start(
    srv: &crate::state::server::Server,
    args: &ReplicaArgs,
    ulog: &crate::replication::ulog::UlogArgs,
) -> Result<Option<replica::Handle>, String> {
    if args.sync_replicas > 0 {
        if srv.replication.ulog.get().is_none() {
            return Err("--sync-replicas needs --ulog-dir (replicas stream the update log)".into());
        }
        let timeout = std::time::Duration::from_millis(args.sync_replicas_timeout);
        let _ = srv
            .replication
            .semi
            .set(semisync::SemiSync::new(args.sync_replicas, timeout));
    }
    let Some(master) = &args.replicate_from else {
        return Ok(None);
    };
    let Some(dir) = &ulog.ulog_dir else {
        return Err(
            "--replicate-from needs --ulog-dir (the replica's position is kept there)".into(),
        );
    };
    let dbs = crate::state::databases::all(srv);
    if dbs.iter().any(|db| !db.is_writable()) {
        return Err("--replicate-from cannot be combined with --read-only: the replica writes what it applies".into());
    }
    srv.replication
        .replica_writable
        .store(args.replica_writable, Relaxed);
    if args.replica_writable {
        // A dual master: the conflict rule needs each key's last change.
        if let Some(log) = srv.replication.ulog.get() {
            log.track_recent(RECENT_KEYS);
        }
    } else {
        for db in &dbs {
            db.set_replica(true);
        }
    }
    let fsync =
        crate::replication::ulog::strictest_sync(&dbs) == memstored_engine::SyncMode::Always;
    let path = rts::path_in(dir);
    let (rts, saved) =
        rts::Rts::open(&path, fsync).map_err(|e| format!("{}: {e}", path.display()))?;
    // A store without files starts empty: a position saved by an earlier
    // run would skip what it lost.
    let persistent = dbs.iter().all(|db| db.name().kind.has_file());
    let start_ts = if persistent { saved } else { 0 };
    let status = Arc::new(replica::Status::default());
    let _ = srv.replication.replica.set(status.clone());
    let follower = replica::Follower {
        server_id: ulog.server_id,
        dbs,
        rts,
        status,
        max_item: srv.cfg.max_item_size,
    };
    follower
        .spawn(master, start_ts)
        .map(Some)
        .map_err(|e| format!("starting the replica thread: {e}"))
}

/// `changemaster [master, {ts_skew: MS}]` (Tkrzw-RPC's ChangeMaster): a
/// replica follows `master` (HOST:PORT) from now on, its position stepped
/// back by `ts_skew` milliseconds; an empty or absent `master` promotes it:
/// it stops following and accepts client writes. Only on a server started
/// with `--replicate-from` (it has the position file and the thread).
pub fn change_master(
    srv: &crate::state::server::Server,
    params: &[memstored_protocol::rpc::Value],
) -> Result<memstored_protocol::rpc::Value, crate::protocols::rpc::RpcError> {
    use crate::protocols::rpc::{code, RpcError};
    let Some(status) = srv.replication.replica.get() else {
        return Err(RpcError::new(
            code::LOGICAL,
            "not a replica: start the server with --replicate-from (and --ulog-dir)",
        ));
    };
    let a = crate::protocols::rpc::Args::new(params, 0);
    let master = match a.pos_or_opt(0, "master") {
        None => String::new(),
        Some(v) => memstored_protocol::rpc::value_bytes(v)
            .and_then(|b| std::str::from_utf8(b).ok())
            .ok_or_else(|| RpcError::argument("master must be a string HOST:PORT"))?
            .trim()
            .to_string(),
    };
    let skew_ms = a.opt_i64("ts_skew")?.unwrap_or(0).max(0);
    let skew_us = u64::try_from(skew_ms).unwrap_or(0).saturating_mul(1000);
    let writable = master.is_empty() || srv.replication.replica_writable.load(Relaxed);
    for db in crate::state::databases::all(srv) {
        db.set_replica(!writable);
    }
    tracing::info!(
        "changemaster: {} (position stepped back {skew_ms} ms)",
        if master.is_empty() {
            "promoted, following nobody"
        } else {
            master.as_str()
        }
    );
    status.change_master(&master, skew_us);
    Ok(memstored_protocol::rpc::Value::Nil)
}

/// Called by a connection before it sends a batch of replies, with the
/// timestamp of the batch's last logged write (0: it wrote nothing): with
/// `--sync-replicas`, waits for the replicas to have it (`semisync`).
pub async fn before_replies(srv: &crate::state::server::Server, wrote: u64) {
    if wrote == 0 {
        return;
    }
    if let Some(semi) = srv.replication.semi.get() {
        // The streams read what the log has handed to the OS: without this
        // the batch's own records would wait for someone else's flush, and
        // a lone writer would wait out the whole timeout on every write.
        if let Some(log) = srv.replication.ulog.get() {
            if let Err(e) = log.flush() {
                tracing::error!("handing the update log to the OS failed: {e}");
            }
        }
        semi.wait(wrote).await;
    }
}
