//! State shared by every connection: the store, settings, counters.

use crate::state::budget::Budget;
use crate::state::counters::Counters;
use crate::state::marks::Marks;
use crate::state::sasl::Credentials;
use crate::state::slow::SlowCalls;
use memstored_engine::Db;
use memstored_protocol::Expiry;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{watch, Notify};

/// Settings taken from the command line.
/// memcached's `-B`: the protocols its port speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Binding {
    /// Every protocol, told apart by the first byte.
    #[default]
    Auto,
    /// Text and meta only (memcached's `-B ascii`).
    Ascii,
    /// The binary protocol only (memcached's `-B binary`).
    Binary,
}

impl Binding {
    /// `stats settings`' `binding_protocol`, in memcached's words.
    pub fn label(self) -> &'static str {
        match self {
            Binding::Auto => "auto-negotiate",
            Binding::Ascii => "ascii",
            Binding::Binary => "binary",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub store: String,
    pub listen: SocketAddr,
    /// `--unix-socket`'s path, once bound (`stats settings domain_socket`).
    pub unix_socket: Option<String>,
    /// `--unix-mask` (`stats settings umask`).
    pub unix_mask: u32,
    pub initial_size: usize,
    /// memcached's `-B`.
    pub binding: Binding,
    /// memcached's `-C` (reported only).
    pub cas_enabled: bool,
    /// memcached's `-b`.
    pub tcp_backlog: u32,
    pub reserve_size: usize,
    pub max_connections: usize,
    pub max_item_size: u64,
    pub threads: usize,
    pub verbose: u8,
    pub sasl: bool,
    pub read_only: bool,
    /// Server-wide bytes for connection buffers (`--conn-memory`, `budget.rs`).
    pub conn_memory: usize,
    /// `-W`: how many RPC slow calls run at once.
    pub blocking_threads: usize,
    /// `--search-timeout`: how long one RPC key search may run.
    pub search_timeout: Duration,
    /// `--kt-timeout`: how long a Kyoto Tycoon port connection may idle.
    pub kt_timeout: Option<Duration>,
    /// `-A`/`--enable-shutdown`: the text `shutdown` command stops the server.
    pub enable_shutdown: bool,
    /// False with `-F`/`--disable-flush-all`: flushes are refused.
    pub flush_enabled: bool,
    /// `--scheduler`: how connections are placed on threads (`workers.rs`).
    pub scheduler: crate::state::server::Scheduler,
    /// What connections wait on (`--io`, chosen at start: `uring`).
    pub io: crate::state::server::IoEngine,
    /// `-Z`'s TLS on the memcached port (`-o ssl_*`); `None` without `-Z`.
    pub tls: Option<crate::state::tls::TlsSettings>,
    /// memcached's `-e FILE`: the cache is written there at a graceful
    /// stop and read back at the next start (`command::memory_file`).
    pub memory_file: Option<std::path::PathBuf>,
}

/// memcached's starting `hashpower`.
const HASH_POWER: u32 = 16;

/// Everything a connection needs, shared through an `Arc`.
pub struct Server {
    pub db: Arc<Db>,
    pub cfg: Config,
    pub counters: Counters,
    pub started: Instant,
    pub credentials: Option<Credentials>,
    /// Memory for connection buffers, shared by every connection.
    pub budget: Budget,
    /// Bumped by every flush; a delayed flush only runs if no later one came.
    flush_generation: AtomicU64,
    /// Stale and recache-token bits of the meta protocol (`marks.rs`).
    pub marks: Marks,
    /// RPC slow calls queued and running (`slow.rs`).
    pub slow: SlowCalls,
    /// Turns true when the server is shutting down.
    pub shutdown: watch::Receiver<bool>,
    /// The databases after the first (`-s` given more than once), each in
    /// a `Server` of its own; MessagePack-RPC picks one by `DB` (databases.rs).
    pub others: Vec<Arc<Server>>,
    /// The sending side of `shutdown` for a standalone server (which has no
    /// signal handler), kept so that `shutdown` never reports a closed channel.
    standalone_stop: Option<watch::Sender<bool>>,
    /// `stats detail` per-prefix counters (`detail.rs`).
    pub detail: crate::state::detail::Detail,
    /// The level last set by `verbosity` (starts at `-v`'s count).
    pub verbosity: AtomicU32,
    /// Woken by the `shutdown` command; startup.rs waits on it beside the
    /// stop signals.
    pub stop_requested: Notify,
    /// The update log it streams and, on a replica, its state (`replication`).
    pub replication: crate::state::replication::Replication,
    /// The memcached port's listeners and connections, for `stats conns`.
    pub conns: crate::state::conns::Conns,
    /// memcached's log watchers (`watch`).
    pub watch: Arc<crate::state::watch::Watchers>,
    /// `lru_crawler enable|disable` (memcached's `settings.lru_crawler`).
    pub lru_crawler: std::sync::atomic::AtomicBool,
    /// `slabs automove N` (memcached's `settings.slab_automove`; nothing
    /// here moves, the level is only reported).
    pub slab_automove: std::sync::atomic::AtomicU32,
    /// The TLS counters and `refresh_certs`'s hook (`-Z`).
    pub tls: crate::state::tls::TlsState,
    /// memcached's `-Y`: text connections log in first (`protocols::text::ascii_auth`).
    pub ascii_auth: Option<Arc<crate::state::ascii_auth::AsciiAuth>>,
    /// memcached's `hash_power_level` (`Server::hash_power_level`).
    hash_power: AtomicU32,
    /// The stop asked for is memcached's graceful one (SIGUSR1, `shutdown
    /// graceful`): `-e`'s memory file is written.
    pub graceful: std::sync::atomic::AtomicBool,
}

impl Config {
    /// memstored's defaults (those of its flags) for `store`.
    pub fn defaults(store: &str) -> Config {
        Config {
            store: store.to_string(),
            listen: SocketAddr::from(([127, 0, 0, 1], 11211)),
            unix_socket: None,
            unix_mask: 0o700,
            initial_size: 2048,
            binding: Binding::Auto,
            cas_enabled: true,
            tcp_backlog: 1024,
            reserve_size: 1024,
            max_connections: 1024,
            max_item_size: 64 << 20,
            threads: 1,
            verbose: 0,
            sasl: false,
            read_only: false,
            conn_memory: crate::state::budget::DEFAULT_LIMIT,
            blocking_threads: 2,
            search_timeout: Duration::from_secs(5),
            kt_timeout: Some(Duration::from_secs(30)),
            enable_shutdown: false,
            flush_enabled: true,
            scheduler: crate::state::server::Scheduler::Shared,
            io: crate::state::server::IoEngine::Epoll,
            tls: None,
            memory_file: None,
        }
    }
}

impl Server {
    /// A server around an open database with default settings and no
    /// listener: for tests, fuzzing and embedding the protocol handlers.
    /// The `shutdown` command: asks the server to stop as on SIGTERM.
    pub fn request_stop(&self) {
        self.stop_requested.notify_one();
    }

