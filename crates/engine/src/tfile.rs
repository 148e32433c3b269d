//! Tkrzw's `File` class (tkrzw_file.h) for the bindings: a file read and
//! written at offsets, appended to, truncated and searched line by line.
//! It is the engine's file layer (`io::DataFile`) underneath, opened so that
//! a writable open never follows a symlink.

use crate::io::{DataFile, RealFs};
use crate::search::{match_lines, SearchMode};
use crate::status::{Error, Result};
use parking_lot::{Mutex, RwLock};
use std::path::Path;
use std::sync::Arc;

/// How `File::open` opens (Tkrzw's open parameters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileOptions {
    /// A writable open starts from an empty file.
    pub truncate: bool,
    /// A missing file is `NotFound` instead of being created.
    pub no_create: bool,
    /// `synchronize` and `close` make the data durable (fsync).
    pub sync_hard: bool,
    /// Tkrzw's `block_size` with `access_options` naming `padding`: a
    /// writable file's length is rounded up to a multiple of it on close
    /// (with zeros), as Tkrzw's padded files are.
    pub pad_to: Option<u64>,
}

/// Tkrzw's File parameters that mean nothing here (locking, the
/// implementation class, allocation tuning): accepted and ignored.
const IGNORED_PARAMS: &[&str] = &[
    "no_wait",
    "no_lock",
    "file",
    "alloc_init_size",
    "alloc_inc_factor",
];

impl FileOptions {
    /// Reads Tkrzw's `k=v` pairs (`truncate`, `no_create`, `sync_hard`;
    /// the ones in `IGNORED_PARAMS` are accepted); any other word is
    /// `InvalidArgument` naming it.
    pub fn from_params<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut o = FileOptions::default();
        let (mut block, mut padding) = (None, false);
        for (k, v) in params {
            let on = || matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes");
            match k {
                "truncate" => o.truncate = on(),
                "no_create" => o.no_create = on(),
                "sync_hard" => o.sync_hard = on(),
                "block_size" => block = v.parse::<u64>().ok().filter(|b| *b > 1),
                // Tkrzw's other access options (direct, sync, ...) tune I/O.
                "access_options" => padding = v.split(':').any(|w| w == "padding"),
                k if IGNORED_PARAMS.contains(&k) => {}
                k => {
                    return Err(Error::InvalidArgument(format!(
                        "unknown file parameter {k:?}"
                    )))
                }
            }
        }
        o.pad_to = block.filter(|_| padding);
        Ok(o)
    }
}

/// An open file and the size appends continue from.
struct OpenFile {
    data: Arc<dyn DataFile>,
    path: String,
    writable: bool,
    sync_hard: bool,
    pad_to: Option<u64>,
    /// Held by every change of the size, so appends never overlap.
    size: Mutex<u64>,
}

/// Tkrzw's File: made closed, opened, used from any number of threads, closed.
#[derive(Default)]
pub struct File {
    open: RwLock<Option<OpenFile>>,
}

fn not_open() -> Error {
    Error::Precondition("the file is not opened".into())
}

impl File {
    /// A closed file.
    pub fn new() -> File {
        File::default()
    }

    /// Opens `path`, creating it when writable unless `no_create`.
    /// `Precondition` when already open.
    pub fn open(&self, path: &str, writable: bool, opts: FileOptions) -> Result<()> {
        let mut slot = self.open.write();
        if slot.is_some() {
            return Err(Error::Precondition("the file is already opened".into()));
        }
        let p = Path::new(path);
        if opts.no_create && !p.exists() {
            return Err(Error::NotFound(format!("{path}: no such file")));
        }
        let data = RealFs::open_no_follow(p, writable, !opts.no_create)?;
        if writable && opts.truncate {
            data.set_len(0)?;
        }
        let size = data.len()?;
        *slot = Some(OpenFile {
            data,
            path: path.to_string(),
            writable,
            sync_hard: opts.sync_hard,
            pad_to: opts.pad_to,
            size: Mutex::new(size),
        });
        Ok(())
    }

    /// Closes the file (durably with `sync_hard`); `Precondition` when not open.
    pub fn close(&self) -> Result<()> {
        let f = self.open.write().take().ok_or_else(not_open)?;
        if let (true, Some(block)) = (f.writable, f.pad_to) {
            let size = *f.size.lock();
            let padded = size.div_ceil(block).saturating_mul(block);
            if padded > size {
                f.data.set_len(padded)?;
            }
        }
        if f.writable && f.sync_hard {
            f.data.sync()?;
        }
        Ok(())
    }

    fn with<R>(&self, f: impl FnOnce(&OpenFile) -> Result<R>) -> Result<R> {
        f(self.open.read().as_ref().ok_or_else(not_open)?)
    }

