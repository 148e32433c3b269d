//! `Db`: an open database — shards of one engine, chosen by a name string.

use crate::activity::{Maintenance, ShardReport};
use crate::format::FileKind;
use crate::io::{FileSystem, RealFs};
use crate::lock::StoreLock;
use crate::name::{DbName, EngineKind, MAX_SHARDS};
use crate::record::{Meta, Record};
use crate::shard::{Action, Shard, ShardState};
use crate::status::{Error, Result};
use crate::store::cache::CacheStore;
use crate::store::log::index::CompactHash;
use crate::store::log::log_store::{LogOptions, LogStore};
use crate::store::log::offset_tree::OffsetTree;
use crate::store::memfile::MemFileStore;
use crate::store::packed_tree::PackedTree;
use crate::store::segcache::SegCache;
use crate::store::{Store, StoreStats};
use crate::ulog::{Change, UlogOp, UpdateListener};
use parking_lot::RwLockWriteGuard;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An open database. Thread-safe: share it with `Arc` and call from any thread.
pub struct Db {
    pub(crate) name: DbName,
    pub(crate) shards: Vec<Shard>,
    pub(crate) writable: bool,
    pub(crate) fs: Arc<dyn FileSystem>,
    /// Serializes backups and rebuilds: each works shard by shard, and two at
    /// once would only compete for the same files.
    pub(crate) maintenance: parking_lot::Mutex<()>,
    /// The shards are lock stripes of an in-memory database opened without
    /// `num_shards` (see `lock_stripes`): keys are spread by a fast
    /// in-process hash instead of the stable CRC that files need.
    striped: bool,
    stripe_seed: u64,
    /// The update log's hook (`set_update_listener`), also held by every
    /// shard; here for `clear`, flushes and stats.
    listener: std::sync::OnceLock<Arc<dyn UpdateListener>>,
    /// Set on a replica (`set_replica`): changes are refused as on a
    /// read-only database, except those `apply_update` replays.
    pub(crate) replica: std::sync::atomic::AtomicBool,
    /// Set by `close`: cursors then answer `Error::Precondition`, as a
    /// Tkrzw iterator of a closed database does, and the lock is gone.
    closed: std::sync::atomic::AtomicBool,
    /// The queue signal and timestamp of Tkrzw's calls (`tkrzw_state.rs`).
    pub(crate) tk: crate::tkrzw_state::TkrzwState,
    /// The store's advisory lock (`lock.rs`), for stores with files. Declared
    /// last: fields drop in order, so it is released only after every shard
    /// has been dropped (closed). `close` releases it earlier, after closing
    /// every shard, so that a program can reopen the store while an
    /// iterator (which holds the `Db`) is still alive, as Tkrzw's Close allows.
    lock: parking_lot::Mutex<Option<StoreLock>>,
}

/// Lock stripes of the plain in-memory engines (`*` without a cap, `+`) when
/// the name gives no `num_shards`: one reader-writer lock per stripe, so
/// writers to different keys run in parallel (Tkrzw's TinyDBM locks per
/// slot). Stripes are ordinary shards, so counts, cursors (heap merge for
/// `+`) and multi-key calls work as with `num_shards`; nothing is stored, so
/// their number can change between runs. CAS stays per key increasing, as
/// with any sharded database.
const MEM_STRIPES: usize = 8;

/// A lock stripe for `key`: a few instructions over its first and last 8
/// bytes (the index hashes the whole key anyway). Keys that agree on both
/// only share a stripe, which costs concurrency, never correctness.
#[inline]
fn stripe_of(key: &[u8], seed: u64) -> usize {
    let n = key.len();
    let (first, last) = match (key.first_chunk::<8>(), key.last_chunk::<8>()) {
        (Some(f), Some(l)) => (u64::from_le_bytes(*f), u64::from_le_bytes(*l)),
        _ => {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(key);
            (u64::from_le_bytes(w), 0)
        }
    };
    let h = (first ^ last.rotate_left(29) ^ n as u64).wrapping_mul(seed);
    (h >> 40) as usize
}

