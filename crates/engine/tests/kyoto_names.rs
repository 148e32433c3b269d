//! Acceptance: Kyoto Cabinet / Kyoto Tycoon database names (seed 003's
//! `ktserver ... "casket.kct#bnum=2000000#opts=ls#ktopts=p"`) open, select
//! the engine KC's `PolyDB::open` would, apply the tuning words that mean
//! something here and accept the others as ignored.

use memstored_engine::{Compression, Db, EngineKind, Error, StoreMode, StoreOptions};
use std::collections::BTreeMap;

fn inspect(db: &Db) -> BTreeMap<String, String> {
    db.inspect().into_iter().collect()
}

fn past() -> StoreOptions {
    StoreOptions {
        flags: 0,
        expires_at: 1,
        cas: None,
    }
}

#[test]
fn seed_name_opens_and_ktopts_p_keeps_records_from_expiring() {
    let dir = tempfile::tempdir().unwrap();
    let path = format!("{}/casket.kct", dir.path().display());
    let name = format!("{path}#bnum=2000000#opts=ls#ktopts=p");
    {
        let db = Db::open(&name, true).unwrap();
        let n = db.name();
        assert_eq!(n.kind, EngineKind::FileTree);
        assert_eq!(n.num_buckets, 2_000_000);
        assert!(n.persistent);
        assert!(
            n.ignored.contains(&"opts=ls".to_string()),
            "{:?}",
            n.ignored
        );
        assert_eq!(
            inspect(&db).get("persistent").map(String::as_str),
            Some("true")
        );
        // An expiry in the past would hide the record; ktopts=p drops it.
        db.store(b"k", "v".into(), StoreMode::Set, past()).unwrap();
        assert_eq!(&db.get(b"k").unwrap()[..], b"v");
        assert_eq!(db.get_record(b"k").unwrap().unwrap().meta.expires_at, 0);
        db.set(b"t", b"x", true).unwrap();
        assert_eq!(db.touch(b"t", 1).unwrap().meta.expires_at, 0);
        assert_eq!(&db.get(b"t").unwrap()[..], b"x");
        db.close().unwrap();
    }
    assert!(std::path::Path::new(&path).exists());
    let db = Db::open(&name, false).unwrap();
    assert_eq!(&db.get(b"k").unwrap()[..], b"v");
    // Without ktopts=p the same write expires at once: the option is what keeps it.
    let plain = Db::open(&format!("{path}.other.kct#bnum=2000000#opts=ls"), true).unwrap();
    plain
        .store(b"k", "v".into(), StoreMode::Set, past())
        .unwrap();
    assert!(plain.get(b"k").unwrap_err().is_not_found());
}

