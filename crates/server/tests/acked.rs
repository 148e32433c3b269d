//! Acknowledged writes reach the OS before the acknowledgement: a server
//! killed with SIGKILL right after answering keeps them. Also memcached's
//! `get_expired` counter and CAS-keeping touch, which rely on engine calls
//! made for the memcached protocols.

mod common;
use common::{Server, Text};

#[test]
fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("{}/acked.tkh#num_shards=4", dir.path().display());
    let server = Server::start(&["-s", &store]);
    let mut t = Text::new(server.connect());
    for i in 0..500 {
        let v = format!("value{i}");
        assert_eq!(
            t.cmd(&format!("set key{i} 0 0 {}\r\n{v}\r\n", v.len())),
            "STORED"
        );
    }
    server.kill9(); // no shutdown, no sync, no close.
    let server = Server::start(&["-s", &store]);
    let mut t = Text::new(server.connect());
    for i in 0..500 {
        assert_eq!(
            t.cmd(&format!("get key{i}\r\n")),
            format!("VALUE key{i} 0 {}", format!("value{i}").len())
        );
        assert_eq!(t.line(), format!("value{i}"));
        assert_eq!(t.line(), "END");
    }
}

#[test]
fn expired_gets_are_counted_and_touch_keeps_cas() {
    let server = Server::start(&[]);
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("set gone 0 -1 1\r\nx\r\n"), "STORED");
    assert_eq!(t.cmd("get gone\r\n"), "END");
    assert_eq!(t.cmd("get never\r\n"), "END");
    assert_eq!(t.stat("get_expired"), 1);
    assert_eq!(t.stat("get_misses"), 2);

    assert_eq!(t.cmd("set t 0 0 1\r\nv\r\n"), "STORED");
    let before = t.cmd("gets t\r\n");
    t.line();
    t.line();
    assert_eq!(t.cmd("touch t 100\r\n"), "TOUCHED");
    let after = t.cmd("gets t\r\n");
    t.line();
    t.line();
    assert_eq!(before, after, "touch keeps the CAS");
    let cas: u64 = before.rsplit(' ').next().unwrap().parse().unwrap();
    assert_eq!(t.cmd(&format!("cas t 0 0 1 {cas}\r\nw\r\n")), "STORED");
}
