//! Maintenance subcommands: rebuild, backup, restore.

use anyhow::{bail, Result};
use memstored_engine::Db;
use std::io::Write;

pub fn inspect_extra(_db: &Db, _out: &mut impl Write) -> Result<()> {
    Ok(())
}

pub fn rebuild(_name: &str) -> Result<()> {
    bail!("rebuild is not available yet")
}

pub fn backup(_name: &str, _suffix: &str) -> Result<()> {
    bail!("backup is not available yet")
}

pub fn restore(_src: &str, _dst: &str) -> Result<()> {
    bail!("restore is not available yet")
}
