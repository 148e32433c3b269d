//! Server counters (atomics) and the `stats` listings memcached tools expect.

use crate::server::Server;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{SystemTime, UNIX_EPOCH};

/// One counter per memcached stat name; all relaxed atomics.
#[derive(Debug, Default)]
pub struct Counters {
    pub curr_connections: AtomicU64,
    pub total_connections: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub cmd_get: AtomicU64,
    pub cmd_set: AtomicU64,
    pub cmd_flush: AtomicU64,
    pub cmd_touch: AtomicU64,
    pub get_hits: AtomicU64,
    pub get_misses: AtomicU64,
    pub get_expired: AtomicU64,
    pub delete_hits: AtomicU64,
    pub delete_misses: AtomicU64,
    pub incr_hits: AtomicU64,
    pub incr_misses: AtomicU64,
    pub decr_hits: AtomicU64,
    pub decr_misses: AtomicU64,
    pub cas_hits: AtomicU64,
    pub cas_misses: AtomicU64,
    pub cas_badval: AtomicU64,
    pub touch_hits: AtomicU64,
    pub touch_misses: AtomicU64,
    pub total_items: AtomicU64,
    pub auth_cmds: AtomicU64,
    pub auth_errors: AtomicU64,
    pub bytes_read: AtomicU64,
    pub bytes_written: AtomicU64,
    /// RPC slow calls waiting for a blocking thread (a gauge; `slow.rs`).
    pub slow_calls_queued: AtomicU64,
    /// RPC slow calls running on a blocking thread (a gauge).
    pub slow_calls_running: AtomicU64,
    /// Slow calls refused as busy (per-connection or server-wide bound).
    pub slow_calls_rejected: AtomicU64,
    /// Searches stopped by `--search-timeout`.
    pub slow_calls_timed_out: AtomicU64,
}

/// Adds one to a counter.
#[inline]
pub fn bump(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

/// Adds `n` to a counter.
#[inline]
pub fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Relaxed);
}

fn get(c: &AtomicU64) -> String {
    c.load(Relaxed).to_string()
}

fn unix_now_f64() -> (u64, u64) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs(), u64::from(d.subsec_micros()))
}

/// User and system CPU time of this process, as `secs.micros` strings.
pub(crate) fn rusage() -> (String, String) {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return ("0.000000".into(), "0.000000".into());
    }
    let f = |t: libc::timeval| format!("{}.{:06}", t.tv_sec, t.tv_usec);
    (f(ru.ru_utime), f(ru.ru_stime))
}

/// Name/value pairs of one `stats` group; `None` for an unknown group.
pub fn listing(srv: &Server, group: Option<&[u8]>) -> Option<Vec<(String, String)>> {
    match group {
        None | Some(b"") => Some(general(srv)),
        Some(b"settings") => Some(crate::settings::listing(srv)),
        Some(b"engine") | Some(b"memstored") => Some(srv.db.inspect()),
        Some(b"items") => Some(crate::admin::items(srv)),
        Some(b"slabs") => Some(crate::admin::slabs(srv)),
        Some(b"sizes") => Some(crate::admin::sizes()),
        Some(b"conns") => Some(srv.conns.listing()),
        Some(b"extstore") => Some(Vec::new()),
        _ => None,
    }
}

/// Zeroes the resettable counters (`stats reset`).
pub fn reset(srv: &Server) {
    srv.detail.clear();
    let c = &srv.counters;
    for a in [
        &c.total_connections,
        &c.rejected_connections,
        &c.cmd_get,
        &c.cmd_set,
        &c.cmd_flush,
        &c.cmd_touch,
        &c.get_hits,
        &c.get_misses,
        &c.get_expired,
        &c.delete_hits,
        &c.delete_misses,
        &c.incr_hits,
        &c.incr_misses,
        &c.decr_hits,
        &c.decr_misses,
        &c.cas_hits,
        &c.cas_misses,
        &c.cas_badval,
        &c.touch_hits,
        &c.touch_misses,
        &c.total_items,
        &c.auth_cmds,
        &c.auth_errors,
        &c.bytes_read,
        &c.bytes_written,
        &c.slow_calls_rejected,
        &c.slow_calls_timed_out,
    ] {
        a.store(0, Relaxed);
    }
}

