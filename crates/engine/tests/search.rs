//! `Db::search` in every mode, on hash and ordered engines.

use memstored_engine::{now_secs, Db, Error, SearchMode, StoreMode, StoreOptions};
use tempfile::TempDir;

const KEYS: &[&str] = &[
    "apple",
    "Apple pie",
    "applet",
    "banana",
    "band",
    "bandana",
    "can",
    "cane",
    "crane",
    "日本",
    "日本語",
    "zebra",
];

fn engines(dir: &TempDir) -> Vec<String> {
    let d = dir.path().display();
    vec![
        "*".into(),
        "*#num_shards=3".into(),
        "+".into(),
        "+#num_shards=4".into(),
        format!("{d}/s.tkt#num_shards=3"),
        format!("{d}/s.tkh"),
        format!("{d}/s.tkmt"),
    ]
}

fn open_filled(name: &str) -> Db {
    let db = Db::open(name, true).unwrap();
    for k in KEYS {
        db.set(k.as_bytes(), b"v", true).unwrap();
    }
    // An expired record is never found.
    db.store(
        b"apple-expired",
        "v".into(),
        StoreMode::Set,
        StoreOptions {
            expires_at: now_secs() - 1,
            ..Default::default()
        },
    )
    .unwrap();
    db
}

fn search(db: &Db, mode: SearchMode, pattern: &str, cap: usize) -> Vec<String> {
    db.search(mode, pattern.as_bytes(), cap)
        .unwrap()
        .into_iter()
        .map(|k| String::from_utf8(k).unwrap())
        .collect()
}

fn sorted(mut v: Vec<&str>) -> Vec<String> {
    v.sort();
    v.into_iter().map(String::from).collect()
}

#[test]
fn text_modes() {
    let dir = TempDir::new().unwrap();
    for name in engines(&dir) {
        let db = open_filled(&name);
        let s = |mode, pat: &str| search(&db, mode, pat, 0);
        assert_eq!(
            s(SearchMode::Begin, "app"),
            sorted(vec!["apple", "applet"]),
            "{name}"
        );
        assert_eq!(
            s(SearchMode::Begin, "band"),
            sorted(vec!["band", "bandana"]),
            "{name}"
        );
        assert_eq!(s(SearchMode::Begin, "bx"), sorted(vec![]), "{name}");
        assert_eq!(s(SearchMode::Begin, "").len(), KEYS.len(), "{name}");
        assert_eq!(s(SearchMode::Begin, "日"), sorted(vec!["日本", "日本語"]));
        assert_eq!(
            s(SearchMode::Contain, "an"),
            sorted(vec!["banana", "band", "bandana", "can", "cane", "crane"]),
            "{name}"
        );
        assert_eq!(
            s(SearchMode::Contain, "pple"),
            sorted(vec!["apple", "Apple pie", "applet"]),
            "{name}"
        );
        assert_eq!(
            s(SearchMode::Contain, "APP"),
            sorted(vec![]),
            "{name}: contain is case-sensitive"
        );
        assert_eq!(
            s(SearchMode::ContainCase, "APP"),
            sorted(vec!["apple", "Apple pie", "applet"]),
            "{name}"
        );
        assert_eq!(
            s(SearchMode::End, "ane"),
            sorted(vec!["cane", "crane"]),
            "{name}"
        );
        assert_eq!(
            s(SearchMode::End, "ana"),
            sorted(vec!["banana", "bandana"]),
            "{name}"
        );
        assert_eq!(s(SearchMode::End, "本"), sorted(vec!["日本"]), "{name}");
        assert_eq!(
            s(SearchMode::Regex, "^c.*e$"),
            sorted(vec!["cane", "crane"]),
            "{name}"
        );
        assert_eq!(
            s(SearchMode::Regex, "(?i)^apple"),
            sorted(vec!["apple", "Apple pie", "applet"]),
            "{name}"
        );
        assert_eq!(
            s(SearchMode::Regex, "本語$"),
            sorted(vec!["日本語"]),
            "{name}"
        );
    }
}

#[test]
fn edit_distance_modes() {
    let dir = TempDir::new().unwrap();
    for name in engines(&dir) {
        let db = open_filled(&name);
        // Nearest first; ties in key order.
        assert_eq!(
            search(&db, SearchMode::Edit, "cane", 3),
            vec!["cane", "can", "crane"],
            "{name}"
        );
        assert_eq!(
            search(&db, SearchMode::Edit, "bandanna", 2),
            vec!["bandana", "banana"],
            "{name}"
        );
        // Over characters, 日本 and 日本語 are both one edit from 日本x ...
        assert_eq!(
            search(&db, SearchMode::Edit, "日本x", 2),
            vec!["日本", "日本語"],
            "{name}"
        );
        // ... over bytes, 語 is three bytes, so 日本語 is farther than 日本.
        assert_eq!(
            search(&db, SearchMode::EditBin, "日本x", 2),
            vec!["日本", "日本語"],
            "{name}"
        );
        // 日 is one character but three bytes: one edit from 日本 over
        // characters, while over bytes the three-byte "can" is as near.
        assert_eq!(
            search(&db, SearchMode::Edit, "日", 1),
            vec!["日本"],
            "{name}"
        );
        assert_eq!(
            search(&db, SearchMode::EditBin, "日", 1),
            vec!["can"],
            "{name}"
        );
        let bin = search(&db, SearchMode::EditBin, "日本x", 0);
        assert_eq!(bin.len(), KEYS.len(), "{name}: no capacity, every key");
    }
}

