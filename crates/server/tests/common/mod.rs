//! Shared helpers: start the real `memstored` binary on a port it picks and
//! reports (`spawn.rs`) and speak the wire protocols over std `TcpStream`.
#![allow(dead_code)]

pub mod hostile;
pub mod kt_bin;
pub mod kt_http;
mod probe;
mod spawn;
#[allow(unused_imports)]
pub use probe::*;
pub use spawn::{as_caller, Announce, Spawned};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

/// A running memstored; killed on drop.
pub type Server = Spawned;

/// The memstored binary, with `-u root` when the tests run as root
/// ([`as_caller`]); the test's own arguments follow.
pub fn memstored() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memstored"));
    as_caller(&mut cmd);
    cmd
}

impl Spawned {
    /// Starts memstored with `args` plus `-l 127.0.0.1:0 -R 2` and waits for
    /// the port it reports.
    pub fn start(args: &[&str]) -> Server {
        let mut cmd = memstored();
        cmd.args(args).args(["-l", "127.0.0.1:0", "-R", "2"]);
        Spawned::launch(&mut cmd, "memstored", Announce::Stdout)
    }

    /// [`Spawned::start`] in the directory `dir` (relative store names).
    pub fn start_in(dir: &std::path::Path, args: &[&str]) -> Server {
        let mut cmd = memstored();
        cmd.args(args)
            .args(["-l", "127.0.0.1:0", "-R", "2"])
            .current_dir(dir);
        Spawned::launch(&mut cmd, "memstored", Announce::Stdout)
    }

    /// Sends SIGTERM and waits (up to 20 s) for the exit status.
    pub fn terminate(&self) -> ExitStatus {
        let mut child = self.child().take().expect("running");
        // SAFETY: kill(2) on our own child's pid has no memory effects.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(st) = child.try_wait().expect("wait") {
                return st;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("memstored did not exit after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Resident memory of the server process, in KiB.
    pub fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS")
    }

    /// Peak resident memory of the server process, in KiB.
    pub fn peak_kib(&self) -> u64 {
        self.status_kib("VmHWM")
    }

    /// A `/proc/PID/status` field given in kB.
    fn status_kib(&self, field: &str) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid)).expect("proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{field} in /proc/{}/status", self.pid))
    }
}

// ---- binary protocol ----

pub const GET: u8 = 0x00;
pub const SET: u8 = 0x01;
pub const ADD: u8 = 0x02;
pub const REPLACE: u8 = 0x03;
pub const DELETE: u8 = 0x04;
pub const INCR: u8 = 0x05;
pub const DECR: u8 = 0x06;
pub const QUIT: u8 = 0x07;
pub const FLUSH: u8 = 0x08;
pub const GETQ: u8 = 0x09;
pub const NOOP: u8 = 0x0a;
pub const VERSION: u8 = 0x0b;
pub const GETK: u8 = 0x0c;
pub const GETKQ: u8 = 0x0d;
pub const APPEND: u8 = 0x0e;
pub const PREPEND: u8 = 0x0f;
pub const STAT: u8 = 0x10;
pub const SETQ: u8 = 0x11;
pub const ADDQ: u8 = 0x12;
pub const DELETEQ: u8 = 0x14;
pub const INCRQ: u8 = 0x15;
pub const QUITQ: u8 = 0x17;
pub const TOUCH: u8 = 0x1c;
pub const GAT: u8 = 0x1d;
pub const GATQ: u8 = 0x1e;
pub const SASL_LIST: u8 = 0x20;
pub const SASL_AUTH: u8 = 0x21;
pub const GATK: u8 = 0x23;

/// One request packet.
pub fn req(op: u8, key: &[u8], extras: &[u8], value: &[u8], opaque: u32, cas: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(24 + extras.len() + key.len() + value.len());
    v.push(0x80);
    v.push(op);
    v.extend_from_slice(&(key.len() as u16).to_be_bytes());
    v.push(extras.len() as u8);
    v.push(0);
    v.extend_from_slice(&0u16.to_be_bytes());
    let body = (extras.len() + key.len() + value.len()) as u32;
    v.extend_from_slice(&body.to_be_bytes());
    v.extend_from_slice(&opaque.to_be_bytes());
    v.extend_from_slice(&cas.to_be_bytes());
    v.extend_from_slice(extras);
    v.extend_from_slice(key);
    v.extend_from_slice(value);
    v
}

