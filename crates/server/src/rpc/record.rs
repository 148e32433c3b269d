//! Single-record procedures: set add replace append get check remove seize
//! cas increment increment_double.

use super::{as_f64, map, Args, Reply, RpcError, RpcResult, Value};
use crate::command::{
    CompareExchange, Delete, Get, Increment, IncrementDouble, Number, Origin, Outcome, Seize,
    Store, StoreKind,
};
use crate::server::Server;
use bytes::Bytes;
use memstored_engine::Record;
use memstored_protocol::rpc::value_str;

fn store(srv: &Server, params: &[Value], kind: StoreKind) -> RpcResult {
    let a = Args::new(params, 2);
    let xt = a.expiry()?;
    let cmd = Store {
        key: Bytes::copy_from_slice(a.bytes(0, "key")?),
        value: Bytes::copy_from_slice(a.bytes(1, "value")?),
        kind: match kind {
            StoreKind::AppendOrSet { .. } => StoreKind::AppendOrSet { expires_at: xt },
            k => k,
        },
        flags: 0,
        expires_at: xt.unwrap_or(0),
        cas: None,
    };
    match cmd.apply(srv) {
        Outcome::Stored { .. } => Ok(Value::Nil),
        o => Err(RpcError::from_outcome(o)),
    }
}

/// `set(key, value, [opts{xt}])` → nil.
pub fn set(srv: &Server, params: &[Value]) -> RpcResult {
    store(srv, params, StoreKind::Set)
}

/// `add(key, value, [opts{xt}])` → nil; 33 when the record exists.
pub fn add(srv: &Server, params: &[Value]) -> RpcResult {
    store(srv, params, StoreKind::Add)
}

/// `replace(key, value, [opts{xt}])` → nil; 35 when the record is absent.
pub fn replace(srv: &Server, params: &[Value]) -> RpcResult {
    store(srv, params, StoreKind::Replace)
}

/// `append(key, value, [opts{xt}])` → nil. Appends to the present value
/// (keeping its expiry unless `xt` is given) or stores `value` when absent.
pub fn append(srv: &Server, params: &[Value]) -> RpcResult {
    store(srv, params, StoreKind::AppendOrSet { expires_at: None })
}

/// `{value, xt?}` (or `{vsiz, xt?}`) of a record; `xt` is its absolute
/// expiry. The value is referenced, not copied.
fn record_map(r: Record, with_value: bool) -> Reply {
    let mut e = vec![if with_value {
        ("value", Reply::Bin(r.value))
    } else {
        ("vsiz", Value::from(r.value.len() as u64).into())
    }];
    if r.meta.expires_at != 0 {
        e.push(("xt", Value::from(r.meta.expires_at).into()));
    }
    Reply::map(e)
}

/// The record a `Get` or `Seize` found, or the procedure's error.
fn found(o: Outcome) -> Result<Record, RpcError> {
    match o {
        Outcome::Found(r) => Ok(r),
        o => Err(RpcError::from_outcome(o)),
    }
}

fn key(params: &[Value]) -> Result<Bytes, RpcError> {
    Ok(Bytes::copy_from_slice(
        Args::new(params, 1).bytes(0, "key")?,
    ))
}

/// `get(key)` → `{value, xt?}`; 35 when absent.
pub fn get(srv: &Server, params: &[Value]) -> Result<Reply, RpcError> {
    let r = found(Get::new(key(params)?).apply(srv))?;
    Ok(record_map(r, true))
}

/// `check(key)` → `{vsiz, xt?}`; 35 when absent.
pub fn check(srv: &Server, params: &[Value]) -> Result<Reply, RpcError> {
    let r = found(Get::new(key(params)?).apply(srv))?;
    Ok(record_map(r, false))
}

/// `remove(key)` → nil; 35 when absent.
pub fn remove(srv: &Server, params: &[Value]) -> RpcResult {
    let cmd = Delete {
        key: key(params)?,
        cas: None,
    };
    match cmd.apply(srv) {
        Outcome::Deleted => Ok(Value::Nil),
        o => Err(RpcError::from_outcome(o)),
    }
}

/// `seize(key)` → `{value, xt?}`, removing the record atomically; 35 when absent.
pub fn seize(srv: &Server, params: &[Value]) -> Result<Reply, RpcError> {
    let r = found(Seize { key: key(params)? }.apply(srv))?;
    Ok(record_map(r, true))
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
pub fn cas(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    let cmd = CompareExchange {
        key: Bytes::copy_from_slice(a.bytes(0, "key")?),
        expected: optional_bytes(&a, 1, "oval")?.map(Bytes::copy_from_slice),
        desired: optional_bytes(&a, 2, "nval")?.map(Bytes::copy_from_slice),
        // A new value without `xt` never expires (Kyoto Tycoon's cas).
        expires_at: Some(a.expiry()?.unwrap_or(0)),
    };
    match cmd.apply(srv) {
        Outcome::Done => Ok(Value::Nil),
        o => Err(RpcError::from_outcome(o)),
    }
}

/// KT's `orig`: a number = the start when absent (default 0), `"try"` =
/// 35 when absent, `"set"` = store `num` itself.
fn origin<T>(
    a: &Args,
    parse: impl Fn(&Value) -> Option<T>,
    zero: T,
) -> Result<Origin<T>, RpcError> {
    let Some(v) = a.opt("orig") else {
        return Ok(Origin::Initial(zero));
    };
    match value_str(v) {
        Some("try") => Ok(Origin::Fail),
        Some("set") => Ok(Origin::Replace),
        _ => parse(v)
            .map(Origin::Initial)
            .ok_or_else(|| RpcError::invalid("orig must be a number, \"try\" or \"set\"")),
    }
}

/// The `{num}` of a counted outcome, or the procedure's error.
fn num(o: Outcome) -> RpcResult {
    match o {
        Outcome::Counted {
            value: Number::Signed(n),
            ..
        } => Ok(map(vec![("num", Value::from(n))])),
        Outcome::Counted {
            value: Number::Float(n),
            ..
        } => Ok(map(vec![("num", Value::F64(n))])),
        o => Err(RpcError::from_outcome(o)),
    }
}

/// `increment(key, num, [opts{orig, xt}])` → `{num}`. The value is decimal
/// ASCII (shared with memcached's incr). 38 when the stored value is not an
/// integer; 41 on overflow.
pub fn increment(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 2);
    let cmd = Increment {
        key: Bytes::copy_from_slice(a.bytes(0, "key")?),
        delta: super::as_i64(a.at(1, "num")?)
            .ok_or_else(|| RpcError::invalid("num must be a number"))?,
        origin: origin(&a, super::as_i64, 0)?,
        expires_at: a.expiry()?,
    };
    num(cmd.apply(srv))
}

/// `increment_double(key, num, [opts{orig, xt}])` → `{num}` (a float).
pub fn increment_double(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 2);
    let cmd = IncrementDouble {
        key: Bytes::copy_from_slice(a.bytes(0, "key")?),
        delta: as_f64(a.at(1, "num")?).ok_or_else(|| RpcError::invalid("num must be a number"))?,
        origin: origin(&a, as_f64, 0.0)?,
        expires_at: a.expiry()?,
    };
    num(cmd.apply(srv))
}