fn lock_stripes(name: &DbName) -> Option<usize> {
    let uncapped = name.cap_mem_size == 0 && name.cap_rec_num == 0;
    match name.kind {
        EngineKind::MemHash | EngineKind::MemTree if uncapped && !name.names_shards() => {
            Some(MEM_STRIPES)
        }
        _ => None,
    }
}

/// The least share of a cache's byte cap one lock stripe gets
/// (`cache_stripes`): each stripe evicts on its own, so this keeps 16
/// segments of 1 MiB per stripe, eviction as fine-grained as in one shard.
pub(crate) const MIN_CACHE_STRIPE: u64 = 16 << 20;

/// Lock stripes for a byte-capped in-memory hash (`*#capsiz=64m`, the
/// server's default store) written by `writers` threads, when the name
/// gives no `num_shards`: with one shard every writer takes the same lock
/// and every reader writes the same lock word, the first ceiling on many
/// cores. Each stripe gets an equal share of the cap, at least
/// `MIN_CACHE_STRIPE` and at least what one item may take (`max_item`,
/// but no more than half the cap: memcached refuses `-I` above half of
/// `-m`), so every item that fits the cache as memcached sizes it fits
/// its stripe. A record-count cap (`capcnt`) is left in one shard: an
/// uneven spread would keep fewer records than the count the name says.
pub(crate) fn cache_stripes(name: &DbName, writers: usize, max_item: u64) -> usize {
    let cap = name.cap_mem_size;
    if name.kind != EngineKind::MemHash || cap == 0 || name.cap_rec_num > 0 || name.names_shards() {
        return 1;
    }
    let least = MIN_CACHE_STRIPE.max(max_item.min(cap / 2));
    let fit = usize::try_from(cap / least).unwrap_or(usize::MAX);
    fit.min(writers).clamp(1, MAX_SHARDS)
}

pub use crate::paths::shard_path;

/// Records a hash index is sized for when the name gives no `num_buckets`,
/// like Tkrzw's default of ~1M buckets: growing a hash table rehashes and
/// re-places every slot. The reservation is zeroed lazily by the OS: pages
/// are touched as records fill them.
const DEFAULT_BUCKETS: usize = 1 << 20;

/// Most index slots reserved at open, all shards together (the index still
/// grows past it).
const MAX_PRESIZED_BUCKETS: usize = 1 << 22;

/// Most slots the table of a plain `*` reserves at open, all shards
/// together: 640 MB of address space, of which only pages that slots land
/// in become memory (the table is allocated zeroed).
const MAX_PRESIZED_SLOTS: usize = 1 << 26;

/// Items the table of a plain `*` (the segment cache without a cap), or of
/// a file hash engine, is sized for, per shard: ~1M when the name gives no `num_buckets`, else as
/// many slots as `num_buckets` says, as Tkrzw gives that many buckets (a
/// slot holds 11/16 of an item when just grown: 16/11 slots an item).
fn presized_items(num_buckets: usize, num_shards: usize) -> usize {
    let all = match num_buckets {
        0 => DEFAULT_BUCKETS,
        n => n.min(MAX_PRESIZED_SLOTS) * 11 / 16,
    };
    all / num_shards.max(1)
}

/// Index slots to reserve per shard: `num_buckets` (or the default) split
/// among the shards, the total capped. The cap is over all shards: a name
/// such as `*#bnum=1t,num_shards=5616` once reserved 4M slots in each shard
/// (found by the `db_name` fuzz target: 2.5 GB and rising at open).
fn presized_buckets(num_buckets: usize, num_shards: usize) -> usize {
    let wanted = match num_buckets {
        0 => DEFAULT_BUCKETS,
        n => n,
    };
    wanted.min(MAX_PRESIZED_BUCKETS) / num_shards.max(1)
}

