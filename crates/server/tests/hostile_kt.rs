//! Hostile clients on the Kyoto Tycoon port (`--kt-listen`): each attack
//! must leave the server alive, a sentinel record readable, a well-behaved
//! client's worst round trip under 100 ms, and the server's memory within
//! the connection budget and a stated slack (`common::hostile`).

mod common;
use common::hostile::*;
use common::kt_http::start_kt;
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
