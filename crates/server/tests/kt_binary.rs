//! Kyoto Tycoon's binary protocol on the main port, against the real server.
//! Requests are written out here byte by byte from spex.html's layouts
//! (not with the server's own encoder), replies read the same way.

mod common;
use common::kt_bin::{keys_req, read_n, set_bulk, u32_at, ERROR, GET_BULK, REMOVE_BULK, SET_BULK};
use common::*;
use std::io::Write;
use std::net::TcpStream;
use std::time::{SystemTime, UNIX_EPOCH};

const NO_REPLY: u32 = 1;
/// `TimedDB::XTMAX`: the xt of a record that never expires.
const XT_MAX: i64 = (1 << 40) - 1;

/// A set_bulk or remove_bulk reply: the hit count, or None for 0xBF.
fn read_hits(s: &mut TcpStream, magic: u8) -> Option<u32> {
    match read_n(s, 1)[0] {
        ERROR => None,
        m => {
            assert_eq!(m, magic, "reply magic");
            Some(u32_at(&read_n(s, 4)))
        }
    }
}

#[derive(Debug, PartialEq)]
struct Rec {
    dbidx: u16,
    key: Vec<u8>,
    value: Vec<u8>,
    xt: i64,
}

/// A get_bulk reply: magic, hits u32, then per record dbidx u16, ksiz u32,
/// vsiz u32, xt i64, key, value. None for 0xBF.
fn read_get(s: &mut TcpStream) -> Option<Vec<Rec>> {
    match read_n(s, 1)[0] {
        ERROR => return None,
        m => assert_eq!(m, GET_BULK, "reply magic"),
    }
    let hits = u32_at(&read_n(s, 4));
    let mut recs = Vec::new();
    for _ in 0..hits {
        let h = read_n(s, 18);
        let dbidx = u16::from_be_bytes([h[0], h[1]]);
        let (ksiz, vsiz) = (u32_at(&h[2..]) as usize, u32_at(&h[6..]) as usize);
        let xt = i64::from_be_bytes(h[10..18].try_into().unwrap());
        let key = read_n(s, ksiz);
        let value = read_n(s, vsiz);
        recs.push(Rec {
            dbidx,
            key,
            value,
            xt,
        });
    }
    Some(recs)
}

fn get(s: &mut TcpStream, keys: &[&[u8]]) -> Option<Vec<Rec>> {
    let keys: Vec<(u16, &[u8])> = keys.iter().map(|k| (0, *k)).collect();
    s.write_all(&keys_req(GET_BULK, 0, &keys)).unwrap();
    read_get(s)
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn stat(srv: &Server, name: &str) -> u64 {
    Text::new(srv.connect()).stat(name)
}

#[test]
fn set_get_remove_bulk_with_counts_and_counters() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    let recs: [(u16, &[u8], &[u8], i64); 3] = [
        (0, b"k1", b"v1", i64::MAX),
        (0, b"k2", b"", i64::MAX),
        (0, b"k\0bin", &[0xff; 300], i64::MAX),
    ];
    s.write_all(&set_bulk(0, &recs)).unwrap();
    assert_eq!(read_hits(&mut s, SET_BULK), Some(3));
    let got = get(&mut s, &[b"k2", b"missing", b"k1", b"k\0bin"]).unwrap();
    let want = [
        (b"k2".to_vec(), b"".to_vec()),
        (b"k1".to_vec(), b"v1".to_vec()),
    ];
    for (r, (k, v)) in got.iter().zip(want) {
        assert_eq!((r.dbidx, &r.key, &r.value, r.xt), (0, &k, &v, XT_MAX));
    }
    assert_eq!(got.len(), 3);
    assert_eq!((&got[2].key[..], got[2].value.len()), (&b"k\0bin"[..], 300));
    // Only present keys count as removed.
    s.write_all(&keys_req(
        REMOVE_BULK,
        0,
        &[(0, b"k1"), (0, b"nope"), (0, b"k2")],
    ))
    .unwrap();
    assert_eq!(read_hits(&mut s, REMOVE_BULK), Some(2));
    assert_eq!(get(&mut s, &[b"k1", b"k2"]).unwrap(), vec![]);
    // An empty bulk is answered too.
    s.write_all(&keys_req(GET_BULK, 0, &[])).unwrap();
    assert_eq!(read_get(&mut s), Some(vec![]));
    // The memcached counters moved through the command layer.
    assert_eq!(stat(&srv, "cmd_set"), 3);
    assert_eq!(stat(&srv, "get_hits"), 3);
    assert_eq!(stat(&srv, "get_misses"), 3);
    assert_eq!(stat(&srv, "delete_hits"), 2);
    assert_eq!(stat(&srv, "delete_misses"), 1);
}

