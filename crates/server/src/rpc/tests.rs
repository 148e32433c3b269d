use super::*;
use memstored_engine::Db;
use std::sync::Arc;

fn mem() -> Arc<Db> {
    Arc::new(Db::open("*", true).unwrap())
}

/// A server around `db`, as a connection would call procedures on.
fn server(db: &Arc<Db>) -> Arc<Server> {
    Server::standalone(db.clone())
}

fn c(db: &Arc<Db>, method: &str, params: Vec<Value>) -> RpcResult {
    call(&server(db), method, &params)
}

fn ok(db: &Arc<Db>, method: &str, params: Vec<Value>) -> Value {
    c(db, method, params).unwrap_or_else(|e| panic!("{method}: {e}"))
}

fn err(db: &Arc<Db>, method: &str, params: Vec<Value>) -> i64 {
    match c(db, method, params) {
        Ok(v) => panic!("{method} succeeded with {v:?}"),
        Err(e) => e.code,
    }
}

fn s(x: &str) -> Value {
    Value::from(x)
}

fn b(x: &[u8]) -> Value {
    Value::Binary(x.to_vec())
}

fn opts(entries: Vec<(&str, Value)>) -> Value {
    map(entries)
}

fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    match v {
        Value::Map(m) => map_get(m, name),
        _ => None,
    }
}

fn value_of(db: &Arc<Db>, key: &str) -> Option<Vec<u8>> {
    db.get_record(key.as_bytes())
        .unwrap()
        .map(|r| r.value.to_vec())
}

#[test]
fn ping_and_echo() {
    let db = mem();
    assert_eq!(ok(&db, "ping", vec![]), Value::Nil);
    let m = opts(vec![("hoge", s("1")), ("foo", s("bar"))]);
    assert_eq!(ok(&db, "echo", vec![m.clone()]), m);
    assert_eq!(ok(&db, "echo", vec![]), Value::Map(vec![]));
    assert_eq!(err(&db, "no_such_procedure", vec![]), code::NOT_IMPLEMENTED);
}

#[test]
fn status_and_report() {
    let db = mem();
    ok(&db, "set", vec![s("a"), s("1")]);
    let st = ok(&db, "status", vec![]);
    assert_eq!(field(&st, "count"), Some(&Value::from(1u64)));
    assert!(field(&st, "size").and_then(Value::as_u64).unwrap() > 0);
    assert_eq!(field(&st, "engine"), Some(&s("mem_hash")));
    assert_eq!(field(&st, "class"), Some(&s("mem_hash")));
    assert_eq!(field(&st, "num_shards"), Some(&Value::from(1u64)));
    assert!(field(&st, "path").is_some());
    assert!(field(&st, "writable").is_some());

    let srv = server(&db);
    call(&srv, "get", &[s("a")]).unwrap();
    let r = call(&srv, "report", &[]).unwrap();
    assert_eq!(field(&r, "get_hits"), Some(&s("1")), "RPC gets are counted");
    assert_eq!(field(&r, "db_total_count"), Some(&s("1")));
    assert!(field(&r, "db_0").is_some());
    assert!(field(&r, "serv_current_time").is_some());
}

#[test]
fn set_add_replace_get_check_remove() {
    let db = mem();
    assert_eq!(ok(&db, "set", vec![b(b"k\0\xff"), b(b"v\0")]), Value::Nil);
    // A str key is its UTF-8 bytes ("\u{ff}" is two), so this is another key.
    assert_eq!(err(&db, "get", vec![s("k\0\u{ff}")]), code::NO_RECORD);
    let g = ok(&db, "get", vec![b(b"k\0\xff")]);
    assert_eq!(field(&g, "value"), Some(&b(b"v\0")));
    assert_eq!(field(&g, "xt"), None);

    assert_eq!(
        err(&db, "add", vec![b(b"k\0\xff"), s("x")]),
        code::RECORD_EXISTS
    );
    ok(&db, "add", vec![s("new"), s("x")]);
    assert_eq!(value_of(&db, "new"), Some(b"x".to_vec()));

    assert_eq!(
        err(&db, "replace", vec![s("absent"), s("x")]),
        code::NO_RECORD
    );
    ok(&db, "replace", vec![s("new"), s("y")]);
    assert_eq!(value_of(&db, "new"), Some(b"y".to_vec()));

    let ch = ok(&db, "check", vec![s("new")]);
    assert_eq!(field(&ch, "vsiz"), Some(&Value::from(1u64)));
    assert_eq!(err(&db, "check", vec![s("absent")]), code::NO_RECORD);

    assert_eq!(err(&db, "get", vec![s("absent")]), code::NO_RECORD);
    ok(&db, "remove", vec![s("new")]);
    assert_eq!(err(&db, "remove", vec![s("new")]), code::NO_RECORD);
    assert_eq!(err(&db, "get", vec![s("new")]), code::NO_RECORD);

    // Bad parameters: 36.
    assert_eq!(
        err(&db, "set", vec![s("only-key")]),
        code::INVALID_PARAMETERS
    );
    assert_eq!(
        err(&db, "get", vec![Value::from(1)]),
        code::INVALID_PARAMETERS
    );
    assert_eq!(err(&db, "get", vec![]), code::INVALID_PARAMETERS);
}

