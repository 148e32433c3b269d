//! memcached's log watchers (`watch`, memcached's logger.c): a text
//! connection that sends `watch [kinds...]` stops taking commands and is
//! sent one line per event of the kinds it asked for (a fetch, a store, a
//! deletion, an eviction, a connection opened or closed), in memcached's
//! words, until it closes.
//!
//! Why lines are written where the event happens, not by a logger thread
//! as memcached does: the event's own thread has the key at hand, and
//! with no watcher (the common case) an event costs one relaxed load of
//! the kinds watched. Each watcher's pending lines are bounded by
//! `-o watcher_logbuf_size` (memcached's default 256 KiB): a line that does
//! not fit is skipped and counted, and the watcher is told how many were
//! skipped (`skipped=N`) before the next line that fits, as memcached does.
//! The connection that sends them (`net/`) takes the pending lines out
//! and writes them, so at most one buffer's worth more is on its way.

use std::cell::Cell;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// The kinds of events, memcached's `LOG_*` bits.
pub mod kind {
    pub const RAWCMDS: u16 = 1 << 0;
    pub const EVICTIONS: u16 = 1 << 1;
    pub const FETCHERS: u16 = 1 << 2;
    pub const MUTATIONS: u16 = 1 << 3;
    pub const SYSEVENTS: u16 = 1 << 4;
    pub const CONNEVENTS: u16 = 1 << 5;
    pub const PROXYREQS: u16 = 1 << 6;
    pub const PROXYEVENTS: u16 = 1 << 7;
    pub const PROXYUSER: u16 = 1 << 8;
    pub const DELETIONS: u16 = 1 << 9;
}

/// memcached's `WATCHER_LIMIT`.
pub const MAX_WATCHERS: usize = 20;

/// memcached's `LOGGER_WATCHER_BUF_SIZE`: 256 KiB.
pub const DEFAULT_BUFFER: usize = 256 << 10;

/// memcached's `LOGGER_BUF_SIZE` (its per-worker buffer; reported only).
pub const WORKER_BUFFER: usize = 64 << 10;

/// Room kept beside a line for a `skipped=N` line (memcached asks its
/// buffer for the line's length plus 128).
const SKIP_ROOM: usize = 128;

/// The words `watch` takes, in the order memcached tries them.
const WORDS: [(&str, u16); 10] = [
    ("rawcmds", kind::RAWCMDS),
    ("evictions", kind::EVICTIONS),
    ("fetchers", kind::FETCHERS),
    ("mutations", kind::MUTATIONS),
    ("sysevents", kind::SYSEVENTS),
    ("connevents", kind::CONNEVENTS),
    ("proxyreqs", kind::PROXYREQS),
    ("proxyevents", kind::PROXYEVENTS),
    ("proxyuser", kind::PROXYUSER),
    ("deletions", kind::DELETIONS),
];

/// The kinds `watch`'s words name (none: fetchers); `None` for a word that
/// names none. As memcached compares them (`strncmp` over the word's
/// length), a word names the first kind it begins: `fetch` is fetchers.
pub fn kinds_of(words: &[&[u8]]) -> Option<u16> {
    if words.is_empty() {
        return Some(kind::FETCHERS);
    }
    let mut kinds = 0;
    for w in words {
        let (_, k) = WORDS
            .iter()
            .find(|(name, _)| !w.is_empty() && name.as_bytes().starts_with(w))?;
        kinds |= k;
    }
    Some(kinds)
}

/// Why a watcher was not added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// `-W` / `--disable-watch`.
    Disabled,
    /// [`MAX_WATCHERS`] watch already.
    TooMany,
}

/// One watching connection's pending lines.
#[derive(Debug, Default)]
struct Pending {
    lines: Vec<u8>,
    /// Lines skipped since the last one that fit.
    skipped: u64,
}

/// One watcher: the kinds it asked for and the lines waiting for it.
#[derive(Debug)]
pub struct Watcher {
    kinds: u16,
    pending: Mutex<Pending>,
    wake: Notify,
}

impl Watcher {
    /// Moves the pending lines into `into` (emptied first).
    pub fn take(&self, into: &mut Vec<u8>) {
        into.clear();
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::swap(&mut p.lines, into);
    }

    /// Resolves once a line was added since the last `take` (or now, if one
    /// was added before this wait began).
    pub async fn changed(&self) {
        self.wake.notified().await
    }
}

