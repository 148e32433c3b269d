//! ping (in `call`), echo, status, report.

use super::{RpcError, RpcResult, Value};
use crate::state::server::Server;
use memstored_engine::Db;
use memstored_protocol::rpc::value_bytes;
use std::sync::atomic::Ordering::Relaxed;

/// `echo([inmap])`: the map itself; none or nil: an empty map. kt-msgpack
/// types it `map<string, string>`, so anything else is 2.
pub fn echo(params: &[Value]) -> RpcResult {
    match params.first() {
        None | Some(Value::Nil) => Ok(Value::Map(Vec::new())),
        Some(Value::Map(m))
            if m.iter()
                .all(|(k, v)| value_bytes(k).is_some() && value_bytes(v).is_some()) =>
        {
            Ok(Value::Map(m.clone()))
        }
        Some(_) => Err(RpcError::argument("echo takes a map of strings")),
    }
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

fn strings(entries: Vec<(String, String)>) -> Value {
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Value::from(k), Value::from(v)))
            .collect(),
    )
}

/// `status([inmap{DB}])`: `count`, `size`, `path`, `type` (Kyoto Cabinet's
/// number for the database type, as ktserver prints it: see
/// `DbName::kc_type`), `engine`, `num_shards`, `ordered`, then every
/// `inspect` property; all strings, as Kyoto Cabinet's status. 34 for an
/// unknown `DB`.
pub fn status(srv: &Server, _params: &[Value]) -> RpcResult {
    let db = &srv.db;
    let kind = db.name().kind.label();
    let mut out: Vec<(String, String)> = [
        ("count", db.count().to_string()),
        ("size", size(db).to_string()),
        ("path", db.name().path.clone()),
        ("type", db.name().kc_type().to_string()),
        ("engine", kind.to_string()),
        ("num_shards", db.name().num_shards.to_string()),
        ("ordered", db.is_ordered().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (k, v) in db.inspect() {
        if !out.iter().any(|(t, _)| *t == k) {
            out.push((k, v));
        }
    }
    Ok(strings(out))
}

/// `report()`: Kyoto Tycoon's report, every value a string, for the whole
/// server whatever the `DB` option says (as ktserver's): one `db_N` line per
/// database and counters summed over them. The counters are memstored's
/// (shared by every protocol), mapped onto KT's names: see docs/kt-compat.md.
pub fn report(srv: &Server) -> RpcResult {
    let servers: Vec<&Server> = std::iter::once(srv)
        .chain(srv.others.iter().map(|s| &**s))
        .collect();
    let (mut total_count, mut total_size) = (0u64, 0u64);
    let mut dbs = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        let (count, size) = (s.db.count(), size(&s.db));
        total_count += count;
        total_size += size;
        dbs.push((
            format!("db_{i}"),
            format!("count={count} size={size} path={}", s.db.name().path),
        ));
    }
    // Each database's calls bump its own server's counters.
    let n = |f: fn(&crate::state::counters::RequestCounters) -> &std::sync::atomic::AtomicU64| {
        servers.iter().map(|s| s.counters.sum(f)).sum::<u64>()
    };
    let c = &srv.counters;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut out: Vec<(String, String)> = dbs;
    out.extend(
        [
            ("db_total_count", total_count.to_string()),
            ("db_total_size", total_size.to_string()),
            (
                "serv_conn_count",
                c.curr_connections.load(Relaxed).to_string(),
            ),
            // Requests are served by their connection's task: nothing queues.
            ("serv_task_count", "0".to_string()),
            ("serv_thread_count", srv.cfg.threads.to_string()),
            ("serv_current_time", format!("{now:.6}")),
            (
                "serv_running_term",
                format!("{:.6}", srv.started.elapsed().as_secs_f64()),
            ),
            ("serv_proc_id", std::process::id().to_string()),
            ("cnt_set", n(|c| &c.cmd_set).to_string()),
            (
                "cnt_set_misses",
                (n(|c| &c.cas_misses) + n(|c| &c.cas_badval)).to_string(),
            ),
            (
                "cnt_remove",
                (n(|c| &c.delete_hits) + n(|c| &c.delete_misses)).to_string(),
            ),
            ("cnt_remove_misses", n(|c| &c.delete_misses).to_string()),
            ("cnt_get", n(|c| &c.cmd_get).to_string()),
            ("cnt_get_misses", n(|c| &c.get_misses).to_string()),
            ("cnt_script", "0".to_string()),
            (
                "cnt_misc",
                (n(|c| &c.cmd_flush) + n(|c| &c.cmd_touch)).to_string(),
            ),
            (
                "conf_kt_version",
                format!("memstored {}", crate::MEMSTORED_VERSION),
            ),
            ("conf_kt_features", "(memstored)".to_string()),
            (
                "conf_kc_version",
                format!("memstored engine {}", srv.db.name().kind.label()),
            ),
            ("conf_kc_features", "(memstored)".to_string()),
            ("conf_os_name", os_name().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v)),
    );
    out.extend(super::sysinfo::sys_info());
    Ok(strings(out))
}

/// Kyoto Cabinet's OSNAME for the platform.
fn os_name() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Mac OS X",
        "freebsd" => "FreeBSD",
        other => other,
    }
}
