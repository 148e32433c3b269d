//! Starting and stopping the server the flags describe: bind, open the
//! store, announce the port, serve until a signal, close the store.

use crate::app::listen::ListenTls;
use crate::app::runfiles::{self, Cleanup};
use crate::app::{cli, signals};
use crate::net::listener;
use crate::net::workers::Workers;
use crate::state::sasl;
use crate::state::server::Scheduler;
use crate::state::server::{Config, Server};
use crate::MEMSTORED_VERSION;
use memstored_engine::Db;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// How long in-flight batches get to finish after SIGTERM.
const GRACE: Duration = Duration::from_secs(2);

/// Why the server could not start, or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{what}{}{source}", if what.is_empty() { "" } else { ": " })]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("opening store {store:?}: {source}")]
    Open {
        store: String,
        source: memstored_engine::Error,
    },
    #[error("closing the store: {0}")]
    Close(String),
    #[error("{0}")]
    Flags(String),
}

fn io(what: String, source: std::io::Error) -> StartError {
    StartError::Io { what, source }
}

/// Runs the server the flags describe until a stop signal.
pub fn run(mut args: cli::Args) -> Result<(), StartError> {
    args.take_memcached_socket();
    let (extended, credentials) = check_flags(&args)?;
    let ascii_auth = ascii_auth(&args).map_err(StartError::Flags)?;
    let tls = tls_of(&args, &extended)?;
    let grpc_tls = args.tkrzw.auth.as_ref().map(read_tls).transpose()?;
    let stores = args.stores_to_open();
    for (what, path) in [("pid file", &args.pid_file), ("port file", &args.port_file)] {
        if let Some(p) = path {
            runfiles::check_number_file(what, p, &stores).map_err(StartError::Flags)?;
        }
    }
    // What this run makes by path, removed on every way out (dropped last).
    let mut cleanup = Cleanup::default();
    // Bound before the store is opened: a busy port must not leave new store files behind.
    let listen = args.listen_addr();
    let mut listeners = Vec::new();
    if args.tcp_wanted() {
        for (mode, addr) in args.listen_addrs() {
            let tls = listener_tls(mode, tls.as_ref().map(|(_, a)| a))?;
            listeners.push((bind_tcp(addr, args.listen_backlog)?, tls));
        }
    }
    let kt_listener = match args.kt_listen {
        Some(a) => Some(
            std::net::TcpListener::bind(a)
                .map_err(|e| io(format!("listening on {a} (--kt-listen)"), e))?,
        ),
        None => None,
    };
    let grpc_listener = match args.grpc_listen {
        Some(a) => Some(
            std::net::TcpListener::bind(a)
                .map_err(|e| io(format!("listening on {a} (--grpc-listen)"), e))?,
        ),
        None => None,
    };
    let became = match &args.user {
        Some(user) => crate::app::privileges::become_user(user).map_err(StartError::Flags)?,
        None => false,
    };
    // Made after giving up root, as memcached makes it: as -u's user, who
    // can then remove it at exit. Made as root in a directory the user
    // cannot write (a sticky /tmp, a root-owned /run), it outlived every run.
    let unix_listener = match &args.unix_socket {
        Some(path) => {
            let user = args.user.as_deref().filter(|_| became);
            Some(bind_unix(path, args.unix_mask, user, &mut cleanup)?)
        }
        None => None,
    };
    // Before anything starts a thread (stores, the update log, the runtimes).
    let daemon = match args.mc.daemon {
        true => Some(crate::app::daemon::daemonize(args.verbose > 0).map_err(StartError::Flags)?),
        false => None,
    };
    let (mut dbs, ulog) = open_stores(stores, &args)?;
    let (store, db) = dbs.remove(0);
    if let Some(p) = &args.pid_file {
        let pid = format!("{}\n", std::process::id());
        let written = runfiles::write_number_file(p, &pid)
            .map_err(|e| io(format!("writing pid file {}", p.display()), e))?;
        cleanup.0.push(written);
    }
    let mut cfg = config_of(&args, store, listen, credentials.is_some())?;
    cfg.tls = tls.as_ref().map(|(settings, _)| settings.clone());
    if ascii_auth.is_some() {
        // As memcached: with -Y the memcached port speaks text only.
        cfg.binding = crate::state::server::Binding::Ascii;
    }
    let (runtime, workers) = runtimes(&cfg)?;
    let started = Started {
        extended,
        listeners,
        unix_listener,
        kt_listener,
        grpc_listener,
        grpc_tls,
        tls: tls.map(|(_, acceptor)| acceptor),
        port_file: args.port_file.clone(),
        sync_interval: args.sync_interval,
        workers,
        ulog,
        replica: args.replica.clone(),
        ulog_args: args.ulog.clone(),
        ascii_auth,
        daemon,
    };
    let result = runtime.block_on(serve(
        db.clone(),
        dbs,
        cfg,
        credentials,
        started,
        &mut cleanup,
    ));
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}

