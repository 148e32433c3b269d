//! `--ulog-dir` (issue 18): writes over the text, binary, MessagePack-RPC
//! and Kyoto Tycoon (binary and HTTP) protocols all land in the update log,
//! in the order they were acknowledged; failed writes do not; SIGKILL then
//! restart appends after the last complete record; `stats` shows the log.

mod common;
use common::kt_http::{start_kt, Http};
use common::{call, rpc_request, rpc_response, set_extras, stat, Server, Text, DELETE, SET};
use memstored_engine::io::RealFs;
use memstored_engine::ulog::{read_dir, UlogOp, Update};
use memstored_protocol::rpc::Value;
use std::path::Path;
use std::sync::Arc;

fn read_log(dir: &Path) -> Vec<Update> {
    read_dir(Arc::new(RealFs), dir, 0)
        .expect("open the log")
        .map(|u| u.expect("a valid record"))
        .collect()
}

fn summary(us: &[Update]) -> Vec<(UlogOp, String, String)> {
    us.iter()
        .map(|u| {
            (
                u.op,
                String::from_utf8_lossy(&u.key).into_owned(),
                String::from_utf8_lossy(&u.value).into_owned(),
            )
        })
        .collect()
}

fn set(k: &str, v: &str) -> (UlogOp, String, String) {
    (UlogOp::Set, k.into(), v.into())
}

fn rm(k: &str) -> (UlogOp, String, String) {
    (UlogOp::Remove, k.into(), String::new())
}

fn rpc(s: &mut std::net::TcpStream, method: &str, params: &[&str]) -> Result<Value, Value> {
    let params: Vec<Value> = params.iter().map(|p| Value::from(*p)).collect();
    use std::io::Write;
    s.write_all(&rpc_request(1, method, &params)).unwrap();
    rpc_response(s)
}

/// A text command (CRLF added) and its first reply line.
fn cmd(t: &mut Text, c: &str) -> String {
    t.cmd(&format!("{c}\r\n"))
}

#[test]
fn writes_on_every_protocol_are_logged_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (srv, kt_port) = start_kt(&["--ulog-dir", d, "--server-id", "9"]);
    let mut t = Text::new(srv.connect());
    let mut b = srv.connect();
    let mut r = srv.connect();
    let mut kt = Http::connect(kt_port);

    assert_eq!(cmd(&mut t, "set t1 3 0 2\r\nv1"), "STORED");
    assert_eq!(cmd(&mut t, "add t1 0 0 1\r\nx"), "NOT_STORED"); // not a change
    assert_eq!(cmd(&mut t, "append t1 0 0 1\r\n+"), "STORED");
    assert_eq!(cmd(&mut t, "touch t1 1000"), "TOUCHED");
    assert_eq!(
        cmd(&mut t, "incr t1 1"),
        "CLIENT_ERROR cannot increment or decrement non-numeric value"
    );
    assert_eq!(cmd(&mut t, "set n 0 0 1\r\n5"), "STORED");
    assert_eq!(cmd(&mut t, "incr n 2"), "7");
    assert_eq!(
        call(&mut b, SET, b"b1", &set_extras(5, 0), b"bv", 0).status,
        0
    );
    assert_eq!(call(&mut b, DELETE, b"b1", &[], b"", 0).status, 0);
    assert_eq!(call(&mut b, DELETE, b"b1", &[], b"", 0).status, 1); // absent
    assert!(rpc(&mut r, "set", &["r1", "rv"]).is_ok());
    assert!(rpc(&mut r, "remove", &["t1"]).is_ok());
    assert_eq!(
        kt.binary(&common::kt_http::kt_set_bulk(b"kb", b"kbv"), 5),
        [0xB8, 0, 0, 0, 1]
    );
    assert_eq!(kt.request("PUT", "/kh", &[], b"khv").status, 201);
    assert_eq!(kt.request("DELETE", "/kb", &[], b"").status, 204);
    assert_eq!(cmd(&mut t, "flush_all"), "OK");
    assert_eq!(cmd(&mut t, "set last 0 0 1\r\nz"), "STORED");

    let log = read_log(dir.path());
    assert_eq!(
        summary(&log),
        vec![
            set("t1", "v1"),
            set("t1", "v1+"),
            set("t1", "v1+"),
            set("n", "5"),
            set("n", "7"),
            set("b1", "bv"),
            rm("b1"),
            set("r1", "rv"),
            rm("t1"),
            set("kb", "kbv"),
            set("kh", "khv"),
            rm("kb"),
            (UlogOp::Clear, String::new(), String::new()),
            set("last", "z"),
        ]
    );
    assert_eq!(log[0].flags, 3);
    assert_eq!(
        (log[2].flags, log[2].expires_at > 0),
        (3, true),
        "touch logs the expiry"
    );
    assert_eq!(log[5].flags, 5);
    assert!(log.iter().all(|u| u.server_id == 9 && u.dbm_index == 0));
    assert!(log.windows(2).all(|w| w[0].timestamp < w[1].timestamp));
    assert_eq!(stat(&srv, "ulog_records"), log.len() as u64);
    assert_eq!(stat(&srv, "ulog_segments"), 1);
    let size = std::fs::metadata(dir.path().join("ulog-0000000001.log"))
        .unwrap()
        .len();
    assert_eq!(stat(&srv, "ulog_bytes"), size);
}

#[test]
fn kill9_then_restart_appends_after_the_last_complete_record() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let flags = [
        "--ulog-dir",
        d,
        "--ulog-segment-size",
        "4k",
        "--ulog-keep",
        "100",
    ];
    let srv = Server::start(&flags);
    let mut t = Text::new(srv.connect());
    let value = "x".repeat(100);
    for i in 0..60 {
        assert_eq!(
            cmd(&mut t, &format!("set k{i:02} 0 0 100\r\n{value}")),
            "STORED"
        );
    }
    let segments = stat(&srv, "ulog_segments");
    assert!(segments >= 2, "4k segments rotate: {segments}");
    srv.kill9();
    let before = read_log(dir.path());
    assert_eq!(
        before.len(),
        60,
        "every acknowledged write survived SIGKILL"
    );
    // A crash in the middle of the last record's write: tear it.
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len() as u64, segments);
    let last = files.last().unwrap();
    let len = std::fs::metadata(last).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(last).unwrap();
    f.set_len(len - 7).unwrap();
    drop(f);

    let srv = Server::start(&flags);
    assert_eq!(stat(&srv, "ulog_records"), 59);
    let mut t = Text::new(srv.connect());
    assert_eq!(cmd(&mut t, "set after 0 0 1\r\n!"), "STORED");
    assert_eq!(cmd(&mut t, "delete after"), "DELETED");
    let after = read_log(dir.path());
    assert_eq!(after[..59], before[..59]);
    assert_eq!(summary(&after[59..]), vec![set("after", "!"), rm("after")]);
    assert!(after[59].timestamp > before[58].timestamp);
    assert_eq!(stat(&srv, "ulog_records"), 61);
}

#[test]
fn without_ulog_dir_nothing_is_logged_and_stats_has_no_ulog_lines() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(cmd(&mut t, "set a 0 0 1\r\n1"), "STORED");
    let stats = common::stats(&srv);
    assert!(
        stats.iter().all(|(k, _)| !k.starts_with("ulog_")),
        "{stats:?}"
    );
}
