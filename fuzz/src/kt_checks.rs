//! What the Kyoto Tycoon binary framer (`memstored_protocol::kt`) must do
//! with arbitrary bytes: never panic, never wait for more than its limits
//! allow, frame the same requests whether the bytes come at once or in
//! pieces (its walk over bulk records resumes across calls), and frame
//! exactly the bytes each request is made of.
//!
//! Shared by the cargo-fuzz target `kt_frame` and the stable proptest
//! `crates/protocol/tests/kt_fuzz_smoke.rs` (which includes this file).

use bytes::{BufMut, BytesMut};
use memstored_protocol::kt::{KtFramer, Limits, Refusal, Request, FLAG_NO_REPLY};
use memstored_protocol::{Frame, Framer};

/// Most frames walked per input.
const MAX_FRAMES: usize = 64;

/// What one framer made of a stream.
#[derive(Debug, PartialEq)]
struct Outcome {
    requests: Vec<Request>,
    end: End,
}

#[derive(Debug, PartialEq)]
enum End {
    /// Waiting for more input (or the frame budget ran out).
    Incomplete,
    Close(Option<Refusal>),
}

/// Byte 0 picks the limits (bit 7: small ones, reaching every refusal),
/// byte 1 the piece size the rest is also fed in; the rest is the stream.
pub fn kt_frame(data: &[u8]) {
    let [a, b, rest @ ..] = data else {
        return;
    };
    kt_stream(*a, *b, rest);
}

/// [`kt_frame`] with its selector bytes apart.
pub fn kt_stream(a: u8, b: u8, rest: &[u8]) {
    let limits = if a & 0x80 != 0 {
        let n = u64::from(a & 0x7f);
        Limits {
            max_key: n,
            max_value: n * 2,
            max_frame: n * 8 + 9,
        }
    } else {
        Limits {
            max_key: 1 << 16,
            max_value: 1 << 20,
            max_frame: 4 << 20,
        }
    };
    let whole = run(limits, rest, rest.len().max(1));
    let piece = usize::from(b).max(1);
    let pieces = run(limits, rest, piece);
    assert_eq!(whole, pieces, "pieces of {piece} framed differently");
}

/// Feeds `stream` to a fresh framer `piece` bytes at a time.
fn run(limits: Limits, stream: &[u8], piece: usize) -> Outcome {
    let mut f = KtFramer::new(limits);
    let mut buf = BytesMut::new();
    let mut requests = Vec::new();
    let mut fed = 0;
    loop {
        match f.next(&mut buf) {
            Frame::Request(r) => {
                check_request(&limits, &r);
                requests.push(r);
                if requests.len() >= MAX_FRAMES {
                    return Outcome {
                        requests,
                        end: End::Incomplete,
                    };
                }
            }
            Frame::Incomplete { need } => {
                assert!(need > buf.len(), "need {need} with {} buffered", buf.len());
                // A record head may be asked for past the frame limit; its
                // sizes are checked the moment it is here.
                assert!(
                    need as u64 <= limits.max_frame + 18,
                    "need {need} over {limits:?}"
                );
                if fed == stream.len() {
                    return Outcome {
                        requests,
                        end: End::Incomplete,
                    };
                }
                let n = piece.min(stream.len() - fed);
                buf.extend_from_slice(&stream[fed..fed + n]);
                fed += n;
            }
            Frame::Close(r) => {
                return Outcome {
                    requests,
                    end: End::Close(r),
                }
            }
            Frame::Refused { .. } => panic!("the KT framer never skips a body"),
        }
    }
}

/// A framed request is within the limits and re-encodes to a frame that
/// frames to the same request.
fn check_request(l: &Limits, r: &Request) {
    let mut sizes = Vec::new();
    match r {
        Request::SetBulk { records, .. } => {
            sizes.extend(records.iter().map(|x| (x.key.len(), x.value.len())))
        }
        Request::RemoveBulk { keys, .. } | Request::GetBulk { keys } => {
            sizes.extend(keys.iter().map(|x| (x.key.len(), 0)))
        }
        Request::PlayScript { name, params, .. } => {
            sizes.push((name.len(), 0));
            sizes.extend(params.iter().map(|(k, _)| (0, k.len())));
            sizes.extend(params.iter().map(|(_, v)| (0, v.len())));
        }
        Request::Replication { .. } => {}
    }
    for (k, v) in sizes {
        assert!(
            k as u64 <= l.max_key && v as u64 <= l.max_value,
            "{k}/{v} over {l:?}"
        );
    }
    let bytes = encode(r);
    assert!(bytes.len() as u64 <= l.max_frame || matches!(r, Request::Replication { .. }));
    let mut buf = BytesMut::from(&bytes[..]);
    match KtFramer::new(*l).next(&mut buf) {
        Frame::Request(again) => assert_eq!(&again, r),
        other => panic!("re-encoded request framed as {other:?}"),
    }
    assert!(
        buf.is_empty(),
        "re-encoded request left {} bytes",
        buf.len()
    );
}

/// spex.html's request layouts.
fn encode(r: &Request) -> Vec<u8> {
    let flags = |no_reply: bool| if no_reply { FLAG_NO_REPLY } else { 0 };
    let mut v = BytesMut::new();
    match r {
        Request::SetBulk { no_reply, records } => {
            v.put_u8(0xB8);
            v.put_u32(flags(*no_reply));
            v.put_u32(records.len() as u32);
            for x in records {
                v.put_u16(x.dbidx);
                v.put_u32(x.key.len() as u32);
                v.put_u32(x.value.len() as u32);
                v.put_i64(x.xt);
                v.put_slice(&x.key);
                v.put_slice(&x.value);
            }
        }
        Request::RemoveBulk { no_reply, keys } => encode_keys(&mut v, 0xB9, flags(*no_reply), keys),
        Request::GetBulk { keys } => encode_keys(&mut v, 0xBA, 0, keys),
        Request::PlayScript {
            no_reply,
            name,
            params,
        } => {
            v.put_u8(0xB4);
            v.put_u32(flags(*no_reply));
            v.put_u32(name.len() as u32);
            v.put_u32(params.len() as u32);
            v.put_slice(name);
            for (k, val) in params {
                v.put_u32(k.len() as u32);
                v.put_u32(val.len() as u32);
                v.put_slice(k);
                v.put_slice(val);
            }
        }
        Request::Replication { flags, ts, sid } => {
            v.put_u8(0xB1);
            v.put_u32(*flags);
            v.put_u64(*ts);
            v.put_u16(*sid);
        }
    }
    v.to_vec()
}

fn encode_keys(
    v: &mut BytesMut,
    magic: u8,
    flags: u32,
    keys: &[memstored_protocol::kt::KeyRecord],
) {
    v.put_u8(magic);
    v.put_u32(flags);
    v.put_u32(keys.len() as u32);
    for k in keys {
        v.put_u16(k.dbidx);
        v.put_u32(k.key.len() as u32);
        v.put_slice(&k.key);
    }
}
