//! Replication (issue 18): a master streams its update log to replicas
//! over MessagePack-RPC on the main port (`master`, `wire`); a replica
//! (`--replicate-from`) follows it, applies each update and remembers how
//! far it got in a timestamp file (`replica`, `rts`).

pub mod ulog;

pub mod kt_stream;
pub mod master;
pub mod replica;
pub mod rts;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

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
            .set(crate::state::replication::semisync::SemiSync::new(
                args.sync_replicas,
                timeout,
            ));
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
    let status = Arc::new(crate::state::replication::replica_status::Status::default());
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
