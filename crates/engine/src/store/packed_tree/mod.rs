//! The in-memory tree engine (`+`, `*.tkt` without a file): the ordered
//! leaves of `leaf_tree` with each leaf's records packed into one byte
//! buffer, in the segment cache's item format (`segcache/item.rs`: a lead
//! byte, varint lengths, flags and expiry only when set, the CAS, the key,
//! the value), found through a sorted array of 4-byte offsets.
//!
//! Why: a leaf of `(SmallKey, MemEntry)` entries costs 80 bytes a record
//! whatever its size (24 for the key, 32 for the value, 24 for the
//! metadata): 84 MB of RSS for 1M records of 8-byte keys and values,
//! where Tkrzw's BabyDBM, which packs records into its pages, takes 40.
//! Packed, such a record takes 22 bytes and its offset 4.
//!
//! A replaced or removed record stays in the buffer as dead bytes until
//! they are half of it; then the leaf is rewritten. Splits, merges and
//! evening out rewrite the leaves they touch, so those are exactly sized.
//! Values of `EXTERNAL_MIN` bytes or more are kept aside as the `Bytes`
//! they came in, shared with lookups instead of copied, as in the cache.

use super::index::{Key, SmallKey};
use super::leaf_tree::{search_prefetching, Leaf, Leaves};
use super::segcache::item::{self, ItemRef, Value, EXTERNAL_MIN};
use super::{Store, StoreStats};
use crate::record::{Meta, Record};
use crate::status::{Error, Result};
use bytes::Bytes;
use std::cmp::Ordering;
use std::ops::{Bound, Range};

/// Records per leaf. A middle insert shifts only 4-byte offsets; a lookup
/// binary-searches them, decoding one key per step.
const PACKED_MAX: usize = 64;

/// The longest key this engine takes. Bounds a leaf's buffer below 4 GiB
/// (so offsets are 4 bytes): at most `PACKED_MAX + 1` live records of a key
/// and a value under `EXTERNAL_MIN`, and dead bytes at most as many again.
pub(crate) const MAX_KEY: usize = 16 << 20;

/// Bytes a value kept aside holds in its leaf beyond its record: its handle.
const ASIDE_HANDLE: usize = std::mem::size_of::<Bytes>();

/// A value to store: borrowed (copied in) or owned (kept if set aside).
enum NewValue<'a> {
    Slice(&'a [u8]),
    Owned(Bytes),
}

impl NewValue<'_> {
    fn as_slice(&self) -> &[u8] {
        match self {
            NewValue::Slice(s) => s,
            NewValue::Owned(b) => b,
        }
    }
}

/// Slice order, with the first 8 bytes compared as one big-endian word:
/// keys of a perf run or of sequence numbers are usually decided there,
/// without a call to `memcmp`.
#[inline]
fn cmp_keys(a: &[u8], b: &[u8]) -> Ordering {
    match (a.split_first_chunk::<8>(), b.split_first_chunk::<8>()) {
        (Some((x, a_rest)), Some((y, b_rest))) => u64::from_be_bytes(*x)
            .cmp(&u64::from_be_bytes(*y))
            .then_with(|| a_rest.cmp(b_rest)),
        _ => a.cmp(b),
    }
}

/// The offsets to make room for when a leaf needs `len`: a quarter more
/// (at least 4), but past a full leaf only what is needed.
fn offsets_for(len: usize) -> usize {
    (len + (len / 4).max(4)).min((PACKED_MAX + 1).max(len))
}

/// One leaf: records in `buf`, their offsets in key order in `offs`.
#[derive(Default)]
pub(crate) struct PackedLeaf {
    offs: Vec<u32>,
    buf: Vec<u8>,
    /// Values kept aside; a record's `Value::External` index points here.
    aside: Vec<Bytes>,
    /// Bytes of `buf` and handles of `aside` no record points to.
    dead: usize,
}

