use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

fn meta(cas: u64) -> Meta {
    Meta {
        flags: (cas % 3) as u32,
        expires_at: if cas.is_multiple_of(5) {
            1_800_000_000
        } else {
            0
        },
        cas,
    }
}

/// Buffer, offset and aside bytes of every leaf, and how full leaves are.
fn footprint(t: &PackedTree) -> (usize, usize) {
    let bytes = t
        .tree
        .leaves()
        .map(|l| l.buf.capacity() + 4 * l.offs.capacity() + ASIDE_HANDLE * l.aside.capacity())
        .sum();
    (bytes, t.tree.leaves().count())
}

proptest! {
    /// Against a `BTreeMap` model: gets (owned and borrowed), metadata,
    /// removal, every key in order, seeks, and the byte count, with
    /// enough keys to split, even out and merge leaves, overwrites to
    /// compact them, and values on both sides of `EXTERNAL_MIN`.
    #[test]
    fn matches_a_model(
        ops in proptest::collection::vec(
            (0u8..4, 0u16..300, prop_oneof![0usize..40, EXTERNAL_MIN - 2..EXTERNAL_MIN + 2]),
            0..900,
        ),
        probes in proptest::collection::vec(0u16..320, 0..10),
    ) {
        let mut t = PackedTree::default();
        let mut m = BTreeMap::<Vec<u8>, (Vec<u8>, Meta)>::new();
        for (n, (op, k, vlen)) in ops.into_iter().enumerate() {
            let key = format!("{k:0w$}", w = 1 + (k as usize % 30)).into_bytes();
            let value = vec![(n % 251) as u8; vlen];
            let md = meta(n as u64 + 1);
            match op {
                0 => t.put(&key, Bytes::from(value.clone()), md).unwrap(),
                1 => t.put_slice(&key, &value, md).unwrap(),
                _ => {
                    prop_assert_eq!(t.remove(&key).unwrap(), m.remove(&key).is_some());
                    continue;
                }
            }
            m.insert(key, (value, md));
        }
        prop_assert_eq!(t.len(), m.len() as u64);
        let bytes: usize = m.iter().map(|(k, (v, _))| k.len() + v.len()).sum();
        prop_assert_eq!(t.stats().bytes, bytes as u64);
        for (k, (v, md)) in &m {
            let r = t.get(k).unwrap().unwrap();
            prop_assert_eq!((&r.value[..], r.meta), (&v[..], *md));
            prop_assert_eq!(t.get_meta(k).unwrap(), Some(*md));
            let mut seen = None;
            prop_assert!(t.get_with(k, &mut |v, md| seen = Some((v.to_vec(), *md))).unwrap());
            prop_assert_eq!(seen, Some((v.clone(), *md)));
        }
        let keys: Vec<Vec<u8>> = t.keys().into_iter().map(Vec::from).collect();
        prop_assert_eq!(&keys, &m.keys().cloned().collect::<Vec<_>>());
        let mut all = Vec::new();
        t.for_each_record(&mut |k, r| all.push((k.to_vec(), (r.value.to_vec(), r.meta)))).unwrap();
        prop_assert_eq!(all, m.clone().into_iter().collect::<Vec<_>>());
        for leaf in t.tree.leaves() {
            prop_assert!(!leaf.offs.is_empty() && leaf.offs.len() <= PACKED_MAX);
            prop_assert!(leaf.dead <= leaf.buf.len() / 2 || leaf.dead <= 64 + ASIDE_HANDLE);
        }
        for p in probes {
            let p = format!("{p:0w$}", w = 1 + (p as usize % 30)).into_bytes();
            for b in [Bound::Included(&p[..]), Bound::Excluded(&p[..]), Bound::Unbounded] {
                let fwd = m.range::<[u8], _>((b, Bound::Unbounded)).next().map(|(k, _)| k.clone());
                let back = m.range::<[u8], _>((Bound::Unbounded, b)).next_back().map(|(k, _)| k.clone());
                prop_assert_eq!(t.seek(b, true).map(Vec::from), fwd);
                prop_assert_eq!(t.seek(b, false).map(Vec::from), back);
            }
        }
    }
}

/// The point of the engine: 8-byte keys and values in order (Tkrzw's
/// perf sequence) cost 22 bytes a record and a 4-byte offset, in full
/// leaves of exactly sized buffers. The old leaves took 80 a record.
#[test]
fn sequential_records_cost_about_twenty_six_bytes() {
    let mut t = PackedTree::default();
    let n = 100_000u64;
    for i in 0..n {
        let k = format!("{i:08}");
        let md = Meta {
            cas: i + 1_000_000,
            ..Meta::default()
        };
        t.put_slice(k.as_bytes(), k.as_bytes(), md).unwrap();
    }
    let (bytes, leaves) = footprint(&t);
    let per_record = bytes as f64 / n as f64;
    assert!(per_record < 27.0, "{per_record} bytes a record");
    assert!(
        leaves <= (n as usize).div_ceil(PACKED_MAX) + 1,
        "{leaves} leaves"
    );
}

