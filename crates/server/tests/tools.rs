//! libmemcached's command-line tools (memcstat, memcping, memcdump from
//! libmemcached-tools; .ci/run installs them) work against memstored, and the
//! two things they depend on: a VERSION libmemcached can parse (major >= 1)
//! and `stats cachedump`, the key listing memcdump asks for.

mod common;
use common::{Server, Text};
use std::process::{Command, Output};

fn tool(name: &str, server: &Server) -> Output {
    Command::new(name)
        .arg(format!("--servers={}", server.address()))
        .output()
        .unwrap_or_else(|e| {
            panic!("{name}: {e}; apt-get install libmemcached-tools (.ci/run does)")
        })
}

fn text_of(o: &Output) -> String {
    format!(
        "status {}, stdout {:?}, stderr {:?}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn memcstat_memcping_and_memcdump_work() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("{}/tools.tkh#num_shards=2", dir.path().display());
    let server = Server::start(&["-s", &store]);
    let mut t = Text::new(server.connect());
    for k in ["alpha", "beta", "gamma"] {
        assert_eq!(t.cmd(&format!("set {k} 0 0 2\r\nv!\r\n")), "STORED");
    }
    assert_eq!(t.cmd("set gone 0 -1 1\r\nx\r\n"), "STORED");

    let ping = tool("memcping", &server);
    assert!(ping.status.success(), "memcping: {}", text_of(&ping));
    assert!(ping.stderr.is_empty(), "memcping: {}", text_of(&ping));

    let stat = tool("memcstat", &server);
    let out = String::from_utf8_lossy(&stat.stdout);
    assert!(stat.status.success(), "memcstat: {}", text_of(&stat));
    assert!(
        out.contains("curr_items: 4"),
        "memcstat: {}",
        text_of(&stat)
    );
    assert!(out.contains("version: 1."), "memcstat: {}", text_of(&stat));

    let dump = tool("memcdump", &server);
    assert!(dump.status.success(), "memcdump: {}", text_of(&dump));
    let mut keys: Vec<String> = String::from_utf8_lossy(&dump.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        ["alpha", "beta", "gamma"],
        "memcdump: {}",
        text_of(&dump)
    );
}

#[test]
fn version_has_a_nonzero_major_number() {
    let server = Server::start(&[]);
    let mut t = Text::new(server.connect());
    let v = t.cmd("version\r\n");
    let v = v.strip_prefix("VERSION ").expect("VERSION reply");
    let parts: Vec<u8> = v
        .split('.')
        .map(|p| {
            p.parse()
                .unwrap_or_else(|_| panic!("{v:?}: not major.minor.patch"))
        })
        .collect();
    assert_eq!(parts.len(), 3, "{v:?}");
    assert!(
        parts[0] >= 1,
        "major version 0 is refused by libmemcached: {v:?}"
    );
}

fn dump(t: &mut Text, cmd: &str) -> Vec<String> {
    t.send(cmd.as_bytes());
    let mut lines = Vec::new();
    loop {
        let l = t.line();
        if l == "END" || l.starts_with("CLIENT_ERROR") {
            lines.push(l);
            return lines;
        }
        lines.push(l);
    }
}

#[test]
fn stats_cachedump_lists_live_printable_keys_under_class_1() {
    let server = Server::start(&[]);
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("set forever 0 0 3\r\nabc\r\n"), "STORED");
    assert_eq!(t.cmd("set later 0 2000000000 1\r\nx\r\n"), "STORED");
    assert_eq!(t.cmd("set gone 0 -1 1\r\nx\r\n"), "STORED");
    let mut b = server.connect();
    let set = common::call(
        &mut b,
        common::SET,
        b"bin key\x01",
        &common::set_extras(0, 0),
        b"v",
        0,
    );
    assert_eq!(set.status, 0);

    let mut listed = dump(&mut t, "stats cachedump 1 0\r\n");
    listed.sort();
    assert_eq!(
        listed,
        [
            "END",
            "ITEM forever [3 b; 0 s]",
            "ITEM later [1 b; 2000000000 s]"
        ]
    );
    assert_eq!(dump(&mut t, "stats cachedump 1 1\r\n").len(), 2, "LIMIT 1");
    assert_eq!(dump(&mut t, "stats cachedump 2 0\r\n"), ["END"]);
    assert_eq!(
        dump(&mut t, "stats cachedump 64 0\r\n"),
        ["CLIENT_ERROR Illegal slab id"]
    );
    assert_eq!(
        dump(&mut t, "stats cachedump x 0\r\n"),
        ["CLIENT_ERROR bad command line format"]
    );
    assert_eq!(
        dump(&mut t, "stats cachedump 1\r\n"),
        ["CLIENT_ERROR bad command line"]
    );
    assert!(
        t.cmd("version\r\n").starts_with("VERSION "),
        "still in sync"
    );
}
