use super::*;
use bytes::BytesMut;
use proptest::prelude::*;

fn req(msgid: u32, method: &str, params: &[Value]) -> BytesMut {
    let mut b = BytesMut::new();
    encode_request(msgid, method, params, &mut b);
    b
}

fn decode_one(buf: &[u8]) -> (Message, usize) {
    decode(buf, &Limits::default())
        .unwrap()
        .complete()
        .expect("complete")
}

fn sample_params() -> Vec<Value> {
    vec![
        Value::Binary(b"key\0\xff".to_vec()),
        Value::from("value"),
        Value::Map(vec![
            (Value::from("xt"), Value::from(-5)),
            (Value::from("atomic"), Value::Boolean(true)),
            (Value::from("f"), Value::F64(1.5)),
            (
                Value::from("nested"),
                Value::Array(vec![Value::Nil, Value::from(u64::MAX)]),
            ),
            (Value::from("ext"), Value::Ext(3, vec![1, 2, 3, 4, 5])),
        ]),
    ]
}

#[test]
fn request_round_trip() {
    let wire = req(42, "set", &sample_params());
    let (m, used) = decode_one(&wire);
    assert_eq!(used, wire.len());
    assert_eq!(
        m,
        Message::Request(Request {
            msgid: 42,
            method: "set".into(),
            params: sample_params(),
        })
    );
}

#[test]
fn response_and_notification_round_trip() {
    let mut wire = BytesMut::new();
    encode_response(9, Ok(&Value::from(7)), &mut wire);
    encode_error(10, 35, "no record", &mut wire);
    encode_notification("set", &sample_params(), &mut wire);
    let (m, a) = decode_one(&wire);
    let Message::Response(r) = m else { panic!() };
    assert_eq!((r.msgid, r.into_result()), (9, Ok(Value::from(7))));
    let (m, b) = decode_one(&wire[a..]);
    let Message::Response(r) = m else { panic!() };
    assert_eq!((r.msgid, r.error_code()), (10, Some(35)));
    assert_eq!(r.into_result(), Err(error_value(35, "no record")));
    let (m, c) = decode_one(&wire[a + b..]);
    assert_eq!(
        m,
        Message::Notification(Notification {
            method: "set".into(),
            params: sample_params(),
        })
    );
    assert_eq!(a + b + c, wire.len());
}

#[test]
fn response_head_then_bin_head_then_raw_value() {
    let mut wire = BytesMut::new();
    encode_response_head(3, &mut wire);
    encode_bin_head(5, &mut wire);
    wire.extend_from_slice(b"hello");
    let (m, _) = decode_one(&wire);
    let Message::Response(r) = m else { panic!() };
    assert_eq!(r.result, Value::Binary(b"hello".to_vec()));
}

#[test]
fn every_split_point_is_incomplete() {
    let mut wire = req(1, "set_bulk", &sample_params());
    encode_bin_head(300, &mut wire); // not part of the first frame
    let frame = req(1, "set_bulk", &sample_params()).len();
    for cut in 0..frame {
        assert_eq!(
            decode(&wire[..cut], &Limits::default()),
            Ok(Parse::Incomplete),
            "cut at {cut}"
        );
    }
    // Resumable: the same buffer fed a byte at a time.
    let mut d = Decoder::default();
    for cut in 0..frame {
        assert_eq!(d.decode(&wire[..cut]), Ok(Parse::Incomplete));
    }
    let (_, used) = d.decode(&wire).unwrap().complete().unwrap();
    assert_eq!(used, frame);
    // The decoder starts afresh for the next frame.
    assert_eq!(d.decode(&wire[frame..]), Ok(Parse::Incomplete));
}

