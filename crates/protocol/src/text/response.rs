//! Text and meta replies.
//!
//! Fixed replies are constants; variable ones are written into a
//! `BytesMut`. Values are never copied by the `*_head` functions: write the
//! head, send the value `Bytes` as its own `IoSlice`, then [`CRLF`].

use std::fmt::Write as _;

use bytes::{BufMut, BytesMut};

use crate::base64;

pub const CRLF: &[u8] = b"\r\n";
pub const STORED: &[u8] = b"STORED\r\n";
pub const NOT_STORED: &[u8] = b"NOT_STORED\r\n";
pub const EXISTS: &[u8] = b"EXISTS\r\n";
pub const NOT_FOUND: &[u8] = b"NOT_FOUND\r\n";
pub const DELETED: &[u8] = b"DELETED\r\n";
pub const TOUCHED: &[u8] = b"TOUCHED\r\n";
pub const OK: &[u8] = b"OK\r\n";
pub const END: &[u8] = b"END\r\n";
pub const ERROR: &[u8] = b"ERROR\r\n";
pub const RESET: &[u8] = b"RESET\r\n";
/// Item over the size limit (text and meta); the data block is swallowed.
pub const SERVER_ERROR_TOO_LARGE: &[u8] = b"SERVER_ERROR object too large for cache\r\n";
/// Storage failed for lack of memory.
pub const SERVER_ERROR_OUT_OF_MEMORY: &[u8] = b"SERVER_ERROR out of memory storing object\r\n";
/// `flush_all` on a server started with `-F` (memcached's words).
pub const CLIENT_ERROR_FLUSH_DISABLED: &[u8] = b"CLIENT_ERROR flush_all not allowed\r\n";
/// `incr`/`decr`/`ma` on a value that is not a decimal number.
pub const CLIENT_ERROR_NON_NUMERIC: &[u8] =
    b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n";

fn put_display(out: &mut BytesMut, v: impl std::fmt::Display) {
    // Writing into a BytesMut grows it and cannot fail.
    let _ = write!(out, "{v}");
}

/// A number in decimal. `itoa`, not `write!`: the formatting machinery
/// cost ~150 instructions a number, three numbers a `VALUE` line (callgrind).
fn put_int(out: &mut BytesMut, v: impl itoa::Integer) {
    out.put_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// `VALUE <key> <flags> <bytes>[ <cas>]\r\n`. Send the value next, then
/// [`CRLF`].
pub fn encode_value_head(key: &[u8], flags: u32, len: usize, cas: Option<u64>, out: &mut BytesMut) {
    out.reserve(6 + key.len() + 48);
    out.put_slice(b"VALUE ");
    out.put_slice(key);
    out.put_u8(b' ');
    put_int(out, flags);
    out.put_u8(b' ');
    put_int(out, len);
    if let Some(cas) = cas {
        out.put_u8(b' ');
        put_int(out, cas);
    }
    out.put_slice(CRLF);
}

/// A whole `VALUE` block, copying the value (for small values and tests).
pub fn encode_value(key: &[u8], flags: u32, value: &[u8], cas: Option<u64>, out: &mut BytesMut) {
    encode_value_head(key, flags, value.len(), cas, out);
    out.put_slice(value);
    out.put_slice(CRLF);
}

/// `STAT <name> <value>\r\n`.
pub fn encode_stat(name: &str, value: impl std::fmt::Display, out: &mut BytesMut) {
    out.put_slice(b"STAT ");
    out.put_slice(name.as_bytes());
    out.put_u8(b' ');
    put_display(out, value);
    out.put_slice(CRLF);
}

/// The reply to a successful `incr`/`decr`: the new value.
pub fn encode_number(value: u64, out: &mut BytesMut) {
    put_display(out, value);
    out.put_slice(CRLF);
}

/// `VERSION <version>\r\n`.
pub fn encode_version(version: &str, out: &mut BytesMut) {
    out.put_slice(b"VERSION ");
    out.put_slice(version.as_bytes());
    out.put_slice(CRLF);
}

/// `CLIENT_ERROR <message>\r\n`.
pub fn encode_client_error(message: &str, out: &mut BytesMut) {
    out.put_slice(b"CLIENT_ERROR ");
    out.put_slice(message.as_bytes());
    out.put_slice(CRLF);
}

/// `SERVER_ERROR <message>\r\n`.
pub fn encode_server_error(message: &str, out: &mut BytesMut) {
    out.put_slice(b"SERVER_ERROR ");
    out.put_slice(message.as_bytes());
    out.put_slice(CRLF);
}

/// Two-letter meta status codes (`VA` has its own encoder since it carries
/// a length and is followed by data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetaStatus {
    /// Success without a value.
    Hd,
    /// mg miss.
    En,
    /// md/ma/ms: not found.
    Nf,
    /// ms: not stored (e.g. add on an existing key).
    Ns,
    /// CAS mismatch.
    Ex,
    /// Reply to `mn`.
    Mn,
}