/// How a connection closed (memcached's `close_reasons`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    Error,
    Normal,
    IdleTimeout,
    Shutdown,
}

impl CloseReason {
    fn word(self) -> &'static str {
        match self {
            CloseReason::Error => "error",
            CloseReason::Normal => "normal",
            CloseReason::IdleTimeout => "idle_timeout",
            CloseReason::Shutdown => "shutdown",
        }
    }
}

/// What a fetch found (`item_get`'s `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    NotFound,
    Found,
    Expired,
}

/// The server's watchers and their counters (memcached's `log_*` stats).
#[derive(Debug)]
pub struct Watchers {
    disabled: AtomicBool,
    /// The union of the watchers' kinds: what an event checks first.
    kinds: AtomicU16,
    list: Mutex<Vec<Arc<Watcher>>>,
    gid: AtomicU64,
    buffer: AtomicUsize,
    sent: AtomicU64,
    skipped: AtomicU64,
    written: AtomicU64,
}

impl Default for Watchers {
    fn default() -> Watchers {
        Watchers {
            disabled: AtomicBool::new(false),
            kinds: AtomicU16::new(0),
            list: Mutex::default(),
            gid: AtomicU64::new(0),
            buffer: AtomicUsize::new(DEFAULT_BUFFER),
            sent: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            written: AtomicU64::new(0),
        }
    }
}

thread_local! {
    /// The descriptor of the connection this thread serves now (`cfd=`),
    /// -1 outside a connection's batch.
    static SERVING: Cell<i32> = const { Cell::new(-1) };
}

/// Names the connection whose requests this thread serves until the guard
/// drops: events log its descriptor as `cfd`.
pub struct Serving(i32);

impl Serving {
    pub fn conn(fd: i32) -> Serving {
        Serving(SERVING.with(|s| s.replace(fd)))
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        SERVING.with(|s| s.set(self.0));
    }
}

fn serving_fd() -> i32 {
    SERVING.with(Cell::get)
}

impl Watchers {
    /// `-W`: `watch` is refused.
    pub fn disable(&self) {
        self.disabled.store(true, Relaxed);
    }

    /// `-o watcher_logbuf_size=KiB`.
    pub fn set_buffer(&self, bytes: usize) {
        self.buffer.store(bytes.max(1024), Relaxed);
    }

    /// Each watcher's buffer, in bytes (`stats settings`).
    pub fn buffer(&self) -> usize {
        self.buffer.load(Relaxed)
    }

    /// Whether any watcher wants events of `kind`: one relaxed load.
    #[inline]
    pub fn wants(&self, kind: u16) -> bool {
        self.kinds.load(Relaxed) & kind != 0
    }

    /// Adds a watcher of `kinds`, whose first line is memcached's `OK`.
    pub fn add(&self, kinds: u16) -> Result<Arc<Watcher>, Refused> {
        if self.disabled.load(Relaxed) {
            return Err(Refused::Disabled);
        }
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        if list.len() >= MAX_WATCHERS {
            return Err(Refused::TooMany);
        }
        let w = Arc::new(Watcher {
            kinds,
            pending: Mutex::new(Pending {
                lines: b"OK\r\n".to_vec(),
                skipped: 0,
            }),
            wake: Notify::new(),
        });
        w.wake.notify_one();
        list.push(w.clone());
        self.kinds.fetch_or(kinds, Relaxed);
        Ok(w)
    }

