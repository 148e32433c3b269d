//! `memstore perf sequence`: the workload of `tkrzw_dbm_perf sequence`, on
//! memstored's engines, printing Tkrzw's lines so results compare directly.
//!
//! Thread `t` of `T` does `--iter` operations on keys `i * T + t` (or random
//! keys below `iter * T`), formatted as `%08d`; values are `--size` bytes cut
//! from a fixed pattern buffer, as Tkrzw does. Keys are built in a stack
//! buffer: the hot loop allocates nothing of its own.

use crate::progress;
use anyhow::{bail, Context, Result};
use clap::Args;
use memstored_engine::{db::shard_path, hint::hint_path, Db, DbName, EngineKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

#[derive(Args, Debug, Clone)]
pub struct SequenceArgs {
    /// hash, tree, tiny|mem|stdhash|cache (in-memory hash `*`), baby|memtree|stdtree
    /// (in-memory ordered `+`), memfile (`.tkmt`), or auto (from --path).
    #[arg(long, default_value = "auto")]
    pub dbm: String,
    /// File of a file engine (default casket.tkh / casket.tkt).
    #[arg(long)]
    pub path: Option<String>,
    /// Database parameters appended to the name, e.g. "num_shards=4,num_buckets=1M".
    #[arg(long, default_value = "")]
    pub params: String,
    /// Iterations per thread.
    #[arg(long, default_value_t = 10000)]
    pub iter: u64,
    #[arg(long, default_value_t = 1)]
    pub threads: u64,
    /// Value size in bytes.
    #[arg(long, default_value_t = 8)]
    pub size: usize,
    /// Seed of the random keys.
    #[arg(long = "random_seed", default_value_t = 0)]
    pub random_seed: u64,
    #[arg(long = "random_key")]
    pub random_key: bool,
    #[arg(long = "set_only")]
    pub set_only: bool,
    #[arg(long = "get_only")]
    pub get_only: bool,
    #[arg(long = "remove_only")]
    pub remove_only: bool,
    /// Bucket hint (num_buckets).
    #[arg(long)]
    pub buckets: Option<u64>,
    /// Cache capacity in records (in-memory hash).
    #[arg(long = "cap_rec_num")]
    pub cap_rec_num: Option<u64>,
    /// Cache capacity in bytes (in-memory hash).
    #[arg(long = "cap_mem_size")]
    pub cap_mem_size: Option<u64>,
    /// Accepted for compatibility; memstored prints the same lines either way.
    #[arg(long)]
    pub verbose: bool,
}

/// The database name for the flags, e.g. `casket.tkh#num_shards=4`.
pub fn db_name(a: &SequenceArgs) -> Result<String> {
    let mut params: Vec<String> = Vec::new();
    let base = match a.dbm.as_str() {
        "hash" | "tkh" => file_base(a, "casket.tkh", EngineKind::FileHash, "hash", &mut params)?,
        "tree" | "tkt" | "skip" => {
            file_base(a, "casket.tkt", EngineKind::FileTree, "tree", &mut params)?
        }
        "memfile" | "tkmt" => file_base(
            a,
            "casket.tkmt",
            EngineKind::MemFile,
            "memfile",
            &mut params,
        )?,
        "tiny" | "mem" | "stdhash" | "cache" => "*".to_string(),
        "baby" | "memtree" | "stdtree" => "+".to_string(),
        "auto" => a.path.clone().unwrap_or_else(|| "casket.tkh".to_string()),
        other => bail!(
            "unknown --dbm {other:?}: expected hash, tree, tiny, mem, baby, memtree, memfile or auto"
        ),
    };
    if let Some(b) = a.buckets {
        params.push(format!("num_buckets={b}"));
    }
    if let Some(n) = a.cap_rec_num {
        params.push(format!("cap_rec_num={n}"));
    }
    if let Some(n) = a.cap_mem_size {
        params.push(format!("cap_mem_size={n}"));
    }
    let extra = a.params.trim().trim_start_matches('#');
    if !extra.is_empty() {
        params.push(extra.to_string());
    }
    let (path, own) = match base.split_once('#') {
        Some((p, o)) => (p.to_string(), Some(o.to_string())),
        None => (base, None),
    };
    let mut all: Vec<String> = own.into_iter().collect();
    all.extend(params);
    Ok(if all.is_empty() {
        path
    } else {
        format!("{path}#{}", all.join(","))
    })
}

fn file_base(
    a: &SequenceArgs,
    default: &str,
    kind: EngineKind,
    dbm: &str,
    params: &mut Vec<String>,
) -> Result<String> {
    let path = a.path.clone().unwrap_or_else(|| default.to_string());
    let by_ext = DbName::parse(&path).map(|n| n.kind).ok();
    if by_ext != Some(kind) {
        params.push(format!("dbm={dbm}"));
    }
    Ok(path)
}

/// Resident set size of this process (VmRSS) as Tkrzw's `mem=` gives it:
/// the kB figure of `/proc/self/status` times 1000 (`GetSystemInfo()`'s
/// `mem_rss`, checked against the library), so the two tools' figures
/// compare as they are printed. Times 1024 made ours 2.4% larger than Tkrzw's for the same
/// memory.
pub(crate) fn rss() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<i64>().ok())
        })
        .map_or(0, |kb| kb * 1000)
}