#[test]
fn no_reply_sends_nothing_but_applies() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    let mut batch = set_bulk(
        NO_REPLY,
        &[(0, b"a", b"1", i64::MAX), (0, b"b", b"2", i64::MAX)],
    );
    batch.extend(keys_req(REMOVE_BULK, NO_REPLY, &[(0, b"a")]));
    // A failing no-reply request (a play_script) is silent as well.
    batch.extend([0xB4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 0]);
    batch.extend(b"echo");
    // get_bulk ignores the flag: it always answers, and its answer is the first byte back.
    batch.extend(keys_req(GET_BULK, NO_REPLY, &[(0, b"a"), (0, b"b")]));
    s.write_all(&batch).unwrap();
    let got = read_get(&mut s).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!((&got[0].key[..], &got[0].value[..]), (&b"b"[..], &b"2"[..]));
}

#[test]
fn xt_is_relative_or_minus_absolute_as_in_kyoto_tycoon() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    let abs = now() + 5000;
    let recs: [(u16, &[u8], &[u8], i64); 3] = [
        (0, b"rel", b"v", 600),
        (0, b"abs", b"v", -abs),
        (0, b"past", b"v", -(now() - 10)),
    ];
    s.write_all(&set_bulk(0, &recs)).unwrap();
    // An already expired record is stored, as TimedDB does, but never seen.
    assert_eq!(read_hits(&mut s, SET_BULK), Some(3));
    let got = get(&mut s, &[b"rel", b"abs", b"past"]).unwrap();
    assert_eq!(got.len(), 2);
    let rel = got[0].xt - now();
    assert!(
        (598..=601).contains(&rel),
        "relative xt came back as now + {rel}"
    );
    assert_eq!(got[1].xt, abs);
}

#[test]
fn other_database_indexes_are_skipped_as_ktserver_does() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    let recs: [(u16, &[u8], &[u8], i64); 2] = [(1, b"x", b"one", -1), (0, b"x", b"zero", i64::MAX)];
    s.write_all(&set_bulk(0, &recs)).unwrap();
    assert_eq!(read_hits(&mut s, SET_BULK), Some(1));
    s.write_all(&keys_req(GET_BULK, 0, &[(7, b"x"), (0, b"x")]))
        .unwrap();
    let got = read_get(&mut s).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].dbidx, &got[0].value[..]), (0, &b"zero"[..]));
    s.write_all(&keys_req(REMOVE_BULK, 0, &[(2, b"x")]))
        .unwrap();
    assert_eq!(read_hits(&mut s, REMOVE_BULK), Some(0));
}

/// `dbidx` picks the database by its place on the command line; an index
/// past the last is skipped, as `ktserver` does.
#[test]
fn dbidx_selects_among_several_databases() {
    let srv = Server::start(&["-s", "*", "-s", "+"]);
    let mut s = srv.connect();
    let recs: [(u16, &[u8], &[u8], i64); 3] = [
        (0, b"x", b"zero", i64::MAX),
        (1, b"x", b"one", i64::MAX),
        (2, b"x", b"two", i64::MAX),
    ];
    s.write_all(&set_bulk(0, &recs)).unwrap();
    assert_eq!(read_hits(&mut s, SET_BULK), Some(2));
    s.write_all(&keys_req(GET_BULK, 0, &[(1, b"x"), (2, b"x"), (0, b"x")]))
        .unwrap();
    let got: Vec<(u16, Vec<u8>)> = read_get(&mut s)
        .unwrap()
        .into_iter()
        .map(|r| (r.dbidx, r.value))
        .collect();
    assert_eq!(got, [(1, b"one".to_vec()), (0, b"zero".to_vec())]);
    // The memcached protocols see the first database only.
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("get x\r\n"), "VALUE x 0 4");
    assert_eq!(t.line(), "zero");
    s.write_all(&keys_req(REMOVE_BULK, 0, &[(1, b"x"), (2, b"x")]))
        .unwrap();
    assert_eq!(read_hits(&mut s, REMOVE_BULK), Some(1));
    s.write_all(&keys_req(GET_BULK, 0, &[(1, b"x"), (0, b"x")]))
        .unwrap();
    assert_eq!(
        read_get(&mut s).unwrap().len(),
        1,
        "only database 0 keeps x"
    );
}

#[test]
fn play_script_errors_and_the_connection_goes_on() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    // magic, flags 0, nsiz 4, rnum 1, "echo", {ksiz 1, vsiz 1, "k", "v"}
    let mut req = vec![0xB4, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 1];
    req.extend(b"echo");
    req.extend([0, 0, 0, 1, 0, 0, 0, 1, b'k', b'v']);
    s.write_all(&req).unwrap();
    assert_eq!(read_n(&mut s, 1), [ERROR]);
    assert_eq!(get(&mut s, &[b"k"]), Some(vec![]));
}