    /// The watcher's connection closed.
    pub fn remove(&self, w: &Arc<Watcher>) {
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|x| !Arc::ptr_eq(x, w));
        let kinds = list.iter().fold(0, |k, x| k | x.kinds);
        self.kinds.store(kinds, Relaxed);
    }

    /// memcached's `log_*` stats, in its order.
    pub fn stats(&self) -> [(&'static str, u64); 5] {
        let watchers = self.list.lock().unwrap_or_else(|e| e.into_inner()).len();
        [
            ("log_worker_dropped", 0),
            ("log_worker_written", self.written.load(Relaxed)),
            ("log_watcher_skipped", self.skipped.load(Relaxed)),
            ("log_watcher_sent", self.sent.load(Relaxed)),
            ("log_watchers", watchers as u64),
        ]
    }

    /// Sends the line `body` (after memcached's `ts=... gid=...`) to every
    /// watcher of `kind`.
    fn emit(&self, kind: u16, body: std::fmt::Arguments<'_>) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let gid = self.gid.fetch_add(1, Relaxed) + 1;
        let mut line = String::with_capacity(128);
        let _ = writeln!(
            line,
            "ts={}.{} gid={gid} {body}",
            now.as_secs(),
            now.subsec_micros()
        );
        self.written.fetch_add(1, Relaxed);
        let limit = self.buffer();
        let list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        for w in list.iter().filter(|w| w.kinds & kind != 0) {
            let mut p = w.pending.lock().unwrap_or_else(|e| e.into_inner());
            let fits = p.lines.is_empty() || p.lines.len() + line.len() + SKIP_ROOM <= limit;
            if !fits {
                p.skipped += 1;
                self.skipped.fetch_add(1, Relaxed);
                continue;
            }
            if p.skipped > 0 {
                let skipped = std::mem::take(&mut p.skipped);
                let _ = writeln!(Lines(&mut p.lines), "skipped={skipped}");
            }
            p.lines.extend_from_slice(line.as_bytes());
            drop(p);
            self.sent.fetch_add(1, Relaxed);
            w.wake.notify_one();
        }
    }

    /// A fetch of `key` (memcached's `item_get`); `size`: the value's.
    pub fn item_get(&self, key: &[u8], found: Found, size: usize) {
        if !self.wants(kind::FETCHERS) {
            return;
        }
        let (status, clsid) = match found {
            Found::NotFound => ("not_found", 0),
            Found::Found => ("found", 1),
            Found::Expired => ("expired", 0),
        };
        let cfd = serving_fd();
        self.emit(
            kind::FETCHERS,
            format_args!(
                "type=item_get key={} status={status} clsid={clsid} cfd={cfd} size={size}",
                Uri(key)
            ),
        );
    }

    /// A store of `key` (memcached's `item_store`): its `status` and `cmd`
    /// in memcached's words, its absolute expiry and its value's size.
    pub fn item_store(&self, key: &[u8], status: &str, cmd: &str, expires_at: u64, size: usize) {
        if !self.wants(kind::MUTATIONS) {
            return;
        }
        let ttl = match expires_at {
            0 => 0,
            t => t.saturating_sub(memstored_engine::now_secs()),
        };
        let cfd = serving_fd();
        self.emit(
            kind::MUTATIONS,
            format_args!(
                "type=item_store key={} status={status} cmd={cmd} ttl={ttl} clsid=1 cfd={cfd} size={size}",
                Uri(key)
            ),
        );
    }

    /// A record removed by `cmd` (`delete` or `md`; memcached's `deleted`).
    pub fn deleted(&self, key: &[u8], cmd: &str, size: usize) {
        if !self.wants(kind::DELETIONS) {
            return;
        }
        self.emit(
            kind::DELETIONS,
            format_args!(
                "type=deleted key={} cmd={cmd} clsid=1 size={size}",
                Uri(key)
            ),
        );
    }

    /// A connection opened; `addr` as `stats conns` writes it.
    pub fn conn_new(&self, addr: &str, fd: i32) {
        if !self.wants(kind::CONNEVENTS) {
            return;
        }
        let (rip, rport, transport) = endpoint(addr);
        self.emit(
            kind::CONNEVENTS,
            format_args!("type=conn_new rip={rip} rport={rport} transport={transport} cfd={fd}"),
        );
    }

    /// A connection closed.
    pub fn conn_close(&self, addr: &str, reason: CloseReason, fd: i32) {
        if !self.wants(kind::CONNEVENTS) {
            return;
        }
        let (rip, rport, transport) = endpoint(addr);
        self.emit(
            kind::CONNEVENTS,
            format_args!(
                "type=conn_close rip={rip} rport={rport} transport={transport} reason={} cfd={fd}",
                reason.word()
            ),
        );
    }
}

impl memstored_engine::evictions::EvictionWatch for Watchers {
    fn watching(&self) -> bool {
        self.wants(kind::EVICTIONS)
    }

    /// memcached's `eviction` line: `ttl` -1 for an item that never expires.
    fn evicted(&self, it: &memstored_engine::evictions::Evicted<'_>) {
        let ttl = match it.expires_at {
            0 => -1,
            t => t.saturating_sub(memstored_engine::now_secs()) as i64,
        };
        let fetch = if it.fetched { "yes" } else { "no" };
        self.emit(
            kind::EVICTIONS,
            format_args!(
                "type=eviction key={} fetch={fetch} ttl={ttl} la={} clsid=1 size={}",
                Uri(it.key),
                it.idle_secs,
                it.size
            ),
        );
    }
}

