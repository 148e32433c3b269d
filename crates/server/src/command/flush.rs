//! `flush_all`, binary FLUSH, RPC `clear`.

use super::Outcome;
use crate::state::counters::bump;
use crate::state::server::Server;
use std::sync::Arc;

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
        match srv.flush(self.delay) {
            Ok(()) => Outcome::Done,
            Err(e) => Outcome::from_error(e),
        }
    }
}
