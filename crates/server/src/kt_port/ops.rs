//! Operations routes of the Kyoto Tycoon port: `/metrics` and `/health`
//! are reserved here (not keys of the RESTful interface) and answer 404
//! until they are implemented. A route is one line of [`ROUTES`].

use super::http::{text, Reply};
use crate::server::Server;

/// An operations route's handler.
type Handler = fn(&Server) -> Reply;

/// Path → handler.
const ROUTES: &[(&str, Handler)] = &[("/metrics", not_yet), ("/health", not_yet)];

/// The reply of the operations route at `path`, if it is one.
pub(super) fn route(srv: &Server, path: &str) -> Option<Reply> {
    ROUTES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, handler)| handler(srv))
}

fn not_yet(_srv: &Server) -> Reply {
    text(404, "not implemented yet\n")
}
