//! Replication series of /metrics, from the `repl_*` lines of `stats`
//! (present only on a master with an update log or on a replica).

use super::{counter, gauge, Snapshot};
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::gauge::ConstGauge;
use std::fmt;

/// (stats name, metric, help, is a counter).
const SERIES: &[(&str, &str, &str, bool)] = &[
    (
        "repl_streams",
        "memstored_replication_streams",
        "Replication streams this server is serving to replicas now.",
        false,
    ),
    (
        "repl_connected",
        "memstored_replica_connected",
        "1 while this replica is connected to its master.",
        false,
    ),
    (
        "repl_applied_timestamp",
        "memstored_replica_applied_timestamp_seconds",
        "Master timestamp of the last update this replica applied (Unix time).",
        false,
    ),
    (
        "repl_lag_records",
        "memstored_replica_lag_records",
        "Updates the master had logged and not yet sent, as of its last batch.",
        false,
    ),
    (
        "repl_lag_ms",
        "memstored_replica_lag_seconds",
        "Master's newest write minus the last applied one, in the master's clock.",
        false,
    ),
    (
        "repl_applied_records",
        "memstored_replica_applied_records",
        "Updates applied since this replica started.",
        true,
    ),
];

impl Snapshot {
    pub(super) fn encode_replication(&self, enc: &mut DescriptorEncoder) -> fmt::Result {
        for &(stat, name, help, is_counter) in SERIES {
            let Some(v) = self.num(stat) else { continue };
            let v = match stat {
                "repl_applied_timestamp" => v / 1e6,
                "repl_lag_ms" => v / 1e3,
                _ => v,
            };
            if is_counter {
                counter(enc, name, help, v)?;
            } else {
                gauge(enc, name, help, v)?;
            }
        }
        self.encode_replica_streams(enc)
    }

    /// One series per replica this master streams to (`repl_replica_<n>_*`),
    /// labelled with the replica's server id and address.
    fn encode_replica_streams(&self, enc: &mut DescriptorEncoder) -> fmt::Result {
        let streams: Vec<(usize, String, String)> = (0..)
            .map_while(|n| {
                let id = self.stats.get(&format!("repl_replica_{n}_server_id"))?;
                let addr = self.stats.get(&format!("repl_replica_{n}_addr"))?;
                Some((n, id.clone(), addr.clone()))
            })
            .collect();
        if streams.is_empty() {
            return Ok(());
        }
        for (field, name, help, scale) in STREAM_SERIES {
            let mut e =
                enc.encode_descriptor(name, help, None, ConstGauge::new(0.0f64).metric_type())?;
            for (n, id, addr) in &streams {
                let Some(v) = self.num(&format!("repl_replica_{n}_{field}")) else {
                    continue;
                };
                let labels = [
                    ("replica_server_id", id.as_str()),
                    ("replica", addr.as_str()),
                ];
                ConstGauge::new(v * scale).encode(e.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

/// Per-replica series of a master: (stats field, metric, help, scale).
const STREAM_SERIES: &[(&str, &str, &str, f64)] = &[
    (
        "lag_records",
        "memstored_replication_replica_lag_records",
        "Updates this replica has not acknowledged applying: sent and unacknowledged, plus not yet sent.",
        1.0,
    ),
    (
        "lag_ms",
        "memstored_replication_replica_lag_seconds",
        "Age of the oldest update this replica has not applied, against the master's newest write.",
        1e-3,
    ),
    (
        "sent_records",
        "memstored_replication_replica_sent_records",
        "Updates sent on this replica's stream since it connected.",
        1.0,
    ),
];
