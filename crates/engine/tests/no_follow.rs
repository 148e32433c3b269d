//! Files the engine writes at names it derives (the lock file, the update
//! log's next segment, temporary files) are never written through a
//! symlink or a hard link planted at that name (issue 40, finding 3): the
//! file the link points to stays as it was.

use memstored_engine::io::{FileSystem, RealFs};
use memstored_engine::ulog::{UlogOptions, UpdateLog};
use memstored_engine::{Db, SyncMode};
use std::path::Path;
use std::sync::Arc;

const PRECIOUS: &[u8] = b"someone else's file, not memstored's\n";

/// A file outside the store's directory that a link will point to.
fn victim(dir: &Path) -> std::path::PathBuf {
    let v = dir.join("victim");
    std::fs::write(&v, PRECIOUS).unwrap();
    v
}

#[test]
fn a_lock_file_that_is_a_symlink_is_refused_and_its_target_kept() {
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    let store = t.path().join("casket.tkh");
    std::os::unix::fs::symlink(&v, t.path().join("casket.tkh.lock")).unwrap();
    let e = Db::open(store.to_str().unwrap(), true)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read(&v).unwrap(), PRECIOUS);
    // A reader is refused the same way: it opens the link without following.
    let e = Db::open(store.to_str().unwrap(), false)
        .err()
        .expect("refused");
    assert_eq!(std::fs::read(&v).unwrap(), PRECIOUS, "{e}");
}

#[test]
fn a_lock_file_with_another_hard_link_is_refused_and_left_alone() {
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    std::fs::hard_link(&v, t.path().join("casket.tkh.lock")).unwrap();
    let store = t.path().join("casket.tkh");
    let e = Db::open(store.to_str().unwrap(), true)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("hard links"), "{e}");
    assert_eq!(std::fs::read(&v).unwrap(), PRECIOUS);
}

/// The holder line still goes into an ordinary lock file left by an
/// earlier run.
#[test]
fn an_ordinary_lock_file_left_behind_is_reused() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("casket.tkh");
    std::fs::write(t.path().join("casket.tkh.lock"), "pid 1 gone\n").unwrap();
    let db = Db::open(store.to_str().unwrap(), true).unwrap();
    let line = std::fs::read_to_string(t.path().join("casket.tkh.lock")).unwrap();
    assert!(
        line.starts_with(&format!("pid {}", std::process::id())),
        "{line}"
    );
    db.close().unwrap();
}

#[test]
fn the_update_logs_next_segment_is_not_written_through_a_symlink() {
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    let dir = t.path().join("ulog");
    let opts = UlogOptions {
        dir: dir.clone(),
        server_id: 1,
        segment_size: 300,
        keep_bytes: 0,
        keep_segments: 0,
        sync: SyncMode::None,
    };
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let log = Arc::new(UpdateLog::open(fs.clone(), opts).unwrap());
    // Planted after the open, where the first rotation creates segment 2.
    let next = dir.join("ulog-0000000002.log");
    std::os::unix::fs::symlink(&v, &next).unwrap();
    let db = Db::open_with_fs("*", true, fs).unwrap();
    db.set_update_listener(log.listener(0)).unwrap();
    for i in 0..40 {
        db.set(format!("k{i:02}").as_bytes(), b"value", true)
            .unwrap();
    }
    db.flush_dirty().unwrap();
    assert_eq!(std::fs::read(&v).unwrap(), PRECIOUS);
    let meta = std::fs::symlink_metadata(&next).unwrap();
    assert!(meta.file_type().is_file(), "segment 2 is a file of its own");
    assert_eq!(log.read_from(0).unwrap().count(), 40);
}

/// `create_fresh`, which every temporary file of rebuilds, backups, hints
/// and the update log goes through: a link there is replaced, not followed.
#[test]
fn create_fresh_replaces_a_link_instead_of_following_it() {
    let t = tempfile::tempdir().unwrap();
    let v = victim(t.path());
    let tmp = t.path().join("casket.tkh.rebuild.tmp");
    std::os::unix::fs::symlink(&v, &tmp).unwrap();
    let f = RealFs.create_fresh(&tmp).unwrap();
    f.write_at(b"new", 0).unwrap();
    assert_eq!(std::fs::read(&v).unwrap(), PRECIOUS);
    assert_eq!(std::fs::read(&tmp).unwrap(), b"new");
}
