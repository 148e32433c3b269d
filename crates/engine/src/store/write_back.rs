//! A `.tkmt` store's write-back (`Store::write_back`): a whole snapshot
//! captured under the shard's lock and written after it. A leaf below the
//! `Store` trait that returns it and the memory-file store that makes it.

use crate::format::FileKind;
use crate::io::FileSystem;
use crate::snapshot;
use crate::status::{Error, Result};
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the write-backs of one store share: they are numbered as taken,
/// written one at a time, and one older than what is on disk is skipped
/// (the newer holds everything it held).
#[derive(Default)]
pub(crate) struct WriteBacks {
    /// The number of the last write-back taken (under the shard's lock).
    pub taken: std::sync::atomic::AtomicU64,
    /// The number of the newest write-back on disk.
    pub written: Mutex<u64>,
    /// A write-back failed: the next synchronize writes again even if
    /// nothing changed since.
    pub failed: AtomicBool,
}

/// A whole snapshot captured under the shard's lock, to be written after
/// it (`Store::write_back`); or, when nothing changed, a wait for the
/// write-backs taken before it, which may still be under way.
pub(crate) struct WriteBack {
    pub fs: Arc<dyn FileSystem>,
    pub path: PathBuf,
    pub max_cas: u64,
    /// The records, or `None` for a wait.
    pub body: Option<Vec<u8>>,
    pub number: u64,
    pub shared: Arc<WriteBacks>,
}

impl WriteBack {
    /// Writes the snapshot to a temporary file and renames it over PATH,
    /// unless a newer one is there already; a wait returns once the
    /// write-backs before it are on disk, or fails if one of them failed.
    pub(crate) fn write(self) -> Result<()> {
        let mut written = self.shared.written.lock();
        if *written >= self.number {
            return Ok(());
        }
        let Some(body) = &self.body else {
            return Err(Error::System(format!(
                "{}: an earlier write-back failed; the next synchronize writes it again",
                self.path.display()
            )));
        };
        let kind = FileKind::MemSnapshot;
        let (fs, path) = (&*self.fs, &self.path);
        match snapshot::write_records(fs, path, kind, self.max_cas, body) {
            Ok(()) => {
                *written = self.number;
                Ok(())
            }
            Err(e) => {
                self.shared.failed.store(true, Ordering::Relaxed);
                Err(e)
            }
        }
    }
}
