//! The run: threads that each hold their connections through every phase,
//! batches of keys handed out and paced, and the main thread's watch over
//! each phase (progress, `--duration`, `--stop_file`).

use super::conn::{Conn, Values};
use super::load;
use super::options::{BenchArgs, Phase, Protocol};
use super::report::{self, new_hist, PhaseSummary, ThreadResult};
use crate::perf::SplitMix;
use crate::progress;
use crate::rpc_client;
use anyhow::{anyhow, bail, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// What the main thread and the workers share.
struct Shared {
    /// Every worker and the main thread meet here before each phase.
    start: Barrier,
    /// Records done in the current phase, for the progress bar.
    done: AtomicU64,
    /// Workers done with the current phase.
    finished: AtomicUsize,
    /// Set to end the current phase early.
    stop: AtomicBool,
    /// Per phase, each thread's result.
    results: Mutex<Vec<Vec<Result<ThreadResult>>>>,
}

/// One thread: connects, then runs each phase between barriers.
fn worker(a: &BenchArgs, addr: &str, t: usize, phases: &[Phase], sh: &Shared) {
    let timeout = Duration::from_secs_f64(a.timeout.max(0.001));
    let mut conns: Result<Vec<Conn>> = (0..a.connections.max(1))
        .map(|_| Conn::open(addr, a.protocol, timeout))
        .collect();
    let vals = Values::new(a.size);
    for (pi, &phase) in phases.iter().enumerate() {
        sh.start.wait();
        let res = match &mut conns {
            Err(e) => Err(anyhow!("{e:#}")),
            Ok(conns) => run_phase(a, t as u64, phase, conns, &vals, sh),
        };
        sh.results.lock().unwrap_or_else(|e| e.into_inner())[pi].push(res);
        sh.finished.fetch_add(1, Ordering::SeqCst);
    }
}

/// The keys of one thread: `i * threads + t` in turn, or random ones below
/// the key space.
struct Keys {
    t: u64,
    threads: u64,
    random: Option<(SplitMix, u64)>,
}

impl Keys {
    fn new(a: &BenchArgs, t: u64) -> Keys {
        let threads = a.threads.max(1) as u64;
        let rng = SplitMix(a.random_seed ^ (t + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
        let space = a
            .key_space
            .unwrap_or_else(|| a.iter.saturating_mul(threads))
            .max(1);
        Keys {
            t,
            threads,
            random: a.random_key.then_some((rng, space)),
        }
    }

    /// Fills `batch` with the keys of records `from..to`.
    fn batch(&mut self, from: u64, to: u64, batch: &mut Vec<u64>) {
        batch.clear();
        for i in from..to {
            batch.push(match &mut self.random {
                Some((rng, space)) => rng.next() % *space,
                None => i * self.threads + self.t,
            });
        }
    }
}

/// Sleeps until record `next` is due: `next / rate` after the start, the
/// rate being `--rate` shared by every thread. No-op without `--rate`.
fn pace(paced: Option<(Instant, f64)>, next: u64) {
    if let Some((t0, per_thread)) = paced {
        let due = t0 + Duration::from_secs_f64(next as f64 / per_thread);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// One thread's phase: a batch sent on each connection, then each reply read
/// and timed, until `--iter` records are done or the phase is stopped.
fn run_phase(
    a: &BenchArgs,
    t: u64,
    phase: Phase,
    conns: &mut [Conn],
    vals: &Values,
    sh: &Shared,
) -> Result<ThreadResult> {
    let threads = a.threads.max(1) as u64;
    let multi = a.multi.max(1);
    let mut keys = Keys::new(a, t);
    let mut r = ThreadResult {
        hist: new_hist(),
        records: 0,
        requests: 0,
        hits: 0,
        errors: 0,
        first_error: None,
        end: Instant::now(),
    };
    let mut next = 0u64;
    let mut batches: Vec<Vec<u64>> = vec![Vec::with_capacity(multi); conns.len()];
    let mut sent_at = vec![Instant::now(); conns.len()];
    let paced = (a.rate > 0.0).then(|| (Instant::now(), a.rate / threads as f64));
    while next < a.iter && !sh.stop.load(Ordering::Relaxed) {
        pace(paced, next);
        let mut used = 0;
        for (ci, c) in conns.iter_mut().enumerate() {
            if next >= a.iter {
                break;
            }
            let n = (a.iter - next).min(multi as u64);
            let b = &mut batches[ci];
            keys.batch(next, next + n, b);
            next += n;
            sent_at[ci] = Instant::now();
            load::send(c, phase, b, vals)?;
            used += 1;
        }
        for (ci, c) in conns.iter_mut().enumerate().take(used) {
            let n = batches[ci].len();
            let reply = load::recv(c, phase, n)?;
            let us = sent_at[ci].elapsed().as_micros().max(1) as u64;
            r.hist.saturating_record(us);
            r.requests += 1;
            r.hits += reply.hits;
            r.errors += reply.errors;
            if r.first_error.is_none() {
                r.first_error = reply.first_error;
            }
            sh.done.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
    r.records = next;
    r.end = Instant::now();
    Ok(r)
}

/// The main thread's part of a phase: starts it, shows the progress, stops
/// it on `--duration` or `--stop_file`, and adds up what the threads did.
fn watch_phase(a: &BenchArgs, pi: usize, phase: Phase, sh: &Shared) -> Result<PhaseSummary> {
    let threads = a.threads;
    let bar = progress::bar(a.iter * threads as u64, phase.label());
    sh.done.store(0, Ordering::SeqCst);
    sh.finished.store(0, Ordering::SeqCst);
    sh.stop.store(false, Ordering::SeqCst);
    sh.start.wait();
    let t0 = Instant::now();
    while sh.finished.load(Ordering::SeqCst) < threads {
        bar.set_position(sh.done.load(Ordering::Relaxed));
        let timed_out = a.duration > 0.0 && t0.elapsed().as_secs_f64() >= a.duration;
        let told = a.stop_file.as_ref().is_some_and(|f| f.exists());
        if timed_out || told {
            sh.stop.store(true, Ordering::SeqCst);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let fallback_end = Instant::now();
    bar.finish_and_clear();
    let rs = std::mem::take(&mut sh.results.lock().unwrap_or_else(|e| e.into_inner())[pi]);
    PhaseSummary::total(phase, rs, t0, fallback_end)
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
        report::print_header(a, &addr, multi);
    }
    let sh = Shared {
        start: Barrier::new(threads + 1),
        done: AtomicU64::new(0),
        finished: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        results: Mutex::new(phases.iter().map(|_| Vec::new()).collect()),
    };
    let mut summaries = Vec::new();
    std::thread::scope(|s| -> Result<()> {
        for t in 0..threads {
            let (sh, phases, addr) = (&sh, &phases, &addr);
            s.spawn(move || worker(a, addr, t, phases, sh));
        }
        for (pi, &phase) in phases.iter().enumerate() {
            let sum = match watch_phase(a, pi, phase, &sh) {
                Ok(sum) => sum,
                Err(e) => {
                    // Let the other threads go on to their end.
                    for _ in pi + 1..phases.len() {
                        sh.start.wait();
                    }
                    return Err(e);
                }
            };
            if !a.json {
                sum.print(multi);
            }
            summaries.push(sum);
        }
        Ok(())
    })?;
    report::finish(a, &addr, multi, &summaries)
}
