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

/// Every engine kind takes `truncate=true` (Tkrzw programs pass it whatever
/// the engine): the in-memory ones start empty anyway, the file ones drop
/// their files even when nothing is written after the truncating open.
#[test]
fn truncate_is_accepted_by_every_engine_kind() {
    use memstored_engine::EngineKind::*;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let cases = [
        ("*#truncate=true".to_string(), MemHash),
        ("*#capsiz=1m,truncate=true".to_string(), MemHash),
        ("+#truncate=true".to_string(), MemTree),
        ("%#truncate=true".to_string(), MemTree),
        (format!("{d}/m.tkmt#truncate=true"), MemFile),
        (format!("{d}/h.kch#truncate=true"), FileHash),
        (format!("{d}/t.kct#truncate=true"), FileTree),
        (format!("{d}/s.tkt#num_shards=2,truncate=true"), FileTree),
    ];
    for (name, kind) in cases {
        let plain = name.replace("truncate=true", "truncate=false");
        {
            let db = Db::open(&plain, true).unwrap();
            assert_eq!(db.name().kind, kind, "{name}");
            db.set(b"old", b"1", true).unwrap();
            db.close().unwrap();
        }
        {
            let db = Db::open(&name, true).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(db.name().truncate, "{name}");
            assert_eq!(db.count(), 0, "{name}");
            db.close().unwrap();
        }
        // Nothing written after the truncating open: still empty.
        assert_eq!(Db::open(&plain, true).unwrap().count(), 0, "{name}");
    }
}
