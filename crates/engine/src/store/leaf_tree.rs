//! The ordered index: sorted leaves of up to `LEAF_MAX` entries, found
//! through a small `BTreeMap` of separators: a leaf's separator is at most
//! its first key and above every key of the leaf before it, so the leaf for
//! a key is the last one whose separator is at or below it. Removing a
//! leaf's first entry leaves its separator valid (no re-keying).
//!
//! Why not a plain `BTreeMap<SmallKey, V>`: std's B-tree splits a full node
//! in the middle, so keys inserted in order (the common case: sequence
//! numbers, timestamps) leave every node half full — 1M records took ~155 MB
//! against ~40 MB for Tkrzw's BabyDBM. Here a leaf that overflows at its end
//! keeps all but its last entry, so appends fill leaves completely; an
//! overflow anywhere else first evens the leaf out with the one before it
//! when that has room, and otherwise halves the leaf. A lookup walks the
//! small upper map (one key per leaf: it stays in cache) and
//! binary-searches one contiguous leaf.
//! Leaves that shrink below a quarter are merged into a neighbour. Leaves
//! are ring buffers, so removing from the front (draining a queue-like key
//! range in order) does not shift the leaf.

use super::index::{Index, SmallKey};
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;

/// Entries per leaf. A middle insert shifts on average half a leaf
/// (~2.5 KB for 80-byte entries); more would make random inserts costly.
const LEAF_MAX: usize = 64;
/// A leaf with fewer entries than this after a removal is merged.
const LEAF_MIN: usize = LEAF_MAX / 4;

type Leaf<V> = VecDeque<(SmallKey, V)>;

pub struct LeafTree<V> {
    /// Separator of each leaf -> the leaf (never empty).
    leaves: BTreeMap<SmallKey, Leaf<V>>,
    len: usize,
}

impl<V> Default for LeafTree<V> {
    fn default() -> Self {
        LeafTree {
            leaves: BTreeMap::new(),
            len: 0,
        }
    }
}

/// Where `probe` is, or would go, in `leaf`. The probe is a `SmallKey` so
/// that short keys compare as three machine words instead of by `memcmp`.
#[inline]
fn search<V>(leaf: &Leaf<V>, probe: &SmallKey) -> Result<usize, usize> {
    leaf.binary_search_by(|(e, _)| e.cmp(probe))
}

impl<V> LeafTree<V> {
    fn leaf_of(&self, k: &SmallKey) -> Option<&Leaf<V>> {
        self.leaves
            .range::<SmallKey, _>((Bound::Unbounded, Bound::Included(k)))
            .next_back()
            .map(|(_, leaf)| leaf)
    }

    fn leaf_of_mut(&mut self, k: &SmallKey) -> Option<&mut Leaf<V>> {
        self.leaves
            .range_mut::<SmallKey, _>((Bound::Unbounded, Bound::Included(k)))
            .next_back()
            .map(|(_, leaf)| leaf)
    }

    /// Splits the leaf at `sep` after an insert at `at` made it overflow.
    fn split(&mut self, sep: &SmallKey, at: usize) {
        let appended = self.leaves.get(sep).is_some_and(|l| at + 1 == l.len());
        if !appended && self.shift_to_prev(sep) {
            return;
        }
        let Some(leaf) = self.leaves.get_mut(sep) else {
            return;
        };
        // An append keeps the leaf full and starts a new one with the new
        // entry; anything else splits in the middle.
        let cut = if at + 1 == leaf.len() {
            leaf.len() - 1
        } else {
            leaf.len() / 2
        };
        let mut right = VecDeque::with_capacity(LEAF_MAX + 1);
        right.extend(leaf.drain(cut..));
        if let Some((k, _)) = right.front() {
            let k = k.clone();
            self.leaves.insert(k, right);
        }
    }

    /// Evens the overflowing leaf at `sep` with the leaf before it, when that
    /// one has room for at least an eighth of a leaf: moves entries from
    /// this leaf's front to its end, and raises this leaf's separator to
    /// its new first key.
    fn shift_to_prev(&mut self, sep: &SmallKey) -> bool {
        let prev = self
            .leaves
            .range::<SmallKey, _>((Bound::Unbounded, Bound::Excluded(sep)))
            .next_back()
            .map(|(k, leaf)| (k.clone(), leaf.len()));
        let Some((prev_sep, prev_len)) = prev else {
            return false;
        };
        if prev_len + LEAF_MAX / 8 > LEAF_MAX {
            return false;
        }
        let Some(mut leaf) = self.leaves.remove(sep) else {
            return false;
        };
        let n = (leaf.len() - prev_len) / 2;
        if let Some(p) = self.leaves.get_mut(&prev_sep) {
            p.extend(leaf.drain(..n));
        }
        if let Some((k, _)) = leaf.front() {
            let k = k.clone();
            self.leaves.insert(k, leaf);
        }
        true
    }

