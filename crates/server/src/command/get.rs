//! `get`, `gets`, `gat`, binary GET/GETK/GAT, meta `mg`, RPC `get`/`check`.

use super::{outcome, Outcome};
use crate::state::counters::bump;
use crate::state::server::Server;
use crate::state::watch::Found;
use bytes::Bytes;
use memstored_engine::{Access, Lookup, Record};

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
    /// a get-and-touch is a touch. Either counts as a fetch of the item
    /// (its access state, see `memstored_engine::access`).
    pub fn apply(&self, srv: &Server) -> Outcome {
        match self.touch {
            Some(expires_at) => self.get_and_touch(srv, expires_at),
            None => self.read(srv, true).0,
        }
    }

    /// Like `apply`, also returning the item's access state before this
    /// fetch (meta `h`, `l`); without `bump` (meta `u`) a plain read leaves
    /// it as it was. `None` from stores that keep no access state.
    pub fn apply_access(&self, srv: &Server, bump: bool) -> (Outcome, Option<Access>) {
        match self.touch {
            Some(expires_at) => {
                let before = srv.db.access(&self.key).ok().flatten();
                (self.get_and_touch(srv, expires_at), before)
            }
            None => self.read(srv, bump),
        }
    }

    /// The access state a fetch of the key finds, the fetch recorded unless
    /// `lru_bump` is false; nothing counted (meta `mg N` reads back the item
    /// its own add just made).
    pub fn fetch_access(&self, srv: &Server, lru_bump: bool) -> Option<Access> {
        srv.db
            .lookup_access(&self.key, lru_bump)
            .ok()
            .and_then(|l| l.1)
    }

    fn get_and_touch(&self, srv: &Server, expires_at: u64) -> Outcome {
        let c = srv.counters.here();
        bump(&c.cmd_touch);
        let o = outcome(srv.db.touch(&self.key, expires_at), Outcome::Found);
        let found = match &o {
            Outcome::Found(r) => Some(r),
            _ => None,
        };
        watched(srv, &self.key, found);
        match o {
            Outcome::Found(_) => bump(&c.touch_hits),
            Outcome::NotFound => bump(&c.touch_misses),
            _ => {}
        }
        o
    }

    fn read(&self, srv: &Server, lru_bump: bool) -> (Outcome, Option<Access>) {
        let c = srv.counters.here();
        bump(&c.cmd_get);
        let looked = srv.db.lookup_access(&self.key, lru_bump);
        if srv.watch.wants(crate::state::watch::kind::FETCHERS) {
            let (found, size) = match &looked {
                Ok((Lookup::Hit(r), _)) => (Found::Found, r.value.len()),
                Ok((Lookup::Expired, _)) => (Found::Expired, 0),
                _ => (Found::NotFound, 0),
            };
            srv.watch.item_get(&self.key, found, size);
        }
        match looked {
            Ok((Lookup::Hit(r), access)) => {
                bump(&c.get_hits);
                (Outcome::Found(r), access)
            }
            Ok((Lookup::Expired, _)) => {
                bump(&c.get_misses);
                bump(&c.get_expired);
                (Outcome::NotFound, None)
            }
            Ok((Lookup::Missing, _)) => {
                bump(&c.get_misses);
                (Outcome::NotFound, None)
            }
            Err(e) => (Outcome::from_error(e), None),
        }
    }
}

impl Get {
    /// A key named again in the same multi-get: counted as another get (or
    /// touch) of the record `earlier` found, which is answered again without
    /// a second lookup, so a compressed value is decompressed once and its
    /// bytes are shared by every copy in the reply.
    pub fn repeat(&self, srv: &Server, earlier: Option<&Record>) -> Outcome {
        let c = srv.counters.here();
        let (cmd, hits, misses) = match self.touch {
            Some(_) => (&c.cmd_touch, &c.touch_hits, &c.touch_misses),
            None => (&c.cmd_get, &c.get_hits, &c.get_misses),
        };
        bump(cmd);
        watched(srv, &self.key, earlier);
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

/// A fetch as fetchers' watchers see it (memcached's `item_get`): the
/// record found, if any.
fn watched(srv: &Server, key: &[u8], found: Option<&Record>) {
    if !srv.watch.wants(crate::state::watch::kind::FETCHERS) {
        return;
    }
    match found {
        Some(r) => srv.watch.item_get(key, Found::Found, r.value.len()),
        None => srv.watch.item_get(key, Found::NotFound, 0),
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
