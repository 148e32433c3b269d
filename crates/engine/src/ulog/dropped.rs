//! `DIR/ulog-dropped.ts`: the newest timestamp that retention has removed
//! from the log, so that a replica asking for updates from before it is
//! told it missed some (a gap) instead of silently skipping them, also
//! after the master restarts. Twenty decimal digits and a newline, written
//! aside and renamed into place before the segment is removed: a crash in
//! between leaves the marker ahead of the files, which refuses a replica
//! that could still have been served, never the other way round.

use crate::io::FileSystem;
use crate::status::{Error, Result};
use std::path::{Path, PathBuf};

fn marker_path(dir: &Path) -> PathBuf {
    dir.join("ulog-dropped.ts")
}

/// The saved timestamp; 0 when nothing was ever removed.
pub(super) fn read(fs: &dyn FileSystem, dir: &Path) -> Result<u64> {
    let path = marker_path(dir);
    if !fs.exists(&path) {
        return Ok(0);
    }
    let file = fs.open(&path, false, false)?;
    let mut buf = vec![0u8; file.len()?.min(64) as usize];
    file.read_at(&mut buf, 0)?;
    std::str::from_utf8(&buf)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| Error::BrokenData(format!("{}: not a timestamp", path.display())))
}

/// Saves `ts` durably.
pub(super) fn write(fs: &dyn FileSystem, dir: &Path, ts: u64) -> Result<()> {
    let path = marker_path(dir);
    let tmp = dir.join("ulog-dropped.ts.tmp");
    let file = fs.create_fresh(&tmp)?;
    file.write_at(format!("{ts:020}\n").as_bytes(), 0)?;
    file.sync()?;
    fs.rename(&tmp, &path)?;
    fs.sync_dir(&path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::RealFs;

    /// A link planted at the temporary name is replaced, its target kept
    /// (it was opened through the link and truncated before issue 40).
    #[test]
    fn the_marker_is_not_written_through_a_link_at_its_temporary_name() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        std::os::unix::fs::symlink(&victim, t.path().join("ulog-dropped.ts.tmp")).unwrap();
        write(&RealFs, t.path(), 42).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(read(&RealFs, t.path()).unwrap(), 42);
    }
}
