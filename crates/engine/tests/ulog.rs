//! The update log (issue 18): every change of a database is logged in apply
//! order, CRC-checked, in rotating segments; a torn tail is cut, damage is
//! reported, and a reader streams from a timestamp across segments.

use bytes::Bytes;
use memstored_engine::io::{FileSystem, PowerLoss, SimFs};
use memstored_engine::ulog::{read_dir, UlogOp, UlogOptions, Update, UpdateLog};
use memstored_engine::{Db, StoreMode, StoreOptions, SyncMode};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const DIR: &str = "/ulog";

fn opts(sync: SyncMode) -> UlogOptions {
    UlogOptions {
        dir: PathBuf::from(DIR),
        server_id: 7,
        segment_size: 64 << 20,
        keep_bytes: 0,
        keep_segments: 0,
        sync,
    }
}

fn open_log(fs: &Arc<SimFs>, o: UlogOptions) -> Arc<UpdateLog> {
    Arc::new(UpdateLog::open(fs.clone(), o).unwrap())
}

fn all(log: &UpdateLog) -> Vec<Update> {
    log.read_from(0).unwrap().map(|u| u.unwrap()).collect()
}

fn read_all(fs: &Arc<SimFs>) -> Vec<Update> {
    read_dir(fs.clone(), Path::new(DIR), 0)
        .unwrap()
        .map(|u| u.unwrap())
        .collect()
}

fn segments(fs: &Arc<SimFs>) -> Vec<PathBuf> {
    let mut v = fs.list_dir(Path::new(DIR)).unwrap();
    v.retain(|p| p.extension().is_some_and(|e| e == "log"));
    v.sort();
    v
}

/// (op, key, value) of each update, for comparing with what was done.
fn ops(us: &[Update]) -> Vec<(UlogOp, String, String)> {
    us.iter()
        .map(|u| {
            (
                u.op,
                String::from_utf8_lossy(&u.key).into_owned(),
                String::from_utf8_lossy(&u.value).into_owned(),
            )
        })
        .collect()
}

fn set(k: &str, v: &str) -> (UlogOp, String, String) {
    (UlogOp::Set, k.into(), v.into())
}

fn rm(k: &str) -> (UlogOp, String, String) {
    (UlogOp::Remove, k.into(), String::new())
}

#[test]
fn every_kind_of_change_is_logged_in_order_and_failed_ones_are_not() {
    let fs = SimFs::new();
    let log = open_log(&fs, opts(SyncMode::None));
    let db = Db::open_with_fs("*#num_shards=4", true, fs.clone()).unwrap();
    db.set_update_listener(log.listener(3)).unwrap();

    db.set(b"a", b"1", true).unwrap();
    db.add(b"a", b"x").unwrap_err(); // exists: no change, nothing logged
    db.add(b"b", b"2").unwrap();
    db.replace(b"zz", b"x").unwrap_err();
    db.append(b"a", b"+", b"").unwrap();
    db.increment(b"n", 5, 0).unwrap();
    let o = StoreOptions {
        flags: 42,
        expires_at: 4_000_000_000,
        ..Default::default()
    };
    db.store(b"f", Bytes::from_static(b"v"), StoreMode::Set, o)
        .unwrap();
    db.touch(b"f", 4_100_000_000).unwrap();
    db.remove(b"b").unwrap();
    db.remove(b"b").unwrap_err(); // absent: nothing logged
    db.compare_exchange_multi(&[(b"a", Some(b"1+"))], &[(b"a", None), (b"c", Some(b"3"))])
        .unwrap();
    db.compare_exchange_multi(&[(b"a", Some(b"no"))], &[(b"d", Some(b"4"))])
        .unwrap_err();
    db.clear().unwrap();
    db.set(b"after", b"clear", true).unwrap();

    let got = all(&log);
    assert_eq!(
        ops(&got),
        vec![
            set("a", "1"),
            set("b", "2"),
            set("a", "1+"),
            set("n", "5"),
            set("f", "v"),
            set("f", "v"),
            rm("b"),
            rm("a"),
            set("c", "3"),
            (UlogOp::Clear, String::new(), String::new()),
            set("after", "clear"),
        ]
    );
    // Flags and expiry as the store keeps them; touch logs the new expiry.
    assert_eq!((got[4].flags, got[4].expires_at), (42, 4_000_000_000));
    assert_eq!((got[5].flags, got[5].expires_at), (42, 4_100_000_000));
    assert!(got.iter().all(|u| u.server_id == 7 && u.dbm_index == 3));
    assert!(got.windows(2).all(|w| w[0].timestamp < w[1].timestamp));
    let st = log.stats();
    assert_eq!(st.records, got.len() as u64);
    assert_eq!(st.segments, 1);
}

