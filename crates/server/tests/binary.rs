//! Binary protocol against the real server: every op, quiet rules, pipelining.

mod common;
use common::*;
use std::io::Write;

#[test]
fn get_set_add_replace_delete() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    let r = call(&mut s, GET, b"k", &[], &[], 0);
    assert_eq!(r.status, 1);
    assert_eq!(r.value, b"Not found");
    let r = call(&mut s, SET, b"k", &set_extras(7, 0), b"hello", 0);
    assert_eq!(r.status, 0);
    assert!(r.cas != 0);
    let cas = r.cas;
    let r = call(&mut s, GET, b"k", &[], &[], 0);
    assert_eq!(
        (r.status, r.extras.clone(), r.value.clone()),
        (0, 7u32.to_be_bytes().to_vec(), b"hello".to_vec())
    );
    assert_eq!(r.cas, cas);
    assert!(r.key.is_empty());
    let r = call(&mut s, GETK, b"k", &[], &[], 0);
    assert_eq!(r.key, b"k");
    let r = call(&mut s, GETK, b"missing", &[], &[], 0);
    assert_eq!((r.status, r.key), (1, b"missing".to_vec()));
    // ADD on an existing key: 0x02
    assert_eq!(
        call(&mut s, ADD, b"k", &set_extras(0, 0), b"x", 0).status,
        2
    );
    assert_eq!(
        call(&mut s, ADD, b"k2", &set_extras(0, 0), b"x", 0).status,
        0
    );
    // REPLACE on a missing key: 0x01
    assert_eq!(
        call(&mut s, REPLACE, b"nope", &set_extras(0, 0), b"x", 0).status,
        1
    );
    assert_eq!(
        call(&mut s, REPLACE, b"k2", &set_extras(0, 0), b"y", 0).status,
        0
    );
    // CAS: wrong value -> 0x02, right value -> stored
    assert_eq!(
        call(&mut s, SET, b"k", &set_extras(0, 0), b"z", cas + 100).status,
        2
    );
    let r = call(&mut s, SET, b"k", &set_extras(0, 0), b"z", cas);
    assert_eq!(r.status, 0);
    assert_eq!(
        call(&mut s, SET, b"gone", &set_extras(0, 0), b"z", 5).status,
        1
    );
    // DELETE with a stale CAS, then for real, then again
    assert_eq!(call(&mut s, DELETE, b"k", &[], &[], cas).status, 2);
    assert_eq!(call(&mut s, DELETE, b"k", &[], &[], 0).status, 0);
    assert_eq!(call(&mut s, DELETE, b"k", &[], &[], 0).status, 1);
}

#[test]
fn incr_decr_append_prepend_touch() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    // missing + 0xffffffff: not found
    let r = call(&mut s, INCR, b"n", &arith_extras(1, 5, 0xffff_ffff), &[], 0);
    assert_eq!(r.status, 1);
    // missing: created with the initial value
    let r = call(&mut s, INCR, b"n", &arith_extras(1, 5, 0), &[], 0);
    assert_eq!(
        (r.status, r.value.clone()),
        (0, 5u64.to_be_bytes().to_vec())
    );
    let r = call(&mut s, INCR, b"n", &arith_extras(10, 0, 0), &[], 0);
    assert_eq!(r.value, 15u64.to_be_bytes());
    let r = call(&mut s, DECR, b"n", &arith_extras(100, 0, 0), &[], 0);
    assert_eq!(r.value, 0u64.to_be_bytes());
    let r = call(&mut s, GET, b"n", &[], &[], 0);
    assert_eq!(r.value, b"0");
    call(&mut s, SET, b"t", &set_extras(3, 0), b"abc", 0);
    assert_eq!(
        call(&mut s, INCR, b"t", &arith_extras(1, 0, 0), &[], 0).status,
        6
    );
    // APPEND / PREPEND keep flags; missing -> 0x05
    assert_eq!(call(&mut s, APPEND, b"t", &[], b"def", 0).status, 0);
    assert_eq!(call(&mut s, PREPEND, b"t", &[], b"_", 0).status, 0);
    let r = call(&mut s, GET, b"t", &[], &[], 0);
    assert_eq!(
        (r.value, r.extras),
        (b"_abcdef".to_vec(), 3u32.to_be_bytes().to_vec())
    );
    assert_eq!(call(&mut s, APPEND, b"none", &[], b"x", 0).status, 5);
    // TOUCH / GAT / GATK
    let r = call(&mut s, TOUCH, b"t", &100u32.to_be_bytes(), &[], 0);
    assert_eq!((r.status, r.extras), (0, 3u32.to_be_bytes().to_vec()));
    assert_eq!(
        call(&mut s, TOUCH, b"none", &100u32.to_be_bytes(), &[], 0).status,
        1
    );
    let r = call(&mut s, GAT, b"t", &100u32.to_be_bytes(), &[], 0);
    assert_eq!((r.status, r.value), (0, b"_abcdef".to_vec()));
    let r = call(&mut s, GATK, b"t", &100u32.to_be_bytes(), &[], 0);
    assert_eq!(r.key, b"t");
    // GAT with an expired time makes the item disappear
    let past = 1000u32; // absolute time in 1970
    call(
        &mut s,
        GAT,
        b"t",
        &(past + 30 * 86400).to_be_bytes(),
        &[],
        0,
    );
    assert_eq!(call(&mut s, GET, b"t", &[], &[], 0).status, 1);
}

