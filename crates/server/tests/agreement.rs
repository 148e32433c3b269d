//! The same operation sent over text, meta, binary and MessagePack-RPC gets
//! the same answer (as memcached 1.6 words it for its protocols). Each test
//! is a drift the per-protocol handlers once had (issue 11); the command
//! layer now decides every one of these once.

mod common;
mod inproc;

use common::{arith_extras, call, set_extras, Text, APPEND, FLUSH, GAT, GET, INCR, SET};
use inproc::{bin, rpc, InProc};
use memstored_engine::Db;
use rmpv::Value;
use std::collections::HashSet;

const TOO_LARGE: &str = "SERVER_ERROR object too large for cache";
const STATUS_TOO_LARGE: u16 = 0x03;
const STATUS_NOT_STORED: u16 = 0x05;
const STATUS_NON_NUMERIC: u16 = 0x06;

#[test]
fn a_record_too_large_for_the_cache_is_too_large_everywhere() {
    // 1 MiB of cache, 64 MiB item limit: a 2 MiB value passes -I but cannot fit.
    let s = InProc::start(Db::open("*#capsiz=1m", true).unwrap(), |_| {});
    let len = 2 << 20;
    let mut t = Text::new(s.connect());
    t.send(format!("set big 0 0 {len}\r\n").as_bytes());
    t.send(&vec![b'x'; len]);
    assert_eq!(t.cmd("\r\n"), TOO_LARGE, "text");
    t.send(format!("ms big {len}\r\n").as_bytes());
    t.send(&vec![b'x'; len]);
    assert_eq!(t.cmd("\r\n"), TOO_LARGE, "meta");
    let mut b = s.connect();
    let r = call(&mut b, SET, b"big", &set_extras(0, 0), &vec![b'x'; len], 0);
    assert_eq!(r.status, STATUS_TOO_LARGE, "binary: {r:?}");
    let mut p = s.connect();
    let e = rpc(&mut p, "set", vec![bin(b"big"), bin(&vec![b'x'; len])]);
    assert_eq!(e, Err(41), "rpc");
    assert_eq!(s.stat("cas_badval"), 0, "not a CAS mismatch");
    assert_eq!(s.stat("cmd_set"), 4, "every protocol counts its set");
    assert_eq!(s.stat("store_too_large"), 4, "and its refusal");
}

#[test]
fn an_append_cannot_grow_a_value_past_the_item_limit() {
    let s = InProc::start(Db::open("*", true).unwrap(), |c| c.max_item_size = 1 << 20);
    let half = 600 << 10;
    let mut t = Text::new(s.connect());
    t.send(format!("set k 0 0 {half}\r\n").as_bytes());
    t.send(&vec![b'a'; half]);
    assert_eq!(t.cmd("\r\n"), "STORED");
    t.send(format!("append k 0 0 {half}\r\n").as_bytes());
    t.send(&vec![b'b'; half]);
    assert_eq!(t.cmd("\r\n"), TOO_LARGE, "text append");
    t.send(format!("ms k {half} MA\r\n").as_bytes());
    t.send(&vec![b'b'; half]);
    assert_eq!(t.cmd("\r\n"), TOO_LARGE, "meta append");
    let mut b = s.connect();
    let r = call(&mut b, APPEND, b"k", &[], &vec![b'b'; half], 0);
    assert_eq!(r.status, STATUS_TOO_LARGE, "binary append");
    let mut p = s.connect();
    let e = rpc(&mut p, "append", vec![bin(b"k"), bin(&vec![b'b'; half])]);
    assert_eq!(e, Err(41), "rpc append");
    let got = rpc(&mut p, "get", vec![bin(b"k")]).unwrap();
    let value = got
        .as_map()
        .unwrap()
        .iter()
        .find(|(k, _)| k.as_str() == Some("value"));
    let len = value.and_then(|(_, v)| v.as_slice()).map(<[u8]>::len);
    assert_eq!(len, Some(half), "the value is unchanged");
    let e = rpc(&mut p, "set", vec![bin(b"k2"), bin(&vec![b'c'; 2 * half])]);
    assert_eq!(e, Err(41), "rpc set over the item limit");
    assert_eq!(s.stat("store_too_large"), 5, "four appends and a set");
}

/// A store holding `k`, reopened read-only.
fn read_only_server(dir: &tempfile::TempDir) -> InProc {
    let name = format!("{}/ro.tkh", dir.path().display());
    {
        let db = Db::open(&name, true).unwrap();
        db.set(b"k", b"v", true).unwrap();
        db.close().unwrap();
    }
    InProc::start(Db::open(&name, false).unwrap(), |_| {})
}

