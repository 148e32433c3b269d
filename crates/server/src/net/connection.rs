//! One client connection, whatever its protocol: read, let the session serve
//! every complete request, answer the batch with one vectored write, repeat.
//! Late answers (RPC slow calls) join the same output through a channel.

use crate::net::core::{before_send, sent, ConnCore, Grow, Sending};
use crate::net::send::Stall;
use crate::net::socket::{ReadResult, Socket};
use crate::protocols::out::Out;
use crate::protocols::session::{LateAnswer, LateTx, Step};
use crate::state::budget::Charge;
use crate::state::conns::ConnInfo;
use crate::state::counters as stats;
use crate::state::replication::StreamRequest;
use crate::state::server::Server;
use crate::state::watch::CloseReason;
use bytes::BytesMut;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Serves one connection until it closes.
pub async fn serve(stream: TcpStream, peer: SocketAddr, srv: Arc<Server>) {
    let _ = stream.set_nodelay(true);
    serve_socket(stream, peer.to_string(), srv, BytesMut::new(), Listing::New).await
}

/// Serves a connection whose first bytes were already read into `rbuf`
/// (an io_uring worker hands over the protocols it does not serve).
pub async fn serve_from(stream: TcpStream, peer: SocketAddr, srv: Arc<Server>, rbuf: BytesMut) {
    let _ = stream.set_nodelay(true);
    serve_socket(stream, peer.to_string(), srv, rbuf, Listing::Handed).await
}

/// Serves a connection an io_uring worker hands over as it became a log
/// watcher (`watch`).
pub async fn serve_watcher(
    stream: TcpStream,
    srv: Arc<Server>,
    watcher: Arc<crate::state::watch::Watcher>,
) {
    let listed = stream
        .addresses()
        .map(|(addr, local)| srv.conns.register_handed(&stream, addr, Some(local)));
    crate::net::watch::serve(&stream, &srv, watcher, listed.as_ref().map(|r| &*r.info)).await;
}

/// Whether watchers hear of the connection as new (`watch connevents`):
/// not when another driver accepted it and told them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    New,
    Handed,
}

/// What a connection's socket goes on to when it closes to requests.
#[derive(Default)]
struct Handover {
    /// A replication stream (`replicate`, Kyoto Tycoon's 0xB1).
    stream: Option<StreamRequest>,
    /// A log watcher (`watch`).
    watcher: Option<Arc<crate::state::watch::Watcher>>,
}

/// Serves a connection of a TLS port (`-Z`): the handshake (bounded by its
/// timeout), then the same loop as any connection, over `TlsSocket`.
pub async fn serve_tls(
    stream: TcpStream,
    peer: SocketAddr,
    srv: Arc<Server>,
    tls: Arc<crate::net::tls::Acceptor>,
) {
    let _ = stream.set_nodelay(true);
    let peer = peer.to_string();
    let Some(stream) = tls.handshake(stream, &peer, srv.clone()).await else {
        return;
    };
    match stream.early_plaintext() {
        Ok(rbuf) => serve_socket(stream, peer, srv, rbuf, Listing::New).await,
        Err(e) => tracing::debug!("{peer}: {e}"),
    }
}

/// Serves a connection of the Unix socket (`--unix-socket`).
pub async fn serve_unix(stream: tokio::net::UnixStream, srv: Arc<Server>) {
    serve_socket(
        stream,
        "unix socket client".into(),
        srv,
        BytesMut::new(),
        Listing::New,
    )
    .await
}

