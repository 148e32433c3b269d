//! The segment cache, `*#capsiz=`'s default (issue 16): fed four times
//! its cap it keeps the newest records and the ones a workload reads,
//! refuses what cannot fit without losing the old value, and a count cap
//! evicts a little at a time. That segments plus table never exceed the
//! cap after any write is checked inside (`store::segcache` unit tests),
//! where the allocation is visible.

use memstored_engine::{Db, Error};

const CAP: usize = 1 << 20;
const NAMES: &[&str] = &[
    "*#capsiz=1m",
    "*#capsiz=1m,num_shards=4,cache_kind=segments",
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

#[test]
fn keeps_the_newest_and_drops_the_oldest() {
    for name in NAMES {
        let db = Db::open(name, true).unwrap();
        let (mut fed, mut n) = (0, 0);
        while fed < 4 * CAP {
            let len = 200 + (n * 37) % 1800;
            db.set(&key(n), &value(n, len), true).unwrap();
            fed += len;
            n += 1;
            assert!(db.stats().bytes <= CAP as u64, "{name}");
        }
        let st = db.stats();
        assert!(st.evictions > 0, "{name}");
        assert!(
            st.bytes > CAP as u64 / 2,
            "{name}: the cache is used ({})",
            st.bytes
        );
        for j in n - 50..n {
            assert!(
                present(&db, &key(j)),
                "{name}: recent record {j} of {n} gone"
            );
        }
        for j in 0..100 {
            assert!(!present(&db, &key(j)), "{name}: old record {j} still held");
        }
        // What is held is about what fits.
        let held: usize = (0..n)
            .filter(|&j| present(&db, &key(j)))
            .map(|j| 200 + (j * 37) % 1800)
            .sum();
        assert!(held > CAP * 7 / 10, "{name}: {held} bytes held");
    }
}

#[test]
fn a_key_read_often_survives_its_unread_neighbours() {
    for name in NAMES {
        let db = Db::open(name, true).unwrap();
        db.set(b"hot", &value(0, 1000), true).unwrap();
        for i in 0..4 * CAP / 1000 {
            db.set(&key(i), &value(i, 1000), true).unwrap();
            if i % 50 == 0 {
                db.get(b"hot").unwrap();
            }
        }
        assert!(present(&db, b"hot"), "{name}: the hot key was evicted");
        for j in 0..20 {
            assert!(!present(&db, &key(j)), "{name}: cold record {j} still held");
        }
    }
}

#[test]
fn what_cannot_fit_is_refused_and_the_old_value_stays() {
    for name in NAMES {
        let db = Db::open(name, true).unwrap();
        db.set(b"small", b"kept", true).unwrap();
        let huge = vec![b'x'; CAP + 1];
        assert!(
            matches!(db.set(b"huge", &huge, true), Err(Error::TooLarge { .. })),
            "{name}"
        );
        assert!(
            matches!(db.set(b"small", &huge, true), Err(Error::TooLarge { .. })),
            "{name}"
        );
        assert_eq!(&db.get(b"small").unwrap()[..], b"kept", "{name}");
        assert_eq!(db.stats().evictions, 0, "{name}: nothing evicted for it");
        // Nearly a whole shard's share fits, evicting the rest.
        let room = CAP / db.name().num_shards;
        for i in 0..200 {
            db.set(&key(i), &value(i, 1000), true).unwrap();
        }
        let big = vec![b'y'; room - 4096];
        db.set(b"big", &big, true).unwrap();
        assert_eq!(db.get(b"big").unwrap().len(), room - 4096, "{name}");
        db.clear().unwrap();
        assert_eq!((db.count(), db.stats().bytes), (0, 0), "{name}");
    }
}

#[test]
fn flags_cas_and_expiry_are_kept_through_eviction_passes() {
    use memstored_engine::{StoreMode, StoreOptions};
    let db = Db::open("*#capsiz=256k", true).unwrap();
    let opts = StoreOptions {
        flags: 0xdead_beef,
        ..Default::default()
    };
    let cas = db.store(b"kept", "v".into(), StoreMode::Set, opts).unwrap();
    for i in 0..2000 {
        db.set(&key(i), &value(i, 300), true).unwrap();
        db.get(b"kept").unwrap();
    }
    let r = db.get_record(b"kept").unwrap().expect("kept");
    assert_eq!((r.meta.flags, r.meta.cas), (0xdead_beef, cas));
}
