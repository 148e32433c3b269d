//! `memstore bench`: network load against a memcached or memstored server,
//! over the memcached binary or text protocol or MessagePack-RPC, so both
//! servers are measured by one client.
//!
//! Each of `--threads` threads opens `--connections` blocking connections and
//! does `--iter` records per phase (set, then get). Records go in batches of
//! `--multi`: one batch per request round trip, one batch in flight per
//! connection (a thread with several connections sends a batch on each, then
//! reads each reply). A batch is
//!
//! | protocol | set | get |
//! |---|---|---|
//! | binary, multi 1 | SET | GET |
//! | binary, multi N | N × SETQ + NOOP | N × GETKQ + NOOP |
//! | text, multi 1 | `set` | `get k` |
//! | text, multi N | N-1 × `set ... noreply` + one `set` (its STORED ends the batch) | `get k1 ... kN` |
//! | rpc, multi 1 | `set(key, value)` | `get(key)` |
//! | rpc, multi N | `set_bulk({_k: v, ...})` | `get_bulk({_k: "", ...})` |
//!
//! Thread `t` of `T` uses keys `i * T + t` (or random keys below
//! `iter * T` with `--random_key`), written `%08d` like `tkrzw_dbm_perf`;
//! values are `--size` bytes cut from a letter pattern. Latency is measured
//! per request (one batch's round trip) into an HDR histogram.

use crate::perf::format_key;
use crate::progress;
use crate::rpc_client;
use anyhow::{anyhow, bail, Context, Result};
use bytes::{Buf, BufMut, BytesMut};
use clap::{Args, ValueEnum};
use hdrhistogram::Histogram;
use memstored_protocol::binary::{BinaryHeader, HEADER_LEN, REQUEST_MAGIC};
use memstored_protocol::rpc::{frame_len, Limits};
use memstored_protocol::Parse;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

pub const LONG_ABOUT: &str = "\
Network load against a memcached or memstored server: the same client for both.

Each thread opens --connections connections and, per phase, moves --iter records in
batches of --multi, one batch in flight per connection:

  binary  multi 1: SET / GET;      multi N: N x SETQ + NOOP / N x GETKQ + NOOP
  text    multi 1: set / get k;    multi N: N-1 x 'set .. noreply' + 'set' / 'get k1 .. kN'
  rpc     multi 1: set / get;      multi N: set_bulk / get_bulk (MessagePack-RPC)

Keys are %08d numbers (thread t of T uses i*T+t; --random_key: random below iter*T).
Prints one line per phase: records/s (qps=), requests/s, and latency per request
(one batch's round trip) p50/p99/p99.9/max in microseconds; --json prints one JSON
object instead. A progress bar goes to stderr when it is a terminal.

Examples:
  memstore bench --address 127.0.0.1:11211 --protocol binary --threads 4 --iter 250000 --multi 100
  memstore bench --protocol rpc --set_only --multi 100 --threads 4 --iter 250000
  memstore bench --protocol text --get_only --iter 100000 --json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// memcached binary protocol.
    Binary,
    /// memcached text protocol.
    Text,
    /// MessagePack-RPC (memstored; Kyoto Tycoon's kt-msgpack procedures).
    Rpc,
}

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::Binary => "binary",
            Protocol::Text => "text",
            Protocol::Rpc => "rpc",
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// The server: HOST:PORT (default: $MEMSTORE_ADDRESS, else 127.0.0.1:11211).
    #[arg(long)]
    pub address: Option<String>,
    /// Wire protocol.
    #[arg(long, value_enum, default_value = "binary")]
    pub protocol: Protocol,
    /// Client threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Connections per thread (each has one batch in flight).
    #[arg(long, default_value_t = 1)]
    pub connections: usize,
    /// Records per thread and phase.
    #[arg(long, default_value_t = 10000)]
    pub iter: u64,
    /// Records per request (bulk size): pipelined quiet commands + NOOP on
    /// binary, multi-key get / noreply sets on text, set_bulk / get_bulk on RPC.
    #[arg(long, default_value_t = 1)]
    pub multi: usize,
    /// Value size in bytes.
    #[arg(long, default_value_t = 8)]
    pub size: usize,
    /// Random keys below iter * threads instead of each record once.
    #[arg(long = "random_key", alias = "random-key")]
    pub random_key: bool,
    /// Random keys are drawn below this (default: iter * threads).
    #[arg(long = "key_space", alias = "key-space", value_name = "N")]
    pub key_space: Option<u64>,
    /// Seed of the random keys.
    #[arg(long = "random_seed", alias = "random-seed", default_value_t = 0)]
    pub random_seed: u64,
    /// Only the set phase.
    #[arg(long = "set_only", alias = "set-only", conflicts_with = "get_only")]
    pub set_only: bool,
    /// Only the get phase (load the records first).
    #[arg(long = "get_only", alias = "get-only")]
    pub get_only: bool,
    /// Prints one JSON object (phases, rates, latency) instead of text lines.
    #[arg(long)]
    pub json: bool,
    /// Ends each phase after this many seconds even if --iter is not done
    /// (0 = no limit); the counts are of what was done.
    #[arg(long, default_value_t = 0.0)]
    pub duration: f64,
    /// Ends the phase early once this file exists (for scripts that run a
    /// load alongside other work and stop it when that work is done).
    #[arg(long = "stop_file", alias = "stop-file", value_name = "PATH")]
    pub stop_file: Option<std::path::PathBuf>,
    /// Seconds to wait for a reply before failing (default 60).
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Paces the load to this many records per second over all threads
    /// (0 = as fast as the server answers): a steady load at which to
    /// measure something else, such as replication lag.
    #[arg(long, default_value_t = 0.0)]
    pub rate: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Set,
    Get,
}

