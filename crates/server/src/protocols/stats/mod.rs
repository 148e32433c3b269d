//! Server counters (atomics) and the `stats` listings memcached tools expect.

pub mod items;
pub mod metrics;
pub mod settings;

use crate::state::counters::RequestCounters;
use crate::state::server::Server;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{SystemTime, UNIX_EPOCH};

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
        Some(b"settings") => Some(crate::protocols::stats::settings::listing(srv)),
        Some(b"engine") | Some(b"memstored") => Some(srv.db.inspect()),
        Some(b"items") => Some(items::items(srv)),
        Some(b"slabs") => Some(items::slabs(srv)),
        Some(b"sizes") => Some(items::sizes()),
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
        &c.auth_cmds,
        &c.auth_errors,
        &c.slow_calls_rejected,
        &c.slow_calls_timed_out,
    ] {
        a.store(0, Relaxed);
    }
    srv.tls.reset();
    c.reset_requests();
}

fn general(srv: &Server) -> Vec<(String, String)> {
    let c = &srv.counters;
    let sum = |f: fn(&RequestCounters) -> &AtomicU64| c.sum(f).to_string();
    let (now, _) = unix_now_f64();
    let uptime = srv.started.elapsed().as_secs();
    let (utime, stime) = rusage();
    let st = srv.db.stats();
    let name = srv.db.name();
    let [running, starts, reclaimed, checked] = crate::command::crawler_stats();
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
        ("cmd_get", sum(|r| &r.cmd_get)),
        ("cmd_set", sum(|r| &r.cmd_set)),
        ("cmd_flush", sum(|r| &r.cmd_flush)),
        ("cmd_touch", sum(|r| &r.cmd_touch)),
        ("cmd_meta", sum(|r| &r.cmd_meta)),
        ("get_hits", sum(|r| &r.get_hits)),
        ("get_misses", sum(|r| &r.get_misses)),
        ("get_expired", sum(|r| &r.get_expired)),
        ("get_flushed", "0".to_string()),
        ("delete_misses", sum(|r| &r.delete_misses)),
        ("delete_hits", sum(|r| &r.delete_hits)),
        ("incr_misses", sum(|r| &r.incr_misses)),
        ("incr_hits", sum(|r| &r.incr_hits)),
        ("decr_misses", sum(|r| &r.decr_misses)),
        ("decr_hits", sum(|r| &r.decr_hits)),
        ("cas_misses", sum(|r| &r.cas_misses)),
        ("cas_hits", sum(|r| &r.cas_hits)),
        ("cas_badval", sum(|r| &r.cas_badval)),
        ("touch_hits", sum(|r| &r.touch_hits)),
        ("touch_misses", sum(|r| &r.touch_misses)),
        ("store_too_large", sum(|r| &r.store_too_large)),
        ("store_no_memory", sum(|r| &r.store_no_memory)),
        ("auth_cmds", get(&c.auth_cmds)),
        ("auth_errors", get(&c.auth_errors)),
    ];
    // As memcached: only with `-o idle_timeout`.
    if srv.conns.idle_timeout() > 0 {
        v.push(("idle_kicks", srv.conns.idle_kicks().to_string()));
    }
    v.extend([
        ("bytes_read", sum(|r| &r.bytes_read)),
        ("bytes_written", sum(|r| &r.bytes_written)),
        ("conn_buffer_bytes", srv.budget.held().to_string()),
        ("conn_buffer_limit", srv.budget.limit().to_string()),
        ("conn_buffer_refused", get(&srv.budget.refused)),
        ("slow_calls_queued", get(&c.slow_calls_queued)),
        ("slow_calls_running", get(&c.slow_calls_running)),
        ("slow_calls_rejected", get(&c.slow_calls_rejected)),
        ("slow_calls_timed_out", get(&c.slow_calls_timed_out)),
        ("limit_maxbytes", name.cap_mem_size.to_string()),
        // memcached stops listening at its connection limit (without
        // maxconns_fast); memstored never does: past -c it accepts and
        // refuses (`rejected_connections`), so the listener is disabled
        // only once it has stopped for good, at shutdown.
        (
            "accepting_conns",
            u8::from(!*srv.shutdown.borrow()).to_string(),
        ),
        ("listen_disabled_num", "0".to_string()),
        ("time_in_listen_disabled_us", "0".to_string()),
        ("threads", srv.cfg.threads.to_string()),
        ("hash_power_level", srv.hash_power_level().to_string()),
        ("io_engine", srv.cfg.io.label().to_string()),
        running,
        starts,
        ("curr_items", srv.db.count().to_string()),
        ("total_items", sum(|r| &r.total_items)),
        ("bytes", st.bytes.to_string()),
        ("expired_unfetched", st.expired_unfetched.to_string()),
        ("evicted_unfetched", st.evicted_unfetched.to_string()),
        // memcached's: evicted though recently bumped in its segmented
        // LRU; the cache here evicts only items not read since their
        // last pass.
        ("evicted_active", "0".to_string()),
        ("evictions", st.evictions.to_string()),
        reclaimed,
        checked,
    ]);
    v.extend(
        srv.watch
            .stats()
            .into_iter()
            .map(|(k, n)| (k, n.to_string())),
    );
    // memcached's TLS counters (with -Z only), last of its own, in its order.
    if let Some(tls) = &srv.cfg.tls {
        if tls.session_cache {
            v.push(("ssl_new_sessions", srv.tls.new_sessions().to_string()));
        }
        v.push(("ssl_handshake_errors", get(&srv.tls.handshake_errors)));
        v.push(("ssl_proto_errors", get(&srv.tls.proto_errors)));
        v.push((
            "time_since_server_cert_refresh",
            srv.tls.since_refresh().to_string(),
        ));
    }
    v.extend([
        ("engine", name.kind.label().to_string()),
        ("shards", srv.db.shard_count().to_string()),
        ("file_size", st.file_size.to_string()),
    ]);
    v.push(("store", srv.cfg.store.clone()));
    let mut out: Vec<(String, String)> = v.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    out.extend(crate::state::databases::stats(srv));
    let ulog = srv.db.update_log_stats();
    out.extend(
        ulog.into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    out.extend(srv.replication.stats());
    out
}
