//! File I/O behind a small trait, so that crash tests can run the real engine
//! code over a simulated disk that forgets unsynced writes (power loss).

use crate::lock::StoreLock;
use crate::status::{io_err, Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt::Debug;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One open file. Positional reads and writes only, so many readers can share it.
#[allow(clippy::len_without_is_empty)]
pub trait DataFile: Send + Sync {
    fn len(&self) -> Result<u64>;
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()>;
    fn write_at(&self, data: &[u8], offset: u64) -> Result<()>;
    fn set_len(&self, len: u64) -> Result<()>;
    /// Makes everything written so far durable (fdatasync).
    fn sync(&self) -> Result<()>;
    /// Asks the OS to start writing `len` bytes at `offset` to the disk now,
    /// without waiting (no durability promise): so that a later `sync`
    /// finds little left to write and is short. A hint: where there is no
    /// such thing (simulated files) it does nothing.
    fn start_writeback(&self, _offset: u64, _len: u64) {}
    /// Maps the first `len` bytes of the file read-only (`len` may exceed the
    /// file's length: only bytes below the length may then be read), so that
    /// reads need no system call. `None` where files cannot be mapped
    /// (simulated and in-memory files); callers then use `read_at`.
    fn map(&self, _len: u64) -> Result<Option<Arc<FileMap>>> {
        Ok(None)
    }
    /// Allocates disk space for `len` bytes at `offset` without changing
    /// the file's length, so that a later `write_at` there cannot fail for
    /// want of space (`Error::NoSpace` when the disk or quota is full).
    /// Where the file system cannot reserve (or the file is simulated) it
    /// does nothing and succeeds: writes then find out at `write_at`.
    fn reserve(&self, _offset: u64, _len: u64) -> Result<()> {
        Ok(())
    }
    /// Gives back space reserved past `offset` (the end of the data) by
    /// `reserve`. A hint: failing leaves the space allocated, nothing more.
    fn release_after(&self, _offset: u64, _len: u64) {}
}

/// A read-only shared memory map of a file.
///
/// Soundness: the engine only ever reads bytes of a log below its flushed
/// length, which it never rewrites (logs only grow; a rebuild writes a new
/// file and renames it over the old one, whose inode stays alive while
/// mapped; a torn tail is truncated at open, before any map exists). Another
/// process truncating the same file while it is open is not supported, as
/// for every embedded database: reading a page past the end of a file raises
/// SIGBUS.
pub struct FileMap(memmap2::Mmap);

impl FileMap {
    /// The mapped bytes, including any reserved part past the file's end.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The directory operations the engines need.
pub trait FileSystem: Send + Sync + Debug {
    /// Opens `path`; creates it when `create` is set and it does not exist.
    fn open(&self, path: &Path, writable: bool, create: bool) -> Result<Arc<dyn DataFile>>;
    /// Creates `path` afresh for writing (a temporary file, a new segment):
    /// whatever is there is removed first (a symlink itself, never its
    /// target) and the new file is made exclusively, so that a file or link
    /// planted at a name memstored derives is never written through.
    fn create_fresh(&self, path: &Path) -> Result<Arc<dyn DataFile>> {
        self.remove(path)?;
        self.open(path, true, true)
    }
    fn exists(&self, path: &Path) -> bool;
    /// Atomically replaces `to` with `from`.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    fn remove(&self, path: &Path) -> Result<()>;
    /// Makes creations and renames inside the directory of `path` durable.
    fn sync_dir(&self, path: &Path) -> Result<()>;
    /// Takes the advisory lock of the store at `path` (see `lock.rs`):
    /// exclusive for a writer, shared for a reader. Simulated file systems
    /// live in one process and lock nothing (`None`).
    fn lock_store(&self, _path: &Path, _exclusive: bool) -> Result<Option<StoreLock>> {
        Ok(None)
    }
    /// The files directly inside `dir` (the update log finds its segments
    /// this way). Only file systems that hold update logs need it.
    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        Err(Error::Precondition(format!(
            "cannot list {}: not supported here",
            dir.display()
        )))
    }
    /// Creates `dir` and its parents unless they exist.
    fn create_dir(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }
}

/// The real disk.
#[derive(Debug, Default)]
pub struct RealFs;

struct RealFile(std::fs::File);

/// `fallocate` on `f`; the OS error as is.
fn fallocate(f: &std::fs::File, mode: libc::c_int, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(off), Ok(n)) = (
        libc::off64_t::try_from(offset),
        libc::off64_t::try_from(len),
    ) else {
        return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
    };
    loop {
        // SAFETY: a descriptor we own and plain integers.
        if unsafe { libc::fallocate64(f.as_raw_fd(), mode, off, n) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl DataFile for RealFile {
    fn len(&self) -> Result<u64> {
        Ok(self.0.metadata()?.len())
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        Ok(self.0.read_exact_at(buf, offset)?)
    }
    fn write_at(&self, data: &[u8], offset: u64) -> Result<()> {
        self.0
            .write_all_at(data, offset)
            .map_err(|e| Error::from_io(format_args!("cannot write: "), &e))
    }
    fn set_len(&self, len: u64) -> Result<()> {
        Ok(self.0.set_len(len)?)
    }
    fn reserve(&self, offset: u64, len: u64) -> Result<()> {
        match fallocate(&self.0, libc::FALLOC_FL_KEEP_SIZE, offset, len) {
            Ok(()) => Ok(()),
            // The file system cannot reserve: writes find out for themselves.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS)) => Ok(()),
            Err(e) => Err(Error::from_io(format_args!("cannot reserve space: "), &e)),
        }
    }
    fn release_after(&self, offset: u64, len: u64) {
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        let _ = fallocate(&self.0, mode, offset, len);
    }
    fn sync(&self) -> Result<()> {
        Ok(self.0.sync_data()?)
    }
    fn start_writeback(&self, offset: u64, len: u64) {
        use std::os::fd::AsRawFd;
        let (Ok(off), Ok(n)) = (
            libc::off64_t::try_from(offset),
            libc::off64_t::try_from(len),
        ) else {
            return;
        };
        // SAFETY: sync_file_range takes a descriptor we own and plain
        // integers; a failure only means the hint was not taken.
        unsafe {
            libc::sync_file_range(self.0.as_raw_fd(), off, n, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
    fn map(&self, len: u64) -> Result<Option<Arc<FileMap>>> {
        let len = usize::try_from(len).map_err(|_| Error::System("map too large".into()))?;
        // SAFETY: see `FileMap`: only bytes below the flushed length of a
        // file that is only ever appended to are read through the map.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map(&self.0) }
            .map_err(|e| Error::System(format!("cannot map a file: {e}")))?;
        Ok(Some(Arc::new(FileMap(map))))
    }
}

impl RealFs {
    /// Opens `path` as Tkrzw's File class does, except that a writable
    /// open never follows a symlink at `path` (O_NOFOLLOW: it fails
    /// instead), so a link planted there is never written through.
    pub(crate) fn open_no_follow(
        path: &Path,
        writable: bool,
        create: bool,
    ) -> Result<Arc<dyn DataFile>> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(writable)
            .create(writable && create)
            .truncate(false)
            .custom_flags(if writable { libc::O_NOFOLLOW } else { 0 })
            .open(path)
            .map_err(|e| io_err("cannot open", path, e))?;
        Ok(Arc::new(RealFile(file)))
    }
}

impl FileSystem for RealFs {
    fn open(&self, path: &Path, writable: bool, create: bool) -> Result<Arc<dyn DataFile>> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(writable)
            .create(writable && create)
            .truncate(false)
            .open(path)
            .map_err(|e| io_err("cannot open", path, e))?;
        Ok(Arc::new(RealFile(file)))
    }
    fn create_fresh(&self, path: &Path) -> Result<Arc<dyn DataFile>> {
        use std::os::unix::fs::OpenOptionsExt;
        self.remove(path)?;
        // O_EXCL: a link (even a dangling one) or file put there since the
        // removal fails the open instead of being followed or truncated.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| io_err("cannot create", path, e))?;
        Ok(Arc::new(RealFile(file)))
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        std::fs::rename(from, to).map_err(|e| io_err("cannot rename", from, e))
    }
    fn remove(&self, path: &Path) -> Result<()> {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(io_err("cannot remove", path, e))
            }
            _ => Ok(()),
        }
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let d = std::fs::File::open(&dir).map_err(|e| io_err("cannot open directory", &dir, e))?;
        d.sync_all()
            .map_err(|e| io_err("cannot sync directory", &dir, e))
    }
    fn lock_store(&self, path: &Path, exclusive: bool) -> Result<Option<StoreLock>> {
        StoreLock::acquire(path, exclusive)
    }
    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let entries = std::fs::read_dir(dir).map_err(|e| io_err("cannot list", dir, e))?;
        let mut out = Vec::new();
        for e in entries {
            out.push(e.map_err(|e| io_err("cannot list", dir, e))?.path());
        }
        Ok(out)
    }
    fn create_dir(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| io_err("cannot create directory", dir, e))
    }
}

