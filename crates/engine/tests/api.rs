//! The library API, run over every engine: in-memory hash and tree, sharded
//! or not, persistent hash and tree, the memory-with-file engine, and a
//! compressed file.

use bytes::Bytes;
use memstored_engine::{now_secs, Db, Error, StoreMode, StoreOptions};
use std::collections::BTreeMap;
use std::sync::Arc;
use tempfile::TempDir;

/// One open database of each engine; the directory keeps file engines' files alive.
struct Case {
    name: String,
    db: Db,
    _dir: TempDir,
}

fn engine_names(dir: &TempDir) -> Vec<String> {
    let d = dir.path().display();
    vec![
        "*".to_string(),
        "*#num_shards=3".to_string(),
        "+".to_string(),
        "+#num_shards=4".to_string(),
        format!("{d}/a.tkh"),
        format!("{d}/a.tkt#num_shards=3"),
        format!("{d}/a.tkmt"),
        format!("{d}/a.tkh#compression=lz4"),
    ]
}

fn all_engines() -> Vec<Case> {
    let mut out = Vec::new();
    for i in 0..8 {
        let dir = TempDir::new().unwrap();
        let name = engine_names(&dir)[i].clone();
        let db = Db::open(&name, true).unwrap_or_else(|e| panic!("open {name}: {e}"));
        out.push(Case {
            name,
            db,
            _dir: dir,
        });
    }
    out
}