#[test]
fn huge_declared_bin_is_incomplete() {
    // [0, 1, "set", [bin32 of 4 GiB - 1 ...
    let mut wire = BytesMut::new();
    wire.extend_from_slice(&[0x94, 0x00, 0x01, 0xa3]);
    wire.extend_from_slice(b"set");
    wire.extend_from_slice(&[0x92, 0xc6, 0xff, 0xff, 0xff, 0xff, b'x']);
    let big = Limits::with_max_frame(usize::MAX);
    assert_eq!(decode(&wire, &big), Ok(Parse::Incomplete));
    // With the default limit, the declaration alone is refused.
    assert_eq!(
        decode(&wire, &Limits::default()),
        Err(FrameError::TooLarge {
            limit: Limits::default().max_frame
        })
    );
}

#[test]
fn huge_declared_array_is_refused_early() {
    // array32 of 4G elements: too many objects for the default limits.
    let wire = [0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0];
    let e = decode(&wire, &Limits::default()).unwrap_err();
    assert!(matches!(e, FrameError::TooLarge { .. }), "{e:?}");
    let lim = Limits {
        max_frame: usize::MAX,
        ..Limits::default()
    };
    assert!(matches!(
        decode(&wire, &lim),
        Err(FrameError::TooManyObjects { .. })
    ));
    let lim = Limits {
        max_frame: usize::MAX,
        max_objects: u64::MAX,
        ..Limits::default()
    };
    assert_eq!(decode(&wire, &lim), Ok(Parse::Incomplete));
}

#[test]
fn depth_limit() {
    let mut wire = vec![0x91; 40];
    wire.push(0xc0);
    assert_eq!(
        decode(&wire, &Limits::default()),
        Err(FrameError::TooDeep { limit: 32 })
    );
    let lim = Limits {
        max_depth: 1000,
        ..Limits::default()
    };
    let mut deep = vec![0x91; MAX_DEPTH_CAP + 1];
    deep.push(0xc0);
    assert_eq!(
        decode(&deep, &lim),
        Err(FrameError::TooDeep {
            limit: MAX_DEPTH_CAP
        })
    );
    // Exactly at the limit decodes (as a shape error: it is not a message).
    let mut ok = vec![0x91; 32];
    ok.push(0xc0);
    assert!(matches!(
        decode(&ok, &Limits::default()),
        Err(FrameError::Shape { msgid: None, .. })
    ));
}

#[test]
fn object_limit() {
    let lim = Limits {
        max_objects: 10,
        ..Limits::default()
    };
    let params: Vec<Value> = (0..6).map(Value::from).collect();
    let wire = req(1, "x", &params);
    assert!(matches!(
        decode(&wire, &lim),
        Err(FrameError::TooManyObjects { limit: 10 })
    ));
    let wire = req(1, "x", &params[..5]);
    assert!(decode(&wire, &lim).unwrap().is_complete());
}

#[test]
fn reserved_byte_is_invalid() {
    assert_eq!(
        decode(&[0x94, 0x00, 0xc1], &Limits::default()),
        Err(FrameError::Invalid("reserved marker byte 0xc1"))
    );
}

#[test]
fn shape_errors() {
    let lim = Limits::default();
    let shape_of = |v: Value| {
        let mut b = BytesMut::new();
        ok_write(&v, &mut b);
        let e = decode(&b, &lim).unwrap_err();
        assert_eq!(e.frame_len(), Some(b.len()));
        e
    };
    // Not an array.
    assert!(shape_of(Value::from(1)).must_close());
    // Unknown type.
    assert!(shape_of(Value::Array(vec![Value::from(7)])).must_close());
    // A request whose method is an int: the msgid is known, answer and go on.
    let e = shape_of(Value::Array(vec![
        Value::from(0),
        Value::from(5),
        Value::from(1),
        Value::Array(vec![]),
    ]));
    assert_eq!(e.msgid(), Some(5));
    assert!(!e.must_close());
    // Params not an array.
    let e = shape_of(Value::Array(vec![
        Value::from(0),
        Value::from(6),
        Value::from("get"),
        Value::from(1),
    ]));
    assert_eq!(e.msgid(), Some(6));
    // Wrong arity with a readable msgid.
    let e = shape_of(Value::Array(vec![
        Value::from(0),
        Value::from(8),
        Value::from("get"),
    ]));
    assert_eq!(e.msgid(), Some(8));
    // A negative msgid.
    let e = shape_of(Value::Array(vec![
        Value::from(0),
        Value::from(-1),
        Value::from("get"),
        Value::Array(vec![]),
    ]));
    assert!(e.must_close());
    // Nil params are accepted as none.
    let mut b = BytesMut::new();
    ok_write(
        &Value::Array(vec![
            Value::from(0),
            Value::from(1),
            Value::Binary(b"ping".to_vec()),
            Value::Nil,
        ]),
        &mut b,
    );
    let (m, _) = decode_one(&b);
    assert_eq!(
        m,
        Message::Request(Request {
            msgid: 1,
            method: "ping".into(),
            params: vec![]
        })
    );
}

