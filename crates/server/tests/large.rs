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

/// Regression: on the default store, overwriting a value of 1 KiB or more
/// (kept aside by the segment cache) with another panicked the shard, and
/// with other large values about could hand one value's slot to another
/// item. Memcached clients rewrite large values all the time.
#[test]
fn rewriting_large_values_on_the_default_store() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    let set = |t: &mut Text, key: &str, fill: u8, n: usize| {
        t.send(format!("set {key} 0 0 {n}\r\n").as_bytes());
        t.w.write_all(&vec![fill; n]).unwrap();
        assert_eq!(t.cmd("\r\n"), "STORED", "{key}");
    };
    set(&mut t, "a", b'1', 2000);
    set(&mut t, "a", b'2', 3000);
    set(&mut t, "b", b'3', 2000);
    set(&mut t, "c", b'4', 2000);
    assert_eq!(t.cmd("delete b\r\n"), "DELETED");
    set(&mut t, "a", b'5', 4000);
    set(&mut t, "d", b'6', 2000);
    set(&mut t, "e", b'7', 2000);
    for (key, fill, n) in [
        ("a", b'5', 4000),
        ("c", b'4', 2000),
        ("d", b'6', 2000),
        ("e", b'7', 2000),
    ] {
        assert_eq!(
            t.cmd(&format!("get {key}\r\n")),
            format!("VALUE {key} 0 {n}")
        );
        assert!(t.bytes(n) == vec![fill; n], "{key} differs");
        assert_eq!(t.line(), "");
        assert_eq!(t.line(), "END");
    }
}