/// Runs `f` on every engine, naming the engine in any failure.
fn each(f: impl Fn(&str, &Db)) {
    for c in all_engines() {
        f(&c.name, &c.db);
    }
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn get_str(db: &Db, key: &str) -> Option<String> {
    match db.get(key.as_bytes()) {
        Ok(v) => Some(String::from_utf8(v.to_vec()).unwrap()),
        Err(Error::NotFound(_)) => None,
        Err(e) => panic!("get {key}: {e}"),
    }
}

fn opts(flags: u32, expires_at: u64, cas: Option<u64>) -> StoreOptions {
    StoreOptions {
        flags,
        expires_at,
        cas,
    }
}

#[test]
fn get_set_add_replace_remove() {
    each(|name, db| {
        assert!(matches!(db.get(b"k"), Err(Error::NotFound(_))), "{name}");
        db.set(b"k", b"v1", true).unwrap();
        assert_eq!(get_str(db, "k").as_deref(), Some("v1"), "{name}");
        assert!(
            matches!(db.set(b"k", b"v2", false), Err(Error::Duplication(_))),
            "{name}"
        );
        assert_eq!(get_str(db, "k").as_deref(), Some("v1"), "{name}");
        db.set(b"k", b"v3", true).unwrap();
        assert_eq!(get_str(db, "k").as_deref(), Some("v3"), "{name}");

        assert!(
            matches!(db.add(b"k", b"x"), Err(Error::Duplication(_))),
            "{name}"
        );
        db.add(b"fresh", b"a").unwrap();
        assert_eq!(get_str(db, "fresh").as_deref(), Some("a"), "{name}");

        assert!(
            matches!(db.replace(b"absent", b"x"), Err(Error::NotFound(_))),
            "{name}"
        );
        assert_eq!(get_str(db, "absent"), None, "{name}");
        db.replace(b"fresh", b"b").unwrap();
        assert_eq!(get_str(db, "fresh").as_deref(), Some("b"), "{name}");

        // Empty keys and values are records like any other.
        db.set(b"", b"", true).unwrap();
        assert_eq!(&db.get(b"").unwrap()[..], b"", "{name}");
        db.remove(b"").unwrap();

        db.remove(b"k").unwrap();
        assert_eq!(get_str(db, "k"), None, "{name}");
        assert!(matches!(db.remove(b"k"), Err(Error::NotFound(_))), "{name}");
        assert_eq!(db.count(), 1, "{name}");

        // Binary keys and values.
        let key = [0u8, 255, 1, 0];
        let value: Vec<u8> = (0..=255u8).collect();
        db.set(&key, &value, true).unwrap();
        assert_eq!(&db.get(&key).unwrap()[..], &value[..], "{name}");
    });
}

#[test]
fn append_with_delimiter() {
    each(|name, db| {
        db.append(b"list", b"a", b",").unwrap();
        assert_eq!(get_str(db, "list").as_deref(), Some("a"), "{name}");
        db.append(b"list", b"b", b",").unwrap();
        db.append(b"list", b"c", b"::").unwrap();
        db.append(b"list", b"d", b"").unwrap();
        assert_eq!(get_str(db, "list").as_deref(), Some("a,b::cd"), "{name}");
    });
}

#[test]
fn store_modes_and_metadata() {
    each(|name, db| {
        let far = now_secs() + 3600;
        let cas1 = db
            .store(b"k", b("v"), StoreMode::Set, opts(7, far, None))
            .unwrap();
        let r = db.get_record(b"k").unwrap().unwrap();
        assert_eq!(&r.value[..], b"v", "{name}");
        assert_eq!((r.meta.flags, r.meta.expires_at), (7, far), "{name}");
        assert_eq!(r.meta.cas, cas1, "{name}");

        assert!(
            matches!(
                db.store(b"k", b("x"), StoreMode::Add, opts(0, 0, None)),
                Err(Error::Duplication(_))
            ),
            "{name}"
        );
        assert!(
            matches!(
                db.store(b"nope", b("x"), StoreMode::Replace, opts(0, 0, None)),
                Err(Error::NotFound(_))
            ),
            "{name}"
        );
        assert!(
            matches!(
                db.store(b"nope", b("x"), StoreMode::Append, opts(0, 0, None)),
                Err(Error::NotFound(_))
            ),
            "{name}"
        );
        assert!(
            matches!(
                db.store(b"nope", b("x"), StoreMode::Prepend, opts(0, 0, None)),
                Err(Error::NotFound(_))
            ),
            "{name}"
        );
        assert_eq!(get_str(db, "nope"), None, "{name}");

        // Append and prepend keep flags and expiry whatever the options say.
        let cas2 = db
            .store(b"k", b("-tail"), StoreMode::Append, opts(99, 5, None))
            .unwrap();
        let cas3 = db
            .store(b"k", b("head-"), StoreMode::Prepend, opts(98, 6, None))
            .unwrap();
        let r = db.get_record(b"k").unwrap().unwrap();
        assert_eq!(&r.value[..], b"head-v-tail", "{name}");
        assert_eq!((r.meta.flags, r.meta.expires_at), (7, far), "{name}");
        assert!(cas1 < cas2 && cas2 < cas3, "{name}: {cas1} {cas2} {cas3}");
        assert_eq!(r.meta.cas, cas3, "{name}");

        // Replace takes the new flags and expiry.
        let cas4 = db
            .store(b"k", b("r"), StoreMode::Replace, opts(3, 0, None))
            .unwrap();
        let r = db.get_record(b"k").unwrap().unwrap();
        assert_eq!((r.meta.flags, r.meta.expires_at), (3, 0), "{name}");
        assert!(cas4 > cas3, "{name}");

        // CAS: a mismatch is CasMismatch and changes nothing.
        assert!(
            matches!(
                db.store(
                    b"k",
                    b("bad"),
                    StoreMode::Set,
                    opts(0, 0, Some(cas4 + 1000))
                ),
                Err(Error::CasMismatch)
            ),
            "{name}"
        );
        assert!(
            matches!(
                db.store(b"k", b("bad"), StoreMode::Set, opts(0, 0, Some(cas3))),
                Err(Error::CasMismatch)
            ),
            "{name}"
        );
        assert_eq!(get_str(db, "k").as_deref(), Some("r"), "{name}");
        // ... on a missing record it is NotFound (and nothing is created).
        assert!(
            matches!(
                db.store(b"missing", b("x"), StoreMode::Set, opts(0, 0, Some(cas4))),
                Err(Error::NotFound(_))
            ),
            "{name}"
        );
        assert_eq!(get_str(db, "missing"), None, "{name}");
        // ... and a match stores.
        let cas5 = db
            .store(b"k", b("good"), StoreMode::Set, opts(1, 0, Some(cas4)))
            .unwrap();
        assert!(cas5 > cas4, "{name}");
        assert_eq!(get_str(db, "k").as_deref(), Some("good"), "{name}");
        // A used CAS does not match again.
        assert!(
            matches!(
                db.store(b"k", b("again"), StoreMode::Set, opts(0, 0, Some(cas4))),
                Err(Error::CasMismatch)
            ),
            "{name}"
        );
        // Append with the right CAS works, with the wrong one does not.
        let cas6 = db
            .store(b"k", b("+"), StoreMode::Append, opts(0, 0, Some(cas5)))
            .unwrap();
        assert!(
            matches!(
                db.store(b"k", b("+"), StoreMode::Append, opts(0, 0, Some(cas5))),
                Err(Error::CasMismatch)
            ),
            "{name}"
        );
        assert_eq!(get_str(db, "k").as_deref(), Some("good+"), "{name}");

        // Remove with CAS.
        assert!(
            matches!(
                db.remove_with_cas(b"k", Some(cas5)),
                Err(Error::CasMismatch)
            ),
            "{name}"
        );
        db.remove_with_cas(b"k", Some(cas6)).unwrap();
        assert_eq!(get_str(db, "k"), None, "{name}");
    });
}

#[test]
fn cas_strictly_increases_on_every_change() {
    each(|name, db| {
        // CAS is per shard, so it increases per key (each key has one shard).
        let mut last: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut check = |what: &str, key: &[u8]| {
            let cas = db.get_record(key).unwrap().unwrap().meta.cas;
            let prev = last.insert(key.to_vec(), cas).unwrap_or(0);
            assert!(cas > prev, "{name}: {what}: cas {cas} after {prev}");
        };
        db.set(b"c", b"1", true).unwrap();
        check("set", b"c");
        db.set(b"c", b"1", true).unwrap();
        check("same value again", b"c");
        db.append(b"c", b"2", b"").unwrap();
        check("append", b"c");
        db.increment(b"n", 1, 0).unwrap();
        check("increment new", b"n");
        db.increment(b"n", 1, 0).unwrap();
        check("increment", b"n");
        // touch is the one change that keeps the CAS (memcached semantics).
        let before = db.get_record(b"c").unwrap().unwrap().meta.cas;
        db.touch(b"c", 0).unwrap();
        assert_eq!(
            db.get_record(b"c").unwrap().unwrap().meta.cas,
            before,
            "{name}: touch"
        );
        db.compare_exchange(b"c", Some(b"12"), Some(b"13")).unwrap();
        check("compare_exchange", b"c");
        db.set_and_get(b"c", b"14").unwrap();
        check("set_and_get", b"c");
        db.incr_decr(b"n", 5, false, None).unwrap();
        check("incr", b"n");
        db.incr_decr(b"n", 1, true, None).unwrap();
        check("decr", b"n");
        db.increment_double(b"d", 0.5, 0.0).unwrap();
        check("increment_double", b"d");
        db.remove(b"c").unwrap();
        db.set(b"c", b"again", true).unwrap();
        check("set after remove", b"c");
        db.compare_exchange_multi(&[], &[(b"c", Some(b"multi"))])
            .unwrap();
        check("compare_exchange_multi", b"c");
        let mut cur = db.cursor();
        cur.jump(b"c").unwrap();
        cur.set(b"by cursor").unwrap();
        check("cursor set", b"c");
    });
}

#[test]
fn touch_sets_expiry_and_keeps_value() {
    each(|name, db| {
        assert!(
            matches!(db.touch(b"none", 0), Err(Error::NotFound(_))),
            "{name}"
        );
        let far = now_secs() + 1000;
        let cas0 = db
            .store(b"t", b("val"), StoreMode::Set, opts(42, 0, None))
            .unwrap();
        let r = db.touch(b"t", far).unwrap();
        assert_eq!(&r.value[..], b"val", "{name}");
        assert_eq!((r.meta.flags, r.meta.expires_at), (42, far), "{name}");
        assert_eq!(
            r.meta.cas, cas0,
            "{name}: touch keeps the CAS, as memcached does"
        );
        let stored = db.get_record(b"t").unwrap().unwrap();
        assert_eq!(stored, r, "{name}");
        // Touching into the past makes the record vanish.
        db.touch(b"t", now_secs() - 1).unwrap();
        assert_eq!(get_str(db, "t"), None, "{name}");
        assert!(
            matches!(db.touch(b"t", 0), Err(Error::NotFound(_))),
            "{name}"
        );
    });
}

#[test]
fn expiry() {
    each(|name, db| {
        let past = now_secs() - 10;
        let future = now_secs() + 3600;
        db.store(b"old", b("gone"), StoreMode::Set, opts(1, past, None))
            .unwrap();
        db.store(b"new", b("here"), StoreMode::Set, opts(2, future, None))
            .unwrap();
        assert!(matches!(db.get(b"old"), Err(Error::NotFound(_))), "{name}");
        assert_eq!(db.get_record(b"old").unwrap(), None, "{name}");
        assert_eq!(get_str(db, "new").as_deref(), Some("here"), "{name}");
        let r = db.get_record(b"new").unwrap().unwrap();
        assert_eq!(r.meta.expires_at, future, "{name}");

        // An expired record counts as absent for every conditional call.
        assert!(
            matches!(db.replace(b"old", b"x"), Err(Error::NotFound(_))),
            "{name}"
        );
        assert!(
            matches!(db.remove(b"old"), Err(Error::NotFound(_))),
            "{name}"
        );
        assert!(
            matches!(db.touch(b"old", 0), Err(Error::NotFound(_))),
            "{name}"
        );
        assert!(
            matches!(
                db.store(b"old", b("x"), StoreMode::Append, opts(0, 0, None)),
                Err(Error::NotFound(_))
            ),
            "{name}"
        );
        assert_eq!(db.get_multi(&[b"old", b"new"]).unwrap().len(), 1, "{name}");
        assert_eq!(db.set_and_get(b"old2", b"x").unwrap(), None, "{name}");
        assert_eq!(db.increment(b"oldn", 1, 0).unwrap(), 1, "{name}");
        db.store(b"oldn", b("41"), StoreMode::Set, opts(0, past, None))
            .unwrap();
        assert_eq!(db.increment(b"oldn", 1, 100).unwrap(), 101, "{name}");
        db.store(b"oldc", b("v"), StoreMode::Set, opts(0, past, None))
            .unwrap();
        db.compare_exchange(b"oldc", None, Some(b"w")).unwrap();
        assert_eq!(get_str(db, "oldc").as_deref(), Some("w"), "{name}");

        // A cursor does not stop on it.
        let mut c = db.cursor();
        c.first().unwrap();
        let mut seen = Vec::new();
        while let Some((k, _)) = c.step().unwrap() {
            seen.push(k);
        }
        assert!(!seen.contains(&b"old".to_vec()), "{name}");
        assert!(seen.contains(&b"new".to_vec()), "{name}");

        // Add succeeds over it, with fresh metadata.
        db.store(b"old", b("back"), StoreMode::Add, opts(5, 0, None))
            .unwrap();
        let r = db.get_record(b"old").unwrap().unwrap();
        assert_eq!(&r.value[..], b"back", "{name}");
        assert_eq!((r.meta.flags, r.meta.expires_at), (5, 0), "{name}");
    });
}

#[test]
fn increment_integer() {
    each(|name, db| {
        assert_eq!(db.increment(b"n", 5, 100).unwrap(), 105, "{name}");
        assert_eq!(get_str(db, "n").as_deref(), Some("105"), "{name}");
        assert_eq!(db.increment(b"n", -110, 100).unwrap(), -5, "{name}");
        assert_eq!(get_str(db, "n").as_deref(), Some("-5"), "{name}");
        assert_eq!(db.increment(b"n", 0, 0).unwrap(), -5, "{name}");

        db.set(b"text", b"abc", true).unwrap();
        assert!(
            matches!(db.increment(b"text", 1, 0), Err(Error::NotNumeric)),
            "{name}"
        );
        assert_eq!(get_str(db, "text").as_deref(), Some("abc"), "{name}");

        db.set(b"big", i64::MAX.to_string().as_bytes(), true)
            .unwrap();
        assert!(
            matches!(db.increment(b"big", 1, 0), Err(Error::Overflow)),
            "{name}"
        );
        assert_eq!(
            get_str(db, "big"),
            Some(i64::MAX.to_string()),
            "{name}: unchanged after overflow"
        );
        assert!(
            matches!(
                db.increment(b"absent-overflow", i64::MAX, 1),
                Err(Error::Overflow)
            ),
            "{name}"
        );
        assert_eq!(get_str(db, "absent-overflow"), None, "{name}");

        // Flags and expiry survive an increment.
        let far = now_secs() + 500;
        db.store(b"m", b("10"), StoreMode::Set, opts(9, far, None))
            .unwrap();
        assert_eq!(db.increment(b"m", 1, 0).unwrap(), 11, "{name}");
        let r = db.get_record(b"m").unwrap().unwrap();
        assert_eq!((r.meta.flags, r.meta.expires_at), (9, far), "{name}");
    });
}

#[test]
fn increment_double() {
    each(|name, db| {
        assert_eq!(
            db.increment_double(b"f", 1.5, 10.0).unwrap(),
            11.5,
            "{name}"
        );
        assert_eq!(
            db.increment_double(b"f", -0.25, 0.0).unwrap(),
            11.25,
            "{name}"
        );
        let text = get_str(db, "f").unwrap();
        assert_eq!(text.parse::<f64>().unwrap(), 11.25, "{name}");
        db.set(b"i", b"3", true).unwrap();
        assert_eq!(db.increment_double(b"i", 0.5, 0.0).unwrap(), 3.5, "{name}");
        db.set(b"s", b"x1", true).unwrap();
        assert!(
            matches!(db.increment_double(b"s", 1.0, 0.0), Err(Error::NotNumeric)),
            "{name}"
        );
    });
}

#[test]
fn incr_decr_memcached_semantics() {
    each(|name, db| {
        assert!(
            matches!(db.incr_decr(b"c", 1, false, None), Err(Error::NotFound(_))),
            "{name}"
        );
        assert_eq!(get_str(db, "c"), None, "{name}");
        let far = now_secs() + 100;
        let (v, cas1) = db.incr_decr(b"c", 1, false, Some((10, 4, far))).unwrap();
        assert_eq!(v, 10, "{name}: created with the initial value");
        let r = db.get_record(b"c").unwrap().unwrap();
        assert_eq!(&r.value[..], b"10", "{name}");
        assert_eq!(
            (r.meta.flags, r.meta.expires_at, r.meta.cas),
            (4, far, cas1),
            "{name}"
        );
        let (v, cas2) = db.incr_decr(b"c", 5, false, Some((0, 0, 0))).unwrap();
        assert_eq!(v, 15, "{name}");
        assert!(cas2 > cas1, "{name}");
        assert_eq!(db.incr_decr(b"c", 20, true, None).unwrap().0, 0, "{name}");
        assert_eq!(get_str(db, "c").as_deref(), Some("0"), "{name}");

        db.set(b"w", u64::MAX.to_string().as_bytes(), true).unwrap();
        assert_eq!(db.incr_decr(b"w", 2, false, None).unwrap().0, 1, "{name}");
        assert_eq!(get_str(db, "w").as_deref(), Some("1"), "{name}");

        db.set(b"neg", b"-3", true).unwrap();
        assert!(
            matches!(db.incr_decr(b"neg", 1, false, None), Err(Error::NotNumeric)),
            "{name}"
        );
        db.set(b"txt", b"12a", true).unwrap();
        assert!(
            matches!(db.incr_decr(b"txt", 1, true, None), Err(Error::NotNumeric)),
            "{name}"
        );
        assert_eq!(get_str(db, "txt").as_deref(), Some("12a"), "{name}");
        // Keeps flags and expiry of the existing record.
        db.store(b"fl", b("7"), StoreMode::Set, opts(33, far, None))
            .unwrap();
        db.incr_decr(b"fl", 1, false, None).unwrap();
        let r = db.get_record(b"fl").unwrap().unwrap();
        assert_eq!(&r.value[..], b"8", "{name}");
        assert_eq!((r.meta.flags, r.meta.expires_at), (33, far), "{name}");
    });
}

#[test]
fn compare_exchange_single() {
    each(|name, db| {
        // Expected None: must be absent.
        db.compare_exchange(b"k", None, Some(b"1")).unwrap();
        assert_eq!(get_str(db, "k").as_deref(), Some("1"), "{name}");
        assert!(
            matches!(
                db.compare_exchange(b"k", None, Some(b"2")),
                Err(Error::ValueMismatch(_))
            ),
            "{name}"
        );
        assert!(
            matches!(
                db.compare_exchange(b"k", Some(b"0"), Some(b"2")),
                Err(Error::ValueMismatch(_))
            ),
            "{name}"
        );
        assert_eq!(get_str(db, "k").as_deref(), Some("1"), "{name}");
        let cas = db.get_record(b"k").unwrap().unwrap().meta.cas;
        assert!(
            matches!(
                db.compare_exchange(b"absent", Some(b"x"), Some(b"y")),
                Err(Error::ValueMismatch(_))
            ),
            "{name}"
        );
        assert_eq!(get_str(db, "absent"), None, "{name}");
        assert_eq!(
            db.get_record(b"k").unwrap().unwrap().meta.cas,
            cas,
            "{name}: a failed exchange changes nothing"
        );
        db.compare_exchange(b"k", Some(b"1"), Some(b"2")).unwrap();
        assert_eq!(get_str(db, "k").as_deref(), Some("2"), "{name}");
        // Desired None removes.
        db.compare_exchange(b"k", Some(b"2"), None).unwrap();
        assert_eq!(get_str(db, "k"), None, "{name}");
        // Absent to absent is a no-op success.
        db.compare_exchange(b"k", None, None).unwrap();
        assert_eq!(get_str(db, "k"), None, "{name}");
    });
}

/// Keys that land in at least two different shards of a sharded database:
/// with enough keys and 3 or 4 shards, some pair differs.
fn many_keys(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("multi-{i}").into_bytes()).collect()
}

