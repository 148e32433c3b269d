//! The gRPC port under `--scheduler per-core`: a tonic server on every
//! worker thread, each serving the connections handed to it, so that a
//! connection and the task tonic makes per call stay on one thread, as the
//! other ports' connections do (`net::workers`). Served from the main
//! runtime, which has one thread under per-core, every call of every
//! client ran on that thread, woken per call: `--threads` did not count,
//! and the profile was mostly the kernel's scheduler (docs/bench/rpc.md).
//!
//! The accept loop stays on the main runtime (admission under `-c`, the
//! accept backoff); each admitted socket leaves its reactor as a plain
//! socket and joins the next worker's, in turn.

use super::{stopping, Counted};
use crate::net::placement::Live;
use crate::net::workers::Workers;
use crate::state::server::Server;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tonic::codegen::tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::codegen::tokio_stream::{Stream, StreamExt};

/// A socket on its way to a worker, with its place under `-c`.
type Handed = (std::net::TcpStream, Live);

/// The connections one worker serves.
pub(super) type Joined = Pin<Box<dyn Stream<Item = std::io::Result<Counted>> + Send>>;
/// What `serve_one` returns: one worker's server, ending once the server
/// stops and its calls in flight are answered.
pub(super) type Serving = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Serves `incoming` on the workers, a server made by `serve_one` on each,
/// until the server stops; returns once every worker's server is done.
pub(super) async fn serve(
    serve_one: impl Fn(Joined, Serving) -> Serving,
    mut incoming: impl Stream<Item = std::io::Result<Counted>> + Unpin,
    workers: Arc<Workers>,
    srv: Arc<Server>,
) {
    let mut queues = Vec::with_capacity(workers.len());
    let mut done = Vec::with_capacity(workers.len());
    for i in 0..workers.len() {
        let (tx, rx) = mpsc::unbounded_channel::<Handed>();
        let (finished, waited) = oneshot::channel::<()>();
        let joined: Joined =
            Box::pin(UnboundedReceiverStream::new(rx).filter_map(|(sock, live)| {
                // Registered with the reactor of the worker polling this.
                let stream = tokio::net::TcpStream::from_std(sock).ok()?;
                Some(Ok(Counted {
                    stream,
                    _live: live,
                }))
            }));
        let server = serve_one(joined, Box::pin(stopping(&srv)));
        workers.place_on(
            i,
            Box::new(move || {
                tokio::spawn(async move {
                    server.await;
                    let _ = finished.send(());
                });
            }),
        );
        queues.push(tx);
        done.push(waited);
    }
    let stop = stopping(&srv);
    tokio::pin!(stop);
    let mut next = 0usize;
    loop {
        let accepted = tokio::select! {
            () = &mut stop => break,
            c = incoming.next() => c,
        };
        let Some(Ok(c)) = accepted else { break };
        let Counted { stream, _live } = c;
        // Out of this reactor, into the worker's.
        let Ok(sock) = stream.into_std() else {
            continue;
        };
        if let Some(q) = queues.get(next % queues.len()) {
            let _ = q.send((sock, _live));
        }
        next = next.wrapping_add(1);
    }
    drop(queues);
    for d in done {
        let _ = d.await;
    }
}
