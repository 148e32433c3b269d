use super::*;
use memstored_engine::Db;
use std::sync::Arc;

pub(super) fn mem() -> Arc<Db> {
    Arc::new(Db::open("*", true).unwrap())
}

/// A server around `db`, as a connection would call procedures on.
pub(super) fn server(db: &Arc<Db>) -> Arc<Server> {
    Server::standalone(db.clone())
}

pub(super) fn c(db: &Arc<Db>, method: &str, params: Vec<Value>) -> RpcResult {
    call(&server(db), method, &params)
}

pub(super) fn ok(db: &Arc<Db>, method: &str, params: Vec<Value>) -> Value {
    c(db, method, params).unwrap_or_else(|e| panic!("{method}: {e}"))
}

pub(super) fn err(db: &Arc<Db>, method: &str, params: Vec<Value>) -> i64 {
    match c(db, method, params) {
        Ok(v) => panic!("{method} succeeded with {v:?}"),
        Err(e) => e.code,
    }
}

pub(super) fn s(x: &str) -> Value {
    Value::from(x)
}

pub(super) fn b(x: &[u8]) -> Value {
    Value::Binary(x.to_vec())
}

pub(super) fn opts(entries: Vec<(&str, Value)>) -> Value {
    map(entries)
}

pub(super) fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    match v {
        Value::Map(m) => map_get(m, name),
        _ => None,
    }
}

pub(super) fn value_of(db: &Arc<Db>, key: &str) -> Option<Vec<u8>> {
    db.get_record(key.as_bytes())
        .unwrap()
        .map(|r| r.value.to_vec())
}

/// `{_00000000: v0, ...}`: a bulk map of `n` records (keys as str, values as bin).
fn records(n: usize) -> Value {
    Value::Map(
        (0..n)
            .map(|i| (s(&format!("_{i:08}")), b(format!("v{i}").as_bytes())))
            .collect(),
    )
}

#[test]
fn search_patterns_are_bounded_in_length_and_compiled_size() {
    let db = mem();
    db.set(b"k", b"v", true).unwrap();
    let long = "x".repeat(crate::exec::slow::MAX_PATTERN + 1);
    for (method, params) in [
        ("match_prefix", vec![s(&long)]),
        ("match_regex", vec![s(&long)]),
        ("match_similar", vec![s(&long)]),
        ("search", vec![s("edit"), s(&long)]),
    ] {
        assert_eq!(
            err(&db, method, params),
            code::INVALID_PARAMETERS,
            "{method}"
        );
    }
    let at_limit = "x".repeat(crate::exec::slow::MAX_PATTERN);
    assert_eq!(
        ok(&db, "match_prefix", vec![s(&at_limit)]),
        Value::Map(vec![(s("num"), s("0"))])
    );
    // 40 bytes of pattern, but a program far over 1 MiB: refused, not compiled.
    match c(&db, "match_regex", vec![s(r"\w{50}\w{50}\w{50}\w{50}")]) {
        Err(e) => assert!(
            e.code == code::INVALID_PARAMETERS && e.message.contains("size limit"),
            "{e}"
        ),
        Ok(v) => panic!("compiled: {v:?}"),
    }
}

#[test]
fn compare_exchange_multi() {
    let db = mem();
    let pairs = |ps: &[(&str, Option<&str>)]| {
        Value::Array(
            ps.iter()
                .map(|(k, v)| Value::Array(vec![s(k), v.map_or(Value::Nil, s)]))
                .collect(),
        )
    };
    ok(
        &db,
        "compare_exchange_multi",
        vec![
            pairs(&[("a", None), ("b", None)]),
            pairs(&[("a", Some("1")), ("b", Some("2"))]),
        ],
    );
    assert_eq!(value_of(&db, "a"), Some(b"1".to_vec()));
    assert_eq!(
        err(
            &db,
            "compare_exchange_multi",
            vec![
                pairs(&[("a", Some("1")), ("b", Some("x"))]),
                pairs(&[("a", None)])
            ],
        ),
        code::CAS_FAILED
    );
    assert_eq!(value_of(&db, "a"), Some(b"1".to_vec()));
    ok(
        &db,
        "compare_exchange_multi",
        vec![
            pairs(&[("a", Some("1")), ("b", Some("2"))]),
            pairs(&[("a", None), ("c", Some("3"))]),
        ],
    );
    assert_eq!(value_of(&db, "a"), None);
    assert_eq!(value_of(&db, "c"), Some(b"3".to_vec()));
    assert_eq!(
        err(&db, "compare_exchange_multi", vec![s("x"), pairs(&[])]),
        code::INVALID_PARAMETERS
    );
}

fn listed(v: &Value) -> Vec<(String, String)> {
    let Value::Array(a) = v else { panic!("{v:?}") };
    a.iter()
        .map(|p| {
            let Value::Array(kv) = p else { panic!() };
            let t = |x: &Value| String::from_utf8(value_bytes(x).unwrap().to_vec()).unwrap();
            (t(&kv[0]), t(&kv[1]))
        })
        .collect()
}

