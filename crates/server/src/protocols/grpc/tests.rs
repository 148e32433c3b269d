//! The service called in process (no socket): statuses, `dbm_index`, and
//! that each call goes through the commands (read-only, `-I`).

use super::pb::dbm_service_server::DbmService;
use super::pb::*;
use super::Dbm;
use crate::state::server::{Config, Server};
use memstored_engine::status::code;
use memstored_engine::Db;
use std::sync::Arc;
use tonic::Request;

/// A service over `*` (first) and `+`; `writable` for both, `max_item` as `-I`.
fn service(writable: bool, max_item: u64) -> Dbm {
    let (_stop, rx) = tokio::sync::watch::channel(false);
    let open = |name: &str| {
        let db = Arc::new(Db::open(name, writable).unwrap());
        let cfg = Config {
            max_item_size: max_item,
            ..Config::defaults(name)
        };
        Server::new(db, cfg, None, rx.clone())
    };
    let others = vec![Arc::new(open("+"))];
    Dbm::new(Arc::new(open("*").with_others(others)))
}

fn set(db: i32, key: &str, value: &str, overwrite: bool) -> Request<SetRequest> {
    Request::new(SetRequest {
        dbm_index: db,
        key: key.as_bytes().to_vec().into(),
        value: value.as_bytes().to_vec().into(),
        overwrite,
    })
}

fn get(db: i32, key: &str) -> Request<GetRequest> {
    Request::new(GetRequest {
        dbm_index: db,
        key: key.as_bytes().to_vec().into(),
        omit_value: false,
    })
}

fn code_of(s: Option<StatusProto>) -> i32 {
    s.expect("every answer has a status").code
}

#[tokio::test]
async fn records_statuses_and_databases() {
    let svc = service(true, 1 << 20);
    let st = |r: SetResponse| code_of(r.status);
    let put = svc.set(set(0, "k", "zero", true)).await.unwrap();
    assert_eq!(st(put.into_inner()), code::SUCCESS);
    let put = svc.set(set(1, "k", "one", false)).await.unwrap();
    assert_eq!(st(put.into_inner()), code::SUCCESS);
    let dup = svc.set(set(1, "k", "again", false)).await.unwrap();
    assert_eq!(st(dup.into_inner()), code::DUPLICATION_ERROR);
    for (db, want) in [(0, "zero"), (1, "one")] {
        let r = svc.get(get(db, "k")).await.unwrap().into_inner();
        assert_eq!(code_of(r.status), code::SUCCESS);
        assert_eq!(&r.value[..], want.as_bytes());
    }
    let r = svc.get(get(0, "absent")).await.unwrap().into_inner();
    let status = r.status.unwrap();
    assert_eq!(
        (status.code, status.message.as_str()),
        (code::NOT_FOUND_ERROR, "")
    );
    for bad in [2, -1] {
        let e = svc.get(get(bad, "k")).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert_eq!(e.message(), "dbm_index is out of range");
    }
    let n = svc
        .count(Request::new(CountRequest { dbm_index: 1 }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(n.count, 1);
}

#[tokio::test]
async fn append_rekey_and_replicate_without_a_log() {
    let svc = service(true, 1 << 20);
    for v in ["a", "b"] {
        let r = svc
            .append(Request::new(AppendRequest {
                dbm_index: 0,
                key: "ap".into(),
                value: v.as_bytes().to_vec().into(),
                delim: ",".into(),
            }))
            .await
            .unwrap();
        assert_eq!(code_of(r.into_inner().status), code::SUCCESS);
    }
    let r = svc.get(get(0, "ap")).await.unwrap().into_inner();
    assert_eq!(&r.value[..], b"a,b");
    let r = svc
        .rekey(Request::new(RekeyRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(code_of(r.status), code::NOT_FOUND_ERROR);
    let e = svc
        .replicate(Request::new(ReplicateRequest::default()))
        .await
        .err()
        .expect("no update log: Replicate is refused");
    assert_eq!(e.code(), tonic::Code::FailedPrecondition);
    assert_eq!(e.message(), "disabled update logging");
}

#[tokio::test]
async fn read_only_and_the_item_limit_hold() {
    let svc = service(true, 100);
    let r = svc
        .set(set(0, "big", &"x".repeat(101), true))
        .await
        .unwrap();
    let status = r.into_inner().status.unwrap();
    assert_eq!(status.code, code::INFEASIBLE_ERROR, "{status:?}");
    let svc = service(false, 1 << 20);
    let r = svc.set(set(0, "k", "v", true)).await.unwrap();
    assert_eq!(code_of(r.into_inner().status), code::PRECONDITION_ERROR);
    let r = svc
        .clear(Request::new(ClearRequest { dbm_index: 1 }))
        .await
        .unwrap();
    assert_eq!(code_of(r.into_inner().status), code::PRECONDITION_ERROR);
}
