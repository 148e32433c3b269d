//! The ordered index: sorted leaves of up to `Leaf::MAX` entries, found
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
//! binary-searches one contiguous leaf; an insert at or above the last
//! separator (keys written in order) goes straight to the last leaf.
//! Leaves that shrink below a quarter are merged into a neighbour.
//!
//! The tree (`Leaves`) is written once over what a leaf is (`Leaf`): ring
//! buffers of `(SmallKey, V)` for `LeafTree` (removing from the front, as
//! draining a queue-like key range in order does, does not shift the leaf),
//! and packed byte records for the in-memory tree engine (`packed_tree/`).

use super::index::{Index, SmallKey};
use super::tagged_table::prefetch_line;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;

/// What the tree needs of a leaf: a sorted run of entries it can search,
/// read keys of, cut and join.
pub(crate) trait Leaf: Default {
    /// Entries a leaf holds at most.
    const MAX: usize;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Where `probe` is, or would go.
    fn search(&self, probe: &SmallKey) -> Result<usize, usize>;
    /// As `search`, for an insert: leaves whose inserts are mostly appends
    /// may look at their last key first.
    fn search_to_insert(&self, probe: &SmallKey) -> Result<usize, usize> {
        self.search(probe)
    }
    /// The key of entry `i` (`i < len`).
    fn key(&self, i: usize) -> &[u8];
    /// Entries from `at` on, removed from this leaf.
    fn split_off(&mut self, at: usize) -> Self;
    /// `split_off` for an append that overflowed this leaf: more appends
    /// follow into the new leaf, so a leaf that grows its storage in steps
    /// may make room for as many entries as this one holds at once.
    fn split_off_for_appends(&mut self, at: usize) -> Self {
        self.split_off(at)
    }
    /// Moves this leaf's first `n` entries to the end of `to`.
    fn move_front(&mut self, n: usize, to: &mut Self);
    /// Appends every entry of `next` (whose keys are all above this leaf's).
    fn append(&mut self, next: Self);
}

/// The leaves under their separators.
pub(crate) struct Leaves<L> {
    /// Separator of each leaf -> the leaf (never empty).
    map: BTreeMap<SmallKey, L>,
    len: usize,
    /// The last keys inserted (`split`: an insert right after one of them
    /// continues a run).
    recent: Recent,
}

/// Inserted keys remembered for `split`: a run per writer for this many
/// writers appending to their own key ranges at once.
const RECENT: usize = 8;

/// Fingerprints of the last `RECENT` keys inserted, in a ring.
#[derive(Default)]
struct Recent {
    keys: [u64; RECENT],
    next: usize,
}

impl Recent {
    fn note(&mut self, k: &[u8]) {
        self.keys[self.next] = fingerprint(k);
        self.next = (self.next + 1) % RECENT;
    }

    fn contains(&self, k: &[u8]) -> bool {
        self.keys.contains(&fingerprint(k))
    }
}

/// A cheap stand-in for a key in `Leaves::recent`: a collision only makes
/// one split uneven, never a wrong answer.
fn fingerprint(k: &[u8]) -> u64 {
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        let n = b.len().min(8);
        w[..n].copy_from_slice(&b[..n]);
        u64::from_le_bytes(w)
    };
    word(k) ^ word(&k[k.len().saturating_sub(8)..]).rotate_left(29) ^ k.len() as u64
}

impl<L> Default for Leaves<L> {
    fn default() -> Self {
        Leaves {
            map: BTreeMap::new(),
            len: 0,
            recent: Recent::default(),
        }
    }
}

