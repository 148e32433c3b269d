//! Tkrzw's queue calls (tkrzw_dbm.h): `PushLast` stores a value under a key
//! made of the time, `PopFirst` takes the first record away. On an ordered
//! database the two make a FIFO queue.

use super::{Outcome, Store, StoreKind};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::Error;

/// Takes the first record (in key order on an ordered database, in the
/// cursor's order on a hash one) away and returns it. Another caller that
/// takes it first makes this one take the next.
#[derive(Debug, Clone, Default)]
pub struct PopFirst;

impl PopFirst {
    /// The key and value taken; `Err`: `NotFound` (no record), `ReadOnly`
    /// or `Failed`. The engine's `pop_first` without a wait: the gRPC
    /// port waits (without holding a worker) by itself.
    pub fn apply(&self, srv: &Server) -> Result<(Vec<u8>, Bytes), Outcome> {
        srv.db.pop_first(0.0).map_err(Outcome::from_error)
    }
}

/// Stores `value` under the time as Tkrzw's `PushLast` makes it: the wall
/// time in seconds (`wtime`, or the system clock when negative, to the
/// microsecond) times 10^8, plus a sequence number counted up while the key
/// is taken, computed in double precision and written as 8 big-endian bytes.
#[derive(Debug, Clone)]
pub struct PushLast {
    pub value: Bytes,
    pub wtime: f64,
}

impl PushLast {
    /// The key stored under; `Err`: `TooLarge`, `NoMemory`, `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Result<[u8; 8], Outcome> {
        let stored = memstored_engine::push_at(self.wtime, |key| {
            let cmd = Store {
                key: Bytes::copy_from_slice(key),
                value: self.value.clone(),
                kind: StoreKind::Add,
                flags: 0,
                expires_at: 0,
                cas: None,
            };
            match cmd.apply(srv) {
                Outcome::Stored { .. } => Ok(true),
                Outcome::NotStored(_) => Ok(false),
                o => Err(o),
            }
        })?;
        stored.ok_or(Outcome::Failed(Error::Duplication(
            "no free key near the time".into(),
        )))
    }
}
