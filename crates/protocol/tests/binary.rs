use bytes::{BufMut, Bytes, BytesMut};
use memstored_protocol::binary::*;
use memstored_protocol::Parse;
use proptest::prelude::*;

/// Builds a request frame the way a client would.
fn frame(opcode: u8, extras: &[u8], key: &[u8], value: &[u8], opaque: u32, cas: u64) -> Vec<u8> {
    let mut out = BytesMut::new();
    BinaryHeader {
        magic: REQUEST_MAGIC,
        opcode,
        key_len: key.len() as u16,
        extras_len: extras.len() as u8,
        data_type: 0,
        vbucket_or_status: 0,
        body_len: (extras.len() + key.len() + value.len()) as u32,
        opaque,
        cas,
    }
    .encode(&mut out);
    out.put_slice(extras);
    out.put_slice(key);
    out.put_slice(value);
    out.to_vec()
}

fn parse_one(buf: &[u8]) -> Request {
    match Request::parse(buf) {
        Ok(Parse::Complete(req, used)) => {
            assert_eq!(used, buf.len());
            req
        }
        other => panic!("expected a complete request, got {other:?}"),
    }
}

fn set_extras(flags: u32, exptime: u32) -> Vec<u8> {
    let mut e = flags.to_be_bytes().to_vec();
    e.extend_from_slice(&exptime.to_be_bytes());
    e
}

fn arith_extras(delta: u64, initial: u64, exptime: u32) -> Vec<u8> {
    let mut e = delta.to_be_bytes().to_vec();
    e.extend_from_slice(&initial.to_be_bytes());
    e.extend_from_slice(&exptime.to_be_bytes());
    e
}

/// One valid frame per known opcode, with the command it must decode to.
fn every_opcode() -> Vec<(Vec<u8>, Command)> {
    let k = Bytes::from_static(b"key");
    let v = Bytes::from_static(b"value");
    let mut cases = Vec::new();
    for (op, quiet, return_key) in [
        (0x00, false, false),
        (0x09, true, false),
        (0x0c, false, true),
        (0x0d, true, true),
    ] {
        cases.push((
            frame(op, &[], b"key", &[], 1, 0),
            Command::Get {
                key: k.clone(),
                quiet,
                return_key,
            },
        ));
    }
    for (op, quiet, return_key) in [
        (0x1d, false, false),
        (0x1e, true, false),
        (0x23, false, true),
        (0x24, true, true),
    ] {
        cases.push((
            frame(op, &77u32.to_be_bytes(), b"key", &[], 1, 0),
            Command::GetAndTouch {
                key: k.clone(),
                exptime: 77,
                quiet,
                return_key,
            },
        ));
    }
    cases.push((
        frame(0x1c, &9u32.to_be_bytes(), b"key", &[], 1, 0),
        Command::Touch {
            key: k.clone(),
            exptime: 9,
        },
    ));
    for (op, mode, quiet) in [
        (0x01, StoreMode::Set, false),
        (0x11, StoreMode::Set, true),
        (0x02, StoreMode::Add, false),
        (0x12, StoreMode::Add, true),
        (0x03, StoreMode::Replace, false),
        (0x13, StoreMode::Replace, true),
    ] {
        cases.push((
            frame(op, &set_extras(0xabcd, 60), b"key", b"value", 1, 42),
            Command::Store {
                mode,
                key: k.clone(),
                value: v.clone(),
                flags: 0xabcd,
                exptime: 60,
                cas: 42,
                quiet,
            },
        ));
    }
    for (op, mode, quiet) in [
        (0x0e, ConcatMode::Append, false),
        (0x19, ConcatMode::Append, true),
        (0x0f, ConcatMode::Prepend, false),
        (0x1a, ConcatMode::Prepend, true),
    ] {
        cases.push((
            frame(op, &[], b"key", b"value", 1, 5),
            Command::Concat {
                mode,
                key: k.clone(),
                value: v.clone(),
                cas: 5,
                quiet,
            },
        ));
    }
    for (op, quiet) in [(0x04, false), (0x14, true)] {
        cases.push((
            frame(op, &[], b"key", &[], 1, 3),
            Command::Delete {
                key: k.clone(),
                cas: 3,
                quiet,
            },
        ));
    }
    for (op, mode, quiet) in [
        (0x05, ArithMode::Increment, false),
        (0x15, ArithMode::Increment, true),
        (0x06, ArithMode::Decrement, false),
        (0x16, ArithMode::Decrement, true),
    ] {
        cases.push((
            frame(op, &arith_extras(2, 10, 0xffff_ffff), b"key", &[], 1, 0),
            Command::Arith {
                mode,
                key: k.clone(),
                delta: 2,
                initial: 10,
                exptime: 0xffff_ffff,
                cas: 0,
                quiet,
            },
        ));
    }
    cases.push((
        frame(0x07, &[], &[], &[], 1, 0),
        Command::Quit { quiet: false },
    ));
    cases.push((
        frame(0x17, &[], &[], &[], 1, 0),
        Command::Quit { quiet: true },
    ));
    cases.push((
        frame(0x08, &[], &[], &[], 1, 0),
        Command::Flush {
            delay: None,
            quiet: false,
        },
    ));
    cases.push((
        frame(0x18, &30u32.to_be_bytes(), &[], &[], 1, 0),
        Command::Flush {
            delay: Some(30),
            quiet: true,
        },
    ));
    cases.push((frame(0x0a, &[], &[], &[], 1, 0), Command::Noop));
    cases.push((frame(0x0b, &[], &[], &[], 1, 0), Command::Version));
    cases.push((
        frame(0x10, &[], &[], &[], 1, 0),
        Command::Stat { group: None },
    ));
    cases.push((
        frame(0x10, &[], b"items", &[], 1, 0),
        Command::Stat {
            group: Some(Bytes::from_static(b"items")),
        },
    ));
    cases.push((frame(0x20, &[], &[], &[], 1, 0), Command::SaslListMechs));
    cases.push((
        frame(0x21, &[], b"PLAIN", b"\0user\0pw", 1, 0),
        Command::SaslAuth {
            mechanism: Bytes::from_static(b"PLAIN"),
            data: Bytes::from_static(b"\0user\0pw"),
        },
    ));
    cases.push((
        frame(0x22, &[], b"PLAIN", b"more", 1, 0),
        Command::SaslStep {
            mechanism: Bytes::from_static(b"PLAIN"),
            data: Bytes::from_static(b"more"),
        },
    ));
    cases
}