#[test]
fn read_from_starts_at_a_timestamp_and_follows_new_appends() {
    let fs = SimFs::new();
    let log = open_log(
        &fs,
        UlogOptions {
            segment_size: 300,
            ..opts(SyncMode::None)
        },
    );
    let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
    db.set_update_listener(log.listener(0)).unwrap();
    for i in 0..40 {
        db.set(format!("k{i:02}").as_bytes(), b"value", true)
            .unwrap();
    }
    let every = all(&log);
    assert_eq!(every.len(), 40);
    assert!(segments(&fs).len() > 3, "small segments rotate");
    for cut in [0, 1, 17, 39] {
        let from = every[cut].timestamp;
        let tail: Vec<_> = log.read_from(from).unwrap().map(|u| u.unwrap()).collect();
        assert_eq!(tail, every[cut..], "from record {cut}");
    }
    // Past the end: nothing now, the next append later (not fused).
    let mut it = log.read_from(every[39].timestamp + 1).unwrap();
    assert!(it.next().is_none());
    db.set(b"late", b"x", true).unwrap();
    db.flush_dirty().unwrap();
    assert_eq!(it.next().unwrap().unwrap().key, b"late");
    assert!(it.next().is_none());
}

#[test]
fn rotation_keeps_the_newest_segments_by_count_and_by_size() {
    for (keep_segments, keep_bytes) in [(3, 0), (0, 1000)] {
        let fs = SimFs::new();
        let o = UlogOptions {
            segment_size: 300,
            keep_segments,
            keep_bytes,
            ..opts(SyncMode::None)
        };
        let log = open_log(&fs, o);
        let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
        db.set_update_listener(log.listener(0)).unwrap();
        for i in 0..100 {
            db.set(format!("k{i:03}").as_bytes(), b"0123456789", true)
                .unwrap();
        }
        // Removals are the seals' work, done in the background; a hard
        // sync waits for the pending one.
        log.synchronize(true).unwrap();
        let files = segments(&fs);
        let st = log.stats();
        assert_eq!(st.segments as usize, files.len());
        if keep_segments > 0 {
            assert_eq!(files.len(), keep_segments);
        } else {
            // Applied when a segment starts: the kept ones plus the one
            // being written stay under the limit plus one segment.
            assert!(st.bytes <= keep_bytes + 300, "{st:?}");
            assert!(st.bytes > keep_bytes - 300, "{st:?}");
            assert!(files.len() >= 2);
        }
        // The oldest segments went: what is left is a suffix, in order.
        let got = all(&log);
        assert_eq!(got.len() as u64, st.records);
        assert_eq!(got.last().unwrap().key, b"k099");
        let first: usize = std::str::from_utf8(&got[0].key[1..])
            .unwrap()
            .parse()
            .unwrap();
        let want: Vec<Vec<u8>> = (first..100)
            .map(|i| format!("k{i:03}").into_bytes())
            .collect();
        assert_eq!(got.iter().map(|u| u.key.clone()).collect::<Vec<_>>(), want);
        // Names are ulog-NNNNNNNNNN.log, consecutive.
        let last = files
            .last()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            last.starts_with("ulog-") && last.ends_with(".log") && last.len() == 19,
            "{last}"
        );
    }
}

