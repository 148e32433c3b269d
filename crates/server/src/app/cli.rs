//! The `memstored` command line (DESIGN.md "memstored command line").
//! memstored 0.1's letters are kept, and like memcached `-h` is help.

use crate::state::size::parse_size;
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// memstored: a memcached-protocol key-value server over a pluggable store.
#[derive(Debug, Clone, Parser)]
#[command(name = "memstored", version, disable_help_flag = true)]
pub struct Args {
    /// Database name, e.g. `*#capsiz=64m` or `casket.tkh#num_shards=10`
    /// (default `*#capsiz=64m`). May be repeated: several databases.
    #[arg(short = 's', long = "store", value_name = "NAME")]
    pub store: Vec<String>,
    /// Database names given as tkrzw_server and ktserver take them: the
    /// same as `-s NAME` each, after any `-s`.
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Listen address: `[ADDR:]PORT`, or an address alone as memcached's
    /// `-l` takes it (port `-p`, else 11211); ADDR defaults to 127.0.0.1.
    /// As memcached: several, `,` between, each with an optional `notls:`,
    /// `btls:` or `mtls:` prefix under `-Z`. Port 0 takes a free port; the
    /// addresses bound are printed on stdout (`memstored listening on
    /// ADDR:PORT`) and the first is written to `--port-file`.
    #[arg(short = 'l', long = "listen", default_value = "127.0.0.1", value_parser = crate::app::listen::parse_listen_list)]
    pub listen: crate::app::listen::Listen,
    /// The port of `-l`'s addresses that name none (memcached's `-p`); 0
    /// or memcached's -1: a free port.
    #[arg(short = 'p', long = "port", allow_negative_numbers = true, value_parser = parse_port)]
    pub port: Option<u16>,
    /// memcached's `-m`: megabytes for the default store, the same as
    /// `-s '*#capsiz=Nm'` (default 64). Without a store name only: with
    /// one, give `capsiz=` in it.
    #[arg(short = 'm', long = "memory-limit", value_name = "MB")]
    pub memory_limit: Option<u64>,
    /// Also listen on this Unix socket (memcached's `-s`, whose letter is
    /// memstored's store; a `-s` path that is no database name is taken as
    /// this, `take_memcached_socket`). As in memcached it replaces the TCP port, unless
    /// `-l` or `-p` is given too. A socket file left at PATH by an earlier
    /// run is replaced (not one a live server listens on); the file is
    /// removed at exit while it is still this server's.
    #[arg(long = "unix-socket", value_name = "PATH")]
    pub unix_socket: Option<std::path::PathBuf>,
    /// The Unix socket's access mask, in octal (memcached's `-a`).
    #[arg(short = 'a', long = "unix-mask", default_value = "700", value_parser = parse_mask)]
    pub unix_mask: u32,
    /// Whether `-l` was given (on the command line or in `--config`),
    /// not defaulted: `--unix-socket` keeps the TCP port only then.
    #[arg(skip)]
    pub listen_given: bool,
    /// memcached's `-o` options (comma-separated; may be repeated):
    /// `lru_crawler`/`no_lru_crawler`, `slab_automove=N` and
    /// `idle_timeout=N` act, its internal tuning (`modern`, `hashpower`,
    /// `lru_maintainer`, ...) is ignored and logged, `ssl_*` configure
    /// `-Z`'s TLS, anything memstored does not do (extstore) is refused
    /// with the reason (`extended.rs`).
    #[arg(short = 'o', long = "extended", value_name = "LIST")]
    pub extended: Vec<String>,
    /// memcached's `-Z`: TLS on the memcached TCP port (every connection),
    /// with `-o ssl_chain_cert=FILE,ssl_key=FILE` and the other `ssl_*`
    /// options (docs/memcached-compat.md "TLS"). The Unix socket stays
    /// plaintext, as in memcached.
    #[arg(short = 'Z', long = "enable-ssl")]
    pub enable_ssl: bool,
    /// How long a TLS client may take over its handshake before it is
    /// dropped (counted in `ssl_handshake_errors`), in seconds.
    #[arg(long = "tls-handshake-timeout", value_name = "SECS", default_value = "10", value_parser = parse_secs)]
    pub tls_handshake_timeout: Duration,
    /// memcached's `-U`: memstored has no UDP; 0 (off, memcached 1.6's
    /// default) is accepted so that memcached command lines start.
    #[arg(short = 'U', long = "udp-port", value_parser = parse_udp_port)]
    pub udp_port: Option<u16>,
    /// Kyoto Tycoon's port, `[ADDR:]PORT` (ADDR defaults to 127.0.0.1; off
    /// by default; KT's own default is 1978): its binary protocol and its
    /// HTTP interface (TSV-RPC at /rpc/NAME, RESTful /KEY), as `ktserver`'s
    /// port. Port 0 takes a free port, printed on stdout after the main one
    /// (`memstored kt listening on ADDR:PORT`). It has no authentication,
    /// so it cannot be combined with --sasl-file.
    #[arg(long = "kt-listen", value_name = "[ADDR:]PORT", value_parser = parse_listen)]
    pub kt_listen: Option<SocketAddr>,
    /// Tkrzw-RPC's gRPC port, `[ADDR:]PORT` (ADDR defaults to 127.0.0.1; off
    /// by default; tkrzw_server's own default is 1978): `tkrzw_rpc.DBMService`,
    /// what Tkrzw-RPC's tools and client libraries speak (docs/tkrzw-rpc.md
    /// says which calls are served). Port 0 takes a free port, printed on
    /// stdout after the main one (`memstored grpc listening on ADDR:PORT`).
    /// On 127.0.0.1:1978 when started the tkrzw_server way (`--async`,
    /// `--address`, `--auth` or an underscore flag of tkrzw_server's; see
    /// its flags below). TLS: `--auth`. Tkrzw-RPC has no login: with
    /// --sasl-file every call is refused (UNAUTHENTICATED) unless `--auth`
    /// has `root=` (client certificates).
    #[arg(long = "grpc-listen", value_name = "[ADDR:]PORT", value_parser = parse_listen)]
    pub grpc_listen: Option<SocketAddr>,
    /// Close a connection of the Kyoto Tycoon port that has sent nothing
    /// for SECS seconds while none of its requests was being served
    /// (ktserver's `-tout`, also 30 s by default); 0: never.
    #[arg(long = "kt-timeout", value_name = "SECS", default_value = "30", value_parser = parse_secs_or_never)]
    pub kt_timeout: Duration,
    /// Initial read buffer per connection (at most 1m; larger requests
    /// grow it, charged to --conn-memory). `-B auto|ascii|binary` is
    /// memcached's `-B` instead: the protocols the memcached port speaks
    /// (`auto`: every protocol, sniffed from the first byte).
    #[arg(short = 'B', long = "initial-size", default_value = "2048", value_parser = parse_b_flag)]
    pub initial_size: BFlag,
    /// memcached's `-C`: `stats settings` says `cas_enabled no`. memstored
    /// keeps CAS values all the same (its engines need them).
    #[arg(short = 'C', long = "disable-cas")]
    pub disable_cas: bool,
    /// memcached's `-b`: the listen backlog of the memcached port.
    #[arg(short = 'b', long = "listen-backlog", default_value = "1024")]
    pub listen_backlog: u32,
    /// Free space kept before each read (at most 1m).
    #[arg(short = 'N', long = "reserve-size", default_value = "1024", value_parser = parse_buffer_size)]
    pub reserve_size: usize,
    /// Threads for blocking work: disk sync, backup, rebuild, RPC key
    /// searches (they keep it off the worker threads).
    // Named for what it sets: `--write-threads`, memstored 0.1's name, is
    // kept as a hidden alias (writes run on the worker threads, not here).
    /// Without a number, `-W` is memcached's: `--disable-watch`.
    #[arg(
        short = 'W',
        long = "blocking-threads",
        alias = "write-threads",
        num_args = 0..=1,
        value_name = "N"
    )]
    pub blocking_threads: Option<Option<usize>>,
    /// memcached's `-W`: the `watch` command is refused.
    #[arg(long = "disable-watch")]
    pub disable_watch: bool,
    /// Worker threads, which serve every connection, reads and writes
    /// alike (default: number of cores). `--threads` is tkrzw_server's
    /// name for it, `-t` memcached's letter.
    // `--read-threads`, memstored 0.1's name, is kept as a hidden alias.
    #[arg(
        short = 'R',
        long = "worker-threads",
        alias = "read-threads",
        visible_alias = "threads",
        visible_short_alias = 't'
    )]
    pub workers: Option<usize>,
    /// How connections are scheduled: `per-core` (each worker thread runs
    /// its own event loop and keeps a connection for life, as memcached's
    /// threads do) or `shared` (one tokio runtime whose workers steal tasks
    /// from each other). The test suite runs a second time with
    /// MEMSTORED_SCHEDULER=shared, so both stay correct.
    #[arg(
        long,
        value_enum,
        default_value = "per-core",
        env = "MEMSTORED_SCHEDULER"
    )]
    pub scheduler: crate::state::server::Scheduler,
    /// What the memcached port's connections wait on: io_uring (one system
    /// call for many receives and replies) or epoll. `auto` takes io_uring
    /// when the kernel allows it, the scheduler is per-core and
    /// --sync-replicas is off; `stats` reports the choice as `io_engine`.
    #[arg(long = "io", value_enum, default_value = "auto", env = "MEMSTORED_IO")]
    pub io: crate::net::uring::IoChoice,
    /// Accepted for tkrzw_server's command line. memstored is always
    /// asynchronous: every connection is a task on the worker threads
    /// (-R), and slow work (sync, backup, rebuild) runs on -W threads.
    /// It starts memstored the tkrzw_server way: the gRPC port on
    /// 127.0.0.1:1978 unless --address or --grpc-listen says where.
    #[arg(long = "async")]
    pub async_api: bool,
    /// Maximum simultaneous connections.
    #[arg(
        short = 'c',
        long = "max-connections",
        visible_alias = "conn-limit",
        default_value = "1024",
        value_parser = parse_max_connections
    )]
    pub max_connections: usize,
    /// Largest value accepted (k/m/g suffixes, up to 4g-1).
    #[arg(short = 'I', long = "max-item-size", default_value = "64m", value_parser = parse_item_size)]
    pub max_item_size: u64,
    /// Memory for all connections' buffers together: partial requests and
    /// replies not yet read by their clients (k/m/g suffixes). When it is
    /// spent, a connection that needs more waits up to a second, then is
    /// answered "out of memory" and closed (`stats conn_buffer_refused`).
    #[arg(long = "conn-memory", default_value = "256m", value_parser = parse_size_usize)]
    pub conn_memory: usize,
    /// SASL PLAIN credentials: one `user:password` per line. Enables SASL.
    #[arg(long = "sasl-file")]
    pub sasl_file: Option<PathBuf>,
    /// Open the store read-only; writes are refused.
    #[arg(long = "read-only")]
    pub read_only: bool,
    /// Synchronize the store to disk every SECS seconds.
    #[arg(long = "sync-interval", value_name = "SECS")]
    pub sync_interval: Option<u64>,
    /// How long one RPC key search (match_regex, match_similar, search...)
    /// may run before it is stopped and answered with an error, in seconds.
    #[arg(long = "search-timeout", value_name = "SECS", default_value = "5", value_parser = parse_secs)]
    pub search_timeout: Duration,
    /// Write the port listened on to this file (replaced whole, once the
    /// store is open and connections are accepted; removed at exit).
    #[arg(long = "port-file")]
    pub port_file: Option<PathBuf>,
    /// Run as USER once the ports are bound, before any store is opened
    /// (memcached's `-u`; only when started as root, ignored otherwise).
    #[arg(short = 'u', long = "user", value_name = "USER")]
    pub user: Option<String>,
    /// Write the process id to this file (memcached's `-P`).
    #[arg(short = 'P', long = "pid-file", visible_alias = "pidfile")]
    pub pid_file: Option<PathBuf>,
    /// Let the text `shutdown` command stop the server (memcached's `-A`);
    /// without it `shutdown` answers `SERVER_ERROR: shutdown not enabled`.
    #[arg(short = 'A', long = "enable-shutdown")]
    pub enable_shutdown: bool,
    /// Refuse to flush the store (memcached's `-F`): text `flush_all`
    /// answers `CLIENT_ERROR flush_all not allowed`, binary flush `Auth
    /// failure.`, MessagePack-RPC `clear` an error. Still counted in
    /// `cmd_flush`, as memcached counts them.
    #[arg(short = 'F', long = "disable-flush-all")]
    pub disable_flush_all: bool,
    /// A full cache refuses writes instead of evicting (memcached's `-M`):
    /// text `SERVER_ERROR out of memory storing object`, binary 0x82,
    /// counted in `stats store_no_memory`. The same as adding
    /// `disable_evictions=true` to every database name.
    #[arg(short = 'M', long = "disable-evictions")]
    pub disable_evictions: bool,
    /// Verbose logging (repeat for more).
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Read flags from a TOML file: each key is a long flag name
    /// (`listen = "0.0.0.0:11211"`, `store = ["a.tkh"]`, `read-only = true`).
    /// A flag given on the command line wins over the file.
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the settings in effect (flags, config file and defaults) as a
    /// config file, and exit.
    #[arg(long = "print-config")]
    pub print_config: bool,
    /// The update log (`--ulog-dir`, `--server-id`, ...; crate::replication::ulog).
    #[command(flatten)]
    pub ulog: crate::replication::ulog::UlogArgs,
    /// Replication (`--replicate-from`, ...; crate::replication).
    #[command(flatten)]
    pub replica: crate::replication::ReplicaArgs,
    /// memcached's `-Y` and `-d` (app::mc_flags).
    #[command(flatten)]
    pub mc: crate::app::mc_flags::McFlags,
    /// Print help.
    #[arg(short = 'h', long = "help", action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// tkrzw_server's own flags, listed last under their own heading (`--address`,
    /// `--auth`, `--server_id`, ...; app::tkrzw_flags).
    #[command(flatten)]
    pub tkrzw: crate::app::tkrzw_flags::TkrzwArgs,
}

