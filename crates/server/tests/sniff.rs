//! Protocol sniffing: a MessagePack-RPC first byte is refused (RPC comes
//! later); binary and text connections work side by side.

mod common;
use common::*;
use std::io::Write;

#[test]
fn msgpack_fixarray_is_refused_for_now() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    s.write_all(&[0x94, 0x00, 0x01, 0xa4, b'p', b'i', b'n', b'g', 0x90])
        .unwrap();
    assert!(is_closed(&mut s));
    let mut b = srv.connect();
    assert_eq!(call(&mut b, NOOP, b"", &[], &[], 0).status, 0);
    let mut t = Text::new(srv.connect());
    assert!(t.cmd("version\r\n").starts_with("VERSION "));
}
