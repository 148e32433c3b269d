//! Runs of binary GETQ/GETKQ and SETQ, and text multi-gets, are served as
//! engine batches (`protocols/binary/quiet.rs`, `text::batched_values`):
//! the client must see exactly what one-at-a-time serving gave it, in
//! request order, with the same counters, on one shard and on several.

mod common;
use common::*;
use std::io::Write;

fn stores(dir: &std::path::Path) -> Vec<String> {
    vec![
        "*#capsiz=1m".to_string(),
        format!("{}/runs.tkh#num_shards=4", dir.display()),
    ]
}

/// A run mixing kinds and keys: each read sees the writes before it and
/// none after it, and the replies come in request order.
#[test]
fn quiet_runs_keep_request_order_and_see_earlier_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    for store in stores(dir.path()) {
        let srv = Server::start(&["-s", &store]);
        let mut s = srv.connect();
        let mut batch = Vec::new();
        let mut expect = Vec::new();
        for round in 0..300u32 {
            let key = format!("k{}", round % 37);
            let value = format!("v{round}");
            batch.extend(req(
                SETQ,
                key.as_bytes(),
                &set_extras(round, 0),
                value.as_bytes(),
                0,
                0,
            ));
            batch.extend(req(GETKQ, key.as_bytes(), &[], &[], round, 0));
            batch.extend(req(
                GETQ,
                format!("absent{round}").as_bytes(),
                &[],
                &[],
                0,
                0,
            ));
            expect.push((round, key, value));
        }
        batch.extend(req(NOOP, b"", &[], &[], 9999, 0));
        s.write_all(&batch).expect("send");
        for (round, key, value) in expect {
            let r = read_resp(&mut s);
            assert_eq!((r.opcode, r.opaque, r.status), (GETKQ, round, 0), "{store}");
            assert_eq!((r.key, r.value), (key.into_bytes(), value.into_bytes()));
            assert_eq!(r.extras, round.to_be_bytes());
        }
        let r = read_resp(&mut s);
        assert_eq!((r.opcode, r.opaque), (NOOP, 9999), "{store}");
        assert_eq!(stat(&srv, "cmd_set"), 300, "{store}");
        assert_eq!(stat(&srv, "cmd_get"), 600, "{store}");
        assert_eq!(stat(&srv, "get_hits"), 300, "{store}");
        assert_eq!(stat(&srv, "get_misses"), 300, "{store}");
    }
}

/// A SETQ the cache refuses (a value larger than the whole cache) answers
/// its error; the SETQs around it in the same run are stored.
#[test]
fn a_refused_setq_answers_alone_and_the_rest_of_its_run_is_stored() {
    let srv = Server::start(&["-s", "*#capsiz=1m"]);
    let mut s = srv.connect();
    let big = vec![b'x'; 2_000_000];
    let mut batch = Vec::new();
    batch.extend(req(SETQ, b"before", &set_extras(0, 0), b"1", 1, 0));
    batch.extend(req(SETQ, b"big", &set_extras(0, 0), &big, 2, 0));
    batch.extend(req(SETQ, b"after", &set_extras(0, 0), b"3", 3, 0));
    batch.extend(req(NOOP, b"", &[], &[], 4, 0));
    s.write_all(&batch).expect("send");
    let r = read_resp(&mut s);
    assert_eq!(
        (r.opcode, r.opaque, r.status),
        (SETQ, 2, 0x03),
        "E2BIG for the big one"
    );
    let r = read_resp(&mut s);
    assert_eq!((r.opcode, r.opaque), (NOOP, 4));
    assert_eq!(call(&mut s, GET, b"before", &[], &[], 0).value, b"1");
    assert_eq!(call(&mut s, GET, b"after", &[], &[], 0).value, b"3");
    assert_eq!(call(&mut s, GET, b"big", &[], &[], 0).status, 1);
    assert_eq!(stat(&srv, "cmd_set"), 3);
    assert_eq!(stat(&srv, "store_too_large"), 1);
}

/// A text multi-get naming keys again: every naming answered and counted
/// (memcached counts each), on one shard and on several.
#[test]
fn a_text_multi_get_answers_and_counts_every_naming() {
    let dir = tempfile::tempdir().expect("tempdir");
    for store in stores(dir.path()) {
        let srv = Server::start(&["-s", &store]);
        let mut t = Text::new(srv.connect());
        for k in ["a", "b", "c", "d"] {
            assert_eq!(t.cmd(&format!("set {k} 0 0 1\r\n{k}\r\n")), "STORED");
        }
        t.send(b"get d a zz b a c zz a\r\n");
        let mut got = Vec::new();
        loop {
            let line = t.line();
            if line == "END" {
                break;
            }
            assert!(line.starts_with("VALUE "), "{line}");
            got.push(t.line());
        }
        assert_eq!(got, ["d", "a", "b", "a", "c", "a"], "{store}");
        assert_eq!(t.stat("cmd_get"), 8, "{store}");
        assert_eq!(t.stat("get_hits"), 6, "{store}");
        assert_eq!(t.stat("get_misses"), 2, "{store}");
    }
}
