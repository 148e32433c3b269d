//! `PATH.mem` / `PATH.tkmt`: an in-memory hash loaded from PATH at open and
//! written back whole, atomically (temporary file + rename), on synchronize
//! and close — Tkrzw's TinyDBM with a file. `Db::synchronize` takes the
//! records under the shard's lock and writes them after releasing it
//! (`Store::write_back`): the write and its fsync took tens of
//! milliseconds per shard, all that time stopping the shard's writers.

use super::index::{HashIndex, Index, Key};
use super::memory::{MemEntry, MemStore};
use super::{Store, StoreStats};
use crate::format::{self, FileKind, FILE_HEADER_SIZE};
use crate::io::FileSystem;
use crate::name::Compression;
use crate::record::{Meta, Record};
use crate::scan::scan;
use crate::snapshot;
use crate::status::{Error, Result};
use bytes::Bytes;
use parking_lot::Mutex;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the write-backs of one store share: they are numbered as taken,
/// written one at a time, and one older than what is on disk is skipped
/// (the newer holds everything it held).
#[derive(Default)]
struct WriteBacks {
    /// The number of the last write-back taken (under the shard's lock).
    taken: std::sync::atomic::AtomicU64,
    /// The number of the newest write-back on disk.
    written: Mutex<u64>,
    /// A write-back failed: the next synchronize writes again even if
    /// nothing changed since.
    failed: AtomicBool,
}

/// A whole snapshot captured under the shard's lock, to be written after
/// it (`Store::write_back`); or, when nothing changed, a wait for the
/// write-backs taken before it, which may still be under way.
pub struct WriteBack {
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    compression: Compression,
    max_cas: u64,
    /// The records, or `None` for a wait.
    body: Option<Vec<u8>>,
    number: u64,
    shared: Arc<WriteBacks>,
}

impl WriteBack {
    /// Writes the snapshot to a temporary file and renames it over PATH,
    /// unless a newer one is there already; a wait returns once the
    /// write-backs before it are on disk, or fails if one of them failed.
    pub fn write(self) -> Result<()> {
        let mut written = self.shared.written.lock();
        if *written >= self.number {
            return Ok(());
        }
        let Some(body) = &self.body else {
            return Err(Error::System(format!(
                "{}: an earlier write-back failed; the next synchronize writes it again",
                self.path.display()
            )));
        };
        let kind = FileKind::MemSnapshot;
        let (fs, path) = (&*self.fs, &self.path);
        match snapshot::write_records(fs, path, kind, self.max_cas, self.compression, body) {
            Ok(()) => {
                *written = self.number;
                Ok(())
            }
            Err(e) => {
                self.shared.failed.store(true, Ordering::Relaxed);
                Err(e)
            }
        }
    }
}

pub struct MemFileStore {
    mem: MemStore<HashIndex<MemEntry>>,
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    writable: bool,
    compression: Compression,
    /// True when memory differs from the file, so an idle sync writes nothing.
    dirty: bool,
    closed: bool,
    write_backs: Arc<WriteBacks>,
}

impl MemFileStore {
    pub fn open(
        fs: Arc<dyn FileSystem>,
        path: PathBuf,
        writable: bool,
        compression: Compression,
        buckets: usize,
    ) -> Result<Self> {
        let mut mem = MemStore::new(buckets);
        if fs.exists(&path) {
            let (file, header, len) =
                super::log::open_file(&fs, &path, false, FileKind::MemSnapshot)?;
            mem.raise_max_cas(header.max_cas);
            let end = scan(&*file, FILE_HEADER_SIZE as u64, len, true, &mut |s| {
                let stored = s.stored_value.unwrap_or_default();
                let value = format::decompress(s.header.codec, stored)?;
                mem.put(s.key, Bytes::from(value), s.header.meta)
            })?;
            if end.torn {
                return Err(Error::BrokenData(format!(
                    "{}: snapshot damaged at offset {}; salvage it with `memstore restore`",
                    path.display(),
                    end.valid_end
                )));
            }
        } else if !writable {
            return Err(Error::NotFound(format!(
                "{} does not exist",
                path.display()
            )));
        }
        let mut store = MemFileStore {
            mem,
            fs,
            path,
            writable,
            compression,
            dirty: false,
            closed: false,
            write_backs: Arc::default(),
        };
        if writable && !store.fs.exists(&store.path) {
            store.dirty = true;
            store.synchronize(true)?;
        }
        Ok(store)
    }

