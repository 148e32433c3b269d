//! A plain set encodes its record before it takes its shard's lock, with a
//! CAS from the shard's atomic counter (`Shard::put_slice`). Sets racing each
//! other on the same keys must still leave every key's record whole, with the
//! flags and CAS its own set returned, in memory and after a reopen; and no
//! key's CAS may be handed out twice.

use bytes::Bytes;
use memstored_engine::{Db, StoreMode, StoreOptions};
use std::collections::{HashMap, HashSet};
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
    db.close().unwrap();
    drop(db);
    let db = Db::open(name, false).unwrap();
    check_records(&db, &by_value);
    // The next CAS after a reopen is above every CAS a record keeps.
    db.close().unwrap();
    drop(db);
    let db = Db::open(name, true).unwrap();
    let next = db
        .store(
            b"after",
            Bytes::from_static(b"v"),
            StoreMode::Set,
            StoreOptions::default(),
        )
        .unwrap();
    for k in 0..KEYS {
        let cas = db
            .get_record(format!("key{k}").as_bytes())
            .unwrap()
            .unwrap()
            .meta
            .cas;
        assert!(next > cas, "CAS {next} after reopen, key{k} keeps {cas}");
    }
    db.close().unwrap();
}

#[test]
fn racing_sets_keep_records_whole_in_a_file_hash() {
    let dir = TempDir::new().unwrap();
    racing_sets_keep_records_whole(&dir.path().join("race.tkh").display().to_string());
}

#[test]
fn racing_sets_keep_records_whole_in_a_compressed_file_tree() {
    let dir = TempDir::new().unwrap();
    let name = format!("{}#compression=zstd", dir.path().join("race.tkt").display());
    racing_sets_keep_records_whole(&name);
}

#[test]
fn racing_sets_keep_records_whole_in_a_sharded_file_hash() {
    let dir = TempDir::new().unwrap();
    let name = format!("{}#num_shards=3", dir.path().join("race.tkh").display());
    racing_sets_keep_records_whole(&name);
}
