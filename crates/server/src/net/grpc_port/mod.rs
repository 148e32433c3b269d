//! Tkrzw-RPC's gRPC port (`--grpc-listen [ADDR:]PORT`, tkrzw_server's
//! `--address`): tonic's HTTP/2 server on the main runtime, serving
//! `protocols::grpc::Dbm` and nothing else, in TLS with `--auth` (rustls).
//! Its bounds: a request or a reply of at most `Server::max_message`
//! (`-I` plus 1 MiB, at least 64 MiB), requests and replies charged to the
//! server's memory budget (`budget.rs`), `-c` connections of its own
//! (counted in `curr_connections`, as the KT port's), [`MAX_STREAMS`] calls
//! at once per connection, headers of at most [`MAX_HEADERS`] bytes, at most
//! [`MAX_PENDING_RESETS`] streams a client opened and reset before they were
//! served (HTTP/2's rapid reset), [`TLS_HANDSHAKE`] for a TLS handshake, and
//! an accept loop that backs off on errors (`accept.rs`).
//!
//! Tkrzw-RPC has no login: with `--sasl-file` every call is refused
//! (UNAUTHENTICATED, [`NO_LOGIN`]) unless TLS verifies client certificates
//! (`--auth` with `root=`), which then stands for the login.

mod accept;
mod budget;
mod per_core;

use crate::net::placement::Live;
use crate::protocols::grpc::pb::dbm_service_server::DbmServiceServer;
use crate::protocols::grpc::Dbm;
use crate::state::server::Server;
use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tonic::codegen::tokio_stream::StreamExt;
use tonic::transport::server::Connected;

/// Concurrent calls (HTTP/2 streams) one connection may have open. Not
/// fewer: tkrzw-rpc-ruby's iterators never end their Iterate call (its
/// request enumerator loops for good), so each stays open until Ruby's
/// garbage collector cancels it, and its own test of five threads sharing
/// one connection holds several hundred at once; at 128 it hung, waiting
/// for a stream (gRPC C++'s tkrzw_server sets no limit).
pub const MAX_STREAMS: u32 = 1024;
/// The largest header list a request may send (Tkrzw's clients send a few
/// hundred bytes).
pub const MAX_HEADERS: u32 = 16 << 10;
/// Streams reset by the client before they were served, per connection,
/// past which the connection is closed.
pub const MAX_PENDING_RESETS: usize = 20;
/// How long a client may take over its TLS handshake.
pub const TLS_HANDSHAKE: Duration = Duration::from_secs(10);

/// Why every call is refused with `--sasl-file` and no client certificates.
pub const NO_LOGIN: &str = "the gRPC port is closed: --sasl-file requires a login, which \
     Tkrzw-RPC does not have; serve it with client certificates (--auth ssl:...,root=FILE)";

/// `--auth`'s PEM contents (read by `startup.rs`).
pub struct Tls {
    /// The server's certificate chain.
    pub cert: Vec<u8>,
    pub key: Vec<u8>,
    /// Roots client certificates must chain to: mutual TLS when given.
    pub root: Option<Vec<u8>>,
}

/// Starts serving on `listener` (bound by `startup.rs`) and says where on
/// stdout, after the main port's line: `memstored grpc listening on ADDR:PORT`.
/// The task ends when the server stops, after the calls in flight are answered.
/// `Err`: the listener, or `tls`'s certificates or key, refused.
pub fn start(
    listener: std::net::TcpListener,
    srv: Arc<Server>,
    tls: Option<Tls>,
    workers: Option<Arc<crate::net::workers::Workers>>,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let mut builder = tonic::transport::Server::builder()
        .max_concurrent_streams(MAX_STREAMS)
        .http2_max_header_list_size(MAX_HEADERS)
        .http2_max_pending_accept_reset_streams(Some(MAX_PENDING_RESETS));
    let client_certs = tls.as_ref().is_some_and(|t| t.root.is_some());
    if let Some(tls) = tls {
        let mut config = tonic::transport::ServerTlsConfig::new()
            .identity(tonic::transport::Identity::from_pem(tls.cert, tls.key))
            .timeout(TLS_HANDSHAKE);
        if let Some(root) = tls.root {
            config = config.client_ca_root(tonic::transport::Certificate::from_pem(root));
        }
        builder = builder
            .tls_config(config)
            .map_err(|e| std::io::Error::other(format!("--auth: {e}")))?;
    }
    let listener = crate::net::listener::announce_port(listener, "grpc", "Tkrzw-RPC gRPC port")?;
    let closed = srv.cfg.sasl && !client_certs;
    if closed {
        tracing::warn!("{NO_LOGIN}");
    }
    let limit = srv.max_message();
    let service = DbmServiceServer::new(Dbm::new(srv.clone()))
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit);
    let service = tonic::service::interceptor::InterceptedService::new(
        service,
        move |req: tonic::Request<()>| {
            if closed {
                return Err(tonic::Status::unauthenticated(NO_LOGIN));
            }
            Ok(req)
        },
    );
    let service = budget::Budgeted {
        inner: service,
        srv: srv.clone(),
    };
    let admitting = srv.clone();
    let incoming = accept::Accepting::new(listener).filter_map(move |stream| {
        let peer = stream
            .peer_addr()
            .map_or_else(|_| "?".to_string(), |a| a.to_string());
        let live = crate::net::listener::admit_grpc(&admitting, &peer)?;
        let _ = stream.set_nodelay(true);
        Some(Ok::<_, std::io::Error>(Counted {
            stream,
            _live: live,
        }))
    });
    if let Some(workers) = workers {
        let serve_one = move |joined: per_core::Joined, stop: per_core::Serving| {
            let (builder, service) = (builder.clone(), service.clone());
            Box::pin(async move {
                let served = builder
                    .serve_with_incoming_shutdown(service, joined, stop)
                    .await;
                if let Err(e) = served {
                    tracing::error!("the gRPC port stopped on a worker: {e}");
                }
            }) as per_core::Serving
        };
        return Ok(tokio::spawn(per_core::serve(
            serve_one, incoming, workers, srv,
        )));
    }
    let stopping = stopping(&srv);
    Ok(tokio::spawn(async move {
        let served = builder
            .serve_with_incoming_shutdown(service, incoming, stopping)
            .await;
        if let Err(e) = served {
            tracing::error!("the gRPC port stopped: {e}");
        }
    }))
}

/// Resolves once the server begins to stop.
fn stopping(srv: &Server) -> impl std::future::Future<Output = ()> + Send + 'static {
    let mut stop = srv.shutdown.clone();
    async move {
        let _ = stop.wait_for(|stopping| *stopping).await;
    }
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
