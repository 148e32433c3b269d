//! `memstore remote perf sequence`: `tkrzw_dbm_remote_perf sequence` for
//! memstored, with its flags, so the sharding article's
//! `tkrzw_dbm_remote_perf sequence --set_only --multi 100 --threads 4
//! --iter N` runs with only the program name changed and stores the same
//! records, value for value, as tkrzw-rpc 0.9.10's tool.
//!
//! As 0.9.10 does it (tkrzw_dbm_remote_perf.cc): the database is cleared
//! first, whatever the phases (so `--get_only` alone finds nothing, as
//! there). Phases (all five unless some `--*_only` flags pick): echoing,
//! setting, getting, iterating, removing. Thread `t` of `T` does `--iter`
//! operations on keys `i * T + t` written `%08d` (or random keys below
//! `iter * T`, from `std::mt19937` seeded `random_seed + t` and libstdc++'s
//! `uniform_int_distribution`, so the same keys as Tkrzw's). With `--multi
//! N`, operation `i` with `i % N == 0` does a batch of `N` keys `i..i+N`
//! (the last batch runs past `--iter` when `N` does not divide it, as
//! Tkrzw's does). The value of operation `j` of thread `t` is `--size`
//! bytes (`--random_value`: 0 to `--size`, drawn from an mt19937 seeded
//! `2 * random_seed + t + 1`) of Tkrzw's pattern, byte `k` being
//! `'a' + (t + k) % (k odd ? 26 : 8)`, starting at
//! `(uint32_t)(j * (j + 1)) % 2039` (32-bit arithmetic: it wraps for
//! `j >= 65536`).
//!
//! Over MessagePack-RPC (the default), a batch is `N` pipelined calls in one
//! write, answered in one round trip (`echo` of the keys joined by `:`,
//! `set`, `get`, `remove`: procedures whose shapes are the same in
//! memstored's and kt-msgpack's conventions); iterating is `Jump(key)` +
//! `Get`: `list({move: jump, jump_key, items: 1})`; `--stream` is accepted
//! (every call already streams on the thread's connection); with
//! `--ignore_result`, sets and removes are sent as notifications, and the
//! phase ends with a `ping` round trip. Over gRPC (`--protocol grpc`) the
//! calls are Tkrzw's own: `Echo`, `Set`/`SetMulti`, `Get`/`GetMulti`,
//! `Remove`/`RemoveMulti` (one call per batch), `Iterate` (jump + get, a
//! new stream every 100 operations), `Count`, `Clear`; with `--stream`,
//! the `Stream` call (a new one every 100 operations; `--ignore_result`:
//! sets and removes with `omit_response`).
//!
//! Output is Tkrzw's lines (`Setting: ...`, `Setting done: elapsed_time=...
//! num_records=... qps=... mem=...`); a progress bar replaces Tkrzw's dots
//! on stderr when it is a terminal.

use crate::perf::{format_key, rss};
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
pub enum Phase {
    Echo,
    Set,
    Get,
    Iter,
    Remove,
}

impl Phase {
    /// Tkrzw's label, and the failing call's name in its messages (one
    /// call, a batch).
    fn labels(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Phase::Echo => ("Echoing", "Echo", "Echo"),
            Phase::Set => ("Setting", "Set", "SetMulti"),
            Phase::Get => ("Getting", "Get", "GetMulti"),
            Phase::Iter => ("Iterating", "Jump", "Jump"),
            Phase::Remove => ("Removing", "Remove", "RemoveMulti"),
        }
    }
}

/// Bytes past `--size` in the value pattern, as tkrzw-rpc 0.9.10's
/// `value_extra`.
const VALUE_EXTRA: u32 = 2039;

/// Thread `id`'s value buffer: `size + 2039` bytes of Tkrzw's pattern.
pub fn value_pattern(id: u64, size: usize) -> Vec<u8> {
    (0..size + VALUE_EXTRA as usize)
        .map(|k| b'a' + ((id as usize + k) % if k % 2 == 1 { 26 } else { 8 }) as u8)
        .collect()
}

/// Where operation `j`'s value starts in the pattern:
/// `static_cast<uint32_t>(j * (j + 1U)) % 2039`, in 32-bit arithmetic.
pub fn value_offset(j: u64) -> usize {
    let j = j as u32;
    (j.wrapping_mul(j.wrapping_add(1)) % VALUE_EXTRA) as usize
}

/// `std::mt19937`.
pub struct Mt19937 {
    mt: [u32; 624],
    i: usize,
}

