//! `.tkmt`/`.mem` stores write their snapshot back on synchronize and at
//! close only: `flush_dirty`, which the server calls after every batch of
//! replies, must not rewrite the whole file (issue 12: 3,000 sets wrote
//! 240 MB). The log engines still hand every batch to the OS there
//! (`durability.rs`: `flush_dirty_hands_only_written_shards_to_the_os`).

use memstored_engine::io::{DataFile, FileSystem, SimFs};
use memstored_engine::{Db, Result};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A simulated disk that counts renames: each snapshot write-back is one
/// (temporary file renamed over the store).
#[derive(Debug, Default)]
struct CountingFs {
    inner: Arc<SimFs>,
    renames: AtomicUsize,
}

impl FileSystem for CountingFs {
    fn open(&self, path: &Path, writable: bool, create: bool) -> Result<Arc<dyn DataFile>> {
        self.inner.open(path, writable, create)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.renames.fetch_add(1, Ordering::SeqCst);
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &Path) -> Result<()> {
        self.inner.remove(path)
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        self.inner.sync_dir(path)
    }
}

#[test]
fn flush_dirty_does_not_rewrite_a_snapshot_store() {
    for name in ["/sim/s.tkmt", "/sim/s.mem#num_shards=4"] {
        let fs = Arc::new(CountingFs::default());
        let db = Db::open_with_fs(name, true, fs.clone()).unwrap();
        let writes = || fs.renames.load(Ordering::SeqCst);
        let created = writes();
        for i in 0..500 {
            db.set(format!("key{i}").as_bytes(), b"value", true)
                .unwrap();
            db.flush_dirty().unwrap(); // as the server does after each reply batch
        }
        assert_eq!(
            writes(),
            created,
            "{name}: flush_dirty rewrote the snapshot"
        );

        db.synchronize(false).unwrap();
        let synced = writes();
        assert!(
            synced > created,
            "{name}: synchronize writes the snapshot back"
        );
        db.set(b"last", b"one", true).unwrap();
        db.flush_dirty().unwrap();
        assert_eq!(writes(), synced, "{name}");
        db.close().unwrap();
        assert!(writes() > synced, "{name}: close writes the snapshot back");
        drop(db);

        let db = Db::open_with_fs(name, false, fs.clone()).unwrap();
        assert_eq!(db.count(), 501, "{name}");
        assert_eq!(&db.get(b"last").unwrap()[..], b"one", "{name}");
    }
}
