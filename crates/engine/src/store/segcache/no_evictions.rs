//! A segment cache that refuses writes when full instead of evicting
//! (`disable_evictions=true`, memcached's `-M`): for users who would
//! rather hear "out of memory" than lose an item silently.
//!
//! Room is made while the key's old item is still there, as memcached
//! allocates the new item before it unlinks the old one: a refused write
//! loses nothing, and in a full cache an overwrite is refused like a new
//! key. A touch that only replaces an expiry is written over the item
//! where it is (memcached's touch allocates nothing); one that adds or
//! drops an expiry changes the item's length and is a write like any
//! other. Expired items still give their room back: whole segments first
//! (`expiry.rs`), then by compaction, the eviction pass keeping every
//! current item that has not expired, which also gives back the bytes of
//! overwritten and removed items.
//!
//! Compaction runs only while those dead bytes are at least a 16th of the
//! segments: a refused write then costs a check, not a pass over every
//! segment, so clients that keep writing into a full cache cannot make
//! each write copy the whole cache. A full round of passes leaves no dead
//! bytes outside the open segments' room, so the next refusal is cheap.

use super::ttl::joined;
use super::{item, SegCache};
use crate::record::Meta;
use crate::status::{Error, Result};

/// Compaction runs only while at least this share of the segments' bytes
/// is dead.
const DEAD_SHARE: u64 = 16;

impl SegCache {
    /// Room for an item of `len` bytes in the segment of TTL class
    /// `class` (and, if it `adds_record`, under the count cap) without
    /// evicting anything; `Error::NoMemory` naming `charge` bytes if there
    /// is none.
    pub(super) fn make_room_keeping(
        &mut self,
        len: usize,
        class: usize,
        adds_record: bool,
        charge: u64,
    ) -> Result<()> {
        let count_full =
            |c: &SegCache| adds_record && c.cap_recs > 0 && c.table.len() as u64 >= c.cap_recs;
        if self.room_in(class) < len || count_full(self) {
            self.expire_whole_segments();
        }
        let refused = Error::NoMemory { size: charge };
        if count_full(self) {
            return Err(refused);
        }
        if self.cap_bytes == 0 {
            // No byte cap: nothing is evicted for bytes anyway.
            return self.make_byte_room(len, class);
        }
        let size = len.max(self.seg_size);
        let mut passes = self.segments();
        loop {
            let used = self.allocated + self.external + self.table.bytes_after_insert();
            let fits = |extra: usize| used + extra as u64 <= self.cap_bytes;
            let room = self.room_in(class) >= len;
            if room && fits(0) {
                return Ok(());
            }
            if !room && fits(size) {
                return self.new_segment(size, class);
            }
            let left = self.cap_bytes.saturating_sub(used) as usize;
            if !room && left >= len {
                return self.new_segment(left.min(self.seg_size), class);
            }
            let dead = self.dead_bytes();
            if passes == 0 || dead < len as u64 || dead < self.allocated / DEAD_SHARE {
                return Err(refused);
            }
            passes -= 1;
            let free_empty = size > self.seg_size || !fits(0);
            self.recycle_oldest_with(free_empty, u64::MAX, u64::MAX, class);
        }
    }

    /// A touch (a new expiry; the same value and CAS) written over the
    /// item where it is, when its encoding keeps its length (an expiry
    /// replaced by another). memcached's touch allocates nothing, so a
    /// full cache must not refuse one for want of room. False: not done.
    pub(super) fn touch_in_place(&mut self, key: &[u8], value: &[u8], meta: &Meta) -> bool {
        let Some(slot) = self.slot_of(key) else {
            return false;
        };
        let loc = self.table.loc(slot);
        let base = self.cas_base_of(loc.seg);
        let Some(it) = self.item_at(loc) else {
            return false;
        };
        let (shape, same_value) = match it.value {
            item::Value::Inline(v) => (item::Value::Inline(value), v == value),
            item::Value::External(i, n) => {
                let held = self.big.get(i as usize).and_then(Option::as_ref);
                let same = n == value.len() && held.is_some_and(|b| b.as_ref() == value);
                (item::Value::External(i, n), same)
            }
        };
        let len = it.len;
        if !same_value || item::encoded_len(key, &shape, meta, base) != len {
            return false;
        }
        let mut bytes = Vec::with_capacity(len);
        item::encode(&mut bytes, key, &shape, meta, base);
        let off = loc.off as usize;
        let at = self.segs.get_mut(loc.seg as usize).and_then(Option::as_mut);
        let Some(old) = at.and_then(|seg| seg.get_mut(off..off + len)) else {
            return false;
        };
        old.copy_from_slice(&bytes);
        self.set_expiry(loc.seg, joined(self.expiry_of(loc.seg), meta.expires_at));
        self.max_cas = self.max_cas.max(meta.cas);
        self.table.access(slot).fetch(true);
        true
    }

