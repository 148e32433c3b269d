//! SASL PLAIN on the binary protocol with `--sasl-file`.

mod common;
use common::*;
use std::io::Write;

#[test]
fn sasl_plain() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users");
    std::fs::write(&file, "alice:secret\nbob:hunter2\n").unwrap();
    let srv = Server::start(&["--sasl-file", file.to_str().unwrap()]);

    // Before authenticating: VERSION works, other commands get 0x20 and close.
    let mut s = srv.connect();
    assert_eq!(call(&mut s, VERSION, b"", &[], &[], 0).status, 0);
    let r = call(&mut s, SASL_LIST, b"", &[], &[], 0);
    assert_eq!((r.status, r.value), (0, b"PLAIN".to_vec()));
    assert_eq!(call(&mut s, GET, b"k", &[], &[], 0).status, 0x20);
    assert!(is_closed(&mut s));

    // Wrong password: 0x20; right one: "Authenticated", then commands work.
    let mut s = srv.connect();
    let r = call(&mut s, SASL_AUTH, b"PLAIN", &[], b"\0alice\0wrong", 0);
    assert_eq!(r.status, 0x20);
    let r = call(&mut s, SASL_AUTH, b"PLAIN", &[], b"\0alice\0secret", 0);
    assert_eq!((r.status, r.value), (0, b"Authenticated".to_vec()));
    assert_eq!(
        call(&mut s, SET, b"k", &set_extras(0, 0), b"v", 0).status,
        0
    );
    assert_eq!(call(&mut s, GET, b"k", &[], &[], 0).value, b"v");

    // Text connections are refused when SASL is on.
    let mut t = srv.connect();
    t.write_all(b"get k\r\n").unwrap();
    assert!(is_closed(&mut t));
}
