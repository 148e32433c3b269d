//! Temporary files written beside their destination and renamed over it:
//! a rebuild's new log (`PATH.rebuild.tmp`), a `.tkmt`/`.mem` snapshot
//! (`PATH.tmp`), a hint (`PATH.hint.tmp`).
//!
//! A failure at any step (most often a full disk) removes the temporary
//! file, so the attempt that found the disk full does not keep it full; and
//! a writable open removes those a crash left behind (`remove_leftovers`),
//! so a restart gives their space back.

use crate::io::{DataFile, FileSystem};
use crate::status::Result;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The suffix of a rebuild's new log.
pub(crate) const REBUILD: &str = ".rebuild.tmp";
/// The suffix of a snapshot or hint being written.
pub(crate) const PLAIN: &str = ".tmp";

/// A file system owned (`Arc`) or borrowed: rebuilds outlive the call that
/// starts them and own a handle; snapshots and hints borrow the caller's.
pub(crate) trait FsHandle {
    fn fs(&self) -> &dyn FileSystem;
}

impl FsHandle for Arc<dyn FileSystem> {
    fn fs(&self) -> &dyn FileSystem {
        &**self
    }
}

impl<'a> FsHandle for &'a (dyn FileSystem + 'a) {
    fn fs(&self) -> &dyn FileSystem {
        *self
    }
}

/// `dest` with `suffix` appended to its name.
pub(crate) fn tmp_path(dest: &Path, suffix: &str) -> PathBuf {
    let mut s = dest.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A temporary file being written: removed when dropped, unless it was
/// renamed over its destination first.
pub(crate) struct TmpFile<F: FsHandle> {
    fs: F,
    path: PathBuf,
    renamed: bool,
}

impl<F: FsHandle> TmpFile<F> {
    /// Creates `dest` + `suffix` empty; one left there by a crash is replaced.
    pub(crate) fn create(fs: F, dest: &Path, suffix: &str) -> Result<(Self, Arc<dyn DataFile>)> {
        let path = tmp_path(dest, suffix);
        let tmp = TmpFile {
            fs,
            path,
            renamed: false,
        };
        // From here on, a failure (even of the open) removes what it made.
        // Made fresh: whatever was at the name (a link planted there, never
        // its target) is removed, and the file is created exclusively.
        let file = tmp.fs.fs().create_fresh(&tmp.path)?;
        Ok((tmp, file))
    }

    /// Renames the file over `dest` (the caller has synced its data), then
    /// makes the rename durable. The inner result is the directory sync's:
    /// when only that failed, the rename has happened all the same, and a
    /// caller that keeps the file open must switch to it.
    pub(crate) fn rename_over(&mut self, dest: &Path) -> Result<Result<()>> {
        self.fs.fs().rename(&self.path, dest)?;
        self.renamed = true;
        Ok(self.fs.fs().sync_dir(dest))
    }
}

impl<F: FsHandle> Drop for TmpFile<F> {
    fn drop(&mut self) {
        if !self.renamed {
            remove_quietly(self.fs.fs(), &self.path);
        }
    }
}

fn remove_quietly(fs: &dyn FileSystem, path: &Path) {
    if let Err(e) = fs.remove(path) {
        tracing::warn!("cannot remove the temporary file {}: {e}", path.display());
    }
}

/// Removes the temporary files a crash may have left beside the data file
/// `data` (a shard's). Called by a writable open, which holds the store's
/// lock, so no other process is writing them.
pub(crate) fn remove_leftovers(fs: &dyn FileSystem, data: &Path) {
    for p in [
        tmp_path(data, REBUILD),
        tmp_path(data, PLAIN),
        tmp_path(&crate::paths::hint_path(data), PLAIN),
    ] {
        if fs.exists(&p) {
            tracing::info!("removing {}, left by an interrupted write", p.display());
            remove_quietly(fs, &p);
        }
    }
}