/// What one thread measured in one phase.
struct ThreadResult {
    hist: Histogram<u64>,
    records: u64,
    requests: u64,
    hits: u64,
    errors: u64,
    first_error: Option<String>,
    end: Instant,
}

/// SplitMix64, for random keys.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// One connection with its buffers.
struct Conn {
    stream: TcpStream,
    proto: Protocol,
    rbuf: BytesMut,
    wbuf: BytesMut,
    chunk: Box<[u8]>,
    msgid: u32,
}

const OP_GET: u8 = 0x00;
const OP_SET: u8 = 0x01;
const OP_NOOP: u8 = 0x0a;
const OP_GETKQ: u8 = 0x0d;
const OP_SETQ: u8 = 0x11;

/// Outcome of reading one batch's reply.
#[derive(Default)]
struct Reply {
    hits: u64,
    errors: u64,
    first_error: Option<String>,
}

impl Reply {
    fn error(&mut self, what: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what);
        }
    }
}

impl Conn {
    fn open(addr: &str, proto: Protocol, timeout: Duration) -> Result<Conn> {
        let stream = rpc_client::connect(addr, Some(timeout))?;
        Ok(Conn {
            stream,
            proto,
            rbuf: BytesMut::with_capacity(64 * 1024),
            wbuf: BytesMut::with_capacity(64 * 1024),
            chunk: vec![0u8; 64 * 1024].into_boxed_slice(),
            msgid: 0,
        })
    }

    /// Reads more bytes into `rbuf` (through a fixed chunk: no zeroing of
    /// spare capacity per read).
    fn fill(&mut self) -> Result<()> {
        let n = self
            .stream
            .read(&mut self.chunk[..])
            .context("reading a reply")?;
        if n == 0 {
            bail!("the server closed the connection");
        }
        self.rbuf.extend_from_slice(&self.chunk[..n]);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.stream
            .write_all(&self.wbuf)
            .context("sending a request")?;
        self.wbuf.clear();
        Ok(())
    }

    fn bin_request(&mut self, opcode: u8, key: &[u8], extras: &[u8], value: &[u8]) {
        BinaryHeader {
            magic: REQUEST_MAGIC,
            opcode,
            key_len: key.len() as u16,
            extras_len: extras.len() as u8,
            data_type: 0,
            vbucket_or_status: 0,
            body_len: (extras.len() + key.len() + value.len()) as u32,
            opaque: 0,
            cas: 0,
        }
        .encode(&mut self.wbuf);
        self.wbuf.put_slice(extras);
        self.wbuf.put_slice(key);
        self.wbuf.put_slice(value);
    }

