//! Key search: match_prefix match_regex match_similar (Kyoto Tycoon) and
//! search (Tkrzw-RPC's modes). Every one returns an array of keys (bin).
//! They are slow calls (`is_slow`): each runs off the worker threads within
//! the limits of `crate::slow` (pattern length, regex size, time budget).

use super::{as_i64, bin, Args, RpcError, RpcResult, Value};
use crate::server::Server;
use crate::slow::{self, check_pattern};
use memstored_engine::SearchMode;
use memstored_protocol::rpc::value_str;

fn keys_value(keys: Vec<Vec<u8>>) -> Value {
    Value::Array(keys.iter().map(|k| bin(k)).collect())
}

fn run(srv: &Server, mode: SearchMode, pattern: &[u8], max: usize) -> RpcResult {
    let pattern = check_pattern(pattern)?;
    let keys = slow::search(srv, |limits| {
        srv.db.search_within(mode, pattern, max, limits)
    })?;
    Ok(keys_value(keys))
}

/// `match_prefix(prefix, [opts{max}])` → keys starting with `prefix`, sorted.
pub fn match_prefix(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    run(
        srv,
        SearchMode::Begin,
        a.bytes(0, "prefix")?,
        a.opt_count("max", 0)?,
    )
}

/// `match_regex(regex, [opts{max}])` → keys matching, sorted; 36 for a bad
/// regex or one that compiles beyond `slow::REGEX_SIZE_LIMIT`.
pub fn match_regex(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    run(
        srv,
        SearchMode::Regex,
        a.bytes(0, "regex")?,
        a.opt_count("max", 0)?,
    )
}

/// `match_similar(origin, [opts{range, utf, max}])` → keys within Levenshtein
/// distance `range` (default 1) of `origin`, nearest first (ties by key);
/// `utf`: measure in UTF-8 characters rather than bytes.
pub fn match_similar(srv: &Server, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    let origin = check_pattern(a.bytes(0, "origin")?)?;
    let range = a.opt_count("range", 1)?;
    let utf = a.opt_bool("utf").unwrap_or(false);
    let max = match a.opt_count("max", 0)? {
        0 => usize::MAX,
        n => n,
    };
    let mut keys = slow::search(srv, |limits| {
        srv.db.search_similar(origin, range, utf, limits)
    })?;
    keys.truncate(max);
    Ok(keys_value(keys))
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
