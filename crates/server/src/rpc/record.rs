//! Single-record procedures: set add replace append get check remove seize
//! cas increment increment_double.

use super::{as_f64, bin, code, map, Args, RpcError, RpcResult, Value};
use bytes::Bytes;
use memstored_engine::{Action, Db, Error, Record, StoreMode, StoreOptions};
use memstored_protocol::rpc::value_str;

fn engine(e: Error) -> RpcError {
    RpcError::from_engine(e, code::LOGICAL)
}

fn store(db: &Db, params: &[Value], mode: StoreMode) -> RpcResult {
    let a = Args::new(params, 2);
    let key = a.bytes(0, "key")?;
    let value = a.bytes(1, "value")?;
    let opts = StoreOptions {
        expires_at: a.expiry()?.unwrap_or(0),
        ..StoreOptions::default()
    };
    db.store(key, Bytes::copy_from_slice(value), mode, opts)
        .map_err(engine)?;
    Ok(Value::Nil)
}

/// `set(key, value, [opts{xt}])` → nil.
pub fn set(db: &Db, params: &[Value]) -> RpcResult {
    store(db, params, StoreMode::Set)
}

/// `add(key, value, [opts{xt}])` → nil; 33 when the record exists.
pub fn add(db: &Db, params: &[Value]) -> RpcResult {
    store(db, params, StoreMode::Add)
}

/// `replace(key, value, [opts{xt}])` → nil; 35 when the record is absent.
pub fn replace(db: &Db, params: &[Value]) -> RpcResult {
    store(db, params, StoreMode::Replace)
}

/// `append(key, value, [opts{xt}])` → nil. Appends to the present value
/// (keeping its expiry unless `xt` is given) or stores `value` when absent.
pub fn append(db: &Db, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 2);
    let key = a.bytes(0, "key")?;
    let value = a.bytes(1, "value")?;
    let xt = a.expiry()?;
    db.process(key, |cur| {
        let (value, flags, expires_at) = match cur {
            Some(r) => {
                let mut v = Vec::with_capacity(r.value.len() + value.len());
                v.extend_from_slice(&r.value);
                v.extend_from_slice(value);
                (v, r.meta.flags, xt.unwrap_or(r.meta.expires_at))
            }
            None => (value.to_vec(), 0, xt.unwrap_or(0)),
        };
        Ok((
            Action::Put {
                value: Bytes::from(value),
                flags,
                expires_at,
            },
            (),
        ))
    })
    .map_err(engine)?;
    Ok(Value::Nil)
}

/// `{value, xt?}` (or `{vsiz, xt?}`) of a record; `xt` is its absolute expiry.
fn record_map(r: &Record, with_value: bool) -> Value {
    let mut e = vec![if with_value {
        ("value", bin(&r.value))
    } else {
        ("vsiz", Value::from(r.value.len() as u64))
    }];
    if r.meta.expires_at != 0 {
        e.push(("xt", Value::from(r.meta.expires_at)));
    }
    map(e)
}

fn no_record() -> RpcError {
    RpcError::new(code::NO_RECORD, "no such record")
}

/// `get(key)` → `{value, xt?}`; 35 when absent.
pub fn get(db: &Db, params: &[Value]) -> RpcResult {
    let key = Args::new(params, 1).bytes(0, "key")?;
    let r = db.get_record(key).map_err(engine)?.ok_or_else(no_record)?;
    Ok(record_map(&r, true))
}

/// `check(key)` → `{vsiz, xt?}`; 35 when absent.
pub fn check(db: &Db, params: &[Value]) -> RpcResult {
    let key = Args::new(params, 1).bytes(0, "key")?;
    let r = db.get_record(key).map_err(engine)?.ok_or_else(no_record)?;
    Ok(record_map(&r, false))
}

/// `remove(key)` → nil; 35 when absent.
pub fn remove(db: &Db, params: &[Value]) -> RpcResult {
    let key = Args::new(params, 1).bytes(0, "key")?;
    db.remove(key).map_err(engine)?;
    Ok(Value::Nil)
}

/// `seize(key)` → `{value, xt?}`, removing the record atomically; 35 when absent.
pub fn seize(db: &Db, params: &[Value]) -> RpcResult {
    let key = Args::new(params, 1).bytes(0, "key")?;
    let (r, _) = db
        .process(key, |cur| {
            let r = cur
                .cloned()
                .ok_or_else(|| Error::NotFound("no such record".into()))?;
            Ok((Action::Remove, r))
        })
        .map_err(engine)?;
    Ok(record_map(&r, true))
}

/// An optional value given positionally or as an option; nil = absent.
fn optional_bytes<'a>(a: &Args<'a>, i: usize, name: &str) -> Result<Option<&'a [u8]>, RpcError> {
    match a.pos_or_opt(i, name) {
        None | Some(Value::Nil) => Ok(None),
        Some(v) => memstored_protocol::rpc::value_bytes(v)
            .map(Some)
            .ok_or_else(|| RpcError::invalid(format!("{name} must be bin or str"))),
    }
}

