//! Hostile clients against access rules (issue 12, items 5 and 6): clients
//! that skip authentication, on every protocol, and every write path thrown
//! at a read-only server. Each attack must change nothing (a sentinel record
//! reads back as it was), leave the server alive, keep a well-behaved
//! client's worst round trip under 100 ms, and grow the server by less than
//! a stated bound.

mod common;
use common::*;
use memstored_protocol::rpc::Value;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

const GROWTH_BOUND_KIB: u64 = 32 << 10;

/// 50 binary GETs of the sentinel on `s`, each under 100 ms, each `value`.
fn assert_sentinel_and_latency(s: &mut TcpStream, value: &[u8], what: &str) {
    let mut worst = Duration::ZERO;
    for _ in 0..50 {
        let start = Instant::now();
        let r = call(s, GET, b"sentinel", &[], &[], 0);
        worst = worst.max(start.elapsed());
        assert_eq!((r.status, r.value.as_slice()), (0, value), "{what}");
    }
    assert!(
        worst < Duration::from_millis(100),
        "{what}: a well-behaved client waited {worst:?}"
    );
}

fn rpc_calls(s: &mut TcpStream, calls: &[(&str, Vec<Value>)]) -> Vec<Result<Value, Value>> {
    let mut out = Vec::new();
    for (i, (method, params)) in calls.iter().enumerate() {
        s.write_all(&rpc_request(i as u32, method, params)).unwrap();
        out.push(rpc_response(s));
    }
    out
}

fn s(v: &str) -> Value {
    Value::from(v)
}

/// Every RPC procedure that writes, with plausible arguments.
fn rpc_writes() -> Vec<(&'static str, Vec<Value>)> {
    let map = |k: &str, v: &str| Value::Map(vec![(s(k), s(v))]);
    vec![
        ("set", vec![s("sentinel"), s("evil")]),
        ("add", vec![s("new"), s("evil")]),
        ("replace", vec![s("sentinel"), s("evil")]),
        ("append", vec![s("sentinel"), s("evil")]),
        ("remove", vec![s("sentinel")]),
        ("seize", vec![s("sentinel")]),
        ("cas", vec![s("sentinel"), s("alive"), s("evil")]),
        ("increment", vec![s("n"), Value::from(1)]),
        ("increment_double", vec![s("n"), Value::from(1.5)]),
        ("set_bulk", vec![map("_sentinel", "evil")]),
        ("remove_bulk", vec![map("_sentinel", "")]),
        ("clear", vec![]),
        (
            "compare_exchange_multi",
            vec![
                Value::Array(vec![]),
                Value::Array(vec![Value::Array(vec![s("sentinel"), Value::Nil])]),
            ],
        ),
    ]
}

#[test]
fn unauthenticated_clients_on_every_protocol_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let users = dir.path().join("users");
    std::fs::write(&users, "alice:secret\n").unwrap();
    let server = Server::start(&["--sasl-file", users.to_str().unwrap(), "-I", "1m"]);
    let mut good = server.connect();
    assert_eq!(
        call(&mut good, SASL_AUTH, b"PLAIN", &[], b"\0alice\0secret", 0).status,
        0
    );
    assert_eq!(
        call(&mut good, SET, b"sentinel", &set_extras(0, 0), b"alive", 0).status,
        0
    );
    let before = server.rss_kib();

    for round in 0..20u32 {
        // Binary: each of these is answered AUTH_ERROR and the connection closed.
        let mut oversized = req(SET, b"sentinel", &set_extras(0, 0), &[], round, 0);
        oversized[8..12].copy_from_slice(&(9 + (2 << 20) as u32).to_be_bytes());
        for packet in [
            req(SET, b"sentinel", &set_extras(0, 0), b"evil", round, 0),
            req(DELETE, b"sentinel", &[], &[], round, 0),
            req(FLUSH, b"", &[], &[], round, 0),
            req(APPEND, b"sentinel", &[], b"evil", round, 0),
            req(0x42, b"sentinel", &[], &[], round, 0),
            oversized,
            req(SASL_AUTH, b"PLAIN", &[], b"alice\0alice\0wrong", round, 0),
        ] {
            let mut c = server.connect();
            c.write_all(&packet).unwrap();
            let r = read_resp(&mut c);
            assert_ne!(
                r.status, 0,
                "binary {:#x} succeeded unauthenticated",
                packet[1]
            );
            if packet[1] != SASL_AUTH {
                assert!(is_closed(&mut c));
            }
        }
        // Text: refused at once, as memcached with SASL refuses it.
        let mut t = server.connect();
        let _ = t.write_all(b"set sentinel 0 0 4\r\nevil\r\nflush_all\r\n");
        assert!(is_closed(&mut t));
        // RPC: every write answers an error before `auth`.
        let mut r = server.connect();
        for (i, reply) in rpc_calls(&mut r, &rpc_writes()).into_iter().enumerate() {
            assert!(reply.is_err(), "RPC write {i} succeeded unauthenticated");
        }
        // Password guesses: the connection is cut off after three.
        let wrong = vec![s("alice"), s("guess")];
        let guesses = vec![
            ("auth", wrong.clone()),
            ("auth", wrong.clone()),
            ("auth", wrong),
        ];
        assert!(rpc_calls(&mut r, &guesses).iter().all(Result::is_err));
        assert!(is_closed(&mut r));
    }
    assert_sentinel_and_latency(&mut good, b"alive", "unauthenticated clients");
    let grew = server.rss_kib().saturating_sub(before);
    assert!(grew < GROWTH_BOUND_KIB, "the server grew by {grew} KiB");
}

