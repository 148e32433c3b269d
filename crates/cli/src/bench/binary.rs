//! The memcached binary protocol's load: SET / GET one at a time, or a batch
//! of quiet SETQ / GETKQ closed by a NOOP, whose reply ends the batch.

use super::conn::{Conn, Reply, Values};
use super::options::Phase;
use crate::perf::format_key;
use anyhow::{anyhow, Result};
use bytes::{Buf, BufMut};
use memstored_protocol::binary::{BinaryHeader, HEADER_LEN, REQUEST_MAGIC};
use memstored_protocol::Parse;

const OP_GET: u8 = 0x00;
const OP_SET: u8 = 0x01;
const OP_NOOP: u8 = 0x0a;
const OP_GETKQ: u8 = 0x0d;
const OP_SETQ: u8 = 0x11;

fn request(c: &mut Conn, opcode: u8, key: &[u8], extras: &[u8], value: &[u8]) {
    BinaryHeader {
        magic: REQUEST_MAGIC,
        opcode,
        key_len: key.len() as u16,
        extras_len: extras.len() as u8,
        data_type: 0,
        vbucket_or_status: 0,
        body_len: (extras.len() + key.len() + value.len()) as u32,
        opaque: 0,
        cas: 0,
    }
    .encode(&mut c.wbuf);
    c.wbuf.put_slice(extras);
    c.wbuf.put_slice(key);
    c.wbuf.put_slice(value);
}

/// Writes one batch of sets into the connection's buffer.
pub(super) fn send_set(c: &mut Conn, keys: &[u64], vals: &Values) {
    let mut kb = [0u8; 20];
    let n = keys.len();
    let extras = [0u8; 8]; // flags, expiration
    for &k in keys {
        let key = format_key(k, &mut kb);
        let op = if n == 1 { OP_SET } else { OP_SETQ };
        request(c, op, key, &extras, vals.of(k));
    }
    if n > 1 {
        request(c, OP_NOOP, b"", b"", b"");
    }
}

/// Writes one batch of gets into the connection's buffer.
pub(super) fn send_get(c: &mut Conn, keys: &[u64]) {
    let mut kb = [0u8; 20];
    let n = keys.len();
    for &k in keys {
        let key = format_key(k, &mut kb);
        let op = if n == 1 { OP_GET } else { OP_GETKQ };
        request(c, op, key, b"", b"");
    }
    if n > 1 {
        request(c, OP_NOOP, b"", b"", b"");
    }
}

/// One binary response: (opcode, status, frame length), body skipped.
fn frame(c: &mut Conn) -> Result<(u8, u16)> {
    loop {
        if c.rbuf.len() >= HEADER_LEN {
            let Parse::Complete(h, _) = BinaryHeader::parse_response(&c.rbuf)
                .map_err(|e| anyhow!("bad binary reply: {e}"))?
            else {
                unreachable!("24 bytes are a whole header")
            };
            let len = usize::try_from(h.frame_len()).unwrap_or(usize::MAX);
            if c.rbuf.len() >= len {
                c.rbuf.advance(len);
                return Ok((h.opcode, h.vbucket_or_status));
            }
        }
        c.fill()?;
    }
}

/// Reads the reply to the batch just sent (`n` records).
pub(super) fn recv(c: &mut Conn, phase: Phase, n: usize) -> Result<Reply> {
    let mut r = Reply::default();
    if n == 1 {
        let (_, status) = frame(c)?;
        match (phase, status) {
            (_, 0) => r.hits += 1,
            (Phase::Get, 1) => {}
            (_, s) => r.error(format!("binary status 0x{s:02x}")),
        }
        return Ok(r);
    }
    loop {
        let (op, status) = frame(c)?;
        if op == OP_NOOP {
            return Ok(r);
        }
        match (phase, status) {
            (Phase::Get, 0) => r.hits += 1,
            (_, s) => r.error(format!("binary opcode 0x{op:02x} status 0x{s:02x}")),
        }
    }
}
