//! A memstored replica of a Kyoto Tycoon master (`--replicate-from
//! kt://HOST:PORT`): it speaks Kyoto Tycoon's replication command (0xB1) as
//! `ktserver -mhost` does. In CI the master is memstored's own Kyoto Tycoon
//! stream (`kt_replication.rs` checks its bytes); against a real
//! `ktserver` it is `scripts/anchors/kt-migrate.sh`. A hostile master (a
//! test listener sending garbage) gets a clear error and a backoff.

mod common;
use common::hostile::assert_grew_at_most;
use common::*;
use memstored_engine::Db;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

fn master(dir: &Path) -> Server {
    let (store, ulog) = (path(dir, "master.tkh"), path(dir, "master-ulog"));
    Server::start(&["-s", &store, "--ulog-dir", &ulog, "--server-id", "1"])
}

fn replica(dir: &Path, master_port: u16) -> Server {
    let store = path(dir, "replica.tkh");
    kt_replica(master_port, &path(dir, "replica-ulog"), &["-s", &store])
}

/// memstored with server id 2 following `kt://127.0.0.1:PORT`, then `extra`.
fn kt_replica(master_port: u16, ulog: &str, extra: &[&str]) -> Server {
    let from = format!("kt://127.0.0.1:{master_port}");
    let mut args = vec!["--ulog-dir", ulog, "--server-id", "2"];
    args.extend(["--replicate-from", &from]);
    args.extend(extra);
    Server::start(&args)
}

/// The replica has re-logged every update of the master's log, once each.
fn caught_up(master: &Server, replica: &Server) -> bool {
    stat(replica, "ulog_records") >= stat(master, "ulog_records")
}

fn get(server: &Server, key: &str) -> Option<String> {
    let mut t = Text::new(server.connect());
    let head = t.cmd(&format!("get {key}\r\n"));
    if head == "END" {
        return None;
    }
    let value = t.line();
    assert_eq!(t.line(), "END");
    Some(value)
}

/// Sets `{prefix}{i}` for i in `range`, every third with an expiry an hour
/// away, and deletes every fifth; returns how many updates that logged.
fn write(server: &Server, prefix: &str, range: std::ops::Range<usize>) -> u64 {
    let mut t = Text::new(server.connect());
    let mut updates = 0;
    for i in range {
        let exp = if i % 3 == 0 { 3600 } else { 0 };
        let set = format!("set {prefix}{i} 0 {exp} 5\r\nv{i:04}\r\n");
        assert_eq!(t.cmd(&set), "STORED");
        updates += 1;
        if i % 5 == 0 {
            assert_eq!(t.cmd(&format!("delete {prefix}{i}\r\n")), "DELETED");
            updates += 1;
        }
    }
    updates
}

/// Every record of a stopped server's store: key → (value, expires_at).
fn dump(path: &Path) -> BTreeMap<Vec<u8>, (Vec<u8>, u64)> {
    let db = Db::open(path.to_str().unwrap(), false).expect("open the store");
    let mut out = BTreeMap::new();
    let mut c = db.cursor();
    c.first().unwrap();
    while let Ok((k, r)) = c.record() {
        out.insert(k, (r.value.to_vec(), r.meta.expires_at));
        c.next().unwrap();
    }
    out
}

