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
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_memstored"));
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
        let child = Command::new(env!("CARGO_BIN_EXE_memstored"))
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