#[test]
fn every_opcode_parses() {
    let cases = every_opcode();
    // Every known opcode is covered at least once.
    for op in Opcode::ALL {
        assert!(
            cases.iter().any(|(f, _)| f[1] == op.as_u8()),
            "opcode {op:?} not covered"
        );
    }
    for (bytes, expected) in cases {
        let req = parse_one(&bytes);
        assert_eq!(req.command, expected, "opcode {:#04x}", bytes[1]);
        assert_eq!(req.opaque(), 1);
        assert_eq!(
            req.is_quiet(),
            Opcode::from_u8(bytes[1]).unwrap().is_quiet()
        );
    }
}

#[test]
fn every_prefix_is_incomplete() {
    for (bytes, _) in every_opcode() {
        for n in 0..bytes.len() {
            assert_eq!(
                Request::parse(&bytes[..n]),
                Ok(Parse::Incomplete),
                "prefix {n}"
            );
            let b = Bytes::copy_from_slice(&bytes[..n]);
            assert_eq!(Request::parse_bytes(&b), Ok(Parse::Incomplete));
            let mut bm = BytesMut::from(&bytes[..n]);
            assert_eq!(Request::parse_buf(&mut bm), Ok(None));
            assert_eq!(bm.len(), n, "incomplete parse must not consume");
        }
    }
}

#[test]
fn pipelined_frames_parse_in_order_zero_copy() {
    let mut all = BytesMut::new();
    let cases = every_opcode();
    for (bytes, _) in &cases {
        all.put_slice(bytes);
    }
    let base = all.as_ptr() as usize;
    let end = base + all.len();
    for (_, expected) in &cases {
        let req = Request::parse_buf(&mut all).unwrap().expect("complete");
        assert_eq!(&req.command, expected);
        if let Command::Store { value, .. } = &req.command {
            // The value points into the original read buffer: no copy.
            let p = value.as_ptr() as usize;
            assert!(p >= base && p < end);
        }
    }
    assert!(all.is_empty());
}

#[test]
fn parse_bytes_slices_without_copy() {
    let buf = Bytes::from(frame(0x01, &set_extras(0, 0), b"k", b"hello", 9, 0));
    let Ok(Parse::Complete(req, used)) = Request::parse_bytes(&buf) else {
        panic!("incomplete")
    };
    assert_eq!(used, buf.len());
    let Command::Store { value, .. } = req.command else {
        panic!()
    };
    assert_eq!(&value[..], b"hello");
    assert_eq!(value.as_ptr(), buf[buf.len() - 5..].as_ptr());
}

#[test]
fn unknown_opcode_consumes_body_and_is_not_an_error() {
    let bytes = frame(0x3f, &[1, 2], b"kk", b"vvv", 7, 0);
    let req = parse_one(&bytes);
    assert_eq!(req.command, Command::Unknown { opcode: 0x3f });
    assert_eq!(req.header.opaque, 7);
}

