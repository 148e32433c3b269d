//! Issue 12 item 5: with `--sasl-file`, authentication comes before anything
//! a request could cause; PLAIN's authzid must be empty or the user; a failed
//! authentication de-authenticates; guesses cost a reconnection every
//! `MAX_FAILED_ATTEMPTS` tries. And item 6's RPC backup on a read-only server.

mod common;
mod inproc;

use common::*;
use inproc::{rpc, InProc};
use memstored_engine::Db;
use rmpv::Value;
use std::io::Write;

const AUTH_ERROR: u16 = 0x20;

fn server_with_users(dir: &tempfile::TempDir, store: &str) -> Server {
    let file = dir.path().join("users");
    std::fs::write(&file, "alice:secret\nbob:hunter2\n").unwrap();
    Server::start(&[
        "-s",
        store,
        "-I",
        "1m",
        "--sasl-file",
        file.to_str().unwrap(),
    ])
}

fn authenticated(srv: &Server) -> std::net::TcpStream {
    let mut s = srv.connect();
    let r = call(&mut s, SASL_AUTH, b"PLAIN", &[], b"\0alice\0secret", 0);
    assert_eq!(r.status, 0);
    s
}

#[test]
fn an_unauthenticated_oversized_set_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("{}/a.tkh", dir.path().display());
    let srv = server_with_users(&dir, &store);
    let mut s = authenticated(&srv);
    assert_eq!(
        call(&mut s, SET, b"k", &set_extras(0, 0), b"kept", 0).status,
        0
    );
    // A header declaring a 2 MiB body (over -I 1m), body never sent.
    let mut intruder = srv.connect();
    let mut head = req(SET, b"k", &set_extras(0, 0), &[], 1, 0);
    head[8..12].copy_from_slice(&((8 + 1 + (2 << 20)) as u32).to_be_bytes());
    intruder.write_all(&head).unwrap();
    assert_eq!(read_resp(&mut intruder).status, AUTH_ERROR);
    assert!(is_closed(&mut intruder));
    assert_eq!(call(&mut s, GET, b"k", &[], &[], 0).value, b"kept");
}

#[test]
fn unknown_opcodes_are_not_answered_before_authentication() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_with_users(&dir, "*");
    let mut s = srv.connect();
    s.write_all(&req(0x7f, b"", &[], &[], 1, 0)).unwrap();
    assert_eq!(read_resp(&mut s).status, AUTH_ERROR);
    assert!(is_closed(&mut s));
}

#[test]
fn plain_refuses_to_act_as_another_user() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_with_users(&dir, "*");
    let mut s = srv.connect();
    let r = call(&mut s, SASL_AUTH, b"PLAIN", &[], b"bob\0alice\0secret", 0);
    assert_eq!(r.status, AUTH_ERROR);
    let r = call(&mut s, SASL_AUTH, b"PLAIN", &[], b"alice\0alice\0secret", 0);
    assert_eq!(r.status, 0, "an authzid equal to the user is fine");
}

#[test]
fn a_failed_reauthentication_deauthenticates() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_with_users(&dir, "*");
    let mut s = authenticated(&srv);
    let r = call(&mut s, SASL_AUTH, b"PLAIN", &[], b"\0alice\0wrong", 0);
    assert_eq!(r.status, AUTH_ERROR);
    assert_eq!(call(&mut s, GET, b"k", &[], &[], 0).status, AUTH_ERROR);
    assert!(is_closed(&mut s));
}

#[test]
fn password_guessing_is_cut_off_per_connection() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_with_users(&dir, "*");
    let mut s = srv.connect();
    for _ in 0..memstored_server::command::MAX_FAILED_ATTEMPTS {
        let r = call(&mut s, SASL_AUTH, b"PLAIN", &[], b"\0alice\0guess", 0);
        assert_eq!(r.status, AUTH_ERROR);
    }
    assert!(
        is_closed(&mut s),
        "binary: closed after the last allowed guess"
    );
    let mut p = srv.connect();
    for _ in 0..memstored_server::command::MAX_FAILED_ATTEMPTS {
        let guess = vec![Value::from("alice"), Value::from("guess")];
        assert_eq!(rpc(&mut p, "auth", guess), Err(41));
    }
    assert!(
        is_closed(&mut p),
        "rpc: closed after the last allowed guess"
    );
}

#[test]
fn a_read_only_server_writes_no_backup() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{}/ro.tkh", dir.path().display());
    {
        let db = Db::open(&name, true).unwrap();
        db.set(b"k", b"v", true).unwrap();
        db.close().unwrap();
    }
    let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    let s = InProc::start(Db::open(&name, false).unwrap(), |_| {});
    let mut p = s.connect();
    let opts = Value::Map(vec![(Value::from("make_backup"), Value::from(""))]);
    assert_eq!(rpc(&mut p, "synchronize", vec![opts]), Err(41));
    let after: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(before.len(), after.len(), "no backup file appeared");
}

#[test]
fn rpc_sets_are_bounded_by_the_item_limit() {
    let s = InProc::start(Db::open("*", true).unwrap(), |c| c.max_item_size = 1 << 20);
    let mut p = s.connect();
    let big = Value::Binary(vec![b'x'; 3 << 20]);
    assert_eq!(
        rpc(&mut p, "set", vec![Value::from("k"), big.clone()]),
        Err(41)
    );
    let record = (Value::from("_k"), big);
    let records = Value::Map(vec![record.clone()]);
    let atomic = Value::Map(vec![record, (Value::from("atomic"), Value::from(""))]);
    assert_eq!(rpc(&mut p, "set_bulk", vec![records]), Err(41));
    assert_eq!(rpc(&mut p, "set_bulk", vec![atomic]), Err(41));
    assert_eq!(rpc(&mut p, "get", vec![Value::from("k")]), Err(35));
}
