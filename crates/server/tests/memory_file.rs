//! memcached's restartable cache, `-e FILE` (its t/restart.t; issue 45): a
//! graceful stop (SIGUSR1, `shutdown graceful`) writes the cache to FILE
//! and FILE.meta, the next start with the same `-e` reads it back (values,
//! flags, CAS and expiry; what expired meanwhile stays gone) and removes
//! the `.meta`; another stop writes nothing; a `.meta` that does not read
//! refuses the start; a file memstored did not write is never replaced; a
//! disk too full for the file leaves no summary, and the next start is cold.

mod common;
#[path = "common/tmpfs.rs"]
#[allow(dead_code)]
mod tmpfs;
use common::{Server, Text};
use std::path::Path;
use std::time::{Duration, Instant};

fn start(file: &Path, extra: &[&str]) -> Server {
    let mut args = vec!["-e", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    Server::start(&args)
}

/// Sends `sig` and waits for the exit.
fn stop_with(srv: &Server, sig: i32) {
    let mut child = srv.child().take().expect("running");
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, sig) };
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "no exit after signal {sig}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts with `-e file`, which must fail: its standard error.
fn refused_start(file: &Path) -> String {
    let out = common::memstored()
        .args(["-e", file.to_str().unwrap(), "-l", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn meta(file: &Path) -> std::path::PathBuf {
    file.with_file_name(format!(
        "{}.meta",
        file.file_name().unwrap().to_str().unwrap()
    ))
}

#[test]
fn a_graceful_stop_keeps_the_cache_for_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cache.mem");
    let srv = start(&file, &[]);
    let mut c = Text::new(srv.connect());
    let settings = c.listing("stats settings\r\n");
    let want = format!("STAT memory_file {}", file.display());
    assert!(settings.contains(&want), "{settings:?}");
    assert_eq!(c.cmd("set a 7 0 3\r\none\r\n"), "STORED");
    assert_eq!(c.cmd("set soon 0 1 2\r\nbo\r\n"), "STORED");
    assert_eq!(c.cmd("set later 0 300 2\r\nmo\r\n"), "STORED");
    let big = "x".repeat(700_000);
    assert_eq!(
        c.cmd(&format!("set big 1 0 {}\r\n{big}\r\n", big.len())),
        "STORED"
    );
    c.send(b"gets a\r\n");
    let head = c.line();
    let cas: u64 = head.rsplit(' ').next().unwrap().parse().unwrap();
    c.bytes(5);
    assert_eq!(c.line(), "END");
    stop_with(&srv, libc::SIGUSR1);
    assert!(file.exists() && meta(&file).exists());
    // `soon` expires while the server is down.
    std::thread::sleep(Duration::from_millis(1100));

    let srv = start(&file, &[]);
    assert!(!meta(&file).exists(), "the summary is used once");
    let mut c = Text::new(srv.connect());
    c.send(b"gets a soon later\r\n");
    assert_eq!(c.line(), format!("VALUE a 7 3 {cas}"));
    c.bytes(5);
    assert!(c.line().starts_with("VALUE later 0 2 "));
    c.bytes(4);
    assert_eq!(c.line(), "END");
    c.send(b"get big\r\n");
    assert_eq!(c.line(), format!("VALUE big 1 {}", big.len()));
    assert_eq!(c.bytes(big.len() + 2).len(), big.len() + 2);
    assert_eq!(c.line(), "END");
    // SIGTERM is not memcached's graceful stop: nothing is written, and
    // the next start is cold.
    stop_with(&srv, libc::SIGTERM);
    assert!(!meta(&file).exists());
    let srv = start(&file, &[]);
    let mut c = Text::new(srv.connect());
    assert_eq!(c.cmd("get a\r\n"), "END");
    drop(c);
    drop(srv);
}

#[test]
fn shutdown_graceful_writes_it_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    let srv = start(&file, &["-A"]);
    let mut c = Text::new(srv.connect());
    assert_eq!(c.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
    c.send(b"shutdown graceful\r\n");
    let deadline = Instant::now() + Duration::from_secs(20);
    while srv.child().as_mut().unwrap().try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "still running");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(meta(&file).exists());
    let srv = start(&file, &[]);
    let mut c = Text::new(srv.connect());
    c.send(b"get k\r\n");
    assert_eq!(c.line(), "VALUE k 0 1");
}

#[test]
fn an_unreadable_summary_refuses_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    std::fs::write(meta(&file), b"").unwrap();
    let err = refused_start(&file);
    assert!(err.contains("not a memstored memory file summary"), "{err}");
}

