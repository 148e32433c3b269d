//! Plain in-memory stores (`*` uncapped, `+`): values are kept as shared
//! buffers, so a lookup hands out the stored bytes without copying.

use super::index::{Index, Key, SmallValue};
use super::{Store, StoreStats};
use crate::record::{Meta, Record};
use crate::status::Result;
use bytes::Bytes;
use std::marker::PhantomData;
use std::ops::Bound;

/// One record held in memory.
#[derive(Debug, Clone)]
pub(crate) struct MemEntry {
    pub value: SmallValue,
    pub meta: Meta,
}

/// An in-memory store over any index shape.
pub(crate) struct MemStore<I: Index<MemEntry>> {
    pub(crate) index: I,
    /// Sum of key and value lengths, for `inspect`.
    bytes: u64,
    max_cas: u64,
    _p: PhantomData<MemEntry>,
}

impl<I: Index<MemEntry>> MemStore<I> {
    pub(crate) fn new(buckets: usize) -> Self {
        MemStore {
            index: I::with_capacity(buckets),
            bytes: 0,
            max_cas: 0,
            _p: PhantomData,
        }
    }
}

impl<I: Index<MemEntry>> MemStore<I> {
    /// Makes later CAS values start above `cas` (a snapshot's high-water mark).
    pub(crate) fn raise_max_cas(&mut self, cas: u64) {
        self.max_cas = self.max_cas.max(cas);
    }
}

impl<I: Index<MemEntry>> MemStore<I> {
    #[inline]
    fn put_value(&mut self, key: &[u8], value: SmallValue, meta: Meta) {
        self.max_cas = self.max_cas.max(meta.cas);
        let added = (key.len() + value.len()) as u64;
        if let Some(old) = self.index.insert(key, MemEntry { value, meta }) {
            self.bytes -= (key.len() + old.value.len()) as u64;
        }
        self.bytes += added;
    }
}

impl<I: Index<MemEntry>> Store for MemStore<I> {
    fn get(&self, key: &[u8]) -> Result<Option<Record>> {
        Ok(self.index.get(key).map(|e| Record {
            value: e.value.to_bytes(),
            meta: e.meta,
        }))
    }
    fn get_meta(&self, key: &[u8]) -> Result<Option<Meta>> {
        Ok(self.index.get(key).map(|e| e.meta))
    }
    fn put(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        self.put_value(key, SmallValue::from_bytes(value), meta);
        Ok(())
    }
    fn put_slice(&mut self, key: &[u8], value: &[u8], meta: Meta) -> Result<()> {
        self.put_value(key, SmallValue::from_slice(value), meta);
        Ok(())
    }
    fn remove(&mut self, key: &[u8]) -> Result<bool> {
        match self.index.remove(key) {
            Some(old) => {
                self.bytes -= (key.len() + old.value.len()) as u64;
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn len(&self) -> u64 {
        self.index.len() as u64
    }
    fn clear(&mut self) -> Result<()> {
        self.index.clear();
        self.bytes = 0;
        Ok(())
    }
    fn synchronize(&mut self, _hard: bool) -> Result<()> {
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        Ok(())
    }
    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<Key> {
        self.index.seek(from, forward).map(Into::into)
    }
    fn keys(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.index.len());
        self.index.for_each(&mut |k, _| out.push(k.into()));
        out
    }
    fn max_cas(&self) -> u64 {
        self.max_cas
    }
    fn stats(&self) -> StoreStats {
        StoreStats {
            bytes: self.bytes,
            ..Default::default()
        }
    }
}
