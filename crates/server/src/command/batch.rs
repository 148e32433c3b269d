//! Bulk requests that are not atomic (Kyoto Tycoon's binary set_bulk,
//! remove_bulk and get_bulk; kt-msgpack's and KT HTTP's set_bulk,
//! remove_bulk and get_bulk without `atomic`): one engine batch call per
//! request, which takes each shard's lock once for all of that shard's
//! records, and counters moved once per request. Each record is counted as
//! `Store`, `Delete` and `Get` count one (`cmd_set`, `get_hits`, ...), and
//! a refused record does to the rest of the request what a failing `Store`
//! in a loop did: the records before it are stored, none after it.

use super::{check_size, Outcome};
use crate::state::counters::add;
use crate::state::server::Server;
use crate::state::watch::Found;
use memstored_engine::{BatchError, BatchPut, Error, Lookup, LookupRef, Record};

/// Stores records as plain sets (`StoreKind::Set` without a CAS).
#[derive(Debug, Clone, Copy)]
pub struct StoreMany<'k> {
    pub records: &'k [BatchPut<'k>],
}

impl StoreMany<'_> {
    /// How many records were stored: all of them, or, with the outcome
    /// that stopped it (`TooLarge`, `NoMemory`, `ReadOnly`, `Failed`), those
    /// before the refused one (a value over `-I` is refused before anything
    /// after it is stored; an engine failure stops at its shard).
    pub fn apply(&self, srv: &Server) -> Result<usize, (usize, Outcome)> {
        let c = srv.counters.here();
        let cap = srv.cfg.max_item_size;
        // A value over `-I` ends the request there: the records before it
        // are stored, it and those after it are not.
        let fits = self
            .records
            .iter()
            .position(|r| check_size(r.value.len(), cap).is_err())
            .unwrap_or(self.records.len());
        let (head, refused) = self.records.split_at(fits);
        let result = srv.db.put_batch(head);
        let stored = match &result {
            Ok(()) => head.len(),
            Err(e) => e.done,
        };
        add(&c.total_items, stored as u64);
        match result {
            Err(BatchError { done, at, error }) => {
                add(&c.cmd_set, done as u64 + 1);
                Err((done, failed_set(srv, head[at].key, error)))
            }
            Ok(()) => match refused.first() {
                None => {
                    add(&c.cmd_set, stored as u64);
                    Ok(stored)
                }
                Some(r) => {
                    let o = super::store::refuse_oversized(
                        srv,
                        r.key,
                        super::StoreKind::Set,
                        r.value.len() as u64,
                    );
                    add(&c.cmd_set, stored as u64);
                    Err((stored, o))
                }
            },
        }
    }
}

/// Stores records as independent plain sets (a binary SETQ run): unlike
/// [`StoreMany`], a refused record does not stop the others.
#[derive(Debug, Clone, Copy)]
pub struct StoreEach<'k> {
    pub records: &'k [BatchPut<'k>],
}

impl StoreEach<'_> {
    /// The position and outcome of each record not stored (`TooLarge`,
    /// `NoMemory`, `Failed`), in no particular order; `Err` when none may
    /// be stored (`ReadOnly`). Counted as that many `Store`s of kind `Set`.
    pub fn apply(&self, srv: &Server) -> Result<Vec<(usize, Outcome)>, Outcome> {
        let c = srv.counters.here();
        let cap = srv.cfg.max_item_size;
        let oversized = |r: &BatchPut<'_>| check_size(r.value.len(), cap).is_err();
        let mut refused = Vec::new();
        // The engine calls back under a shard's lock: what a failure does
        // to the store (`drop_stale`) waits until the batch is done.
        let mut failed = Vec::new();
        let result = if self.records.iter().any(oversized) {
            // Rare (a framer refuses a value over `-I` before it gets
            // here): the ones that fit are stored as a batch of their own.
            let mut fit = Vec::with_capacity(self.records.len());
            let mut at = Vec::with_capacity(self.records.len());
            for (i, r) in self.records.iter().enumerate() {
                if oversized(r) {
                    let size = r.value.len() as u64;
                    let o = super::store::refuse_oversized(srv, r.key, super::StoreKind::Set, size);
                    refused.push((i, o));
                } else {
                    fit.push(*r);
                    at.push(i);
                }
            }
            srv.db.put_each(&fit, |i, e| failed.push((at[i], e)))
        } else {
            srv.db.put_each(self.records, |i, e| failed.push((i, e)))
        };
        // `refuse_oversized` counted its own.
        let sets = self.records.len() - refused.len();
        add(&c.cmd_set, sets as u64);
        if let Err(e) = result {
            return Err(Outcome::from_error(e));
        }
        add(&c.total_items, (sets - failed.len()) as u64);
        for (i, e) in failed {
            refused.push((i, failed_set(srv, self.records[i].key, e)));
        }
        Ok(refused)
    }
}

/// A set the engine refused, counted as `Store` counts it.
fn failed_set(srv: &Server, key: &[u8], e: Error) -> Outcome {
    let c = srv.counters.here();
    let counter = match e {
        Error::TooLarge { .. } => Some(&c.store_too_large),
        Error::NoMemory { .. } => Some(&c.store_no_memory),
        _ => None,
    };
    if let Some(counter) = counter {
        add(counter, 1);
        super::store::drop_stale(srv, key);
    }
    Outcome::from_error(e)
}

/// Removes keys; absent ones are skipped.
#[derive(Debug, Clone, Copy)]
pub struct DeleteMany<'k> {
    pub keys: &'k [&'k [u8]],
}