impl PackedLeaf {
    #[inline]
    fn item_at(&self, off: u32) -> Option<ItemRef<'_>> {
        item::decode(self.buf.get(off as usize..)?, 0)
    }

    #[inline]
    fn key_at(&self, off: u32) -> &[u8] {
        self.buf
            .get(off as usize..)
            .and_then(item::key_of)
            .unwrap_or_default()
    }

    fn item(&self, i: usize) -> Option<ItemRef<'_>> {
        self.item_at(*self.offs.get(i)?)
    }

    /// The bytes of a record's value, wherever they are.
    fn value_slice<'a>(&'a self, v: Value<'a>) -> &'a [u8] {
        match v {
            Value::Inline(s) => s,
            Value::External(i, _) => self.aside.get(i as usize).map_or(&[], |b| &b[..]),
        }
    }

    /// The value as `Bytes`: a copy of a packed one, a handle to one aside.
    fn value_bytes(&self, v: Value<'_>) -> Bytes {
        match v {
            Value::Inline(s) => Bytes::copy_from_slice(s),
            Value::External(i, _) => self.aside.get(i as usize).cloned().unwrap_or_default(),
        }
    }

    /// Appends a record; its offset. Grows the buffer by a quarter at a
    /// time (not doubling: a leaf's spare capacity is memory no record uses).
    fn push(&mut self, key: &[u8], value: NewValue<'_>, meta: &Meta) -> Result<u32> {
        let len = value.as_slice().len();
        let aside = len >= EXTERNAL_MIN;
        let stored = if aside {
            let index = u32::try_from(self.aside.len()).map_err(|_| Error::Overflow)?;
            Value::External(index, len)
        } else {
            Value::Inline(value.as_slice())
        };
        let need = item::encoded_len(key, &stored, meta, 0);
        // Checked before anything changes: a refused record leaves no trace.
        let off = u32::try_from(self.buf.len())
            .ok()
            .filter(|&off| {
                (off as usize)
                    .checked_add(need)
                    .is_some_and(|end| end <= u32::MAX as usize)
            })
            .ok_or(Error::TooLarge {
                size: need as u64,
                cap: u64::from(u32::MAX),
            })?;
        if self.buf.capacity() - self.buf.len() < need {
            self.buf.reserve_exact(need + self.buf.len() / 4);
        }
        item::encode(&mut self.buf, key, &stored, meta, 0);
        if aside {
            self.aside.push(match value {
                NewValue::Owned(b) => b,
                NewValue::Slice(s) => Bytes::copy_from_slice(s),
            });
        }
        Ok(off)
    }

    /// Counts record `i`'s bytes as dead (it is being replaced or removed).
    fn kill(&mut self, i: usize) -> usize {
        let Some((len, aside, value_len)) = self.item(i).map(|r| {
            let aside = match r.value {
                Value::External(x, _) => Some(x as usize),
                Value::Inline(_) => None,
            };
            (r.len, aside, self.value_slice(r.value).len())
        }) else {
            return 0;
        };
        match self.offs.get(i) {
            // The newest record (a split's or a removal's usual case): cut.
            Some(&off) if off as usize + len == self.buf.len() => self.buf.truncate(off as usize),
            _ => self.dead += len,
        }
        if let Some(x) = aside {
            if let Some(b) = self.aside.get_mut(x) {
                *b = Bytes::new();
                self.dead += ASIDE_HANDLE;
            }
        }
        value_len
    }

    /// Drops the records `range` (copied elsewhere or removed).
    fn drop_range(&mut self, range: Range<usize>) {
        for i in range.clone() {
            self.kill(i);
        }
        self.offs.drain(range);
    }

    /// Rewrites the leaf when most of it is dead.
    fn compact_if_sparse(&mut self) {
        if self.dead > 64 && self.dead * 2 > self.buf.len() {
            *self = self.rebuilt(0..self.offs.len());
        }
    }

    /// The records `range`, as a new exactly sized leaf.
    fn rebuilt(&self, range: Range<usize>) -> PackedLeaf {
        self.rebuilt_with_room(range, 0)
    }

    /// The records `range` as a new leaf, its buffer with `room` bytes
    /// to spare.
    fn rebuilt_with_room(&self, range: Range<usize>, room: usize) -> PackedLeaf {
        let mut out = PackedLeaf::default();
        // A leaf appends fill gets all its offsets' room at once; others
        // grow theirs as they grow their buffer (`insert`).
        out.offs.reserve_exact(if room > 0 {
            PACKED_MAX + 1
        } else {
            range.len()
        });
        out.buf.reserve_exact(room);
        out.copy_from(self, range);
        out
    }

    /// Drops the records from `at` on (copied out by a split): keeps the
    /// buffer, shrunk to fit, when little of it died (an append's split:
    /// the last record, usually at the buffer's end, moved), else rewrites
    /// the leaf.
    fn cut_at(&mut self, at: usize) {
        self.drop_range(at..self.offs.len());
        if self.dead * 8 > self.buf.len() {
            *self = self.rebuilt(0..self.offs.len());
        } else {
            self.buf.shrink_to_fit();
            // The left half of a middle split gives back what growing
            // would not have taken; a full leaf left by an append keeps
            // its room for the entry a lagging writer adds next.
            self.offs.shrink_to(offsets_for(self.offs.len()));
        }
    }

    /// Makes room for `more` offsets: grown a quarter at a time, up to a
    /// full leaf and the one entry past it that a split takes away. With
    /// random keys leaves are about two-thirds full, and room for 65
    /// offsets in each was a megabyte in 1M records.
    fn room_for_offsets(&mut self, more: usize) {
        let need = self.offs.len() + more;
        if self.offs.capacity() < need {
            self.offs.reserve_exact(offsets_for(need) - self.offs.len());
        }
    }

    /// Appends copies of `src`'s records `range` (above every key here).
    fn copy_from(&mut self, src: &PackedLeaf, range: Range<usize>) {
        let items = || range.clone().filter_map(|i| src.item(i));
        // A value aside gets a new index here: counted at its longest.
        let need: usize = items()
            .map(|r| match r.value {
                Value::External(_, len) => {
                    item::encoded_len(r.key, &Value::External(u32::MAX, len), &r.meta, 0)
                }
                v => item::encoded_len(r.key, &v, &r.meta, 0),
            })
            .sum();
        self.buf.reserve_exact(need);
        self.room_for_offsets(range.len());
        for i in range {
            let Some(&off) = src.offs.get(i) else {
                continue;
            };
            let Some(r) = src.item_at(off) else {
                continue;
            };
            let value = match r.value {
                // A packed record is copied as it is.
                Value::Inline(_) => {
                    let start = off as usize;
                    let copied = (
                        u32::try_from(self.buf.len()),
                        src.buf.get(start..start + r.len),
                    );
                    debug_assert!(copied.0.is_ok(), "a leaf past 4 GiB: see MAX_KEY");
                    if let (Ok(at), Some(bytes)) = copied {
                        self.buf.extend_from_slice(bytes);
                        self.offs.push(at);
                    }
                    continue;
                }
                v => NewValue::Owned(src.value_bytes(v)),
            };
            // Never fails: keys of at most `MAX_KEY` keep every leaf,
            // and two joined, below 4 GiB.
            let pushed = self.push(r.key, value, &r.meta);
            debug_assert!(pushed.is_ok(), "a leaf past 4 GiB: see MAX_KEY");
            if let Ok(off) = pushed {
                self.offs.push(off);
            }
        }
    }

    fn insert(&mut self, at: usize, key: &[u8], value: NewValue<'_>, meta: &Meta) -> Result<()> {
        self.room_for_offsets(1);
        let off = self.push(key, value, meta)?;
        self.offs.insert(at, off);
        Ok(())
    }

    /// Replaces record `i`; the old value's length.
    fn replace(&mut self, i: usize, key: &[u8], value: NewValue<'_>, meta: &Meta) -> Result<usize> {
        let off = self.push(key, value, meta)?;
        let old = self.kill(i);
        if let Some(slot) = self.offs.get_mut(i) {
            *slot = off;
        }
        self.compact_if_sparse();
        Ok(old)
    }

    /// Removes record `i`; the old value's length.
    fn remove(&mut self, i: usize) -> usize {
        let old = self.kill(i);
        if i < self.offs.len() {
            self.offs.remove(i);
        }
        self.compact_if_sparse();
        old
    }
}

