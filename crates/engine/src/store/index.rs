//! The trait every in-memory index shape implements (`shapes.rs` names the
//! two: a hash map and an ordered map), so each engine is written once, and
//! the small key and value types their entries hold. A leaf: the shapes
//! import it, it imports none of them.

use bytes::Bytes;
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::ops::Bound;

/// Keys handed out by stores (cursors, key lists): owned boxed slices.
pub(crate) type Key = Box<[u8]>;

/// Bytes of a key or value kept inside its index entry instead of on the heap.
pub(crate) const INLINE_LEN: usize = 22;

/// A byte string as index entries hold it: up to `INLINE_LEN` bytes inline
/// (no allocation, no pointer to chase on lookup), longer ones boxed. 24
/// bytes, like a `Vec`. Behaves exactly as the `[u8]` it holds: equality,
/// order and hash are those of the slice, so maps keyed by it are searched
/// with plain `&[u8]`.
#[derive(Clone)]
pub(crate) enum SmallKey {
    Inline { len: u8, buf: [u8; INLINE_LEN] },
    Heap(Box<[u8]>),
}

impl SmallKey {
    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            SmallKey::Inline { len, buf } => &buf[..*len as usize],
            SmallKey::Heap(b) => b,
        }
    }
}

impl From<&[u8]> for SmallKey {
    #[inline]
    fn from(k: &[u8]) -> Self {
        if k.len() <= INLINE_LEN {
            let mut buf = [0u8; INLINE_LEN];
            buf[..k.len()].copy_from_slice(k);
            SmallKey::Inline {
                len: k.len() as u8,
                buf,
            }
        } else {
            SmallKey::Heap(k.into())
        }
    }
}

impl std::ops::Deref for SmallKey {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Borrow<[u8]> for SmallKey {
    #[inline]
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

/// The inline bytes as three big-endian words (the last one 6 bytes), so
/// that comparing the words compares the zero-padded bytes in order.
#[inline]
fn words(buf: &[u8; INLINE_LEN]) -> (u64, u64, u64) {
    let w = |i: usize| u64::from_be_bytes(buf[i..i + 8].try_into().unwrap_or([0; 8]));
    let mut last = [0u8; 8];
    last[..6].copy_from_slice(&buf[16..22]);
    (w(0), w(8), u64::from_be_bytes(last))
}

impl PartialEq for SmallKey {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (SmallKey::Inline { len: a, buf: x }, SmallKey::Inline { len: b, buf: y }) => {
                a == b && x == y
            }
            _ => self.as_slice() == other.as_slice(),
        }
    }
}

impl Eq for SmallKey {}

impl PartialOrd for SmallKey {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SmallKey {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            // Inline bytes are zero-padded: where the padded bytes first
            // differ, the shorter key is either truly smaller or a prefix of
            // the longer one (its 0 pad below a nonzero byte), which orders
            // first too; equal padded bytes leave the length to decide.
            // So this is slice order, with no call to memcmp.
            (SmallKey::Inline { len: a, buf: x }, SmallKey::Inline { len: b, buf: y }) => {
                words(x).cmp(&words(y)).then(a.cmp(b))
            }
            _ => self.as_slice().cmp(other.as_slice()),
        }
    }
}

impl Hash for SmallKey {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Must equal `<[u8] as Hash>::hash` (lookups hash a `&[u8]`).
        self.as_slice().hash(state)
    }
}

impl std::fmt::Debug for SmallKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// A stored value: short ones inline in the index entry (a store then
/// allocates nothing for a small record), longer ones as a shared buffer
/// that lookups hand out without copying.
#[derive(Clone)]
pub(crate) enum SmallValue {
    Inline { len: u8, buf: [u8; INLINE_LEN] },
    Shared(Bytes),
}

impl SmallValue {
    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            SmallValue::Inline { len, buf } => &buf[..*len as usize],
            SmallValue::Shared(b) => b,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// A copy of `v`.
    #[inline]
    pub(crate) fn from_slice(v: &[u8]) -> Self {
        match Self::inline(v) {
            Some(s) => s,
            None => SmallValue::Shared(Bytes::copy_from_slice(v)),
        }
    }