/// The flags' own checks, the `-o` options and the SASL credentials, before
/// anything is bound or opened.
fn check_flags(
    args: &cli::Args,
) -> Result<(crate::app::extended::Extended, Option<sasl::Credentials>), StartError> {
    if let Some(why) = args.conflicts() {
        return Err(StartError::Flags(why));
    }
    crate::app::privileges::check_root(args.user.as_deref()).map_err(StartError::Flags)?;
    let mut extended = crate::app::extended::parse(&args.extended).map_err(StartError::Flags)?;
    extended.watch_disabled = args.watch_disabled();
    for o in &extended.ignored {
        tracing::info!(
            "-o {o}: tunes memcached's own machinery, which memstored does not have; ignored"
        );
    }
    if args.kt_listen.is_some() && args.sasl_file.is_some() {
        return Err(StartError::Flags(
            "--kt-listen cannot be combined with --sasl-file: Kyoto Tycoon's port has no authentication".into(),
        ));
    }
    let credentials = match &args.sasl_file {
        Some(p) => {
            let c = sasl::Credentials::load(p).map_err(|e| io(String::new(), e))?;
            tracing::info!("SASL PLAIN enabled: {} users", c.len());
            Some(c)
        }
        None => None,
    };
    Ok((extended, credentials))
}

/// `-Z`'s settings and acceptor (its certificates and key read, so that a
/// bad file stops the start before anything is bound or opened, as in
/// memcached). `-o ssl_*` without `-Z` is ignored, as memcached ignores it.
fn tls_of(
    args: &cli::Args,
    extended: &crate::app::extended::Extended,
) -> Result<
    Option<(
        crate::state::tls::TlsSettings,
        Arc<crate::net::tls::Acceptor>,
    )>,
    StartError,
> {
    if !args.enable_ssl {
        if extended.tls_given {
            tracing::warn!("-o ssl_*: ignored without -Z (as memcached does)");
        }
        return Ok(None);
    }
    if !args.tcp_wanted() {
        return Err(StartError::Flags(
            "-Z: you cannot enable SSL without a TCP port (memcached's words; the Unix socket has no TLS)".into(),
        ));
    }
    let settings = crate::state::tls::TlsSettings {
        handshake_timeout: args.tls_handshake_timeout,
        ..extended.tls.clone()
    };
    let acceptor = crate::net::tls::Acceptor::new(&settings).map_err(StartError::Flags)?;
    Ok(Some((settings, acceptor)))
}

/// The TLS acceptor of one `-l` address: `-Z`'s, none for `notls:`, or
/// one with the listener's own client-certificate check (`btls:`,
/// `mtls:`). The prefixes need `-Z`, as in memcached.
fn listener_tls(
    mode: ListenTls,
    tls: Option<&Arc<crate::net::tls::Acceptor>>,
) -> Result<Option<Arc<crate::net::tls::Acceptor>>, StartError> {
    match (mode, tls) {
        (ListenTls::Default, tls) => Ok(tls.cloned()),
        (_, None) => Err(StartError::Flags(
            "-l: the notls:, btls: and mtls: prefixes are valid only when SSL is enabled (-Z)"
                .into(),
        )),
        (ListenTls::Off, Some(_)) => Ok(None),
        (ListenTls::On(check), Some(tls)) => {
            tls.with_check(check).map(Some).map_err(StartError::Flags)
        }
    }
}

