use super::*;

fn mem(name: &str) -> Db {
    Db::open(name, true).unwrap()
}

fn value(db: &Db, key: &[u8]) -> Option<Bytes> {
    db.get_record(key).unwrap().map(|r| r.value)
}

#[test]
fn rekey_moves_copies_and_refuses_as_tkrzw_does() {
    let db = mem("*#num_shards=4");
    db.set(b"a", b"1", true).unwrap();
    db.set(b"b", b"2", true).unwrap();
    assert!(db
        .rekey(b"x", b"y", true, false)
        .unwrap_err()
        .is_not_found());
    assert!(matches!(
        db.rekey(b"a", b"b", false, false),
        Err(Error::Duplication(_))
    ));
    db.rekey(b"a", b"c", false, false).unwrap();
    assert_eq!(
        (value(&db, b"a"), value(&db, b"c")),
        (None, Some("1".into()))
    );
    db.rekey(b"c", b"b", true, true).unwrap();
    assert_eq!(
        (value(&db, b"c"), value(&db, b"b")),
        (Some("1".into()), Some("1".into()))
    );
    let ro = tempfile::tempdir().unwrap();
    let path = ro.path().join("r.tkh");
    let name = path.to_str().unwrap();
    mem(name).set(b"a", b"1", true).unwrap();
    let ro = Db::open(name, false).unwrap();
    assert!(matches!(
        ro.rekey(b"a", b"b", true, false),
        Err(Error::Precondition(_))
    ));
}

#[test]
fn compare_exchange_and_get_returns_the_actual_value() {
    let db = mem("*");
    let v = CasValue::Value;
    assert_eq!(
        db.compare_exchange_and_get(b"k", CasValue::Absent, v(b"123"))
            .unwrap(),
        (true, None)
    );
    assert_eq!(
        db.compare_exchange_and_get(b"k", CasValue::Absent, v(b"9"))
            .unwrap(),
        (false, Some("123".into()))
    );
    assert_eq!(
        db.compare_exchange_and_get(b"k", v(b"123"), CasValue::Any)
            .unwrap(),
        (true, Some("123".into()))
    );
    assert_eq!(value(&db, b"k"), Some("123".into()));
    assert_eq!(
        db.compare_exchange_and_get(b"k", CasValue::Any, CasValue::Absent)
            .unwrap(),
        (true, Some("123".into()))
    );
    assert_eq!(value(&db, b"k"), None);
    assert_eq!(
        db.compare_exchange_and_get(b"k", CasValue::Any, v(b"x"))
            .unwrap(),
        (false, None)
    );
    // An empty value is a value, not "no record".
    db.set(b"e", b"", true).unwrap();
    assert_eq!(
        db.compare_exchange_and_get(b"e", v(b""), v(b"full"))
            .unwrap(),
        (true, Some(Bytes::new()))
    );
}

#[test]
fn append_multi_appends_each_with_the_delimiter() {
    let db = mem("*");
    db.set(b"one", b"a", true).unwrap();
    db.append_multi(&[(b"one", b"1"), (b"two", b"2")], b":")
        .unwrap();
    assert_eq!(value(&db, b"one"), Some("a:1".into()));
    assert_eq!(value(&db, b"two"), Some("2".into()));
}

#[test]
fn export_to_copies_every_record() {
    let src = mem("*#num_shards=3");
    for i in 0..100u32 {
        src.set(format!("k{i}").as_bytes(), &i.to_be_bytes(), true)
            .unwrap();
    }
    let dest = mem("+");
    dest.set(b"k1", b"old", true).unwrap();
    dest.set(b"other", b"kept", true).unwrap();
    src.export_to(&dest).unwrap();
    assert_eq!(dest.count(), 101);
    assert_eq!(
        value(&dest, b"k1"),
        Some(Bytes::copy_from_slice(&1u32.to_be_bytes()))
    );
    assert_eq!(value(&dest, b"other"), Some("kept".into()));
}

#[test]
fn timestamp_health_size_and_path() {
    let before = crate::queue::wall_time();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.tkh");
    let name = path.to_str().unwrap();
    let db = mem(name);
    let opened = db.timestamp();
    assert!(opened >= before - 0.001 && opened <= crate::queue::wall_time() + 0.001);
    db.set(b"k", b"v", true).unwrap();
    db.synchronize(false).unwrap();
    assert!(db.timestamp() >= opened);
    assert!(db.is_healthy());
    assert!(db.file_size() > 0);
    assert_eq!(db.file_size(), std::fs::metadata(&path).unwrap().len());
    assert_eq!(db.file_path(), name);
    let m = mem("*");
    m.set(b"k", b"v", true).unwrap();
    assert!(m.file_size() > 0);
    assert_eq!(m.file_path(), "");
}

