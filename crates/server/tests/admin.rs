//! memcached's administrative commands against a started memstored:
//! `shutdown` behind `-A`, `stats detail` over text and binary, the 2048-byte
//! line rule. (Byte-for-byte agreement with memcached itself is checked by
//! tests/python/test_memcached_differential.py.)

mod common;
use common::{call, is_closed, read_resp, req, set_extras, Server, Text, STAT};
use std::io::Write;
use std::time::{Duration, Instant};

#[test]
fn shutdown_needs_enable_shutdown() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("shutdown\r\n"), "SERVER_ERROR: shutdown not enabled");
    assert_eq!(
        t.cmd("shutdown graceful\r\n"),
        "SERVER_ERROR: shutdown not enabled"
    );
    let settings = t.listing("stats settings\r\n");
    assert!(settings.contains(&"STAT shutdown_command no".to_string()));
    assert!(t.cmd("version\r\n").starts_with("VERSION"));
}

/// `shutdown` with `-A` stops the server as SIGTERM does: the store is
/// synchronized (a file store keeps what was set) and the process exits 0.
#[test]
fn enabled_shutdown_stops_the_server_and_keeps_the_data() {
    for how in ["shutdown\r\n", "shutdown graceful\r\n"] {
        let dir = tempfile::tempdir().unwrap();
        let store = format!("{}/s.tkh", dir.path().display());
        let srv = Server::start(&["-A", "-s", &store]);
        let mut t = Text::new(srv.connect());
        assert_eq!(t.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
        assert_eq!(
            t.cmd("shutdown bogus\r\n"),
            "CLIENT_ERROR invalid shutdown mode"
        );
        t.send(how.as_bytes());
        assert!(is_closed(&mut t.w), "{how}: the connection is closed");
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(st) = srv.child().as_mut().unwrap().try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < deadline, "{how}: still running");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{how}: {status}; {}", srv.diagnose());
        let again = Server::start(&["-s", &store]);
        let mut t = Text::new(again.connect());
        assert_eq!(t.cmd("get k\r\n"), "VALUE k 0 1");
    }
}

#[test]
fn stats_detail_over_text_and_binary() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("stats detail on\r\n"), "OK");
    assert_eq!(t.cmd("get a:1\r\n"), "END");
    let settings = t.listing("stats settings\r\n");
    assert!(settings.contains(&"STAT detail_enabled yes".to_string()));
    let mut b = srv.connect();
    assert_eq!(
        call(&mut b, 0x01, b"a:2", &set_extras(0, 0), b"v", 0).status,
        0
    );
    assert_eq!(call(&mut b, 0x00, b"a:2", &[], &[], 0).status, 0);
    let dump = call(&mut b, STAT, b"detail dump", &[], &[], 0);
    assert_eq!(dump.key, b"detailed");
    assert_eq!(dump.value, b"PREFIX a get 2 hit 1 set 1 del 0\r\nEND\r\n");
    assert_eq!(read_resp(&mut b).key, b"", "the terminator");
    let off = call(&mut b, STAT, b"detail off", &[], &[], 0);
    assert_eq!((off.status, off.key.len()), (0, 0));
    assert_eq!(call(&mut b, STAT, b"detail x", &[], &[], 0).status, 1);
    b.write_all(&req(0x00, b"a:3", &[], &[], 0, 0)).unwrap();
    assert_eq!(read_resp(&mut b).status, 1, "a miss, not counted now");
    let mut t = Text::new(srv.connect());
    assert_eq!(
        t.listing("stats detail dump\r\n"),
        ["PREFIX a get 2 hit 1 set 1 del 0"]
    );
    assert_eq!(t.cmd("stats reset\r\n"), "RESET");
    assert_eq!(t.cmd("stats detail dump\r\n"), "END");
}

/// memcached's rule: no newline after 2048 bytes closes the connection,
/// silently, unless the line is a `get`/`gets`.
#[test]
fn long_lines_without_newline() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    t.send(format!("incr{}", " ".repeat(2100)).as_bytes());
    assert!(is_closed(&mut t.w));
    let mut t = Text::new(srv.connect());
    let keys: Vec<String> = (0..1000).map(|i| format!("k{i}")).collect();
    t.send(format!("get {}", keys.join(" ")).as_bytes());
    t.w.flush().unwrap();
    assert_eq!(t.cmd(" k1\r\n"), "END");
}
