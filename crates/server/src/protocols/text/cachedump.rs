//! `stats cachedump CLASS LIMIT`: memcached's key listing, the one request
//! `memcdump` (libmemcached-tools) sends to list a server's keys.
//!
//! memcached keeps items in slab classes (ids below 64) and lists one class
//! per request; memstored has no slab classes, so every live key is listed
//! under class 1 and the other classes are empty. Like memcached, a reply
//! stops at 2 MiB (or at LIMIT items, 0 = no limit), which also bounds the
//! work one request can cause. Keys that cannot be written on a text line
//! (binary keys stored over the binary or RPC protocols) are left out.

use crate::protocols::out::Out;
use crate::state::server::Server;
use bytes::Bytes;

/// memcached's slab class ids are below this (`MAX_NUMBER_OF_SLAB_CLASSES`).
const CLASSES: u64 = 64;
/// The class every key is listed under (memcached's smallest class id).
const THE_CLASS: u64 = 1;
/// memcached's cachedump reply limit.
const MAX_REPLY: usize = 2 << 20;

/// Answers `stats cachedump` given the arguments after `cachedump`.
pub fn reply(srv: &Server, args: &[Bytes], out: &mut Out) {
    let number = |b: &Bytes| std::str::from_utf8(b).ok()?.parse::<u64>().ok();
    let (Some(class), Some(limit)) = (args.first(), args.get(1)) else {
        out.put(b"CLIENT_ERROR bad command line\r\n");
        return;
    };
    let (Some(class), Some(limit)) = (number(class), number(limit)) else {
        out.put(b"CLIENT_ERROR bad command line format\r\n");
        return;
    };
    if class >= CLASSES {
        out.put(b"CLIENT_ERROR Illegal slab id\r\n");
        return;
    }
    if class == THE_CLASS {
        crate::exec::block::block_here(|| list(srv, limit, out));
    }
    out.put(b"END\r\n");
}

/// `ITEM key [size b; expiry s]` lines, expiry in Unix seconds (0 = never).
fn list(srv: &Server, limit: u64, out: &mut Out) {
    let now = memstored_engine::now_secs();
    let mut cursor = srv.db.cursor();
    if cursor.first().is_err() {
        return;
    }
    let (mut listed, mut written) = (0u64, 0usize);
    // `key` fails once the cursor is past the last record.
    while let Ok(key) = cursor.key() {
        if limit != 0 && listed >= limit {
            break;
        }
        let printable = !key.is_empty() && key.iter().all(u8::is_ascii_graphic);
        if let (true, Ok(Some(r))) = (printable, srv.db.get_record(&key)) {
            if !r.meta.is_expired(now) {
                let line = format!(
                    "ITEM {} [{} b; {} s]\r\n",
                    String::from_utf8_lossy(&key),
                    r.value.len(),
                    r.meta.expires_at
                );
                written += line.len();
                if written > MAX_REPLY {
                    break;
                }
                out.put(line.as_bytes());
                listed += 1;
            }
        }
        if cursor.next().is_err() {
            break;
        }
    }
}
