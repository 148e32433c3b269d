//! Per-shard storage. A `Store` knows how to keep records; the semantics every
//! engine shares (expiry, CAS, add/replace/append, increments) live once in
//! `shard.rs` on top of these primitives.

pub mod cache;
pub mod index;
pub mod log;
pub mod memfile;
pub mod memory;

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
}

/// The primitives one shard of an engine provides. Called under the shard's
/// lock: `&self` methods under a read lock, `&mut self` under a write lock.
#[allow(clippy::len_without_is_empty)]
pub trait Store: Send + Sync {
    /// The record of `key`, expired or not.
    fn get(&self, key: &[u8]) -> Result<Option<Record>>;
    /// The metadata of `key` without reading the value.
    fn get_meta(&self, key: &[u8]) -> Result<Option<Meta>>;
    fn put(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()>;
    /// Removes `key`; false when it was absent.
    fn remove(&mut self, key: &[u8]) -> Result<bool>;
    fn len(&self) -> u64;
    fn clear(&mut self) -> Result<()>;
    /// Hands buffered writes to the OS; with `hard`, also makes them durable.
    fn synchronize(&mut self, hard: bool) -> Result<()>;
    /// Synchronizes and releases resources; the store is not used afterwards.
    fn close(&mut self) -> Result<()>;
    /// Ordered stores: the nearest key from `from` in the direction; hash stores: `None`.
    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<Key>;
    /// Every key, in the store's natural order.
    fn keys(&self) -> Vec<Key>;
    /// The highest CAS present, so a reopened shard continues above it.
    fn max_cas(&self) -> u64;
    fn stats(&self) -> StoreStats;
}