#[test]
fn quiet_commands_answer_only_errors() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    let mut batch = Vec::new();
    batch.extend(req(SETQ, b"a", &set_extras(0, 0), b"1", 1, 0)); // silent
    batch.extend(req(ADDQ, b"a", &set_extras(0, 0), b"1", 2, 0)); // error: exists
    batch.extend(req(GETQ, b"a", &[], &[], 3, 0)); // hit: sent
    batch.extend(req(GETQ, b"zz", &[], &[], 4, 0)); // miss: silent
    batch.extend(req(DELETEQ, b"zz", &[], &[], 5, 0)); // error: not found
    batch.extend(req(INCRQ, b"a", &arith_extras(1, 0, 0), &[], 6, 0)); // silent
    batch.extend(req(GATQ, b"zz", &10u32.to_be_bytes(), &[], 7, 0)); // miss: silent
    batch.extend(req(0x19, b"a", &[], b"x", 8, 0)); // APPENDQ: silent
    batch.extend(req(0x18, b"", &[], &[], 9, 0)); // FLUSHQ: silent
    batch.extend(req(NOOP, b"", &[], &[], 10, 0));
    s.write_all(&batch).unwrap();
    let r = read_resp(&mut s);
    assert_eq!((r.opaque, r.opcode, r.status), (2, ADDQ, 2));
    let r = read_resp(&mut s);
    assert_eq!(
        (r.opaque, r.opcode, r.status, r.value),
        (3, GETQ, 0, b"1".to_vec())
    );
    let r = read_resp(&mut s);
    assert_eq!((r.opaque, r.opcode, r.status), (5, DELETEQ, 1));
    let r = read_resp(&mut s);
    assert_eq!((r.opaque, r.opcode, r.status), (10, NOOP, 0));
    // FLUSHQ ran: the key is gone.
    assert_eq!(call(&mut s, GET, b"a", &[], &[], 0).status, 1);
}

#[test]
fn pipelined_getkq_then_noop() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    for i in 0..1000 {
        if i % 2 == 0 {
            let k = format!("key{i}");
            call(
                &mut s,
                SET,
                k.as_bytes(),
                &set_extras(i, 0),
                format!("v{i}").as_bytes(),
                0,
            );
        }
    }
    let mut batch = Vec::new();
    for i in 0..1000u32 {
        batch.extend(req(GETKQ, format!("key{i}").as_bytes(), &[], &[], i, 0));
    }
    batch.extend(req(NOOP, b"", &[], &[], 5555, 0));
    s.write_all(&batch).unwrap();
    for i in (0..1000u32).step_by(2) {
        let r = read_resp(&mut s);
        assert_eq!(r.opcode, GETKQ);
        assert_eq!(r.opaque, i);
        assert_eq!(r.key, format!("key{i}").as_bytes());
        assert_eq!(r.value, format!("v{i}").as_bytes());
        assert_eq!(r.extras, i.to_be_bytes());
    }
    let r = read_resp(&mut s);
    assert_eq!((r.opcode, r.opaque), (NOOP, 5555));
}

