//! Key search: match_prefix match_regex match_similar (Kyoto Tycoon) and
//! search (Tkrzw-RPC's modes). Every one returns an array of keys (bin).

use super::{as_i64, bin, Args, RpcError, RpcResult, Value};
use memstored_engine::search::edit_distance;
use memstored_engine::{Db, SearchMode};
use memstored_protocol::rpc::value_str;

fn keys_value(keys: Vec<Vec<u8>>) -> Value {
    Value::Array(keys.iter().map(|k| bin(k)).collect())
}

fn run(db: &Db, mode: SearchMode, pattern: &[u8], max: usize) -> RpcResult {
    let keys = db.search(mode, pattern, max).map_err(RpcError::from)?;
    Ok(keys_value(keys))
}

/// `match_prefix(prefix, [opts{max}])` → keys starting with `prefix`, sorted.
pub fn match_prefix(db: &Db, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    run(
        db,
        SearchMode::Begin,
        a.bytes(0, "prefix")?,
        a.opt_count("max", 0)?,
    )
}

/// `match_regex(regex, [opts{max}])` → keys matching, sorted; 36 for a bad regex.
pub fn match_regex(db: &Db, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    run(
        db,
        SearchMode::Regex,
        a.bytes(0, "regex")?,
        a.opt_count("max", 0)?,
    )
}

/// `match_similar(origin, [opts{range, utf, max}])` → keys within Levenshtein
/// distance `range` (default 1) of `origin`, nearest first (ties by key);
/// `utf`: measure in UTF-8 characters rather than bytes.
pub fn match_similar(db: &Db, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    let origin = a.bytes(0, "origin")?;
    let range = a.opt_count("range", 1)?;
    let utf = a.opt_bool("utf").unwrap_or(false);
    let max = match a.opt_count("max", 0)? {
        0 => usize::MAX,
        n => n,
    };
    let all = db
        .search(SearchMode::Begin, b"", 0)
        .map_err(RpcError::from)?;
    let chars = |b: &[u8]| String::from_utf8_lossy(b).chars().collect::<Vec<char>>();
    let origin_chars = chars(origin);
    let mut hits: Vec<(usize, Vec<u8>)> = all
        .into_iter()
        .filter_map(|k| {
            let d = if utf {
                edit_distance(&chars(&k), &origin_chars)
            } else {
                edit_distance(&k, origin)
            };
            (d <= range).then_some((d, k))
        })
        .collect();
    hits.sort();
    Ok(keys_value(
        hits.into_iter().take(max).map(|(_, k)| k).collect(),
    ))
}

/// `search(mode, pattern, [capacity])` (or `opts{capacity}`) with Tkrzw's
/// modes: begin contain containcase end regex edit editbin upper upperinc
/// lower lowerinc. 36 for an unknown mode, 42 for upper/lower on a hash database.
pub fn search(db: &Db, params: &[Value]) -> RpcResult {
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
    run(db, mode, pattern, capacity)
}
