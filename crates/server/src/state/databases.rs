//! Several databases in one server, as `ktserver a.kch b.kct` and
//! Tkrzw-RPC's server serve them: `memstored -s A -s B ...` (or positional
//! names). The first is the server's own (`Server::db`), the one the
//! memcached protocols use; each further one gets its own `Server` around
//! it (`Server::others`), so every MessagePack-RPC procedure runs on it
//! unchanged once `protocols::rpc::select` has picked it by the call's `DB` option.
//!
//! `DB` is an index (an integer, or decimal text) or a name: the name as
//! given on the command line, its path without the `#` parameters, or that
//! path's file name (`casket.kct` for `/data/casket.kct#bnum=1m`).

use crate::state::server::Server;
use memstored_engine::Db;
use std::sync::Arc;

/// True when `wanted` names the database opened as `name`.
pub fn names(name: &str, wanted: &str) -> bool {
    let path = name.split('#').next().unwrap_or(name);
    let file = path.rsplit('/').next().unwrap_or(path);
    wanted == name || wanted == path || wanted == file
}

/// The server of database `i` (0 = the first, then `srv.others` in order);
/// `None` past the last. MessagePack-RPC's `DB` option and gRPC's `dbm_index`
/// both count this way.
pub fn nth(srv: &Arc<Server>, i: usize) -> Option<&Arc<Server>> {
    match i {
        0 => Some(srv),
        i => srv.others.get(i - 1),
    }
}

/// Every database of the server, the first first.
pub fn all(srv: &Server) -> Vec<Arc<Db>> {
    std::iter::once(srv.db.clone())
        .chain(srv.others.iter().map(|s| s.db.clone()))
        .collect()
}

/// `stats` lines listing each database, when there is more than one:
/// `db_N_store`, `db_N_engine`, `db_N_count`.
pub fn stats(srv: &Server) -> Vec<(String, String)> {
    if srv.others.is_empty() {
        return Vec::new();
    }
    std::iter::once(srv)
        .chain(srv.others.iter().map(|s| &**s))
        .enumerate()
        .flat_map(|(i, s)| {
            [
                (format!("db_{i}_store"), s.cfg.store.clone()),
                (
                    format!("db_{i}_engine"),
                    s.db.name().kind.label().to_string(),
                ),
                (format!("db_{i}_count"), s.db.count().to_string()),
            ]
        })
        .collect()
}
