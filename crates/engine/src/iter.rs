//! Cursors (Tkrzw's iterators). An ordered cursor remembers its key, not a
//! position in a structure, so writes by other threads never invalidate it:
//! every move is a fresh seek across the shards, which also merges sharded
//! ordered databases into one global order. A hash cursor walks a snapshot of
//! one shard's keys at a time.

use crate::db::Db;
use crate::record::{now_secs, Record};
use crate::shard::Action;
use crate::status::{Error, Result};
use crate::store::index::Key;
use bytes::Bytes;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::Bound;

enum Position {
    /// Not on a record: before `first`, or past either end.
    Nowhere,
    /// On this key of an ordered database (it may have been removed since).
    At(Key),
    /// On `keys[idx]` of hash shard `shard`; `keys` is a window of the
    /// shard's keys, snapshotted on entry, and `next` where the shard's
    /// next window starts (`Store::keys_window`).
    Hash {
        shard: usize,
        keys: Vec<Key>,
        idx: usize,
        next: Option<usize>,
    },
}

/// A movable position over a database's records.
pub struct Cursor<'a> {
    db: &'a Db,
    pos: Position,
    /// Heap-merge state of ordered cursors, valid for steps in its direction
    /// from the current position.
    merge: Option<Merge>,
}

/// The next key of each shard beyond the current position, in one direction.
struct Merge {
    forward: bool,
    heap: BinaryHeap<Head>,
}

/// A shard's next key; ordered so the heap's top is the nearest key in the
/// cursor's direction (smallest going forward, largest going backward).
struct Head {
    key: Key,
    shard: usize,
    forward: bool,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Head {}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        let by_key = self.key.cmp(&other.key);
        if self.forward {
            by_key.reverse()
        } else {
            by_key
        }
    }
}

/// Table groups (8 slots each) a hash cursor takes from a shard per lock.
const WINDOW: usize = 1024;

fn not_positioned() -> Error {
    Error::NotFound("the cursor is not on a record".into())
}

fn hash_only(what: &str) -> Error {
    Error::NotImplemented(format!("{what} needs an ordered database"))
}

impl Db {
    /// A new cursor, not yet on a record; call `first`, `last` or a `jump`.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor {
            db: self,
            pos: Position::Nowhere,
            merge: None,
        }
    }
}

/// A cursor's place without its database: for a walk that goes on across
/// calls, each of which has the database at hand but cannot keep a borrow
/// of it (a dump written out as its client reads it). `Db::resume_cursor`
/// makes it a cursor again; on another database its moves are meaningless
/// but safe.
pub struct CursorPlace {
    pos: Position,
    merge: Option<Merge>,
}

impl Db {
    /// The cursor `detach` left at `place`.
    pub fn resume_cursor(&self, place: CursorPlace) -> Cursor<'_> {
        Cursor {
            db: self,
            pos: place.pos,
            merge: place.merge,
        }
    }
}

impl<'a> Cursor<'a> {
    /// Lets go of the database, keeping the place (`Db::resume_cursor`).
    pub fn detach(self) -> CursorPlace {
        CursorPlace {
            pos: self.pos,
            merge: self.merge,
        }
    }

    /// The nearest live key from `from` in the direction, across all shards:
    /// seeks every shard once and keeps their next keys in a heap, so the
    /// following steps in the same direction cost one seek each (`advance`).
    fn seek(&mut self, from: Bound<Key>, forward: bool) -> Result<Option<Key>> {
        let bound = match &from {
            Bound::Included(k) => Bound::Included(&k[..]),
            Bound::Excluded(k) => Bound::Excluded(&k[..]),
            Bound::Unbounded => Bound::Unbounded,
        };
        let mut heap = BinaryHeap::with_capacity(self.db.shards.len());
        for (shard, s) in self.db.shards.iter().enumerate() {
            if let Some(key) = s.state.read().store.seek(bound, forward) {
                heap.push(Head {
                    key,
                    shard,
                    forward,
                });
            }
        }
        self.merge = Some(Merge { forward, heap });
        self.pop_live()
    }

