//! A 100 MiB value round-trips with `-I 256m`, on binary and text.

mod common;
use common::*;
use std::io::Write;

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

#[test]
fn hundred_mib_value_binary_and_text() {
    let srv = Server::start(&["-I", "256m", "-s", "*"]);
    let value = pattern(100 << 20);
    let mut s = srv.connect();
    let r = call(&mut s, SET, b"big", &set_extras(1, 0), &value, 0);
    assert_eq!(r.status, 0);
    let r = call(&mut s, GET, b"big", &[], &[], 0);
    assert_eq!(r.status, 0);
    assert!(r.value == value, "binary value differs");
    drop(r);

    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("get big\r\n"), format!("VALUE big 1 {}", value.len()));
    assert!(t.bytes(value.len()) == value, "text value differs");
    assert_eq!(t.line(), "");
    assert_eq!(t.line(), "END");
    t.send(format!("set big2 0 0 {}\r\n", value.len()).as_bytes());
    t.w.write_all(&value).unwrap();
    assert_eq!(t.cmd("\r\n"), "STORED");
    assert_eq!(
        call(&mut s, GET, b"big2", &[], &[], 0).value.len(),
        value.len()
    );
}