#[test]
fn get_and_touch_on_a_read_only_server_is_refused_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let s = read_only_server(&dir);
    let mut t = Text::new(s.connect());
    assert_eq!(t.cmd("gat 10 k\r\n"), "SERVER_ERROR read only", "text");
    assert_eq!(t.cmd("mg k T10 v\r\n"), "SERVER_ERROR read only", "meta");
    let mut b = s.connect();
    let r = call(&mut b, GAT, b"k", &10u32.to_be_bytes(), &[], 0);
    assert_eq!(r.status, STATUS_NOT_STORED, "binary");
    assert!(String::from_utf8_lossy(&r.value).contains("read-only"));
    assert_eq!(s.stat("touch_misses"), 0, "a refusal is not a miss");
    // Reads still work.
    assert_eq!(t.cmd("get k\r\n"), "VALUE k 0 1");
}

#[test]
fn a_delayed_flush_on_a_read_only_server_is_refused_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let s = read_only_server(&dir);
    let mut t = Text::new(s.connect());
    assert_eq!(t.cmd("flush_all 2\r\n"), "SERVER_ERROR read only", "text");
    let mut b = s.connect();
    let r = call(&mut b, FLUSH, b"", &2u32.to_be_bytes(), &[], 0);
    assert_eq!(r.status, STATUS_NOT_STORED, "binary");
    let mut p = s.connect();
    assert_eq!(rpc(&mut p, "clear", vec![]), Err(41), "rpc");
    assert_eq!(t.cmd("get k\r\n"), "VALUE k 0 1", "nothing was flushed");
}

