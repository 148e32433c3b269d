//! MessagePack-RPC's load: `set` / `get` one at a time, `set_bulk` /
//! `get_bulk` (kt-msgpack's `_KEY` maps) for a batch.

use super::conn::{Conn, Reply, Values};
use super::options::Phase;
use crate::perf::format_key;
use anyhow::{anyhow, bail, Result};
use bytes::BufMut;
use memstored_protocol::rpc::{frame_len, Limits};
use memstored_protocol::Parse;

fn head(c: &mut Conn, method: &str) {
    c.msgid = c.msgid.wrapping_add(1);
    let w = &mut (&mut c.wbuf).writer();
    // Writing into memory cannot fail.
    let _ = rmp::encode::write_array_len(w, 4);
    let _ = rmp::encode::write_uint(w, 0);
    let _ = rmp::encode::write_uint(w, u64::from(c.msgid));
    let _ = rmp::encode::write_str(w, method);
    let _ = rmp::encode::write_array_len(w, 1 + u32::from(method == "set"));
}

fn bin(c: &mut Conn, b: &[u8]) {
    let _ = rmp::encode::write_bin(&mut (&mut c.wbuf).writer(), b);
}

/// `_KEY`, a record key of a kt-msgpack bulk map.
fn record_key(c: &mut Conn, key: &[u8]) {
    let _ = rmp::encode::write_bin_len(&mut (&mut c.wbuf).writer(), key.len() as u32 + 1);
    c.wbuf.put_u8(b'_');
    c.wbuf.put_slice(key);
}

/// Writes one batch of sets into the connection's buffer.
pub(super) fn send_set(c: &mut Conn, keys: &[u64], vals: &Values) {
    let mut kb = [0u8; 20];
    let n = keys.len();
    if n == 1 {
        head(c, "set");
        let key = format_key(keys[0], &mut kb);
        bin(c, key);
        bin(c, vals.of(keys[0]));
    } else {
        head(c, "set_bulk");
        let _ = rmp::encode::write_map_len(&mut (&mut c.wbuf).writer(), n as u32);
        for &k in keys {
            let key = format_key(k, &mut kb);
            record_key(c, key);
            bin(c, vals.of(k));
        }
    }
}

/// Writes one batch of gets into the connection's buffer.
pub(super) fn send_get(c: &mut Conn, keys: &[u64]) {
    let mut kb = [0u8; 20];
    let n = keys.len();
    if n == 1 {
        head(c, "get");
        let key = format_key(keys[0], &mut kb);
        bin(c, key);
    } else {
        head(c, "get_bulk");
        let _ = rmp::encode::write_map_len(&mut (&mut c.wbuf).writer(), n as u32);
        for &k in keys {
            let key = format_key(k, &mut kb);
            record_key(c, key);
            bin(c, b"");
        }
    }
}

/// Reads the reply to the batch just sent (`n` records).
pub(super) fn recv(c: &mut Conn, phase: Phase, n: usize) -> Result<Reply> {
    let limits = Limits::default();
    let len = loop {
        match frame_len(&c.rbuf, &limits).map_err(|e| anyhow!("bad RPC reply: {e}"))? {
            Parse::Complete((), len) => break len,
            Parse::Incomplete => c.fill()?,
        }
    };
    let frame = c.rbuf.split_to(len);
    let mut rd: &[u8] = &frame;
    let bad = |what: &str| anyhow!("bad RPC reply: {what}");
    let alen = rmp::decode::read_array_len(&mut rd).map_err(|_| bad("not an array"))?;
    let kind: u64 = rmp::decode::read_int(&mut rd).map_err(|_| bad("type"))?;
    let id: u32 = rmp::decode::read_int(&mut rd).map_err(|_| bad("msgid"))?;
    if alen != 4 || kind != 1 || id != c.msgid {
        bail!(
            "unexpected RPC reply (type {kind}, msgid {id}, expected {})",
            c.msgid
        );
    }
    let mut r = Reply::default();
    if rd.first() != Some(&0xc0) {
        let err = rmpv::decode::read_value(&mut rd).map_err(|_| bad("error"))?;
        // kt-msgpack's bare code (or an older `[code, message]`).
        let code = match &err {
            rmpv::Value::Array(a) => a.first().and_then(rmpv::Value::as_i64),
            v => v.as_i64(),
        };
        if phase == Phase::Get && n == 1 && code == Some(35) {
            return Ok(r); // a miss
        }
        r.error(format!("RPC error {err}"));
        return Ok(r);
    }
    rd = &rd[1..];
    match (phase, n) {
        (Phase::Get, 1) => r.hits += 1,
        // `{num, _key: value, ...}`: the entries past `num`.
        (Phase::Get, _) => {
            let len = rmp::decode::read_map_len(&mut rd).map_err(|_| bad("result"))?;
            r.hits += u64::from(len.saturating_sub(1))
        }
        (Phase::Set, _) => r.hits += n as u64,
    }
    Ok(r)
}
