//! `flush_all`, binary FLUSH, RPC `clear`.

use super::Outcome;
use crate::state::counters::bump;
use crate::state::server::Server;
use std::sync::Arc;
use std::time::Duration;

/// Removes every item now, or after `delay` seconds (a later flush replaces
/// a pending one, as in memcached).
#[derive(Debug, Clone, Copy)]
pub struct Flush {
    pub delay: u64,
    /// Whether a flush refused by `-F` still counts in `cmd_flush`: memcached
    /// counts a refused text `flush_all` but not a refused binary FLUSH (its
    /// check comes before the count there).
    pub count_refused: bool,
}

impl Flush {
    /// `Done`, or `ReadOnly` on a read-only server — checked here, before a
    /// delayed flush is scheduled, so the client is not told "OK" for a flush
    /// that will fail later.
    pub fn apply(&self, srv: &Arc<Server>) -> Outcome {
        if !srv.cfg.flush_enabled {
            if self.count_refused {
                bump(&srv.counters.here().cmd_flush);
            }
            return Outcome::FlushDisabled;
        }
        bump(&srv.counters.here().cmd_flush);
        if !srv.db.is_writable() {
            return Outcome::ReadOnly;
        }
        match flush(srv, self.delay) {
            Ok(()) => Outcome::Done,
            Err(e) => Outcome::from_error(e),
        }
    }
}

/// Removes every item now (`delay` 0) or after `delay` seconds. A later
/// flush replaces a pending delayed one, as in memcached.
fn flush(srv: &Arc<Server>, delay: u64) -> memstored_engine::Result<()> {
    let generation = srv.next_flush_generation();
    if delay == 0 {
        let db = srv.db.clone();
        srv.marks.clear();
        return crate::exec::block::block_here(move || db.clear());
    }
    let srv = srv.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(delay)).await;
        if srv.flush_generation() != generation {
            return;
        }
        srv.marks.clear();
        let db = srv.db.clone();
        match tokio::task::spawn_blocking(move || db.clear()).await {
            Ok(Ok(())) => tracing::debug!("delayed flush done"),
            Ok(Err(e)) => tracing::warn!("delayed flush failed: {e}"),
            Err(e) => tracing::warn!("delayed flush task failed: {e}"),
        }
    });
    Ok(())
}