fn list_keys(db: &Arc<Db>, o: Vec<(&str, Value)>) -> Vec<String> {
    listed(&ok(db, "list", vec![opts(o)]))
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

fn numbered(from: usize, n: usize) -> Vec<String> {
    (from..from + n).map(|i| format!("{i:08}")).collect()
}

#[test]
fn list_sharded_tree_sync_backup_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("casket.tkt");
    let name = format!("{}#num_shards=10", path.display());
    let db = Arc::new(Db::open(&name, true).unwrap());
    let r = ok(&db, "set_bulk", vec![records(1000)]);
    assert_eq!(field(&r, "num"), Some(&s("1000")));

    // Global order across the shards.
    let all = listed(&ok(&db, "list", vec![]));
    assert_eq!(all.len(), 1000);
    assert_eq!(all[7], ("00000007".to_string(), "v7".to_string()));
    assert_eq!(
        all.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        numbered(0, 1000)
    );
    assert_eq!(
        list_keys(&db, vec![("items", Value::from(3))]),
        numbered(0, 3)
    );
    let jk = |m: &str| {
        vec![
            ("move", s(m)),
            ("jump_key", s("00000100")),
            ("items", Value::from(20)),
        ]
    };
    assert_eq!(list_keys(&db, jk("jumplowerinc")), numbered(100, 20));
    assert_eq!(list_keys(&db, jk("jumplower")), numbered(99, 20));
    assert_eq!(list_keys(&db, jk("jumpupperinc")), numbered(100, 20));
    assert_eq!(list_keys(&db, jk("jumpupper")), numbered(101, 20));
    assert_eq!(list_keys(&db, jk("jump")), numbered(100, 20));
    assert_eq!(
        list_keys(&db, vec![("move", s("jump")), ("jump_key", b(b"0000099"))]).len(),
        1000 - 990
    );
    assert_eq!(
        err(&db, "list", vec![opts(vec![("move", s("sideways"))])]),
        code::INVALID_PARAMETERS
    );
    assert_eq!(
        err(&db, "list", vec![opts(vec![("move", s("jump"))])]),
        code::INVALID_PARAMETERS
    );

    let st = ok(&db, "status", vec![]);
    assert_eq!(field(&st, "num_shards"), Some(&s("10")));
    assert_eq!(field(&st, "engine"), Some(&s("tree")));
    assert_eq!(field(&st, "count"), Some(&s("1000")));

    // Slow procedures.
    let hard = vec![opts(vec![("hard", Value::Boolean(true))])];
    assert!(is_slow("synchronize", &hard));
    assert!(!is_slow("synchronize", &[]));
    assert!(is_slow(
        "synchronize",
        &[opts(vec![("make_backup", s(""))])]
    ));
    assert!(is_slow("rebuild", &[]));
    assert!(is_slow("vacuum", &[]));
    for search in ["match_prefix", "match_regex", "match_similar", "search"] {
        assert!(is_slow(search, &[s("k")]), "{search} scans every key");
    }
    assert!(!is_slow("get", &[s("k")]));
    ok(&db, "synchronize", hard);

    ok(
        &db,
        "synchronize",
        vec![opts(vec![("make_backup", s("nightly"))])],
    );
    let backup = format!("{}.backup.nightly#num_shards=10", path.display());
    let copy = Arc::new(Db::open(&backup, false).unwrap());
    assert_eq!(copy.count(), 1000);
    drop(copy);
    // Empty suffix: the UTC time.
    ok(&db, "synchronize", vec![opts(vec![("make_backup", s(""))])]);
    let stamped = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("casket.tkt.backup.2") && n.ends_with("-00000-of-00010"))
        .count();
    assert_eq!(stamped, 1);
    assert_eq!(
        err(
            &db,
            "synchronize",
            vec![opts(vec![("make_backup", s("a/b"))])]
        ),
        code::INVALID_PARAMETERS
    );

    // Rebuild after overwrites keeps the newest values.
    for i in 0..500 {
        db.set(format!("{i:08}").as_bytes(), b"new", true).unwrap();
    }
    ok(&db, "remove_bulk", vec![opts(vec![("_00000999", s(""))])]);
    ok(&db, "rebuild", vec![]);
    assert_eq!(db.count(), 999);
    assert_eq!(value_of(&db, "00000001"), Some(b"new".to_vec()));
    assert_eq!(value_of(&db, "00000700"), Some(b"v700".to_vec()));
    ok(&db, "vacuum", vec![]);
    assert_eq!(ok(&db, "count", vec![]), Value::from(999u64));
}

#[test]
fn list_on_hash() {
    let db = Arc::new(Db::open("*#num_shards=4", true).unwrap());
    ok(&db, "set_bulk", vec![records(50)]);
    let mut got = list_keys(&db, vec![]);
    got.sort();
    assert_eq!(got, numbered(0, 50));
    assert_eq!(list_keys(&db, vec![("items", Value::from(7))]).len(), 7);
    assert_eq!(
        err(
            &db,
            "list",
            vec![opts(vec![("move", s("jumplower")), ("jump_key", s("x"))])]
        ),
        code::NOT_IMPLEMENTED
    );
    assert!(list_keys(&db, vec![("move", s("jump")), ("jump_key", s("missing"))]).is_empty());
    assert!(!list_keys(&db, vec![("move", s("jump")), ("jump_key", s("00000010"))]).is_empty());
}

#[test]
fn read_only_is_a_logical_error() {
    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().join("ro.tkh").display().to_string();
    {
        let db = Arc::new(Db::open(&name, true).unwrap());
        db.set(b"k", b"v", true).unwrap();
    }
    let db = Arc::new(Db::open(&name, false).unwrap());
    assert_eq!(err(&db, "set", vec![s("k"), s("v")]), code::LOGICAL);
    let g = ok(
        &db,
        "get_bulk",
        vec![opts(vec![("_k", s("")), ("atomic", s(""))])],
    );
    assert_eq!(field(&g, "_k"), Some(&s("v")));
    assert_eq!(field(&g, "num"), Some(&s("1")));
}
