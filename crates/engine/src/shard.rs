//! One shard: a store behind a reader-writer lock, plus the CAS counter.
//! Every read-modify-write of the library goes through `ShardState::apply`,
//! so expiry and CAS are handled in one place for every engine.

use crate::backup::claim::Claim;
use crate::format::{self, Op};
use crate::name::Compression;
use crate::record::{Meta, Record};
use crate::status::{Error, Result};
use crate::store::tagged_table::ProbeHint;
use crate::store::Store;
use crate::ulog::{Change, UlogOp, UpdateListener};
use bytes::Bytes;
use parking_lot::{RwLock, RwLockWriteGuard};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// What a record processor wants done with the record it was shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Leave the record as it is.
    Keep,
    /// Store this value with these flags and expiry; a new CAS is assigned.
    Put {
        value: Bytes,
        flags: u32,
        expires_at: u64,
    },
    /// Like `Put`, but the record stays the same item to memcached's
    /// access bookkeeping (fetched bit, last access): memcached's in-place
    /// changes, an `incr` whose result is no longer than the old value and
    /// meta `md I`. Stores without that state treat it as `Put`.
    Update {
        value: Bytes,
        flags: u32,
        expires_at: u64,
    },
    /// `Put` under the CAS given instead of the next one: memcached's meta
    /// `E` flag (a client's own version numbers) and `md x`, which keeps the
    /// item's CAS. The shard's counter is left as it is, as memcached's is.
    PutWithCas {
        value: Bytes,
        flags: u32,
        expires_at: u64,
        cas: u64,
    },
    /// Remove the record.
    Remove,
    /// Give the record a new expiry, keeping its value, flags and CAS
    /// (memcached's touch does not change an item's CAS).
    Touch { expires_at: u64 },
}

impl Action {
    /// This action storing under the CAS `cas` when one is given (a `Put`
    /// or an `Update` becomes a `PutWithCas`; the others are unchanged).
    pub fn with_cas(self, cas: Option<u64>) -> Action {
        match (self, cas) {
            (
                Action::Put {
                    value,
                    flags,
                    expires_at,
                }
                | Action::Update {
                    value,
                    flags,
                    expires_at,
                },
                Some(cas),
            ) => Action::PutWithCas {
                value,
                flags,
                expires_at,
                cas,
            },
            (action, _) => action,
        }
    }
}

/// The CAS counter of one shard. An atomic rather than a field under the
/// shard's lock, so that a plain set can take its CAS, and encode its record
/// with it, before it waits for the lock (`Shard::put_slice`).
///
/// A set that took its CAS before the lock and finds a later CAS already
/// applied takes a new one under the lock (`ShardState::applied_cas`).
#[derive(Debug)]
pub(crate) struct CasCounter(AtomicU64);

impl CasCounter {
    pub(crate) fn new(last: u64) -> Self {
        CasCounter(AtomicU64::new(last))
    }

    /// Takes the next CAS. A file may carry any CAS (fuzz: db_file_open
    /// found u64::MAX); refuse the write rather than overflow.
    pub(crate) fn next(&self) -> Result<u64> {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| c.checked_add(1))
            .map(|last| last + 1)
            .map_err(|_| {
                Error::BrokenData(
                    "the CAS counter is exhausted (a stored record has CAS 2^64-1)".into(),
                )
            })
    }
}

pub(crate) struct ShardState {
    pub store: Box<dyn Store>,
    /// Every change takes the next CAS from it; shared with `Shard`.
    cas: Arc<CasCounter>,
    /// The highest CAS applied under this lock. A set that took its CAS
    /// before the lock (`Shard::put_slice`) and finds it not above this
    /// takes a new one, so that one key's CAS grows in the order its
    /// writes are applied (memcached's `ms ... I` compares CAS by age).
    applied_cas: u64,
    /// `ktopts=p`: every write is stored without an expiry.
    persistent: bool,
    /// Told of every change after it is applied (the update log), under
    /// this shard's write lock so the log's order is the apply order.
    pub listener: Option<Arc<dyn UpdateListener>>,
    /// A running backup's claim on this shard, not yet captured
    /// (`backup.rs`): the first change captures the shard before it is made.
    pub(crate) backup: Option<Arc<Claim>>,
}

