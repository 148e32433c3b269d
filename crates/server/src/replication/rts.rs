//! The replica's position: the master timestamp of the last update it
//! applied (Tkrzw-RPC's and Kyoto Tycoon's `rts` file), so that it resumes
//! there after a restart.
//!
//! The file holds the timestamp as 20 decimal digits and a newline, always
//! rewritten in place at offset 0: one small write, not a new file per
//! batch. It is written after the batch's updates were handed to the OS
//! (so it is never ahead of the store) and fsynced when the store is
//! (`#sync=always`); otherwise it reaches the disk with the OS's write-back,
//! as the store's own writes do.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// `DIR/replication.rts` in the update log's directory.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join("replication.rts")
}

pub struct Rts {
    file: File,
    fsync: bool,
}

impl Rts {
    /// Opens (creating) the file; returns it with the timestamp it holds
    /// (0 when new or empty).
    pub fn open(path: &Path, fsync: bool) -> io::Result<(Rts, u64)> {
        // Never through a symlink planted at the name (ELOOP instead): the
        // timestamp would overwrite the start of whatever it points to.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        let mut buf = [0u8; 21];
        let n = file.read_at(&mut buf, 0)?;
        let text = std::str::from_utf8(&buf[..n]).unwrap_or("");
        let ts = match text.trim() {
            "" => 0,
            t => t.parse().map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: not a timestamp: {t:?}", path.display()),
                )
            })?,
        };
        Ok((Rts { file, fsync }, ts))
    }

    /// Records `ts` as applied.
    pub fn save(&self, ts: u64) -> io::Result<()> {
        self.file
            .write_all_at(format!("{ts:020}\n").as_bytes(), 0)?;
        if self.fsync {
            self.file.sync_data()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_survives_a_reopen_and_garbage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = path_in(dir.path());
        let (r, ts) = Rts::open(&p, false).unwrap();
        assert_eq!(ts, 0);
        r.save(1_700_000_000_123_456).unwrap();
        r.save(42).unwrap();
        drop(r);
        assert_eq!(Rts::open(&p, true).unwrap().1, 42);
        std::fs::write(&p, "nonsense").unwrap();
        assert!(Rts::open(&p, false).is_err());
    }

    #[test]
    fn a_symlink_at_the_name_is_refused_and_its_target_kept() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let p = path_in(dir.path());
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        let e = Rts::open(&p, false).map(|_| ()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }
}
