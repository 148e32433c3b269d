//! The gRPC port's calls charged to the server's memory budget
//! (`--conn-memory`, `state::budget`), as the other ports' buffers are.
//!
//! Each call's request bytes are charged as their DATA frames arrive and
//! held until the call's first reply is produced (the decoded request lives
//! that long). A reply (one chunk per message: tonic encodes a message
//! whole) is charged when the service produces it and handed to hyper in
//! pieces of [`PIECE`] bytes; hyper takes the next piece only once h2 has
//! send capacity for the stream (its window, at most hyper's send buffer per
//! stream), so the unsent rest stays here, charged, while the client does
//! not read: memory for replies nobody reads is bounded by the budget (plus
//! h2's own per-stream send buffer). A piece's charge is given back when
//! the next is asked for.
//!
//! When the budget is spent, a request waits up to `Budget::wait` for memory
//! to be given back (holding one HTTP/2 frame, at most 16 KiB), then is
//! refused with gRPC's RESOURCE_EXHAUSTED as its status. A reply that does
//! not fit is refused at once, the stream ended with that status instead of
//! the reply, which is dropped: a reply waiting would hold its memory
//! uncharged (four slow readers asking for a 1 MiB value 100 times each
//! grew the server by 300 MiB while their replies waited their second). A call's first [`FREE_REQUEST`] bytes and
//! replies up to [`FREE_REPLY`] are not charged, so small calls keep being
//! served when the budget is spent (as the other ports' small buffers are),
//! bounded by `-c` connections of at most `MAX_STREAMS` calls each.

use crate::state::server::Server;
use bytes::Bytes;
use hyper::body::{Body, Frame};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tonic::codegen::http;

/// Request bytes of a call not charged.
pub const FREE_REQUEST: usize = 16 << 10;
/// Reply chunks up to this size are not charged.
pub const FREE_REPLY: usize = 64 << 10;
/// The pieces a larger reply is handed to hyper in.
pub const PIECE: usize = 64 << 10;

/// Wraps a service: every call's request and reply bodies are charged.
#[derive(Clone)]
pub struct Budgeted<S> {
    pub inner: S,
    pub srv: Arc<Server>,
}

impl<S, B> tonic::codegen::Service<http::Request<tonic::body::Body>> for Budgeted<S>
where
    S: tonic::codegen::Service<http::Request<tonic::body::Body>, Response = http::Response<B>>,
    S::Future: Send + 'static,
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<tonic::codegen::StdError>,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let call = Arc::new(CallCharge {
            srv: self.srv.clone(),
            request: AtomicUsize::new(0),
            reply: AtomicUsize::new(0),
        });
        let req = req.map(|body| {
            tonic::body::Body::new(Charged::new(body, call.clone(), Direction::Request))
        });
        let replied = self.inner.call(req);
        Box::pin(async move {
            let resp = replied.await?;
            Ok(resp.map(|body| tonic::body::Body::new(Charged::new(body, call, Direction::Reply))))
        })
    }
}

/// What one call holds charged; given back when both its bodies are gone.
struct CallCharge {
    srv: Arc<Server>,
    /// Request bytes charged, given back at the first reply.
    request: AtomicUsize,
    /// The last reply chunk's charge, given back when the next is asked for.
    reply: AtomicUsize,
}

impl CallCharge {
    fn give_back(&self, what: &AtomicUsize) {
        self.srv.budget.give(what.swap(0, Ordering::AcqRel));
    }
}

