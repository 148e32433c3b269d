//! The memcached text protocol's load: `set` (a batch: `noreply` sets closed
//! by one plain `set`, whose STORED ends it) and `get k1 ... kN`.

use super::conn::{Conn, Reply, Values};
use super::options::Phase;
use crate::perf::format_key;
use anyhow::{anyhow, Result};
use bytes::{Buf, BufMut, BytesMut};

/// Writes one batch of sets into the connection's buffer.
pub(super) fn send_set(c: &mut Conn, keys: &[u64], vals: &Values) {
    let mut kb = [0u8; 20];
    let n = keys.len();
    for (i, &k) in keys.iter().enumerate() {
        let key = format_key(k, &mut kb);
        let v = vals.of(k);
        c.wbuf.put_slice(b"set ");
        c.wbuf.put_slice(key);
        c.wbuf.put_slice(b" 0 0 ");
        c.wbuf.put_slice(v.len().to_string().as_bytes());
        if i + 1 < n {
            c.wbuf.put_slice(b" noreply");
        }
        c.wbuf.put_slice(b"\r\n");
        c.wbuf.put_slice(v);
        c.wbuf.put_slice(b"\r\n");
    }
}

/// Writes one batch of gets into the connection's buffer.
pub(super) fn send_get(c: &mut Conn, keys: &[u64]) {
    let mut kb = [0u8; 20];
    c.wbuf.put_slice(b"get");
    for &k in keys {
        c.wbuf.put_u8(b' ');
        c.wbuf.put_slice(format_key(k, &mut kb));
    }
    c.wbuf.put_slice(b"\r\n");
}

/// One text line (without CRLF) removed from the buffer.
fn line(c: &mut Conn) -> Result<BytesMut> {
    let mut from = 0;
    loop {
        if let Some(p) = c.rbuf[from..].iter().position(|&b| b == b'\n') {
            let mut l = c.rbuf.split_to(from + p + 1);
            l.truncate(from + p);
            if l.last() == Some(&b'\r') {
                l.truncate(l.len() - 1);
            }
            return Ok(l);
        }
        from = c.rbuf.len();
        c.fill()?;
    }
}

/// Reads the reply to the batch just sent.
pub(super) fn recv(c: &mut Conn, phase: Phase) -> Result<Reply> {
    let mut r = Reply::default();
    loop {
        let l = line(c)?;
        match phase {
            Phase::Set => {
                if &l[..] != b"STORED" {
                    r.error(String::from_utf8_lossy(&l).into_owned());
                }
                return Ok(r);
            }
            Phase::Get => {
                if &l[..] == b"END" {
                    return Ok(r);
                }
                if let Some(rest) = l.strip_prefix(b"VALUE ") {
                    let bytes: usize = rest
                        .split(|&b| b == b' ')
                        .nth(2)
                        .and_then(|t| std::str::from_utf8(t).ok())
                        .and_then(|t| t.parse().ok())
                        .ok_or_else(|| {
                            anyhow!("bad VALUE line {:?}", String::from_utf8_lossy(&l))
                        })?;
                    while c.rbuf.len() < bytes + 2 {
                        c.fill()?;
                    }
                    c.rbuf.advance(bytes + 2);
                    r.hits += 1;
                } else {
                    r.error(String::from_utf8_lossy(&l).into_owned());
                    return Ok(r);
                }
            }
        }
    }
}
