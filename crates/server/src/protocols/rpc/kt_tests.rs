//! One test per kt-msgpack procedure, with the argument and result shapes of
//! its README and test/test-kt-msgpack.py, and each procedure's error codes:
//! the server-wide and single-record ones here, the key listings, bulk and
//! maintenance ones in `kt_bulk_tests.rs`.

use super::tests::{b, err, field, mem, ok, opts, s, server, value_of};
use super::*;
use memstored_engine::{now_secs, Db};
use std::sync::Arc;

/// `{num: "N", ...}`'s N.
pub(super) fn num(v: &Value) -> String {
    field(v, "num")
        .and_then(value_str)
        .unwrap_or_else(|| panic!("no num in {v:?}"))
        .to_string()
}

/// The `xt` of a `get` as a number (absent: `None`).
pub(super) fn xt_of(db: &Arc<Db>, key: &str) -> Option<i64> {
    let g = ok(db, "get", vec![s(key)]);
    field(&g, "xt").map(|x| value_str(x).expect("xt is a string").parse().unwrap())
}

pub(super) fn no_db() -> Value {
    opts(vec![("DB", s("xxxx.kct"))])
}

#[test]
fn ping() {
    assert_eq!(ok(&mem(), "ping", vec![]), Value::Nil);
}

#[test]
fn echo() {
    let db = mem();
    let m = opts(vec![("hoge", s("1")), ("foo", s("bar"))]);
    assert_eq!(ok(&db, "echo", vec![m.clone()]), m);
    assert_eq!(ok(&db, "echo", vec![opts(vec![])]), Value::Map(vec![]));
    assert_eq!(ok(&db, "echo", vec![]), Value::Map(vec![]));
    // map<string, string>: numbers are a type mismatch, msgpack-rpc's 2.
    let typed = opts(vec![("hoge", Value::from(1)), ("foo", Value::F64(0.111))]);
    assert_eq!(err(&db, "echo", vec![typed]), code::ARGUMENT);
}

#[test]
fn unknown_and_unimplemented_procedures() {
    let db = mem();
    assert_eq!(err(&db, "no_such_procedure", vec![]), code::NO_METHOD);
    for p in ["play_script", "tune_replication", "cur_jump", "cur_delete"] {
        assert_eq!(err(&db, p, vec![s("1")]), code::NOT_IMPLEMENTED, "{p}");
    }
}

#[test]
fn report() {
    let db = mem();
    let srv = server(&db);
    call(&srv, "set", &[s("a"), s("1")]).unwrap();
    call(&srv, "get", &[s("a")]).unwrap();
    call(&srv, "get", &[s("absent")]).unwrap_err();
    let r = call(&srv, "report", &[]).unwrap();
    let Value::Map(m) = &r else { panic!("{r:?}") };
    assert!(
        m.iter().all(|(_, v)| matches!(v, Value::String(_))),
        "{r:?}"
    );
    for key in [
        "cnt_get",
        "cnt_get_misses",
        "cnt_misc",
        "cnt_remove",
        "cnt_remove_misses",
        "cnt_script",
        "cnt_set",
        "cnt_set_misses",
        "conf_kc_features",
        "conf_kc_version",
        "conf_kt_features",
        "conf_kt_version",
        "conf_os_name",
        "db_0",
        "db_total_count",
        "db_total_size",
        "serv_conn_count",
        "serv_current_time",
        "serv_proc_id",
        "serv_running_term",
        "serv_task_count",
        "serv_thread_count",
        "sys_ru_stime",
        "sys_ru_utime",
    ] {
        assert!(field(&r, key).is_some(), "report lacks {key}: {r:?}");
    }
    assert_eq!(field(&r, "cnt_get"), Some(&s("2")));
    assert_eq!(field(&r, "cnt_get_misses"), Some(&s("1")));
    assert_eq!(field(&r, "cnt_set"), Some(&s("1")));
    assert_eq!(field(&r, "db_total_count"), Some(&s("1")));
    let pid = std::process::id().to_string();
    assert_eq!(field(&r, "serv_proc_id"), Some(&s(&pid)));
    let db0 = value_str(field(&r, "db_0").unwrap()).unwrap();
    assert!(db0.starts_with("count=1 size="), "{db0}");
}