/// `cas(key, [opts{oval, nval, xt}])` → nil (`oval`/`nval` may also be
/// positional). `oval` absent = expect no record; `nval` absent = remove.
/// 37 when the record does not match.
pub fn cas(db: &Db, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    let key = a.bytes(0, "key")?;
    let oval = optional_bytes(&a, 1, "oval")?;
    let nval = optional_bytes(&a, 2, "nval")?;
    let xt = a.expiry()?;
    db.process(key, |cur| {
        if cur.map(|r| &r.value[..]) != oval {
            return Err(Error::Infeasible(
                "the value is not the expected one".into(),
            ));
        }
        let action = match (nval, cur) {
            (Some(v), _) => Action::Put {
                value: Bytes::copy_from_slice(v),
                flags: cur.map_or(0, |r| r.meta.flags),
                expires_at: xt.unwrap_or(0),
            },
            (None, Some(_)) => Action::Remove,
            (None, None) => Action::Keep,
        };
        Ok((action, ()))
    })
    .map_err(|e| RpcError::from_engine(e, code::CAS_FAILED))?;
    Ok(Value::Nil)
}

/// What `orig` says to do with an absent or present record.
enum Orig<T> {
    /// Absent counts as this number.
    Initial(T),
    /// Absent is an error (35).
    Try,
    /// Ignore the present value: store `num` itself.
    Set,
}

fn orig<T>(a: &Args, parse: impl Fn(&Value) -> Option<T>, zero: T) -> Result<Orig<T>, RpcError> {
    let Some(v) = a.opt("orig") else {
        return Ok(Orig::Initial(zero));
    };
    match value_str(v) {
        Some("try") => Ok(Orig::Try),
        Some("set") => Ok(Orig::Set),
        _ => parse(v)
            .map(Orig::Initial)
            .ok_or_else(|| RpcError::invalid("orig must be a number, \"try\" or \"set\"")),
    }
}

fn text(value: &[u8]) -> Option<&str> {
    Some(
        std::str::from_utf8(value)
            .ok()?
            .trim_matches(|c: char| c.is_ascii_whitespace() || c == '\0'),
    )
}

/// Shared body of the two increments: `num` added to the decimal value.
fn increment_with<T: Copy + ToString>(
    db: &Db,
    params: &[Value],
    parse_param: impl Fn(&Value) -> Option<T>,
    parse_stored: impl Fn(&str) -> Option<T>,
    add: impl Fn(T, T) -> Option<T>,
    zero: T,
) -> Result<T, RpcError> {
    let a = Args::new(params, 2);
    let key = a.bytes(0, "key")?;
    let num =
        parse_param(a.at(1, "num")?).ok_or_else(|| RpcError::invalid("num must be a number"))?;
    let orig = orig(&a, &parse_param, zero)?;
    let xt = a.expiry()?;
    let (n, _) = db
        .process(key, |cur| {
            let n = match (cur, &orig) {
                (_, Orig::Set) => num,
                (None, Orig::Try) => return Err(Error::NotFound("no such record".into())),
                (None, Orig::Initial(i)) => add(*i, num)
                    .ok_or_else(|| Error::Precondition("the increment overflows".into()))?,
                (Some(r), _) => {
                    let base = text(&r.value).and_then(&parse_stored).ok_or_else(|| {
                        Error::Infeasible("the value is not a decimal number".into())
                    })?;
                    add(base, num)
                        .ok_or_else(|| Error::Precondition("the increment overflows".into()))?
                }
            };
            Ok((
                Action::Put {
                    value: Bytes::from(n.to_string()),
                    flags: cur.map_or(0, |r| r.meta.flags),
                    expires_at: xt.unwrap_or_else(|| cur.map_or(0, |r| r.meta.expires_at)),
                },
                n,
            ))
        })
        .map_err(|e| RpcError::from_engine(e, code::NOT_COMPATIBLE))?;
    Ok(n)
}

/// `increment(key, num, [opts{orig, xt}])` → `{num}`. The value is decimal
/// ASCII (shared with memcached's incr). `orig`: a number = the start when
/// absent (default 0), `"try"` = 35 when absent, `"set"` = store `num`.
/// 38 when the stored value is not an integer; 41 on overflow.
pub fn increment(db: &Db, params: &[Value]) -> RpcResult {
    let n = increment_with(
        db,
        params,
        super::as_i64,
        |s| s.parse::<i64>().ok(),
        i64::checked_add,
        0,
    )?;
    Ok(map(vec![("num", Value::from(n))]))
}

/// `increment_double(key, num, [opts{orig, xt}])` → `{num}` (a float).
pub fn increment_double(db: &Db, params: &[Value]) -> RpcResult {
    let n = increment_with(
        db,
        params,
        as_f64,
        |s| s.parse::<f64>().ok(),
        |a, b| Some(a + b),
        0.0,
    )?;
    Ok(map(vec![("num", Value::F64(n))]))
}
