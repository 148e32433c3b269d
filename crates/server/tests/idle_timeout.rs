//! memcached's `-o idle_timeout=N` (its t/idle-timeout.t; issue 45): a TCP
//! connection waiting for a request more than N seconds is closed and
//! counted in `idle_kicks`; one that keeps asking, or is inside a request
//! (a data block still to come), is not.

mod common;
use common::{Server, Text};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn stat(t: &mut Text, group: &str, name: &str) -> Option<String> {
    let prefix = format!("STAT {name} ");
    t.listing(&format!("stats{group}\r\n"))
        .iter()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}

#[test]
fn idle_connections_are_closed_and_counted() {
    let srv = Server::start(&["-o", "idle_timeout=1"]);
    let mut busy = Text::new(srv.connect());
    assert_eq!(
        stat(&mut busy, " settings", "idle_timeout").as_deref(),
        Some("1")
    );
    assert_eq!(stat(&mut busy, "", "idle_kicks").as_deref(), Some("0"));
    let mut idle = srv.connect();
    let mut inside = srv.connect();
    inside.write_all(b"set k 0 0 2\r\n").unwrap();
    // The idle one is closed (end of input) within a few passes; the busy
    // one asks all along.
    idle.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        assert!(stat(&mut busy, "", "pid").is_some());
        match idle.read(&mut [0u8; 16]) {
            Ok(0) => break,
            Ok(n) => panic!("{n} bytes from an idle connection"),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            // A reset is a close too.
            Err(_) => break,
        }
        assert!(Instant::now() < deadline, "the idle connection stayed open");
    }
    assert_eq!(stat(&mut busy, "", "idle_kicks").as_deref(), Some("1"));
    // Inside a request for as long: still served.
    let mut inside = Text::new(inside);
    inside.send(b"ok\r\n");
    assert_eq!(inside.line(), "STORED");
    // Without the option, memcached lists no idle_kicks.
    let plain = Server::start(&[]);
    let mut t = Text::new(plain.connect());
    assert_eq!(stat(&mut t, "", "idle_kicks"), None);
    assert_eq!(
        stat(&mut t, " settings", "idle_timeout").as_deref(),
        Some("0")
    );
}