    /// The next live key from the merge heap; refills the popped shard's head.
    fn pop_live(&mut self) -> Result<Option<Key>> {
        let now = now_secs();
        let Some(merge) = self.merge.as_mut() else {
            return Ok(None);
        };
        while let Some(Head {
            key,
            shard,
            forward,
        }) = merge.heap.pop()
        {
            // A place resumed on another database may name a shard it lacks.
            let Some(s) = self.db.shards.get(shard) else {
                continue;
            };
            let state = s.state.read();
            if let Some(next) = state.store.seek(Bound::Excluded(&key), forward) {
                merge.heap.push(Head {
                    key: next,
                    shard,
                    forward,
                });
            }
            if state.live_meta(&key, now)?.is_some() {
                return Ok(Some(key));
            }
        }
        Ok(None)
    }

    /// One step from the current key `k`: from the heap when it was built in
    /// this direction, else by a fresh seek.
    fn advance(&mut self, k: Key, forward: bool) -> Result<Option<Key>> {
        match &self.merge {
            Some(m) if m.forward == forward => self.pop_live(),
            _ => self.seek(Bound::Excluded(k), forward),
        }
    }

    fn place(&mut self, key: Option<Key>) {
        self.pos = key.map_or(Position::Nowhere, Position::At);
    }

    /// Enters hash shards from `shard` on (at `keys[idx]` of a window
    /// already taken, whose shard goes on at `next`), stopping at the first
    /// live key. Each window is taken and checked under one read lock of
    /// its shard, never the whole shard's keys at once: a cursor over a
    /// cache of millions (`lru_crawler metadump`) held writers for half a
    /// second.
    fn enter_hash(
        &mut self,
        mut shard: usize,
        keys: Option<Vec<Key>>,
        mut idx: usize,
        next: Option<usize>,
    ) -> Result<()> {
        let now = now_secs();
        let mut window = keys.map(|k| (k, next));
        while shard < self.db.shards.len() {
            let state = self.db.shards[shard].state.read();
            let (ks, after) = match window.take() {
                Some(w) => w,
                None => state.store.keys_window(0, WINDOW),
            };
            while idx < ks.len() {
                if state.live_meta(&ks[idx], now)?.is_some() {
                    drop(state);
                    self.pos = Position::Hash {
                        shard,
                        keys: ks,
                        idx,
                        next: after,
                    };
                    return Ok(());
                }
                idx += 1;
            }
            idx = 0;
            match after {
                Some(at) => window = Some(state.store.keys_window(at, WINDOW)),
                None => shard += 1,
            }
        }
        self.pos = Position::Nowhere;
        Ok(())
    }

    /// Moves to the first record (in key order on ordered databases).
    pub fn first(&mut self) -> Result<()> {
        self.db.check_open()?;
        if self.db.is_ordered() {
            let k = self.seek(Bound::Unbounded, true)?;
            self.place(k);
            Ok(())
        } else {
            self.enter_hash(0, None, 0, None)
        }
    }

    /// Moves to the last record (ordered databases).
    pub fn last(&mut self) -> Result<()> {
        self.db.check_open()?;
        if !self.db.is_ordered() {
            return Err(hash_only("last"));
        }
        let k = self.seek(Bound::Unbounded, false)?;
        self.place(k);
        Ok(())
    }

    /// Moves to the first record whose key is `key` or after it; on hash
    /// databases, to `key` itself (`NotFound` if absent).
    pub fn jump(&mut self, key: &[u8]) -> Result<()> {
        self.db.check_open()?;
        if self.db.is_ordered() {
            return self.jump_upper(key, true);
        }
        let shard = self.db.shard_index(key);
        let (keys, next) = {
            let state = self.db.shards[shard].state.read();
            match state.store.window_of(key) {
                Some(at) => state.store.keys_window(at, WINDOW),
                None => (state.store.keys(), None),
            }
        };
        let idx = keys
            .iter()
            .position(|k| &k[..] == key)
            .ok_or_else(|| Error::NotFound("no such record".into()))?;
        self.enter_hash(shard, Some(keys), idx, next)
    }

