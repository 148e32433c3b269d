//! The two in-memory index shapes every engine is built from: a hash map and
//! an ordered map, both `Index` (`index.rs`). Above `index.rs`,
//! `slab_hash.rs` and `leaf_tree.rs`, so that the trait and its
//! implementations do not import each other.

use super::leaf_tree::LeafTree;
use super::slab_hash::SlabHash;

/// Hash-shaped indexes: positions in a hash table, entries packed in
/// insertion order (`slab_hash.rs` says why).
pub(crate) type HashIndex<V> = SlabHash<V>;
/// Ordered indexes: sorted leaves under a small map of their first keys
/// (`leaf_tree.rs` says why).
pub(crate) type TreeIndex<V> = LeafTree<V>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::index::Index;
    use proptest::prelude::*;

    proptest! {
        /// Both index shapes agree with a `BTreeMap<Vec<u8>, _>` model under
        /// inserts and removes of short and long keys.
        #[test]
        fn indexes_match_a_model(ops in proptest::collection::vec(
            (any::<bool>(), proptest::collection::vec(0u8..4, 0..30), any::<u32>()), 0..200)
        ) {
            let mut model = std::collections::BTreeMap::<Vec<u8>, u32>::new();
            let mut h = <HashIndex<u32> as Index<u32>>::with_capacity(4);
            let mut t = <TreeIndex<u32> as Index<u32>>::with_capacity(0);
            for (insert, k, v) in ops {
                if insert {
                    let old = model.insert(k.clone(), v);
                    prop_assert_eq!(Index::insert(&mut h, &k, v), old);
                    prop_assert_eq!(Index::insert(&mut t, &k, v), old);
                } else {
                    let old = model.remove(&k);
                    prop_assert_eq!(Index::remove(&mut h, &k), old);
                    prop_assert_eq!(Index::remove(&mut t, &k), old);
                }
                prop_assert_eq!(Index::get(&h, &k).copied(), model.get(&k).copied());
                prop_assert_eq!(Index::get(&t, &k).copied(), model.get(&k).copied());
            }
            prop_assert_eq!(Index::len(&h), model.len());
            let mut all = Vec::new();
            Index::for_each(&t, &mut |k, v| all.push((k.to_vec(), *v)));
            prop_assert_eq!(all, model.into_iter().collect::<Vec<_>>());
        }
    }
}
