//! One client connection, whatever its protocol: read, let the session serve
//! every complete request, answer the batch with one vectored write, repeat.
//! Late answers (RPC slow calls) join the same output through a channel.

use crate::net::socket::Socket;
use crate::protocols::binary::BinarySession;
use crate::protocols::kt::KtSession;
use crate::protocols::out::{Out, Stall};
use crate::protocols::rpc::session::RpcSession;
use crate::protocols::session::{self, ConnState, Cx, LateAnswer, Session, Step};
use crate::protocols::text::TextSession;
use crate::state::budget::Charge;
use crate::state::counters as stats;
use crate::state::server::Server;
use bytes::BytesMut;
use memstored_protocol::LARGE_VALUE;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::Interest;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// The protocol a connection speaks, chosen by its first byte.
pub(crate) enum AnySession {
    Binary(BinarySession),
    Text(Box<TextSession>),
    Rpc(Box<RpcSession>),
    Kt(KtSession),
}

impl AnySession {
    pub(crate) fn process(
        &mut self,
        cx: &mut Cx<'_>,
        cs: &mut ConnState,
        rbuf: &mut BytesMut,
    ) -> Step {
        match self {
            AnySession::Binary(s) => session::process(s, cx, cs, rbuf),
            AnySession::Text(s) => session::process(s.as_mut(), cx, cs, rbuf),
            AnySession::Rpc(s) => session::process(s.as_mut(), cx, cs, rbuf),
            AnySession::Kt(s) => session::process(s, cx, cs, rbuf),
        }
    }

    fn in_flight(&self) -> usize {
        match self {
            AnySession::Rpc(s) => s.in_flight(),
            _ => 0,
        }
    }

    fn answered_late(&mut self) {
        if let AnySession::Rpc(s) = self {
            s.answered_late();
        }
    }
}

enum ReadResult {
    /// Filled the whole free space: more may be waiting, read again at once.
    Full,
    /// Read less than asked: the socket is drained; wait for readiness next time.
    Partial,
    Eof,
}

/// Reads once into the free space of `rbuf`, at most `max` bytes
/// (`ReadLimits::read_max`). A short read is reported to
/// tokio as WouldBlock so it clears the readiness without a second,
/// empty read() syscall.
fn read_some<S: Socket>(stream: &S, rbuf: &mut BytesMut, max: usize) -> io::Result<ReadResult> {
    let fd = stream.as_raw_fd();
    let mut got: Option<usize> = None;
    let res = stream.try_io(Interest::READABLE, || {
        let spare = rbuf.spare_capacity_mut();
        let want = spare.len().min(max);
        // SAFETY: reading into the uninitialised spare capacity of rbuf;
        // only the `n` bytes the kernel wrote are marked initialised below.
        let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), want) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        // SAFETY: the kernel initialised n <= want bytes.
        unsafe { rbuf.set_len(rbuf.len() + n) };
        if n > 0 && n < want {
            got = Some(n);
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    });
    match (res, got) {
        (_, Some(_)) => Ok(ReadResult::Partial),
        (Ok(0), None) => Ok(ReadResult::Eof),
        (Ok(_), None) => Ok(ReadResult::Full),
        (Err(e), None) => Err(e),
    }
}

/// Serves one connection until it closes.
pub async fn serve(stream: TcpStream, peer: SocketAddr, srv: Arc<Server>) {
    serve_from(stream, peer, srv, BytesMut::new()).await
}

/// Serves a connection whose first bytes were already read into `rbuf`
/// (an io_uring worker hands over the protocols it does not serve).
pub async fn serve_from(stream: TcpStream, peer: SocketAddr, srv: Arc<Server>, rbuf: BytesMut) {
    let _ = stream.set_nodelay(true);
    serve_socket(stream, peer.to_string(), srv, rbuf).await
}

