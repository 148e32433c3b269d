//! What the server writes by a path it is given (issue 40, finding 3): it
//! refuses to run as root without `-u` (as memcached does), never writes a
//! pid or port file through a symlink or over a file it did not make (a
//! store's above all), and at exit removes only the files that are still
//! its own (a later server's socket on the same path is left alone).

mod common;
use common::{Server, Text};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PRECIOUS: &str = "someone else's file\n";

fn is_root() -> bool {
    // SAFETY: getuid and geteuid have no preconditions.
    unsafe { libc::getuid() == 0 || libc::geteuid() == 0 }
}

/// Runs `cmd`, which must refuse to start: its stderr. A server that
/// starts anyway is killed and fails the test (after 30 s at most).
fn refusal(cmd: &mut Command) -> String {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start memstored");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("memstored started although it should have refused");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    err
}

fn victim(dir: &Path) -> std::path::PathBuf {
    let v = dir.join("victim");
    std::fs::write(&v, PRECIOUS).unwrap();
    v
}

#[test]
fn root_without_dash_u_is_refused() {
    if !is_root() {
        eprintln!("skipped: needs root (CI runs as root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let err = refusal(
        Command::new(env!("CARGO_BIN_EXE_memstored"))
            .args(["-s", "casket.tkh", "-p", "0"])
            .current_dir(dir.path()),
    );
    assert!(
        err.contains("can't run as root without the -u switch"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing made: {left:?}");
}

#[test]
fn pid_and_port_files_are_not_written_through_a_symlink() {
    for flag in ["-P", "--port-file"] {
        let dir = tempfile::tempdir().unwrap();
        let v = victim(dir.path());
        let link = dir.path().join("memstored.pid");
        std::os::unix::fs::symlink(&v, &link).unwrap();
        let err = refusal(common::memstored().args(["-p", "0", flag]).arg(&link));
        assert!(err.contains("symbolic link"), "{flag}: {err}");
        assert_eq!(std::fs::read_to_string(&v).unwrap(), PRECIOUS, "{flag}");
    }
}

#[test]
fn pid_and_port_files_never_replace_someone_elses_file() {
    for flag in ["-P", "--port-file"] {
        let dir = tempfile::tempdir().unwrap();
        let v = victim(dir.path());
        let err = refusal(common::memstored().args(["-p", "0", flag]).arg(&v));
        assert!(err.contains("refusing to overwrite"), "{flag}: {err}");
        assert_eq!(std::fs::read_to_string(&v).unwrap(), PRECIOUS, "{flag}");
    }
}

/// `-P casket.tkh` (or `--port-file`) once replaced the store with a pid:
/// 0 of 100 records after a restart.
#[test]
fn a_pid_or_port_file_naming_a_store_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let server = Server::start_in(d, &["-s", "casket.tkh#num_shards=2"]);
    let mut t = Text::new(server.connect());
    for i in 0..100 {
        assert_eq!(t.cmd(&format!("set k{i} 0 0 1\r\nv\r\n")), "STORED");
    }
    drop(t);
    assert!(server.terminate().success());
    for (flag, name) in [
        ("-P", "casket.tkh-00000-of-00002"),
        ("--port-file", "casket.tkh-00001-of-00002"),
        ("-P", "casket.tkh.lock"),
        ("--port-file", "casket.tkh"),
    ] {
        let err = refusal(
            common::memstored()
                .args(["-s", "casket.tkh#num_shards=2", "-p", "0", flag, name])
                .current_dir(d),
        );
        assert!(
            err.contains("is a file of the store"),
            "{flag} {name}: {err}"
        );
    }
    // A store not made yet is recognised too.
    let err = refusal(
        common::memstored()
            .args(["-s", "fresh.tkh", "-p", "0", "-P", "./fresh.tkh"])
            .current_dir(d),
    );
    assert!(err.contains("is a file of the store"), "{err}");
    let server = Server::start_in(d, &["-s", "casket.tkh#num_shards=2"]);
    let mut t = Text::new(server.connect());
    t.send(b"stats\r\n");
    let items = std::iter::from_fn(|| Some(t.line()))
        .take_while(|l| l != "END")
        .find_map(|l| l.strip_prefix("STAT curr_items ").map(str::to_string));
    assert_eq!(items.as_deref(), Some("100"));
}

/// An old pid file (a number) is replaced; at exit the file goes only if
/// it is still the one this server wrote.
#[test]
fn an_old_pid_file_is_replaced_and_only_our_own_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("memstored.pid");
    std::fs::write(&pid_file, "4242\n").unwrap();
    let server = Server::start(&["-P", pid_file.to_str().unwrap()]);
    let written = std::fs::read_to_string(&pid_file).unwrap();
    assert_eq!(written, format!("{}\n", server.pid));
    assert!(server.terminate().success());
    assert!(!pid_file.exists(), "removed at exit");

    let server = Server::start(&["-P", pid_file.to_str().unwrap()]);
    std::fs::remove_file(&pid_file).unwrap();
    std::fs::write(&pid_file, "17\n").unwrap();
    assert!(server.terminate().success());
    assert_eq!(std::fs::read_to_string(&pid_file).unwrap(), "17\n");
}

fn version_over(path: &Path) -> String {
    let mut s = std::os::unix::net::UnixStream::connect(path).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"version\r\n").unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// A server stopping once deleted the live socket of a server started
/// after it on the same path (memcached leaves it); a live socket is not
/// taken over, a stale one is.
#[test]
fn a_unix_socket_is_removed_at_exit_only_while_it_is_ours() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memstored.sock");
    let p = path.to_str().unwrap();
    let first = Server::start(&["--unix-socket", p, "-p", "0"]);
    let err = refusal(common::memstored().args(["--unix-socket", p, "-p", "0"]));
    assert!(err.contains("another server is listening"), "{err}");
    assert!(version_over(&path).starts_with("VERSION"));
    // Its file gone (an operator, a cleanup job), a second server takes the path.
    std::fs::remove_file(&path).unwrap();
    let second = Server::start(&["--unix-socket", p, "-p", "0"]);
    assert!(first.terminate().success());
    assert!(path.exists(), "the second server's socket is left in place");
    assert!(version_over(&path).starts_with("VERSION"));
    assert!(second.terminate().success());
    assert!(!path.exists(), "its own socket is removed at exit");
    // A socket file nobody listens on (a crash) is replaced.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    let third = Server::start(&["--unix-socket", p, "-p", "0"]);
    assert!(version_over(&path).starts_with("VERSION"));
    assert!(third.terminate().success());
}