async fn serve_socket<S: Socket>(
    stream: S,
    peer: String,
    srv: Arc<Server>,
    rbuf: BytesMut,
    listing: Listing,
) {
    let mut handover = Handover::default();
    // Dropped before `stream`: unlisted while its descriptor is still ours.
    let listed = stream.addresses().map(|(addr, local)| match listing {
        Listing::New => srv.conns.register_as(&stream, addr, Some(local)),
        Listing::Handed => srv.conns.register_handed(&stream, addr, Some(local)),
    });
    match run(
        &stream,
        rbuf,
        &srv,
        listed.as_ref().map(|r| &*r.info),
        &mut handover,
    )
    .await
    {
        Ok(()) => tracing::debug!("{peer}: closed"),
        Err(e) => tracing::debug!("{peer}: {e}"),
    }
    // A watcher stays listed (memcached's `conn_watch`) until it closes.
    if let Some(w) = handover.watcher {
        crate::net::watch::serve(&stream, &srv, w, listed.as_ref().map(|r| &*r.info)).await;
    }
    // A `replicate` call (or Kyoto Tycoon's 0xB1) turned the connection
    // into a replication stream, which `stats conns` does not list.
    drop(listed);
    if let Some(req) = handover.stream {
        match stream.into_tcp() {
            Some(tcp) => crate::replication::master::serve(tcp, srv, req).await,
            None => tracing::info!("{peer}: replication streams run over TCP only"),
        }
    }
}