fn general(srv: &Server) -> Vec<(String, String)> {
    let c = &srv.counters;
    let (now, _) = unix_now_f64();
    let uptime = srv.started.elapsed().as_secs();
    let (utime, stime) = rusage();
    let st = srv.db.stats();
    let name = srv.db.name();
    let mut v: Vec<(&str, String)> = vec![
        ("pid", std::process::id().to_string()),
        ("uptime", uptime.to_string()),
        ("time", now.to_string()),
        ("version", crate::VERSION.to_string()),
        ("memstored_version", crate::MEMSTORED_VERSION.to_string()),
        ("libevent", "tokio".to_string()),
        (
            "pointer_size",
            (8 * std::mem::size_of::<usize>()).to_string(),
        ),
        ("rusage_user", utime),
        ("rusage_system", stime),
        ("max_connections", srv.cfg.max_connections.to_string()),
        ("curr_connections", get(&c.curr_connections)),
        ("total_connections", get(&c.total_connections)),
        ("rejected_connections", get(&c.rejected_connections)),
        ("connection_structures", get(&c.curr_connections)),
        ("cmd_get", get(&c.cmd_get)),
        ("cmd_set", get(&c.cmd_set)),
        ("cmd_flush", get(&c.cmd_flush)),
        ("cmd_touch", get(&c.cmd_touch)),
        ("get_hits", get(&c.get_hits)),
        ("get_misses", get(&c.get_misses)),
        ("get_expired", get(&c.get_expired)),
        ("get_flushed", "0".to_string()),
        ("delete_misses", get(&c.delete_misses)),
        ("delete_hits", get(&c.delete_hits)),
        ("incr_misses", get(&c.incr_misses)),
        ("incr_hits", get(&c.incr_hits)),
        ("decr_misses", get(&c.decr_misses)),
        ("decr_hits", get(&c.decr_hits)),
        ("cas_misses", get(&c.cas_misses)),
        ("cas_hits", get(&c.cas_hits)),
        ("cas_badval", get(&c.cas_badval)),
        ("touch_hits", get(&c.touch_hits)),
        ("touch_misses", get(&c.touch_misses)),
        ("auth_cmds", get(&c.auth_cmds)),
        ("auth_errors", get(&c.auth_errors)),
        ("bytes_read", get(&c.bytes_read)),
        ("bytes_written", get(&c.bytes_written)),
        ("conn_buffer_bytes", srv.budget.used().to_string()),
        ("conn_buffer_limit", srv.budget.limit().to_string()),
        ("conn_buffer_refused", get(&srv.budget.refused)),
        ("slow_calls_queued", get(&c.slow_calls_queued)),
        ("slow_calls_running", get(&c.slow_calls_running)),
        ("slow_calls_rejected", get(&c.slow_calls_rejected)),
        ("slow_calls_timed_out", get(&c.slow_calls_timed_out)),
        ("limit_maxbytes", name.cap_mem_size.to_string()),
        ("threads", srv.cfg.threads.to_string()),
        ("curr_items", srv.db.count().to_string()),
        ("total_items", get(&c.total_items)),
        ("bytes", st.bytes.to_string()),
        ("evictions", st.evictions.to_string()),
        ("engine", name.kind.label().to_string()),
        ("shards", name.num_shards.to_string()),
        ("file_size", st.file_size.to_string()),
    ];
    v.push(("store", srv.cfg.store.clone()));
    let mut out: Vec<(String, String)> = v.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    out.extend(crate::databases::stats(srv));
    let ulog = srv.db.update_log_stats();
    out.extend(
        ulog.into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    out.extend(srv.replication.stats());
    out
}