#[test]
fn unknown_magic_hangs_up_silently() {
    let srv = Server::start(&[]);
    for first in [
        vec![0xBB],
        keys_req(GET_BULK, 0, &[])
            .into_iter()
            .chain([0xB2])
            .collect(),
    ] {
        let mut s = srv.connect();
        s.write_all(&first).unwrap();
        if first[0] == GET_BULK {
            assert_eq!(read_get(&mut s), Some(vec![]));
        }
        assert!(is_closed(&mut s), "still open after {first:x?}");
    }
}

#[test]
fn sizes_over_the_item_limit_are_refused_and_close() {
    let srv = Server::start(&["-I", "1k"]);
    let big = vec![b'x'; 1025];
    // A value over -I: 0xBF, nothing stored, closed (the body is never read).
    let mut s = srv.connect();
    let recs: [(u16, &[u8], &[u8], i64); 2] =
        [(0, b"ok", b"v", i64::MAX), (0, b"big", &big, i64::MAX)];
    s.write_all(&set_bulk(0, &recs)).unwrap();
    assert_eq!(read_n(&mut s, 1), [ERROR]);
    assert!(is_closed(&mut s));
    // The same with no-reply: closed without a byte.
    let mut s = srv.connect();
    s.write_all(&set_bulk(NO_REPLY, &recs)).unwrap();
    assert!(is_closed(&mut s));
    // A key declared at 4 GiB - 1 on get_bulk: refused from its head.
    let mut s = srv.connect();
    let mut req = keys_req(GET_BULK, 0, &[]);
    req[8] = 1;
    req.extend([0, 0, 0xff, 0xff, 0xff, 0xff]);
    s.write_all(&req).unwrap();
    assert_eq!(read_n(&mut s, 1), [ERROR]);
    assert!(is_closed(&mut s));
    let mut s = srv.connect();
    assert_eq!(
        get(&mut s, &[b"ok", b"big"]),
        Some(vec![]),
        "nothing was stored"
    );
}

#[test]
fn a_request_in_pieces_is_served_once_whole() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    s.set_nodelay(true).unwrap();
    let value = vec![7u8; 5000];
    let mut req = set_bulk(0, &[(0, b"slow", &value, i64::MAX), (0, b"s2", b"v", 100)]);
    req.extend(keys_req(GET_BULK, 0, &[(0, b"slow")]));
    for chunk in req.chunks(7) {
        s.write_all(chunk).unwrap();
    }
    assert_eq!(read_hits(&mut s, SET_BULK), Some(2));
    let got = read_get(&mut s).unwrap();
    assert_eq!(got[0].value, value);
}

/// In-process (no socket timing involved): a pipeline cut into reads of any
/// size is answered exactly as when it arrives at once.
#[test]
fn every_read_size_gives_the_same_replies() {
    use memstored_server::net::replay::replay;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let fresh = || {
        let db = memstored_engine::Db::open("*", true).unwrap();
        memstored_server::state::server::Server::standalone(std::sync::Arc::new(db))
    };
    let mut pipeline = set_bulk(
        0,
        &[
            (0, b"a", b"1", i64::MAX),
            (0, b"bb", &[9; 300], -2_000_000_000),
        ],
    );
    pipeline.extend(keys_req(GET_BULK, 0, &[(0, b"a"), (0, b"bb"), (0, b"c")]));
    pipeline.extend(keys_req(REMOVE_BULK, NO_REPLY, &[(0, b"a")]));
    pipeline.extend([0xB4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, b'f']);
    pipeline.extend(keys_req(REMOVE_BULK, 0, &[(0, b"a"), (0, b"bb")]));
    let whole = rt.block_on(async { replay(&fresh(), &[&pipeline]) });
    assert!(!whole.closed);
    // set_bulk's 5 bytes, get_bulk's 2 records, play_script's 0xBF, remove_bulk's 1 hit.
    assert_eq!(&whole.output[..5], &[SET_BULK, 0, 0, 0, 2]);
    assert_eq!(
        &whole.output[whole.output.len() - 6..],
        &[ERROR, REMOVE_BULK, 0, 0, 0, 1]
    );
    for cut in [1, 2, 3, 5, 8, 18, 19, 64, 333] {
        let chunks: Vec<&[u8]> = pipeline.chunks(cut).collect();
        let r = rt.block_on(async { replay(&fresh(), &chunks) });
        assert_eq!(r.output, whole.output, "reads of {cut} bytes");
        assert!(!r.closed);
    }
}