impl<L: Leaf> Leaves<L> {
    /// Entries in all leaves.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn clear(&mut self) {
        self.map.clear();
        self.len = 0;
    }

    /// The leaves, in key order.
    pub(crate) fn leaves(&self) -> impl DoubleEndedIterator<Item = &L> {
        self.map.values()
    }

    /// The leaf holding `probe` and its position in it.
    pub(crate) fn find(&self, probe: &SmallKey) -> Option<(&L, usize)> {
        let (_, leaf) = self
            .map
            .range::<SmallKey, _>((Bound::Unbounded, Bound::Included(probe)))
            .next_back()?;
        Some((leaf, leaf.search(probe).ok()?))
    }

    /// As `find`, for changing the entry in place.
    pub(crate) fn find_mut(&mut self, probe: &SmallKey) -> Option<(&mut L, usize)> {
        let (_, leaf) = self
            .map
            .range_mut::<SmallKey, _>((Bound::Unbounded, Bound::Included(probe)))
            .next_back()?;
        let i = leaf.search(probe).ok()?;
        Some((leaf, i))
    }

    /// Calls `put` with the leaf where `probe` belongs and where it is or
    /// would go in it. `put` returns its result and, when it inserted a new
    /// entry, where; the tree then splits the leaf if it overflowed.
    pub(crate) fn upsert<R>(
        &mut self,
        probe: &SmallKey,
        put: impl FnOnce(&mut L, Result<usize, usize>) -> (R, Option<usize>),
    ) -> R {
        // Keys written in order go to the last leaf: found down the map's
        // right edge with one comparison, where the search below compares
        // the probe with a few separators in every node on its way (a
        // fifth of an ordered insert's time with 16,000 leaves).
        if let Some(mut last) = self.map.last_entry() {
            if probe >= last.key() {
                let leaf = last.get_mut();
                let found = leaf.search_to_insert(probe);
                let (out, inserted) = put(leaf, found);
                if let Some(at) = inserted {
                    self.len += 1;
                    self.recent.note(probe);
                    if last.get().len() > L::MAX {
                        let sep = last.key().clone();
                        self.split(&sep, at);
                    }
                }
                return out;
            }
        }
        match self.map.first_key_value() {
            None => {
                self.map.insert(probe.clone(), L::default());
            }
            // The first leaf's separator moves down to a key below it.
            Some((first, _)) if probe < first => {
                if let Some((_, leaf)) = self.map.pop_first() {
                    self.map.insert(probe.clone(), leaf);
                }
            }
            Some(_) => {}
        }
        let mut spare = None;
        let (sep, leaf) = match self
            .map
            .range_mut::<SmallKey, _>((Bound::Unbounded, Bound::Included(probe)))
            .next_back()
        {
            Some(found) => found,
            // Never: the map is not empty and its first separator is at or
            // below `probe`. A detached leaf keeps this path panic-free.
            None => (probe, spare.insert(L::default())),
        };
        let found = leaf.search_to_insert(probe);
        let (out, inserted) = put(leaf, found);
        let Some(at) = inserted else {
            return out;
        };
        self.len += 1;
        self.recent.note(probe);
        if leaf.len() > L::MAX {
            let sep = sep.clone();
            self.split(&sep, at);
        }
        out
    }

    /// Calls `take` with the leaf holding `probe` and its position, and
    /// removes the entry; `None` when absent.
    pub(crate) fn remove_with<R>(
        &mut self,
        probe: &SmallKey,
        take: impl FnOnce(&mut L, usize) -> R,
    ) -> Option<R> {
        let (sep, leaf) = self
            .map
            .range_mut::<SmallKey, _>((Bound::Unbounded, Bound::Included(probe)))
            .next_back()?;
        let i = leaf.search(probe).ok()?;
        let before = leaf.len();
        let out = take(leaf, i);
        self.len -= before - leaf.len();
        if leaf.len() < L::MAX / 4 {
            let sep = sep.clone();
            self.after_remove(sep);
        }
        Some(out)
    }

    /// Splits the leaf at `sep` after an insert at `at` made it overflow.
    ///
    /// An insert right after a key inserted just before continues a run
    /// (a writer appending to its own key range, below another range's
    /// keys in the same leaf): the leaf is cut after the new entry, so the
    /// run's next keys land at the end of a leaf of their own and are
    /// appended there, instead of every insert searching and shifting the
    /// middle of a leaf and every split halving it (four writers of
    /// ascending ranges: ktremotetest's bulk sets).
    fn split(&mut self, sep: &SmallKey, at: usize) {
        let Some((appended, run)) = self.map.get(sep).map(|l| {
            let appended = at + 1 == l.len();
            let run = !appended && at > 0 && self.recent.contains(l.key(at - 1));
            (appended, run)
        }) else {
            return;
        };
        if !appended && !run && self.shift_to_prev(sep) {
            return;
        }
        let Some(leaf) = self.map.get_mut(sep) else {
            return;
        };
        // An append keeps the leaf full and starts a new one with the new
        // entry; a run's insert ends the leaf; anything else splits in the
        // middle.
        let cut = if appended {
            leaf.len() - 1
        } else if run {
            at + 1
        } else {
            leaf.len() / 2
        };
        let right = if appended {
            leaf.split_off_for_appends(cut)
        } else {
            leaf.split_off(cut)
        };
        if !right.is_empty() {
            let k = SmallKey::from(right.key(0));
            self.map.insert(k, right);
        }
    }

    /// Evens the overflowing leaf at `sep` with the leaf before it, when that
    /// one has room for at least an eighth of a leaf: moves entries from
    /// this leaf's front to its end, and raises this leaf's separator to
    /// its new first key.
    fn shift_to_prev(&mut self, sep: &SmallKey) -> bool {
        let prev = self
            .map
            .range::<SmallKey, _>((Bound::Unbounded, Bound::Excluded(sep)))
            .next_back()
            .map(|(k, leaf)| (k.clone(), leaf.len()));
        let Some((prev_sep, prev_len)) = prev else {
            return false;
        };
        if prev_len + L::MAX / 8 > L::MAX {
            return false;
        }
        let Some(mut leaf) = self.map.remove(sep) else {
            return false;
        };
        let n = (leaf.len() - prev_len) / 2;
        if let Some(p) = self.map.get_mut(&prev_sep) {
            leaf.move_front(n, p);
        }
        if !leaf.is_empty() {
            let k = SmallKey::from(leaf.key(0));
            self.map.insert(k, leaf);
        }
        true
    }

    /// After a removal left the leaf at `sep` small: drops it when empty,
    /// else merges it into the previous leaf or takes the next one in, when
    /// the two fit in one leaf.
    fn after_remove(&mut self, sep: SmallKey) {
        let Some(len) = self.map.get(&sep).map(L::len) else {
            return;
        };
        if len == 0 {
            self.map.remove(&sep);
            return;
        }
        let prev = self
            .map
            .range::<[u8], _>((Bound::Unbounded, Bound::Excluded(&sep[..])))
            .next_back()
            .map(|(k, p)| (k.clone(), p.len()));
        if let Some((pk, p_len)) = prev {
            if p_len + len <= L::MAX {
                if let Some(leaf) = self.map.remove(&sep) {
                    if let Some(p) = self.map.get_mut(&pk) {
                        p.append(leaf);
                    }
                }
                return;
            }
        }
        let next = self
            .map
            .range::<[u8], _>((Bound::Excluded(&sep[..]), Bound::Unbounded))
            .next()
            .map(|(k, n)| (k.clone(), n.len()));
        if let Some((nk, n_len)) = next {
            if n_len + len <= L::MAX {
                if let Some(next) = self.map.remove(&nk) {
                    if let Some(leaf) = self.map.get_mut(&sep) {
                        leaf.append(next);
                    }
                }
            }
        }
    }

    /// The nearest key at or beyond `from` in the direction.
    pub(crate) fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<&[u8]> {
        if forward {
            // The leaf that may hold `from`, then the ones after it.
            let start = match from {
                Bound::Unbounded => Bound::Unbounded,
                Bound::Included(k) | Bound::Excluded(k) => self
                    .map
                    .range::<[u8], _>((Bound::Unbounded, Bound::Included(k)))
                    .next_back()
                    .map_or(Bound::Unbounded, |(sep, _)| Bound::Included(sep.as_slice())),
            };
            self.map
                .range::<[u8], _>((start, Bound::Unbounded))
                .flat_map(|(_, leaf)| (0..leaf.len()).map(|i| leaf.key(i)))
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
            self.map
                .range::<[u8], _>((Bound::Unbounded, end))
                .rev()
                .flat_map(|(_, leaf)| (0..leaf.len()).rev().map(|i| leaf.key(i)))
                .find(|k| match from {
                    Bound::Unbounded => true,
                    Bound::Included(f) => *k <= f,
                    Bound::Excluded(f) => *k < f,
                })
        }
    }
}