/// The database served when no name is given (and `-I` is at most its cap).
pub const DEFAULT_STORE: &str = "*#capsiz=64m";

/// The smallest `-I`, memcached's `ITEM_SIZE_MAX_LOWER_LIMIT`.
const MIN_ITEM_SIZE: u64 = 1024;

/// The default cache's cap in MiB.
const DEFAULT_CAP_MIB: u64 = 64;

/// The default database for an item limit of `max_item` bytes: the 64 MiB
/// cache, or, when `-I` asks for items above that, a cache of twice `-I`,
/// so that `-I 2g` alone takes and serves a 1.5 GiB value (seed 000's
/// promise) instead of refusing every such value as too large for the cache.
/// Twice: memcached's own bound (it refuses `-I` above half of `-m`), and a
/// lock stripe of a capped cache holds items of up to half the cap (README
/// "Lock stripes"). A user who names `-m` or a store gets what they named.
fn default_store(max_item: u64) -> String {
    let item_mib = max_item.div_ceil(1 << 20);
    if item_mib <= DEFAULT_CAP_MIB {
        return DEFAULT_STORE.to_string();
    }
    format!("*#capsiz={}m", 2 * item_mib)
}

impl Args {
    /// The database names to serve: `-s` ones, then positional ones, else
    /// the default. The first is the one the memcached protocols use.
    pub fn stores(&self) -> Vec<String> {
        let all: Vec<String> = self.store.iter().chain(&self.names).cloned().collect();
        match self.memory_limit {
            _ if !all.is_empty() => all,
            Some(mb) => vec![format!("*#capsiz={mb}m")],
            None => vec![default_store(self.max_item_size)],
        }
    }

