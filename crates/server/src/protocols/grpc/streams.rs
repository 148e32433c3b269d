//! The bidirectional streams' one loop (Stream, Iterate): each request read
//! in turn and answered in order by a task of its own, until the client
//! ends the stream, an answer is a gRPC error (sent, then the end), the
//! client stops reading, or the server stops. At most [`STREAM_QUEUE`]
//! answers wait for a slow reader before the stream stops reading.

use super::service::Streamed;
use std::future::Future;
use tokio::sync::watch;
use tonic::codegen::tokio_stream::wrappers::ReceiverStream;
use tonic::{Status, Streaming};

/// Answers of a stream queued for a client that reads them slowly, before
/// the stream stops reading its requests.
pub(super) const STREAM_QUEUE: usize = 64;

/// What answers one stream's requests, with the state it keeps between them.
pub(super) trait Answering: Send + 'static {
    type Req: Send + 'static;
    type Resp: Send + 'static;

    /// The answer to one request; `Ok(None)`: none is sent; `Err`: the
    /// stream ends with it.
    fn answer(
        &mut self,
        req: Self::Req,
    ) -> impl Future<Output = Result<Option<Self::Resp>, Status>> + Send;
}

/// Serves `incoming` with `calls` (see the module's comment).
pub(super) fn serve<A: Answering>(
    mut calls: A,
    mut incoming: Streaming<A::Req>,
    mut stop: watch::Receiver<bool>,
) -> Streamed<A::Resp> {
    let (tx, rx) = tokio::sync::mpsc::channel(STREAM_QUEUE);
    tokio::spawn(async move {
        loop {
            let next = tokio::select! {
                biased;
                Ok(_) = stop.wait_for(|stopping| *stopping) => break,
                next = incoming.message() => next,
            };
            let answered = match next {
                Ok(Some(req)) => calls.answer(req).await,
                Ok(None) => break,
                Err(e) => Err(e),
            };
            let end = answered.is_err();
            let sent = match answered {
                Ok(None) => continue,
                Ok(Some(one)) => tx.send(Ok(one)).await,
                Err(e) => tx.send(Err(e)).await,
            };
            if sent.is_err() || end {
                break;
            }
        }
    });
    Box::pin(ReceiverStream::new(rx))
}
