//! Per-shard storage. A `Store` knows how to keep records; the semantics every
//! engine shares (expiry, CAS, add/replace/append, increments) live once in
//! `shard.rs` on top of these primitives.

pub mod cache;
pub(crate) mod index;
pub(crate) mod leaf_tree;
mod line_array;
pub mod log;
pub(crate) mod memfile;
pub(crate) mod memory;
pub(crate) mod packed_tree;
pub(crate) mod positions;
pub(crate) mod segcache;
pub(crate) mod shapes;
pub(crate) mod slab_hash;
pub(crate) mod tagged_table;
pub(crate) mod write_back;

use crate::access::Access;
use crate::format::{self, Op};
use crate::name::Compression;
use crate::record::{Meta, Record};
use crate::status::Result;
use bytes::Bytes;
use index::Key;
use std::ops::Bound;

/// Counters a store reports for `inspect` and server stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Bytes of keys and values held (memory engines) or live in the file.
    pub bytes: u64,
    /// Records evicted by a capped cache.
    pub evictions: u64,
    /// Size of the data file(s) on disk.
    pub file_size: u64,
    /// Records a capped cache evicted, and expired records it dropped,
    /// that no client had fetched (memcached's `evicted_unfetched`,
    /// `expired_unfetched`: a cache too small, or items nobody reads).
    pub evicted_unfetched: u64,
    pub expired_unfetched: u64,
}

/// A file frozen for copying: the bytes `[0, end)` of `file` will not change.
pub(crate) struct Frozen {
    pub file: std::sync::Arc<dyn crate::io::DataFile>,
    pub end: u64,
}

