//! `Index` and `IndexIterator`: tkrzw-python's secondary index (a set of
//! (key, value) pairs ordered by key then value) over the engine's `Index`:
//! a `.tkt` path is a file, any other path (the empty one included) an
//! index in memory, as Tkrzw's PolyIndex.

use crate::convert::{data, to_py};
use crate::params::value_text;
use crate::status::{settle, Status};
use memstored_engine::IndexIter;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

type Res<T> = Result<T, Status>;

#[pyclass(module = "memstored", name = "Index", frozen)]
pub struct Index {
    index: memstored_engine::Index,
}

fn status<T>(r: memstored_engine::Result<T>) -> Res<T> {
    r.map_err(Status::from)
}

impl Index {
    fn values<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        max: usize,
        as_str: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let vs = status(self.index.get_values(&data(key)?, max)).map_err(Status::into_err)?;
        Ok(vs.iter().map(|v| to_py(py, v, as_str)).collect())
    }

    fn iterator(&self) -> PyResult<IndexIterator> {
        let it = status(self.index.iter()).map_err(Status::into_err)?;
        Ok(IndexIterator { it: Mutex::new(it) })
    }
}

#[pymethods]
impl Index {
    #[new]
    fn py_new() -> Index {
        Index {
            index: memstored_engine::Index::new(),
        }
    }

    /// Opens the index; the keyword parameters are the database's
    /// (`truncate=True`, `num_buckets=100`, ...).
    #[pyo3(name = "Open", signature = (path, writable, **params))]
    fn open(
        &self,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        writable: bool,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Status> {
        let path = String::from_utf8_lossy(&data(path)?).into_owned();
        let mut words = Vec::new();
        for (k, v) in params.into_iter().flat_map(|p| p.iter()) {
            words.push(format!("{}={}", k.str()?.to_str()?, value_text(&v)?));
        }
        let params = words.join(",");
        Ok(Status::of(py.detach(|| {
            status(self.index.open(&path, writable, &params))
        })))
    }

    #[pyo3(name = "Close")]
    fn close(&self, py: Python<'_>) -> Status {
        Status::of(py.detach(|| status(self.index.close())))
    }

    /// The values of `key` in order, at most `max` (0: all).
    #[pyo3(name = "GetValues", signature = (key, max = 0))]
    fn get_values<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        max: usize,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.values(py, key, max, false)
    }