    fn rpc_head(&mut self, method: &str) {
        self.msgid = self.msgid.wrapping_add(1);
        let w = &mut (&mut self.wbuf).writer();
        // Writing into memory cannot fail.
        let _ = rmp::encode::write_array_len(w, 4);
        let _ = rmp::encode::write_uint(w, 0);
        let _ = rmp::encode::write_uint(w, u64::from(self.msgid));
        let _ = rmp::encode::write_str(w, method);
        let _ = rmp::encode::write_array_len(w, 1 + u32::from(method == "set"));
    }

    fn rpc_bin(&mut self, b: &[u8]) {
        let _ = rmp::encode::write_bin(&mut (&mut self.wbuf).writer(), b);
    }

    /// `_KEY`, a record key of a kt-msgpack bulk map.
    fn rpc_record_key(&mut self, key: &[u8]) {
        let _ = rmp::encode::write_bin_len(&mut (&mut self.wbuf).writer(), key.len() as u32 + 1);
        self.wbuf.put_u8(b'_');
        self.wbuf.put_slice(key);
    }

    /// Sends one batch of sets.
    fn send_set(&mut self, keys: &[u64], vals: &Values) -> Result<()> {
        let mut kb = [0u8; 20];
        let n = keys.len();
        match self.proto {
            Protocol::Binary => {
                let extras = [0u8; 8]; // flags, expiration
                for &k in keys {
                    let key = format_key(k, &mut kb);
                    let op = if n == 1 { OP_SET } else { OP_SETQ };
                    self.bin_request(op, key, &extras, vals.of(k));
                }
                if n > 1 {
                    self.bin_request(OP_NOOP, b"", b"", b"");
                }
            }
            Protocol::Text => {
                for (i, &k) in keys.iter().enumerate() {
                    let key = format_key(k, &mut kb);
                    let v = vals.of(k);
                    self.wbuf.put_slice(b"set ");
                    self.wbuf.put_slice(key);
                    self.wbuf.put_slice(b" 0 0 ");
                    self.wbuf.put_slice(v.len().to_string().as_bytes());
                    if i + 1 < n {
                        self.wbuf.put_slice(b" noreply");
                    }
                    self.wbuf.put_slice(b"\r\n");
                    self.wbuf.put_slice(v);
                    self.wbuf.put_slice(b"\r\n");
                }
            }
            Protocol::Rpc => {
                if n == 1 {
                    self.rpc_head("set");
                    let key = format_key(keys[0], &mut kb);
                    self.rpc_bin(key);
                    self.rpc_bin(vals.of(keys[0]));
                } else {
                    self.rpc_head("set_bulk");
                    let _ = rmp::encode::write_map_len(&mut (&mut self.wbuf).writer(), n as u32);
                    for &k in keys {
                        let key = format_key(k, &mut kb);
                        self.rpc_record_key(key);
                        self.rpc_bin(vals.of(k));
                    }
                }
            }
        }
        self.flush()
    }

    /// Sends one batch of gets.
    fn send_get(&mut self, keys: &[u64]) -> Result<()> {
        let mut kb = [0u8; 20];
        let n = keys.len();
        match self.proto {
            Protocol::Binary => {
                for &k in keys {
                    let key = format_key(k, &mut kb);
                    let op = if n == 1 { OP_GET } else { OP_GETKQ };
                    self.bin_request(op, key, b"", b"");
                }
                if n > 1 {
                    self.bin_request(OP_NOOP, b"", b"", b"");
                }
            }
            Protocol::Text => {
                self.wbuf.put_slice(b"get");
                for &k in keys {
                    self.wbuf.put_u8(b' ');
                    self.wbuf.put_slice(format_key(k, &mut kb));
                }
                self.wbuf.put_slice(b"\r\n");
            }
            Protocol::Rpc => {
                if n == 1 {
                    self.rpc_head("get");
                    let key = format_key(keys[0], &mut kb);
                    self.rpc_bin(key);
                } else {
                    self.rpc_head("get_bulk");
                    let _ = rmp::encode::write_map_len(&mut (&mut self.wbuf).writer(), n as u32);
                    for &k in keys {
                        let key = format_key(k, &mut kb);
                        self.rpc_record_key(key);
                        self.rpc_bin(b"");
                    }
                }
            }
        }
        self.flush()
    }