#[test]
fn a_replica_follows_a_kyoto_tycoon_stream_resumes_after_a_restart_and_is_promoted() {
    let dir = tempfile::tempdir().unwrap();
    let m = master(dir.path());
    // Before the replica: records, a clear (flush_all), records again.
    write(&m, "gone", 0..20);
    assert_eq!(Text::new(m.connect()).cmd("flush_all\r\n"), "OK");
    write(&m, "a", 0..40);
    let r = replica(dir.path(), m.port);
    wait_until(&r, "the replica to catch up", |r| caught_up(&m, r));
    assert_eq!(get(&r, "a1").as_deref(), Some("v0001"));
    assert_eq!(get(&r, "gone1"), None, "the clear arrived");
    assert_eq!(get(&r, "a5"), None, "the delete arrived");
    // Still a replica: writes from clients are refused.
    let mut t = Text::new(r.connect());
    assert_eq!(t.cmd("set x 0 0 1\r\nx\r\n"), "SERVER_ERROR read only");
    // Live.
    write(&m, "b", 0..40);
    wait_until(&r, "live writes to arrive", |r| caught_up(&m, r));
    assert_eq!(get(&r, "b39").as_deref(), Some("v0039"));

    // A restart resumes after the last message read: nothing is lost, and
    // nothing arrives twice (the replica's own log re-logs each update once).
    assert!(r.terminate().success(), "{}", r.diagnose());
    let rts = std::fs::read_to_string(dir.path().join("replica-ulog/kt-replication.rts")).unwrap();
    assert_eq!(rts.len(), 21, "{rts:?}: ktserver's -rts layout");
    let while_down = write(&m, "c", 0..30);
    let r = replica(dir.path(), m.port);
    wait_until(&r, "the restarted replica to catch up", |r| {
        caught_up(&m, r)
    });
    assert_eq!(stat(&r, "ulog_records"), stat(&m, "ulog_records"));
    assert_eq!(stat(&r, "repl_applied_records"), while_down);
    assert_eq!(get(&r, "c29").as_deref(), Some("v0029"));

    // Promoted: it follows nobody and takes writes.
    let mut s = r.connect();
    s.write_all(&rpc_request(1, "changemaster", &[])).unwrap();
    rpc_response(&mut s).expect("changemaster");
    wait_until(&r, "the stream to end", |r| stat(r, "repl_connected") == 0);
    let mut t = Text::new(r.connect());
    assert_eq!(t.cmd("set after 0 0 8\r\npromoted\r\n"), "STORED");
    let mut t = Text::new(m.connect());
    assert_eq!(t.cmd("set on-the-old-master 0 0 1\r\nx\r\n"), "STORED");
    assert_eq!(get(&r, "after").as_deref(), Some("promoted"));

    // Record by record, expiry included: the master's store as it was
    // when the replica was promoted.
    assert!(r.terminate().success(), "{}", r.diagnose());
    assert!(m.terminate().success(), "{}", m.diagnose());
    let mut master = dump(&dir.path().join("master.tkh"));
    let mut replica = dump(&dir.path().join("replica.tkh"));
    assert!(master.remove(&b"on-the-old-master"[..]).is_some());
    assert_eq!(
        replica.remove(&b"after"[..]).map(|v| v.0),
        Some(b"promoted".to_vec())
    );
    assert!(
        master.values().filter(|v| v.1 != 0).count() > 10,
        "with expiry"
    );
    assert_eq!(master, replica);
}

/// What a test master sends after reading the replica's request.
struct Script {
    bytes: Vec<u8>,
    /// Junk sent after `bytes` (as long as the replica reads it).
    junk: usize,
    /// What the replica says about it (its stderr).
    says: &'static str,
}

fn log_frame(ts: u64, message: &[u8]) -> Vec<u8> {
    let mut f = vec![0xB1];
    f.extend(ts.to_be_bytes());
    f.extend((message.len() as u32).to_be_bytes());
    f.extend(message);
    f
}

/// A set of `key` in database 0 by server 7, without expiry.
fn set_message(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut m = vec![0, 7, 0, 0, 0xA1, key.len() as u8, 5 + value.len() as u8];
    m.extend(key);
    m.extend([0xff; 5]);
    m.extend(value);
    m
}

fn scripts() -> Vec<Script> {
    let accepted = |rest: &[u8]| [&[0xB1][..], rest].concat();
    let mut huge = vec![0xB1, 0, 0, 0, 0, 0, 0, 0, 9];
    huge.extend(0xFFFF_FFF0u32.to_be_bytes());
    let mut truncated = log_frame(5, &set_message(b"key", b"value"));
    truncated.truncate(20);
    vec![
        Script {
            bytes: b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec(),
            junk: 0,
            says: "answered 0x48 to the replication command",
        },
        Script {
            bytes: vec![0xBF],
            junk: 0,
            says: "the master has no update log",
        },
        Script {
            bytes: accepted(&[0x99; 16]),
            junk: 0,
            says: "a frame starting with 0x99",
        },
        Script {
            bytes: accepted(&truncated),
            junk: 0,
            says: "closed the connection in the middle of a frame",
        },
        Script {
            bytes: accepted(&huge),
            junk: 64 << 20,
            says: "a message of 4294967280 bytes, over this replica's -I",
        },
        Script {
            bytes: accepted(&log_frame(6, &[0, 7, 0, 0, 0xA1, 100, 1, b'k'])),
            junk: 0,
            says: "sizes do not add up",
        },
        Script {
            bytes: accepted(&[0xB0, 0, 0, 0, 0, 0, 0, 0]),
            junk: 0,
            says: "in the middle of a frame (8 bytes of it read)",
        },
    ]
}