#[test]
fn a_file_memstored_did_not_write_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    let theirs = dir.path().join("theirs");
    std::fs::write(&theirs, b"someone else's").unwrap();
    std::os::unix::fs::symlink(&theirs, &file).unwrap();
    let srv = start(&file, &[]);
    let mut c = Text::new(srv.connect());
    assert_eq!(c.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
    stop_with(&srv, libc::SIGUSR1);
    assert_eq!(std::fs::read(&theirs).unwrap(), b"someone else's");
    assert!(std::fs::symlink_metadata(&file)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!meta(&file).exists());
    // Nor a plain file of another program's.
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, b"memcached's own mmap file").unwrap();
    let srv = start(&file, &[]);
    stop_with(&srv, libc::SIGUSR1);
    assert_eq!(std::fs::read(&file).unwrap(), b"memcached's own mmap file");
}

/// memcached's `hash_power_level`: 16 at first, 17 past 98,304 items (1.5
/// a bucket), never lower after, and kept across a restart from `-e`.
#[test]
fn hash_power_level_grows_as_memcacheds_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    let srv = start(&file, &[]);
    let mut c = Text::new(srv.connect());
    assert_eq!(c.stat("hash_power_level"), 16);
    let mut batch = Vec::new();
    for i in 0..100_000 {
        batch.extend_from_slice(format!("set z{i} 0 0 0 noreply\r\n\r\n").as_bytes());
    }
    c.send(&batch);
    assert!(c.cmd("version\r\n").starts_with("VERSION"));
    assert_eq!(c.stat("hash_power_level"), 17);
    assert_eq!(c.cmd("flush_all\r\n"), "OK");
    assert_eq!(c.stat("hash_power_level"), 17);
    stop_with(&srv, libc::SIGUSR1);
    let srv = start(&file, &[]);
    let mut c = Text::new(srv.connect());
    assert_eq!(c.stat("hash_power_level"), 17);
}

/// The memory file on a disk too full for it: the stop logs why and
/// writes no summary (nor a partial file in FILE's place), so the next
/// start is cold, not from half a file.
#[test]
fn a_full_disk_leaves_no_summary_and_the_next_start_is_cold() {
    let Some(disk) = tmpfs::Tmpfs::mount("2m") else {
        return;
    };
    let file = disk.join("m");
    let srv = start(&file, &[]);
    let mut c = Text::new(srv.connect());
    let value = "v".repeat(100_000);
    for i in 0..30 {
        let set = format!("set k{i} 0 0 {}\r\n{value}\r\n", value.len());
        assert_eq!(c.cmd(&set), "STORED");
    }
    drop(c);
    stop_with(&srv, libc::SIGUSR1);
    let err = String::from_utf8_lossy(&srv.stderr()).to_string();
    assert!(err.contains("No space left on device"), "{err}");
    assert!(!meta(&file).exists());
    assert!(!file.exists(), "no partial file in its place");
    assert!(!disk.join("m.tmp").exists(), "nor left beside it");
    let srv = start(&file, &[]);
    let mut c = Text::new(srv.connect());
    assert_eq!(c.cmd("get k0\r\n"), "END");
}

/// A damaged record length refuses the start instead of allocating what it
/// claims (the file's length and its summary still agree).
#[test]
fn a_record_longer_than_the_file_refuses_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m");
    let srv = start(&file, &[]);
    let mut c = Text::new(srv.connect());
    assert_eq!(c.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
    stop_with(&srv, libc::SIGUSR1);
    let mut bytes = std::fs::read(&file).unwrap();
    let at = b"memstored memory file 1\n".len();
    bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&file, bytes).unwrap();
    let err = refused_start(&file);
    assert!(err.contains("runs past the end of the file"), "{err}");
}