    /// Keeps `v` (short values are copied inline and `v` dropped).
    #[inline]
    pub(crate) fn from_bytes(v: Bytes) -> Self {
        match Self::inline(&v) {
            Some(s) => s,
            None => SmallValue::Shared(v),
        }
    }

    #[inline]
    fn inline(v: &[u8]) -> Option<Self> {
        if v.len() > INLINE_LEN {
            return None;
        }
        let mut buf = [0u8; INLINE_LEN];
        buf[..v.len()].copy_from_slice(v);
        Some(SmallValue::Inline {
            len: v.len() as u8,
            buf,
        })
    }

    /// The value as `Bytes`: a copy of an inline value (one small
    /// allocation, no reference count touched), a shared handle otherwise.
    #[inline]
    pub(crate) fn to_bytes(&self) -> Bytes {
        match self {
            SmallValue::Inline { len, buf } => Bytes::copy_from_slice(&buf[..*len as usize]),
            SmallValue::Shared(b) => b.clone(),
        }
    }
}

impl std::fmt::Debug for SmallValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

#[allow(clippy::len_without_is_empty)]
pub(crate) trait Index<V>: Send + Sync + Default {
    fn with_capacity(n: usize) -> Self;
    fn get(&self, k: &[u8]) -> Option<&V>;
    fn get_mut(&mut self, k: &[u8]) -> Option<&mut V>;
    /// Inserts or replaces; returns the old value.
    fn insert(&mut self, k: &[u8], v: V) -> Option<V>;
    fn remove(&mut self, k: &[u8]) -> Option<V>;
    fn len(&self) -> usize;
    fn clear(&mut self);
    /// Ordered indexes: the nearest key at or beyond `from` in the direction.
    /// Hash indexes return `None`.
    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<&[u8]>;
    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a [u8], &'a V));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::hash::BuildHasher;

    #[test]
    fn small_types_stay_small() {
        assert_eq!(std::mem::size_of::<SmallKey>(), 24);
        assert!(std::mem::size_of::<SmallValue>() <= 40);
    }

    fn hash_of<T: Hash + ?Sized>(s: &foldhash::fast::FixedState, v: &T) -> u64 {
        s.hash_one(v)
    }

    proptest! {
        /// A `SmallKey` behaves exactly as the `Vec<u8>` it was made from:
        /// bytes, equality, order and hash (inline and boxed alike).
        #[test]
        fn small_key_matches_vec(
            a in proptest::collection::vec(any::<u8>(), 0..48),
            b in proptest::collection::vec(any::<u8>(), 0..48),
        ) {
            let (ka, kb) = (SmallKey::from(&a[..]), SmallKey::from(&b[..]));
            prop_assert_eq!(ka.as_slice(), &a[..]);
            prop_assert_eq!(&*ka.clone(), &a[..]);
            prop_assert_eq!(ka == kb, a == b);
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            prop_assert_eq!(ka.partial_cmp(&kb), a.partial_cmp(&b));
            let s = foldhash::fast::FixedState::with_seed(7);
            prop_assert_eq!(hash_of(&s, &ka), hash_of(&s, &a[..]));
            prop_assert_eq!(matches!(ka, SmallKey::Inline { .. }), a.len() <= INLINE_LEN);
        }

        #[test]
        fn small_value_matches_vec(a in proptest::collection::vec(any::<u8>(), 0..64)) {
            for v in [SmallValue::from_slice(&a), SmallValue::from_bytes(Bytes::from(a.clone()))] {
                prop_assert_eq!(v.as_slice(), &a[..]);
                prop_assert_eq!(v.len(), a.len());
                prop_assert_eq!(&v.to_bytes()[..], &a[..]);
                prop_assert_eq!(&v.clone().to_bytes()[..], &a[..]);
                prop_assert_eq!(matches!(v, SmallValue::Inline { .. }), a.len() <= INLINE_LEN);
            }
        }
    }
}