/// Serves `scripts` to the replica's connections in turn, then a good
/// record and a caught-up frame to every later one; sends each
/// connection's time and request on `seen`.
fn hostile_master(listener: TcpListener, seen: mpsc::Sender<(Instant, Vec<u8>)>) {
    let scripts = scripts();
    for (i, conn) in listener.incoming().enumerate() {
        let Ok(mut s) = conn else { return };
        let at = Instant::now();
        let mut req = [0u8; 15];
        s.set_read_timeout(Some(Duration::from_secs(10))).ok();
        if s.read_exact(&mut req).is_err() || seen.send((at, req.to_vec())).is_err() {
            return;
        }
        let Some(script) = scripts.get(i) else {
            let good = log_frame(1_000_000_000, &set_message(b"good", b"after all"));
            let _ = s.write_all(&[&[0xB1][..], &good, &[0xB0; 1], &[0; 8]].concat());
            // Hold it open until the replica goes.
            let _ = s.read(&mut [0u8; 64]);
            let _ = s.read(&mut [0u8; 64]);
            continue;
        };
        let _ = s.write_all(&script.bytes);
        let junk = vec![0x5a; 1 << 20];
        for _ in 0..script.junk >> 20 {
            if s.write_all(&junk).is_err() {
                break;
            }
        }
    }
}

#[test]
fn a_hostile_master_gets_a_clear_error_and_a_backoff_never_a_crash() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, seen) = mpsc::channel();
    std::thread::spawn(move || hostile_master(listener, tx));
    let dir = tempfile::tempdir().unwrap();
    let ulog = path(dir.path(), "ulog");
    let r = kt_replica(port, &ulog, &["-I", "1m"]);
    let before = r.rss_kib();
    let n = scripts().len();
    let mut times = Vec::new();
    for i in 0..=n {
        let (at, req) = seen
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("connection {i}: {e}; {}", r.diagnose()));
        // magic, flags 0, from timestamp 0 (nothing applied), server id 2.
        let mut want = vec![0xB1, 0, 0, 0, 0];
        want.extend(0u64.to_be_bytes());
        want.extend(2u16.to_be_bytes());
        assert_eq!(req, want, "connection {i}");
        times.push(at);
    }
    wait_until(&r, "the good record after the garbage", |r| {
        get(r, "good").is_some()
    });
    assert_eq!(get(&r, "good").as_deref(), Some("after all"));
    let log = String::from_utf8_lossy(&r.stderr()).to_string();
    for s in scripts() {
        assert!(log.contains(s.says), "no {:?} in:\n{log}", s.says);
    }
    // It backed off (100 ms, doubling, while nothing is applied).
    for w in times.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            gap >= Duration::from_millis(90),
            "reconnected after {gap:?}"
        );
    }
    assert!(times[n] - times[n - 1] >= Duration::from_millis(1500));
    // The 4 GiB message was refused at its header, not buffered.
    assert_grew_at_most(&r, before, 16, "a hostile master");
    assert_eq!(stat(&r, "repl_connected"), 1);
}

#[test]
fn a_kyoto_tycoon_replica_needs_a_server_id_other_than_0() {
    // ktserver's -sid is 0 unless given, and a master leaves out what was
    // logged under the asking slave's id: such a replica would apply nothing.
    let dir = tempfile::tempdir().unwrap();
    let ulog = path(dir.path(), "ulog");
    let log = dir.path().join("stderr");
    let mut child = common::memstored()
        .args(["-l", "127.0.0.1:0", "--ulog-dir", &ulog])
        .args(["--replicate-from", "kt://127.0.0.1:1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // Bounded: a server that wrongly starts must fail the test, not hang it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("it started: {}", std::fs::read_to_string(&log).unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(!status.success(), "{err}");
    assert!(err.contains("needs a --server-id other than 0"), "{err}");
}
