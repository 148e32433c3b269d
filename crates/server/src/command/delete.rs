//! `delete`, binary DELETE, meta `md` (with `I`: invalidate), RPC `remove`.

use super::{outcome, Outcome};
use crate::state::counters::bump;
use crate::state::marks::Mark;
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::{Action, Error, Record};

/// Removes one record, if its CAS matches when one is given.
#[derive(Debug, Clone)]
pub struct Delete {
    pub key: Bytes,
    pub cas: Option<u64>,
}

impl Delete {
    /// `Deleted`, `NotFound`, `Exists` (CAS mismatch), `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        self.apply_as(srv, "delete")
    }

    /// [`Delete::apply`] by the command `cmd` names for deletions'
    /// watchers (`delete`, or meta's `md`).
    pub fn apply_as(&self, srv: &Server, cmd: &str) -> Outcome {
        let o = if srv.watch.wants(crate::state::watch::kind::DELETIONS) {
            self.remove_watched(srv, cmd)
        } else {
            outcome(srv.db.remove_with_cas(&self.key, self.cas), |()| {
                Outcome::Deleted
            })
        };
        count(srv, &o);
        o
    }

    /// The removal as one engine call that also tells the removed value's
    /// size, for the watchers' `deleted` line.
    fn remove_watched(&self, srv: &Server, cmd: &str) -> Outcome {
        let done = srv.db.process(&self.key, |cur| {
            let r = present_with_cas(cur, self.cas)?;
            Ok((Action::Remove, r.value.len()))
        });
        match done {
            Ok((size, _)) => {
                srv.watch.deleted(&self.key, cmd, size);
                Outcome::Deleted
            }
            Err(e) => Outcome::from_error(e),
        }
    }
}

/// The record an `md` acts on: present, and of the CAS `C` gave.
fn present_with_cas(cur: Option<&Record>, cas: Option<u64>) -> Result<&Record, Error> {
    let r = cur.ok_or_else(|| Error::NotFound("no such record".into()))?;
    if cas.is_some_and(|c| c != r.meta.cas) {
        return Err(Error::CasMismatch);
    }
    Ok(r)
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
    /// The CAS the item gets (meta `E`), instead of the next; the item is
    /// then stored anew rather than in place.
    pub new_cas: Option<u64>,
}

impl Invalidate {
    /// `Deleted` (marked stale), `NotFound`, `Exists`, `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let done = srv.db.process(&self.key, |cur| {
            let r = present_with_cas(cur, self.cas)?;
            // In place, as memcached marks the item: it stays fetched.
            let action = Action::Update {
                value: r.value.clone(),
                flags: r.meta.flags,
                expires_at: self.expires_at.unwrap_or(r.meta.expires_at),
            }
            .with_cas(self.new_cas);
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

/// meta `md <key> x`: the item stays, its value emptied (memcached 1.6.21+,
/// a tombstone of what was there): client flags `F` and TTL `T` (default
/// 0 and none), and the item's CAS unless `E` gives another, as memcached
/// keeps it. One atomic engine call.
#[derive(Debug, Clone)]
pub struct RemoveValue {
    pub key: Bytes,
    /// Act only if the item has this CAS (`C`).
    pub cas: Option<u64>,
    pub flags: u32,
    pub expires_at: u64,
    /// `E`: the CAS the emptied item gets.
    pub new_cas: Option<u64>,
}

impl RemoveValue {
    /// `Deleted`, `NotFound`, `Exists` (CAS mismatch), `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let done = srv.db.process(&self.key, |cur| {
            let r = present_with_cas(cur, self.cas)?;
            let action = Action::PutWithCas {
                value: Bytes::new(),
                flags: self.flags,
                expires_at: self.expires_at,
                cas: self.new_cas.unwrap_or(r.meta.cas),
            };
            Ok((action, ()))
        });
        let o = outcome(done, |_| Outcome::Deleted);
        count(srv, &o);
        o
    }
}