    /// The memcached port's addresses: `-l`'s, each with its own port,
    /// else `-p`'s, else 11211.
    pub fn listen_addrs(&self) -> Vec<(crate::app::listen::ListenTls, SocketAddr)> {
        self.listen.addrs(self.port)
    }

    /// The first of `listen_addrs`, the one `stats settings` reports.
    pub fn listen_addr(&self) -> SocketAddr {
        self.listen_addrs()
            .first()
            .map_or(SocketAddr::from(([127, 0, 0, 1], 11211)), |(_, a)| *a)
    }

    /// memcached's `-s PATH` (its Unix socket; the letter is memstored's
    /// store): a `-s` value that is no database name (no `#`, no engine's
    /// extension or symbol) and is a path (it has a `/`) is taken as the
    /// socket, so that a memcached command line such as `-s
    /// /tmp/memcached.sock -m 64` starts unchanged. A database name is never
    /// taken: anything `DbName::parse` accepts stays a store.
    pub fn take_memcached_socket(&mut self) {
        if self.unix_socket.is_some() {
            return;
        }
        let is_socket = |s: &String| {
            !s.contains('#') && s.contains('/') && memstored_engine::DbName::parse(s).is_err()
        };
        if let Some(i) = self.store.iter().position(is_socket) {
            let path = self.store.remove(i);
            tracing::info!("-s {path}: not a database name; memcached's Unix socket");
            self.unix_socket = Some(path.into());
        }
    }

