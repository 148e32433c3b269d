//! What a replica needs from the engine (issue 18): updates replayed from
//! another server's log, logged under the origin's server id; client
//! writes refused on a replica; how far a reader is behind the writer; a
//! wait for new records.

use memstored_engine::io::SimFs;
use memstored_engine::ulog::{UlogOp, UlogOptions, Update, UpdateLog};
use memstored_engine::{Db, SyncMode};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn log_on(fs: &Arc<SimFs>, server_id: u16) -> Arc<UpdateLog> {
    let o = UlogOptions {
        dir: PathBuf::from("/ulog"),
        server_id,
        segment_size: 4096,
        keep_bytes: 0,
        keep_segments: 0,
        sync: SyncMode::None,
    };
    Arc::new(UpdateLog::open(fs.clone(), o).unwrap())
}

fn update(ts: u64, op: UlogOp, key: &str, value: &str) -> Update {
    Update {
        timestamp: ts,
        server_id: 9,
        dbm_index: 0,
        op,
        key: key.into(),
        value: value.into(),
        flags: 5,
        expires_at: 0,
    }
}

#[test]
fn replayed_updates_change_the_store_and_are_logged_under_their_origin() {
    let fs = SimFs::new();
    let log = log_on(&fs, 1);
    let db = Db::open_with_fs("*#num_shards=3", true, fs.clone()).unwrap();
    db.set_update_listener(log.listener(0)).unwrap();
    db.set_replica(true);

    db.apply_update(&update(10, UlogOp::Set, "a", "1")).unwrap();
    db.apply_update(&update(11, UlogOp::Set, "b", "2")).unwrap();
    db.apply_update(&update(12, UlogOp::Remove, "a", ""))
        .unwrap();
    // Removing what is absent changes nothing and logs nothing.
    db.apply_update(&update(13, UlogOp::Remove, "zz", ""))
        .unwrap();
    assert!(db.get(b"a").is_err());
    let b = db.get_record(b"b").unwrap().unwrap();
    assert_eq!((&b.value[..], b.meta.flags), (&b"2"[..], 5));

    let logged: Vec<Update> = log.read_from(0).unwrap().map(|u| u.unwrap()).collect();
    let seen: Vec<(UlogOp, u16, &[u8])> = logged
        .iter()
        .map(|u| (u.op, u.server_id, &u.key[..]))
        .collect();
    assert_eq!(
        seen,
        vec![
            (UlogOp::Set, 9, &b"a"[..]),
            (UlogOp::Set, 9, &b"b"[..]),
            (UlogOp::Remove, 9, &b"a"[..])
        ]
    );

    db.apply_update(&update(14, UlogOp::Clear, "", "")).unwrap();
    assert_eq!(db.count(), 0);
    // Promoted: its own writes are logged under its own id again.
    db.set_replica(false);
    db.set(b"c", b"3", true).unwrap();
    let last = log.read_from(0).unwrap().last().unwrap().unwrap();
    assert_eq!((last.op, last.server_id), (UlogOp::Set, 1));
}

#[test]
fn a_replica_refuses_every_client_change_but_not_maintenance() {
    let fs = SimFs::new();
    let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
    db.set(b"k", b"v", true).unwrap();
    db.set_replica(true);
    let refused = |r: memstored_engine::Result<()>| {
        let e = r.unwrap_err();
        assert_eq!(e.status_name(), "PRECONDITION_ERROR", "{e}");
        assert!(e.to_string().contains("replica"), "{e}");
    };
    refused(db.set(b"k", b"w", true));
    refused(db.remove(b"k"));
    refused(db.clear());
    refused(db.append(b"k", b"+", b""));
    refused(db.increment(b"n", 1, 0).map(|_| ()));
    refused(db.compare_exchange_multi(&[], &[(b"x", Some(b"y"))]));
    assert_eq!(&db.get(b"k").unwrap()[..], b"v");
    db.vacuum().unwrap();
}

#[test]
fn a_reader_knows_how_many_records_it_is_behind() {
    let fs = SimFs::new();
    let log = log_on(&fs, 1);
    let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
    db.set_update_listener(log.listener(0)).unwrap();
    // 4 KiB segments: 300 records of ~60 bytes span several.
    for i in 0..300 {
        db.set(format!("key{i:04}").as_bytes(), &[b'x'; 20], true)
            .unwrap();
    }
    assert!(log.stats().segments > 3);
    let mut r = log.read_from(0).unwrap();
    assert_eq!(log.pending_after(r.position()), 300);
    for _ in 0..123 {
        r.next().unwrap().unwrap();
    }
    assert_eq!(log.pending_after(r.position()), 177);
    assert_eq!(r.by_ref().count(), 177);
    assert_eq!(log.pending_after(r.position()), 0);
    db.set(b"one more", b"", true).unwrap();
    assert_eq!(log.pending_after(r.position()), 1);
}

#[test]
fn wait_visible_returns_when_records_are_handed_to_the_os() {
    let fs = SimFs::new();
    let log = log_on(&fs, 1);
    let db = Arc::new(Db::open_with_fs("*", true, fs.clone()).unwrap());
    db.set_update_listener(log.listener(0)).unwrap();
    let before = log.wait_visible(0, Duration::ZERO);
    // Nothing new: the wait lasts its timeout.
    let t = Instant::now();
    assert_eq!(log.wait_visible(before, Duration::from_millis(50)), before);
    assert!(t.elapsed() >= Duration::from_millis(50));
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            db.set(b"k", b"v", true).unwrap();
            db.flush_dirty().unwrap();
        })
    };
    let t = Instant::now();
    let mut seen = before;
    while seen == before && t.elapsed() < Duration::from_secs(10) {
        seen = log.wait_visible(before, Duration::from_secs(10));
    }
    writer.join().unwrap();
    assert!(seen > before);
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn with_recent_changes_tracked_the_last_writer_by_timestamp_wins() {
    let fs = SimFs::new();
    let log = log_on(&fs, 1);
    log.track_recent(1000);
    let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
    db.set_update_listener(log.listener(0)).unwrap();
    db.set(b"k", b"local", true).unwrap();
    let local_ts = log.stats().last_timestamp;
    // Older than the local write: not applied, not logged.
    assert!(!db
        .apply_update(&update(local_ts - 1, UlogOp::Set, "k", "old"))
        .unwrap());
    assert!(!db
        .apply_update(&update(local_ts - 1, UlogOp::Remove, "k", ""))
        .unwrap());
    assert_eq!(&db.get(b"k").unwrap()[..], b"local");
    assert_eq!(log.stats().records, 1);
    // Later: applied, and remembered at the origin's timestamp.
    let later = local_ts + 10_000_000;
    assert!(db
        .apply_update(&update(later, UlogOp::Set, "k", "new"))
        .unwrap());
    assert_eq!(log.last_change(b"k"), Some((later, 9)));
    assert!(!db
        .apply_update(&update(later - 5, UlogOp::Set, "k", "x"))
        .unwrap());
    // The same timestamp: the higher server id wins (9 was there).
    let mut tie = update(later, UlogOp::Set, "k", "tie");
    tie.server_id = 3;
    assert!(!db.apply_update(&tie).unwrap());
    assert_eq!(&db.get(b"k").unwrap()[..], b"new");
    // Keys never changed here are applied.
    assert!(db
        .apply_update(&update(1, UlogOp::Set, "other", "v"))
        .unwrap());
}
