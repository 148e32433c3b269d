//! Tkrzw's own record calls as its `DBM` class does them (tkrzw_dbm.h),
//! for Tkrzw-RPC's gRPC service: `Increment` on 8-byte big-endian values,
//! `CompareExchange` with "any value" and "no update", `Rekey` and
//! `CompareExchangeMulti` with "any value". The other ports keep their own
//! forms (Kyoto Tycoon's decimal `increment`, `cas`).

use super::{check_size, outcome, CompareExchangeMulti, Meta, Number, Outcome};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::Action;

/// Times an optimistic multi-record call reads and retries when other
/// writers change its records between its read and its locked write.
const RETRIES: usize = 1000;

/// Tkrzw's `StrToIntBigEndian` as a signed number: the first 8 bytes (or
/// fewer, all of them) as a big-endian unsigned number; empty: 0.
pub fn int_of_big_endian(v: &[u8]) -> i64 {
    let n = v.len().min(8);
    v[..n]
        .iter()
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)) as i64
}

/// Tkrzw's `Increment`: the value is an 8-byte big-endian integer (a value
/// of another size is read as `int_of_big_endian` reads it, and becomes 8
/// bytes); an absent record counts as `initial`; the sum wraps.
/// `delta == i64::MIN` reads the current value (or `initial`) and changes
/// nothing, creating no record.
#[derive(Debug, Clone)]
pub struct IncrementBigEndian {
    pub key: Bytes,
    pub delta: i64,
    pub initial: i64,
}

impl IncrementBigEndian {
    /// `Counted` (a signed number), `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        if self.delta == i64::MIN {
            return outcome(srv.db.get_record(&self.key), |rec| {
                let (value, meta) = match rec {
                    Some(r) => (int_of_big_endian(&r.value), r.meta),
                    None => (self.initial, Meta::default()),
                };
                Outcome::Counted {
                    value: Number::Signed(value),
                    meta,
                }
            });
        }
        let r = srv.db.process(&self.key, |cur| {
            let base = cur.map_or(self.initial, |r| int_of_big_endian(&r.value));
            let n = base.wrapping_add(self.delta);
            let meta = cur.map(|r| r.meta).unwrap_or_default();
            let action = Action::Put {
                value: Bytes::copy_from_slice(&n.to_be_bytes()),
                flags: meta.flags,
                expires_at: meta.expires_at,
            };
            Ok((action, (n, meta)))
        });
        // Counted with every port's arithmetic (memcached's incr/decr counters).
        let r = r.map(|((n, meta), cas)| {
            let meta = Meta {
                cas: cas.unwrap_or(meta.cas),
                ..meta
            };
            (Number::Signed(n), meta)
        });
        super::arith::counted(srv, self.delta < 0, r)
    }
}

/// What a Tkrzw compare-exchange expects of a record.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// No record.
    Absent,
    /// A record with any value (Tkrzw's `ANY_DATA`).
    Any,
    /// A record with this value.
    Value(Bytes),
}

impl Expect {
    fn holds(&self, cur: Option<&[u8]>) -> bool {
        match (self, cur) {
            (Expect::Absent, None) | (Expect::Any, Some(_)) => true,
            (Expect::Value(v), Some(c)) => v[..] == *c,
            _ => false,
        }
    }
}

/// What a Tkrzw compare-exchange makes of a record whose expectation holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Desire {
    /// Removes it.
    Remove,
    /// Changes nothing (Tkrzw's `ANY_DATA` as the desired value): a read.
    Keep,
    /// Stores this value.
    Value(Bytes),
}

/// Tkrzw's `CompareExchange`: when the record meets `expected`, it becomes
/// what `desired` says; otherwise nothing changes.
#[derive(Debug, Clone)]
pub struct TkrzwCompareExchange {
    pub key: Bytes,
    pub expected: Expect,
    pub desired: Desire,
}

/// What a [`TkrzwCompareExchange`] did, and the value it found.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchanged {
    /// `Done`, `Exists` (the expectation failed), `TooLarge`, `ReadOnly` or `Failed`.
    pub outcome: Outcome,
    /// The record's value before the call; `None`: there was none (or the
    /// call failed before reading it).
    pub actual: Option<Bytes>,
}