#[test]
fn compare_exchange_multi_is_all_or_nothing() {
    each(|name, db| {
        let keys = many_keys(12);
        let k: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        for (i, key) in k.iter().enumerate().take(6) {
            db.set(key, format!("v{i}").as_bytes(), true).unwrap();
        }
        let snapshot = |db: &Db| -> Vec<Option<String>> {
            keys.iter()
                .map(|key| get_str(db, std::str::from_utf8(key).unwrap()))
                .collect()
        };
        let before = snapshot(db);

        // One wrong expectation among many: nothing changes.
        let expected: Vec<(&[u8], Option<&[u8]>)> = vec![
            (k[0], Some(b"v0")),
            (k[1], Some(b"v1")),
            (k[6], None),
            (k[7], Some(b"not there")),
        ];
        let desired: Vec<(&[u8], Option<&[u8]>)> = vec![
            (k[0], Some(b"new0")),
            (k[1], None),
            (k[6], Some(b"new6")),
            (k[8], Some(b"new8")),
        ];
        assert!(
            matches!(
                db.compare_exchange_multi(&expected, &desired),
                Err(Error::ValueMismatch(_))
            ),
            "{name}"
        );
        assert_eq!(snapshot(db), before, "{name}");

        // An existing record where absence is expected also fails.
        let expected2: Vec<(&[u8], Option<&[u8]>)> = vec![(k[0], Some(b"v0")), (k[5], None)];
        assert!(
            matches!(
                db.compare_exchange_multi(&expected2, &desired),
                Err(Error::ValueMismatch(_))
            ),
            "{name}"
        );
        assert_eq!(snapshot(db), before, "{name}");

        // All hold: everything applies, including removal and creation.
        let expected3: Vec<(&[u8], Option<&[u8]>)> = vec![
            (k[0], Some(b"v0")),
            (k[1], Some(b"v1")),
            (k[2], Some(b"v2")),
            (k[3], Some(b"v3")),
            (k[6], None),
            (k[7], None),
        ];
        let desired3: Vec<(&[u8], Option<&[u8]>)> = vec![
            (k[0], Some(b"new0")),
            (k[1], None),
            (k[2], None),
            (k[6], Some(b"new6")),
            (k[7], Some(b"new7")),
            (k[9], None),
        ];
        db.compare_exchange_multi(&expected3, &desired3).unwrap();
        let after = snapshot(db);
        let mut want = before.clone();
        want[0] = Some("new0".into());
        want[1] = None;
        want[2] = None;
        want[6] = Some("new6".into());
        want[7] = Some("new7".into());
        assert_eq!(after, want, "{name}");
    });
}

