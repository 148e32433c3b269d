use bytes::{Bytes, BytesMut};
use memstored_protocol::text::response::*;
use memstored_protocol::text::*;
use memstored_protocol::Parse;

fn ok(line: &str) -> Command {
    match TextParser::default().parse(line.as_bytes()) {
        Ok(Parse::Complete(cmd, used)) => {
            assert_eq!(used, line.len());
            cmd
        }
        other => panic!("{line:?}: {other:?}"),
    }
}

fn fail(line: &str) -> TextError {
    match TextParser::default().parse(line.as_bytes()) {
        Err(e) => {
            assert_eq!(e.consumed, line.len());
            assert!(!e.noreply, "meta errors are always sent");
            e
        }
        other => panic!("{line:?}: expected error, got {other:?}"),
    }
}

#[test]
fn meta_get() {
    let Command::MetaGet(mg) = ok("mg foo v k f c t s q Oxyz T30 N60\r\n") else {
        panic!()
    };
    assert_eq!(&mg.key[..], b"foo");
    let f = &mg.flags;
    assert!(f.return_value && f.return_key && f.return_client_flags && f.return_cas);
    assert!(f.return_ttl && f.return_size && f.quiet);
    assert_eq!(f.opaque.as_deref(), Some(&b"xyz"[..]));
    assert_eq!((f.ttl, f.vivify_ttl), (Some(30), Some(60)));
    assert_eq!(f.requested(), b"vkfctsqOTN");
    let Command::MetaGet(mg) = ok("mg foo\r\n") else {
        panic!()
    };
    assert_eq!(mg.flags.requested(), b"");
}

#[test]
fn meta_set() {
    let Command::MetaSet(ms) = ok("ms foo 5 F7 T-1 C12 I q MA\r\n") else {
        panic!()
    };
    assert_eq!(ms.data_len, 5);
    assert_eq!(ms.mode, MetaSetMode::Append);
    assert_eq!(ms.flags.client_flags, Some(7));
    assert_eq!(ms.flags.ttl, Some(-1));
    assert_eq!(ms.flags.compare_cas, Some(12));
    assert!(ms.flags.invalidate && ms.flags.quiet);
    assert_eq!(Command::MetaSet(ms).data_len(), Some(5));
    for (m, mode) in [
        ("S", MetaSetMode::Set),
        ("E", MetaSetMode::Add),
        ("A", MetaSetMode::Append),
        ("P", MetaSetMode::Prepend),
        ("R", MetaSetMode::Replace),
    ] {
        let Command::MetaSet(ms) = ok(&format!("ms k 1 M{m}\r\n")) else {
            panic!()
        };
        assert_eq!(ms.mode, mode);
    }
    let Command::MetaSet(ms) = ok("ms k 0\r\n") else {
        panic!()
    };
    assert_eq!(ms.mode, MetaSetMode::Set);
}

#[test]
fn meta_set_errors_swallow_the_data_block() {
    let e = fail("ms k 5 MX\r\n");
    assert_eq!(e.reply(), b"CLIENT_ERROR invalid mode for ms M token\r\n");
    assert_eq!(e.swallow, 7);
    let e = fail("ms k 5 Z\r\n");
    assert_eq!(e.reply(), b"CLIENT_ERROR invalid flag\r\n");
    assert_eq!(e.swallow, 7);
    let e = fail("ms k 5 T1 T2\r\n");
    assert_eq!(e.reply(), b"CLIENT_ERROR duplicate flag\r\n");
    assert_eq!(e.swallow, 7);
    // Before the length is understood nothing can be swallowed.
    let e = fail("ms k x\r\n");
    assert_eq!(e.reply(), b"CLIENT_ERROR bad command line format\r\n");
    assert_eq!(e.swallow, 0);
    assert_eq!(
        fail("ms k\r\n").reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );
}

#[test]
fn meta_delete_and_arith() {
    let Command::MetaDelete(md) = ok("md foo q C5 I T30 Oo\r\n") else {
        panic!()
    };
    assert_eq!((md.flags.compare_cas, md.flags.ttl), (Some(5), Some(30)));
    assert!(md.flags.invalidate && md.flags.quiet);
    // memcached 1.6.45 answers md's flag errors as mg's.
    assert_eq!(
        fail("md foo Z\r\n").reply(),
        b"CLIENT_ERROR invalid flag\r\n"
    );
    assert_eq!(
        fail("md foo q q\r\n").reply(),
        b"CLIENT_ERROR duplicate flag\r\n"
    );
    let Command::MetaDelete(md) = ok("md foo x E77\r\n") else {
        panic!()
    };
    assert_eq!((md.flags.remove_value, md.flags.new_cas), (true, Some(77)));

    let Command::MetaArith(ma) = ok("ma foo\r\n") else {
        panic!()
    };
    assert_eq!(
        (ma.mode, ma.delta, ma.initial),
        (MetaArithMode::Increment, 1, 0)
    );
    let Command::MetaArith(ma) = ok("ma foo MD D10 J5 N0 v t c\r\n") else {
        panic!()
    };
    assert_eq!(
        (ma.mode, ma.delta, ma.initial),
        (MetaArithMode::Decrement, 10, 5)
    );
    assert_eq!(ma.flags.vivify_ttl, Some(0));
    let Command::MetaArith(ma) = ok("ma foo M-\r\n") else {
        panic!()
    };
    assert_eq!(ma.mode, MetaArithMode::Decrement);
    assert_eq!(
        fail("ma foo MQ\r\n").reply(),
        b"CLIENT_ERROR invalid mode for ma M token\r\n"
    );
    assert_eq!(
        fail("ma foo Dx\r\n").reply(),
        b"CLIENT_ERROR invalid or duplicate flag\r\n"
    );
}

