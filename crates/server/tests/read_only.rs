//! `--read-only`: every write is refused with a clear error on each protocol,
//! reads keep working.

mod common;
use common::*;
use std::io::{Read, Write};

fn says_read_only(text: &str) -> bool {
    text.contains("read only") || text.contains("read-only")
}

#[test]
fn read_only_refuses_every_write_on_every_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("{}/ro.tkh", dir.path().display());
    {
        let server = Server::start(&["-s", &store]);
        let mut t = Text::new(server.connect());
        assert_eq!(t.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
        assert!(server.terminate().success());
    }
    let server = Server::start(&["-s", &store, "--read-only"]);
    let mut t = Text::new(server.connect());
    for cmd in [
        "set k 0 0 1\r\nw\r\n",
        "delete k\r\n",
        "incr k 1\r\n",
        "touch k 10\r\n",
        "ms k 1\r\nw\r\n",
    ] {
        let reply = t.cmd(cmd);
        assert!(
            reply.starts_with("SERVER_ERROR") && says_read_only(&reply),
            "{cmd:?} -> {reply}"
        );
    }
    assert_eq!(
        t.cmd("flush_all\r\n").split(' ').next(),
        Some("SERVER_ERROR")
    );
    assert_eq!(t.cmd("get k\r\n"), "VALUE k 0 1");
    assert_eq!(t.line(), "v");
    assert_eq!(t.line(), "END");

    let mut b = server.connect();
    let r = call(&mut b, SET, b"k", &set_extras(0, 0), b"w", 0);
    assert_ne!(r.status, 0, "binary set refused");
    assert!(says_read_only(&String::from_utf8_lossy(&r.value)), "{r:?}");
    let r = call(&mut b, DELETE, b"k", &[], &[], 0);
    assert_ne!(r.status, 0, "binary delete refused");
    assert_eq!(
        call(&mut b, GET, b"k", &[], &[], 0).status,
        0,
        "binary get works"
    );

    // MessagePack-RPC: [0, 1, "set", ["k", "w"]] -> error 41 (logical error).
    let mut s = server.connect();
    s.write_all(&[
        0x94, 0x00, 0x01, 0xa3, b's', b'e', b't', 0x92, 0xa1, b'k', 0xa1, b'w',
    ])
    .unwrap();
    let mut buf = [0u8; 256];
    let n = s.read(&mut buf).unwrap();
    let reply = &buf[..n];
    assert_eq!(
        &reply[..3],
        &[0x94, 0x01, 0x01],
        "response to msgid 1: {reply:?}"
    );
    // kt-msgpack's error object is the bare code; then a nil result.
    assert_eq!(&reply[3..], &[41, 0xc0], "logical error: {reply:?}");
}