/// Binds one address of the memcached port with `-b`'s backlog.
fn bind_tcp(addr: std::net::SocketAddr, backlog: u32) -> Result<std::net::TcpListener, StartError> {
    let l = std::net::TcpListener::bind(addr).map_err(|e| io(format!("listening on {addr}"), e))?;
    // memcached's -b: listening again on a listening socket sets its
    // backlog (std listens with 128).
    let backlog = i32::try_from(backlog).unwrap_or(i32::MAX);
    // SAFETY: a valid listening socket's descriptor, owned by `l`.
    if unsafe { libc::listen(std::os::fd::AsRawFd::as_raw_fd(&l), backlog) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(io(format!("setting the listen backlog of {addr}"), e));
    }
    Ok(l)
}

/// `--auth`'s PEM files, read before anything is bound (tonic checks
/// their contents when the gRPC port starts).
fn read_tls(
    files: &crate::app::tkrzw_flags::TlsFiles,
) -> Result<crate::net::grpc_port::Tls, StartError> {
    let read = |what: &str, path: &std::path::Path| {
        std::fs::read(path).map_err(|e| io(format!("--auth: {what} {}", path.display()), e))
    };
    Ok(crate::net::grpc_port::Tls {
        cert: read("certificate", &files.cert)?,
        key: read("private key", &files.key)?,
        root: match &files.root {
            Some(p) => Some(read("root certificates", p)?),
            None => None,
        },
    })
}

/// The databases by name, the first the server's own.
type Stores = Vec<(String, Arc<Db>)>;
/// The update log every database appends to (`--ulog-dir`).
type Ulog = Arc<memstored_engine::ulog::UpdateLog>;

/// Opens every database before any is served (a failure closes the ones
/// already open, dropped, and names the one that failed), then hooks the
/// update log into them.
fn open_stores(
    stores: Vec<String>,
    args: &cli::Args,
) -> Result<(Stores, Option<Ulog>), StartError> {
    let mut dbs = Vec::new();
    for store in stores {
        let db = Db::open_for_writers(
            &store,
            !args.read_only,
            args.worker_threads(),
            args.max_item_size,
        )
        .map_err(|e| StartError::Open {
            store: store.clone(),
            source: e,
        })?;
        dbs.push((store, Arc::new(db)));
    }
    let all: Vec<Arc<Db>> = dbs.iter().map(|(_, db)| db.clone()).collect();
    let ulog =
        crate::replication::ulog::attach(&args.ulog, &all).map_err(|e| StartError::Open {
            store: format!(
                "update log {:?}",
                args.ulog.ulog_dir.clone().unwrap_or_default()
            ),
            source: e,
        })?;
    Ok((dbs, ulog))
}

/// The server's settings from the flags.
fn config_of(
    args: &cli::Args,
    store: String,
    listen: std::net::SocketAddr,
    sasl: bool,
) -> Result<Config, StartError> {
    Ok(Config {
        store,
        listen,
        unix_socket: None,
        unix_mask: args.unix_mask,
        initial_size: args.initial_size.size(),
        binding: args.initial_size.binding(),
        cas_enabled: !args.disable_cas,
        tcp_backlog: args.listen_backlog,
        reserve_size: args.reserve_size,
        max_connections: args.max_connections,
        max_item_size: args.max_item_size,
        threads: args.worker_threads(),
        verbose: args.verbose,
        sasl,
        read_only: args.read_only,
        conn_memory: args.conn_memory,
        blocking_threads: args.blocking_threads().max(1),
        search_timeout: args.search_timeout,
        kt_timeout: (!args.kt_timeout.is_zero()).then_some(args.kt_timeout),
        enable_shutdown: args.enable_shutdown,
        flush_enabled: !args.disable_flush_all,
        scheduler: args.scheduler,
        io: crate::net::uring::choose(
            args.io,
            args.scheduler == Scheduler::PerCore,
            args.replica.sync_replicas > 0,
            args.enable_ssl,
        )
        .map_err(StartError::Flags)?,
        // Set by `run` once `-Z`'s files are read (`tls_of`).
        tls: None,
        memory_file: args.mc.memory_file.clone(),
    })
}

