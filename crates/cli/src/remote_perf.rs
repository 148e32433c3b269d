//! `memstore remote perf sequence`: `tkrzw_dbm_remote_perf sequence` for
//! memstored, with its flags, over MessagePack-RPC, so the sharding
//! article's `tkrzw_dbm_remote_perf sequence --set_only --multi 100
//! --threads 4 --iter N` runs with only the program name changed.
//!
//! Phases (all five unless some `--*_only` flags pick): echoing, setting,
//! getting, iterating, removing. Thread `t` of `T` does `--iter` operations
//! on keys `i * T + t` written `%08d` (or random keys below `iter * T`);
//! values are `--size` bytes (`--random_value`: up to `--size`) cut from
//! Tkrzw's letter pattern. Each thread has its own connection (so
//! `--separate` changes nothing). With `--multi N`, N operations go as one
//! batch: N pipelined calls in one write, answered in one round trip
//! (`echo`, `set`, `get`, `remove`; procedures whose shapes are the same in
//! memstored's and kt-msgpack's conventions). Iterating is Tkrzw's
//! `Jump(key)` + `Get`: `list({move: jump, jump_key, items: 1})`.
//! `--stream` is accepted (every call already streams on the thread's
//! connection); with `--ignore_result`, sets and removes are sent as
//! notifications, unanswered, and the phase ends with a `ping` round trip.
//!
//! Output is Tkrzw's lines (`Setting: ...`, `Setting done: elapsed_time=...
//! num_records=... qps=... mem=...`); a progress bar replaces Tkrzw's dots
//! on stderr when it is a terminal.

use crate::perf::{format_key, rss, SplitMix};
use crate::progress;
use crate::rpc_client::{RemoteError, RpcClient};
use anyhow::{anyhow, bail, Result};
use clap::Args;
use memstored_protocol::rpc::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Args, Debug, Clone)]
pub struct SequenceArgs {
    /// Iterations per thread.
    #[arg(long, default_value_t = 10000)]
    pub iter: u64,
    /// Size of each record value.
    #[arg(long, default_value_t = 8)]
    pub size: usize,
    /// Client threads, each with its own connection.
    #[arg(long, default_value_t = 1)]
    pub threads: u64,
    /// Accepted: every thread has its own connection anyway.
    #[arg(long)]
    pub separate: bool,
    /// The random seed (negative: from the clock).
    #[arg(
        long = "random_seed",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub random_seed: i64,
    /// Random keys rather than sequential ones.
    #[arg(long = "random_key")]
    pub random_key: bool,
    /// Values of random length up to --size rather than fixed ones.
    #[arg(long = "random_value")]
    pub random_value: bool,
    #[arg(long = "echo_only")]
    pub echo_only: bool,
    #[arg(long = "set_only")]
    pub set_only: bool,
    #[arg(long = "get_only")]
    pub get_only: bool,
    #[arg(long = "iter_only")]
    pub iter_only: bool,
    #[arg(long = "remove_only")]
    pub remove_only: bool,
    /// Accepted: calls stream on each thread's connection already.
    #[arg(long)]
    pub stream: bool,
    /// Sends sets and removes as notifications, without waiting for results.
    #[arg(long = "ignore_result")]
    pub ignore_result: bool,
    /// Operations per batch (one round trip); 0 = one call per round trip.
    #[arg(long, default_value_t = 0)]
    pub multi: u64,
}

/// How to reach the server: the `memstore remote` common flags.
pub struct Target {
    pub address: String,
    pub timeout: Option<Duration>,
    pub auth: Option<String>,
    /// `--index`: the server's database to use.
    pub index: u32,
}