    pub fn standalone(db: Arc<Db>) -> Arc<Server> {
        let mut cfg = Config::defaults(&db.name().path);
        cfg.read_only = !db.is_writable();
        Server::standalone_with(db, cfg)
    }

    /// `standalone` with settings of the caller's.
    pub fn standalone_with(db: Arc<Db>, cfg: Config) -> Arc<Server> {
        let (stop, shutdown) = watch::channel(false);
        let mut srv = Server::new(db, cfg, None, shutdown);
        srv.standalone_stop = Some(stop);
        Arc::new(srv)
    }

    pub fn new(
        db: Arc<Db>,
        cfg: Config,
        credentials: Option<Credentials>,
        shutdown: watch::Receiver<bool>,
    ) -> Server {
        let budget = Budget::new(
            cfg.conn_memory,
            crate::state::budget::DEFAULT_WAIT,
            Budget::oversize_for_item(cfg.max_item_size),
        );
        let slow = SlowCalls::new(cfg.blocking_threads);
        let cfg_verbose = cfg.verbose;
        let watch = Arc::new(crate::state::watch::Watchers::default());
        db.set_eviction_watch(watch.clone());
        Server {
            db,
            budget,
            cfg,
            counters: Counters::default(),
            started: Instant::now(),
            credentials,
            flush_generation: AtomicU64::new(0),
            marks: Marks::default(),
            slow,
            shutdown,
            others: Vec::new(),
            standalone_stop: None,
            detail: crate::state::detail::Detail::default(),
            verbosity: AtomicU32::new(u32::from(cfg_verbose)),
            stop_requested: Notify::new(),
            replication: Default::default(),
            conns: crate::state::conns::Conns::watched_by(watch.clone()),
            watch,
            lru_crawler: std::sync::atomic::AtomicBool::new(true),
            slab_automove: std::sync::atomic::AtomicU32::new(0),
            tls: crate::state::tls::TlsState::default(),
            ascii_auth: None,
            hash_power: AtomicU32::new(HASH_POWER),
            graceful: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// memcached's `hash_power_level`: the log2 of the buckets memcached's
    /// hash table would have grown to for the most items this server has
    /// been seen holding (it starts at 16 and doubles past 1.5 items a
    /// bucket, never shrinking). memstored's own index grows by other
    /// rules; this is reported for memcached's tools and kept across a
    /// restart from `-e`'s memory file. Seen when asked (`stats`) and at
    /// a graceful stop.
    pub fn hash_power_level(&self) -> u32 {
        let items = self.db.count();
        let mut hp = self.hash_power.load(Ordering::Relaxed);
        while hp < 63 && u128::from(items) > (3u128 << hp) / 2 {
            hp += 1;
        }
        self.hash_power.fetch_max(hp, Ordering::Relaxed).max(hp)
    }

    /// A restart's memory file says how far the table had grown.
    pub fn restore_hash_power(&self, hp: u32) {
        self.hash_power.fetch_max(hp.min(63), Ordering::Relaxed);
    }

    /// This server with memcached's ASCII authentication (`-Y`).
    pub fn with_ascii_auth(
        mut self,
        auth: Option<Arc<crate::state::ascii_auth::AsciiAuth>>,
    ) -> Server {
        self.ascii_auth = auth;
        self
    }

    /// This server with further databases (`databases.rs`).
    pub fn with_others(mut self, others: Vec<Arc<Server>>) -> Server {
        self.others = others;
        self
    }

    /// Starts a flush (`command::Flush`): the new flush generation, which a
    /// delayed flush compares with [`Server::flush_generation`] when due.
    pub fn next_flush_generation(&self) -> u64 {
        self.flush_generation.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The generation of the latest flush: a delayed flush only runs if no
    /// later one came.
    pub fn flush_generation(&self) -> u64 {
        self.flush_generation.load(Ordering::SeqCst)
    }

    /// The largest request or reply a call may carry (its values' bytes),
    /// on MessagePack-RPC and gRPC alike: `-I` plus 1 MiB, at least 64 MiB.
    pub fn max_message(&self) -> usize {
        usize::try_from(self.cfg.max_item_size)
            .unwrap_or(usize::MAX)
            .saturating_add(1 << 20)
            .max(64 << 20)
    }
}

/// memcached exptime (already typed as an [`Expiry`]) to the engine's
/// absolute seconds: 0 = never; an already expired item gets a time in the
/// past, so it is stored but never seen.
pub fn expires_at(e: Expiry) -> u64 {
    match e {
        Expiry::Never => 0,
        Expiry::At(t) => t,
        Expiry::Expired => 1,
    }
}

/// Converts a signed text/meta exptime.
pub fn expires_at_text(exptime: i64) -> u64 {
    expires_at(Expiry::from_exptime(exptime, memstored_engine::now_secs()))
}

/// Converts the unsigned binary exptime field.
pub fn expires_at_binary(exptime: u32) -> u64 {
    expires_at(Expiry::from_binary(exptime, memstored_engine::now_secs()))
}

/// Remaining TTL in seconds for meta `t` (-1 = never expires).
pub fn ttl_remaining(expires: u64) -> i64 {
    if expires == 0 {
        return -1;
    }
    let now = memstored_engine::now_secs();
    i64::try_from(expires.saturating_sub(now)).unwrap_or(i64::MAX)
}

/// What the server runs on, reported by `stats` and `stats settings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoEngine {
    IoUring,
    Epoll,
}

impl IoEngine {
    pub fn label(self) -> &'static str {
        match self {
            IoEngine::IoUring => "io_uring",
            IoEngine::Epoll => "epoll",
        }
    }
}

/// How connections are scheduled onto threads (`--scheduler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scheduler {
    /// One single-threaded runtime per worker; a connection stays on its worker.
    PerCore,
    /// One tokio multi-threaded runtime whose workers steal tasks from each other.
    Shared,
}

impl Scheduler {
    /// The name `stats settings` reports.
    pub fn label(self) -> &'static str {
        match self {
            Scheduler::PerCore => "per-core",
            Scheduler::Shared => "shared",
        }
    }
}