    /// After a removal left the leaf at `sep` small: drops it when empty,
    /// else merges it into the previous leaf or takes the next one in, when
    /// the two fit in one leaf.
    fn after_remove(&mut self, sep: SmallKey) {
        let Some(len) = self.leaves.get(&sep).map(VecDeque::len) else {
            return;
        };
        if len == 0 {
            self.leaves.remove(&sep);
            return;
        }
        let prev = self
            .leaves
            .range::<[u8], _>((Bound::Unbounded, Bound::Excluded(&sep[..])))
            .next_back()
            .map(|(k, p)| (k.clone(), p.len()));
        if let Some((pk, p_len)) = prev {
            if p_len + len <= LEAF_MAX {
                if let Some(leaf) = self.leaves.remove(&sep) {
                    if let Some(p) = self.leaves.get_mut(&pk) {
                        p.extend(leaf);
                    }
                }
                return;
            }
        }
        let next = self
            .leaves
            .range::<[u8], _>((Bound::Excluded(&sep[..]), Bound::Unbounded))
            .next()
            .map(|(k, n)| (k.clone(), n.len()));
        if let Some((nk, n_len)) = next {
            if n_len + len <= LEAF_MAX {
                if let Some(next) = self.leaves.remove(&nk) {
                    if let Some(leaf) = self.leaves.get_mut(&sep) {
                        leaf.extend(next);
                    }
                }
            }
        }
    }
}

impl<V: Send + Sync> Index<V> for LeafTree<V> {
    const ORDERED: bool = true;

    fn with_capacity(_n: usize) -> Self {
        LeafTree::default()
    }

    fn get(&self, k: &[u8]) -> Option<&V> {
        let probe = SmallKey::from(k);
        let leaf = self.leaf_of(&probe)?;
        let i = search(leaf, &probe).ok()?;
        leaf.get(i).map(|(_, v)| v)
    }

    fn get_mut(&mut self, k: &[u8]) -> Option<&mut V> {
        let probe = SmallKey::from(k);
        let leaf = self.leaf_of_mut(&probe)?;
        let i = search(leaf, &probe).ok()?;
        leaf.get_mut(i).map(|(_, v)| v)
    }

    fn insert(&mut self, k: &[u8], v: V) -> Option<V> {
        let probe = SmallKey::from(k);
        if self.leaves.is_empty() {
            let mut leaf = VecDeque::with_capacity(LEAF_MAX + 1);
            leaf.push_back((probe.clone(), v));
            self.leaves.insert(probe, leaf);
            self.len = 1;
            return None;
        }
        // Below every separator, the key goes to the first leaf; otherwise
        // to the last leaf whose separator is at or below it.
        let below_all = self
            .leaves
            .first_key_value()
            .is_some_and(|(first, _)| probe < *first);
        let (sep, leaf) = if below_all {
            self.leaves.iter_mut().next()
        } else {
            self.leaves
                .range_mut::<SmallKey, _>((Bound::Unbounded, Bound::Included(&probe)))
                .next_back()
        }?;
        let at = match search(leaf, &probe) {
            Ok(i) => {
                return leaf.get_mut(i).map(|(_, old)| std::mem::replace(old, v));
            }
            Err(i) => i,
        };
        leaf.insert(at, (probe.clone(), v));
        self.len += 1;
        let full = leaf.len() > LEAF_MAX;
        if !below_all && !full {
            return None;
        }
        let sep = sep.clone();
        let sep = if below_all {
            // The first leaf's separator moves down to the new key.
            match self.leaves.remove(&sep) {
                Some(leaf) => {
                    self.leaves.insert(probe.clone(), leaf);
                    probe
                }
                None => return None,
            }
        } else {
            sep
        };
        if full {
            self.split(&sep, at);
        }
        None
    }