    /// Reads the reply to the batch just sent (`n` records).
    fn recv(&mut self, phase: Phase, n: usize) -> Result<Reply> {
        match self.proto {
            Protocol::Binary => self.recv_binary(phase, n),
            Protocol::Text => self.recv_text(phase),
            Protocol::Rpc => self.recv_rpc(phase, n),
        }
    }

    /// One binary response: (opcode, status, frame length), body skipped.
    fn bin_frame(&mut self) -> Result<(u8, u16)> {
        loop {
            if self.rbuf.len() >= HEADER_LEN {
                let Parse::Complete(h, _) = BinaryHeader::parse_response(&self.rbuf)
                    .map_err(|e| anyhow!("bad binary reply: {e}"))?
                else {
                    unreachable!("24 bytes are a whole header")
                };
                let len = usize::try_from(h.frame_len()).unwrap_or(usize::MAX);
                if self.rbuf.len() >= len {
                    self.rbuf.advance(len);
                    return Ok((h.opcode, h.vbucket_or_status));
                }
            }
            self.fill()?;
        }
    }

    fn recv_binary(&mut self, phase: Phase, n: usize) -> Result<Reply> {
        let mut r = Reply::default();
        if n == 1 {
            let (_, status) = self.bin_frame()?;
            match (phase, status) {
                (_, 0) => r.hits += 1,
                (Phase::Get, 1) => {}
                (_, s) => r.error(format!("binary status 0x{s:02x}")),
            }
            return Ok(r);
        }
        loop {
            let (op, status) = self.bin_frame()?;
            if op == OP_NOOP {
                return Ok(r);
            }
            match (phase, status) {
                (Phase::Get, 0) => r.hits += 1,
                (_, s) => r.error(format!("binary opcode 0x{op:02x} status 0x{s:02x}")),
            }
        }
    }

    /// One text line (without CRLF) removed from the buffer.
    fn line(&mut self) -> Result<BytesMut> {
        let mut from = 0;
        loop {
            if let Some(p) = self.rbuf[from..].iter().position(|&b| b == b'\n') {
                let mut l = self.rbuf.split_to(from + p + 1);
                l.truncate(from + p);
                if l.last() == Some(&b'\r') {
                    l.truncate(l.len() - 1);
                }
                return Ok(l);
            }
            from = self.rbuf.len();
            self.fill()?;
        }
    }

    fn recv_text(&mut self, phase: Phase) -> Result<Reply> {
        let mut r = Reply::default();
        loop {
            let l = self.line()?;
            match phase {
                Phase::Set => {
                    if &l[..] != b"STORED" {
                        r.error(String::from_utf8_lossy(&l).into_owned());
                    }
                    return Ok(r);
                }
                Phase::Get => {
                    if &l[..] == b"END" {
                        return Ok(r);
                    }
                    if let Some(rest) = l.strip_prefix(b"VALUE ") {
                        let bytes: usize = rest
                            .split(|&b| b == b' ')
                            .nth(2)
                            .and_then(|t| std::str::from_utf8(t).ok())
                            .and_then(|t| t.parse().ok())
                            .ok_or_else(|| {
                                anyhow!("bad VALUE line {:?}", String::from_utf8_lossy(&l))
                            })?;
                        while self.rbuf.len() < bytes + 2 {
                            self.fill()?;
                        }
                        self.rbuf.advance(bytes + 2);
                        r.hits += 1;
                    } else {
                        r.error(String::from_utf8_lossy(&l).into_owned());
                        return Ok(r);
                    }
                }
            }
        }
    }