/// Retention remembers the newest timestamp it removed, across a reopen: a
/// reader from at or before it would miss updates (a replica's gap).
#[test]
fn the_newest_removed_timestamp_is_kept_for_gap_checks() {
    let fs = SimFs::new();
    let o = UlogOptions {
        segment_size: 300,
        keep_segments: 2,
        ..opts(SyncMode::None)
    };
    let log = open_log(&fs, o.clone());
    assert_eq!(log.dropped_until(), 0);
    assert!(!log.has_gap_before(0), "nothing removed: no gap");
    let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
    db.set_update_listener(log.listener(0)).unwrap();
    let mut stamps = Vec::new();
    for i in 0..40 {
        db.set(format!("k{i:03}").as_bytes(), b"0123456789", true)
            .unwrap();
        stamps.push(log.stats().last_timestamp);
    }
    log.synchronize(true).unwrap();
    let kept = all(&log);
    let first_kept = kept[0].timestamp;
    let dropped = log.dropped_until();
    // Exactly the update before the first one kept.
    let at = stamps.iter().position(|&t| t == first_kept).unwrap();
    assert_eq!(dropped, stamps[at - 1]);
    assert!(log.has_gap_before(0));
    assert!(log.has_gap_before(dropped));
    assert!(!log.has_gap_before(dropped + 1));
    assert!(!log.has_gap_before(first_kept));
    drop(db);
    drop(log);
    let reopened = open_log(&fs, o);
    assert_eq!(reopened.dropped_until(), dropped);
}

/// Writes `n` records, synced, and returns the current segment's path and bytes.
fn synced_log(fs: &Arc<SimFs>, n: usize) -> (PathBuf, Vec<u8>) {
    let log = open_log(fs, opts(SyncMode::None));
    let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
    db.set_update_listener(log.listener(0)).unwrap();
    for i in 0..n {
        db.set(
            format!("key{i}").as_bytes(),
            format!("value-{i}").as_bytes(),
            true,
        )
        .unwrap();
    }
    db.synchronize(true).unwrap();
    drop(db);
    drop(log);
    let path = segments(fs).pop().unwrap();
    let bytes = fs.contents(&path).unwrap();
    (path, bytes)
}

#[test]
fn a_crash_inside_the_last_record_loses_exactly_that_record() {
    let fs = SimFs::new();
    let (path, bytes) = synced_log(&fs, 5);
    let full = read_all(&fs);
    assert_eq!(full.len(), 5);
    let last_len = 40 + full[4].key.len() + full[4].value.len();
    let last_start = bytes.len() - last_len;
    for cut in last_start..bytes.len() {
        fs.put_contents(&path, bytes[..cut].to_vec());
        assert_eq!(read_all(&fs), full[..4], "cut at {cut}");
        // Reopening cuts the torn tail and appends after the last whole record.
        let log = open_log(&fs, opts(SyncMode::None));
        assert_eq!(
            fs.contents(&path).unwrap().len(),
            last_start,
            "cut at {cut}"
        );
        let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
        db.set_update_listener(log.listener(0)).unwrap();
        db.set(b"new", b"x", true).unwrap();
        let got = all(&log);
        assert_eq!(got[..4], full[..4]);
        assert_eq!(got[4].key, b"new");
        assert!(got[4].timestamp > full[3].timestamp);
        assert_eq!(got.len(), 5);
    }
}

#[test]
fn crc_damage_in_the_middle_is_reported_never_served_or_cut() {
    let fs = SimFs::new();
    let (path, bytes) = synced_log(&fs, 5);
    // A value byte of the second record (32-byte segment header, 40-byte
    // record header, then key "key0" and value "value-0", then record 2).
    let second = 32 + 40 + 4 + 7;
    let mut bad = bytes.clone();
    bad[second + 40 + 5] ^= 0x40;
    fs.put_contents(&path, bad.clone());
    let got: Vec<_> = read_dir(fs.clone(), Path::new(DIR), 0).unwrap().collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].as_ref().unwrap().key, b"key0");
    let err = got[1].as_ref().unwrap_err();
    assert!(err.to_string().contains("damaged at offset"), "{err}");
    let err = UpdateLog::open(fs.clone(), opts(SyncMode::None))
        .err()
        .unwrap();
    assert!(err.to_string().contains("damaged"), "{err}");
    assert_eq!(fs.contents(&path).unwrap(), bad, "nothing cut");
    // Damage in the last record looks like a torn tail: it is not served.
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 2] ^= 1;
    fs.put_contents(&path, bad);
    assert_eq!(read_all(&fs).len(), 4);
}

