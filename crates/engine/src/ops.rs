//! Single-key operations of the library API, each one `Db::process` with a
//! small decision function, so expiry and CAS rules are never repeated.

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

/// Options of `Db::store`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreOptions {
    pub flags: u32,
    /// Absolute Unix seconds, 0 = never.
    pub expires_at: u64,
    /// When set, the record must exist with exactly this CAS (`Infeasible` on mismatch).
    pub cas: Option<u64>,
}

fn not_found() -> Error {
    Error::NotFound("no such record".into())
}

fn check_cas(current: Option<&Record>, cas: Option<u64>) -> Result<()> {
    check_cas_meta(current.map(|r| &r.meta), cas)
}

fn check_cas_meta(current: Option<&Meta>, cas: Option<u64>) -> Result<()> {
    match (cas, current) {
        (None, _) => Ok(()),
        (Some(_), None) => Err(not_found()),
        (Some(c), Some(m)) if m.cas == c => Ok(()),
        (Some(_), Some(_)) => Err(Error::Infeasible(crate::status::CAS_MISMATCH.into())),
    }
}

fn concat(a: &[u8], sep: &[u8], b: &[u8]) -> Bytes {
    let mut v = Vec::with_capacity(a.len() + sep.len() + b.len());
    v.extend_from_slice(a);
    v.extend_from_slice(sep);
    v.extend_from_slice(b);
    Bytes::from(v)
}

