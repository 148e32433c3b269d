//! Kyoto Tycoon's port (`--kt-listen [ADDR:]PORT`): what `ktserver`'s port
//! speaks, decided per request by its first byte as `ktserver` does
//! (kthttp.h: 0x00 or 0x80 and above is its binary protocol, anything else
//! an HTTP request). KT's own client (`RemoteDB`, `ktremotetest -bin`)
//! mixes both on one connection, so a connection switches back and forth.
//!
//! How the switch works: HTTP is hyper's (http1, keep-alive on), one hyper
//! connection per run of HTTP requests. The socket is wrapped in
//! [`Boundary`]; once a request's body has been read (`http.rs` marks the
//! boundary), the wrapper looks at the first byte of whatever the client
//! sends next. A binary request there is kept back and hyper is told "end
//! of stream", which on an idle connection is a clean close; its parts
//! (the socket and any bytes it had buffered) come back through
//! `without_shutdown`/`into_parts`, and the binary requests are served with
//! the main port's Kyoto Tycoon session (`kt_conn.rs`) until an HTTP byte
//! comes, which starts the next hyper connection. `keep_alive(false)` was
//! not used: hyper then writes `Connection: close`, and KT's client ignores
//! that header and fails its next call on the closed socket. hyper is built
//! with `half_close(true)` so it never reads ahead while a request is being
//! answered (KT's clients do not pipeline). The port goes on after hyper
//! only when hyper stopped at a binary request: when hyper ends a
//! connection (a request it must not keep alive after), whatever else the
//! client sent is dropped, never served. `framing.rs` follows the requests
//! handed to hyper, so that one with both `Content-Length` and
//! `Transfer-Encoding` is refused (400, closed). A connection idle for
//! `--kt-timeout` while none of its requests is served is closed, and the
//! port has a `-c` of its own (`listener::Pool`).
//!
//! | path | handler |
//! |---|---|
//! | `/rpc/NAME` | TSV-RPC over `crate::protocols::rpc` (`tsv_rpc.rs`); `cur_*` in `cursor.rs` |
//! | `/metrics`, `/health` | operations (`ops.rs`) |
//! | `/KEY`, `/DB/KEY` | RESTful GET/HEAD/PUT/DELETE (`rest.rs`) |

mod conn;
mod cursor;
mod framing;
mod http;
mod ops;
mod rest;
mod tsv_bulk;
mod tsv_rpc;

pub use conn::serve;

use crate::state::server::Server;
use std::sync::Arc;

/// Starts accepting on `listener` (bound by `startup.rs`), under the
/// port's own connection limit (`-c`), and says where on stdout, after the
/// main port's line: `memstored kt listening on ADDR:PORT`.
pub fn start(
    listener: std::net::TcpListener,
    srv: Arc<Server>,
    placement: crate::net::listener::Placement,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let listener = crate::net::listener::announce_port(
        listener,
        "kt",
        "Kyoto Tycoon port (binary protocol and HTTP)",
    )?;
    Ok(tokio::spawn(crate::net::listener::run_with(
        listener, srv, placement, serve,
    )))
}

/// `ktserver`'s rule: a request starting with 0x00 or a byte of 0x80 or
/// more is its binary protocol.
pub fn is_binary(first: u8) -> bool {
    first == 0 || first >= 0x80
}
