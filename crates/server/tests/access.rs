//! memcached's per-item access state (meta `h`, `l`, `u`; `me`'s `fetch=`
//! and `la=`), `stats conns` and the `lru_crawler` subcommands against a
//! started memstored. Byte-for-byte agreement with memcached itself is
//! checked by tests/python/test_memcached_differential.py.

mod common;
use common::{call, stat, wait_until, Server, Text, STAT};

#[test]
fn the_cache_tracks_fetches_as_memcached() {
    // the default store is the cache
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("ms k 1\r\nx\r\n"), "HD");
    assert_eq!(t.cmd("mg k h l t\r\n"), "HD h0 l0 t-1");
    assert_eq!(t.cmd("mg k h\r\n"), "HD h1");
    assert!(t.cmd("me k\r\n").contains(" fetch=yes "));
    // a store is a new item
    assert_eq!(t.cmd("set k 0 0 1\r\ny\r\n"), "STORED");
    assert!(t.cmd("me k\r\n").contains(" fetch=no "));
    // u: reported, not counted
    assert_eq!(t.cmd("mg k u h\r\n"), "HD h0");
    assert_eq!(t.cmd("mg k h\r\n"), "HD h0");
    assert_eq!(t.cmd("mg k h\r\n"), "HD h1");
    // text get, touch and gat count as fetches
    for fetch in ["get k\r\n", "touch k 100\r\n", "gat 100 k\r\n"] {
        assert_eq!(t.cmd("set k 0 0 1\r\ny\r\n"), "STORED");
        t.send(fetch.as_bytes());
        while !matches!(t.line().as_str(), "END" | "TOUCHED") {}
        assert_eq!(t.cmd("mg k h\r\n"), "HD h1", "after {fetch:?}");
    }
    // an incr that fits keeps the state; one that grows makes a new item
    assert_eq!(t.cmd("set n 0 0 2\r\n10\r\n"), "STORED");
    assert_eq!(t.cmd("mg n h\r\n"), "HD h0");
    assert_eq!(t.cmd("incr n 1\r\n"), "11");
    assert_eq!(t.cmd("mg n h\r\n"), "HD h1");
    assert_eq!(t.cmd("incr n 100\r\n"), "111");
    assert_eq!(t.cmd("mg n h\r\n"), "HD h0");
    // md I marks in place
    assert_eq!(t.cmd("md n I\r\n"), "HD");
    assert_eq!(t.cmd("mg n h\r\n"), "HD h1 X W");
    // an autovivified item is new to its creator, fetched for the next
    assert_eq!(t.cmd("mg viv N30 h\r\n"), "HD h0 W");
    assert_eq!(t.cmd("mg viv h\r\n"), "HD h1 Z");
}

#[test]
fn seconds_since_last_access_count_up() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("ms k 1\r\nx\r\n"), "HD");
    assert_eq!(t.cmd("ms f 1\r\nx\r\n"), "HD");
    assert_eq!(t.cmd("mg f\r\n"), "HD");
    // the seconds under test, not a wait for readiness
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let secs = |l: String| -> u64 { l.rsplit(['l', '=']).next().unwrap().parse().unwrap() };
    assert!(secs(t.cmd("mg k l\r\n")) >= 2);
    // the first fetch left the time at the store; this second one moves it
    assert!(secs(t.cmd("mg f h l\r\n")) >= 2);
    assert!(secs(t.cmd("mg f l\r\n")) <= 1);
    let me = t.cmd("me k\r\n");
    let la: u64 = me
        .split(" la=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // `mg k l` above was k's first fetch: it left the time at the store
    assert!(la >= 2 && me.contains(" fetch=yes "), "{me}");
}

#[test]
fn other_stores_report_never_fetched() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("db.tkh").display().to_string();
    let srv = Server::start(&["-s", &store]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("ms k 1\r\nx\r\n"), "HD");
    assert_eq!(t.cmd("mg k h l\r\n"), "HD h0 l0");
    assert_eq!(t.cmd("mg k h l\r\n"), "HD h0 l0");
    assert!(t.cmd("me k\r\n").contains(" la=0 cas="));
}

