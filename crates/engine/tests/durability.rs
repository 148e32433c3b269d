//! Power-loss tests over the simulated file system: after a crash, every
//! record synced before it is present, the database opens, and what survives
//! of the unsynced work is a prefix of it per shard (a torn tail is cut, never served).

use memstored_engine::format::{RecordHeader, FILE_HEADER_SIZE};
use memstored_engine::io::{PowerLoss, SimFs};
use memstored_engine::Db;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone)]
enum Op {
    Set(u8, Vec<u8>),
    Remove(u8),
    Clear,
    /// Hand buffered writes to the (simulated) OS without syncing.
    Flush,
    Sync,
    /// Clean close and reopen (writes the hint file).
    Reopen,
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(k: u8) -> Vec<u8> {
    format!("k{k:02}").into_bytes()
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u8..20, proptest::collection::vec(any::<u8>(), 0..300)).prop_map(|(k, v)| Op::Set(k, v)),
        3 => (0u8..20).prop_map(Op::Remove),
        1 => Just(Op::Clear),
        3 => Just(Op::Flush),
        2 => Just(Op::Sync),
        1 => Just(Op::Reopen),
    ]
}

fn apply(model: &mut Model, op: &Op) {
    match op {
        Op::Set(k, v) => {
            model.insert(key(*k), v.clone());
        }
        Op::Remove(k) => {
            model.remove(&key(*k));
        }
        Op::Clear => model.clear(),
        _ => {}
    }
}

fn snapshot(db: &Db) -> Model {
    let mut out = Model::new();
    let mut c = db.cursor();
    c.first().unwrap();
    while let Some((k, v)) = c.step().unwrap() {
        out.insert(k, v.to_vec());
    }
    out
}

/// The part of `m` whose keys live in shard `s`.
fn restrict(db: &Db, m: &Model, s: usize) -> Model {
    m.iter()
        .filter(|(k, _)| db.shard_index(k) == s)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn crash_and_check(name: &str, ops: &[Op], loss: PowerLoss) {
    let fs = SimFs::new();
    let mut db = Db::open_with_fs(name, true, fs.clone()).unwrap();
    let mut synced = Model::new();
    let mut pending: Vec<Op> = Vec::new();
    for op in ops {
        match op {
            Op::Set(k, v) => db.set(&key(*k), v, true).unwrap(),
            Op::Remove(k) => {
                let _ = db.remove(&key(*k));
            }
            Op::Clear => db.clear().unwrap(),
            Op::Flush => db.synchronize(false).unwrap(),
            Op::Sync => db.synchronize(true).unwrap(),
            Op::Reopen => {
                drop(db);
                db = Db::open_with_fs(name, true, fs.clone()).unwrap();
            }
        }
        pending.push(op.clone());
        if matches!(op, Op::Sync | Op::Reopen) {
            for p in pending.drain(..) {
                apply(&mut synced, &p);
            }
        }
    }
    // The process dies: nothing more is written, not even at drop.
    std::mem::forget(db);
    fs.power_loss(loss);
    let db = Db::open_with_fs(name, true, fs.clone()).unwrap();
    let got = snapshot(&db);
    for s in 0..db.name().num_shards {
        let mut candidate = restrict(&db, &synced, s);
        let mut ok = candidate == restrict(&db, &got, s);
        for p in &pending {
            apply(&mut candidate, p);
            ok |= restrict(&db, &candidate, s) == restrict(&db, &got, s);
        }
        let keys = |m: &Model| {
            m.iter()
                .map(|(k, v)| format!("{}={}", String::from_utf8_lossy(k), v.len()))
                .collect::<Vec<_>>()
        };
        let ops: Vec<String> = pending
            .iter()
            .map(|p| match p {
                Op::Set(k, v) => format!("set k{k:02} ({} bytes)", v.len()),
                other => format!("{other:?}"),
            })
            .collect();
        assert!(ok, "{name} shard {s}: recovered keys {:?} (synced {:?}) are not synced state + a prefix of {ops:?}", keys(&restrict(&db, &got, s)), keys(&synced));
    }
    // The recovered database keeps working across a clean reopen.
    db.set(b"after", b"crash", true).unwrap();
    drop(db);
    let db = Db::open_with_fs(name, false, fs).unwrap();
    assert_eq!(&db.get(b"after").unwrap()[..], b"crash");
    assert_eq!(
        db.count(),
        got.len() as u64 + u64::from(!got.contains_key(&b"after"[..]))
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn power_loss_keeps_synced_records(
        ops in proptest::collection::vec(op(), 1..50),
        keep_ops in 0usize..4,
        torn_bytes in 0usize..700,
    ) {
        let loss = PowerLoss { keep_ops, torn_bytes };
        for name in ["/sim/a.tkh", "/sim/b.tkt#num_shards=3", "/sim/c.tkh#compression=zstd", "/sim/d.tkmt"] {
            crash_and_check(name, &ops, loss);
        }
    }
}

/// The offset of the last record of a log's bytes.
fn last_record_at(file: &[u8]) -> usize {
    let (mut at, mut last) = (FILE_HEADER_SIZE, FILE_HEADER_SIZE);
    while let Some(h) = file.get(at..).and_then(RecordHeader::decode) {
        last = at;
        at += h.total_len() as usize;
    }
    assert_eq!(at, file.len(), "records end at the end of the file");
    last
}

#[test]
fn torn_tail_on_a_real_file_is_truncated_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.tkh");
    let name = path.display().to_string();
    let db = Db::open(&name, true).unwrap();
    for i in 0..100 {
        db.set(
            format!("key{i}").as_bytes(),
            format!("value{i}").as_bytes(),
            true,
        )
        .unwrap();
    }
    // Closed (not forgotten: that would keep its lock held); the hint
    // written at close is removed below, as a crash leaves none.
    drop(db);
    let good_len = std::fs::metadata(&path).unwrap().len();
    // A record cut in the middle, as a crash during write() leaves it.
    let mut bytes = std::fs::read(&path).unwrap();
    let last_record = bytes[last_record_at(&bytes)..].to_vec();
    bytes.extend_from_slice(&last_record[..last_record.len() * 3 / 5]);
    std::fs::write(&path, &bytes).unwrap();
    let _ = std::fs::remove_file(dir.path().join("t.tkh.hint"));

    let db = Db::open(&name, true).unwrap();
    assert_eq!(db.count(), 100);
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        good_len,
        "torn tail cut off"
    );
    for i in 0..100 {
        assert_eq!(
            db.get(format!("key{i}").as_bytes()).unwrap(),
            format!("value{i}").as_bytes()
        );
    }
}

