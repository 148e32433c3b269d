//! What every memstored-protocol parser must do with arbitrary bytes: never
//! panic, never claim more bytes than it was given, agree across its entry
//! points (slice, `Bytes`, `BytesMut`), and fail with a typed error that says
//! how to recover.
//!
//! Shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and the stable
//! proptests (`crates/protocol/tests/fuzz_smoke.rs` includes this file with
//! `#[path]`), so CI checks the same properties without nightly.

use bytes::{Bytes, BytesMut};
use memstored_protocol::binary::{self, BinaryError, BinaryHeader, Command, Request, HEADER_LEN};
use memstored_protocol::rpc::{self, FrameError, FrameScanner, Limits, Message};
use memstored_protocol::text::{self, TextErrorKind, TextParser};
use memstored_protocol::{Parse, MAX_KEY_LEN};

/// Most frames walked per input, so one input stays cheap.
const MAX_FRAMES: usize = 64;

/// The memcached binary parser over a stream of frames.
pub fn binary_request(data: &[u8]) {
    let mut rest = data;
    for _ in 0..MAX_FRAMES {
        if !binary_frame(rest) {
            return;
        }
        let Ok(Parse::Complete(req, used)) = Request::parse(rest) else {
            return;
        };
        assert!(used >= HEADER_LEN);
        let _ = req;
        rest = &rest[used..];
    }
}

/// Checks the frame at the front of `buf`; true if it parsed completely.
fn binary_frame(buf: &[u8]) -> bool {
    let header = BinaryHeader::parse(buf);
    match &header {
        Ok(Parse::Complete(h, used)) => {
            assert_eq!(*used, HEADER_LEN);
            assert!(buf.len() >= HEADER_LEN);
            assert_eq!(h.magic, binary::REQUEST_MAGIC);
            // Encoding the decoded header gives the bytes back.
            let mut out = BytesMut::new();
            h.encode(&mut out);
            assert_eq!(&out[..], &buf[..HEADER_LEN]);
        }
        Ok(Parse::Incomplete) => assert!(buf.len() < HEADER_LEN),
        Err(BinaryError::BadMagic(m)) => assert_eq!(Some(m), buf.first()),
        Err(e) => panic!("BinaryHeader::parse returned {e:?}"),
    }

    let slice = Request::parse(buf);
    let bytes = Request::parse_bytes(&Bytes::copy_from_slice(buf));
    assert_eq!(slice, bytes, "parse and parse_bytes disagree");
    let mut bm = BytesMut::from(buf);
    let taken = Request::parse_buf(&mut bm);

    match slice {
        Ok(Parse::Complete(req, used)) => {
            let Ok(Parse::Complete(h, _)) = header else {
                panic!("a request parsed without a header")
            };
            assert_eq!(req.header, h);
            assert!(used <= buf.len(), "used {used} of {}", buf.len());
            assert_eq!(used as u64, h.frame_len());
            assert!(h.validate_request().is_ok());
            assert_eq!(taken, Ok(Some(req.clone())));
            assert_eq!(
                bm.len(),
                buf.len() - used,
                "parse_buf consumed the wrong amount"
            );
            check_command(&req, &buf[HEADER_LEN..used]);
            true
        }
        Ok(Parse::Incomplete) => {
            assert_eq!(taken, Ok(None));
            assert_eq!(bm.len(), buf.len(), "an incomplete parse consumed bytes");
            if let Ok(Parse::Complete(h, _)) = header {
                // Incomplete only while the declared frame is not all there.
                assert!((buf.len() as u64) < h.frame_len());
            }
            false
        }
        Err(e) => {
            assert_eq!(taken, Err(e), "parse_buf disagrees with parse");
            assert_eq!(bm.len(), buf.len(), "an error consumed bytes");
            assert!(e.must_close());
            match e {
                BinaryError::BadMagic(_) => assert!(e.reply_head().is_none()),
                BinaryError::KeyTooLong(h) => assert!(usize::from(h.key_len) > MAX_KEY_LEN),
                BinaryError::BodyTooShort(_) | BinaryError::InvalidArguments(_) => {}
            }
            if let Some(head) = e.reply_head() {
                let mut out = BytesMut::new();
                binary::encode_error(&head, &mut out);
                assert!(out.len() >= HEADER_LEN);
            }
            false
        }
    }
}