/// Issue 41: with `-u USER` the socket was made as root before the server
/// became USER, who could not remove it at exit from a directory such as
/// a sticky /tmp (only a file's owner may remove it there). It is now made
/// as USER, as memcached makes it. Only root can give up root: run as
/// anyone else there is nothing to check.
#[test]
fn with_dash_u_the_unix_socket_is_made_as_the_user_and_removed_at_exit() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !is_root() {
        return;
    }
    const NOBODY: u32 = 65534;
    let dir = tempfile::tempdir().unwrap();
    // Sticky and world-writable, as /tmp is.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let path = dir.path().join("memstored.sock");
    let start = |path: &Path| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_memstored"));
        cmd.args(["-u", "nobody", "-p", "0", "--unix-socket"])
            .arg(path);
        cmd
    };
    let server = common::Spawned::launch(&mut start(&path), "memstored", common::Announce::Stdout);
    assert_eq!(std::fs::symlink_metadata(&path).unwrap().uid(), NOBODY);
    assert!(version_over(&path).starts_with("VERSION"));
    assert!(server.terminate().success());
    assert!(!path.exists(), "the socket is removed at exit");
    // A directory the user cannot write: refused at start, saying why,
    // rather than a socket left behind at every exit.
    let closed = tempfile::tempdir().unwrap();
    std::fs::set_permissions(closed.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = refusal(&mut start(&closed.path().join("memstored.sock")));
    assert!(err.contains("must be writable by nobody"), "{err}");
    assert_eq!(std::fs::read_dir(closed.path()).unwrap().count(), 0);
}
