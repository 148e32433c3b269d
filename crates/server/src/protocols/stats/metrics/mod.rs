//! `/metrics`: the server's counters in the Prometheus (OpenMetrics) text
//! format, under memcached_exporter's names for what memcached also has
//! (`memcached_current_items`, `memcached_commands_total{command,status}`,
//! ...), so dashboards and alerts written for memcached work unchanged, plus
//! memstored's own (`memstored_*`: connection-buffer memory, slow calls, and
//! per database and shard the records, file size and last sync, backup and
//! rebuild).
//!
//! Every memcached figure is read from the same name/value list `stats`
//! prints (`stats::listing`), so the two cannot disagree; the exporter's
//! arithmetic (`set` hits are `cmd_set` minus the CAS commands) is repeated
//! here so the series mean what they mean for memcached.

use crate::state::server::Server;
use memstored_engine::activity::{Maintenance, ShardReport};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::fmt;

/// The HTTP Content-Type of [`render`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The Content-Type of [`classic_text`]'s output.
pub const CLASSIC_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The body and Content-Type to answer a scrape whose `Accept` header is
/// `accept`: OpenMetrics when the client asks for it (Prometheus does),
/// else Prometheus's classic text format (curl, promtool, older scrapers),
/// as the official client libraries negotiate.
pub fn scrape(srv: &Server, accept: Option<&str>) -> (&'static str, String) {
    let text = render(srv);
    if accept.is_some_and(|a| a.contains("application/openmetrics-text")) {
        (CONTENT_TYPE, text)
    } else {
        (CLASSIC_CONTENT_TYPE, classic_text(&text))
    }
}

