use bytes::{Bytes, BytesMut};
use memstored_protocol::text::response::*;
use memstored_protocol::text::*;
use memstored_protocol::Parse;
use proptest::prelude::*;

fn parse(line: &str) -> Result<Parse<Command>, TextError> {
    TextParser::default().parse(line.as_bytes())
}

fn ok(line: &str) -> Command {
    match parse(line) {
        Ok(Parse::Complete(cmd, used)) => {
            assert_eq!(used, line.len(), "{line:?}");
            cmd
        }
        other => panic!("{line:?}: {other:?}"),
    }
}

fn fail(line: &str) -> TextError {
    match parse(line) {
        Err(e) => {
            if !e.must_close() {
                assert_eq!(e.consumed, line.len(), "{line:?}");
            }
            e
        }
        other => panic!("{line:?}: expected error, got {other:?}"),
    }
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

#[test]
fn storage_commands() {
    for (word, kind) in [
        ("set", StoreKind::Set),
        ("add", StoreKind::Add),
        ("replace", StoreKind::Replace),
        ("append", StoreKind::Append),
        ("prepend", StoreKind::Prepend),
    ] {
        let cmd = ok(&format!("{word} k 5 -1 10\r\n"));
        assert_eq!(
            cmd,
            Command::Store(StoreCommand {
                kind,
                key: b("k"),
                flags: 5,
                exptime: -1,
                data_len: 10,
                cas: None,
                noreply: false,
            })
        );
        assert_eq!(cmd.data_len(), Some(10));
        let cmd = ok(&format!("{word} k 0 0 0 noreply\r\n"));
        assert!(cmd.noreply());
    }
    let cmd = ok("cas k 1 2 3 99 noreply\r\n");
    assert_eq!(
        cmd,
        Command::Store(StoreCommand {
            kind: StoreKind::Cas,
            key: b("k"),
            flags: 1,
            exptime: 2,
            data_len: 3,
            cas: Some(99),
            noreply: true,
        })
    );
    // A sixth token that is not "noreply" is ignored, as memcached does.
    assert!(!ok("set k 0 0 1 junk\r\n").noreply());
    // Values up to INT_MAX - 2 can be declared, as in memcached; beyond,
    // or below 0, the line is bad and no block follows.
    assert_eq!(ok("set k 0 0 2147483645\r\n").data_len(), Some(2147483645));
    for len in ["2147483646", "4294967295", "-1"] {
        for line in [
            format!("set k 0 0 {len}\r\n"),
            format!("cas k 0 0 {len} 1\r\n"),
            format!("ms k {len} T0\r\n"),
        ] {
            let e = fail(&line);
            assert_eq!(
                e.reply(),
                b"CLIENT_ERROR bad command line format\r\n",
                "{line}"
            );
            assert_eq!(e.swallow, 0, "{line}: nothing to swallow");
        }
    }
}

#[test]
fn storage_errors() {
    // memcached 1.6.45: without a readable length the line is bad and
    // nothing is swallowed; with one, any other fault swallows the block
    // (`cas` without its CAS value among them); extra tokens are ignored.
    for (line, swallow) in [
        ("set k 0 0\r\n", 0),
        ("set k 0 0 -1\r\n", 0),
        ("set k 0 0 4294967296\r\n", 0),
        ("cas k 0 0 1\r\n", 3),
        ("set k x 0 1\r\n", 3),
        ("set k 0 x 1\r\n", 3),
        ("set k 4294967296 0 1\r\n", 3),
        ("cas k 0 0 1 x\r\n", 3),
    ] {
        let e = fail(line);
        assert_eq!(
            e.reply(),
            b"CLIENT_ERROR bad command line format\r\n",
            "{line}"
        );
        assert!(e.should_reply());
        assert_eq!(e.swallow, swallow, "{line}");
    }
    assert!(matches!(
        ok("set k 0 0 1 noreply x\r\n"),
        Command::Store(StoreCommand { noreply: false, .. })
    ));
    // noreply silences errors of classic commands, like memcached.
    let e = fail("set k x 0 1 noreply\r\n");
    assert_eq!(e.kind, TextErrorKind::BadCommandLine);
    assert!(!e.should_reply());
}

#[test]
fn key_limits() {
    let k250 = "k".repeat(250);
    let k251 = "k".repeat(251);
    assert!(matches!(
        ok(&format!("set {k250} 0 0 1\r\n")),
        Command::Store(_)
    ));
    assert_eq!(
        fail(&format!("set {k251} 0 0 1\r\n")).reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(
        fail(&format!("get a {k251}\r\n")).reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );
    // Control characters are part of a key, as in memcached (memcaslap's
    // generated keys contain them).
    assert!(matches!(
        parse("get a\x01b\r\n"),
        Ok(Parse::Complete(Command::Get { ref keys, .. }, _)) if keys[0][..] == b"a\x01b"[..]
    ));
    assert_eq!(
        fail(&format!("delete {k251}\r\n")).kind,
        TextErrorKind::BadCommandLine
    );
    assert_eq!(
        fail(&format!("incr {k251} 1\r\n")).kind,
        TextErrorKind::BadCommandLine
    );
    assert_eq!(
        fail(&format!("touch {k251} 1\r\n")).kind,
        TextErrorKind::BadCommandLine
    );
}

#[test]
fn retrieval_commands() {
    assert_eq!(
        ok("get a bb ccc\r\n"),
        Command::Get {
            keys: vec![b("a"), b("bb"), b("ccc")],
            return_cas: false
        }
    );
    assert_eq!(
        ok("gets a\n"),
        Command::Get {
            keys: vec![b("a")],
            return_cas: true
        }
    );
    assert_eq!(
        ok("gat 100 a b\r\n"),
        Command::GetAndTouch {
            exptime: 100,
            keys: vec![b("a"), b("b")],
            return_cas: false
        }
    );
    assert_eq!(
        ok("gats -1 a\r\n"),
        Command::GetAndTouch {
            exptime: -1,
            keys: vec![b("a")],
            return_cas: true
        }
    );
    // memcached 1.6.45: a command short of its tokens is a bad line.
    assert_eq!(
        fail("gat 10\r\n").reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(
        fail("get\r\n").reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(
        fail("gat x a\r\n").reply(),
        b"CLIENT_ERROR invalid exptime argument\r\n"
    );
    // Runs of spaces are one separator.
    assert_eq!(
        ok("get   a    b \r\n"),
        Command::Get {
            keys: vec![b("a"), b("b")],
            return_cas: false
        }
    );
}

#[test]
fn other_commands() {
    assert_eq!(
        ok("delete k\r\n"),
        Command::Delete {
            key: b("k"),
            noreply: false
        }
    );
    assert_eq!(
        ok("delete k 0\r\n"),
        Command::Delete {
            key: b("k"),
            noreply: false
        }
    );
    assert_eq!(
        ok("delete k noreply\r\n"),
        Command::Delete {
            key: b("k"),
            noreply: true
        }
    );
    assert_eq!(
        ok("delete k 0 noreply\r\n"),
        Command::Delete {
            key: b("k"),
            noreply: true
        }
    );
    // memcached 1.6.18's usage error, which memccapable requires (1.6.45
    // ignores the junk and fails memccapable's "ascii delete").
    assert_eq!(
        fail("delete k 5\r\n").reply(),
        &b"CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n"[..]
    );
    assert_eq!(
        fail("delete\r\n").reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );

    assert_eq!(
        ok("incr k 18446744073709551615\r\n"),
        Command::IncrDecr {
            op: IncrDecr::Incr,
            key: b("k"),
            delta: u64::MAX,
            noreply: false
        }
    );
    assert_eq!(
        ok("decr k 3 noreply\r\n"),
        Command::IncrDecr {
            op: IncrDecr::Decr,
            key: b("k"),
            delta: 3,
            noreply: true
        }
    );
    assert_eq!(
        fail("incr k -1\r\n").reply(),
        b"CLIENT_ERROR invalid numeric delta argument\r\n"
    );
    assert_eq!(
        fail("incr k\r\n").reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );

    assert_eq!(
        ok("touch k 10\r\n"),
        Command::Touch {
            key: b("k"),
            exptime: 10,
            noreply: false
        }
    );
    assert_eq!(
        fail("touch k x\r\n").reply(),
        b"CLIENT_ERROR invalid exptime argument\r\n"
    );

    assert_eq!(
        ok("flush_all\r\n"),
        Command::FlushAll {
            delay: None,
            noreply: false
        }
    );
    assert_eq!(
        ok("flush_all 0\r\n"),
        Command::FlushAll {
            delay: Some(0),
            noreply: false
        }
    );
    assert_eq!(
        ok("flush_all noreply\r\n"),
        Command::FlushAll {
            delay: None,
            noreply: true
        }
    );
    assert_eq!(
        ok("flush_all 60 noreply\r\n"),
        Command::FlushAll {
            delay: Some(60),
            noreply: true
        }
    );
    assert_eq!(
        fail("flush_all x\r\n").reply(),
        b"CLIENT_ERROR invalid exptime argument\r\n"
    );
    // memcached 1.6.45 reads the delay and ignores further tokens.
    assert_eq!(
        ok("flush_all 1 2 3\r\n"),
        Command::FlushAll {
            delay: Some(1),
            noreply: false
        }
    );

    assert_eq!(ok("version\r\n"), Command::Version);
    assert_eq!(ok("quit\r\n"), Command::Quit);
    // memcached 1.6 ignores extra tokens here.
    assert_eq!(ok("version foo bar\r\n"), Command::Version);
    assert_eq!(ok("version noreply\r\n"), Command::Version);
    // memcached built with TLS: `refresh_certs` reloads the certificates.
    assert_eq!(ok("refresh_certs\r\n"), Command::RefreshCerts);
    assert_eq!(ok("quit foo bar\r\n"), Command::Quit);
    assert_eq!(
        ok("verbosity 1\r\n"),
        Command::Verbosity {
            level: 1,
            noreply: false
        }
    );
    assert_eq!(
        ok("verbosity 1 noreply\r\n"),
        Command::Verbosity {
            level: 1,
            noreply: true
        }
    );
    assert_eq!(
        fail("verbosity\r\n").reply(),
        b"CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(ok("stats\r\n"), Command::Stats { args: vec![] });
    assert_eq!(
        ok("stats items\r\n"),
        Command::Stats {
            args: vec![b("items")]
        }
    );
    assert_eq!(
        ok("stats detail dump\r\n"),
        Command::Stats {
            args: vec![b("detail"), b("dump")]
        }
    );
}

#[test]
fn unknown_commands_are_error() {
    // memcached 1.6.45 calls a line under 4 bytes (terminator included) bad.
    for line in ["\r\n", "s\r\n", "ab\n"] {
        assert_eq!(
            fail(line).reply(),
            b"CLIENT_ERROR bad command line format\r\n",
            "{line:?}"
        );
    }
    for line in ["bogus\r\n", "GET a\r\n", "mz k\r\n", "   \r\n"] {
        let e = fail(line);
        assert_eq!(e.reply(), b"ERROR\r\n", "{line:?}");
        assert!(!e.must_close());
    }
}

#[test]
fn every_prefix_is_incomplete() {
    let lines = [
        "set k 0 0 5\r\n",
        "get a b c\r\n",
        "gats 1 a\r\n",
        "mg key v k f c t s q Oab T30\r\n",
        "ms key 5 F3 T0 MS\r\n",
        "bogus\r\n",
    ];
    let parser = TextParser::default();
    for line in lines {
        for n in 0..line.len() {
            let prefix = &line.as_bytes()[..n];
            // A prefix ending in "\r" is still waiting for "\n".
            assert_eq!(
                parser.parse(prefix),
                Ok(Parse::Incomplete),
                "{:?}",
                &line[..n]
            );
            let mut bm = BytesMut::from(prefix);
            assert_eq!(parser.parse_buf(&mut bm), Ok(None));
            assert_eq!(bm.len(), n);
        }
    }
}

#[test]
fn long_lines_are_fatal_and_bounded() {
    let parser = TextParser::new(16);
    let e = parser.parse(&[b'a'; 18]).unwrap_err();
    assert_eq!(e.kind, TextErrorKind::LineTooLong);
    assert!(e.must_close());
    // 17 bytes without a newline might still be "16 bytes + \r".
    assert_eq!(parser.parse(&[b'a'; 17]), Ok(Parse::Incomplete));
    let e = parser
        .parse(format!("get {}\r\n", "k".repeat(13)).as_bytes())
        .unwrap_err();
    assert_eq!(e.kind, TextErrorKind::LineTooLong);
    assert!(parser
        .parse(format!("get {}\r\n", "k".repeat(12)).as_bytes())
        .is_ok());
    // A huge buffer without newline is rejected after looking at a bounded window.
    let big = vec![b'x'; 10 << 20];
    assert!(TextParser::default().parse(&big).unwrap_err().must_close());
}

/// memcached's 2048-byte rule: without a newline by then, only a
/// `get`/`gets` line may keep growing; anything else is hung up on, silently.
#[test]
fn only_multigets_grow_past_2048_bytes_without_a_newline() {
    let parser = TextParser::default();
    let mut incr = b"incr".to_vec();
    incr.resize(2048, b' ');
    assert_eq!(parser.parse(&incr), Ok(Parse::Incomplete));
    incr.push(b' ');
    let e = parser.parse(&incr).unwrap_err();
    assert_eq!(e.kind, TextErrorKind::LineTooLong);
    assert!(e.must_close() && !e.should_reply());
    assert_eq!(
        parser
            .parse_buf(&mut BytesMut::from(&incr[..]))
            .unwrap_err(),
        e
    );
    for start in ["get ", "gets ", "   get "] {
        let mut get = start.as_bytes().to_vec();
        while get.len() < 5000 {
            get.extend_from_slice(b"key ");
        }
        assert_eq!(parser.parse(&get), Ok(Parse::Incomplete), "{start:?}");
        get.extend_from_slice(b"\r\n");
        assert!(matches!(parser.parse(&get), Ok(Parse::Complete(..))));
    }
    // A whole line longer than 2048 bytes is served, as by memcached.
    let mut whole = b"incr".to_vec();
    whole.resize(3000, b' ');
    whole.extend_from_slice(b"\r\n");
    assert_eq!(
        parser.parse(&whole).unwrap_err().kind,
        TextErrorKind::BadCommandLine
    );
    let mut gettish = vec![b' '; 101];
    gettish.extend_from_slice(&[b'g', b'e', b't', b' '].repeat(600));
    assert!(parser.parse(&gettish).unwrap_err().must_close());
}

#[test]
fn data_block() {
    let buf = b"hello\r\nget k\r\n";
    assert_eq!(
        parse_data_block(buf, 5),
        Ok(Parse::Complete(&b"hello"[..], 7))
    );
    for n in 0..7 {
        assert_eq!(parse_data_block(&buf[..n], 5), Ok(Parse::Incomplete));
    }
    let e = parse_data_block(b"helloXYget", 5).unwrap_err();
    assert_eq!(e.reply(), b"CLIENT_ERROR bad data chunk\r\n");
    assert_eq!(e.consumed, 7);
    // A bare \n is not enough for a data block (memcached wants \r\n).
    assert!(parse_data_block(b"hello\nX", 5).is_err());
    assert_eq!(
        parse_data_block(b"\r\n", 0),
        Ok(Parse::Complete(&b""[..], 2))
    );
    // A declared 4 GiB block with nothing behind it: Incomplete, no allocation.
    assert_eq!(
        parse_data_block(b"abc", u32::MAX as usize),
        Ok(Parse::Incomplete)
    );
    assert_eq!(data_block_len(u32::MAX as usize), u64::from(u32::MAX) + 2);
}

#[test]
fn pipelined_set_get_zero_copy() {
    let parser = TextParser::default();
    let mut buf = BytesMut::from(&b"set k 7 0 5\r\nhello\r\nget k\r\nset j 0 0 2\r\nxyzz"[..]);
    let base = buf.as_ptr() as usize;
    let Some(Command::Store(s)) = parser.parse_buf(&mut buf).unwrap() else {
        panic!()
    };
    assert_eq!((s.key.as_ref(), s.flags, s.data_len), (&b"k"[..], 7, 5));
    let value = take_data_block(&mut buf, s.data_len).unwrap().unwrap();
    assert_eq!(&value[..], b"hello");
    assert_eq!(
        value.as_ptr() as usize,
        base + 13,
        "value must alias the read buffer"
    );
    assert_eq!(
        parser.parse_buf(&mut buf).unwrap(),
        Some(Command::Get {
            keys: vec![b("k")],
            return_cas: false
        })
    );
    let Some(Command::Store(s)) = parser.parse_buf(&mut buf).unwrap() else {
        panic!()
    };
    // "xyzz" is two data bytes plus a bad terminator.
    let e = take_data_block(&mut buf, s.data_len).unwrap_err();
    assert_eq!(e.kind, TextErrorKind::BadDataChunk);
    assert!(buf.is_empty());
}

#[test]
fn parse_buf_drops_bad_line() {
    let parser = TextParser::default();
    let mut buf = BytesMut::from(&b"bogus\r\nversion\r\n"[..]);
    let e = parser.parse_buf(&mut buf).unwrap_err();
    assert_eq!(e.reply(), b"ERROR\r\n");
    assert_eq!(parser.parse_buf(&mut buf).unwrap(), Some(Command::Version));
}

#[test]
fn parse_bytes_keys_alias_input() {
    let buf = Bytes::from_static(b"get alpha\r\n");
    let Ok(Parse::Complete(Command::Get { keys, .. }, 11)) =
        TextParser::default().parse_bytes(&buf)
    else {
        panic!()
    };
    assert_eq!(keys[0].as_ptr(), buf[4..].as_ptr());
}

#[test]
fn replies() {
    let mut out = BytesMut::new();
    encode_value_head(b"k", 3, 5, None, &mut out);
    assert_eq!(&out[..], b"VALUE k 3 5\r\n");
    out.clear();
    encode_value(b"key", 0, b"hello", Some(77), &mut out);
    out.extend_from_slice(END);
    assert_eq!(&out[..], b"VALUE key 0 5 77\r\nhello\r\nEND\r\n");
    out.clear();
    encode_stat("curr_items", 12, &mut out);
    encode_number(42, &mut out);
    encode_version("1.2.3", &mut out);
    encode_client_error("oops", &mut out);
    encode_server_error("busy", &mut out);
    assert_eq!(
        &out[..],
        &b"STAT curr_items 12\r\n42\r\nVERSION 1.2.3\r\nCLIENT_ERROR oops\r\nSERVER_ERROR busy\r\n"
            [..]
    );
    assert_eq!(
        SERVER_ERROR_TOO_LARGE,
        b"SERVER_ERROR object too large for cache\r\n"
    );
    for (c, s) in [
        (STORED, "STORED"),
        (NOT_STORED, "NOT_STORED"),
        (EXISTS, "EXISTS"),
        (NOT_FOUND, "NOT_FOUND"),
        (DELETED, "DELETED"),
        (TOUCHED, "TOUCHED"),
        (OK, "OK"),
        (END, "END"),
    ] {
        assert_eq!(c, format!("{s}\r\n").as_bytes());
    }
}

#[test]
fn error_display_matches_reply() {
    let e = fail("incr k x\r\n");
    assert_eq!(e.to_string(), "CLIENT_ERROR invalid numeric delta argument");
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        let parser = TextParser::new(64);
        match parser.parse(&data) {
            Ok(Parse::Complete(_, used)) => prop_assert!(used <= data.len() && used > 0),
            Ok(Parse::Incomplete) => prop_assert!(!data.contains(&b'\n')),
            Err(e) => prop_assert!(e.consumed <= data.len()),
        }
        let _ = parser.parse_bytes(&Bytes::from(data.clone()));
        let mut bm = BytesMut::from(&data[..]);
        let _ = parser.parse_buf(&mut bm);
        let _ = parse_data_block(&data, data.len() / 2);
    }

    #[test]
    fn token_soup_never_panics(words in proptest::collection::vec(
        prop_oneof![
            Just("set".to_string()), Just("get".to_string()), Just("cas".to_string()),
            Just("ms".to_string()), Just("mg".to_string()), Just("ma".to_string()),
            Just("md".to_string()), Just("me".to_string()), Just("delete".to_string()),
            Just("noreply".to_string()), Just("flush_all".to_string()), Just("b".to_string()),
            "[a-zA-Z0-9=+/-]{0,6}", "-?[0-9]{1,12}",
        ], 0..24)) {
        let line = format!("{}\r\n", words.join(" "));
        let _ = TextParser::default().parse(line.as_bytes());
    }
}