/// Keys and values are the right slices of the body.
fn check_command(req: &Request, body: &[u8]) {
    let h = &req.header;
    let ext = usize::from(h.extras_len);
    let key_end = ext + usize::from(h.key_len);
    let key = &body[ext..key_end];
    let value = &body[key_end..];
    assert!(key.len() <= MAX_KEY_LEN);
    match &req.command {
        Command::Get { key: k, .. }
        | Command::GetAndTouch { key: k, .. }
        | Command::Touch { key: k, .. }
        | Command::Delete { key: k, .. }
        | Command::Arith { key: k, .. } => assert_eq!(&k[..], key),
        Command::Store {
            key: k, value: v, ..
        }
        | Command::Concat {
            key: k, value: v, ..
        } => {
            assert_eq!(&k[..], key);
            assert_eq!(&v[..], value);
        }
        Command::SaslAuth { mechanism, data } | Command::SaslStep { mechanism, data } => {
            assert_eq!(&mechanism[..], key);
            assert_eq!(&data[..], value);
        }
        Command::Stat { group } => assert_eq!(group.as_deref().unwrap_or_default(), key),
        Command::Unknown { opcode } => assert!(h.opcode().is_none() && *opcode == h.opcode),
        Command::Quit { .. }
        | Command::Flush { .. }
        | Command::Noop
        | Command::Version
        | Command::SaslListMechs => {}
    }
}

/// The text + meta parser over a stream of lines and data blocks. The
/// first byte picks the line limit (small limits reach `LineTooLong`).
pub fn text_request(data: &[u8]) {
    let Some((&sel, mut rest)) = data.split_first() else {
        return;
    };
    let parser = match sel % 4 {
        0 => TextParser::new(usize::from(sel / 4)),
        _ => TextParser::default(),
    };
    for _ in 0..MAX_FRAMES {
        if rest.is_empty() {
            return;
        }
        let Some(used) = text_frame(&parser, rest) else {
            return;
        };
        assert!(used > 0 && used <= rest.len(), "no progress or overrun");
        rest = &rest[used..];
    }
}