/// After the stop and the accept loops: connections get `GRACE` to finish
/// the batch they are in (and running slow calls to finish), the replica
/// applies its last batch, and every store is synchronized and closed.
async fn wind_down(
    srv: &Arc<Server>,
    placement: &crate::net::listener::Placement,
    replica: Option<crate::replication::replica::Handle>,
) -> Result<(), StartError> {
    // After the accept loops: nothing is handed to a stopped worker.
    if let Some(u) = &placement.uring {
        u.stop();
    }
    // Let connections finish the batch they are working on, and running RPC
    // slow calls finish (searches stop at once; queued ones never start).
    let deadline = Instant::now() + GRACE;
    let busy = || {
        let c = &srv.counters;
        c.curr_connections.load(Relaxed) > 0 || c.slow_calls_running.load(Relaxed) > 0
    };
    while busy() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if let Some(r) = replica {
        // It applies its last batch and stops before the stores close.
        let _ = tokio::task::spawn_blocking(move || r.stop()).await;
    }
    write_memory_file(srv).await;
    for closing in crate::state::databases::all(srv) {
        tokio::task::spawn_blocking(move || {
            closing.synchronize(true)?;
            closing.close()
        })
        .await
        .map_err(|e| StartError::Close(e.to_string()))?
        .map_err(|e| StartError::Close(e.to_string()))?;
    }
    tracing::info!("store synchronized and closed; bye");
    Ok(())
}

/// `-e FILE` at start: the cache a graceful stop wrote is read back
/// before anything is served; an unreadable summary refuses the start.
async fn read_memory_file(srv: &Arc<Server>, path: std::path::PathBuf) -> Result<(), StartError> {
    let reading = srv.clone();
    let done =
        tokio::task::spawn_blocking(move || crate::command::memory_file::load(&reading, &path))
            .await
            .map_err(|e| StartError::Flags(format!("-e: {e}")))?;
    match done {
        Ok(Some(l)) => {
            srv.restore_hash_power(l.hash_power);
            tracing::info!(
                "-e: {} records read back ({} expired or too large left out)",
                l.records,
                l.dropped
            );
            Ok(())
        }
        Ok(None) => {
            tracing::info!("-e: no memory file to read back; starting empty");
            Ok(())
        }
        Err(e) => Err(StartError::Flags(format!("-e: {e}"))),
    }
}

/// `-e FILE` at a graceful stop (SIGUSR1, `shutdown graceful`): the cache
/// is written there, after the last batch and before the stores close.
async fn write_memory_file(srv: &Arc<Server>) {
    let Some(path) = srv.cfg.memory_file.clone() else {
        return;
    };
    if !srv.graceful.load(Relaxed) {
        tracing::info!(
            "-e: not a graceful stop (SIGUSR1 or `shutdown graceful`); no memory file written"
        );
        return;
    }
    let hp = srv.hash_power_level();
    let writing = srv.clone();
    let done =
        tokio::task::spawn_blocking(move || crate::command::memory_file::save(&writing, &path, hp))
            .await;
    match done {
        Ok(Ok(n)) => tracing::info!("-e: {n} records written to the memory file"),
        Ok(Err(e)) => tracing::error!("-e: {e}"),
        Err(e) => tracing::error!("-e: {e}"),
    }
}

/// The start-up line: where it listens, what it serves, on how many threads.
fn log_listening(cfg: &Config, db: &Db, tcp: bool, unix_path: Option<&str>) {
    let addr = cfg.listen;
    let on = match (tcp, unix_path) {
        (true, Some(p)) => format!("{addr} and unix:{p}"),
        (false, Some(p)) => format!("unix:{p}"),
        _ => addr.to_string(),
    };
    tracing::info!(
        "memstored {MEMSTORED_VERSION} listening on {on}, store {:?} ({} engine, {} shards), {} worker threads on {}",
        cfg.store,
        db.name().kind.label(),
        db.shard_count(),
        cfg.threads,
        cfg.io.label()
    );
}

/// Where the accept loops put connections: the per-core workers, and the
/// io_uring workers when the server runs on io_uring (started here, once
/// the server exists).
fn placement_for(
    srv: &Arc<Server>,
    workers: Option<Arc<Workers>>,
) -> Result<crate::net::listener::Placement, StartError> {
    let mut placement = crate::net::listener::Placement {
        workers,
        uring: None,
    };
    if srv.cfg.io == crate::state::server::IoEngine::IoUring {
        let ring =
            crate::net::uring::UringWorkers::start(srv.cfg.threads, srv, placement.workers.clone())
                .map_err(|e| io("starting the io_uring workers".into(), e))?;
        placement.uring = Some(Arc::new(ring));
    }
    Ok(placement)
}

