//! The accept loop: connection limit, one task per connection.

use crate::net::connection;
use crate::net::placement::{place, Live, Pool};
use crate::net::uring::UringWorkers;
use crate::net::workers::Workers;
use crate::state::counters::bump;
use crate::state::server::Server;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream, UnixListener};

/// What memcached writes to a connection over `-c` before closing it.
pub const TOO_MANY: &[u8] = b"ERROR Too many open connections\r\n";

/// Where the accept loops put connections: on the per-core workers, on the
/// io_uring workers (the memcached port only), or (neither) as tasks of the
/// shared runtime. Startup makes it once the workers run; the server's
/// state holds no runtime or ring.
#[derive(Clone, Default)]
pub struct Placement {
    pub workers: Option<Arc<Workers>>,
    pub uring: Option<Arc<UringWorkers>>,
}

/// Accepts until shutdown; then the listener is dropped (no more accepts).
/// With `tls` (`-Z`) every connection is TLS: its handshake and its
/// requests run on the per-core (or shared) tokio workers, never on
/// io_uring, whose loop has no TLS.
pub async fn run(
    listener: TcpListener,
    srv: Arc<Server>,
    mut placement: Placement,
    tls: Option<Arc<crate::net::tls::Acceptor>>,
) {
    let listed = srv.clone();
    let _listed = listed
        .conns
        .register(&listener, listener.local_addr(), None);
    match tls {
        None => accept(listener, srv, placement, connection::serve, Pool::Memcached).await,
        Some(tls) => {
            placement.uring = None;
            let serve =
                move |stream, peer, srv| connection::serve_tls(stream, peer, srv, tls.clone());
            accept(listener, srv, placement, serve, Pool::Memcached).await
        }
    }
}

/// `run` for the Kyoto Tycoon port (`serve` is its connection handler):
/// the same counters, and a connection limit of its own of `-c`.
pub async fn run_with<F, Fut>(
    listener: TcpListener,
    srv: Arc<Server>,
    placement: Placement,
    serve: F,
) where
    F: Fn(TcpStream, SocketAddr, Arc<Server>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    accept(listener, srv, placement, serve, Pool::Kt).await
}

/// The accept loop; the memcached port's connections may go to the
/// io_uring workers (which serve the memcached protocols, and hand the
/// others to `connection::serve_from`).
async fn accept<F, Fut>(
    listener: TcpListener,
    srv: Arc<Server>,
    placement: Placement,
    serve: F,
    pool: Pool,
) where
    F: Fn(TcpStream, SocketAddr, Arc<Server>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let uring = placement.uring.as_ref().filter(|_| pool == Pool::Memcached);
    let mut shutdown = srv.shutdown.clone();
    let max = srv.cfg.max_connections as u64;
    loop {
        let (stream, peer) = match next(&mut shutdown, "the port", listener.accept()).await {
            Accepted::Stream(x) => x,
            Accepted::Failed => continue,
            Accepted::Shutdown => break,
        };
        let Some(live) = admit(&srv, max, &peer, |m| stream.try_write(m), pool) else {
            continue;
        };
        if let Some(u) = uring {
            match stream.into_std() {
                Ok(stream) => u.place(crate::net::uring::Arrival { stream, peer, live }),
                Err(e) => tracing::warn!("{peer}: handing over: {e}"),
            }
            continue;
        }
        match &placement.workers {
            None => {
                let serving = serve(stream, peer, live.0.clone());
                tokio::spawn(async move {
                    serving.await;
                    drop(live);
                });
            }
            Some(workers) => place(workers, stream, peer, live, serve.clone()),
        }
    }
    tracing::info!("stopped accepting connections");
}

/// What waiting for the next connection gave.
enum Accepted<T> {
    Stream(T),
    /// accept failed (EMFILE and friends), and the loop has backed off.
    Failed,
    Shutdown,
}

/// Waits for `accept` or shutdown, whichever comes first.
async fn next<T>(
    shutdown: &mut tokio::sync::watch::Receiver<bool>,
    what: &str,
    accept: impl Future<Output = std::io::Result<T>>,
) -> Accepted<T> {
    let accepted = tokio::select! {
        r = accept => r,
        _ = shutdown.changed() => return Accepted::Shutdown,
    };
    match accepted {
        Ok(x) => Accepted::Stream(x),
        Err(e) => {
            // Back off instead of spinning on an error that persists.
            tracing::warn!("accept on {what}: {e}");
            tokio::time::sleep(Duration::from_millis(10)).await;
            Accepted::Failed
        }
    }
}

