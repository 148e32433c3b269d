//! What the command line says back: a fatal error is printed once, a
//! mistyped flag or database word gets the closest right one, and the
//! thread-count flags answer to their names old and new.

mod common;
use std::process::Output;

/// memstored with `args`, which must fail to start; returns stderr.
fn refused(dir: &std::path::Path, args: &[&str]) -> String {
    let out: Output = common::memstored()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?} should exit 1");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn lines_with(text: &str, part: &str) -> usize {
    text.lines().filter(|l| l.contains(part)).count()
}

/// Issue 41: every fatal error came out twice, as a log line and as
/// main's own message.
#[test]
fn a_fatal_error_is_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let err = refused(dir.path(), &["-s", "*#colour=blue", "-l", "127.0.0.1:0"]);
    assert_eq!(lines_with(&err, "colour"), 1, "{err}");
    // A port this test holds open: in use for as long as the test runs.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let err = refused(dir.path(), &["-l", &addr]);
    assert_eq!(lines_with(&err, "in use"), 1, "{err}");
}

/// memstored run to completion with `args`; returns stdout and stderr.
fn run(dir: &std::path::Path, args: &[&str]) -> (String, String) {
    let out: Output = common::memstored()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (text(&out.stdout), text(&out.stderr))
}

/// A mistyped flag, `-o` option or database word is answered with the
/// one meant.
#[test]
fn a_mistyped_word_gets_the_closest_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::memstored()
        .arg("--max-conections=5")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("similar argument exists: '--max-connections'"),
        "{err}"
    );
    let err = refused(dir.path(), &["-o", "lru_crawlr", "-l", "127.0.0.1:0"]);
    assert!(err.contains("did you mean \"lru_crawler\"?"), "{err}");
    let err = refused(
        dir.path(),
        &["-s", "x.tkh#num_shard=4", "-l", "127.0.0.1:0"],
    );
    assert!(err.contains("did you mean \"num_shards\"?"), "{err}");
    assert!(
        err.contains("docs/names.md") && !err.contains("apow"),
        "{err}"
    );
    std::fs::write(dir.path().join("m.toml"), "max-conection = 5\n").unwrap();
    let err = refused(dir.path(), &["--config", "m.toml"]);
    assert!(err.contains("did you mean \"max-connections\"?"), "{err}");
}

/// `-R`/`-W` are named for what they set (worker threads, blocking-work
/// threads); memstored 0.1's `--read-threads`/`--write-threads` still
/// work, on the command line and as config keys.
#[test]
fn thread_flags_answer_to_old_and_new_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("old.toml"),
        "read-threads = 3\nwrite-threads = 5\n",
    )
    .unwrap();
    for args in [
        &["--worker-threads", "3", "--blocking-threads", "5"][..],
        &["--read-threads", "3", "--write-threads", "5"],
        &["-R", "3", "-W", "5"],
        &["--config", "old.toml"],
    ] {
        let (config, _) = run(dir.path(), &[args, &["--print-config"]].concat());
        assert!(
            config.contains("\nworker-threads = 3\n")
                && config.contains("\nblocking-threads = 5\n"),
            "{args:?}: {config}"
        );
    }
    let (help, _) = run(dir.path(), &["--help"]);
    assert!(
        help.contains("--worker-threads") && help.contains("--blocking-threads"),
        "{help}"
    );
    assert!(
        !help.contains("--read-threads") && !help.contains("--write-threads"),
        "{help}"
    );
}

/// memcached 1.6.45's own t/00-startup.t flags (issue 45): `-B
/// auto|ascii|binary` is memcached's binding protocol (a size stays the
/// buffer size), `-C` and `-b` are reported by `stats settings`, `-t 0` is
/// refused; `-B ascii` reads a binary request's bytes as text.
#[test]
fn memcached_startup_flags() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let err = refused(dir.path(), &["-t", "0", "-l", "127.0.0.1:0"]);
    assert!(err.contains("-t 0"), "{err}");
    // A bad value is clap's usage error (exit 2), naming the words.
    let out = common::memstored()
        .args(["-B", "http", "-l", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ascii or binary"));
    let srv = common::Server::start(&["-B", "ascii", "-C", "-b", "8675"]);
    let settings = common::stats_of(&srv, "settings");
    let get = |k: &str| {
        settings
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("binding_protocol").as_deref(), Some("ascii"));
    assert_eq!(get("cas_enabled").as_deref(), Some("no"));
    assert_eq!(get("tcp_backlog").as_deref(), Some("8675"));
    // A binary NOOP (magic 0x80, opcode 0x0a) is a line of text here.
    let mut c = srv.connect();
    let mut noop = vec![0x80, 0x0a];
    noop.resize(24, 0);
    noop.extend_from_slice(b"\r\n");
    c.write_all(&noop).unwrap();
    let mut reply = [0u8; 5];
    c.read_exact(&mut reply).unwrap();
    // A text error line, not a binary reply (magic 0x81).
    assert!(&reply == b"ERROR" || &reply == b"CLIEN", "{reply:?}");
    let srv = common::Server::start(&["-B", "4096"]);
    let settings = common::stats_of(&srv, "settings");
    assert!(settings.contains(&("binding_protocol".into(), "auto-negotiate".into())));
}

/// memcached 1.6.45's t/item_size_max.t and t/issue_67.t (issue 45): `-I`
/// below 1024 bytes is refused in memcached's words; `-p -1` asks for a free
/// port, which is written where `MEMCACHED_PORT_FILENAME` says, as memcached
/// writes it.
#[test]
fn memcached_item_size_floor_and_port_file() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    // Spawned, not `refused`: a server that starts anyway must fail the
    // test, not hang it.
    let mut child = common::memstored()
        .args(["-I", "1000", "-l", "127.0.0.1:0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("memstored started with -I 1000");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains("Item max size cannot be less than 1024 bytes."),
        "{err}"
    );
    let ports = dir.path().join("ports");
    let mut cmd = common::memstored();
    cmd.args(["-I", "1024", "-l", "127.0.0.1", "-p", "-1", "-R", "2"])
        .env("MEMCACHED_PORT_FILENAME", &ports);
    let srv = common::Spawned::launch(&mut cmd, "memstored", common::Announce::Stdout);
    assert_ne!(srv.port, 0);
    let written = std::fs::read_to_string(&ports).expect("the port file is written");
    assert_eq!(written, format!("TCP INET: {}\n", srv.port));
    let settings = common::stats_of(&srv, "settings");
    assert!(settings.contains(&("item_size_max".into(), "1024".into())));
    assert!(srv.terminate().success());
    assert!(
        ports.exists(),
        "left in place at exit, as memcached leaves it"
    );
}