fn open_store(
    name: &DbName,
    num_shards: usize,
    path: PathBuf,
    writable: bool,
    fs: &Arc<dyn FileSystem>,
) -> Result<Box<dyn Store>> {
    // `num_buckets` only pre-sizes the index: cap it, so a name such as
    // `*#bnum=1t` cannot abort the process on giant allocations.
    let buckets = presized_buckets(name.num_buckets, num_shards);
    let log = |kind| LogOptions {
        writable,
        kind,
        compression: name.compression,
        sync: name.sync,
        buckets,
    };
    Ok(match name.kind {
        EngineKind::MemHash if name.cap_mem_size > 0 || name.cap_rec_num > 0 => {
            // Each shard gets an equal share, rounded down so that the shards
            // together never exceed the cap; a nonzero cap never becomes 0,
            // which would mean "no cap".
            let n = num_shards as u64;
            let share = |cap: u64| if cap == 0 { 0 } else { (cap / n).max(1) };
            let (bytes, records) = (share(name.cap_mem_size), share(name.cap_rec_num));
            if name.segment_cache && !name.evictions {
                Box::new(SegCache::new(bytes, records).without_evictions())
            } else if name.segment_cache {
                Box::new(SegCache::new(bytes, records))
            } else {
                Box::new(CacheStore::new(bytes, records))
            }
        }
        EngineKind::MemHash => Box::new(SegCache::with_capacity(
            0,
            0,
            presized_items(name.num_buckets, num_shards),
        )),
        EngineKind::MemTree => Box::new(PackedTree::default()),
        EngineKind::MemFile => Box::new(MemFileStore::open(
            fs.clone(),
            path,
            writable,
            name.compression,
            buckets,
        )?),
        // Sized like the table of a plain `*`: the same tagged table.
        EngineKind::FileHash => Box::new(LogStore::<CompactHash>::open(
            fs.clone(),
            path,
            LogOptions {
                buckets: presized_items(name.num_buckets, num_shards),
                ..log(FileKind::HashLog)
            },
        )?),
        EngineKind::FileTree => Box::new(LogStore::<OffsetTree>::open(
            fs.clone(),
            path,
            log(FileKind::TreeLog),
        )?),
    })
}

/// `truncate=true`: the data file and its hint go before the store opens,
/// so it starts empty (a hint left behind would describe the old records).
fn remove_data_files(fs: &dyn FileSystem, path: &std::path::Path) -> Result<()> {
    for p in [path.to_path_buf(), crate::paths::hint_path(path)] {
        if fs.exists(&p) {
            fs.remove(&p)?;
        }
    }
    Ok(())
}

impl Db {
    /// Opens a database by name, e.g. `*#capsiz=64m` or `casket.tkh#num_shards=10`.
    pub fn open(name: &str, writable: bool) -> Result<Db> {
        Db::open_with_fs(name, writable, Arc::new(RealFs))
    }

    /// Opens over a given file system (tests pass a simulated one).
    pub fn open_with_fs(name: &str, writable: bool, fs: Arc<dyn FileSystem>) -> Result<Db> {
        Db::open_parsed(DbName::parse(name)?, writable, writable, fs, 1)
    }

    /// Opens a database that must exist already, even for writing (Tkrzw's
    /// `no_create`): maintenance of a mistyped name must fail, not make an
    /// empty store and report success on it. A missing store is
    /// `Error::NotFound`, naming the shard files of another `num_shards`
    /// when those exist (`existing::check`).
    pub fn open_existing(name: &str, writable: bool) -> Result<Db> {
        Db::open_parsed(DbName::parse(name)?, writable, false, Arc::new(RealFs), 1)
    }

    /// Opens a database that `writers` threads will write, as a server's
    /// workers do: a byte-capped cache named without `num_shards` is split
    /// into lock stripes (`cache_stripes`), items up to `max_item` bytes
    /// still fitting each. Any other name opens as `open` opens it.
    pub fn open_for_writers(
        name: &str,
        writable: bool,
        writers: usize,
        max_item: u64,
    ) -> Result<Db> {
        let name = DbName::parse(name)?;
        let stripes = cache_stripes(&name, writers, max_item);
        Db::open_parsed(name, writable, writable, Arc::new(RealFs), stripes)
    }

