//! The HTTP side of the Kyoto Tycoon port: hyper's HTTP/1 server with
//! bounded headers and bodies, a body read whole (and charged to the
//! connection memory budget) before routing, and the routes of `mod.rs`.

use super::conn::Boundary;
use crate::exec::slow::ConnSlots;
use crate::state::budget::Charge;
use crate::state::server::Server;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Incoming};
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE, SERVER};
use hyper::server::conn::http1;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// The most header lines a request may have.
const MAX_HEADERS: usize = 64;
/// The largest request line plus headers (KT's own limit is an 8 KiB line).
const MAX_HEADER_BYTES: usize = 64 << 10;
/// hyper's read buffer at most (it holds headers and passes bodies through).
const MAX_READ_BUFFER: usize = 256 << 10;
/// Bodies up to this size are not charged to the memory budget.
const UNBUDGETED_BODY: usize = 64 << 10;

/// A reply of the port.
pub(super) type Reply = Response<Full<Bytes>>;

/// The HTTP state of one connection, kept across its runs of HTTP requests.
pub(super) struct Connection {
    srv: Arc<Server>,
    builder: http1::Builder,
    /// What the connection's requests share: its slow calls and cursors.
    shared: Arc<Shared>,
}

/// Per-connection state of TSV-RPC.
#[derive(Default)]
pub(super) struct Shared {
    /// Slow RPC calls (searches, vacuum...) of this connection.
    pub(super) slots: ConnSlots,
    pub(super) cursors: super::cursor::Cursors,
}

impl Connection {
    pub(super) fn new(srv: &Arc<Server>) -> Connection {
        let mut builder = http1::Builder::new();
        builder
            .keep_alive(true)
            .half_close(true)
            .max_headers(MAX_HEADERS)
            .max_header_size(MAX_HEADER_BYTES)
            .max_buf_size(MAX_READ_BUFFER);
        Connection {
            srv: srv.clone(),
            builder,
            shared: Arc::new(Shared::default()),
        }
    }

    /// Serves HTTP requests until the connection closes (`None`) or a
    /// binary request is next (the socket back, that request unread).
    pub(super) async fn serve(&self, mut io: Boundary) -> io::Result<Option<Boundary>> {
        io.start_http();
        let boundary = io.at_boundary.clone();
        let watch = io.watch.clone();
        let (srv, shared) = (self.srv.clone(), self.shared.clone());
        let service = hyper::service::service_fn(move |req| {
            let (srv, shared, boundary) = (srv.clone(), shared.clone(), boundary.clone());
            let watch = watch.clone();
            async move {
                let _serving = watch.serving();
                if let Some(refused) = smuggling(&watch) {
                    return Ok::<_, Infallible>(charged(&srv, true, refused).await);
                }
                let read_only = reads_only(req.method(), req.uri().path());
                let reply = handle(&srv, &shared, &boundary, req).await;
                Ok::<_, Infallible>(charged(&srv, read_only, reply).await)
            }
        });
        let conn = self.builder.serve_connection(TokioIo::new(io), service);
        match conn.without_shutdown().await {
            Ok(parts) => {
                let mut io = parts.io.into_inner();
                io.unread(&parts.read_buf);
                // Only a binary request goes on: otherwise hyper ended the
                // connection (the client closed, or a request it must not
                // be kept alive after), and whatever else the client sent
                // is dropped unread, never served as a request.
                let binary_next = std::mem::take(&mut io.binary_next);
                Ok(binary_next.then_some(io))
            }
            Err(e) => {
                tracing::debug!("Kyoto Tycoon port HTTP connection: {e}");
                Ok(None)
            }
        }
    }
}

/// The answer to a request whose head has both `Content-Length` and
/// `Transfer-Encoding` (`framing.rs`): 400, and the connection closes
/// without its body being read, so nothing it carries is run.
fn smuggling(watch: &super::conn::Watch) -> Option<Reply> {
    let refuse = watch.framing.lock().ok()?.next_verdict()?;
    refuse.then(|| {
        tracing::info!(
            "Kyoto Tycoon port: a request with both Content-Length and Transfer-Encoding refused, connection closed"
        );
        let mut r = text(
            400,
            "a request must not have both Content-Length and Transfer-Encoding\n",
        );
        r.headers_mut()
            .insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
        r
    })
}

/// Frames a reply body is handed to hyper in: hyper asks for the next one
/// only when its write buffer has room, so the rest stays here.
const REPLY_FRAME: usize = 64 << 10;

