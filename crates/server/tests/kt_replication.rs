//! Kyoto Tycoon's replication command (binary protocol 0xB1) against a real
//! master with an update log, spoken byte by byte from spex.html's layout
//! and Kyoto Tycoon's update-log message (see
//! `memstored_protocol::kt::ulog` for the table), as `ktremotemgr slave` or
//! a `ktserver -mhost` slave reads it.

mod common;
use common::kt_bin::{read_n, set_bulk, u32_at, ERROR};
use common::*;
use memstored_protocol::rpc::Value;
use std::io::Write;
use std::net::TcpStream;

const REPLICATION: u8 = 0xB1;
const NOP: u8 = 0xB0;
const WHITE_SID: u32 = 1;
const XT_MAX: u64 = (1 << 40) - 1;

fn master(dir: &std::path::Path, stores: &[String]) -> Server {
    let mut args: Vec<String> = Vec::new();
    for s in stores {
        args.extend(["-s".to_string(), dir.join(s).display().to_string()]);
    }
    let ulog = dir.join("ulog").display().to_string();
    args.extend(["--ulog-dir".into(), ulog, "--server-id".into(), "1".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start(&args)
}

/// magic, flags u32, ts u64, sid u16.
fn request(s: &mut TcpStream, flags: u32, ts: u64, sid: u16) {
    let mut req = vec![REPLICATION];
    req.extend(flags.to_be_bytes());
    req.extend(ts.to_be_bytes());
    req.extend(sid.to_be_bytes());
    s.write_all(&req).unwrap();
}

#[derive(Debug, PartialEq)]
enum Frame {
    /// ts, and the message: sid, dbid, then op and the rest.
    Log {
        ts: u64,
        sid: u16,
        dbid: u16,
        body: Vec<u8>,
    },
    /// A message of size 0.
    Skipped {
        ts: u64,
    },
    CaughtUp {
        ts: u64,
    },
}

fn u64_of(b: &[u8]) -> u64 {
    u64::from_be_bytes(b.try_into().unwrap())
}

fn next(s: &mut TcpStream) -> Frame {
    match read_n(s, 1)[0] {
        REPLICATION => {
            let head = read_n(s, 12);
            let ts = u64_of(&head[..8]);
            let size = u32_at(&head[8..]) as usize;
            if size == 0 {
                return Frame::Skipped { ts };
            }
            let msg = read_n(s, size);
            Frame::Log {
                ts,
                sid: u16::from_be_bytes([msg[0], msg[1]]),
                dbid: u16::from_be_bytes([msg[2], msg[3]]),
                body: msg[4..].to_vec(),
            }
        }
        NOP => Frame::CaughtUp {
            ts: u64_of(&read_n(s, 8)),
        },
        other => panic!("unexpected magic {other:#x}"),
    }
}

/// The next message, answering caught-up frames on the way as a slave does.
fn next_log(s: &mut TcpStream) -> Frame {
    loop {
        match next(s) {
            Frame::CaughtUp { .. } => s.write_all(&[REPLICATION]).unwrap(),
            f => return f,
        }
    }
}

/// A set message's body: op 0xA1, ksiz, vsiz (one-byte varnums here), key,
/// value (after 5 bytes of expiration time unless `persistent`).
fn set_body(key: &[u8], value: &[u8], xt: Option<u64>) -> Vec<u8> {
    let mut b = vec![0xA1, key.len() as u8];
    let xt_bytes = xt
        .map(|x| x.to_be_bytes()[3..].to_vec())
        .unwrap_or_default();
    b.push((xt_bytes.len() + value.len()) as u8);
    b.extend(key);
    b.extend(xt_bytes);
    b.extend(value);
    b
}

fn rpc(s: &mut TcpStream, method: &str, params: &[Value]) -> Value {
    s.write_all(&rpc_request(1, method, params)).unwrap();
    rpc_response(s).expect(method)
}

fn now_ns() -> u64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    d.as_nanos() as u64
}

#[test]
fn a_slave_gets_every_protocols_writes_as_kyoto_tycoon_messages() {
    let dir = tempfile::tempdir().unwrap();
    let stores = ["main.tkh".to_string(), "kept.tkh#ktopts=p".to_string()];
    let srv = master(dir.path(), &stores);
    let before = now_ns();
    let mut t = Text::new(srv.connect());
    // Flags have no place in a message; the expiry does.
    assert_eq!(t.cmd("set text 5 0 2\r\nhi\r\n"), "STORED");
    let xt = before / 1_000_000_000 + 3600;
    assert_eq!(t.cmd(&format!("set timed 0 {xt} 1\r\nt\r\n")), "STORED");
    assert_eq!(t.cmd("delete text\r\n"), "DELETED");
    let mut kt = srv.connect();
    // A persistent database (`ktopts=p`) logs the bare value.
    let recs: [(u16, &[u8], &[u8], i64); 1] = [(1, b"p", b"val", 60)];
    kt.write_all(&set_bulk(0, &recs)).unwrap();
    assert_eq!(read_n(&mut kt, 5), [0xB8, 0, 0, 0, 1]);
    let mut r = srv.connect();
    rpc(&mut r, "set", &["rpc".into(), "v".into()]);

    let mut slave = srv.connect();
    request(&mut slave, 0, 0, 9);
    assert_eq!(read_n(&mut slave, 1), [REPLICATION]);
    let want = [
        (0, set_body(b"text", b"hi", Some(XT_MAX))),
        // memcached's exptime is the first second the item is gone; KT's
        // xt the last one it is alive.
        (0, set_body(b"timed", b"t", Some(xt - 1))),
        (0, vec![0xA2, 4, b't', b'e', b'x', b't']),
        (1, set_body(b"p", b"val", None)),
        (0, set_body(b"rpc", b"v", Some(XT_MAX))),
    ];
    let mut last_ts = 0;
    for (want_db, want_body) in want {
        let Frame::Log {
            ts,
            sid,
            dbid,
            body,
        } = next_log(&mut slave)
        else {
            panic!("not a message")
        };
        assert_eq!((sid, dbid, &body), (1, want_db, &want_body));
        // Kyoto Tycoon's clock: nanoseconds, increasing.
        assert!(ts > last_ts && ts >= before / 1000 * 1000, "{ts}");
        last_ts = ts;
    }
    // Caught up: the clock, which the slave answers.
    let Frame::CaughtUp { ts } = next(&mut slave) else {
        panic!("not caught up")
    };
    assert!(ts >= last_ts, "{ts} < {last_ts}");
    slave.write_all(&[REPLICATION]).unwrap();
    // Live writes follow.
    assert_eq!(t.cmd("set live 0 0 1\r\nl\r\n"), "STORED");
    let Frame::Log { body, .. } = next_log(&mut slave) else {
        panic!("not a message")
    };
    assert_eq!(body, set_body(b"live", b"l", Some(XT_MAX)));
    // The master counts the slave as caught up once it answers the next
    // caught-up frame.
    assert!(matches!(next(&mut slave), Frame::CaughtUp { .. }));
    slave.write_all(&[REPLICATION]).unwrap();
    wait_until(&srv, "the slave's answer", |m| {
        stat(m, "repl_replica_0_lag_records") == 0
            && stat(m, "repl_replica_0_server_id") == 9
            && stat(m, "repl_replica_0_sent_records") == 6
    });

    // A slave resuming after the last message it read gets what follows.
    let mut again = srv.connect();
    request(&mut again, 0, last_ts, 9);
    assert_eq!(read_n(&mut again, 1), [REPLICATION]);
    let Frame::Log { body, .. } = next_log(&mut again) else {
        panic!("not a message")
    };
    assert_eq!(body, set_body(b"live", b"l", Some(XT_MAX)));
}

/// A field of an RPC reply map, as text.
fn field(v: &Value, name: &str) -> Option<String> {
    let Value::Map(m) = v else { return None };
    m.iter()
        .find(|(k, _)| memstored_protocol::rpc::value_bytes(k) == Some(name.as_bytes()))
        .and_then(|(_, v)| memstored_protocol::rpc::value_bytes(v))
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

/// A record's expiry reaches a slave as the `xt` the master's `get`
/// reports, as ktserver's TimedDB logs it, so that master and slave expire
/// it in the same second (issue 45: the slave's xt was one second later).
#[test]
fn a_slave_gets_the_xt_the_master_reports() {
    let dir = tempfile::tempdir().unwrap();
    let srv = master(dir.path(), &["main.tkh".to_string()]);
    let xt = now_ns() / 1_000_000_000 + 3600;
    let mut r = srv.connect();
    let opts = |xt: String| Value::Map(vec![("xt".into(), xt.into())]);
    rpc(
        &mut r,
        "set",
        &["abs".into(), "v".into(), opts(format!("-{xt}"))],
    );
    rpc(
        &mut r,
        "set",
        &["rel".into(), "w".into(), opts("600".into())],
    );
    let abs = rpc(&mut r, "get", &["abs".into()]);
    assert_eq!(field(&abs, "xt"), Some(xt.to_string()), "{abs:?}");
    let rel = rpc(&mut r, "get", &["rel".into()]);
    let rel_xt: u64 = field(&rel, "xt")
        .and_then(|x| x.parse().ok())
        .expect("rel's xt");

    let mut slave = srv.connect();
    request(&mut slave, 0, 0, 9);
    assert_eq!(read_n(&mut slave, 1), [REPLICATION]);
    for (key, value, want) in [(b"abs", b"v", xt), (b"rel", b"w", rel_xt)] {
        let Frame::Log { body, .. } = next_log(&mut slave) else {
            panic!("not a message")
        };
        assert_eq!(body, set_body(key, value, Some(want)));
    }
}

#[test]
fn server_ids_are_left_out_or_picked_as_ktserver_does() {
    let dir = tempfile::tempdir().unwrap();
    let srv = master(dir.path(), &["m.tkh".to_string()]);
    let mut t = Text::new(srv.connect());
    for i in 0..300 {
        assert_eq!(t.cmd(&format!("set k{i} 0 0 1\r\nx\r\n")), "STORED");
    }
    // Asking as server 1 (the master's own id): its messages are left out,
    // and after 256 of them an empty one moves the position on.
    let mut own = srv.connect();
    request(&mut own, 0, 0, 1);
    assert_eq!(read_n(&mut own, 1), [REPLICATION]);
    let Frame::Skipped { ts } = next_log(&mut own) else {
        panic!("not an empty message")
    };
    assert!(ts > 0);
    assert!(matches!(next(&mut own), Frame::CaughtUp { .. }));
    // With flag 0x01 only server 1's are sent: all 300.
    let mut white = srv.connect();
    request(&mut white, WHITE_SID, 0, 1);
    assert_eq!(read_n(&mut white, 1), [REPLICATION]);
    for i in 0..300 {
        let Frame::Log { sid, body, .. } = next_log(&mut white) else {
            panic!("not a message")
        };
        assert_eq!(sid, 1);
        assert_eq!(
            body,
            set_body(format!("k{i}").as_bytes(), b"x", Some(XT_MAX))
        );
    }
}

#[test]
fn a_slave_that_stops_answering_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let srv = master(dir.path(), &["m.tkh".to_string()]);
    let mut mute = srv.connect();
    request(&mut mute, 0, 0, 9);
    assert_eq!(read_n(&mut mute, 1), [REPLICATION]);
    assert!(matches!(next(&mut mute), Frame::CaughtUp { .. }));
    wait_until(&srv, "the stream", |m| stat(m, "repl_streams") == 1);
    // Never answered: dropped after the stall limit (10 s), and its place
    // is given back.
    wait_until(&srv, "the mute slave to be dropped", |m| {
        stat(m, "repl_streams") == 0
    });
    // A byte other than 0xB1 in answer ends the stream at once.
    let mut wrong = srv.connect();
    request(&mut wrong, 0, 0, 9);
    assert_eq!(read_n(&mut wrong, 1), [REPLICATION]);
    wait_until(&srv, "the second stream", |m| stat(m, "repl_streams") == 1);
    wrong.write_all(&[0x00]).unwrap();
    wait_until(&srv, "the stream to end", |m| stat(m, "repl_streams") == 0);
    assert!(srv.terminate().success());
}

#[test]
fn without_an_update_log_replication_is_refused_and_hangs_up() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    request(&mut s, 0, 0, 1);
    assert_eq!(read_n(&mut s, 1), [ERROR]);
    assert!(is_closed(&mut s));
}

