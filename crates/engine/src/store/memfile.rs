//! `PATH.mem` / `PATH.tkmt`: an in-memory hash loaded from PATH at open and
//! written back whole, atomically (temporary file + rename), on synchronize
//! and close — Tkrzw's TinyDBM with a file. `Db::synchronize` takes the
//! records under the shard's lock and writes them after releasing it
//! (`Store::write_back`): the write and its fsync took tens of
//! milliseconds per shard, all that time stopping the shard's writers.

use super::index::{Index, Key};
use super::memory::{MemEntry, MemStore};
use super::shapes::HashIndex;
use super::write_back::{WriteBack, WriteBacks};
use super::{Store, StoreStats};
use crate::format::{self, FileKind, FILE_HEADER_SIZE};
use crate::io::FileSystem;
use crate::name::Compression;
use crate::record::{Meta, Record};
use crate::scan::scan;
use crate::status::{Error, Result};
use bytes::Bytes;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub(crate) struct MemFileStore {
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
    pub(crate) fn open(
        fs: Arc<dyn FileSystem>,
        path: PathBuf,
        writable: bool,
        compression: Compression,
        buckets: usize,
    ) -> Result<Self> {
        let mut mem = MemStore::new(buckets);
        if fs.exists(&path) {
            let (file, header, len) =
                super::log::file::open_file(&fs, &path, false, FileKind::MemSnapshot)?;
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
            match super::encode_records(self, self.compression) {
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
