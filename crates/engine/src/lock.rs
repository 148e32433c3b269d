//! The advisory lock of a store with files: `PATH.lock` beside the data
//! file(s), one for all shards, locked with `flock` for the life of an open
//! `Db`. A writable open takes it exclusively, a read-only open shared, both
//! without waiting: a second writer, or a writer beside readers, is refused
//! at once with an error naming the lock file and the holder, instead of two
//! processes appending to one log (or one rewriting a snapshot under the
//! other). The lock is a separate file because the data files are replaced
//! by rename (rebuilds, `.tkmt` snapshots), and a lock on a replaced inode
//! would protect nothing.
//!
//! `flock` locks belong to an open file description, so two opens in one
//! process exclude each other exactly as two processes do.

use crate::status::{io_err, Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// An acquired lock; released when dropped (the file is closed).
#[derive(Debug)]
pub struct StoreLock {
    file: File,
    path: PathBuf,
    exclusive: bool,
    /// This open created the lock file: a failed open removes it again, so
    /// that a refused open leaves the directory as it found it.
    created: bool,
    /// The open it guards succeeded ([`StoreLock::keep`]): the lock file
    /// stays when the lock is released. Until then dropping the lock is the
    /// failed open's cleanup, so that no error path (an early `?` included)
    /// can leave a lock file the failed open made.
    kept: bool,
}

impl Drop for StoreLock {
    /// Unlocks explicitly before the descriptor closes: a child process
    /// forked meanwhile (by any thread, before its exec closes inherited
    /// descriptors) shares the open file description and with it the lock,
    /// so closing our descriptor alone would leave the store locked until
    /// that child execs. `LOCK_UN` releases it for every sharer at once.
    fn drop(&mut self) {
        if !self.kept {
            self.remove_if_made_here();
        }
        // SAFETY: flock on the owned, still open descriptor; no memory is passed.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// `casket.tkh` -> `casket.tkh.lock` (also for `casket.tkh#num_shards=N`).
pub(crate) fn lock_path(store_path: &Path) -> PathBuf {
    let mut s = store_path.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// Non-blocking `flock`; `Ok(false)` when another open file holds a conflicting lock.
fn try_flock(file: &File, op: libc::c_int) -> std::io::Result<bool> {
    // SAFETY: flock on a valid, owned descriptor; no memory is passed.
    let rc = unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.kind() {
        ErrorKind::WouldBlock => Ok(false),
        _ => Err(e),
    }
}

/// Opens (creating it when allowed) the lock file; `None` for a reader that
/// can neither open nor create it (a read-only directory without one: no
/// writer can lock there either). Returns the file and whether it was created.
fn open_lock_file(path: &Path, exclusive: bool) -> Result<Option<(File, bool)>> {
    match OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => return Ok(Some((f, true))),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        // A reader of a store in a missing directory gets the store's own
        // `NotFound` from the open that follows.
        Err(e) if !exclusive && (is_denied(&e) || e.kind() == ErrorKind::NotFound) => {
            return Ok(None)
        }
        Err(e) => return Err(io_err("cannot create the lock file", path, e)),
    }
    // It exists. A reader may lack write permission: `flock` works on a
    // read-only descriptor too.
    let file = match open_existing(path, true) {
        Ok(f) => f,
        Err(e) if !exclusive && is_denied(&e) => {
            open_existing(path, false).map_err(|e| open_err(path, e))?
        }
        Err(e) => return Err(open_err(path, e)),
    };
    // The holder line is written into it: only into a plain file of its
    // own, never through a hard link into some other file.
    let meta = file
        .metadata()
        .map_err(|e| io_err("cannot inspect the lock file", path, e))?;
    if !meta.file_type().is_file() || meta.nlink() > 1 {
        return Err(Error::Precondition(format!(
            "{} is not a lock file memstored made (a {}); remove it if no process uses the store",
            path.display(),
            if meta.file_type().is_file() {
                "file with other hard links"
            } else {
                "special file"
            }
        )));
    }
    Ok(Some((file, false)))
}

fn open_err(path: &Path, e: std::io::Error) -> Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) => Error::Precondition(format!(
            "{} is a symbolic link; memstored does not write its lock file through a link: remove it",
            path.display()
        )),
        _ => io_err("cannot open the lock file", path, e),
    }
}

/// Opens an existing lock file without following a symlink at `path`: a
/// link planted there would otherwise have its target truncated and
/// overwritten by the holder line (ELOOP instead).
fn open_existing(path: &Path, write: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

fn is_denied(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem
    )
}

/// What the refused open is told about the holder: writers record their
/// process in the lock file; a shared probe tells readers from a writer.
fn holder(file: &mut File) -> String {
    if try_flock(file, libc::LOCK_SH).unwrap_or(false) {
        // Only readers hold it (the probe is released when `file` closes).
        return "by a reader (another process has the store open read-only)".into();
    }
    let mut text = String::new();
    let _ = file.take(200).read_to_string(&mut text);
    match text.trim() {
        "" => "by a writer".into(),
        who => format!("by a writer ({who})"),
    }
}

impl StoreLock {
    /// Locks the store at `store_path` (exclusive for a writer, shared for a
    /// reader) without waiting. `Ok(None)`: a reader in a directory where no
    /// lock file exists or can be made.
    /// Dropped before [`StoreLock::keep`] it removes a lock file it made.
    pub fn acquire(store_path: &Path, exclusive: bool) -> Result<Option<StoreLock>> {
        let path = lock_path(store_path);
        let op = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        };
        // A failed open removes a lock file it created (under the exclusive
        // lock); an open racing with that may lock the removed file, so after
        // locking, the file must still be the one at `path`. Retried a few
        // times: each retry means another open just removed it.
        for _ in 0..8 {
            let Some((mut file, created)) = open_lock_file(&path, exclusive)? else {
                return Ok(None);
            };
            if !try_flock(&file, op).map_err(|e| io_err("cannot lock", &path, e))? {
                return Err(Error::Precondition(format!(
                    "{} is in use: its lock file {} is held {}; a store has one writer \
                     or any number of readers at a time",
                    store_path.display(),
                    path.display(),
                    holder(&mut file)
                )));
            }
            let same = match (file.metadata(), std::fs::metadata(&path)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            };
            if !same {
                continue;
            }
            if exclusive {
                // Best effort: only for the message of a refused open.
                let who = format!("pid {} {}", std::process::id(), program());
                let _ = file
                    .set_len(0)
                    .and_then(|()| file.write_all_at(who.as_bytes(), 0));
            }
            return Ok(Some(StoreLock {
                file,
                path,
                exclusive,
                created,
                kept: false,
            }));
        }
        Err(Error::System(format!(
            "{}: the lock file keeps being replaced",
            path.display()
        )))
    }

    /// The open this lock guards succeeded: the lock file now stays beside
    /// the store for good (every open store leaves one), instead of being
    /// removed when the lock is dropped.
    pub fn keep(&mut self) {
        self.kept = true;
    }

    /// The cleanup of a failed open: removes the lock file when that open
    /// created it and no one else holds it.
    fn remove_if_made_here(&self) {
        if self.created && (self.exclusive || try_flock(&self.file, libc::LOCK_EX).unwrap_or(false))
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The running program's file name, for the holder line.
fn program() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}
