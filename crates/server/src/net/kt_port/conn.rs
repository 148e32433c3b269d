//! One connection of the Kyoto Tycoon port: runs of binary requests served
//! by the KT session of the main port, runs of HTTP requests by hyper, as
//! the first byte of each request says (see `mod.rs`).

use super::is_binary;
use crate::protocols::kt::KtSession;
use crate::protocols::out::Out;
use crate::protocols::session::{self, ConnState, Cx, Flow, Session, Step};
use crate::state::budget::Charge;
use crate::state::server::Server;
use bytes::{Buf, BytesMut};
use memstored_protocol::kt::{KtFramer, Refusal, Request};
use memstored_protocol::{Frame, Framer};
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A read buffer may grow to this size without asking the memory budget.
const UNBUDGETED_READ: usize = 16 << 10;

/// Serves one connection until it closes.
pub async fn serve(stream: TcpStream, peer: SocketAddr, srv: Arc<Server>) {
    let _ = stream.set_nodelay(true);
    match run(stream, &srv).await {
        Ok(()) => tracing::debug!("{peer}: Kyoto Tycoon port connection closed"),
        Err(e) => tracing::debug!("{peer}: {e}"),
    }
}

async fn run(stream: TcpStream, srv: &Arc<Server>) -> io::Result<()> {
    let mut io = Boundary {
        stream,
        srv: srv.clone(),
        pending: BytesMut::with_capacity(srv.cfg.initial_size.max(64)),
        at_boundary: Arc::new(AtomicBool::new(false)),
        binary_next: false,
        watch: Arc::default(),
        idle: srv.cfg.kt_timeout,
        deadline: None,
    };
    let mut bin = BinaryRun {
        session: PortSession {
            framer: UntilHttp(KtFramer::new(crate::protocols::kt::limits(srv))),
            kt: KtSession::new(srv),
        },
        out: Out::new(),
        state: ConnState::default(),
    };
    let http = super::http::Connection::new(srv);
    let mut charge = Charge::new(&srv.budget);
    let mut shutdown = srv.shutdown.clone();
    loop {
        if io.pending.is_empty() {
            let read = tokio::select! {
                r = io.read_more(0, srv, &mut charge) => r?,
                _ = shutdown.changed() => return Ok(()),
            };
            if !read {
                return Ok(());
            }
        }
        let Some(&first) = io.pending.first() else {
            continue;
        };
        if is_binary(first) {
            if !bin.serve(&mut io, srv, &mut charge).await? {
                // Kyoto Tycoon's replication command takes the connection over.
                if let Some(req) = bin.session.kt.take_stream() {
                    drop(charge);
                    crate::replication::master::serve(io.stream, srv.clone(), req).await;
                }
                return Ok(());
            }
            continue;
        }
        io = tokio::select! {
            r = http.serve(io) => match r? {
                Some(io) => io,
                None => return Ok(()),
            },
            _ = shutdown.changed() => return Ok(()),
        };
    }
}

/// The socket as hyper reads it: bytes kept back from an earlier phase come
/// first, and at a request boundary a binary request ends hyper's stream.
pub(super) struct Boundary {
    stream: TcpStream,
    /// Counts the bytes read (`stats bytes_read`).
    srv: Arc<Server>,
    /// Read but not yet handed on.
    pub(super) pending: BytesMut,
    /// True when the next bytes begin a new request (set by the HTTP
    /// service once it has read a request's body).
    pub(super) at_boundary: Arc<AtomicBool>,
    /// A binary request was found at a boundary: hyper sees end of stream.
    pub(super) binary_next: bool,
    /// What the HTTP service and this wrapper share.
    pub(super) watch: Arc<Watch>,
    /// `--kt-timeout`: how long the connection may wait for a byte while
    /// no request is being served (`None`: for ever).
    idle: Option<Duration>,
    /// When the present wait for input times out.
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

/// What the HTTP service tells the socket wrapper.
#[derive(Default)]
pub(super) struct Watch {
    /// The framing of the bytes handed to hyper in this run.
    pub(super) framing: Mutex<super::framing::Framing>,
    /// Requests being served now: no idle timeout meanwhile.
    busy: AtomicUsize,
}

impl Watch {
    /// Counts a request as being served until the guard is dropped.
    pub(super) fn serving(self: &Arc<Self>) -> Serving {
        self.busy.fetch_add(1, Relaxed);
        Serving(self.clone())
    }
}

/// A request being served (`Watch::serving`).
pub(super) struct Serving(Arc<Watch>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Relaxed);
    }
}

