//! The disk work of a rotation, done after the log's lock is released.
//!
//! Sealing a segment means fsyncing it, and starting the next means
//! fsyncing the new file and its directory; retention then writes the
//! dropped-timestamp marker and removes old files. Done under the log's
//! lock (and so under the lock of the shard whose write rotated), that is
//! tens of milliseconds in which no write and no replication stream moves
//! (docs/bench/replication.md). So rotation only switches files in memory
//! and leaves this to a `Seal`, finished on its own thread.
//!
//! What keeps the log a prefix after a power loss: at most one seal is
//! pending (a rotation finishes the previous one first), `synchronize(hard)`
//! finishes it before fsyncing the current segment, and every segment's
//! header records where the previous one ended (`prev_end`), so recovery can
//! tell a sealed segment that lost its tail and drop what came after it.

use super::dropped;
use super::segment::segment_path;
use crate::io::{DataFile, FileSystem};
use crate::status::Result;
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;

/// One rotation's pending disk work. Runs once: a second `finish` waits
/// for the first and returns.
pub(super) struct Seal {
    /// The segment just sealed.
    pub sealed: Arc<dyn DataFile>,
    /// The segment just started, and its path (for the directory sync).
    pub started: Arc<dyn DataFile>,
    pub started_path: PathBuf,
    /// Retention's work: the newest removed timestamp to save first (if
    /// it moved), then the segment numbers to remove.
    pub dropped_until: Option<u64>,
    pub remove: Vec<u64>,
    pub dir: PathBuf,
    done: Mutex<bool>,
}

impl Seal {
    pub(super) fn new(
        sealed: Arc<dyn DataFile>,
        started: Arc<dyn DataFile>,
        started_path: PathBuf,
        dir: PathBuf,
    ) -> Seal {
        Seal {
            sealed,
            started,
            started_path,
            dropped_until: None,
            remove: Vec::new(),
            dir,
            done: Mutex::new(false),
        }
    }

    /// Does the work unless it is done; an error leaves it to be retried by
    /// the next caller.
    pub(super) fn finish(&self, fs: &dyn FileSystem) -> Result<()> {
        let mut done = self.done.lock();
        if *done {
            return Ok(());
        }
        self.sealed.sync()?;
        self.started.sync()?;
        fs.sync_dir(&self.started_path)?;
        if let Some(ts) = self.dropped_until {
            dropped::write(fs, &self.dir, ts)?;
        }
        for &num in &self.remove {
            let path = segment_path(&self.dir, num);
            if fs.exists(&path) {
                fs.remove(&path)?;
            }
        }
        *done = true;
        Ok(())
    }
}
