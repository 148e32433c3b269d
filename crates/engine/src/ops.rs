//! Single-key operations of the library API, each one `Db::process` with a
//! small decision function, so expiry and CAS rules are never repeated.

use crate::access::Access;
use crate::db::Db;
use crate::record::{Meta, Record};
use crate::shard::Action;
use crate::status::{Error, Result};
use bytes::Bytes;

/// How a memcached-style store treats an existing or missing record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreMode {
    /// Store unconditionally.
    Set,
    /// Only when absent (`Duplication` otherwise).
    Add,
    /// Only when present (`NotFound` otherwise).
    Replace,
    /// Append to the present value, keeping its flags and expiry.
    Append,
    /// Prepend to the present value, keeping its flags and expiry.
    Prepend,
}

/// What `Db::lookup` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Hit(Record),
    /// There is a record, but it has expired (it is invisible to `get`).
    Expired,
    Missing,
}

/// What `Db::lookup_batch_with` found: `Lookup`, with a short value
/// borrowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupRef<'a> {
    /// A live record, its value borrowed where the store keeps it.
    Lent(&'a [u8], &'a Meta),
    /// A live record whose value is too long to lend: handed over as
    /// `Bytes` (shared, not copied, where the store can).
    Hit(Record),
    Expired,
    Missing,
}

/// Options of `Db::store`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreOptions {
    pub flags: u32,
    /// Absolute Unix seconds, 0 = never.
    pub expires_at: u64,
    /// When set, the record must exist with exactly this CAS (`CasMismatch` on mismatch).
    pub cas: Option<u64>,
}

pub(crate) fn not_found() -> Error {
    Error::NotFound("no such record".into())
}

pub(crate) fn check_cas(current: Option<&Record>, cas: Option<u64>) -> Result<()> {
    check_cas_meta(current.map(|r| &r.meta), cas)
}

fn check_cas_meta(current: Option<&Meta>, cas: Option<u64>) -> Result<()> {
    match (cas, current) {
        (None, _) => Ok(()),
        (Some(_), None) => Err(not_found()),
        (Some(c), Some(m)) if m.cas == c => Ok(()),
        (Some(_), Some(_)) => Err(Error::CasMismatch),
    }
}

/// `a`, `sep`, `b` joined; `TooLarge` when the result would exceed `max_len`.
fn concat_capped(a: &[u8], sep: &[u8], b: &[u8], max_len: u64) -> Result<Bytes> {
    let size = a.len() + sep.len() + b.len();
    if size as u64 > max_len {
        return Err(Error::TooLarge {
            size: size as u64,
            cap: max_len,
        });
    }
    let mut v = Vec::with_capacity(size);
    v.extend_from_slice(a);
    v.extend_from_slice(sep);
    v.extend_from_slice(b);
    Ok(Bytes::from(v))
}

/// A plain set of a value this large stores the `Bytes` it is given (a
/// memory store keeps them as they are) instead of copying it: one lookup
/// more, a copy of the value less. Smaller values take
/// `put_unconditionally` (no lookup; a file engine encodes the record
/// before taking the lock).
const KEEP_AS_GIVEN: usize = 64 << 10;

impl Db {
    /// The value of `key`; `NotFound` when absent or expired.
    pub fn get(&self, key: &[u8]) -> Result<Bytes> {
        self.get_record(key)?.map(|r| r.value).ok_or_else(not_found)
    }