impl Drop for CallCharge {
    fn drop(&mut self) {
        self.give_back(&self.request);
        self.give_back(&self.reply);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Request,
    Reply,
}

/// Why a call was refused.
const SPENT: &str =
    "out of memory: the server's connection memory (--conn-memory) is spent; try again";

/// A body whose DATA frames are charged to the budget before they are passed on.
struct Charged<B> {
    inner: B,
    call: Arc<CallCharge>,
    direction: Direction,
    /// Request bytes seen so far (the first [`FREE_REQUEST`] are free).
    seen: usize,
    /// A request frame waiting for its charge to be granted, and the wait.
    waiting: Option<(Frame<Bytes>, usize, Waiting)>,
    /// Refused: the stream is over.
    done: bool,
    /// A reply's pieces not yet handed on (charged).
    rest: Bytes,
    /// Whether `rest` is charged (a reply over [`FREE_REPLY`]).
    rest_charged: bool,
    /// The charge of the piece handed on last, given back at the next poll.
    handed: usize,
}

type Waiting = Pin<Box<dyn Future<Output = bool> + Send>>;

impl<B> Charged<B> {
    fn new(inner: B, call: Arc<CallCharge>, direction: Direction) -> Charged<B> {
        Charged {
            inner,
            call,
            direction,
            seen: 0,
            waiting: None,
            done: false,
            rest: Bytes::new(),
            rest_charged: false,
            handed: 0,
        }
    }

    /// The bytes of a DATA frame of `len` to charge (0: free).
    fn chargeable(&mut self, len: usize) -> usize {
        match self.direction {
            Direction::Reply if len <= FREE_REPLY => 0,
            Direction::Reply => len,
            Direction::Request => {
                let free = FREE_REQUEST.saturating_sub(self.seen);
                self.seen = self.seen.saturating_add(len);
                len.saturating_sub(free)
            }
        }
    }

    /// Records a granted charge of `n` for `frame` and passes it on.
    fn granted(&mut self, n: usize) {
        match self.direction {
            Direction::Request => self.call.request.fetch_add(n, Ordering::AcqRel),
            Direction::Reply => self.call.reply.fetch_add(n, Ordering::AcqRel),
        };
    }

    /// The next piece of the reply in `rest`, its charge to give back at
    /// the next poll.
    fn next_piece(&mut self) -> Frame<Bytes> {
        let piece = self.rest.split_to(self.rest.len().min(PIECE));
        self.handed = if self.rest_charged { piece.len() } else { 0 };
        Frame::data(piece)
    }

    /// A frame to pass on, a reply's DATA cut to its first piece.
    fn pass(&mut self, frame: Frame<Bytes>, charged: bool) -> Frame<Bytes> {
        if self.direction == Direction::Request || !frame.is_data() {
            return frame;
        }
        match frame.into_data() {
            Ok(data) if data.len() > PIECE => {
                self.rest = data;
                self.rest_charged = charged;
                self.next_piece()
            }
            Ok(data) => Frame::data(data),
            Err(frame) => frame,
        }
    }