#[test]
fn kc_paths_and_types_pick_engines() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let cases: Vec<(String, EngineKind)> = vec![
        ("-".into(), EngineKind::MemHash),
        (":".into(), EngineKind::MemHash),
        ("*".into(), EngineKind::MemHash),
        ("+".into(), EngineKind::MemTree),
        ("%".into(), EngineKind::MemTree),
        (format!("{d}/a.kch"), EngineKind::FileHash),
        (format!("{d}/b.kct"), EngineKind::FileTree),
        (format!("{d}/c.kcd"), EngineKind::FileHash),
        (format!("{d}/e.kcf"), EngineKind::FileTree),
        (format!("{d}/plain#type=kct"), EngineKind::FileTree),
        (format!("{d}/f.kch#type=%"), EngineKind::MemTree),
        (format!("{d}/g#type=forest"), EngineKind::FileTree),
    ];
    for (name, kind) in cases {
        let db = Db::open(&name, true).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(db.name().kind, kind, "{name}");
        for k in ["b", "c", "a"] {
            db.set(k.as_bytes(), b"v", true).unwrap();
        }
        if kind.is_ordered() {
            let mut c = db.cursor();
            c.first().unwrap();
            let keys: Vec<Vec<u8>> =
                std::iter::from_fn(|| c.step().unwrap().map(|(k, _)| k.to_vec())).collect();
            assert_eq!(
                keys,
                [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()],
                "{name}"
            );
        }
        db.close().unwrap();
        drop(db);
        if kind.has_file() {
            let reopened = Db::open(&name, false).unwrap();
            assert_eq!(reopened.count(), 3, "{name}");
        }
    }
    match Db::open(&format!("{d}/notes.kcx"), true) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("plain text"), "{m}"),
        other => panic!("kcx: {:?}", other.map(|_| ())),
    }
    assert!(!dir.path().join("notes.kcx").exists());
    assert!(matches!(
        Db::open("*#type=sqlite", true),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn kc_tuning_words_apply_or_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // Compression: opts=c, and zcomp picks the compressor.
    for (name, want) in [
        (format!("{d}/c1.kch#opts=c"), Compression::Zstd),
        (format!("{d}/c2.kct#opts=c#zcomp=lzo"), Compression::Lz4),
        (format!("{d}/c3.kch#zcomp=lzma"), Compression::Zstd),
        (format!("{d}/c4.kch#opts=sl"), Compression::None),
    ] {
        {
            let db = Db::open(&name, true).unwrap();
            assert_eq!(db.name().compression, want, "{name}");
            db.set(b"k", &[b'z'; 4000], true).unwrap();
            db.close().unwrap();
        }
        let path = name.split('#').next().unwrap();
        let size = std::fs::metadata(path).unwrap().len();
        assert_eq!(
            size < 4000,
            want != Compression::None,
            "{name}: {size} bytes"
        );
        assert_eq!(
            &Db::open(&name, false).unwrap().get(b"k").unwrap()[..],
            &[b'z'; 4000]
        );
    }
    // Capacities of KC's cache database and KT's timed database.
    for name in [
        "*#capcnt=100",
        "*#capcount=100",
        "*#ktcapcnt=100",
        "*#bnum=1k#capcnt=100",
    ] {
        let db = Db::open(name, true).unwrap();
        assert_eq!(db.name().cap_rec_num, 100, "{name}");
        for i in 0..1000 {
            db.set(format!("{i:08}").as_bytes(), b"v", true).unwrap();
        }
        assert!(db.count() <= 100, "{name}: {}", db.count());
    }
    for name in ["*#capsiz=1m", "*#capsize=1m", "*#ktcapsiz=1m"] {
        assert_eq!(
            Db::open(name, true).unwrap().name().cap_mem_size,
            1 << 20,
            "{name}"
        );
    }
    // A capacity on a file database means nothing here: said, not silently dropped.
    let capped_file = Db::open(&format!("{d}/cap.kch#ktcapsiz=1m"), true).unwrap();
    assert!(capped_file
        .name()
        .ignored
        .iter()
        .any(|w| w.starts_with("cap_mem_size")));
    // Every other KC / KT word is accepted and listed as ignored.
    let words = [
        "apow=3",
        "fpow=10",
        "msiz=1g",
        "dfunit=8",
        "psiz=8192",
        "pccap=64m",
        // KC's long name for pccap, not memstored's `cache_kind`.
        "cache=64m",
        "rcomp=dec",
        "zkey=secret",
        "log=+",
        "logkinds=debug",
        "logpx=kc",
        "mtrg=-",
        "mtrgpx=m",
        "erstrm=stderr",
        "ervbs=true",
        "zcomp=arc",
        "ktopts=px",
    ];
    let name = format!("{d}/all.kct#{}", words.join("#"));
    let db = Db::open(&name, true).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(db.name().persistent);
    for w in words {
        assert!(
            db.name().ignored.iter().any(|i| i == w),
            "{w} not in {:?}",
            db.name().ignored
        );
    }
    assert!(matches!(
        Db::open(&format!("{d}/t.kct#opts=q"), true),
        Err(Error::InvalidArgument(_))
    ));
}