impl Leaf for PackedLeaf {
    const MAX: usize = PACKED_MAX;

    fn len(&self) -> usize {
        self.offs.len()
    }

    #[inline]
    /// Decodes one key a step; the steps' records are loaded ahead
    /// (`search_prefetching`: the search was half of a random get's time).
    fn search(&self, probe: &SmallKey) -> std::result::Result<usize, usize> {
        let p = probe.as_slice();
        let offs = &self.offs[..];
        search_prefetching(
            offs.len(),
            |i| self.buf.as_ptr().wrapping_add(offs[i] as usize),
            |i| cmp_keys(self.key_at(offs[i]), p),
        )
    }

    /// Keys written in order (sequence numbers, timestamps: the common
    /// case) go after the last one: one comparison instead of a search.
    #[inline]
    fn search_to_insert(&self, probe: &SmallKey) -> std::result::Result<usize, usize> {
        match self.offs.last() {
            Some(&off) if cmp_keys(self.key_at(off), probe.as_slice()) == Ordering::Less => {
                Err(self.offs.len())
            }
            _ => self.search(probe),
        }
    }

    fn key(&self, i: usize) -> &[u8] {
        self.offs.get(i).map_or(&[], |&off| self.key_at(off))
    }

    /// The right part is copied out, exactly sized (`cut_at` for this one).
    fn split_off(&mut self, at: usize) -> Self {
        let right = self.rebuilt(at..self.offs.len());
        self.cut_at(at);
        right
    }

