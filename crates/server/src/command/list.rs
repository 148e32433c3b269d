//! Listing records in key order: Tkrzw-RPC's `list` ([`List`]) and the
//! text protocol's walks over every record, `lru_crawler metadump` and
//! `stats cachedump` ([`Scan`]).

use super::Outcome;
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::{CursorPlace, Error, Record};
use std::ops::ControlFlow;

/// Where a [`List`] starts.
#[derive(Debug, Clone, Copy)]
pub enum Move<'k> {
    /// The first record.
    First,
    /// The record of this key (on an ordered database, the first at or after it).
    Jump(&'k [u8]),
    /// The last record before the key (`true`: or at it); ordered databases only.
    JumpLower(&'k [u8], bool),
    /// The first record after the key (`true`: or at it); ordered databases only.
    JumpUpper(&'k [u8], bool),
}

/// Up to `items` records from `from` on, in the database's order, whose keys
/// and values hold at most `max_bytes` bytes.
#[derive(Debug, Clone)]
pub struct List<'k> {
    pub from: Move<'k>,
    pub items: usize,
    pub max_bytes: usize,
}

/// What a [`List`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Listing {
    /// The records, `(key, value)`; none when a hash database's jump found
    /// no such key.
    Records(Vec<(Vec<u8>, Bytes)>),
    /// The records would hold over `max_bytes` bytes.
    TooLarge,
}

impl List<'_> {
    pub fn apply(&self, srv: &Server) -> Result<Listing, Outcome> {
        let mut c = srv.db.cursor();
        let placed = match self.from {
            Move::First => c.first(),
            Move::Jump(k) => c.jump(k),
            Move::JumpLower(k, inclusive) => c.jump_lower(k, inclusive),
            Move::JumpUpper(k, inclusive) => c.jump_upper(k, inclusive),
        };
        match placed {
            Ok(()) => {}
            // A hash database's jump to a missing key: nothing to list.
            Err(Error::NotFound(_)) => return Ok(Listing::Records(Vec::new())),
            Err(e) => return Err(Outcome::from_error(e)),
        }
        let mut out = Vec::new();
        let mut bytes = 0usize;
        while out.len() < self.items {
            match c.step() {
                Ok(Some((k, v))) => {
                    bytes = bytes.saturating_add(k.len().saturating_add(v.len()));
                    if bytes > self.max_bytes {
                        return Ok(Listing::TooLarge);
                    }
                    out.push((k, v));
                }
                Ok(None) => break,
                Err(e) => return Err(Outcome::from_error(e)),
            }
        }
        Ok(Listing::Records(out))
    }
}

/// Where a [`Scan`] starts.
pub enum ScanFrom {
    /// The first record.
    First,
    /// Where an earlier scan stopped.
    Place(CursorPlace),
}

/// A walk over every record in cursor order, a window at a time, reading
/// each live record as it goes (no counters, no LRU bump).
pub struct Scan {
    pub from: ScanFrom,
}

impl Scan {
    /// Calls `visit` with each key and its record (`None`: removed since
    /// the cursor passed it, or expired) until `visit` breaks or the records
    /// run out. After a break the cursor moves on by one and its place is
    /// returned, to go on from with [`ScanFrom::Place`]; `None`: the end.
    pub fn apply(
        self,
        srv: &Server,
        mut visit: impl FnMut(&[u8], Option<Record>) -> ControlFlow<()>,
    ) -> Option<CursorPlace> {
        let now = memstored_engine::now_secs();
        let mut cursor = match self.from {
            ScanFrom::First => {
                let mut c = srv.db.cursor();
                c.first().ok()?;
                c
            }
            ScanFrom::Place(p) => srv.db.resume_cursor(p),
        };
        // `key` fails once the cursor is past the last record.
        while let Ok(key) = cursor.key() {
            let live = match srv.db.get_record(&key) {
                Ok(Some(r)) if !r.meta.is_expired(now) => Some(r),
                _ => None,
            };
            let flow = visit(&key, live);
            if cursor.next().is_err() {
                return None;
            }
            if flow.is_break() {
                return Some(cursor.detach());
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memstored_engine::Db;
    use std::sync::Arc;

    fn server(n: usize) -> Arc<Server> {
        let db = Arc::new(Db::open("*", true).unwrap());
        for i in 0..n {
            db.set(format!("k{i:03}").as_bytes(), b"v", true).unwrap();
        }
        Server::standalone(db)
    }

    /// Scans in windows of `per` records; every key seen and the windows.
    fn scan_all(srv: &Server, per: usize) -> (Vec<Vec<u8>>, usize) {
        let (mut seen, mut windows, mut from) = (Vec::new(), 0, ScanFrom::First);
        loop {
            windows += 1;
            let mut n = 0;
            let place = Scan { from }.apply(srv, |key, live| {
                assert!(live.is_some(), "{key:?}");
                seen.push(key.to_vec());
                n += 1;
                if n == per {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            });
            match place {
                Some(p) => from = ScanFrom::Place(p),
                None => return (seen, windows),
            }
        }
    }

    #[test]
    fn a_scan_in_windows_visits_every_record_once() {
        let (mut seen, windows) = scan_all(&server(25), 4);
        assert_eq!(seen.len(), 25);
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 25);
        assert_eq!(windows, 7);
        assert_eq!(scan_all(&server(0), 4), (Vec::new(), 1));
    }

    #[test]
    fn a_list_stops_at_its_items_and_refuses_past_its_bytes() {
        let srv = server(25);
        let list = |items, max_bytes| {
            List {
                from: Move::First,
                items,
                max_bytes,
            }
            .apply(&srv)
        };
        match list(10, usize::MAX) {
            Ok(Listing::Records(r)) => assert_eq!(r.len(), 10),
            o => panic!("{o:?}"),
        }
        // Each record holds 5 bytes (a 4-byte key, a 1-byte value).
        assert_eq!(list(25, 5 * 25 - 1), Ok(Listing::TooLarge));
        match list(usize::MAX, 5 * 25) {
            Ok(Listing::Records(r)) => assert_eq!(r.len(), 25),
            o => panic!("{o:?}"),
        }
    }
}
