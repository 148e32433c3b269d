//! Engine calls that exist for the memcached protocols: touch keeps the CAS,
//! incr/decr can check a CAS atomically, and lookups tell expired from absent.

use memstored_engine::{Db, Error, Lookup, StoreMode, StoreOptions};

#[test]
fn touch_keeps_value_flags_and_cas() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "*".to_string(),
        "*#capsiz=1m,cache_kind=segments".to_string(),
        format!("{}/t.tkh", dir.path().display()),
    ] {
        let db = Db::open(&name, true).unwrap();
        let opts = StoreOptions {
            flags: 42,
            ..Default::default()
        };
        let cas = db.store(b"k", "v".into(), StoreMode::Set, opts).unwrap();
        let far = u64::MAX / 4;
        let r = db.touch(b"k", far).unwrap();
        assert_eq!(
            (r.meta.cas, r.meta.flags, r.meta.expires_at),
            (cas, 42, far),
            "{name}"
        );
        let again = db.get_record(b"k").unwrap().unwrap();
        assert_eq!(
            (again.meta.cas, &again.value[..], again.meta.expires_at),
            (cas, &b"v"[..], far)
        );
        assert!(db.touch(b"absent", 0).unwrap_err().is_not_found());
        // A CAS taken before the touch still works after it.
        db.store(
            b"k",
            "w".into(),
            StoreMode::Set,
            StoreOptions {
                cas: Some(cas),
                ..Default::default()
            },
        )
        .unwrap();
    }
}

#[test]
fn incr_with_cas_is_checked_atomically() {
    let db = Db::open("*", true).unwrap();
    let cas = db
        .store(b"n", "10".into(), StoreMode::Set, StoreOptions::default())
        .unwrap();
    let e = db
        .incr_decr_cas(b"n", 1, false, None, Some(cas + 99))
        .unwrap_err();
    assert!(matches!(e, Error::CasMismatch), "{e:?}");
    assert_eq!(
        &db.get(b"n").unwrap()[..],
        b"10",
        "a refused incr changes nothing"
    );
    let (n, new_cas) = db.incr_decr_cas(b"n", 5, false, None, Some(cas)).unwrap();
    assert_eq!(n, 15);
    assert!(new_cas > cas);
    assert!(db
        .incr_decr_cas(b"missing", 1, false, None, Some(1))
        .unwrap_err()
        .is_not_found());
}

#[test]
fn lookup_tells_expired_from_missing() {
    let db = Db::open("*", true).unwrap();
    db.store(
        b"old",
        "v".into(),
        StoreMode::Set,
        StoreOptions {
            expires_at: 1,
            ..Default::default()
        },
    )
    .unwrap();
    db.set(b"live", b"v", true).unwrap();
    assert_eq!(db.lookup(b"old").unwrap(), Lookup::Expired);
    assert_eq!(db.lookup(b"none").unwrap(), Lookup::Missing);
    assert!(matches!(db.lookup(b"live").unwrap(), Lookup::Hit(r) if &r.value[..] == b"v"));
}

/// Regression (differential test against memcached 1.6.18): memcached reads
/// a counter with `strtoull`, so leading white space, a `+`, and anything
/// after white space following the digits are accepted.
#[test]
fn counters_are_read_like_strtoull() {
    let db = Db::open("*", true).unwrap();
    for (stored, after) in [
        (&b" 12"[..], 13),
        (b"\t+7", 8),
        (b"8  ", 9),
        (b"41 trailing words", 42),
        (b"5\0", 6),
    ] {
        db.set(b"n", stored, true).unwrap();
        let (n, _) = db.incr_decr_cas(b"n", 1, false, None, None).unwrap();
        assert_eq!(n, after, "{stored:?}");
    }
    for bad in [&b""[..], b" ", b"+", b"-1", b"12x", b"x12", b"0x10"] {
        db.set(b"n", bad, true).unwrap();
        assert!(
            matches!(
                db.incr_decr_cas(b"n", 1, false, None, None),
                Err(Error::NotNumeric)
            ),
            "{bad:?} must be refused as non-numeric"
        );
    }
}