/// The budget charge of one reply, given back when the last of its bytes
/// is dropped: the body and every frame hyper still holds share it (a
/// frame is a slice of the reply's one buffer, and keeps all of it).
struct ReplyCharge {
    srv: Arc<Server>,
    charged: usize,
}

impl Drop for ReplyCharge {
    fn drop(&mut self) {
        self.srv.budget.give(self.charged);
    }
}

/// A frame of a charged reply, with its share of the charge.
pub(super) struct ChargedFrame {
    bytes: Bytes,
    _charge: Option<Arc<ReplyCharge>>,
}

impl bytes::Buf for ChargedFrame {
    fn remaining(&self) -> usize {
        self.bytes.remaining()
    }

    fn chunk(&self) -> &[u8] {
        self.bytes.chunk()
    }

    fn advance(&mut self, n: usize) {
        self.bytes.advance(n)
    }
}

/// A reply body charged to the connection memory budget until hyper has
/// written (or dropped) the last of it: a client that sends requests and
/// never reads holds one reply on each connection, and a file store's
/// value is a copy of its own. Handed over a frame at a time.
pub(super) struct ChargedBody {
    rest: Bytes,
    charge: Option<Arc<ReplyCharge>>,
}

impl Body for ChargedBody {
    type Data = ChargedFrame;
    type Error = Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<ChargedFrame>, Infallible>>> {
        let this = self.get_mut();
        if this.rest.is_empty() {
            return std::task::Poll::Ready(None);
        }
        let n = this.rest.len().min(REPLY_FRAME);
        let frame = ChargedFrame {
            bytes: this.rest.split_to(n),
            _charge: this.charge.clone(),
        };
        std::task::Poll::Ready(Some(Ok(hyper::body::Frame::data(frame))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.rest.len() as u64)
    }
}

/// True for a request that changes nothing (a REST GET or HEAD, an RPC
/// procedure that only reads), whose reply may be refused for want of
/// memory after it ran; any other reply is charged whatever the budget
/// holds, as its change is already made (a `seize` must not lose its
/// value to a 503).
fn reads_only(method: &hyper::Method, path: &str) -> bool {
    match path.strip_prefix("/rpc/") {
        Some(name) => matches!(
            name,
            "get"
                | "get_bulk"
                | "check"
                | "list"
                | "status"
                | "report"
                | "void"
                | "echo"
                | "match_prefix"
                | "match_regex"
                | "match_similar"
                | "search"
        ),
        None => method == hyper::Method::GET || method == hyper::Method::HEAD,
    }
}

/// `reply` with its body charged to the budget, waiting for room as a
/// request body does; when none came, a read-only request is answered 503
/// instead, any other charged all the same. Bodies up to `UNBUDGETED_BODY`
/// are not charged.
async fn charged(srv: &Arc<Server>, read_only: bool, reply: Reply) -> Response<ChargedBody> {
    let len = usize::try_from(reply.body().size_hint().lower()).unwrap_or(usize::MAX);
    let mut charged = 0;
    let reply = if len <= UNBUDGETED_BODY {
        reply
    } else if srv.budget.take(len).await {
        charged = len;
        reply
    } else if read_only {
        crate::state::counters::bump(&srv.budget.refused);
        text(
            503,
            "out of memory: the connection memory budget is spent\n",
        )
    } else {
        srv.budget.force_take(len);
        charged = len;
        reply
    };
    let (parts, body) = reply.into_parts();
    // A `Full` is ready at once; its one buffer comes back without a copy.
    let rest = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    let charge = (charged > 0).then(|| {
        Arc::new(ReplyCharge {
            srv: srv.clone(),
            charged,
        })
    });
    Response::from_parts(parts, ChargedBody { rest, charge })
}

/// Serves one request; every reply names the server.
async fn handle(
    srv: &Arc<Server>,
    shared: &Shared,
    boundary: &AtomicBool,
    req: Request<Incoming>,
) -> Reply {
    let mut reply = read_and_route(srv, shared, boundary, req).await;
    // As every other session after a batch: the writes (and their update
    // log entries) reach the OS before the reply, so SIGKILL loses no
    // acknowledged write.
    // A failure replaces the reply: it may acknowledge writes the OS did
    // not take (a full disk does not come here: docs/design.md).
    for db in crate::state::databases::all(srv) {
        if let Err(e) = db.flush_dirty() {
            tracing::error!("handing writes to the OS failed: {e}");
            reply = text(500, &format!("handing writes to the OS failed: {e}"));
        }
    }
    let server = format!("memstored/{}", crate::MEMSTORED_VERSION);
    if let Ok(v) = HeaderValue::from_str(&server) {
        reply.headers_mut().insert(SERVER, v);
    }
    reply
}

/// Reads a request's body whole, charging the memory budget before it
/// holds the bytes: the declared length up front, and then, for a body
/// without one (`Transfer-Encoding: chunked`), each step as the chunks
/// arrive, so that a client trickling chunks it never finishes holds no
/// more than the budget grants. The error is the reply to send.
async fn read_body(
    srv: &Server,
    mut body: Incoming,
    limit: usize,
    declared: usize,
    charge: &mut Charge<'_>,
) -> Result<Bytes, Reply> {
    let too_large = || {
        text(
            413,
            &format!("the body exceeds the limit of {limit} bytes\n"),
        )
    };
    let refused = || {
        crate::state::counters::bump(&srv.budget.refused);
        text(
            503,
            "out of memory: the connection memory budget is spent\n",
        )
    };
    if declared > UNBUDGETED_BODY && !charge.grow(declared).await {
        return Err(refused());
    }
    let mut buf = bytes::BytesMut::with_capacity(declared.min(limit));
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            tracing::debug!("Kyoto Tycoon port request body: {e}");
            text(400, "the request body could not be read\n")
        })?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        let len = buf.len() + data.len();
        if len > limit {
            return Err(too_large());
        }
        if len > UNBUDGETED_BODY && len > charge.held() {
            // Twice what is held, so a long body is charged a few times.
            let want = len.max(charge.held().saturating_mul(2)).min(limit);
            if !charge.grow(want - charge.held()).await {
                return Err(refused());
            }
        }
        buf.extend_from_slice(&data);
    }
    Ok(buf.freeze())
}