#[test]
fn reopen_uses_the_hint_instead_of_reading_every_record() {
    let fs = SimFs::new();
    let name = "/sim/h.tkh";
    let db = Db::open_with_fs(name, true, fs.clone()).unwrap();
    for i in 0..50 {
        db.set(format!("key{i:02}").as_bytes(), &[b'x'; 100], true)
            .unwrap();
    }
    drop(db);
    assert!(
        fs.contents(Path::new("/sim/h.tkh.hint")).is_some(),
        "clean close writes a hint"
    );
    // Damage one value byte in the middle of the log. A full scan would stop
    // there and cut off every later record; with the hint, the open reads no
    // values and only the damaged record reports broken data.
    let mut data = fs.contents(Path::new(name)).unwrap();
    let mid = data.len() / 2;
    data[mid] ^= 0xff;
    fs.put_contents(Path::new(name), data.clone());
    let db = Db::open_with_fs(name, true, fs.clone()).unwrap();
    assert_eq!(db.count(), 50);
    let broken: Vec<_> = (0..50)
        .filter(|i| db.get(format!("key{i:02}").as_bytes()).is_err())
        .collect();
    assert_eq!(
        broken.len(),
        1,
        "exactly the damaged record fails: {broken:?}"
    );
    drop(db);

    // Without the hint, the scan meets the damage with valid records after
    // it: not a torn tail, so a writable open refuses rather than cut them
    // off, and a read-only open serves all but the damaged one
    // (`recovery.rs`).
    fs.put_contents(Path::new(name), data);
    fs.remove_for_test(Path::new("/sim/h.tkh.hint"));
    let e = Db::open_with_fs(name, true, fs.clone()).err().unwrap();
    assert_eq!(e.status_name(), "BROKEN_DATA_ERROR", "{e}");
    let db = Db::open_with_fs(name, false, fs).unwrap();
    assert_eq!(db.count(), 49);
}

#[test]
fn a_stale_hint_from_another_file_is_ignored() {
    let fs = SimFs::new();
    let db = Db::open_with_fs("/sim/one.tkh", true, fs.clone()).unwrap();
    db.set(b"a", b"1", true).unwrap();
    drop(db);
    let db = Db::open_with_fs("/sim/two.tkh", true, fs.clone()).unwrap();
    db.set(b"b", b"2", true).unwrap();
    drop(db);
    // Put one file's hint beside the other file.
    let hint = fs.contents(Path::new("/sim/one.tkh.hint")).unwrap();
    fs.put_contents(Path::new("/sim/two.tkh.hint"), hint);
    let db = Db::open_with_fs("/sim/two.tkh", true, fs).unwrap();
    assert_eq!(db.count(), 1);
    assert_eq!(&db.get(b"b").unwrap()[..], b"2");
    assert!(db.get(b"a").is_err());
}

#[test]
fn flush_dirty_hands_only_written_shards_to_the_os() {
    let fs = SimFs::new();
    let db = Db::open_with_fs("/sim/f.tkh#num_shards=4", true, fs.clone()).unwrap();
    let shard_file = |i: usize| format!("/sim/f.tkh-{i:05}-of-00004");
    db.set(b"one key", b"v", true).unwrap();
    let written = db.shard_index(b"one key");
    assert_eq!(
        fs.pending_ops(Path::new(&shard_file(written))),
        0,
        "still buffered in the process"
    );
    db.flush_dirty().unwrap();
    for i in 0..4 {
        let want = usize::from(i == written);
        assert_eq!(fs.pending_ops(Path::new(&shard_file(i))), want, "shard {i}");
    }
    db.flush_dirty().unwrap();
    assert_eq!(
        fs.pending_ops(Path::new(&shard_file(written))),
        1,
        "nothing new to flush"
    );
    // Flushed but unsynced data survives a process kill (the OS has it) —
    // here: it is lost only by a power loss.
    std::mem::forget(db);
    fs.power_loss(PowerLoss {
        keep_ops: 1,
        torn_bytes: 0,
    });
    let db = Db::open_with_fs("/sim/f.tkh#num_shards=4", false, fs).unwrap();
    assert_eq!(&db.get(b"one key").unwrap()[..], b"v");
}
