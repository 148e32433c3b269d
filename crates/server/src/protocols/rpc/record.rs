//! Single-record procedures: set add replace append get check remove seize
//! cas increment increment_double.

use super::kt::{expiry_to_xt, text};
use super::{as_f64, code, Args, Reply, RpcError, RpcResult, Value};
use crate::command::{
    CompareExchange, Delete, Get, Increment, IncrementDouble, Number, Origin, Outcome, Seize,
    Store, StoreKind,
};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::Record;
use memstored_protocol::rpc::value_str;

fn store(srv: &Server, params: &[Value], kind: StoreKind) -> RpcResult {
    let a = Args::new(params, 2);
    let (key, value) = (a.bytes(0, "key")?, a.bytes(1, "value")?);
    let xt = a.expiry()?;
    let cmd = Store {
        key: Bytes::copy_from_slice(key),
        value: Bytes::copy_from_slice(value),
        kind: match kind {
            // KT's append gives the record the call's xt (absent: none).
            StoreKind::AppendOrSet { .. } => StoreKind::AppendOrSet {
                expires_at: Some(xt.unwrap_or(0)),
            },
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

/// `set(key, value, [inmap{DB, xt}])` → nil.
pub fn set(srv: &Server, params: &[Value]) -> RpcResult {
    store(srv, params, StoreKind::Set)
}

/// `add(key, value, [inmap{DB, xt}])` → nil; 33 when the record exists.
pub fn add(srv: &Server, params: &[Value]) -> RpcResult {
    store(srv, params, StoreKind::Add)
}

/// `replace(key, value, [inmap{DB, xt}])` → nil; 35 when the record is absent.
pub fn replace(srv: &Server, params: &[Value]) -> RpcResult {
    store(srv, params, StoreKind::Replace)
}

/// `append(key, value, [inmap{DB, xt}])` → nil. Appends to the present value
/// or stores `value` when absent; the record gets `xt` (absent: no expiry), as in KT.
pub fn append(srv: &Server, params: &[Value]) -> RpcResult {
    store(srv, params, StoreKind::AppendOrSet { expires_at: None })
}

/// `{value, xt?}` (or `{vsiz, xt?}`) of a record, strings; `xt` is KT's
/// absolute expiration time. The value is referenced, not copied.
fn record_map(r: Record, with_value: bool) -> Reply {
    let mut e = vec![if with_value {
        ("value", Reply::Bin(r.value))
    } else {
        ("vsiz", text(r.value.len()))
    }];
    if let Some(xt) = expiry_to_xt(r.meta.expires_at) {
        e.push(("xt", text(xt)));
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

/// The key of a `(key, [inmap{DB}])` call, its database checked.
fn key(_srv: &Server, params: &[Value]) -> Result<Bytes, RpcError> {
    let a = Args::new(params, 1);
    let key = Bytes::copy_from_slice(a.bytes(0, "key")?);
    Ok(key)
}

/// `get(key, [inmap{DB}])` → `{value, xt?}`; 35 when absent.
pub fn get(srv: &Server, params: &[Value]) -> Result<Reply, RpcError> {
    let r = found(Get::new(key(srv, params)?).apply(srv))?;
    Ok(record_map(r, true))
}

/// `check(key, [inmap{DB}])` → `{vsiz, xt?}` (KT HTTP's); 35 when absent.
pub fn check(srv: &Server, params: &[Value]) -> Result<Reply, RpcError> {
    let r = found(Get::new(key(srv, params)?).apply(srv))?;
    Ok(record_map(r, false))
}

/// `remove(key, [inmap{DB}])` → nil; 35 when absent.
pub fn remove(srv: &Server, params: &[Value]) -> RpcResult {
    let cmd = Delete {
        key: key(srv, params)?,
        cas: None,
    };
    match cmd.apply(srv) {
        Outcome::Deleted => Ok(Value::Nil),
        o => Err(RpcError::from_outcome(o)),
    }
}

/// `seize(key, [inmap{DB}])` → `{value, xt?}`, removing the record
/// atomically; 35 when absent.
pub fn seize(srv: &Server, params: &[Value]) -> Result<Reply, RpcError> {
    let r = found(
        Seize {
            key: key(srv, params)?,
        }
        .apply(srv),
    )?;
    Ok(record_map(r, true))
}

/// An optional value given positionally or as an option; nil = absent.
fn optional_bytes<'a>(a: &Args<'a>, i: usize, name: &str) -> Result<Option<&'a [u8]>, RpcError> {
    match a.pos_or_opt(i, name) {
        None | Some(Value::Nil) => Ok(None),
        Some(v) => memstored_protocol::rpc::value_bytes(v)
            .map(Some)
            .ok_or_else(|| RpcError::argument(format!("{name} must be bin or str"))),
    }
}

/// `cas(key, [inmap{oval, nval, DB, xt}])` → nil (`oval`/`nval` may also
/// be positional, a memstored extension). `oval` absent = expect no record;
/// `nval` absent = remove. 37 when the record does not match.
pub fn cas(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    let key = a.bytes(0, "key")?;
    let cmd = CompareExchange {
        key: Bytes::copy_from_slice(key),
        expected: optional_bytes(&a, 1, "oval")?.map(Bytes::copy_from_slice),
        desired: optional_bytes(&a, 2, "nval")?.map(Bytes::copy_from_slice),
        // A new value without `xt` never expires (Kyoto Tycoon's cas).
        expires_at: a.expiry_or_never()?,
    };
    match cmd.apply(srv) {
        Outcome::Done => Ok(Value::Nil),
        o => Err(RpcError::from_outcome(o)),
    }
}

/// KT's `orig`: a number = the start when absent (default 0), `"try"` =
/// fail when absent (38, KT's logical inconsistency), `"set"` = store `num` itself.
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

/// The `{num}` of a counted outcome as KT writes it (`%lld`, `%f`), or the
/// procedure's error; a record absent under `orig=try` is 38 in KT.
fn num(o: Outcome) -> RpcResult {
    let n = match o {
        Outcome::Counted {
            value: Number::Signed(n),
            ..
        } => n.to_string(),
        Outcome::Counted {
            value: Number::Float(n),
            ..
        } => format!("{n:.6}"),
        Outcome::NotFound => {
            return Err(RpcError::new(
                code::NOT_COMPATIBLE,
                "no record, and orig is try",
            ))
        }
        o => return Err(RpcError::from_outcome(o)),
    };
    Ok(Value::Map(vec![(Value::from("num"), Value::from(n))]))
}

/// `increment(key, num, [inmap{orig, DB, xt}])` → `{num: "N"}`. The value
/// is decimal ASCII (shared with memcached's incr; KT stores 8 bytes). 38
/// when the stored value is not an integer; 41 on overflow.
pub fn increment(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 2);
    let key = a.bytes(0, "key")?;
    let delta = a.at(1, "num")?;
    let cmd = Increment {
        key: Bytes::copy_from_slice(key),
        delta: super::as_i64(delta).ok_or_else(|| RpcError::invalid("num must be a number"))?,
        origin: origin(&a, super::as_i64, 0)?,
        expires_at: a.expiry_or_never()?,
    };
    num(cmd.apply(srv))
}

/// `increment_double(key, num, [inmap{orig, DB, xt}])` → `{num: "N.NNNNNN"}`.
pub fn increment_double(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 2);
    let key = a.bytes(0, "key")?;
    let delta = a.at(1, "num")?;
    let cmd = IncrementDouble {
        key: Bytes::copy_from_slice(key),
        delta: as_f64(delta).ok_or_else(|| RpcError::invalid("num must be a number"))?,
        origin: origin(&a, as_f64, 0.0)?,
        expires_at: a.expiry_or_never()?,
    };
    num(cmd.apply(srv))
}