pub fn set_extras(flags: u32, exp: u32) -> Vec<u8> {
    let mut e = flags.to_be_bytes().to_vec();
    e.extend_from_slice(&exp.to_be_bytes());
    e
}

pub fn arith_extras(delta: u64, initial: u64, exp: u32) -> Vec<u8> {
    let mut e = delta.to_be_bytes().to_vec();
    e.extend_from_slice(&initial.to_be_bytes());
    e.extend_from_slice(&exp.to_be_bytes());
    e
}

/// One decoded reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resp {
    pub opcode: u8,
    pub status: u16,
    pub opaque: u32,
    pub cas: u64,
    pub extras: Vec<u8>,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

pub fn read_resp(s: &mut impl Read) -> Resp {
    let mut h = [0u8; 24];
    s.read_exact(&mut h).expect("reply header");
    assert_eq!(h[0], 0x81, "response magic");
    let key_len = u16::from_be_bytes([h[2], h[3]]) as usize;
    let ext_len = h[4] as usize;
    let body = u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as usize;
    let mut b = vec![0u8; body];
    s.read_exact(&mut b).expect("reply body");
    let value = b.split_off(ext_len + key_len);
    let key = b.split_off(ext_len);
    Resp {
        opcode: h[1],
        status: u16::from_be_bytes([h[6], h[7]]),
        opaque: u32::from_be_bytes([h[12], h[13], h[14], h[15]]),
        cas: u64::from_be_bytes(h[16..24].try_into().unwrap()),
        extras: b,
        key,
        value,
    }
}

/// Sends one request and reads one reply.
pub fn call(s: &mut TcpStream, op: u8, key: &[u8], extras: &[u8], value: &[u8], cas: u64) -> Resp {
    s.write_all(&req(op, key, extras, value, 0xabcd, cas))
        .expect("send");
    let r = read_resp(s);
    assert_eq!(r.opaque, 0xabcd);
    assert_eq!(r.opcode, op);
    r
}

/// True if the server closed the connection (read returns 0).
pub fn is_closed(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut b = [0u8; 1];
    matches!(s.read(&mut b), Ok(0) | Err(_))
}

// ---- text protocol ----

/// A text connection with a line reader.
pub struct Text {
    pub r: BufReader<TcpStream>,
    pub w: TcpStream,
}

impl Text {
    pub fn new(s: TcpStream) -> Text {
        let w = s.try_clone().expect("clone");
        Text {
            r: BufReader::new(s),
            w,
        }
    }

    pub fn send(&mut self, data: &[u8]) {
        self.w.write_all(data).expect("send");
    }

    pub fn line(&mut self) -> String {
        let mut l = String::new();
        self.r.read_line(&mut l).expect("read line");
        assert!(l.ends_with("\r\n"), "line {l:?} ends with CRLF");
        l.truncate(l.len() - 2);
        l
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.r.read_exact(&mut v).expect("read bytes");
        v
    }

    /// Sends `request` and returns the lines of its multi-line reply up to
    /// (without) `END`.
    pub fn listing(&mut self, request: &str) -> Vec<String> {
        self.send(request.as_bytes());
        std::iter::from_fn(|| Some(self.line()))
            .take_while(|l| l != "END")
            .collect()
    }

    /// Sends a command and returns the first reply line.
    pub fn cmd(&mut self, c: &str) -> String {
        self.send(c.as_bytes());
        self.line()
    }

    /// One numeric counter of `stats`.
    pub fn stat(&mut self, name: &str) -> u64 {
        self.send(b"stats\r\n");
        let mut found = None;
        loop {
            let l = self.line();
            if l == "END" {
                break;
            }
            if let Some(v) = l.strip_prefix(&format!("STAT {name} ")) {
                found = v.parse().ok();
            }
        }
        found.unwrap_or_else(|| panic!("no stat {name}"))
    }
}