    /// Flags that contradict each other: `-m` with a store name.
    pub fn conflicts(&self) -> Option<String> {
        if let Some(why) = self.zero_threads() {
            return Some(why);
        }
        if let Some(why) = self.item_size_bounds() {
            return Some(why);
        }
        let named = !self.store.is_empty() || !self.names.is_empty();
        match self.memory_limit {
            Some(mb) if named => Some(format!(
                "-m {mb} sets the size of the default store; with a store name, give the cap in it (e.g. '*#capsiz={mb}m')"
            )),
            Some(0) => Some("-m 0: the cache needs some memory".into()),
            _ => None,
        }
    }

    /// memcached's lower `-I` bound, in its words. Its upper ones (half of
    /// `-m`, 1g) are not memstored's: without `-m` the default cache grows
    /// to twice `-I` (`default_store`), and `-I` goes up to 4g-1
    /// (`parse_item_size`).
    fn item_size_bounds(&self) -> Option<String> {
        (self.max_item_size < MIN_ITEM_SIZE)
            .then(|| "Item max size cannot be less than 1024 bytes.".into())
    }

    /// The names to open: `stores()`, with `disable_evictions=true` added
    /// to each under `-M`.
    pub fn stores_to_open(&self) -> Vec<String> {
        let mut all = self.stores();
        if self.disable_evictions {
            for name in &mut all {
                name.push_str("#disable_evictions=true");
            }
        }
        all
    }