#[test]
fn expiry() {
    let db = mem();
    ok(
        &db,
        "set",
        vec![s("t"), s("v"), opts(vec![("xt", Value::from(100))])],
    );
    let g = ok(&db, "get", vec![s("t")]);
    let xt = field(&g, "xt").and_then(Value::as_u64).unwrap();
    let now = memstored_engine::now_secs();
    assert!(xt >= now + 99 && xt <= now + 101, "{xt} vs {now}");
    let ch = ok(&db, "check", vec![s("t")]);
    assert_eq!(field(&ch, "xt").and_then(Value::as_u64), Some(xt));
    // Negative = already expired.
    ok(
        &db,
        "set",
        vec![s("gone"), s("v"), opts(vec![("xt", Value::from(-1))])],
    );
    assert_eq!(err(&db, "get", vec![s("gone")]), code::NO_RECORD);
    // xt as text, as Kyoto Tycoon clients send it.
    ok(
        &db,
        "set",
        vec![s("t2"), s("v"), opts(vec![("xt", s("50"))])],
    );
    assert!(field(&ok(&db, "get", vec![s("t2")]), "xt").is_some());
    assert_eq!(
        err(
            &db,
            "set",
            vec![s("t3"), s("v"), opts(vec![("xt", s("soon"))])]
        ),
        code::INVALID_PARAMETERS
    );
}

#[test]
fn append_and_seize() {
    let db = mem();
    ok(&db, "append", vec![s("a"), s("x")]);
    ok(&db, "append", vec![s("a"), s("y")]);
    assert_eq!(value_of(&db, "a"), Some(b"xy".to_vec()));
    ok(
        &db,
        "append",
        vec![s("a"), s("z"), opts(vec![("xt", Value::from(100))])],
    );
    assert!(field(&ok(&db, "get", vec![s("a")]), "xt").is_some());

    let v = ok(&db, "seize", vec![s("a")]);
    assert_eq!(field(&v, "value"), Some(&b(b"xyz")));
    assert!(field(&v, "xt").is_some());
    assert_eq!(value_of(&db, "a"), None);
    assert_eq!(err(&db, "seize", vec![s("a")]), code::NO_RECORD);
}

#[test]
fn cas() {
    let db = mem();
    // oval absent = expect no record.
    ok(&db, "cas", vec![s("k"), opts(vec![("nval", s("1"))])]);
    assert_eq!(value_of(&db, "k"), Some(b"1".to_vec()));
    assert_eq!(
        err(&db, "cas", vec![s("k"), opts(vec![("nval", s("2"))])]),
        code::CAS_FAILED
    );
    assert_eq!(
        err(
            &db,
            "cas",
            vec![s("k"), opts(vec![("oval", s("9")), ("nval", s("2"))])]
        ),
        code::CAS_FAILED
    );
    assert_eq!(value_of(&db, "k"), Some(b"1".to_vec()));
    ok(
        &db,
        "cas",
        vec![
            s("k"),
            opts(vec![
                ("oval", s("1")),
                ("nval", b(b"2")),
                ("xt", Value::from(60)),
            ]),
        ],
    );
    assert_eq!(value_of(&db, "k"), Some(b"2".to_vec()));
    assert!(field(&ok(&db, "get", vec![s("k")]), "xt").is_some());
    // nval absent = remove.
    ok(&db, "cas", vec![s("k"), opts(vec![("oval", s("2"))])]);
    assert_eq!(value_of(&db, "k"), None);
    // Positional oval / nval (nil = absent).
    ok(&db, "cas", vec![s("p"), Value::Nil, s("a")]);
    ok(&db, "cas", vec![s("p"), s("a"), s("b")]);
    assert_eq!(value_of(&db, "p"), Some(b"b".to_vec()));
    assert_eq!(
        err(&db, "cas", vec![s("p"), s("a"), s("c")]),
        code::CAS_FAILED
    );
}