#[test]
fn a_slave_behind_what_retention_removed_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("m.tkh").display().to_string();
    let ulog = dir.path().join("ulog").display().to_string();
    let srv = Server::start(&[
        "-s",
        &store,
        "--ulog-dir",
        &ulog,
        "--server-id",
        "1",
        "--ulog-segment-size",
        "4k",
        "--ulog-keep",
        "2",
    ]);
    let mut t = Text::new(srv.connect());
    let value = "v".repeat(100);
    for i in 0..200 {
        let set = format!("set k{i} 0 0 100\r\n{value}\r\n");
        assert_eq!(t.cmd(&set), "STORED");
    }
    let dropped = stat(&srv, "ulog_dropped_timestamp");
    assert!(dropped > 0);
    // Having read nothing, or everything before the newest removed update
    // (KT's `ts` is the last one read): 0xBF, hung up.
    for ts in [0, (dropped - 1) * 1000] {
        let mut s = srv.connect();
        request(&mut s, 0, ts, 9);
        assert_eq!(read_n(&mut s, 1), [ERROR]);
        assert!(is_closed(&mut s));
    }
    // Having read it: served.
    let mut s = srv.connect();
    request(&mut s, 0, dropped * 1000, 9);
    assert_eq!(read_n(&mut s, 1), [REPLICATION]);
}