/// Parses a decimal ASCII counter value as memcached does (digits only, fits u64).
fn parse_counter(value: &[u8]) -> Option<u64> {
    // memcached's safe_strtoull over the stored bytes: leading white space
    // and a `+` are skipped, the digits must be followed by the end or white
    // space (memcached pads a shrunk counter with spaces), and whatever
    // follows that is ignored. NULs count as the end, for values written by
    // C clients with their terminator.
    let is_space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
    let start = value.iter().position(|b| !is_space(b))?;
    let rest = &value[start..];
    let rest = rest.strip_prefix(b"+").unwrap_or(rest);
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    match rest.get(digits) {
        None | Some(0) => {}
        Some(b) if is_space(b) => {}
        Some(_) => return None,
    }
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

fn parse_signed(value: &[u8]) -> Option<i64> {
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}

fn parse_float(value: &[u8]) -> Option<f64> {
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}

fn not_numeric() -> Error {
    Error::Infeasible("the value is not a decimal number".into())
}

impl Db {
    /// The value of `key`; `NotFound` when absent or expired.
    pub fn get(&self, key: &[u8]) -> Result<Bytes> {
        self.get_record(key)?.map(|r| r.value).ok_or_else(not_found)
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
        let (flags, expires_at) = (opts.flags, opts.expires_at);
        if mode == StoreMode::Set && opts.cas.is_none() {
            return self.put_unconditionally(key, &value, flags, expires_at);
        }
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
                        Action::Put {
                            value,
                            flags,
                            expires_at,
                        },
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
                    value: concat(&r.value, b"", &value),
                    flags: r.meta.flags,
                    expires_at: r.meta.expires_at,
                },
                (StoreMode::Prepend, Some(r)) => Action::Put {
                    value: concat(&value, b"", &r.value),
                    flags: r.meta.flags,
                    expires_at: r.meta.expires_at,
                },
            };
            Ok((action, ()))
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
        self.process(key, |cur| {
            let action = match cur {
                Some(r) => Action::Put {
                    value: concat(&r.value, delim, value),
                    flags: r.meta.flags,
                    expires_at: r.meta.expires_at,
                },
                None => Action::Put {
                    value: Bytes::copy_from_slice(value),
                    flags: 0,
                    expires_at: 0,
                },
            };
            Ok((action, ()))
        })
        .map(|_| ())
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
        rec.meta.expires_at = expires_at;
        Ok(rec)
    }

    /// Like `get_record`, but tells an expired record from an absent one
    /// (memcached's `get_expired` counter).
    pub fn lookup(&self, key: &[u8]) -> Result<Lookup> {
        let st = self.shard_of(key).state.read();
        Ok(match st.store.get(key)? {
            None => Lookup::Missing,
            Some(r) if r.meta.is_expired(crate::record::now_secs()) => Lookup::Expired,
            Some(r) => Lookup::Hit(r),
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

    /// Adds `delta` to the decimal integer value of `key`; an absent record
    /// counts as `initial`. Returns the new value (Tkrzw's Increment, stored as text).
    pub fn increment(&self, key: &[u8], delta: i64, initial: i64) -> Result<i64> {
        self.process(key, |cur| {
            let (base, flags, expires_at) = match cur {
                Some(r) => (
                    parse_signed(&r.value).ok_or_else(not_numeric)?,
                    r.meta.flags,
                    r.meta.expires_at,
                ),
                None => (initial, 0, 0),
            };
            let n = base
                .checked_add(delta)
                .ok_or_else(|| Error::Infeasible("increment overflows".into()))?;
            Ok((
                Action::Put {
                    value: Bytes::from(n.to_string()),
                    flags,
                    expires_at,
                },
                n,
            ))
        })
        .map(|(n, _)| n)
    }

    /// Like `increment` for floating-point values.
    pub fn increment_double(&self, key: &[u8], delta: f64, initial: f64) -> Result<f64> {
        self.process(key, |cur| {
            let (base, flags, expires_at) = match cur {
                Some(r) => (
                    parse_float(&r.value).ok_or_else(not_numeric)?,
                    r.meta.flags,
                    r.meta.expires_at,
                ),
                None => (initial, 0, 0),
            };
            let n = base + delta;
            Ok((
                Action::Put {
                    value: Bytes::from(n.to_string()),
                    flags,
                    expires_at,
                },
                n,
            ))
        })
        .map(|(n, _)| n)
    }

    /// Memcached's incr/decr on an unsigned decimal value: incr wraps at 2^64,
    /// decr stops at 0. An absent record is created from `create`
    /// (initial value, flags, expiry) when given, else `NotFound`.
    /// Returns the new value and CAS.
    pub fn incr_decr(
        &self,
        key: &[u8],
        delta: u64,
        decrement: bool,
        create: Option<(u64, u32, u64)>,
    ) -> Result<(u64, u64)> {
        self.incr_decr_cas(key, delta, decrement, create, None)
    }

    /// `incr_decr` that first checks the record's CAS when `cas` is given
    /// (`Infeasible` on mismatch, `NotFound` when absent), atomically.
    pub fn incr_decr_cas(
        &self,
        key: &[u8],
        delta: u64,
        decrement: bool,
        create: Option<(u64, u32, u64)>,
        cas: Option<u64>,
    ) -> Result<(u64, u64)> {
        self.process(key, |cur| {
            if cur.is_some() {
                check_cas(cur, cas)?;
            }
            let (n, flags, expires_at) = match (cur, create) {
                (Some(r), _) => {
                    let base = parse_counter(&r.value).ok_or_else(not_numeric)?;
                    let n = if decrement {
                        base.saturating_sub(delta)
                    } else {
                        base.wrapping_add(delta)
                    };
                    (n, r.meta.flags, r.meta.expires_at)
                }
                (None, Some((initial, flags, expires_at))) => (initial, flags, expires_at),
                (None, None) => return Err(not_found()),
            };
            Ok((
                Action::Put {
                    value: Bytes::from(n.to_string()),
                    flags,
                    expires_at,
                },
                n,
            ))
        })
        .map(|(n, cas)| (n, cas.unwrap_or(0)))
    }

    /// Replaces the record when its value equals `expected` (`None` = must be
    /// absent); `desired` `None` removes it. `Infeasible` on mismatch.
    pub fn compare_exchange(
        &self,
        key: &[u8],
        expected: Option<&[u8]>,
        desired: Option<&[u8]>,
    ) -> Result<()> {
        self.process(key, |cur| {
            if cur.map(|r| &r.value[..]) != expected {
                return Err(Error::Infeasible(
                    "the record does not hold the expected value".into(),
                ));
            }
            let action = match desired {
                Some(v) => Action::Put {
                    value: Bytes::copy_from_slice(v),
                    flags: cur.map_or(0, |r| r.meta.flags),
                    expires_at: cur.map_or(0, |r| r.meta.expires_at),
                },
                None if cur.is_some() => Action::Remove,
                None => Action::Keep,
            };
            Ok((action, ()))
        })
        .map(|_| ())
    }
}