    #[pyo3(name = "GetValuesStr", signature = (key, max = 0))]
    fn get_values_str<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        max: usize,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.values(py, key, max, true)
    }

    #[pyo3(name = "Add")]
    fn add(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<Status> {
        let r = self.index.add(&data(key)?, &data(value)?);
        Ok(Status::of(status(r)))
    }

    /// NOT_FOUND_ERROR when the pair is not in the index.
    #[pyo3(name = "Remove")]
    fn remove(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<Status> {
        let r = self.index.remove(&data(key)?, &data(value)?);
        Ok(Status::of(status(r)))
    }

    #[pyo3(name = "Count")]
    fn count(&self) -> PyResult<u64> {
        status(self.index.count()).map_err(Status::into_err)
    }

    #[pyo3(name = "GetFilePath")]
    fn get_file_path(&self) -> PyResult<String> {
        status(self.index.file_path()).map_err(Status::into_err)
    }

    #[pyo3(name = "Clear")]
    fn clear(&self) -> Status {
        Status::of(status(self.index.clear()))
    }

    #[pyo3(name = "Rebuild")]
    fn rebuild(&self, py: Python<'_>) -> Status {
        Status::of(py.detach(|| status(self.index.rebuild())))
    }

    #[pyo3(name = "Synchronize")]
    fn synchronize(&self, py: Python<'_>, hard: bool) -> Status {
        Status::of(py.detach(|| status(self.index.synchronize(hard))))
    }

    #[pyo3(name = "IsOpen")]
    fn is_open(&self) -> bool {
        self.index.is_open()
    }

    #[pyo3(name = "IsWritable")]
    fn is_writable(&self) -> bool {
        self.index.is_writable()
    }

    #[pyo3(name = "MakeIterator")]
    fn make_iterator(&self) -> PyResult<IndexIterator> {
        self.iterator()
    }

    /// Whether the `(key, value)` pair is in the index.
    fn __contains__(&self, pair: &Bound<'_, PyAny>) -> PyResult<bool> {
        let (k, v) = (pair.get_item(0)?, pair.get_item(1)?);
        status(self.index.contains(&data(&k)?, &data(&v)?)).map_err(Status::into_err)
    }

    fn __len__(&self) -> usize {
        self.index.count().unwrap_or(0) as usize
    }

    /// The pairs from the first, as bytes.
    fn __iter__(&self) -> PyResult<IndexIterator> {
        let it = self.iterator()?;
        it.move_by(|i| i.first());
        Ok(it)
    }

    fn __repr__(&self) -> String {
        format!("<memstored.Index: {}>", self.__str__())
    }

    fn __str__(&self) -> String {
        match (self.index.file_path(), self.index.count()) {
            (Ok(path), Ok(n)) => format!("path={path} count={n}"),
            _ => "(unopened)".into(),
        }
    }
}

#[pyclass(module = "memstored", name = "IndexIterator", frozen)]
pub struct IndexIterator {
    it: Mutex<IndexIter>,
}

impl IndexIterator {
    fn move_by(&self, f: impl FnOnce(&mut IndexIter) -> memstored_engine::Result<()>) {
        // Tkrzw's index iterator moves return nothing; a failed move leaves
        // it on no pair, which Get reports.
        let _ = f(&mut self.it.lock());
    }

    fn get_as<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
        as_str: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let r = self.it.lock().get().map_err(Status::from);
        let Some((k, v)) = settle(status.as_ref(), r)? else {
            return Ok(None);
        };
        Ok(Some(
            PyTuple::new(py, [to_py(py, &k, as_str), to_py(py, &v, as_str)])?.into_any(),
        ))
    }
}

#[pymethods]
impl IndexIterator {
    #[pyo3(name = "First")]
    fn first(&self) {
        self.move_by(|i| i.first())
    }

    #[pyo3(name = "Last")]
    fn last(&self) {
        self.move_by(|i| i.last())
    }

    /// To the first pair at or after `(key, value)`.
    #[pyo3(name = "Jump", signature = (key, value = None))]
    fn jump(&self, key: &Bound<'_, PyAny>, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let v = value.map(data).transpose()?;
        let k = data(key)?;
        self.move_by(|i| i.jump(&k, v.as_deref().unwrap_or_default()));
        Ok(())
    }

    #[pyo3(name = "Next")]
    fn next(&self) {
        self.move_by(|i| i.next())
    }

    #[pyo3(name = "Previous")]
    fn previous(&self) {
        self.move_by(|i| i.previous())
    }

    /// The current pair as bytes, or None.
    #[pyo3(name = "Get", signature = (status = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.get_as(py, status, false)
    }

    #[pyo3(name = "GetStr", signature = (status = None))]
    fn get_str<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.get_as(py, status, true)
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// The current pair as bytes, then a move; StopIteration past the end.
    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let got = self.get_as(py, None, false)?;
        if got.is_some() {
            self.next();
        }
        Ok(got)
    }

    fn __repr__(&self) -> String {
        let at = match self.it.lock().get() {
            Ok((k, v)) => format!(
                "key={:?} value={:?}",
                String::from_utf8_lossy(&k),
                String::from_utf8_lossy(&v)
            ),
            Err(_) => "(unlocated)".into(),
        };
        format!("<memstored.IndexIterator: {at}>")
    }

    fn __str__(&self) -> String {
        self.__repr__()
    }
}