    /// The new leaf gets room for this leaf's bytes beside its own:
    /// appends fill it without growing it a quarter at a time (about a
    /// dozen copies and frees a leaf, each free going back to the allocator
    /// of the thread that made the buffer). Only the last leaf holds spare
    /// room: when it splits in turn, it gives the room back (`split_off`).
    fn split_off_for_appends(&mut self, at: usize) -> Self {
        let room = self.buf.len();
        let right = self.rebuilt_with_room(at..self.offs.len(), room);
        self.cut_at(at);
        right
    }

    /// Copies the records over and leaves them here as dead bytes (evening
    /// out moves a few records at a time: rewriting this leaf each time
    /// made two writers' sets slower).
    fn move_front(&mut self, n: usize, to: &mut Self) {
        to.copy_from(self, 0..n);
        self.drop_range(0..n);
        self.compact_if_sparse();
    }

    fn append(&mut self, next: Self) {
        self.copy_from(&next, 0..next.offs.len());
    }
}

/// The in-memory ordered store.
#[derive(Default)]
pub(crate) struct PackedTree {
    tree: Leaves<PackedLeaf>,
    /// Sum of key and value lengths, for `inspect`.
    bytes: u64,
    max_cas: u64,
}

impl PackedTree {
    fn put_value(&mut self, key: &[u8], value: NewValue<'_>, meta: Meta) -> Result<()> {
        if key.len() > MAX_KEY {
            return Err(Error::TooLarge {
                size: key.len() as u64,
                cap: MAX_KEY as u64,
            });
        }
        let added = (key.len() + value.as_slice().len()) as u64;
        let probe = SmallKey::from(key);
        let old = self.tree.upsert(&probe, |leaf, found| match found {
            Ok(i) => (leaf.replace(i, key, value, &meta).map(Some), None),
            Err(at) => match leaf.insert(at, key, value, &meta) {
                Ok(()) => (Ok(None), Some(at)),
                Err(e) => (Err(e), None),
            },
        })?;
        if let Some(old) = old {
            self.bytes -= (key.len() + old) as u64;
        }
        self.bytes += added;
        self.max_cas = self.max_cas.max(meta.cas);
        Ok(())
    }

    fn with_item<R>(&self, key: &[u8], f: impl FnOnce(&PackedLeaf, ItemRef<'_>) -> R) -> Option<R> {
        let (leaf, i) = self.tree.find(&SmallKey::from(key))?;
        Some(f(leaf, leaf.item(i)?))
    }
}

impl Store for PackedTree {
    fn get(&self, key: &[u8]) -> Result<Option<Record>> {
        Ok(self.with_item(key, |leaf, r| Record {
            value: leaf.value_bytes(r.value),
            meta: r.meta,
        }))
    }
    fn get_meta(&self, key: &[u8]) -> Result<Option<Meta>> {
        Ok(self.with_item(key, |_, r| r.meta))
    }
    fn get_with(&self, key: &[u8], f: &mut dyn FnMut(&[u8], &Meta)) -> Result<bool> {
        Ok(self
            .with_item(key, |leaf, r| f(leaf.value_slice(r.value), &r.meta))
            .is_some())
    }
    /// No access state to record: a fetch is a read.
    fn fetch_with(&self, key: &[u8], f: &mut dyn FnMut(&[u8], &Meta)) -> Result<bool> {
        self.get_with(key, f)
    }
    fn put(&mut self, key: &[u8], value: Bytes, meta: Meta) -> Result<()> {
        self.put_value(key, NewValue::Owned(value), meta)
    }
    fn put_slice(&mut self, key: &[u8], value: &[u8], meta: Meta) -> Result<()> {
        self.put_value(key, NewValue::Slice(value), meta)
    }
    fn remove(&mut self, key: &[u8]) -> Result<bool> {
        let removed = self
            .tree
            .remove_with(&SmallKey::from(key), |leaf, i| leaf.remove(i));
        if let Some(old) = removed {
            self.bytes -= (key.len() + old) as u64;
        }
        Ok(removed.is_some())
    }
    fn len(&self) -> u64 {
        self.tree.len() as u64
    }
    fn clear(&mut self) -> Result<()> {
        self.tree.clear();
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
        self.tree.seek(from, forward).map(Into::into)
    }
    fn keys(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.tree.len());
        for leaf in self.tree.leaves() {
            out.extend((0..leaf.len()).map(|i| Key::from(leaf.key(i))));
        }
        out
    }
    fn for_each_record(&self, f: &mut dyn FnMut(&[u8], Record)) -> Result<()> {
        for leaf in self.tree.leaves() {
            for r in (0..leaf.len()).filter_map(|i| leaf.item(i)) {
                let record = Record {
                    value: leaf.value_bytes(r.value),
                    meta: r.meta,
                };
                f(r.key, record);
            }
        }
        Ok(())
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

#[cfg(test)]
mod tests;