#[test]
fn copy_file_data_makes_a_database_that_opens() {
    let dir = tempfile::tempdir().unwrap();
    for (src, dst) in [
        ("c.tkh", "c-copy.tkh"),
        ("s.tkt#num_shards=3", "s-copy.tkt"),
    ] {
        let src_name = format!("{}/{src}", dir.path().display());
        let db = mem(&src_name);
        for i in 0..50u32 {
            db.set(format!("k{i}").as_bytes(), b"v", true).unwrap();
        }
        let dest = format!("{}/{dst}", dir.path().display());
        db.copy_file_data(&dest, true).unwrap();
        let shards = db.shard_count();
        let copy = Db::open(&format!("{dest}#num_shards={shards}"), false).unwrap();
        assert_eq!(copy.count(), 50);
        assert_eq!(value(&copy, b"k7"), Some("v".into()));
    }
    assert!(matches!(
        mem("*").copy_file_data("/nonexistent/x", false),
        Err(Error::Precondition(_))
    ));
}

#[test]
fn restore_database_salvages_into_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let old = format!("{}/old", dir.path().display());
    let db = mem(&format!("{old}#dbm=tree"));
    db.set(b"k", b"v", true).unwrap();
    drop(db);
    let new = format!("{}/new", dir.path().display());
    restore_database(&old, &new, "TreeDBM", -1).unwrap();
    let restored = Db::open(&format!("{new}#dbm=tree"), false).unwrap();
    assert_eq!(value(&restored, b"k"), Some("v".into()));
    let e = restore_database(&old, &new, "TreeDBM", 100).unwrap_err();
    assert!(matches!(e, Error::NotImplemented(m) if m.contains("end_offset")));
    assert!(matches!(
        restore_database(&old, &new, "SkipDBM", -1),
        Err(Error::NotImplemented(_))
    ));
}

#[test]
fn process_multi_is_atomic_and_applies_each_verdict() {
    let db = mem("*#num_shards=4");
    db.set(b"a", b"1", true).unwrap();
    db.set(b"b", b"2", true).unwrap();
    let mut seen = Vec::new();
    db.process_multi(&[b"a", b"b", b"c"], true, |i, k, r| {
        seen.push((i, k.to_vec(), r.map(|r| r.value.clone())));
        Ok(match i {
            0 => Action::Remove,
            1 => Action::Keep,
            _ => Action::Put {
                value: "3".into(),
                flags: 0,
                expires_at: 0,
            },
        })
    })
    .unwrap();
    assert_eq!(seen[0], (0, b"a".to_vec(), Some("1".into())));
    assert_eq!(seen[2], (2, b"c".to_vec(), None));
    assert_eq!(
        (value(&db, b"a"), value(&db, b"b"), value(&db, b"c")),
        (None, Some("2".into()), Some("3".into()))
    );
    // Read-only processing ignores the verdicts.
    db.process_multi(&[b"b"], false, |_, _, _| Ok(Action::Remove))
        .unwrap();
    assert_eq!(value(&db, b"b"), Some("2".into()));
    // A failing processor stops the call.
    let e = db.process_multi(&[b"b"], true, |_, _, _| Err(Error::Infeasible("no".into())));
    assert!(matches!(e, Err(Error::Infeasible(_))));
}

#[test]
fn process_first_and_each_visit_records() {
    let db = mem("+");
    assert!(db
        .process_first(true, |_, _| Ok(Action::Keep))
        .unwrap_err()
        .is_not_found());
    for k in ["b", "a", "c"] {
        db.set(k.as_bytes(), k.as_bytes(), true).unwrap();
    }
    let mut first = Vec::new();
    db.process_first(true, |k, _| {
        first = k.to_vec();
        Ok(Action::Remove)
    })
    .unwrap();
    assert_eq!(first, b"a");
    let mut keys = Vec::new();
    db.process_each(true, |k, r| {
        keys.push(k.to_vec());
        let mut v = r.value.to_vec();
        v.extend_from_slice(b"!");
        Ok(if k == b"b" {
            Action::Remove
        } else {
            Action::Put {
                value: v.into(),
                flags: 0,
                expires_at: 0,
            }
        })
    })
    .unwrap();
    assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec()]);
    assert_eq!(
        (value(&db, b"b"), value(&db, b"c")),
        (None, Some("c!".into()))
    );
    let mut n = 0;
    db.process_each(false, |_, _| {
        n += 1;
        Ok(Action::Remove)
    })
    .unwrap();
    assert_eq!((n, db.count()), (1, 1));
}