#[test]
fn version_noop_stat_flush_quit() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    let r = call(&mut s, VERSION, b"", &[], &[], 0);
    assert_eq!(r.status, 0);
    assert!(!r.value.is_empty());
    assert_eq!(call(&mut s, NOOP, b"", &[], &[], 0).status, 0);
    s.write_all(&req(STAT, b"", &[], &[], 1, 0)).unwrap();
    let mut names = Vec::new();
    loop {
        let r = read_resp(&mut s);
        assert_eq!(r.opcode, STAT);
        if r.key.is_empty() {
            break;
        }
        names.push(String::from_utf8(r.key).unwrap());
    }
    assert!(names.iter().any(|n| n == "curr_items"));
    assert_eq!(call(&mut s, STAT, b"nosuchgroup", &[], &[], 0).status, 1);
    call(&mut s, SET, b"f", &set_extras(0, 0), b"1", 0);
    // FLUSH with a delay: still there now, gone after the delay.
    assert_eq!(
        call(&mut s, FLUSH, b"", &1u32.to_be_bytes(), &[], 0).status,
        0
    );
    assert_eq!(call(&mut s, GET, b"f", &[], &[], 0).status, 0);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(call(&mut s, GET, b"f", &[], &[], 0).status, 1);
    call(&mut s, SET, b"f", &set_extras(0, 0), b"1", 0);
    assert_eq!(call(&mut s, FLUSH, b"", &[], &[], 0).status, 0);
    assert_eq!(call(&mut s, GET, b"f", &[], &[], 0).status, 1);
    let r = call(&mut s, QUIT, b"", &[], &[], 0);
    assert_eq!(r.status, 0);
    assert!(is_closed(&mut s));
    let mut s = srv.connect();
    s.write_all(&req(QUITQ, b"", &[], &[], 0, 0)).unwrap();
    assert!(is_closed(&mut s));
}

#[test]
fn unknown_opcode_and_bad_frames() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    // Unknown opcode with a body: 0x81, body skipped, connection usable.
    s.write_all(&req(0x55, b"key", &[], b"some body", 77, 0))
        .unwrap();
    let r = read_resp(&mut s);
    assert_eq!((r.opcode, r.status, r.opaque), (0x55, 0x81, 77));
    assert_eq!(call(&mut s, NOOP, b"", &[], &[], 0).status, 0);
    // Key over 250 bytes: 0x04 and close.
    let long = vec![b'k'; 251];
    s.write_all(&req(GET, &long, &[], &[], 1, 0)).unwrap();
    let r = read_resp(&mut s);
    assert_eq!(r.status, 4);
    assert!(is_closed(&mut s));
    // Bad extras for SET: 0x04 and close.
    let mut s = srv.connect();
    s.write_all(&req(SET, b"k", &[0, 0], b"v", 1, 0)).unwrap();
    assert_eq!(read_resp(&mut s).status, 4);
    assert!(is_closed(&mut s));
}

#[test]
fn too_large_value_is_refused_and_connection_stays_usable() {
    let srv = Server::start(&["-I", "1k"]);
    let mut s = srv.connect();
    call(&mut s, SET, b"big", &set_extras(0, 0), b"old", 0);
    let big = vec![b'x'; 4096];
    let r = call(&mut s, SET, b"big", &set_extras(0, 0), &big, 0);
    assert_eq!(r.status, 3);
    // memcached drops the old value of a failed SET
    assert_eq!(call(&mut s, GET, b"big", &[], &[], 0).status, 1);
    // The body was skipped: the next command on this connection works,
    // also when the refused body arrives in pieces.
    let packet = req(SETQ, b"big", &set_extras(0, 0), &vec![b'y'; 100_000], 9, 0);
    let (a, b) = packet.split_at(30);
    s.write_all(a).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    s.write_all(b).unwrap();
    let r = read_resp(&mut s);
    assert_eq!((r.status, r.opaque), (3, 9));
    let ok = vec![b'z'; 1000];
    assert_eq!(
        call(&mut s, SET, b"ok", &set_extras(0, 0), &ok, 0).status,
        0
    );
    assert_eq!(call(&mut s, GET, b"ok", &[], &[], 0).value, ok);
}