/// A write not yet made durable by `sync`.
#[derive(Debug, Clone)]
enum PendingOp {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

#[derive(Debug, Default)]
struct SimState {
    /// What survives a power loss.
    durable: Vec<u8>,
    /// What readers see now.
    current: Vec<u8>,
    /// Operations since the last sync, in order.
    pending: Vec<PendingOp>,
}

/// A simulated file: every write is kept in a pending list until `sync`.
#[derive(Debug, Default)]
pub(crate) struct SimFile {
    state: Mutex<SimState>,
}

fn apply(buf: &mut Vec<u8>, op: &PendingOp) {
    match op {
        PendingOp::Write { offset, data } => {
            let start = *offset as usize;
            let end = start + data.len();
            if buf.len() < end {
                buf.resize(end, 0);
            }
            buf[start..end].copy_from_slice(data);
        }
        PendingOp::SetLen(len) => buf.resize(*len as usize, 0),
    }
}

impl DataFile for SimFile {
    fn len(&self) -> Result<u64> {
        Ok(self.state.lock().current.len() as u64)
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        let s = self.state.lock();
        let start =
            usize::try_from(offset).map_err(|_| Error::System("offset too large".into()))?;
        let src = s
            .current
            .get(start..start.saturating_add(buf.len()))
            .ok_or_else(|| Error::System("read past the end of file".into()))?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write_at(&self, data: &[u8], offset: u64) -> Result<()> {
        let mut s = self.state.lock();
        let op = PendingOp::Write {
            offset,
            data: data.to_vec(),
        };
        apply(&mut s.current, &op);
        s.pending.push(op);
        Ok(())
    }
    fn set_len(&self, len: u64) -> Result<()> {
        let mut s = self.state.lock();
        let op = PendingOp::SetLen(len);
        apply(&mut s.current, &op);
        s.pending.push(op);
        Ok(())
    }
    fn sync(&self) -> Result<()> {
        let mut s = self.state.lock();
        s.durable = s.current.clone();
        s.pending.clear();
        Ok(())
    }
}

/// How much of the unsynced work survives a simulated power loss.
#[derive(Debug, Clone, Copy)]
pub struct PowerLoss {
    /// Leading unsynced operations of each file that reach the disk whole.
    pub keep_ops: usize,
    /// Bytes of the next unsynced write that reach the disk (a torn write).
    pub torn_bytes: usize,
}

impl PowerLoss {
    /// Every unsynced byte is lost.
    pub const DROP_UNSYNCED: PowerLoss = PowerLoss {
        keep_ops: 0,
        torn_bytes: 0,
    };
}

/// A simulated file system. Directory operations are durable at once (the
/// engine syncs directories after them anyway); file contents are durable only
/// after `sync`.
#[derive(Debug, Default)]
pub struct SimFs {
    files: Mutex<HashMap<PathBuf, Arc<SimFile>>>,
}

impl SimFs {
    pub fn new() -> Arc<SimFs> {
        Arc::new(SimFs::default())
    }