impl ShardState {
    pub(crate) fn new(store: Box<dyn Store>, persistent: bool, cas: Arc<CasCounter>) -> Self {
        ShardState {
            store,
            applied_cas: cas.0.load(Ordering::Relaxed),
            cas,
            persistent,
            listener: None,
            backup: None,
        }
    }

    /// Called before every change of the store: a backup that claimed this
    /// shard at its instant and has not captured it yet gets it captured now,
    /// as it was, so the backup never waits for writers nor they for it.
    #[inline]
    pub(crate) fn before_change(&mut self) {
        if let Some(claim) = self.backup.take() {
            claim.capture(&mut *self.store);
        }
    }

    /// Tells the listener, if any, of a change just applied.
    #[inline]
    fn notify(
        &self,
        op: UlogOp,
        key: &[u8],
        value: &[u8],
        flags: u32,
        expires_at: u64,
    ) -> Result<()> {
        match &self.listener {
            None => Ok(()),
            Some(l) => l.on_change(&Change {
                op,
                key,
                value,
                flags,
                expires_at,
            }),
        }
    }

    /// The expiry a write stores: none on a persistent database.
    #[inline]
    fn expiry(&self, expires_at: u64) -> u64 {
        expiry(self.persistent, expires_at)
    }

    /// The record of `key` unless absent or expired at `now`.
    pub(crate) fn live(&self, key: &[u8], now: u64) -> Result<Option<Record>> {
        Ok(self.store.get(key)?.filter(|r| !r.meta.is_expired(now)))
    }

    /// The record of `key` unless absent or expired now (the clock is read
    /// only when the record has an expiry).
    pub(crate) fn live_now(&self, key: &[u8]) -> Result<Option<Record>> {
        Ok(self.store.get(key)?.filter(|r| !r.meta.is_expired_now()))
    }

    /// The metadata of `key` unless absent or expired now.
    pub(crate) fn live_meta_now(&self, key: &[u8]) -> Result<Option<Meta>> {
        Ok(self.store.get_meta(key)?.filter(|m| !m.is_expired_now()))
    }

    /// The metadata of `key` unless absent or expired at `now`.
    pub(crate) fn live_meta(&self, key: &[u8], now: u64) -> Result<Option<Meta>> {
        Ok(self.store.get_meta(key)?.filter(|m| !m.is_expired(now)))
    }

    /// Takes the next CAS, for a change applied under this lock.
    fn next_cas(&mut self) -> Result<u64> {
        let cas = self.cas.next()?;
        self.applied_cas = self.applied_cas.max(cas);
        Ok(cas)
    }

    /// Stores a copy of `value` under the next CAS, which it returns.
    pub(crate) fn put_slice(
        &mut self,
        key: &[u8],
        value: &[u8],
        flags: u32,
        expires_at: u64,
    ) -> Result<u64> {
        self.before_change();
        let cas = self.next_cas()?;
        let expires_at = self.expiry(expires_at);
        self.store.put_slice(
            key,
            value,
            Meta {
                flags,
                expires_at,
                cas,
            },
        )?;
        self.notify(UlogOp::Set, key, value, flags, expires_at)?;
        Ok(cas)
    }

    /// Carries out an action on `key`; returns the new CAS of a put.
    pub(crate) fn apply(&mut self, key: &[u8], action: Action) -> Result<Option<u64>> {
        if !matches!(action, Action::Keep) {
            self.before_change();
        }
        match action {
            Action::Keep => Ok(None),
            Action::Put {
                ref value,
                flags,
                expires_at,
            }
            | Action::Update {
                ref value,
                flags,
                expires_at,
            }
            | Action::PutWithCas {
                ref value,
                flags,
                expires_at,
                ..
            } => {
                let in_place = matches!(action, Action::Update { .. });
                let value = value.clone();
                let cas = match action {
                    Action::PutWithCas { cas, .. } => cas,
                    _ => self.next_cas()?,
                };
                let expires_at = self.expiry(expires_at);
                let logged = self.listener.is_some().then(|| value.clone());
                let meta = Meta {
                    flags,
                    expires_at,
                    cas,
                };
                if in_place {
                    self.store.update(key, value, meta)?;
                } else {
                    self.store.put(key, value, meta)?;
                }
                if let Some(v) = logged {
                    self.notify(UlogOp::Set, key, &v, flags, expires_at)?;
                }
                Ok(Some(cas))
            }
            Action::Remove => {
                if self.store.remove(key)? {
                    self.notify(UlogOp::Remove, key, b"", 0, 0)?;
                }
                Ok(None)
            }
            Action::Touch { expires_at } => {
                let expires_at = self.expiry(expires_at);
                if let Some(r) = self.store.get(key)? {
                    let flags = r.meta.flags;
                    let logged = self.listener.is_some().then(|| r.value.clone());
                    self.store.touch(
                        key,
                        r.value,
                        Meta {
                            expires_at,
                            ..r.meta
                        },
                    )?;
                    if let Some(v) = logged {
                        self.notify(UlogOp::Set, key, &v, flags, expires_at)?;
                    }
                }
                Ok(None)
            }
        }
    }
}

