//! `File`: tkrzw-python's plain file class (positional reads and writes,
//! appends, truncation, line search), and the shared handle that
//! `DBM.ExportToFlatRecords` and friends write through.

use crate::convert::{data, to_py, to_str};
use crate::status::{settle, Status, INFEASIBLE_ERROR, PRECONDITION_ERROR};
use memstored_engine::{Db, SearchMode};
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

type Res<T> = Result<T, Status>;

/// An open file: the OS file, its size as written (not as padded) and,
/// with Tkrzw's `padding` access option, the block size its length is
/// rounded up to on close.
struct Open {
    file: std::fs::File,
    path: String,
    size: u64,
    writable: bool,
    pad_to: u64,
}

/// The OS's error as Tkrzw's status (NOT_FOUND_ERROR, PERMISSION_ERROR or
/// SYSTEM_ERROR), naming the path.
fn io_status(path: &str, e: std::io::Error) -> Status {
    use memstored_engine::status::code::{NOT_FOUND_ERROR, PERMISSION_ERROR, SYSTEM_ERROR};
    let code = match e.kind() {
        std::io::ErrorKind::NotFound => NOT_FOUND_ERROR,
        std::io::ErrorKind::PermissionDenied => PERMISSION_ERROR,
        _ => SYSTEM_ERROR,
    };
    Status::new(code, format!("{path}: {e}"))
}

fn not_open() -> Status {
    Status::new(PRECONDITION_ERROR, "the file is not open")
}

/// A file shared by the Python object and calls that hold it meanwhile.
#[derive(Default)]
pub struct SharedFile {
    open: Mutex<Option<Open>>,
}

impl SharedFile {
    fn with<T>(&self, f: impl FnOnce(&mut Open) -> Res<T>) -> Res<T> {
        f(self.open.lock().as_mut().ok_or_else(not_open)?)
    }

    fn writing<T>(&self, f: impl FnOnce(&mut Open) -> Res<T>) -> Res<T> {
        self.with(|o| {
            if !o.writable {
                return Err(Status::new(PRECONDITION_ERROR, "the file is not writable"));
            }
            f(o)
        })
    }

    pub fn size(&self) -> Res<u64> {
        self.with(|o| Ok(o.size))
    }

    /// `len` bytes at `off`; INFEASIBLE_ERROR when they pass the end.
    pub fn read(&self, off: u64, len: usize) -> Res<Vec<u8>> {
        self.with(|o| {
            if off.saturating_add(len as u64) > o.size {
                return Err(Status::new(
                    INFEASIBLE_ERROR,
                    format!("reading {len} bytes at {off} passes the end ({})", o.size),
                ));
            }
            let mut buf = vec![0; len];
            o.file
                .read_exact_at(&mut buf, off)
                .map_err(|e| io_status(&o.path, e))?;
            Ok(buf)
        })
    }

    pub fn write(&self, off: u64, bytes: &[u8]) -> Res<()> {
        self.writing(|o| {
            o.file
                .write_all_at(bytes, off)
                .map_err(|e| io_status(&o.path, e))?;
            o.size = o.size.max(off + bytes.len() as u64);
            Ok(())
        })
    }

    /// Writes at the end; returns where.
    pub fn append(&self, bytes: &[u8]) -> Res<u64> {
        self.writing(|o| {
            let off = o.size;
            o.file
                .write_all_at(bytes, off)
                .map_err(|e| io_status(&o.path, e))?;
            o.size += bytes.len() as u64;
            Ok(off)
        })
    }

    pub fn truncate(&self, size: u64) -> Res<()> {
        self.writing(|o| {
            o.file.set_len(size).map_err(|e| io_status(&o.path, e))?;
            o.size = size;
            Ok(())
        })
    }

    fn synchronize(&self, hard: bool) -> Res<()> {
        self.with(|o| {
            if hard && o.writable {
                o.file.sync_data().map_err(|e| io_status(&o.path, e))?;
            }
            Ok(())
        })
    }

    fn close(&self) -> Res<()> {
        let o = self.open.lock().take().ok_or_else(not_open)?;
        if o.writable && o.pad_to > 0 {
            let padded = o.size.div_ceil(o.pad_to) * o.pad_to;
            o.file.set_len(padded).map_err(|e| io_status(&o.path, e))?;
        }
        Ok(())
    }

    /// The lines matching `pattern` under `mode`: the engine's search, over
    /// the lines as the keys of an in-memory ordered database.
    fn search(&self, mode: &str, pattern: &[u8], capacity: usize) -> Res<Vec<Vec<u8>>> {
        let mode = SearchMode::parse(mode)?;
        let lines = Db::open("+", true)?;
        for l in self.lines()? {
            lines.set(&l, b"", true)?;
        }
        Ok(lines.search(mode, pattern, capacity)?)
    }

    /// The whole file as lines (without their `\n`).
    fn lines(&self) -> Res<Vec<Vec<u8>>> {
        let all = self.read(0, self.size()? as usize)?;
        let mut lines: Vec<Vec<u8>> = all.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
        if lines.last().is_some_and(Vec::is_empty) {
            lines.pop();
        }
        Ok(lines)
    }
}

/// The options of `File.Open` this class uses; Tkrzw's others (the file
/// class, buffer and allocation sizes, lock modes) are accepted and ignored.
#[derive(Default)]
struct OpenOpts {
    truncate: bool,
    no_create: bool,
    block_size: u64,
    padding: bool,
}

