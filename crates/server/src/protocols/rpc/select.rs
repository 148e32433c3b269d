//! Which database a call runs on: its `DB` option, an index (an integer, or
//! decimal text) or a name (`state::databases` says which names match).

use super::{code, RpcError, Value};
use crate::state::server::Server;
use memstored_protocol::rpc::{value_bytes, value_str};
use std::sync::Arc;

/// The `DB` option of a call: in the map that is its last parameter (the
/// options map; for kt-msgpack's bulk calls, the one map).
fn db_option(params: &[Value]) -> Option<&Value> {
    let Some(Value::Map(m)) = params.last() else {
        return None;
    };
    m.iter()
        .find(|(k, _)| value_str(k) == Some("DB"))
        .map(|(_, v)| v)
}

/// The server whose database the call's `DB` option names (`srv` itself
/// without one); error 34 when no database has that index or name.
pub fn select<'a>(srv: &'a Arc<Server>, params: &[Value]) -> Result<&'a Arc<Server>, RpcError> {
    let Some(v) = db_option(params) else {
        return Ok(srv);
    };
    let missing =
        |what: String| RpcError::new(code::NO_DATABASE, format!("no such database: {what}"));
    let by_index = |i: u64| match i {
        0 => Ok(srv),
        i => usize::try_from(i - 1)
            .ok()
            .and_then(|i| srv.others.get(i))
            .ok_or_else(|| missing(i.to_string())),
    };
    if let Some(i) = v.as_u64() {
        return by_index(i);
    }
    let text = value_bytes(v)
        .and_then(|b| std::str::from_utf8(b).ok())
        .ok_or_else(|| missing(v.to_string()))?;
    if let Ok(i) = text.trim().parse::<u64>() {
        return by_index(i);
    }
    std::iter::once(srv)
        .chain(&srv.others)
        .find(|s| crate::state::databases::names(&s.cfg.store, text))
        .ok_or_else(|| missing(format!("{text:?}")))
}
