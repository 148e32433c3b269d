//! The Iterate stream's calls, one iterator per walk.

use super::*;
use crate::protocols::grpc::iterate::Iterator;
use crate::protocols::grpc::pb::iterate_request::OpType;

pub(super) fn op(db: i32, operation: OpType, key: &str) -> IterateRequest {
    IterateRequest {
        dbm_index: db,
        operation: operation as i32,
        key: b(key),
        ..Default::default()
    }
}

/// Runs `ops` on one iterator: each answer's code, key and value.
pub(super) async fn walk(svc: &Dbm, ops: Vec<IterateRequest>) -> Vec<(i32, String, String)> {
    let mut iter = Iterator::default();
    let mut out = Vec::new();
    for r in ops {
        let a = svc.iterate_one(&mut iter, &r).await.unwrap();
        let s = |b: &Bytes| String::from_utf8_lossy(b).into_owned();
        out.push((code_of(&a.status), s(&a.key), s(&a.value)));
    }
    out
}

#[tokio::test]
async fn iterate_moves_as_tkrzw_iterators() {
    let svc = service(true);
    for k in ["a", "b", "c", "d"] {
        set(&svc, 1, k, k.to_uppercase().as_bytes()).await;
        set(&svc, 0, k, k.to_uppercase().as_bytes()).await;
    }
    let ok = |k: &str, v: &str| (code::SUCCESS, k.to_string(), v.to_string());
    let moved = ok("", "");
    let nf = (code::NOT_FOUND_ERROR, String::new(), String::new());
    let lower = IterateRequest {
        jump_inclusive: true,
        ..op(1, OpType::OpJumpLower, "c")
    };
    let got = walk(
        &svc,
        vec![
            lower,
            op(1, OpType::OpGet, ""),
            op(1, OpType::OpNext, ""),
            op(1, OpType::OpStep, ""),
            op(1, OpType::OpGet, ""),
            op(1, OpType::OpLast, ""),
            op(1, OpType::OpPrevious, ""),
            op(1, OpType::OpRemove, ""),
            op(1, OpType::OpGet, ""),
            op(1, OpType::OpNext, ""),
            op(1, OpType::OpGet, ""),
            op(1, OpType::OpNext, ""),
        ],
    )
    .await;
    let want = vec![
        moved.clone(),
        ok("c", "C"),
        moved.clone(),
        ok("d", "D"),
        nf.clone(),
        moved.clone(),
        moved.clone(),
        moved.clone(),
        ok("d", "D"),
        moved.clone(),
        nf.clone(),
        nf.clone(),
    ];
    assert_eq!(got, want);
    assert_eq!(value(&svc, 1, "c").await, None);
    // A hash database: no order, so no last, previous, or lower/upper jumps.
    let ni = (code::NOT_IMPLEMENTED_ERROR, String::new(), String::new());
    let set_b = IterateRequest {
        value: b("new"),
        ..op(0, OpType::OpSet, "")
    };
    let omit = IterateRequest {
        omit_value: true,
        ..op(0, OpType::OpGet, "")
    };
    let got = walk(
        &svc,
        vec![
            op(0, OpType::OpLast, ""),
            op(0, OpType::OpJumpLower, "b"),
            op(0, OpType::OpJumpUpper, "b"),
            op(0, OpType::OpPrevious, ""),
            op(0, OpType::OpJump, "b"),
            op(0, OpType::OpPrevious, ""),
            set_b,
            omit,
            op(0, OpType::OpJump, "zz"),
            op(0, OpType::OpGet, ""),
        ],
    )
    .await;
    let want = vec![
        ni.clone(),
        ni.clone(),
        ni.clone(),
        ni.clone(),
        moved.clone(),
        ni.clone(),
        moved.clone(),
        ok("b", ""),
        nf.clone(),
        nf.clone(),
    ];
    assert_eq!(got, want);
    assert_eq!(value(&svc, 0, "b").await, Some(b("new")));
    // OP_NONE answers no status at all.
    let mut iter = Iterator::default();
    let none = svc
        .iterate_one(&mut iter, &op(0, OpType::OpNone, ""))
        .await
        .unwrap();
    assert!(none.status.is_none());
    let bad = IterateRequest {
        operation: 99,
        ..op(0, OpType::OpNone, "")
    };
    let e = svc.iterate_one(&mut iter, &bad).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    let e = svc
        .iterate_one(&mut iter, &op(5, OpType::OpFirst, ""))
        .await
        .unwrap_err();
    assert_eq!(e.message(), "dbm_index is out of range");
}

#[tokio::test]
async fn iterate_on_a_sharded_hash_answers_as_shard_dbm() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{}/casket.tkh#num_shards=3", dir.path().display());
    let (_stop, rx) = tokio::sync::watch::channel(false);
    let db = Arc::new(Db::open(&name, true).unwrap());
    let svc = Dbm::new(Arc::new(Server::new(db, Config::defaults(&name), None, rx)));
    set(&svc, 0, "h", b"H").await;
    let ok = |k: &str, v: &str| (code::SUCCESS, k.to_string(), v.to_string());
    let nf = (code::NOT_FOUND_ERROR, String::new(), String::new());
    let ni = (code::NOT_IMPLEMENTED_ERROR, String::new(), String::new());
    let got = walk(
        &svc,
        vec![
            op(0, OpType::OpPrevious, ""),
            op(0, OpType::OpJump, "h"),
            op(0, OpType::OpGet, ""),
            op(0, OpType::OpPrevious, ""),
            op(0, OpType::OpGet, ""),
            op(0, OpType::OpJump, "absent"),
            op(0, OpType::OpGet, ""),
            op(0, OpType::OpJump, "h"),
            op(0, OpType::OpLast, ""),
            op(0, OpType::OpGet, ""),
        ],
    )
    .await;
    let want = vec![
        nf.clone(),
        ok("", ""),
        ok("h", "H"),
        ni.clone(),
        nf.clone(),
        ok("", ""),
        nf.clone(),
        ok("", ""),
        ni,
        nf,
    ];
    assert_eq!(got, want);
    // Read-only and empty, ShardDBM's PopFirst finds no first record
    // before its shards would refuse the write.
    let r = call!(
        svc,
        remove,
        RemoveRequest {
            dbm_index: 0,
            key: b("h")
        }
    );
    assert_eq!(code_of(&r.status), code::SUCCESS);
    let r = call!(
        svc,
        synchronize,
        SynchronizeRequest {
            dbm_index: 0,
            hard: true,
            params: vec![]
        }
    );
    assert_eq!(code_of(&r.status), code::SUCCESS);
    drop(svc);
    let (_stop, rx) = tokio::sync::watch::channel(false);
    let db = Arc::new(Db::open(&name, false).unwrap());
    let ro = Dbm::new(Arc::new(Server::new(db, Config::defaults(&name), None, rx)));
    let r = call!(ro, pop_first, PopFirstRequest::default());
    assert_eq!(code_of(&r.status), code::NOT_FOUND_ERROR);
}
