//! Acceptance: the database names of the Tkrzw and Tokyo Cabinet articles
//! work verbatim, unknown parameters are reported with the known ones, and
//! foreign files are refused untouched.
//!
//! The names are relative, so the test runs in a temporary current directory;
//! the working directory is process-wide, hence one test in this binary.

use memstored_engine::{Db, Error};
use std::collections::BTreeMap;
use std::path::Path;

fn dir_listing(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect()
}

fn article_names_open_and_work() {
    let names = [
        "*#capsiz=1024m",
        "db.tch#bnum=1000000#apow=10",
        "db.tcb#opts=d",
        "casket.tkh#num_buckets=1M,update_mode=appending",
        "casket.tkt#num_buckets=1M",
        "casket.tkmt#num_buckets=1M",
        "casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending",
    ];
    for name in names {
        {
            let db = Db::open(name, true).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(db.is_writable(), "{name}");
            db.set(b"key", b"value", true)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&db.get(b"key").unwrap()[..], b"value", "{name}");
            for i in 0..300 {
                db.set(format!("k{i}").as_bytes(), b"v", true).unwrap();
            }
            assert_eq!(db.count(), 301, "{name}");
            db.close().unwrap();
        }
        if name.starts_with('*') {
            continue;
        }
        // The data is in the files: a reopen finds it.
        let db = Db::open(name, false).unwrap_or_else(|e| panic!("reopen {name}: {e}"));
        assert_eq!(&db.get(b"key").unwrap()[..], b"value", "{name}");
        assert_eq!(db.count(), 301, "{name}");
    }
    let files = dir_listing(Path::new("."));
    for f in [
        "db.tch",
        "db.tcb",
        "casket.tkh",
        "casket.tkt",
        "casket.tkmt",
    ] {
        assert!(files.contains_key(f), "{f} missing: {:?}", files.keys());
    }
    // Tkrzw's ShardDBM naming.
    for i in 0..100 {
        let f = format!("casket.tkh-{i:05}-of-00100");
        assert!(files.contains_key(&f), "{f} missing");
    }
    assert!(!files.contains_key("casket.tkh-00100-of-00100"));
    let ignored: BTreeMap<String, String> = Db::open("db.tch#bnum=1000000#apow=10", false)
        .unwrap()
        .inspect()
        .into_iter()
        .collect();
    assert_eq!(
        ignored.get("ignored_params").map(String::as_str),
        Some("apow=10")
    );
}

fn unknown_parameters_are_reported() {
    // The word, the one it most likely misspells when one is close, and
    // where the full list is (issue 41: not ~80 words in front of the typo).
    for (name, meant) in [
        ("*#colour=blue", None),
        ("casket.tkh#num_shards=2,colour=blue", None),
        (
            "casket.tkh#num_shards=2,compresion=lz4",
            Some("compression"),
        ),
    ] {
        match Db::open(name, true) {
            Err(Error::InvalidArgument(msg)) => {
                let word = name
                    .rsplit([',', '#'])
                    .next()
                    .unwrap()
                    .split('=')
                    .next()
                    .unwrap();
                assert!(msg.contains(&format!("{word:?}")), "{name}: {msg:?}");
                assert!(msg.contains("docs/names.md"), "{name}: {msg:?}");
                match meant {
                    Some(m) => assert!(msg.contains(&format!("did you mean {m:?}?")), "{msg:?}"),
                    None => assert!(!msg.contains("did you mean"), "{name}: {msg:?}"),
                }
            }
            other => panic!("{name}: {:?}", other.map(|_| ())),
        }
    }
    // Nothing was created for the refused name.
    assert!(!Path::new("casket.tkh-00000-of-00002").exists());
    for bad in [
        "*#capsiz=lots",
        "*#num_shards=many",
        "x.tkh#compression=brotli",
        "x.unknownext",
        "*#sync=sometimes",
        "x.tcb#opts=q",
    ] {
        assert!(
            matches!(Db::open(bad, true), Err(Error::InvalidArgument(_))),
            "{bad}"
        );
    }
}

fn foreign_files_are_refused_untouched() {
    let mut tkrzw = b"TkrzwHDB\n\x01\x00\x00\x00".to_vec();
    tkrzw.extend((0..500u32).map(|i| (i * 7 + 3) as u8));
    let mut tkrzw_tree = b"TkrzwTDB".to_vec();
    tkrzw_tree.extend((0..200u32).map(|i| (i * 11) as u8));
    let mut tc = b"ToKyO CaBiNeT\n1.0:911\n".to_vec();
    tc.resize(256, 0);
    tc.extend((0..300u32).map(|i| (i * 13) as u8));
    let text = b"Dear diary,\nToday I opened a text file as a database.\nIt did not work, \
                 as it should not, and the file was left as it was.\n"
        .to_vec();
    let short_tkrzw = b"TkrzwHDB\nshort".to_vec();
    let cases: Vec<(&str, Vec<u8>, Option<&str>)> = vec![
        ("tkrzw", tkrzw, Some("Tkrzw")),
        ("tkrzw-tree", tkrzw_tree, Some("Tkrzw")),
        ("tkrzw-short", short_tkrzw, Some("Tkrzw")),
        ("tc", tc, Some("Tokyo Cabinet")),
        ("text", text, None),
    ];
    std::fs::create_dir("foreign").unwrap();
    for (what, bytes, names) in &cases {
        for ext in ["tkh", "tkt", "tkmt", "tch", "tcb"] {
            let path = format!("foreign/{what}.{ext}");
            std::fs::write(&path, bytes).unwrap();
            let before = dir_listing(Path::new("foreign"));
            for writable in [true, false] {
                match Db::open(&path, writable) {
                    Err(Error::BrokenData(msg)) => {
                        assert!(msg.contains("not a memstored file"), "{path}: {msg:?}");
                        assert!(msg.contains(&path), "{path}: {msg:?} names the file");
                        if let Some(n) = names {
                            assert!(msg.contains(n), "{path}: {msg:?} does not name {n}");
                        }
                    }
                    other => panic!("{path} (writable {writable}): {:?}", other.map(|_| ())),
                }
                assert_eq!(
                    dir_listing(Path::new("foreign")),
                    before,
                    "{path}: files changed by a refused open"
                );
            }
        }
    }
    // A memstored file of another engine is refused too, with its kind.
    {
        let db = Db::open("foreign/real.tkh", true).unwrap();
        db.set(b"a", b"b", true).unwrap();
    }
    let before = std::fs::read("foreign/real.tkh").unwrap();
    std::fs::copy("foreign/real.tkh", "foreign/real-as-tree.tkt").unwrap();
    std::fs::copy("foreign/real.tkh", "foreign/real-as-mem.tkmt").unwrap();
    for p in ["foreign/real-as-tree.tkt", "foreign/real-as-mem.tkmt"] {
        assert!(
            matches!(Db::open(p, true), Err(Error::BrokenData(_))),
            "{p}"
        );
        assert_eq!(std::fs::read(p).unwrap(), before, "{p}");
    }
}

#[test]
fn names_from_the_articles() {
    let dir = tempfile::TempDir::new().unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    article_names_open_and_work();
    unknown_parameters_are_reported();
    foreign_files_are_refused_untouched();
}