    fn remove(&mut self, k: &[u8]) -> Option<V> {
        let probe = SmallKey::from(k);
        let (sep, leaf) = self
            .leaves
            .range_mut::<SmallKey, _>((Bound::Unbounded, Bound::Included(&probe)))
            .next_back()?;
        let i = search(leaf, &probe).ok()?;
        let (_, v) = leaf.remove(i)?;
        self.len -= 1;
        if leaf.len() < LEAF_MIN {
            let sep = sep.clone();
            self.after_remove(sep);
        }
        Some(v)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn clear(&mut self) {
        self.leaves.clear();
        self.len = 0;
    }

    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<&[u8]> {
        if forward {
            // The leaf that may hold `from`, then the ones after it.
            let start = match from {
                Bound::Unbounded => Bound::Unbounded,
                Bound::Included(k) | Bound::Excluded(k) => self
                    .leaves
                    .range::<[u8], _>((Bound::Unbounded, Bound::Included(k)))
                    .next_back()
                    .map_or(Bound::Unbounded, |(sep, _)| Bound::Included(sep.as_slice())),
            };
            self.leaves
                .range::<[u8], _>((start, Bound::Unbounded))
                .flat_map(|(_, leaf)| leaf.iter())
                .map(|(k, _)| k.as_slice())
                .find(|k| match from {
                    Bound::Unbounded => true,
                    Bound::Included(f) => *k >= f,
                    Bound::Excluded(f) => *k > f,
                })
        } else {
            let end = match from {
                Bound::Unbounded => Bound::Unbounded,
                Bound::Included(k) | Bound::Excluded(k) => Bound::Included(k),
            };
            self.leaves
                .range::<[u8], _>((Bound::Unbounded, end))
                .rev()
                .flat_map(|(_, leaf)| leaf.iter().rev())
                .map(|(k, _)| k.as_slice())
                .find(|k| match from {
                    Bound::Unbounded => true,
                    Bound::Included(f) => *k <= f,
                    Bound::Excluded(f) => *k < f,
                })
        }
    }

    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a [u8], &'a V)) {
        for (k, v) in self.leaves.values().flatten() {
            f(k.as_slice(), v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn model_seek(
        m: &BTreeMap<Vec<u8>, u32>,
        from: Bound<&[u8]>,
        forward: bool,
    ) -> Option<Vec<u8>> {
        if forward {
            m.range::<[u8], _>((from, Bound::Unbounded))
                .next()
                .map(|(k, _)| k.clone())
        } else {
            m.range::<[u8], _>((Bound::Unbounded, from))
                .next_back()
                .map(|(k, _)| k.clone())
        }
    }

    proptest! {
        /// Against a `BTreeMap` model: lookups, length, order, and seeks in
        /// both directions from every kind of bound, with enough keys to
        /// split, merge and re-key leaves.
        #[test]
        fn matches_a_model(
            ops in proptest::collection::vec((0u8..3, proptest::collection::vec(0u8..6, 0..5), any::<u32>()), 0..700),
            probes in proptest::collection::vec(proptest::collection::vec(0u8..6, 0..5), 0..20),
        ) {
            let mut t = LeafTree::<u32>::default();
            let mut m = BTreeMap::<Vec<u8>, u32>::new();
            for (op, k, v) in ops {
                if op < 2 {
                    prop_assert_eq!(Index::insert(&mut t, &k, v), m.insert(k.clone(), v));
                } else {
                    prop_assert_eq!(Index::remove(&mut t, &k), m.remove(&k));
                }
                prop_assert_eq!(Index::get(&t, &k).copied(), m.get(&k).copied());
                prop_assert_eq!(Index::len(&t), m.len());
            }
            let mut all = Vec::new();
            Index::for_each(&t, &mut |k, v| all.push((k.to_vec(), *v)));
            prop_assert_eq!(all, m.clone().into_iter().collect::<Vec<_>>());
            let mut prev_last: Option<Vec<u8>> = None;
            for (sep, leaf) in &t.leaves {
                prop_assert!(!leaf.is_empty() && leaf.len() <= LEAF_MAX);
                // A separator is at most its leaf's first key and above the
                // previous leaf's last.
                prop_assert!(sep.as_slice() <= leaf.front().unwrap().0.as_slice());
                if let Some(p) = &prev_last {
                    prop_assert!(sep.as_slice() > p.as_slice());
                }
                prev_last = leaf.back().map(|(k, _)| k.to_vec());
            }
            for p in probes {
                for forward in [true, false] {
                    for b in [Bound::Included(&p[..]), Bound::Excluded(&p[..]), Bound::Unbounded] {
                        prop_assert_eq!(
                            Index::seek(&t, b, forward).map(<[u8]>::to_vec),
                            model_seek(&m, b, forward)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn appends_fill_leaves() {
        let mut t = LeafTree::<u32>::default();
        for i in 0..10_000u32 {
            Index::insert(&mut t, format!("{i:08}").as_bytes(), i);
        }
        // Every leaf but the last is full.
        let lens: Vec<usize> = t.leaves.values().map(VecDeque::len).collect();
        assert!(
            lens[..lens.len() - 1].iter().all(|&n| n == LEAF_MAX),
            "{lens:?}"
        );
        for i in (0..10_000u32).step_by(7) {
            assert_eq!(Index::get(&t, format!("{i:08}").as_bytes()), Some(&i));
        }
    }

    /// Regression: two writers each taking every other number, one of
    /// them `lag` keys behind (as two threads of a perf tool run), insert
    /// into full leaves just behind the newest keys. Splitting those in the
    /// middle left leaves half full (1M records from 2 threads: 114 MB of
    /// RSS where 1 thread took 76); they now first even out with the leaf
    /// before them.
    #[test]
    fn a_lagging_writer_leaves_the_leaves_nearly_full() {
        for lag in [3u32, 100, 1000] {
            let mut t = LeafTree::<u32>::default();
            for i in 0..100_000u32 {
                Index::insert(&mut t, format!("{:08}", 2 * i).as_bytes(), i);
                if let Some(j) = i.checked_sub(lag) {
                    Index::insert(&mut t, format!("{:08}", 2 * j + 1).as_bytes(), j);
                }
            }
            let full = t.len.div_ceil(LEAF_MAX);
            let leaves = t.leaves.len();
            assert!(
                leaves * 100 <= full * 120,
                "lag {lag}: {leaves} leaves where {full} would be full"
            );
            for i in (0..100_000 - lag).step_by(7) {
                assert_eq!(
                    Index::get(&t, format!("{:08}", 2 * i + 1).as_bytes()),
                    Some(&i)
                );
            }
        }
    }
}
