//! `touch`, binary TOUCH.

use super::{outcome, Outcome};
use crate::state::counters::bump;
use crate::state::server::Server;
use bytes::Bytes;

/// Sets a record's expiry, keeping its value, flags and CAS.
#[derive(Debug, Clone)]
pub struct Touch {
    pub key: Bytes,
    /// Absolute expiry (0 = never).
    pub expires_at: u64,
}

impl Touch {
    /// `Found` (the record after the touch), `NotFound` or `ReadOnly`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let c = srv.counters.here();
        bump(&c.cmd_touch);
        let o = outcome(srv.db.touch(&self.key, self.expires_at), Outcome::Found);
        match o {
            Outcome::Found(_) => bump(&c.touch_hits),
            Outcome::NotFound => bump(&c.touch_misses),
            _ => {}
        }
        o
    }
}
