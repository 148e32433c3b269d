//! The hash table under `SlabHash`: positions of entries, found by hash.
//!
//! Why not hashbrown's `HashTable<u32>`: its control bytes and its slots are
//! two arrays, so a lookup misses cache twice before it reaches the entry.
//! Here a slot is one `u64` — the upper 32 bits of the key's hash next to the
//! entry's position — in an open-addressing table with linear probing, so a
//! lookup usually costs one miss in the table and compares keys only when 32
//! bits of hash agree. The stored hash bits also place the slot, so growing
//! never reads an entry. Deletion shifts the following slots back (no
//! tombstones), so probe runs stay as short as the load allows.

/// A free slot. Occupied slots store `position + 1` in their low half, so
/// they are never 0.
const EMPTY: u64 = 0;

/// The table grows when it would be fuller than 3/4: linear probing's runs
/// stay short below that.
const MAX_LOAD_NUM: usize = 3;
const MAX_LOAD_DEN: usize = 4;
const MIN_SLOTS: usize = 16;

#[derive(Default)]
pub(crate) struct PositionTable {
    /// A power of two in length (or empty).
    slots: Vec<u64>,
    len: usize,
}

#[inline]
fn hash_bits(hash: u64) -> u32 {
    (hash >> 32) as u32
}

#[inline]
fn pack(bits: u32, pos: u32) -> u64 {
    (u64::from(bits) << 32) | (u64::from(pos) + 1)
}

#[inline]
fn position(slot: u64) -> u32 {
    (slot as u32).wrapping_sub(1)
}

#[inline]
fn bits_of(slot: u64) -> u32 {
    (slot >> 32) as u32
}

/// Slots for `n` entries within the load limit.
fn slots_for(n: usize) -> usize {
    (n.saturating_mul(MAX_LOAD_DEN) / MAX_LOAD_NUM + 1)
        .max(MIN_SLOTS)
        .next_power_of_two()
}