#[test]
fn increment() {
    let db = mem();
    let n = |v: Value| field(&v, "num").cloned().unwrap();
    assert_eq!(
        n(ok(&db, "increment", vec![s("c"), Value::from(5)])),
        Value::from(5)
    );
    assert_eq!(
        n(ok(&db, "increment", vec![s("c"), s("-7")])),
        Value::from(-2)
    );
    assert_eq!(value_of(&db, "c"), Some(b"-2".to_vec()));
    // orig: a number is the start for an absent record.
    assert_eq!(
        n(ok(
            &db,
            "increment",
            vec![
                s("d"),
                Value::from(1),
                opts(vec![("orig", Value::from(10))])
            ]
        )),
        Value::from(11)
    );
    // orig "try": absent is 35.
    assert_eq!(
        err(
            &db,
            "increment",
            vec![s("e"), Value::from(1), opts(vec![("orig", s("try"))])]
        ),
        code::NO_RECORD
    );
    // orig "set": overwrite with num.
    assert_eq!(
        n(ok(
            &db,
            "increment",
            vec![s("d"), Value::from(3), opts(vec![("orig", s("set"))])]
        )),
        Value::from(3)
    );
    // A value that is not a number: 38.
    ok(&db, "set", vec![s("text"), s("abc")]);
    assert_eq!(
        err(&db, "increment", vec![s("text"), Value::from(1)]),
        code::NOT_COMPATIBLE
    );
    assert_eq!(
        err(&db, "increment_double", vec![s("text"), Value::from(1.0)]),
        code::NOT_COMPATIBLE
    );
    // Overflow: 41.
    ok(&db, "set", vec![s("big"), s(&i64::MAX.to_string())]);
    assert_eq!(
        err(&db, "increment", vec![s("big"), Value::from(1)]),
        code::LOGICAL
    );
    // Missing num: 36.
    assert_eq!(
        err(&db, "increment", vec![s("c")]),
        code::INVALID_PARAMETERS
    );
    // Shares memcached's decimal representation.
    db.set(b"mc", b"41", true).unwrap();
    assert_eq!(
        n(ok(&db, "increment", vec![s("mc"), Value::from(1)])),
        Value::from(42)
    );
    // xt.
    ok(
        &db,
        "increment",
        vec![s("x"), Value::from(1), opts(vec![("xt", Value::from(30))])],
    );
    assert!(field(&ok(&db, "get", vec![s("x")]), "xt").is_some());

    assert_eq!(
        n(ok(&db, "increment_double", vec![s("f"), Value::from(1.5)])),
        Value::F64(1.5)
    );
    assert_eq!(
        n(ok(&db, "increment_double", vec![s("f"), s("2.25")])),
        Value::F64(3.75)
    );
    assert_eq!(value_of(&db, "f"), Some(b"3.75".to_vec()));
}

fn records(n: usize) -> Value {
    Value::Map(
        (0..n)
            .map(|i| (s(&format!("{i:08}")), b(format!("v{i}").as_bytes())))
            .collect(),
    )
}

#[test]
fn bulk() {
    let db = mem();
    let r = ok(&db, "set_bulk", vec![records(10)]);
    assert_eq!(field(&r, "num"), Some(&Value::from(10u64)));
    assert_eq!(db.count(), 10);

    let keys = Value::Array(vec![s("00000001"), s("00000002"), s("nope")]);
    let g = ok(&db, "get_bulk", vec![keys.clone()]);
    let Value::Map(m) = &g else { panic!() };
    assert_eq!(m.len(), 2);
    assert_eq!(map_get(m, "00000001"), Some(&b(b"v1")));
    assert!(matches!(m[0].0, Value::Binary(_)));
    let g2 = ok(
        &db,
        "get_bulk",
        vec![keys.clone(), opts(vec![("atomic", Value::Boolean(true))])],
    );
    assert_eq!(g2, g);

    let r = ok(&db, "remove_bulk", vec![keys.clone()]);
    assert_eq!(field(&r, "num"), Some(&Value::from(2u64)));
    assert_eq!(db.count(), 8);

    // Atomic variants.
    let r = ok(
        &db,
        "set_bulk",
        vec![
            records(3),
            opts(vec![
                ("atomic", Value::Boolean(true)),
                ("xt", Value::from(100)),
            ]),
        ],
    );
    assert_eq!(field(&r, "num"), Some(&Value::from(3u64)));
    assert!(field(&ok(&db, "get", vec![s("00000001")]), "xt").is_some());
    let r = ok(
        &db,
        "remove_bulk",
        vec![keys, opts(vec![("atomic", s("true"))])],
    );
    assert_eq!(field(&r, "num"), Some(&Value::from(2u64)));
    assert_eq!(db.count(), 8);

    // Expiry on non-atomic bulk sets.
    ok(
        &db,
        "set_bulk",
        vec![records(1), opts(vec![("xt", Value::from(-1))])],
    );
    assert_eq!(err(&db, "get", vec![s("00000000")]), code::NO_RECORD);

    assert_eq!(err(&db, "set_bulk", vec![s("x")]), code::INVALID_PARAMETERS);
    assert_eq!(
        err(&db, "get_bulk", vec![Value::from(1)]),
        code::INVALID_PARAMETERS
    );
}

