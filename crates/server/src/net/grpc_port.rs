//! Tkrzw-RPC's gRPC port (`--grpc-listen [ADDR:]PORT`): tonic's HTTP/2
//! server on the main runtime, serving `protocols::grpc::Dbm` and nothing
//! else. Its bounds: a request or a reply of at most `Server::max_message`
//! (`-I` plus 1 MiB, at least 64 MiB), `-c` connections of its own (counted
//! in `curr_connections`, as the KT port's), [`MAX_STREAMS`] calls at once per
//! connection, headers of at most [`MAX_HEADERS`] bytes, and at most
//! [`MAX_PENDING_RESETS`] streams a client opened and reset before they were
//! served (HTTP/2's rapid reset).

use crate::net::placement::Live;
use crate::protocols::grpc::pb::dbm_service_server::DbmServiceServer;
use crate::protocols::grpc::Dbm;
use crate::state::server::Server;
use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tonic::codegen::tokio_stream::wrappers::TcpListenerStream;
use tonic::codegen::tokio_stream::StreamExt;
use tonic::transport::server::Connected;

/// Concurrent calls (HTTP/2 streams) one connection may have open.
pub const MAX_STREAMS: u32 = 128;
/// The largest header list a request may send (Tkrzw's clients send a few
/// hundred bytes).
pub const MAX_HEADERS: u32 = 16 << 10;
/// Streams reset by the client before they were served, per connection,
/// past which the connection is closed.
pub const MAX_PENDING_RESETS: usize = 20;

/// Starts serving on `listener` (bound by `startup.rs`) and says where on
/// stdout, after the main port's line: `memstored grpc listening on ADDR:PORT`.
/// The task ends when the server stops, after the calls in flight are answered.
pub fn start(
    listener: std::net::TcpListener,
    srv: Arc<Server>,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let listener = crate::net::listener::announce_port(listener, "grpc", "Tkrzw-RPC gRPC port")?;
    let limit = srv.max_message();
    let service = DbmServiceServer::new(Dbm::new(srv.clone()))
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit);
    let admitting = srv.clone();
    let incoming = TcpListenerStream::new(listener).filter_map(move |accepted| match accepted {
        Ok(stream) => {
            let peer = stream
                .peer_addr()
                .map_or_else(|_| "?".to_string(), |a| a.to_string());
            let live = crate::net::listener::admit_grpc(&admitting, &peer)?;
            let _ = stream.set_nodelay(true);
            Some(Ok(Counted {
                stream,
                _live: live,
            }))
        }
        Err(e) => Some(Err(e)),
    });
    let mut stop = srv.shutdown.clone();
    let stopping = async move {
        let _ = stop.wait_for(|stopping| *stopping).await;
    };
    Ok(tokio::spawn(async move {
        let served = tonic::transport::Server::builder()
            .max_concurrent_streams(MAX_STREAMS)
            .http2_max_header_list_size(MAX_HEADERS)
            .http2_max_pending_accept_reset_streams(Some(MAX_PENDING_RESETS))
            .serve_with_incoming_shutdown(service, incoming, stopping)
            .await;
        if let Err(e) = served {
            tracing::error!("the gRPC port stopped: {e}");
        }
    }))
}

/// An admitted connection: the socket, and its place under the port's `-c`,
/// given back when tonic drops the connection.
struct Counted {
    stream: TcpStream,
    _live: Live,
}

impl Connected for Counted {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.connect_info()
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