/// A binary search of `len` entries in order (`cmp(i)`: entry `i` against
/// the probe) that, at each step, starts loading both entries the next step
/// may compare (`at(i)`: where entry `i` starts). In a leaf out of the cache
/// (random keys) every step's entry is a miss; so the steps no longer wait
/// for one another's. Same result as `slice::binary_search_by`.
#[inline]
pub(crate) fn search_prefetching(
    len: usize,
    at: impl Fn(usize) -> *const u8,
    cmp: impl Fn(usize) -> std::cmp::Ordering,
) -> Result<usize, usize> {
    use std::cmp::Ordering;
    if len == 0 {
        return Err(0);
    }
    let (mut base, mut size) = (0usize, len);
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        // The next step compares `base + next` or `mid + next`, both
        // below `base + size`.
        let next = (size - half) / 2;
        prefetch_line(at(base + next));
        prefetch_line(at(mid + next));
        if cmp(mid) != Ordering::Greater {
            base = mid;
        }
        size -= half;
    }
    match cmp(base) {
        Ordering::Equal => Ok(base),
        Ordering::Less => Err(base + 1),
        Ordering::Greater => Err(base),
    }
}

/// Entries per ring-buffer leaf. A middle insert shifts on average half a
/// leaf (~2.5 KB for 80-byte entries); more would make random inserts costly.
const LEAF_MAX: usize = 64;

