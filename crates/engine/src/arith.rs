//! Arithmetic on decimal text values: Tkrzw's / Kyoto Tycoon's signed and
//! floating-point increments and memcached's unsigned incr/decr. Each is one
//! `Db::process`, so read, add and write are atomic.

use crate::db::Db;
use crate::ops::{check_cas, not_found};
use crate::record::Meta;
use crate::shard::Action;
use crate::status::{Error, Result};
use bytes::Bytes;

/// What an absent or present record counts as for `Db::increment_from`
/// (Kyoto Tycoon's `orig` parameter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Origin<T> {
    /// An absent record counts as this number (KT's default, 0).
    Initial(T),
    /// An absent record is `NotFound` (KT's `orig=try`).
    Fail,
    /// The delta is stored as it is, whatever the record holds (`orig=set`).
    Replace,
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

/// The action storing a computed number as text, and what the caller needs
/// to report it.
fn put_number<T: ToString>(n: T, flags: u32, expires_at: u64) -> (Action, (T, u32, u64)) {
    let action = Action::Put {
        value: Bytes::from(n.to_string()),
        flags,
        expires_at,
    };
    (action, (n, flags, expires_at))
}

/// A number with the metadata of the record that now holds it.
fn with_meta<T>((n, flags, expires_at): (T, u32, u64), cas: Option<u64>) -> (T, Meta) {
    let cas = cas.unwrap_or(0);
    (
        n,
        Meta {
            flags,
            expires_at,
            cas,
        },
    )
}

/// The text of a number: white space and C strings' NUL terminators around it are ignored.
fn number_text(value: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(value).ok()?;
    Some(s.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\0'))
}

fn parse_signed(value: &[u8]) -> Option<i64> {
    number_text(value)?.parse().ok()
}

fn parse_float(value: &[u8]) -> Option<f64> {
    number_text(value)?.parse().ok()
}

fn not_numeric() -> Error {
    Error::NotNumeric
}

impl Db {
    /// Adds `delta` to the decimal integer value of `key`; an absent record
    /// counts as `initial`. Returns the new value (Tkrzw's Increment, stored as text).
    pub fn increment(&self, key: &[u8], delta: i64, initial: i64) -> Result<i64> {
        self.increment_from(key, delta, Origin::Initial(initial), None)
            .map(|(n, _)| n)
    }

    /// Like `increment` for floating-point values.
    pub fn increment_double(&self, key: &[u8], delta: f64, initial: f64) -> Result<f64> {
        self.increment_double_from(key, delta, Origin::Initial(initial), None)
            .map(|(n, _)| n)
    }

    /// `increment` with Kyoto Tycoon's `orig` (what an absent or present
    /// record counts as) and `xt` (a new expiry; `None` keeps the present
    /// one). Returns the new value and the record's metadata after it.
    /// `NotNumeric` when the value is not an integer, `Overflow` when the sum
    /// does not fit.
    pub fn increment_from(
        &self,
        key: &[u8],
        delta: i64,
        origin: Origin<i64>,
        expires_at: Option<u64>,
    ) -> Result<(i64, Meta)> {
        self.add_to(
            key,
            delta,
            origin,
            expires_at,
            parse_signed,
            i64::checked_add,
        )
    }

    /// `increment_from` for floating-point values (an infinite sum is `Overflow`).
    pub fn increment_double_from(
        &self,
        key: &[u8],
        delta: f64,
        origin: Origin<f64>,
        expires_at: Option<u64>,
    ) -> Result<(f64, Meta)> {
        let add = |a: f64, b: f64| Some(a + b).filter(|n| n.is_finite());
        self.add_to(key, delta, origin, expires_at, parse_float, add)
    }

    /// The body of both increments: one `process`, so read, add and write are atomic.
    fn add_to<T: Copy + ToString>(
        &self,
        key: &[u8],
        delta: T,
        origin: Origin<T>,
        expires_at: Option<u64>,
        parse: impl Fn(&[u8]) -> Option<T>,
        add: impl Fn(T, T) -> Option<T>,
    ) -> Result<(T, Meta)> {
        let (done, cas) = self.process(key, |cur| {
            let n = match (cur, origin) {
                (_, Origin::Replace) => delta,
                (None, Origin::Fail) => return Err(not_found()),
                (None, Origin::Initial(i)) => add(i, delta).ok_or(Error::Overflow)?,
                (Some(r), _) => {
                    let base = parse(&r.value).ok_or_else(not_numeric)?;
                    add(base, delta).ok_or(Error::Overflow)?
                }
            };
            let flags = cur.map_or(0, |r| r.meta.flags);
            let expires_at = expires_at.unwrap_or_else(|| cur.map_or(0, |r| r.meta.expires_at));
            Ok(put_number(n, flags, expires_at))
        })?;
        Ok(with_meta(done, cas))
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
    /// (`CasMismatch` on mismatch, `NotFound` when absent), atomically.
    pub fn incr_decr_cas(
        &self,
        key: &[u8],
        delta: u64,
        decrement: bool,
        create: Option<(u64, u32, u64)>,
        cas: Option<u64>,
    ) -> Result<(u64, u64)> {
        self.incr_decr_with(key, delta, decrement, create, cas, None)
            .map(|(n, meta)| (n, meta.cas))
    }

    /// `incr_decr_cas` that also sets a new expiry when `expires_at` is given
    /// (meta `ma ... T<ttl>`), in the same atomic step. Returns the new value
    /// and the record's metadata after the change.
    pub fn incr_decr_with(
        &self,
        key: &[u8],
        delta: u64,
        decrement: bool,
        create: Option<(u64, u32, u64)>,
        cas: Option<u64>,
        expires_at: Option<u64>,
    ) -> Result<(u64, Meta)> {
        self.incr_decr_as(key, delta, decrement, create, (cas, None), expires_at)
    }

    /// [`Db::incr_decr_with`] whose `(cas, new_cas)` also gives the result
    /// the CAS `new_cas` when one is given (memcached's meta `ma E`).
    pub fn incr_decr_as(
        &self,
        key: &[u8],
        delta: u64,
        decrement: bool,
        create: Option<(u64, u32, u64)>,
        (cas, new_cas): (Option<u64>, Option<u64>),
        expires_at: Option<u64>,
    ) -> Result<(u64, Meta)> {
        let (done, cas) = self.process(key, |cur| {
            if cur.is_some() {
                check_cas(cur, cas)?;
            }
            let (n, flags, old_expiry) = match (cur, create) {
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
            let (mut action, done) = put_number(n, flags, expires_at.unwrap_or(old_expiry));
            // memcached rewrites a counter in place when the result is no
            // longer than the old value: the item keeps its access state.
            if let (Some(r), Action::Put { value, .. }) = (cur, &action) {
                if value.len() <= r.value.len() {
                    action = Action::Update {
                        value: value.clone(),
                        flags,
                        expires_at: expires_at.unwrap_or(old_expiry),
                    };
                }
            }
            Ok((action.with_cas(new_cas), done))
        })?;
        Ok(with_meta(done, cas))
    }
}
