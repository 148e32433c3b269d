//! Reads of memcached's per-item access state (fetched bit, last access):
//! meta `me`, `lru_crawler metadump`. Neither counts as a fetch nor bumps it.

use super::{Outcome, Peek};
use crate::state::counters::bump;
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::Access;

/// The access state of `key`'s item; `None` from stores that keep none
/// (only the capped cache does), for an absent key, or on an error.
#[derive(Debug, Clone, Copy)]
pub struct LastAccess<'k> {
    pub key: &'k [u8],
}

impl LastAccess<'_> {
    pub fn apply(&self, srv: &Server) -> Option<Access> {
        srv.db.access(self.key).ok().flatten()
    }
}

/// meta `me <key>`: the live record and its access state, counted in
/// `cmd_meta`.
#[derive(Debug, Clone)]
pub struct Inspect {
    pub key: Bytes,
}

impl Inspect {
    /// `Found` with the access state, or the outcome of the read.
    pub fn apply(&self, srv: &Server) -> (Outcome, Option<Access>) {
        bump(&srv.counters.here().cmd_meta);
        let o = Peek {
            key: self.key.clone(),
        }
        .apply(srv);
        let access = match o {
            Outcome::Found(_) => LastAccess { key: &self.key }.apply(srv),
            _ => None,
        };
        (o, access)
    }
}
