//! `memstore import`: stores every record of an export, memstored's own TSV
//! (docs/tsv.md) or what the ancestors' tools write (docs/operations.md,
//! "Migrating"). One file per format; this one picks the reader and runs the
//! loop that stores, counts and reports.

mod flat;
mod hex;
mod item;
mod lines;
mod raw;
mod tkrzw_escape;

use crate::progress;
use crate::store::{close, open_or_create};
use crate::tsv;
use anyhow::{bail, Context, Result};
use item::{Bad, Parsed, Source};
use std::fs::File;
use std::io::{BufRead, BufReader};

/// Which tool wrote the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Tkrzw flat records when the file starts with byte 0xFF or 0xFE (which
    /// memstored's TSV never does), else memstored's TSV.
    Auto,
    /// `memstore export` (docs/tsv.md).
    Memstore,
    /// `tkrzw_dbm_util export` (flat records), or a Tkrzw .tkmt/.tkmb file itself.
    Tkrzw,
    /// `tkrzw_dbm_util export --tsv`: lossy, Tkrzw turned tabs in keys, line
    /// feeds and control bytes into spaces.
    TkrzwTsv,
    /// `tkrzw_dbm_util export --tsv --escape` (C-style escapes).
    TkrzwTsvEscape,
    /// `tchmgr list -pv` / `tcbmgr list -pv`: raw bytes; a line feed inside a
    /// record splits it (use -px and tc-hex for binary data).
    Tc,
    /// `tchmgr list -pv -px` / `tcbmgr list -pv -px` (hex).
    TcHex,
    /// `kchashmgr list -pv` / `kctreemgr list -pv`: raw, as tc.
    Kc,
    /// `kchashmgr list -pv -px` / `kctreemgr list -pv -px` (hex).
    KcHex,
}

fn source(format: Format, r: BufReader<File>, file: &str) -> Box<dyn Source> {
    let parse: fn(&[u8]) -> Parsed = match format {
        Format::Tkrzw => return Box::new(flat::Flat::new(r, file)),
        Format::Memstore | Format::Auto => |l| tsv::parse_line(l).map_err(Bad::Tsv),
        Format::TkrzwTsv => raw::parse_tkrzw,
        Format::TkrzwTsvEscape => tkrzw_escape::parse_line,
        Format::Tc | Format::Kc => raw::parse_list,
        Format::TcHex | Format::KcHex => hex::parse_line,
    };
    // Only memstored's own format, often edited by hand, skips empty lines:
    // an ancestor's tool never writes one for a record.
    let skip_empty = matches!(format, Format::Memstore | Format::Auto);
    Box::new(lines::Lines::new(r, file, parse, skip_empty))
}

/// `auto`: Tkrzw's flat records start with 0xFF (data) or 0xFE (metadata);
/// memstored's TSV writes such bytes as `\xff`/`\xfe`, never raw.
fn resolve(format: Format, r: &mut BufReader<File>, file: &str) -> Result<Format> {
    if format != Format::Auto {
        return Ok(format);
    }
    let head = r.fill_buf().with_context(|| format!("reading {file:?}"))?;
    Ok(match head.first() {
        Some(0xff | 0xfe) => {
            eprintln!("{file}: read as Tkrzw flat records (it starts with a 0xFF or 0xFE byte)");
            Format::Tkrzw
        }
        _ => Format::Memstore,
    })
}

/// Imports `file` in `format` into `name`. Bad lines are reported with
/// their numbers and skipped; every good line is stored. Fails (after
/// importing the rest) when any line was bad, so scripts notice. A broken
/// binary stream stops the import there, keeping what came before.
pub fn run(name: &str, file: &str, format: Format) -> Result<()> {
    let f = File::open(file).with_context(|| format!("cannot open {file:?}"))?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut r = BufReader::with_capacity(1 << 20, f);
    let format = resolve(format, &mut r, file)?;
    let mut src = source(format, r, file);
    let db = open_or_create(name)?;
    let bar = progress::bytes_bar(size, "importing");
    let (mut items, mut stored, mut bad) = (0u64, 0u64, 0u64);
    let outcome = loop {
        let item = match src.next_item() {
            Ok(Some(item)) => item,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        items += 1;
        if items & 4095 == 0 {
            bar.set_position(src.consumed());
        }
        match item {
            Ok((k, v)) => {
                if let Err(e) = db.set(&k, &v, true) {
                    let place = src.place();
                    break Err(
                        anyhow::Error::new(e).context(format!("{place}: storing the record"))
                    );
                }
                stored += 1;
            }
            Err(e) => {
                bar.suspend(|| eprintln!("{}: bad line skipped: {e}", src.place()));
                bad += 1;
            }
        }
    };
    bar.finish_and_clear();
    close(db, name)?;
    if let Err(e) = outcome {
        eprintln!("imported {stored} records from {file} before the error");
        return Err(e);
    }
    eprintln!(
        "imported {stored} records from {file} ({})",
        src.summary(bad)
    );
    if bad > 0 {
        bail!("{bad} bad line(s) in {file} were skipped; every other line was imported");
    }
    Ok(())
}