#[test]
fn status() {
    let db = mem();
    ok(&db, "set", vec![s("a"), s("1")]);
    let st = ok(&db, "status", vec![]);
    assert_eq!(field(&st, "count"), Some(&s("1")));
    let size: u64 = value_str(field(&st, "size").unwrap())
        .unwrap()
        .parse()
        .unwrap();
    assert!(size > 0);
    let Value::Map(m) = &st else { panic!() };
    assert!(
        m.iter().all(|(_, v)| matches!(v, Value::String(_))),
        "{st:?}"
    );
    // DB by index, by name; 34 for another.
    ok(&db, "status", vec![opts(vec![("DB", s("0"))])]);
    let path = value_str(field(&st, "path").unwrap()).unwrap().to_string();
    ok(&db, "status", vec![opts(vec![("DB", s(&path))])]);
    assert_eq!(err(&db, "status", vec![no_db()]), code::NO_DATABASE);
    assert_eq!(
        err(&db, "status", vec![opts(vec![("DB", s("1"))])]),
        code::NO_DATABASE
    );
}

#[test]
fn add() {
    let db = mem();
    assert_eq!(ok(&db, "add", vec![s("k"), s("foo")]), Value::Nil);
    assert_eq!(err(&db, "add", vec![s("k"), s("foo")]), code::RECORD_EXISTS);
    assert_eq!(
        err(&db, "add", vec![s("bar"), s("1"), no_db()]),
        code::NO_DATABASE
    );
    ok(
        &db,
        "add",
        vec![s("x"), s("111"), opts(vec![("xt", s("100000"))])],
    );
    assert!(xt_of(&db, "x").is_some());
    assert_eq!(err(&db, "add", vec![]), code::ARGUMENT);
    assert_eq!(err(&db, "add", vec![s("only-key")]), code::ARGUMENT);
    assert_eq!(
        err(
            &db,
            "add",
            vec![s("k2"), s("v"), opts(vec![("xt", s("soon"))])]
        ),
        code::INVALID_PARAMETERS
    );
}

#[test]
fn set() {
    let db = mem();
    assert_eq!(ok(&db, "set", vec![s("set1"), s("set1")]), Value::Nil);
    assert_eq!(value_of(&db, "set1"), Some(b"set1".to_vec()));
    ok(
        &db,
        "set",
        vec![s("set1"), s("1"), opts(vec![("DB", s("0"))])],
    );
    assert_eq!(value_of(&db, "set1"), Some(b"1".to_vec()));
    assert_eq!(
        err(&db, "set", vec![s("bar"), s("1"), no_db()]),
        code::NO_DATABASE
    );
    assert_eq!(err(&db, "set", vec![]), code::ARGUMENT);
    assert_eq!(
        err(&db, "set", vec![s("k"), Value::from(7)]),
        code::ARGUMENT
    );
}

#[test]
fn xt_is_kyoto_tycoons() {
    let db = mem();
    let now = now_secs() as i64;
    // Positive: seconds from now; the reported xt is absolute.
    ok(
        &db,
        "set",
        vec![s("rel"), s("v"), opts(vec![("xt", s("100000"))])],
    );
    let xt = xt_of(&db, "rel").unwrap();
    assert!(
        (now + 100_000..=now + 100_002).contains(&xt),
        "{xt} vs {now}"
    );
    // Negative: the absolute value is the epoch time.
    let at = now + 5000;
    ok(
        &db,
        "set",
        vec![s("abs"), s("v"), opts(vec![("xt", s(&(-at).to_string()))])],
    );
    assert_eq!(xt_of(&db, "abs"), Some(at));
    // An epoch time in the past: gone, as in KT.
    ok(
        &db,
        "set",
        vec![s("past"), s("v"), opts(vec![("xt", Value::from(-1000))])],
    );
    assert_eq!(err(&db, "get", vec![s("past")]), code::NO_RECORD);
    // Absent or past KT's 2^40 - 1: no expiration.
    ok(&db, "set", vec![s("never"), s("v")]);
    assert_eq!(xt_of(&db, "never"), None);
    ok(
        &db,
        "set",
        vec![s("far"), s("v"), opts(vec![("xt", s("-1099511627776"))])],
    );
    assert_eq!(xt_of(&db, "far"), None);
    assert_eq!(xt_to_expiry(-at), at as u64 + 1, "alive through second xt");
}