#[test]
fn read_only_answers_errors_and_reads_work() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("{}/ro.tkh", dir.path().display());
    {
        let srv = Server::start(&["-s", &store]);
        let mut s = srv.connect();
        s.write_all(&set_bulk(0, &[(0, b"k", b"v", i64::MAX)]))
            .unwrap();
        assert_eq!(read_hits(&mut s, SET_BULK), Some(1));
        assert!(srv.terminate().success());
    }
    let srv = Server::start(&["-s", &store, "--read-only"]);
    let mut s = srv.connect();
    s.write_all(&set_bulk(0, &[(0, b"k", b"w", i64::MAX)]))
        .unwrap();
    assert_eq!(read_hits(&mut s, SET_BULK), None);
    s.write_all(&keys_req(REMOVE_BULK, 0, &[(0, b"k")]))
        .unwrap();
    assert_eq!(read_hits(&mut s, REMOVE_BULK), None);
    let got = get(&mut s, &[b"k"]).unwrap();
    assert_eq!(got[0].value, b"v");
}

#[test]
fn a_server_requiring_sasl_refuses_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users");
    std::fs::write(&file, "alice:secret\n").unwrap();
    let srv = Server::start(&["--sasl-file", file.to_str().unwrap()]);
    let mut s = srv.connect();
    s.write_all(&set_bulk(0, &[(0, b"k", b"v", i64::MAX)]))
        .unwrap();
    assert!(is_closed(&mut s));
}

/// One store under every protocol: what set_bulk stores, memcached's text
/// protocol reads, and a memcached expiry comes back as the xt that names
/// the record's last live second.
#[test]
fn records_are_shared_with_the_memcached_protocols() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    s.write_all(&set_bulk(0, &[(0, b"shared", b"from-kt", i64::MAX)]))
        .unwrap();
    assert_eq!(read_hits(&mut s, SET_BULK), Some(1));
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("get shared\r\n"), "VALUE shared 0 7");
    assert_eq!(t.line(), "from-kt");
    assert_eq!(t.line(), "END");
    let at = now() + 10_000;
    assert_eq!(t.cmd(&format!("set mc 5 {at} 2\r\nhi\r\n")), "STORED");
    let got = get(&mut s, &[b"mc"]).unwrap();
    assert_eq!((&got[0].value[..], got[0].xt), (&b"hi"[..], at - 1));
}

/// A bulk request is applied one shard at a time (each shard's lock taken
/// once): records spread over every shard still come back in request
/// order, repeats and misses included, short values (lent by the engine and
/// copied into the reply) and long ones (referenced) alike, each with its
/// own xt; in memory and in a sharded file store (whose short values are
/// read where the log keeps them).
#[test]
fn bulk_requests_over_many_shards_keep_request_order() {
    let dir = tempfile::TempDir::new().unwrap();
    for name in ["*#num_shards=5", "t.tkt#num_shards=5"] {
        let srv = Server::start_in(dir.path(), &["-s", name]);
        bulk_requests_keep_request_order(&srv);
    }
}

fn bulk_requests_keep_request_order(srv: &Server) {
    let mut s = srv.connect();
    let keys: Vec<Vec<u8>> = (0..200).map(|i| format!("{i:08}").into_bytes()).collect();
    let values: Vec<Vec<u8>> = (0..200)
        .map(|i| vec![b'a' + (i % 26) as u8; if i % 7 == 0 { 5000 } else { i % 40 }])
        .collect();
    let xt = now() + 3600;
    let recs: Vec<(u16, &[u8], &[u8], i64)> = keys
        .iter()
        .zip(&values)
        .enumerate()
        // A negative xt is minus an absolute time.
        .map(|(i, (k, v))| (0, &k[..], &v[..], if i % 2 == 0 { -xt } else { XT_MAX }))
        .collect();
    s.write_all(&set_bulk(0, &recs)).unwrap();
    assert_eq!(read_hits(&mut s, SET_BULK), Some(200));
    // Backwards, with repeats and a miss between.
    let mut asked: Vec<&[u8]> = keys.iter().rev().map(|k| &k[..]).collect();
    asked.insert(50, b"missing");
    asked.push(&keys[3]);
    asked.push(&keys[3]);
    let got = get(&mut s, &asked).unwrap();
    let want: Vec<&[u8]> = asked.iter().copied().filter(|k| *k != b"missing").collect();
    assert_eq!(got.len(), want.len());
    for (r, k) in got.iter().zip(want) {
        let i: usize = std::str::from_utf8(k).unwrap().parse().unwrap();
        assert_eq!((&r.key[..], &r.value), (k, &values[i]));
        assert_eq!(
            r.xt,
            if i.is_multiple_of(2) { xt } else { XT_MAX },
            "xt of {i}"
        );
    }
    let odd: Vec<(u16, &[u8])> = keys
        .iter()
        .skip(1)
        .step_by(2)
        .map(|k| (0, &k[..]))
        .collect();
    s.write_all(&keys_req(REMOVE_BULK, 0, &odd)).unwrap();
    assert_eq!(read_hits(&mut s, REMOVE_BULK), Some(100));
    // The even ones are left; key 3 (asked twice more) is gone.
    assert_eq!(get(&mut s, &asked).unwrap().len(), 100);
}