    fn check_writable(&mut self) -> Result<()> {
        if !self.writable || self.closed {
            return Err(Error::Precondition(format!(
                "{} is not open for writing",
                self.path.display()
            )));
        }
        self.dirty = true;
        Ok(())
    }
}

impl Store for MemFileStore {
    fn get(&self, key: &[u8]) -> Result<Option<Record>> {
        self.mem.get(key)
    }
    fn get_meta(&self, key: &[u8]) -> Result<Option<Meta>> {
        self.mem.get_meta(key)
    }
    fn put(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        self.check_writable()?;
        self.mem.put(key, value, meta)
    }
    fn put_slice(&mut self, key: &[u8], value: &[u8], meta: Meta) -> Result<()> {
        self.check_writable()?;
        self.mem.put_slice(key, value, meta)
    }
    fn remove(&mut self, key: &[u8]) -> Result<bool> {
        self.check_writable()?;
        self.mem.remove(key)
    }
    fn len(&self) -> u64 {
        self.mem.len()
    }
    fn clear(&mut self) -> Result<()> {
        self.check_writable()?;
        self.mem.clear()
    }
    fn synchronize(&mut self, _hard: bool) -> Result<()> {
        match self.write_back()? {
            Some(w) => w.write(),
            None => Ok(()),
        }
    }
    fn write_back(&mut self) -> Result<Option<WriteBack>> {
        if !self.writable || self.closed {
            return Ok(None);
        }
        let failed = self.write_backs.failed.swap(false, Ordering::Relaxed);
        let body = if self.dirty || failed {
            match snapshot::encode_records(self, self.compression) {
                Ok(body) => Some(body),
                Err(e) => {
                    self.write_backs.failed.store(failed, Ordering::Relaxed);
                    return Err(e);
                }
            }
        } else {
            None
        };
        let taken = &self.write_backs.taken;
        let number = match body {
            Some(_) => taken.fetch_add(1, Ordering::Relaxed) + 1,
            None => taken.load(Ordering::Relaxed),
        };
        self.dirty = false;
        Ok(Some(WriteBack {
            fs: self.fs.clone(),
            path: self.path.clone(),
            compression: self.compression,
            max_cas: self.mem.max_cas(),
            body,
            number,
            shared: self.write_backs.clone(),
        }))
    }
    /// Nothing: rewriting the whole snapshot after every batch of replies
    /// cost the square of the data (issue 12: 3,000 sets wrote 240 MB). The
    /// snapshot is written on synchronize (`--sync-interval`, SIGHUP, RPC)
    /// and at close; a crash loses what was written since.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        if !self.closed {
            self.synchronize(true)?;
            self.closed = true;
        }
        Ok(())
    }
    fn seek(&self, _from: Bound<&[u8]>, _forward: bool) -> Option<Key> {
        None
    }
    fn keys(&self) -> Vec<Key> {
        self.mem.keys()
    }
    /// Straight off the index: a backup encodes a shard's records under its
    /// lock, and a lookup per key would double that time.
    fn for_each_record(&self, f: &mut dyn FnMut(&[u8], Record)) -> Result<()> {
        self.mem.index.for_each(&mut |k, e| {
            f(
                k,
                Record {
                    value: e.value.to_bytes(),
                    meta: e.meta,
                },
            )
        });
        Ok(())
    }
    fn max_cas(&self) -> u64 {
        self.mem.max_cas()
    }
    fn stats(&self) -> StoreStats {
        StoreStats {
            file_size: 0,
            ..self.mem.stats()
        }
    }
}

impl Drop for MemFileStore {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::error!("{}: closing failed: {e}", self.path.display());
        }
    }
}
