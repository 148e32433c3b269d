//! Calls over several keys. `compare_exchange_multi` and `read_multi` are
//! atomic across shards: they hold every involved shard's write lock while
//! they check, read and write.
//! `put_batch`, `lookup_batch` and `remove_batch` are not atomic: they
//! group a bulk request's records by shard and take each shard's lock once
//! for its group, so a request of 100 records costs one lock (and one
//! writability check) per shard instead of one per record.

use crate::db::Db;
use crate::ops::{Lookup, LookupRef};
use crate::record::now_secs;
use crate::shard::{Action, Shard};
use crate::status::{Error, Result};
use bytes::Bytes;

/// One record of [`Db::put_batch`]: stored as a plain set (no condition,
/// no CAS given) stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchPut<'a> {
    pub key: &'a [u8],
    /// Copied into the store, so it may borrow a request's buffer.
    pub value: &'a [u8],
    pub flags: u32,
    /// Absolute expiry (0 = never).
    pub expires_at: u64,
}

/// Why a batch stopped, where, and how many of its records were done before.
#[derive(Debug)]
pub struct BatchError {
    /// Records stored or removed before the failure.
    pub done: usize,
    /// The position of the record that failed.
    pub at: usize,
    pub error: Error,
}

/// Positions `0..n` grouped by the shard `shard_of` gives each, in request
/// order within a group, as `(shard, position)` pairs sorted by shard.
fn by_shard(n: usize, shards: usize, shard_of: impl Fn(usize) -> usize) -> Vec<(u32, u32)> {
    // Positions and shard numbers fit u32: a request holds far fewer records.
    if shards == 1 {
        return (0..n as u32).map(|i| (0, i)).collect();
    }
    let shard: Vec<u32> = (0..n).map(|i| shard_of(i) as u32).collect();
    if shards > 4 * n {
        // Many shards, few records: sorting the few beats counting the many.
        let mut order: Vec<(u32, u32)> = shard.iter().zip(0..).map(|(&s, i)| (s, i)).collect();
        order.sort_unstable();
        return order;
    }
    // A counting sort: two passes, where sorting cost ~160 instructions a
    // record at 100 records (callgrind); stable, so request order holds
    // within a shard.
    let mut start = vec![0u32; shards + 1];
    for &s in &shard {
        start[s as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut order = vec![(0u32, 0u32); n];
    for (i, &s) in shard.iter().enumerate() {
        let at = &mut start[s as usize];
        order[*at as usize] = (s, i as u32);
        *at += 1;
    }
    order
}

/// Calls `f` once per group of `order` (one shard's positions).
fn each_group<E>(
    order: &[(u32, u32)],
    mut f: impl FnMut(usize, &mut dyn Iterator<Item = usize>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let mut rest = order;
    while let Some(&(shard, _)) = rest.first() {
        let len = rest.iter().take_while(|(s, _)| *s == shard).count();
        let (group, tail) = rest.split_at(len);
        f(shard as usize, &mut group.iter().map(|&(_, i)| i as usize))?;
        rest = tail;
    }
    Ok(())
}

impl Db {
    /// Checks every `(key, expected)` (`None` = must be absent) and, only if all
    /// hold, applies every `(key, desired)` (`None` = remove). `ValueMismatch` when
    /// any expectation fails; then nothing is changed.
    pub fn compare_exchange_multi(
        &self,
        expected: &[(&[u8], Option<&[u8]>)],
        desired: &[(&[u8], Option<&[u8]>)],
    ) -> Result<()> {
        self.compare_exchange_multi_expiring(expected, desired, 0)
    }

    /// [`Db::compare_exchange_multi`], the desired values stored with the
    /// absolute expiry `expires_at` (0 = never) in the same locked step:
    /// no reader, and no log replayed after a crash, sees one of them
    /// without it (Kyoto Tycoon's atomic `set_bulk` with `xt`).
    pub fn compare_exchange_multi_expiring(
        &self,
        expected: &[(&[u8], Option<&[u8]>)],
        desired: &[(&[u8], Option<&[u8]>)],
        expires_at: u64,
    ) -> Result<()> {
        self.check_client_write()?;
        let keys: Vec<&[u8]> = expected.iter().chain(desired).map(|(k, _)| *k).collect();
        let mut locked = self.lock_shards(&keys);
        let now = now_secs();
        for (key, want) in expected {
            let cur = locked.state(key)?.live(key, now)?;
            if cur.as_ref().map(|r| &r.value[..]) != *want {
                return Err(Error::ValueMismatch(
                    "a record does not hold the expected value".into(),
                ));
            }
        }
        for (key, value) in desired {
            let state = locked.state(key)?;
            let action = match value {
                Some(v) => Action::Put {
                    value: Bytes::copy_from_slice(v),
                    flags: 0,
                    expires_at,
                },
                None => Action::Remove,
            };
            state.apply(key, action)?;
            self.shards[self.shard_index(key)].mark_dirty();
        }
        Ok(())
    }

    /// Every key's value at one instant (`None`: absent or expired), read
    /// under every involved shard's write lock at once; with `remove`, the
    /// present ones removed in that same step (Kyoto Tycoon's atomic
    /// get_bulk and remove_bulk). One pass: reading first and checking by
    /// `compare_exchange_multi` after read every record twice.
    pub fn read_multi(&self, keys: &[&[u8]], remove: bool) -> Result<Vec<Option<Bytes>>> {
        if remove {
            self.check_client_write()?;
        }
        let mut locked = self.lock_shards(keys);
        let now = now_secs();
        let mut values = Vec::with_capacity(keys.len());
        for key in keys {
            let state = locked.state(key)?;
            let value = state.live(key, now)?.map(|r| r.value);
            if remove && value.is_some() {
                state.apply(key, Action::Remove)?;
                self.shards[self.shard_index(key)].mark_dirty();
            }
            values.push(value);
        }
        Ok(values)
    }

    /// The shard of position `i`'s key, for `by_shard`.
    fn batch_order<'k>(&self, n: usize, key: impl Fn(usize) -> &'k [u8]) -> Vec<(u32, u32)> {
        by_shard(n, self.shards.len(), |i| self.shard_index(key(i)))
    }

    fn shard_at(&self, i: usize) -> &Shard {
        &self.shards[i]
    }

    /// Stores every record as [`Db::set`] with overwrite would, each
    /// involved shard's write lock taken once for all its records (grouped
    /// by shard, in request order within a shard). Not atomic: other
    /// clients may see one shard's records before another's. The first
    /// failure stops the batch; records of the shards done before it stay
    /// stored (`BatchError::done` says how many).
    pub fn put_batch(&self, records: &[BatchPut<'_>]) -> std::result::Result<(), BatchError> {
        let fail = |done, at| move |error| BatchError { done, at, error };
        self.check_client_write().map_err(fail(0, 0))?;
        self.put_grouped(records, |done, at, error| Err(fail(done, at)(error)))
    }

    /// Stores every record as an independent set, each involved shard's
    /// write lock taken once: a record that fails (too large for the cache,
    /// no memory to evict into, a failing write) goes to `failed` with its
    /// position and error, and the others are still stored, as separate
    /// sets would be (memcached's quiet SETQ runs). `Err` only when no
    /// record may be stored (a read-only database).
    pub fn put_each(
        &self,
        records: &[BatchPut<'_>],
        mut failed: impl FnMut(usize, Error),
    ) -> Result<()> {
        self.check_client_write()?;
        self.put_grouped(records, |_, at, error| {
            failed(at, error);
            Ok(())
        })
    }

    /// Stores records grouped by shard, each shard's write lock taken once;
    /// `failed(done, at, error)` says whether a failure stops the batch
    /// (`Err`) or is passed over (`Ok`). `done`: records stored before it.
    fn put_grouped<E>(
        &self,
        records: &[BatchPut<'_>],
        mut failed: impl FnMut(usize, usize, Error) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let order = self.batch_order(records.len(), |i| records[i].key);
        let mut done = 0;
        each_group(&order, |shard, group| {
            let shard = self.shard_at(shard);
            let mut state = shard.state.write();
            shard.mark_dirty();
            for i in group {
                let r = &records[i];
                match state.put_slice(r.key, r.value, r.flags, r.expires_at) {
                    Ok(_) => done += 1,
                    Err(e) => failed(done, i, e)?,
                }
            }
            Ok(())
        })
    }

    /// Removes every key present (absent and expired ones are skipped, as
    /// [`Db::remove`] skips them with `NotFound`), each involved
    /// shard's write lock taken once; how many were removed. Stops at the
    /// first failure, as [`Db::put_batch`] does.
    pub fn remove_batch(&self, keys: &[&[u8]]) -> std::result::Result<usize, BatchError> {
        let fail = |done, at| move |error| BatchError { done, at, error };
        self.check_client_write().map_err(fail(0, 0))?;
        let order = self.batch_order(keys.len(), |i| keys[i]);
        let mut done = 0;
        each_group(&order, |shard, group| {
            let shard = self.shard_at(shard);
            let mut state = shard.state.write();
            for i in group {
                let key = keys[i];
                // As `remove`: only a live record is removed.
                if state.live_meta_now(key).map_err(fail(done, i))?.is_none() {
                    continue;
                }
                shard.mark_dirty();
                state.apply(key, Action::Remove).map_err(fail(done, i))?;
                done += 1;
            }
            Ok(())
        })?;
        Ok(done)
    }

    /// Looks every key up as [`Db::lookup`] does (a client's fetch, counted
    /// in the item's access state), each involved shard's read lock taken
    /// once; `seen(i, lookup)` is called for every position, grouped by
    /// shard (in request order within a shard).
    pub fn lookup_batch(&self, keys: &[&[u8]], mut seen: impl FnMut(usize, Lookup)) -> Result<()> {
        let order = self.batch_order(keys.len(), |i| keys[i]);
        let now = now_secs();
        each_group(&order, |shard, group| {
            let state = self.shard_at(shard).state.read();
            for i in group {
                let found = match state.store.fetch(keys[i], true)? {
                    None => Lookup::Missing,
                    Some((r, _)) if r.meta.is_expired(now) => Lookup::Expired,
                    Some((r, _)) => Lookup::Hit(r),
                };
                seen(i, found);
            }
            Ok(())
        })
    }

    /// [`Db::lookup_batch`] with each value shorter than `lend_below`
    /// borrowed where the store keeps it (`LookupRef::Lent`), for a caller
    /// that copies short values into a reply anyway (Kyoto Tycoon's
    /// get_bulk): no `Bytes` made for them, so a file store neither
    /// allocates nor copies twice. Longer values come as records, to be
    /// sent without a copy. `seen` runs under the shard's read lock and
    /// should do no more than that copy.
    pub fn lookup_batch_with(
        &self,
        keys: &[&[u8]],
        lend_below: usize,
        mut seen: impl FnMut(usize, LookupRef<'_>),
    ) -> Result<()> {
        let order = self.batch_order(keys.len(), |i| keys[i]);
        let now = now_secs();
        each_group(&order, |shard, group| {
            let state = self.shard_at(shard).state.read();
            for i in group {
                let mut long = false;
                let found = state.store.fetch_with(keys[i], &mut |value, meta| {
                    if meta.is_expired(now) {
                        seen(i, LookupRef::Expired);
                    } else if value.len() < lend_below {
                        seen(i, LookupRef::Lent(value, meta));
                    } else {
                        long = true;
                    }
                })?;
                if !found {
                    seen(i, LookupRef::Missing);
                } else if long {
                    // Read again under the same lock (the fetch is counted).
                    match state.store.fetch(keys[i], false)? {
                        Some((r, _)) => seen(i, LookupRef::Hit(r)),
                        None => seen(i, LookupRef::Missing),
                    }
                }
            }
            Ok(())
        })
    }

    /// The values of the keys that exist, in the order asked.
    pub fn get_multi(&self, keys: &[&[u8]]) -> Result<Vec<(Vec<u8>, Bytes)>> {
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            if let Some(r) = self.get_record(key)? {
                out.push((key.to_vec(), r.value));
            }
        }
        Ok(out)
    }

    /// Stores every pair; with `overwrite` false, existing records are kept
    /// and `Duplication` is returned after the others are stored.
    pub fn set_multi(&self, records: &[(&[u8], &[u8])], overwrite: bool) -> Result<()> {
        let mut first_err = None;
        for (k, v) in records {
            if let Err(e) = self.set(k, v, overwrite) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Removes every key; `NotFound` when any was absent (the others are removed).
    pub fn remove_multi(&self, keys: &[&[u8]]) -> Result<()> {
        let mut first_err = None;
        for k in keys {
            if let Err(e) = self.remove(k) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The groups `each_group` calls back with, as (shard, positions).
    fn groups(order: &[(u32, u32)]) -> Vec<(usize, Vec<usize>)> {
        let mut out = Vec::new();
        each_group::<()>(order, |shard, group| {
            out.push((shard, group.collect()));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn each_shard_is_visited_once_with_its_positions_in_request_order() {
        let shard_of = [2, 0, 2, 1, 0, 2];
        let order = by_shard(shard_of.len(), 3, |i| shard_of[i]);
        assert_eq!(
            groups(&order),
            vec![(0, vec![1, 4]), (1, vec![3]), (2, vec![0, 2, 5])]
        );
        // More shards than records: sorted instead of counted, same groups.
        let order = by_shard(shard_of.len(), 100, |i| shard_of[i] * 40);
        assert_eq!(
            groups(&order),
            vec![(0, vec![1, 4]), (40, vec![3]), (80, vec![0, 2, 5])]
        );
    }

    #[test]
    fn read_multi_reads_live_records_and_removes_them_in_one_step() {
        let db = Db::open("*", true).unwrap();
        let put = |key: &'static [u8], value: &'static [u8], expires_at| BatchPut {
            key,
            value,
            flags: 0,
            expires_at,
        };
        db.put_batch(&[put(b"a", b"1", 0), put(b"b", b"2", 0), put(b"old", b"x", 1)])
            .unwrap();
        let v = |s: &'static [u8]| Some(Bytes::from_static(s));
        let read = db.read_multi(&[b"a", b"zz", b"old", b"b"], false).unwrap();
        assert_eq!(read, vec![v(b"1"), None, None, v(b"2")]);
        // Removing: a key named twice is removed once, the rest kept.
        let removed = db.read_multi(&[b"a", b"a", b"zz"], true).unwrap();
        assert_eq!(removed, vec![v(b"1"), None, None]);
        assert!(db.get_record(b"a").unwrap().is_none());
        assert_eq!(db.get(b"b").unwrap(), Bytes::from_static(b"2"));
    }

    #[test]
    fn one_shard_is_one_group_in_request_order() {
        let order = by_shard(4, 1, |_| unreachable!("one shard needs no hash"));
        assert_eq!(groups(&order), vec![(0, vec![0, 1, 2, 3])]);
        assert!(groups(&by_shard(0, 3, |_| 0)).is_empty());
    }
}
