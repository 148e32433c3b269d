//! A backup's claim on one shard and what it captures (`mod.rs` says how a
//! backup uses them). Below the shard, which holds a claim and fills it
//! before a change, and below the backup that takes the claims.

use crate::name::Compression;
use crate::status::Result;
use crate::store::{Frozen, Store};
use parking_lot::Mutex;

/// What a shard contributes to a backup, captured at the backup's instant.
pub(super) enum Captured {
    /// A log file's prefix `[0, end)`, which never changes: copied with no lock.
    Log(Frozen),
    /// An in-memory shard's records, encoded as a snapshot file's body.
    Records { body: Vec<u8>, max_cas: u64 },
}

/// A backup's claim on one shard: set at the backup's instant, filled by
/// whichever captures the shard first, the backup or a writer.
pub(crate) struct Claim {
    pub(super) compression: Compression,
    pub(super) captured: Mutex<Option<Result<Captured>>>,
}

impl Claim {
    /// Captures `store` as it is now, for a writer about to change it.
    pub(crate) fn capture(&self, store: &mut dyn Store) {
        let frozen = store.freeze();
        self.fill(frozen, store);
    }

    /// Stores the capture: the frozen log, or else `store`'s records.
    pub(super) fn fill(&self, frozen: Result<Option<Frozen>>, store: &dyn Store) {
        let captured = match frozen {
            Ok(Some(f)) => Ok(Captured::Log(f)),
            Ok(None) => encode_records(store, self.compression),
            Err(e) => Err(e),
        };
        *self.captured.lock() = Some(captured);
    }
}

/// An in-memory shard's records and CAS mark, as they are now.
fn encode_records(store: &dyn Store, compression: Compression) -> Result<Captured> {
    Ok(Captured::Records {
        body: crate::store::encode_records(store, compression)?,
        max_cas: store.max_cas(),
    })
}