    /// `create`: a missing store is made (only a writer can); otherwise it
    /// is refused before anything, a lock file included, is created.
    /// `cache_stripes`: lock stripes asked for a capped cache (1: none).
    fn open_parsed(
        mut name: DbName,
        writable: bool,
        create: bool,
        fs: Arc<dyn FileSystem>,
        cache_stripes: usize,
    ) -> Result<Db> {
        crate::existing::resolve_shards(&*fs, &mut name);
        if name.kind.has_file() && !create {
            crate::existing::check(&*fs, &name)?;
        }
        // Locked before any file is read, so a writer never recovers (and
        // perhaps truncates) a file another process is writing.
        // Dropped on any error below, the lock removes the lock file this
        // open made; kept once the open has succeeded.
        let mut lock = if name.kind.has_file() {
            fs.lock_store(Path::new(&name.path), writable)?
        } else {
            None
        };
        if name.kind.has_file() {
            crate::backup::files::check_finished(&*fs, &name.path)?;
            if writable {
                // Under the exclusive lock: no backup of this store runs.
                if let Err(e) = crate::backup::files::sweep_unfinished(&*fs, &name.path) {
                    tracing::warn!("{}: unfinished backups not removed: {e}", name.path);
                }
            }
        }
        let stripes = lock_stripes(&name).or((cache_stripes > 1).then_some(cache_stripes));
        let n = stripes.unwrap_or(name.num_shards);
        let mut shards = Vec::with_capacity(n);
        for i in 0..n {
            let path = shard_path(&name.path, i, n);
            if writable && name.kind.has_file() {
                // Under the lock: no other process is writing them.
                crate::tmpfile::remove_leftovers(&*fs, &path);
            }
            let opened = if name.truncate && writable && name.kind.has_file() {
                remove_data_files(&*fs, &path)
            } else {
                Ok(())
            }
            .and_then(|()| open_store(&name, n, path, writable, &fs));
            match opened {
                Ok(store) => shards.push(Shard::new(store, name.persistent)),
                Err(e) => {
                    // The shards' files close before the lock goes.
                    drop(shards);
                    return Err(e);
                }
            }
        }
        if let Some(lock) = &mut lock {
            lock.keep();
        }
        Ok(Db {
            name,
            shards,
            writable,
            fs,
            maintenance: parking_lot::Mutex::new(()),
            striped: stripes.is_some(),
            stripe_seed: crate::store::log::file::new_generation() | 1,
            listener: std::sync::OnceLock::new(),
            replica: std::sync::atomic::AtomicBool::new(false),
            closed: std::sync::atomic::AtomicBool::new(false),
            tk: Default::default(),
            lock: parking_lot::Mutex::new(lock),
        })
    }

    /// Shards as opened: `num_shards`, or the lock stripes of an in-memory
    /// store named without it (`lock_stripes`, `cache_stripes`).
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// The parsed name this database was opened with.
    pub fn name(&self) -> &DbName {
        &self.name
    }

    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// True when iteration visits keys in order.
    pub fn is_ordered(&self) -> bool {
        self.name.kind.is_ordered()
    }

    /// The shard a key lives in. A stable hash (CRC32C), so files keep their
    /// keys across restarts.
    #[inline]
    pub(crate) fn shard_of(&self, key: &[u8]) -> &Shard {
        &self.shards[self.shard_index(key)]
    }

    /// The number of the shard holding `key` (no hashing with one shard).
    #[inline]
    pub fn shard_index(&self, key: &[u8]) -> usize {
        match self.shards.len() {
            1 => 0,
            n if self.striped => stripe_of(key, self.stripe_seed) % n,
            n => crc32c::crc32c(key) as usize % n,
        }
    }