    /// `get` for a caller that copies the value out: `f` sees it borrowed
    /// (under the shard's read lock, so `f` should be quick), and a file
    /// store makes no `Bytes` for it. Returns what `f` returns; `NotFound`
    /// when absent or expired. The C ABI and the bindings read through it.
    pub fn get_with<R>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        let state = self.shard_of(key).state.read();
        let (mut f, mut out) = (Some(f), None);
        state.store.get_with(key, &mut |value, meta| {
            if let Some(f) = f.take().filter(|_| !meta.is_expired_now()) {
                out = Some(f(value));
            }
        })?;
        out.ok_or_else(not_found)
    }

    /// Stores `value`. With `overwrite` false an existing record is kept and
    /// `Duplication` returned (Tkrzw's Set).
    pub fn set(&self, key: &[u8], value: &[u8], overwrite: bool) -> Result<()> {
        if overwrite {
            return self.put_unconditionally(key, value, 0, 0).map(|_| ());
        }
        self.store(
            key,
            Bytes::copy_from_slice(value),
            StoreMode::Add,
            StoreOptions::default(),
        )
        .map(|_| ())
    }

    /// Memcached-style store with flags, expiry and optional CAS; returns the new CAS.
    pub fn store(
        &self,
        key: &[u8],
        value: Bytes,
        mode: StoreMode,
        opts: StoreOptions,
    ) -> Result<u64> {
        self.store_capped(key, value, mode, opts, u64::MAX, None)
    }

    /// `store` that refuses (`TooLarge`) to build a value longer than
    /// `max_len` by appending or prepending, checked under the record's lock
    /// (a server's item limit must hold for values grown in place too), and
    /// gives the stored record the CAS `new_cas` when one is given instead of
    /// the next (memcached's meta `E`).
    pub fn store_capped(
        &self,
        key: &[u8],
        value: Bytes,
        mode: StoreMode,
        opts: StoreOptions,
        max_len: u64,
        new_cas: Option<u64>,
    ) -> Result<u64> {
        let (flags, expires_at) = (opts.flags, opts.expires_at);
        // A large value goes the way below, as the `Bytes` it came in,
        // which a memory store keeps: copying it would hold it twice.
        if mode == StoreMode::Set
            && opts.cas.is_none()
            && new_cas.is_none()
            && value.len() < KEEP_AS_GIVEN
        {
            return self.put_unconditionally(key, &value, flags, expires_at);
        }
        let with_cas = |action: Action| action.with_cas(new_cas);
        if matches!(mode, StoreMode::Set | StoreMode::Add | StoreMode::Replace) {
            // These look at the current record's existence and CAS only.
            let (_, cas) = self.process_meta(key, |cur| {
                check_cas_meta(cur, opts.cas)?;
                match (mode, cur) {
                    (StoreMode::Add, Some(_)) => {
                        Err(Error::Duplication("the record exists".into()))
                    }
                    (StoreMode::Replace, None) => Err(not_found()),
                    _ => Ok((
                        with_cas(Action::Put {
                            value,
                            flags,
                            expires_at,
                        }),
                        (),
                    )),
                }
            })?;
            return Ok(cas.unwrap_or(0));
        }
        let (_, cas) = self.process(key, |cur| {
            check_cas(cur, opts.cas)?;
            let action = match (mode, cur) {
                (StoreMode::Set, _) | (StoreMode::Add, None) => Action::Put {
                    value,
                    flags,
                    expires_at,
                },
                (StoreMode::Add, Some(_)) => {
                    return Err(Error::Duplication("the record exists".into()))
                }
                (_, None) => return Err(not_found()),
                (StoreMode::Replace, Some(_)) => Action::Put {
                    value,
                    flags,
                    expires_at,
                },
                (StoreMode::Append, Some(r)) => Action::Put {
                    value: concat_capped(&r.value, b"", &value, max_len)?,
                    flags: r.meta.flags,
                    expires_at: r.meta.expires_at,
                },
                (StoreMode::Prepend, Some(r)) => Action::Put {
                    value: concat_capped(&value, b"", &r.value, max_len)?,
                    flags: r.meta.flags,
                    expires_at: r.meta.expires_at,
                },
            };
            Ok((with_cas(action), ()))
        })?;
        Ok(cas.unwrap_or(0))
    }

    /// Stores only when absent.
    pub fn add(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.set(key, value, false)
    }

    /// Stores only when present.
    pub fn replace(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.store(
            key,
            Bytes::copy_from_slice(value),
            StoreMode::Replace,
            StoreOptions::default(),
        )
        .map(|_| ())
    }

    /// Appends `value` after `delim` to the present value, or stores `value` (Tkrzw's Append).
    pub fn append(&self, key: &[u8], value: &[u8], delim: &[u8]) -> Result<()> {
        self.append_with(key, value, delim, None, u64::MAX)
            .map(|_| ())
    }

    /// `append` that sets the expiry when `expires_at` is given (else keeps
    /// the present one; Kyoto Tycoon's `append` with `xt`) and refuses
    /// (`TooLarge`) a result longer than `max_len`. Returns the new CAS.
    pub fn append_with(
        &self,
        key: &[u8],
        value: &[u8],
        delim: &[u8],
        expires_at: Option<u64>,
        max_len: u64,
    ) -> Result<u64> {
        let (_, cas) = self.process(key, |cur| {
            let action = match cur {
                Some(r) => Action::Put {
                    value: concat_capped(&r.value, delim, value, max_len)?,
                    flags: r.meta.flags,
                    expires_at: expires_at.unwrap_or(r.meta.expires_at),
                },
                None => Action::Put {
                    value: concat_capped(&[], &[], value, max_len)?,
                    flags: 0,
                    expires_at: expires_at.unwrap_or(0),
                },
            };
            Ok((action, ()))
        })?;
        Ok(cas.unwrap_or(0))
    }

    /// Removes `key`; `NotFound` when absent.
    pub fn remove(&self, key: &[u8]) -> Result<()> {
        self.remove_with_cas(key, None)
    }

    /// Removes `key` if its CAS matches (when given).
    pub fn remove_with_cas(&self, key: &[u8], cas: Option<u64>) -> Result<()> {
        self.process_meta(key, |cur| {
            check_cas_meta(cur, cas)?;
            match cur {
                Some(_) => Ok((Action::Remove, ())),
                None => Err(not_found()),
            }
        })
        .map(|_| ())
    }

    /// Sets a new expiry and returns the record, keeping its CAS as
    /// memcached's touch and GAT do.
    pub fn touch(&self, key: &[u8], expires_at: u64) -> Result<Record> {
        let (mut rec, _) = self.process(key, |cur| {
            let r = cur.ok_or_else(not_found)?.clone();
            Ok((Action::Touch { expires_at }, r))
        })?;
        // What the shard stored: no expiry on a persistent (`ktopts=p`) database.
        rec.meta.expires_at = if self.name.persistent { 0 } else { expires_at };
        Ok(rec)
    }

    /// Like `get_record`, but tells an expired record from an absent one
    /// (memcached's `get_expired` counter).
    /// A client's fetch: counts for the item's access state (see
    /// [`Db::lookup_access`]).
    pub fn lookup(&self, key: &[u8]) -> Result<Lookup> {
        Ok(self.lookup_access(key, true)?.0)
    }

    /// Like `lookup`, also returning the item's access state before this
    /// fetch (memcached's fetched bit and last access, for meta `h`/`l`;
    /// `None` from stores that keep none: only the capped cache does). With
    /// `bump`, the fetch is recorded; without it (meta `u`), nothing changes.
    pub fn lookup_access(&self, key: &[u8], bump: bool) -> Result<(Lookup, Option<Access>)> {
        let st = self.shard_of(key).state.read();
        Ok(match st.store.fetch(key, bump)? {
            None => (Lookup::Missing, None),
            Some((r, _)) if r.meta.is_expired(crate::record::now_secs()) => (Lookup::Expired, None),
            Some((r, a)) => (Lookup::Hit(r), a),
        })
    }

    /// The access state of a live `key`, unchanged (meta `me`, metadump).
    pub fn access(&self, key: &[u8]) -> Result<Option<Access>> {
        let st = self.shard_of(key).state.read();
        Ok(match st.live_meta_now(key)? {
            Some(_) => st.store.access(key),
            None => None,
        })
    }

    /// Stores `value` and returns the previous value, if any.
    pub fn set_and_get(&self, key: &[u8], value: &[u8]) -> Result<Option<Bytes>> {
        let v = Bytes::copy_from_slice(value);
        self.process(key, |cur| {
            Ok((
                Action::Put {
                    value: v,
                    flags: 0,
                    expires_at: 0,
                },
                cur.map(|r| r.value.clone()),
            ))
        })
        .map(|(old, _)| old)
    }

    /// Removes `key` and returns its value; `NotFound` when absent.
    pub fn remove_and_get(&self, key: &[u8]) -> Result<Bytes> {
        self.process(key, |cur| {
            Ok((
                Action::Remove,
                cur.map(|r| r.value.clone()).ok_or_else(not_found)?,
            ))
        })
        .map(|(v, _)| v)
    }

    /// Replaces the record when its value equals `expected` (`None` = must be
    /// absent); `desired` `None` removes it. `ValueMismatch` on mismatch.
    pub fn compare_exchange(
        &self,
        key: &[u8],
        expected: Option<&[u8]>,
        desired: Option<&[u8]>,
    ) -> Result<()> {
        self.compare_exchange_with(key, expected, desired, None)
    }

    /// `compare_exchange` that gives the desired value the absolute expiry
    /// `expires_at` when given (Kyoto Tycoon's `cas` with `xt`), else keeps
    /// the present one.
    pub fn compare_exchange_with(
        &self,
        key: &[u8],
        expected: Option<&[u8]>,
        desired: Option<&[u8]>,
        expires_at: Option<u64>,
    ) -> Result<()> {
        self.process(key, |cur| {
            if cur.map(|r| &r.value[..]) != expected {
                return Err(Error::ValueMismatch(
                    "the record does not hold the expected value".into(),
                ));
            }
            let action = match desired {
                Some(v) => Action::Put {
                    value: Bytes::copy_from_slice(v),
                    flags: cur.map_or(0, |r| r.meta.flags),
                    expires_at: expires_at.unwrap_or_else(|| cur.map_or(0, |r| r.meta.expires_at)),
                },
                None if cur.is_some() => Action::Remove,
                None => Action::Keep,
            };
            Ok((action, ()))
        })
        .map(|_| ())
    }
}