impl Mt19937 {
    pub fn new(seed: u32) -> Self {
        let mut mt = [0u32; 624];
        mt[0] = seed;
        for i in 1..624 {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { mt, i: 624 }
    }

    pub fn next_u32(&mut self) -> u32 {
        if self.i >= 624 {
            for k in 0..624 {
                let y = (self.mt[k] & 0x8000_0000) | (self.mt[(k + 1) % 624] & 0x7fff_ffff);
                let mag = if y & 1 == 1 { 0x9908_b0df } else { 0 };
                self.mt[k] = self.mt[(k + 397) % 624] ^ (y >> 1) ^ mag;
            }
            self.i = 0;
        }
        let mut y = self.mt[self.i];
        self.i += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// libstdc++'s `uniform_int_distribution<int32_t>(0, hi)(*this)` (GCC
    /// 11 and later: Lemire's method on a 64-bit product).
    pub fn uniform(&mut self, hi: u32) -> u32 {
        if hi == u32::MAX {
            return self.next_u32();
        }
        let range = hi + 1;
        let mut product = u64::from(self.next_u32()) * u64::from(range);
        let mut low = product as u32;
        if low < range {
            let threshold = range.wrapping_neg() % range;
            while low < threshold {
                product = u64::from(self.next_u32()) * u64::from(range);
                low = product as u32;
            }
        }
        (product >> 32) as u32
    }
}

/// The calls of one batch: their keys and values.
pub struct Batch {
    pub keys: Vec<Vec<u8>>,
    pub values: Vec<Vec<u8>>,
}

/// One thread's connection to the server, over either wire.
pub trait PerfConn: Send {
    /// Runs `phase` on a batch: one result per call made (one for all of
    /// them when `multi`, Tkrzw's `xxxMulti` call).
    fn batch(
        &mut self,
        phase: Phase,
        b: &Batch,
        multi: bool,
        a: &SequenceArgs,
    ) -> Result<Vec<std::result::Result<(), RemoteError>>>;
    /// After a phase's last batch (a round trip when results were ignored).
    fn finish(&mut self, a: &SequenceArgs) -> Result<()>;
    fn count(&mut self) -> Result<u64>;
    fn clear(&mut self) -> Result<std::result::Result<(), RemoteError>>;
}

fn bin(b: &[u8]) -> Value {
    Value::Binary(b.to_vec())
}

/// The MessagePack-RPC call for one operation of a phase.
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

impl PerfConn for RpcClient {
    fn batch(
        &mut self,
        phase: Phase,
        b: &Batch,
        multi: bool,
        a: &SequenceArgs,
    ) -> Result<Vec<std::result::Result<(), RemoteError>>> {
        let calls: Vec<_> = if phase == Phase::Echo && multi {
            // Tkrzw echoes a batch's keys joined by ':' in one call.
            vec![call_for(phase, a, &b.keys.join(&b':'), &[])]
        } else {
            b.keys
                .iter()
                .zip(&b.values)
                .map(|(k, v)| call_for(phase, a, k, v))
                .collect()
        };
        Ok(self
            .call_batch(&calls)?
            .into_iter()
            .map(|r| r.map(drop))
            .collect())
    }

    fn finish(&mut self, a: &SequenceArgs) -> Result<()> {
        if a.ignore_result {
            // Notifications are answered by nothing: a round trip after them
            // means the server has read them.
            self.call("ping", &[])?.map_err(|e| anyhow!("ping: {e}"))?;
        }
        Ok(())
    }

    fn count(&mut self) -> Result<u64> {
        let n = self
            .call("count", &[])?
            .map_err(|e| anyhow!("count: {e}"))?;
        Ok(n.as_u64().unwrap_or(0))
    }

    fn clear(&mut self) -> Result<std::result::Result<(), RemoteError>> {
        Ok(self.call("clear", &[])?.map(drop))
    }
}

/// Whether a failed call fails the run, as in Tkrzw: a missing record is
/// expected when removing, and when getting or iterating keys drawn from a
/// seed of the clock (some were never set).
fn tolerated(phase: Phase, a: &SequenceArgs, e: &RemoteError) -> bool {
    e.code == Some(crate::rpc_client::NOT_FOUND)
        && (phase == Phase::Remove
            || (a.random_key && a.random_seed < 0 && matches!(phase, Phase::Get | Phase::Iter)))
}

/// The 32-bit seed Tkrzw's threads start from (`--random_seed`, or the clock's).
fn mt_seed(a: &SequenceArgs) -> u32 {
    if a.random_seed >= 0 {
        a.random_seed as u32
    } else {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u32)
    }
}

/// The record generator of one thread of one phase, as Tkrzw's task: keys
/// and values of operations `j`, drawing random keys and sizes in its order.
pub struct Records {
    id: u64,
    threads: u64,
    size: usize,
    random_key: bool,
    random_value: bool,
    key_hi: u32,
    keys: Mt19937,
    sizes: Mt19937,
    pattern: Vec<u8>,
}

impl Records {
    pub fn new(a: &SequenceArgs, id: u64, seed: u32) -> Self {
        // `uniform_int_distribution<int32_t>(0, num_iterations * num_threads - 1)`.
        let key_hi = ((a.iter * a.threads).clamp(1, 1 << 31) - 1) as u32;
        Records {
            id,
            threads: a.threads,
            size: a.size,
            random_key: a.random_key,
            random_value: a.random_value,
            key_hi,
            keys: Mt19937::new(seed.wrapping_add(id as u32)),
            sizes: Mt19937::new(seed.wrapping_mul(2).wrapping_add(id as u32).wrapping_add(1)),
            pattern: value_pattern(id, a.size),
        }
    }