    /// Whether to listen on TCP: always, but with `--unix-socket` only if
    /// `-l` or `-p` asks (memcached's `-s` disables network support).
    pub fn tcp_wanted(&self) -> bool {
        self.unix_socket.is_none() || self.listen_given || self.port.is_some()
    }

    /// Worker threads to run: `-R`, else the number of cores.
    /// `-t 0` (memcached refuses it too).
    pub fn zero_threads(&self) -> Option<String> {
        (self.workers == Some(0)).then(|| "-t 0: at least one worker thread is needed".into())
    }

    /// `-W N`'s threads for blocking work (2 without it).
    pub fn blocking_threads(&self) -> usize {
        self.blocking_threads.flatten().unwrap_or(2)
    }

    /// `--disable-watch`, or memcached's `-W` without a number.
    pub fn watch_disabled(&self) -> bool {
        self.disable_watch || matches!(self.blocking_threads, Some(None))
    }

    pub fn worker_threads(&self) -> usize {
        self.workers.filter(|n| *n > 0).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        })
    }
}

/// `[ADDR:]PORT`: a bare port listens on 127.0.0.1, a bare address
/// (memcached's `-l 127.0.0.1`) on port 11211.
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Ok(ip) = s
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
    {
        return Ok(SocketAddr::new(ip, 11211));
    }
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    use std::net::ToSocketAddrs;
    s.to_socket_addrs()
        .map_err(|e| format!("bad listen address {s:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("bad listen address {s:?}"))
}

/// `-p`: a port, or memcached's -1 for a free one (the same as 0 here).
fn parse_port(s: &str) -> Result<u16, String> {
    match s.trim() {
        "-1" => Ok(0),
        p => p.parse().map_err(|e| format!("bad port {s:?}: {e}")),
    }
}

/// An access mask in octal, as memcached's `-a` takes it (`700`, `0770`).
fn parse_mask(s: &str) -> Result<u32, String> {
    match u32::from_str_radix(s.trim(), 8) {
        Ok(m) if m <= 0o777 => Ok(m),
        _ => Err(format!("bad access mask {s:?}: octal, 000 to 777")),
    }
}

/// memcached's `-U`: only 0, UDP off.
fn parse_udp_port(s: &str) -> Result<u16, String> {
    match s.trim().parse::<u16>() {
        Ok(0) => Ok(0),
        _ => Err(format!(
            "-U {s}: memstored does not serve UDP (memcached's UDP protocol); use -U 0 or leave it out"
        )),
    }
}

/// The most `-B` and `-N` may be. Every connection reserves this much at
/// its first read, outside the memory budget (`--conn-memory`); `3g`
/// started a server whose every connection was then reset (issue 40).
pub const MAX_BUFFER_SIZE: usize = 1 << 20;

/// `-B` and `-N`: a size up to [`MAX_BUFFER_SIZE`].
/// `-B`: memstored 0.1's initial buffer size, or memcached's binding
/// protocol when the value is one of its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BFlag {
    Size(usize),
    Binding(crate::state::server::Binding),
}

