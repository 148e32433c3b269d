//! Issue 44: what Tkrzw's binding test suites expect of opening and
//! closing: `num_shards=0` opens the shard files that exist, and `close`
//! releases the store while an iterator is still alive (the iterator then
//! answers PRECONDITION_ERROR, and the store reopens in the same process).

use memstored_engine::{Db, Error};

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn num_shards_zero_opens_the_shards_that_exist() {
    let dir = tmp();
    let path = dir.path().join("casket.tkh");
    let path = path.to_str().unwrap();
    {
        let db = Db::open(&format!("{path}#num_shards=3"), true).unwrap();
        for i in 0..30 {
            db.set(format!("k{i}").as_bytes(), b"v", true).unwrap();
        }
        db.close().unwrap();
    }
    let db = Db::open(&format!("{path}#num_shards=0"), true).unwrap();
    assert_eq!((db.shard_count(), db.count()), (3, 30));
    db.close().unwrap();
    // No files yet: one shard.
    let fresh = dir.path().join("fresh.tkh");
    let db = Db::open(&format!("{}#num_shards=0", fresh.display()), true).unwrap();
    assert_eq!(db.shard_count(), 1);
}

#[test]
fn close_releases_the_store_while_an_iterator_lives() {
    let dir = tmp();
    for name in ["casket.tkh", "casket.tkt", "casket.tkmt", "casket.tks"] {
        let path = dir.path().join(name);
        let name = path.to_str().unwrap();
        let db = Db::open(name, true).unwrap();
        db.set(b"a", b"1", true).unwrap();
        db.set(b"b", b"2", true).unwrap();
        let mut cursor = db.cursor();
        cursor.first().unwrap();
        db.close().unwrap();
        for e in [cursor.key().unwrap_err(), cursor.next().unwrap_err()] {
            assert!(matches!(e, Error::Precondition(_)), "{name}: {e}");
        }
        assert!(matches!(cursor.first(), Err(Error::Precondition(_))));
        // The same process opens it again while the old Db (and its
        // cursor) is alive, and finds what was written.
        let again = Db::open(name, true).unwrap();
        assert_eq!(again.get(b"b").unwrap(), &b"2"[..], "{name}");
        drop(cursor);
        drop(db);
        // Dropping the closed one later neither writes nor unlocks the new one.
        again.set(b"c", b"3", true).unwrap();
        assert!(
            Db::open(name, true).is_err(),
            "{name}: the new open holds the lock"
        );
        again.close().unwrap();
        assert_eq!(Db::open(name, false).unwrap().count(), 3, "{name}");
    }
}

/// Tkrzw's RestoreDatabase of a sharded database names it without the
/// shard count (tkrzw-java's Test.java, basic): the shards are found from
/// the files and restored into as many.
#[test]
fn restore_database_finds_the_shards() {
    let dir = tmp();
    let old = dir.path().join("casket.tkh");
    let new = dir.path().join("restored.tkh");
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    {
        let db = Db::open(&format!("{old}#num_shards=4"), true).unwrap();
        for i in 0..40 {
            db.set(format!("k{i}").as_bytes(), b"v", true).unwrap();
        }
        db.close().unwrap();
    }
    memstored_engine::restore_database(old, new, "", -1).unwrap();
    let db = Db::open(&format!("{new}#num_shards=4"), false).unwrap();
    assert_eq!(db.count(), 40);
}

/// Tkrzw's GetFileSize of an in-memory hash saved to a path (`.tiny`,
/// `.tkmt`) is the saved file's size, not 0.
#[test]
fn file_size_of_a_saved_in_memory_hash() {
    let dir = tmp();
    for ext in ["tiny", "tkmt", "cache", "stdhash"] {
        let path = dir.path().join(format!("casket.{ext}"));
        let db = Db::open(path.to_str().unwrap(), true).unwrap();
        db.set(b"a", b"1", true).unwrap();
        assert!(db.file_size() > 0, "{ext}: before the first save");
        db.synchronize(false).unwrap();
        let on_disk = std::fs::metadata(&path).unwrap().len();
        assert_eq!(db.file_size(), on_disk, "{ext}");
    }
}
