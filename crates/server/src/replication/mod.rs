//! Replication (issue 18): a master streams its update log to replicas
//! over MessagePack-RPC on the main port (`master`, `wire`); a replica
//! (`--replicate-from`) follows it, applies each update and remembers how
//! far it got in a timestamp file (`replica`, `rts`).

pub mod ulog;

pub mod grpc_follow;
pub mod kt_follow;
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
    /// `kt://HOST:PORT` follows a Kyoto Tycoon master (`ktserver -ulog`)
    /// as `ktserver -mhost HOST -mport PORT` does (position in
    /// `kt-replication.rts`; a --server-id other than 0).
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
    /// tkrzw_server's `--repl_master`: follow the master at HOST:PORT over
    /// Tkrzw-RPC's gRPC (a tkrzw_server's port, or another memstored's
    /// --grpc-listen). As tkrzw_server's replicas, this one takes client
    /// writes too. Without it, a server with a gRPC port still follows
    /// whatever master a ChangeMaster call names.
    #[arg(long = "repl_master", value_name = "HOST:PORT")]
    pub repl_master: Option<String>,
    /// tkrzw_server's `--repl_ts_file`: where a gRPC replica keeps its
    /// position, in Tkrzw's milliseconds (none: not kept, it starts from
    /// the master's oldest change, or `--repl_ts_from_dbm`).
    #[arg(long = "repl_ts_file", value_name = "FILE")]
    pub repl_ts_file: Option<std::path::PathBuf>,
    /// tkrzw_server's `--repl_ts_from_dbm`: without a saved position,
    /// start from the databases' last modification time.
    #[arg(long = "repl_ts_from_dbm")]
    pub repl_ts_from_dbm: bool,
    /// tkrzw_server's `--repl_ts_skew`: milliseconds added to the starting
    /// position (negative: start earlier).
    #[arg(
        long = "repl_ts_skew",
        value_name = "MS",
        allow_negative_numbers = true
    )]
    pub repl_ts_skew: Option<i64>,
    /// tkrzw_server's `--repl_wait`: seconds the master waits for a change
    /// before telling the replica there is none (its heartbeat; default 1).
    #[arg(long = "repl_wait", value_name = "SECS")]
    pub repl_wait: Option<f64>,
}

impl ReplicaArgs {
    /// Whether a flag spelled tkrzw_server's way (`--repl_*`) was given:
    /// memstored is then started the tkrzw_server way (`app::tkrzw_flags`).
    pub fn tkrzw_given(&self) -> bool {
        self.repl_master.is_some()
            || self.repl_ts_file.is_some()
            || self.repl_ts_from_dbm
            || self.repl_ts_skew.is_some()
            || self.repl_wait.is_some()
    }
}

/// Starts following the master when `--replicate-from` is given: marks the
/// databases as a replica (unless `--replica-writable`), loads the saved
/// position and starts the thread. `Err` is a configuration error.
pub fn start(
    srv: &crate::state::server::Server,
    args: &ReplicaArgs,
    ulog: &crate::replication::ulog::UlogArgs,
    grpc_port: bool,
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
    if args.replicate_from.is_some() && args.repl_master.is_some() {
        return Err("--replicate-from and --repl_master both name a master: give one".into());
    }
    let Some(master) = &args.replicate_from else {
        return start_grpc(srv, args, ulog, grpc_port);
    };
    let Some(dir) = &ulog.ulog_dir else {
        return Err(
            "--replicate-from needs --ulog-dir (the replica's position is kept there)".into(),
        );
    };
    let kt = master.starts_with(kt_follow::SCHEME);
    if kt && ulog.server_id == 0 {
        // A master leaves out the messages logged under the asking
        // slave's id, and ktserver's -sid is 0 unless given.
        return Err(format!("--replicate-from {master} needs a --server-id other than 0: a Kyoto Tycoon master leaves out every update logged under the replica's id, and 0 is ktserver's default -sid"));
    }
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
    let path = if kt {
        kt_follow::rts_path_in(dir)
    } else {
        rts::path_in(dir)
    };
    let (rts, saved) =
        rts::Rts::open(&path, fsync).map_err(|e| format!("{}: {e}", path.display()))?;
    // A store without files starts empty: a position saved by an earlier
    // run would skip what it lost.
    let persistent = dbs.iter().all(|db| db.name().kind.has_file());
    let start_ts = if persistent { saved } else { 0 };
    let status = Arc::new(crate::state::replication::replica_status::Status::default());
    let _ = srv.replication.replica.set(status.clone());
    let (wire, start_ts) = if kt {
        // Kyoto Tycoon's position is its nanoseconds; `stats` shows µs.
        let pos = kt_follow::KtPosition::new(start_ts);
        (replica::Wire::Kt(pos), start_ts / 1000)
    } else {
        (replica::Wire::Rpc, start_ts)
    };
    let follower = replica::Follower {
        server_id: ulog.server_id,
        dbs,
        rts: Some(rts),
        wire,
        status,
        max_item: srv.cfg.max_item_size,
    };
    follower
        .spawn(master, start_ts)
        .map(Some)
        .map_err(|e| format!("starting the replica thread: {e}"))
}

