//! Hostile clients: the server survives them, keeps serving everybody else
//! with normal latency, and its memory stays bounded.

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// A well-behaved client's set+get round trip must stay fast meanwhile.
fn assert_responsive(server: &Server, what: &str) {
    let mut t = Text::new(server.connect());
    let start = Instant::now();
    assert_eq!(t.cmd("set probe 0 0 2\r\nok\r\n"), "STORED", "{what}");
    assert_eq!(t.cmd("get probe\r\n"), "VALUE probe 0 2", "{what}");
    assert_eq!(t.line(), "ok");
    assert_eq!(t.line(), "END");
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(500),
        "{what}: a normal client waited {took:?}"
    );
}

#[test]
fn declared_4gib_body_with_nothing_behind_it_allocates_nothing() {
    let server = Server::start(&[]);
    let before = server.rss_kib();
    let mut conns = Vec::new();
    for op in [0x01u8, 0x00, 0x10, 0x42] {
        // SET / GET / STAT / unknown opcode, each claiming a 4 GiB body.
        let mut s = server.connect();
        let mut h = vec![0x80, op, 0, 4, 8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        h.extend_from_slice(&[0; 12]);
        s.write_all(&h).unwrap();
        s.write_all(b"\0\0\0\0\0\0\0\0key!").unwrap();
        conns.push(s);
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_responsive(&server, "4 GiB declared bodies");
    let grew = server.rss_kib().saturating_sub(before);
    assert!(grew < 64 * 1024, "server grew by {grew} KiB");
}

#[test]
fn long_keys_are_refused_and_control_characters_are_key_bytes_as_in_memcached() {
    let server = Server::start(&[]);
    let mut t = Text::new(server.connect());
    let long = "k".repeat(251);
    let reply = t.cmd(&format!("get {long}\r\n"));
    assert!(reply.starts_with("CLIENT_ERROR"), "{reply}");
    // Control characters belong to the key, as in memcached.
    assert_eq!(t.cmd("set bad\x01key 0 0 1\r\nx\r\n"), "STORED");
    assert_eq!(t.cmd("get bad\x01key\r\n"), "VALUE bad\x01key 0 1");
    assert_eq!(t.line(), "x");
    assert_eq!(t.line(), "END");
    assert!(
        reply.starts_with("CLIENT_ERROR") || reply == "ERROR",
        "{reply}"
    );
    // Binary: a 251-byte key is invalid arguments.
    let mut b = server.connect();
    let r = call(&mut b, GET, long.as_bytes(), &[], &[], 0);
    assert_eq!(r.status, 0x04);
    assert_responsive(&server, "long keys");
}

#[test]
fn invalid_msgpack_closes_only_that_connection() {
    let server = Server::start(&[]);
    let mut s = server.connect();
    // A fixarray header followed by a reserved byte (0xc1 is never valid).
    s.write_all(&[0x94, 0xc1, 0xc1, 0xc1, 0xc1]).unwrap();
    assert!(is_closed(&mut s));
    let mut s = server.connect();
    // Valid msgpack, wrong shape with a msgid: answered with [2, message]
    // (msgpack-rpc's argument error), connection open.
    s.write_all(&[0x94, 0x00, 0x07, 0xa4, b'p', b'i', b'n', b'g', 0x05])
        .unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    assert!(
        n > 4 && buf[..5] == [0x94, 0x01, 0x07, 0x92, 0x02],
        "{:?}",
        &buf[..n]
    );
    assert_responsive(&server, "invalid msgpack");
}

#[test]
fn half_closed_socket_still_gets_its_answers() {
    let server = Server::start(&[]);
    let mut s = server.connect();
    s.write_all(b"set h 0 0 1\r\nx\r\nget h\r\n").unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).unwrap();
    assert_eq!(all, "STORED\r\nVALUE h 0 1\r\nx\r\nEND\r\n");
}

#[test]
fn a_thousand_concurrent_connections() {
    let server = Server::start(&["-c", "1100"]);
    let mut conns: Vec<TcpStream> = (0..1000).map(|_| server.connect()).collect();
    for (i, s) in conns.iter_mut().enumerate() {
        s.write_all(format!("set c{i} 0 0 1\r\nx\r\n").as_bytes())
            .unwrap();
    }
    for s in conns.iter_mut() {
        let mut buf = [0u8; 8];
        s.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"STORED\r\n");
    }
    assert_responsive(&server, "1000 connections");
}

#[test]
fn a_client_that_never_reads_cannot_grow_the_server_without_bound() {
    let server = Server::start(&[]);
    let mut t = Text::new(server.connect());
    let big = "v".repeat(1 << 20);
    assert_eq!(
        t.cmd(&format!("set big 0 0 {}\r\n{big}\r\n", big.len())),
        "STORED"
    );
    let before = server.rss_kib();
    // 2000 gets of a 1 MiB value = 2 GiB of replies, never read.
    let mut greedy = server.connect();
    greedy
        .set_write_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let burst = "get big\r\n".repeat(100);
    let mut sent = 0;
    for _ in 0..20 {
        if greedy.write_all(burst.as_bytes()).is_err() {
            break; // the server stopped reading from us: that is the point
        }
        sent += 100;
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_responsive(&server, "a client that never reads");
    let grew = server.rss_kib().saturating_sub(before);
    assert!(
        grew < 64 * 1024,
        "server grew by {grew} KiB after {sent} unread gets"
    );
}

#[test]
fn slowloris_does_not_slow_anyone_else() {
    let server = Server::start(&[]);
    let mut slow = server.connect();
    for b in b"set slow 0 0 1\r\n".iter().take(8) {
        slow.write_all(&[*b]).unwrap();
        assert_responsive(&server, "slowloris");
        std::thread::sleep(Duration::from_millis(250));
    }
}