#[test]
fn sync_always_survives_power_loss_and_none_keeps_a_prefix() {
    for sync in [SyncMode::Always, SyncMode::None] {
        let fs = SimFs::new();
        let log = open_log(&fs, opts(sync));
        let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
        db.set_update_listener(log.listener(0)).unwrap();
        for i in 0..3 {
            db.set(format!("s{i}").as_bytes(), b"v", true).unwrap();
        }
        db.synchronize(true).unwrap();
        for i in 0..20 {
            db.set(format!("u{i}").as_bytes(), b"v", true).unwrap();
            db.flush_dirty().unwrap();
        }
        let path = segments(&fs).pop().unwrap();
        let pending = fs.pending_ops(&path);
        fs.power_loss(PowerLoss {
            keep_ops: pending / 2,
            torn_bytes: 9,
        });
        drop(db);
        std::mem::forget(log); // its handles are stale after the power loss
        let survived = read_all(&fs);
        let keys: Vec<String> = survived
            .iter()
            .map(|u| String::from_utf8(u.key.clone()).unwrap())
            .collect();
        let all: Vec<String> = (0..3)
            .map(|i| format!("s{i}"))
            .chain((0..20).map(|i| format!("u{i}")))
            .collect();
        match sync {
            SyncMode::Always => assert_eq!(keys, all),
            _ => {
                assert!(keys.len() >= 3 && keys.len() < all.len(), "{keys:?}");
                assert_eq!(keys, all[..keys.len()], "a prefix");
            }
        }
        // It opens and appends after what survived.
        let log = open_log(&fs, opts(sync));
        log.append(
            &memstored_engine::ulog::Change {
                op: UlogOp::Remove,
                key: b"x",
                value: b"",
                flags: 0,
                expires_at: 0,
            },
            0,
        )
        .unwrap();
        assert_eq!(all_keys(&log).len(), keys.len() + 1);
    }
}

fn all_keys(log: &UpdateLog) -> Vec<Vec<u8>> {
    all(log).into_iter().map(|u| u.key).collect()
}

#[test]
fn vacuumed_expired_records_are_not_updates() {
    let fs = SimFs::new();
    let log = open_log(&fs, opts(SyncMode::None));
    let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
    db.set_update_listener(log.listener(0)).unwrap();
    let o = StoreOptions {
        expires_at: 1, // long past
        ..Default::default()
    };
    db.store(b"old", Bytes::from_static(b"v"), StoreMode::Set, o)
        .unwrap();
    assert_eq!(db.vacuum().unwrap(), 1);
    assert_eq!(ops(&all(&log)), vec![set("old", "v")]);
}

/// Writes `n` records with segments of `segment_size` bytes, all synced,
/// and returns them as read back.
fn rotated_log(fs: &Arc<SimFs>, n: usize, segment_size: u64) -> Vec<Update> {
    let o = UlogOptions {
        segment_size,
        ..opts(SyncMode::None)
    };
    let log = open_log(fs, o);
    let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
    db.set_update_listener(log.listener(0)).unwrap();
    for i in 0..n {
        db.set(format!("k{i:03}").as_bytes(), b"0123456789", true)
            .unwrap();
    }
    db.synchronize(true).unwrap();
    drop(db);
    drop(log);
    read_all(fs)
}

