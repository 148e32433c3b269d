//! `Index` and `IndexIterator`: tkrzw-python's secondary index, a set of
//! (key, value) pairs ordered by key then value, many values to a key. Each
//! pair is one record of an ordered database (`+` in memory when the path
//! is empty, else the file engine the path names), its key the pair in an
//! encoding whose byte order is the pair order: the key with every 0x00
//! written 0x00 0xFF, then 0x00 0x00, then the value.

use crate::convert::{data, to_py};
use crate::iter::OwnedCursor;
use crate::params;
use crate::status::{settle, Status, INVALID_ARGUMENT_ERROR, NOT_FOUND_ERROR, PRECONDITION_ERROR};
use memstored_engine::{Cursor, Db};
use parking_lot::{Mutex, RwLock};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::sync::Arc;

type Res<T> = Result<T, Status>;

/// The encoded prefix every pair of `key` starts with.
fn key_prefix(key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 2);
    for &b in key {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
    out
}

fn encode(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = key_prefix(key);
    out.extend_from_slice(value);
    out
}

/// The pair of an encoded record key (a foreign record: all key, no value).
fn decode(enc: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut key = Vec::with_capacity(enc.len());
    let mut i = 0;
    while i < enc.len() {
        match (enc[i], enc.get(i + 1)) {
            (0, Some(0)) => return (key, enc[i + 2..].to_vec()),
            (0, Some(0xFF)) => {
                key.push(0);
                i += 2;
            }
            (b, _) => {
                key.push(b);
                i += 1;
            }
        }
    }
    (key, Vec::new())
}

fn not_open() -> Status {
    Status::new(PRECONDITION_ERROR, "the index is not open")
}

#[pyclass(module = "memstored", name = "Index", frozen)]
pub struct Index {
    db: RwLock<Option<Arc<Db>>>,
}

impl Index {
    fn with<T>(&self, f: impl FnOnce(&Arc<Db>) -> Res<T>) -> Res<T> {
        f(self.db.read().as_ref().ok_or_else(not_open)?)
    }

    fn values(&self, key: &[u8], max: usize) -> Res<Vec<Vec<u8>>> {
        self.with(|db| {
            let prefix = key_prefix(key);
            let mut c = db.cursor();
            c.jump(&prefix)?;
            let mut out = Vec::new();
            while max == 0 || out.len() < max {
                match c.key() {
                    Ok(k) if k.starts_with(&prefix) => out.push(k[prefix.len()..].to_vec()),
                    _ => break,
                }
                c.next()?;
            }
            Ok(out)
        })
    }
}

#[pymethods]
impl Index {
    #[new]
    fn py_new() -> Index {
        Index {
            db: RwLock::new(None),
        }
    }

    /// Opens the index's database: `+` for an empty path, else the path's
    /// engine, which must be ordered (`.tkt`, `.tree`, ...).
    #[pyo3(name = "Open", signature = (path, writable, **params))]
    fn open(
        &self,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        writable: bool,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Status> {
        let path = String::from_utf8_lossy(&data(path)?).into_owned();
        let path = if path.is_empty() {
            "+".to_string()
        } else {
            path
        };
        let spec = match params::open_spec(&path, params)? {
            Ok(s) => s,
            Err(st) => return Ok(st),
        };
        Ok(Status::of(py.detach(|| {
            let mut slot = self.db.write();
            if slot.is_some() {
                return Err(Status::new(PRECONDITION_ERROR, "the index is already open"));
            }
            let db = spec.open(writable)?;
            if !db.is_ordered() {
                db.close()?;
                return Err(Status::new(
                    INVALID_ARGUMENT_ERROR,
                    format!("{path}: an index needs an ordered database (.tkt, .tree or empty)"),
                ));
            }
            *slot = Some(Arc::new(db));
            Ok(())
        })))
    }

    #[pyo3(name = "Close")]
    fn close(&self, py: Python<'_>) -> Status {
        Status::of(py.detach(|| {
            let db = self.db.write().take().ok_or_else(not_open)?;
            Ok(db.close()?)
        }))
    }

    /// The values of `key` in order, at most `max` (0: all).
    #[pyo3(name = "GetValues", signature = (key, max = 0))]
    fn get_values<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        max: usize,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let vs = self.values(&data(key)?, max).map_err(Status::into_err)?;
        Ok(vs.iter().map(|v| to_py(py, v, false)).collect())
    }

