//! Replication series of /metrics, from the `repl_*` lines of `stats`
//! (present only on a master with an update log or on a replica).

use super::{counter, gauge, Snapshot};
use prometheus_client::encoding::DescriptorEncoder;
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
        Ok(())
    }
}