    /// Operation `j`'s key (`%08d`).
    pub fn key(&mut self, j: u64) -> Vec<u8> {
        let num = if self.random_key {
            u64::from(self.keys.uniform(self.key_hi))
        } else {
            j * self.threads + self.id
        };
        format_key(num, &mut [0u8; 20]).to_vec()
    }

    /// Operation `j`'s value.
    pub fn value(&mut self, j: u64) -> &[u8] {
        let len = if self.random_value {
            self.sizes.uniform(self.size as u32) as usize
        } else {
            self.size
        };
        let off = value_offset(j);
        &self.pattern[off..off + len]
    }
}

/// One thread's work in one phase; returns the first failure.
fn run_thread(
    phase: Phase,
    a: &SequenceArgs,
    id: u64,
    c: &mut dyn PerfConn,
    stop: &AtomicBool,
    bar: &indicatif::ProgressBar,
) -> Result<()> {
    let mut recs = Records::new(a, id, mt_seed(a));
    // Tkrzw batches with --multi unless streaming, and never iterations.
    let multi = a.multi > 0 && !a.stream && phase != Phase::Iter;
    let batch = if multi { a.multi } else { 1 };
    let mut b = Batch {
        keys: Vec::with_capacity(batch as usize),
        values: Vec::with_capacity(batch as usize),
    };
    let mut i = 0;
    while i < a.iter && !stop.load(Ordering::Relaxed) {
        b.keys.clear();
        b.values.clear();
        // Tkrzw's batch is `i..i + N` even past --iter.
        for j in i..i + batch {
            b.keys.push(recs.key(j));
            if phase == Phase::Set {
                let v = recs.value(j).to_vec();
                b.values.push(v);
            } else {
                b.values.push(Vec::new());
            }
        }
        for r in c.batch(phase, &b, multi, a)? {
            if let Err(e) = r {
                if !tolerated(phase, a, &e) {
                    let (_, one, many) = phase.labels();
                    bail!("{} failed: {e}", if multi { many } else { one });
                }
            }
        }
        let n = batch.min(a.iter - i);
        i += n;
        bar.inc(n);
    }
    c.finish(a)
}

fn run_phase(
    phase: Phase,
    a: &SequenceArgs,
    conns: &mut [Box<dyn PerfConn>],
    start_rss: i64,
) -> Result<()> {
    let (label, _, _) = phase.labels();
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
                    let r = run_thread(phase, a, id as u64, c.as_mut(), stop, bar);
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
    let count = first.count()?;
    println!(
        "{label} done: elapsed_time={elapsed:.6} num_records={count} qps={:.0} mem={}",
        (a.iter * a.threads) as f64 / elapsed.max(1e-9),
        rss() - start_rss
    );
    println!();
    results.into_iter().collect()
}

/// Runs the phases the flags pick, Tkrzw's way, on one connection per
/// thread made by `connect`.
pub fn sequence_with(
    a: &SequenceArgs,
    connect: &dyn Fn() -> Result<Box<dyn PerfConn>>,
) -> Result<()> {
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
        .map(|_| connect())
        .collect::<Result<Vec<_>>>()?;
    // tkrzw-rpc 0.9.10 clears the database before any phase, and goes on
    // (failing at the end) when that fails.
    let mut cleared = Ok(());
    if let Err(e) = conns[0].clear()? {
        eprintln!("Clear failed: {e}");
        cleared = Err(anyhow!("Clear failed: {e}"));
    }
    for (on, phase) in picked {
        if on || all {
            run_phase(phase, a, &mut conns, start_rss)?;
        }
    }
    cleared
}

/// Runs the phases over MessagePack-RPC.
pub fn sequence(a: &SequenceArgs, target: &Target) -> Result<()> {
    sequence_with(a, &|| Ok(Box::new(target.connect()?) as Box<dyn PerfConn>))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(threads: u64, iter: u64) -> SequenceArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct P {
            #[command(flatten)]
            a: SequenceArgs,
        }
        let (t, n) = (threads.to_string(), iter.to_string());
        P::parse_from(["p", "--threads", &t, "--iter", &n]).a
    }

