//! Tkrzw-RPC's gRPC port (`--grpc-listen [ADDR:]PORT`): tonic's HTTP/2
//! server on the main runtime, serving `protocols::grpc::Dbm` and nothing
//! else. Its bounds: a request or a reply of at most `Server::max_message`
//! (`-I` plus 1 MiB, at least 64 MiB), [`MAX_STREAMS`] calls at once per
//! connection, headers of at most [`MAX_HEADERS`] bytes, and at most
//! [`MAX_PENDING_RESETS`] streams a client opened and reset before they were
//! served (HTTP/2's rapid reset).

use crate::protocols::grpc::pb::dbm_service_server::DbmServiceServer;
use crate::protocols::grpc::Dbm;
use crate::state::server::Server;
use std::sync::Arc;

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
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
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
