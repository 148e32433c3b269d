//! tkrzw-rpc 0.9.10's own server test (tkrzw_server_test.cc), its
//! expectations of these calls replayed.

use super::iterate::{op, walk};
use super::*;
use crate::protocols::grpc::pb::iterate_request::OpType;

/// What tkrzw-rpc 0.9.10's own server test (tkrzw_server_test.cc, Basic)
/// expects of these calls, replayed here on the ordered database.
#[tokio::test]
async fn as_tkrzw_servers_own_test_expects() {
    let svc = service(true);
    let cx = CompareExchangeRequest {
        dbm_index: 1,
        key: b("one"),
        desired_existence: true,
        desired_value: b("ichi"),
        ..Default::default()
    };
    assert_eq!(call_cas(&svc, cx).await, (code::SUCCESS, b(""), false));
    assert_eq!(value(&svc, 1, "one").await, Some(b("ichi")));
    let peek = CompareExchangeRequest {
        dbm_index: 1,
        key: b("one"),
        expected_existence: true,
        expect_any_value: true,
        desire_no_update: true,
        get_actual: true,
        ..Default::default()
    };
    assert_eq!(call_cas(&svc, peek).await, (code::SUCCESS, b("ichi"), true));
    let remove = CompareExchangeRequest {
        dbm_index: 1,
        ..cas("one", Some("ichi"), None)
    };
    assert_eq!(call_cas(&svc, remove).await.0, code::SUCCESS);
    assert_eq!(value(&svc, 1, "one").await, None);
    let absent = |k| state(k, None, false);
    let e = vec![absent("two"), absent("three")];
    let d = vec![
        state("two", Some("ni"), false),
        state("three", Some("san"), false),
    ];
    assert_eq!(cas_multi(&svc, e, d).await, code::SUCCESS);
    assert_eq!(value(&svc, 1, "three").await, Some(b("san")));
    let e = vec![
        state("two", Some("ni"), false),
        state("three", Some("san"), false),
    ];
    let d = vec![absent("two"), absent("three")];
    assert_eq!(cas_multi(&svc, e, d).await, code::SUCCESS);
    let n = call!(svc, count, CountRequest { dbm_index: 1 });
    assert_eq!(n.count, 0);
    let d = vec![state("xyz", Some("abc"), false)];
    assert_eq!(cas_multi(&svc, vec![absent("xyz")], d).await, code::SUCCESS);
    assert_eq!(value(&svc, 1, "xyz").await, Some(b("abc")));
    let e = vec![state("xyz", Some(""), true)];
    assert_eq!(cas_multi(&svc, e, vec![absent("xyz")]).await, code::SUCCESS);
    assert_eq!(value(&svc, 1, "xyz").await, None);
    assert_eq!(increment(&svc, "num", 5, 100).await, (code::SUCCESS, 105));
    set(&svc, 0, "KEY1", b"value1").await;
    assert_eq!(
        rekey(&svc, "KEY1", "KEY2", false, true).await,
        code::SUCCESS
    );
    assert_eq!(value(&svc, 0, "KEY1").await, Some(b("value1")));
    assert_eq!(value(&svc, 0, "KEY2").await, Some(b("value1")));
    assert_eq!(
        rekey(&svc, "KEY1", "KEY2", true, false).await,
        code::SUCCESS
    );
    assert_eq!(value(&svc, 0, "KEY1").await, None);
    assert_eq!(value(&svc, 0, "KEY2").await, Some(b("value1")));
    // Its Iterator test, on a tree of 00000001..00000010 valued i*i.
    for i in 1..=10 {
        set(&svc, 1, &format!("{i:08}"), (i * i).to_string().as_bytes()).await;
    }
    let get = || op(1, OpType::OpGet, "");
    let upper = IterateRequest {
        jump_inclusive: true,
        ..op(1, OpType::OpJumpUpper, "00000008")
    };
    let set_value = IterateRequest {
        value: b("setvalue"),
        ..op(1, OpType::OpSet, "")
    };
    let ops = vec![
        op(1, OpType::OpFirst, ""),
        get(),
        op(1, OpType::OpJump, "00000004"),
        get(),
        op(1, OpType::OpNext, ""),
        get(),
        upper,
        get(),
        op(1, OpType::OpPrevious, ""),
        get(),
        op(1, OpType::OpLast, ""),
        get(),
        set_value,
        get(),
        op(1, OpType::OpRemove, ""),
        get(),
    ];
    let got: Vec<_> = walk(&svc, ops)
        .await
        .into_iter()
        .skip(1)
        .step_by(2)
        .collect();
    let rec = |k: &str, v: &str| (code::SUCCESS, k.to_string(), v.to_string());
    let want = vec![
        rec("00000001", "1"),
        rec("00000004", "16"),
        rec("00000005", "25"),
        rec("00000008", "64"),
        rec("00000007", "49"),
        rec("00000010", "100"),
        rec("00000010", "setvalue"),
        (code::NOT_FOUND_ERROR, String::new(), String::new()),
    ];
    assert_eq!(got, want);
}
