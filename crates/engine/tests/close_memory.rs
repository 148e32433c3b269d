//! Closing a file hash database writes its hint without gathering every
//! record's location at once: the compact index's walk in log order sorted
//! one offset per record (80 MB at 10M records) on top of the index, which
//! raised the process's peak RSS at close by as much (docs/bench/bindings.md,
//! "Findings (issue 44)"). The hint is now written a window at a time.

#[path = "../../protocol/tests/support/tracking_alloc.rs"]
mod tracking_alloc;

use memstored_engine::Db;
use std::sync::atomic::Ordering;
use tracking_alloc::LARGEST;

#[test]
fn closing_allocates_no_array_of_every_record() {
    const RECORDS: usize = 400_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("casket.tkh");
    let db = Db::open(path.to_str().unwrap(), true).unwrap();
    for i in 0..RECORDS {
        let k = format!("{i:08}");
        db.set(k.as_bytes(), k.as_bytes(), true).unwrap();
    }
    LARGEST.store(0, Ordering::Relaxed);
    db.close().unwrap();
    let largest = LARGEST.load(Ordering::Relaxed);
    // One offset per record would be 3.2 MB; a window's and the hint's
    // write chunk are about 1 MB.
    assert!(
        largest < 2 << 20,
        "closing allocated {largest} bytes at once"
    );
    // The hint written by windows still opens the whole database.
    drop(db);
    let db = Db::open(path.to_str().unwrap(), false).unwrap();
    assert_eq!(db.count(), RECORDS as u64);
    assert_eq!(&db.get(b"00399999").unwrap()[..], b"00399999");
}