impl TkrzwCompareExchange {
    pub fn apply(&self, srv: &Server) -> Exchanged {
        let failed = |outcome| Exchanged {
            outcome,
            actual: None,
        };
        let verdict = |ok: bool| if ok { Outcome::Done } else { Outcome::Exists };
        if let Desire::Value(v) = &self.desired {
            if let Err(o) = check_size(v.len(), srv.cfg.max_item_size) {
                return failed(o);
            }
        }
        if self.desired == Desire::Keep {
            return match srv.db.get_record(&self.key) {
                Ok(rec) => {
                    let actual = rec.map(|r| r.value);
                    Exchanged {
                        outcome: verdict(self.expected.holds(actual.as_deref())),
                        actual,
                    }
                }
                Err(e) => failed(Outcome::from_error(e)),
            };
        }
        let r = srv.db.process(&self.key, |cur| {
            let actual = cur.map(|r| r.value.clone());
            if !self.expected.holds(actual.as_deref()) {
                return Ok((Action::Keep, (false, actual)));
            }
            let action = match (&self.desired, cur) {
                (Desire::Value(v), _) => Action::Put {
                    value: v.clone(),
                    flags: cur.map_or(0, |r| r.meta.flags),
                    expires_at: cur.map_or(0, |r| r.meta.expires_at),
                },
                (_, Some(_)) => Action::Remove,
                (_, None) => Action::Keep,
            };
            Ok((action, (true, actual)))
        });
        match r {
            Ok(((ok, actual), _)) => Exchanged {
                outcome: verdict(ok),
                actual,
            },
            Err(e) => failed(Outcome::from_error(e)),
        }
    }
}

/// Tkrzw's `CompareExchangeMulti` with "any value" expectations: atomic
/// across shards. An `Any` is read first and expected as the value read;
/// when another writer changes it before the locked check, the call reads
/// again (up to [`RETRIES`] times).
#[derive(Debug, Clone)]
pub struct TkrzwCompareExchangeMulti<'k> {
    pub expected: &'k [(&'k [u8], Expect)],
    pub desired: &'k [(&'k [u8], Option<&'k [u8]>)],
}

type Reading<'k> = Vec<(&'k [u8], Option<Bytes>)>;

impl<'k> TkrzwCompareExchangeMulti<'k> {
    /// `Done`, `Exists`, `TooLarge`, `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let mut read = match self.read(srv) {
            Ok(r) => r,
            Err(o) => return o,
        };
        for _ in 0..RETRIES {
            let expected: Vec<(&[u8], Option<&[u8]>)> =
                read.iter().map(|(k, v)| (*k, v.as_deref())).collect();
            let cmd = CompareExchangeMulti {
                expected: &expected,
                desired: self.desired,
            };
            match cmd.apply(srv) {
                Outcome::Exists => {}
                o => return o,
            }
            // A failure for another reason than an "any value" record
            // changed since it was read is final.
            match self.read(srv) {
                Ok(again) if again != read => read = again,
                Ok(_) => return Outcome::Exists,
                Err(o) => return o,
            }
        }
        Outcome::Exists
    }

    /// The expectations with each `Any` read as the value there now;
    /// `Err(Exists)` when an `Any` record is absent.
    fn read(&self, srv: &Server) -> Result<Reading<'k>, Outcome> {
        let mut read = Vec::with_capacity(self.expected.len());
        for (key, e) in self.expected {
            let want = match e {
                Expect::Absent => None,
                Expect::Value(v) => Some(v.clone()),
                Expect::Any => match srv.db.get_record(key) {
                    Ok(Some(r)) => Some(r.value),
                    Ok(None) => return Err(Outcome::Exists),
                    Err(e) => return Err(Outcome::from_error(e)),
                },
            };
            read.push((*key, want));
        }
        Ok(read)
    }
}

/// Tkrzw's `Rekey`: the record of `old_key` moves (or, `copying`, is
/// copied) to `new_key`, atomically across shards; over a record of
/// `new_key` only with `overwrite`. The moved record keeps its value, not
/// its expiry.
#[derive(Debug, Clone)]
pub struct Rekey {
    pub old_key: Bytes,
    pub new_key: Bytes,
    pub overwrite: bool,
    pub copying: bool,
}

impl Rekey {
    /// `Done`, `NotFound` (no record of `old_key`), `NotStored(Present)`
    /// (a record of `new_key` without `overwrite`), `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let r = srv
            .db
            .rekey(&self.old_key, &self.new_key, self.overwrite, self.copying);
        outcome(r, |()| Outcome::Done)
    }
}
