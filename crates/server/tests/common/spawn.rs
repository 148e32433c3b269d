//! Starting a server process for a test without guessing a port.
//!
//! The server is started on port 0 and tells the test the port the kernel
//! gave it (memstored: the `memstored listening on ADDR:PORT` line on stdout;
//! memcached: the file named by `MEMCACHED_PORT_FILENAME`). Picking a free
//! port first and passing it on is racy: the port can be taken between the
//! two, and connecting to a port nobody listens on can even connect to itself.
//!
//! When a call to the server fails, [`Spawned::diagnose`] says whether the
//! process is still alive, how it exited and what it wrote to stderr, so a
//! crash is told apart from a network problem; a test that panics prints that
//! automatically when its server is dropped.
//!
//! Shared by crates/server/tests and crates/cli/tests (the latter includes
//! this file by path).

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a server may take to open its store and report its port.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How much of a server's stderr a diagnosis shows.
const LOG_TAIL: usize = 4096;

/// A running server; killed on drop (also when a test panics).
pub struct Spawned {
    /// `None` once stopped. A mutex so `&self` can ask whether it still runs.
    child: Mutex<Option<Child>>,
    pub pid: u32,
    pub port: u16,
    /// "memstored" or "memcached", for messages.
    name: String,
    /// The stdout lines after the first, as they come (`Announce::Stdout`).
    later_lines: Mutex<Option<mpsc::Receiver<String>>>,
    /// Holds `stderr.log` (a file, so a chatty server never blocks on a full
    /// pipe) and memcached's port file.
    dir: tempfile::TempDir,
}

/// How a started server reports the port it listens on.
pub enum Announce {
    /// memstored: the first stdout line ends with `:PORT`.
    Stdout,
    /// memcached: `MEMCACHED_PORT_FILENAME` is set to a file that appears
    /// (renamed into place) holding `TCP INET: PORT` once it listens.
    MemcachedPortFile,
}

/// `-u root` when the tests run as root (CI does): memstored, as memcached,
/// refuses to run as root without `-u`, and the tests' servers stay the
/// user that runs them (as anyone else, `-u` changes nothing).
pub fn as_caller(cmd: &mut Command) -> &mut Command {
    // SAFETY: getuid and geteuid have no preconditions.
    if unsafe { libc::getuid() == 0 || libc::geteuid() == 0 } {
        cmd.args(["-u", "root"]);
    }
    cmd
}

impl Spawned {
    /// Starts `cmd` (whose arguments make it listen on port 0) and waits until
    /// it reports its port; panics with a diagnosis if it exits first.
    pub fn launch(cmd: &mut Command, name: &str, how: Announce) -> Spawned {
        let dir = tempfile::tempdir().expect("temp dir for the server's stderr");
        let log = std::fs::File::create(dir.path().join("stderr.log")).expect("stderr log file");
        let port_file = dir.path().join("port");
        if let Announce::MemcachedPortFile = how {
            cmd.env("MEMCACHED_PORT_FILENAME", &port_file);
        }
        let stdout = match how {
            Announce::Stdout => Stdio::piped(),
            Announce::MemcachedPortFile => Stdio::null(),
        };
        let child = cmd
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let mut s = Spawned {
            pid: child.id(),
            child: Mutex::new(Some(child)),
            port: 0,
            later_lines: Mutex::new(None),
            name: name.to_string(),
            dir,
        };
        let port = match how {
            Announce::Stdout => s.port_from_stdout(),
            Announce::MemcachedPortFile => s.port_from_file(&port_file),
        };
        match port {
            Ok(port) => s.port = port,
            Err(why) => panic!("{name} did not report its port ({why}); {}", s.diagnose()),
        }
        s
    }

    /// Reads the first stdout line on a thread, so a hung start times out.
    fn port_from_stdout(&mut self) -> Result<u16, String> {
        let stdout = self.child().as_mut().and_then(|c| c.stdout.take());
        let stdout = stdout.expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let line = rx
            .recv_timeout(START_TIMEOUT)
            .map_err(|_| format!("no stdout line within {START_TIMEOUT:?}"))?;
        *self.later_lines.lock().unwrap_or_else(|e| e.into_inner()) = Some(rx);
        line.trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("first stdout line {line:?}"))
    }

    /// Waits for memcached's port file. memcached gives no other signal, so
    /// this polls the file, checking at each step that the process lives.
    fn port_from_file(&mut self, path: &Path) -> Result<u16, String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(text) = std::fs::read_to_string(path) {
                return text
                    .lines()
                    .find_map(|l| l.strip_prefix("TCP INET: "))
                    .and_then(|p| p.trim().parse().ok())
                    .ok_or_else(|| format!("port file says {text:?}"));
            }
            if let Some(Ok(Some(st))) = self.child().as_mut().map(|c| c.try_wait()) {
                return Err(format!("it exited: {st}"));
            }
            if Instant::now() > deadline {
                return Err(format!("no port file within {START_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The next stdout line after the port's (e.g. `memstored kt listening
    /// on ADDR:PORT`); panics with a diagnosis when none comes.
    pub fn stdout_line(&self) -> String {
        let lines = self.later_lines.lock().unwrap_or_else(|e| e.into_inner());
        match lines.as_ref().map(|rx| rx.recv_timeout(START_TIMEOUT)) {
            Some(Ok(line)) => line,
            _ => panic!("no further stdout line; {}", self.diagnose()),
        }
    }

    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// A connection with a 20 s read timeout; on failure, panics with a
    /// diagnosis of the server process.
    pub fn connect(&self) -> TcpStream {
        match TcpStream::connect(("127.0.0.1", self.port)) {
            Ok(s) => {
                s.set_read_timeout(Some(Duration::from_secs(20))).ok();
                s.set_nodelay(true).ok();
                s
            }
            Err(e) => panic!("connect to {}: {e}; {}", self.address(), self.diagnose()),
        }
    }

    /// Whether the process still runs (or how it ended) and the end of its stderr.
    pub fn diagnose(&self) -> String {
        let pid = self.pid;
        let state = match self.child().as_mut().map(|c| c.try_wait()) {
            None => format!("(pid {pid}) was stopped by the test"),
            Some(Ok(None)) => format!("is still running (pid {pid})"),
            Some(Ok(Some(st))) => format!("(pid {pid}) has exited: {st}"),
            Some(Err(e)) => format!("(pid {pid}) cannot be waited for: {e}"),
        };
        let log = self.stderr();
        let tail = log
            .get(log.len().saturating_sub(LOG_TAIL)..)
            .unwrap_or(&log);
        format!(
            "{} {state}; its stderr ends with:\n{}",
            self.name,
            String::from_utf8_lossy(tail)
        )
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> Vec<u8> {
        std::fs::read(self.dir.path().join("stderr.log")).unwrap_or_default()
    }

    /// A scratch path inside this server's private directory.
    pub fn scratch(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The process, `None` once stopped (taking it stops the drop-time kill).
    pub fn child(&self) -> MutexGuard<'_, Option<Child>> {
        self.child.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// SIGKILL (no shutdown, no sync, no close) and wait for the exit.
    pub fn kill9(&self) {
        if let Some(mut c) = self.child().take() {
            c.kill().expect("SIGKILL");
            c.wait().expect("wait");
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("test failed while the server ran: {}", self.diagnose());
        }
        if let Some(mut c) = self.child().take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
