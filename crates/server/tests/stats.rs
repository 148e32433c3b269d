//! The memcached stats names tools rely on, plus memstored's own.

mod common;
use common::*;
use std::collections::HashMap;

const NAMES: &[&str] = &[
    "pid",
    "uptime",
    "time",
    "version",
    "pointer_size",
    "curr_connections",
    "total_connections",
    "cmd_get",
    "cmd_set",
    "cmd_flush",
    "cmd_touch",
    "cmd_meta",
    "get_hits",
    "get_misses",
    "get_expired",
    "delete_hits",
    "delete_misses",
    "incr_hits",
    "incr_misses",
    "decr_hits",
    "decr_misses",
    "cas_hits",
    "cas_misses",
    "cas_badval",
    "touch_hits",
    "touch_misses",
    "store_too_large",
    "store_no_memory",
    "curr_items",
    "total_items",
    "bytes",
    "expired_unfetched",
    "evicted_unfetched",
    "evictions",
    "limit_maxbytes",
    "accepting_conns",
    "listen_disabled_num",
    "time_in_listen_disabled_us",
    "threads",
    "engine",
    "shards",
    "file_size",
];

fn stats(t: &mut Text, cmd: &str) -> HashMap<String, String> {
    t.send(cmd.as_bytes());
    let mut m = HashMap::new();
    loop {
        let l = t.line();
        if l == "END" {
            return m;
        }
        let mut p = l.splitn(3, ' ');
        assert_eq!(p.next(), Some("STAT"));
        let k = p.next().unwrap().to_string();
        m.insert(k, p.next().unwrap_or("").to_string());
    }
}

#[test]
fn stats_names_and_counters() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("set a 0 0 1\r\n1\r\n"), "STORED");
    assert_eq!(t.cmd("get a\r\n"), "VALUE a 0 1");
    t.line();
    t.line();
    assert_eq!(t.cmd("get b\r\n"), "END");
    assert_eq!(t.cmd("incr a 1\r\n"), "2");
    let m = stats(&mut t, "stats\r\n");
    for n in NAMES {
        assert!(m.contains_key(*n), "missing stat {n}");
    }
    assert!(m["pid"].parse::<u32>().is_ok());
    assert_eq!(m["cmd_get"], "2");
    assert_eq!(m["get_hits"], "1");
    assert_eq!(m["get_misses"], "1");
    assert_eq!(m["cmd_set"], "1");
    assert_eq!(m["incr_hits"], "1");
    assert_eq!(m["curr_items"], "1");
    assert_eq!(m["curr_connections"], "1");
    assert_eq!(m["threads"], "2");
    assert_eq!(m["limit_maxbytes"], (64u64 << 20).to_string());
    assert_eq!(m["engine"], "mem_hash");
    let s = stats(&mut t, "stats settings\r\n");
    assert_eq!(s["item_size_max"], (64u64 << 20).to_string());
    assert_eq!(m["cmd_meta"], "0");
    assert_eq!(m["store_too_large"], "0");
}

/// memcached's `store_too_large` (a set over `-I` or over what the cache
/// holds) and `cmd_meta` (it counts `me` requests only).
#[test]
fn refused_stores_and_meta_debug_are_counted() {
    let srv = Server::start(&["-I", "1k", "-s", "*#capsiz=1m"]);
    let mut t = Text::new(srv.connect());
    let big = "x".repeat(2000);
    let line = format!("set big 0 0 {}\r\n{big}\r\n", big.len());
    assert_eq!(t.cmd(&line), "SERVER_ERROR object too large for cache");
    assert_eq!(
        t.cmd("ms big 2000 T0\r\n"),
        "SERVER_ERROR object too large for cache"
    );
    t.send(format!("{big}\r\n").as_bytes());
    // An append that would build a value over -I.
    let half = "y".repeat(900);
    assert_eq!(t.cmd(&format!("set a 0 0 900\r\n{half}\r\n")), "STORED");
    let line = format!("append a 0 0 200\r\n{}\r\n", &half[..200]);
    assert_eq!(t.cmd(&line), "SERVER_ERROR object too large for cache");
    let mut b = srv.connect();
    let r = call(&mut b, SET, b"big", &[0; 8], big.as_bytes(), 0);
    assert_eq!(r.status, 0x03, "binary: too large");
    assert_eq!(t.cmd("me big\r\n"), "EN");
    assert_eq!(t.cmd("mg big v\r\n"), "EN");
    let m = stats(&mut t, "stats\r\n");
    assert_eq!(m["store_too_large"], "4");
    assert_eq!(m["store_no_memory"], "0");
    assert_eq!(m["cmd_meta"], "1", "only me counts, as in memcached");
}

#[test]
fn connection_limit() {
    let srv = Server::start(&["-c", "2"]);
    let _a = srv.connect();
    let mut b = Text::new(srv.connect());
    assert!(b.cmd("version\r\n").starts_with("VERSION"));
    let mut c = Text::new(srv.connect());
    assert_eq!(c.line(), "ERROR Too many open connections");
    assert!(is_closed(&mut c.w));
    drop(_a);
    // The server notices the close asynchronously: wait until `b` alone is counted.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while stats(&mut b, "stats\r\n")["curr_connections"] != "1" {
        assert!(
            std::time::Instant::now() < deadline,
            "the closed slot was never freed"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut d = Text::new(srv.connect());
    assert!(d.cmd("version\r\n").starts_with("VERSION"));
}

/// memcached's `evicted_unfetched`: a small cache written past its cap
/// and never read: every eviction is of an item nobody fetched, and
/// `stats items` has the same figures (the engine's tests cover fetched
/// items and expired ones).
#[test]
fn evicted_items_never_fetched_are_counted() {
    let srv = Server::start(&["-s", "*#capsiz=1m"]);
    let mut t = Text::new(srv.connect());
    let value = "v".repeat(100);
    for i in 0..20_000 {
        assert_eq!(
            t.cmd(&format!("set k{i} 0 0 100 noreply\r\n{value}\r\nmn\r\n")),
            "MN"
        );
    }
    let m = stats(&mut t, "stats\r\n");
    let (evicted, unfetched): (u64, u64) = (
        m["evictions"].parse().unwrap(),
        m["evicted_unfetched"].parse().unwrap(),
    );
    assert!(evicted > 5_000, "{m:?}");
    assert_eq!(unfetched, evicted, "nothing was read");
    let items = stats(&mut t, "stats items\r\n");
    assert_eq!(items["items:1:evicted_unfetched"], m["evicted_unfetched"]);
    assert_eq!(items["items:1:expired_unfetched"], "0");
}