#[test]
fn meta_noop_and_debug() {
    assert_eq!(ok("mn\r\n"), Command::MetaNoop);
    assert_eq!(
        ok("me foo\r\n"),
        Command::MetaDebug {
            key: Bytes::from_static(b"foo"),
            base64: false
        }
    );
    // memcached 1.6.45 reads `me`'s key as given, `b` or not.
    assert_eq!(
        ok("me Zm9v b\r\n"),
        Command::MetaDebug {
            key: Bytes::from_static(b"Zm9v"),
            base64: false
        }
    );
    assert_eq!(
        fail("me\r\n").reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );
}

#[test]
fn meta_general_errors() {
    assert_eq!(
        fail("mg\r\n").reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(fail("mx foo\r\n").reply(), b"ERROR\r\n");
    let long = "k".repeat(251);
    assert_eq!(
        fail(&format!("mg {long} v\r\n")).reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(
        fail("mg foo v v\r\n").reply(),
        b"CLIENT_ERROR duplicate flag\r\n"
    );
    assert_eq!(
        fail("mg foo !\r\n").reply(),
        b"CLIENT_ERROR invalid flag\r\n"
    );
    assert_eq!(
        fail("mg foo Tabc\r\n").reply(),
        b"CLIENT_ERROR bad token in command line format\r\n"
    );
    assert_eq!(
        fail("mg foo Mxx\r\n").reply(),
        b"CLIENT_ERROR incorrect length for M token\r\n"
    );
    let opaque = "x".repeat(40);
    assert_eq!(
        fail(&format!("mg foo O{opaque}\r\n")).reply(),
        b"CLIENT_ERROR opaque token too long\r\n"
    );
    // 17 flags are fine for mg, 18 are too many.
    let flags17 = "v k f c t s q h l u O1 T1 N1 R1 b I C1";
    assert!(
        fail(&format!("mg Zm9v {flags17} P\r\n")).reply()
            == b"CLIENT_ERROR options flags are too long\r\n"
    );
    assert!(matches!(
        ok(&format!("mg Zm9v {flags17}\r\n")),
        Command::MetaGet(_)
    ));
    assert_eq!(
        fail(&format!("md foo {flags17} P\r\n")).reply(),
        b"CLIENT_ERROR options flags too long\r\n"
    );
    assert_eq!(
        fail("mg Zm9v= b\r\n").reply(),
        b"CLIENT_ERROR error decoding key\r\n"
    );
}

#[test]
fn base64_keys() {
    let Command::MetaGet(mg) = ok("mg AAEC/w== b v k\r\n") else {
        panic!()
    };
    assert_eq!(&mg.key[..], &[0, 1, 2, 255]);
    assert!(mg.flags.base64_key);
    let mut out = BytesMut::new();
    encode_meta(
        MetaStatus::Hd,
        &[MetaReturn::Key {
            key: &mg.key,
            binary: true,
        }],
        &mut out,
    );
    assert_eq!(&out[..], b"HD kAAEC/w== b\r\n");
}

#[test]
fn meta_replies() {
    let mut out = BytesMut::new();
    encode_meta_value_head(
        5,
        &[
            MetaReturn::Key {
                key: b"foo",
                binary: false,
            },
            MetaReturn::ClientFlags(3),
            MetaReturn::Cas(99),
            MetaReturn::Ttl(None),
            MetaReturn::Size(5),
            MetaReturn::Opaque(b"xyz"),
        ],
        &mut out,
    );
    assert_eq!(&out[..], b"VA 5 kfoo f3 c99 t-1 s5 Oxyz\r\n");
    out.clear();
    encode_meta(
        MetaStatus::Hd,
        &[
            MetaReturn::Ttl(Some(30)),
            MetaReturn::Hit(true),
            MetaReturn::LastAccess(4),
        ],
        &mut out,
    );
    encode_meta(MetaStatus::En, &[], &mut out);
    encode_meta(MetaStatus::Nf, &[MetaReturn::Opaque(b"1")], &mut out);
    encode_meta(MetaStatus::Ns, &[], &mut out);
    encode_meta(MetaStatus::Ex, &[], &mut out);
    encode_meta(MetaStatus::Mn, &[], &mut out);
    encode_meta(
        MetaStatus::Hd,
        &[MetaReturn::Won, MetaReturn::Stale, MetaReturn::AlreadyWon],
        &mut out,
    );
    assert_eq!(
        &out[..],
        &b"HD t30 h1 l4\r\nEN\r\nNF O1\r\nNS\r\nEX\r\nMN\r\nHD W X Z\r\n"[..]
    );
    out.clear();
    encode_meta_debug(
        b"foo",
        false,
        "exp=-1 la=3 cas=7 fetch=no cls=1 size=63",
        &mut out,
    );
    assert_eq!(
        &out[..],
        b"ME foo exp=-1 la=3 cas=7 fetch=no cls=1 size=63\r\n"
    );
}