/// OpenMetrics text as Prometheus's classic text format (0.0.4). The
/// samples are the same; only the metadata differs: a counter family is
/// named with its `_total` suffix, and there is no `# UNIT` or `# EOF`.
pub fn classic_text(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len() + 8 * counters.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|tag| {
            let rest = line.strip_prefix(tag)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(name)
                .then(|| format!("{tag}{name}_total {tail}"))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// The exposition of `srv` (all its databases) at this instant.
pub fn render(srv: &Server) -> String {
    let snapshot = Snapshot::take(srv);
    let mut registry = Registry::default();
    registry.register_collector(Box::new(snapshot));
    let mut out = String::new();
    // Writing into a String cannot fail; an encoder error would be a bug in
    // a name above, and the partial text is still the best answer.
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}

/// What one scrape reports, read once so the whole exposition is one
/// instant's view.
#[derive(Debug)]
struct Snapshot {
    stats: HashMap<String, String>,
    databases: Vec<DatabaseSnapshot>,
}

#[derive(Debug)]
struct DatabaseSnapshot {
    store: String,
    engine: &'static str,
    shards: Vec<ShardReport>,
}

impl Snapshot {
    fn take(srv: &Server) -> Snapshot {
        let stats = crate::protocols::stats::listing(srv, None)
            .unwrap_or_default()
            .into_iter()
            .collect();
        let databases = std::iter::once(srv)
            .chain(srv.others.iter().map(|s| &**s))
            .map(|s| DatabaseSnapshot {
                store: s.cfg.store.clone(),
                engine: s.db.name().kind.label(),
                shards: s.db.shard_reports(),
            })
            .collect();
        Snapshot { stats, databases }
    }

    /// A `stats` value as a number (`rusage_*` are `secs.micros`).
    fn num(&self, name: &str) -> Option<f64> {
        self.stats.get(name)?.parse().ok()
    }
}

/// memcached_exporter's plain series: (stats name, metric, help).
const GAUGES: &[(&str, &str, &str)] = &[
    (
        "uptime",
        "memcached_uptime_seconds",
        "Number of seconds since the server started.",
    ),
    (
        "time",
        "memcached_time_seconds",
        "current UNIX time according to the server.",
    ),
    (
        "curr_connections",
        "memcached_current_connections",
        "Current number of open connections.",
    ),
    (
        "max_connections",
        "memcached_max_connections",
        "Maximum number of clients allowed.",
    ),
    (
        "bytes",
        "memcached_current_bytes",
        "Current number of bytes used to store items.",
    ),
    (
        "limit_maxbytes",
        "memcached_limit_bytes",
        "Number of bytes this server is allowed to use for storage (0: no limit).",
    ),
    (
        "curr_items",
        "memcached_current_items",
        "Current number of items stored by this instance.",
    ),
    (
        "conn_buffer_bytes",
        "memstored_conn_buffer_bytes",
        "Memory held by connections' large buffers (partial requests, unread replies).",
    ),
    (
        "conn_buffer_limit",
        "memstored_conn_buffer_limit_bytes",
        "The --conn-memory budget for connection buffers.",
    ),
    (
        "slow_calls_queued",
        "memstored_slow_calls_queued",
        "Slow RPC calls (searches, sync, backup, rebuild) waiting for a thread.",
    ),
    (
        "slow_calls_running",
        "memstored_slow_calls_running",
        "Slow RPC calls running.",
    ),
];

/// Counters: (stats name, metric without `_total`, help).
const COUNTERS: &[(&str, &str, &str)] = &[
    (
        "rusage_user",
        "memcached_process_user_cpu_seconds",
        "Accumulated user time for this process.",
    ),
    (
        "rusage_system",
        "memcached_process_system_cpu_seconds",
        "Accumulated system time for this process.",
    ),
    (
        "bytes_read",
        "memcached_read_bytes",
        "Total number of bytes read by this server from network.",
    ),
    (
        "bytes_written",
        "memcached_written_bytes",
        "Total number of bytes sent by this server to network.",
    ),
    (
        "total_connections",
        "memcached_connections",
        "Total number of connections opened since the server started running.",
    ),
    (
        "rejected_connections",
        "memcached_connections_rejected",
        "Total number of connections rejected for hitting the -c limit.",
    ),
    (
        "total_items",
        "memcached_items",
        "Total number of items stored during the life of this instance.",
    ),
    (
        "evictions",
        "memcached_items_evicted",
        "Total number of valid items removed from cache to free memory for new items.",
    ),
    (
        "conn_buffer_refused",
        "memstored_conn_buffer_refused",
        "Requests refused because the connection-buffer budget was spent.",
    ),
    (
        "slow_calls_rejected",
        "memstored_slow_calls_rejected",
        "Slow calls refused as busy (per-connection or server-wide bound).",
    ),
    (
        "slow_calls_timed_out",
        "memstored_slow_calls_timed_out",
        "Key searches stopped by --search-timeout.",
    ),
    (
        "auth_cmds",
        "memstored_auth_commands",
        "Authentication commands processed.",
    ),
    (
        "auth_errors",
        "memstored_auth_errors",
        "Failed authentications.",
    ),
];

const COMMANDS_WITH_HITS: &[&str] = &["get", "delete", "incr", "decr", "cas", "touch"];

impl Snapshot {
    fn encode_memcached(&self, enc: &mut DescriptorEncoder) -> fmt::Result {
        gauge(
            enc,
            "memcached_up",
            "Could the memcached server be reached.",
            1.0,
        )?;
        if let Some(v) = self.stats.get("version") {
            let mut e = enc.encode_descriptor(
                "memcached_version",
                "The version of this memcached server.",
                None,
                ConstGauge::new(0i64).metric_type(),
            )?;
            ConstGauge::new(1i64).encode(e.encode_family(&[("version", v.as_str())])?)?;
        }
        for (stat, name, help) in GAUGES {
            if let Some(v) = self.num(stat) {
                gauge(enc, name, help, v)?;
            }
        }
        for (stat, name, help) in COUNTERS {
            if let Some(v) = self.num(stat) {
                counter(enc, name, help, v)?;
            }
        }
        let mut rows: Vec<(&str, &str, f64)> = Vec::new();
        for op in COMMANDS_WITH_HITS {
            for (suffix, status) in [("hits", "hit"), ("misses", "miss")] {
                if let Some(v) = self.num(&format!("{op}_{suffix}")) {
                    rows.push((op, status, v));
                }
            }
        }
        if let Some(v) = self.num("cas_badval") {
            rows.push(("cas", "badval", v));
        }
        if let Some(v) = self.num("cmd_flush") {
            rows.push(("flush", "hit", v));
        }
        // memcached counts CAS commands in cmd_set too; the exporter takes
        // them out, and so do we.
        if let Some(set) = self.num("cmd_set") {
            let cas: f64 = ["cas_misses", "cas_hits", "cas_badval"]
                .iter()
                .filter_map(|s| self.num(s))
                .sum();
            rows.push(("set", "hit", (set - cas).max(0.0)));
        }
        let mut e = enc.encode_descriptor(
            "memcached_commands",
            "Total number of all requests broken down by command (get, set, etc.) and status.",
            None,
            ConstCounter::new(0u64).metric_type(),
        )?;
        for (command, status, v) in rows {
            ConstCounter::new(v)
                .encode(e.encode_family(&[("command", command), ("status", status)])?)?;
        }
        Ok(())
    }

    fn encode_databases(&self, enc: &mut DescriptorEncoder) -> fmt::Result {
        let mut info = enc.encode_descriptor(
            "memstored_database_info",
            "One series per database served: its index (the DB option / dbidx), name and engine.",
            None,
            ConstGauge::new(0i64).metric_type(),
        )?;
        for (i, d) in self.databases.iter().enumerate() {
            let db = i.to_string();
            let labels = [
                ("db", db.as_str()),
                ("store", d.store.as_str()),
                ("engine", d.engine),
            ];
            ConstGauge::new(1i64).encode(info.encode_family(&labels)?)?;
        }
        type Field = fn(&ShardReport) -> Option<f64>;
        let per_shard: [(&str, &str, Field); 3] = [
            (
                "memstored_shard_records",
                "Records in the shard (expired ones not yet reclaimed included).",
                |s| Some(s.records as f64),
            ),
            (
                "memstored_shard_file_bytes",
                "Size of the shard's file (0 in memory).",
                |s| Some(s.file_size as f64),
            ),
            (
                "memstored_shard_data_bytes",
                "Bytes of keys and values the shard holds.",
                |s| Some(s.bytes as f64),
            ),
        ];
        for (name, help, field) in per_shard {
            self.shard_family(enc, name, help, field)?;
        }
        for work in Maintenance::ALL {
            self.shard_family(
                enc,
                &format!("memstored_shard_last_{}_timestamp_seconds", work.label()),
                "When the shard's last successful run of this work ended (Unix time); absent before the first.",
                move |s| s.last(work).map(|r| r.finished_unix_ms as f64 / 1e3),
            )?;
            self.shard_family(
                enc,
                &format!("memstored_shard_last_{}_duration_seconds", work.label()),
                "How long the shard's last successful run of this work took.",
                move |s| s.last(work).map(|r| r.took_micros as f64 / 1e6),
            )?;
        }
        Ok(())
    }

    /// One gauge family with a series per database and shard.
    fn shard_family(
        &self,
        enc: &mut DescriptorEncoder,
        name: &str,
        help: &str,
        field: impl Fn(&ShardReport) -> Option<f64>,
    ) -> fmt::Result {
        let mut e =
            enc.encode_descriptor(name, help, None, ConstGauge::new(0.0f64).metric_type())?;
        for (i, d) in self.databases.iter().enumerate() {
            let db = i.to_string();
            for (j, s) in d.shards.iter().enumerate() {
                if let Some(v) = field(s) {
                    let shard = j.to_string();
                    ConstGauge::new(v).encode(
                        e.encode_family(&[("db", db.as_str()), ("shard", shard.as_str())])?,
                    )?;
                }
            }
        }
        Ok(())
    }
}

impl Collector for Snapshot {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        self.encode_memcached(&mut enc)?;
        self.encode_databases(&mut enc)?;
        self.encode_replication(&mut enc)
    }
}

fn gauge(enc: &mut DescriptorEncoder, name: &str, help: &str, v: f64) -> fmt::Result {
    let g = ConstGauge::new(v);
    g.encode(enc.encode_descriptor(name, help, None, g.metric_type())?)
}

/// A counter; the encoder appends `_total` to `name` in the sample.
fn counter(enc: &mut DescriptorEncoder, name: &str, help: &str, v: f64) -> fmt::Result {
    let c = ConstCounter::new(v);
    c.encode(enc.encode_descriptor(name, help, None, c.metric_type())?)
}

mod replication;
#[cfg(test)]
mod tests;