    fn recv_rpc(&mut self, phase: Phase, n: usize) -> Result<Reply> {
        let limits = Limits::default();
        let len = loop {
            match frame_len(&self.rbuf, &limits).map_err(|e| anyhow!("bad RPC reply: {e}"))? {
                Parse::Complete((), len) => break len,
                Parse::Incomplete => self.fill()?,
            }
        };
        let frame = self.rbuf.split_to(len);
        let mut rd: &[u8] = &frame;
        let bad = |what: &str| anyhow!("bad RPC reply: {what}");
        let alen = rmp::decode::read_array_len(&mut rd).map_err(|_| bad("not an array"))?;
        let kind: u64 = rmp::decode::read_int(&mut rd).map_err(|_| bad("type"))?;
        let id: u32 = rmp::decode::read_int(&mut rd).map_err(|_| bad("msgid"))?;
        if alen != 4 || kind != 1 || id != self.msgid {
            bail!(
                "unexpected RPC reply (type {kind}, msgid {id}, expected {})",
                self.msgid
            );
        }
        let mut r = Reply::default();
        if rd.first() != Some(&0xc0) {
            let err = rmpv::decode::read_value(&mut rd).map_err(|_| bad("error"))?;
            // kt-msgpack's bare code (or an older `[code, message]`).
            let code = match &err {
                rmpv::Value::Array(a) => a.first().and_then(rmpv::Value::as_i64),
                v => v.as_i64(),
            };
            if phase == Phase::Get && n == 1 && code == Some(35) {
                return Ok(r); // a miss
            }
            r.error(format!("RPC error {err}"));
            return Ok(r);
        }
        rd = &rd[1..];
        match (phase, n) {
            (Phase::Get, 1) => r.hits += 1,
            // `{num, _key: value, ...}`: the entries past `num`.
            (Phase::Get, _) => {
                let len = rmp::decode::read_map_len(&mut rd).map_err(|_| bad("result"))?;
                r.hits += u64::from(len.saturating_sub(1))
            }
            (Phase::Set, _) => r.hits += n as u64,
        }
        Ok(r)
    }
}

/// Values: `size` bytes cut from a letter pattern at an offset per key.
struct Values {
    pattern: Vec<u8>,
    size: usize,
}

impl Values {
    fn new(size: usize) -> Self {
        let pattern = (0..size + 26).map(|i| b'a' + (i % 26) as u8).collect();
        Values { pattern, size }
    }

    fn of(&self, key: u64) -> &[u8] {
        let off = (key % 26) as usize;
        &self.pattern[off..off + self.size]
    }
}

fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds")
}

/// One thread: connects, then runs each phase between barriers.
#[allow(clippy::too_many_arguments)]
fn worker(
    a: &BenchArgs,
    addr: &str,
    t: usize,
    phases: &[Phase],
    start: &Barrier,
    done: &AtomicU64,
    finished: &AtomicUsize,
    stop: &AtomicBool,
    results: &Mutex<Vec<Vec<Result<ThreadResult>>>>,
) {
    let timeout = Duration::from_secs_f64(a.timeout.max(0.001));
    let mut conns: Result<Vec<Conn>> = (0..a.connections.max(1))
        .map(|_| Conn::open(addr, a.protocol, timeout))
        .collect();
    let vals = Values::new(a.size);
    let threads = a.threads.max(1) as u64;
    let multi = a.multi.max(1);
    for (pi, &phase) in phases.iter().enumerate() {
        start.wait();
        let res = match &mut conns {
            Err(e) => Err(anyhow!("{e:#}")),
            Ok(conns) => run_phase(a, t as u64, threads, multi, phase, conns, &vals, done, stop),
        };
        results.lock().unwrap_or_else(|e| e.into_inner())[pi].push(res);
        finished.fetch_add(1, Ordering::SeqCst);
    }
}

