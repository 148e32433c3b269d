//! Protocol sniffing: MessagePack-RPC, binary and text connections work
//! side by side on one port.

mod common;
use common::*;
use std::io::{Read, Write};

#[test]
fn msgpack_fixarray_is_served_as_rpc_beside_the_other_protocols() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    s.write_all(&[0x94, 0x00, 0x01, 0xa4, b'p', b'i', b'n', b'g', 0x90])
        .unwrap();
    let mut reply = [0u8; 5];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply, [0x94, 0x01, 0x01, 0xc0, 0xc0], "[1, 1, nil, nil]");
    let mut b = srv.connect();
    assert_eq!(call(&mut b, NOOP, b"", &[], &[], 0).status, 0);
    let mut t = Text::new(srv.connect());
    assert!(t.cmd("version\r\n").starts_with("VERSION "));
}

/// An HTTP client on the main port (say, one pointed at it for Kyoto
/// Tycoon's HTTP) is hung up on without a byte, as memcached does for an
/// unknown command ending in `HTTP/...`; a plain unknown command still gets
/// ERROR and the connection goes on.
#[test]
fn http_request_lines_are_hung_up_on_silently() {
    let srv = Server::start(&[]);
    for line in [
        "GET /rpc/echo HTTP/1.1\r\nHost: x\r\n\r\n",
        "PUT /key HTTP/1.0\r\n",
        "POST /rpc/set_bulk?_k=v HTTP/1.1\r\n",
    ] {
        let mut s = srv.connect();
        s.write_all(line.as_bytes()).unwrap();
        let mut got = Vec::new();
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        s.read_to_end(&mut got).expect("closed, not timed out");
        assert!(got.is_empty(), "{line:?} got {got:?}");
    }
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("GET /\r\n"), "ERROR");
    assert_eq!(t.cmd("bogus HTTPS/1.1\r\n"), "ERROR");
    assert!(t.cmd("version\r\n").starts_with("VERSION "));
}
