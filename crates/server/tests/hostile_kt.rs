//! Hostile clients on the Kyoto Tycoon port (`--kt-listen`): each attack
//! must leave the server alive, a sentinel record readable, a well-behaved
//! client's worst round trip under 100 ms, and the server's memory within
//! the connection budget and a stated slack (`common::hostile`).

mod common;
use common::hostile::*;
use common::kt_http::{kt_set_bulk, start_kt, Http};
use common::*;
use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

fn start_kt_with_sentinel(extra: &[&str]) -> (Server, u16) {
    let args = hostile_args(extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (server, port) = start_kt(&args);
    set_sentinel(&server);
    (server, port)
}

/// Chunked bodies declare no length: before they were charged as they
/// arrived, 60 connections each 2 MiB into a body they never finish held
/// 120 MiB with `conn_buffer_bytes` at 0.
#[test]
fn chunked_bodies_never_finished_stay_within_the_budget() {
    let (server, port) = start_kt_with_sentinel(&[]);
    let before = server.rss_kib();
    let chunk_len = 256 << 10;
    let mut chunk = format!("{chunk_len:x}\r\n").into_bytes();
    chunk.resize(chunk.len() + chunk_len, b'z');
    chunk.extend_from_slice(b"\r\n");
    let senders: Vec<_> = (0..60)
        .map(|i| {
            let chunk = chunk.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                s.set_write_timeout(Some(Duration::from_secs(3))).unwrap();
                let head = format!(
                    "PUT /chunked{i} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                );
                // The server may stop reading or refuse us: that is the defence.
                let _ = s.write_all(head.as_bytes());
                for _ in 0..8 {
                    if s.write_all(&chunk).is_err() {
                        break;
                    }
                }
                s
            })
        })
        .collect();
    let conns: Vec<TcpStream> = senders.into_iter().map(|t| t.join().unwrap()).collect();
    wait_until(&server, "the budget to refuse someone", |s| {
        stat(s, "conn_buffer_refused") > 0
    });
    assert!(stat(&server, "conn_buffer_bytes") <= (BUDGET_MIB + 8) << 20);
    assert_unharmed(&server, "chunked bodies");
    assert_grew_at_most(&server, before, BUDGET_MIB + SLACK_MIB, "chunked bodies");
    drop(conns);
}

/// A binary get_bulk request naming `key` `n` times.
fn get_bulk_of(key: &[u8], n: u32) -> Vec<u8> {
    let mut req = vec![0xBA, 0, 0, 0, 0];
    req.extend(n.to_be_bytes());
    for _ in 0..n {
        req.extend([0, 0]);
        req.extend((key.len() as u32).to_be_bytes());
        req.extend(key);
    }
    req
}

/// get_bulk answers a key as often as it is named, each time a reference
/// to the one value: 9 million mentions of a 1 MiB value once took 1.47 GB
/// and charged the memory budget 9 TB. A reply past the reply limit (64 MiB
/// here) is now refused, and a request of more records than
/// `MAX_BULK_RECORDS` is refused from its head and the connection closed.
#[test]
fn get_bulk_naming_one_large_value_over_and_over_is_refused() {
    use memstored_protocol::kt::MAX_BULK_RECORDS;
    use std::io::Read;
    let (server, port) = start_kt_with_sentinel(&[]);
    let mut h = Http::connect(port);
    let value = vec![b'v'; 1 << 20];
    assert_eq!(
        h.binary(&kt_set_bulk(b"big", &value), 5),
        [0xB8, 0, 0, 0, 1]
    );
    assert_eq!(h.binary(&get_bulk_of(b"big", 70), 1), [0xBF], "70 MiB");
    // The connection goes on, and a reply under the limit is whole.
    assert_eq!(h.binary(&get_bulk_of(b"big", 10), 5), [0xBA, 0, 0, 0, 10]);
    for _ in 0..10 {
        let head = h.binary(&[], 18);
        assert_eq!(head[2..10], [0, 0, 0, 3, 0, 0x10, 0, 0]);
        let mut kv = vec![0; 3 + (1 << 20)];
        h.r.read_exact(&mut kv).unwrap();
        assert_eq!(&kv[..3], b"big");
    }
    let mut req = vec![0xBA, 0, 0, 0, 0];
    req.extend((MAX_BULK_RECORDS as u32 + 1).to_be_bytes());
    assert_eq!(h.binary(&req, 1), [0xBF]);
    let mut rest = Vec::new();
    assert_eq!(h.r.read_to_end(&mut rest).unwrap(), 0, "closed");
    assert_unharmed(&server, "get_bulk");
}

