//! `--ulog-dir`: the update log every database's changes are appended to
//! (issue 18; the engine's `ulog` module does the work). A replica will
//! stream it; this module only opens it and hooks it into the databases.

use crate::state::size::parse_size;
use memstored_engine::ulog::{UlogOptions, UpdateLog};
use memstored_engine::{Db, SyncMode};
use std::path::PathBuf;
use std::sync::Arc;

/// The update log's flags (flattened into `cli::Args`, so they are config
/// file keys too).
#[derive(Debug, Clone, clap::Args)]
pub struct UlogArgs {
    /// Append every change (all protocols, all databases) to an update log
    /// in DIR: segments `ulog-NNNNNNNNNN.log` (docs/format.md "Update log").
    #[arg(long = "ulog-dir", value_name = "DIR")]
    pub ulog_dir: Option<PathBuf>,
    /// This server's id (0..65535), written into every update-log record,
    /// so that servers replicating each other can tell their own changes.
    #[arg(long = "server-id", value_name = "N", default_value_t = 0)]
    pub server_id: u16,
    /// Start a new segment when one would grow past SIZE (k/m/g suffixes).
    #[arg(long = "ulog-segment-size", value_name = "SIZE", default_value = "64m", value_parser = parse_segment_size)]
    pub ulog_segment_size: u64,
    /// Retention: a plain number keeps that many segments; a size (with a
    /// k/m/g suffix, e.g. `1g`) keeps segments while they take at most that
    /// much (plus the one being written). Oldest segments go first.
    #[arg(long = "ulog-keep", value_name = "SIZE|COUNT", default_value = "1g", value_parser = parse_keep)]
    pub ulog_keep: Keep,
}

/// `--ulog-keep`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    Segments(usize),
    Bytes(u64),
}

fn parse_keep(s: &str) -> Result<Keep, String> {
    let t = s.trim();
    let keep = if t.bytes().all(|b| b.is_ascii_digit()) {
        Keep::Segments(t.parse().map_err(|_| format!("bad count {s:?}"))?)
    } else {
        Keep::Bytes(parse_size(t)?)
    };
    match keep {
        Keep::Segments(0) | Keep::Bytes(0) => Err("--ulog-keep must keep something".into()),
        k => Ok(k),
    }
}

pub(crate) fn parse_segment_size(s: &str) -> Result<u64, String> {
    match parse_size(s)? {
        n if n < 4096 => Err(format!("--ulog-segment-size {s:?}: at least 4k")),
        n => Ok(n),
    }
}

/// The strictest `#sync=` among the databases: a log fsynced less often
/// than the store would let a crash lose logged writes the store kept.
pub fn strictest_sync(dbs: &[Arc<Db>]) -> SyncMode {
    let rank = |m: SyncMode| match m {
        SyncMode::Always => 2,
        SyncMode::Interval => 1,
        _ => 0,
    };
    dbs.iter()
        .map(|d| d.name().sync)
        .max_by_key(|m| rank(*m))
        .unwrap_or(SyncMode::None)
}

/// Opens the log (when `--ulog-dir` is given) and makes every database, in
/// `-s` order (its dbm index), append its changes to it. Returns the log,
/// which replication streams.
pub fn attach(
    args: &UlogArgs,
    dbs: &[Arc<Db>],
) -> memstored_engine::Result<Option<Arc<UpdateLog>>> {
    let Some(dir) = &args.ulog_dir else {
        return Ok(None);
    };
    let (keep_segments, keep_bytes) = match args.ulog_keep {
        Keep::Segments(n) => (n, 0),
        Keep::Bytes(n) => (0, n),
    };
    let opts = UlogOptions {
        dir: dir.clone(),
        server_id: args.server_id,
        segment_size: args.ulog_segment_size,
        keep_bytes,
        keep_segments,
        sync: strictest_sync(dbs),
    };
    let log = Arc::new(UpdateLog::open(
        Arc::new(memstored_engine::io::RealFs),
        opts,
    )?);
    let st = log.stats();
    tracing::info!(
        "update log {}: {} segments, {} records, server id {}",
        dir.display(),
        st.segments,
        st.records,
        args.server_id
    );
    for (i, db) in dbs.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        db.set_update_listener(log.listener(index))?;
    }
    Ok(Some(log))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_is_a_count_or_a_size() {
        assert_eq!(parse_keep("10"), Ok(Keep::Segments(10)));
        assert_eq!(parse_keep("512m"), Ok(Keep::Bytes(512 << 20)));
        assert_eq!(parse_keep("1g"), Ok(Keep::Bytes(1 << 30)));
        assert!(parse_keep("0").is_err());
        assert!(parse_keep("lots").is_err());
        assert!(parse_segment_size("1k").is_err());
        assert_eq!(parse_segment_size("64m"), Ok(64 << 20));
    }
}
