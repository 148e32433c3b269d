//! A plain set encodes its record before it takes its shard's lock, with a
//! CAS from the shard's atomic counter (`Shard::put_slice`). Sets racing each
//! other on the same keys must still leave every key's record whole, with the
//! flags and CAS its own set returned, in memory and after a reopen; no
//! key's CAS may be handed out twice, nor go down as its writes are applied.

use bytes::Bytes;
use memstored_engine::{Db, StoreMode, StoreOptions};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use tempfile::TempDir;

const THREADS: usize = 4;
const ROUNDS: usize = 3000;
const KEYS: usize = 40;

/// What one set stored: key, value, flags, and the CAS it returned.
type Written = (Vec<u8>, Vec<u8>, u32, u64);

/// The value thread `t` writes in round `i`: unique, and of varied length
/// (long ones compressible, and some past the size encoded before the lock).
fn value_of(t: usize, i: usize) -> Vec<u8> {
    let pad = match i % 5 {
        0 => 0,
        1 => 40,
        2 => 300,
        3 => 20_000,
        _ => 7,
    };
    format!("t{t}-i{i}-{}", "ab".repeat(pad)).into_bytes()
}

fn race(db: &Db) -> Vec<Written> {
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..THREADS)
            .map(|t| {
                s.spawn(move || {
                    (0..ROUNDS)
                        .map(|i| {
                            let key = format!("key{}", (i * 7 + t) % KEYS).into_bytes();
                            let value = value_of(t, i);
                            let opts = StoreOptions {
                                flags: t as u32 + 1,
                                ..Default::default()
                            };
                            let cas = db
                                .store(&key, Bytes::from(value.clone()), StoreMode::Set, opts)
                                .unwrap();
                            (key, value, t as u32 + 1, cas)
                        })
                        .collect::<Vec<Written>>()
                })
            })
            .collect();
        writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    })
}

/// Every key's record is one some set wrote, with that set's flags and CAS.
fn check_records(db: &Db, by_value: &HashMap<Vec<u8>, &Written>) {
    for k in 0..KEYS {
        let key = format!("key{k}").into_bytes();
        let record = db.get_record(&key).unwrap().expect("every key was written");
        let (wkey, _, flags, cas) = by_value
            .get(record.value.as_ref())
            .unwrap_or_else(|| panic!("key{k} holds a value no set wrote"));
        assert_eq!(wkey, &key, "key{k} holds another key's value");
        assert_eq!(record.meta.flags, *flags, "key{k}: flags of another set");
        assert_eq!(record.meta.cas, *cas, "key{k}: CAS of another set");
    }
}

fn racing_sets_keep_records_whole(name: &str) {
    let db = Db::open(name, true).unwrap();
    let written = race(&db);
    // Shards count apart; one key's sets never share a CAS.
    let cases: HashSet<(&[u8], u64)> = written.iter().map(|w| (&w.0[..], w.3)).collect();
    assert_eq!(
        cases.len(),
        written.len(),
        "a key's CAS was handed out twice"
    );
    let by_value: HashMap<Vec<u8>, &Written> = written.iter().map(|w| (w.1.clone(), w)).collect();
    check_records(&db, &by_value);
    let before: Vec<_> = (0..KEYS)
        .map(|k| db.get_record(format!("key{k}").as_bytes()).unwrap())
        .collect();
    db.close().unwrap();
    drop(db);
    let db = Db::open(name, false).unwrap();
    check_records(&db, &by_value);
    // The log's order of a key's records is the order they were applied.
    for (k, was) in before.iter().enumerate() {
        let now = db.get_record(format!("key{k}").as_bytes()).unwrap();
        assert_eq!(&now, was, "key{k} after a reopen");
    }
    // After a reopen a key's next CAS is above the one its record keeps
    // (shards count apart: compared key by key).
    db.close().unwrap();
    drop(db);
    let db = Db::open(name, true).unwrap();
    for (k, was) in before.iter().enumerate() {
        let key = format!("key{k}");
        let old = was.as_ref().unwrap().meta.cas;
        let next = db
            .store(
                key.as_bytes(),
                Bytes::from_static(b"v"),
                StoreMode::Set,
                StoreOptions::default(),
            )
            .unwrap();
        assert!(next > old, "CAS {next} after reopen, {key} kept {old}");
    }
    db.close().unwrap();
}

/// A key's CAS grows in the order its writes are applied: a reader never
/// sees a key's CAS go down (memcached's `ms ... I` judges a CAS older or
/// newer by comparing it). Writers that took their CAS before the lock once
/// applied a lower CAS after a higher one another writer had stored.
fn cas_never_goes_down(name: &str) {
    let db = Db::open(name, true).unwrap();
    let keys: Vec<Vec<u8>> = (0..3).map(|k| format!("hot{k}").into_bytes()).collect();
    let writing = AtomicBool::new(true);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..3)
            .map(|t| {
                let (db, keys) = (&db, &keys);
                s.spawn(move || {
                    for i in 0..40_000usize {
                        let value = Bytes::from(format!("t{t}-{i}"));
                        let key = &keys[(i + t) % keys.len()];
                        db.store(key, value, StoreMode::Set, StoreOptions::default())
                            .unwrap();
                    }
                })
            })
            .collect();
        let reader = s.spawn(|| {
            let mut seen = vec![0u64; keys.len()];
            let mut reads = 0u64;
            while writing.load(Ordering::Relaxed) {
                for (k, key) in keys.iter().enumerate() {
                    if let Some(r) = db.get_record(key).unwrap() {
                        assert!(
                            r.meta.cas >= seen[k],
                            "{}: CAS {} after {}",
                            String::from_utf8_lossy(key),
                            r.meta.cas,
                            seen[k]
                        );
                        seen[k] = r.meta.cas;
                        reads += 1;
                    }
                }
            }
            reads
        });
        for w in writers {
            w.join().unwrap();
        }
        writing.store(false, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0, "the reader read nothing");
    });
    db.close().unwrap();
}

/// Runs `check` on the database `file` (with `params`) in a fresh directory.
fn in_fresh_dir(file: &str, params: &str, check: fn(&str)) {
    let dir = TempDir::new().unwrap();
    check(&format!("{}{params}", dir.path().join(file).display()));
}

#[test]
fn racing_sets_keep_records_whole_in_a_file_hash() {
    in_fresh_dir("race.tkh", "", racing_sets_keep_records_whole);
}

#[test]
fn racing_sets_keep_records_whole_in_a_compressed_file_tree() {
    in_fresh_dir(
        "race.tkt",
        "#compression=zstd",
        racing_sets_keep_records_whole,
    );
}

#[test]
fn racing_sets_keep_records_whole_in_a_sharded_file_hash() {
    in_fresh_dir("race.tkh", "#num_shards=3", racing_sets_keep_records_whole);
}

#[test]
fn a_keys_cas_never_goes_down_in_a_file_hash() {
    in_fresh_dir("up.tkh", "", cas_never_goes_down);
}

#[test]
fn a_keys_cas_never_goes_down_in_a_file_tree() {
    in_fresh_dir("up.tkt", "", cas_never_goes_down);
}