async fn run<S: Socket>(
    stream: &S,
    rbuf: BytesMut,
    srv: &Arc<Server>,
    listed: Option<&ConnInfo>,
    handover: &mut Handover,
) -> io::Result<()> {
    let mut core = ConnCore::new(srv, rbuf, stream.as_raw_fd());
    let closing = |why| {
        if let Some(l) = listed {
            l.closing(why);
        }
    };
    // Bytes handed over with the connection are served before any read.
    let mut handed = !core.rbuf.is_empty();
    let (late_tx, mut late_rx) = mpsc::unbounded_channel::<LateAnswer>();
    // Shutdown is watched by one `changed()` future that lives as long as
    // the connection. A fresh one per wait was built, registered in the
    // channel's waiter list and removed again on every request, each step
    // under the lock of a list all connections share (about 2% of the CPU
    // in a profile, docs/bench/server-notes.md); the live one is only
    // polled. `probe` checks for a stop with one atomic load on every
    // wait, for connections whose socket is always ready.
    let probe = srv.shutdown.clone();
    let mut shutdown = srv.shutdown.clone();
    if *shutdown.borrow_and_update() {
        closing(CloseReason::Shutdown);
        return Ok(());
    }
    let stopping = shutdown.changed();
    tokio::pin!(stopping);
    let mut wait = !handed;
    let mut eof = false;
    loop {
        if wait {
            // Err: the sender is gone, which ends the server too.
            if probe.has_changed().unwrap_or(true) {
                closing(CloseReason::Shutdown);
                return Ok(());
            }
            let in_flight = core.in_flight();
            if eof && in_flight == 0 {
                return Ok(());
            }
            // `biased`: polled in this order, without drawing a random
            // start per wakeup (the common case is the first branch).
            tokio::select! {
                biased;
                r = stream.readable(), if !eof => r?,
                Some(done) = late_rx.recv(), if in_flight > 0 => {
                    // Answers finished elsewhere join the output in the order
                    // they completed, one at a time: the others wait in the
                    // channel, charged, until this one is written, so a client
                    // that does not read holds one in its output, not all it
                    // has asked for.
                    core.take_late(done);
                    let (out, charge, read_buffer) = core.send_parts();
                    if !write_out(stream, srv, out, charge, read_buffer).await? {
                        return Ok(());
                    }
                    continue;
                }
                _ = &mut stopping => {
                    closing(CloseReason::Shutdown);
                    return Ok(());
                }
            }
        }
        if let Some(grow) = core.make_room() {
            if !room_to_read(stream, srv, &mut core, grow).await? {
                return Ok(());
            }
        }
        let before = core.rbuf.len();
        let read = if std::mem::take(&mut handed) {
            Ok(ReadResult::Partial)
        } else {
            let max = core.read_max();
            stream.read_into(&mut core.rbuf, max)
        };
        match read {
            Ok(ReadResult::Eof) => {
                // Slow calls still running get answered before the close.
                closing(CloseReason::Normal);
                eof = true;
                wait = true;
                continue;
            }
            Ok(ReadResult::Full) => wait = false,
            Ok(ReadResult::Partial) => wait = true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait = true;
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        if !core.arrived(srv, core.rbuf.len() - before) {
            continue;
        }
        if !core.pick_session(srv) {
            return Ok(());
        }
        if !serve_batch(stream, srv, &mut core, &late_tx, listed, handover).await? {
            return Ok(());
        }
    }
}

/// Waits for the memory budget to grant `grow` (the read buffer must grow
/// past its free size); when the budget has no room within its wait, the
/// request is refused "out of memory". False: close the connection.
async fn room_to_read<S: Socket>(
    stream: &S,
    srv: &Arc<Server>,
    core: &mut ConnCore<'_>,
    mut grow: Grow,
) -> io::Result<bool> {
    loop {
        if core.charge.grow(grow.grow).await {
            core.grown(grow.want);
            return Ok(true);
        }
        let go_on = core.refuse_for_memory(srv);
        let (out, charge, read_buffer) = core.send_parts();
        let written = write_out(stream, srv, out, charge, read_buffer).await?;
        if !(go_on && written) {
            return Ok(false);
        }
        core.need = 0;
        match core.make_room() {
            Some(g) => grow = g,
            None => return Ok(true),
        }
    }
}

/// Serves what the buffer holds and sends the replies, batch by batch,
/// until the session wants input. False: close the connection (its socket
/// may go to a replication stream: `handover`).
async fn serve_batch<S: Socket>(
    stream: &S,
    srv: &Arc<Server>,
    core: &mut ConnCore<'_>,
    late: &LateTx,
    listed: Option<&ConnInfo>,
    handover: &mut Handover,
) -> io::Result<bool> {
    if let Some(l) = listed {
        l.begin();
    }
    // The frame the batch was waiting for (`ReadLimits::renew`).
    let served = core.need;
    loop {
        // Which of its writes the batch's replies wait for (--sync-replicas).
        memstored_engine::ulog::take_last_appended();
        let step = core.serve(srv, late);
        srv.replication
            .before_replies(memstored_engine::ulog::take_last_appended())
            .await;
        let (out, charge, read_buffer) = core.send_parts();
        if !write_out(stream, srv, out, charge, read_buffer).await? {
            return Ok(false);
        }
        match step {
            Step::NeedInput(n) => {
                core.batch_done(served, n);
                if let Some(l) = listed {
                    l.end(n);
                }
                return Ok(true);
            }
            // A turn for the worker's other connections: a client that
            // reads as fast as a long reply (a dump) is made would
            // otherwise keep its worker, its writes never blocking.
            Step::Flush => tokio::task::yield_now().await,
            Step::Close => {
                if let Some(l) = listed {
                    l.closing(core.close_reason());
                }
                handover.stream = core.handover();
                handover.watcher = core.watcher();
                return Ok(false);
            }
        }
    }
}

/// Writes the pending replies `out` (`core::before_send` says how). A
/// client that takes none of them for the budget's wait while it must make
/// progress (the budget is spent, or its oversize admission is wanted:
/// `Charge::must_progress`) is dropped (false: close the connection); one
/// that reads, however slowly, is not.
pub(crate) async fn write_out<S: Socket>(
    stream: &S,
    srv: &Server,
    out: &mut Out,
    charge: &mut Charge<'_>,
    read_buffer: usize,
) -> io::Result<bool> {
    let plan = match before_send(srv, out, charge, read_buffer) {
        Sending::Nothing => return Ok(true),
        Sending::Abort => return Ok(false),
        Sending::Go(plan) => plan,
    };
    let written = {
        let held = &*charge;
        let give_up = || held.must_progress();
        let stall = plan.watched.then_some(Stall {
            wait: srv.budget.wait(),
            give_up: &give_up,
        });
        crate::net::send::write_to(out, stream, stall).await?
    };
    let Some(n) = written else {
        stats::bump(&srv.budget.refused);
        tracing::info!("closing a connection that does not read its replies: the connection memory budget is spent");
        return Ok(false);
    };
    sent(srv, plan, charge, read_buffer, n);
    Ok(true)
}
