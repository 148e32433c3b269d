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
    /// or `Failed`.
    pub fn apply(&self, srv: &Server) -> Result<(Vec<u8>, Bytes), Outcome> {
        let mut c = srv.db.cursor();
        c.first().map_err(Outcome::from_error)?;
        if !srv.db.is_writable() {
            // Tkrzw's ShardDBM (a name with `num_shards`) finds no first
            // record before it asks to write it; its shards refuse first.
            let empty = c.key().is_err();
            return Err(if empty && srv.db.name().names_shards() {
                Outcome::NotFound
            } else {
                Outcome::ReadOnly
            });
        }
        loop {
            let Ok(key) = c.key() else {
                return Err(Outcome::NotFound);
            };
            match srv.db.remove_and_get(&key) {
                Ok(value) => return Ok((key, value)),
                Err(Error::NotFound(_)) => c.next().map_err(|_| Outcome::NotFound)?,
                Err(e) => return Err(Outcome::from_error(e)),
            }
        }
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

/// Sequence numbers tried before giving up (Tkrzw tries for ever; in double
/// precision a present-day time needs up to 32 to reach the next key).
const MAX_SEQ: u64 = 1 << 20;

/// The key of a time and a sequence number, as Tkrzw computes it.
pub fn time_key(wtime: f64, seq: u64) -> [u8; 8] {
    ((wtime * 100_000_000.0 + seq as f64) as i64 as u64).to_be_bytes()
}

/// The wall time as Tkrzw's `GetWallTime` gives it: whole microseconds.
fn wall_time() -> f64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    since.as_micros() as f64 / 1_000_000.0
}

impl PushLast {
    /// The key stored under; `Err`: `TooLarge`, `NoMemory`, `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Result<[u8; 8], Outcome> {
        let wtime = if self.wtime < 0.0 {
            wall_time()
        } else {
            self.wtime
        };
        for seq in 0..MAX_SEQ {
            let key = time_key(wtime, seq);
            let cmd = Store {
                key: Bytes::copy_from_slice(&key),
                value: self.value.clone(),
                kind: StoreKind::Add,
                flags: 0,
                expires_at: 0,
                cas: None,
            };
            match cmd.apply(srv) {
                Outcome::Stored { .. } => return Ok(key),
                Outcome::NotStored(_) => continue,
                o => return Err(o),
            }
        }
        Err(Outcome::Failed(Error::Duplication(
            "no free key near the time".into(),
        )))
    }
}