#[test]
fn every_write_path_on_a_read_only_server_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("{}/ro.tkh", dir.path().display());
    {
        let server = Server::start(&["-s", &store]);
        let mut t = Text::new(server.connect());
        assert_eq!(t.cmd("set sentinel 0 0 5\r\nalive\r\n"), "STORED");
        assert_eq!(t.cmd("set n 0 0 1\r\n1\r\n"), "STORED");
        assert!(server.terminate().success());
    }
    let server = Server::start(&["-s", &store, "--read-only"]);
    let before = server.rss_kib();
    let mut t = Text::new(server.connect());
    for cmd in [
        "set sentinel 0 0 4\r\nevil\r\n",
        "add new 0 0 4\r\nevil\r\n",
        "replace sentinel 0 0 4\r\nevil\r\n",
        "append sentinel 0 0 4\r\nevil\r\n",
        "prepend sentinel 0 0 4\r\nevil\r\n",
        "cas sentinel 0 0 4 1\r\nevil\r\n",
        "incr n 1\r\n",
        "decr n 1\r\n",
        "delete sentinel\r\n",
        "touch sentinel 10\r\n",
        "gat 10 sentinel\r\n",
        "flush_all\r\n",
        "flush_all 1\r\n",
        "ms sentinel 4\r\nevil\r\n",
        "ma n\r\n",
        "md sentinel\r\n",
        "mg sentinel T10 v\r\n",
    ] {
        let reply = t.cmd(cmd);
        assert!(
            reply.starts_with("SERVER_ERROR") || reply.starts_with("CLIENT_ERROR"),
            "text {cmd:?} -> {reply}"
        );
    }
    let mut b = server.connect();
    for (op, key, extras, value) in [
        (SET, &b"sentinel"[..], set_extras(0, 0), &b"evil"[..]),
        (ADD, b"new", set_extras(0, 0), b"evil"),
        (REPLACE, b"sentinel", set_extras(0, 0), b"evil"),
        (APPEND, b"sentinel", vec![], b"evil"),
        (PREPEND, b"sentinel", vec![], b"evil"),
        (DELETE, b"sentinel", vec![], b""),
        (INCR, b"n", arith_extras(1, 0, 0), b""),
        (DECR, b"n", arith_extras(1, 0, 0), b""),
        (TOUCH, b"sentinel", 10u32.to_be_bytes().to_vec(), b""),
        (GAT, b"sentinel", 10u32.to_be_bytes().to_vec(), b""),
        (FLUSH, b"", vec![], b""),
        (FLUSH, b"", 1u32.to_be_bytes().to_vec(), b""),
    ] {
        let r = call(&mut b, op, key, &extras, value, 0);
        assert_ne!(
            r.status, 0,
            "binary {op:#x} succeeded on a read-only server"
        );
    }
    let mut r = server.connect();
    let mut writes = rpc_writes();
    writes.push((
        "synchronize",
        vec![Value::Map(vec![(s("make_backup"), s(""))])],
    ));
    for (i, reply) in rpc_calls(&mut r, &writes).into_iter().enumerate() {
        assert!(
            reply.is_err(),
            "RPC write {i} succeeded on a read-only server"
        );
    }
    assert_sentinel_and_latency(&mut b, b"alive", "read-only writes");
    assert_eq!(t.cmd("get n\r\n"), "VALUE n 0 1");
    assert_eq!(t.line(), "1");
    assert_eq!(stat(&server, "curr_items"), 2);
    let grew = server.rss_kib().saturating_sub(before);
    assert!(grew < GROWTH_BOUND_KIB, "the server grew by {grew} KiB");
    let backups: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("backup"))
        .collect();
    assert!(backups.is_empty(), "a read-only server wrote {backups:?}");
}