impl BFlag {
    /// The initial buffer size (the default when `-B` named a protocol).
    pub fn size(self) -> usize {
        match self {
            BFlag::Size(n) => n,
            BFlag::Binding(_) => DEFAULT_INITIAL_SIZE,
        }
    }

    /// memcached's binding protocol (`auto` unless `-B` named one).
    pub fn binding(self) -> crate::state::server::Binding {
        match self {
            BFlag::Size(_) => crate::state::server::Binding::Auto,
            BFlag::Binding(b) => b,
        }
    }
}

const DEFAULT_INITIAL_SIZE: usize = 2048;

fn parse_b_flag(s: &str) -> Result<BFlag, String> {
    use crate::state::server::Binding;
    Ok(match s {
        "auto" => BFlag::Binding(Binding::Auto),
        "ascii" => BFlag::Binding(Binding::Ascii),
        "binary" => BFlag::Binding(Binding::Binary),
        _ => BFlag::Size(
            parse_buffer_size(s)
                .map_err(|e| format!("{e} (or memcached's protocol: auto, ascii or binary)"))?,
        ),
    })
}

fn parse_buffer_size(s: &str) -> Result<usize, String> {
    match parse_size_usize(s)? {
        n if n <= MAX_BUFFER_SIZE => Ok(n),
        _ => Err(format!(
            "{s:?} is too large for a connection's buffer: at most 1m (bigger requests grow it, charged to --conn-memory)"
        )),
    }
}

fn parse_size_usize(s: &str) -> Result<usize, String> {
    let n = parse_size(s)?;
    usize::try_from(n).map_err(|_| format!("size {s:?} too large"))
}

/// `-c`: at least 1, as memcached demands (0 refused every connection).
fn parse_max_connections(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("maximum connections must be greater than 0".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Seconds, fractions allowed; more than zero.
fn parse_secs(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 1e9 => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!(
            "bad number of seconds {s:?}: expected a positive number"
        )),
    }
}

/// Seconds as `parse_secs` takes them, or 0 (none).
fn parse_secs_or_never(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(0.0) => Ok(Duration::ZERO),
        _ => parse_secs(s).map_err(|e| format!("{e} (or 0 for never)")),
    }
}

