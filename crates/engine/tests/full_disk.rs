//! Maintenance on a full disk (issue 40, finding 2): a rebuild, a `.tkmt`
//! write-back, a hint and a restore that run out of space fail with the
//! OS's reason, leave no temporary file behind (it would keep the disk
//! full), and leave the store as it was. A writable open removes the
//! temporary files a crash left. The disk is a 12 MiB tmpfs (root only).

#[path = "../../server/tests/common/tmpfs.rs"]
mod tmpfs;

use memstored_engine::Db;
use tmpfs::Tmpfs;

const NO_SPACE: &str = "No space left on device";

/// `n` records of 20 KiB, keys `k0`..: 20 KiB each on disk.
fn fill_records(db: &Db, n: usize) {
    for i in 0..n {
        db.set(format!("k{i}").as_bytes(), &[b'v'; 20 << 10], true)
            .unwrap();
    }
}

fn no_temporaries(disk: &Tmpfs) {
    let names = disk.names();
    assert!(
        !names.iter().any(|n| n.ends_with(".tmp")),
        "temporary files left: {names:?}"
    );
}

/// Regression: a rebuild that ran out of space left `c.tkh.rebuild.tmp`
/// (filling the disk for good) and its error said nothing of why.
#[test]
fn a_rebuild_out_of_space_says_why_and_leaves_no_temporary_file() {
    let Some(disk) = Tmpfs::mount("12m") else {
        return;
    };
    let name = disk.join("c.tkh#num_shards=2").display().to_string();
    let db = Db::open(&name, true).unwrap();
    fill_records(&db, 250);
    db.synchronize(true).unwrap();
    disk.fill(1 << 20);

    let e = db.rebuild().unwrap_err().to_string();
    assert!(e.contains(NO_SPACE), "{e}");
    no_temporaries(&disk);
    // The store serves on from its old files, and rebuilds once there is room.
    assert_eq!(db.count(), 250);
    assert_eq!(db.get(b"k7").unwrap().len(), 20 << 10);
    disk.make_room();
    db.rebuild().unwrap();
    assert_eq!(db.count(), 250);
    no_temporaries(&disk);
}

/// A `.tkmt` snapshot that cannot be written back fails with the reason,
/// leaves the last snapshot as it was, and no `PATH.tmp`.
#[test]
fn a_snapshot_write_back_out_of_space_says_why_and_leaves_no_temporary_file() {
    let Some(disk) = Tmpfs::mount("12m") else {
        return;
    };
    let name = disk.join("m.tkmt").display().to_string();
    let db = Db::open(&name, true).unwrap();
    db.set(b"first", b"1", true).unwrap();
    db.synchronize(true).unwrap();
    let before = std::fs::read(disk.join("m.tkmt")).unwrap();
    fill_records(&db, 250);
    disk.fill(1 << 20);

    let e = db.synchronize(true).unwrap_err().to_string();
    assert!(e.contains(NO_SPACE), "{e}");
    no_temporaries(&disk);
    assert_eq!(std::fs::read(disk.join("m.tkmt")).unwrap(), before);
    disk.make_room();
    db.synchronize(true).unwrap();
    no_temporaries(&disk);
}

/// A hint that cannot be written at close is skipped (the data is
/// durable), and its temporary file goes with it.
#[test]
fn a_hint_out_of_space_leaves_no_temporary_file() {
    let Some(disk) = Tmpfs::mount("12m") else {
        return;
    };
    let name = disk.join("h.tkh").display().to_string();
    let db = Db::open(&name, true).unwrap();
    fill_records(&db, 10);
    db.synchronize(true).unwrap();
    disk.fill(0);
    db.close().unwrap();
    no_temporaries(&disk);
    assert!(!disk.join("h.tkh.hint").exists());
    drop(db);
    disk.make_room();
    assert_eq!(Db::open(&name, false).unwrap().count(), 10);
}

/// A restore that runs out of space says why and removes the destination
/// it made (half a destination is of no use, and holds the space).
#[test]
fn a_restore_out_of_space_says_why_and_removes_what_it_made() {
    let Some(disk) = Tmpfs::mount("12m") else {
        return;
    };
    let src_dir = tempfile::tempdir().unwrap();
    let src = src_dir.path().join("s.tkh").display().to_string();
    let db = Db::open(&src, true).unwrap();
    fill_records(&db, 250);
    db.close().unwrap();
    drop(db);
    disk.fill(1 << 20);

    let dst = disk.join("d.tkt#num_shards=3").display().to_string();
    let e = memstored_engine::restore::restore(&src, &dst)
        .unwrap_err()
        .to_string();
    assert!(e.contains(NO_SPACE), "{e}");
    assert_eq!(disk.names(), Vec::<String>::new());
    disk.make_room();
    let r = memstored_engine::restore::restore(&src, &dst).unwrap();
    assert_eq!(r.records, 250);
}

/// A writable open removes the temporary files a crash left beside each
/// shard (their space comes back at the restart); a read-only open, which
/// may run beside a writer, leaves them.
#[test]
fn a_writable_open_removes_temporary_files_left_by_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().join("c.tkh#num_shards=2").display().to_string();
    Db::open(&name, true)
        .unwrap()
        .set(b"k", b"v", true)
        .unwrap();
    let left: Vec<_> = ["rebuild.tmp", "tmp", "hint.tmp"]
        .iter()
        .flat_map(|s| [0, 1].map(|i| dir.path().join(format!("c.tkh-0000{i}-of-00002.{s}"))))
        .collect();
    for p in &left {
        std::fs::write(p, b"left by a crash").unwrap();
    }
    drop(Db::open(&name, false).unwrap());
    assert!(left.iter().all(|p| p.exists()));
    let db = Db::open(&name, true).unwrap();
    assert_eq!(&db.get(b"k").unwrap()[..], b"v");
    let still: Vec<_> = left.iter().filter(|p| p.exists()).collect();
    assert!(still.is_empty(), "left: {still:?}");
}
