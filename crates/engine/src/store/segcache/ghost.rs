//! Ghosts of evicted keys (issue 45): which queue a key was evicted from,
//! remembered for a while after its item is gone, so that a write of the
//! key soon after (a cache-aside client's set after its miss) tells the
//! policy which queue was too small (`policy.rs`, ARC's rule).
//!
//! Fingerprints, not keys: one 16-bit word a slot, in a direct-mapped
//! array of about half as many slots as the cache holds items (1 to 1.25
//! bytes an item beside the item's ~130; sized when evictions start, and
//! again if the items outgrow it, never charged to the byte cap). A new
//! ghost overwrites whatever its slot held, so a ghost lasts about as many
//! evictions as the array has slots. A key whose fingerprint matches by
//! chance (1 in 32,768 a lookup) only nudges the share.

/// Bit 0 of a slot: the ghost was evicted from main. 0: an empty slot.
const FROM_MAIN: u16 = 1;

#[derive(Default)]
pub(super) struct Ghosts {
    slots: Vec<u16>,
    /// Ghosts held of keys evicted from probation, and from main.
    probation: u64,
    main: u64,
}

impl Ghosts {
    /// Sized for a cache of `items` items, if it is not already: emptied
    /// when it is (re)sized.
    pub(super) fn size_for(&mut self, items: usize) {
        if self.slots.len() * 2 >= items {
            return;
        }
        let len = (items / 2 + items / 8).max(64);
        *self = Ghosts {
            slots: vec![0; len],
            ..Ghosts::default()
        };
    }

    /// The slot of `hash` and the word its ghost has there (without its
    /// queue bit, never 0). The index takes bits 16..48, the fingerprint
    /// the top 15.
    #[inline]
    fn place(&self, hash: u64) -> (usize, u16) {
        let i = ((hash >> 16) as u32 as u64 * self.slots.len() as u64) >> 32;
        (i as usize, ((hash >> 48) as u16 & !FROM_MAIN).max(2))
    }

    /// Remembers that the key of `hash` was evicted (from main if `main`).
    pub(super) fn remember(&mut self, hash: u64, main: bool) {
        if self.slots.is_empty() {
            return;
        }
        let (i, print) = self.place(hash);
        let word = print | u16::from(main);
        self.forget(self.slots[i]);
        self.slots[i] = word;
        *self.count(main) += 1;
    }

    /// Whether the key of `hash` is a ghost, and then whether it was evicted
    /// from main; the ghost is dropped. Also how many ghosts the other
    /// queue has for each of its own (at least 1): ARC's step.
    #[inline]
    pub(super) fn take(&mut self, hash: u64) -> Option<(bool, u64)> {
        if self.slots.is_empty() {
            return None;
        }
        let (i, print) = self.place(hash);
        let word = self.slots[i];
        if word == 0 || word & !FROM_MAIN != print {
            return None;
        }
        self.slots[i] = 0;
        self.forget(word);
        let main = word & FROM_MAIN != 0;
        let (own, other) = if main {
            (self.main, self.probation)
        } else {
            (self.probation, self.main)
        };
        Some((main, (other / own.max(1)).max(1)))
    }

    fn forget(&mut self, word: u16) {
        if word != 0 {
            let n = self.count(word & FROM_MAIN != 0);
            *n = n.saturating_sub(1);
        }
    }

    fn count(&mut self, main: bool) -> &mut u64 {
        if main {
            &mut self.main
        } else {
            &mut self.probation
        }
    }

    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.slots.len() * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ghost_is_found_once_with_its_queue() {
        let mut g = Ghosts::default();
        assert_eq!(g.take(7), None, "no slots before evictions start");
        g.size_for(1000);
        let h = |n: u64| n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        g.remember(h(1), true);
        g.remember(h(2), false);
        g.remember(h(3), false);
        assert_eq!(g.take(h(1)), Some((true, 2)));
        assert_eq!(g.take(h(1)), None);
        assert_eq!(g.take(h(2)), Some((false, 1)));
        assert_eq!(g.take(h(4)), None);
        assert!(g.bytes() <= 1000 * 5 / 4);
    }
}