impl Target {
    fn connect(&self) -> Result<RpcClient> {
        let mut c = RpcClient::connect(&self.address, self.timeout)?;
        if let Some(a) = &self.auth {
            c.auth(a)?;
        }
        c.set_db(self.index);
        Ok(c)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Echo,
    Set,
    Get,
    Iter,
    Remove,
}

impl Phase {
    /// Tkrzw's label and the failing call's name in messages.
    fn labels(self) -> (&'static str, &'static str) {
        match self {
            Phase::Echo => ("Echoing", "Echo"),
            Phase::Set => ("Setting", "Set"),
            Phase::Get => ("Getting", "Get"),
            Phase::Iter => ("Iterating", "Jump"),
            Phase::Remove => ("Removing", "Remove"),
        }
    }
}

/// Bytes past `--size` in the value pattern, as Tkrzw's remote perf.
const VALUE_EXTRA: usize = 251;

fn bin(b: &[u8]) -> Value {
    Value::Binary(b.to_vec())
}

/// The call for operation `i` of a phase on `key`.
fn call_for(
    phase: Phase,
    a: &SequenceArgs,
    key: &[u8],
    value: &[u8],
) -> (&'static str, Vec<Value>, bool) {
    let reply = !a.ignore_result;
    match phase {
        Phase::Echo => (
            "echo",
            vec![Value::Map(vec![(Value::from("key"), bin(key))])],
            true,
        ),
        Phase::Set => ("set", vec![bin(key), bin(value)], reply),
        Phase::Get => ("get", vec![bin(key)], true),
        Phase::Iter => (
            "list",
            vec![Value::Map(vec![
                (Value::from("move"), Value::from("jump")),
                (Value::from("jump_key"), bin(key)),
                (Value::from("items"), Value::from(1u64)),
            ])],
            true,
        ),
        Phase::Remove => ("remove", vec![bin(key)], reply),
    }
}

/// Whether a failed call fails the run: a missing record is expected when
/// removing, and when getting random keys (some were never set).
fn tolerated(phase: Phase, a: &SequenceArgs, e: &RemoteError) -> bool {
    e.code == Some(35) && (phase == Phase::Remove || (a.random_key && phase != Phase::Set))
}

/// One thread's work in one phase; returns the first failure.
fn run_thread(
    phase: Phase,
    a: &SequenceArgs,
    id: u64,
    c: &mut RpcClient,
    stop: &AtomicBool,
    bar: &indicatif::ProgressBar,
) -> Result<()> {
    let total = a.iter * a.threads;
    let pattern: Vec<u8> = (0..a.size + VALUE_EXTRA)
        .map(|i| b'a' + ((id as usize + i) % if i % 2 == 1 { 26 } else { 8 }) as u8)
        .collect();
    let seed = match a.random_seed {
        n if n < 0 => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
        n => n as u64,
    };
    let mut keys = SplitMix(seed.wrapping_add(id));
    let mut sizes = SplitMix(seed.wrapping_mul(2).wrapping_add(id + 1));
    let batch = a.multi.max(1);
    let mut kbuf = [0u8; 20];
    let mut calls = Vec::with_capacity(batch as usize);
    let mut i = 0;
    while i < a.iter && !stop.load(Ordering::Relaxed) {
        calls.clear();
        for j in i..(i + batch).min(a.iter) {
            let num = if a.random_key {
                keys.next() % total
            } else {
                j * a.threads + id
            };
            let len = if a.random_value {
                (sizes.next() % (a.size as u64 + 1)) as usize
            } else {
                a.size
            };
            let off = (j as usize).wrapping_mul(j as usize + 1) % VALUE_EXTRA;
            calls.push(call_for(
                phase,
                a,
                format_key(num, &mut kbuf),
                &pattern[off..off + len],
            ));
        }
        let n = calls.len() as u64;
        for r in c.call_batch(&calls)? {
            if let Err(e) = r {
                if !tolerated(phase, a, &e) {
                    bail!("{} failed: {e}", phase.labels().1);
                }
            }
        }
        i += n;
        bar.inc(n);
    }
    if a.ignore_result {
        // Notifications are answered by nothing: a round trip after them
        // means the server has read them.
        c.call("ping", &[])?.map_err(|e| anyhow!("ping: {e}"))?;
    }
    Ok(())
}

fn run_phase(
    phase: Phase,
    a: &SequenceArgs,
    conns: &mut [RpcClient],
    start_rss: i64,
) -> Result<()> {
    let (label, _) = phase.labels();
    println!(
        "{label}: num_iterations={} value_size={} num_threads={}",
        a.iter, a.size, a.threads
    );
    let bar = progress::bar(a.iter * a.threads, label);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = conns
            .iter_mut()
            .enumerate()
            .map(|(id, c)| {
                let (bar, stop) = (&bar, &stop);
                s.spawn(move || {
                    let r = run_thread(phase, a, id as u64, c, stop, bar);
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a client thread panicked")))
            })
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let first = conns.first_mut().ok_or_else(|| anyhow!("no connection"))?;
    let count = first
        .call("count", &[])?
        .map_err(|e| anyhow!("count: {e}"))?;
    println!(
        "{label} done: elapsed_time={elapsed:.6} num_records={} qps={:.0} mem={}",
        count.as_u64().unwrap_or(0),
        (a.iter * a.threads) as f64 / elapsed.max(1e-9),
        rss() - start_rss
    );
    println!();
    results.into_iter().collect()
}

/// Runs the phases the flags pick, Tkrzw's way.
pub fn sequence(a: &SequenceArgs, target: &Target) -> Result<()> {
    for (what, n) in [
        ("--iter", a.iter),
        ("--threads", a.threads),
        ("--size", a.size as u64),
    ] {
        if n == 0 {
            bail!("{what} must be at least 1");
        }
    }
    let start_rss = rss();
    let picked = [
        (a.echo_only, Phase::Echo),
        (a.set_only, Phase::Set),
        (a.get_only, Phase::Get),
        (a.iter_only, Phase::Iter),
        (a.remove_only, Phase::Remove),
    ];
    let all = !picked.iter().any(|(on, _)| *on);
    let mut conns = (0..a.threads)
        .map(|_| target.connect())
        .collect::<Result<Vec<_>>>()?;
    for (on, phase) in picked {
        if on || all {
            run_phase(phase, a, &mut conns, start_rss)?;
        }
    }
    Ok(())
}
