//! A file system over another that can stop where a test wants: a gate that
//! holds writes (or fsyncs) of one file until opened, or a death after a
//! number of operations, after which nothing more reaches the disk (a
//! `kill -9`).

use memstored_engine::io::{DataFile, FileMap, FileSystem};
use memstored_engine::lock::StoreLock;
use memstored_engine::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct GateState {
    stuck: bool,
    open: bool,
}

/// What a gate holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Writes,
    Syncs,
}

/// What a file system operation is, for the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Write,
    Sync,
    Directory,
}

/// Holds every write (or fsync) of files whose path ends with a pattern
/// until opened.
#[derive(Debug)]
pub struct Gate {
    pattern: String,
    held: Held,
    state: Mutex<GateState>,
    changed: Condvar,
}

impl Gate {
    /// Waits until a write is held at the gate.
    pub fn wait_until_stuck(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut s = self.state.lock().unwrap();
        while !s.stuck {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "nothing reached the gate on {}",
                self.pattern
            );
            s = self.changed.wait_timeout(s, left).unwrap().0;
        }
    }

    /// Lets held and later writes through.
    pub fn open(&self) {
        self.state.lock().unwrap().open = true;
        self.changed.notify_all();
    }

    fn pass(&self, path: &Path, change: Change) {
        let held = match self.held {
            Held::Writes => change == Change::Write,
            Held::Syncs => change == Change::Sync,
        };
        if !held || !path.to_string_lossy().ends_with(&self.pattern) {
            return;
        }
        let mut s = self.state.lock().unwrap();
        s.stuck = true;
        self.changed.notify_all();
        while !s.open {
            s = self.changed.wait(s).unwrap();
        }
    }
}

#[derive(Debug)]
struct Faults {
    gate: Mutex<Option<Arc<Gate>>>,
    /// Operations that still reach the disk; negative: no limit.
    left: AtomicI64,
}

impl Faults {
    /// Before each operation that changes the disk.
    fn change(&self, path: &Path, change: Change) -> Result<()> {
        let gate = self.gate.lock().unwrap().clone();
        if let Some(g) = gate {
            g.pass(path, change);
        }
        let left = self
            .left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n > 0).then_some(n - 1).or((n < 0).then_some(n))
            });
        match left {
            Ok(_) => Ok(()),
            Err(_) => Err(Error::System(format!(
                "{}: the process is dead",
                path.display()
            ))),
        }
    }
}

#[derive(Debug)]
pub struct FaultyFs {
    inner: Arc<dyn FileSystem>,
    faults: Arc<Faults>,
}

impl FaultyFs {
    pub fn new(inner: Arc<dyn FileSystem>) -> Arc<FaultyFs> {
        Arc::new(FaultyFs {
            inner,
            faults: Arc::new(Faults {
                gate: Mutex::new(None),
                left: AtomicI64::new(-1),
            }),
        })
    }

    /// From now on, writes (or fsyncs) of files whose path ends with
    /// `pattern` wait at the gate returned.
    pub fn gate(&self, held: Held, pattern: &str) -> Arc<Gate> {
        let g = Arc::new(Gate {
            pattern: pattern.to_string(),
            held,
            state: Mutex::default(),
            changed: Condvar::new(),
        });
        *self.faults.gate.lock().unwrap() = Some(g.clone());
        g
    }

    /// Lets `n` more operations that change the disk through, and fails
    /// every one after them.
    pub fn die_after(&self, n: u32) {
        self.faults.left.store(i64::from(n), Ordering::SeqCst);
    }
}

struct FaultyFile {
    inner: Arc<dyn DataFile>,
    path: PathBuf,
    faults: Arc<Faults>,
}

impl DataFile for FaultyFile {
    fn len(&self) -> Result<u64> {
        self.inner.len()
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, data: &[u8], offset: u64) -> Result<()> {
        self.faults.change(&self.path, Change::Write)?;
        self.inner.write_at(data, offset)
    }
    fn set_len(&self, len: u64) -> Result<()> {
        self.faults.change(&self.path, Change::Write)?;
        self.inner.set_len(len)
    }
    fn sync(&self) -> Result<()> {
        self.faults.change(&self.path, Change::Sync)?;
        self.inner.sync()
    }
    fn map(&self, len: u64) -> Result<Option<Arc<FileMap>>> {
        self.inner.map(len)
    }
}

impl FileSystem for FaultyFs {
    fn open(&self, path: &Path, writable: bool, create: bool) -> Result<Arc<dyn DataFile>> {
        if create && !self.inner.exists(path) {
            self.faults.change(path, Change::Directory)?;
        }
        Ok(Arc::new(FaultyFile {
            inner: self.inner.open(path, writable, create)?,
            path: path.to_path_buf(),
            faults: self.faults.clone(),
        }))
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.faults.change(to, Change::Directory)?;
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &Path) -> Result<()> {
        if self.inner.exists(path) {
            self.faults.change(path, Change::Directory)?;
        }
        self.inner.remove(path)
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        self.faults.change(path, Change::Directory)?;
        self.inner.sync_dir(path)
    }
    fn lock_store(&self, path: &Path, exclusive: bool) -> Result<Option<StoreLock>> {
        self.inner.lock_store(path, exclusive)
    }
    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        self.inner.list_dir(dir)
    }
    fn create_dir(&self, dir: &Path) -> Result<()> {
        self.faults.change(dir, Change::Directory)?;
        self.inner.create_dir(dir)
    }
}