/// An online rebuild of one shard, driven by `Db::rebuild`: most of the copy
/// happens without the shard's lock.
pub(crate) trait RebuildTask: Send {
    /// Copies the live records of the frozen part of the old file;
    /// `is_live(key, offset)` asks the store, under a short read lock.
    fn copy_frozen(&mut self, is_live: &mut dyn FnMut(&[u8], u64) -> bool) -> Result<()>;
    /// Copies the old file's bytes up to `end`, as they are, and indexes them.
    fn copy_tail(&mut self, end: u64) -> Result<()>;
    /// Old-file offset up to which everything has been copied.
    fn copied_to(&self) -> u64;
    /// Makes what has been copied so far durable, before the shard's lock
    /// is taken to finish: the finish then syncs only the last tail.
    fn sync_copied(&mut self) -> Result<()> {
        Ok(())
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

/// The primitives one shard of an engine provides. Called under the shard's
/// lock: `&self` methods under a read lock, `&mut self` under a write lock.
#[allow(clippy::len_without_is_empty)]
pub(crate) trait Store: Send + Sync {
    /// The record of `key`, expired or not.
    fn get(&self, key: &[u8]) -> Result<Option<Record>>;
    /// The metadata of `key` without reading the value.
    fn get_meta(&self, key: &[u8]) -> Result<Option<Meta>>;
    /// Calls `f` with the value and metadata of `key`'s record, borrowed
    /// where the store keeps them when it can; `false` when absent. For
    /// callers that copy the value out (the C ABI, the bindings): a file
    /// store then makes no `Bytes` for it.
    fn get_with(&self, key: &[u8], f: &mut dyn FnMut(&[u8], &Meta)) -> Result<bool> {
        match self.get(key)? {
            Some(r) => {
                f(&r.value, &r.meta);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn put(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()>;
    /// Stores a copy of `value`; stores override it to copy the bytes
    /// straight into their own representation.
    fn put_slice(&mut self, key: &[u8], value: &[u8], meta: Meta) -> Result<()> {
        self.put(key, Bytes::copy_from_slice(value), meta)
    }
    /// The compression with which this store encodes its records, when it
    /// takes a record encoded before its lock was taken (`put_encoded`);
    /// `None` (the default) when it does not.
    fn pre_encoding(&self) -> Option<crate::name::Compression> {
        None
    }
    /// Stores `record`, which `format::encode_record` wrote for `key` with
    /// the compression `pre_encoding` gives, and `header`, which it returned.
    /// Log stores append it as it is; by default (stores that keep values,
    /// not records) the value is taken back out of it and put.
    fn put_encoded(
        &mut self,
        key: &[u8],
        record: &[u8],
        header: &crate::format::RecordHeader,
    ) -> Result<()> {
        let at = usize::from(header.header_len) + key.len();
        let stored = record.get(at..).ok_or_else(|| {
            crate::status::Error::BrokenData("a record shorter than its header says".into())
        })?;
        match header.codec {
            crate::format::Codec::Raw => self.put_slice(key, stored, header.meta),
            codec => self.put_slice(key, &crate::format::decompress(codec, stored)?, header.meta),
        }
    }
    /// A client's fetch of `key`: the record and its access state before
    /// this fetch (`None` from stores that keep none); with `bump`, the
    /// fetch is recorded, as memcached's item bump.
    fn fetch(&self, key: &[u8], _bump: bool) -> Result<Option<(Record, Option<Access>)>> {
        Ok(self.get(key)?.map(|r| (r, None)))
    }
    /// `get_with` for a client's fetch (`fetch` with `bump`): the value
    /// borrowed, the fetch recorded where the store keeps access state.
    /// By default through `fetch` (correct for every store); stores that
    /// keep values where they can lend them override it.
    fn fetch_with(&self, key: &[u8], f: &mut dyn FnMut(&[u8], &Meta)) -> Result<bool> {
        match self.fetch(key, true)? {
            Some((r, _)) => {
                f(&r.value, &r.meta);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    /// The access state of `key` without changing it.
    fn access(&self, _key: &[u8]) -> Option<Access> {
        None
    }
    /// Gives `key` the metadata `meta` (a new expiry), keeping its value;
    /// counts as a fetch, as memcached's touch bumps the item. Stores with
    /// access state override it to keep that state.
    fn touch(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        self.put(key, value, meta)
    }
    /// Stores like `put`, keeping the item's access state (`Action::Update`).
    fn update(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        self.put(key, value, meta)
    }
    /// Removes `key`; false when it was absent.
    fn remove(&mut self, key: &[u8]) -> Result<bool>;
    /// Tells `watch` of every item this store evicts from now on (caches
    /// only; other stores evict nothing and ignore it).
    fn set_eviction_watch(&mut self, _watch: std::sync::Arc<dyn crate::evictions::EvictionWatch>) {}
    fn len(&self) -> u64;
    fn clear(&mut self) -> Result<()>;
    /// Hands buffered writes to the OS; with `hard`, also makes them durable.
    fn synchronize(&mut self, hard: bool) -> Result<()>;
    /// Stores written back whole (`.tkmt`): what `synchronize` would write,
    /// taken now, for the caller to write once it has released the shard's
    /// lock; `None` when there is nothing to write, or the store is of
    /// another kind.
    fn write_back(&mut self) -> Result<Option<write_back::WriteBack>> {
        Ok(None)
    }
    /// Hands buffered writes to the OS, for `Db::flush_dirty` after every
    /// batch of replies: cheap for a log (one `write`). Stores that can only
    /// write everything (a `.tkmt` snapshot) override it to do nothing, and
    /// write back on `synchronize` and `close` only.
    fn flush(&mut self) -> Result<()> {
        self.synchronize(false)
    }
    /// Synchronizes and releases resources; the store is not used afterwards.
    fn close(&mut self) -> Result<()>;
    /// Ordered stores: the nearest key from `from` in the direction; hash stores: `None`.
    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<Key>;
    /// Every key, in the store's natural order.
    fn keys(&self) -> Vec<Key>;
    /// Keys of a window of the store: those among the positions from
    /// `from` on that `budget` covers, and the position to go on from
    /// (`None`: done). Hash cursors walk a shard this way, holding its lock
    /// for one window at a time. By default the whole store is one window.
    fn keys_window(&self, from: usize, _budget: usize) -> (Vec<Key>, Option<usize>) {
        if from > 0 {
            return (Vec::new(), None);
        }
        (self.keys(), None)
    }
    /// The position whose window (`keys_window`) holds `key`, for a store
    /// walked in windows; `None` otherwise.
    fn window_of(&self, _key: &[u8]) -> Option<usize> {
        None
    }
    /// Keys of records expired at `now`, a window of the store at a time:
    /// those among the positions from `from` on that `budget` covers, and
    /// the position to go on from (`None`: done). A caller holds the
    /// shard's lock for one window, not for the whole store (a crawl of a
    /// cache of millions held writers for a second). By default
    /// `keys_window`'s keys whose records have expired.
    fn expired_keys(&self, now: u64, from: usize, budget: usize) -> (Vec<Key>, Option<usize>) {
        let (keys, next) = self.keys_window(from, budget);
        let expired = keys
            .into_iter()
            .filter(|k| matches!(self.get_meta(k), Ok(Some(m)) if m.is_expired(now)))
            .collect();
        (expired, next)
    }
    /// The highest CAS present, so a reopened shard continues above it.
    fn max_cas(&self) -> u64;
    fn stats(&self) -> StoreStats;

    /// Flushes buffered writes and returns the file to copy for a backup;
    /// `None` for stores without a log file.
    fn freeze(&mut self) -> Result<Option<Frozen>> {
        Ok(None)
    }
    /// Every record (for backups of in-memory stores).
    fn for_each_record(&self, f: &mut dyn FnMut(&[u8], Record)) -> Result<()> {
        for k in self.keys() {
            if let Some(r) = self.get(&k)? {
                f(&k, r);
            }
        }
        Ok(())
    }
    /// Begins an online rebuild; `None` when the store has nothing to compact.
    fn start_rebuild(&mut self) -> Result<Option<Box<dyn RebuildTask>>> {
        Ok(None)
    }
    /// True when the newest record of `key` is at `offset` of the current file.
    fn is_live_at(&self, _key: &[u8], _offset: u64) -> bool {
        false
    }
    /// Completes a rebuild begun by `start_rebuild`: copies the last tail and swaps files.
    fn finish_rebuild(&mut self, _task: Box<dyn RebuildTask>) -> Result<()> {
        Ok(())
    }
    /// Share of the file taken by live records (1.0 for memory stores).
    /// Where writers waiting for this store's lock can prefetch what their
    /// put will read first (`tagged_table::ProbeHint`); `None` when the
    /// store has nothing worth it.
    fn probe_hint(&self) -> Option<std::sync::Arc<tagged_table::ProbeHint>> {
        None
    }
    fn live_ratio(&self) -> f64 {
        1.0
    }
}

/// Every record of `store`, encoded as they follow a snapshot file's header:
/// one buffer, no allocation per record. For captures taken under a shard's
/// lock and written after it is released (backups, `.tkmt` write-back).
pub(crate) fn encode_records(store: &dyn Store, compression: Compression) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut failure = Ok(());
    store.for_each_record(&mut |k, r| {
        if failure.is_ok() {
            failure = format::encode_record(&mut body, Op::Put, k, &r.value, r.meta, compression)
                .map(drop);
        }
    })?;
    failure?;
    Ok(body)
}
