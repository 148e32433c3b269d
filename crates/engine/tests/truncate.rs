//! `truncate=true` (Tkrzw's open option): a writable open starts empty, on
//! every file engine and every shard, while a read-only open ignores it.

use memstored_engine::Db;

#[test]
fn truncate_starts_every_file_engine_empty() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["a.tkh", "b.tkt", "c.tkmt", "d.tkh#num_shards=3"] {
        let name = format!("{}/{file}", dir.path().display());
        let with = |p: &str| match name.split_once('#') {
            Some((path, rest)) => format!("{path}#{rest},{p}"),
            None => format!("{name}#{p}"),
        };
        {
            let db = Db::open(&name, true).unwrap();
            for k in ["x", "y", "z"] {
                db.set(k.as_bytes(), b"old", true).unwrap();
            }
            db.close().unwrap();
        }
        // Read-only: the option is ignored and the records stay.
        assert_eq!(
            Db::open(&with("truncate=true"), false).unwrap().count(),
            3,
            "{name}"
        );
        assert_eq!(
            Db::open(&with("truncate=false"), true).unwrap().count(),
            3,
            "{name}"
        );
        {
            let db = Db::open(&with("truncate=true"), true).unwrap();
            assert_eq!(db.count(), 0, "{name}");
            db.set(b"w", b"new", true).unwrap();
            db.close().unwrap();
        }
        let db = Db::open(&name, false).unwrap();
        assert_eq!(db.count(), 1, "{name}");
        assert_eq!(&db.get(b"w").unwrap()[..], b"new", "{name}");
    }
    assert!(Db::open("*#truncate=maybe", true).is_err());
}
