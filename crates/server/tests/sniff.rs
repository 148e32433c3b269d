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