    /// Simulates a power loss: each file keeps its durable bytes plus what `loss` lets through.
    /// Open handles must not be used afterwards (reopen the database).
    pub fn power_loss(&self, loss: PowerLoss) {
        let mut files = self.files.lock();
        for (path, file) in files.iter_mut() {
            let s = file.state.lock();
            let mut survived = s.durable.clone();
            for op in s.pending.iter().take(loss.keep_ops) {
                apply(&mut survived, op);
            }
            if let Some(PendingOp::Write { offset, data }) = s.pending.get(loss.keep_ops) {
                let n = loss.torn_bytes.min(data.len());
                apply(
                    &mut survived,
                    &PendingOp::Write {
                        offset: *offset,
                        data: data[..n].to_vec(),
                    },
                );
            }
            drop(s);
            let _ = path;
            *file = Arc::new(SimFile {
                state: Mutex::new(SimState {
                    durable: survived.clone(),
                    current: survived,
                    pending: Vec::new(),
                }),
            });
        }
    }

    /// Number of unsynced operations pending on `path` (tests use it to pick tear points).
    pub fn pending_ops(&self, path: &Path) -> usize {
        self.files
            .lock()
            .get(path)
            .map(|f| f.state.lock().pending.len())
            .unwrap_or(0)
    }

    /// The current contents of a file, for tests that corrupt or inspect bytes.
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        self.files
            .lock()
            .get(path)
            .map(|f| f.state.lock().current.clone())
    }

