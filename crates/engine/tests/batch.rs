//! `Db::put_batch`, `lookup_batch` and `remove_batch` (the bulk requests'
//! one-lock-per-shard calls) over sharded and unsharded engines: the same
//! results as the one-record calls they stand for.

use memstored_engine::{now_secs, BatchPut, Db, Error, Lookup, LookupRef};
use tempfile::TempDir;

fn open_each(f: impl Fn(&str, &Db)) {
    let dir = TempDir::new().unwrap();
    let d = dir.path().display();
    for name in [
        "*".to_string(),
        "*#num_shards=3".to_string(),
        "*#capsiz=64m".to_string(),
        "+#num_shards=4".to_string(),
        format!("{d}/a.tkh#num_shards=3"),
        format!("{d}/b.tkt"),
    ] {
        let db = Db::open(&name, true).unwrap_or_else(|e| panic!("open {name}: {e}"));
        f(&name, &db);
    }
}

fn keys(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("{i:08}").into_bytes()).collect()
}

#[test]
fn put_batch_stores_every_record_with_its_flags_and_expiry() {
    open_each(|name, db| {
        let ks = keys(50);
        let later = now_secs() + 1000;
        let records: Vec<BatchPut> = ks
            .iter()
            .enumerate()
            .map(|(i, k)| BatchPut {
                key: k,
                value: k,
                flags: i as u32,
                expires_at: if i % 2 == 0 { later } else { 0 },
            })
            .collect();
        db.put_batch(&records).unwrap();
        for (i, k) in ks.iter().enumerate() {
            let r = db
                .get_record(k)
                .unwrap()
                .unwrap_or_else(|| panic!("{name}: {i}"));
            assert_eq!(&r.value[..], &k[..], "{name}");
            assert_eq!(r.meta.flags, i as u32, "{name}");
            assert_eq!(r.meta.expires_at, records[i].expires_at, "{name}");
            assert!(r.meta.cas > 0, "{name}");
        }
        assert_eq!(db.count(), 50, "{name}");
        // Again: a batch overwrites, as a plain set does.
        let again: Vec<BatchPut> = records
            .iter()
            .map(|r| BatchPut { value: b"x", ..*r })
            .collect();
        db.put_batch(&again).unwrap();
        assert_eq!(db.get(&ks[7]).unwrap(), &b"x"[..], "{name}");
        assert_eq!(db.count(), 50, "{name}");
    });
}

/// 20 keys: the even ones set (the value is the key), key 1 there but
/// expired (not live), the other odd ones absent.
fn even_set_one_expired(db: &Db) -> Vec<Vec<u8>> {
    let ks = keys(20);
    for k in ks.iter().step_by(2) {
        db.set(k, k, true).unwrap();
    }
    db.store(
        &ks[1],
        bytes::Bytes::from_static(b"old"),
        memstored_engine::StoreMode::Set,
        memstored_engine::StoreOptions {
            expires_at: 1,
            ..Default::default()
        },
    )
    .unwrap();
    ks
}

/// Every key, then key 4 again (position 20).
fn asked_with_a_repeat(ks: &[Vec<u8>]) -> Vec<&[u8]> {
    ks.iter().map(|k| &k[..]).chain([&ks[4][..]]).collect()
}

#[test]
fn lookup_batch_answers_each_position() {
    open_each(|name, db| {
        let ks = even_set_one_expired(db);
        let asked = asked_with_a_repeat(&ks);
        let mut seen: Vec<Option<Lookup>> = vec![None; asked.len()];
        db.lookup_batch(&asked, |i, l| {
            assert!(seen[i].is_none(), "{name}: position {i} answered twice");
            seen[i] = Some(l);
        })
        .unwrap();
        for (i, l) in seen.iter().enumerate() {
            let l = l
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: position {i} not answered"));
            match (i, l) {
                (1, Lookup::Expired) => {}
                (i, Lookup::Hit(r)) if i % 2 == 0 || i == 20 => {
                    assert_eq!(&r.value[..], asked[i], "{name}")
                }
                (i, Lookup::Missing) if i % 2 == 1 => {}
                (i, l) => panic!("{name}: position {i}: {l:?}"),
            }
        }
    });
}

#[test]
fn lookup_batch_with_lends_what_lookup_batch_hands_over() {
    open_each(|name, db| {
        let ks = even_set_one_expired(db);
        let asked = asked_with_a_repeat(&ks);
        let mut owned: Vec<Option<Lookup>> = vec![None; asked.len()];
        db.lookup_batch(&asked, |i, l| owned[i] = Some(l)).unwrap();
        // Values are 8 bytes: all lent below 9, none below 8.
        for lend_below in [9, 8] {
            let mut lent: Vec<Option<Lookup>> = vec![None; asked.len()];
            db.lookup_batch_with(&asked, lend_below, |i, l| {
                assert!(lent[i].is_none(), "{name}: position {i} answered twice");
                lent[i] = Some(match l {
                    LookupRef::Lent(value, meta) => {
                        assert!(value.len() < lend_below, "{name}: lent {i}");
                        Lookup::Hit(memstored_engine::Record {
                            value: bytes::Bytes::copy_from_slice(value),
                            meta: *meta,
                        })
                    }
                    LookupRef::Hit(r) => {
                        assert!(r.value.len() >= lend_below, "{name}: handed over {i}");
                        Lookup::Hit(r)
                    }
                    LookupRef::Expired => Lookup::Expired,
                    LookupRef::Missing => Lookup::Missing,
                });
            })
            .unwrap();
            assert_eq!(lent, owned, "{name}: lend below {lend_below}");
        }
        // A client's fetch: the capped cache records it (meta's `h` flag).
        if let Some(a) = db.access(&ks[2]).unwrap() {
            assert!(a.fetched, "{name}: the fetch was not recorded");
        }
    });
}

#[test]
fn remove_batch_counts_only_live_records() {
    open_each(|name, db| {
        let ks = keys(30);
        for k in ks.iter().take(20) {
            db.set(k, k, true).unwrap();
        }
        let asked: Vec<&[u8]> = ks.iter().skip(10).map(|k| &k[..]).collect();
        assert_eq!(db.remove_batch(&asked).unwrap(), 10, "{name}");
        assert_eq!(db.count(), 10, "{name}");
        assert_eq!(db.remove_batch(&asked).unwrap(), 0, "{name}");
        assert!(db.get_record(&ks[9]).unwrap().is_some(), "{name}");
    });
}

#[test]
fn a_read_only_database_refuses_batches_before_any_record() {
    let dir = TempDir::new().unwrap();
    let name = format!("{}/r.tkh", dir.path().display());
    Db::open(&name, true).unwrap().close().unwrap();
    let db = Db::open(&name, false).unwrap();
    let e = db
        .put_batch(&[BatchPut {
            key: b"k",
            value: b"v",
            flags: 0,
            expires_at: 0,
        }])
        .unwrap_err();
    assert_eq!(e.done, 0);
    assert!(matches!(e.error, Error::Precondition(_)), "{:?}", e.error);
    assert!(db.remove_batch(&[b"k"]).is_err());
}
