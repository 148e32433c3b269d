//! ping (in `call`), echo, status, report.

use super::{map, Args, RpcResult, Value};
use crate::server::Server;
use memstored_engine::{now_secs, Db};

/// `echo(map)`: the map itself (no parameters: an empty map; several: them all as an array).
pub fn echo(params: &[Value]) -> RpcResult {
    Ok(match params {
        [] => Value::Map(Vec::new()),
        [v] => v.clone(),
        vs => Value::Array(vs.to_vec()),
    })
}

/// The size `status` and `report` give: the files' size, or the bytes held
/// in memory for an in-memory database.
fn size(db: &Db) -> u64 {
    let st = db.stats();
    if db.name().kind.has_file() {
        st.file_size
    } else {
        st.bytes
    }
}

/// `status([opts])`: `count`, `size`, `path`, `engine`, `class`,
/// `num_shards` (integers where numeric), plus every `inspect` property as text.
pub fn status(db: &Db, params: &[Value]) -> RpcResult {
    let _ = Args::new(params, 0);
    let typed: Vec<(&str, Value)> = vec![
        ("count", Value::from(db.count())),
        ("size", Value::from(size(db))),
        ("path", Value::from(db.name().path.as_str())),
        ("engine", Value::from(db.name().kind.label())),
        ("class", Value::from(db.name().kind.label())),
        ("num_shards", Value::from(db.name().num_shards as u64)),
        ("ordered", Value::Boolean(db.is_ordered())),
    ];
    let mut out: Vec<(Value, Value)> = typed
        .iter()
        .map(|(k, v)| (Value::from(*k), v.clone()))
        .collect();
    for (k, v) in db.inspect() {
        if !typed.iter().any(|(t, _)| *t == k) {
            out.push((Value::from(k), Value::from(v)));
        }
    }
    Ok(Value::Map(out))
}

/// `report()`: the server's counters (memcached's names) and the
/// database's, all as text like Kyoto Tycoon's: `db_total_count`,
/// `db_total_size`, `db_0` (`count=N size=N path=P`), `serv_current_time`.
pub fn report(srv: &Server) -> RpcResult {
    let db = &*srv.db;
    let (count, size) = (db.count(), size(db));
    let mut entries = crate::stats::listing(srv, None).unwrap_or_default();
    let own = [
        ("db_total_count", count.to_string()),
        ("db_total_size", size.to_string()),
        (
            "db_0",
            format!("count={count} size={size} path={}", db.name().path),
        ),
        ("serv_current_time", now_secs().to_string()),
    ];
    for (k, v) in own {
        if !entries.iter().any(|(e, _)| e == k) {
            entries.push((k.to_string(), v));
        }
    }
    Ok(map(entries
        .iter()
        .map(|(k, v)| (k.as_str(), Value::from(v.as_str())))
        .collect()))
}
