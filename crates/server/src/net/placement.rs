//! Where an accepted connection is served: its count in `curr_connections`
//! (`Live`), and the hand-over of its socket to a per-core worker.

use crate::net::workers::Workers;
use crate::state::server::Server;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use tokio::net::TcpStream;

/// Decrements `curr_connections` (and the KT or gRPC port's count) when
/// a connection task ends, even by panic.
pub(crate) struct Live(pub(crate) Arc<Server>, pub(crate) Pool);

impl Drop for Live {
    fn drop(&mut self) {
        let c = &self.0.counters;
        c.curr_connections.fetch_sub(1, Relaxed);
        match self.1 {
            Pool::Memcached => {}
            Pool::Kt => {
                c.kt_connections.fetch_sub(1, Relaxed);
            }
            Pool::Grpc => {
                c.grpc_connections.fetch_sub(1, Relaxed);
            }
        }
    }
}

/// Which `-c` a connection counts against: the memcached port's (with the
/// Unix socket), the Kyoto Tycoon port's own, or the gRPC port's own. Separate, so that clients
/// of one port, idle or not, never lock the other's out
/// (docs/design.md, "Connection limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pool {
    Memcached,
    Kt,
    Grpc,
}

/// Hands an accepted connection to the next per-core worker, which
/// registers its socket with its own reactor and serves it for life.
pub(crate) fn place<F, Fut>(
    workers: &Workers,
    stream: TcpStream,
    peer: SocketAddr,
    live: Live,
    serve: F,
) where
    F: Fn(TcpStream, SocketAddr, Arc<Server>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    // Leaves the socket non-blocking, as `from_std` wants it.
    match stream.into_std() {
        Ok(stream) => place_std(workers, stream, peer, live, serve),
        Err(e) => tracing::warn!("{peer}: handing over: {e}"),
    }
}

/// `place` for a socket already out of the reactor (an io_uring worker
/// hands over the protocols it does not serve); `serve` runs once.
pub(crate) fn place_std<F, Fut>(
    workers: &Workers,
    stream: std::net::TcpStream,
    peer: SocketAddr,
    live: Live,
    serve: F,
) where
    F: FnOnce(TcpStream, SocketAddr, Arc<Server>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    workers.place(Box::new(move || match TcpStream::from_std(stream) {
        Ok(stream) => {
            let serving = serve(stream, peer, live.0.clone());
            tokio::spawn(async move {
                serving.await;
                drop(live);
            });
        }
        Err(e) => tracing::warn!("{peer}: registering on a worker: {e}"),
    }));
}