#[test]
fn get() {
    let db = mem();
    ok(&db, "set", vec![s("get1"), s("get1")]);
    assert_eq!(
        ok(&db, "get", vec![s("get1")]),
        opts(vec![("value", s("get1"))])
    );
    ok(
        &db,
        "set",
        vec![s("get2"), s("get2"), opts(vec![("xt", s("100000"))])],
    );
    let g = ok(&db, "get", vec![s("get2")]);
    assert_eq!(field(&g, "value"), Some(&s("get2")));
    assert!(field(&g, "xt").is_some());
    assert_eq!(err(&db, "get", vec![s("xxxx")]), code::NO_RECORD);
    assert_eq!(
        ok(&db, "get", vec![s("get1"), opts(vec![("DB", s("0"))])]),
        opts(vec![("value", s("get1"))])
    );
    assert_eq!(err(&db, "get", vec![s("xxxx"), no_db()]), code::NO_DATABASE);
    assert_eq!(err(&db, "get", vec![]), code::ARGUMENT);
}

#[test]
fn replies_answer_in_the_type_the_request_used() {
    let db = mem();
    ok(&db, "set", vec![b(b"k"), b(b"v\xff")]);
    // Bin in: bin out.
    assert_eq!(
        field(&ok(&db, "get", vec![b(b"k")]), "value"),
        Some(&b(b"v\xff"))
    );
    // Str in: str out (over the wire the bytes as they are; here UTF-8 only).
    ok(&db, "set", vec![s("t"), s("text")]);
    assert_eq!(
        field(&ok(&db, "get", vec![s("t")]), "value"),
        Some(&s("text"))
    );
    let srv = server(&db);
    let r = call_reply(&srv, "get", &[s("k")]).unwrap();
    let mut wire = bytes::BytesMut::new();
    r.encode_copied(&mut wire);
    assert!(
        wire.ends_with(&[0xa2, b'v', 0xff]),
        "str head, raw bytes: {wire:?}"
    );
    // No string at all (Tkrzw's `list()`): bin; str and bin mixed: bin.
    assert!(kt::wants_bin(&[]));
    assert!(kt::wants_bin(&[Value::from(3)]));
    // An option's name is a str too.
    assert!(!kt::wants_bin(&[opts(vec![("items", Value::from(3))])]));
    assert!(kt::wants_bin(&[s("k"), opts(vec![("oval", b(b"x"))])]));
    assert!(!kt::wants_bin(&[
        s("k"),
        opts(vec![("xt", Value::from(3))])
    ]));
    // Errors: the bare code in kt-msgpack's dialect (no bin, or no string
    // at all), [code, message] to a request carrying bin.
    let e = call(&srv, "tune_replication", &[]).unwrap_err();
    assert_eq!(e.to_value(), Value::from(42));
    let e = call(&srv, "get", &[s("absent")]).unwrap_err();
    assert_eq!(e.to_value(), Value::from(35));
    let e = call(&srv, "get", &[b(b"absent")]).unwrap_err();
    assert_eq!(
        e.to_value(),
        Value::Array(vec![Value::from(35), s(&e.message)])
    );
}

#[test]
fn append() {
    let db = mem();
    assert_eq!(ok(&db, "append", vec![s("append1"), s("hoge")]), Value::Nil);
    ok(&db, "append", vec![s("append1"), s("hoge")]);
    assert_eq!(
        ok(&db, "get", vec![s("append1")]),
        opts(vec![("value", s("hogehoge"))])
    );
    assert_eq!(
        err(&db, "append", vec![s("a3"), s("hoge"), no_db()]),
        code::NO_DATABASE
    );
    ok(
        &db,
        "append",
        vec![s("xt_append"), s("1"), opts(vec![("xt", s("1000"))])],
    );
    assert!(xt_of(&db, "xt_append").is_some());
    // KT: the record takes the call's xt, none when absent.
    ok(&db, "append", vec![s("xt_append"), s("2")]);
    assert_eq!(xt_of(&db, "xt_append"), None);
    assert_eq!(err(&db, "append", vec![]), code::ARGUMENT);
}