/// The error of a connection closed for idling past `--kt-timeout`.
fn idle_error(after: Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("closing an idle Kyoto Tycoon port connection after {after:?} (--kt-timeout)"),
    )
}

impl Boundary {
    /// Reads into `pending`, with room for `need` bytes in all (at most
    /// 1 MiB more at once); growth past [`UNBUDGETED_READ`] is charged to
    /// the memory budget. False at end of stream or when the budget refused.
    async fn read_more(
        &mut self,
        need: usize,
        srv: &Server,
        charge: &mut Charge<'_>,
    ) -> io::Result<bool> {
        let want = need.saturating_sub(self.pending.len()).clamp(4096, 1 << 20);
        if self.pending.capacity() - self.pending.len() < want {
            let total = self.pending.len().saturating_add(want);
            if total > UNBUDGETED_READ && !charge.grow(want).await {
                tracing::info!(
                    "closing a Kyoto Tycoon port connection: the connection memory budget is spent"
                );
                crate::state::counters::bump(&srv.budget.refused);
                return Ok(false);
            }
            self.pending.reserve(want);
        }
        let read = self.stream.read_buf(&mut self.pending);
        let n = match self.idle {
            None => read.await?,
            Some(after) => match tokio::time::timeout(after, read).await {
                Ok(n) => n?,
                Err(_) => return Err(idle_error(after)),
            },
        };
        crate::state::counters::add(&srv.counters.here().bytes_read, n as u64);
        let cap = self.pending.capacity();
        charge.set(if cap > UNBUDGETED_READ { cap } else { 0 });
        Ok(n > 0)
    }

    /// Counts what a write wrote (`stats bytes_written`).
    /// A reply going out is activity too: the idle wait starts again.
    fn wrote(&mut self, polled: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = &polled {
            crate::state::counters::add(&self.srv.counters.here().bytes_written, *n as u64);
            self.deadline = None;
        }
        polled
    }

    /// Gives back the bytes hyper had buffered: they come before ours.
    pub(super) fn unread(&mut self, buffered: &[u8]) {
        if !buffered.is_empty() {
            let mut all = BytesMut::with_capacity(buffered.len() + self.pending.len());
            all.extend_from_slice(buffered);
            all.extend_from_slice(&self.pending);
            self.pending = all;
        }
    }
}

impl AsyncRead for Boundary {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.binary_next {
            return Poll::Ready(Ok(()));
        }
        if this.at_boundary.load(Relaxed) {
            if this.pending.is_empty() {
                let mut first = [0u8; 4096];
                let mut rb = ReadBuf::new(&mut first);
                match this.poll_socket(cx, &mut rb) {
                    Poll::Ready(Ok(())) => this.pending.extend_from_slice(rb.filled()),
                    other => return other,
                }
            }
            match this.pending.first() {
                None => return Poll::Ready(Ok(())),
                Some(&b) if is_binary(b) => {
                    this.binary_next = true;
                    return Poll::Ready(Ok(()));
                }
                Some(_) => this.at_boundary.store(false, Relaxed),
            }
        }
        let before = buf.filled().len();
        if this.pending.is_empty() {
            let polled = this.poll_socket(cx, buf);
            this.handed(&buf.filled()[before..]);
            return polled;
        }
        let n = buf.remaining().min(this.pending.len());
        buf.put_slice(&this.pending[..n]);
        this.pending.advance(n);
        this.handed(&buf.filled()[before..]);
        Poll::Ready(Ok(()))
    }
}

