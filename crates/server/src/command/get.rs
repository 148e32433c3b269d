//! `get`, `gets`, `gat`, binary GET/GETK/GAT, meta `mg`, RPC `get`/`check`.

use super::{outcome, Outcome};
use crate::server::Server;
use crate::stats::bump;
use bytes::Bytes;
use memstored_engine::Lookup;

/// Reads one record; with `touch`, also sets its expiry (memcached's GAT).
#[derive(Debug, Clone)]
pub struct Get {
    pub key: Bytes,
    /// The new absolute expiry for get-and-touch (0 = never).
    pub touch: Option<u64>,
}

impl Get {
    pub fn new(key: Bytes) -> Get {
        Get { key, touch: None }
    }

    /// `Found`, `NotFound`, or (a touch on a read-only server) `ReadOnly`.
    /// Counts as memcached does: a get is a hit, a miss or an expired miss;
    /// a get-and-touch is a touch.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let c = &srv.counters;
        if let Some(expires_at) = self.touch {
            bump(&c.cmd_touch);
            let o = outcome(srv.db.touch(&self.key, expires_at), Outcome::Found);
            match o {
                Outcome::Found(_) => bump(&c.touch_hits),
                Outcome::NotFound => bump(&c.touch_misses),
                _ => {}
            }
            return o;
        }
        bump(&c.cmd_get);
        match srv.db.lookup(&self.key) {
            Ok(Lookup::Hit(r)) => {
                bump(&c.get_hits);
                Outcome::Found(r)
            }
            Ok(Lookup::Expired) => {
                bump(&c.get_misses);
                bump(&c.get_expired);
                Outcome::NotFound
            }
            Ok(Lookup::Missing) => {
                bump(&c.get_misses);
                Outcome::NotFound
            }
            Err(e) => Outcome::from_error(e),
        }
    }
}

/// Reads a record without counting it as a get (meta `me`, a debug command).
#[derive(Debug, Clone)]
pub struct Peek {
    pub key: Bytes,
}

impl Peek {
    /// `Found`, `NotFound` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        outcome(srv.db.get_record(&self.key), |r| match r {
            Some(r) => Outcome::Found(r),
            None => Outcome::NotFound,
        })
    }
}