/// A cursor's jump takes a snapshot of every key. Each was 32 bytes of
/// handle and an allocation a key, held uncharged for as long as its
/// client stayed: 30 connections of 4 cursors over 400,000 keys held 3.7 GB.
/// Snapshots are now packed and charged to the budget while they live.
#[test]
fn cursor_snapshots_held_by_idle_clients_stay_within_the_budget() {
    let (server, port) = start_kt_with_sentinel(&[]);
    let mut t = Text::new(server.connect());
    for i in 0..20_000 {
        t.send(format!("set cursor-key-{i:026} 0 0 1 noreply\r\nv\r\n").as_bytes());
    }
    assert_eq!(
        t.cmd(&format!("get cursor-key-{:026}\r\n", 19_999)),
        format!("VALUE cursor-key-{:026} 0 1", 19_999)
    );
    let before = server.rss_kib();
    let mut conns = Vec::new();
    let mut refused = 0;
    for _ in 0..40 {
        let mut h = Http::connect(port);
        for cur in [b"0", b"1", b"2", b"3"] {
            let r = h.rpc("cur_jump", &[(b"CUR", cur)], None);
            match r.status {
                200 => {}
                450 if r
                    .field("ERROR")
                    .is_some_and(|e| e.contains("out of memory")) =>
                {
                    refused += 1
                }
                _ => panic!("cur_jump: {r:?}"),
            }
        }
        conns.push(h);
    }
    assert!(refused > 0, "the budget refused no snapshot");
    assert!(stat(&server, "conn_buffer_bytes") <= (BUDGET_MIB + 8) << 20);
    assert_unharmed(&server, "cursor snapshots");
    assert_grew_at_most(&server, before, BUDGET_MIB + SLACK_MIB, "cursor snapshots");
    // Closing the connections gives their snapshots' charge back.
    drop(conns);
    wait_until(&server, "the snapshots' charge to be given back", |s| {
        stat(s, "conn_buffer_bytes") == 0
    });
}

/// Replies on the KT port were not charged: 80 clients each sending GETs of
/// a 1.5 MiB record of a file store (each reply a copy of its own) and
/// reading nothing held 120 MiB. A reply body is now charged until it is
/// sent, or answered 503 when the budget has no room.
#[test]
fn replies_to_clients_that_never_read_stay_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kt.tkh");
    let (server, port) = start_kt_with_sentinel(&["-s", path.to_str().unwrap()]);
    let value = vec![b'v'; 3 << 19];
    let mut h = Http::connect(port);
    assert_eq!(h.request("PUT", "/big", &[], &value).status, 201);
    let before = server.rss_kib();
    let gets = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n".repeat(10);
    let conns: Vec<TcpStream> = (0..80)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(gets.as_bytes()).unwrap();
            s
        })
        .collect();
    wait_until(&server, "the budget to refuse someone", |s| {
        stat(s, "conn_buffer_refused") > 0
    });
    assert!(stat(&server, "conn_buffer_bytes") <= (BUDGET_MIB + 8) << 20);
    assert_unharmed(&server, "KT replies not read");
    assert_grew_at_most(
        &server,
        before,
        BUDGET_MIB + SLACK_MIB,
        "KT replies not read",
    );
    // Every answer was delivered (or its connection closed), so every
    // charge comes back once the clients are gone.
    drop(conns);
    wait_until(&server, "every charge to be given back", |s| {
        stat(s, "conn_buffer_bytes") == 0
    });
}