/// Reads the body, marks the request boundary, routes.
async fn read_and_route(
    srv: &Arc<Server>,
    shared: &Shared,
    boundary: &AtomicBool,
    req: Request<Incoming>,
) -> Reply {
    let (parts, body) = req.into_parts();
    let limit = usize::try_from(crate::protocols::kt::max_frame(srv)).unwrap_or(usize::MAX);
    let declared = usize::try_from(body.size_hint().lower()).unwrap_or(usize::MAX);
    if declared > limit {
        // The body stays unread, so hyper closes the connection after this.
        return text(
            413,
            &format!("the body exceeds the limit of {limit} bytes\n"),
        );
    }
    let mut charge = Charge::new(&srv.budget);
    let body = match read_body(srv, body, limit, declared, &mut charge).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    charge.set(if body.len() > UNBUDGETED_BODY {
        body.len()
    } else {
        0
    });
    // The request is read whole: the next bytes begin the next request.
    boundary.store(true, Relaxed);
    // Which of its writes the reply waits for (--sync-replicas). Calls that
    // run elsewhere (slow calls) wait in `slow::Ticket::run`.
    memstored_engine::ulog::take_last_appended();
    let path = parts.uri.path();
    let reply = if let Some(name) = path.strip_prefix("/rpc/") {
        let content_type = parts
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        super::tsv_rpc::call(srv, shared, name, parts.uri.query(), content_type, &body).await
    } else if let Some(reply) = super::ops::route(srv, &parts) {
        reply
    } else {
        super::rest::handle(srv, &parts, body)
    };
    srv.replication
        .before_replies(memstored_engine::ulog::take_last_appended())
        .await;
    reply
}

/// KT's reason phrases for its own codes (hyper has none for 450).
fn reason(code: u16) -> Option<&'static [u8]> {
    match code {
        450 => Some(b"Logical Inconsistency"),
        _ => None,
    }
}

/// A reply with `code`, `headers` (names lower case; a value that is not
/// a valid header value is left out) and `body`.
pub(super) fn reply(code: u16, headers: &[(&'static str, String)], body: Bytes) -> Reply {
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Some(phrase) = reason(code) {
        r.extensions_mut()
            .insert(hyper::ext::ReasonPhrase::from_static(phrase));
    }
    for (name, value) in headers {
        match HeaderValue::from_str(value) {
            Ok(v) => {
                r.headers_mut().insert(HeaderName::from_static(name), v);
            }
            Err(_) => tracing::debug!("header {name} left out: {value:?} is not a header value"),
        }
    }
    r
}

/// A plain-text reply.
pub(super) fn text(code: u16, body: &str) -> Reply {
    reply(
        code,
        &[("content-type", "text/plain".to_string())],
        Bytes::copy_from_slice(body.as_bytes()),
    )
}