/// "00" to "99", for `format_key`'s two digits at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `n` as `%08d` into `buf`, returning the used tail. No allocation.
/// Keys below 10^8 (every key of a run of up to 100M records) take four
/// pairs of digits from a table: the digit loop with its zero padding was
/// ~100 instructions a key, a sixth of a whole get (issue 46).
#[inline]
pub fn format_key(n: u64, buf: &mut [u8; 20]) -> &[u8] {
    if n < 100_000_000 {
        let mut v = n as usize;
        for i in (0..4).rev() {
            let pair = (v % 100) * 2;
            v /= 100;
            buf[i * 2..i * 2 + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        }
        return &buf[..8];
    }
    let mut i = buf.len();
    let mut v = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    while buf.len() - i < 8 {
        i -= 1;
        buf[i] = b'0';
    }
    &buf[i..]
}

/// A small, fast PRNG (SplitMix64) for random keys.
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    #[inline]
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Set,
    Get,
    Remove,
}

impl Phase {
    fn labels(self) -> (&'static str, &'static str) {
        match self {
            Phase::Set => ("Setting", "Set"),
            Phase::Get => ("Getting", "Get"),
            Phase::Remove => ("Removing", "Remove"),
        }
    }
}

const VALUE_EXTRA: usize = 2039;

/// One thread of a phase: `--iter` records of its own (or random) keys,
/// stopping at the first failure (its own or another thread's).
fn perf_thread(
    db: &Db,
    a: &SequenceArgs,
    phase: Phase,
    id: u64,
    failed: &AtomicBool,
    bar: &indicatif::ProgressBar,
) {
    let total = a.iter * a.threads;
    // Tkrzw's value pattern; each value is a window of it.
    let value_buf: Vec<u8> = (0..a.size + VALUE_EXTRA)
        .map(|i| b'a' + ((id as usize + i) % if i % 2 == 1 { 26 } else { 9 }) as u8)
        .collect();
    let mut rng = SplitMix(a.random_seed.wrapping_add(id));
    let mut kbuf = [0u8; 20];
    let mut pending = 0u64;
    for i in 0..a.iter {
        let num = if a.random_key {
            rng.next() % total
        } else {
            i * a.threads + id
        };
        let key = format_key(num, &mut kbuf);
        let result = match phase {
            Phase::Set => {
                let off = (i as usize).wrapping_mul(i as usize + 1) % VALUE_EXTRA;
                db.set(key, &value_buf[off..off + a.size], true)
            }
            // As tkrzw_dbm_perf's `dbm->Get(key)`: the record is found and
            // read (CRC checked), its value not copied out.
            Phase::Get => db.get_with(key, |_| ()),
            Phase::Remove => match db.remove(key) {
                Err(e) if e.is_not_found() => Ok(()),
                r => r,
            },
        };
        if let Err(e) = result {
            let op = phase.labels().1;
            eprintln!("{op} failed: {} ({e})", e.status_name());
            failed.store(true, Ordering::Relaxed);
            break;
        }
        pending += 1;
        if pending == 4096 {
            bar.inc(pending);
            pending = 0;
            if failed.load(Ordering::Relaxed) {
                break;
            }
        }
    }
    bar.inc(pending);
}

fn run_phase(db: &Db, a: &SequenceArgs, phase: Phase) -> Result<()> {
    let label = phase.labels().0;
    let total = a.iter * a.threads;
    let failed = AtomicBool::new(false);
    let bar = progress::bar(total, label);
    let start = Instant::now();
    std::thread::scope(|s| {
        for id in 0..a.threads {
            let (failed, bar) = (&failed, &bar);
            s.spawn(move || perf_thread(db, a, phase, id, failed, bar));
        }
    });
    bar.finish_and_clear();
    if phase != Phase::Get {
        print!("Synchronizing: ... ");
        let t = Instant::now();
        db.synchronize(false).context("synchronize")?;
        println!("done (elapsed={:.6})", t.elapsed().as_secs_f64());
    }
    let elapsed = start.elapsed().as_secs_f64();
    let mem = rss() - START_RSS.get().copied().unwrap_or(0);
    println!(
        "{label} done: elapsed_time={elapsed:.6} num_records={} qps={:.0} mem={mem}",
        db.count(),
        total as f64 / elapsed.max(1e-9),
    );
    let st = db.stats();
    if db.name().kind.has_file() {
        println!("  file_size={} live_bytes={}", st.file_size, st.bytes);
    }
    println!();
    if failed.load(Ordering::Relaxed) {
        bail!("the {} phase failed", label.to_lowercase());
    }
    Ok(())
}

