//! `delete`, binary DELETE, meta `md` (with `I`: invalidate), RPC `remove`.

use super::{outcome, Outcome};
use crate::state::counters::bump;
use crate::state::marks::Mark;
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::{Action, Error};

/// Removes one record, if its CAS matches when one is given.
#[derive(Debug, Clone)]
pub struct Delete {
    pub key: Bytes,
    pub cas: Option<u64>,
}

impl Delete {
    /// `Deleted`, `NotFound`, `Exists` (CAS mismatch), `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let o = outcome(srv.db.remove_with_cas(&self.key, self.cas), |()| {
            Outcome::Deleted
        });
        count(srv, &o);
        o
    }
}

fn count(srv: &Server, o: &Outcome) {
    let c = srv.counters.here();
    match o {
        Outcome::Deleted => bump(&c.delete_hits),
        Outcome::NotFound | Outcome::Exists => bump(&c.delete_misses),
        _ => {}
    }
}

/// meta `md <key> I [T<ttl>] [C<cas>]`: instead of removing, marks the item
/// stale. It keeps its value and flags and gets a new CAS (and the new TTL,
/// if given), in one atomic engine call; the next `mg` wins the recache token.
#[derive(Debug, Clone)]
pub struct Invalidate {
    pub key: Bytes,
    pub cas: Option<u64>,
    /// The new absolute expiry, if `T` was given.
    pub expires_at: Option<u64>,
}

impl Invalidate {
    /// `Deleted` (marked stale), `NotFound`, `Exists`, `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let done = srv.db.process(&self.key, |cur| {
            let r = cur.ok_or_else(|| Error::NotFound("no such record".into()))?;
            if self.cas.is_some_and(|c| c != r.meta.cas) {
                return Err(Error::CasMismatch);
            }
            // In place, as memcached marks the item: it stays fetched.
            let action = Action::Update {
                value: r.value.clone(),
                flags: r.meta.flags,
                expires_at: self.expires_at.unwrap_or(r.meta.expires_at),
            };
            Ok((action, ()))
        });
        let o = match done {
            Ok(((), cas)) => {
                srv.marks.set(
                    &self.key,
                    Mark {
                        cas: cas.unwrap_or(0),
                        stale: true,
                        token_sent: false,
                    },
                );
                Outcome::Deleted
            }
            Err(e) => Outcome::from_error(e),
        };
        if !matches!(o, Outcome::Deleted) {
            count(srv, &o);
        }
        o
    }
}