#[allow(clippy::too_many_arguments)]
fn run_phase(
    a: &BenchArgs,
    t: u64,
    threads: u64,
    multi: usize,
    phase: Phase,
    conns: &mut [Conn],
    vals: &Values,
    done: &AtomicU64,
    stop: &AtomicBool,
) -> Result<ThreadResult> {
    let mut rng = SplitMix(a.random_seed ^ (t + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let space = a
        .key_space
        .unwrap_or_else(|| a.iter.saturating_mul(threads))
        .max(1);
    let mut hist = new_hist();
    let (mut hits, mut errors, mut requests) = (0u64, 0u64, 0u64);
    let mut first_error = None;
    let mut next = 0u64;
    let mut batches: Vec<Vec<u64>> = vec![Vec::with_capacity(multi); conns.len()];
    let mut sent_at = vec![Instant::now(); conns.len()];
    let paced = (a.rate > 0.0).then(|| (Instant::now(), a.rate / threads as f64));
    while next < a.iter && !stop.load(Ordering::Relaxed) {
        if let Some((t0, per_thread)) = paced {
            // Record `next` is due `next / rate` after the start.
            let due = t0 + Duration::from_secs_f64(next as f64 / per_thread);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        let mut used = 0;
        for (ci, c) in conns.iter_mut().enumerate() {
            if next >= a.iter {
                break;
            }
            let n = (a.iter - next).min(multi as u64);
            let b = &mut batches[ci];
            b.clear();
            for i in next..next + n {
                b.push(if a.random_key {
                    rng.next() % space
                } else {
                    i * threads + t
                });
            }
            next += n;
            sent_at[ci] = Instant::now();
            match phase {
                Phase::Set => c.send_set(b, vals)?,
                Phase::Get => c.send_get(b)?,
            }
            used += 1;
        }
        for (ci, c) in conns.iter_mut().enumerate().take(used) {
            let n = batches[ci].len();
            let r = c.recv(phase, n)?;
            let us = sent_at[ci].elapsed().as_micros().max(1) as u64;
            hist.saturating_record(us);
            requests += 1;
            hits += r.hits;
            errors += r.errors;
            if first_error.is_none() {
                first_error = r.first_error;
            }
            done.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
    Ok(ThreadResult {
        hist,
        records: next,
        requests,
        hits,
        errors,
        first_error,
        end: Instant::now(),
    })
}

/// A phase's totals over every thread.
struct PhaseSummary {
    phase: Phase,
    records: u64,
    requests: u64,
    hits: u64,
    errors: u64,
    first_error: Option<String>,
    seconds: f64,
    hist: Histogram<u64>,
}

impl PhaseSummary {
    fn label(&self) -> &'static str {
        match self.phase {
            Phase::Set => "set",
            Phase::Get => "get",
        }
    }

    fn qps(&self) -> f64 {
        self.records as f64 / self.seconds.max(1e-9)
    }

    fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds.max(1e-9)
    }

    fn json(&self) -> serde_json::Value {
        let h = &self.hist;
        serde_json::json!({
            "phase": self.label(),
            "records": self.records,
            "requests": self.requests,
            "hits": self.hits,
            "misses": if self.phase == Phase::Get { self.records.saturating_sub(self.hits) } else { 0 },
            "errors": self.errors,
            "first_error": self.first_error,
            "seconds": self.seconds,
            "records_per_sec": self.qps(),
            "requests_per_sec": self.rps(),
            "latency_us": {
                "p50": h.value_at_quantile(0.50),
                "p99": h.value_at_quantile(0.99),
                "p999": h.value_at_quantile(0.999),
                "max": h.max(),
                "mean": h.mean(),
            },
        })
    }

    fn print(&self, multi: usize) {
        let h = &self.hist;
        let what = match self.phase {
            Phase::Set => "Setting",
            Phase::Get => "Getting",
        };
        let hits = match self.phase {
            Phase::Get => format!(
                " hits={} misses={}",
                self.hits,
                self.records.saturating_sub(self.hits)
            ),
            Phase::Set => String::new(),
        };
        println!(
            "{what} done: elapsed_time={:.6} num_records={} qps={:.0} requests={} rps={:.0}{hits} errors={}",
            self.seconds,
            self.records,
            self.qps(),
            self.requests,
            self.rps(),
            self.errors
        );
        println!(
            "  latency_us (per request of {multi} records): p50={} p99={} p99.9={} max={} mean={:.1}",
            h.value_at_quantile(0.50),
            h.value_at_quantile(0.99),
            h.value_at_quantile(0.999),
            h.max(),
            h.mean()
        );
    }
}

pub fn run(a: &BenchArgs) -> Result<()> {
    if a.iter == 0 || a.threads == 0 {
        bail!("--iter and --threads must be positive");
    }
    if a.protocol != Protocol::Rpc && a.size > 1 << 30 {
        bail!("--size too large");
    }
    let addr = rpc_client::address(a.address.as_deref());
    let phases: Vec<Phase> = match (a.set_only, a.get_only) {
        (true, _) => vec![Phase::Set],
        (_, true) => vec![Phase::Get],
        _ => vec![Phase::Set, Phase::Get],
    };
    let threads = a.threads;
    let multi = a.multi.max(1);
    if !a.json {
        println!(
            "Bench: address={addr} protocol={} threads={threads} connections={} iter={} multi={multi} size={} random_key={}",
            a.protocol.name(),
            a.connections.max(1),
            a.iter,
            a.size,
            a.random_key
        );
    }
    let start = Arc::new(Barrier::new(threads + 1));
    let done = Arc::new(AtomicU64::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let results: Arc<Mutex<Vec<Vec<Result<ThreadResult>>>>> =
        Arc::new(Mutex::new(phases.iter().map(|_| Vec::new()).collect()));
    let mut summaries = Vec::new();
    std::thread::scope(|s| -> Result<()> {
        for t in 0..threads {
            let (start, done, finished, stop, results, phases, addr) =
                (&start, &done, &finished, &stop, &results, &phases, &addr);
            s.spawn(move || worker(a, addr, t, phases, start, done, finished, stop, results));
        }
        for (pi, &phase) in phases.iter().enumerate() {
            let total = a.iter * threads as u64;
            let bar = progress::bar(
                total,
                match phase {
                    Phase::Set => "set",
                    Phase::Get => "get",
                },
            );
            done.store(0, Ordering::SeqCst);
            finished.store(0, Ordering::SeqCst);
            stop.store(false, Ordering::SeqCst);
            start.wait();
            let t0 = Instant::now();
            while finished.load(Ordering::SeqCst) < threads {
                bar.set_position(done.load(Ordering::Relaxed));
                let timed_out = a.duration > 0.0 && t0.elapsed().as_secs_f64() >= a.duration;
                let told = a.stop_file.as_ref().is_some_and(|f| f.exists());
                if timed_out || told {
                    stop.store(true, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let fallback_end = Instant::now();
            bar.finish_and_clear();
            let rs = std::mem::take(&mut results.lock().unwrap_or_else(|e| e.into_inner())[pi]);
            let mut sum = PhaseSummary {
                phase,
                records: 0,
                requests: 0,
                hits: 0,
                errors: 0,
                first_error: None,
                seconds: 0.0,
                hist: new_hist(),
            };
            let mut end = t0;
            let mut failure = None;
            for r in rs {
                match r {
                    Ok(r) => {
                        sum.records += r.records;
                        sum.requests += r.requests;
                        sum.hits += r.hits;
                        sum.errors += r.errors;
                        if sum.first_error.is_none() {
                            sum.first_error = r.first_error;
                        }
                        let _ = sum.hist.add(&r.hist);
                        end = end.max(r.end);
                    }
                    Err(e) => failure = Some(e),
                }
            }
            if let Some(e) = failure {
                // Let the other threads go on to their end.
                for _ in pi + 1..phases.len() {
                    start.wait();
                }
                return Err(e.context(format!("{} phase failed", sum.label())));
            }
            if end <= t0 {
                end = fallback_end;
            }
            sum.seconds = (end - t0).as_secs_f64();
            if !a.json {
                sum.print(multi);
            }
            summaries.push(sum);
        }
        Ok(())
    })?;
    if a.json {
        let j = serde_json::json!({
            "address": addr,
            "protocol": a.protocol.name(),
            "threads": threads,
            "connections": a.connections.max(1),
            "iter": a.iter,
            "multi": multi,
            "size": a.size,
            "random_key": a.random_key,
            "phases": summaries.iter().map(PhaseSummary::json).collect::<Vec<_>>(),
        });
        println!("{j}");
    }
    let errors: u64 = summaries.iter().map(|s| s.errors).sum();
    if errors > 0 {
        let first = summaries
            .iter()
            .find_map(|s| s.first_error.clone())
            .unwrap_or_default();
        bail!("{errors} request(s) failed; the first: {first}");
    }
    Ok(())
}
