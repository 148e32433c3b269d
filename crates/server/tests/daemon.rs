//! memcached's `-d` (with `-P`), as memcached 1.6.45's t/daemonize.t checks
//! it, and what memstored adds: the command returns once the server serves,
//! or fails with the child's error.

mod common;
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Kills the daemon (not our child) when a test fails half-way.
struct Reap(i32);
impl Drop for Reap {
    fn drop(&mut self) {
        // SAFETY: kill(2) has no memory effects.
        unsafe { libc::kill(self.0, libc::SIGKILL) };
    }
}

fn stat_pid(sock: &str) -> i32 {
    let mut s = UnixStream::connect(sock).expect("connect to the daemon");
    s.write_all(b"stats\r\n").unwrap();
    let r = BufReader::new(s);
    for line in r.lines() {
        let line = line.unwrap();
        if let Some(pid) = line.strip_prefix("STAT pid ") {
            return pid.trim().parse().unwrap();
        }
        assert_ne!(line, "END", "no pid in stats");
    }
    panic!("stats ended early")
}

#[test]
fn dash_d_forks_writes_the_pid_file_and_returns_once_serving() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let sock = dir.path().join("sock");
    let sock = sock.to_str().unwrap();
    std::fs::write(&pid_file, "").unwrap(); // as t/daemonize.t's tempfile
    let out = memstored()
        .args(["-d", "-P", pid_file.to_str().unwrap(), "-s", sock])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _reap = Reap(pid);
    // Serving as the command returned: no waiting for it.
    assert_eq!(stat_pid(sock), pid);
    // SAFETY: kill(2) has no memory effects.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while UnixStream::connect(sock).is_ok() {
        assert!(Instant::now() < deadline, "the daemon still answers");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn dash_d_reports_a_failed_start() {
    let dir = tempfile::tempdir().unwrap();
    // A store that cannot be opened: a directory where its file should be.
    let store = dir.path().join("casket.tkh");
    std::fs::create_dir(&store).unwrap();
    let sock = dir.path().join("sock");
    let out = memstored()
        .args(["-d", "-s", store.to_str().unwrap(), "--unix-socket"])
        .arg(&sock)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("casket.tkh"), "{err}");
}
