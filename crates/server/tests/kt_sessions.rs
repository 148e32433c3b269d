//! Issue 40's faults of the Kyoto Tycoon port's sessions: a request with
//! both Content-Length and Transfer-Encoding is refused and its body never
//! run (request smuggling, RFC 9112 §6.3); idle sessions are closed after
//! `--kt-timeout` (ktserver's `-tout`); and idle KT sessions, however many,
//! never lock clients out of the memcached port.

mod common;
use common::kt_http::{start_kt, Http};
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Reads until the server closes the connection; what it sent, and how long
/// that took. Panics past `deadline`.
fn read_to_close(s: &mut TcpStream, deadline: Duration) -> (Vec<u8>, Duration) {
    let start = Instant::now();
    s.set_read_timeout(Some(deadline)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (got, start.elapsed()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return (got, start.elapsed())
            }
            Err(e) => panic!(
                "no close within {deadline:?} ({e}); got {:?}",
                String::from_utf8_lossy(&got)
            ),
        }
        assert!(start.elapsed() < deadline, "no close within {deadline:?}");
    }
}

/// A PUT whose chunked body ends at once and carries a second request
/// after it; the `Content-Length` covers both, as a proxy in front would
/// read it.
fn smuggling_request(length_first: bool) -> Vec<u8> {
    let smuggled = "PUT /smuggled HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nS";
    let body = format!("0\r\n\r\n{smuggled}");
    let cl = format!("Content-Length: {}\r\n", body.len());
    let te = "Transfer-Encoding: chunked\r\n";
    let (a, b) = if length_first { (&*cl, te) } else { (te, &*cl) };
    format!("PUT /outer HTTP/1.1\r\nHost: x\r\n{a}{b}\r\n{body}").into_bytes()
}

#[test]
fn a_request_with_both_length_and_chunked_is_refused_and_its_body_never_runs() {
    let (server, port) = start_kt(&[]);
    for length_first in [true, false] {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(&smuggling_request(length_first)).unwrap();
        let (reply, _) = read_to_close(&mut s, Duration::from_secs(10));
        let reply = String::from_utf8_lossy(&reply);
        assert!(
            reply.starts_with("HTTP/1.1 400"),
            "length first {length_first}: {reply:?}"
        );
        // One answer, then the close: nothing after the refused request ran.
        assert_eq!(reply.matches("HTTP/1.1").count(), 1, "{reply:?}");
    }
    let mut h = Http::connect(port);
    for key in ["/outer", "/smuggled"] {
        assert_eq!(h.request("GET", key, &[], b"").status, 404, "{key}");
    }
    // A plain chunked request and a pipelined one still work.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(
        b"PUT /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nA\r\n0\r\n\r\n\
          PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nConnection: close\r\n\r\nB",
    )
    .unwrap();
    let (reply, _) = read_to_close(&mut s, Duration::from_secs(10));
    let reply = String::from_utf8_lossy(&reply);
    assert_eq!(reply.matches("HTTP/1.1 201").count(), 2, "{reply:?}");
    assert_eq!(h.request("GET", "/b", &[], b"").body, b"B");
    assert!(server.terminate().success());
}

#[test]
fn idle_sessions_are_closed_after_the_kt_timeout() {
    let (server, port) = start_kt(&["--kt-timeout", "1"]);
    // Never a byte.
    let mut silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // Idle after an HTTP request (keep-alive).
    let mut h = Http::connect(port);
    assert_eq!(h.request("PUT", "/k", &[], b"v").status, 201);
    // Idle halfway through a request.
    let mut partial = TcpStream::connect(("127.0.0.1", port)).unwrap();
    partial.write_all(b"GET /k HTTP/1.1\r\nHo").unwrap();
    // Idle after a binary request.
    let mut bin = Http::connect(port);
    assert_eq!(
        bin.binary(&common::kt_http::kt_set_bulk(b"b", b"1"), 5)[0],
        0xB8
    );
    for (what, s) in [
        ("silent", &mut silent),
        ("after HTTP", &mut h.w),
        ("partial", &mut partial),
        ("after binary", &mut bin.w),
    ] {
        let (_, took) = read_to_close(s, Duration::from_secs(15));
        assert!(
            took < Duration::from_secs(5),
            "{what}: closed after {took:?}"
        );
    }
    // A connection that keeps talking is not closed.
    let mut busy = Http::connect(port);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(2500) {
        assert_eq!(busy.request("GET", "/k", &[], b"").body, b"v");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(server.terminate().success());
}

#[test]
fn idle_kt_sessions_never_lock_out_the_memcached_port() {
    let (server, port) = start_kt(&["-c", "20"]);
    let mut t = Text::new(server.connect());
    let idle: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // Every one of them admitted or refused by now.
    let deadline = Instant::now() + Duration::from_secs(30);
    while t.stat("curr_connections") - 1 + t.stat("rejected_connections") < 40 {
        assert!(
            Instant::now() < deadline,
            "the KT connections were not all taken in"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The KT port has its own -c: 20 in, 20 refused.
    assert_eq!(t.stat("curr_connections"), 21);
    // New memcached clients are served.
    for i in 0..10 {
        let mut c = Text::new(server.connect());
        assert_eq!(c.cmd(&format!("set m{i} 0 0 1\r\nx\r\n")), "STORED");
    }
    drop(idle);
    assert!(server.terminate().success());
}