    /// Deletes a file at once (tests that remove a hint).
    pub fn remove_for_test(&self, path: &Path) {
        self.files.lock().remove(path);
    }

    /// Replaces a file's contents, durable at once.
    pub fn put_contents(&self, path: &Path, data: Vec<u8>) {
        let f = SimFile {
            state: Mutex::new(SimState {
                durable: data.clone(),
                current: data,
                pending: Vec::new(),
            }),
        };
        self.files.lock().insert(path.to_path_buf(), Arc::new(f));
    }
}

impl FileSystem for SimFs {
    fn open(&self, path: &Path, _writable: bool, create: bool) -> Result<Arc<dyn DataFile>> {
        let mut files = self.files.lock();
        if let Some(f) = files.get(path) {
            return Ok(f.clone());
        }
        if !create {
            return Err(Error::System(format!(
                "cannot open {}: no such file",
                path.display()
            )));
        }
        let f = Arc::new(SimFile::default());
        files.insert(path.to_path_buf(), f.clone());
        Ok(f)
    }
    fn exists(&self, path: &Path) -> bool {
        self.files.lock().contains_key(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut files = self.files.lock();
        let f = files.remove(from).ok_or_else(|| {
            Error::System(format!("cannot rename {}: no such file", from.display()))
        })?;
        files.insert(to.to_path_buf(), f);
        Ok(())
    }
    fn remove(&self, path: &Path) -> Result<()> {
        self.files.lock().remove(path);
        Ok(())
    }
    fn sync_dir(&self, _path: &Path) -> Result<()> {
        Ok(())
    }
    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        Ok(self
            .files
            .lock()
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .cloned()
            .collect())
    }
}

/// Bytes in memory seen as a read-only file, for scanning a buffer with the
/// same code that scans files.
pub(crate) struct SliceFile(pub Vec<u8>);

impl DataFile for SliceFile {
    fn len(&self) -> Result<u64> {
        Ok(self.0.len() as u64)
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        let start =
            usize::try_from(offset).map_err(|_| Error::System("offset too large".into()))?;
        let src = self
            .0
            .get(start..start.saturating_add(buf.len()))
            .ok_or_else(|| Error::System("read past the end of buffer".into()))?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write_at(&self, _data: &[u8], _offset: u64) -> Result<()> {
        Err(Error::Precondition("a slice file is read-only".into()))
    }
    fn set_len(&self, _len: u64) -> Result<()> {
        Err(Error::Precondition("a slice file is read-only".into()))
    }
    fn sync(&self) -> Result<()> {
        Ok(())
    }
}

/// Size of the read-ahead window of sequential scans.
const READ_AHEAD: usize = 4 << 20;

/// A read-only view of a file that reads ahead in large windows, so a scan of
/// many small records costs one system call per window instead of two per record.
pub(crate) struct ReadAheadFile<'a> {
    inner: &'a dyn DataFile,
    len: u64,
    /// The cached window: its file offset and bytes.
    window: Mutex<(u64, Vec<u8>)>,
}

impl<'a> ReadAheadFile<'a> {
    pub(crate) fn new(inner: &'a dyn DataFile, len: u64) -> Self {
        ReadAheadFile {
            inner,
            len,
            window: Mutex::new((0, Vec::new())),
        }
    }
}

impl DataFile for ReadAheadFile<'_> {
    fn len(&self) -> Result<u64> {
        Ok(self.len)
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        if buf.len() > READ_AHEAD / 2 {
            return self.inner.read_at(buf, offset);
        }
        let mut w = self.window.lock();
        let end = offset.saturating_add(buf.len() as u64);
        if offset < w.0 || end > w.0 + w.1.len() as u64 {
            let n = (READ_AHEAD as u64).min(self.len.saturating_sub(offset)) as usize;
            if n < buf.len() {
                return self.inner.read_at(buf, offset);
            }
            w.1.resize(n, 0);
            let (_, data) = &mut *w;
            self.inner.read_at(data, offset)?;
            w.0 = offset;
        }
        let at = (offset - w.0) as usize;
        buf.copy_from_slice(&w.1[at..at + buf.len()]);
        Ok(())
    }
    fn write_at(&self, _data: &[u8], _offset: u64) -> Result<()> {
        Err(Error::Precondition("a read-ahead view is read-only".into()))
    }
    fn set_len(&self, _len: u64) -> Result<()> {
        Err(Error::Precondition("a read-ahead view is read-only".into()))
    }
    fn sync(&self) -> Result<()> {
        Ok(())
    }
}