    /// For maintenance that keeps the contents (rebuild, vacuum): a
    /// replica may run it.
    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::Precondition("the database is open read-only".into()))
        }
    }

    /// For a change a client asked for: refused on a read-only database
    /// and on a replica, with the same error (callers map `Precondition`
    /// to their protocol's read-only answer).
    pub(crate) fn check_client_write(&self) -> Result<()> {
        self.check_writable()?;
        if self.replica.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::Precondition(
                "the database is a replica: write to its master".into(),
            ));
        }
        Ok(())
    }

    /// The live record of `key` with its metadata, or `None`.
    pub fn get_record(&self, key: &[u8]) -> Result<Option<Record>> {
        self.shard_of(key).state.read().live_now(key)
    }

    /// Runs `f` on the live record of `key` (or `None`) under the shard's
    /// write lock and carries out the action it returns: the building block of
    /// every atomic read-modify-write (Tkrzw's record processor).
    /// Returns `f`'s result and the new CAS when the action stored a value.
    pub fn process<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(Option<&Record>) -> Result<(Action, R)>,
    ) -> Result<(R, Option<u64>)> {
        self.check_client_write()?;
        let shard = self.shard_of(key);
        let mut state = shard.write_for(key);
        let current = state.live_now(key)?;
        let (action, r) = f(current.as_ref())?;
        if action != Action::Keep {
            shard.mark_dirty();
        }
        let cas = state.apply(key, action)?;
        Ok((r, cas))
    }

    /// Like `process`, but `f` sees only the live record's metadata, so no
    /// value is read (a file engine answers from its index). For decisions
    /// that do not depend on the current value: add, replace, CAS, remove.
    pub fn process_meta<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(Option<&Meta>) -> Result<(Action, R)>,
    ) -> Result<(R, Option<u64>)> {
        self.check_client_write()?;
        let shard = self.shard_of(key);
        let mut state = shard.write_for(key);
        let current = state.live_meta_now(key)?;
        let (action, r) = f(current.as_ref())?;
        if action != Action::Keep {
            shard.mark_dirty();
        }
        let cas = state.apply(key, action)?;
        Ok((r, cas))
    }

    /// Stores `value` whatever the key holds now: no lookup before the write,
    /// and the store copies the bytes in its own way (a file engine appends
    /// them to its log without an intermediate buffer). Returns the new CAS.
    pub(crate) fn put_unconditionally(
        &self,
        key: &[u8],
        value: &[u8],
        flags: u32,
        expires_at: u64,
    ) -> Result<u64> {
        self.check_client_write()?;
        self.shard_of(key).put_slice(key, value, flags, expires_at)
    }

    /// Number of records (expired records not yet reclaimed included).
    pub fn count(&self) -> u64 {
        self.shards.iter().map(|s| s.state.read().store.len()).sum()
    }

    /// Removes every record. With an update listener every shard is locked
    /// first, so the one CLEAR logged sits between the same writes in the log
    /// as in the store.
    pub fn clear(&self) -> Result<()> {
        self.check_client_write()?;
        self.clear_unchecked()
    }

    /// `clear` without the client-write check (a replica replays a CLEAR).
    pub(crate) fn clear_unchecked(&self) -> Result<()> {
        let Some(listener) = self.listener.get() else {
            for s in &self.shards {
                let mut state = s.state.write();
                s.mark_dirty();
                state.before_change();
                state.store.clear()?;
            }
            return Ok(());
        };
        let mut guards: Vec<_> = self.shards.iter().map(|s| s.state.write()).collect();
        for (s, g) in self.shards.iter().zip(guards.iter_mut()) {
            s.mark_dirty();
            g.before_change();
            g.store.clear()?;
        }
        listener.on_change(&Change {
            op: UlogOp::Clear,
            key: b"",
            value: b"",
            flags: 0,
            expires_at: 0,
        })
    }

    /// Makes `listener` hear of every change from now on (the server's
    /// update log). Set once; a second call is refused.
    pub fn set_update_listener(&self, listener: Arc<dyn UpdateListener>) -> Result<()> {
        self.listener
            .set(listener.clone())
            .map_err(|_| Error::Precondition("an update listener is already set".into()))?;
        for s in &self.shards {
            s.state.write().listener = Some(listener.clone());
        }
        Ok(())
    }

    /// Makes `watch` hear of every item a cache shard evicts from now on
    /// (memcached's `watch evictions`); stores that never evict ignore it.
    pub fn set_eviction_watch(&self, watch: Arc<dyn crate::evictions::EvictionWatch>) {
        for s in &self.shards {
            s.state.write().store.set_eviction_watch(watch.clone());
        }
    }

    /// The update listener's counters (`ulog_bytes`, ...), empty without one.
    pub fn update_log_stats(&self) -> Vec<(&'static str, u64)> {
        self.listener.get().map(|l| l.stats()).unwrap_or_default()
    }

    /// Hands buffered writes to the OS, shard by shard; with `hard`, fsyncs
    /// them. The update log first, so it never holds less than the store.
    /// A log file is only flushed under its shard's lock and fsynced after
    /// it, a `.tkmt` snapshot only taken under it and written after it: a
    /// write and an fsync take milliseconds, and writers to the shard (with
    /// the server's worker threads that serve them) would wait for them.
    pub fn synchronize(&self, hard: bool) -> Result<()> {
        if let Some(l) = self.listener.get() {
            l.synchronize(hard)?;
        }
        for s in &self.shards {
            s.activity
                .timed(Maintenance::Sync, || self.synchronize_shard(s, hard))?;
        }
        self.tk.touch();
        Ok(())
    }

    fn synchronize_shard(&self, s: &Shard, hard: bool) -> Result<()> {
        let mut g = s.state.write();
        if let Some(w) = g.store.write_back()? {
            drop(g);
            return w.write();
        }
        match (hard && self.writable).then(|| g.store.freeze()) {
            Some(Ok(Some(frozen))) => {
                drop(g);
                frozen.file.sync()
            }
            Some(Err(e)) => Err(e),
            _ => g.store.synchronize(hard),
        }
    }

    /// Each shard's records, sizes and last maintenance runs, for
    /// monitoring.
    pub fn shard_reports(&self) -> Vec<ShardReport> {
        self.shards
            .iter()
            .map(|s| {
                let (records, st) = {
                    let g = s.state.read();
                    (g.store.len(), g.store.stats())
                };
                ShardReport {
                    records,
                    bytes: st.bytes,
                    file_size: st.file_size,
                    sync: s.activity.last(Maintenance::Sync),
                    backup: s.activity.last(Maintenance::Backup),
                    rebuild: s.activity.last(Maintenance::Rebuild),
                }
            })
            .collect()
    }

    /// Hands the buffered writes of every shard written since the last call
    /// to the OS (no fsync): after it, they survive the process being killed.
    /// Cheap when nothing was written: one atomic load per shard. The server
    /// calls it after every batch of replies; engines whose write-back is a
    /// whole snapshot (`.tkmt`) do nothing here (see `Store::flush`).
    ///
    /// A shard's flag is cleared under its write lock, and only once its
    /// flush succeeded: every write marks its shard under that lock, so a
    /// caller that finds the flag clear knows that its own writes were
    /// handed over (by whichever call cleared it), and a shard whose flush
    /// failed stays dirty, to be tried again by the next call. Every shard
    /// is tried; the first failure is returned.
    pub fn flush_dirty(&self) -> Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut first_err = None;
        if let Some(Err(e)) = self.listener.get().map(|l| l.flush()) {
            first_err = Some(e);
        }
        for s in &self.shards {
            if !s.dirty.load(Relaxed) {
                continue;
            }
            let mut state = s.state.write();
            if s.dirty.load(Relaxed) {
                match state.store.flush() {
                    Ok(()) => s.dirty.store(false, Relaxed),
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Synchronizes and closes every shard. Later calls that write fail.
    pub fn close(&self) -> Result<()> {
        let mut first_err = None;
        if let Some(Err(e)) = self.listener.get().map(|l| l.synchronize(true)) {
            first_err = Some(e);
        }
        for s in &self.shards {
            if let Err(e) = s.state.write().store.close() {
                first_err.get_or_insert(e);
            }
        }
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        // The shards' files are closed: another open may lock them now.
        drop(self.lock.lock().take());
        first_err.map_or(Ok(()), Err)
    }

    /// `Err(Precondition)` once `close` has been called.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(std::sync::atomic::Ordering::Acquire) {
            Err(Error::Precondition("the database is closed".into()))
        } else {
            Ok(())
        }
    }

    /// Counters summed over the shards.
    pub fn stats(&self) -> StoreStats {
        let mut t = StoreStats::default();
        for s in &self.shards {
            let x = s.state.read().store.stats();
            t.bytes += x.bytes;
            t.evictions += x.evictions;
            t.evicted_unfetched += x.evicted_unfetched;
            t.expired_unfetched += x.expired_unfetched;
            t.file_size += x.file_size;
        }
        t
    }

    /// Properties as name/value pairs, like Tkrzw's Inspect.
    pub fn inspect(&self) -> Vec<(String, String)> {
        let st = self.stats();
        let mut out = vec![
            // Tkrzw's class name, as Tkrzw's Inspect gives it; memstored's
            // own word for the engine beside it.
            ("class".to_string(), self.name.tkrzw_class().to_string()),
            ("engine".into(), self.name.kind.label().to_string()),
            ("path".into(), self.name.path.clone()),
            ("num_records".into(), self.count().to_string()),
            ("num_shards".into(), self.name.num_shards.to_string()),
            ("bytes".into(), st.bytes.to_string()),
            ("file_size".into(), st.file_size.to_string()),
            ("evictions".into(), st.evictions.to_string()),
            ("writable".into(), self.writable.to_string()),
            (
                "compression".into(),
                format!("{:?}", self.name.compression).to_lowercase(),
            ),
            (
                "sync".into(),
                format!("{:?}", self.name.sync).to_lowercase(),
            ),
        ];
        if self.name.cap_mem_size > 0 {
            out.push(("cap_mem_size".into(), self.name.cap_mem_size.to_string()));
        }
        if self.name.cap_rec_num > 0 {
            out.push(("cap_rec_num".into(), self.name.cap_rec_num.to_string()));
        }
        if self.name.persistent {
            out.push(("persistent".into(), "true".into()));
        }
        if !self.name.evictions {
            out.push(("disable_evictions".into(), "true".into()));
        }
        if !self.name.ignored.is_empty() {
            out.push(("ignored_params".into(), self.name.ignored.join(",")));
        }
        out
    }

    /// Locks the shards holding `keys` for writing, in shard order, so two
    /// multi-key calls can never deadlock.
    pub(crate) fn lock_shards(&self, keys: &[&[u8]]) -> LockedShards<'_> {
        let mut idx: Vec<usize> = keys.iter().map(|k| self.shard_index(k)).collect();
        idx.sort_unstable();
        idx.dedup();
        LockedShards {
            db: self,
            guards: idx
                .iter()
                .map(|&i| (i, self.shards[i].state.write()))
                .collect(),
        }
    }
}

