//! The CLOCK cache (`cache_kind=clock`; the segment cache, the default, has
//! `segment_cache.rs`). Acceptance: "A cache capped at N bytes, fed 4N bytes of records, stays
//! within its documented bound and keeps the most recently used records."
//! The bound (docs/format.md, Cache accounting): the sum of
//! `store::cache::charge(key, value)` never exceeds `cap_mem_size` once a
//! write returns.

use memstored_engine::store::cache::charge;
use memstored_engine::{Db, Error};
use std::collections::BTreeMap;

const CAP: u64 = 1 << 20;
const CAPPED: &[&str] = &[
    "*#capsiz=1m,cache_kind=clock",
    "*#capsiz=1m,num_shards=4,cache_kind=clock",
];

fn key(i: usize) -> Vec<u8> {
    format!("key-{i:08}").into_bytes()
}

fn value(i: usize, len: usize) -> Vec<u8> {
    let mut v = format!("{i}:").into_bytes();
    v.resize(len, b'.');
    v
}

fn present(db: &Db, k: &[u8]) -> bool {
    match db.get(k) {
        Ok(_) => true,
        Err(Error::NotFound(_)) => false,
        Err(e) => panic!("{e}"),
    }
}

/// The charge of every record the database holds, summed over a full walk.
fn charged(db: &Db) -> u64 {
    let mut c = db.cursor();
    c.first().unwrap();
    let mut total = 0;
    while let Some((k, v)) = c.step().unwrap() {
        total += charge(k.len(), v.len());
    }
    total
}

#[test]
fn stays_within_the_cap_and_keeps_the_newest() {
    for name in CAPPED {
        let db = Db::open(name, true).unwrap();
        let mut fed = 0u64;
        let mut costs = Vec::new();
        let mut i = 0;
        while fed < 4 * CAP {
            // Sizes vary so that evictions do not line up with slots.
            let len = 200 + (i * 37) % 1800;
            let (k, v) = (key(i), value(i, len));
            db.set(&k, &v, true).unwrap();
            let cost = charge(k.len(), v.len());
            fed += cost;
            costs.push(cost);
            let bytes = db.stats().bytes;
            assert!(bytes <= CAP, "{name}: {bytes} bytes held after write {i}");
            i += 1;
        }
        let n = costs.len();
        let st = db.stats();
        assert!(st.evictions > 0, "{name}");
        assert_eq!(
            st.bytes,
            charged(&db),
            "{name}: accounting matches contents"
        );
        assert!(
            st.bytes > CAP / 2,
            "{name}: the cache is used ({} bytes)",
            st.bytes
        );

        // The newest records are all there: at least half the cap's worth
        // (a FIFO with second chances keeps nearly the whole cap of them;
        // sharded, each shard keeps its own newest).
        let mut held = 0;
        let mut j = n;
        while j > 0 && present(&db, &key(j - 1)) {
            j -= 1;
            held += costs[j];
        }
        assert!(
            held >= CAP / 2,
            "{name}: only the newest {held} bytes are all held"
        );
        for j in n - 50..n {
            assert!(
                present(&db, &key(j)),
                "{name}: recent record {j} of {n} gone"
            );
        }
        // The oldest records (the first cap's worth, long since pushed out) are gone.
        let mut old = 0;
        let mut j = 0;
        while old < CAP {
            assert!(!present(&db, &key(j)), "{name}: old record {j} still held");
            old += costs[j];
            j += 1;
        }
        assert_eq!(
            db.inspect()
                .into_iter()
                .collect::<BTreeMap<_, _>>()
                .get("cap_mem_size")
                .map(String::as_str),
            Some("1048576"),
            "{name}"
        );
    }
}

#[test]
fn a_key_read_often_survives_its_unread_neighbours() {
    for name in CAPPED {
        let db = Db::open(name, true).unwrap();
        db.set(b"hot", &value(0, 1000), true).unwrap();
        let mut fed = 0;
        let mut i = 0;
        while fed < 4 * CAP {
            let (k, v) = (key(i), value(i, 1000));
            db.set(&k, &v, true).unwrap();
            fed += charge(k.len(), v.len());
            // The hot key is read now and then: its reference bit is set
            // again before the clock hand comes round twice.
            if i % 50 == 0 {
                db.get(b"hot").unwrap();
            }
            i += 1;
        }
        assert!(present(&db, b"hot"), "{name}: the hot key was evicted");
        // Its neighbours in age, never read, are gone.
        for j in 0..20 {
            assert!(!present(&db, &key(j)), "{name}: cold record {j} still held");
        }
        assert!(db.stats().bytes <= CAP, "{name}");
    }
}

