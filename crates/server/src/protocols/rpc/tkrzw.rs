//! Tkrzw-RPC procedures: compare_exchange_multi and list.

use super::{bin, code, Args, RpcError, RpcResult, Value};
use crate::command::{CompareExchangeMulti, List, Listing, Move, Outcome};
use crate::state::server::Server;
use memstored_protocol::rpc::{value_bytes, value_str};

/// Pairs `[[key, value-or-nil], ...]` (or a map key -> value-or-nil).
/// `(key, value)` pairs; `None` is "absent" (expected) or "remove" (desired).
type Pairs<'a> = Vec<(&'a [u8], Option<&'a [u8]>)>;

fn pairs<'a>(v: &'a Value, what: &str) -> Result<Pairs<'a>, RpcError> {
    let bad = || RpcError::invalid(format!("{what} must be an array of [key, value-or-nil]"));
    let one = |k: &'a Value, v: &'a Value| -> Result<_, RpcError> {
        let k = value_bytes(k).ok_or_else(bad)?;
        let v = match v {
            Value::Nil => None,
            v => Some(value_bytes(v).ok_or_else(bad)?),
        };
        Ok((k, v))
    };
    match v {
        Value::Array(items) => items
            .iter()
            .map(|p| match p {
                Value::Array(kv) if kv.len() == 2 => one(&kv[0], &kv[1]),
                Value::Array(kv) if kv.len() == 1 => one(&kv[0], &Value::Nil),
                _ => Err(bad()),
            })
            .collect(),
        Value::Map(m) => m.iter().map(|(k, v)| one(k, v)).collect(),
        _ => Err(bad()),
    }
}

/// `compare_exchange_multi(expected, desired)` → nil. Atomic across shards:
/// when every `[key, value]` of `expected` holds (nil = absent), every pair of
/// `desired` is stored (nil = removed); otherwise nothing changes and 37.
pub fn compare_exchange_multi(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 2);
    let expected = pairs(a.at(0, "expected")?, "expected")?;
    let desired = pairs(a.at(1, "desired")?, "desired")?;
    let cmd = CompareExchangeMulti {
        expected: &expected,
        desired: &desired,
    };
    match cmd.apply(srv) {
        Outcome::Done => Ok(Value::Nil),
        o => Err(RpcError::from_outcome(o)),
    }
}

/// `list(opts{move, jump_key, items})` → `[[key, value], ...]` in global key
/// order on ordered databases. `move`: first (default), jump, jumplower,
/// jumplowerinc, jumpupper, jumpupperinc (the jump* moves need `jump_key`;
/// the lower/upper ones an ordered database, else 42). From there records
/// are listed forward; `items` caps how many (absent or 0 = all). A listing
/// whose keys and values would pass `limit` bytes is refused (41): a client
/// pages through a large database with `items` and `jump_key`.
pub fn list(srv: &Server, params: &[Value], limit: usize) -> RpcResult {
    let a = Args::new(params, 0);
    let mv = match a.opt("move") {
        None | Some(Value::Nil) => "first",
        Some(v) => value_str(v).ok_or_else(|| RpcError::invalid("move must be a string"))?,
    };
    let items = match a.opt_count("items", 0)? {
        0 => usize::MAX,
        n => n,
    };
    let key = || -> Result<&[u8], RpcError> {
        a.opt("jump_key")
            .and_then(value_bytes)
            .ok_or_else(|| RpcError::invalid(format!("move {mv} needs jump_key")))
    };
    let from = match mv {
        "first" => Move::First,
        "jump" => Move::Jump(key()?),
        "jumplower" => Move::JumpLower(key()?, false),
        "jumplowerinc" => Move::JumpLower(key()?, true),
        "jumpupper" => Move::JumpUpper(key()?, false),
        "jumpupperinc" => Move::JumpUpper(key()?, true),
        _ => {
            return Err(RpcError::invalid(format!(
            "move {mv:?}: expected first, jump, jumplower, jumplowerinc, jumpupper or jumpupperinc"
        )))
        }
    };
    let cmd = List {
        from,
        items,
        max_bytes: limit,
    };
    match cmd.apply(srv).map_err(RpcError::from_outcome)? {
        Listing::Records(records) => Ok(Value::Array(
            records
                .into_iter()
                .map(|(k, v)| Value::Array(vec![Value::Binary(k), bin(&v)]))
                .collect(),
        )),
        Listing::TooLarge => Err(RpcError::new(
            code::LOGICAL,
            format!(
                "the listing would hold over {limit} bytes: \
                 list fewer items and page on with jump_key"
            ),
        )),
    }
}