    /// Moves to the last record before `key` (or at it, when `inclusive`).
    pub fn jump_lower(&mut self, key: &[u8], inclusive: bool) -> Result<()> {
        self.db.check_open()?;
        if !self.db.is_ordered() {
            return Err(hash_only("jump_lower"));
        }
        let b = if inclusive {
            Bound::Included(key.into())
        } else {
            Bound::Excluded(key.into())
        };
        let k = self.seek(b, false)?;
        self.place(k);
        Ok(())
    }

    /// Moves to the first record after `key` (or at it, when `inclusive`).
    pub fn jump_upper(&mut self, key: &[u8], inclusive: bool) -> Result<()> {
        self.db.check_open()?;
        if !self.db.is_ordered() {
            return Err(hash_only("jump_upper"));
        }
        let b = if inclusive {
            Bound::Included(key.into())
        } else {
            Bound::Excluded(key.into())
        };
        let k = self.seek(b, true)?;
        self.place(k);
        Ok(())
    }

    /// Moves to the next record; past the end the cursor is on nothing.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<()> {
        self.db.check_open()?;
        match std::mem::replace(&mut self.pos, Position::Nowhere) {
            Position::Nowhere => Err(not_positioned()),
            Position::At(k) => {
                let k = self.advance(k, true)?;
                self.place(k);
                Ok(())
            }
            Position::Hash {
                shard,
                keys,
                idx,
                next,
            } => self.enter_hash(shard, Some(keys), idx + 1, next),
        }
    }

    /// Moves to the previous record (ordered databases).
    pub fn previous(&mut self) -> Result<()> {
        self.db.check_open()?;
        // A refused move leaves the cursor where it was.
        match &self.pos {
            Position::Nowhere => Err(not_positioned()),
            Position::At(k) => {
                let k = self.advance(k.clone(), false)?;
                self.place(k);
                Ok(())
            }
            Position::Hash { .. } => Err(hash_only("previous")),
        }
    }

    /// The key the cursor is on.
    pub fn key(&self) -> Result<Vec<u8>> {
        self.db.check_open()?;
        match &self.pos {
            Position::Nowhere => Err(not_positioned()),
            Position::At(k) => Ok(k.to_vec()),
            Position::Hash { keys, idx, .. } => keys
                .get(*idx)
                .map(|k| k.to_vec())
                .ok_or_else(not_positioned),
        }
    }

    /// The key and record the cursor is on; `NotFound` if it was removed meanwhile.
    pub fn record(&self) -> Result<(Vec<u8>, Record)> {
        let key = self.key()?;
        let rec = self
            .db
            .get_record(&key)?
            .ok_or_else(|| Error::NotFound("the record was removed".into()))?;
        Ok((key, rec))
    }

    /// The key and value the cursor is on.
    pub fn get(&self) -> Result<(Vec<u8>, Bytes)> {
        self.record().map(|(k, r)| (k, r.value))
    }

    /// Replaces the value of the current record, keeping its flags and expiry.
    pub fn set(&self, value: &[u8]) -> Result<()> {
        let key = self.key()?;
        let v = Bytes::copy_from_slice(value);
        self.db
            .process(&key, |cur| {
                let r = cur.ok_or_else(|| Error::NotFound("the record was removed".into()))?;
                Ok((
                    Action::Put {
                        value: v,
                        flags: r.meta.flags,
                        expires_at: r.meta.expires_at,
                    },
                    (),
                ))
            })
            .map(|_| ())
    }

    /// Removes the current record and moves to the next one.
    pub fn remove(&mut self) -> Result<()> {
        let key = self.key()?;
        self.db.remove(&key)?;
        self.next()
    }

    /// Returns the current key and value and moves on: a convenient loop step.
    /// `None` past the end.
    pub fn step(&mut self) -> Result<Option<(Vec<u8>, Bytes)>> {
        loop {
            if matches!(self.pos, Position::Nowhere) {
                return Ok(None);
            }
            let got = self.get();
            self.next()?;
            match got {
                Ok(kv) => return Ok(Some(kv)),
                Err(Error::NotFound(_)) => continue,
                Err(e) => return Err(e),
            }
        }
    }
}
