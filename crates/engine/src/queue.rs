//! Tkrzw's queue calls (tkrzw_dbm.h): `push_last` stores a value under a
//! key made of the time, `pop_first` takes the first record away. On an
//! ordered database the two make a FIFO queue. The server's PushLast and
//! PopFirst and the bindings all go through here.

use crate::db::Db;
use crate::status::{Error, Result};
pub use crate::tkrzw_state::wall_time;
use bytes::Bytes;
use std::time::{Duration, Instant};

/// Sequence numbers tried before giving up (Tkrzw tries for ever; in double
/// precision a present-day time needs up to 32 to reach the next key).
const MAX_SEQ: u64 = 1 << 20;

/// The key of a time and a sequence number, as Tkrzw's `PushLast` computes
/// it: seconds times 10^8 plus the sequence number, in double precision,
/// written as 8 big-endian bytes.
pub fn time_key(wtime: f64, seq: u64) -> [u8; 8] {
    ((wtime * 100_000_000.0 + seq as f64) as i64 as u64).to_be_bytes()
}

/// Tries the keys of `wtime` (the wall time when negative) in sequence
/// until `add` stores one (`Ok(true)`; `Ok(false)`: the key is taken) and
/// returns it; `None` when no key near the time is free. The server stores
/// through its own command here, the library through `Db::push_last`.
pub fn push_at<E>(
    wtime: f64,
    mut add: impl FnMut(&[u8; 8]) -> std::result::Result<bool, E>,
) -> std::result::Result<Option<[u8; 8]>, E> {
    let wtime = if wtime < 0.0 { wall_time() } else { wtime };
    for seq in 0..MAX_SEQ {
        let key = time_key(wtime, seq);
        if add(&key)? {
            return Ok(Some(key));
        }
    }
    Ok(None)
}

impl Db {
    /// Stores `value` under a key made of `wtime` (seconds; the wall time
    /// when negative), as Tkrzw's `PushLast`; returns the key. With
    /// `notify`, wakes the `pop_first` calls waiting on this database.
    pub fn push_last(&self, value: &[u8], wtime: f64, notify: bool) -> Result<[u8; 8]> {
        let key = push_at(wtime, |key| match self.add(key, value) {
            Ok(()) => Ok(true),
            Err(Error::Duplication(_)) => Ok(false),
            Err(e) => Err(e),
        })?
        .ok_or_else(|| Error::Duplication("no free key near the time".into()))?;
        if notify {
            self.tk.queue.notify();
        }
        Ok(key)
    }

    /// Takes the first record (in key order on an ordered database, in the
    /// cursor's order on a hash one) away and returns it, as Tkrzw's
    /// `PopFirst`. When there is none and `retry_wait` (seconds) is
    /// positive, waits up to that long (infinity: for ever) for a
    /// `push_last` with `notify`, then tries again; `NotFound` when none
    /// came. Another caller that takes a record first makes this one take
    /// the next.
    pub fn pop_first(&self, retry_wait: f64) -> Result<(Vec<u8>, Bytes)> {
        let deadline = if retry_wait > 0.0 {
            Duration::try_from_secs_f64(retry_wait)
                .ok()
                .and_then(|d| Instant::now().checked_add(d))
        } else {
            Some(Instant::now())
        };
        loop {
            let seen = self.tk.queue.pushes();
            match self.pop_first_now() {
                Err(Error::NotFound(_)) if deadline.is_none_or(|d| Instant::now() < d) => {
                    self.tk.queue.wait_past(seen, deadline)
                }
                r => return r,
            }
        }
    }

    /// One attempt of `pop_first`.
    fn pop_first_now(&self) -> Result<(Vec<u8>, Bytes)> {
        let mut c = self.cursor();
        c.first()?;
        if !self.writable {
            // Tkrzw's ShardDBM (a name with `num_shards`) finds no first
            // record before it asks to write it; its shards refuse first.
            if c.key().is_err() && self.name.names_shards() {
                return Err(Error::NotFound("no record".into()));
            }
            return Err(Error::Precondition("the database is open read-only".into()));
        }
        loop {
            let key = c.key()?;
            match self.remove_and_get(&key) {
                Ok(value) => return Ok((key, value)),
                Err(Error::NotFound(_)) => c.next()?,
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn pushed_values_pop_in_time_order() {
        let db = Db::open("+", true).unwrap();
        let k1 = db.push_last(b"one", 100.0, false).unwrap();
        let k2 = db.push_last(b"two", 100.0, false).unwrap();
        let k0 = db.push_last(b"zero", 99.0, false).unwrap();
        assert_eq!(k1, time_key(100.0, 0));
        assert!(k1 < k2 && k0 < k1);
        assert_eq!(
            db.pop_first(0.0).unwrap(),
            (k0.to_vec(), Bytes::from("zero"))
        );
        assert_eq!(db.pop_first(0.0).unwrap().1, Bytes::from("one"));
        assert_eq!(db.pop_first(0.0).unwrap().1, Bytes::from("two"));
        assert!(db.pop_first(0.0).unwrap_err().is_not_found());
        assert!(db.push_last(b"now", -1.0, false).unwrap() > k2);
    }

    #[test]
    fn pop_first_waits_for_a_notifying_push() {
        let db = Arc::new(Db::open("+", true).unwrap());
        let start = Instant::now();
        assert!(db.pop_first(0.05).unwrap_err().is_not_found());
        assert!(start.elapsed() >= Duration::from_millis(50));
        let waiter = {
            let db = db.clone();
            std::thread::spawn(move || db.pop_first(30.0))
        };
        // The waiter may or may not have started waiting; either way it
        // finds the record (a push before its attempt is popped directly).
        db.push_last(b"v", -1.0, true).unwrap();
        let (_, v) = waiter.join().unwrap().unwrap();
        assert_eq!(v, Bytes::from("v"));
    }

    #[test]
    fn pop_first_on_a_read_only_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.tkt");
        let name = path.to_str().unwrap();
        Db::open(name, true)
            .unwrap()
            .push_last(b"v", 1.0, false)
            .unwrap();
        let ro = Db::open(name, false).unwrap();
        assert!(matches!(ro.pop_first(0.0), Err(Error::Precondition(_))));
    }
}
