//! Random operation sequences on every engine, compared with a `BTreeMap`
//! model, including close and reopen for the engines that keep files.

#![allow(clippy::map_entry)] // the branches check the database first, then update the model

use memstored_engine::{Db, Error};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Op {
    Set(u8, Vec<u8>),
    Add(u8, Vec<u8>),
    Replace(u8, Vec<u8>),
    Append(u8, Vec<u8>),
    Remove(u8),
    Clear,
    Sync,
    Reopen,
}

fn key(k: u8) -> Vec<u8> {
    format!("key{k:03}").into_bytes()
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..24),
        // Long repetitive values, so compressed engines really compress.
        1 => (any::<u8>(), 40usize..400).prop_map(|(b, n)| vec![b; n]),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0u8..24;
    prop_oneof![
        6 => (k.clone(), value()).prop_map(|(k, v)| Op::Set(k, v)),
        2 => (k.clone(), value()).prop_map(|(k, v)| Op::Add(k, v)),
        2 => (k.clone(), value()).prop_map(|(k, v)| Op::Replace(k, v)),
        2 => (k.clone(), value()).prop_map(|(k, v)| Op::Append(k, v)),
        3 => k.prop_map(Op::Remove),
        1 => Just(Op::Clear),
        1 => Just(Op::Sync),
        1 => Just(Op::Reopen),
    ]
}

/// Checks the whole database against the model.
fn check_all(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    assert_eq!(db.count(), model.len() as u64, "count");
    for (k, v) in model {
        assert_eq!(&db.get(k).unwrap()[..], &v[..], "value of {k:?}");
    }
    let mut listed = Vec::new();
    let mut c = db.cursor();
    c.first().unwrap();
    while let Some((k, v)) = c.step().unwrap() {
        listed.push((k, v.to_vec()));
    }
    if !db.is_ordered() {
        listed.sort();
    }
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(listed, want, "iteration");
    if db.is_ordered() {
        let mut back = Vec::new();
        c.last().unwrap();
        while let Ok(k) = c.key() {
            back.push(k);
            c.previous().unwrap();
        }
        back.reverse();
        assert_eq!(
            back,
            model.keys().cloned().collect::<Vec<_>>(),
            "backward iteration"
        );
    }
}

fn run(name: &str, ops: &[Op]) {
    let mut db = Db::open(name, true).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for op in ops {
        match op {
            Op::Set(k, v) => {
                db.set(&key(*k), v, true).unwrap();
                model.insert(key(*k), v.clone());
            }
            Op::Add(k, v) => {
                let r = db.set(&key(*k), v, false);
                if model.contains_key(&key(*k)) {
                    assert!(matches!(r, Err(Error::Duplication(_))), "{r:?}");
                } else {
                    r.unwrap();
                    model.insert(key(*k), v.clone());
                }
            }
            Op::Replace(k, v) => {
                let r = db.replace(&key(*k), v);
                if model.contains_key(&key(*k)) {
                    r.unwrap();
                    model.insert(key(*k), v.clone());
                } else {
                    assert!(matches!(r, Err(Error::NotFound(_))), "{r:?}");
                }
            }
            Op::Append(k, v) => {
                db.append(&key(*k), v, b",").unwrap();
                // Appending to an absent record stores the value alone.
                let new = match model.get(&key(*k)) {
                    Some(old) => [&old[..], b",", &v[..]].concat(),
                    None => v.clone(),
                };
                model.insert(key(*k), new);
            }
            Op::Remove(k) => {
                let r = db.remove(&key(*k));
                match model.remove(&key(*k)) {
                    Some(_) => r.unwrap(),
                    None => assert!(matches!(r, Err(Error::NotFound(_))), "{r:?}"),
                }
            }
            Op::Clear => {
                db.clear().unwrap();
                model.clear();
            }
            Op::Sync => db.synchronize(true).unwrap(),
            Op::Reopen => {
                if db.name().kind.has_file() {
                    db.close().unwrap();
                    drop(db);
                    db = Db::open(name, true).unwrap();
                }
            }
        }
        assert_eq!(db.count(), model.len() as u64, "count after {op:?}");
    }
    check_all(&db, &model);
    if db.name().kind.has_file() {
        drop(db);
        let db = Db::open(name, false).unwrap();
        check_all(&db, &model);
    }
}

/// Every engine, with `{dir}` standing for a fresh directory per run.
const ENGINES: &[&str] = &[
    "*",
    "*#num_shards=3",
    "*#capsiz=64m",
    "*#capsiz=64m,cache_kind=segments,num_shards=2",
    "+",
    "+#num_shards=3",
    "{dir}/m.tkh",
    "{dir}/m.tkt#num_shards=2",
    "{dir}/m.tkmt",
    "{dir}/m.tkh#compression=zstd",
    "{dir}/m.tkt#compression=lz4,num_shards=3",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_engine_matches_a_btreemap(ops in proptest::collection::vec(op(), 1..60)) {
        for template in ENGINES {
            let dir = tempfile::tempdir().unwrap();
            run(&template.replace("{dir}", &dir.path().display().to_string()), &ops);
        }
    }
}
