//! Large values: a 100 MiB value round-trips with `-I 256m`, on binary and
//! text; a value larger than the connection memory budget does too, within
//! 1.5x its size of server memory; a slow reader of a large reply is not
//! cut off.

mod common;
use common::*;
use std::io::{Read, Write};
use std::time::Duration;

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

/// Regression (issue 40, finding 8): with `-I` raised and nothing else, a
/// value larger than the connection memory budget (256 MiB by default) was
/// refused "out of memory" (0x82); with the budget raised to hold it, the
/// reply was cut after a second of writing, and the server peaked at 2.9x
/// the value. Now one request beyond the budget is admitted at a time (the
/// budget's oversize admission), and the server's peak memory grows by
/// less than 1.5x the value, over binary and text. `-I` is the only flag:
/// the default cache grows to hold an item of that size. (600 MiB: sized
/// for CI's 24 GiB machine; the client holds three copies.)
#[test]
fn a_value_larger_than_the_connection_budget_round_trips_within_one_and_a_half_times_its_size() {
    const SIZE: usize = 600 << 20;
    let srv = Server::start(&["-I", "1g"]);
    let value = pattern(SIZE);
    let baseline = srv.peak_kib();

    let mut s = srv.connect();
    let r = call(&mut s, SET, b"huge", &set_extras(3, 0), &value, 0);
    assert_eq!(r.status, 0, "binary set");
    let r = call(&mut s, GET, b"huge", &[], &[], 0);
    assert_eq!(r.status, 0, "binary get");
    assert!(r.value == value, "binary value differs");
    drop(r);

    // Text: the same, once the binary copy is gone (the old value would
    // otherwise be held while the new one arrives).
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("delete huge\r\n"), "DELETED");
    t.send(format!("set huge 5 0 {SIZE}\r\n").as_bytes());
    t.w.write_all(&value).unwrap();
    assert_eq!(t.cmd("\r\n"), "STORED");
    assert_eq!(t.cmd("get huge\r\n"), format!("VALUE huge 5 {SIZE}"));
    assert!(t.bytes(SIZE) == value, "text value differs");
    assert_eq!(t.line(), "");
    assert_eq!(t.line(), "END");

    let grew = srv.peak_kib().saturating_sub(baseline);
    let bound = (SIZE as u64 * 3 / 2) >> 10;
    assert!(
        grew < bound,
        "peak memory grew by {grew} KiB for a value of {} KiB (bound {bound} KiB)",
        SIZE >> 10
    );
    assert_eq!(stat(&srv, "conn_buffer_refused"), 0);
}

/// Regression (issue 40, finding 8): while the connection memory budget
/// was spent, a reply had to be written whole within a second, so a client
/// reading a large value at a steady pace was closed as one that "does not
/// read its replies". Three clients here read a 24 MiB value each, 128 KiB
/// every 10 ms (about 2 s), their replies spending the 40 MiB budget (one
/// within it, one in the oversize admission, one beyond): all get all of
/// it, since each keeps reading.
#[test]
fn a_client_reading_a_large_reply_slowly_is_not_cut_off() {
    const SIZE: usize = 24 << 20;
    let srv = Server::start(&["--conn-memory", "40m", "-I", "64m", "-s", "*"]);
    let value = pattern(SIZE);
    let mut s = srv.connect();
    assert_eq!(
        call(&mut s, SET, b"v", &set_extras(0, 0), &value, 0).status,
        0
    );
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let mut c = srv.connect();
            c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            c.write_all(&req(GET, b"v", &[], &[], 0, 0)).unwrap();
            std::thread::spawn(move || {
                let mut got = Vec::with_capacity(SIZE + 64);
                let mut piece = vec![0u8; 128 << 10];
                while got.len() < SIZE + 24 + 4 {
                    match c.read(&mut piece) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got.extend_from_slice(&piece[..n]),
                    }
                    // A slow client, not a readiness wait.
                    std::thread::sleep(Duration::from_millis(10));
                }
                got
            })
        })
        .collect();
    for r in readers {
        let got = r.join().unwrap();
        assert_eq!(got.len(), 24 + 4 + SIZE, "the reply was cut off");
        assert!(got[28..] == value[..], "the value differs");
    }
    assert_eq!(stat(&srv, "conn_buffer_refused"), 0);
}
