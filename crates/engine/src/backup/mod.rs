//! Online backup: a copy of every shard as it was at one instant, taken while
//! clients keep reading and writing, that is complete under its final names
//! or marked unfinished.
//!
//! **One instant, one shard at a time.** At the backup's instant every shard
//! is *claimed*: all write locks are taken together only to set a flag each
//! (no I/O, no copying). The backup then captures the shards one by one, each
//! under that shard's own lock: a log file's prefix by its length (the bytes
//! below it never change), an in-memory shard by encoding its records. A
//! writer that reaches a claimed shard first captures it itself, as it still
//! is, before making its change (`ShardState::before_change`). So the copy is
//! of one point in time across shards, yet a client waits at most for the
//! capture of one shard, never for the whole database (issue 40: a 100-shard
//! `.tkmt` of 1.1M records once held every connection for 1.2 s).
//!
//! **Complete or marked.** `BASE.unfinished` is written and synced before the
//! first shard file and removed after the last one is renamed into place.
//! A set beside its marker does not open (`check_finished`) nor restore; a
//! failed backup removes every file of its set, temporary ones included, and
//! the marker last; a writable open of the database removes the sets a crash
//! left unfinished (`sweep_unfinished`).

pub(crate) mod claim;
pub(crate) mod files;

use crate::activity::Maintenance;
use crate::db::Db;
use crate::format::FileKind;
use crate::io::FileSystem;
use crate::name::Compression;
use crate::paths::shard_path;
use crate::record::now_secs;
use crate::shard::Shard;
use crate::snapshot::{self, SnapshotWriter};
use crate::status::{Error, Result};
use crate::store::Frozen;
use claim::{Captured, Claim};
use files::{remove_set, unfinished_marker, utc_timestamp};
use parking_lot::{Mutex, RwLockWriteGuard};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The claims of one backup on every shard. Dropped, it withdraws those not
/// captured yet, so a backup that fails leaves no work to later writers.
struct Claims<'a> {
    shards: &'a [Shard],
    claims: Vec<Arc<Claim>>,
}

impl<'a> Claims<'a> {
    /// Claims every shard at one instant: all write locks at once, for as
    /// long as setting a field in each takes.
    fn take(shards: &'a [Shard], compression: Compression) -> Self {
        let claims: Vec<_> = shards
            .iter()
            .map(|_| {
                Arc::new(Claim {
                    compression,
                    captured: Mutex::new(None),
                })
            })
            .collect();
        let mut guards: Vec<_> = shards.iter().map(|s| s.state.write()).collect();
        for (g, c) in guards.iter_mut().zip(&claims) {
            g.backup = Some(c.clone());
        }
        drop(guards);
        Claims { shards, claims }
    }

    /// Shard `i` as it was at the instant: captured now, under its lock,
    /// unless a writer already did. A log is only flushed and measured under
    /// the write lock; records are encoded under the read lock, so readers
    /// go on meanwhile.
    fn captured(&self, i: usize) -> Result<Captured> {
        let claim = &self.claims[i];
        let mut g = self.shards[i].state.write();
        if g.backup.as_ref().is_some_and(|b| Arc::ptr_eq(b, claim)) {
            g.backup = None;
            let frozen = g.store.freeze();
            let g = RwLockWriteGuard::downgrade(g);
            claim.fill(frozen, &*g.store);
        } else {
            drop(g);
        }
        claim.captured.lock().take().unwrap_or_else(|| {
            Err(Error::Infeasible(format!(
                "shard {i} was not captured for the backup"
            )))
        })
    }
}

impl Drop for Claims<'_> {
    fn drop(&mut self) {
        for (s, c) in self.shards.iter().zip(&self.claims) {
            let mut g = s.state.write();
            if g.backup.as_ref().is_some_and(|b| Arc::ptr_eq(b, c)) {
                g.backup = None;
            }
        }
    }
}

/// A backup set being written: its shard files and their temporary files,
/// removed with the marker unless `finish` is reached.
struct BackupSet<'a> {
    fs: &'a dyn FileSystem,
    base: String,
    shards: usize,
    finished: bool,
}

