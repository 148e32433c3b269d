//! The Kyoto Tycoon port tells binary requests from HTTP ones per request,
//! as `ktserver` does, so one connection may alternate (KT's `RemoteDB`
//! does); its connections count against `-c`; it refuses to start beside
//! `--sasl-file`.

mod common;
use common::kt_http::{start_kt, Http};
use common::Text;
use memstored_server::net::listener::TOO_MANY;
use std::io::{Read, Write};

/// get_bulk of one key; the reply's value when there is one.
fn bin_get(h: &mut Http, key: &[u8]) -> Option<Vec<u8>> {
    let mut req = vec![0xBA, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0];
    req.extend((key.len() as u32).to_be_bytes());
    req.extend(key);
    let head = h.binary(&req, 5);
    assert_eq!(head[0], 0xBA);
    if head[1..5] == [0, 0, 0, 0] {
        return None;
    }
    let rec = h.binary(&[], 18);
    let vsiz = u32::from_be_bytes(rec[6..10].try_into().unwrap()) as usize;
    let mut kv = vec![0; key.len() + vsiz];
    h.r.read_exact(&mut kv).unwrap();
    Some(kv.split_off(key.len()))
}

#[test]
fn binary_and_http_alternate_on_one_connection() {
    let (_srv, port) = start_kt(&[]);
    let mut h = Http::connect(port);
    for i in 0..20 {
        let (kb, kh) = (format!("bin{i}"), format!("http{i}"));
        // Binary first on some rounds, HTTP first on others.
        if i % 2 == 0 {
            assert_eq!(
                h.binary(&common::kt_http::kt_set_bulk(kb.as_bytes(), b"b"), 5),
                [0xB8, 0, 0, 0, 1]
            );
        }
        let put = h.request("PUT", &format!("/{kh}"), &[], b"h");
        assert_eq!(put.status, 201);
        if i % 2 == 1 {
            assert_eq!(
                h.binary(&common::kt_http::kt_set_bulk(kb.as_bytes(), b"b"), 5),
                [0xB8, 0, 0, 0, 1]
            );
        }
        assert_eq!(bin_get(&mut h, kh.as_bytes()).as_deref(), Some(&b"h"[..]));
        let got = h.request("GET", &format!("/rpc/get?key={kb}"), &[], b"");
        assert_eq!(got.field("value").as_deref(), Some("b"), "round {i}");
    }
    assert_eq!(bin_get(&mut h, b"missing"), None);
    let count = h.request("GET", "/rpc/status", &[], b"");
    assert_eq!(count.field("count").as_deref(), Some("40"));
}

/// dbidx on the KT port picks the database as on the main port; REST's
/// `/1/KEY` sees what a binary set_bulk put in database 1.
#[test]
fn dbidx_and_the_rest_path_name_the_same_database() {
    let (_srv, port) = start_kt(&["-s", "*", "-s", "+"]);
    let mut h = Http::connect(port);
    let mut req = common::kt_http::kt_set_bulk(b"k", b"in one");
    req[9..11].copy_from_slice(&1u16.to_be_bytes());
    assert_eq!(h.binary(&req, 5), [0xB8, 0, 0, 0, 1]);
    assert_eq!(h.request("GET", "/1/k", &[], b"").body, b"in one");
    assert_eq!(h.request("GET", "/k", &[], b"").status, 404);
}

#[test]
fn pipelined_http_requests_are_answered_in_order() {
    let (_srv, port) = start_kt(&[]);
    let mut h = Http::connect(port);
    h.send("PUT", "/a", &[], b"1");
    h.send("GET", "/a", &[], b"");
    h.send("GET", "/rpc/void", &[], b"");
    assert_eq!(h.reply(false).status, 201);
    assert_eq!(h.reply(false).body, b"1");
    assert_eq!(h.reply(false).status, 200);
}

#[test]
fn an_unknown_binary_magic_hangs_up_as_ktserver_does() {
    let (_srv, port) = start_kt(&[]);
    let mut h = Http::connect(port);
    assert_eq!(h.request("GET", "/rpc/void", &[], b"").status, 200);
    h.w.write_all(&[0x81, 1, 2, 3]).unwrap();
    let mut rest = Vec::new();
    assert_eq!(
        h.r.read_to_end(&mut rest).unwrap(),
        0,
        "closed without a reply"
    );
}

/// The KT port has a `-c` of its own (issue 40: idle KT connections had
/// locked the main port out): the third KT connection under `-c 2` is
/// refused, and the main port still takes clients.
#[test]
fn kt_port_connections_count_against_their_own_limit() {
    let (srv, port) = start_kt(&["-c", "2"]);
    let mut a = Http::connect(port);
    assert_eq!(a.request("GET", "/rpc/void", &[], b"").status, 200);
    let mut b = Http::connect(port);
    assert_eq!(b.request("GET", "/rpc/void", &[], b"").status, 200);
    let mut third = Http::connect(port);
    let mut got = Vec::new();
    third.r.read_to_end(&mut got).unwrap();
    assert_eq!(got, TOO_MANY);
    for _ in 0..2 {
        let mut main = Text::new(srv.connect());
        assert!(main.cmd("version\r\n").starts_with("VERSION"));
    }
}

#[test]
fn refuses_to_start_with_sasl() {
    let dir = tempfile::tempdir().unwrap();
    let users = dir.path().join("users");
    std::fs::write(&users, "u:p\n").unwrap();
    let out = common::memstored()
        .args([
            "-l",
            "127.0.0.1:0",
            "--kt-listen",
            "127.0.0.1:0",
            "--sasl-file",
        ])
        .arg(&users)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--kt-listen") && err.contains("--sasl-file"),
        "{err}"
    );
}