/// Write guards over several shards, for calls atomic across shards.
pub(crate) struct LockedShards<'a> {
    db: &'a Db,
    guards: Vec<(usize, RwLockWriteGuard<'a, ShardState>)>,
}

impl LockedShards<'_> {
    /// The locked state of the shard holding `key`.
    pub(crate) fn state(&mut self, key: &[u8]) -> Result<&mut ShardState> {
        let want = self.db.shard_index(key);
        self.guards
            .iter_mut()
            .find(|(i, _)| *i == want)
            .map(|(_, g)| &mut **g)
            .ok_or_else(|| Error::InvalidArgument("key outside the locked set".into()))
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::error!("closing {}: {e}", self.name.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::MAX_SHARDS;

    /// The server's default store splits into one stripe per worker, each
    /// at least 16 MiB and big enough for half the cap's worth of item;
    /// every other name keeps the shards it says.
    #[test]
    fn a_capped_cache_is_striped_for_its_writers() {
        const M: u64 = 1 << 20;
        let stripes = |name: &str, writers, max_item| {
            cache_stripes(&DbName::parse(name).unwrap(), writers, max_item)
        };
        assert_eq!(stripes("*#capsiz=64m", 2, 64 * M), 2);
        assert_eq!(stripes("*#capsiz=64m", 64, 64 * M), 2);
        assert_eq!(stripes("*#capsiz=64m", 64, M), 4);
        assert_eq!(stripes("*#capsiz=1g", 64, M), 64);
        assert_eq!(stripes("*#capsiz=1g", 64, 64 * M), 16);
        assert_eq!(stripes("*#capsiz=1g", 1, M), 1);
        assert_eq!(stripes("*#capsiz=31m", 8, M), 1);
        assert_eq!(stripes("*#capsiz=1g,capcnt=1000", 8, M), 1);
        assert_eq!(stripes("*#capsiz=1g,num_shards=3", 8, M), 1);
        assert_eq!(stripes("*#capsiz=1g,num_shards=1", 8, M), 1);
        assert_eq!(stripes("*", 8, M), 1);
        assert_eq!(stripes("x.tkh#capsiz=1g", 8, M), 1);
    }

    /// A striped cache keeps the cap over all stripes, serves every key,
    /// and stores an item of almost half the cap (which memcached's `-I`
    /// allows at most) in the stripe its key falls in.
    #[test]
    fn a_striped_cache_holds_the_items_one_shard_would() {
        const M: u64 = 1 << 20;
        let db = Db::open_for_writers("*#capsiz=64m", true, 2, 64 * M).unwrap();
        assert_eq!((db.shard_count(), db.name().num_shards), (2, 1));
        for i in 0..1000u32 {
            db.set(format!("k{i}").as_bytes(), &i.to_le_bytes(), true)
                .unwrap();
        }
        let per_shard: Vec<u64> = db
            .shards
            .iter()
            .map(|s| s.state.read().store.len())
            .collect();
        assert!(per_shard.iter().all(|&n| n > 300), "{per_shard:?}");
        assert_eq!(db.count(), 1000);
        let big = vec![7u8; (31 * M) as usize];
        for key in [&b"big-a"[..], b"big-b", b"big-c"] {
            db.set(key, &big, true).unwrap();
            assert_eq!(db.get(key).unwrap().len(), big.len());
        }
        let unstriped = Db::open_for_writers("*#capsiz=64m,num_shards=1", true, 1, 64 * M).unwrap();
        assert_eq!(unstriped.shard_count(), 1);
    }

    /// Regression (fuzz target `db_name`): `*#num_buckets=1t` pre-sized the
    /// hash index with 2^40 slots and aborted the process.
    #[test]
    fn huge_num_buckets_only_presizes_up_to_a_cap() {
        for name in [
            "*#num_buckets=1t",
            "*#bnum=1g,num_shards=2",
            "+#bnum=1t",
            "*#bnum=1t,num_shards=5616",
        ] {
            let db = Db::open(name, true).unwrap();
            db.set(b"k", b"v", true).unwrap();
            assert_eq!(&db.get(b"k").unwrap()[..], b"v");
        }
    }

    /// Regression (fuzz target `db_name`, artifact oom-6ea413f0…):
    /// `#bnum=3055…#num_shards=5616` reserved the per-shard cap in every
    /// shard — 4M slots × 5616 shards — and ran out of memory at open. The
    /// cap now bounds all shards together.
    #[test]
    fn presizing_is_capped_over_all_shards() {
        for shards in [1, 2, 8, 100, 5616, MAX_SHARDS] {
            for buckets in [0, 1000, 1 << 20, 1 << 30, usize::MAX] {
                let per_shard = presized_buckets(buckets, shards);
                assert!(
                    per_shard * shards <= MAX_PRESIZED_BUCKETS,
                    "{buckets} buckets over {shards} shards: {per_shard} each"
                );
            }
        }
        for shards in [1, 2, 8, 100, 5616, MAX_SHARDS] {
            for buckets in [0, 1000, 1 << 20, 1 << 30, usize::MAX] {
                let slots = presized_items(buckets, shards) * 16 / 11;
                assert!(
                    slots * shards <= MAX_PRESIZED_SLOTS,
                    "{buckets} buckets over {shards} shards: {slots} slots each"
                );
            }
        }
        assert_eq!(presized_items(20_000_000, 8), 20_000_000 * 11 / 16 / 8);
        assert_eq!(presized_buckets(0, 8), DEFAULT_BUCKETS / 8);
        assert_eq!(presized_buckets(1000, 1), 1000);
    }
}