    #[pyo3(name = "GetValuesStr", signature = (key, max = 0))]
    fn get_values_str<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        max: usize,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let vs = self.values(&data(key)?, max).map_err(Status::into_err)?;
        Ok(vs.iter().map(|v| to_py(py, v, true)).collect())
    }

    #[pyo3(name = "Add")]
    fn add(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<Status> {
        let enc = encode(&data(key)?, &data(value)?);
        Ok(Status::of(self.with(|db| Ok(db.set(&enc, b"", true)?))))
    }

    /// NOT_FOUND_ERROR when the pair is not in the index.
    #[pyo3(name = "Remove")]
    fn remove(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<Status> {
        let enc = encode(&data(key)?, &data(value)?);
        Ok(Status::of(self.with(|db| Ok(db.remove(&enc)?))))
    }

    #[pyo3(name = "Count")]
    fn count(&self) -> PyResult<u64> {
        self.with(|db| Ok(db.count())).map_err(Status::into_err)
    }

    #[pyo3(name = "GetFilePath")]
    fn get_file_path(&self) -> PyResult<String> {
        self.with(|db| Ok(db.name().path.clone()))
            .map_err(Status::into_err)
    }

    #[pyo3(name = "Clear")]
    fn clear(&self) -> Status {
        Status::of(self.with(|db| Ok(db.clear()?)))
    }

    #[pyo3(name = "Rebuild")]
    fn rebuild(&self, py: Python<'_>) -> Status {
        Status::of(py.detach(|| self.with(|db| Ok(db.rebuild()?))))
    }

    #[pyo3(name = "Synchronize")]
    fn synchronize(&self, py: Python<'_>, hard: bool) -> Status {
        Status::of(py.detach(|| self.with(|db| Ok(db.synchronize(hard)?))))
    }

    #[pyo3(name = "IsOpen")]
    fn is_open(&self) -> bool {
        self.db.read().is_some()
    }

    #[pyo3(name = "IsWritable")]
    fn is_writable(&self) -> bool {
        self.with(|db| Ok(db.is_writable())).unwrap_or(false)
    }

    #[pyo3(name = "MakeIterator")]
    fn make_iterator(&self) -> PyResult<IndexIterator> {
        let db = self.with(|db| Ok(db.clone())).map_err(Status::into_err)?;
        Ok(IndexIterator {
            cell: Mutex::new(OwnedCursor::new(db, |db| db.cursor())),
        })
    }

    /// Whether the `(key, value)` pair is in the index.
    fn __contains__(&self, pair: &Bound<'_, PyAny>) -> PyResult<bool> {
        let enc = encode(&data(&pair.get_item(0)?)?, &data(&pair.get_item(1)?)?);
        self.with(|db| Ok(db.get_record(&enc)?.is_some()))
            .map_err(Status::into_err)
    }

    fn __len__(&self) -> usize {
        self.with(|db| Ok(db.count() as usize)).unwrap_or(0)
    }

    /// The pairs from the first, as bytes.
    fn __iter__(&self) -> PyResult<IndexIterator> {
        let it = self.make_iterator()?;
        it.move_by(|c| c.first());
        Ok(it)
    }

    fn __repr__(&self) -> String {
        format!("<memstored.Index: {}>", self.__str__())
    }

    fn __str__(&self) -> String {
        self.with(|db| Ok(format!("path={} count={}", db.name().path, db.count())))
            .unwrap_or_else(|_| "(unopened)".into())
    }
}

#[pyclass(module = "memstored", name = "IndexIterator", frozen)]
pub struct IndexIterator {
    cell: Mutex<OwnedCursor>,
}

impl IndexIterator {
    fn move_by(&self, f: impl FnOnce(&mut Cursor<'_>) -> memstored_engine::Result<()>) {
        // Tkrzw's index iterator moves return nothing; a failed move leaves
        // it unlocated, which Get reports.
        let _ = self.cell.lock().with_dependent_mut(|_, c| f(c));
    }

    fn pair(&self) -> Res<(Vec<u8>, Vec<u8>)> {
        let k = self.cell.lock().with_dependent(|_, c| c.key())?;
        Ok(decode(&k))
    }

    fn get_as<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
        as_str: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let r = self
            .pair()
            .map_err(|_| Status::new(NOT_FOUND_ERROR, "the iterator is not on a pair"));
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
        self.move_by(|c| c.first())
    }

    #[pyo3(name = "Last")]
    fn last(&self) {
        self.move_by(|c| c.last())
    }

    /// To the first pair at or after `(key, value)`.
    #[pyo3(name = "Jump", signature = (key, value = None))]
    fn jump(&self, key: &Bound<'_, PyAny>, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let v = value.map(data).transpose()?;
        let enc = encode(&data(key)?, v.as_deref().unwrap_or_default());
        self.move_by(|c| c.jump(&enc));
        Ok(())
    }

    #[pyo3(name = "Next")]
    fn next(&self) {
        self.move_by(|c| c.next())
    }

    #[pyo3(name = "Previous")]
    fn previous(&self) {
        self.move_by(|c| c.previous())
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
        let at = match self.pair() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encoding_orders_pairs_by_key_then_value() {
        let pairs: [(&[u8], &[u8]); 6] = [
            (b"", b"z"),
            (b"a", b""),
            (b"a", b"b"),
            (b"a\0", b"a"),
            (b"a\0b", b""),
            (b"ab", b""),
        ];
        let enc: Vec<Vec<u8>> = pairs.iter().map(|(k, v)| encode(k, v)).collect();
        let mut sorted = enc.clone();
        sorted.sort();
        assert_eq!(sorted, enc);
        for ((k, v), e) in pairs.iter().zip(&enc) {
            assert_eq!(decode(e), (k.to_vec(), v.to_vec()));
        }
    }
}