#[test]
fn bound_modes_on_ordered_engines() {
    let dir = TempDir::new().unwrap();
    for name in engines(&dir) {
        let db = open_filled(&name);
        if !db.is_ordered() {
            for mode in ["upper", "upperinc", "lower", "lowerinc"] {
                let mode = SearchMode::parse(mode).unwrap();
                assert!(
                    matches!(db.search(mode, b"b", 0), Err(Error::NotImplemented(_))),
                    "{name}: {mode:?}"
                );
            }
            continue;
        }
        let up = |inc, p: &str, cap| search(&db, SearchMode::Upper { inclusive: inc }, p, cap);
        let low = |inc, p: &str, cap| search(&db, SearchMode::Lower { inclusive: inc }, p, cap);
        assert_eq!(
            up(false, "band", 3),
            vec!["bandana", "can", "cane"],
            "{name}"
        );
        assert_eq!(
            up(true, "band", 3),
            vec!["band", "bandana", "can"],
            "{name}"
        );
        assert_eq!(up(false, "bb", 2), vec!["can", "cane"], "{name}");
        assert_eq!(
            up(true, "zebra", 0),
            vec!["zebra", "日本", "日本語"],
            "{name}"
        );
        assert_eq!(up(false, "日本語", 0), Vec::<String>::new(), "{name}");
        assert_eq!(low(false, "band", 2), vec!["banana", "applet"], "{name}");
        assert_eq!(low(true, "band", 2), vec!["band", "banana"], "{name}");
        assert_eq!(low(true, "bb", 2), vec!["bandana", "band"], "{name}");
        assert_eq!(low(false, "Apple pie", 0), Vec::<String>::new(), "{name}");
        let all_down = low(true, "\u{10ffff}", 0);
        let mut want: Vec<String> = KEYS.iter().map(|k| k.to_string()).collect();
        want.sort();
        want.reverse();
        assert_eq!(all_down, want, "{name}: descending");
    }
}

#[test]
fn capacity_limits_results() {
    let dir = TempDir::new().unwrap();
    for name in engines(&dir) {
        let db = open_filled(&name);
        for (mode, pat) in [
            (SearchMode::Begin, ""),
            (SearchMode::Contain, "a"),
            (SearchMode::ContainCase, "A"),
            (SearchMode::End, "e"),
            (SearchMode::Regex, "."),
            (SearchMode::Edit, "x"),
            (SearchMode::EditBin, "x"),
        ] {
            let all = search(&db, mode, pat, 0);
            assert!(all.len() > 3, "{name}: {mode:?}");
            let some = search(&db, mode, pat, 3);
            assert_eq!(some, all[..3].to_vec(), "{name}: {mode:?}: a prefix");
            assert_eq!(search(&db, mode, pat, 1000), all, "{name}: {mode:?}");
        }
    }
}

#[test]
fn many_keys_prefix_search_is_complete() {
    let dir = TempDir::new().unwrap();
    for name in engines(&dir) {
        let db = Db::open(&name, true).unwrap();
        for i in 0..300 {
            db.set(format!("user:{i:04}").as_bytes(), b"x", true)
                .unwrap();
            db.set(format!("item:{i:04}").as_bytes(), b"x", true)
                .unwrap();
        }
        let got = search(&db, SearchMode::Begin, "user:01", 0);
        let want: Vec<String> = (100..200).map(|i| format!("user:{i:04}")).collect();
        assert_eq!(got, want, "{name}");
        let got = search(&db, SearchMode::End, "7", 5);
        assert_eq!(
            got,
            vec![
                "item:0007",
                "item:0017",
                "item:0027",
                "item:0037",
                "item:0047"
            ],
            "{name}"
        );
    }
}

#[test]
fn bad_input_is_invalid_argument() {
    let db = open_filled("+");
    for bad in ["(unclosed", "[z-a]", "*x"] {
        assert!(
            matches!(
                db.search(SearchMode::Regex, bad.as_bytes(), 0),
                Err(Error::InvalidArgument(_))
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        SearchMode::parse("sideways"),
        Err(Error::InvalidArgument(_))
    ));
    for (text, mode) in [
        ("begin", SearchMode::Begin),
        ("contain", SearchMode::Contain),
        ("containcase", SearchMode::ContainCase),
        ("end", SearchMode::End),
        ("regex", SearchMode::Regex),
        ("edit", SearchMode::Edit),
        ("editbin", SearchMode::EditBin),
        ("upper", SearchMode::Upper { inclusive: false }),
        ("upperinc", SearchMode::Upper { inclusive: true }),
        ("lower", SearchMode::Lower { inclusive: false }),
        ("lowerinc", SearchMode::Lower { inclusive: true }),
    ] {
        assert_eq!(SearchMode::parse(text).unwrap(), mode);
    }
}
