//! Kyoto Tycoon's `seize` (get and remove) and `cas` (compare and exchange by value).

use super::{outcome, Outcome};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::{Action, Error};

/// Removes a record and returns it, in one atomic step.
#[derive(Debug, Clone)]
pub struct Seize {
    pub key: Bytes,
}

impl Seize {
    /// `Found` (the record as it was), `NotFound`, `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let r = srv.db.process(&self.key, |cur| {
            let r = cur.ok_or_else(|| Error::NotFound("no such record".into()))?;
            Ok((Action::Remove, r.clone()))
        });
        outcome(r, |(r, _)| Outcome::Found(r))
    }
}

/// Replaces a record's value if it holds `expected` (`None` = must be absent);
/// `desired` `None` removes it.
#[derive(Debug, Clone)]
pub struct CompareExchange {
    pub key: Bytes,
    pub expected: Option<Bytes>,
    pub desired: Option<Bytes>,
    /// A new absolute expiry for the desired value; `None` keeps the present one.
    pub expires_at: Option<u64>,
}

impl CompareExchange {
    /// `Done`, `Exists` (the record does not hold `expected`), `TooLarge`,
    /// `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        if let Some(v) = &self.desired {
            if let Err(o) = super::check_size(v.len(), srv.cfg.max_item_size) {
                return o;
            }
        }
        let r = srv.db.compare_exchange_with(
            &self.key,
            self.expected.as_deref(),
            self.desired.as_deref(),
            self.expires_at,
        );
        outcome(r, |()| Outcome::Done)
    }
}

/// Tkrzw-RPC's `compare_exchange_multi`: when every `(key, value)` of
/// `expected` holds (`None` = absent), every pair of `desired` is stored
/// (`None` = removed), atomically across shards; otherwise nothing changes
/// (`Exists`).
#[derive(Debug, Clone)]
pub struct CompareExchangeMulti<'k> {
    pub expected: &'k [(&'k [u8], Option<&'k [u8]>)],
    pub desired: &'k [(&'k [u8], Option<&'k [u8]>)],
}

impl CompareExchangeMulti<'_> {
    /// `Done`, `Exists`, `TooLarge` (a desired value over `-I`: nothing
    /// changes), `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        for (_, v) in self.desired {
            if let Err(o) = super::check_size(v.map_or(0, <[u8]>::len), srv.cfg.max_item_size) {
                return o;
            }
        }
        let r = srv.db.compare_exchange_multi(self.expected, self.desired);
        outcome(r, |()| Outcome::Done)
    }
}