type Ring<V> = VecDeque<(SmallKey, V)>;

impl<V> Leaf for Ring<V> {
    const MAX: usize = LEAF_MAX;

    fn len(&self) -> usize {
        VecDeque::len(self)
    }

    /// The probe is a `SmallKey` so that short keys compare as three
    /// machine words instead of by `memcmp`.
    #[inline]
    fn search(&self, probe: &SmallKey) -> Result<usize, usize> {
        search_prefetching(
            VecDeque::len(self),
            |i| std::ptr::from_ref(&self[i]).cast(),
            |i| self[i].0.cmp(probe),
        )
    }

    /// Keys written in order go after the last one: one comparison
    /// instead of a search (the file tree's bulk sets of ascending keys
    /// spent ~280 instructions a record in this search; callgrind). Several
    /// writers appending to their own key ranges each hit the end of their
    /// own leaf, so this holds for them too.
    #[inline]
    fn search_to_insert(&self, probe: &SmallKey) -> Result<usize, usize> {
        match self.back() {
            Some((last, _)) if last < probe => Err(VecDeque::len(self)),
            _ => self.search(probe),
        }
    }

    fn key(&self, i: usize) -> &[u8] {
        self.get(i).map_or(&[], |(k, _)| k.as_slice())
    }

    fn split_off(&mut self, at: usize) -> Self {
        let mut right = VecDeque::with_capacity(LEAF_MAX + 1);
        right.extend(self.drain(at..));
        right
    }

    fn move_front(&mut self, n: usize, to: &mut Self) {
        to.extend(self.drain(..n));
    }

    fn append(&mut self, next: Self) {
        self.extend(next);
    }
}

/// An ordered map of keys to `V` (the file tree's key -> offset index).
pub(crate) struct LeafTree<V>(Leaves<Ring<V>>);

impl<V> Default for LeafTree<V> {
    fn default() -> Self {
        LeafTree(Leaves::default())
    }
}

impl<V: Send + Sync> Index<V> for LeafTree<V> {
    fn with_capacity(_n: usize) -> Self {
        LeafTree::default()
    }

    fn get(&self, k: &[u8]) -> Option<&V> {
        let (leaf, i) = self.0.find(&SmallKey::from(k))?;
        leaf.get(i).map(|(_, v)| v)
    }

    fn get_mut(&mut self, k: &[u8]) -> Option<&mut V> {
        let (leaf, i) = self.0.find_mut(&SmallKey::from(k))?;
        leaf.get_mut(i).map(|(_, v)| v)
    }

    fn insert(&mut self, k: &[u8], v: V) -> Option<V> {
        let probe = SmallKey::from(k);
        self.0.upsert(&probe, |leaf, found| match found {
            Ok(i) => (
                leaf.get_mut(i).map(|(_, old)| std::mem::replace(old, v)),
                None,
            ),
            Err(at) => {
                leaf.insert(at, (probe.clone(), v));
                (None, Some(at))
            }
        })
    }

    fn remove(&mut self, k: &[u8]) -> Option<V> {
        self.0
            .remove_with(&SmallKey::from(k), |leaf, i| leaf.remove(i))?
            .map(|(_, v)| v)
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0.clear()
    }