    /// The refusal: an error for a request, the status as trailers for a reply.
    fn refuse(&mut self) -> Option<Result<Frame<Bytes>, tonic::Status>> {
        self.done = true;
        self.call.srv.budget.refused.fetch_add(1, Ordering::Relaxed);
        tracing::debug!("a gRPC call refused: {SPENT}");
        let status = tonic::Status::resource_exhausted(SPENT);
        match self.direction {
            Direction::Request => Some(Err(status)),
            Direction::Reply => {
                let mut trailers = http::HeaderMap::new();
                match status.add_header(&mut trailers) {
                    Ok(()) => Some(Ok(Frame::trailers(trailers))),
                    Err(e) => Some(Err(e)),
                }
            }
        }
    }
}

impl<B> Body for Charged<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<tonic::codegen::StdError>,
{
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if let Some((_, n, wait)) = &mut this.waiting {
            let n = *n;
            let granted = ready!(wait.as_mut().poll(cx));
            let (frame, _, _) = this.waiting.take().expect("waiting");
            if !granted {
                return Poll::Ready(this.refuse());
            }
            this.granted(n);
            return Poll::Ready(Some(Ok(frame)));
        }
        if this.direction == Direction::Reply {
            // The request was answered; the last piece was handed on.
            this.call.give_back(&this.call.request);
            let handed = std::mem::take(&mut this.handed);
            if handed > 0 {
                this.call.reply.fetch_sub(handed, Ordering::AcqRel);
                this.call.srv.budget.give(handed);
            }
            if !this.rest.is_empty() {
                return Poll::Ready(Some(Ok(this.next_piece())));
            }
        }
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => frame,
            Some(Err(e)) => return Poll::Ready(Some(Err(tonic::Status::from_error(e.into())))),
            None => return Poll::Ready(None),
        };
        let n = frame.data_ref().map_or(0, |d| this.chargeable(d.len()));
        if n == 0 {
            return Poll::Ready(Some(Ok(this.pass(frame, false))));
        }
        let srv = this.call.srv.clone();
        if srv.budget.try_take(n) {
            this.granted(n);
            return Poll::Ready(Some(Ok(this.pass(frame, true))));
        }
        if this.direction == Direction::Reply {
            return Poll::Ready(this.refuse());
        }
        let wait: Waiting = Box::pin(async move { srv.budget.take(n).await });
        this.waiting = Some((frame, n, wait));
        // Polled again at once: the wait registers its waker there.
        self.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.done || (self.waiting.is_none() && self.rest.is_empty() && self.inner.is_end_stream())
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self.waiting {
            None if !self.done && self.rest.is_empty() => self.inner.size_hint(),
            _ => hyper::body::SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::server::Config;
    use http_body_util::{BodyExt, Full};

    /// A server whose budget is `limit` bytes.
    fn server(limit: usize) -> Arc<Server> {
        let (_stop, rx) = tokio::sync::watch::channel(false);
        let db = Arc::new(memstored_engine::Db::open("*", true).unwrap());
        let cfg = Config {
            conn_memory: limit,
            ..Config::defaults("*")
        };
        Arc::new(Server::new(db, cfg, None, rx))
    }

    fn reply(srv: &Arc<Server>, bytes: usize) -> (Charged<Full<Bytes>>, Arc<CallCharge>) {
        let call = Arc::new(CallCharge {
            srv: srv.clone(),
            request: AtomicUsize::new(0),
            reply: AtomicUsize::new(0),
        });
        let body = Full::new(Bytes::from(vec![7u8; bytes]));
        (Charged::new(body, call.clone(), Direction::Reply), call)
    }

    /// A reply is handed on in pieces, charged whole, given back piece by
    /// piece and all of it at the end.
    #[tokio::test]
    async fn a_reply_goes_in_charged_pieces() {
        let srv = server(1 << 20);
        let (mut body, call) = reply(&srv, 3 * PIECE + 10);
        let mut sizes = Vec::new();
        while let Some(frame) = body.frame().await {
            let data = frame.unwrap().into_data().unwrap();
            sizes.push((data.len(), srv.budget.used()));
        }
        assert_eq!(
            sizes,
            [
                (PIECE, 3 * PIECE + 10),
                (PIECE, 2 * PIECE + 10),
                (PIECE, PIECE + 10),
                (10, 10)
            ]
        );
        drop(body);
        drop(call);
        assert_eq!(srv.budget.used(), 0);
    }

    /// A reply over what is left is refused at once: the stream ends with
    /// RESOURCE_EXHAUSTED trailers, and the refusal is counted.
    #[tokio::test]
    async fn a_reply_over_the_budget_is_refused() {
        let srv = server(100 << 10);
        let (body, _call) = reply(&srv, 200 << 10);
        let collected = body.collect().await.unwrap();
        let trailers = collected.trailers().cloned().unwrap();
        assert_eq!(trailers["grpc-status"], "8");
        assert!(collected.to_bytes().is_empty());
        assert_eq!(srv.budget.refused.load(Ordering::Relaxed), 1);
        // Small replies are free, so served while the budget is spent.
        assert!(srv.budget.try_take(100 << 10));
        let (small, _call) = reply(&srv, FREE_REPLY);
        assert_eq!(small.collect().await.unwrap().to_bytes().len(), FREE_REPLY);
    }
}