/// Counts a new connection in, or refuses it (written `TOO_MANY` and
/// closed, as memcached does) when `-c` of its pool are open already.
fn admit(
    srv: &Arc<Server>,
    max: u64,
    peer: &dyn std::fmt::Display,
    write: impl FnOnce(&[u8]) -> std::io::Result<usize>,
    pool: Pool,
) -> Option<Live> {
    let c = &srv.counters;
    let (kt, grpc) = (
        c.kt_connections.load(Relaxed),
        c.grpc_connections.load(Relaxed),
    );
    let open = match pool {
        Pool::Memcached => c.curr_connections.load(Relaxed).saturating_sub(kt + grpc),
        Pool::Kt => kt,
        Pool::Grpc => grpc,
    };
    if open >= max {
        bump(&c.rejected_connections);
        tracing::warn!("{peer}: refused, {max} connections open (-c)");
        let _ = write(TOO_MANY);
        return None;
    }
    c.curr_connections.fetch_add(1, Relaxed);
    match pool {
        Pool::Memcached => {}
        Pool::Kt => {
            c.kt_connections.fetch_add(1, Relaxed);
        }
        Pool::Grpc => {
            c.grpc_connections.fetch_add(1, Relaxed);
        }
    }
    bump(&c.total_connections);
    Some(Live(srv.clone(), pool))
}

/// Counts a gRPC port's connection in under that port's own `-c`, or
/// refuses it (logged and counted; the socket is closed without a word, as
/// HTTP/2 has no greeting to refuse with).
pub(crate) fn admit_grpc(srv: &Arc<Server>, peer: &dyn std::fmt::Display) -> Option<Live> {
    let max = srv.cfg.max_connections as u64;
    admit(srv, max, peer, |_| Ok(0), Pool::Grpc)
}

/// The accept loop of `--unix-socket` (memcached's `-s`): the same
/// connection limit and counters as the TCP port's, connections served
/// on the per-core workers' event loops (or the shared runtime), never on
/// io_uring.
pub async fn run_unix(listener: UnixListener, srv: Arc<Server>, placement: Placement) {
    let path = listener
        .local_addr()
        .ok()
        .and_then(|a| a.as_pathname().map(|p| format!("unix:{}", p.display())))
        .unwrap_or_default();
    let _listed = srv.conns.register_as(&listener, path.clone(), None);
    let mut shutdown = srv.shutdown.clone();
    let max = srv.cfg.max_connections as u64;
    loop {
        let stream = match next(&mut shutdown, &path, listener.accept()).await {
            Accepted::Stream((stream, _)) => stream,
            Accepted::Failed => continue,
            Accepted::Shutdown => break,
        };
        let Some(live) = admit(&srv, max, &path, |m| stream.try_write(m), Pool::Memcached) else {
            continue;
        };
        match &placement.workers {
            None => spawn_unix(stream, live),
            Some(workers) => {
                match stream.into_std() {
                    Ok(stream) => workers.place(Box::new(move || {
                        match tokio::net::UnixStream::from_std(stream) {
                            Ok(stream) => spawn_unix(stream, live),
                            Err(e) => {
                                tracing::warn!("registering a unix socket client on a worker: {e}")
                            }
                        }
                    })),
                    Err(e) => tracing::warn!("{path}: handing over: {e}"),
                }
            }
        }
    }
    tracing::info!("stopped accepting connections on {path}");
}

/// Serves a Unix socket connection as a task of the current runtime.
fn spawn_unix(stream: tokio::net::UnixStream, live: Live) {
    let serving = connection::serve_unix(stream, live.0.clone());
    tokio::spawn(async move {
        serving.await;
        drop(live);
    });
}

/// A port of its own (`--kt-listen`, `--grpc-listen`), bound by
/// `startup.rs`, handed to tokio and announced: `what` in the log, and
/// `memstored SHORT listening on ADDR:PORT` on stdout after the main port's
/// line, where the tests and scripts read the port a `:0` got.
pub fn announce_port(
    listener: std::net::TcpListener,
    short: &str,
    what: &str,
) -> std::io::Result<tokio::net::TcpListener> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let addr = listener.local_addr()?;
    tracing::info!("{what} listening on {addr}");
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "memstored {short} listening on {addr}").and_then(|()| out.flush());
    Ok(listener)
}