/// Checks one command (and its data block) at the front of `buf`; returns
/// the bytes a server would drop before the next one, `None` to stop.
fn text_frame(parser: &TextParser, buf: &[u8]) -> Option<usize> {
    let slice = parser.parse(buf);
    let bytes = parser.parse_bytes(&Bytes::copy_from_slice(buf));
    assert_eq!(slice, bytes, "parse and parse_bytes disagree");
    let mut bm = BytesMut::from(buf);
    let taken = parser.parse_buf(&mut bm);
    match slice {
        Ok(Parse::Complete(cmd, used)) => {
            assert!(
                used > 0 && used <= buf.len(),
                "used {used} of {}",
                buf.len()
            );
            assert!(buf[..used].ends_with(b"\n"), "a line ends in a newline");
            assert!(!buf[..used - 1].contains(&b'\n'), "one line at a time");
            assert!(
                used <= parser.max_line_len.saturating_add(2),
                "line over the limit"
            );
            assert_eq!(taken, Ok(Some(cmd.clone())));
            assert_eq!(bm.len(), buf.len() - used);
            let _ = cmd.noreply();
            let Some(len) = cmd.data_len() else {
                return Some(used);
            };
            assert_eq!(text::data_block_len(len), len as u64 + 2);
            Some(used + data_block(&buf[used..], len)?)
        }
        Ok(Parse::Incomplete) => {
            assert_eq!(taken, Ok(None));
            assert_eq!(bm.len(), buf.len());
            assert!(!buf.contains(&b'\n') && buf.len() < parser.max_line_len.saturating_add(2));
            None
        }
        Err(e) => {
            assert_eq!(taken, Err(e), "parse_buf disagrees with parse");
            let reply = e.reply();
            assert!(reply.ends_with(b"\r\n") && reply.len() > 2);
            if e.must_close() {
                if e.kind == TextErrorKind::HttpRequest {
                    assert!(!e.should_reply() && e.consumed > 0 && e.consumed <= buf.len());
                } else {
                    assert_eq!(e.kind, TextErrorKind::LineTooLong);
                    assert_eq!(e.consumed, 0);
                }
                return None;
            }
            assert!(e.consumed > 0 && e.consumed <= buf.len());
            assert_eq!(
                bm.len(),
                buf.len() - e.consumed,
                "parse_buf dropped the wrong amount"
            );
            if e.swallow > 0 {
                // Only a storage line whose length was read (an `ms`, or
                // memcached 1.6.45's set family and cas) announces a block.
                let first = buf.split(|&b| b == b' ').find(|t| !t.is_empty());
                let storage: [&[u8]; 7] = [
                    b"ms", b"set", b"add", b"replace", b"append", b"prepend", b"cas",
                ];
                assert!(first.is_some_and(|w| storage.contains(&w)), "{first:?}");
            }
            let skip = (e.consumed as u64).saturating_add(e.swallow);
            Some(usize::try_from(skip).unwrap_or(usize::MAX).min(buf.len()))
        }
    }
}

/// Checks the data block of `len` bytes at the front of `buf`; bytes used.
fn data_block(buf: &[u8], len: usize) -> Option<usize> {
    let parsed = text::parse_data_block(buf, len);
    let mut bm = BytesMut::from(buf);
    let taken = text::take_data_block(&mut bm, len);
    match parsed {
        Ok(Parse::Complete(value, used)) => {
            assert_eq!(used, len + 2);
            assert!(used <= buf.len());
            assert_eq!(value, &buf[..len]);
            assert_eq!(&buf[len..used], b"\r\n");
            assert_eq!(taken.as_ref().ok().and_then(|v| v.as_deref()), Some(value));
            assert_eq!(bm.len(), buf.len() - used);
            Some(used)
        }
        Ok(Parse::Incomplete) => {
            assert!((buf.len() as u64) < text::data_block_len(len));
            assert_eq!(taken, Ok(None));
            assert_eq!(bm.len(), buf.len());
            None
        }
        Err(e) => {
            assert_eq!(e.kind, TextErrorKind::BadDataChunk);
            assert_eq!(e.consumed, len + 2);
            assert!(e.consumed <= buf.len());
            assert_ne!(&buf[len..len + 2], b"\r\n");
            assert_eq!(taken, Err(e));
            assert_eq!(bm.len(), buf.len() - e.consumed);
            Some(e.consumed)
        }
    }
}

/// The MessagePack-RPC decoder. The first two bytes pick the limits (small
/// ones reach the TooLarge / TooDeep / TooManyObjects paths).
pub fn rpc_frame(data: &[u8]) {
    let [a, b, rest @ ..] = data else {
        return;
    };
    let limits = Limits {
        max_frame: if a & 0x80 != 0 {
            usize::from(*a & 0x7f) * 16
        } else {
            Limits::default().max_frame
        },
        max_depth: if b & 0x80 != 0 {
            usize::from(*b & 0x7f)
        } else {
            Limits::default().max_depth
        },
        max_objects: if b & 0x40 != 0 {
            u64::from(*b & 0x3f) * 4
        } else {
            Limits::default().max_objects
        },
    };
    let mut buf = rest;
    for _ in 0..MAX_FRAMES {
        if buf.is_empty() {
            return;
        }
        match rpc_message(buf, &limits) {
            Some(used) => buf = &buf[used..],
            None => return,
        }
    }
}

