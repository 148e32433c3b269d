//! Text protocol against the real server: commands, pipelining, error lines.

mod common;
use common::*;
use std::io::Write;

#[test]
fn storage_and_retrieval() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("set a 5 0 3\r\nabc\r\n"), "STORED");
    assert_eq!(t.cmd("add a 0 0 1\r\nx\r\n"), "NOT_STORED");
    assert_eq!(t.cmd("replace zz 0 0 1\r\nx\r\n"), "NOT_STORED");
    assert_eq!(t.cmd("append a 0 0 2\r\nde\r\n"), "STORED");
    assert_eq!(t.cmd("prepend a 0 0 1\r\n_\r\n"), "STORED");
    assert_eq!(t.cmd("append zz 0 0 1\r\nx\r\n"), "NOT_STORED");
    assert_eq!(t.cmd("set b 0 0 1\r\nB\r\n"), "STORED");
    assert_eq!(t.cmd("get a b missing\r\n"), "VALUE a 5 6");
    assert_eq!(t.line(), "_abcde");
    assert_eq!(t.line(), "VALUE b 0 1");
    assert_eq!(t.line(), "B");
    assert_eq!(t.line(), "END");
    let l = t.cmd("gets a\r\n");
    let cas: u64 = l.rsplit(' ').next().unwrap().parse().unwrap();
    assert_eq!(t.line(), "_abcde");
    assert_eq!(t.line(), "END");
    assert_eq!(
        t.cmd(&format!("cas a 1 0 1 {}\r\nX\r\n", cas + 1)),
        "EXISTS"
    );
    assert_eq!(t.cmd(&format!("cas a 1 0 1 {cas}\r\nX\r\n")), "STORED");
    assert_eq!(t.cmd("cas zz 1 0 1 5\r\nX\r\n"), "NOT_FOUND");
    assert_eq!(t.cmd("get zz\r\n"), "END");
}

#[test]
fn delete_incr_touch_gat_flush() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("set n 0 0 2\r\n10\r\n"), "STORED");
    assert_eq!(t.cmd("incr n 5\r\n"), "15");
    assert_eq!(t.cmd("decr n 100\r\n"), "0");
    assert_eq!(t.cmd("incr zz 1\r\n"), "NOT_FOUND");
    assert_eq!(t.cmd("set s 0 0 1\r\nx\r\n"), "STORED");
    assert_eq!(
        t.cmd("incr s 1\r\n"),
        "CLIENT_ERROR cannot increment or decrement non-numeric value"
    );
    assert_eq!(
        t.cmd("incr n abc\r\n"),
        "CLIENT_ERROR invalid numeric delta argument"
    );
    assert_eq!(t.cmd("touch s 100\r\n"), "TOUCHED");
    assert_eq!(t.cmd("touch zz 100\r\n"), "NOT_FOUND");
    assert_eq!(t.cmd("gat 100 s zz\r\n"), "VALUE s 0 1");
    assert_eq!(t.line(), "x");
    assert_eq!(t.line(), "END");
    let l = t.cmd("gats 100 s\r\n");
    assert!(l.starts_with("VALUE s 0 1 "), "{l}");
    assert_eq!(t.line(), "x");
    assert_eq!(t.line(), "END");
    assert_eq!(t.cmd("delete s\r\n"), "DELETED");
    assert_eq!(t.cmd("delete s\r\n"), "NOT_FOUND");
    // negative exptime: stored but never seen
    assert_eq!(t.cmd("set e 0 -1 1\r\nx\r\n"), "STORED");
    assert_eq!(t.cmd("get e\r\n"), "END");
    assert_eq!(t.cmd("flush_all\r\n"), "OK");
    assert_eq!(t.cmd("get n\r\n"), "END");
    assert_eq!(t.cmd("set n 0 0 1\r\n1\r\n"), "STORED");
    assert_eq!(t.cmd("flush_all 1\r\n"), "OK");
    assert_eq!(t.cmd("get n\r\n"), "VALUE n 0 1");
    assert_eq!(t.line(), "1");
    assert_eq!(t.line(), "END");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(t.cmd("get n\r\n"), "END");
}