#[test]
fn key_longer_than_250_is_rejected_with_einval() {
    let key = vec![b'a'; 251];
    let bytes = frame(0x00, &[], &key, &[], 5, 0);
    let err = Request::parse(&bytes).unwrap_err();
    assert!(matches!(err, BinaryError::KeyTooLong(_)));
    assert_eq!(err.status(), Some(Status::InvalidArguments));
    assert!(err.must_close());
    let head = err.reply_head().unwrap();
    assert_eq!((head.opcode, head.opaque), (0x00, 5));
    // 250 is fine.
    let ok = frame(0x00, &[], &key[..250], &[], 5, 0);
    assert!(matches!(parse_one(&ok).command, Command::Get { .. }));
}

#[test]
fn key_too_long_is_detected_from_header_alone() {
    let key = vec![b'a'; 300];
    let bytes = frame(0x00, &[], &key, &[], 5, 0);
    // Only the header is buffered: error right away, no waiting for the body.
    assert!(matches!(
        Request::parse(&bytes[..HEADER_LEN]),
        Err(BinaryError::KeyTooLong(_))
    ));
}

#[test]
fn extras_and_key_longer_than_body() {
    let mut bytes = frame(0x01, &set_extras(0, 0), b"key", b"", 1, 0);
    // Declare a body shorter than extras + key.
    bytes[8..12].copy_from_slice(&5u32.to_be_bytes());
    let err = Request::parse(&bytes).unwrap_err();
    assert!(matches!(err, BinaryError::BodyTooShort(_)));
    assert_eq!(err.status(), Some(Status::UnknownCommand));
}

#[test]
fn wrong_extras_lengths_are_invalid_arguments() {
    let bad = [
        frame(0x00, &[0; 4], b"key", &[], 1, 0),   // GET with extras
        frame(0x00, &[], &[], &[], 1, 0),          // GET without key
        frame(0x00, &[], b"key", b"v", 1, 0),      // GET with value
        frame(0x01, &[0; 4], b"key", b"v", 1, 0),  // SET with 4-byte extras
        frame(0x01, &[0; 8], &[], b"v", 1, 0),     // SET without key
        frame(0x05, &[0; 8], b"key", &[], 1, 0),   // INCR with short extras
        frame(0x05, &[0; 20], b"key", b"x", 1, 0), // INCR with value
        frame(0x04, &[0; 4], b"key", &[], 1, 0),   // DELETE with extras
        frame(0x08, &[0; 8], &[], &[], 1, 0),      // FLUSH with 8-byte extras
        frame(0x08, &[], b"k", &[], 1, 0),         // FLUSH with key
        frame(0x0a, &[], b"k", &[], 1, 0),         // NOOP with key
        frame(0x0b, &[], &[], b"v", 1, 0),         // VERSION with value
        frame(0x07, &[0; 4], &[], &[], 1, 0),      // QUIT with extras
        frame(0x1c, &[], b"key", &[], 1, 0),       // TOUCH without extras
        frame(0x1d, &[0; 4], &[], &[], 1, 0),      // GAT without key
        frame(0x0e, &[0; 4], b"key", b"v", 1, 0),  // APPEND with extras
        frame(0x10, &[0; 4], &[], &[], 1, 0),      // STAT with extras
        frame(0x21, &[], &[], b"x", 1, 0),         // SASL_AUTH without mechanism
        frame(0x20, &[], b"k", &[], 1, 0),         // SASL_LIST_MECHS with key
    ];
    for bytes in bad {
        let err = Request::parse(&bytes).unwrap_err();
        assert!(
            matches!(err, BinaryError::InvalidArguments(_)),
            "opcode {:#04x}: {err:?}",
            bytes[1]
        );
        assert_eq!(err.status(), Some(Status::InvalidArguments));
    }
}

#[test]
fn bad_magic_closes_without_reply() {
    let mut bytes = frame(0x0a, &[], &[], &[], 1, 0);
    bytes[0] = 0x81;
    let err = Request::parse(&bytes).unwrap_err();
    assert_eq!(err, BinaryError::BadMagic(0x81));
    assert_eq!(err.status(), None);
    assert!(err.reply_head().is_none());
}