/// Keys in order: each new last leaf starts with room for a full leaf's
/// bytes (appends fill it without growing it step by step), and gives
/// the room back when it splits: no leaf but the last has spare bytes.
#[test]
fn only_the_last_leaf_keeps_room_for_appends() {
    let mut t = PackedTree::default();
    for i in 0..10_000u64 {
        let k = format!("{i:08}");
        t.put_slice(k.as_bytes(), b"value", meta(i + 1)).unwrap();
        if i % 997 == 0 {
            let leaves: Vec<&PackedLeaf> = t.tree.leaves().collect();
            let (last, full) = leaves.split_last().unwrap();
            for l in full {
                assert_eq!(l.buf.capacity(), l.buf.len(), "after {i} appends");
            }
            if let Some(before) = full.last() {
                let per_record = before.buf.len() / before.offs.len();
                let room = last.buf.capacity() - last.buf.len();
                assert!(
                    room >= (PACKED_MAX - last.offs.len()) * per_record,
                    "after {i} appends: {room} bytes of room for {} more records",
                    PACKED_MAX - last.offs.len()
                );
            }
        }
    }
}

/// Keys in random order fill leaves about two-thirds: their offsets grow
/// a quarter at a time, up to a full leaf and the entry a split takes, and
/// never past it (a first version panicked on every leaf of 62 entries).
#[test]
fn offsets_grow_with_their_leaf_and_stop_at_a_full_one() {
    let mut t = PackedTree::default();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..20_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = format!("{:08}", x % 1_000_000);
        t.put_slice(k.as_bytes(), b"value", meta(i + 1)).unwrap();
    }
    let mut spare = 0;
    for l in t.tree.leaves() {
        let (len, cap) = (l.offs.len(), l.offs.capacity());
        assert!(cap <= PACKED_MAX + 1, "{cap} offsets for a leaf of {len}");
        spare += cap - len;
    }
    assert!(
        spare * 6 < t.len() as usize,
        "{spare} spare offsets for {} records",
        t.len()
    );
}

/// Overwriting the same keys again and again keeps each leaf's buffer
/// bounded (dead records are compacted away), and values kept aside
/// are released when replaced.
#[test]
fn overwrites_do_not_grow_the_leaves() {
    let mut t = PackedTree::default();
    let big = Bytes::from(vec![7u8; EXTERNAL_MIN * 4]);
    for round in 0..200u64 {
        for i in 0..1000u64 {
            let k = format!("{i:08}");
            let v = if i % 10 == 0 {
                big.clone()
            } else {
                Bytes::from(format!("{round}-{i}"))
            };
            t.put(k.as_bytes(), v, meta(round * 1000 + i + 1)).unwrap();
        }
    }
    let (bytes, _) = footprint(&t);
    assert!(bytes < 1000 * 70, "{bytes} bytes for 1000 records");
    // One handle per kept large value, plus replaced ones not yet compacted.
    let aside: usize = t
        .tree
        .leaves()
        .map(|l| l.aside.iter().filter(|b| !b.is_empty()).count())
        .sum();
    assert_eq!(aside, 100);
    let long = vec![b'k'; MAX_KEY + 1];
    assert!(matches!(
        t.put_slice(&long, b"v", meta(1)),
        Err(Error::TooLarge { .. })
    ));
    assert_eq!(t.get(&long).unwrap(), None);
    let r = t.get(b"00000010").unwrap().unwrap();
    assert_eq!(r.value, big);
    assert_eq!(
        r.value.as_ptr(),
        big.as_ptr(),
        "a value aside is shared, not copied"
    );
}

/// A store that keeps values (not log records) handed an encoded record
/// (`Store::put_encoded`'s default) stores the value inside it, raw or
/// compressed, with the record's metadata.
#[test]
fn an_encoded_record_is_stored_as_its_value() {
    use crate::format::{encode_record, Op};
    use crate::name::Compression;
    let mut t = PackedTree::default();
    let long = "abcdefgh".repeat(100).into_bytes();
    for (key, value, comp) in [
        (&b"raw"[..], &b"short value"[..], Compression::None),
        (b"zstd", &long, Compression::Zstd),
    ] {
        let mut record = Vec::new();
        let header = encode_record(&mut record, Op::Put, key, value, meta(7), comp).unwrap();
        let compressed = header.codec != crate::format::Codec::Raw;
        assert_eq!(compressed, comp != Compression::None, "{comp:?}");
        t.put_encoded(key, &record, &header).unwrap();
        let r = t.get(key).unwrap().unwrap();
        assert_eq!((&r.value[..], r.meta), (value, meta(7)));
    }
    let mut record = Vec::new();
    let header =
        encode_record(&mut record, Op::Put, b"k", b"v", meta(8), Compression::None).unwrap();
    assert!(
        t.put_encoded(b"k", &record[..3], &header).is_err(),
        "a cut record"
    );
}