/// `-F` (memcached's `--disable-flush-all`) also refuses RPC `clear`,
/// which is `flush_all` under another name (the text and binary replies
/// are compared with memcached's in test_memcached_differential.py).
#[test]
fn a_flush_on_a_server_started_with_dash_f_is_refused_everywhere() {
    let s = InProc::start(Db::open("*", true).unwrap(), |c| c.flush_enabled = false);
    let mut t = Text::new(s.connect());
    assert_eq!(t.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
    assert_eq!(
        t.cmd("flush_all\r\n"),
        "CLIENT_ERROR flush_all not allowed",
        "text"
    );
    let mut b = s.connect();
    let r = call(&mut b, FLUSH, b"", &[], &[], 0);
    assert_eq!(r.status, 0x20, "binary: memcached's Auth failure");
    let mut p = s.connect();
    assert_eq!(rpc(&mut p, "clear", vec![]), Err(41), "rpc");
    assert_eq!(t.cmd("get k\r\n"), "VALUE k 0 1", "nothing was flushed");
    assert_eq!(
        s.stat("cmd_flush"),
        2,
        "text and rpc count, binary does not"
    );
}

#[test]
fn an_expired_record_is_an_expired_miss_on_every_protocol() {
    let s = InProc::start(Db::open("*", true).unwrap(), |_| {});
    let mut t = Text::new(s.connect());
    assert_eq!(t.cmd("set k 0 -1 1\r\nv\r\n"), "STORED");
    assert_eq!(t.cmd("get k\r\n"), "END", "text");
    assert_eq!(t.cmd("mg k v\r\n"), "EN", "meta");
    let mut b = s.connect();
    assert_eq!(call(&mut b, GET, b"k", &[], &[], 0).status, 0x01, "binary");
    let mut p = s.connect();
    assert_eq!(rpc(&mut p, "get", vec![bin(b"k")]), Err(35), "rpc");
    assert_eq!(s.stat("get_expired"), 4);
    assert_eq!(s.stat("get_misses"), 4);
    assert_eq!(s.stat("cmd_get"), 4);
}

#[test]
fn a_non_numeric_value_is_refused_by_every_increment() {
    let s = InProc::start(Db::open("*", true).unwrap(), |_| {});
    let mut t = Text::new(s.connect());
    assert_eq!(t.cmd("set k 0 0 3\r\nabc\r\n"), "STORED");
    let non_numeric = "CLIENT_ERROR cannot increment or decrement non-numeric value";
    assert_eq!(t.cmd("incr k 1\r\n"), non_numeric, "text");
    assert_eq!(t.cmd("ma k\r\n"), non_numeric, "meta");
    let mut b = s.connect();
    let r = call(&mut b, INCR, b"k", &arith_extras(1, 0, 0), &[], 0);
    assert_eq!(r.status, STATUS_NON_NUMERIC, "binary");
    let mut p = s.connect();
    assert_eq!(
        rpc(&mut p, "increment", vec![bin(b"k"), Value::from(1)]),
        Err(38)
    );
    let big = i64::MAX.to_string();
    assert_eq!(
        rpc(&mut p, "set", vec![bin(b"n"), bin(big.as_bytes())]),
        Ok(Value::Nil)
    );
    assert_eq!(
        rpc(&mut p, "increment", vec![bin(b"n"), Value::from(1)]),
        Err(41),
        "an overflow is a logical error, whatever the path"
    );
}

#[test]
fn meta_arithmetic_with_a_ttl_is_one_atomic_step() {
    let s = InProc::start(Db::open("*", true).unwrap(), |_| {});
    let threads = 4;
    let per = 200;
    let replies: Vec<Vec<(u64, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let mut t = Text::new(s.connect());
                scope.spawn(move || {
                    (0..per)
                        .map(|_| {
                            let head = t.cmd("ma n N100 T100 c v\r\n");
                            let cas = head
                                .split(' ')
                                .find_map(|f| f.strip_prefix('c'))
                                .and_then(|c| c.parse().ok())
                                .unwrap_or_else(|| panic!("no CAS in {head:?}"));
                            let value = t.line().parse().unwrap();
                            (value, cas)
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: Vec<(u64, u64)> = replies.into_iter().flatten().collect();
    let values: HashSet<u64> = all.iter().map(|(v, _)| *v).collect();
    let cases: HashSet<u64> = all.iter().map(|(_, c)| *c).collect();
    assert_eq!(
        values.len(),
        threads * per,
        "every increment has its own value"
    );
    assert_eq!(
        cases.len(),
        threads * per,
        "every reply carries its own version's CAS"
    );
    let mut t = Text::new(s.connect());
    let head = t.cmd("mg n c v\r\n");
    let last = all.iter().max().unwrap();
    assert_eq!(head, format!("VA {} c{}", last.0.to_string().len(), last.1));
}

#[test]
fn an_append_with_a_cas_to_an_absent_key_is_not_stored() {
    // memcached: only a set with a CAS (text `cas`, binary SET with CAS) is
    // NOT_FOUND for an absent key; append/prepend are NOT_STORED.
    let s = InProc::start(Db::open("*", true).unwrap(), |_| {});
    let mut b = s.connect();
    let r = call(&mut b, APPEND, b"absent", &[], b"x", 42);
    assert_eq!(r.status, STATUS_NOT_STORED, "binary append with CAS");
    let r = call(&mut b, SET, b"absent", &set_extras(0, 0), b"x", 42);
    assert_eq!(r.status, 0x01, "binary set with CAS: not found");
    let mut t = Text::new(s.connect());
    assert_eq!(
        t.cmd("cas absent 0 0 1 42\r\nx\r\n"),
        "NOT_FOUND",
        "text cas"
    );
    assert_eq!(s.stat("cas_misses"), 2);
}

#[test]
fn kt_xt_and_memcached_exptime_name_the_same_moment() {
    // KT's xt is the last second a record is alive; memcached's exptime the
    // first second it is gone.
    let s = InProc::start(Db::open("*", true).unwrap(), |_| {});
    let now = memstored_engine::now_secs();
    let at = now + 5000;
    let mut p = s.connect();
    let xt = Value::Map(vec![(Value::from("xt"), Value::from(format!("-{at}")))]);
    assert_eq!(
        rpc(&mut p, "set", vec![bin(b"k"), bin(b"v"), xt]),
        Ok(Value::Nil)
    );
    let mut t = Text::new(s.connect());
    let head = t.cmd("mg k t\r\n");
    let ttl: u64 = head
        .strip_prefix("HD t")
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{head:?}"));
    let left = at + 1 - memstored_engine::now_secs();
    assert!(
        (left.saturating_sub(1)..=left).contains(&ttl),
        "{ttl} vs {left}"
    );

    assert_eq!(t.cmd(&format!("set m 0 {at} 1\r\nx\r\n")), "STORED");
    let got = rpc(&mut p, "get", vec![bin(b"m")]).unwrap();
    let Value::Map(m) = got else {
        panic!("{got:?}")
    };
    let xt = m
        .iter()
        .find(|(k, _)| k.as_str() == Some("xt"))
        .map(|(_, v)| v);
    assert_eq!(xt, Some(&Value::from((at - 1).to_string())), "{m:?}");
}