#[test]
fn the_kyoto_tycoon_port_serves_the_command_too() {
    let dir = tempfile::tempdir().unwrap();
    let ulog = dir.path().join("ulog").display().to_string();
    let store = dir.path().join("m.tkh").display().to_string();
    let (srv, kt_port) =
        common::kt_http::start_kt(&["-s", &store, "--ulog-dir", &ulog, "--server-id", "1"]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("set a 0 0 1\r\n1\r\n"), "STORED");
    let mut slave = TcpStream::connect(("127.0.0.1", kt_port)).unwrap();
    request(&mut slave, 0, 0, 9);
    assert_eq!(read_n(&mut slave, 1), [REPLICATION]);
    let Frame::Log { body, .. } = next_log(&mut slave) else {
        panic!("not a message")
    };
    assert_eq!(body, set_body(b"a", b"1", Some(XT_MAX)));
}

/// Kyoto Tycoon streams share the server-wide cap of 32 with the RPC ones
/// (each costs two threads): a 33rd request is answered 0xBF, and a place
/// freed is taken again.
#[test]
fn kyoto_tycoon_streams_are_capped_with_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let srv = master(dir.path(), &["m.tkh".to_string()]);
    // Live slaves: silent ones would give their places up.
    let open = || {
        let mut s = srv.connect();
        request(&mut s, 0, 0, 9);
        assert_eq!(read_n(&mut s, 1), [REPLICATION]);
        answering(s)
    };
    let mut streams: Vec<TcpStream> = (0..32).map(|_| open()).collect();
    wait_until(&srv, "32 streams", |m| stat(m, "repl_streams") == 32);
    let mut refused = srv.connect();
    request(&mut refused, 0, 0, 9);
    assert_eq!(read_n(&mut refused, 1), [ERROR]);
    assert!(is_closed(&mut refused));
    let gone = streams.pop().unwrap();
    gone.shutdown(std::net::Shutdown::Both).unwrap();
    wait_until(&srv, "a place freed", |m| stat(m, "repl_streams") == 31);
    streams.push(open());
    wait_until(&srv, "32 streams again", |m| stat(m, "repl_streams") == 32);
    // Other clients are served meanwhile.
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("set after 0 0 1\r\nx\r\n"), "STORED");
}

/// `s`, a stream of an empty store, answered as a live slave answers: each
/// caught-up frame with 0xB1 (until the socket is shut down).
fn answering(s: TcpStream) -> TcpStream {
    use std::io::Read;
    let mut r = s.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut frame = [0u8; 9];
        while r.read_exact(&mut frame).is_ok() && frame[0] == NOP {
            if r.write_all(&[REPLICATION]).is_err() {
                break;
            }
        }
    });
    s
}