    /// Bytes of the segments that hold no current item and are not the
    /// open segments' room: overwritten, removed and evicted items'
    /// bytes, and room left behind in closed segments. (Expired items
    /// still count as current until a pass drops them.)
    fn dead_bytes(&self) -> u64 {
        let open_room: usize = self
            .open
            .iter()
            .flatten()
            .filter_map(|&id| self.segs.get(id as usize)?.as_ref())
            .map(|b| b.capacity() - b.len())
            .sum();
        self.allocated
            .saturating_sub(self.live_bytes + open_room as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{SegCache, Store};
    use crate::record::{now_secs, Meta};
    use crate::status::Error;

    fn key(i: usize) -> Vec<u8> {
        format!("key-{i:08}").into_bytes()
    }

    fn value(i: usize, len: usize) -> Vec<u8> {
        let mut v = format!("{i}:").into_bytes();
        v.resize(len, b'.');
        v
    }

    /// Writes `len`-byte values under new keys until one is refused;
    /// returns how many were stored.
    fn fill(c: &mut SegCache, len: usize) -> usize {
        for i in 0.. {
            match c.put_slice(&key(i), &value(i, len), Meta::default()) {
                Ok(()) => {}
                Err(Error::NoMemory { size }) => {
                    assert!(size >= len as u64, "{size}");
                    return i;
                }
                Err(e) => panic!("write {i}: {e}"),
            }
        }
        unreachable!()
    }

    fn assert_all_kept(c: &SegCache, n: usize, len: usize) {
        assert_eq!(c.len(), n as u64);
        for i in 0..n {
            let got = c.get(&key(i)).unwrap().map(|r| r.value.to_vec());
            assert_eq!(got, Some(value(i, len)), "item {i}");
        }
        assert_eq!(c.stats().evictions, 0);
    }

    #[test]
    fn a_full_cache_refuses_writes_and_keeps_every_item() {
        // Small values in segments, and values kept aside (1 KiB and up).
        for len in [100, 8192] {
            let cap = 2 << 20;
            let mut c = SegCache::new(cap, 0).without_evictions();
            let n = fill(&mut c, len);
            assert!(n as u64 > cap / 2 / (len as u64 + 64), "{len}: {n} stored");
            assert_all_kept(&c, n, len);
            // An overwrite is refused too, and the old value stays.
            let e = c.put_slice(&key(0), &value(7, len), Meta::default());
            assert!(matches!(e, Err(Error::NoMemory { .. })), "{e:?}");
            assert_all_kept(&c, n, len);
        }
    }

    #[test]
    fn the_count_cap_refuses_new_keys_but_not_overwrites() {
        let mut c = SegCache::new(0, 100).without_evictions();
        assert_eq!(fill(&mut c, 10), 100);
        c.put_slice(&key(5), b"new", Meta::default()).unwrap();
        assert_eq!(c.get(&key(5)).unwrap().unwrap().value.as_ref(), b"new");
        assert!(c.remove(&key(6)).unwrap());
        c.put_slice(&key(1000), b"x", Meta::default()).unwrap();
        assert_eq!(c.len(), 100);
    }

    #[test]
    fn removed_and_overwritten_items_give_their_room_back() {
        let mut c = SegCache::new(2 << 20, 0).without_evictions();
        let n = fill(&mut c, 100);
        for i in (0..n).step_by(2) {
            assert!(c.remove(&key(i)).unwrap());
        }
        // Half the items went: nearly as many new ones fit again, by
        // compaction (which stops with a 16th of the bytes still dead).
        let mut again = 0;
        while c
            .put_slice(&key(n + again), &value(again, 100), Meta::default())
            .is_ok()
        {
            again += 1;
        }
        assert!(
            again * 8 > n / 2 * 7,
            "{again} stored after {} removed",
            n / 2
        );
        for i in (1..n).step_by(2).chain(n..n + again) {
            assert_eq!(c.get(&key(i)).unwrap().map(|r| r.value.len()), Some(100));
        }
        assert_eq!(c.stats().evictions, 0);
    }

    #[test]
    fn expired_items_give_their_room_back() {
        let cap = 2 << 20;
        let fresh = fill(&mut SegCache::new(cap, 0).without_evictions(), 100);
        let mut c = SegCache::new(cap, 0).without_evictions();
        let gone = Meta {
            expires_at: now_secs() - 1,
            ..Meta::default()
        };
        // Half the cache of expired items, then as many live ones as fit.
        for i in 0..fresh / 2 {
            let k = format!("gone-{i}");
            c.put_slice(k.as_bytes(), &value(i, 100), gone).unwrap();
        }
        // All but the expired items' open segment (a 16th of the cap) is
        // freed whole for the live ones.
        let n = fill(&mut c, 100);
        assert!(n * 10 > fresh * 9, "{n} stored, {fresh} in an empty cache");
    }

    #[test]
    fn a_full_cache_still_takes_touches() {
        for len in [100, 8192] {
            let mut c = SegCache::new(2 << 20, 0).without_evictions();
            let soon = Meta {
                expires_at: now_secs() + 1000,
                cas: 7,
                ..Meta::default()
            };
            let mut n = 0;
            while c.put_slice(&key(n), &value(n, len), soon).is_ok() {
                n += 1;
            }
            let later = Meta {
                expires_at: soon.expires_at + 1000,
                ..soon
            };
            for i in 0..n {
                let v = bytes::Bytes::from(value(i, len));
                c.touch(&key(i), v, later)
                    .unwrap_or_else(|e| panic!("{len}: touch {i} of {n}: {e}"));
            }
            for i in 0..n {
                let r = c.get(&key(i)).unwrap().unwrap();
                assert_eq!((r.value.to_vec(), r.meta), (value(i, len), later));
            }
        }
    }

    #[test]
    fn refused_writes_do_not_pass_over_the_segments() {
        let mut c = SegCache::new(2 << 20, 0).without_evictions();
        let n = fill(&mut c, 100);
        // A few dead bytes, under the share that makes compaction pay.
        for i in 0..10 {
            c.remove(&key(i)).unwrap();
        }
        let passes = c.passes;
        for i in 0..1000 {
            let e = c.put_slice(&key(n + i), &value(i, 1000), Meta::default());
            assert!(matches!(e, Err(Error::NoMemory { .. })), "{e:?}");
        }
        assert_eq!(c.passes, passes);
    }
}