impl MetaStatus {
    pub fn code(self) -> &'static [u8] {
        match self {
            MetaStatus::Hd => b"HD",
            MetaStatus::En => b"EN",
            MetaStatus::Nf => b"NF",
            MetaStatus::Ns => b"NS",
            MetaStatus::Ex => b"EX",
            MetaStatus::Mn => b"MN",
        }
    }
}

/// One return flag of a meta reply. memcached writes them in the order the
/// request listed them; pass them in that order (see
/// [`super::MetaFlags::requested`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaReturn<'a> {
    /// `k<key>`; a binary key (request had `b`) is written base64 and
    /// followed by a `b` flag, as memcached does.
    Key { key: &'a [u8], binary: bool },
    /// `O<opaque>`, echoing the request's token (pass it without the `O`).
    Opaque(&'a [u8]),
    /// `f<client flags>`.
    ClientFlags(u32),
    /// `c<cas>`.
    Cas(u64),
    /// `t<seconds left>`; `None` = never expires, written `t-1`.
    Ttl(Option<u64>),
    /// `s<value size>`.
    Size(usize),
    /// `h0` / `h1`: fetched before.
    Hit(bool),
    /// `l<seconds since last access>`.
    LastAccess(u64),
    /// `W`: this client won the right to recache.
    Won,
    /// `X`: the item is stale.
    Stale,
    /// `Z`: a win token was already handed out.
    AlreadyWon,
}

fn put_returns(rets: &[MetaReturn<'_>], out: &mut BytesMut) {
    for r in rets {
        out.put_u8(b' ');
        match *r {
            MetaReturn::Key { key, binary } => {
                out.put_u8(b'k');
                if binary {
                    let mut enc = Vec::with_capacity(key.len().div_ceil(3) * 4);
                    base64::encode_into(key, &mut enc);
                    out.put_slice(&enc);
                    out.put_slice(b" b");
                } else {
                    out.put_slice(key);
                }
            }
            MetaReturn::Opaque(o) => {
                out.put_u8(b'O');
                out.put_slice(o);
            }
            MetaReturn::ClientFlags(f) => {
                out.put_u8(b'f');
                put_int(out, f);
            }
            MetaReturn::Cas(c) => {
                out.put_u8(b'c');
                put_int(out, c);
            }
            MetaReturn::Ttl(None) => out.put_slice(b"t-1"),
            MetaReturn::Ttl(Some(t)) => {
                out.put_u8(b't');
                put_int(out, t);
            }
            MetaReturn::Size(s) => {
                out.put_u8(b's');
                put_int(out, s);
            }
            MetaReturn::Hit(h) => out.put_slice(if h { b"h1" } else { b"h0" }),
            MetaReturn::LastAccess(l) => {
                out.put_u8(b'l');
                put_int(out, l);
            }
            MetaReturn::Won => out.put_u8(b'W'),
            MetaReturn::Stale => out.put_u8(b'X'),
            MetaReturn::AlreadyWon => out.put_u8(b'Z'),
        }
    }
}

/// `<CODE>[ <flags>]\r\n`, e.g. `HD c5 Oabc`, `EN`, `MN`.
pub fn encode_meta(status: MetaStatus, rets: &[MetaReturn<'_>], out: &mut BytesMut) {
    out.put_slice(status.code());
    put_returns(rets, out);
    out.put_slice(CRLF);
}

/// `VA <len>[ <flags>]\r\n`. Send the value next, then [`CRLF`].
pub fn encode_meta_value_head(len: usize, rets: &[MetaReturn<'_>], out: &mut BytesMut) {
    out.put_slice(b"VA ");
    put_int(out, len);
    put_returns(rets, out);
    out.put_slice(CRLF);
}

/// `ME <key> <info>\r\n` for `me`; `info` is the server's `k=v` list
/// (memcached: `exp=.. la=.. cas=.. fetch=.. cls=.. size=..`).
pub fn encode_meta_debug(key: &[u8], binary: bool, info: &str, out: &mut BytesMut) {
    out.put_slice(b"ME ");
    if binary {
        let mut enc = Vec::new();
        base64::encode_into(key, &mut enc);
        out.put_slice(&enc);
    } else {
        out.put_slice(key);
    }
    out.put_u8(b' ');
    out.put_slice(info.as_bytes());
    out.put_slice(CRLF);
}

/// One line of memcached 1.6.45's `lru_crawler mgdump`: `mg <key>\r\n`, or
/// `mg <base64 key> b\r\n` for a key a text line cannot carry (not all
/// printable ASCII), so that a client can append flags and send it back.
pub fn mg_dump_line(key: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(key.len().div_ceil(3) * 4 + 8);
    line.extend_from_slice(b"mg ");
    if !key.is_empty() && key.iter().all(u8::is_ascii_graphic) {
        line.extend_from_slice(key);
        line.extend_from_slice(b"\r\n");
    } else {
        base64::encode_into(key, &mut line);
        line.extend_from_slice(b" b\r\n");
    }
    line
}