#[test]
fn stats_conns_lists_listener_and_connections() {
    let srv = Server::start(&[]);
    let port = srv.address().rsplit(':').next().unwrap().to_string();
    let mut t = Text::new(srv.connect());
    let idle = srv.connect();
    let idle_port = idle.local_addr().unwrap().port();
    // listed once the server has accepted it: ask until it is
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let lines = loop {
        let lines = t.listing("stats conns\r\n");
        if lines.iter().any(|l| l.ends_with(&format!(":{idle_port}"))) {
            break lines;
        }
        assert!(std::time::Instant::now() < deadline, "{lines:?}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let listener = format!(":addr tcp:127.0.0.1:{port}");
    assert!(lines.iter().any(|l| l.ends_with(&listener)), "{lines:?}");
    assert!(lines.iter().any(|l| l.ends_with(":state conn_listening")));
    assert!(lines.iter().any(|l| l.ends_with(":state conn_parse_cmd")));
    assert!(lines.iter().any(|l| l.ends_with(":state conn_new_cmd")));
    assert!(lines
        .iter()
        .any(|l| l.ends_with(&format!(":listen_addr tcp:127.0.0.1:{port}"))));
    assert!(lines.iter().all(|l| l.starts_with("STAT ")));
    // binary STAT does not know the group (memcached 1.6.18)
    let mut b = srv.connect();
    let r = call(&mut b, STAT, b"conns", &[], b"", 0);
    assert_eq!(r.status, 1, "Key not found");
    drop(idle);
}

/// The state of the connection `port` in `stats conns`, asked until it is `want`.
fn wait_for_state(t: &mut Text, port: u16, want: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let lines = t.listing("stats conns\r\n");
        let fd = lines.iter().find_map(|l| {
            let (fd, addr) = l.strip_prefix("STAT ")?.split_once(":addr ")?;
            addr.ends_with(&format!(":{port}")).then(|| fd.to_string())
        });
        let state = fd.and_then(|fd| {
            let key = format!("STAT {fd}:state ");
            lines
                .iter()
                .find_map(|l| l.strip_prefix(&key).map(str::to_string))
        });
        if state.as_deref() == Some(want) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{want}: {lines:?}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// memcached 1.6.45's t/stats-conns.t (issue 45): a connection that sent a
/// storage command and not yet its data block is `conn_nread`, as is one
/// inside a binary request; one between requests, text or binary, is
/// `conn_read`.
#[test]
fn stats_conns_shows_a_request_half_read_as_conn_nread() {
    use std::io::Write;
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    let mut text = srv.connect();
    let text_port = text.local_addr().unwrap().port();
    text.write_all(b"set foo 0 0 6\r\n").unwrap();
    wait_for_state(&mut t, text_port, "conn_nread");
    text.write_all(b"barbaz\r\n").unwrap();
    wait_for_state(&mut t, text_port, "conn_read");
    let mut bin = srv.connect();
    let bin_port = bin.local_addr().unwrap().port();
    let r = call(&mut bin, common::NOOP, b"", &[], b"", 0);
    assert_eq!(r.status, 0);
    wait_for_state(&mut t, bin_port, "conn_read");
    // A GET header announcing a 3-byte key, without the key.
    let mut head = vec![0x80, common::GET, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3];
    head.resize(24, 0);
    bin.write_all(&head).unwrap();
    wait_for_state(&mut t, bin_port, "conn_nread");
}

#[test]
fn lru_crawler_enable_disable_and_crawl() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("set gone 0 1 1\r\nx\r\n"), "STORED");
    assert_eq!(
        t.cmd("lru_crawler enable\r\n"),
        "ERROR failed to start lru crawler thread"
    );
    assert_eq!(
        t.cmd("lru_crawler crawl hash\r\n"),
        "ERROR an unknown error happened"
    );
    assert_eq!(
        t.cmd("lru_crawler crawl ,\r\n"),
        "NOTSTARTED no items to crawl"
    );
    assert_eq!(t.cmd("lru_crawler disable\r\n"), "OK");
    assert_eq!(
        t.cmd("lru_crawler crawl all\r\n"),
        "CLIENT_ERROR lru crawler disabled"
    );
    assert_eq!(
        t.cmd("lru_crawler metadump all\r\n"),
        "CLIENT_ERROR lru crawler disabled"
    );
    let settings = t.listing("stats settings\r\n");
    assert!(settings.contains(&"STAT lru_crawler no".to_string()));
    assert_eq!(t.cmd("lru_crawler enable\r\n"), "OK");
    assert_eq!(
        t.cmd("lru_crawler sleep 1000001\r\n"),
        "CLIENT_ERROR sleep must be one second or less"
    );
    assert_eq!(
        t.cmd("lru_crawler tocrawl x\r\n"),
        "CLIENT_ERROR bad command line format"
    );
    // a crawl removes expired items: `stats`' curr_items drops to 0
    // the TTL under test, not a wait for readiness
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = t.cmd("lru_crawler crawl all\r\n");
        assert!(r == "OK" || r.starts_with("BUSY"), "{r}");
        let stats = t.listing("stats\r\n");
        if stats.contains(&"STAT curr_items 0".to_string()) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "expired item still counted"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // memcached's crawler counters: the one expired item, reclaimed by a
    // crawl that looked at it (read once the last crawl has finished).
    wait_until(&srv, "the crawl to finish", |s| {
        stat(s, "lru_crawler_running") == 0
    });
    let stats = t.listing("stats\r\n");
    assert!(
        stats.contains(&"STAT crawler_reclaimed 1".to_string()),
        "{stats:?}"
    );
    assert!(stat(&srv, "lru_crawler_starts") >= 1);
    assert!(stat(&srv, "crawler_items_checked") >= 1);
    let items = t.listing("stats items\r\n");
    assert!(items.is_empty(), "no items, no lines: {items:?}");
}
