//! `stats settings`: memcached 1.6's names, in its order, for every setting
//! memstored has an honest answer to, then memstored's own. memcached's
//! slab-allocator, LRU-tuning, extstore and TLS knobs describe machinery
//! memstored does not have and are left out (docs/memcached-compat.md lists
//! them; the differential test checks that nothing else is missing).

use crate::state::server::Server;
use std::sync::atomic::Ordering::Relaxed;

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// Name/value pairs of `stats settings`.
pub fn listing(srv: &Server) -> Vec<(String, String)> {
    let cfg = &srv.cfg;
    let cap = srv.db.name().cap_mem_size;
    let v: Vec<(&str, String)> = vec![
        ("maxbytes", cap.to_string()),
        ("maxconns", cfg.max_connections.to_string()),
        ("tcpport", cfg.listen.port().to_string()),
        ("udpport", "0".to_string()),
        ("inter", cfg.listen.ip().to_string()),
        ("verbosity", srv.verbosity.load(Relaxed).to_string()),
        // No `flush_all` with a delay has cut off older items.
        ("oldest", "0".to_string()),
        // A memory store with a cap drops old items when full, unless -M.
        (
            "evictions",
            if cap > 0 && srv.db.name().evictions {
                "on"
            } else {
                "off"
            }
            .to_string(),
        ),
        (
            "domain_socket",
            cfg.unix_socket
                .clone()
                .unwrap_or_else(|| "NULL".to_string()),
        ),
        ("umask", format!("{:o}", cfg.unix_mask)),
        ("shutdown_command", yes_no(cfg.enable_shutdown)),
        ("num_threads", cfg.threads.to_string()),
        ("stat_key_prefix", ":".to_string()),
        ("detail_enabled", yes_no(srv.detail.enabled())),
        ("cas_enabled", yes_no(cfg.cas_enabled)),
        ("tcp_backlog", cfg.tcp_backlog.to_string()),
        ("binding_protocol", cfg.binding.label().to_string()),
        ("auth_enabled_sasl", yes_no(cfg.sasl)),
        ("auth_enabled_ascii", "no".to_string()),
        ("item_size_max", cfg.max_item_size.to_string()),
        ("slab_reassign", "no".to_string()),
        (
            "slab_automove",
            srv.slab_automove
                .load(std::sync::atomic::Ordering::Relaxed)
                .to_string(),
        ),
        // `lru_crawler enable|disable` (admin.rs).
        (
            "lru_crawler",
            yes_no(srv.lru_crawler.load(std::sync::atomic::Ordering::Relaxed)),
        ),
        ("flush_enabled", yes_no(cfg.flush_enabled)),
        ("dump_enabled", "yes".to_string()),
        ("lru_maintainer_thread", "no".to_string()),
        ("lru_segmented", "no".to_string()),
        ("temp_lru", "no".to_string()),
        ("idle_timeout", "0".to_string()),
        ("track_sizes", "no".to_string()),
        ("ssl_enabled", "no".to_string()),
        // memstored's own.
        ("interface", cfg.listen.ip().to_string()),
        ("conn_memory", cfg.conn_memory.to_string()),
        ("read_only", yes_no(cfg.read_only)),
        ("store", cfg.store.clone()),
        ("scheduler", cfg.scheduler.label().to_string()),
        ("io_engine", cfg.io.label().to_string()),
    ];
    v.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