/// The main runtime and, per-core, the workers: connections then run on
/// their workers' own runtimes, and the main one keeps the accept loops,
/// signals and timers, on one thread.
fn runtimes(cfg: &Config) -> Result<(tokio::runtime::Runtime, Option<Arc<Workers>>), StartError> {
    let starting = |e| io("starting the runtime".into(), e);
    let threads = cfg.threads;
    let (main_threads, workers) = match cfg.scheduler {
        Scheduler::Shared => (threads, None),
        Scheduler::PerCore => (
            1,
            Some(Workers::start(threads, cfg.blocking_threads).map_err(starting)?),
        ),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(main_threads)
        .max_blocking_threads(cfg.blocking_threads)
        .thread_name("memstored-main")
        .enable_all()
        .build()
        .map_err(starting)?;
    Ok((runtime, workers))
}

/// What `run` prepared before the runtime started.
struct Started {
    /// memcached's `-o` options that act (`extended.rs`).
    extended: crate::app::extended::Extended,
    /// Already bound (`-l`'s addresses, port 0 = a free one chosen by the
    /// kernel), each with its TLS acceptor (`-Z`, unless `notls:`); none
    /// with `--unix-socket` alone.
    listeners: Vec<(
        std::net::TcpListener,
        Option<Arc<crate::net::tls::Acceptor>>,
    )>,
    /// `--unix-socket`'s, already bound.
    unix_listener: Option<std::os::unix::net::UnixListener>,
    /// `--kt-listen`'s, already bound.
    kt_listener: Option<std::net::TcpListener>,
    /// `--grpc-listen`'s, already bound.
    grpc_listener: Option<std::net::TcpListener>,
    /// `--auth`'s certificates and key, read.
    grpc_tls: Option<crate::net::grpc_port::Tls>,
    /// `-Z`'s acceptor, its files read.
    tls: Option<Arc<crate::net::tls::Acceptor>>,
    port_file: Option<std::path::PathBuf>,
    sync_interval: Option<u64>,
    /// The per-core scheduler's workers (`--scheduler per-core`).
    workers: Option<Arc<Workers>>,
    /// `--ulog-dir`'s log, opened; replication streams it.
    ulog: Option<Arc<memstored_engine::ulog::UpdateLog>>,
    replica: crate::replication::ReplicaArgs,
    ulog_args: crate::replication::ulog::UlogArgs,
    /// `-Y`'s users, read.
    ascii_auth: Option<Arc<crate::state::ascii_auth::AsciiAuth>>,
    /// `-d`: told once the server serves.
    daemon: Option<crate::app::daemon::Daemon>,
}

/// Binds `--unix-socket`'s listener with the access mask `mask` (`-a`). A
/// socket file already at `path` that nobody listens on (left by a run that
/// did not stop cleanly) is replaced, as memcached does; one a live server
/// listens on, or any other file there, is an error. The socket made is
/// added to `cleanup`, so that exit removes it only while it is ours.
/// `user`: the `-u` user this process became, named in the error when the
/// file cannot be made (the directory must be the user's to write).
fn bind_unix(
    path: &std::path::Path,
    mask: u32,
    user: Option<&str>,
    cleanup: &mut Cleanup,
) -> Result<std::os::unix::net::UnixListener, StartError> {
    use std::os::unix::fs::FileTypeExt;
    let what = || format!("listening on unix socket {}", path.display());
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.file_type().is_socket() {
            match std::os::unix::net::UnixStream::connect(path) {
                Ok(_) => {
                    return Err(StartError::Flags(format!(
                        "{}: another server is listening on this unix socket",
                        what()
                    )))
                }
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(io(format!("{}: is it in use?", what()), e)),
            }
            std::fs::remove_file(path).map_err(|e| io(what(), e))?;
        }
    }
    // The mask holds from the moment the socket file exists (memcached sets
    // the umask around its bind too): nobody else can connect in between.
    // No other thread creates files yet.
    // SAFETY: umask has no preconditions; the old mask is put back below.
    let old = unsafe { libc::umask(!mask & 0o777) };
    let bound = std::os::unix::net::UnixListener::bind(path);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    let bound = bound.map_err(|e| match user {
        Some(user) if e.kind() == std::io::ErrorKind::PermissionDenied => io(
            format!(
                "{} as -u's user {user} (made after giving up root, as memcached does, so \
                 that it can be removed at exit: the directory must be writable by {user})",
                what()
            ),
            e,
        ),
        _ => io(what(), e),
    })?;
    cleanup
        .0
        .push(runfiles::Owned::claim(path).map_err(|e| io(what(), e))?);
    Ok(bound)
}

