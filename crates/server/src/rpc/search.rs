//! Key search: match_prefix match_regex match_similar (Kyoto Tycoon: a map
//! `{num: "N", _key: ...}`) and search (Tkrzw-RPC's modes: an array of keys).

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
fn kt_match(db: &Db, mode: SearchMode, a: &Args, what: &str) -> RpcResult {
    let pattern = a.bytes(0, what)?;
    let keys = match kt_max(a)? {
        Some(0) => Vec::new(),
        max => db
            .search(mode, pattern, max.unwrap_or(0))
            .map_err(RpcError::from)?,
    };
    Ok(kt_keys(keys, |_, k| bin(k)))
}

/// `match_prefix(prefix, [inmap{max, DB}])` → `{num, _key: key}`: keys
/// starting with `prefix`, sorted.
pub fn match_prefix(db: &Db, params: &[Value]) -> RpcResult {
    kt_match(db, SearchMode::Begin, &Args::new(params, 1), "prefix")
}

/// `match_regex(regex, [inmap{max, DB}])` → `{num, _key: key}`: keys
/// matching, sorted; 36 for a bad regex.
pub fn match_regex(db: &Db, params: &[Value]) -> RpcResult {
    kt_match(db, SearchMode::Regex, &Args::new(params, 1), "regex")
}

/// `match_similar(origin, [inmap{range, utf, max, DB}])` → `{num, _key:
/// rank}` (KT HTTP's shape: the rank, "0" nearest): keys within Levenshtein
/// distance `range` (default 1) of `origin`, nearest first (ties by key);
/// `utf`: measure in UTF-8 characters rather than bytes.
pub fn match_similar(db: &Db, params: &[Value]) -> RpcResult {
    let a = Args::new(params, 1);
    let origin = a.bytes(0, "origin")?;
    let range = a.opt_count("range", 1)?;
    let utf = a.opt_bool("utf").unwrap_or(false);
    let max = kt_max(&a)?.unwrap_or(usize::MAX);
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
    let keys = hits.into_iter().take(max).map(|(_, k)| k).collect();
    Ok(kt_keys(keys, |i, _| Value::from(i.to_string())))
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
