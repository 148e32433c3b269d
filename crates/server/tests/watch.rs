//! memcached's log watchers (`watch`; its t/watcher.t and t/watcher_connid.t,
//! issue 45): a connection that sends `watch <kinds>` is sent one line per
//! fetch, store, deletion, eviction or connection event of those kinds, in
//! memcached 1.6.45's words, on both IO engines; a full buffer skips lines
//! and says how many; `-W` refuses, the 21st watcher is refused, and the
//! watchers are counted in `stats`.

mod common;
use common::{Server, Text};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A watching connection: its lines, read with a deadline so a missing
/// line fails the test instead of hanging it.
struct Watch(BufReader<TcpStream>);

impl Watch {
    fn start(srv: &Server, kinds: &str) -> Watch {
        let mut s = srv.connect();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(format!("watch {kinds}\r\n").as_bytes())
            .unwrap();
        let mut w = Watch(BufReader::new(s));
        assert_eq!(w.line(), "OK\r\n", "watch {kinds}");
        w
    }

    fn line(&mut self) -> String {
        let mut l = String::new();
        self.0.read_line(&mut l).expect("a watcher line in time");
        l
    }

    /// The next line, less its `ts=<secs>.<usecs> gid=<n> ` head (checked).
    fn event(&mut self) -> String {
        let l = self.line();
        let rest = l.strip_prefix("ts=").expect(&l);
        let (ts, rest) = rest.split_once(" gid=").expect(&l);
        let (secs, usecs) = ts.split_once('.').expect(&l);
        assert!(secs.parse::<u64>().unwrap() > 1_600_000_000, "{l}");
        assert!(usecs.parse::<u32>().unwrap() < 1_000_000, "{l}");
        let (gid, body) = rest.split_once(' ').expect(&l);
        assert!(gid.parse::<u64>().unwrap() > 0, "{l}");
        body.trim_end().to_string()
    }
}

/// `stats conns`' descriptor of the connection that asks.
fn own_fd(t: &mut Text) -> String {
    let l = t.listing("stats conns\r\n");
    let last = l.last().expect("a listing");
    last.strip_prefix("STAT ")
        .and_then(|s| s.split(':').next())
        .expect(last)
        .to_string()
}

fn fetchers_mutations_and_deletions(io: &str) {
    let srv = Server::start(&["--io", io]);
    let mut c = Text::new(srv.connect());
    let fd = own_fd(&mut c);
    let mut w = Watch::start(&srv, "fetchers mutations deletions");
    assert_eq!(c.cmd("set vfoo 0 100 4\r\nvbar\r\n"), "STORED");
    assert_eq!(
        w.event(),
        format!("type=item_get key=vfoo status=not_found clsid=0 cfd={fd} size=0")
    );
    let store = w.event();
    let want = "type=item_store key=vfoo status=stored cmd=set ttl=";
    assert!(store.starts_with(want), "{store}");
    assert!(
        store.ends_with(&format!(" clsid=1 cfd={fd} size=4")),
        "{store}"
    );
    c.send(b"get vfoo\r\n");
    assert_eq!(c.line(), "VALUE vfoo 0 4");
    c.bytes(6);
    assert_eq!(c.line(), "END");
    assert_eq!(
        w.event(),
        format!("type=item_get key=vfoo status=found clsid=1 cfd={fd} size=4")
    );
    // A multi-get reads in one batch; each key is one line.
    c.send(b"get vfoo nope\r\n");
    assert_eq!(c.line(), "VALUE vfoo 0 4");
    c.bytes(6);
    assert_eq!(c.line(), "END");
    assert!(w.event().contains("key=vfoo status=found"));
    assert!(w.event().contains("key=nope status=not_found"));
    assert_eq!(c.cmd("add vfoo 0 0 1\r\nx\r\n"), "NOT_STORED");
    assert!(w.event().contains("type=item_get key=vfoo status=found"));
    assert!(w
        .event()
        .contains("type=item_store key=vfoo status=not_stored cmd=add"));
    // Only real removals are deletions: a miss and `md I` are not.
    assert_eq!(c.cmd("md absent\r\n"), "NF");
    assert_eq!(c.cmd("md vfoo I\r\n"), "HD");
    assert_eq!(c.cmd("delete vfoo\r\n"), "DELETED");
    assert_eq!(w.event(), "type=deleted key=vfoo cmd=delete clsid=1 size=4");
    assert_eq!(c.cmd("set a#b 0 0 2\r\nhi\r\n"), "STORED");
    w.event();
    assert!(w.event().contains("key=a%23b status=stored"));
    assert_eq!(c.cmd("md a#b\r\n"), "HD");
    assert_eq!(w.event(), "type=deleted key=a%23b cmd=md clsid=1 size=2");
    assert_eq!(c.stat("log_watchers"), 1);
    // Listed as memcached lists a watcher.
    let conns = c.listing("stats conns\r\n");
    assert!(
        conns.iter().any(|l| l.ends_with(":state conn_watch")),
        "{conns:?}"
    );
    drop(w);
    // Unlisted once its client closed (its task sees the end of input).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while c.stat("log_watchers") != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "watcher still counted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn watchers_see_fetches_stores_and_deletions_on_epoll() {
    fetchers_mutations_and_deletions("epoll");
}

#[test]
fn watchers_see_fetches_stores_and_deletions_on_io_uring_or_auto() {
    fetchers_mutations_and_deletions("auto");
}