#[test]
fn remove() {
    let db = mem();
    ok(&db, "set", vec![s("remove1"), s("hoge")]);
    assert_eq!(ok(&db, "remove", vec![s("remove1")]), Value::Nil);
    assert_eq!(err(&db, "get", vec![s("remove1")]), code::NO_RECORD);
    assert_eq!(err(&db, "remove", vec![s("remove2")]), code::NO_RECORD);
    assert_eq!(
        err(&db, "remove", vec![s("remove4"), no_db()]),
        code::NO_DATABASE
    );
    assert_eq!(err(&db, "remove", vec![]), code::ARGUMENT);
}

#[test]
fn seize() {
    let db = mem();
    ok(&db, "set", vec![s("seize1"), s("seize1")]);
    assert_eq!(
        ok(&db, "seize", vec![s("seize1")]),
        opts(vec![("value", s("seize1"))])
    );
    assert_eq!(err(&db, "seize", vec![s("seize1")]), code::NO_RECORD);
    ok(
        &db,
        "set",
        vec![s("seize2"), s("seize2"), opts(vec![("xt", s("100000"))])],
    );
    let r = ok(&db, "seize", vec![s("seize2")]);
    assert_eq!(field(&r, "value"), Some(&s("seize2")));
    assert!(field(&r, "xt").is_some());
    assert_eq!(
        err(&db, "seize", vec![s("xxxx"), no_db()]),
        code::NO_DATABASE
    );
    assert_eq!(err(&db, "seize", vec![]), code::ARGUMENT);
}

#[test]
fn clear() {
    let db = mem();
    ok(&db, "set", vec![s("clear1"), s("1")]);
    assert_eq!(ok(&db, "clear", vec![]), Value::Nil);
    assert_eq!(err(&db, "get", vec![s("clear1")]), code::NO_RECORD);
    ok(&db, "clear", vec![opts(vec![("DB", s("0"))])]);
    assert_eq!(err(&db, "clear", vec![no_db()]), code::NO_DATABASE);
}

#[test]
fn replace() {
    let db = mem();
    ok(&db, "set", vec![s("replace1"), s("1111")]);
    assert_eq!(
        ok(&db, "replace", vec![s("replace1"), s("2222")]),
        Value::Nil
    );
    assert_eq!(value_of(&db, "replace1"), Some(b"2222".to_vec()));
    assert_eq!(
        err(&db, "replace", vec![s("absent"), s("x")]),
        code::NO_RECORD
    );
    assert_eq!(
        err(&db, "replace", vec![s("r3"), s("x"), no_db()]),
        code::NO_DATABASE
    );
    ok(
        &db,
        "replace",
        vec![s("replace1"), s("bar"), opts(vec![("xt", s("10000"))])],
    );
    assert!(xt_of(&db, "replace1").is_some());
    assert_eq!(err(&db, "replace", vec![]), code::ARGUMENT);
}

#[test]
fn cas() {
    let db = mem();
    // No record, no oval, no nval: nothing to do.
    assert_eq!(ok(&db, "cas", vec![s("cas1")]), Value::Nil);
    assert_eq!(err(&db, "get", vec![s("cas1")]), code::NO_RECORD);
    ok(&db, "cas", vec![s("cas2"), opts(vec![("nval", s("1"))])]);
    assert_eq!(value_of(&db, "cas2"), Some(b"1".to_vec()));
    assert_eq!(err(&db, "cas", vec![s("cas2")]), code::CAS_FAILED);
    assert_eq!(
        err(&db, "cas", vec![s("cas2"), opts(vec![("oval", s("2"))])]),
        code::CAS_FAILED
    );
    ok(
        &db,
        "cas",
        vec![s("cas2"), opts(vec![("oval", s("1")), ("nval", s("3"))])],
    );
    assert_eq!(value_of(&db, "cas2"), Some(b"3".to_vec()));
    assert_eq!(err(&db, "cas", vec![s("cas4"), no_db()]), code::NO_DATABASE);
    let o = opts(vec![
        ("xt", s("10000")),
        ("oval", s("3")),
        ("nval", s("10")),
    ]);
    ok(&db, "cas", vec![s("cas2"), o]);
    assert!(xt_of(&db, "cas2").is_some());
    // oval without nval removes.
    ok(&db, "cas", vec![s("cas2"), opts(vec![("oval", s("10"))])]);
    assert_eq!(value_of(&db, "cas2"), None);
    assert_eq!(err(&db, "cas", vec![]), code::ARGUMENT);
}

