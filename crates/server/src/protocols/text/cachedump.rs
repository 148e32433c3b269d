//! `stats cachedump CLASS LIMIT`: memcached's key listing, the one request
//! `memcdump` (libmemcached-tools) sends to list a server's keys.
//!
//! memcached keeps items in slab classes (ids below 64) and lists one class
//! per request; memstored has no slab classes, so every live key is listed
//! under class 1 and the other classes are empty. Like memcached, a reply
//! stops at 2 MiB (or at LIMIT items, 0 = no limit), which also bounds the
//! work one request can cause. Keys that cannot be written on a text line
//! (binary keys stored over the binary or RPC protocols) are left out.

use crate::command::{Scan, ScanFrom};
use crate::protocols::out::Out;
use crate::state::server::Server;
use bytes::Bytes;
use std::ops::ControlFlow;

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
    let (mut listed, mut written) = (0u64, 0usize);
    Scan {
        from: ScanFrom::First,
    }
    .apply(srv, |key, live| {
        let printable = !key.is_empty() && key.iter().all(u8::is_ascii_graphic);
        if let (true, Some(r)) = (printable, live) {
            let line = format!(
                "ITEM {} [{} b; {} s]\r\n",
                String::from_utf8_lossy(key),
                r.value.len(),
                r.meta.expires_at
            );
            written += line.len();
            if written > MAX_REPLY {
                return ControlFlow::Break(());
            }
            out.put(line.as_bytes());
            listed += 1;
        }
        if limit != 0 && listed >= limit {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
}
