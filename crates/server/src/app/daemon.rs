//! memcached's `-d`: run in the background.
//!
//! memstored forks while it is still one thread (before any store, update
//! log or tokio runtime starts a thread: a fork copies only the calling
//! thread, and locks other threads held would stay locked in the child),
//! after the flags are checked and the ports bound, so that those errors
//! reach the terminal and the exit status. Unlike memcached, whose parent
//! exits 0 as soon as it forks, the parent waits until the child serves
//! (its ports announced) and exits 0 then, or 1 when the child failed
//! first, its error printed: `memstored -d && use-it` is safe. The child
//! starts a session of its own (no controlling terminal) and, once
//! serving, points stdin, stdout and stderr at /dev/null unless `-v` is
//! given (memcached keeps them with `-v` too). It keeps the working
//! directory, where memcached changes to `/`: store names, the update log
//! and `--port-file` may be relative, and are used for as long as it runs.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};

/// The child's end of the pipe its parent waits on.
#[derive(Debug)]
pub struct Daemon {
    ready: File,
    keep_output: bool,
}

/// Forks. Returns in the child only: the parent waits for it and exits.
/// `keep_output`: leave stdin, stdout and stderr as they are (`-v`).
pub fn daemonize(keep_output: bool) -> Result<Daemon, String> {
    let threads = threads();
    if threads != Some(1) {
        return Err(format!(
            "-d: cannot fork safely: {} threads run already",
            threads.map_or_else(|| "unknown".to_string(), |n| n.to_string())
        ));
    }
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("-d: pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just made and are owned by nobody else.
    let (mut waiting, ready) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    // SAFETY: the process is one thread (checked above), so the child is a
    // whole copy of it.
    match unsafe { libc::fork() } {
        -1 => Err(format!("-d: fork: {}", std::io::Error::last_os_error())),
        0 => {
            drop(waiting);
            // SAFETY: setsid has no preconditions; a fork's child is never
            // a process group leader, so it cannot fail here.
            unsafe { libc::setsid() };
            Ok(Daemon { ready, keep_output })
        }
        _ => {
            drop(ready);
            let mut byte = [0u8; 1];
            let served = matches!(waiting.read(&mut byte), Ok(1));
            // Out without running destructors: the child owns the socket
            // and pid files this process would remove at exit.
            // SAFETY: _exit ends the process at once; nothing is left to run.
            unsafe { libc::_exit(if served { 0 } else { 1 }) }
        }
    }
}

impl Daemon {
    /// The server serves: let go of the terminal and let the parent exit 0.
    pub fn ready(mut self) {
        if !self.keep_output {
            let _ = std::io::stdout().flush();
            if let Ok(null) = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null")
            {
                for fd in 0..=2 {
                    // SAFETY: dup2 onto the standard descriptors, which
                    // stay open (now on /dev/null).
                    unsafe { libc::dup2(null.as_raw_fd(), fd) };
                }
            }
        }
        let _ = self.ready.write_all(&[1]);
    }
}

/// The threads of this process (`/proc/self/status`).
fn threads() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
}
