//! `File`: tkrzw-python's plain file class over the engine's `File`
//! (positional reads and writes, appends, truncation, line search), which
//! `DBM.ExportToFlatRecords` and friends write through.

use crate::convert::{data, to_py, to_str};
use crate::params::value_text;
use crate::status::{settle, Status};
use memstored_engine::{FileOptions, SearchMode};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

#[pyclass(module = "memstored", name = "File", frozen)]
pub struct File {
    pub shared: Arc<memstored_engine::File>,
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
    /// The parameters are the engine's `FileOptions` (`truncate`,
    /// `no_create`, `sync_hard`; `block_size` with `access_options` naming
    /// `padding` rounds the length up on close).
    #[pyo3(name = "Open", signature = (path, writable, **params))]
    fn open(
        &self,
        path: &Bound<'_, PyAny>,
        writable: bool,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Status> {
        let path = String::from_utf8_lossy(&data(path)?).into_owned();
        let mut pairs = Vec::new();
        for (k, v) in params.into_iter().flat_map(|p| p.iter()) {
            pairs.push((k.str()?.to_str()?.to_string(), value_text(&v)?));
        }
        let opened = FileOptions::from_params(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .and_then(|opts| self.shared.open(&path, writable, opts));
        Ok(Status::of(opened.map_err(Status::from)))
    }

    #[pyo3(name = "Close")]
    fn close(&self) -> Status {
        Status::of(self.shared.close().map_err(Status::from))
    }

    #[pyo3(name = "Read", signature = (off, size, status = None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        off: u64,
        size: usize,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let r = self.shared.read(off, size).map_err(Status::from);
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
        let r = self.shared.read(off, size).map_err(Status::from);
        Ok(settle(status.as_ref(), r)?.map(|b| to_str(py, &b)))
    }

    #[pyo3(name = "Write")]
    fn write(&self, off: u64, data: &Bound<'_, PyAny>) -> PyResult<Status> {
        let r = self.shared.write(off, &self::data(data)?);
        Ok(Status::of(r.map_err(Status::from)))
    }

    /// Writes at the end; returns the offset written at, or None on failure.
    #[pyo3(name = "Append", signature = (data, status = None))]
    fn append(
        &self,
        data: &Bound<'_, PyAny>,
        status: Option<Bound<'_, Status>>,
    ) -> PyResult<Option<u64>> {
        let r = self.shared.append(&self::data(data)?).map_err(Status::from);
        settle(status.as_ref(), r)
    }

    #[pyo3(name = "Truncate")]
    fn truncate(&self, size: u64) -> Status {
        Status::of(self.shared.truncate(size).map_err(Status::from))
    }

    /// With `hard`, to the disk (the whole file; `off` and `size` are
    /// accepted for tkrzw-python compatibility).
    #[pyo3(name = "Synchronize", signature = (hard, off = 0, size = 0))]
    fn synchronize(&self, hard: bool, off: u64, size: u64) -> Status {
        let _ = (off, size);
        Status::of(self.shared.synchronize(hard).map_err(Status::from))
    }

    #[pyo3(name = "GetSize")]
    fn get_size(&self) -> Option<u64> {
        self.shared.size().ok()
    }

    #[pyo3(name = "GetPath")]
    fn get_path(&self) -> Option<String> {
        self.shared.path().ok()
    }

    /// Lines matching `pattern` under `mode` (DBM.Search's modes but the
    /// upper/lower ones), in file order.
    #[pyo3(name = "Search", signature = (mode, pattern, capacity = 0))]
    fn search<'py>(
        &self,
        py: Python<'py>,
        mode: &str,
        pattern: &Bound<'py, PyAny>,
        capacity: usize,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let p = data(pattern)?;
        let found = SearchMode::parse(mode)
            .and_then(|m| self.shared.search(m, &p, capacity))
            .map_err(|e| Status::from(e).into_err())?;
        Ok(found.iter().map(|l| to_str(py, l)).collect())
    }

    fn __repr__(&self) -> String {
        format!("<memstored.File: {}>", self.__str__())
    }

    fn __str__(&self) -> String {
        match (self.shared.path(), self.shared.size()) {
            (Ok(path), Ok(size)) => format!("class=File path={path:?} size={size}"),
            _ => "(unopened)".into(),
        }
    }
}
