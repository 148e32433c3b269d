//! The framer against spex.html's layouts, written out byte by byte.

use super::*;
use crate::{Frame, Framer};

const LIMITS: Limits = Limits {
    max_key: 1024,
    max_value: 4096,
    max_frame: 16384,
};

fn next(buf: &mut BytesMut) -> Frame<Request, Refusal> {
    KtFramer::new(LIMITS).next(buf)
}

/// set_bulk with flags 1 (no reply) and two records, per spex.html.
fn set_bulk_bytes() -> Vec<u8> {
    let mut v = vec![0xB8, 0, 0, 0, 1, 0, 0, 0, 2];
    // dbidx 0, ksiz 1, vsiz 2, xt 100, "a", "xy"
    v.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 100]);
    v.extend_from_slice(b"axy");
    // dbidx 3, ksiz 2, vsiz 0, xt -5, "bc", ""
    v.extend_from_slice(&[0, 3, 0, 0, 0, 2, 0, 0, 0, 0]);
    v.extend_from_slice(&(-5i64).to_be_bytes());
    v.extend_from_slice(b"bc");
    v
}

#[test]
fn set_bulk_frames_every_field() {
    let mut buf = BytesMut::from(&set_bulk_bytes()[..]);
    buf.extend_from_slice(b"\xBA"); // the next request's first byte stays
    let Frame::Request(r) = next(&mut buf) else {
        panic!("not framed")
    };
    let want = Request::SetBulk {
        no_reply: true,
        records: vec![
            SetRecord {
                dbidx: 0,
                key: Bytes::from_static(b"a"),
                value: Bytes::from_static(b"xy"),
                xt: 100,
            },
            SetRecord {
                dbidx: 3,
                key: Bytes::from_static(b"bc"),
                value: Bytes::new(),
                xt: -5,
            },
        ],
    };
    assert_eq!(r, want);
    assert_eq!(&buf[..], b"\xBA");
}

#[test]
fn remove_and_get_bulk_frame_keys() {
    // remove_bulk, flags 0, one key "k" in db 1
    let mut buf = BytesMut::from(&[0xB9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, b'k'][..]);
    let Frame::Request(r) = next(&mut buf) else {
        panic!("not framed")
    };
    let keys = vec![KeyRecord {
        dbidx: 1,
        key: Bytes::from_static(b"k"),
    }];
    let want = Request::RemoveBulk {
        no_reply: false,
        keys: keys.clone(),
    };
    assert_eq!(r, want);
    // get_bulk ignores the no-reply flag: it always answers, as ktserver does.
    let mut buf = BytesMut::from(&[0xBA, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, b'k'][..]);
    let Frame::Request(r) = next(&mut buf) else {
        panic!("not framed")
    };
    assert_eq!(r, Request::GetBulk { keys });
    assert!(buf.is_empty());
}

#[test]
fn play_script_and_replication_frame() {
    let mut v = vec![0xB4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1];
    v.extend_from_slice(b"echo");
    v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 2]);
    v.extend_from_slice(b"kvv");
    let mut buf = BytesMut::from(&v[..]);
    let Frame::Request(r) = next(&mut buf) else {
        panic!("not framed")
    };
    let want = Request::PlayScript {
        no_reply: true,
        name: Bytes::from_static(b"echo"),
        params: vec![(Bytes::from_static(b"k"), Bytes::from_static(b"vv"))],
    };
    assert_eq!(r, want);
    let mut v = vec![0xB1, 0, 0, 0, 1];
    v.extend_from_slice(&7u64.to_be_bytes());
    v.extend_from_slice(&9u16.to_be_bytes());
    let mut buf = BytesMut::from(&v[..]);
    let Frame::Request(r) = next(&mut buf) else {
        panic!("not framed")
    };
    let want = Request::Replication {
        flags: 1,
        ts: 7,
        sid: 9,
    };
    assert_eq!(r, want);
}

#[test]
fn every_prefix_is_incomplete_and_the_walk_resumes() {
    let whole = set_bulk_bytes();
    let mut f = KtFramer::new(LIMITS);
    let mut buf = BytesMut::new();
    for (i, b) in whole.iter().enumerate() {
        buf.extend_from_slice(&[*b]);
        match f.next(&mut buf) {
            Frame::Incomplete { need } if i + 1 < whole.len() => {
                assert!(need > i + 1 && need <= whole.len(), "need {need} at {i}")
            }
            Frame::Request(_) if i + 1 == whole.len() => {}
            other => panic!("at byte {i}: {other:?}"),
        }
    }
    assert!(buf.is_empty());
}

#[test]
fn an_empty_bulk_is_a_request() {
    let mut buf = BytesMut::from(&[0xBA, 0, 0, 0, 0, 0, 0, 0, 0][..]);
    assert!(matches!(next(&mut buf), Frame::Request(Request::GetBulk { keys }) if keys.is_empty()));
}