/// Tells whoever started us where we listen, once the store is open and the
/// accept loop about to run: a line on stdout and, with `--port-file`, the
/// port number in a file that appears whole (written aside, then renamed;
/// `runfiles`). Tests start the server on port 0 and wait for one of these
/// instead of guessing a free port.
fn announce(
    addr: std::net::SocketAddr,
    port_file: Option<&std::path::Path>,
    cleanup: &mut Cleanup,
) -> Result<(), StartError> {
    runfiles::write_memcached_port_file(addr);
    if let Some(p) = port_file {
        let written = runfiles::write_number_file(p, &format!("{}\n", addr.port()))
            .map_err(|e| io(format!("writing port file {}", p.display()), e))?;
        cleanup.0.push(written);
    }
    announce_line(addr);
    Ok(())
}

/// `memstored listening on WHERE` on stdout: the first TCP address's line
/// (`announce`), then one for each other `-l` address, then the Unix
/// socket's (`unix:PATH`).
fn announce_line(at: impl std::fmt::Display) {
    use std::io::Write;
    // Nobody reading stdout (closed, a full pipe's reader gone) is not an error.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "memstored listening on {at}").and_then(|()| out.flush());
}

async fn serve(
    db: Arc<Db>,
    others: Vec<(String, Arc<Db>)>,
    mut cfg: Config,
    credentials: Option<sasl::Credentials>,
    started: Started,
    cleanup: &mut Cleanup,
) -> Result<(), StartError> {
    let listening = |e| io("setting up the listener".into(), e);
    let mut listeners = Vec::new();
    for (l, tls) in started.listeners {
        l.set_nonblocking(true).map_err(listening)?;
        listeners.push((TcpListener::from_std(l).map_err(listening)?, tls));
    }
    // The first is the one `stats settings` and `--port-file` report.
    let mut bound = Vec::new();
    for (l, _) in &listeners {
        bound.push(l.local_addr().map_err(listening)?);
    }
    if let Some(first) = bound.first() {
        cfg.listen = *first;
    }
    let unix_listener = match started.unix_listener {
        Some(l) => {
            l.set_nonblocking(true).map_err(listening)?;
            Some(tokio::net::UnixListener::from_std(l).map_err(listening)?)
        }
        None => None,
    };
    let unix_path = unix_listener
        .as_ref()
        .and_then(|l| l.local_addr().ok())
        .and_then(|a| a.as_pathname().map(|p| p.display().to_string()));
    cfg.unix_socket = unix_path.clone();
    let addr = cfg.listen;
    log_listening(&cfg, &db, !listeners.is_empty(), unix_path.as_deref());
    let (stop_tx, stop_rx) = watch::channel(false);
    let others: Vec<Arc<Server>> = others
        .into_iter()
        .map(|(store, db)| {
            tracing::info!("also serving {store:?} ({} engine)", db.name().kind.label());
            let cfg = Config {
                store,
                ..cfg.clone()
            };
            Arc::new(Server::new(db, cfg, None, stop_rx.clone()))
        })
        .collect();
    let srv = Arc::new(
        Server::new(db.clone(), cfg, credentials, stop_rx)
            .with_others(others)
            .with_ascii_auth(started.ascii_auth.clone()),
    );
    if let Some(on) = started.extended.lru_crawler {
        srv.lru_crawler.store(on, Relaxed);
    }
    if let Some(level) = started.extended.slab_automove {
        srv.slab_automove.store(level, Relaxed);
    }
    if let Some(bytes) = started.extended.watcher_logbuf {
        srv.watch.set_buffer(bytes);
    }
    if started.extended.watch_disabled {
        srv.watch.disable();
    }
    if let Some(secs) = started.extended.idle_timeout {
        crate::net::idle::spawn(srv.clone(), secs);
    }
    if let Some(log) = started.ulog {
        let _ = srv.replication.ulog.set(log);
    }
    if let Some(path) = srv.cfg.memory_file.clone() {
        read_memory_file(&srv, path).await?;
    }
    let grpc_port = started.grpc_listener.is_some();
    let replica = crate::replication::start(&srv, &started.replica, &started.ulog_args, grpc_port)
        .map_err(StartError::Flags)?;
    let stop =
        signals::StopSignals::install().map_err(|e| io("installing signal handlers".into(), e))?;
    let placement = placement_for(&srv, started.workers)?;
    if let Some(tls) = &started.tls {
        let mut all = vec![tls.clone()];
        for a in listeners.iter().filter_map(|(_, a)| a.as_ref()) {
            if !all.iter().any(|b| Arc::ptr_eq(a, b)) {
                all.push(a.clone());
            }
        }
        tls.attach(&srv, all);
    }
    let accept: Vec<_> = listeners
        .into_iter()
        .map(|(l, tls)| tokio::spawn(listener::run(l, srv.clone(), placement.clone(), tls)))
        .collect();
    if !accept.is_empty() {
        announce(addr, started.port_file.as_deref(), cleanup)?;
        for more in &bound[1..] {
            announce_line(more);
        }
    }
    let kt_accept = match started.kt_listener {
        Some(l) => {
            Some(crate::net::kt_port::start(l, srv.clone(), placement.clone()).map_err(listening)?)
        }
        None => None,
    };
    let grpc_serve = match started.grpc_listener {
        Some(l) => Some(
            crate::net::grpc_port::start(
                l,
                srv.clone(),
                started.grpc_tls,
                placement.workers.clone(),
            )
            .map_err(|e| io("serving the gRPC port".into(), e))?,
        ),
        None => None,
    };
    let unix_accept =
        unix_listener.map(|l| tokio::spawn(listener::run_unix(l, srv.clone(), placement.clone())));
    if let Some(p) = &unix_path {
        announce_line(format_args!("unix:{p}"));
    }
    if let Some(d) = started.daemon {
        d.ready();
    }
    if let Some(secs) = started.sync_interval {
        signals::spawn_periodic_sync(srv.clone(), secs);
    }
    let why = tokio::select! {
        why = stop.wait(crate::state::databases::all(&srv), srv.ascii_auth.clone()) => why,
        () = srv.stop_requested.notified() => "shutdown command",
    };
    if why == signals::GRACEFUL {
        srv.graceful.store(true, Relaxed);
    }
    tracing::info!("{why}: stopping");
    let _ = stop_tx.send(true);
    for a in accept
        .into_iter()
        .chain(unix_accept)
        .chain(kt_accept)
        .chain(grpc_serve)
    {
        let _ = a.await;
    }
    wind_down(&srv, &placement, replica).await
}

/// memcached's `-Y` (app::mc_flags): its users, read; refused with what it
/// cannot be combined with.
fn ascii_auth(
    args: &crate::app::cli::Args,
) -> Result<Option<std::sync::Arc<crate::state::ascii_auth::AsciiAuth>>, String> {
    let Some(path) = &args.mc.auth_file else {
        return Ok(None);
    };
    let clash = if args.sasl_file.is_some() {
        Some("--sasl-file")
    } else if args.kt_listen.is_some() {
        Some("--kt-listen (Kyoto Tycoon's port has no authentication)")
    } else if args.grpc_listen.is_some() {
        Some("--grpc-listen (Tkrzw-RPC has no login)")
    } else if args.initial_size.binding() == crate::state::server::Binding::Binary {
        // memcached's own refusal.
        return Err(
            "You cannot allow the BINARY protocol while using ascii authentication tokens.".into(),
        );
    } else {
        None
    };
    if let Some(other) = clash {
        return Err(format!("-Y cannot be combined with {other}"));
    }
    let auth = crate::state::ascii_auth::AsciiAuth::load(path)?;
    tracing::info!("ASCII authentication enabled (-Y {})", path.display());
    Ok(Some(std::sync::Arc::new(auth)))
}