/// Checks the message at the front of `buf`; the bytes to drop before the
/// next one, `None` if the stream cannot go on.
fn rpc_message(buf: &[u8], limits: &Limits) -> Option<usize> {
    let decoded = rpc::decode(buf, limits);
    let scanned = rpc::frame_len(buf, limits);

    // A connection decoder fed the same bytes in pieces reaches the same answer.
    let mut dec = rpc::Decoder::new(*limits);
    let step = (buf.len() / 3).max(1);
    let mut end = step.min(buf.len());
    let incremental = loop {
        match dec.decode(&buf[..end]) {
            Ok(Parse::Incomplete) if end < buf.len() => end = (end + step).min(buf.len()),
            r => break r,
        }
    };
    // Compared as text: a decoded NaN is not equal to itself.
    assert_eq!(
        format!("{decoded:?}"),
        format!("{incremental:?}"),
        "the resumable decoder disagrees"
    );

    match decoded {
        Ok(Parse::Complete(msg, used)) => {
            assert!(
                used > 0 && used <= buf.len(),
                "used {used} of {}",
                buf.len()
            );
            assert!(used <= limits.max_frame);
            assert_eq!(scanned, Ok(Parse::Complete((), used)));
            // A frame is exactly one object: the prefix before its end is not one.
            assert_eq!(
                FrameScanner::default().scan(&buf[..used - 1], limits),
                Ok(Parse::Incomplete)
            );
            reencode(&msg);
            Some(used)
        }
        Ok(Parse::Incomplete) => {
            assert_eq!(scanned, Ok(Parse::Incomplete));
            None
        }
        Err(e) => {
            assert_eq!(e.must_close(), e.msgid().is_none());
            match &e {
                FrameError::Shape { len, .. } => {
                    assert!(*len > 0 && *len <= buf.len());
                    assert_eq!(scanned, Ok(Parse::Complete((), *len)));
                    assert_eq!(e.frame_len(), Some(*len));
                    Some(*len)
                }
                FrameError::Invalid(_) => None,
                FrameError::TooLarge { limit } => {
                    assert_eq!(*limit, limits.max_frame);
                    None
                }
                FrameError::TooDeep { limit } => {
                    assert!(*limit <= limits.max_depth.min(rpc::MAX_DEPTH_CAP));
                    None
                }
                FrameError::TooManyObjects { limit } => {
                    assert_eq!(*limit, limits.max_objects);
                    None
                }
            }
        }
    }
}

/// Encoding a decoded message and decoding it again is stable: the second
/// encoding is byte-identical to the first.
fn reencode(msg: &Message) {
    let encode = |m: &Message| {
        let mut out = BytesMut::new();
        match m {
            Message::Request(r) => rpc::encode_request(r.msgid, &r.method, &r.params, &mut out),
            Message::Notification(n) => rpc::encode_notification(&n.method, &n.params, &mut out),
            Message::Response(r) => {
                let result = if r.error.is_nil() {
                    Ok(&r.result)
                } else {
                    Err(&r.error)
                };
                rpc::encode_response(r.msgid, result, &mut out)
            }
        }
        out
    };
    let first = encode(msg);
    // Re-encoding never nests deeper nor adds objects, but the frame may be
    // bigger (nil params become an empty array), so only depth is bounded.
    let limits = Limits {
        max_frame: usize::MAX,
        max_depth: rpc::MAX_DEPTH_CAP,
        max_objects: u64::MAX,
    };
    let Ok(Parse::Complete(again, used)) = rpc::decode(&first, &limits) else {
        panic!("a re-encoded message does not decode: {msg:?}");
    };
    assert_eq!(used, first.len());
    assert_eq!(encode(&again), first, "re-encoding is not stable");
}