#[test]
fn huge_declared_body_is_incomplete_and_skippable() {
    let mut bytes = frame(0x01, &set_extras(0, 0), b"key", b"", 3, 0);
    bytes[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
    // Nothing behind the header: just Incomplete, and no allocation of 4 GiB
    // (if it tried, this test would abort).
    assert_eq!(Request::parse(&bytes), Ok(Parse::Incomplete));
    let mut bm = BytesMut::from(&bytes[..]);
    assert_eq!(Request::parse_buf(&mut bm), Ok(None));
    // The server peeks at the header to refuse it and skip the body.
    let Ok(Parse::Complete(h, HEADER_LEN)) = BinaryHeader::parse(&bytes) else {
        panic!()
    };
    assert_eq!(h.validate_request(), Ok(()));
    assert_eq!(h.frame_len(), 24 + u64::from(u32::MAX));
    assert_eq!(h.value_len(), u32::MAX - 11);
    let mut out = BytesMut::new();
    encode_error(
        &ResponseHead::reply_to(&h).with_status(Status::TooLarge),
        &mut out,
    );
    assert_eq!(out[1], 0x01);
    assert_eq!(&out[6..8], &[0, 3]);
    assert_eq!(&out[12..16], &3u32.to_be_bytes());
    assert_eq!(&out[24..], b"Too large.");
}

#[test]
fn response_head_layout() {
    let req = BinaryHeader::parse(&frame(0x0c, &[], b"key", &[], 0x0102_0304, 0))
        .unwrap()
        .complete()
        .unwrap()
        .0;
    let head = ResponseHead::reply_to(&req).with_cas(99);
    let mut out = BytesMut::new();
    let value = Bytes::from_static(b"the value");
    encode_response_head(&head, &0x10u32.to_be_bytes(), b"key", value.len(), &mut out).unwrap();
    assert_eq!(out.len(), HEADER_LEN + 4 + 3);
    let expected_header = [
        0x81, 0x0c, 0, 3, 4, 0, 0, 0, 0, 0, 0, 16, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 99,
    ];
    assert_eq!(&out[..24], &expected_header);
    assert_eq!(&out[24..28], &0x10u32.to_be_bytes());
    assert_eq!(&out[28..], b"key");

    // Head + separately sent value parse back as one response.
    let mut wire = out.clone();
    wire.put_slice(&value);
    let wire = wire.freeze();
    let Ok(Parse::Complete(resp, used)) = Response::parse_bytes(&wire) else {
        panic!()
    };
    assert_eq!(used, wire.len());
    assert_eq!(resp.status(), Some(Status::NoError));
    assert_eq!(&resp.extras[..], &0x10u32.to_be_bytes());
    assert_eq!(&resp.key[..], b"key");
    assert_eq!(resp.value, value);
    assert_eq!(resp.header.opaque, 0x0102_0304);
    assert_eq!(resp.header.cas, 99);
    for n in 0..wire.len() {
        assert_eq!(
            Response::parse_bytes(&wire.slice(..n)),
            Ok(Parse::Incomplete)
        );
    }
}

#[test]
fn error_bodies_match_memcached() {
    let head = ResponseHead {
        opcode: 0,
        status: Status::KeyNotFound,
        opaque: 0,
        cas: 0,
    };
    let mut out = BytesMut::new();
    encode_error(&head, &mut out);
    assert_eq!(&out[24..], b"Not found");
    assert_eq!(Status::KeyExists.message(), "Data exists for key.");
    assert_eq!(Status::NotStored.message(), "Not stored.");
    assert_eq!(Status::UnknownCommand.message(), "Unknown command");
}

#[test]
fn oversized_response_parts_are_refused() {
    let head = ResponseHead {
        opcode: 0,
        status: Status::NoError,
        opaque: 0,
        cas: 0,
    };
    let mut out = BytesMut::new();
    assert_eq!(
        encode_response_head(&head, &[0; 4], b"k", u32::MAX as usize, &mut out),
        Err(EncodeError::TooLarge)
    );
    assert!(out.is_empty());
    assert!(encode_response_head(&head, &[], &[], u32::MAX as usize, &mut out).is_ok());
    assert_eq!(&out[8..12], &u32::MAX.to_be_bytes());
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = Request::parse(&data);
        let _ = Request::parse_bytes(&Bytes::from(data.clone()));
        let mut bm = BytesMut::from(&data[..]);
        let _ = Request::parse_buf(&mut bm);
        let _ = Response::parse_bytes(&Bytes::from(data.clone()));
    }

    #[test]
    fn arbitrary_bodies_behind_valid_magic_never_panic(
        opcode in any::<u8>(),
        key_len in 0u16..300,
        extras_len in any::<u8>(),
        body_len in 0u32..600,
        body in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        let mut buf = BytesMut::new();
        BinaryHeader {
            magic: REQUEST_MAGIC, opcode, key_len, extras_len, data_type: 0,
            vbucket_or_status: 0, body_len, opaque: 0, cas: 0,
        }.encode(&mut buf);
        buf.put_slice(&body);
        match Request::parse(&buf) {
            Ok(Parse::Complete(_, used)) => prop_assert_eq!(used, 24 + body_len as usize),
            Ok(Parse::Incomplete) => prop_assert!(body.len() < body_len as usize),
            Err(e) => prop_assert!(e.must_close()),
        }
    }
}
