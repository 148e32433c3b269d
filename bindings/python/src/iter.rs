//! `Iterator`: tkrzw-python's iterator over an engine cursor. It owns a share
//! of the database, so it stays safe after `DBM.Close`: every call then
//! answers PRECONDITION_ERROR (the engine's closed cursor), as in Tkrzw.

use crate::convert::{data, to_py};
use crate::status::{settle, Status, NOT_FOUND_ERROR};
use memstored_engine::{Cursor, Db};
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use self_cell::self_cell;
use std::sync::Arc;

self_cell!(
    /// A cursor together with the database it borrows.
    struct OwnedCursor {
        owner: Arc<Db>,
        #[covariant]
        dependent: Cursor,
    }
);

#[pyclass(module = "memstored", name = "Iterator", frozen)]
pub struct DbIter {
    /// One cursor, moved by one thread at a time.
    cell: Mutex<OwnedCursor>,
    /// Whether moves keep the GIL (see `call`).
    ordered: bool,
}

type Pair = (Vec<u8>, bytes::Bytes);

fn end() -> Status {
    Status::new(NOT_FOUND_ERROR, "the iterator is past the last record")
}

impl DbIter {
    pub fn new(db: Arc<Db>) -> DbIter {
        DbIter {
            ordered: db.is_ordered(),
            cell: Mutex::new(OwnedCursor::new(db, |db| db.cursor())),
        }
    }

    /// Runs `f` on the cursor. A `mover` on a hash database runs with the
    /// GIL released, since entering a shard copies all its keys; reads of
    /// the current record, and moves of an ordered cursor (a seek per
    /// shard), keep it: ordered iteration ran 1.3-1.5x faster holding it. A cursor busy in
    /// another thread is waited for with the GIL released.
    fn call<T: Send>(
        &self,
        py: Python<'_>,
        mover: bool,
        f: impl FnOnce(&mut Cursor<'_>) -> memstored_engine::Result<T> + Send,
    ) -> Result<T, Status> {
        let run = |mut cell: parking_lot::MutexGuard<'_, OwnedCursor>| {
            cell.with_dependent_mut(|_, c| f(c)).map_err(Status::from)
        };
        if !mover || self.ordered {
            if let Some(cell) = self.cell.try_lock() {
                return run(cell);
            }
        }
        py.detach(|| run(self.cell.lock()))
    }

    /// Moves to the first record.
    pub fn rewind(&self, py: Python<'_>) -> Status {
        self.status(py, |c| c.first())
    }

    /// A move, as a status.
    fn status(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Cursor<'_>) -> memstored_engine::Result<()> + Send,
    ) -> Status {
        Status::of(self.call(py, true, f))
    }

    /// The current record as Python objects (`what` picks key, value or both).
    fn current<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
        as_str: bool,
        what: Part,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let got = self.call(py, false, |c| c.get());
        self.deliver(py, got, status, as_str, what)
    }

    fn deliver<'py>(
        &self,
        py: Python<'py>,
        got: Result<Pair, Status>,
        status: Option<Bound<'py, Status>>,
        as_str: bool,
        what: Part,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some((k, v)) = settle(status.as_ref(), got)? else {
            return Ok(None);
        };
        Ok(Some(match what {
            Part::Key => to_py(py, &k, as_str),
            Part::Value => to_py(py, &v, as_str),
            Part::Both => {
                PyTuple::new(py, [to_py(py, &k, as_str), to_py(py, &v, as_str)])?.into_any()
            }
        }))
    }

    fn step_as<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
        as_str: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let got = self
            .call(py, true, |c| c.step())
            .and_then(|p| p.ok_or_else(end));
        self.deliver(py, got, status, as_str, Part::Both)
    }
}

#[derive(Clone, Copy)]
enum Part {
    Key,
    Value,
    Both,
}

#[pymethods]
impl DbIter {
    #[pyo3(name = "First")]
    fn first(&self, py: Python<'_>) -> Status {
        self.status(py, |c| c.first())
    }

    #[pyo3(name = "Last")]
    fn last(&self, py: Python<'_>) -> Status {
        self.status(py, |c| c.last())
    }

    #[pyo3(name = "Jump")]
    fn jump(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Status> {
        let k = data(key)?;
        Ok(self.status(py, |c| c.jump(&k)))
    }

    #[pyo3(name = "JumpLower", signature = (key, inclusive = false))]
    fn jump_lower(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        inclusive: bool,
    ) -> PyResult<Status> {
        let k = data(key)?;
        Ok(self.status(py, |c| c.jump_lower(&k, inclusive)))
    }

    #[pyo3(name = "JumpUpper", signature = (key, inclusive = false))]
    fn jump_upper(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        inclusive: bool,
    ) -> PyResult<Status> {
        let k = data(key)?;
        Ok(self.status(py, |c| c.jump_upper(&k, inclusive)))
    }

    #[pyo3(name = "Next")]
    fn next(&self, py: Python<'_>) -> Status {
        self.status(py, |c| c.next())
    }

    #[pyo3(name = "Previous")]
    fn previous(&self, py: Python<'_>) -> Status {
        self.status(py, |c| c.previous())
    }

    /// The current key and value as bytes, or None (see `status`).
    #[pyo3(name = "Get", signature = (status = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.current(py, status, false, Part::Both)
    }

    #[pyo3(name = "GetStr", signature = (status = None))]
    fn get_str<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.current(py, status, true, Part::Both)
    }

    #[pyo3(name = "GetKey", signature = (status = None))]
    fn get_key<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.current(py, status, false, Part::Key)
    }

    #[pyo3(name = "GetKeyStr", signature = (status = None))]
    fn get_key_str<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.current(py, status, true, Part::Key)
    }

    #[pyo3(name = "GetValue", signature = (status = None))]
    fn get_value<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.current(py, status, false, Part::Value)
    }

    #[pyo3(name = "GetValueStr", signature = (status = None))]
    fn get_value_str<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.current(py, status, true, Part::Value)
    }

    /// Replaces the current record's value.
    #[pyo3(name = "Set")]
    fn set(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Status> {
        let v = data(value)?;
        Ok(Status::of(self.call(py, false, |c| c.set(&v))))
    }

    /// Removes the current record; the iterator moves to the next one.
    #[pyo3(name = "Remove")]
    fn remove(&self, py: Python<'_>) -> Status {
        self.status(py, |c| c.remove())
    }

    /// The current key and value, then a move to the next record.
    #[pyo3(name = "Step", signature = (status = None))]
    fn step<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.step_as(py, status, false)
    }

    #[pyo3(name = "StepStr", signature = (status = None))]
    fn step_str<'py>(
        &self,
        py: Python<'py>,
        status: Option<Bound<'py, Status>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.step_as(py, status, true)
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// `(key, value)` as bytes, then a move; StopIteration past the end.
    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.call(py, true, |c| c.step()) {
            Ok(Some((k, v))) => Ok(Some(
                PyTuple::new(py, [to_py(py, &k, false), to_py(py, &v, false)])?.into_any(),
            )),
            Ok(None) => Ok(None),
            Err(st) => Err(st.into_err()),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let key = self
            .call(py, false, |c| c.key())
            .map(|k| String::from_utf8_lossy(&k).into_owned())
            .unwrap_or_else(|_| "(unlocated)".into());
        format!("<memstored.Iterator: key={key:?}>")
    }
}