/// Serves a connection of the Unix socket (`--unix-socket`).
pub async fn serve_unix(stream: tokio::net::UnixStream, srv: Arc<Server>) {
    serve_socket(stream, "unix socket client".into(), srv, BytesMut::new()).await
}

async fn serve_socket<S: Socket>(stream: S, peer: String, srv: Arc<Server>, rbuf: BytesMut) {
    let mut handover = None;
    // Dropped before `stream`: unlisted while its descriptor is still ours.
    let listed = stream
        .addresses()
        .map(|(addr, local)| srv.conns.register_as(&stream, addr, Some(local)));
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
    // A `replicate` call (or Kyoto Tycoon's 0xB1) turned the connection
    // into a replication stream, which `stats conns` does not list.
    drop(listed);
    if let Some(req) = handover {
        match stream.into_tcp() {
            Some(tcp) => crate::replication::master::serve(tcp, srv, req).await,
            None => tracing::info!("{peer}: replication streams run over TCP only"),
        }
    }
}

/// A read buffer may grow to this size (or `-B`, if larger) without asking
/// the memory budget, so small requests are served even when it is spent.
const UNBUDGETED_READ: usize = 16 << 10;
/// What a read buffer of `capacity` bytes is charged.
fn read_charge(capacity: usize, unbudgeted: usize) -> usize {
    if capacity > unbudgeted {
        capacity
    } else {
        0
    }
}

/// The read buffer's size rules, from the server's flags (`-o`
/// initial/reserve sizes), shared by the epoll and io_uring paths.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadLimits {
    pub initial: usize,
    pub reserve: usize,
    pub unbudgeted: usize,
}

/// What a read buffer needs before the next read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadSpace {
    Enough,
    /// Replace it with an empty buffer of this capacity (a big value is done).
    Fresh(usize),
    /// Reserve `want` more bytes, `grow` beyond its capacity; `charged`: the
    /// growth must be granted by the memory budget first.
    Grow {
        want: usize,
        grow: usize,
        charged: bool,
    },
}

impl ReadLimits {
    pub(crate) fn of(srv: &Server) -> ReadLimits {
        let initial = srv.cfg.initial_size.max(64);
        ReadLimits {
            initial,
            reserve: srv.cfg.reserve_size.max(64),
            unbudgeted: initial.max(UNBUDGETED_READ),
        }
    }

    /// Keep free space for the read; room for the rest of the frame when
    /// the handler said how big it is (`need`), but a declared length only
    /// buys 1 MiB at once: beyond that the buffer doubles as bytes arrive.
    pub(crate) fn plan(&self, rbuf: &BytesMut, need: usize) -> ReadSpace {
        let want = self.want(rbuf, need);
        if rbuf.capacity() - rbuf.len() >= want {
            ReadSpace::Enough
        } else if rbuf.is_empty() && rbuf.capacity() > self.initial.max(want) * 4 {
            // Give back the memory of a big value once it is done.
            ReadSpace::Fresh(self.initial.max(want))
        } else {
            let total = rbuf.len().saturating_add(want);
            ReadSpace::Grow {
                want,
                grow: total.saturating_sub(rbuf.capacity()),
                charged: total > self.unbudgeted,
            }
        }
    }

    /// The free space to have before the next read.
    fn want(&self, rbuf: &BytesMut, need: usize) -> usize {
        need.saturating_sub(rbuf.len())
            .min(rbuf.capacity().max(1 << 20))
            .max(self.reserve)
    }

    /// After a batch that was waiting for a frame of `served` bytes, the
    /// capacity of a buffer to replace `rbuf` with: a buffer a large frame
    /// was read into (`memstored_protocol::LARGE_VALUE` or more) is
    /// replaced once it is empty, so that its charge (or the oversize
    /// admission) is given back now, not at the next read, which may never
    /// come, and no later request is read into memory that a value stored
    /// as a slice of the frame still holds. (The rest of a buffer a big
    /// frame was cut from keeps the capacity the buffer grew to.)
    pub(crate) fn renew(&self, rbuf: &BytesMut, served: usize, need: usize) -> Option<usize> {
        let large = served >= LARGE_VALUE && rbuf.is_empty();
        large.then(|| self.initial.max(self.want(rbuf, need)))
    }

