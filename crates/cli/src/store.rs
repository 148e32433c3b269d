//! Opening and closing a local database with the name in every error: what
//! the local subcommands, the maintenance ones and `import` share.

use anyhow::{Context, Result};
use memstored_engine::Db;

/// Opens `name`, which must exist, explaining failures with the name. Only
/// the subcommands that store what they are given (`set`, `import`) make a
/// missing store ([`open_or_create`]): any other tool run on a mistyped name
/// would report success on an empty store it had just made.
pub fn open(name: &str, writable: bool) -> Result<Db> {
    Db::open_existing(name, writable).with_context(|| format!("cannot open database {name:?}"))
}

/// Opens `name` for writing, creating it when missing.
pub fn open_or_create(name: &str) -> Result<Db> {
    Db::open(name, true).with_context(|| format!("cannot open database {name:?}"))
}

/// Closes `db`, reporting a failure (a failed close can lose data).
pub fn close(db: Db, name: &str) -> Result<()> {
    db.close()
        .with_context(|| format!("closing database {name:?}"))
}
