//! kt-msgpack's conventions, shared by the procedures: which database `DB`
//! names, what `xt` means, the `_` prefix of record keys in bulk maps, and
//! whether the client speaks str (kt-msgpack's era) or bin.

use super::{Args, Reply, RpcError, Value};
use bytes::Bytes;
use memstored_engine::now_secs;
use memstored_protocol::rpc::value_bytes;

/// Procedures of kt-msgpack's IDL that memstored does not implement: 42.
pub const UNIMPLEMENTED: &[&str] = &[
    "play_script",
    "tune_replication",
    "cur_jump",
    "cur_jump_back",
    "cur_step",
    "cur_step_back",
    "cur_set_value",
    "cur_remove",
    "cur_get_key",
    "cur_get_value",
    "cur_get",
    "cur_seize",
    "cur_delete",
];

/// KT's largest expiration time (40 bits): at or past it, a record never expires.
const XT_MAX: i64 = (1 << 40) - 1;

/// KT's `xt` to the engine's absolute expiry (0 = never): positive = seconds
/// from now, negative = its absolute value is the epoch time, at or past
/// 2^40 - 1 = never. A KT record is alive while the clock is at or before
/// its `xt`, an engine record while the clock is before its expiry: one
/// second apart.
pub fn xt_to_expiry(xt: i64) -> u64 {
    let at = if xt < 0 {
        xt.saturating_neg()
    } else {
        i64::try_from(now_secs())
            .unwrap_or(i64::MAX)
            .saturating_add(xt)
    };
    if at >= XT_MAX {
        0
    } else {
        // `at` is non-negative here: a negative xt was negated, a positive one added to now.
        u64::try_from(at).unwrap_or(0).saturating_add(1)
    }
}

/// The `xt` KT reports for an engine expiry (`None`: never expires).
pub fn expiry_to_xt(expires_at: u64) -> Option<String> {
    expiry_to_xt_secs(expires_at).map(|xt| xt.to_string())
}

/// [`expiry_to_xt`] as a number: the last second the record is alive, as
/// KT's TimedDB keeps it (and writes it in its update log, which is why the
/// replication stream sends this too).
pub fn expiry_to_xt_secs(expires_at: u64) -> Option<u64> {
    (expires_at != 0).then(|| expires_at.saturating_sub(1))
}

/// False when the request's strings all came as str (raw): the client may
/// be of kt-msgpack's era, whose decoders know no bin, so record data goes
/// back as str. Any bin, or no string at all (`list()`), means bin.
pub fn wants_bin(params: &[Value]) -> bool {
    let (str_seen, bin_seen) = strings_in(params);
    bin_seen || !str_seen
}

/// True when the request carried any bin: a client of today, answered with
/// `[code, message]` errors. Without bin (including no string at all, as in
/// `tune_replication()`) it may be of kt-msgpack's era: the bare code.
pub fn speaks_bin(params: &[Value]) -> bool {
    strings_in(params).1
}

/// Whether `params` hold any str, any bin.
fn strings_in(params: &[Value]) -> (bool, bool) {
    let (mut str_seen, mut bin_seen) = (false, false);
    for p in params {
        scan(p, &mut str_seen, &mut bin_seen);
    }
    (str_seen, bin_seen)
}

fn scan(v: &Value, str_seen: &mut bool, bin_seen: &mut bool) {
    match v {
        Value::Binary(_) => *bin_seen = true,
        Value::String(_) => *str_seen = true,
        Value::Array(a) => a.iter().for_each(|x| scan(x, str_seen, bin_seen)),
        Value::Map(m) => m.iter().for_each(|(k, x)| {
            scan(k, str_seen, bin_seen);
            scan(x, str_seen, bin_seen);
        }),
        _ => {}
    }
}

/// `(key, value)` pairs borrowed from a request.
pub type Records<'a> = Vec<(&'a [u8], &'a [u8])>;

/// The records of a bulk map: entries whose key starts with `_`, the prefix
/// cut off (options such as `DB`, `xt`, `atomic` are the other entries).
/// A record's value must be bin or str (else 2).
pub fn records<'a>(a: &Args<'a>) -> Result<Records<'a>, RpcError> {
    let mut out = Vec::new();
    for (k, v) in a.options() {
        let Some(key) = value_bytes(k).and_then(|k| k.strip_prefix(b"_")) else {
            continue;
        };
        let value =
            value_bytes(v).ok_or_else(|| RpcError::argument("record values must be bin or str"))?;
        out.push((key, value));
    }
    Ok(out)
}

/// A number as KT returns it: decimal text.
pub fn text(n: impl ToString) -> Reply {
    Reply::Value(Value::from(n.to_string()))
}

/// `_key` for a record key in a result map.
pub fn underscored(key: &[u8]) -> Reply {
    let mut k = Vec::with_capacity(key.len() + 1);
    k.push(b'_');
    k.extend_from_slice(key);
    Reply::Bin(Bytes::from(k))
}

/// `{num: "N", _key: value, ...}`: how kt-msgpack lists keys and records.
pub fn listing(num: usize, entries: impl IntoIterator<Item = (Reply, Reply)>) -> Reply {
    let mut m = vec![(Reply::from("num"), text(num))];
    m.extend(entries);
    Reply::Map(m)
}
