//! Operations routes of the Kyoto Tycoon port: `/metrics` (the Prometheus
//! exposition, `crate::protocols::stats::metrics`) and `/health`. They are not keys of the
//! RESTful interface. A route is one line of [`ROUTES`].

use super::http::{reply, text, Reply};
use crate::state::server::Server;
use bytes::Bytes;
use hyper::header::ACCEPT;
use hyper::http::request::Parts;
use hyper::Method;

/// An operations route's handler.
type Handler = fn(&Server, &Parts) -> Reply;

/// Path → handler.
const ROUTES: &[(&str, Handler)] = &[("/metrics", metrics), ("/health", health)];

/// The reply of the operations route the request names, if it is one.
/// They are read-only: a method other than GET or HEAD is answered 405
/// (it must not look as if a record named `health` had been stored).
pub(super) fn route(srv: &Server, req: &Parts) -> Option<Reply> {
    let (_, handler) = ROUTES.iter().find(|(p, _)| *p == req.uri.path())?;
    if req.method != Method::GET && req.method != Method::HEAD {
        return Some(reply(
            405,
            &[("allow", "GET, HEAD".to_string())],
            Bytes::from_static(b"read-only path\n"),
        ));
    }
    Some(handler(srv, req))
}

/// OpenMetrics to a scraper that asks for it, Prometheus's classic text
/// format otherwise.
fn metrics(srv: &Server, req: &Parts) -> Reply {
    let accept = req.headers.get(ACCEPT).and_then(|v| v.to_str().ok());
    let (content_type, body) = crate::protocols::stats::metrics::scrape(srv, accept);
    reply(
        200,
        &[("content-type", content_type.to_string())],
        Bytes::from(body),
    )
}

/// 200 `ok` while the server serves; 503 `stopping` once a shutdown has
/// begun, so a load balancer stops sending before the port closes.
fn health(srv: &Server, _req: &Parts) -> Reply {
    if *srv.shutdown.borrow() {
        text(503, "stopping\n")
    } else {
        text(200, "ok\n")
    }
}
