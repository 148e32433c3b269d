//! The atomic bulk calls (Kyoto Tycoon's `set_bulk`, `remove_bulk` and
//! `get_bulk` with `atomic`): one engine call (`compare_exchange_multi`,
//! `read_multi`) that holds the write locks of every shard involved, so
//! other clients see all of it or none. Counted record by record as `Store`, `Delete` and `Get`
//! count the same calls without `atomic`.

use super::{check_size, Outcome};
use crate::state::counters::{add, bump};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::Error;

/// Stores every record, with one expiry, in one step.
#[derive(Debug, Clone)]
pub struct StoreAll<'k> {
    pub records: &'k [(&'k [u8], &'k [u8])],
    /// Absolute expiry (0 = never), stored with the values: nobody sees
    /// one of them without it.
    pub expires_at: u64,
}

impl StoreAll<'_> {
    /// `Done` (all stored), `TooLarge` (one is over `-I`: none stored),
    /// `NoMemory`, `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let c = srv.counters.here();
        let n = self.records.len() as u64;
        add(&c.cmd_set, n);
        for (_, v) in self.records {
            if let Err(too_large) = check_size(v.len(), srv.cfg.max_item_size) {
                bump(&c.store_too_large);
                return too_large;
            }
        }
        let desired: Vec<(&[u8], Option<&[u8]>)> =
            self.records.iter().map(|(k, v)| (*k, Some(*v))).collect();
        match srv
            .db
            .compare_exchange_multi_expiring(&[], &desired, self.expires_at)
        {
            Ok(()) => {
                add(&c.total_items, n);
                Outcome::Done
            }
            Err(e) => {
                match e {
                    Error::TooLarge { .. } => bump(&c.store_too_large),
                    Error::NoMemory { .. } => bump(&c.store_no_memory),
                    _ => {}
                }
                Outcome::from_error(e)
            }
        }
    }
}

/// Reads every key at one instant; with `remove`, also removes the present
/// ones in that same step.
#[derive(Debug, Clone)]
pub struct ReadAll<'k> {
    pub keys: &'k [&'k [u8]],
    pub remove: bool,
}

impl ReadAll<'_> {
    /// Each key's value (`None`: absent), or why not: `ReadOnly` (a
    /// removal on a read-only store), `Failed`.
    pub fn apply(&self, srv: &Server) -> Result<Vec<Option<Bytes>>, Outcome> {
        let values = self.snapshot(srv)?;
        let c = srv.counters.here();
        let found = values.iter().filter(|v| v.is_some()).count() as u64;
        let missing = values.len() as u64 - found;
        if self.remove {
            add(&c.delete_hits, found);
            add(&c.delete_misses, missing);
        } else {
            add(&c.cmd_get, values.len() as u64);
            add(&c.get_hits, found);
            add(&c.get_misses, missing);
        }
        Ok(values)
    }

    /// The values at one instant: read (and removed) under every involved
    /// shard's lock at once.
    fn snapshot(&self, srv: &Server) -> Result<Vec<Option<Bytes>>, Outcome> {
        srv.db
            .read_multi(self.keys, self.remove)
            .map_err(Outcome::from_error)
    }
}
