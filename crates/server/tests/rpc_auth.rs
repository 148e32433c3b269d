//! With `--sasl-file`, a MessagePack-RPC connection must call `auth` with the
//! same credentials before anything else is served.

mod common;
use common::*;
use std::io::{Read, Write};

fn rpc(s: &mut std::net::TcpStream, frame: &[u8]) -> Vec<u8> {
    s.write_all(frame).unwrap();
    let mut buf = vec![0u8; 512];
    let n = s.read(&mut buf).unwrap();
    buf.truncate(n);
    buf
}

/// `[0, id, "ping", []]`
fn ping(id: u8) -> Vec<u8> {
    vec![0x94, 0x00, id, 0xa4, b'p', b'i', b'n', b'g', 0x90]
}

/// `[0, id, "auth", [user, password]]`
fn auth(id: u8, user: &str, password: &str) -> Vec<u8> {
    let mut f = vec![0x94, 0x00, id, 0xa4, b'a', b'u', b't', b'h', 0x92];
    for s in [user, password] {
        f.push(0xa0 | s.len() as u8);
        f.extend_from_slice(s.as_bytes());
    }
    f
}

#[test]
fn rpc_requires_auth_with_the_sasl_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let creds = dir.path().join("users");
    std::fs::write(&creds, "alice:secret\n").unwrap();
    let server = Server::start(&["--sasl-file", creds.to_str().unwrap()]);
    let mut s = server.connect();
    // Before auth: error 41 (kt-msgpack's bare code).
    let r = rpc(&mut s, &ping(1));
    assert_eq!(r, vec![0x94, 0x01, 0x01, 41, 0xc0], "{r:?}");
    let r = rpc(&mut s, &auth(2, "alice", "wrong"));
    assert_eq!(
        r,
        vec![0x94, 0x01, 0x02, 41, 0xc0],
        "bad password refused: {r:?}"
    );
    let r = rpc(&mut s, &auth(3, "alice", "secret"));
    assert_eq!(r, vec![0x94, 0x01, 0x03, 0xc0, 0xc0], "auth ok");
    let r = rpc(&mut s, &ping(4));
    assert_eq!(r, vec![0x94, 0x01, 0x04, 0xc0, 0xc0], "ping after auth");
}