/// The expiry a write stores: none on a persistent database.
#[inline]
fn expiry(persistent: bool, expires_at: u64) -> u64 {
    if persistent {
        0
    } else {
        expires_at
    }
}

/// Records of a longer key and value are encoded under the lock
/// (`Shard::put_slice`): the copy a pre-encoded record costs, and the
/// buffer it would keep per thread, are not worth it for them.
const PRE_ENCODE_MAX: usize = 16 * 1024;

thread_local! {
    /// Where `Shard::put_slice` encodes a record before taking the lock.
    static PRE_ENCODED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Rounds of `Shard::spin_for_write` before parking: each round is a try
/// and up to 16 pauses, so about 2,000 pauses, some tens of microseconds at
/// most, the time of a few dozen writes.
const WRITE_SPIN_ROUNDS: usize = 128;

/// Threads that may spin for one shard's write lock at once (the rest park).
const MAX_WRITE_SPINNERS: u32 = 1;

/// Aligned to two cache lines, so that writers to neighbouring shards (lock
/// stripes) do not bounce each other's lock word (false sharing).
#[repr(align(128))]
pub(crate) struct Shard {
    pub state: RwLock<ShardState>,
    /// Set by every write, cleared by `Db::flush_dirty`: lets the server hand
    /// buffered writes to the OS after each batch without touching idle shards.
    /// Set and cleared only under `state`'s write lock (see `flush_dirty`).
    pub dirty: AtomicBool,
    /// Threads now in `spin_for_write` for this shard.
    spinners: AtomicU32,
    /// Its last sync, backup and rebuild (`Db::shard_reports`).
    pub activity: crate::activity::Activity,
    /// The store's probe hint, if it gives one (`write_for`).
    probe: Option<Arc<ProbeHint>>,
    /// The compression with which the store encodes records, if it takes
    /// records encoded before its lock (`Store::pre_encoding`).
    pre_encoding: Option<Compression>,
    cas: Arc<CasCounter>,
    persistent: bool,
}

impl Shard {
    pub(crate) fn new(store: Box<dyn Store>, persistent: bool) -> Self {
        let probe = store.probe_hint();
        let pre_encoding = store.pre_encoding();
        let cas = Arc::new(CasCounter::new(store.max_cas()));
        Shard {
            probe,
            pre_encoding,
            persistent,
            state: RwLock::new(ShardState::new(store, persistent, cas.clone())),
            cas,
            dirty: AtomicBool::new(false),
            spinners: AtomicU32::new(0),
            activity: Default::default(),
        }
    }

    /// Stores a copy of `value` under the next CAS, which it returns. Where
    /// the store allows it, the record is encoded (its CRC taken, its value
    /// compressed) before the lock, and only copied into the log under it:
    /// two writers of one file then wait for each other for that much less.
    pub(crate) fn put_slice(
        &self,
        key: &[u8],
        value: &[u8],
        flags: u32,
        expires_at: u64,
    ) -> Result<u64> {
        let pre_encoding = self
            .pre_encoding
            .filter(|_| key.len() + value.len() <= PRE_ENCODE_MAX);
        if let Some(compression) = pre_encoding {
            // The index's line loads while the record is encoded.
            self.prefetch_for(key);
            let put = |buf: &RefCell<Vec<u8>>| {
                let (state, meta) =
                    self.put_encoded(buf, key, value, flags, expires_at, compression)?;
                // Outside the buffer's borrow, still under the lock (the
                // listener may write elsewhere through this thread's buffer).
                state.notify(UlogOp::Set, key, value, flags, meta.expires_at)?;
                Ok(meta.cas)
            };
            // Unless this thread's locals are being torn down, or in use.
            if let Ok(Some(done)) = PRE_ENCODED.try_with(|b| {
                // (Its own statement: the probe's borrow ends with it.)
                let free = b.try_borrow_mut().is_ok();
                free.then(|| put(b))
            }) {
                return done;
            }
        }
        let mut state = self.write_for(key);
        self.mark_dirty();
        state.put_slice(key, value, flags, expires_at)
    }

    /// `put_slice`'s record encoded in `buf` before the lock, then stored
    /// under it; returns the lock, held, and the record's metadata.
    fn put_encoded(
        &self,
        buf: &RefCell<Vec<u8>>,
        key: &[u8],
        value: &[u8],
        flags: u32,
        expires_at: u64,
        compression: Compression,
    ) -> Result<(RwLockWriteGuard<'_, ShardState>, Meta)> {
        let mut record = buf.borrow_mut();
        record.clear();
        let mut meta = Meta {
            flags,
            expires_at: expiry(self.persistent, expires_at),
            cas: self.cas.next()?,
        };
        let mut header =
            format::encode_record(&mut record, Op::Put, key, value, meta, compression)?;
        let mut state = self.write();
        if meta.cas <= state.applied_cas {
            // A write that took a later CAS was applied first: encode
            // again, under the lock, with a CAS above it.
            meta.cas = state.next_cas()?;
            record.clear();
            header = format::encode_record(&mut record, Op::Put, key, value, meta, compression)?;
        }
        state.applied_cas = meta.cas;
        self.mark_dirty();
        state.before_change();
        state.store.put_encoded(key, &record, &header)?;
        Ok((state, meta))
    }

    /// The write lock, for a write of `key`: first starts loading what the
    /// write will read first, so that with two writers that memory access
    /// overlaps the other's turn instead of lengthening this one
    /// (`ProbeHint`).
    #[inline]
    pub(crate) fn write_for(&self, key: &[u8]) -> RwLockWriteGuard<'_, ShardState> {
        self.prefetch_for(key);
        self.write()
    }

    /// Starts loading what a write of `key` will read first (`ProbeHint`).
    #[inline]
    fn prefetch_for(&self, key: &[u8]) {
        if let Some(p) = &self.probe {
            p.prefetch(key);
        }
    }

    /// The write lock, spinning a little before parking.
    #[inline]
    fn write(&self) -> RwLockWriteGuard<'_, ShardState> {
        if let Some(guard) = self.spin_for_write() {
            return guard;
        }
        self.state.write()
    }

    /// Waits a little for the write lock by spinning before `write` would
    /// park this thread. A write holds the lock for a few hundred
    /// nanoseconds, and parking_lot gives up spinning after a few dozen
    /// cycles: then every hand-over between two writers cost a futex wake
    /// and two context switches (a quarter of a two-writer run's time in
    /// `perf`). Looks before it tries, so the waiter does not keep taking
    /// the lock's line from the holder.
    ///
    /// Only `MAX_WRITE_SPINNERS` threads spin at a time; the others park at
    /// once. Sixteen writers all spinning on one lock word took the line
    /// from the holder so often that sixteen threads wrote a file hash 15x
    /// slower than one (docs/bench/scaling.md); parked, they cost nothing
    /// while they wait.
    #[inline]
    fn spin_for_write(&self) -> Option<RwLockWriteGuard<'_, ShardState>> {
        if let Some(guard) = self.state.try_write() {
            return Some(guard);
        }
        if self.spinners.fetch_add(1, Ordering::Relaxed) >= MAX_WRITE_SPINNERS {
            self.spinners.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        let guard = self.spin_rounds();
        self.spinners.fetch_sub(1, Ordering::Relaxed);
        guard
    }

    #[inline]
    fn spin_rounds(&self) -> Option<RwLockWriteGuard<'_, ShardState>> {
        for _ in 0..WRITE_SPIN_ROUNDS {
            if let Some(guard) = self.state.try_write() {
                return Some(guard);
            }
            for _ in 0..16 {
                if !self.state.is_locked() {
                    break;
                }
                std::hint::spin_loop();
            }
        }
        None
    }

    #[inline]
    pub(crate) fn mark_dirty(&self) {
        // Load first: a store on every write would keep the line bouncing
        // between threads even when the flag is already set.
        if !self.dirty.load(Ordering::Relaxed) {
            self.dirty.store(true, Ordering::Relaxed);
        }
    }
}
