//! The plain bulk calls answer byte for byte as the general path does, on
//! twin servers fed the same requests; anything not plain is left to it.

use super::super::tsv_rpc::{error_reply, output, params, tsv_reply};
use super::*;
use crate::protocols::rpc::call_reply;
use http_body_util::BodyExt;
use memstored_engine::db::Db;
use proptest::strategy::Just;
use std::sync::Arc;

fn twin() -> Arc<Server> {
    Server::standalone(Arc::new(Db::open("*", true).unwrap()))
}

/// What `tsv_rpc::call` answers without the plain path.
fn general(srv: &Arc<Server>, name: &str, body: &[u8]) -> Reply {
    let mut input = tsv::TsvMap::new();
    tsv::parse_tsv(body, None, &mut input);
    let params = params(name, input);
    match call_reply(srv, name, &params).map(|r| r.into_value()) {
        Ok(v) => tsv_reply(200, output(v), None),
        Err(e) => error_reply(&e, None),
    }
}

fn parts(r: Reply) -> (u16, String, Vec<u8>) {
    let status = r.status().as_u16();
    let ctype = r.headers()["content-type"].to_str().unwrap().to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let body = rt
        .block_on(r.into_body().collect())
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, ctype, body)
}

/// Runs each request on both servers (plain path on one, general on the
/// other) and asserts the same replies, returning the plain one's bodies.
fn same_replies(requests: &[(&str, &[u8])]) -> Vec<Vec<u8>> {
    let (fast, slow) = (twin(), twin());
    let mut bodies = Vec::new();
    for (name, body) in requests {
        let plain = call(&fast, name, body).expect("a plain bulk call");
        let (p, g) = (parts(plain), parts(general(&slow, name, body)));
        assert_eq!(p, g, "{name} {:?}", String::from_utf8_lossy(body));
        bodies.push(p.2);
    }
    bodies
}

#[test]
fn set_get_remove_answer_as_the_general_path() {
    let bodies = same_replies(&[
        ("set_bulk", b"_b\t2\n_a\t1\r\n_c\t3\n"),
        // A key named twice: its last value, counted once.
        ("set_bulk", b"_d\tfirst\n_d\tlast\nno tab line\n"),
        ("get_bulk", b"_c\t\n_a\t\n_zz\t\n_d\t\n_a\t\n"),
        ("remove_bulk", b"_a\t\n_zz\t\n_a\t\n"),
        ("get_bulk", b"_a\t\n_b\t\n"),
        ("get_bulk", b"_nothing\t\n"),
    ]);
    assert_eq!(bodies[0], b"num\t3\n");
    assert_eq!(bodies[1], b"num\t1\n");
    assert_eq!(bodies[2], b"_a\t1\n_c\t3\n_d\tlast\nnum\t3\n");
    assert_eq!(bodies[3], b"num\t1\n");
    assert_eq!(bodies[4], b"_b\t2\nnum\t1\n");
    assert_eq!(bodies[5], b"num\t0\n");
}

#[test]
fn values_that_need_an_encoding_are_encoded_as_the_general_path_does() {
    let long = format!("_long\t{}\n", "v".repeat(300));
    let key254 = format!("_{}\tx\n", "k".repeat(254)); // "_" + 254 bytes: one over 255
    let bodies = same_replies(&[
        ("set_bulk", b"_bin\ta\x01b\n_del\tz\x7f\n_ok\tplain\n"),
        ("get_bulk", b"_bin\t\n_ok\t\n"),
        ("get_bulk", b"_del\t\n"),
        ("set_bulk", long.as_bytes()),
        ("get_bulk", b"_long\t\n"),
        ("set_bulk", key254.as_bytes()),
        ("get_bulk", key254.as_bytes()),
    ]);
    assert_ne!(bodies[1], b"_bin\ta\x01b\n_ok\tplain\nnum\t2\n");
}

#[test]
fn edge_records_answer_as_the_general_path() {
    let big = format!("_k\t{}\n", "v".repeat(2 * 1024 * 1024));
    same_replies(&[
        ("set_bulk", b"_\tv\n"), // an empty key
        ("get_bulk", b"_\t\n"),
        ("set_bulk", b"_e\t\n"), // an empty value
        ("get_bulk", b"_e\t\n_\t\n"),
        ("set_bulk", big.as_bytes()),
        ("get_bulk", b"_k\t\n"),
    ]);
}

#[test]
fn anything_but_records_goes_the_general_way() {
    let srv = twin();
    for body in [
        &b"_a\t1\nxt\t100\n"[..],
        b"DB\t0\n_a\t1\n",
        b"_a\t1\natomic\tfalse\n",
        b"",
        b"no records at all\n",
    ] {
        assert!(call(&srv, "set_bulk", body).is_none(), "{body:?}");
        assert!(call(&srv, "get_bulk", body).is_none(), "{body:?}");
    }
    assert!(call(&srv, "set", b"_a\t1\n").is_none());
    assert!(call(&srv, "get_bulk", b"_a\t\n").is_some());
}

#[test]
fn atomic_calls_answer_as_the_general_path() {
    let bodies = same_replies(&[
        ("set_bulk", b"_b\t2\natomic\t\n_a\t1\n_b\t3\n"),
        ("get_bulk", b"_a\t\n_b\t\n_c\t\natomic\t\n"),
        ("remove_bulk", b"atomic\t\n_a\t\n_c\t\n"),
        ("get_bulk", b"_a\t\n_b\t\natomic\t\n"),
    ]);
    assert_eq!(bodies[0], b"num\t2\n");
    assert_eq!(bodies[1], b"_a\t1\n_b\t3\nnum\t2\n");
    assert_eq!(bodies[2], b"num\t1\n");
    assert_eq!(bodies[3], b"_b\t3\nnum\t1\n");
}

#[test]
fn records_keep_the_last_value_of_a_key() {
    let mut r: Vec<(&[u8], &[u8])> = vec![(b"b", b"1"), (b"a", b"2"), (b"b", b"3"), (b"a", b"4")];
    assert_eq!(
        last_of_each(&mut r),
        &[(&b"a"[..], &b"4"[..]), (&b"b"[..], &b"3"[..])]
    );
}

proptest::proptest! {
    /// Any body, plain or not, is answered (or left to the general path)
    /// without a panic, and a plain answer is the general path's.
    #[test]
    fn any_body_is_answered_as_the_general_path(body in proptest::collection::vec(
        proptest::prop_oneof![Just(b'_'), Just(b'\t'), Just(b'\n'), Just(b'a'), Just(1u8), proptest::num::u8::ANY],
        0..60,
    )) {
        let (fast, slow) = (twin(), twin());
        for name in ["set_bulk", "get_bulk", "remove_bulk", "get_bulk"] {
            if let Some(plain) = call(&fast, name, &body) {
                proptest::prop_assert_eq!(parts(plain), parts(general(&slow, name, &body)));
            } else {
                let _ = general(&slow, name, &body);
                let _ = general(&fast, name, &body);
            }
        }
    }
}
