//! The recovery rule (docs/format.md): a torn tail is cut off, but damage
//! with valid records after it is not a torn tail. A writable open refuses
//! it (cutting it off would destroy what `restore` can save), a read-only
//! open serves the valid records around it, and `restore` salvages them.

use memstored_engine::restore::restore;
use memstored_engine::Db;
use std::path::Path;

/// The case: 999 records (~26 KB) in a .tkh without a hint (as a
/// killed server leaves it), 50 bytes of 0xff written at offset 20000.
fn damaged_store(dir: &Path) -> String {
    let name = format!("{}/d.tkh", dir.display());
    let db = Db::open(&name, true).unwrap();
    for i in 0..999 {
        db.set(
            format!("key{i:04}").as_bytes(),
            format!("value-{i:04}").as_bytes(),
            true,
        )
        .unwrap();
    }
    drop(db);
    std::fs::remove_file(format!("{name}.hint")).unwrap();
    let mut bytes = std::fs::read(&name).unwrap();
    assert!(bytes.len() > 24_000, "{}", bytes.len());
    bytes[20_000..20_050].fill(0xff);
    std::fs::write(&name, &bytes).unwrap();
    name
}

#[test]
fn damage_in_the_middle_is_refused_for_writing_not_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let name = damaged_store(dir.path());
    let before = std::fs::read(&name).unwrap();

    let e = Db::open(&name, true)
        .err()
        .expect("a writable open refuses");
    assert_eq!(e.status_name(), "BROKEN_DATA_ERROR", "{e}");
    assert!(e.to_string().contains("memstore restore"), "{e}");
    assert_eq!(
        std::fs::read(&name).unwrap(),
        before,
        "the file is untouched"
    );

    // Read-only: the records on both sides of the damage are served.
    let db = Db::open(&name, false).unwrap();
    assert!(db.count() >= 995, "read-only serves {} records", db.count());
    assert_eq!(&db.get(b"key0001").unwrap()[..], b"value-0001");
    assert_eq!(&db.get(b"key0998").unwrap()[..], b"value-0998");
    drop(db);
    assert_eq!(
        std::fs::read(&name).unwrap(),
        before,
        "the file is untouched"
    );

    let out = format!("{}/r.tkh", dir.path().display());
    let report = restore(&name, &out).unwrap();
    assert!(report.records >= 995, "{report:?}");
    let db = Db::open(&out, false).unwrap();
    assert!(db.count() >= 995, "restored {}", db.count());
    assert_eq!(&db.get(b"key0998").unwrap()[..], b"value-0998");
}

#[test]
fn a_torn_tail_is_still_cut_off_when_writable() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{}/t.tkh", dir.path().display());
    let db = Db::open(&name, true).unwrap();
    for i in 0..100 {
        db.set(format!("k{i}").as_bytes(), &[b'v'; 40], true)
            .unwrap();
    }
    drop(db);
    std::fs::remove_file(format!("{name}.hint")).unwrap();
    let good = std::fs::read(&name).unwrap();
    // Half of a copy of the last record, then garbage: nothing valid after
    // the first bad byte.
    let mut bytes = good.clone();
    bytes.extend_from_slice(&good[good.len() - 60..good.len() - 20]);
    bytes.extend_from_slice(&[0xff; 100]);
    std::fs::write(&name, &bytes).unwrap();

    let db = Db::open(&name, false).unwrap();
    assert_eq!(db.count(), 100);
    drop(db);
    assert_eq!(
        std::fs::read(&name).unwrap(),
        bytes,
        "read-only cuts nothing"
    );
    let db = Db::open(&name, true).unwrap();
    assert_eq!(db.count(), 100);
    drop(db);
    let after = std::fs::read(&name).unwrap();
    assert_eq!(&after[..], &good[..], "the torn tail was cut off");
}

/// Regression (review of format 2): `restore` salvaged around any header
/// that failed to decode if it had the magic, so a version 1 file's records
/// were read as version 2, all failed their CRC, and it reported success
/// with nothing restored into a new, empty store.
#[test]
fn restore_refuses_another_format_version_and_makes_no_destination() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{}/v1.tkh", dir.path().display());
    let db = Db::open(&name, true).unwrap();
    db.set(b"k", b"v", true).unwrap();
    drop(db);
    let mut bytes = std::fs::read(&name).unwrap();
    bytes[8..10].copy_from_slice(&1u16.to_le_bytes());
    let crc = crc32c::crc32c(&bytes[..60]);
    bytes[60..64].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&name, &bytes).unwrap();

    let out = format!("{}/r.tkh", dir.path().display());
    let e = restore(&name, &out).unwrap_err().to_string();
    assert!(e.contains("format version 1"), "{e}");
    assert!(!Path::new(&out).exists(), "no destination made");
}