    /// Seed 002: after `tkrzw_dbm_remote_perf sequence --set_only --multi
    /// 100 --threads 4 --iter 25000000`, `tkrzw_dbm_remote_util list --move
    /// jumplowerinc --jump_key 00000100 --items 20` prints these (measured
    /// with the real tools). Key `k` is operation `k / 4` of thread `k % 4`.
    #[test]
    fn seed_002_listing_values() {
        let want = [
            "cbedgfah", "dcfehgbi", "edgfahcj", "fehgbidk", "gbadcfeh", "hcbedgfi", "adcfehgj",
            "bedgfihk", "edgfahcj", "fehgbidk", "gfahcjel", "hgbidkfm", "ehgjalcn", "fihkbmdo",
            "gjalcnep", "hkbmdofq", "gnapcret", "hobqdsfu", "apcretgv", "bqdsfuhw",
        ];
        let a = args(4, 25_000_000);
        let mut gens: Vec<Records> = (0..4).map(|id| Records::new(&a, id, 0)).collect();
        for (k, want) in (100u64..120).zip(want) {
            let (id, j) = (k % 4, k / 4);
            let g = &mut gens[id as usize];
            assert_eq!(g.key(j), format!("{k:08}").into_bytes());
            assert_eq!(
                String::from_utf8_lossy(g.value(j)),
                want,
                "key {k:08} (thread {id}, operation {j})"
            );
        }
    }

    /// `(uint32_t)(j * (j + 1U)) % 2039`: 32-bit, wrapping from j = 65536.
    #[test]
    fn value_offset_wraps_in_32_bits() {
        assert_eq!(value_offset(25), 650);
        assert_eq!(value_offset(65_535), (65_535u64 * 65_536 % 2039) as usize);
        // 65536 * 65537 = 2^32 + 65536, which wraps to 65536.
        assert_eq!(value_offset(65_536), 65_536 % 2039);
        assert_ne!(value_offset(65_536), (65_536u64 * 65_537 % 2039) as usize);
        assert_eq!(value_offset(24_999_999), {
            let j = 24_999_999u32;
            (j.wrapping_mul(j + 1) % 2039) as usize
        });
    }

    /// Values past the 32-bit wrap, as Tkrzw's code computes them (compiled
    /// with g++ 12: thread, operation, value).
    #[test]
    fn values_past_the_wrap_as_tkrzw() {
        let a = args(4, 25_000_000);
        for (id, j, want) in [
            (0, 65_535, "afchejgl"),
            (0, 65_536, "adcfehgj"),
            (0, 70_000, "ezgbadcf"),
            (0, 24_999_999, "gfahcjel"),
            (3, 65_535, "difkhmbo"),
            (3, 65_536, "dgfihkbm"),
            (3, 70_000, "hcbedgfi"),
            (3, 24_999_999, "bidkfmho"),
        ] {
            let mut g = Records::new(&a, id, 0);
            assert_eq!(String::from_utf8_lossy(g.value(j)), want, "{id} {j}");
        }
    }

    /// std::mt19937's 10000th output for the default seed 5489 is
    /// 4123659995 (the C++ standard's check); its first is 3499211612.
    #[test]
    fn mt19937_matches_the_standard() {
        let mut m = Mt19937::new(5489);
        assert_eq!(m.next_u32(), 3_499_211_612);
        for _ in 1..9999 {
            m.next_u32();
        }
        assert_eq!(m.next_u32(), 4_123_659_995);
    }

    /// What g++ 12's libstdc++ draws for Tkrzw's perf (seed 0, thread 1 of
    /// 2, `--iter 1000 --size 8`): `key_num_dist(key_mt)` and
    /// `value_size_dist(misc_mt)`, and a range near 2^31.
    #[test]
    fn draws_as_libstdcxx() {
        let a = args(2, 1000);
        let mut r = Records::new(&a, 1, 0);
        let keys: Vec<u32> = (0..8).map(|_| r.keys.uniform(r.key_hi)).collect();
        assert_eq!(keys, [834, 1994, 1440, 1865, 0, 256, 604, 1998]);
        let sizes: Vec<u32> = (0..8).map(|_| r.sizes.uniform(8)).collect();
        assert_eq!(sizes, [3, 1, 0, 8, 4, 8, 3, 4]);
        let mut big = Mt19937::new(12345);
        let v: Vec<u32> = (0..4).map(|_| big.uniform(2_147_483_646)).collect();
        assert_eq!(v, [1_996_335_344, 1_911_592_689, 679_411_342, 280_691_776]);
    }

    #[test]
    fn uniform_stays_in_range() {
        let mut m = Mt19937::new(1);
        for hi in [0u32, 1, 7, 8, 99, 1 << 20] {
            for _ in 0..1000 {
                assert!(m.uniform(hi) <= hi);
            }
        }
        assert_eq!(Mt19937::new(3).uniform(0), 0);
    }
}