#[test]
fn compare_exchange_multi_is_atomic_under_concurrency() {
    // Two accounts in (probably) different shards; transfers keep the sum.
    for name in ["*#num_shards=3", "+#num_shards=4"] {
        let db = Arc::new(Db::open(name, true).unwrap());
        let keys = many_keys(8);
        for k in &keys {
            db.set(k, b"100", true).unwrap();
        }
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let db = db.clone();
                let keys = keys.clone();
                std::thread::spawn(move || {
                    let mut done = 0;
                    let mut i = t;
                    while done < 100 {
                        let a = &keys[i % keys.len()];
                        let b = &keys[(i * 3 + 1) % keys.len()];
                        i += 1;
                        if a == b {
                            continue;
                        }
                        let va = db.get(a).unwrap();
                        let vb = db.get(b).unwrap();
                        let na: i64 = std::str::from_utf8(&va).unwrap().parse().unwrap();
                        let nb: i64 = std::str::from_utf8(&vb).unwrap().parse().unwrap();
                        let (sa, sb) = ((na - 1).to_string(), (nb + 1).to_string());
                        match db.compare_exchange_multi(
                            &[(a, Some(&va[..])), (b, Some(&vb[..]))],
                            &[(a, Some(sa.as_bytes())), (b, Some(sb.as_bytes()))],
                        ) {
                            Ok(()) => done += 1,
                            Err(Error::ValueMismatch(_)) => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let sum: i64 = keys
            .iter()
            .map(|k| {
                std::str::from_utf8(&db.get(k).unwrap())
                    .unwrap()
                    .parse::<i64>()
                    .unwrap()
            })
            .sum();
        assert_eq!(sum, 100 * keys.len() as i64, "{name}");
    }
}

#[test]
fn set_and_get_remove_and_get() {
    each(|name, db| {
        assert_eq!(db.set_and_get(b"k", b"1").unwrap(), None, "{name}");
        assert_eq!(
            db.set_and_get(b"k", b"2").unwrap().as_deref(),
            Some(&b"1"[..]),
            "{name}"
        );
        assert_eq!(get_str(db, "k").as_deref(), Some("2"), "{name}");
        assert_eq!(&db.remove_and_get(b"k").unwrap()[..], b"2", "{name}");
        assert_eq!(get_str(db, "k"), None, "{name}");
        assert!(
            matches!(db.remove_and_get(b"k"), Err(Error::NotFound(_))),
            "{name}"
        );
    });
}

#[test]
fn multi_calls() {
    each(|name, db| {
        let keys = many_keys(20);
        let vals: Vec<String> = (0..20).map(|i| format!("val{i}")).collect();
        let pairs: Vec<(&[u8], &[u8])> = keys
            .iter()
            .zip(&vals)
            .map(|(k, v)| (&k[..], v.as_bytes()))
            .collect();
        db.set_multi(&pairs[..10], true).unwrap();
        assert_eq!(db.count(), 10, "{name}");

        // Without overwrite: existing ones kept, new ones stored, Duplication reported.
        let mut mixed: Vec<(&[u8], &[u8])> = pairs[5..15].to_vec();
        mixed[0].1 = b"changed";
        assert!(
            matches!(db.set_multi(&mixed, false), Err(Error::Duplication(_))),
            "{name}"
        );
        assert_eq!(db.count(), 15, "{name}");
        assert_eq!(&db.get(&keys[5]).unwrap()[..], b"val5", "{name}");
        assert_eq!(&db.get(&keys[14]).unwrap()[..], b"val14", "{name}");

        let ask: Vec<&[u8]> = vec![&keys[3], b"nope", &keys[0], &keys[19], &keys[14]];
        let got = db.get_multi(&ask).unwrap();
        let want: Vec<(Vec<u8>, Bytes)> = vec![
            (keys[3].clone(), b("val3")),
            (keys[0].clone(), b("val0")),
            (keys[14].clone(), b("val14")),
        ];
        assert_eq!(got, want, "{name}: present keys, in the order asked");

        let rm: Vec<&[u8]> = vec![&keys[0], &keys[1], b"nope", &keys[2]];
        assert!(
            matches!(db.remove_multi(&rm), Err(Error::NotFound(_))),
            "{name}"
        );
        assert_eq!(db.count(), 12, "{name}: the present ones were removed");
        assert_eq!(db.get_multi(&rm).unwrap(), vec![], "{name}");
        let rm2: Vec<&[u8]> = vec![&keys[3], &keys[4]];
        db.remove_multi(&rm2).unwrap();
        assert_eq!(db.count(), 10, "{name}");
    });
}

#[test]
fn count_clear_synchronize_inspect() {
    each(|name, db| {
        assert_eq!(db.count(), 0, "{name}");
        for i in 0..50 {
            db.set(format!("k{i}").as_bytes(), b"v", true).unwrap();
        }
        db.set(b"k0", b"again", true).unwrap();
        assert_eq!(db.count(), 50, "{name}");
        db.synchronize(false).unwrap();
        db.synchronize(true).unwrap();
        let props: BTreeMap<String, String> = db.inspect().into_iter().collect();
        assert_eq!(props["num_records"], "50", "{name}");
        assert_eq!(props["writable"], "true", "{name}");
        let shards = db.name().num_shards.to_string();
        assert_eq!(props["num_shards"], shards, "{name}");
        assert!(props.contains_key("class"), "{name}");
        assert!(props["bytes"].parse::<u64>().unwrap() > 0, "{name}");
        if name.contains("lz4") {
            assert_eq!(props["compression"], "lz4", "{name}");
        }
        db.clear().unwrap();
        assert_eq!(db.count(), 0, "{name}");
        assert_eq!(get_str(db, "k1"), None, "{name}");
        let mut c = db.cursor();
        c.first().unwrap();
        assert!(
            c.key().is_err(),
            "{name}: a cleared database has no first record"
        );
        db.set(b"after", b"clear", true).unwrap();
        assert_eq!(db.count(), 1, "{name}");
    });
}

#[test]
fn file_engines_keep_data_across_reopen() {
    let dir = TempDir::new().unwrap();
    for name in engine_names(&dir).into_iter().filter(|n| n.contains('/')) {
        let cas;
        {
            let db = Db::open(&name, true).unwrap();
            for i in 0..100 {
                db.set(format!("k{i}").as_bytes(), format!("v{i}").as_bytes(), true)
                    .unwrap();
            }
            db.remove(b"k7").unwrap();
            cas = db
                .store(
                    b"meta",
                    b("m"),
                    StoreMode::Set,
                    opts(77, now_secs() + 999, None),
                )
                .unwrap();
            db.close().unwrap();
        }
        let db = Db::open(&name, true).unwrap();
        assert_eq!(db.count(), 100, "{name}");
        assert_eq!(get_str(&db, "k8").as_deref(), Some("v8"), "{name}");
        assert_eq!(get_str(&db, "k7"), None, "{name}");
        let r = db.get_record(b"meta").unwrap().unwrap();
        assert_eq!((r.meta.flags, r.meta.cas), (77, cas), "{name}");
        // CAS keeps increasing after a reopen.
        let next = db
            .store(b"meta", b("m2"), StoreMode::Set, opts(0, 0, None))
            .unwrap();
        assert!(next > cas, "{name}");
    }
}

#[test]
fn cas_is_not_reused_after_reopen() {
    // A client holding the CAS of a record that was removed must never see
    // that CAS match a later record of the same key, even across a restart.
    let dir = TempDir::new().unwrap();
    for name in engine_names(&dir).into_iter().filter(|n| n.contains('/')) {
        let old_cas;
        {
            let db = Db::open(&name, true).unwrap();
            db.set(b"a", b"1", true).unwrap();
            old_cas = db
                .store(b"k", b("v"), StoreMode::Set, opts(0, 0, None))
                .unwrap();
            db.remove(b"k").unwrap();
            // Compaction drops the removed record's last put: its CAS must
            // still not come back.
            db.rebuild().unwrap();
        }
        let db = Db::open(&name, true).unwrap();
        let new_cas = db
            .store(b"k", b("w"), StoreMode::Set, opts(0, 0, None))
            .unwrap();
        assert!(new_cas > old_cas, "{name}: {new_cas} after {old_cas}");
        assert!(
            matches!(
                db.store(b"k", b("x"), StoreMode::Set, opts(0, 0, Some(old_cas))),
                Err(Error::CasMismatch)
            ),
            "{name}"
        );
    }
}

#[test]
fn read_only_open_refuses_writes_and_reads() {
    let dir = TempDir::new().unwrap();
    for name in engine_names(&dir).into_iter().filter(|n| n.contains('/')) {
        {
            let db = Db::open(&name, true).unwrap();
            db.set(b"a", b"1", true).unwrap();
            db.set(b"n", b"5", true).unwrap();
        }
        let db = Db::open(&name, false).unwrap();
        assert!(!db.is_writable(), "{name}");
        assert_eq!(get_str(&db, "a").as_deref(), Some("1"), "{name}");
        assert_eq!(db.count(), 2, "{name}");
        let pre = |r: Result<(), Error>, what: &str| {
            assert!(
                matches!(r, Err(Error::Precondition(_))),
                "{name}: {what}: {r:?}"
            );
        };
        pre(db.set(b"a", b"2", true), "set");
        pre(db.set(b"z", b"2", true), "set new");
        pre(db.add(b"z", b"2"), "add");
        pre(db.replace(b"a", b"2"), "replace");
        pre(db.append(b"a", b"2", b""), "append");
        pre(db.remove(b"a"), "remove");
        pre(db.remove(b"missing"), "remove missing");
        pre(
            db.store(b"a", b("2"), StoreMode::Set, StoreOptions::default())
                .map(|_| ()),
            "store",
        );
        pre(db.touch(b"a", 0).map(|_| ()), "touch");
        pre(db.increment(b"n", 1, 0).map(|_| ()), "increment");
        pre(
            db.increment_double(b"n", 1.0, 0.0).map(|_| ()),
            "increment_double",
        );
        pre(db.incr_decr(b"n", 1, false, None).map(|_| ()), "incr");
        pre(
            db.compare_exchange(b"a", Some(b"1"), Some(b"2")),
            "compare_exchange",
        );
        pre(
            db.compare_exchange_multi(&[(b"a", Some(b"1"))], &[(b"a", Some(b"2"))]),
            "compare_exchange_multi",
        );
        pre(db.set_and_get(b"a", b"2").map(|_| ()), "set_and_get");
        pre(db.remove_and_get(b"a").map(|_| ()), "remove_and_get");
        pre(db.set_multi(&[(b"a", b"2")], true), "set_multi");
        pre(db.remove_multi(&[b"a"]), "remove_multi");
        pre(db.clear(), "clear");
        let mut c = db.cursor();
        c.jump(b"a").unwrap();
        pre(c.set(b"2"), "cursor set");
        pre(c.remove(), "cursor remove");
        db.synchronize(true).unwrap();
        assert_eq!(get_str(&db, "a").as_deref(), Some("1"), "{name}");
        assert_eq!(get_str(&db, "n").as_deref(), Some("5"), "{name}");
        assert_eq!(db.count(), 2, "{name}");
        drop(db);
        // Nothing was written: a writable reopen sees the same.
        let db = Db::open(&name, true).unwrap();
        assert_eq!(get_str(&db, "a").as_deref(), Some("1"), "{name}");
        assert_eq!(db.count(), 2, "{name}");
    }
}

#[test]
fn read_only_open_of_missing_file_fails() {
    let dir = TempDir::new().unwrap();
    for name in engine_names(&dir).into_iter().filter(|n| n.contains('/')) {
        assert!(
            matches!(Db::open(&name, false), Err(Error::NotFound(_))),
            "{name}"
        );
    }
}

#[test]
fn concurrent_increments_are_not_lost() {
    const N: i64 = 500;
    for c in all_engines() {
        let name = c.name.clone();
        let db = Arc::new(c.db);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let db = db.clone();
                std::thread::spawn(move || {
                    for _ in 0..N {
                        db.increment(b"counter", 1, 0).unwrap();
                        db.incr_decr(b"mc", 1, false, Some((1, 0, 0))).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(get_str(&db, "counter"), Some((4 * N).to_string()), "{name}");
        assert_eq!(get_str(&db, "mc"), Some((4 * N).to_string()), "{name}");
    }
}

/// `get_with` lends the same value `get` returns, from every engine and
/// from wherever a file store holds the record (write buffer, map,
/// compressed), and treats an expired record as absent, as `get` does.
#[test]
fn get_with_sees_what_get_returns() {
    each(|name, db| {
        let past = now_secs() - 10;
        let big = "x".repeat(10_000);
        db.set(b"small", b"v", true).unwrap();
        db.set(b"big", big.as_bytes(), true).unwrap();
        db.store(b"old", b("gone"), StoreMode::Set, opts(0, past, None))
            .unwrap();
        for round in ["buffered", "flushed"] {
            for key in ["small", "big"] {
                let lent = db.get_with(key.as_bytes(), |v| v.to_vec()).unwrap();
                assert_eq!(
                    lent,
                    db.get(key.as_bytes()).unwrap(),
                    "{name} {round} {key}"
                );
            }
            for key in ["old", "never"] {
                let r = db.get_with(key.as_bytes(), |v| v.to_vec());
                assert!(matches!(r, Err(Error::NotFound(_))), "{name} {round} {key}");
            }
            db.synchronize(false).unwrap();
        }
    });
}
