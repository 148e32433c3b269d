//! memcached's administrative text commands: `shutdown`, `cache_memlimit`,
//! `lru_crawler`, and the `stats` groups that are not plain
//! name/value listings (`detail`, `items`, `slabs`, `sizes`). Replies are
//! memcached 1.6's, checked by tests/python/test_memcached_differential.py.

use crate::command::start_vacuum;
use crate::command::{LastAccess, Scan, ScanFrom};
use crate::protocols::out::Out;
use crate::protocols::stats::items::THE_CLASS;
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::CursorPlace;
use memstored_protocol::text::response::mg_dump_line;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering::Relaxed;

/// memcached's largest slab class id.
const MAX_CLASS: u32 = 63;

/// `shutdown [graceful]`: refused unless the server runs with
/// `--enable-shutdown` (memcached's `-A`). Both forms stop the server the
/// way SIGTERM does (finish running requests, synchronize, close); the
/// connection is closed without a reply, as memcached closes it.
/// Returns false when the connection must close.
pub fn shutdown(srv: &Server, args: &[Bytes], out: &mut Out) -> bool {
    if !srv.cfg.enable_shutdown {
        // memcached 1.6.45's words (1.6.18 said `ERROR: ...`).
        out.put(b"SERVER_ERROR: shutdown not enabled\r\n");
        return true;
    }
    match args {
        [] => {}
        [mode] if &mode[..] == b"graceful" => srv.graceful.store(true, Relaxed),
        _ => {
            out.put(b"CLIENT_ERROR invalid shutdown mode\r\n");
            return true;
        }
    }
    tracing::info!("shutdown command received");
    srv.request_stop();
    false
}

/// `cache_memlimit <megabytes>`. memstored's memory cap is the store's
/// (`capsiz` in its name), fixed when the store is opened, so a new limit
/// cannot be applied: like memcached when its slabs cannot shrink, the
/// answer is `MEMLIMIT_ADJUST_FAILED`, unless the limit asked for is the
/// one in force (then `OK`, nothing to do).
pub fn cache_memlimit(srv: &Server, megabytes: Option<u32>, noreply: bool, out: &mut Out) {
    let reply: &[u8] = match megabytes {
        None => b"ERROR\r\n",
        Some(m) if m < 8 => b"MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n",
        Some(m) if m > 1_000_000_000 => {
            b"MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes\r\n"
        }
        Some(m) if u64::from(m) << 20 == srv.db.name().cap_mem_size => b"OK\r\n",
        Some(_) => b"MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust\r\n",
    };
    if !noreply {
        out.put(reply);
    }
}

/// `lru_crawler <sub> [arg]`, answered as memcached 1.6.18's
/// `process_lru_crawler_command` answers:
/// - `metadump all|hash|<class>[,<class>...]`: one line per live item,
///   `key=<uri-encoded> exp=<unix time|-1> la=<unix time> cas=<n>
///   fetch=<yes|no> cls=1 size=<value bytes>` ended by `\n` (not `\r\n`, as
///   memcached writes them), then `END\r\n`. Every item is in class 1, so a
///   class list without 1 lists nothing. Written a window at a time as the
///   client reads it (the returned place, `metadump_more`), as memcached's
///   crawler thread writes it, so that neither a large cache nor a client
///   that never reads makes the reply, or one worker's turn, unbounded.
/// - `crawl all|<class>[,<class>...]`: `OK`, and like memcached's a
///   background pass frees the expired items (`Db::vacuum`) when the
///   classes include every item's; `BUSY` while one runs.
/// - `enable`, `disable`: switch the crawler, which `crawl` and `metadump`
///   then refuse (`stats settings`' `lru_crawler` follows).
/// - `sleep <usecs>`, `tocrawl <n>`: memcached's checks, then `OK`; they
///   pace a crawler memstored does not run.
pub fn lru_crawler(srv: &Server, args: &[Bytes], out: &mut Out) -> Option<Dump> {
    let enabled = srv.lru_crawler.load(Relaxed);
    match args {
        [sub, which]
            if &sub[..] == b"crawl" || &sub[..] == b"metadump" || &sub[..] == b"mgdump" =>
        {
            if !enabled {
                out.put(b"CLIENT_ERROR lru crawler disabled\r\n");
                return None;
            }
            let dump = &sub[..] != b"crawl";
            let mg = &sub[..] == b"mgdump";
            let listed = match crawl_classes(which) {
                Crawl::All => true,
                // The hash walk is metadump's only: memcached's crawl
                // answers it with its generic error.
                Crawl::Hash if dump => true,
                Crawl::Hash => {
                    out.put(b"ERROR an unknown error happened\r\n");
                    return None;
                }
                Crawl::Classes(has_the_class) => has_the_class,
                Crawl::None => {
                    out.put(b"NOTSTARTED no items to crawl\r\n");
                    return None;
                }
                Crawl::Bad => {
                    out.put(b"BADCLASS invalid class id\r\n");
                    return None;
                }
            };
            if !dump {
                if listed && !start_vacuum(srv) {
                    out.put(b"BUSY currently processing crawler request\r\n");
                } else {
                    out.put(b"OK\r\n");
                }
                return None;
            }
            if mg {
                // memcached 1.6.45 hands the connection to its crawler only
                // with nothing else queued for it.
                if !out.is_empty() {
                    out.put(b"ERROR cannot pipeline other commands before mgdump\r\n");
                    return None;
                }
                out.put(b"OK\r\n");
            }
            if !listed {
                out.put(if mg { &b"EN\r\n"[..] } else { b"END\r\n" });
                return None;
            }
            return dump_from(srv, ScanFrom::First, mg, out);
        }
        // memcached 1.6.45 reads these numbers as digits only (`+7` is bad).
        [sub, n] if &sub[..] == b"tocrawl" || &sub[..] == b"sleep" => match digits_u32(n) {
            None => out.put(b"CLIENT_ERROR bad command line format\r\n"),
            Some(n) if &sub[..] == b"sleep" && n > 1_000_000 => {
                out.put(b"CLIENT_ERROR sleep must be one second or less\r\n")
            }
            Some(_) => out.put(b"OK\r\n"),
        },
        [sub] if &sub[..] == b"enable" => {
            if srv.lru_crawler.swap(true, Relaxed) {
                out.put(b"ERROR failed to start lru crawler thread\r\n")
            } else {
                out.put(b"OK\r\n")
            }
        }
        [sub] if &sub[..] == b"disable" => {
            srv.lru_crawler.store(false, Relaxed);
            out.put(b"OK\r\n")
        }
        _ => out.put(b"ERROR\r\n"),
    }
    None
}

