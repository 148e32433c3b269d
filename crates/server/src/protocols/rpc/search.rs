//! Key search: match_prefix match_regex match_similar (Kyoto Tycoon: a map
//! `{num: "N", _key: ...}`) and search (Tkrzw-RPC's modes: an array of keys).
//! They are slow calls (`is_slow`): each runs off the worker threads within
//! the limits of `crate::exec::slow` (pattern length, regex size, time budget).

use super::{as_i64, bin, Args, RpcError, RpcResult, Value};
use crate::command::Search;
use crate::exec::slow::{self, check_pattern};
use crate::state::server::Server;
use memstored_engine::SearchMode;
use memstored_protocol::rpc::value_str;

/// The keys found, unless they would make a reply over `rpc::max_reply`
/// (41: the client narrows the pattern or passes a `max`/`capacity`), as
/// `get_bulk` and `list` are held to it.
fn within_reply(srv: &Server, keys: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, RpcError> {
    let limit = super::max_reply(srv);
    let total = keys
        .iter()
        .map(Vec::len)
        .fold(0usize, usize::saturating_add);
    if total > limit {
        return Err(RpcError::new(
            super::code::LOGICAL,
            format!(
                "the {} keys found hold {total} bytes, over the reply limit of {limit}: \
                 narrow the pattern or ask for fewer",
                keys.len()
            ),
        ));
    }
    Ok(keys)
}

fn keys_value(keys: Vec<Vec<u8>>) -> Value {
    Value::Array(keys.iter().map(|k| bin(k)).collect())
}

fn run(srv: &Server, mode: SearchMode, pattern: &[u8], max: usize) -> RpcResult {
    let pattern = check_pattern(pattern)?;
    let cmd = Search::Matching { mode, pattern, max };
    let keys = slow::search(srv, |limits| cmd.apply(srv, limits))?;
    Ok(keys_value(within_reply(srv, keys)?))
}

/// KT's `max`: absent or negative = no limit (`None`), else that many.
fn kt_max(a: &Args) -> Result<Option<usize>, RpcError> {
    Ok(a.opt_i64("max")?.and_then(|n| usize::try_from(n).ok()))
}

/// Keys as kt-msgpack lists them: `{num: "N", _key: value_of(i, key)}`.
fn kt_keys(keys: Vec<Vec<u8>>, value_of: impl Fn(usize, &[u8]) -> Value) -> Value {
    let mut m = vec![(Value::from("num"), Value::from(keys.len().to_string()))];
    for (i, k) in keys.iter().enumerate() {
        let mut u = Vec::with_capacity(k.len() + 1);
        u.push(b'_');
        u.extend_from_slice(k);
        m.push((Value::Binary(u), value_of(i, k)));
    }
    Value::Map(m)
}

/// kt-msgpack's match_prefix/match_regex: up to `max` keys, `_key` → the key.
fn kt_match(srv: &Server, mode: SearchMode, a: &Args, what: &str) -> RpcResult {
    let pattern = check_pattern(a.bytes(0, what)?)?;
    let keys = match kt_max(a)? {
        Some(0) => Vec::new(),
        max => {
            let cmd = Search::Matching {
                mode,
                pattern,
                max: max.unwrap_or(0),
            };
            slow::search(srv, |limits| cmd.apply(srv, limits))?
        }
    };
    Ok(kt_keys(within_reply(srv, keys)?, |_, k| bin(k)))
}

/// `match_prefix(prefix, [inmap{max, DB}])` → `{num, _key: key}`: keys
/// starting with `prefix`, sorted.
pub fn match_prefix(srv: &Server, params: &[Value]) -> RpcResult {
    kt_match(srv, SearchMode::Begin, &Args::new(params, 1), "prefix")
}

/// `match_regex(regex, [inmap{max, DB}])` → `{num, _key: key}`: keys
/// matching, sorted; 36 for a bad regex or one that compiles beyond
/// `slow::REGEX_SIZE_LIMIT`.
pub fn match_regex(srv: &Server, params: &[Value]) -> RpcResult {
    kt_match(srv, SearchMode::Regex, &Args::new(params, 1), "regex")
}

/// `match_similar(origin, [inmap{range, utf, max, DB}])` → `{num, _key:
/// rank}` (KT HTTP's shape: the rank, "0" nearest): keys within Levenshtein
/// distance `range` (default 1) of `origin`, nearest first (ties by key);
/// `utf`: measure in UTF-8 characters rather than bytes.
pub fn match_similar(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    let origin = check_pattern(a.bytes(0, "origin")?)?;
    let range = a.opt_count("range", 1)?;
    let utf = a.opt_bool("utf").unwrap_or(false);
    let max = kt_max(&a)?.unwrap_or(usize::MAX);
    let cmd = Search::Similar { origin, range, utf };
    let mut keys = slow::search(srv, |limits| cmd.apply(srv, limits))?;
    keys.truncate(max);
    Ok(kt_keys(within_reply(srv, keys)?, |i, _| {
        Value::from(i.to_string())
    }))
}

/// `search(mode, pattern, [capacity])` (or `opts{capacity}`) with Tkrzw's
/// modes: begin contain containcase end regex edit editbin upper upperinc
/// lower lowerinc. 36 for an unknown mode, 42 for upper/lower on a hash database.
pub fn search(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 2);
    let mode =
        value_str(a.at(0, "mode")?).ok_or_else(|| RpcError::invalid("mode must be a string"))?;
    let mode = SearchMode::parse(mode).map_err(|e| RpcError::invalid(e.to_string()))?;
    let pattern = a.bytes(1, "pattern")?;
    let capacity = match a.pos_or_opt(2, "capacity").or_else(|| a.opt("max")) {
        None | Some(Value::Nil) => 0,
        Some(v) => as_i64(v)
            .ok_or_else(|| RpcError::invalid("capacity must be a number"))?
            .max(0) as usize,
    };
    run(srv, mode, pattern, capacity)
}
