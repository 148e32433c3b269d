//! A small tmpfs for full-disk tests: mounted on a fresh directory, filled
//! on demand, unmounted when dropped (also when the test panics). Mounting
//! needs root, which CI has; elsewhere `mount` says so and the test skips.
//! Used by the engine's, the CLI's and the server's tests (by `#[path]`),
//! so it needs nothing beyond std and tempfile.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Tmpfs {
    dir: tempfile::TempDir,
}

/// The filler file `fill` makes inside the mount.
const FILLER: &str = "filler";

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`mount -o size=`, e.g. `12m`); `None`,
    /// after saying why, when not root.
    pub fn mount(size: &str) -> Option<Tmpfs> {
        // /proc/self belongs to the process's effective user.
        if std::fs::metadata("/proc/self").map_or(true, |m| m.uid() != 0) {
            eprintln!("skipped: mounting a tmpfs needs root (CI runs as root)");
            return None;
        }
        let dir = tempfile::tempdir().expect("a mount point");
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("running mount");
        assert!(st.success(), "mount -t tmpfs failed: {st}");
        Some(Tmpfs { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside the mount.
    pub fn join(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Fills the file system up with a filler file, then gives `leave`
    /// bytes of it back (whole pages: tmpfs counts pages).
    pub fn fill(&self, leave: u64) {
        let path = self.join(FILLER);
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .expect("the filler file");
        let chunk = vec![0x55u8; 64 << 10];
        let mut small = false;
        loop {
            let part = if small { &chunk[..4096] } else { &chunk[..] };
            match f.write_all(part) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(28) && !small => small = true,
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => panic!("filling {}: {e}", path.display()),
            }
        }
        let len = f.metadata().expect("filler metadata").len();
        f.set_len(len.saturating_sub(leave.div_ceil(4096) * 4096))
            .expect("giving space back");
    }

    /// Removes the filler: the space comes back.
    pub fn make_room(&self) {
        std::fs::remove_file(self.join(FILLER)).expect("removing the filler");
    }

    /// The names in the mount, the filler left out, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path())
            .expect("listing the mount")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|n| n != FILLER)
            .collect();
        v.sort();
        v
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a server the test started may still have files open.
        let st = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
        if !matches!(st, Ok(s) if s.success()) {
            eprintln!("umount -l {} failed: {st:?}", self.dir.path().display());
        }
    }
}