/// What a crawl's class argument names.
enum Crawl {
    All,
    Hash,
    /// Valid class ids; true when class 1 (every item's) is among them.
    Classes(bool),
    /// No ids at all (only commas): memcached starts nothing.
    None,
    Bad,
}

/// memcached's `lru_crawler_crawl` argument: `all`, `hash`, or ids 1..63
/// separated by commas (empty pieces skipped, as `strtok_r` skips them).
fn crawl_classes(which: &[u8]) -> Crawl {
    match which {
        b"all" => return Crawl::All,
        b"hash" => return Crawl::Hash,
        _ => {}
    }
    let mut any = false;
    let mut has_the_class = false;
    for id in which.split(|&b| b == b',').filter(|c| !c.is_empty()) {
        match safe_strtoul(id) {
            Some(id) if (1..=MAX_CLASS).contains(&id) => {
                any = true;
                has_the_class |= id == THE_CLASS;
            }
            _ => return Crawl::Bad,
        }
    }
    if any {
        Crawl::Classes(has_the_class)
    } else {
        Crawl::None
    }
}

/// `slabs automove N` and `slabs reassign SRC DST`, answered as memcached
/// 1.6.18 answers them with slab reassignment disabled (which `stats
/// settings` reports: memstored has no slabs to move). The automove level
/// is kept and shown in `stats settings`, as memcached does.
pub fn slabs_command(srv: &Server, args: &[Bytes], out: &mut Out) {
    let reply: &[u8] = match args {
        [sub, _, _] if &sub[..] == b"reassign" => b"CLIENT_ERROR slab reassignment disabled\r\n",
        [sub, level, ..] if &sub[..] == b"automove" => {
            let reply = automove(srv, level, args.get(2));
            // Only automove looks for a trailing `noreply`, as in memcached.
            if args.last().is_some_and(|a| &a[..] == b"noreply") {
                return;
            }
            reply
        }
        _ => b"ERROR\r\n",
    };
    out.put(reply);
}

/// `slabs automove LEVEL` or `slabs automove ratio R`: memcached's reply.
fn automove(srv: &Server, level: &[u8], ratio: Option<&Bytes>) -> &'static [u8] {
    if level == b"ratio" {
        let ratio = ratio.filter(|r| &r[..] != b"noreply");
        return match ratio.and_then(|r| std::str::from_utf8(r).ok()?.parse::<f64>().ok()) {
            Some(_) => b"OK\r\n",
            None => b"ERROR\r\n",
        };
    }
    match safe_strtoul(level) {
        None => b"CLIENT_ERROR bad command line format\r\n",
        Some(n @ 0..=2) => {
            srv.slab_automove.store(n, Relaxed);
            b"OK\r\n"
        }
        Some(_) => b"ERROR\r\n",
    }
}

/// memcached 1.6.45's `mc_toktou32`: decimal digits only, within 32 bits.
fn digits_u32(tok: &[u8]) -> Option<u32> {
    if tok.is_empty() || !tok.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(tok).ok()?.parse().ok()
}

/// memcached's `safe_strtoul`: `strtoul` (leading blanks, a sign, decimal
/// digits, nothing after them), refusing a negative number that wraps, and
/// keeping the low 32 bits of what fits in 64 (the C assigns an unsigned
/// long to a uint32_t).
fn safe_strtoul(tok: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(tok).ok()?.trim_start();
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude: u64 = digits.parse().ok()?; // ERANGE above 2^64-1
    let value = if negative {
        magnitude.wrapping_neg()
    } else {
        magnitude
    };
    if negative && (value as i64) < 0 {
        return None;
    }
    Some(value as u32)
}