    fn with_writable<R>(&self, f: impl FnOnce(&OpenFile) -> Result<R>) -> Result<R> {
        self.with(|o| {
            if !o.writable {
                return Err(Error::Precondition("the file is open read-only".into()));
            }
            f(o)
        })
    }

    /// `size` bytes at `offset`; `Infeasible` past the end.
    pub fn read(&self, offset: u64, size: usize) -> Result<Vec<u8>> {
        self.with(|o| {
            let end = *o.size.lock();
            if offset.checked_add(size as u64).is_none_or(|e| e > end) {
                return Err(Error::Infeasible(format!(
                    "{size} bytes at {offset} go past the end at {end}"
                )));
            }
            let mut buf = vec![0; size];
            o.data.read_at(&mut buf, offset)?;
            Ok(buf)
        })
    }

    /// Writes `data` at `offset`, growing the file when it goes past the end.
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.with_writable(|o| {
            let mut size = o.size.lock();
            o.data.write_at(data, offset)?;
            *size = (*size).max(offset + data.len() as u64);
            Ok(())
        })
    }

    /// Writes `data` at the end; returns where it went.
    pub fn append(&self, data: &[u8]) -> Result<u64> {
        self.with_writable(|o| {
            let mut size = o.size.lock();
            let at = *size;
            o.data.write_at(data, at)?;
            *size = at + data.len() as u64;
            Ok(at)
        })
    }

    /// Cuts (or extends with zeros) the file to `size` bytes.
    pub fn truncate(&self, size: u64) -> Result<()> {
        self.with_writable(|o| {
            let mut cur = o.size.lock();
            o.data.set_len(size)?;
            *cur = size;
            Ok(())
        })
    }

    /// With `hard`, makes everything written durable (fsync); writes go to
    /// the OS as they are made, so without it there is nothing to do.
    pub fn synchronize(&self, hard: bool) -> Result<()> {
        self.with(|o| {
            if hard && o.writable {
                o.data.sync()
            } else {
                Ok(())
            }
        })
    }

    /// The file's size in bytes.
    pub fn size(&self) -> Result<u64> {
        self.with(|o| Ok(*o.size.lock()))
    }

    /// The path the file was opened with.
    pub fn path(&self) -> Result<String> {
        self.with(|o| Ok(o.path.clone()))
    }

    /// True while open.
    pub fn is_open(&self) -> bool {
        self.open.read().is_some()
    }

    /// The lines (without their line feed) matching `pattern` under
    /// `mode` (not upper/lower), at most `capacity` (0: all), in file
    /// order; edit modes nearest first, as Tkrzw's SearchTextFileModal.
    pub fn search(
        &self,
        mode: SearchMode,
        pattern: &[u8],
        capacity: usize,
    ) -> Result<Vec<Vec<u8>>> {
        let size = usize::try_from(self.size()?)
            .map_err(|_| Error::Infeasible("the file is too large to search".into()))?;
        let text = self.read(0, size)?;
        let mut lines: Vec<Vec<u8>> = text.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        if text.last().is_none_or(|&b| b == b'\n') {
            lines.pop();
        }
        match_lines(mode, pattern, lines, capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name).to_str().unwrap().to_string();
        (dir, p)
    }

    /// Tkrzw's padded files (tkrzw-java's Test.java, file): `block_size`
    /// with `access_options=padding` rounds the length up on close.
    #[test]
    fn padding_rounds_the_length_up_on_close() {
        let (_d, path) = temp("padded.txt");
        let f = File::new();
        let opts = FileOptions::from_params([
            ("truncate", "true"),
            ("block_size", "512"),
            ("access_options", "padding:pagecache"),
        ])
        .unwrap();
        f.open(&path, true, opts).unwrap();
        f.append(b"hello world!").unwrap();
        f.close().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 512);
        let plain = FileOptions::from_params([("block_size", "512")]).unwrap();
        assert_eq!(plain.pad_to, None);
    }

    #[test]
    fn reads_writes_appends_and_truncates() {
        let (_d, path) = temp("f.txt");
        let f = File::new();
        assert!(matches!(f.size(), Err(Error::Precondition(_))));
        f.open(&path, true, FileOptions::default()).unwrap();
        assert!(matches!(
            f.open(&path, true, FileOptions::default()),
            Err(Error::Precondition(_))
        ));
        assert_eq!(f.append(b"abc").unwrap(), 0);
        assert_eq!(f.append(b"def").unwrap(), 3);
        f.write(1, b"XY").unwrap();
        assert_eq!(f.read(0, 6).unwrap(), b"aXYdef");
        assert!(matches!(f.read(4, 3), Err(Error::Infeasible(_))));
        f.write(8, b"!").unwrap();
        assert_eq!(f.size().unwrap(), 9);
        f.truncate(2).unwrap();
        assert_eq!((f.size().unwrap(), f.path().unwrap()), (2, path.clone()));
        f.synchronize(true).unwrap();
        f.close().unwrap();
        assert!(f.close().is_err());
        let opts = FileOptions {
            truncate: true,
            ..Default::default()
        };
        f.open(&path, false, opts).unwrap();
        assert_eq!(f.read(0, 2).unwrap(), b"aX", "truncate needs writable");
        assert!(matches!(f.append(b"x"), Err(Error::Precondition(_))));
        f.close().unwrap();
        f.open(&path, true, opts).unwrap();
        assert_eq!(f.size().unwrap(), 0);
    }

    #[test]
    fn missing_files_and_symlinks() {
        let (dir, path) = temp("none.txt");
        let no_create = FileOptions::from_params([("no_create", "true")]).unwrap();
        assert!(File::new()
            .open(&path, true, no_create)
            .unwrap_err()
            .is_not_found());
        assert!(FileOptions::from_params([("bogus", "1")]).is_err());
        let target = dir.path().join("target");
        std::fs::write(&target, b"secret").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let link = link.to_str().unwrap();
        let trunc = FileOptions::from_params([("truncate", "true")]).unwrap();
        assert!(File::new().open(link, true, trunc).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"secret");
        let f = File::new();
        f.open(link, false, FileOptions::default()).unwrap();
        assert_eq!(f.read(0, 6).unwrap(), b"secret");
    }

    #[test]
    fn searches_lines() {
        let (_d, path) = temp("lines.txt");
        let f = File::new();
        f.open(&path, true, FileOptions::default()).unwrap();
        for i in 1..=100 {
            f.append(format!("{i:08}\n").as_bytes()).unwrap();
        }
        let n = |mode: &str, pat: &str, cap| {
            f.search(SearchMode::parse(mode).unwrap(), pat.as_bytes(), cap)
                .unwrap()
                .len()
        };
        assert_eq!(n("contain", "001", 0), 12);
        assert_eq!(n("contain", "001", 3), 3);
        assert_eq!(n("begin", "0000001", 0), 10);
        assert_eq!(n("end", "1", 0), 10);
        assert_eq!(n("regex", r"^\d+1$", 0), 10);
        assert_eq!(n("edit", "00000100", 3), 3);
        let first = f.search(SearchMode::Contain, b"0000001", 1).unwrap();
        assert_eq!(first, vec![b"00000001".to_vec()]);
        assert!(f
            .search(SearchMode::Upper { inclusive: true }, b"0", 0)
            .is_err());
    }

    /// Tkrzw's SearchTextFileModal test (tkrzw_dbm_common_impl_test.cc):
    /// lines "1" to "100", the word and several-pattern modes counted as
    /// Tkrzw counts them.
    #[test]
    fn searches_lines_by_word_and_by_several_patterns() {
        let (_d, path) = temp("words.txt");
        let f = File::new();
        f.open(&path, true, FileOptions::default()).unwrap();
        for i in 1..=100 {
            f.append(format!("{i}\n").as_bytes()).unwrap();
        }
        let n = |mode: &str, pat: &str| {
            f.search(SearchMode::parse(mode).unwrap(), pat.as_bytes(), 0)
                .unwrap()
                .len()
        };
        assert_eq!(n("containcase", "1"), 20);
        assert_eq!(n("containword", "1"), 1);
        assert_eq!(n("containcaseword", "1"), 1);
        assert_eq!(n("contain*", "2\n3"), 36);
        assert_eq!(n("containcase*", "2\n3"), 36);
        assert_eq!(n("containword*", "2\n3"), 2);
        assert_eq!(n("containcaseword*", "2\n3"), 2);
        f.truncate(0).unwrap();
        f.append(b"apple pie\nApple\nbanana split\npineapple\nx-APPLE-y\n")
            .unwrap();
        let lines = |mode: &str, pat: &str| {
            let found = f.search(SearchMode::parse(mode).unwrap(), pat.as_bytes(), 0);
            found
                .unwrap()
                .into_iter()
                .map(|l| String::from_utf8(l).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(lines("containword", "apple"), ["apple pie"]);
        assert_eq!(
            lines("containcaseword", "APPLE"),
            ["apple pie", "Apple", "x-APPLE-y"]
        );
        assert_eq!(
            lines("containword*", "split\n\npie"),
            ["apple pie", "banana split"]
        );
        assert!(SearchMode::parse("begin*").is_err());
    }
}