fn opts(params: Option<&Bound<'_, PyDict>>) -> PyResult<OpenOpts> {
    let mut o = OpenOpts::default();
    for (k, v) in params.into_iter().flat_map(|p| p.iter()) {
        let truthy = || -> PyResult<bool> {
            Ok(match v.cast::<PyBool>() {
                Ok(b) => b.is_true(),
                Err(_) => matches!(v.str()?.to_str()?, "true" | "1" | "yes"),
            })
        };
        match k.str()?.to_str()? {
            "truncate" => o.truncate = truthy()?,
            "no_create" => o.no_create = truthy()?,
            "block_size" => o.block_size = v.str()?.to_str()?.parse().unwrap_or(0),
            "access_options" => o.padding = v.str()?.to_str()?.contains("padding"),
            _ => {}
        }
    }
    Ok(o)
}

#[pyclass(module = "memstored", name = "File", frozen)]
pub struct File {
    pub shared: Arc<SharedFile>,
}

#[pymethods]
impl File {
    #[new]
    fn py_new() -> File {
        File {
            shared: Arc::default(),
        }
    }

    /// Opens `path`; writable opens create it unless `no_create`.
    #[pyo3(name = "Open", signature = (path, writable, **params))]
    fn open(
        &self,
        path: &Bound<'_, PyAny>,
        writable: bool,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Status> {
        let path = String::from_utf8_lossy(&data(path)?).into_owned();
        let o = opts(params)?;
        let mut slot = self.shared.open.lock();
        if slot.is_some() {
            return Ok(Status::new(PRECONDITION_ERROR, "the file is already open"));
        }
        let opened = OpenOptions::new()
            .read(true)
            .write(writable)
            .create(writable && !o.no_create)
            .truncate(writable && o.truncate)
            .open(&path)
            .and_then(|f| Ok((f.metadata()?.len(), f)));
        Ok(match opened {
            Ok((size, file)) => {
                let pad_to = if o.padding { o.block_size } else { 0 };
                *slot = Some(Open {
                    file,
                    path,
                    size,
                    writable,
                    pad_to,
                });
                Status::ok()
            }
            Err(e) => io_status(&path, e),
        })
    }

    #[pyo3(name = "Close")]
    fn close(&self) -> Status {
        Status::of(self.shared.close())
    }

    #[pyo3(name = "Read", signature = (off, size, status = None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        off: u64,
        size: usize,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let r = self.shared.read(off, size);
        Ok(settle(status.as_ref(), r)?.map(|b| to_py(py, &b, false)))
    }

    #[pyo3(name = "ReadStr", signature = (off, size, status = None))]
    fn read_str<'py>(
        &self,
        py: Python<'py>,
        off: u64,
        size: usize,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let r = self.shared.read(off, size);
        Ok(settle(status.as_ref(), r)?.map(|b| to_str(py, &b)))
    }

    #[pyo3(name = "Write")]
    fn write(&self, off: u64, data: &Bound<'_, PyAny>) -> PyResult<Status> {
        Ok(Status::of(self.shared.write(off, &self::data(data)?)))
    }

    /// Writes at the end; returns the offset written at, or None on failure.
    #[pyo3(name = "Append", signature = (data, status = None))]
    fn append(
        &self,
        data: &Bound<'_, PyAny>,
        status: Option<Bound<'_, Status>>,
    ) -> PyResult<Option<u64>> {
        let r = self.shared.append(&self::data(data)?);
        settle(status.as_ref(), r)
    }

    #[pyo3(name = "Truncate")]
    fn truncate(&self, size: u64) -> Status {
        Status::of(self.shared.truncate(size))
    }

    /// With `hard`, to the disk (the whole file; `off` and `size` are
    /// accepted for tkrzw-python compatibility).
    #[pyo3(name = "Synchronize", signature = (hard, off = 0, size = 0))]
    fn synchronize(&self, hard: bool, off: u64, size: u64) -> Status {
        let _ = (off, size);
        Status::of(self.shared.synchronize(hard))
    }

    #[pyo3(name = "GetSize")]
    fn get_size(&self) -> Option<u64> {
        self.shared.size().ok()
    }

    #[pyo3(name = "GetPath")]
    fn get_path(&self) -> Option<String> {
        self.shared.with(|o| Ok(o.path.clone())).ok()
    }

    /// Lines matching `pattern` under `mode` (DBM.Search's modes), sorted,
    /// each once.
    #[pyo3(name = "Search", signature = (mode, pattern, capacity = 0))]
    fn search<'py>(
        &self,
        py: Python<'py>,
        mode: &str,
        pattern: &Bound<'py, PyAny>,
        capacity: usize,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let p = data(pattern)?;
        let found = self
            .shared
            .search(mode, &p, capacity)
            .map_err(Status::into_err)?;
        Ok(found.iter().map(|l| to_str(py, l)).collect())
    }

    fn __repr__(&self) -> String {
        format!("<memstored.File: {}>", self.__str__())
    }

    fn __str__(&self) -> String {
        self.shared
            .with(|o| Ok(format!("class=File path={:?} size={}", o.path, o.size)))
            .unwrap_or_else(|_| "(unopened)".into())
    }
}