fn keys(v: &Value) -> Vec<String> {
    let Value::Array(a) = v else { panic!("{v:?}") };
    a.iter()
        .map(|k| {
            assert!(matches!(k, Value::Binary(_)));
            String::from_utf8(value_bytes(k).unwrap().to_vec()).unwrap()
        })
        .collect()
}

#[test]
fn searches() {
    for name in ["*", "+"] {
        let db = Arc::new(Db::open(name, true).unwrap());
        for k in ["apple", "apply", "ample", "banana", "band", "applesauce"] {
            db.set(k.as_bytes(), b"v", true).unwrap();
        }
        assert_eq!(
            keys(&ok(&db, "match_prefix", vec![s("app")])),
            ["apple", "applesauce", "apply"]
        );
        assert_eq!(
            keys(&ok(
                &db,
                "match_prefix",
                vec![s("app"), opts(vec![("max", Value::from(2))])]
            )),
            ["apple", "applesauce"]
        );
        assert_eq!(
            keys(&ok(&db, "match_regex", vec![s("^ban")])),
            ["banana", "band"]
        );
        assert_eq!(
            err(&db, "match_regex", vec![s("(")]),
            code::INVALID_PARAMETERS
        );
        assert_eq!(
            keys(&ok(&db, "match_similar", vec![s("apple")])),
            ["apple", "ample", "apply"]
        );
        assert_eq!(
            keys(&ok(
                &db,
                "match_similar",
                vec![s("apple"), opts(vec![("range", Value::from(0))])]
            )),
            ["apple"]
        );
        assert_eq!(
            keys(&ok(
                &db,
                "match_similar",
                vec![s("bänd"), opts(vec![("utf", Value::Boolean(true))])]
            )),
            ["band"]
        );
        assert_eq!(
            keys(&ok(&db, "search", vec![s("contain"), s("an")])),
            ["banana", "band"]
        );
        assert_eq!(
            keys(&ok(&db, "search", vec![s("end"), s("e"), Value::from(1)])),
            ["ample"]
        );
        assert_eq!(
            err(&db, "search", vec![s("nonsense"), s("x")]),
            code::INVALID_PARAMETERS
        );
        if db.is_ordered() {
            assert_eq!(
                keys(&ok(
                    &db,
                    "search",
                    vec![s("upper"), s("apply"), Value::from(2)]
                )),
                ["banana", "band"]
            );
        } else {
            assert_eq!(
                err(&db, "search", vec![s("upper"), s("apply")]),
                code::NOT_IMPLEMENTED
            );
        }
    }
}

#[test]
fn search_patterns_are_bounded_in_length_and_compiled_size() {
    let db = mem();
    db.set(b"k", b"v", true).unwrap();
    let long = "x".repeat(crate::slow::MAX_PATTERN + 1);
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
    let at_limit = "x".repeat(crate::slow::MAX_PATTERN);
    assert_eq!(
        ok(&db, "match_prefix", vec![s(&at_limit)]),
        Value::Array(vec![])
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
fn clear_count_vacuum_on_memory() {
    let db = mem();
    ok(&db, "set_bulk", vec![records(5)]);
    assert_eq!(ok(&db, "count", vec![]), Value::from(5u64));
    ok(
        &db,
        "set",
        vec![s("old"), s("v"), opts(vec![("xt", Value::from(-1))])],
    );
    assert_eq!(db.count(), 6);
    ok(&db, "vacuum", vec![]);
    assert_eq!(db.count(), 5);
    ok(&db, "vacuum", vec![opts(vec![("step", Value::from(10))])]);
    ok(&db, "synchronize", vec![]);
    ok(
        &db,
        "synchronize",
        vec![opts(vec![("hard", Value::Boolean(true))])],
    );
    // An in-memory database without a file has no backup.
    assert_eq!(
        err(&db, "synchronize", vec![opts(vec![("make_backup", s(""))])]),
        code::NOT_IMPLEMENTED
    );
    ok(&db, "rebuild", vec![]);
    ok(&db, "clear", vec![]);
    assert_eq!(ok(&db, "count", vec![]), Value::from(0u64));
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
    assert_eq!(field(&r, "num"), Some(&Value::from(1000u64)));

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
    assert_eq!(field(&st, "num_shards"), Some(&Value::from(10u64)));
    assert_eq!(field(&st, "engine"), Some(&s("tree")));
    assert_eq!(field(&st, "count"), Some(&Value::from(1000u64)));

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
    ok(&db, "remove_bulk", vec![Value::Array(vec![s("00000999")])]);
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
        vec![
            Value::Array(vec![s("k")]),
            opts(vec![("atomic", Value::Boolean(true))]),
        ],
    );
    assert_eq!(field(&g, "k"), Some(&b(b"v")));
}
