//! A declared length must never drive an allocation: a peer can claim a
//! 4 GiB body and send nothing. This binary installs an allocator that
//! records the largest single allocation, so the test fails if a parser
//! ever reserves memory for bytes that are not there.
//! (One test function only: the global counter is shared by all threads.)

use std::sync::atomic::Ordering;

use bytes::{BufMut, Bytes, BytesMut};
use memstored_protocol::binary::{BinaryHeader, Request, REQUEST_MAGIC};
use memstored_protocol::text::{parse_data_block, take_data_block, Command, TextParser};
use memstored_protocol::Parse;

#[path = "support/tracking_alloc.rs"]
mod tracking_alloc;
use tracking_alloc::LARGEST;

const LIMIT: usize = 64 * 1024;

#[test]
fn huge_declared_lengths_do_not_allocate() {
    // Binary: SET declaring a 4 GiB body, with a few body bytes present.
    let mut frame = BytesMut::new();
    BinaryHeader {
        magic: REQUEST_MAGIC,
        opcode: 0x01,
        key_len: 3,
        extras_len: 8,
        data_type: 0,
        vbucket_or_status: 0,
        body_len: u32::MAX,
        opaque: 0,
        cas: 0,
    }
    .encode(&mut frame);
    frame.put_slice(&[0; 8]);
    frame.put_slice(b"keyvalue");
    let bytes = Bytes::copy_from_slice(&frame);

    LARGEST.store(0, Ordering::Relaxed);
    assert_eq!(Request::parse(&frame), Ok(Parse::Incomplete));
    assert_eq!(Request::parse_bytes(&bytes), Ok(Parse::Incomplete));
    let mut buf = frame.clone();
    assert_eq!(Request::parse_buf(&mut buf), Ok(None));

    // Text: a set declaring the most memcached takes (2 GiB - 3), then its
    // data block.
    let parser = TextParser::default();
    let line = b"set k 0 0 2147483645\r\nabc";
    let Ok(Parse::Complete(Command::Store(s), used)) = parser.parse(line) else {
        panic!("command line should parse")
    };
    assert_eq!(
        parse_data_block(&line[used..], s.data_len),
        Ok(Parse::Incomplete)
    );
    let mut tb = BytesMut::from(&line[used..]);
    assert_eq!(take_data_block(&mut tb, s.data_len), Ok(None));
    let Ok(Parse::Complete(Command::MetaSet(ms), _)) = parser.parse(b"ms k 2147483645 T0\r\n")
    else {
        panic!("ms should parse")
    };
    assert_eq!(ms.data_len, 2147483645);

    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(largest < LIMIT, "a parser allocated {largest} bytes");
}