/// The gRPC replica (`--repl_master`), or, on a server with a gRPC port, an
/// idle one that a ChangeMaster call can point at a master, as any
/// tkrzw_server can be. Its clients may write, as tkrzw_server's may.
fn start_grpc(
    srv: &crate::state::server::Server,
    args: &ReplicaArgs,
    ulog: &crate::replication::ulog::UlogArgs,
    grpc_port: bool,
) -> Result<Option<replica::Handle>, String> {
    let master = args.repl_master.clone().unwrap_or_default();
    let dbs = crate::state::databases::all(srv);
    if dbs.iter().any(|db| !db.is_writable()) {
        if master.is_empty() {
            return Ok(None); // a read-only server follows nobody
        }
        return Err(
            "--repl_master cannot be combined with --read-only: the replica writes what it applies"
                .into(),
        );
    }
    if master.is_empty() && !grpc_port {
        return Ok(None);
    }
    let wait = args.repl_wait.unwrap_or(1.0);
    if !wait.is_finite() || wait < 0.0 {
        return Err(format!("--repl_wait {wait}: seconds, 0 or more"));
    }
    srv.replication.replica_writable.store(true, Relaxed);
    if let Some(log) = srv.replication.ulog.get() {
        log.track_recent(RECENT_KEYS);
    }
    let fsync =
        crate::replication::ulog::strictest_sync(&dbs) == memstored_engine::SyncMode::Always;
    let (rts, saved_ms) = match &args.repl_ts_file {
        Some(p) => {
            let (r, ms) = rts::Rts::open(p, fsync).map_err(|e| format!("{}: {e}", p.display()))?;
            (Some(r), ms)
        }
        None => (None, 0),
    };
    let from_ms = if saved_ms == 0 && args.repl_ts_from_dbm {
        dbs.iter()
            .map(|db| modified_ms(&db.name().path))
            .min()
            .unwrap_or(0)
    } else {
        saved_ms
    };
    let from_ms = i64::try_from(from_ms)
        .unwrap_or(i64::MAX)
        .saturating_add(args.repl_ts_skew.unwrap_or(0))
        .max(0);
    let status = Arc::new(crate::state::replication::replica_status::Status::default());
    let _ = srv.replication.replica.set(status.clone());
    let follower = replica::Follower {
        server_id: ulog.server_id,
        dbs,
        rts,
        wire: replica::Wire::Grpc(grpc_follow::GrpcOptions { wait }),
        status,
        max_item: srv.cfg.max_item_size,
    };
    let from_us = u64::try_from(from_ms).unwrap_or(0).saturating_mul(1000);
    follower
        .spawn(&master, from_us)
        .map(Some)
        .map_err(|e| format!("starting the replica thread: {e}"))
}

/// When the files of the database at `path` last changed, in Unix
/// milliseconds (now for a database without files): Tkrzw's database
/// timestamp, for `--repl_ts_from_dbm`.
fn modified_ms(path: &str) -> u64 {
    let now = crate::state::replication::progress::now_micros() / 1000;
    let path = std::path::Path::new(path);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return now;
    };
    let dir = if dir.as_os_str().is_empty() {
        std::path::Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return now;
    };
    let name = name.to_string_lossy();
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&*name))
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .filter_map(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .max()
        .map_or(now, |m| m.min(now))
}
