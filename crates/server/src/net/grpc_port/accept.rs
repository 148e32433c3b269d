//! The gRPC port's accept loop as the stream of connections tonic serves.
//! tonic's own (`TcpListenerStream`) passes an accept error on, which tonic
//! skips and asks again at once: a busy loop for as long as the error lasts
//! (EMFILE with every descriptor taken). This one logs the error and waits
//! [`BACKOFF`] before accepting again, as the other ports' loops do.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tonic::codegen::tokio_stream::Stream;

/// The pause after a failed accept.
pub const BACKOFF: Duration = Duration::from_millis(10);

/// Accepted connections; failed accepts are logged and paused after.
pub struct Accepting {
    listener: TcpListener,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Accepting {
    pub fn new(listener: TcpListener) -> Accepting {
        Accepting {
            listener,
            pause: None,
        }
    }
}

impl Stream for Accepting {
    type Item = TcpStream;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<TcpStream>> {
        loop {
            if let Some(pause) = &mut self.pause {
                std::task::ready!(pause.as_mut().poll(cx));
                self.pause = None;
            }
            match std::task::ready!(self.listener.poll_accept(cx)) {
                Ok((stream, _)) => return Poll::Ready(Some(stream)),
                Err(e) => {
                    tracing::warn!("accept on the gRPC port: {e}");
                    self.pause = Some(Box::pin(tokio::time::sleep(BACKOFF)));
                }
            }
        }
    }
}