#[test]
fn noreply_and_pipelining() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    let mut batch = String::new();
    for i in 0..200 {
        batch.push_str(&format!(
            "set k{i} {i} 0 {}\r\nv{i}\r\n",
            format!("v{i}").len()
        ));
    }
    batch.push_str("set q 0 0 1 noreply\r\nq\r\n");
    batch.push_str("delete nothing noreply\r\n");
    batch.push_str("incr q 1 noreply\r\n");
    batch.push_str("get q k0 k199\r\n");
    t.send(batch.as_bytes());
    for _ in 0..200 {
        assert_eq!(t.line(), "STORED");
    }
    assert_eq!(t.line(), "VALUE q 0 1");
    assert_eq!(t.line(), "q");
    assert_eq!(t.line(), "VALUE k0 0 2");
    assert_eq!(t.line(), "v0");
    assert_eq!(t.line(), "VALUE k199 199 4");
    assert_eq!(t.line(), "v199");
    assert_eq!(t.line(), "END");
}

#[test]
fn error_lines_version_verbosity_stats_quit() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("bogus\r\n"), "ERROR");
    // memcached 1.6.45: a command short of its tokens is a bad line.
    assert_eq!(t.cmd("get\r\n"), "CLIENT_ERROR bad command line format");
    assert_eq!(
        t.cmd("set a b c d\r\n"),
        "CLIENT_ERROR bad command line format"
    );
    let long = "k".repeat(251);
    assert_eq!(
        t.cmd(&format!("get {long}\r\n")),
        "CLIENT_ERROR bad command line format"
    );
    assert_eq!(
        t.cmd("set a 0 0 1\r\nxyz\r\n"),
        "CLIENT_ERROR bad data chunk"
    );
    // like memcached, the rest of the line ("\r\n") is read as a command,
    // one too short to be any (1.6.45's reply)
    assert_eq!(t.line(), "CLIENT_ERROR bad command line format");
    assert!(t.cmd("version\r\n").starts_with("VERSION "));
    assert_eq!(t.cmd("verbosity 1\r\n"), "OK");
    assert_eq!(t.cmd("stats nosuchgroup\r\n"), "ERROR");
    assert!(t.cmd("stats\r\n").starts_with("STAT pid "));
    loop {
        if t.line() == "END" {
            break;
        }
    }
    assert_eq!(t.cmd("stats reset\r\n"), "RESET");
    t.send(b"quit\r\n");
    assert!(is_closed(&mut t.w));
}

#[test]
fn too_large_value_is_swallowed() {
    let srv = Server::start(&["-I", "1k"]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("set big 0 0 3\r\nold\r\n"), "STORED");
    let big = "x".repeat(100_000);
    t.send(format!("set big 0 0 {}\r\n", big.len()).as_bytes());
    t.send(&big.as_bytes()[..500]);
    std::thread::sleep(std::time::Duration::from_millis(50));
    t.send(&big.as_bytes()[500..]);
    t.send(b"\r\n");
    assert_eq!(t.line(), "SERVER_ERROR object too large for cache");
    assert_eq!(t.cmd("get big\r\n"), "END");
    assert_eq!(t.cmd("set small 0 0 2\r\nok\r\n"), "STORED");
    assert_eq!(t.cmd("get small\r\n"), "VALUE small 0 2");
}

/// memcached reads a `get` line of any length (its t/getset.t sends one of
/// 187 KB); here a line past the 64 KiB line limit is served in parts, so
/// the reply is the same and the connection stays open.
#[test]
fn a_get_line_longer_than_the_line_limit_is_answered_in_full() {
    let srv = Server::start(&[]);
    let s = srv.connect();
    let mut w = s.try_clone().expect("clone");
    let mut t = Text::new(s);
    assert_eq!(t.cmd("set a 1 0 2\r\nAA\r\n"), "STORED");
    assert_eq!(t.cmd("set c 3 0 1\r\nC\r\n"), "STORED");
    let rounds = 10_000; // 12 bytes a round: 120 KB of keys
    let line = format!("gets {}\r\n", "a missing c ".repeat(rounds));
    // Written from another thread: the replies start before the line ends.
    let writer = std::thread::spawn(move || w.write_all(line.as_bytes()).expect("send"));
    for round in 0..rounds {
        let head = t.line();
        assert!(head.starts_with("VALUE a 1 2 "), "round {round}: {head:?}");
        assert_eq!(t.line(), "AA");
        assert!(t.line().starts_with("VALUE c 3 1 "), "round {round}");
        assert_eq!(t.line(), "C");
    }
    assert_eq!(t.line(), "END");
    writer.join().expect("writer");
    assert!(t.cmd("version\r\n").starts_with("VERSION "));
}
