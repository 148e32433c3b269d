//! KT's RESTful interface on the Kyoto Tycoon port: GET/HEAD/PUT/DELETE on
//! `/KEY` and `/DB/KEY`, `X-Kt-Xt`, `X-Kt-Mode`, KT's status codes.

mod common;
use common::kt_http::{start_kt, Http};
use std::time::{SystemTime, UNIX_EPOCH};

#[test]
fn put_get_head_delete() {
    let (_srv, port) = start_kt(&[]);
    let mut h = Http::connect(port);
    let put = h.request("PUT", "/a%20key%2Fwith%20slash", &[], b"the value");
    assert_eq!(put.status, 201, "{put:?}");
    let get = h.request("GET", "/a%20key%2Fwith%20slash", &[], b"");
    assert_eq!((get.status, &get.body[..]), (200, &b"the value"[..]));
    assert_eq!(get.header("x-kt-xt"), None, "no expiry");
    let head = h.request("HEAD", "/a%20key%2Fwith%20slash", &[], b"");
    assert_eq!(
        (head.status, head.header("content-length")),
        (200, Some("9"))
    );
    // The same record through TSV-RPC: one store behind both interfaces.
    let rpc = h.request("GET", "/rpc/get?key=a%20key%2Fwith%20slash", &[], b"");
    assert_eq!(rpc.field("value").as_deref(), Some("the value"));
    assert_eq!(
        h.request("DELETE", "/a%20key%2Fwith%20slash", &[], b"")
            .status,
        204
    );
    assert_eq!(
        h.request("DELETE", "/a%20key%2Fwith%20slash", &[], b"")
            .status,
        404
    );
    let miss = h.request("GET", "/a%20key%2Fwith%20slash", &[], b"");
    assert_eq!(miss.status, 404);
    assert!(miss.header("x-kt-error").is_some());
    assert_eq!(h.request("HEAD", "/nothing", &[], b"").status, 404);
    assert_eq!(h.request("POST", "/k", &[], b"v").status, 501);
}

#[test]
fn modes_and_expiration_dates() {
    let (_srv, port) = start_kt(&[]);
    let mut h = Http::connect(port);
    let add = [("X-Kt-Mode", "add")];
    let replace = [("X-Kt-Mode", "replace")];
    assert_eq!(
        h.request("PUT", "/k", &replace, b"v").status,
        450,
        "replace: absent"
    );
    assert_eq!(h.request("PUT", "/k", &add, b"v1").status, 201);
    assert_eq!(
        h.request("PUT", "/k", &add, b"v2").status,
        450,
        "add: present"
    );
    assert_eq!(h.request("PUT", "/k", &replace, b"v3").status, 201);
    assert_eq!(h.request("GET", "/k", &[], b"").body, b"v3");
    // X-Kt-Xt is an absolute date: decimal epoch seconds or RFC 1123.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let later = (now + 3600).to_string();
    assert_eq!(
        h.request("PUT", "/t", &[("X-Kt-Xt", &later)], b"v").status,
        201
    );
    let got = h.request("GET", "/t", &[], b"");
    let xt = got.header("x-kt-xt").expect("an expiry").to_string();
    assert!(xt.ends_with(" GMT"), "{xt}");
    assert_eq!(
        h.request("PUT", "/t2", &[("X-Kt-Xt", &xt)], b"v").status,
        201
    );
    assert_eq!(
        h.request("GET", "/t2", &[], b"").header("x-kt-xt"),
        Some(&xt[..])
    );
    let rpc = h.request("GET", "/rpc/get?key=t", &[], b"");
    assert_eq!(rpc.field("xt"), Some(later));
    // An expiry past year 9999 (it panicked the reply's date formatting):
    // the header names the last second an HTTP date can.
    let far = [("X-Kt-Xt", "300000000000")];
    assert_eq!(h.request("PUT", "/far", &far, b"v").status, 201);
    let got = h.request("GET", "/far", &[], b"");
    assert_eq!(got.body, b"v");
    assert_eq!(got.header("x-kt-xt"), Some("Fri, 31 Dec 9999 23:59:59 GMT"));
    let head = h.request("HEAD", "/far", &[], b"");
    assert_eq!(
        head.header("x-kt-xt"),
        Some("Fri, 31 Dec 9999 23:59:59 GMT")
    );
    // A date in the past: stored already expired.
    let past = [("X-Kt-Xt", "Sun, 06 Nov 1994 08:49:37 GMT")];
    assert_eq!(h.request("PUT", "/old", &past, b"v").status, 201);
    assert_eq!(h.request("GET", "/old", &[], b"").status, 404);
}

#[test]
fn the_database_in_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("words.kct");
    let (_srv, port) = start_kt(&["-s", "*", "-s", words.to_str().unwrap()]);
    let mut h = Http::connect(port);
    assert_eq!(
        h.request("PUT", "/words.kct/I%20love%20you", &[], b"1")
            .status,
        201
    );
    assert_eq!(h.request("GET", "/1/I%20love%20you", &[], b"").body, b"1");
    assert_eq!(
        h.request("GET", "/I%20love%20you", &[], b"").status,
        404,
        "database 0"
    );
    assert_eq!(h.request("GET", "/0/I%20love%20you", &[], b"").status, 404);
    assert_eq!(h.request("GET", "/nope.kch/k", &[], b"").status, 400);
    assert_eq!(h.request("GET", "/5/k", &[], b"").status, 400);
}