/// memcached's `rip`, `rport` and `transport` from `stats conns`' address
/// (`tcp:1.2.3.4:5`, `tcp6:[::1]:5`, `unix:/path`).
fn endpoint(addr: &str) -> (&str, &str, &str) {
    let Some(tcp) = addr
        .strip_prefix("tcp:")
        .or_else(|| addr.strip_prefix("tcp6:"))
    else {
        return ("unix", "0", "local");
    };
    match tcp.rsplit_once(':') {
        Some((ip, port)) => (
            ip.trim_start_matches('[').trim_end_matches(']'),
            port,
            "tcp",
        ),
        None => (tcp, "0", "tcp"),
    }
}

/// A key as memcached's `uriencode` writes it: letters, digits and `-._~`
/// as they are, every other byte `%XX`.
struct Uri<'a>(&'a [u8]);

impl std::fmt::Display for Uri<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for &b in self.0 {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                f.write_char(b as char)?;
            } else {
                write!(f, "%{b:02X}")?;
            }
        }
        Ok(())
    }
}

/// `write!` into a byte buffer.
struct Lines<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Lines<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_name_kinds_as_memcached_compares_them() {
        assert_eq!(kinds_of(&[]), Some(kind::FETCHERS));
        assert_eq!(
            kinds_of(&[b"mutations", b"evictions"]),
            Some(kind::MUTATIONS | kind::EVICTIONS)
        );
        assert_eq!(kinds_of(&[b"fetch"]), Some(kind::FETCHERS));
        assert_eq!(kinds_of(&[b"proxy"]), Some(kind::PROXYREQS));
        assert_eq!(kinds_of(&[b"fetchersx"]), None);
        assert_eq!(kinds_of(&[b"bogus"]), None);
    }

    #[test]
    fn keys_are_uri_encoded() {
        assert_eq!(Uri(b"a-b_c.d~e").to_string(), "a-b_c.d~e");
        assert_eq!(Uri(b"#/ \xff").to_string(), "%23%2F%20%FF");
    }

    #[test]
    fn endpoints_of_tcp_and_unix_addresses() {
        assert_eq!(endpoint("tcp:127.0.0.1:5000"), ("127.0.0.1", "5000", "tcp"));
        assert_eq!(endpoint("tcp6:[::1]:5000"), ("::1", "5000", "tcp"));
        assert_eq!(endpoint("unix:/tmp/s"), ("unix", "0", "local"));
    }

    #[test]
    fn a_full_buffer_skips_lines_and_says_how_many() {
        let ws = Watchers::default();
        ws.set_buffer(1024);
        let w = ws.add(kind::FETCHERS).unwrap();
        let mut got = Vec::new();
        w.take(&mut got);
        assert_eq!(got, b"OK\r\n");
        for _ in 0..100 {
            ws.item_get(b"k", Found::NotFound, 0);
        }
        w.take(&mut got);
        let text = String::from_utf8(got.clone()).unwrap();
        let kept = text.lines().count();
        assert!(kept < 100 && got.len() <= 1024, "{kept} lines kept");
        ws.item_get(b"k", Found::Found, 3);
        w.take(&mut got);
        let text = String::from_utf8(got.clone()).unwrap();
        assert_eq!(
            text.lines().next(),
            Some(format!("skipped={}", 100 - kept).as_str())
        );
        assert!(text.contains("type=item_get key=k status=found clsid=1 cfd=-1 size=3"));
        assert_eq!(ws.stats()[2], ("log_watcher_skipped", 100 - kept as u64));
        ws.remove(&w);
        assert!(!ws.wants(kind::FETCHERS));
        assert_eq!(ws.stats()[4], ("log_watchers", 0));
    }

    #[test]
    fn at_most_twenty_watchers_and_none_when_disabled() {
        let ws = Watchers::default();
        let all: Vec<_> = (0..MAX_WATCHERS)
            .map(|_| ws.add(kind::FETCHERS).unwrap())
            .collect();
        assert_eq!(ws.add(kind::FETCHERS).unwrap_err(), Refused::TooMany);
        ws.remove(&all[0]);
        assert!(ws.add(kind::FETCHERS).is_ok());
        ws.disable();
        assert_eq!(ws.add(kind::FETCHERS).unwrap_err(), Refused::Disabled);
    }
}
