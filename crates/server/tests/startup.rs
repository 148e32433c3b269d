//! Starting up: port 0 and how the bound port is reported (`--port-file`, the
//! stdout line), a busy port leaves no store behind, and logs written to a
//! file are plain text.

mod common;
use common::{Announce, Server, Spawned, Text};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

#[test]
fn port_zero_is_reported_on_stdout_and_in_the_port_file() {
    for listen in ["127.0.0.1:0", "0"] {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let mut cmd = common::memstored();
        cmd.args(["-l", listen, "-R", "2", "--port-file"])
            .arg(&port_file);
        // `launch` takes the port from the stdout line.
        let server = Spawned::launch(&mut cmd, "memstored", Announce::Stdout);
        assert_ne!(server.port, 0);
        let written = std::fs::read_to_string(&port_file).expect("port file written");
        assert_eq!(written, format!("{}\n", server.port), "-l {listen}");
        let mut t = Text::new(server.connect());
        assert_eq!(t.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
        t.send(b"stats settings\r\n");
        let mut tcpport = None;
        loop {
            let l = t.line();
            if l == "END" {
                break;
            }
            if let Some(p) = l.strip_prefix("STAT tcpport ") {
                tcpport = Some(p.to_string());
            }
        }
        assert_eq!(tcpport, Some(server.port.to_string()), "stats settings");
        assert!(server.terminate().success());
        assert!(!port_file.exists(), "the port file is removed at exit");
    }
}

/// Waits for `child` to exit (a server that starts anyway is killed and fails the test).
fn exit_of(mut child: std::process::Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            return st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("memstored started on a port that is in use");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_busy_port_exits_1_and_creates_no_store_files() {
    // A port this test holds open: in use for as long as the test runs.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    for store in ["db.tkh#num_shards=4", "db.tkt", "db.tkmt"] {
        let child = common::memstored()
            .args(["-s", store, "-l", &addr, "-R", "2"])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        assert_eq!(exit_of(child).code(), Some(1), "{store}");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{store}: files created: {left:?}");
    }
}

#[test]
fn logs_written_to_a_file_carry_no_colour_codes() {
    let server = Server::start(&["-v"]);
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
    drop(t);
    assert!(server.terminate().success());
    let log = server.stderr();
    let text = String::from_utf8_lossy(&log);
    assert!(text.contains("listening on"), "no start-up line: {text}");
    assert!(text.contains("INFO"), "no level names: {text}");
    assert!(
        !log.contains(&0x1b),
        "ESC (an ANSI colour code) in a log written to a file: {text:?}"
    );
}

/// The `stats` lines of a text connection, as name → value.
fn stats(t: &mut Text) -> std::collections::HashMap<String, String> {
    t.send(b"stats\r\n");
    let mut out = std::collections::HashMap::new();
    loop {
        let l = t.line();
        if l == "END" {
            return out;
        }
        let mut w = l.splitn(3, ' ');
        if let (Some("STAT"), Some(k), Some(v)) = (w.next(), w.next(), w.next()) {
            out.insert(k.to_string(), v.to_string());
        }
    }
}

/// The default store is split into one lock stripe per worker (each at
/// least 16 MiB and as big as `-I`, up to half of `-m`), so workers do not
/// all take one lock; `stats` says how many. A name with `num_shards`, a
/// small cap or one worker keeps one shard.
#[test]
fn the_default_cache_has_a_stripe_per_worker() {
    for (args, shards) in [
        (&["-R", "2"][..], "2"),
        (&["-R", "4", "-m", "1024", "-I", "1m"], "4"),
        (&["-R", "4", "-m", "64"], "2"),
        (&["-R", "1"], "1"),
        (&["-R", "2", "-m", "16"], "1"),
        (&["-R", "2", "-s", "*#capsiz=64m,num_shards=1"], "1"),
    ] {
        let mut cmd = common::memstored();
        cmd.args(["-l", "127.0.0.1:0"]).args(args);
        let server = Spawned::launch(&mut cmd, "memstored", Announce::Stdout);
        let mut t = Text::new(server.connect());
        for i in 0..100 {
            assert_eq!(t.cmd(&format!("set k{i} 0 0 1\r\nv\r\n")), "STORED");
        }
        let s = stats(&mut t);
        assert_eq!(
            s.get("shards").map(String::as_str),
            Some(shards),
            "{args:?}"
        );
        assert_eq!(
            s.get("curr_items").map(String::as_str),
            Some("100"),
            "{args:?}"
        );
        drop(t);
        assert!(server.terminate().success(), "{args:?}");
    }
}

/// Seed 002's `tkrzw_server --async --threads 4 "NAME"` lines with only the
/// program name changed (plus `-l 0` and `--address 127.0.0.1:0`, so the
/// test takes free ports instead of 11211 and the gRPC port's 1978): the
/// positional name is the store, `--threads` sets the worker threads and
/// `--async` is accepted.
#[test]
fn seed_002_tkrzw_server_command_lines_start() {
    let dir = tempfile::tempdir().unwrap();
    for (name, shards, file) in [
        (
            "casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending",
            "100",
            "casket.tkh-00099-of-00100",
        ),
        (
            "casket.tkmt#num_shards=100,num_buckets=1M",
            "100",
            "casket.tkmt-00000-of-00100",
        ),
        (
            "casket.tkt#num_shards=10,num_buckets=1M",
            "10",
            "casket.tkt-00009-of-00010",
        ),
    ] {
        let mut cmd = common::memstored();
        cmd.args(["--async", "--threads", "4", name, "-l", "127.0.0.1:0"])
            .args(["--address", "127.0.0.1:0"])
            .current_dir(dir.path());
        let server = Spawned::launch(&mut cmd, "memstored", Announce::Stdout);
        let mut t = Text::new(server.connect());
        assert_eq!(t.cmd("set 00000001 0 0 8\r\nbcdefghi\r\n"), "STORED");
        let s = stats(&mut t);
        assert_eq!(s.get("threads").map(String::as_str), Some("4"), "{name}");
        assert_eq!(s.get("store").map(String::as_str), Some(name), "{name}");
        assert_eq!(s.get("shards").map(String::as_str), Some(shards), "{name}");
        drop(t);
        assert!(server.terminate().success(), "{name}");
        assert!(dir.path().join(file).exists(), "{name}: no {file}");
    }
}

#[test]
fn help_says_async_is_always_on() {
    let out = common::memstored().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--async"), "{help}");
    assert!(help.contains("always asynchronous"), "{help}");
    assert!(help.contains("--threads"), "{help}");
}

/// `ktserver a.kch b.kct` style: several names (`-s` and positional) open
/// together; the memcached protocols use the first; `stats` lists each.
#[test]
fn several_databases_open_together() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = common::memstored();
    cmd.args([
        "-s",
        "a.tkh",
        "b.kct#bnum=1k",
        "+",
        "-l",
        "127.0.0.1:0",
        "-R",
        "2",
    ])
    .current_dir(dir.path());
    let server = Spawned::launch(&mut cmd, "memstored", Announce::Stdout);
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
    let s = stats(&mut t);
    let stat = |k: &str| s.get(k).map(String::as_str);
    assert_eq!(stat("db_0_store"), Some("a.tkh"));
    assert_eq!(stat("db_0_count"), Some("1"));
    assert_eq!(stat("db_1_store"), Some("b.kct#bnum=1k"));
    assert_eq!(stat("db_1_engine"), Some("tree"));
    assert_eq!(stat("db_1_count"), Some("0"));
    assert_eq!(stat("db_2_store"), Some("+"));
    drop(t);
    assert!(server.terminate().success());
    for f in ["a.tkh", "b.kct"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    // One bad name: nothing is served, and the message names it.
    let out = common::memstored()
        .args(["-s", "a.tkh", "notes.kcx", "-l", "127.0.0.1:0"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("notes.kcx"));
}

/// A memcached command line (Debian's memcached.conf flags, and the
/// usual -t/-c/-U/-M) with only the program name changed, plus `-p 0` so
/// the test takes a free port: each flag means what it means to memcached.
#[test]
fn memcached_command_lines_start() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("memcached.pid");
    let mut cmd = common::memstored();
    cmd.args([
        "-m",
        "2",
        "-p",
        "0",
        "-l",
        "127.0.0.1",
        "-t",
        "2",
        "-c",
        "100",
    ])
    .args([
        "-U",
        "0",
        "-M",
        "-o",
        "modern,no_lru_crawler,slab_automove=1",
        "-P",
    ])
    .arg(&pid_file);
    let server = Spawned::launch(&mut cmd, "memstored", Announce::Stdout);
    let pid = std::fs::read_to_string(&pid_file).expect("-P writes the pid");
    assert_eq!(pid.trim().parse::<u32>().ok(), Some(server.pid));
    let s: std::collections::HashMap<_, _> =
        common::stats_of(&server, "settings").into_iter().collect();
    let stat = |k: &str| s.get(k).map(String::as_str);
    assert_eq!(stat("maxbytes"), Some("2097152"));
    assert_eq!(stat("num_threads"), Some("2"));
    assert_eq!(stat("maxconns"), Some("100"));
    assert_eq!(stat("evictions"), Some("off"));
    assert_eq!(stat("lru_crawler"), Some("no"));
    assert_eq!(stat("slab_automove"), Some("1"));
    assert_eq!(stat("tcpport"), Some(server.port.to_string().as_str()));
    assert!(server.terminate().success());
    // -m with a store name contradicts it: refused, saying why.
    let out = common::memstored()
        .args(["-m", "64", "-s", "a.tkh", "-p", "0"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("capsiz=64m"), "{err}");
    assert!(!dir.path().join("a.tkh").exists());
    // An -o option asking for what memstored does not do stops the start.
    let out = common::memstored()
        .args(["-o", "modern,ext_path=/tmp/ext:1G", "-p", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no extstore"), "{err}");
}

/// The uid this test runs as, from /proc (no libc call needed).
fn own_uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    uid_in(&status)
}

/// The real uid on a /proc/PID/status `Uid:` line.
fn uid_in(status: &str) -> u32 {
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// memcached's `-u`: started as root, memstored runs as the user from the
/// moment its port is bound, and the store's files are the user's; an
/// unknown user stops it. Started as anyone else, the flag changes nothing.
#[test]
fn dash_u_gives_up_root_before_the_store_is_opened() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    const NOBODY: u32 = 65534;
    let root = own_uid() == 0;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memstored"));
    cmd.args(["-u", "nobody", "-s", "casket.tkh", "-p", "0", "-t", "2"])
        .current_dir(dir.path());
    let server = Spawned::launch(&mut cmd, "memstored", Announce::Stdout);
    let want = if root { NOBODY } else { own_uid() };
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid)).unwrap();
    assert_eq!(uid_in(&status), want, "{status}");
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
    drop(t);
    assert!(server.terminate().success());
    let owner = std::fs::metadata(dir.path().join("casket.tkh"))
        .unwrap()
        .uid();
    assert_eq!(owner, want, "the store file's owner");
    if root {
        let out = Command::new(env!("CARGO_BIN_EXE_memstored"))
            .args(["-u", "no-such-user-here", "-p", "0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no such user"), "{err}");
    }
}