/// RSS when the command started; `mem=` is the growth since then.
static START_RSS: OnceLock<i64> = OnceLock::new();

/// Removes the files of a file database so the set phase starts empty, as
/// Tkrzw's truncating open does.
fn truncate_files(name: &DbName) -> Result<()> {
    if !name.kind.has_file() {
        return Ok(());
    }
    for i in 0..name.num_shards {
        let p = shard_path(&name.path, i, name.num_shards);
        for f in [hint_path(&p), p] {
            match std::fs::remove_file(&f) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("removing {}", f.display())),
            }
        }
    }
    Ok(())
}

pub fn sequence(a: &SequenceArgs) -> Result<()> {
    if a.iter == 0 {
        bail!("--iter must be at least 1");
    }
    if a.threads == 0 {
        bail!("--threads must be at least 1");
    }
    if a.size == 0 {
        bail!("--size must be at least 1");
    }
    if a.iter.checked_mul(a.threads).is_none() {
        bail!("--iter times --threads is too large");
    }
    START_RSS.get_or_init(rss);
    let name = db_name(a)?;
    let parsed = DbName::parse(&name).with_context(|| format!("database name {name:?}"))?;
    let file = parsed.kind.has_file();
    let do_set = !a.get_only && !a.remove_only;
    let do_get = !a.set_only && !a.remove_only;
    let do_remove = !a.set_only && !a.get_only;
    let open =
        |writable: bool| Db::open(&name, writable).with_context(|| format!("opening {name}"));
    let header = |label: &str| {
        println!(
            "{label}: impl={} name={name} num_iterations={} value_size={} num_threads={}",
            a.dbm, a.iter, a.size, a.threads
        )
    };
    let mut db: Option<Db> = None;
    if do_set {
        truncate_files(&parsed)?;
        let d = open(true)?;
        header("Setting");
        run_phase(&d, a, Phase::Set)?;
        db = Some(d);
    }
    if do_get {
        if file || db.is_none() {
            if let Some(d) = db.take() {
                d.close().context("close")?;
            }
            db = Some(open(!file)?);
        }
        let d = db.as_ref().expect("opened above");
        header("Getting");
        run_phase(d, a, Phase::Get)?;
    }
    if do_remove {
        if file || db.is_none() {
            if let Some(d) = db.take() {
                d.close().context("close")?;
            }
            db = Some(open(true)?);
        }
        let d = db.as_ref().expect("opened above");
        header("Removing");
        run_phase(d, a, Phase::Remove)?;
    }
    if let Some(d) = db {
        d.close().context("close")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_zero_padded() {
        let mut b = [0u8; 20];
        assert_eq!(format_key(0, &mut b), b"00000000");
        assert_eq!(format_key(123, &mut b), b"00000123");
        assert_eq!(format_key(99_999_999, &mut b), b"99999999");
        assert_eq!(format_key(100_000_000, &mut b), b"100000000");
        assert_eq!(format_key(123_456_789, &mut b), b"123456789");
        assert_eq!(format_key(1_020_304, &mut b), b"01020304");
        assert_eq!(format_key(u64::MAX, &mut b), b"18446744073709551615");
    }

    fn args(dbm: &str, path: Option<&str>, params: &str) -> SequenceArgs {
        SequenceArgs {
            dbm: dbm.into(),
            path: path.map(Into::into),
            params: params.into(),
            iter: 1,
            threads: 1,
            size: 8,
            random_seed: 0,
            random_key: false,
            set_only: false,
            get_only: false,
            remove_only: false,
            buckets: None,
            cap_rec_num: None,
            cap_mem_size: None,
            verbose: false,
        }
    }

    #[test]
    fn names_follow_the_dbm_flag() {
        assert_eq!(db_name(&args("hash", None, "")).unwrap(), "casket.tkh");
        assert_eq!(
            db_name(&args("tree", Some("/t/c.tkt"), "num_shards=10")).unwrap(),
            "/t/c.tkt#num_shards=10"
        );
        assert_eq!(
            db_name(&args("hash", Some("x.dat"), "")).unwrap(),
            "x.dat#dbm=hash"
        );
        assert_eq!(db_name(&args("tiny", None, "")).unwrap(), "*");
        assert_eq!(
            db_name(&args("baby", None, "num_shards=2")).unwrap(),
            "+#num_shards=2"
        );
        assert!(db_name(&args("nope", None, "")).is_err());
    }
}