#[test]
fn overwrites_and_removes_keep_the_accounting_exact() {
    for name in CAPPED {
        let db = Db::open(name, true).unwrap();
        for round in 0..3 {
            for i in 0..300 {
                let len = 10 + (i * 7 + round * 500) % 3000;
                db.set(&key(i), &value(i, len), true).unwrap();
                assert!(db.stats().bytes <= CAP, "{name}");
            }
            for i in (0..300).step_by(3) {
                let _ = db.remove(&key(i));
            }
            db.append(&key(1), b"more", b",").unwrap();
            db.increment(b"counter", 1, 0).unwrap();
            assert_eq!(db.stats().bytes, charged(&db), "{name}: round {round}");
        }
        db.clear().unwrap();
        assert_eq!(db.stats().bytes, 0, "{name}");
        assert_eq!(db.count(), 0, "{name}");
    }
}

#[test]
fn record_count_cap() {
    for name in [
        "*#capnum=1000,cache_kind=clock",
        "*#capnum=1000,num_shards=3,cache_kind=clock",
        "*#capnum=1000,num_shards=7,cache_kind=clock",
        "*#capnum=1000,capsiz=1m,num_shards=2,cache_kind=clock",
        "*#capnum=1000",
        "*#capnum=1000,num_shards=3",
        "*#capnum=1000,capsiz=1m,num_shards=2",
    ] {
        let db = Db::open(name, true).unwrap();
        for i in 0..5000 {
            db.set(&key(i), b"small", true).unwrap();
            assert!(db.count() <= 1000, "{name}: {} records", db.count());
        }
        assert!(db.count() >= 900, "{name}: {} records", db.count());
        assert!(db.stats().evictions >= 4000, "{name}");
        // The newest are there.
        for i in 4900..5000 {
            assert!(present(&db, &key(i)), "{name}: {i}");
        }
    }
}

#[test]
fn a_record_larger_than_the_cap_is_infeasible() {
    for name in CAPPED {
        let db = Db::open(name, true).unwrap();
        db.set(b"small", b"kept", true).unwrap();
        let huge = vec![b'x'; CAP as usize + 1];
        assert!(
            matches!(db.set(b"huge", &huge, true), Err(Error::TooLarge { .. })),
            "{name}"
        );
        assert!(!present(&db, b"huge"), "{name}");
        // Over an existing key the old value stays.
        assert!(
            matches!(db.set(b"small", &huge, true), Err(Error::TooLarge { .. })),
            "{name}"
        );
        assert_eq!(&db.get(b"small").unwrap()[..], b"kept", "{name}");
        assert_eq!(db.stats().evictions, 0, "{name}: nothing evicted for it");
        // A record of exactly a shard's capacity fits.
        let shards = db.name().num_shards as u64;
        let k = b"edge";
        let room = CAP / shards;
        let len = (0..room as usize)
            .rev()
            .find(|&l| charge(k.len(), l) <= room)
            .unwrap();
        let fit = vec![b'y'; len];
        db.set(k, &fit, true).unwrap();
        assert!(present(&db, k), "{name}");
        assert!(db.stats().bytes <= CAP, "{name}");
    }
}

#[test]
fn tiny_caps_are_caps() {
    // A cap smaller than the number of shards must not turn into "no cap".
    let db = Db::open("*#capsiz=3,num_shards=4", true).unwrap();
    for i in 0..10 {
        assert!(
            matches!(db.set(&key(i), b"v", true), Err(Error::TooLarge { .. })),
            "record {i} stored in a 3-byte cache"
        );
    }
    assert_eq!(db.count(), 0);
    let db = Db::open("*#capnum=2,num_shards=4", true).unwrap();
    for i in 0..100 {
        db.set(&key(i), b"v", true).unwrap();
    }
    assert!(
        db.count() <= 4,
        "{} records in a 2-record cache",
        db.count()
    );
}