#[test]
fn increment() {
    let db = mem();
    let inc =
        |k: &str, n: &str, o: Vec<(&str, Value)>| ok(&db, "increment", vec![s(k), s(n), opts(o)]);
    assert_eq!(inc("inc1", "1", vec![]), opts(vec![("num", s("1"))]));
    assert_eq!(
        inc("inc2", "10", vec![("orig", s("10"))]),
        opts(vec![("num", s("20"))])
    );
    assert_eq!(
        err(
            &db,
            "increment",
            vec![s("inc3"), s("0"), opts(vec![("orig", s("try"))])]
        ),
        code::NOT_COMPATIBLE
    );
    assert_eq!(
        inc("inc4", "1", vec![("orig", s("set"))]),
        opts(vec![("num", s("1"))])
    );
    assert_eq!(
        inc("inc4", "5", vec![("orig", s("set"))]),
        opts(vec![("num", s("5"))])
    );
    assert_eq!(
        inc("inc5", "-1", vec![("orig", s("1"))]),
        opts(vec![("num", s("0"))])
    );
    assert_eq!(inc("inc5", "-3", vec![]), opts(vec![("num", s("-3"))]));
    assert_eq!(
        err(&db, "increment", vec![s("inc6"), s("1"), no_db()]),
        code::NO_DATABASE
    );
    assert_eq!(
        inc("inc7", "11", vec![("xt", s("10000"))]),
        opts(vec![("num", s("11"))])
    );
    assert!(xt_of(&db, "inc7").is_some());
    ok(&db, "set", vec![s("text"), s("abc")]);
    assert_eq!(
        err(&db, "increment", vec![s("text"), s("1")]),
        code::NOT_COMPATIBLE
    );
    assert_eq!(err(&db, "increment", vec![s("k")]), code::ARGUMENT);
    assert_eq!(
        err(&db, "increment", vec![s("k"), s("x")]),
        code::INVALID_PARAMETERS
    );
}

#[test]
fn increment_double() {
    let db = mem();
    let inc = |k: &str, n: &str, o: Vec<(&str, Value)>| {
        num(&ok(&db, "increment_double", vec![s(k), s(n), opts(o)]))
    };
    assert_eq!(inc("incd1", "1.1", vec![]), "1.100000");
    assert_eq!(inc("incd2", "10.0", vec![("orig", s("10.0"))]), "20.000000");
    assert_eq!(
        err(
            &db,
            "increment_double",
            vec![s("incd3"), s("0"), opts(vec![("orig", s("try"))])]
        ),
        code::NOT_COMPATIBLE
    );
    assert_eq!(inc("incd4", "0.1", vec![("orig", s("set"))]), "0.100000");
    assert_eq!(inc("incd5", "-1.0", vec![("orig", s("1.0"))]), "0.000000");
    assert_eq!(
        err(&db, "increment_double", vec![s("incd6"), s("1.0"), no_db()]),
        code::NO_DATABASE
    );
    assert_eq!(inc("incd7", "11.01", vec![("xt", s("10000"))]), "11.010000");
    assert!(xt_of(&db, "incd7").is_some());
    ok(&db, "set", vec![s("text"), s("abc")]);
    assert_eq!(
        err(&db, "increment_double", vec![s("text"), s("1.0")]),
        code::NOT_COMPATIBLE
    );
}