impl PositionTable {
    /// Room for `n` entries before the first growth. The slots are zeroed
    /// lazily by the OS (one `calloc`), so an unused reservation costs
    /// address space, not memory.
    pub(crate) fn with_capacity(n: usize) -> Self {
        PositionTable {
            slots: if n == 0 {
                Vec::new()
            } else {
                vec![EMPTY; slots_for(n)]
            },
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// The slot index holding the position for which `eq` holds.
    #[inline]
    fn find_slot(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let bits = hash_bits(hash);
        let mask = self.mask();
        let mut i = bits as usize & mask;
        loop {
            let slot = *self.slots.get(i)?;
            if slot == EMPTY {
                return None;
            }
            if bits_of(slot) == bits && eq(position(slot)) {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// The position of the entry with `hash` for which `eq` holds.
    #[inline]
    pub(crate) fn find(&self, hash: u64, eq: impl FnMut(u32) -> bool) -> Option<u32> {
        let i = self.find_slot(hash, eq)?;
        self.slots.get(i).map(|&s| position(s))
    }

    /// Adds `pos` under `hash`; the caller knows no equal entry is present.
    pub(crate) fn insert_unique(&mut self, hash: u64, pos: u32) {
        if (self.len + 1) * MAX_LOAD_DEN > self.slots.len() * MAX_LOAD_NUM {
            self.grow();
        }
        self.place(pack(hash_bits(hash), pos));
        self.len += 1;
    }

    /// Puts an occupied slot value into the first free slot of its run.
    #[inline]
    fn place(&mut self, slot: u64) {
        let mask = self.mask();
        let mut i = bits_of(slot) as usize & mask;
        while let Some(s) = self.slots.get_mut(i) {
            if *s == EMPTY {
                *s = slot;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        for slot in old.into_iter().filter(|&s| s != EMPTY) {
            self.place(slot);
        }
    }

    /// Removes the entry with `hash` for which `eq` holds; returns its position.
    pub(crate) fn remove(&mut self, hash: u64, eq: impl FnMut(u32) -> bool) -> Option<u32> {
        let found = self.find_slot(hash, eq)?;
        let removed = position(*self.slots.get(found)?);
        // Backward-shift deletion: walk the run after the hole and pull back
        // every slot whose home is not between the hole and itself.
        let mask = self.mask();
        let mut hole = found;
        let mut j = (found + 1) & mask;
        loop {
            let slot = match self.slots.get(j) {
                Some(&s) if s != EMPTY => s,
                _ => break,
            };
            let home = bits_of(slot) as usize & mask;
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                if let Some(h) = self.slots.get_mut(hole) {
                    *h = slot;
                }
                hole = j;
            }
            j = (j + 1) & mask;
        }
        if let Some(h) = self.slots.get_mut(hole) {
            *h = EMPTY;
        }
        self.len -= 1;
        Some(removed)
    }

    /// The slot index holding exactly `pos` under `hash`.
    fn slot_of(&self, hash: u64, pos: u32) -> Option<usize> {
        self.find_slot(hash, |p| p == pos)
    }

    /// Points the entry at `a` (hashed `ha`) to `b` and the one at `b` to
    /// `a`. False, and nothing changed, unless both are present.
    pub(crate) fn swap_positions(&mut self, ha: u64, a: u32, hb: u64, b: u32) -> bool {
        let (Some(i), Some(j)) = (self.slot_of(ha, a), self.slot_of(hb, b)) else {
            return false;
        };
        if let Some(s) = self.slots.get_mut(i) {
            *s = pack(hash_bits(ha), b);
        }
        if let Some(s) = self.slots.get_mut(j) {
            *s = pack(hash_bits(hb), a);
        }
        true
    }

    /// Rewrites every position through `f` (after the entries moved).
    pub(crate) fn remap(&mut self, mut f: impl FnMut(u32) -> u32) {
        for s in self.slots.iter_mut().filter(|s| **s != EMPTY) {
            *s = pack(bits_of(*s), f(position(*s)));
        }
    }

    /// Drops every entry and the table's memory.
    pub(crate) fn clear(&mut self) {
        self.slots = Vec::new();
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Against a model, with hashes drawn from a tiny range so that runs
        /// collide, wrap around the end and get shifted by removals.
        #[test]
        fn matches_a_model(
            ops in proptest::collection::vec((any::<bool>(), 0u32..64, 0u64..8), 0..400),
            presize in 0usize..40,
        ) {
            let mut t = PositionTable::with_capacity(presize);
            // key -> (hash, position); a key's position is the key itself.
            let mut model = HashMap::<u32, u64>::new();
            for (insert, key, h) in ops {
                // Hashes share their low bits a lot: only the upper half counts.
                let hash = (h.wrapping_mul(0x9e37_79b9) | 0xf000_0000) << 32;
                let present = model.contains_key(&key);
                let hash = *model.get(&key).unwrap_or(&hash);
                if insert && !present {
                    t.insert_unique(hash, key);
                    model.insert(key, hash);
                } else if !insert {
                    prop_assert_eq!(t.remove(hash, |p| p == key), present.then_some(key));
                    model.remove(&key);
                }
                prop_assert_eq!(t.len(), model.len());
                for (&k, &kh) in &model {
                    prop_assert_eq!(t.find(kh, |p| p == k), Some(k));
                }
                prop_assert_eq!(t.find(hash, |p| p == key), model.get(&key).map(|_| key));
            }
            // Swapping two present positions and back leaves them findable.
            let present: Vec<(u32, u64)> = model.iter().map(|(&k, &h)| (k, h)).take(2).collect();
            if let [(a, ha), (b, hb)] = present[..] {
                prop_assert!(t.swap_positions(ha, a, hb, b));
                prop_assert_eq!(t.find(ha, |p| p == b), Some(b));
                prop_assert_eq!(t.find(hb, |p| p == a), Some(a));
                prop_assert!(t.swap_positions(ha, b, hb, a));
                prop_assert!(!t.swap_positions(ha, 999, hb, a), "absent position");
            }
            t.remap(|p| p + 1000);
            for (&k, &kh) in &model {
                prop_assert_eq!(t.find(kh, |p| p == k + 1000), Some(k + 1000));
            }
        }
    }

    #[test]
    fn load_stays_under_three_quarters() {
        let mut t = PositionTable::default();
        for i in 0..10_000u32 {
            t.insert_unique(u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15), i);
            assert!(t.len() * 4 <= t.slots.len() * 3);
        }
        assert_eq!(slots_for(1 << 20), 1 << 21);
    }
}