#[test]
fn connection_events_say_how_each_closed() {
    for io in ["epoll", "auto"] {
        let srv = Server::start(&["--io", io]);
        let mut w = Watch::start(&srv, "connevents");
        let mut quits = Text::new(srv.connect());
        let fd = own_fd(&mut quits);
        let new = w.event();
        assert!(
            new.starts_with("type=conn_new rip=127.0.0.1 rport="),
            "{new}"
        );
        assert!(new.ends_with(&format!(" transport=tcp cfd={fd}")), "{new}");
        quits.send(b"quit\r\n");
        let close = w.event();
        assert!(
            close.starts_with("type=conn_close rip=127.0.0.1"),
            "{close}"
        );
        assert!(
            close.ends_with(&format!("transport=tcp reason=normal cfd={fd}")),
            "{close}"
        );
        // An HTTP request line on the memcached port: closed as an error.
        let mut http = srv.connect();
        let new = w.event();
        assert!(new.starts_with("type=conn_new"), "{new}");
        http.write_all(b"GET / HTTP/1.1\r\n").unwrap();
        let close = w.event();
        assert!(
            close.ends_with(&format!("reason=error cfd={}", fd_of(&new))),
            "{close}"
        );
        // The binary protocol's QUIT: normal.
        let mut bin = srv.connect();
        assert!(w.event().starts_with("type=conn_new"));
        bin.write_all(&common::req(0x07, b"", b"", b"", 0, 0))
            .unwrap();
        let close = w.event();
        assert!(close.contains(" reason=normal "), "{close}");
        // A client that just goes: normal.
        let gone = srv.connect();
        assert!(w.event().starts_with("type=conn_new"));
        drop(gone);
        assert!(w.event().contains(" reason=normal "));
    }
}

/// The descriptor a connection event names.
fn fd_of(line: &str) -> String {
    line.rsplit_once("cfd=").expect(line).1.to_string()
}

#[test]
fn a_full_buffer_skips_lines_then_says_how_many() {
    // 8 KiB as t/watcher.t: the watcher reads nothing while 20,000 gets
    // are logged, far more than its buffer and its socket hold.
    let srv = Server::start(&["-o", "watcher_logbuf_size=8"]);
    let mut c = Text::new(srv.connect());
    assert_eq!(
        c.listing("stats settings\r\n")
            .iter()
            .find(|l| l.starts_with("STAT watcher_logbuf_size "))
            .map(String::as_str),
        Some("STAT watcher_logbuf_size 8192")
    );
    let mut w = Watch::start(&srv, "fetchers");
    let spacer = "X".repeat(180);
    for i in 0..20_000 {
        c.send(format!("get foo{i}{spacer}\r\n").as_bytes());
        assert_eq!(c.line(), "END");
    }
    assert!(c.stat("log_watcher_skipped") > 0);
    let mut lines = 0;
    let skipped = loop {
        let l = w.line();
        lines += 1;
        if lines % 100 == 0 {
            c.send(b"get foo\r\n");
            assert_eq!(c.line(), "END");
        }
        if let Some(n) = l.strip_prefix("skipped=") {
            break n.trim_end().parse::<u64>().unwrap();
        }
        assert!(lines < 20_000, "no skipped= line");
    };
    assert!(skipped > 0);
    assert!(w.event().starts_with("type=item_get key=foo"));
    assert!(c.stat("log_watcher_sent") > 0);
    assert!(c.stat("log_worker_written") >= 20_000);
}

#[test]
fn refusals_as_memcached_words_them() {
    let srv = Server::start(&["-W"]);
    let mut c = Text::new(srv.connect());
    assert_eq!(
        c.cmd("watch mutations\r\n"),
        "CLIENT_ERROR watch commands not allowed"
    );
    // The connection goes on as a command connection.
    assert_eq!(c.cmd("version\r\n").split(' ').next(), Some("VERSION"));
    let srv = Server::start(&["--disable-watch", "-W", "3"]);
    let mut c = Text::new(srv.connect());
    assert_eq!(
        c.cmd("watch\r\n"),
        "CLIENT_ERROR watch commands not allowed"
    );

    let srv = Server::start(&[]);
    let mut c = Text::new(srv.connect());
    assert_eq!(c.cmd("watch bogus\r\n"), "ERROR");
    c.send(b"version\r\nwatch\r\n");
    assert!(c.line().starts_with("VERSION"));
    assert_eq!(
        c.line(),
        "ERROR cannot pipeline other commands before watch"
    );
    let watchers: Vec<Watch> = (0..20).map(|_| Watch::start(&srv, "fetch")).collect();
    assert_eq!(c.stat("log_watchers"), 20);
    assert_eq!(
        c.cmd("watch\r\n"),
        "WATCHER_TOO_MANY log watcher limit reached"
    );
    drop(watchers);
}

#[test]
fn evictions_are_logged_with_the_evicted_item() {
    let srv = Server::start(&["-m", "2"]);
    let mut w = Watch::start(&srv, "evictions");
    let mut c = Text::new(srv.connect());
    let value = "v".repeat(2000);
    for i in 0..4000 {
        c.send(format!("set key{i} 0 0 2000 noreply\r\n{value}\r\n").as_bytes());
    }
    assert!(c.cmd("version\r\n").starts_with("VERSION"));
    assert!(c.stat("evictions") > 0);
    let ev = w.event();
    assert!(ev.starts_with("type=eviction key=key"), "{ev}");
    assert!(ev.contains(" fetch=no ttl=-1 la="), "{ev}");
    assert!(ev.ends_with(" clsid=1 size=2000"), "{ev}");
}

#[test]
fn a_connection_closed_for_idling_says_so() {
    let srv = Server::start(&["-o", "idle_timeout=1"]);
    let mut w = Watch::start(&srv, "connevents");
    let idle = srv.connect();
    assert!(w.event().starts_with("type=conn_new"));
    // The watcher idles too, but a watcher is not waiting for a request.
    let close = w.event();
    assert!(close.contains(" reason=idle_timeout "), "{close}");
    drop(idle);
}
