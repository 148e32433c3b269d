//! `tkrzw_server`'s command line (tkrzw-rpc 0.9.10), spelled its way, with
//! underscores: `memstored --async --threads 4 casket.tkh` starts as
//! `tkrzw_server` would, its gRPC port on 1978 (docs/tkrzw-rpc.md
//! "Command line").
//!
//! Each flag that has a memstored twin is folded into it by `tkrzw_fold::fold` once the
//! command line (and `--config`) is parsed, so the rest of the server sees
//! one setting: `--address` is `--grpc-listen`, `--server_id` `--server-id`,
//! `--ulog_prefix` `--ulog-dir`, `--ulog_max_file_size`
//! `--ulog-segment-size`, `--pid_file` `-P`, `--read_only` `--read-only`.
//! Giving both spellings of one setting is refused by clap as a conflict.
//! The others are memstored's only spelling: `--auth` (the gRPC port's TLS),
//! `--log_file`, `--log_level`; the replication flags `--repl_*` are the
//! replica's own (`crate::replication::ReplicaArgs`).
//!
//! **The tkrzw_server way.** memstored is started the tkrzw_server way when
//! any flag spelled only tkrzw_server's way is given: `--async`, `--address`,
//! `--auth` or any underscore flag below (`--threads` is memcached's as much
//! as tkrzw_server's, so it does not count). Then the gRPC port listens on
//! 127.0.0.1:1978 unless an address is given (`--address` or
//! `--grpc-listen`); tkrzw_server's own default is 0.0.0.0:1978, which
//! memstored, like its other ports, opens only when asked. The memcached
//! port stays where `-l`/`-p` put it (127.0.0.1:11211).

use std::net::SocketAddr;
use std::path::PathBuf;

/// Where the gRPC port listens when memstored is started the tkrzw_server
/// way and no address is given: tkrzw_server's port, on loopback.
pub const TKRZW_DEFAULT_GRPC: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 1978);

/// tkrzw_server's flags, spelled its way.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "tkrzw_server's flags (docs/tkrzw-rpc.md)")]
pub struct TkrzwArgs {
    /// tkrzw_server's `--address HOST:PORT`: the gRPC port's address, the
    /// same as `--grpc-listen` (a port alone is refused, as tkrzw_server
    /// refuses it).
    #[arg(long = "address", value_name = "HOST:PORT", value_parser = parse_address, conflicts_with = "grpc_listen")]
    pub address: Option<SocketAddr>,
    /// The gRPC port's TLS, as tkrzw_server takes it:
    /// `ssl:key=FILE,cert=FILE[,root=FILE]` (PEM files: the server's private
    /// key, its certificate chain, and the root certificates client
    /// certificates must chain to). With `root=` every client must present
    /// a certificate it verifies (mutual TLS); without it the port serves
    /// TLS to any client (tkrzw_server demands `root=`).
    #[arg(long = "auth", value_name = "ssl:key=FILE,cert=FILE[,root=FILE]", value_parser = parse_auth)]
    pub auth: Option<TlsFiles>,
    /// tkrzw_server's `--server_id`: the same as `--server-id` (1..65535;
    /// tkrzw_server's default is 1, memstored's 0).
    #[arg(long = "server_id", id = "tk_server_id", value_name = "N", value_parser = clap::value_parser!(u16).range(1..), conflicts_with = "server_id")]
    pub server_id: Option<u16>,
    /// tkrzw_server's `--ulog_prefix`: the update log, in the directory of
    /// that name (memstored's `--ulog-dir`, created if missing). Its
    /// segments are memstored's (`ulog-NNNNNNNNNN.log`), not Tkrzw's
    /// message-queue files.
    #[arg(long = "ulog_prefix", value_name = "PATH", conflicts_with = "ulog_dir")]
    pub ulog_prefix: Option<PathBuf>,
    /// tkrzw_server's `--ulog_max_file_size`: the same as
    /// `--ulog-segment-size` (bytes, k/m/g suffixes; tkrzw_server's default
    /// is 1g, memstored's 64m).
    #[arg(long = "ulog_max_file_size", value_name = "SIZE", value_parser = crate::replication::ulog::parse_segment_size, conflicts_with = "ulog_segment_size")]
    pub ulog_max_file_size: Option<u64>,
    /// tkrzw_server's `--pid_file`: the same as `-P`.
    #[arg(
        long = "pid_file",
        id = "tk_pid_file",
        value_name = "FILE",
        conflicts_with = "pid_file"
    )]
    pub pid_file: Option<PathBuf>,
    /// tkrzw_server's `--read_only`: the same as `--read-only`.
    #[arg(long = "read_only", id = "tk_read_only")]
    pub read_only: bool,
    /// Write the log to FILE (appended to; without it, stderr). Unlike
    /// tkrzw_server, SIGHUP does not reopen it.
    #[arg(long = "log_file", value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// The least severe log messages kept: debug, info, warn, error or
    /// fatal (fatal keeps errors only: memstored has no level above error).
    /// The same as `-v` (debug), which it cannot be combined with;
    /// RUST_LOG, when set, wins over both.
    #[arg(
        long = "log_level",
        value_name = "LEVEL",
        value_enum,
        conflicts_with = "verbose"
    )]
    pub log_level: Option<LogLevel>,
}