#[test]
fn a_play_script_name_must_arrive_before_an_empty_request_is_framed() {
    let mut buf = BytesMut::from(&[0xB4, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, b'a'][..]);
    assert!(matches!(next(&mut buf), Frame::Incomplete { need: 16 }));
}

#[test]
fn sizes_over_the_limits_close_with_the_no_reply_flag_kept() {
    // A value of 4097 bytes (limit 4096), no-reply set.
    let mut v = vec![
        0xB8, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0x10, 0x01,
    ];
    v.extend_from_slice(&[0; 8]);
    let Frame::Close(Some(r)) = next(&mut BytesMut::from(&v[..])) else {
        panic!("not refused")
    };
    assert!(r.no_reply);
    assert_eq!(
        r.error,
        FrameError::ValueTooLarge {
            size: 4097,
            max: 4096
        }
    );
    // A key of 4 GiB - 1 on get_bulk: refused from its head, before any wait.
    let v = [0xBA, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF];
    let Frame::Close(Some(r)) = next(&mut BytesMut::from(&v[..])) else {
        panic!("not refused")
    };
    assert!(!r.no_reply, "get_bulk always answers");
    assert!(matches!(r.error, FrameError::KeyTooLarge { .. }));
}

#[test]
fn a_record_count_over_the_limit_is_refused_from_the_head() {
    for (magic, no_reply) in [(0xBAu8, false), (0xB8, true), (0xB9, true)] {
        let mut v = vec![magic, 0, 0, 0, 1];
        v.extend_from_slice(&((MAX_BULK_RECORDS + 1) as u32).to_be_bytes());
        let Frame::Close(Some(r)) = next(&mut BytesMut::from(&v[..])) else {
            panic!("not refused")
        };
        assert_eq!(r.no_reply, no_reply, "get_bulk always answers");
        assert_eq!(
            r.error,
            FrameError::TooManyRecords {
                count: MAX_BULK_RECORDS + 1,
                max: MAX_BULK_RECORDS
            }
        );
    }
}

#[test]
fn a_huge_record_count_needs_bytes_not_memory() {
    // The most keys a request may declare: each must arrive before the
    // frame grows past the limit.
    let mut v = vec![0xB9, 0, 0, 0, 0];
    v.extend_from_slice(&(MAX_BULK_RECORDS as u32).to_be_bytes());
    let mut f = KtFramer::new(LIMITS);
    let mut refused = false;
    for _ in 0..4000 {
        v.extend_from_slice(&[0, 0, 0, 0, 0, 1, b'k']);
        match f.next(&mut BytesMut::from(&v[..])) {
            Frame::Incomplete { .. } => {}
            Frame::Close(Some(r)) => {
                assert!(matches!(r.error, FrameError::FrameTooLarge { .. }));
                refused = true;
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(refused);
    assert!(v.len() as u64 <= LIMITS.max_frame + 7);
}

#[test]
fn unknown_magic_closes_silently() {
    for m in [0xB0u8, 0xB2, 0xBB, 0xBF, 0x80, b'G'] {
        assert!(matches!(
            next(&mut BytesMut::from(&[m][..])),
            Frame::Close(None)
        ));
    }
}

#[test]
fn xt_follows_timed_db() {
    let now = 1_700_000_000;
    // Seconds from now; Kyoto Tycoon keeps the record through second now + xt.
    assert_eq!(expires_at(60, now), now + 61);
    assert_eq!(expires_at(0, now), now + 1);
    // Negative: minus an absolute time.
    assert_eq!(expires_at(-1_800_000_000, now), 1_800_000_001);
    assert_eq!(expires_at(-5, now), 6);
    // At or past XT_MAX (ktremotetest sends INT64_MAX): never.
    assert_eq!(expires_at(i64::MAX, now), 0);
    assert_eq!(expires_at(i64::MIN, now), 0);
    assert_eq!(expires_at(-XT_MAX, now), 0);
    assert_eq!(expires_at(-(XT_MAX - 1), now), XT_MAX as u64);
    // Back again.
    assert_eq!(xt_of(0), XT_MAX);
    assert_eq!(xt_of(1_800_000_001), 1_800_000_000);
    assert_eq!(xt_of(expires_at(-42, now)), 42);
}

#[test]
fn replies_are_laid_out_as_spex_says() {
    let mut out = BytesMut::new();
    encode_hits(MAGIC_SET_BULK, 258, &mut out);
    encode_error(&mut out);
    encode_get_head(1, &mut out);
    encode_record_head(2, 3, 4, -1, &mut out);
    let mut want = vec![
        0xB8, 0, 0, 1, 2, 0xBF, 0xBA, 0, 0, 0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4,
    ];
    want.extend_from_slice(&[0xFF; 8]);
    assert_eq!(&out[..], &want[..]);
}