/// Bytes of metadump lines one window writes (about 700 records, under a
/// millisecond of work); the connection writes them out, and the worker
/// turns to its other connections, before the dump goes on.
const METADUMP_WINDOW: usize = 64 << 10;
/// Records one window visits at most, listed or not (expired ones are not).
const METADUMP_VISITS: usize = 4096;

/// Where a dump goes on, and which: `lru_crawler metadump` or memcached
/// 1.6.45's `mgdump` (an `mg <key>` line per item, to append flags to).
pub struct Dump {
    place: CursorPlace,
    mg: bool,
}

/// Writes dump lines from the record the dump is on, until a window is
/// full; where to go on, or `None` once the end (`END`, or `EN` after an
/// `mgdump`) is written.
pub fn dump_more(srv: &Server, dump: Dump, out: &mut Out) -> Option<Dump> {
    dump_from(srv, ScanFrom::Place(dump.place), dump.mg, out)
}

fn dump_from(srv: &Server, from: ScanFrom, mg: bool, out: &mut Out) -> Option<Dump> {
    let end = out.len().saturating_add(METADUMP_WINDOW);
    let mut visits = 0;
    let place = Scan { from }.apply(srv, |key, live| {
        match live {
            Some(_) if mg => out.put(&mg_dump_line(key)),
            Some(r) => metadump_line(srv, key, &r, out),
            None => {}
        }
        visits += 1;
        if out.len() >= end || visits >= METADUMP_VISITS {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    if place.is_none() {
        out.put(if mg { &b"EN\r\n"[..] } else { b"END\r\n" });
    }
    place.map(|place| Dump { place, mg })
}

fn metadump_line(srv: &Server, key: &[u8], r: &memstored_engine::Record, out: &mut Out) {
    let exp = match r.meta.expires_at {
        0 => -1,
        t => i64::try_from(t).unwrap_or(i64::MAX),
    };
    out.put(b"key=");
    uri_encode(key, out);
    // Stores other than the cache keep no access state: la=0,
    // fetch=no (docs/memcached-compat.md).
    let access = LastAccess { key }.apply(srv);
    let line = format!(
        " exp={exp} la={} cas={} fetch={} cls={THE_CLASS} size={}\n",
        access.map_or(0, |a| a.last_access_unix()),
        r.meta.cas,
        if access.is_some_and(|a| a.fetched) {
            "yes"
        } else {
            "no"
        },
        r.value.len()
    );
    out.put(line.as_bytes());
}

/// memcached's `uriencode`: RFC 3986 unreserved bytes as they are, the rest
/// as `%XX`.
fn uri_encode(key: &[u8], out: &mut Out) {
    let mut s = Vec::with_capacity(key.len());
    for &b in key {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            s.push(b);
        } else {
            s.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    out.put(&s);
}

/// `stats detail on|off|dump`.
pub fn stats_detail(srv: &Server, args: &[Bytes], out: &mut Out) {
    match args.first().map(|a| &a[..]) {
        Some(b"on") => {
            srv.detail.set_enabled(true);
            out.put(b"OK\r\n");
        }
        Some(b"off") => {
            srv.detail.set_enabled(false);
            out.put(b"OK\r\n");
        }
        Some(b"dump") => out.put(&srv.detail.dump()),
        _ => out.put(b"CLIENT_ERROR usage: stats detail on|off|dump\r\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_strtoul_reads_numbers_as_memcached() {
        assert_eq!(safe_strtoul(b"100"), Some(100));
        assert_eq!(safe_strtoul(b"+7"), Some(7));
        assert_eq!(safe_strtoul(b"-0"), Some(0));
        assert_eq!(safe_strtoul(b"-1"), None);
        assert_eq!(safe_strtoul(b"x"), None);
        assert_eq!(safe_strtoul(b"5x"), None);
        assert_eq!(safe_strtoul(b""), None);
        assert_eq!(safe_strtoul(b"4294967296"), Some(0));
        assert_eq!(safe_strtoul(b"18446744073709551616"), None);
    }

    #[test]
    fn crawl_classes_as_memcached_parses_them() {
        assert!(matches!(crawl_classes(b"all"), Crawl::All));
        assert!(matches!(crawl_classes(b"hash"), Crawl::Hash));
        assert!(matches!(crawl_classes(b"1,2"), Crawl::Classes(true)));
        assert!(matches!(crawl_classes(b"2,,3"), Crawl::Classes(false)));
        assert!(matches!(crawl_classes(b","), Crawl::None));
        assert!(matches!(crawl_classes(b"0"), Crawl::Bad));
        assert!(matches!(crawl_classes(b"64"), Crawl::Bad));
        assert!(matches!(crawl_classes(b"1,x"), Crawl::Bad));
    }
}