/// `--log_level`'s levels, tkrzw_server's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
    Fatal,
}

impl TkrzwArgs {
    /// Whether a flag only tkrzw_server spells this way was given (the
    /// module's "tkrzw_server way"; `--async` is `Args::async_api`).
    pub fn given(&self) -> bool {
        self.address.is_some()
            || self.auth.is_some()
            || self.server_id.is_some()
            || self.ulog_prefix.is_some()
            || self.ulog_max_file_size.is_some()
            || self.pid_file.is_some()
            || self.read_only
            || self.log_file.is_some()
            || self.log_level.is_some()
    }
}

/// `--address`: `HOST:PORT` only, as tkrzw_server demands a colon.
fn parse_address(s: &str) -> Result<SocketAddr, String> {
    if !s.contains(':') {
        return Err(format!(
            "--address {s:?}: HOST:PORT expected (tkrzw_server's form), e.g. 127.0.0.1:1978"
        ));
    }
    use std::net::ToSocketAddrs;
    s.to_socket_addrs()
        .map_err(|e| format!("--address {s:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("--address {s:?}: no address"))
}

/// `--auth`'s PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub key: PathBuf,
    pub cert: PathBuf,
    /// Roots client certificates must chain to: mutual TLS when given.
    pub root: Option<PathBuf>,
}

/// `ssl:key=FILE,cert=FILE[,root=FILE]`, tkrzw_server's syntax.
pub fn parse_auth(s: &str) -> Result<TlsFiles, String> {
    let Some(params) = s.strip_prefix("ssl:") else {
        return Err(format!(
            "--auth {s:?}: unknown authentication mode; expected ssl:key=FILE,cert=FILE[,root=FILE]"
        ));
    };
    let (mut key, mut cert, mut root) = (None, None, None);
    for field in params.split(',').filter(|f| !f.is_empty()) {
        let (name, value) = field.split_once('=').unwrap_or((field, ""));
        let slot = match name {
            "key" => &mut key,
            "cert" => &mut cert,
            "root" => &mut root,
            _ => {
                return Err(format!(
                    "--auth: unknown parameter {name:?} (key, cert, root)"
                ))
            }
        };
        if value.is_empty() {
            return Err(format!("--auth: {name}= needs a file"));
        }
        *slot = Some(PathBuf::from(value));
    }
    Ok(TlsFiles {
        key: key.ok_or("--auth: the server private key unspecified (key=FILE)")?,
        cert: cert.ok_or("--auth: the server certificate unspecified (cert=FILE)")?,
        root,
    })
}