impl<'a> BackupSet<'a> {
    /// Writes and syncs the marker, before any file of the set.
    fn begin(fs: &'a dyn FileSystem, base: &str, shards: usize) -> Result<Self> {
        let marker = unfinished_marker(base);
        let set = BackupSet {
            fs,
            base: base.to_string(),
            shards,
            finished: false,
        };
        let file = fs.open(&marker, true, true)?;
        let note = format!(
            "an unfinished backup of {shards} shard(s): the next writable open of its database removes it\n"
        );
        file.set_len(0)?;
        file.write_at(note.as_bytes(), 0)?;
        file.sync()?;
        fs.sync_dir(&marker)?;
        Ok(set)
    }

    /// The file of shard `i`.
    fn shard(&self, i: usize) -> PathBuf {
        shard_path(&self.base, i, self.shards)
    }

    /// Every shard file is in place: the marker goes, durably.
    fn finish(mut self) -> Result<()> {
        let marker = unfinished_marker(&self.base);
        self.fs.sync_dir(&marker)?;
        self.fs.remove(&marker)?;
        self.fs.sync_dir(&marker)?;
        self.finished = true;
        Ok(())
    }
}

impl Drop for BackupSet<'_> {
    fn drop(&mut self) {
        if !self.finished {
            if let Err(e) = remove_set(self.fs, &self.base, self.shards) {
                tracing::error!("removing the failed backup {}: {e}", self.base);
            }
        }
    }
}

/// Adds to an I/O error which backup failed, keeping the OS's reason.
fn in_backup(base: &str, e: Error) -> Error {
    match e {
        Error::System(m) => Error::System(format!("backup {base}: {m}")),
        Error::NoSpace(m) => Error::NoSpace(format!("backup {base}: {m}")),
        e => e,
    }
}

fn copy_prefix(db: &Db, frozen: &Frozen, dest: &Path) -> Result<()> {
    let mut w = SnapshotWriter::create(&*db.fs, dest, None, 0)?;
    let mut pos = 0;
    let mut chunk = Vec::new();
    while pos < frozen.end {
        let n = ((frozen.end - pos) as usize).min(1 << 20);
        chunk.resize(n, 0);
        frozen.file.read_at(&mut chunk, pos)?;
        w.add_raw(&chunk)?;
        pos += n as u64;
    }
    w.finish()
}

impl Db {
    /// Writes a consistent copy of the database beside it, named
    /// `PATH.backup.SUFFIX` (shards: `PATH.backup.SUFFIX-00000-of-00010`), while
    /// clients keep reading and writing (see the module's comment). An empty
    /// suffix means the UTC time as `YYYYMMDDhhmmss`. Returns the backup's
    /// database name, which opens as a normal database. On failure no file
    /// of the backup is left, and the error carries the OS's reason.
    pub fn backup(&self, suffix: &str) -> Result<String> {
        if !self.name.kind.has_file() {
            return Err(Error::NotImplemented(
                "an in-memory database without a file has no backup".into(),
            ));
        }
        if suffix.contains(['/', '\0', '#', ',']) {
            return Err(Error::InvalidArgument(format!(
                "backup suffix {suffix:?} may not contain / # , or NUL"
            )));
        }
        let suffix = if suffix.is_empty() {
            utc_timestamp(now_secs())
        } else {
            suffix.to_string()
        };
        let base = format!("{}.backup.{suffix}", self.name.path);
        let _m = self.maintenance.lock();
        self.write_backup(&base).map_err(|e| in_backup(&base, e))?;
        let n = self.shards.len();
        Ok(if n > 1 {
            format!("{base}#num_shards={n}")
        } else {
            base
        })
    }

    pub(crate) fn write_backup(&self, base: &str) -> Result<()> {
        let n = self.shards.len();
        let set = BackupSet::begin(&*self.fs, base, n)?;
        let claims = Claims::take(&self.shards, self.name.compression);
        for i in 0..n {
            let dest = set.shard(i);
            self.shards[i]
                .activity
                .timed(Maintenance::Backup, || match claims.captured(i)? {
                    Captured::Log(f) => copy_prefix(self, &f, &dest),
                    Captured::Records { body, max_cas } => snapshot::write_records(
                        &*self.fs,
                        &dest,
                        FileKind::MemSnapshot,
                        max_cas,
                        &body,
                    ),
                })?;
        }
        drop(claims);
        set.finish()
    }
}