fn ok_write(v: &Value, b: &mut BytesMut) {
    use bytes::BufMut;
    rmpv::encode::write_value(&mut b.writer(), v).unwrap();
}

#[test]
fn helpers() {
    let s = Value::String(rmpv::Utf8String::from(""));
    assert_eq!(value_bytes(&s), Some(&b""[..]));
    // A str that is not UTF-8 still yields its bytes.
    let mut b = BytesMut::new();
    b.extend_from_slice(&[
        0x94, 0x00, 0x01, 0xa3, b'g', b'e', b't', 0x91, 0xa2, 0xff, 0xfe,
    ]);
    let (Message::Request(r), _) = decode_one(&b) else {
        panic!()
    };
    assert_eq!(value_bytes(&r.params[0]), Some(&[0xff, 0xfe][..]));
    assert_eq!(value_str(&r.params[0]), None);
    let m = vec![(Value::Binary(b"xt".to_vec()), Value::from(3))];
    assert_eq!(map_get(&m, "xt"), Some(&Value::from(3)));
    assert_eq!(map_get(&m, "max"), None);
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Boolean),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::F64),
        ".{0,40}".prop_map(Value::from),
        proptest::collection::vec(any::<u8>(), 0..300).prop_map(Value::Binary),
        (any::<i8>(), proptest::collection::vec(any::<u8>(), 0..20))
            .prop_map(|(t, d)| Value::Ext(t, d)),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..20).prop_map(Value::Array),
            proptest::collection::vec((inner.clone(), inner), 0..10).prop_map(Value::Map),
        ]
    })
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let lim = Limits { max_frame: 4096, max_depth: 8, max_objects: 256 };
        let _ = decode(&bytes, &lim);
        let _ = decode(&bytes, &Limits::default());
        let mut d = Decoder::new(lim);
        for cut in 0..=bytes.len() {
            if let Ok(Parse::Incomplete) = d.decode(&bytes[..cut]) {
                continue;
            }
            d.reset();
        }
    }

    #[test]
    fn arbitrary_prefix_then_garbage(params in proptest::collection::vec(arb_value(), 0..4),
                                     tail in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut wire = req(3, "m", &params);
        let len = wire.len();
        wire.extend_from_slice(&tail);
        let (m, used) = decode_one(&wire);
        prop_assert_eq!(used, len);
        prop_assert_eq!(m, Message::Request(Request { msgid: 3, method: "m".into(), params }));
    }

    #[test]
    fn split_points_of_arbitrary_frames(params in proptest::collection::vec(arb_value(), 0..4)) {
        let wire = req(u32::MAX, "echo", &params);
        for cut in 0..wire.len() {
            prop_assert_eq!(decode(&wire[..cut], &Limits::default()), Ok(Parse::Incomplete));
        }
        let mut d = Decoder::default();
        for cut in (0..wire.len()).step_by(7) {
            prop_assert_eq!(d.decode(&wire[..cut]), Ok(Parse::Incomplete));
        }
        prop_assert!(d.decode(&wire).unwrap().is_complete());
    }

    #[test]
    fn scanner_agrees_with_rmpv(v in arb_value()) {
        let mut b = BytesMut::new();
        ok_write(&v, &mut b);
        prop_assert_eq!(frame_len(&b, &Limits::default()), Ok(Parse::Complete((), b.len())));
    }
}
