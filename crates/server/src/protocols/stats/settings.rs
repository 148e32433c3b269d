//! `stats settings`: memcached 1.6's names, in its order, for every setting
//! memstored has an honest answer to, then memstored's own. memcached's
//! slab-allocator, LRU-tuning and extstore knobs describe machinery
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
    let mut v: Vec<(&str, String)> = vec![
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
        (
            "auth_enabled_ascii",
            srv.ascii_auth
                .as_ref()
                .map_or_else(|| "no".to_string(), |a| a.path.display().to_string()),
        ),
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
        ("idle_timeout", srv.conns.idle_timeout().to_string()),
        ("watcher_logbuf_size", srv.watch.buffer().to_string()),
        (
            "worker_logbuf_size",
            crate::state::watch::WORKER_BUFFER.to_string(),
        ),
        ("track_sizes", "no".to_string()),
    ];
    v.extend(tls(cfg.tls.as_ref()));
    // memcached's `-e` (printf's `(null)` without one, as memcached prints it).
    v.push((
        "memory_file",
        cfg.memory_file
            .as_ref()
            .map_or("(null)".to_string(), |p| p.display().to_string()),
    ));
    v.extend([
        // memstored's own.
        ("interface", cfg.listen.ip().to_string()),
        ("conn_memory", cfg.conn_memory.to_string()),
        ("read_only", yes_no(cfg.read_only)),
        ("store", cfg.store.clone()),
        ("scheduler", cfg.scheduler.label().to_string()),
        ("io_engine", cfg.io.label().to_string()),
    ]);
    v.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// memcached's `ssl_*` settings (printed whether or not `-Z` is on, as a
/// memcached built with TLS prints them), with its spellings: OpenSSL's
/// verify flags and key format numbers, `NULL` for what is not set.
fn tls(tls: Option<&crate::state::tls::TlsSettings>) -> Vec<(&'static str, String)> {
    let defaults = crate::state::tls::TlsSettings::default();
    let t = tls.unwrap_or(&defaults);
    // memcached prints unset paths with printf's `%s`: glibc's `(null)`
    // for the two it passes as they are, `NULL` for those it checks.
    let path = |p: &Option<std::path::PathBuf>, unset: &str| {
        p.as_ref()
            .map_or(unset.to_string(), |p| p.display().to_string())
    };
    let keyformat = match t.keyformat {
        crate::state::tls::KeyFormat::Pem => 1,
        crate::state::tls::KeyFormat::Der => 2,
    };
    vec![
        ("ssl_enabled", yes_no(tls.is_some())),
        ("ssl_chain_cert", path(&t.chain_cert, "(null)")),
        ("ssl_key", path(&t.key, "(null)")),
        ("ssl_verify_mode", t.verify_mode.openssl_flags().to_string()),
        ("ssl_keyformat", keyformat.to_string()),
        (
            "ssl_ciphers",
            t.ciphers.clone().unwrap_or_else(|| "NULL".into()),
        ),
        ("ssl_ca_cert", path(&t.ca_cert, "NULL")),
        ("ssl_wbuf_size", t.wbuf_size.to_string()),
        ("ssl_session_cache", yes_no(t.session_cache)),
        ("ssl_kernel_tls", "no".to_string()),
        ("ssl_min_version", t.min_version_text().to_string()),
    ]
}