/// `-I`: at most 4g-1 (the binary protocol's body length is a u32).
fn parse_item_size(s: &str) -> Result<u64, String> {
    let n = parse_size(s)?;
    if n == 0 {
        return Err("the item size must be positive".into());
    }
    // "4g" itself is accepted and means the largest u32 body.
    Ok(n.min(u64::from(u32::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("1k"), Ok(1024));
        assert_eq!(parse_size("2Gi"), Ok(2 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("x").is_err());
        assert_eq!(parse_item_size("4g"), Ok(u64::from(u32::MAX)));
    }

    #[test]
    fn listen() {
        assert_eq!(
            parse_listen("11222"),
            Ok("127.0.0.1:11222".parse().unwrap())
        );
        assert_eq!(parse_listen("0.0.0.0:5"), Ok("0.0.0.0:5".parse().unwrap()));
        assert_eq!(parse_listen("0"), Ok("127.0.0.1:0".parse().unwrap()));
    }

    #[test]
    fn defaults() {
        let a = Args::parse_from(["memstored"]);
        assert_eq!(a.stores(), ["*#capsiz=64m"]);
        assert_eq!(a.listen_addr(), "127.0.0.1:11211".parse().unwrap());
        assert_eq!(a.max_item_size, 64 << 20);
        assert_eq!(a.max_connections, 1024);
        assert_eq!(a.conn_memory, crate::state::budget::DEFAULT_LIMIT);
    }

    /// memcached's own command line (Debian's memcached.conf flags) means
    /// the same here.
    #[test]
    fn memcached_flags() {
        let a = Args::parse_from([
            "memstored",
            "-m",
            "64",
            "-p",
            "11311",
            "-l",
            "127.0.0.1",
            "-c",
            "100",
            "-t",
            "4",
            "-U",
            "0",
            "-P",
            "/tmp/mc.pid",
            "-M",
            "-A",
            "-F",
        ]);
        assert_eq!(a.stores(), ["*#capsiz=64m"]);
        assert_eq!(a.stores_to_open(), ["*#capsiz=64m#disable_evictions=true"]);
        assert_eq!(a.listen_addr(), "127.0.0.1:11311".parse().unwrap());
        assert_eq!((a.max_connections, a.worker_threads()), (100, 4));
        assert_eq!(a.pid_file, Some(PathBuf::from("/tmp/mc.pid")));
        assert!(a.enable_shutdown && a.disable_flush_all && a.conflicts().is_none());
        let a = Args::parse_from(["memstored", "-p", "-1"]);
        assert_eq!(a.listen_addr(), "127.0.0.1:0".parse().unwrap());
        let a = Args::parse_from(["memstored", "--port=0", "--conn-limit=5", "--pidfile=x"]);
        assert_eq!(a.listen_addr(), "127.0.0.1:0".parse().unwrap());
        assert_eq!(a.stores(), [DEFAULT_STORE]);
        // An item limit above the default cache makes it twice that.
        // memcached's `-s` socket beside memstored's `-s` store.
        let mut a = Args::parse_from(["memstored", "-m", "128", "-s", "/tmp/mc.0", "-U", "0"]);
        a.take_memcached_socket();
        assert_eq!(
            a.unix_socket.as_deref(),
            Some(std::path::Path::new("/tmp/mc.0"))
        );
        assert!(a.store.is_empty() && a.conflicts().is_none());
        for store in [
            "/tmp/casket.tkh",
            "x/y.kct#bnum=10",
            "*",
            "/tmp/x.sock#dbm=tree",
        ] {
            let mut a = Args::parse_from(["memstored", "-s", store]);
            a.take_memcached_socket();
            assert_eq!((a.store.len(), a.unix_socket), (1, None), "{store}");
        }
        let a = Args::parse_from(["memstored", "-I", "2g"]);
        assert_eq!(a.stores(), ["*#capsiz=4096m"]);
        let a = Args::parse_from(["memstored", "-I", "2g", "-m", "100"]);
        assert_eq!(a.stores(), ["*#capsiz=100m"]);
        // memcached's lower -I bound (its t/item_size_max.t).
        let a = Args::parse_from(["memstored", "-I", "1000"]);
        assert!(a.conflicts().unwrap().contains("less than 1024 bytes"));
        let a = Args::parse_from(["memstored", "-I", "1024"]);
        assert!(a.conflicts().is_none());
        assert_eq!(parse_listen("::1"), Ok("[::1]:11211".parse().unwrap()));
        assert!(Args::try_parse_from(["memstored", "-U", "11211"])
            .unwrap_err()
            .to_string()
            .contains("does not serve UDP"));
        let a = Args::parse_from(["memstored", "-m", "64", "-s", "a.tkh"]);
        assert!(a.conflicts().unwrap().contains("capsiz=64m"));
    }

    /// Seed 002's tkrzw_server command line, and ktserver's several names.
    #[test]
    fn tkrzw_server_flags() {
        let a = Args::parse_from([
            "memstored",
            "--async",
            "--threads",
            "4",
            "casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending",
        ]);
        assert!(a.async_api);
        assert_eq!(a.worker_threads(), 4);
        assert_eq!(
            a.stores(),
            ["casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending"]
        );
        let a = Args::parse_from(["memstored", "-s", "a.kch", "b.kct", "-s", "+", "c.tkh"]);
        assert_eq!(a.stores(), ["a.kch", "+", "b.kct", "c.tkh"]);
    }
}