    /// The most the next read may take: up to the end of a large frame
    /// being read (`need`), so that its buffer holds nothing else and the
    /// value can be stored without a copy (`memstored_protocol::owned_value`).
    pub(crate) fn read_max(&self, rbuf: &BytesMut, need: usize) -> usize {
        if need >= LARGE_VALUE && need > rbuf.len() {
            need - rbuf.len()
        } else {
            usize::MAX
        }
    }

    /// What a read buffer of `capacity` bytes is charged.
    pub(crate) fn charge(&self, capacity: usize) -> usize {
        read_charge(capacity, self.unbudgeted)
    }
}

/// Replies pending up to this size are not charged to the budget.
pub(crate) const UNBUDGETED_OUT: usize = 64 << 10;

async fn run<S: Socket>(
    stream: &S,
    mut rbuf: BytesMut,
    srv: &Arc<Server>,
    listed: Option<&crate::state::conns::ConnInfo>,
    handover: &mut Option<crate::replication::master::StreamRequest>,
) -> io::Result<()> {
    let limits = ReadLimits::of(srv);
    let (initial, unbudgeted) = (limits.initial, limits.unbudgeted);
    // Bytes handed over with the connection are served before any read.
    let mut handed = !rbuf.is_empty();
    if rbuf.capacity() < initial {
        rbuf.reserve(initial - rbuf.len());
    }
    let mut out = Out::new();
    let mut charge = Charge::new(&srv.budget);
    let mut cs = ConnState::default();
    let mut session: Option<AnySession> = None;
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
        return Ok(());
    }
    let stopping = shutdown.changed();
    tokio::pin!(stopping);
    let mut wait = !handed;
    let mut eof = false;
    let mut need = 0usize;
    loop {
        if wait {
            // Err: the sender is gone, which ends the server too.
            if probe.has_changed().unwrap_or(true) {
                return Ok(());
            }
            let in_flight = session.as_ref().map_or(0, AnySession::in_flight);
            if eof && in_flight == 0 {
                return Ok(());
            }
            // `biased`: polled in this order, without drawing a random
            // start per wakeup (the common case is the first branch).
            tokio::select! {
                biased;
                r = stream.readable(), if !eof => r?,
                Some(mut done) = late_rx.recv(), if in_flight > 0 => {
                    // Answers finished elsewhere join the output in the order
                    // they completed, one at a time and without a copy: the
                    // others wait in the channel, charged, until this one is
                    // written, so a client that does not read holds one in
                    // its output, not all it has asked for.
                    if let Some(s) = session.as_mut() {
                        s.answered_late();
                    }
                    out.value(std::mem::take(&mut done.bytes).freeze());
                    // Its charge passes to the output's (`write`).
                    drop(done);
                    if !write(stream, srv, &mut out, &mut charge, read_charge(rbuf.capacity(), unbudgeted)).await? {
                        return Ok(());
                    }
                    continue;
                }
                _ = &mut stopping => return Ok(()),
            }
        }
        match limits.plan(&rbuf, need) {
            ReadSpace::Enough => {}
            ReadSpace::Fresh(capacity) => {
                rbuf = BytesMut::with_capacity(capacity);
                charge.set(read_charge(rbuf.capacity(), unbudgeted));
            }
            ReadSpace::Grow {
                want,
                grow,
                charged,
            } => {
                if charged && !charge.grow(grow).await {
                    let go_on = refuse_for_memory(
                        srv,
                        session.as_mut(),
                        &mut rbuf,
                        &mut cs,
                        need,
                        &mut out,
                    );
                    let written = write(
                        stream,
                        srv,
                        &mut out,
                        &mut charge,
                        read_charge(rbuf.capacity(), unbudgeted),
                    )
                    .await?;
                    if !(go_on && written) {
                        return Ok(());
                    }
                    need = 0;
                    continue;
                }
                rbuf.reserve(want);
                // Buffers within the unbudgeted size are not charged.
                charge.set(read_charge(rbuf.capacity(), unbudgeted));
            }
        }
        let before = rbuf.len();
        let read = if std::mem::take(&mut handed) {
            Ok(ReadResult::Partial)
        } else {
            let max = limits.read_max(&rbuf, need);
            read_some(stream, &mut rbuf, max)
        };
        match read {
            Ok(ReadResult::Eof) => {
                // Slow calls still running get answered before the close.
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
        stats::add(
            &srv.counters.here().bytes_read,
            (rbuf.len() - before) as u64,
        );
        if cs.discard(&mut rbuf) || rbuf.is_empty() {
            continue;
        }
        let s = match session.as_mut() {
            Some(s) => s,
            None => session.insert(match sniff(srv, &rbuf) {
                Some(s) => s,
                None => return Ok(()),
            }),
        };
        let mut cx = Cx {
            srv,
            out: &mut out,
            late: &late_tx,
        };
        if let Some(l) = listed {
            l.begin();
        }
        // The frame the batch was waiting for (`ReadLimits::renew`).
        let served = need;
        loop {
            // Which of its writes the batch's replies wait for (--sync-replicas).
            memstored_engine::ulog::take_last_appended();
            let step = s.process(&mut cx, &mut cs, &mut rbuf);
            crate::replication::before_replies(srv, memstored_engine::ulog::take_last_appended())
                .await;
            if !write(
                stream,
                srv,
                cx.out,
                &mut charge,
                read_charge(rbuf.capacity(), unbudgeted),
            )
            .await?
            {
                return Ok(());
            }
            match step {
                Step::NeedInput(n) => {
                    need = n;
                    // A big request done gives its memory (and the budget's
                    // charge, or the oversize admission) back now, not at
                    // the next read, which may never come.
                    if let Some(capacity) = limits.renew(&rbuf, served, n) {
                        rbuf = BytesMut::with_capacity(capacity);
                        charge.set(read_charge(rbuf.capacity(), unbudgeted));
                    }
                    if let Some(l) = listed {
                        l.end();
                    }
                    break;
                }
                // A turn for the worker's other connections: a client that
                // reads as fast as a long reply (a dump) is made would
                // otherwise keep its worker, its writes never blocking.
                Step::Flush => tokio::task::yield_now().await,
                Step::Close => {
                    *handover = match s {
                        AnySession::Rpc(s) => s.take_stream(),
                        AnySession::Kt(s) => s.take_stream(),
                        _ => None,
                    };
                    return Ok(());
                }
            }
        }
    }
}

/// Writes the pending replies. Writes acknowledged in this batch reach the
/// OS before the acknowledgement does, so they survive the server being killed.
///
/// The replies are charged to the memory budget while they wait. A client
/// that takes none of them for the budget's wait while it must make
/// progress (the budget is spent, or its oversize admission is wanted:
/// `Charge::must_progress`) is dropped (false: close the connection); one
/// that reads, however slowly, is not.
pub(crate) async fn write<S: Socket>(
    stream: &S,
    srv: &Server,
    out: &mut Out,
    charge: &mut Charge<'_>,
    read_buffer: usize,
) -> io::Result<bool> {
    if out.is_empty() {
        return Ok(true);
    }
    if !hand_writes_to_os(srv) {
        return Ok(false);
    }
    let charged = out.held() > UNBUDGETED_OUT;
    if charged {
        charge.set(read_buffer + out.held());
    }
    let watched = charged || srv.budget.is_spent();
    let written = {
        let give_up = || charge.must_progress();
        let stall = watched.then_some(Stall {
            wait: srv.budget.wait(),
            give_up: &give_up,
        });
        out.write_to(stream, stall).await?
    };
    let Some(n) = written else {
        stats::bump(&srv.budget.refused);
        tracing::info!("closing a connection that does not read its replies: the connection memory budget is spent");
        return Ok(false);
    };
    if charged {
        charge.set(read_buffer);
    }
    stats::add(&srv.counters.here().bytes_written, n as u64);
    Ok(true)
}

/// Hands the batch's writes to the OS before its replies go (`Db::flush_dirty`).
/// False when that failed: the replies must not go, since some of them may
/// acknowledge writes the OS did not take; the connection is closed without
/// them, so the client never reads a write as stored that is not. (A full
/// disk does not come here: each write reserved its space before it was
/// applied, and one without room was answered with an error, see
/// docs/design.md "A full disk"; this is a disk that fails.)
pub(crate) fn hand_writes_to_os(srv: &Server) -> bool {
    match srv.db.flush_dirty() {
        Ok(()) => true,
        Err(e) => {
            tracing::error!(
                "handing writes to the OS failed: {e}; closing the connection without its replies"
            );
            false
        }
    }
}

/// Answers the request at the front of `rbuf` "out of memory", as memcached
/// does when it cannot allocate an item, and drops its body as it arrives
/// (`need`: the bytes the buffer had to hold for it). True: the connection
/// goes on. A MessagePack-RPC frame declares no length, so that connection
/// is closed instead.
pub(crate) fn refuse_for_memory(
    srv: &Server,
    session: Option<&mut AnySession>,
    rbuf: &mut BytesMut,
    cs: &mut ConnState,
    need: usize,
    out: &mut Out,
) -> bool {
    stats::bump(&srv.budget.refused);
    let (used, limit) = (srv.budget.held(), srv.budget.limit());
    let rest = need.saturating_sub(rbuf.len()) as u64;
    let go_on = match session {
        Some(AnySession::Binary(_)) if rest > 0 => {
            crate::protocols::binary::out_of_memory(rbuf, out);
            true
        }
        Some(AnySession::Text(s)) if rest > 0 => {
            s.framer().forget_pending();
            out.put(memstored_protocol::text::response::SERVER_ERROR_OUT_OF_MEMORY);
            true
        }
        _ => false,
    };
    tracing::info!(
        "a request needs more than the connection memory budget has left ({used} of {limit} bytes in use): {}",
        if go_on { "refused" } else { "closing the connection" }
    );
    if go_on {
        crate::command::store::count_refused_for_memory(srv);
        rbuf.clear();
        cs.skip = rest;
    }
    go_on
}

/// Picks the protocol from the first byte: 0x80 is the binary protocol's
/// request magic, a msgpack fixarray (0x90–0x9f) is MessagePack-RPC,
/// 0xb0–0xbf Kyoto Tycoon's binary protocol, anything else the text and
/// meta protocols. Protocols without authentication (text, Kyoto Tycoon's)
/// are refused when the server requires SASL.
pub(crate) fn sniff(srv: &Server, rbuf: &[u8]) -> Option<AnySession> {
    match rbuf.first().copied() {
        Some(0x80) => Some(AnySession::Binary(BinarySession::new(srv))),
        Some(0x90..=0x9f) => Some(AnySession::Rpc(Box::new(RpcSession::new(srv)))),
        Some(0xb0..=0xbf) if srv.credentials.is_some() => {
            tracing::info!("Kyoto Tycoon binary connection refused: SASL is required");
            None
        }
        Some(0xb0..=0xbf) => Some(AnySession::Kt(KtSession::new(srv))),
        Some(_) if srv.credentials.is_some() => {
            tracing::info!("text protocol connection refused: SASL is required");
            None
        }
        Some(_) => Some(AnySession::Text(Box::new(TextSession::new(srv)))),
        None => None,
    }
}