/// A rotation fsyncs the sealed segment after the next one has started
/// (issue 18: not under the log's lock). A power loss in between can leave
/// the sealed segment without its tail while the next one kept records:
/// reopening cuts the sealed one at its last whole record and drops the
/// next one, so the log stays a prefix of what was written.
#[test]
fn a_sealed_segment_that_lost_its_tail_is_cut_and_the_next_one_dropped() {
    let fs = SimFs::new();
    let full = rotated_log(&fs, 12, 300);
    let files = segments(&fs);
    assert_eq!(files.len(), 3, "{files:?}");
    let (sealed, newest) = (&files[1], &files[2]);
    let sealed_bytes = fs.contents(sealed).unwrap();
    let newest_bytes = fs.contents(newest).unwrap();
    // Every cut point of the sealed segment's records (not its header).
    for cut in 32..sealed_bytes.len() {
        fs.put_contents(sealed, sealed_bytes[..cut].to_vec());
        fs.put_contents(newest, newest_bytes.clone());
        let log = open_log(&fs, opts(SyncMode::None));
        let got = all(&log);
        assert!(got.len() < full.len(), "cut at {cut}");
        assert_eq!(got, full[..got.len()], "cut at {cut}: a prefix");
        assert!(
            !fs.exists(newest),
            "cut at {cut}: the newest segment is dropped"
        );
        // Appends continue after what was kept, and a later rotation
        // starts the dropped segment's number afresh.
        drop(log);
        let o = UlogOptions {
            segment_size: 300,
            ..opts(SyncMode::None)
        };
        let log = open_log(&fs, o);
        let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
        db.set_update_listener(log.listener(0)).unwrap();
        for i in 0..6 {
            db.set(format!("n{i}").as_bytes(), b"0123456789", true)
                .unwrap();
        }
        db.synchronize(true).unwrap();
        let again = all(&log);
        assert_eq!(again[..got.len()], got[..], "cut at {cut}");
        assert_eq!(again.len(), got.len() + 6, "cut at {cut}");
        drop(db);
        drop(log);
        for f in segments(&fs) {
            if f != files[0] {
                fs.remove(&f).unwrap();
            }
        }
    }
}

/// Only the segment before the newest can be missing its tail (one seal is
/// pending at most); any other mismatch between a segment and the next
/// one's header is damage, and the open is refused with nothing changed.
#[test]
fn an_older_sealed_segment_that_is_short_or_long_is_damage() {
    let fs = SimFs::new();
    rotated_log(&fs, 12, 300);
    let files = segments(&fs);
    assert_eq!(files.len(), 3);
    let oldest = fs.contents(&files[0]).unwrap();
    let n = oldest.len();
    for bad in [oldest[..n - 3].to_vec(), [&oldest[..], b"xyz"].concat()] {
        fs.put_contents(&files[0], bad.clone());
        let err = UpdateLog::open(fs.clone(), opts(SyncMode::None))
            .err()
            .unwrap();
        assert!(err.to_string().contains("next segment says"), "{err}");
        assert_eq!(fs.contents(&files[0]).unwrap(), bad, "nothing cut");
        assert_eq!(segments(&fs).len(), 3, "nothing removed");
    }
    // A segment of the first format is named as such.
    let mut old = oldest.clone();
    old[..8].copy_from_slice(b"MSTULOG1");
    fs.put_contents(&files[0], old);
    let err = UpdateLog::open(fs.clone(), opts(SyncMode::None))
        .err()
        .unwrap();
    assert!(err.to_string().contains("MSTULOG1"), "{err}");
}

/// The same through the real sequence: power losses at every point of the
/// unsynced writes after a hard sync, with rotations (and so seals) in
/// flight; `always` keeps everything, `none` a prefix at least as long as
/// what the sync covered.
#[test]
fn power_loss_during_rotations_keeps_a_prefix() {
    for sync in [SyncMode::Always, SyncMode::None] {
        for keep_ops in 0..8 {
            let fs = SimFs::new();
            let o = UlogOptions {
                segment_size: 200,
                ..opts(sync)
            };
            let log = open_log(&fs, o.clone());
            let db = Db::open_with_fs("*", true, fs.clone()).unwrap();
            db.set_update_listener(log.listener(0)).unwrap();
            let key = |i: usize| format!("k{i:03}");
            for i in 0..5 {
                db.set(key(i).as_bytes(), b"0123456789", true).unwrap();
            }
            db.synchronize(true).unwrap();
            for i in 5..30 {
                db.set(key(i).as_bytes(), b"0123456789", true).unwrap();
                db.flush_dirty().unwrap();
            }
            fs.power_loss(PowerLoss {
                keep_ops,
                torn_bytes: 7,
            });
            drop(db);
            std::mem::forget(log); // its handles are stale after the power loss
            let log = open_log(&fs, o);
            let keys: Vec<String> = all_keys(&log)
                .into_iter()
                .map(|k| String::from_utf8(k).unwrap())
                .collect();
            let want: Vec<String> = (0..30).map(key).collect();
            if sync == SyncMode::Always {
                assert_eq!(keys, want);
            } else {
                assert!(keys.len() >= 5, "{keep_ops}: {keys:?}");
                assert_eq!(keys, want[..keys.len()], "{keep_ops}: a prefix");
            }
        }
    }
}