    fn seek(&self, from: Bound<&[u8]>, forward: bool) -> Option<&[u8]> {
        self.0.seek(from, forward)
    }

    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a [u8], &'a V)) {
        for (k, v) in self.0.leaves().flatten() {
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

    /// What is wrong with `t` against the model `m`, if anything: its
    /// entries in order, or a leaf's size or separator (a separator is at
    /// most its leaf's first key and above the previous leaf's last).
    fn shape_error(t: &LeafTree<u32>, m: &BTreeMap<Vec<u8>, u32>) -> Option<String> {
        let mut all = Vec::new();
        Index::for_each(t, &mut |k, v| all.push((k.to_vec(), *v)));
        if all != m.clone().into_iter().collect::<Vec<_>>() {
            return Some("entries differ from the model".into());
        }
        let mut prev_last: Option<Vec<u8>> = None;
        for (sep, leaf) in &t.0.map {
            let first = leaf.front().map(|(k, _)| k.as_slice());
            if leaf.is_empty() || leaf.len() > LEAF_MAX || first.is_some_and(|f| sep.as_slice() > f)
            {
                return Some(format!("leaf at {sep:?}: {} entries", leaf.len()));
            }
            if prev_last
                .as_ref()
                .is_some_and(|p| sep.as_slice() <= p.as_slice())
            {
                return Some(format!("separator {sep:?} not above the leaf before"));
            }
            prev_last = leaf.back().map(|(k, _)| k.to_vec());
        }
        None
    }

    /// Four writers appending to their own ascending key ranges, a batch
    /// of 100 at a time (ktremotetest's bulk sets): each range's inserts
    /// end up appended to a leaf of its own (its newest key last in its
    /// leaf), instead of searched for and shifted into the middle of a
    /// leaf that also holds the next range's first keys.
    #[test]
    fn interleaved_ascending_runs_are_appended_to_leaves_of_their_own() {
        let mut t = LeafTree::<u32>::default();
        let mut m = BTreeMap::<Vec<u8>, u32>::new();
        let (writers, per_writer, batch) = (4u32, 20_000u32, 100u32);
        let key = |w: u32, i: u32| format!("{:08}", w * per_writer + i).into_bytes();
        // The highest range first, so every lower range starts below it.
        for start in (0..per_writer).step_by(batch as usize) {
            for w in (0..writers).rev() {
                for i in start..start + batch {
                    Index::insert(&mut t, &key(w, i), i);
                    m.insert(key(w, i), i);
                }
            }
            for w in 0..writers {
                let newest = SmallKey::from(&key(w, start + batch - 1)[..]);
                let (leaf, at) = t.0.find(&newest).expect("inserted");
                assert_eq!(
                    at + 1,
                    leaf.len(),
                    "writer {w} after key {}",
                    start + batch - 1
                );
            }
        }
        assert_eq!(shape_error(&t, &m), None);
        let full = (writers * per_writer) as usize / LEAF_MAX;
        assert!(
            t.0.map.len() <= full + full / 16,
            "{} leaves",
            t.0.map.len()
        );
    }

    proptest! {
        /// The prefetching search finds what the standard one finds, in
        /// every sorted array of distinct entries, for probes in and out.
        #[test]
        fn search_prefetching_matches_binary_search(
            set in proptest::collection::btree_set(0u16..400, 0..80),
            probe in 0u16..420,
        ) {
            let v: Vec<u16> = set.into_iter().collect();
            let found = search_prefetching(v.len(), |i| std::ptr::from_ref(&v[i]).cast(), |i| v[i].cmp(&probe));
            prop_assert_eq!(found, v.binary_search(&probe));
        }

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
            prop_assert_eq!(shape_error(&t, &m), None);
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
        let lens: Vec<usize> = t.0.map.values().map(VecDeque::len).collect();
        assert!(
            lens[..lens.len() - 1].iter().all(|&n| n == LEAF_MAX),
            "{lens:?}"
        );
        for i in (0..10_000u32).step_by(7) {
            assert_eq!(Index::get(&t, format!("{i:08}").as_bytes()), Some(&i));
        }
    }

    /// The append path (`upsert` going straight to the last leaf) against
    /// a model, around the last separator: keys at it, just below it (the
    /// leaf before), above it out of order, and replacements, with leaves
    /// splitting all along.
    #[test]
    fn inserts_around_the_last_separator_match_a_model() {
        let mut t = LeafTree::<u32>::default();
        let mut m = BTreeMap::<Vec<u8>, u32>::new();
        let mut put = |k: Vec<u8>, v: u32, t: &mut LeafTree<u32>| {
            assert_eq!(Index::insert(t, &k, v), m.insert(k.clone(), v), "{k:?}");
        };
        for i in 0..5_000u32 {
            put(format!("{:08}", 10 * i).into_bytes(), i, &mut t);
            let last_sep = t.0.map.last_key_value().map(|(s, _)| s.to_vec());
            if let Some(sep) = last_sep {
                put(sep.clone(), i, &mut t);
                let mut below = sep.clone();
                below.push(0);
                below.truncate(8);
                if let Some(b) = below.last_mut() {
                    *b = b.saturating_sub(1);
                }
                put(below, i, &mut t);
            }
            if i % 3 == 0 {
                put(format!("{:08}", 10 * i + 5).into_bytes(), i, &mut t);
                put(format!("{:08}", 10 * i + 3).into_bytes(), i, &mut t);
            }
        }
        assert_eq!(Index::len(&t), m.len());
        assert_eq!(shape_error(&t, &m), None);
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
            let full = t.0.len.div_ceil(LEAF_MAX);
            let leaves = t.0.map.len();
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