impl DeleteMany<'_> {
    /// How many records were removed, or, with the outcome that stopped it
    /// (`ReadOnly`, `Failed`), how many were before it.
    pub fn apply(&self, srv: &Server) -> Result<usize, (usize, Outcome)> {
        let c = srv.counters.here();
        let result = srv.db.remove_batch(self.keys);
        let (removed, tried, err) = match result {
            Ok(n) => (n, self.keys.len(), None),
            Err(BatchError { done, error, .. }) => (done, done, Some(error)),
        };
        add(&c.delete_hits, removed as u64);
        add(&c.delete_misses, (tried - removed.min(tried)) as u64);
        match err {
            None => Ok(removed),
            Some(e) => Err((removed, Outcome::from_error(e))),
        }
    }
}

/// Reads keys, each as `Get` without touch reads one.
#[derive(Debug, Clone, Copy)]
pub struct GetMany<'k> {
    pub keys: &'k [&'k [u8]],
}

impl GetMany<'_> {
    /// Each key's live record (`None`: absent or expired), in request order;
    /// or `Failed`.
    pub fn apply(&self, srv: &Server) -> Result<Vec<Option<Record>>, Outcome> {
        self.apply_below(srv, usize::MAX).map(|(found, _)| found)
    }

    /// [`GetMany::apply`] for the keys before the first one (in request
    /// order) whose value is `max_value` bytes or more: their records, and
    /// where that key is (`None`: every key was read). That key and the
    /// ones after it are neither answered nor counted; each large value is
    /// dropped as soon as the engine hands it over, so a batch holds small
    /// values only (a client's run of gets of large values is served one at
    /// a time, each written out before the next is read).
    pub fn apply_below(
        &self,
        srv: &Server,
        max_value: usize,
    ) -> Result<(Vec<Option<Record>>, Option<usize>), Outcome> {
        let mut found: Vec<Option<Record>> = vec![None; self.keys.len()];
        // Positions of expired records (rare: no allocation without one).
        let mut expired = Vec::new();
        let mut first_large = None::<usize>;
        let r = srv.db.lookup_batch(self.keys, |i, l| match l {
            Lookup::Hit(r) if r.value.len() >= max_value => {
                first_large = Some(first_large.map_or(i, |f| f.min(i)));
            }
            Lookup::Hit(r) => found[i] = Some(r),
            Lookup::Expired => expired.push(i),
            Lookup::Missing => {}
        });
        r.map_err(Outcome::from_error)?;
        let n = first_large.unwrap_or(self.keys.len());
        found.truncate(n);
        if srv.watch.wants(crate::state::watch::kind::FETCHERS) {
            for (i, key) in self.keys.iter().take(n).enumerate() {
                let (seen, size) = match &found[i] {
                    Some(r) => (Found::Found, r.value.len()),
                    None if expired.contains(&i) => (Found::Expired, 0),
                    None => (Found::NotFound, 0),
                };
                srv.watch.item_get(key, seen, size);
            }
        }
        let hits = found.iter().filter(|r| r.is_some()).count() as u64;
        let expired = expired.iter().filter(|&&i| i < n).count() as u64;
        count_gets(srv, n as u64, hits, expired);
        Ok((found, first_large))
    }

    /// [`GetMany::apply`] for a reply that copies short values: `hit(i,
    /// found)` for each live record, `LookupRef::Lent` (borrowed where the
    /// engine keeps it: no `Record`, no allocation) when its value is
    /// shorter than `lend_below`, else `LookupRef::Hit`. Called under the
    /// shard's read lock, grouped by shard and in request order within one,
    /// so `hit` should only copy.
    pub fn apply_with(
        &self,
        srv: &Server,
        lend_below: usize,
        mut hit: impl FnMut(usize, LookupRef<'_>),
    ) -> Result<(), Outcome> {
        let (mut hits, mut expired) = (0u64, 0u64);
        // What each key found, for fetchers' watchers (only while one watches).
        let mut seen: Option<Vec<(Found, usize)>> = srv
            .watch
            .wants(crate::state::watch::kind::FETCHERS)
            .then(|| vec![(Found::NotFound, 0); self.keys.len()]);
        let r = srv.db.lookup_batch_with(self.keys, lend_below, |i, l| {
            if let Some(s) = seen.as_mut().and_then(|s| s.get_mut(i)) {
                *s = match &l {
                    LookupRef::Lent(v, _) => (Found::Found, v.len()),
                    LookupRef::Hit(r) => (Found::Found, r.value.len()),
                    LookupRef::Expired => (Found::Expired, 0),
                    LookupRef::Missing => (Found::NotFound, 0),
                };
            }
            match l {
                LookupRef::Expired => expired += 1,
                LookupRef::Missing => {}
                found => {
                    hits += 1;
                    hit(i, found);
                }
            }
        });
        r.map_err(Outcome::from_error)?;
        for (key, (found, size)) in self.keys.iter().zip(seen.unwrap_or_default()) {
            srv.watch.item_get(key, found, size);
        }
        count_gets(srv, self.keys.len() as u64, hits, expired);
        Ok(())
    }
}

/// Counts `n` gets of one batch as memcached counts each: hits, misses, and
/// of the misses those that found the record expired.
fn count_gets(srv: &Server, n: u64, hits: u64, expired: u64) {
    let c = srv.counters.here();
    add(&c.cmd_get, n);
    add(&c.get_hits, hits);
    add(&c.get_misses, n - hits);
    add(&c.get_expired, expired);
}
