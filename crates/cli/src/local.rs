//! Local subcommands on a database name, like `tkrzw_dbm_util`.

use crate::progress;
use crate::store::{close, open, open_or_create};
use crate::tsv;
use anyhow::{anyhow, Context, Result};
use memstored_engine::SearchMode;
use std::fs::File;
use std::io::{BufWriter, Write};

fn stdout() -> BufWriter<std::io::StdoutLock<'static>> {
    BufWriter::with_capacity(64 * 1024, std::io::stdout().lock())
}

pub fn inspect(name: &str) -> Result<()> {
    let db = open(name, false)?;
    let mut out = stdout();
    writeln!(out, "Inspection:")?;
    for (k, v) in db.inspect() {
        writeln!(out, "  {k}={v}")?;
    }
    writeln!(out, "Number of Records: {}", db.count())?;
    writeln!(out, "Should be Rebuilt: {}", db.should_be_rebuilt())?;
    out.flush()?;
    close(db, name)
}

pub fn get(name: &str, key: &str) -> Result<()> {
    let db = open(name, false)?;
    let value = db
        .get(key.as_bytes())
        .with_context(|| format!("get {key:?}"))?;
    let mut out = stdout();
    out.write_all(&value)?;
    out.write_all(b"\n")?;
    out.flush()?;
    close(db, name)
}

/// How a set stores: the same flags for `memstore set` and `memstore remote set`.
#[derive(clap::Args, Debug)]
pub struct SetOpts {
    /// Fails if the record exists.
    #[arg(long = "no_overwrite", alias = "no-overwrite")]
    pub no_overwrite: bool,
    /// Appends VALUE to the existing value after this delimiter.
    #[arg(long, value_name = "DELIM", conflicts_with_all = ["incr", "no_overwrite"])]
    pub append: Option<String>,
    /// Adds VALUE (an integer) to the record, which counts as INITIAL when absent; prints the result.
    #[arg(
        long,
        value_name = "INITIAL",
        allow_hyphen_values = true,
        conflicts_with = "no_overwrite"
    )]
    pub incr: Option<String>,
}

pub fn set(name: &str, key: &str, value: &str, o: &SetOpts) -> Result<()> {
    let db = open_or_create(name)?;
    let k = key.as_bytes();
    if let Some(initial) = &o.incr {
        let initial: i64 = initial
            .trim()
            .parse()
            .with_context(|| format!("--incr {initial:?}: expected an integer"))?;
        let delta: i64 = value
            .trim()
            .parse()
            .with_context(|| format!("increment {value:?}: expected an integer"))?;
        let n = db
            .increment(k, delta, initial)
            .with_context(|| format!("increment {key:?}"))?;
        println!("{n}");
    } else if let Some(delim) = &o.append {
        db.append(k, value.as_bytes(), delim.as_bytes())
            .with_context(|| format!("append to {key:?}"))?;
    } else {
        db.set(k, value.as_bytes(), !o.no_overwrite)
            .with_context(|| format!("set {key:?}"))?;
    }
    close(db, name)
}

pub fn remove(name: &str, key: &str) -> Result<()> {
    let db = open(name, true)?;
    db.remove(key.as_bytes())
        .with_context(|| format!("remove {key:?}"))?;
    close(db, name)
}

/// `--move` of `list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Move {
    First,
    Jump,
    Jumplower,
    Jumplowerinc,
    Jumpupper,
    Jumpupperinc,
}

/// Lists records from a starting point, as `tkrzw_dbm_util list` does:
/// `first` and `jump` go forward; `jumplower[inc]` lands on the last key
/// before (or at) the jump key and lists forward from there; `jumpupper[inc]`
/// lands on the first key after (or at) it and lists backward.
pub fn list(
    name: &str,
    mv: Move,
    jump_key: &str,
    items: Option<u64>,
    keys_only: bool,
) -> Result<()> {
    let db = open(name, false)?;
    let mut c = db.cursor();
    let jk = jump_key.as_bytes();
    let forward = !matches!(mv, Move::Jumpupper | Move::Jumpupperinc);
    let moved = match mv {
        Move::First => c.first(),
        Move::Jump => c.jump(jk),
        Move::Jumplower => c.jump_lower(jk, false),
        Move::Jumplowerinc => c.jump_lower(jk, true),
        Move::Jumpupper => c.jump_upper(jk, false),
        Move::Jumpupperinc => c.jump_upper(jk, true),
    };
    match moved {
        Ok(()) => {}
        // Jumping to a missing key of a hash database lists nothing.
        Err(e) if e.is_not_found() => return close(db, name),
        Err(e) => return Err(anyhow!(e).context(format!("{mv:?} failed"))),
    }
    let limit = items.unwrap_or(u64::MAX);
    let mut out = stdout();
    let mut line = Vec::with_capacity(256);
    let mut n = 0u64;
    while n < limit {
        if c.key().is_err() {
            break; // past the end
        }
        match c.get() {
            Ok((k, v)) => {
                line.clear();
                if keys_only {
                    tsv::escape_into(&k, &mut line);
                    line.push(b'\n');
                } else {
                    tsv::format_line(&k, &v, &mut line);
                }
                out.write_all(&line)?;
                n += 1;
            }
            // Removed by another writer since the move: skip it.
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(anyhow!(e).context("reading the record")),
        }
        let step = if forward { c.next() } else { c.previous() };
        step.context("moving the cursor")?;
    }
    out.flush()?;
    close(db, name)
}

pub fn search(name: &str, pattern: &str, mode: &str, max: usize, keys_only: bool) -> Result<()> {
    let mode = SearchMode::parse(mode)?;
    let db = open(name, false)?;
    let keys = db
        .search(mode, pattern.as_bytes(), max)
        .with_context(|| format!("search {pattern:?}"))?;
    let mut out = stdout();
    let mut line = Vec::new();
    for k in keys {
        line.clear();
        if keys_only {
            tsv::escape_into(&k, &mut line);
            line.push(b'\n');
        } else {
            match db.get(&k) {
                Ok(v) => tsv::format_line(&k, &v, &mut line),
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(e.into()),
            }
        }
        out.write_all(&line)?;
    }
    out.flush()?;
    close(db, name)
}

pub fn export(name: &str, file: &str) -> Result<()> {
    let db = open(name, false)?;
    let f = File::create(file).with_context(|| format!("cannot create {file:?}"))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let bar = progress::bar(db.count(), "exporting");
    let mut c = db.cursor();
    c.first().context("moving to the first record")?;
    let mut line = Vec::with_capacity(256);
    let mut n = 0u64;
    while let Some((k, v)) = c.step().context("reading records")? {
        line.clear();
        tsv::format_line(&k, &v, &mut line);
        w.write_all(&line)
            .with_context(|| format!("writing {file:?}"))?;
        n += 1;
        if n & 1023 == 0 {
            bar.inc(1024);
        }
    }
    w.flush().with_context(|| format!("writing {file:?}"))?;
    w.into_inner()
        .map_err(|e| anyhow!("writing {file:?}: {}", e.error()))?
        .sync_all()
        .with_context(|| format!("syncing {file:?}"))?;
    bar.finish_and_clear();
    eprintln!("exported {n} records to {file}");
    close(db, name)
}
