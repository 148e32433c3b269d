//! `get`, `gets`, `gat`, binary GET/GETK/GAT, meta `mg`, RPC `get`/`check`.

use super::{outcome, Outcome};
use crate::server::Server;
use crate::stats::bump;
use bytes::Bytes;
use memstored_engine::{Lookup, Record};

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

impl Get {
    /// A key named again in the same multi-get: counted as another get (or
    /// touch) of the record `earlier` found, which is answered again without
    /// a second lookup, so a compressed value is decompressed once and its
    /// bytes are shared by every copy in the reply.
    pub fn repeat(&self, srv: &Server, earlier: Option<&Record>) -> Outcome {
        let c = &srv.counters;
        let (cmd, hits, misses) = match self.touch {
            Some(_) => (&c.cmd_touch, &c.touch_hits, &c.touch_misses),
            None => (&c.cmd_get, &c.get_hits, &c.get_misses),
        };
        bump(cmd);
        match earlier {
            Some(r) => {
                bump(hits);
                Outcome::Found(r.clone())
            }
            None => {
                bump(misses);
                Outcome::NotFound
            }
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