impl Boundary {
    /// Reads from the socket, counting the bytes; an error once the
    /// connection has waited `--kt-timeout` for one while no request was
    /// being served.
    fn poll_socket(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before);
        crate::state::counters::add(&self.srv.counters.here().bytes_read, n as u64);
        if polled.is_ready() || self.watch.busy.load(Relaxed) > 0 {
            self.deadline = None;
            return polled;
        }
        let Some(after) = self.idle else {
            return polled;
        };
        let deadline = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(after)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(idle_error(after))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Bytes handed to hyper: their requests' framing is followed.
    fn handed(&self, bytes: &[u8]) {
        if !bytes.is_empty() {
            if let Ok(mut f) = self.watch.framing.lock() {
                f.feed(bytes);
            }
        }
    }

    /// A new run of HTTP requests starts at the front of `pending`.
    pub(super) fn start_http(&mut self) {
        self.at_boundary.store(false, Relaxed);
        self.binary_next = false;
        if let Ok(mut f) = self.watch.framing.lock() {
            *f = super::framing::Framing::default();
        }
    }
}

impl AsyncWrite for Boundary {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.wrote(polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.wrote(polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// KT's framer, stopping (as if waiting for input) at a request that is
/// not binary, so the loop hands the connection to HTTP.
struct UntilHttp(KtFramer);

impl Framer for UntilHttp {
    type Request = Request;
    type Refusal = Refusal;

    fn next(&mut self, buf: &mut BytesMut) -> Frame<Request, Refusal> {
        match buf.first() {
            Some(&b) if !is_binary(b) => Frame::Incomplete { need: 0 },
            _ => self.0.next(buf),
        }
    }
}

/// The main port's Kyoto Tycoon session behind [`UntilHttp`].
struct PortSession {
    framer: UntilHttp,
    kt: KtSession,
}

impl Session for PortSession {
    type Framer = UntilHttp;

    fn framer(&mut self) -> &mut UntilHttp {
        &mut self.framer
    }

    fn serve(&mut self, cx: &mut Cx<'_>, req: Request) -> Flow {
        self.kt.serve(cx, req)
    }

    fn refuse(&mut self, cx: &mut Cx<'_>, r: Refusal, closing: bool) -> Flow {
        self.kt.refuse(cx, r, closing)
    }
}

/// Serving binary requests, and what that keeps between runs.
struct BinaryRun {
    session: PortSession,
    out: Out,
    state: ConnState,
}

impl BinaryRun {
    /// Serves binary requests until an HTTP one is at the front of
    /// `io.pending` (true) or the connection is to close (false).
    async fn serve(
        &mut self,
        io: &mut Boundary,
        srv: &Arc<Server>,
        charge: &mut Charge<'_>,
    ) -> io::Result<bool> {
        // KT's binary protocol has no late answers; the channel stays empty.
        let (late, _) = tokio::sync::mpsc::unbounded_channel();
        loop {
            let step = {
                let mut cx = Cx {
                    srv,
                    out: &mut self.out,
                    late: &late,
                };
                memstored_engine::ulog::take_last_appended();
                session::process(&mut self.session, &mut cx, &mut self.state, &mut io.pending)
            };
            // Which of its writes the replies wait for (--sync-replicas).
            let wrote = memstored_engine::ulog::take_last_appended();
            srv.replication.before_replies(wrote).await;
            // Charged while they wait, and a client that does not read them
            // while the budget is spent is dropped, as on the main port.
            let read_buffer = charge.held();
            if !crate::net::connection::write_out(
                &io.stream,
                srv,
                &mut self.out,
                charge,
                read_buffer,
            )
            .await?
            {
                return Ok(false);
            }
            match step {
                Step::Flush => tokio::task::yield_now().await,
                Step::Close => return Ok(false),
                Step::NeedInput(_) if io.pending.first().is_some_and(|&b| !is_binary(b)) => {
                    return Ok(true)
                }
                Step::NeedInput(need) => {
                    if !io.read_more(need, srv, charge).await? {
                        return Ok(false);
                    }
                }
            }
        }
    }
}
