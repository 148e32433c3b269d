//! Maintenance subcommands: rebuild, backup, restore.

use crate::progress;
use crate::store::{close, open};
use anyhow::{Context, Result};
use memstored_engine::Db;
use std::time::Instant;

fn file_size(db: &Db) -> u64 {
    db.stats().file_size
}

pub fn rebuild(name: &str) -> Result<()> {
    let db = open(name, true)?;
    let before = file_size(&db);
    println!(
        "Old: num_records={} file_size={before} should_be_rebuilt={}",
        db.count(),
        db.should_be_rebuilt()
    );
    let bar = progress::spinner("rebuilding");
    let t = Instant::now();
    let result = db.rebuild();
    bar.finish_and_clear();
    result.with_context(|| format!("rebuilding {name:?}"))?;
    println!(
        "Optimizing the database: ... ok (elapsed={:.6})",
        t.elapsed().as_secs_f64()
    );
    println!(
        "New: num_records={} file_size={} should_be_rebuilt={}",
        db.count(),
        file_size(&db),
        db.should_be_rebuilt()
    );
    close(db, name)
}

pub fn backup(name: &str, suffix: &str) -> Result<()> {
    let db = open(name, false)?;
    let bar = progress::spinner("backing up");
    let t = Instant::now();
    let result = db.backup(suffix);
    bar.finish_and_clear();
    let backup = result.with_context(|| format!("backing up {name:?}"))?;
    eprintln!(
        "backup of {} records done (elapsed={:.6})",
        db.count(),
        t.elapsed().as_secs_f64()
    );
    // The backup's database name, ready to pass to any other subcommand.
    println!("{backup}");
    close(db, name)
}

pub fn restore(src: &str, dst: &str) -> Result<()> {
    if src == dst {
        anyhow::bail!("the source and the destination must differ");
    }
    let bar = progress::spinner("restoring");
    let t = Instant::now();
    let result = memstored_engine::restore::restore(src, dst);
    bar.finish_and_clear();
    let r = result.with_context(|| format!("restoring {src:?} into {dst:?}"))?;
    println!(
        "Restoring the database: ... ok (elapsed={:.6}) records={} skipped_bytes={}",
        t.elapsed().as_secs_f64(),
        r.records,
        r.skipped_bytes
    );
    Ok(())
}
