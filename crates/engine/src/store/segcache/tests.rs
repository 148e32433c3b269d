use super::*;
use crate::record::now_secs;

fn meta(cas: u64) -> Meta {
    Meta {
        cas,
        ..Meta::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key-{i:08}").into_bytes()
}

fn value(i: usize) -> Vec<u8> {
    let mut v = format!("{i}:").into_bytes();
    v.resize(100, b'.');
    v
}

#[test]
fn stores_replaces_and_removes() {
    let mut c = SegCache::new(0, 0);
    for i in 0..10_000 {
        c.put_slice(&key(i), &value(i), meta(i as u64 + 1)).unwrap();
    }
    for i in (0..10_000).step_by(3) {
        c.put_slice(&key(i), b"new", meta(99)).unwrap();
    }
    for i in (1..10_000).step_by(3) {
        assert!(c.remove(&key(i)).unwrap());
    }
    assert!(!c.remove(&key(1)).unwrap());
    for i in 0..10_000 {
        let got = c.get(&key(i)).unwrap();
        match i % 3 {
            0 => assert_eq!(
                got.map(|r| (r.value.to_vec(), r.meta.cas)),
                Some((b"new".to_vec(), 99))
            ),
            1 => assert!(got.is_none()),
            _ => assert_eq!(got.map(|r| r.value.to_vec()), Some(value(i))),
        }
    }
    assert_eq!(c.len(), 10_000 - 3333);
    let mut keys = c.keys();
    keys.sort();
    assert_eq!(keys.len() as u64, c.len());
    assert_eq!(c.max_cas(), 10_000);
}

#[test]
fn stays_within_the_cap_and_keeps_what_is_read() {
    let cap = 1 << 20;
    let mut c = SegCache::new(cap, 0);
    // A hot set read after every write, and a stream of keys never read.
    for i in 0..100_000 {
        c.put_slice(&key(i), &value(i), meta(1)).unwrap();
        let used = c.allocated + c.external + c.table.bytes();
        assert!(used <= cap, "{used} after write {i}");
        for h in 0..20 {
            let hot = 1_000_000 + h;
            if c.get(&key(hot)).unwrap().is_none() {
                c.put_slice(&key(hot), &value(hot), meta(1)).unwrap();
            }
        }
    }
    for h in 0..20 {
        assert!(
            c.get(&key(1_000_000 + h)).unwrap().is_some(),
            "hot key {h} evicted"
        );
    }
    assert!(c.evictions > 90_000, "{}", c.evictions);
    // What is held is about what fits: the segments are full, the rest was evicted.
    let per_item = item::encoded_len(&key(0), &item::Value::Inline(&value(0)), &meta(1), 1) as u64;
    let held = c.len() * per_item + c.table.bytes();
    assert!(held > cap * 8 / 10, "{} items", c.len());
    assert!(c.stats().bytes <= cap);
}

#[test]
fn a_cas_is_stored_against_its_segment_and_kept_through_compaction() {
    // The shard's counter is far along (as in a cache up for months): an
    // absolute CAS would take 6 bytes an item.
    let start = 1u64 << 40;
    let mut c = SegCache::new(1 << 20, 0);
    let n = 2_000;
    for i in 0..n {
        c.put_slice(&key(i), &value(i), meta(start + i as u64))
            .unwrap();
    }
    // 64 KiB segments of ~115-byte items: differences below 2^14.
    let two_byte_cas = item::encoded_len(&key(0), &item::Value::Inline(&value(0)), &meta(200), 0);
    assert!(c.stats().bytes <= n as u64 * two_byte_cas as u64);
    // Hot items read after every write survive the hand's passes, moved
    // within their segments; an item given an older CAS than its segment's
    // base (a replica's write) keeps it too.
    c.put_slice(&key(1_000_000), &value(0), meta(7)).unwrap();
    for i in n..60_000 {
        let cas = start + i as u64;
        c.put_slice(&key(i), &value(i), meta(cas)).unwrap();
        for h in [0, 1, 2, 1_000_000] {
            assert!(c.get(&key(h)).unwrap().is_some(), "{h} evicted at {i}");
        }
    }
    assert!(c.evictions > 40_000, "{}", c.evictions);
    for (h, cas) in [(0, start), (1, start + 1), (2, start + 2), (1_000_000, 7)] {
        let meta = c.get_meta(&key(h)).unwrap().map(|m| m.cas);
        assert_eq!(meta, Some(cas), "{h}");
    }
    assert_eq!(
        c.get(&key(59_999)).unwrap().map(|r| r.meta.cas),
        Some(start + 59_999)
    );
}

#[test]
fn large_values_are_kept_aside_and_shared() {
    let cap = 256 << 10;
    let mut c = SegCache::new(cap, 0);
    assert_eq!(c.seg_size, 16 << 10);
    let big = vec![7u8; 100 << 10];
    for i in 0..20 {
        c.put_slice(&key(i), &big, meta(1)).unwrap();
        c.put_slice(&key(1000 + i), &value(i), meta(1)).unwrap();
        assert!(c.allocated + c.external + c.table.bytes() <= cap);
    }
    assert_eq!(
        c.get(&key(19)).unwrap().map(|r| r.value.len()),
        Some(100 << 10)
    );
    // Two reads share one copy, and a value handed in as `Bytes` is kept.
    let a = c.get(&key(19)).unwrap().unwrap().value;
    let b = c.get(&key(19)).unwrap().unwrap().value;
    assert_eq!(a.as_ptr(), b.as_ptr());
    let given = Bytes::from(vec![9u8; 5000]);
    c.put(b"given", given.clone(), meta(1)).unwrap();
    assert_eq!(
        c.get(b"given").unwrap().unwrap().value.as_ptr(),
        given.as_ptr()
    );
    // Only two of the 100 KiB values fit at a time; the evicted ones' are freed.
    assert!(c.external <= cap, "{}", c.external);
    assert_eq!(
        c.external,
        c.big
            .iter()
            .flatten()
            .map(|b| b.len() as u64 + EXTERNAL_OVERHEAD)
            .sum::<u64>()
    );
    // Small and large, with a key too long for a segment, all round trip.
    let long_key = vec![b'k'; 20 << 10];
    c.put_slice(&long_key, b"v", meta(1)).unwrap();
    assert_eq!(
        c.get(&long_key).unwrap().unwrap().value,
        Bytes::from_static(b"v")
    );
    let too_big = vec![0u8; cap as usize];
    assert!(matches!(
        c.put_slice(b"k", &too_big, meta(1)),
        Err(Error::TooLarge { .. })
    ));
}

/// memcached's t/lru.t: 1 MB values into a 64 MB cache. Their records
/// are small, so one segment holds every one of them; a whole pass over it
/// evicted every value not read since (39 kept of 101, 62 evicted), where
/// only the bytes over the cap need freeing, oldest first.
#[test]
fn large_values_are_evicted_only_as_far_as_the_cap_needs() {
    let cap = 64 << 20;
    let mut c = SegCache::new(cap, 0);
    let big = vec![b'x'; (1 << 20) - 250];
    for i in 0..101 {
        c.put_slice(&key(i), &big, meta(1)).unwrap();
        assert!(c.allocated + c.external + c.table.bytes() <= cap);
    }
    let kept: Vec<usize> = (0..101)
        .filter(|&i| c.get(&key(i)).unwrap().is_some())
        .collect();
    // What the cap holds after its segments and table: ~60 values.
    let fits = (cap - c.allocated - c.table.bytes()) / (big.len() as u64 + EXTERNAL_OVERHEAD);
    assert_eq!(kept.len() as u64, fits, "kept {kept:?}");
    // The oldest went first.
    assert_eq!(kept, (101 - kept.len()..101).collect::<Vec<_>>());
    assert_eq!(c.evictions, 101 - kept.len() as u64);
}

/// A segment can hold tens of thousands of small records of values kept
/// aside. Once the cache is full of them, each insert evicts about what it
/// needs (memcached evicts one item per allocation; t/watcher.t looks for
/// an eviction after one set), the oldest first, reading on from where the
/// last insert stopped instead of passing the whole segment: 60,000 inserts
/// of 1 KiB values into 8 MiB take few whole passes. And the cache stays
/// full all along: the records those evictions leave dead fill the
/// segment, and the pass that then makes room must compact them away, not
/// evict every value the segment names (it kept a third of the cap).
#[test]
fn evicting_large_values_frees_what_each_insert_needs() {
    let cap = 8 << 20;
    let mut c = SegCache::new(cap, 0);
    let v = vec![b'v'; 1024];
    let mut i = 0;
    while c.evictions == 0 {
        c.put_slice(&key(i), &v, meta(1)).unwrap();
        i += 1;
    }
    assert!(c.evictions <= 2, "{} evicted at once", c.evictions);
    let passes = c.passes;
    // More only when the table grows (its bytes count against the cap),
    // or main opens its first segment (a written key taken for a ghost is
    // marked read, and its pass moves it to main).
    let mut more = 0;
    for n in 0..60_000 {
        let before = c.evictions;
        c.put_slice(&key(i), &v, meta(1)).unwrap();
        more += usize::from(c.evictions - before > 2);
        i += 1;
        if n % 1000 == 0 {
            let held = c.allocated + c.external + c.table.bytes();
            assert!(
                held >= cap * 9 / 10,
                "{held} of {cap} held after {n} inserts"
            );
        }
    }
    assert!(more <= 10, "{more} inserts evicted more than 2");
    assert!(c.evictions >= 59_000, "{}", c.evictions);
    assert!(
        c.passes - passes < 200,
        "{} whole passes",
        c.passes - passes
    );
    // The newest stayed, the oldest went.
    assert!(c.get(&key(i - 1)).unwrap().is_some());
    assert!(c.get(&key(0)).unwrap().is_none());
}

#[test]
fn the_count_cap_holds() {
    let mut c = SegCache::new(0, 100);
    for i in 0..1000 {
        c.put_slice(&key(i), &value(i), meta(1)).unwrap();
        assert!(c.len() <= 100);
    }
    assert!(c.get(&key(999)).unwrap().is_some());
}

#[test]
fn expired_items_go_first_and_do_not_count_as_evictions() {
    let mut c = SegCache::new(64 << 10, 0);
    let past = Meta {
        expires_at: 1,
        ..Meta::default()
    };
    for i in 0..2000 {
        c.put_slice(&key(i), &value(i), past).unwrap();
    }
    assert_eq!(c.evictions, 0);
    assert!(c.len() < 2000);
}

/// Items that never expire written between many that have expired (a
/// cache of long-lived entries and short-lived ones): the expired ones
/// sit in segments of their own TTL class, which are freed whole when
/// room is needed, so no item that never expires is evicted while they
/// all fit. Mixed into the same segments, the hand evicted unread
/// long-lived items along with the expired ones.
#[test]
fn segments_of_expired_items_are_freed_whole_and_spare_the_rest() {
    let cap = 256 << 10;
    let mut c = SegCache::new(cap, 0);
    let past = Meta {
        expires_at: 1,
        ..Meta::default()
    };
    // 1000 live items (~121 KB) fit in the cap; 20,000 expired ones do not.
    for i in 0..21_000 {
        if i % 21 == 0 {
            c.put_slice(&key(i), &value(i), meta(i as u64 + 1)).unwrap();
        } else {
            c.put_slice(&key(i), &value(i), past).unwrap();
        }
        let used = c.allocated + c.external + c.table.bytes();
        assert!(used <= cap, "{used} after write {i}");
    }
    assert_eq!(c.evictions, 0);
    for i in (0..21_000).step_by(21) {
        assert_eq!(
            c.get(&key(i)).unwrap().map(|r| r.value.to_vec()),
            Some(value(i)),
            "{i}"
        );
    }
    // Every segment left holds live items, but for the one expired items
    // are written to and the one closed since room was last needed.
    let all: Vec<u32> = c.probation.iter().chain(&c.main).copied().collect();
    let expiring = all.iter().filter(|&&id| c.expiry_of(id) != ttl::NEVER);
    assert!(expiring.count() <= 2, "{all:?}");
}

#[test]
fn a_touch_keeps_the_access_state_and_counts_as_a_fetch() {
    let mut c = SegCache::new(0, 0);
    c.put(b"k", Bytes::from_static(b"v"), Meta::default())
        .unwrap();
    assert_eq!(c.access(b"k").map(|a| a.fetched), Some(false));
    let m = Meta {
        expires_at: 99,
        ..Meta::default()
    };
    c.touch(b"k", Bytes::from_static(b"v"), m).unwrap();
    assert_eq!(c.access(b"k").map(|a| a.fetched), Some(true));
    assert_eq!(c.get_meta(b"k").unwrap().map(|m| m.expires_at), Some(99));
    c.update(b"k", Bytes::from_static(b"w"), Meta::default())
        .unwrap();
    assert_eq!(
        c.access(b"k").map(|a| a.fetched),
        Some(true),
        "update keeps it"
    );
    c.put(b"k", Bytes::from_static(b"x"), Meta::default())
        .unwrap();
    assert_eq!(
        c.access(b"k").map(|a| a.fetched),
        Some(false),
        "a store is a new item"
    );
    let first = c.fetch(b"k", true).unwrap().and_then(|(_, a)| a);
    assert_eq!(first.map(|a| a.fetched), Some(false));
    let second = c.fetch(b"k", false).unwrap().and_then(|(_, a)| a);
    assert_eq!(second.map(|a| a.fetched), Some(true));
}

#[test]
fn without_a_byte_cap_overwrites_do_not_hold_memory() {
    // Only a count cap: nothing forces eviction, so dead items must be
    // compacted away as segments fill.
    let mut c = SegCache::new(0, 1000);
    for round in 0..2000 {
        for i in 0..100 {
            c.put_slice(&key(i), &value(round), meta(1)).unwrap();
        }
    }
    assert_eq!(c.len(), 100);
    assert!(
        c.allocated <= 4 * MAX_SEGMENT as u64,
        "{} bytes of segments",
        c.allocated
    );
    for i in 0..100 {
        assert_eq!(
            c.get(&key(i)).unwrap().map(|r| r.value.to_vec()),
            Some(value(1999))
        );
    }
    assert_eq!(c.evictions, 0);
}

/// Regression: overwriting a value kept aside with another one took the
/// index the old value had just freed while writing to the one it had
/// planned, so the write panicked (no index free before) or left an index
/// in use on the free list, later handed to a second item (Python's
/// `Append` on a 1 MiB value under `*` found it).
#[test]
fn overwriting_a_value_kept_aside_keeps_every_value_its_own() {
    let mut c = SegCache::new(0, 0);
    let big = |i: u8, n: usize| vec![i; n];
    c.put_slice(b"a", &big(1, 5000), meta(1)).unwrap();
    c.put_slice(b"a", &big(2, 6000), meta(2)).unwrap();
    assert_eq!(c.get(b"a").unwrap().unwrap().value, big(2, 6000));
    // With a free index on the list before the overwrite.
    c.put_slice(b"b", &big(3, 5000), meta(3)).unwrap();
    c.put_slice(b"c", &big(4, 5000), meta(4)).unwrap();
    assert!(c.remove(b"b").unwrap());
    c.put_slice(b"a", &big(5, 7000), meta(5)).unwrap();
    // New items must not take an index still in use.
    c.put_slice(b"d", &big(6, 5000), meta(6)).unwrap();
    c.put_slice(b"e", &big(7, 5000), meta(7)).unwrap();
    for (k, want) in [
        (b"a", big(5, 7000)),
        (b"c", big(4, 5000)),
        (b"d", big(6, 5000)),
        (b"e", big(7, 5000)),
    ] {
        assert_eq!(c.get(k).unwrap().unwrap().value, want, "{}", k[0] as char);
    }
    assert_eq!(
        c.external,
        (7000 + 3 * 5000 + 4 * EXTERNAL_OVERHEAD as usize) as u64
    );
}

/// The probe hint follows the table through its growths and a clear (see
/// `log.rs`' test of the same for the file hash index).
#[test]
fn the_probe_hint_follows_the_table() {
    let mut c = SegCache::new(0, 0);
    let hint = c.probe_hint().expect("the cache gives a hint");
    let follows = |c: &SegCache| {
        (0..300).all(|i| hint.line(&key(i)) == c.table.first_group(key_hash(&key(i))))
    };
    for i in 0..50_000 {
        c.put_slice(&key(i), &value(i), meta(1)).unwrap();
        assert!(i % 997 != 0 || follows(&c), "after {i} puts");
    }
    assert!(follows(&c), "after the growths");
    c.clear().unwrap();
    assert!(follows(&c), "after clear");
    c.put_slice(&key(1), &value(1), meta(1)).unwrap();
    assert!(follows(&c), "after a put into the cleared cache");
}

/// Large values interleaved with small items spread their records over
/// many segments; a pass that stops early keeps its segment the oldest, so
/// values never read are still evicted oldest first: those kept are the
/// newest ones, without gaps.
#[test]
fn large_values_among_small_items_are_evicted_oldest_first() {
    let cap = 2 << 20;
    let mut c = SegCache::new(cap, 0);
    let large = |i: usize| format!("large-{i:06}").into_bytes();
    for i in 0..3000 {
        c.put_slice(&large(i), &[b'L'; 2000], meta(1)).unwrap();
        for j in 0..5 {
            c.put_slice(&key(i * 5 + j), &value(j), meta(1)).unwrap();
        }
    }
    let kept: Vec<bool> = (0..3000)
        .map(|i| c.get(&large(i)).unwrap().is_some())
        .collect();
    let first = kept
        .iter()
        .position(|&k| k)
        .expect("some large values kept");
    assert!(kept[first..].iter().all(|&k| k), "a gap after {first}");
    assert!(
        first > 0 && c.segments() > 1,
        "first {first}, {} segments",
        c.segments()
    );
}

/// Small and large values (kept aside or not), overwrites and removals
/// under a byte cap: the cap holds after every call, and a value read back
/// is the last one written (eviction may drop it, never change it). Covers
/// the passes that stop early and leave their segment the oldest.
#[test]
fn mixed_sizes_under_a_byte_cap_keep_the_cap_and_the_last_value() {
    use std::collections::HashMap;
    let cap = 4 << 20;
    let mut c = SegCache::new(cap, 0);
    let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let mut rng = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for step in 0..50_000 {
        let k = key((next() % 3000) as usize);
        match next() % 10 {
            0 => {
                c.remove(&k).unwrap();
                model.remove(&k);
            }
            1..=6 => {
                let len = match next() % 4 {
                    0 => (next() % 200_000) as usize,
                    1 => 1000 + (next() % 5000) as usize,
                    _ => (next() % 300) as usize,
                };
                let v = vec![(step % 251) as u8; len];
                c.put_slice(&k, &v, meta(1)).unwrap();
                model.insert(k.clone(), v);
            }
            _ => {
                if let Some(r) = c.get(&k).unwrap() {
                    assert_eq!(Some(&r.value.to_vec()), model.get(&k), "step {step}");
                }
            }
        }
        let used = c.allocated + c.external + c.table.bytes();
        assert!(used <= cap, "{used} at {step}");
    }
    assert!(c.evictions > 0 && c.len() > 0);
}

#[test]
fn evicted_and_expired_items_never_fetched_are_counted() {
    // Nothing read: every eviction is of an item never fetched.
    let mut c = SegCache::new(1 << 20, 0);
    for i in 0..20_000 {
        c.put_slice(&key(i), &value(i), meta(1)).unwrap();
    }
    let st = c.stats();
    assert!(st.evictions > 5_000, "{st:?}");
    assert_eq!(st.evicted_unfetched, st.evictions);
    // Each item fetched once after its write: evicted later, but fetched.
    let mut c = SegCache::new(1 << 20, 0);
    for i in 0..20_000 {
        c.put_slice(&key(i), &value(i), meta(1)).unwrap();
        assert!(c.fetch(&key(i), true).unwrap().is_some());
    }
    let st = c.stats();
    assert!(st.evictions > 5_000, "{st:?}");
    assert_eq!(st.evicted_unfetched, 0);
    // Expired items dropped with their whole segments: every other one
    // fetched (right after its write, before its segment goes).
    let mut c = SegCache::new(1 << 20, 0);
    let gone = Meta {
        expires_at: now_secs() - 1,
        ..meta(1)
    };
    for i in 0..10_000 {
        c.put_slice(&key(i), &value(i), gone).unwrap();
        if i % 2 == 0 {
            assert!(c.fetch(&key(i), true).unwrap().is_some());
        }
    }
    for i in 10_000..30_000 {
        c.put_slice(&key(i), &value(i), meta(1)).unwrap();
    }
    let st = c.stats();
    assert!(st.expired_unfetched > 3_000, "{st:?}");
    assert!(
        st.expired_unfetched <= 5_000,
        "only the unfetched half: {st:?}"
    );
}

/// Issue 45's churn run at a small scale: memcslap's get test again and
/// again on one warm cache, each round writing fresh keys that fill about
/// half of it and then reading every one of them, more times each round.
/// A key written in the newest round is never evicted before it is read:
/// the rounds before were read once and never again, so they go first (as
/// under LRU or memcached's segmented LRU). With one reference bit for
/// both, the keys read in the round before survived a pass and the ones
/// written seconds ago, not read yet, did not.
#[test]
fn the_newest_round_of_a_churn_is_kept_over_rounds_read_before() {
    // Values in segments and values kept aside (memcslap's are ~2.6 KB).
    for (len, cap) in [(100, 4u64 << 20), (2500, 32 << 20)] {
        let mut c = SegCache::new(cap, 0);
        let per_item = item::encoded_len(&key(0), &item::Value::Inline(&value(0)), &meta(1), 1)
            - 100
            + if len >= EXTERNAL_MIN {
                8 + len + EXTERNAL_OVERHEAD as usize
            } else {
                len
            };
        let round = (cap as usize / per_item) * 45 / 100;
        let v = vec![b'v'; len];
        let mut rng = 0x2545f4914f6cdd1du64;
        let mut misses = Vec::new();
        for r in 0..8usize {
            let first = r * round;
            for i in first..first + round {
                c.put_slice(&key(i), &v, meta(1)).unwrap();
            }
            let reads = (1 << (r % 4)) * round;
            let mut missed = 0;
            for _ in 0..reads {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let i = first + (rng % round as u64) as usize;
                missed += usize::from(c.fetch(&key(i), true).unwrap().is_none());
            }
            misses.push(missed);
        }
        assert!(
            misses.iter().all(|&m| m == 0),
            "{len}-byte values, {round} keys a round: misses by round {misses:?}"
        );
    }
}

/// A read of a cache without a cap writes nothing (issue 46): nothing is
/// ever evicted from it, so the reference bit a read set for the hand only
/// dirtied the slot's line. A capped cache still marks what is read.
/// `get_with` hands out the value where it lies, inline or kept aside.
#[test]
fn reads_mark_items_for_the_hand_only_in_a_capped_cache() {
    let big = vec![b'x'; EXTERNAL_MIN];
    for cap in [0, 1 << 30] {
        let mut c = SegCache::new(cap, 0);
        c.put_slice(b"small", b"value", meta(1)).unwrap();
        c.put_slice(b"big", &big, meta(2)).unwrap();
        for (k, want, cas) in [(&b"small"[..], &b"value"[..], 1), (b"big", &big[..], 2)] {
            let mut seen = None;
            let found = c
                .get_with(k, &mut |v, m| seen = Some((v.to_vec(), m.cas)))
                .unwrap();
            assert!(found);
            assert_eq!(seen, Some((want.to_vec(), cas)));
            assert_eq!(
                c.get(k).unwrap().map(|r| r.value.to_vec()),
                Some(want.to_vec())
            );
            let slot = c.slot_of(k).unwrap();
            assert_eq!(c.table.access(slot).take_reference(), cap > 0, "cap {cap}");
        }
        assert!(!c.get_with(b"absent", &mut |_, _| panic!()).unwrap());
    }
}

/// Only a cache that evicts keeps ghosts (`ghost.rs`): an uncapped one
/// compacts its segments by passes too, and sized a table it never reads.
#[test]
fn only_a_capped_cache_keeps_ghosts() {
    for cap in [0, 1 << 20] {
        let mut c = SegCache::new(cap, 0);
        for i in 0..50_000 {
            c.put_slice(&key(i % 5_000), &value(i), meta(1)).unwrap();
            c.put_slice(&key(10_000 + i), &value(i), meta(1)).unwrap();
            if cap == 0 {
                c.remove(&key(10_000 + i)).unwrap();
            }
        }
        assert!(c.passes > 0, "cap {cap}: no pass");
        assert_eq!(c.ghosts.bytes() > 0, cap > 0, "cap {cap}");
    }
}

/// A cache-aside loop (a get, and a put after a miss) over `stream`'s keys
/// in a cache of `cap` bytes of 100-byte values: the hit ratio of the gets
/// from `count_from` on, and the items held at the end.
fn replay(cap: u64, stream: &[usize], count_from: usize) -> (f64, u64) {
    let mut c = SegCache::new(cap, 0);
    let v = [b'v'; 100];
    let (mut hits, mut gets) = (0u64, 0u64);
    for (n, &k) in stream.iter().enumerate() {
        let hit = c.fetch(&key(k), true).unwrap().is_some();
        if !hit {
            c.put_slice(&key(k), &v, meta(1)).unwrap();
        }
        if n >= count_from {
            gets += 1;
            hits += u64::from(hit);
        }
    }
    (hits as f64 / gets.max(1) as f64, c.len())
}

/// scripts/cache_sim.py's scan-then-reuse stream: `cycles` times, `reuse`
/// gets spread over a working set of `working` keys, then one get each of
/// `scan` keys never seen before.
fn scan_then_reuse(working: usize, scan: usize, reuse: usize, cycles: usize) -> Vec<usize> {
    let mut rng = 0x2545f4914f6cdd1du64;
    let (mut out, mut fresh) = (Vec::new(), 1 << 40);
    for _ in 0..cycles {
        for _ in 0..reuse {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            out.push((rng % working as u64) as usize);
        }
        out.extend(fresh..fresh + scan);
        fresh += scan;
    }
    out
}

/// Issue 45's scan-then-reuse stream with a working set larger than the
/// cache (scripts/bench-cache.py policy, "3x keys", at a small scale): a
/// scan of fresh keys twice the cache, then gets spread over a working set
/// of 107% of the items it holds, four times. With main's share fixed at
/// 40% only that much of the working set outlived each scan, and its keys
/// came back to probation and were evicted again before being read twice:
/// 0.492 to 0.496 of the counted gets hit (the process's hash seed moves
/// it), below S3-FIFO's 0.519 simulated on the same kind of stream. Ghosts
/// of main's evictions grow main and bring their keys back into it: 0.528
/// to 0.535. On a working set of 39% of the cache, 0.585 before and now
/// (S3-FIFO 0.593); on Zipf(0.99) over 3x the items, 0.862 before, 0.868
/// now (S3-FIFO 0.876). `print_hit_ratios` prints all three (at 4 MiB,
/// where a cache has 16 segments; `CAP_MB=64`: 0.595, 0.547, 0.896).
#[test]
fn a_working_set_larger_than_main_is_kept_through_scans() {
    let (cap, held) = (4u64 << 20, 29_000);
    let working = held * 107 / 100;
    let s = scan_then_reuse(working, 2 * working, 4 * working, 4);
    let (ratio, _) = replay(cap, &s, 4 * working);
    assert!(ratio > 0.51, "hit ratio {ratio:.4}");
}

/// ARC's rule (`policy.rs`): a key evicted from main and written again
/// grows main's share, one evicted from probation shrinks it, both within
/// 40% and 90%; a key never evicted moves nothing, and both kinds of
/// ghost come back marked read.
#[test]
fn ghosts_move_mains_share_both_ways_within_bounds() {
    let mut c = SegCache::new(1 << 20, 0);
    for i in 0..1000 {
        c.put_slice(&key(i), &value(i), meta(1)).unwrap();
    }
    c.ghosts.size_for(1000);
    let start = c.main_share;
    assert!(!c.ghost_hit(c.hash(b"never"), 100));
    assert_eq!(c.main_share, start);
    let h = c.hash(b"from main");
    c.ghosts.remember(h, true);
    assert!(c.ghost_hit(h, 10_000));
    let grown = c.main_share;
    assert!(grown > start, "{grown} after {start}");
    let h = c.hash(b"from probation");
    c.ghosts.remember(h, false);
    assert!(c.ghost_hit(h, 5_000));
    assert!(c.main_share < grown && c.main_share > start);
    for n in 0..100 {
        let h = c.hash(&key(n));
        c.ghosts.remember(h, true);
        c.ghost_hit(h, 1 << 20);
    }
    assert_eq!(c.main_share, policy::share(90));
    for n in 0..100 {
        let h = c.hash(&key(n));
        c.ghosts.remember(h, false);
        c.ghost_hit(h, 1 << 20);
    }
    assert_eq!(c.main_share, policy::share(40));
}

#[test]
#[ignore = "prints hit ratios; run by hand"]
fn print_hit_ratios() {
    // CAP_MB=64: the server's `-m 64` (in one stripe; ~15 s).
    let mb: u64 = std::env::var("CAP_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let (cap, held) = (mb << 20, 29_000 * mb as usize / 4);
    for working in [held * 39 / 100, held * 107 / 100] {
        let s = scan_then_reuse(working, 2 * working, 4 * working, 4);
        let (ratio, items) = replay(cap, &s, 4 * working);
        println!("scan-then-reuse, working set {working}: hit ratio {ratio:.4}, items {items}");
    }
    let z = zipf(held * 3, 20 * held);
    let (ratio, items) = replay(cap, &z, 10 * held);
    println!(
        "Zipf(0.99) over {}: hit ratio {ratio:.4}, items {items}",
        3 * held
    );
}

/// `n` Zipf(0.99) ranks below `universe`.
fn zipf(universe: usize, n: usize) -> Vec<usize> {
    let mut cdf: Vec<f64> = (1..=universe)
        .map(|r| 1.0 / (r as f64).powf(0.99))
        .collect();
    for i in 1..universe {
        cdf[i] += cdf[i - 1];
    }
    let total = cdf[universe - 1];
    let mut rng = 0x9e3779b97f4a7c15u64;
    (0..n)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let u = (rng >> 11) as f64 / (1u64 << 53) as f64 * total;
            cdf.partition_point(|&c| c < u).min(universe - 1)
        })
        .collect()
}
